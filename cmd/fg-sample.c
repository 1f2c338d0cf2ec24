// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-sample: sample the stacks of every CPU (or of some processes) with an
 * eBPF program and write them as a record stream (fg-record(5)).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
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

#include "fg/buf.h"
#include "fg/cpulist.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/record.h"
#include "fg/sample.h"
#include "fg/sideband.h"
#include "fg/task.h"
#include "fg/util.h"
#include "fg_sample.skel.h"

#define MAX_CPUS 4096

static const char usage_text[] =
	"usage: fg-sample [-IhVv] [-F hz] [-d seconds] [-p pid]... [-t tid]... [-C cpu]...\n"
	"                 [--call-graph fp | dwarf[,bytes]] [--user-only | --kernel-only]\n"
	"                 [--max-depth n] [-m pages] [-o file] [-- command [arg ...]]\n"
	"  -F hz           samples a second on each CPU (default 99)\n"
	"  -d seconds      stop after this long (default: until Ctrl-C, or the targets end)\n"
	"  -p pid          sample only this process (repeatable)\n"
	"  -t tid          sample only this thread (repeatable)\n"
	"  -C cpu          sample only this CPU (repeatable, or a list: 0,2-3)\n"
	"  -I              sample the idle task (pid 0) too\n"
	"  --call-graph fp | dwarf[,bytes]\n"
	"                  fp (default): walk the user stack by frame pointers;\n"
	"                  dwarf: also record the user registers and bytes of user stack\n"
	"                  (default 8192, at most 65528) for unwinding by CFI later\n"
	"  --user-only     user stacks only\n"
	"  --kernel-only   kernel stacks only\n"
	"  --max-depth n   frames of each stack, at most (default and maximum 127)\n"
	"  -m pages        ring buffer for samples, pages per CPU, a power of two\n"
	"                  (default: 4 up to 100 Hz, 8 up to 200 Hz, 16 above; with dwarf,\n"
	"                  one second of the largest samples)\n"
	"  -o file         write the records to file (default: standard output, not a terminal)\n"
	"  -v              show libbpf's messages, and the counters of each CPU at the end\n"
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
	unsigned pages;
	unsigned snapshot; /* --call-graph dwarf,BYTES; 0 for fp */
	const char *output;
	char **command;
} opts = {
	.freq = 99,
	.depth = MAX_STACK_DEPTH,
	.pages = 0, /* by the rate: default_pages() */
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

static bool cpu_online(int cpu)
{
	int cpus[MAX_CPUS];
	int n = fg_cpus_online(NULL, cpus, MAX_CPUS);

	return n < 0 || fg_cpulist_has(cpus, n, cpu); /* unknown: assume so */
}

static void add_id(uint32_t **v, size_t *n, size_t *alloc, const char *arg, const char *what)
{
	uint64_t id;

	if (fg_parse_u64(arg, 1, INT32_MAX, &id) < 0)
		usage_error("invalid %s '%s'", what, arg);
	FG_ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[(*n)++] = (uint32_t)id;
}

enum { OPT_USER_ONLY = 256, OPT_KERNEL_ONLY, OPT_MAX_DEPTH, OPT_CALL_GRAPH };

/* --call-graph fp | dwarf[,BYTES], as perf spells it: BYTES rounded up to 8, as perf does */
static void parse_call_graph(const char *arg)
{
	const char *size;
	uint64_t v;

	if (strcmp(arg, "fp") == 0) {
		opts.snapshot = 0;
		return;
	}
	if (strncmp(arg, "dwarf", 5) != 0 || (arg[5] != '\0' && arg[5] != ','))
		usage_error("invalid --call-graph '%s' (fp, or dwarf[,bytes])", arg);
#ifndef __x86_64__
	usage_error("--call-graph dwarf: stack snapshots are written on x86-64 only");
#endif
	opts.snapshot = FG_USTACK_SNAPSHOT_DEFAULT;
	if (arg[5] == '\0')
		return;
	size = arg + 6;
	if (fg_parse_u64(size, 1, FG_USTACK_SNAPSHOT_MAX, &v) < 0)
		usage_error("invalid stack dump size '%s' (1 to %u bytes)", size,
			    FG_USTACK_SNAPSHOT_MAX);
	opts.snapshot = (unsigned)((v + 7) & ~7ull);
}

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
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	/* '+': options end at the command */
	while ((c = getopt_long(argc, argv, "+C:d:F:hIm:o:p:t:Vv", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (fg_cpulist_parse(optarg, opts.cpus, &opts.ncpus, MAX_CPUS) < 0)
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
		case 'm':
			if (fg_parse_u64(optarg, 1, 1u << 20, &v) < 0 || (v & (v - 1)))
				usage_error("invalid buffer size '%s' (pages, a power of two)", optarg);
			opts.pages = (unsigned)v;
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
		case OPT_CALL_GRAPH:
			parse_call_graph(optarg);
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
	if (opts.kernel_only && opts.snapshot)
		usage_error("--call-graph dwarf and --kernel-only exclude each other");
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

/*
 * As perf record does: a rate above kernel.perf_event_max_sample_rate (which
 * the kernel also lowers by itself when sampling interrupts take too long)
 * is lowered to it, with a warning; the kernel would refuse the event.
 */
static void clamp_rate(void)
{
	/* FG_SAMPLE_MAX_RATE_FILE: another file, so that tests need not change the sysctl */
	const char *path = getenv("FG_SAMPLE_MAX_RATE_FILE");
	FILE *f = fopen(path ? path : "/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long max;

	if (!f)
		return;
	if (fscanf(f, "%lu", &max) == 1 && max > 0 && opts.freq > max) {
		fg_warnx("-F %u is above kernel.perf_event_max_sample_rate (%lu): sampling at "
			 "%lu Hz (raise the limit with sysctl to sample faster)",
			 opts.freq, max, max);
		opts.freq = (unsigned)max;
	}
	fclose(f);
}

/* Refuse early, with one line naming what is missing. */
static void check_privileges(void)
{
	uint64_t caps;
	bool bpf, perfmon;

	if (geteuid() == 0)
		return;
	if (fg_caps_effective(&caps) < 0)
		fg_die("cannot read this process's capabilities");
	bpf = caps & (1ull << FG_CAP_BPF);
	perfmon = caps & (1ull << FG_CAP_PERFMON);
	if ((caps & (1ull << FG_CAP_SYS_ADMIN)) || (bpf && perfmon))
		return;
	fg_diex("permission denied: run as root, or with the capabilities CAP_BPF and "
		"CAP_PERFMON (missing: %s)",
		!bpf && !perfmon ? "CAP_BPF, CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON");
}

static void check_kernel(void)
{
	/* FG_SAMPLE_BTF: another path to check, so that the tests can see this message */
	const char *btf = getenv("FG_SAMPLE_BTF") ? getenv("FG_SAMPLE_BTF") : "/sys/kernel/btf/vmlinux";

	if (access(btf, R_OK) < 0)
		fg_diex("the kernel has no BTF ('%s' is missing): it needs CONFIG_DEBUG_INFO_BTF=y",
			btf);
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
	struct fg_buf rest; /* a sample's payload after struct fg_rec_sample */
	int werr;
};

/* One sample from the BPF program, into the queue. */
static void on_sample(struct run *r, const uint8_t *data, size_t size)
{
	struct fg_rec_sample s;
	struct fg_rec_ustack u;
	const void *ips, *regs, *stack;
	size_t nips;

	if (fg_rec_sample_from_event(data, size, &s, &ips) < 0) {
		r->bad_events++;
		return;
	}
	nips = 8 * ((size_t)s.nr_kernel + s.nr_user);
	if (!(s.flags & FG_SAMPLE_F_USTACK_SNAPSHOT)) {
		fg_rq_add(r->q, s.time_ns, FG_REC_SAMPLE, &s, sizeof(s), ips, nips);
		return;
	}
	/* the snapshot comes before the IPs in the event, after them in the record */
	if (fg_rec_ustack_from_event(data, size, &u, &regs, &stack) < 0) {
		r->bad_events++;
		return;
	}
	fg_buf_reset(&r->rest);
	fg_buf_add(&r->rest, ips, nips);
	fg_buf_add(&r->rest, &u, sizeof(u));
	fg_buf_add(&r->rest, regs, 8 * (size_t)u.nr_regs);
	fg_buf_add(&r->rest, stack, u.size);
	fg_rq_add(r->q, s.time_ns, FG_REC_SAMPLE, &s, sizeof(s), r->rest.data, r->rest.len);
}

/* a record from the ring buffer (the BPF program counts the samples it could not put there) */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	on_sample(ctx, data, size);
	return 0;
}

/*
 * The ring buffer's default size, pages per CPU: about 25 samples of each CPU
 * a page, 4 to 16 pages.  A ring larger than needed costs time in each sample
 * at low rates: its pages are revisited seldom, and in a shadow-paged guest
 * the first write to a page not written for a while is slow (at 99 Hz the
 * output step took about 1.7 us a sample with 16 pages a CPU, 1.0 us with 4;
 * README, Benchmarks).  The ring is drained every 100 ms, so 4 pages at
 * 100 Hz hold 1.6 KiB a sample, twice the room 16 pages give at 1000 Hz.
 */
static unsigned default_pages(unsigned hz)
{
	unsigned pages = 4;

	while (pages < 16 && pages * 25 < hz)
		pages <<= 1;
	return pages;
}

/*
 * The ring buffer's size in bytes: -m pages for each CPU sampled, rounded up
 * to a power of two as the kernel wants; 0 when too large.
 */
static uint32_t ring_size(unsigned pages, int ncpus)
{
	uint64_t want = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) * (uint64_t)ncpus;
	uint64_t size = (uint64_t)sysconf(_SC_PAGESIZE);

	while (size < want)
		size <<= 1;
	return size > (1u << 30) ? 0 : (uint32_t)size;
}

/* the largest sample with a snapshot, in the ring (its 8-byte header included) */
static uint64_t snapshot_sample_max(void)
{
	return 8 + offsetof(struct fg_event, ips) + sizeof(struct fg_event_ustack) + opts.snapshot +
	       16 * (uint64_t)opts.depth;
}

/*
 * With --call-graph dwarf a sample is the size of its snapshot and more (8
 * KiB and more by default): the ring holds one second of the largest
 * samples of each CPU (at 99 Hz and 8192 bytes, 256 pages, 1 MiB), at least
 * the default above.  Less is not enough on a busy machine: writing the
 * output file there may stall for half a second (dirty pages written back
 * under other jobs' I/O), the ring is not read meanwhile, and with 200 ms
 * of room 11 to 67 samples were lost in such runs, none with one second
 * (README, Benchmarks).  Its pages are cold whatever its size (100 ms of
 * samples pass between two writes to a page), so a larger ring costs no
 * more a sample: 64, 256 pages a CPU measured the same.  The whole ring
 * stays within the 1 GiB ring_size() allows.
 */
static unsigned default_pages_snapshot(unsigned hz, int ncpus)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t want = (uint64_t)hz * snapshot_sample_max();
	unsigned pages = default_pages(hz);

	while ((uint64_t)pages * page < want && ring_size(pages * 2, ncpus))
		pages <<= 1;
	return pages;
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
	int online[MAX_CPUS];
	int n = fg_cpus_online(NULL, online, MAX_CPUS);

	for (int i = 0; i < opts.ncpus && n > 0; i++) {
		if (fg_cpulist_has(online, n, opts.cpus[i]) || r->offline_warned[i])
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
	if (!opts.npids && !opts.ntids)
		return false;
	for (size_t i = 0; i < opts.npids; i++)
		if (fg_task_alive("/proc", opts.pids[i]))
			return false;
	for (size_t i = 0; i < opts.ntids; i++)
		if (fg_task_alive("/proc", opts.tids[i]))
			return false;
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

/* -v: the BPF program's counters CPU by CPU */
static void print_per_cpu(struct run *r)
{
	static const char *const names[FG_STAT_MAX] = {
		[FG_STAT_SAMPLES] = "samples",
		[FG_STAT_RINGBUF_FULL] = "lost",
		[FG_STAT_KSTACK_FAILED] = "kstack-failed",
		[FG_STAT_USTACK_FAILED] = "ustack-failed",
		[FG_STAT_USTACK_CUT] = "ustack-cut",
		[FG_STAT_FILTERED] = "filtered",
		[FG_STAT_USTACK_BYTES] = "ustack-bytes",
		[FG_STAT_USTACK_NOFP] = "ustack-nofp",
		[FG_STAT_SNAPSHOTS] = "snapshots",
		[FG_STAT_SNAPSHOT_BYTES] = "snapshot-bytes",
		[FG_STAT_SNAPSHOT_WHOLE] = "snapshot-whole",
	};
	static uint64_t v[FG_STAT_MAX][MAX_CPUS];

	for (int k = 0; k < FG_STAT_MAX; k++)
		stat_total(r, (enum fg_stat)k, v[k]);
	for (int c = 0; c < r->ncpus_possible; c++) {
		char line[512];
		int len = snprintf(line, sizeof(line), "fg-sample: CPU %d:", c);

		for (int k = 0; k < FG_STAT_MAX && len > 0 && (size_t)len < sizeof(line); k++)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %s %" PRIu64,
					names[k], v[k][c]);
		fprintf(stderr, "%s\n", line);
	}
}

static void print_summary(const struct fg_rec_summary *s, unsigned ncpus, uint64_t nofp)
{
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	fprintf(stderr,
		"fg-sample: %" PRIu64 " samples in %.2f s (%.1f/s; %u Hz x %u CPUs), lost %" PRIu64
		"; kernel stacks failed %" PRIu64 "; user stacks failed %" PRIu64
		", cut short %" PRIu64 ", ended at a frame without frame pointer %" PRIu64
		"; events lost %" PRIu64 "; %" PRIu64 " mappings\n",
		s->samples, secs, secs > 0 ? (double)s->samples / secs : 0.0, opts.freq, ncpus,
		s->lost, s->kstack_failed, s->ustack_failed, s->ustack_cut, nofp, s->sideband_lost,
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

/* kernel.perf_event_paranoid, or -1000 when it cannot be read */
static long perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	long v = -1000;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1000;
		fclose(f);
	}
	return v;
}

/*
 * A system call that fg-sample has the privileges for failed with EPERM,
 * EACCES or ENOSYS: something above the permission checks refuses it, most
 * often a seccomp filter (Docker's default profile denies both bpf() and
 * perf_event_open()).  One line: what failed, why, and what to do.
 */
static noreturn void refuse_denied(struct run *r, int err, const char *call, const char *what)
{
	bool perf = strcmp(call, "perf_event_open") == 0;
	long paranoid = perf ? perf_paranoid() : -1000;
	char note[96] = "", hint[96] = "";

	cleanup(r);
	if (err == -ENOSYS)
		fg_diex("%s: %s: the kernel lacks %s, or a seccomp filter (as in a container) "
			"hides the call; run fg-sample outside the container, or allow %s",
			what, strerror(-err), perf ? "CONFIG_PERF_EVENTS" : "CONFIG_BPF_SYSCALL",
			call);
	if (paranoid > 2)
		snprintf(hint, sizeof(hint), "; or lower kernel.perf_event_paranoid (now %ld) to 2",
			 paranoid);
	else if (paranoid != -1000)
		snprintf(note, sizeof(note),
			 " (kernel.perf_event_paranoid is %ld, which does not limit them)", paranoid);
	fg_diex("%s: %s: %s() is denied although fg-sample has the privileges%s: a seccomp "
		"filter (a container's default profile) or a security module forbids it; run "
		"fg-sample outside the container, or allow bpf and perf_event_open "
		"(docker run --security-opt seccomp=unconfined)%s",
		what, strerror(-err), call, note, hint);
}

static bool denied(int err)
{
	return err == -EPERM || err == -EACCES || err == -ENOSYS;
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
	uint32_t ringbuf_bytes;
	int status = FG_EXIT_OK;
	bool epipe = false;

	fg_set_progname(argv[0]);
	parse_options(argc, argv);
	if (!opts.output && isatty(STDOUT_FILENO))
		fg_diex("refusing to write binary records to a terminal: redirect standard "
			"output or use -o FILE");
	check_privileges();
	check_kernel();
	clamp_rate();
	if (!opts.ncpus) {
		opts.ncpus = fg_cpus_online(NULL, opts.cpus, MAX_CPUS);
		if (opts.ncpus <= 0)
			fg_diex("cannot read the online CPUs from '/sys/devices/system/cpu/online'");
	}
	r.ncpus_possible = libbpf_num_possible_cpus();
	if (r.ncpus_possible <= 0 || r.ncpus_possible > MAX_CPUS)
		fg_diex("cannot count the possible CPUs");
	r.ringbuf_full_seen = fg_xcalloc((size_t)r.ncpus_possible, sizeof(uint64_t));
	r.offline_warned = fg_xcalloc((size_t)opts.ncpus, sizeof(bool));
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
		uint32_t tgid = fg_task_tgid("/proc", opts.tids[i]);

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
	r.skel->rodata->snapshot_bytes = opts.snapshot;
	bpf_map__set_max_entries(r.skel->maps.ustack, (uint32_t)r.ncpus_possible);
	if (!opts.pages)
		opts.pages = opts.snapshot ? default_pages_snapshot(opts.freq, opts.ncpus)
					   : default_pages(opts.freq);
	ringbuf_bytes = ring_size(opts.pages, opts.ncpus);
	if (!ringbuf_bytes)
		usage_error("invalid buffer size '%u': the ring buffer would take %" PRIu64
			    " MiB (pages x CPUs sampled), 1 GiB at most", opts.pages,
			    (uint64_t)opts.pages * (uint64_t)sysconf(_SC_PAGESIZE) *
				    (uint64_t)opts.ncpus >> 20);
	if (opts.snapshot && ringbuf_bytes && ringbuf_bytes < snapshot_sample_max())
		usage_error("invalid buffer size '%u': with --call-graph dwarf,%u a sample "
			    "takes up to %" PRIu64 " KiB, more than the ring buffer's %u KiB",
			    opts.pages, opts.snapshot, (snapshot_sample_max() + 1023) >> 10,
			    ringbuf_bytes >> 10);
	bpf_map__set_max_entries(r.skel->maps.events, ringbuf_bytes);
	err = fg_sample_bpf__load(r.skel);
	if (err == -EPERM || err == -ENOSYS)
		refuse_denied(&r, err, "bpf", "cannot load the BPF program");
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
	/* the ring buffer, drained every 100 ms (the program asks for no wakeup) */
	r.rb = ring_buffer__new(bpf_map__fd(r.skel->maps.events), on_ring_record, &r, NULL);
	if (!r.rb)
		fail_setup(&r, -errno, "cannot map the BPF ring buffer for samples");

	/* the side-band events first, so nothing between the snapshot and the samples is missed */
	err = fg_sb_open(&r.sb, opts.cpus, opts.ncpus, 128, &failed_cpu);
	if (err) {
		char what[96];

		snprintf(what, sizeof(what), "cannot open perf events on CPU %d", failed_cpu);
		if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
			fg_diex("%s: %s: perf events are unavailable on this kernel or CPU",
				what, strerror(-err));
		if (denied(err))
			refuse_denied(&r, err, "perf_event_open", what);
		fail_setup(&r, err, what);
	}
	fg_rec_header_init(&h);
	h.freq = opts.freq;
	h.ncpus = (uint32_t)opts.ncpus;
	h.flags = (opts.user_only ? FG_HDR_F_USER_ONLY : 0) |
		  (opts.kernel_only ? FG_HDR_F_KERNEL_ONLY : 0) |
		  (r.filtering ? FG_HDR_F_FILTERED : 0) | (opts.idle ? FG_HDR_F_IDLE : 0) |
		  (opts.snapshot ? FG_HDR_F_USTACK_SNAPSHOT : 0);
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
			if (denied(err))
				refuse_denied(&r, err, "perf_event_open", what);
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
	if (opts.output) {
		/* only now, so that a refusal above leaves an existing file as it was */
		out_fd = open(opts.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			err = errno;
			cleanup(&r);
			errno = err;
			fg_die("cannot open '%s'", opts.output);
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
	/* of the samples written, so that none exceeds them (the BPF counts lost ones too) */
	sum.kstack_failed = fg_rq_written_with(r.q, FG_SAMPLE_F_KSTACK_FAILED);
	sum.ustack_failed = fg_rq_written_with(r.q, FG_SAMPLE_F_USTACK_FAILED);
	sum.ustack_cut = fg_rq_written_with(r.q, FG_SAMPLE_F_USTACK_CUT);
	uint64_t nofp = fg_rq_written_with(r.q, FG_SAMPLE_F_USTACK_NOFP);
	uint64_t snaps = stat_total(&r, FG_STAT_SNAPSHOTS, percpu_stats);
	uint64_t snap_bytes = stat_total(&r, FG_STAT_SNAPSHOT_BYTES, percpu_stats);
	uint64_t snap_whole = stat_total(&r, FG_STAT_SNAPSHOT_WHOLE, percpu_stats);
	sum.filtered = stat_total(&r, FG_STAT_FILTERED, percpu_stats);
	if (opts.verbose && !epipe)
		print_per_cpu(&r);
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
	/* the program's own cost, when the kernel counts it (kernel.bpf_stats_enabled=1) */
	struct bpf_prog_info info;
	uint32_t info_len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(r.skel->progs.fg_sample), &info, &info_len) < 0)
		info.run_cnt = 0;
	cleanup(&r);
	if (epipe) {
		/* the reader went away: stop quietly */
	} else {
		if (r.werr) {
			/* the disk filled: what was taken is still worth knowing */
			fg_warne(-r.werr, "write error");
			fg_warnx("'%s' ends there, without its summary record; what was sampled:",
				 opts.output ? opts.output : "<stdout>");
			status = FG_EXIT_FAIL;
		}
		print_summary(&sum, (unsigned)opts.ncpus, nofp);
		if (opts.snapshot)
			fprintf(stderr,
				"fg-sample: %" PRIu64 " user stack snapshots, %" PRIu64
				" bytes each on average (at most %u), %" PRIu64
				" of them whole stacks (the stack ended first)\n",
				snaps, snaps ? snap_bytes / snaps : 0, opts.snapshot, snap_whole);
		if (sum.lost)
			fg_warnx("%" PRIu64 " samples lost: the ring buffer of %u KiB was full; "
				 "raise -m above %u (pages per CPU) to keep them",
				 sum.lost, ringbuf_bytes >> 10, opts.pages);
		if (info.run_cnt)
			fprintf(stderr,
				"fg-sample: the BPF program ran %" PRIu64 " times, %" PRIu64
				" ns each on average (kernel.bpf_stats_enabled)\n",
				(uint64_t)info.run_cnt, (uint64_t)(info.run_time_ns / info.run_cnt));
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
	fg_buf_release(&r.rest);
	free(opts.pids);
	free(opts.tids);
	return status;
}
