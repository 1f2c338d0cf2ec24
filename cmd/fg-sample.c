// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-sample: sample the stacks of every CPU (or of some processes) with an
 * eBPF program and write them as a record stream (fg-record(5)).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/record.h"
#include "fg/sample.h"
#include "fg/sideband.h"
#include "fg/util.h"
#include "fg_sample.skel.h"

#define MAX_CPUS 4096

static const char usage_text[] =
	"usage: fg-sample [-IhVv] [-F hz] [-d seconds] [-p pid]... [-t tid]... [-C cpu]...\n"
	"                 [--user-only | --kernel-only] [--max-depth n] [-o file]\n"
	"                 [-- command [arg ...]]\n"
	"  -F hz           samples a second on each CPU (default 99)\n"
	"  -d seconds      stop after this long (default: until Ctrl-C, or the targets end)\n"
	"  -p pid          sample only this process (repeatable)\n"
	"  -t tid          sample only this thread (repeatable)\n"
	"  -C cpu          sample only this CPU (repeatable, or a list: 0,2-3)\n"
	"  -I              sample the idle task (pid 0) too\n"
	"  --user-only     user stacks only\n"
	"  --kernel-only   kernel stacks only\n"
	"  --max-depth n   frames of each stack, at most (default and maximum 127)\n"
	"  -o file         write the records to file (default: standard output, not a terminal)\n"
	"  -v              show libbpf's messages\n"
	"  -h              show this help;  -V  show the version\n"
	"  command         run it, sample it and its children, stop when it exits\n";

static struct opts {
	unsigned freq;
	double duration;
	uint32_t *pids, *tids;
	size_t npids, ntids, apids, atids;
	int cpus[MAX_CPUS];
	int ncpus;
	bool idle, user_only, kernel_only, verbose;
	unsigned depth;
	const char *output;
	char **command;
} opts = {
	.freq = 99,
	.depth = MAX_STACK_DEPTH,
};

static volatile sig_atomic_t stop_signal, child_exited;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else
		stop_signal = sig;
}

static noreturn void usage_error(const char *fmt, ...) FG_PRINTF(1, 2);

static noreturn void usage_error(const char *fmt, ...)
{
	if (fmt) {
		char msg[512];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		fg_warnx("%s", msg);
	}
	fputs(usage_text, stderr);
	exit(FG_EXIT_USAGE);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!opts.verbose)
		return 0;
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "0,2-3" into a CPU list; false when malformed */
static bool parse_cpu_list(const char *s, int *cpus, int *n, int max)
{
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s || a < 0 || a >= MAX_CPUS)
			return false;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= MAX_CPUS)
				return false;
		}
		for (long c = a; c <= b; c++) {
			bool dup = false;

			for (int i = 0; i < *n; i++)
				dup |= cpus[i] == c;
			if (!dup) {
				if (*n >= max)
					return false;
				cpus[(*n)++] = (int)c;
			}
		}
		if (*end == ',')
			end++;
		else if (*end)
			return false;
		s = end;
	}
	return true;
}

/* the CPUs online now, from sysfs */
static int online_cpus(int *cpus, int max)
{
	char buf[4096];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC), n = 0;
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!parse_cpu_list(buf, cpus, &n, max))
		return -EINVAL;
	return n;
}

static bool cpu_online(int cpu)
{
	int cpus[MAX_CPUS];
	int n = online_cpus(cpus, MAX_CPUS);

	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return n < 0; /* unknown: assume so */
}

static void add_id(uint32_t **v, size_t *n, size_t *alloc, const char *arg, const char *what)
{
	uint64_t id;

	if (fg_parse_u64(arg, 1, INT32_MAX, &id) < 0)
		usage_error("invalid %s '%s'", what, arg);
	FG_ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[(*n)++] = (uint32_t)id;
}

enum { OPT_USER_ONLY = 256, OPT_KERNEL_ONLY, OPT_MAX_DEPTH };

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "idle", no_argument, NULL, 'I' },
		{ "user-only", no_argument, NULL, OPT_USER_ONLY },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	/* '+': options end at the command */
	while ((c = getopt_long(argc, argv, "+C:d:F:hIo:p:t:Vv", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (!parse_cpu_list(optarg, opts.cpus, &opts.ncpus, MAX_CPUS))
				usage_error("invalid CPU list '%s'", optarg);
			break;
		case 'd':
			if (fg_parse_double(optarg, 0.001, 1e7, &opts.duration) < 0)
				usage_error("invalid duration '%s'", optarg);
			break;
		case 'F':
			if (fg_parse_u64(optarg, 1, 100000, &v) < 0)
				usage_error("invalid frequency '%s'", optarg);
			opts.freq = (unsigned)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(fg_close_stdout());
		case 'I':
			opts.idle = true;
			break;
		case 'o':
			opts.output = optarg;
			break;
		case 'p':
			add_id(&opts.pids, &opts.npids, &opts.apids, optarg, "pid");
			break;
		case 't':
			add_id(&opts.tids, &opts.ntids, &opts.atids, optarg, "tid");
			break;
		case 'V':
			fg_print_version();
			exit(fg_close_stdout());
		case 'v':
			opts.verbose = true;
			break;
		case OPT_USER_ONLY:
			opts.user_only = true;
			break;
		case OPT_KERNEL_ONLY:
			opts.kernel_only = true;
			break;
		case OPT_MAX_DEPTH:
			if (fg_parse_u64(optarg, 1, MAX_STACK_DEPTH, &v) < 0)
				usage_error("invalid stack depth '%s' (1 to %d)", optarg,
					    MAX_STACK_DEPTH);
			opts.depth = (unsigned)v;
			break;
		default:
			usage_error(NULL);
		}
	}
	if (opts.user_only && opts.kernel_only)
		usage_error("--user-only and --kernel-only exclude each other");
	if (optind < argc)
		opts.command = argv + optind;
	if (opts.command && (opts.npids || opts.ntids))
		usage_error("a command and -p/-t exclude each other");
	for (size_t i = 0; i < opts.npids; i++)
		if (kill((pid_t)opts.pids[i], 0) < 0 && errno == ESRCH)
			usage_error("no process with pid %" PRIu32, opts.pids[i]);
	for (size_t i = 0; i < opts.ntids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", opts.tids[i]);
		if (access(path, F_OK) < 0)
			usage_error("no thread with tid %" PRIu32, opts.tids[i]);
	}
	if (opts.ncpus) {
		for (int i = 0; i < opts.ncpus; i++)
			if (!cpu_online(opts.cpus[i]))
				usage_error("CPU %d is not online", opts.cpus[i]);
	}
}

/* The process a thread belongs to, from /proc/TID/status; 0 when gone. */
static uint32_t tgid_of(uint32_t tid)
{
	char path[64], line[256];
	uint32_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %" SCNu32, &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* Refuse early, with one line naming what is missing. */
static void check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	bool bpf, perfmon, admin;

	if (geteuid() == 0)
		return;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		fg_die("cannot read this process's capabilities");
#define HAS(cap) (!!(data[(cap) / 32].effective & (1u << ((cap) % 32))))
	bpf = HAS(39);	   /* CAP_BPF */
	perfmon = HAS(38); /* CAP_PERFMON */
	admin = HAS(CAP_SYS_ADMIN);
#undef HAS
	if (admin || (bpf && perfmon))
		return;
	fg_diex("permission denied: run as root, or with the capabilities CAP_BPF and "
		"CAP_PERFMON (missing: %s)",
		!bpf && !perfmon ? "CAP_BPF, CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON");
}

static void check_kernel(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		fg_diex("the kernel has no BTF ('/sys/kernel/btf/vmlinux' is missing): it needs "
			"CONFIG_DEBUG_INFO_BTF=y");
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK) < 0)
		fg_diex("perf events are unavailable ('/proc/sys/kernel/perf_event_paranoid' "
			"is missing): the kernel needs CONFIG_PERF_EVENTS=y");
}

/* --- the run --- */

struct run {
	struct fg_sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds;
	int nlinks;
	struct fg_sb *sb;
	struct fg_rq *q;
	struct fg_rec_writer *w;
	struct fg_hmap *targets; /* tgids whose side-band events are kept */
	bool filtering, follow;
	int ncpus_possible;
	uint64_t *ringbuf_full_seen; /* per possible CPU */
	bool *offline_warned;	     /* per sampled CPU */
	pid_t child;
	int child_status;
	bool child_done;
	uint64_t bad_events;
	int werr;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct run *r = ctx;
	const struct fg_event *e = data;
	struct fg_rec_sample s;

	if (size < offsetof(struct fg_event, ips) || e->nr_kernel > MAX_STACK_DEPTH ||
	    e->nr_user > MAX_STACK_DEPTH) {
		r->bad_events++;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.time_ns = e->time_ns;
	s.cpu = e->cpu;
	s.pid = e->pid;
	s.tid = e->tid;
	s.flags = e->flags;
	s.weight = 1;
	s.nr_kernel = e->nr_kernel;
	s.nr_user = e->nr_user;
	memcpy(s.comm, e->comm, sizeof(s.comm));
	s.comm[sizeof(s.comm) - 1] = '\0';
	fg_rq_add(r->q, s.time_ns, FG_REC_SAMPLE, &s, sizeof(s), e->ips,
		  8 * ((size_t)e->nr_kernel + e->nr_user));
	return 0;
}

static bool target_has(const struct run *r, uint32_t pid)
{
	return fg_hmap_get(r->targets, &pid, sizeof(pid)) != NULL;
}

static void target_add(struct run *r, uint32_t pid)
{
	fg_hmap_upsert(r->targets, &pid, sizeof(pid), NULL);
}

/*
 * Which records to write, asked in time order: samples (the BPF program
 * filtered them) and the side-band events of the targets and, for a
 * command, of the children they fork.
 */
static bool keep_record(void *ctx, uint32_t type, const void *payload, size_t len)
{
	struct run *r = ctx;
	uint32_t pid;

	if (!r->filtering || type == FG_REC_SAMPLE || type == FG_REC_LOST || len < 4)
		return true;
	memcpy(&pid, payload, 4); /* every side-band record starts with the pid */
	if (type == FG_REC_FORK && r->follow && len >= sizeof(struct fg_rec_task)) {
		struct fg_rec_task t;

		memcpy(&t, payload, sizeof(t));
		if (target_has(r, t.ppid))
			target_add(r, t.pid);
	}
	return target_has(r, pid);
}

static uint64_t stat_total(struct run *r, enum fg_stat which, uint64_t *percpu)
{
	uint32_t key = which;
	uint64_t total = 0;

	if (bpf_map__lookup_elem(r->skel->maps.stats, &key, sizeof(key), percpu,
				 sizeof(uint64_t) * (size_t)r->ncpus_possible, 0) < 0)
		return 0;
	for (int i = 0; i < r->ncpus_possible; i++)
		total += percpu[i];
	return total;
}

/* Queue a lost record for each CPU whose ring-buffer-full count grew. */
static void check_lost(struct run *r, uint64_t now)
{
	uint64_t percpu[MAX_CPUS];

	stat_total(r, FG_STAT_RINGBUF_FULL, percpu);
	for (int i = 0; i < r->ncpus_possible; i++) {
		if (percpu[i] > r->ringbuf_full_seen[i]) {
			struct fg_rec_lost l = { now, percpu[i] - r->ringbuf_full_seen[i],
						 (uint32_t)i, FG_LOST_RINGBUF_FULL };

			fg_rq_add(r->q, now, FG_REC_LOST, &l, sizeof(l), NULL, 0);
			r->ringbuf_full_seen[i] = percpu[i];
		}
	}
}

static void check_offline(struct run *r, uint64_t now)
{
	for (int i = 0; i < opts.ncpus; i++) {
		if (r->offline_warned[i] || cpu_online(opts.cpus[i]))
			continue;
		struct fg_rec_lost l = { now, 0, (uint32_t)opts.cpus[i], FG_LOST_CPU_OFFLINE };

		fg_warnx("CPU %d went offline: its samples stopped", opts.cpus[i]);
		fg_rq_add(r->q, now, FG_REC_LOST, &l, sizeof(l), NULL, 0);
		r->offline_warned[i] = true;
	}
}

/* true when every -p/-t target is gone */
static bool targets_gone(void)
{
	char path[64];

	if (!opts.npids && !opts.ntids)
		return false;
	for (size_t i = 0; i < opts.npids; i++) {
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", opts.pids[i]);
		if (access(path, F_OK) == 0)
			return false;
	}
	for (size_t i = 0; i < opts.ntids; i++) {
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", opts.tids[i]);
		if (access(path, F_OK) == 0)
			return false;
	}
	return true;
}

/* fork the command, stopped on a pipe until sampling runs; returns the pipe to release it */
static int start_command(struct run *r, int *errpipe)
{
	int go[2], er[2];

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		fg_die("cannot create a pipe");
	r->child = fork();
	if (r->child < 0)
		fg_die("cannot fork");
	if (r->child == 0) {
		char c;
		int err;

		close(go[1]);
		close(er[0]);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* the command's standard output must not mix with the records */
		if (!opts.output)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(opts.command[0], opts.command);
		err = errno;
		(void)!write(er[1], &err, sizeof(err));
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	*errpipe = er[0];
	return go[1];
}

static int open_cpu_clock(int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = opts.freq;
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void print_summary(const struct fg_rec_summary *s, unsigned ncpus)
{
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	fprintf(stderr,
		"fg-sample: %" PRIu64 " samples in %.2f s (%.1f/s; %u Hz x %u CPUs), lost %" PRIu64
		"; kernel stacks failed %" PRIu64 "; user stacks failed %" PRIu64
		", cut short %" PRIu64 "; events lost %" PRIu64 "; %" PRIu64 " mappings\n",
		s->samples, secs, secs > 0 ? (double)s->samples / secs : 0.0, opts.freq, ncpus,
		s->lost, s->kstack_failed, s->ustack_failed, s->ustack_cut, s->sideband_lost,
		s->mappings);
}

static void cleanup(struct run *r)
{
	for (int i = 0; i < r->nlinks; i++) {
		bpf_link__destroy(r->links[i]);
		if (r->pfds[i] >= 0)
			close(r->pfds[i]);
	}
	free(r->links);
	free(r->pfds);
	ring_buffer__free(r->rb);
	fg_sample_bpf__destroy(r->skel);
	fg_sb_close(r->sb);
	r->links = NULL;
	r->pfds = NULL;
	r->rb = NULL;
	r->skel = NULL;
	r->sb = NULL;
	r->nlinks = 0;
}

static noreturn void fail_setup(struct run *r, int err, const char *what)
{
	cleanup(r);
	if (err == -EPERM)
		fg_diex("%s: %s: run as root, or with CAP_BPF and CAP_PERFMON", what,
			strerror(-err));
	fg_diex("%s: %s", what, strerror(-err));
}

int main(int argc, char **argv)
{
	struct run r = { .child = -1, .child_status = -1 };
	struct fg_rec_header h;
	struct fg_rec_summary sum;
	struct sigaction sa;
	int out_fd = STDOUT_FILENO, go_fd = -1, err_fd = -1, err, failed_cpu = -1;
	uint64_t start, deadline = 0, percpu_stats[MAX_CPUS];
	int status = FG_EXIT_OK;
	bool epipe = false;

	fg_set_progname(argv[0]);
	parse_options(argc, argv);
	if (!opts.output && isatty(STDOUT_FILENO))
		fg_diex("refusing to write binary records to a terminal: redirect standard "
			"output or use -o FILE");
	check_privileges();
	check_kernel();
	if (!opts.ncpus) {
		opts.ncpus = online_cpus(opts.cpus, MAX_CPUS);
		if (opts.ncpus <= 0)
			fg_diex("cannot read the online CPUs from '/sys/devices/system/cpu/online'");
	}
	r.ncpus_possible = libbpf_num_possible_cpus();
	if (r.ncpus_possible <= 0 || r.ncpus_possible > MAX_CPUS)
		fg_diex("cannot count the possible CPUs");
	r.ringbuf_full_seen = fg_xcalloc((size_t)r.ncpus_possible, sizeof(uint64_t));
	r.offline_warned = fg_xcalloc((size_t)opts.ncpus, sizeof(bool));
	if (opts.output) {
		out_fd = open(opts.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0)
			fg_die("cannot open '%s'", opts.output);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	libbpf_set_print(libbpf_print);

	r.targets = fg_hmap_new(0);
	r.q = fg_rq_new();
	r.filtering = opts.npids || opts.ntids || opts.command;
	r.follow = opts.command != NULL;
	if (opts.command)
		go_fd = start_command(&r, &err_fd);
	for (size_t i = 0; i < opts.npids; i++)
		target_add(&r, opts.pids[i]);
	for (size_t i = 0; i < opts.ntids; i++) {
		uint32_t tgid = tgid_of(opts.tids[i]);

		if (tgid)
			target_add(&r, tgid);
	}
	if (opts.command)
		target_add(&r, (uint32_t)r.child);

	/* the BPF program */
	r.skel = fg_sample_bpf__open();
	if (!r.skel)
		fail_setup(&r, -errno, "cannot open the BPF program");
	r.skel->rodata->kernel_stacks = !opts.user_only;
	r.skel->rodata->user_stacks = !opts.kernel_only;
	r.skel->rodata->filter = r.filtering;
	r.skel->rodata->follow_children = r.follow;
	r.skel->rodata->include_idle = opts.idle;
	r.skel->rodata->kernel_depth = opts.depth;
	r.skel->rodata->user_depth = opts.depth;
	err = fg_sample_bpf__load(r.skel);
	if (err == -EACCES || err == -EINVAL)
		fail_setup(&r, err, "the kernel refused the BPF program (-v shows its log)");
	if (err)
		fail_setup(&r, err, "cannot load the BPF program");
	for (size_t i = 0; i < opts.npids; i++) {
		uint32_t v = FG_TARGET_PID;

		bpf_map__update_elem(r.skel->maps.targets, &opts.pids[i], 4, &v, 4, BPF_ANY);
	}
	for (size_t i = 0; i < opts.ntids; i++) {
		uint32_t v = FG_TARGET_TID;

		bpf_map__update_elem(r.skel->maps.targets, &opts.tids[i], 4, &v, 4, BPF_ANY);
	}
	if (opts.command) {
		uint32_t v = FG_TARGET_PID, pid = (uint32_t)r.child;

		bpf_map__update_elem(r.skel->maps.targets, &pid, 4, &v, 4, BPF_ANY);
	}
	r.rb = ring_buffer__new(bpf_map__fd(r.skel->maps.events), on_sample, &r, NULL);
	if (!r.rb)
		fail_setup(&r, -errno, "cannot open the BPF ring buffer");

	/* the side-band events first, so nothing between the snapshot and the samples is missed */
	err = fg_sb_open(&r.sb, opts.cpus, opts.ncpus, 128, &failed_cpu);
	if (err) {
		char what[96];

		snprintf(what, sizeof(what), "cannot open perf events on CPU %d", failed_cpu);
		if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
			fg_diex("%s: %s: perf events are unavailable on this kernel or CPU",
				what, strerror(-err));
		fail_setup(&r, err, what);
	}
	fg_rec_header_init(&h);
	h.freq = opts.freq;
	h.ncpus = (uint32_t)opts.ncpus;
	h.flags = (opts.user_only ? FG_HDR_F_USER_ONLY : 0) |
		  (opts.kernel_only ? FG_HDR_F_KERNEL_ONLY : 0) |
		  (r.filtering ? FG_HDR_F_FILTERED : 0) | (opts.idle ? FG_HDR_F_IDLE : 0);
	if (r.filtering) {
		for (size_t i = 0; i < fg_hmap_count(r.targets); i++) {
			uint32_t pid;

			memcpy(&pid, fg_hmap_at(r.targets, i)->key, 4);
			fg_maps_snapshot_pid(r.q, "/proc", pid);
		}
	} else {
		fg_maps_snapshot_all(r.q, "/proc");
	}

	/* sampling: a CPU-clock event on every CPU, the program attached to each */
	r.links = fg_xcalloc((size_t)opts.ncpus, sizeof(*r.links));
	r.pfds = fg_xcalloc((size_t)opts.ncpus, sizeof(int));
	for (int i = 0; i < opts.ncpus; i++) {
		int fd = open_cpu_clock(opts.cpus[i]);
		char what[96];

		if (fd < 0) {
			err = -errno;
			snprintf(what, sizeof(what), "cannot open a CPU-clock perf event on CPU %d",
				 opts.cpus[i]);
			if (err == -ENODEV && !cpu_online(opts.cpus[i]))
				fg_diex("%s: the CPU is offline", what);
			if (err == -EINVAL)
				fg_diex("%s: %s: is -F %u above "
					"/proc/sys/kernel/perf_event_max_sample_rate?",
					what, strerror(-err), opts.freq);
			if (err == -ENOENT || err == -EOPNOTSUPP)
				fg_diex("%s: %s: perf events are unavailable", what,
					strerror(-err));
			fail_setup(&r, err, what);
		}
		r.pfds[i] = fd;
		r.nlinks = i + 1;
		r.links[i] = bpf_program__attach_perf_event(r.skel->progs.fg_sample, fd);
		if (!r.links[i]) {
			err = -errno;
			snprintf(what, sizeof(what), "cannot attach the BPF program on CPU %d",
				 opts.cpus[i]);
			fail_setup(&r, err, what);
		}
	}
	start = now_ns(CLOCK_MONOTONIC);
	h.start_ns = start;
	h.start_realtime_ns = now_ns(CLOCK_REALTIME);
	if (opts.duration > 0)
		deadline = start + (uint64_t)llround(opts.duration * 1e9);
	r.w = fg_rec_writer_new(out_fd);
	fg_rec_write_header(r.w, &h);
	if (go_fd >= 0) {
		int cerr;

		(void)!write(go_fd, "g", 1);
		close(go_fd);
		if (read(err_fd, &cerr, sizeof(cerr)) == sizeof(cerr)) {
			fg_warne(cerr, "cannot run '%s'", opts.command[0]);
			status = FG_EXIT_FAIL;
		}
		close(err_fd);
	}

	/* the loop: every 100 ms, side-band events and samples into time order, then out */
	for (;;) {
		uint64_t cut;
		bool last = stop_signal || child_exited;

		if (!last) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (opts.command && !r.child_done) {
			int st;

			if (waitpid(r.child, &st, WNOHANG) == r.child) {
				r.child_done = true;
				r.child_status = st;
			}
		}
		cut = now_ns(CLOCK_MONOTONIC);
		if (deadline && cut >= deadline)
			last = true;
		if (r.child_done || stop_signal || targets_gone())
			last = true;
		fg_sb_drain(r.sb, r.q);
		ring_buffer__consume(r.rb);
		check_lost(&r, cut);
		check_offline(&r, cut);
		if (fg_rq_flush(r.q, last ? UINT64_MAX : cut, r.w, keep_record, &r) < 0 ||
		    fg_rec_writer_flush(r.w) < 0) {
			r.werr = fg_rec_writer_error(r.w);
			break;
		}
		if (last)
			break;
	}
	/* detach first, then the last counters */
	uint64_t end = now_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < r.nlinks; i++) {
		bpf_link__destroy(r.links[i]);
		r.links[i] = NULL;
	}
	if (r.werr == -EPIPE) {
		epipe = true;
	} else if (!r.werr) {
		ring_buffer__consume(r.rb);
		fg_sb_drain(r.sb, r.q);
		check_lost(&r, end);
		fg_rq_flush(r.q, UINT64_MAX, r.w, keep_record, &r);
	}
	memset(&sum, 0, sizeof(sum));
	sum.start_ns = start;
	sum.end_ns = end;
	sum.samples = fg_rq_written(r.q, FG_REC_SAMPLE);
	sum.mappings = fg_rq_written(r.q, FG_REC_MAPPING);
	sum.lost = stat_total(&r, FG_STAT_RINGBUF_FULL, percpu_stats);
	sum.kstack_failed = stat_total(&r, FG_STAT_KSTACK_FAILED, percpu_stats);
	sum.ustack_failed = stat_total(&r, FG_STAT_USTACK_FAILED, percpu_stats);
	sum.ustack_cut = stat_total(&r, FG_STAT_USTACK_CUT, percpu_stats);
	sum.filtered = stat_total(&r, FG_STAT_FILTERED, percpu_stats);
	sum.sideband_lost = fg_sb_lost(r.sb);
	sum.command_status = r.child_done ? r.child_status : -1;
	sum.flags = r.child_done ? FG_SUM_F_COMMAND : 0;
	if (!epipe && !r.werr) {
		fg_rec_write(r.w, FG_REC_SUMMARY, &sum, sizeof(sum));
		r.werr = fg_rec_writer_flush(r.w);
		if (r.werr == -EPIPE)
			epipe = true;
	}
	fg_rec_writer_free(r.w);
	cleanup(&r);
	if (epipe) {
		/* the reader went away: stop quietly */
	} else if (r.werr) {
		fg_warne(r.werr, "write error");
		status = FG_EXIT_FAIL;
	} else {
		print_summary(&sum, (unsigned)opts.ncpus);
		if (r.bad_events)
			fg_warnx("%" PRIu64 " malformed events from the BPF program dropped",
				 r.bad_events);
		if (r.child_done && status == FG_EXIT_OK) {
			if (WIFEXITED(r.child_status))
				fprintf(stderr, "fg-sample: command exited with status %d\n",
					WEXITSTATUS(r.child_status));
			else if (WIFSIGNALED(r.child_status))
				fprintf(stderr, "fg-sample: command killed by signal %d (%s)\n",
					WTERMSIG(r.child_status),
					strsignal(WTERMSIG(r.child_status)));
		}
	}
	if (opts.output && close(out_fd) < 0 && !epipe && !r.werr) {
		fg_warn("write error on '%s'", opts.output);
		status = FG_EXIT_FAIL;
	}
	fg_rq_free(r.q);
	fg_hmap_free(r.targets);
	free(r.ringbuf_full_seen);
	free(r.offline_warned);
	free(opts.pids);
	free(opts.tids);
	return status;
}
