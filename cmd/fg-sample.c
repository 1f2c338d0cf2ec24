// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-sample: sample the stacks of every CPU (or of some processes) with an
 * eBPF program and write them as a record stream (fg-record(5)).
 *
 * main() is the run's steps in order (see there).  This file keeps what
 * touches the BPF skeleton (opening, sizing, loading and attaching the
 * program, reading its ring buffer and counters) and the tool's speech;
 * the rest is in lib/: bpf_event (events into records, ring sizing),
 * sample_opts, targets, spawn, sideband, reorder, sample_summary, events
 * (-e: parsed, looked up in tracefs and ELF files, named).  Each event of
 * -e is attached in attach_events(): a perf software event on each CPU, a
 * tracepoint, a uprobe; the programs' links go through keep_link().
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "fg/atomicfile.h"
#include "fg/bigmem.h"
#include "fg/bpfsyms.h"
#include "fg/bpf_event.h"
#include "fg/buf.h"
#include "fg/cfi_load.h"
#include "fg/cfi_store.h"
#include "fg/cfi_worker.h"
#include "fg/cpulist.h"
#include "fg/diag.h"
#include "fg/events.h"
#include "fg/hash.h"
#include "fg/jvmmaps.h"
#include "fg/korc.h"
#include "fg/minbtf.h"
#include "fg/pyprocs.h"
#include "fg/ksyms.h"
#include "fg/record.h"
#include "fg/reorder.h"
#include "fg/safeio.h"
#include "fg/sample_opts.h"
#include "fg/sample_summary.h"
#include "fg/sideband.h"
#include "fg/spawn.h"
#include "fg/targets.h"
#include "fg/task.h"
#include "fg/util.h"
#include "fg_ksym.skel.h"
#include "fg_sample.skel.h"

#define MAX_CPUS FG_SAMPLE_MAX_CPUS

static const char usage_text[] =
    "usage: fg-sample [-IhVv] [-e event]... [-F hz | -c n] [-d seconds] [-p pid]... [-t tid]...\n"
    "                 [-C cpu]... [--call-graph fp | dwarf[,bytes] | cfi[,bytes]] [--cfi-check]\n"
    "                 [--cfi-max-mib n] [--cfi-max-rows n] [--cfi-max-files n]\n"
    "                 [--cfi-max-procs n] [--kernel-unwind orc | helper | check]\n"
    "                 [--user-only | --kernel-only]\n"
    "                 [--off-cpu | --wall] [--min-block us] [--max-block us]\n"
    "                 [--kernel-threads] [--no-python] [--no-jvm-maps] [--no-cache]\n"
    "                 [--max-depth n] [-m pages] [-o file] [-- command [arg ...]]\n"
    "       fg-sample --list-events [pattern]\n"
    "  -e event        take stacks on this event (repeatable; default cpu-clock): a software\n"
    "                  event (page-faults, context-switches, ...), tracepoint:CATEGORY:NAME,\n"
    "                  uprobe:PATH:FUNCTION[+OFFSET] or uretprobe:PATH:FUNCTION\n"
    "  -F hz           samples a second on each CPU of cpu-clock and task-clock (default 99)\n"
    "  -c n            a sample every n events of the other events (default 1: each)\n"
    "  -d seconds      stop after this long (default: until Ctrl-C, or the targets end)\n"
    "  -p pid          sample only this process (repeatable)\n"
    "  -t tid          sample only this thread (repeatable)\n"
    "  -C cpu          sample only this CPU (repeatable, or a list: 0,2-3)\n"
    "  -I              sample the idle task (pid 0) too\n"
    "  --call-graph fp | dwarf[,bytes] | cfi[,bytes]\n"
    "                  fp: walk the user stack by frame pointers;\n"
    "                  dwarf: also record the user registers and bytes of user stack\n"
    "                  (default 8192, at most 65528) for unwinding by CFI later;\n"
    "                  cfi (default; fp with -e events other than cpu-clock and\n"
    "                  task-clock, --kernel-only, --off-cpu, --wall):\n"
    "                  unwind by CFI in the kernel, with the files' tables loaded\n"
    "                  into BPF maps; a sample whose table is not loaded yet carries\n"
    "                  a snapshot of bytes instead, as with dwarf\n"
    "  --cfi-check     with cfi: a snapshot with every sample too (to compare)\n"
    "  --cfi-max-mib n, --cfi-max-rows n, --cfi-max-files n, --cfi-max-procs n\n"
    "                  with cfi: MiB of tables (default 256), rows of one table\n"
    "                  (4194304), tables (4096), processes (8192) in the maps\n"
    "  --kernel-unwind orc | helper | check\n"
    "                  kernel stacks: orc (default) unwinds them in BPF with the kernel's\n"
    "                  ORC tables, bpf_get_stack() where that gives up (by default the\n"
    "                  tables are copied once 4096 kernel stacks were taken; given, at\n"
    "                  the start); helper, always bpf_get_stack(); check, both, compared\n"
    "                  (a test)\n"
    "  --user-only     user stacks only\n"
    "  --kernel-only   kernel stacks only\n"
    "  --off-cpu       off-CPU time instead of CPU samples: a record for each wait, the\n"
    "                  stacks of the thread as it left the CPU weighing the nanoseconds\n"
    "                  until it ran again (sched_switch)\n"
    "  --wall          wall-clock time: CPU samples, each weighing its period in\n"
    "                  nanoseconds, and waits, as with --off-cpu\n"
    "  --min-block us  leave out waits shorter than this, microseconds (default 1)\n"
    "  --max-block us  leave out waits longer than this, microseconds (default: none)\n"
    "  --kernel-threads  the waits of kernel threads too (left out by default)\n"
    "  --no-python     no Python frames: by default the samples of CPython 3.8 to 3.13\n"
    "                  processes carry their Python stacks, named in the records\n"
    "  --no-jvm-maps   do not ask the JVMs sampled for their perf maps at the end\n"
    "                  (jcmd PID Compiler.perfmap, as each one's user)\n"
    "  --no-cache      neither read nor write the unwind tables and the kernel's types\n"
    "                  kept between runs (in ${XDG_CACHE_HOME:-$HOME/.cache}/fg/cfi, btf)\n"
    "  --max-depth n   frames of each stack, at most (default and maximum 127)\n"
    "  -m pages        ring buffer for samples, pages per CPU, a power of two\n"
    "                  (default: 4 up to 100 Hz, 8 up to 200 Hz, 16 above; 1024 with\n"
    "                  counted events (-c); with dwarf, one second of the largest samples);\n"
    "                  also sizes the waits' ring (default 64)\n"
    "  -o file         write the records to file (default: standard output, not a terminal)\n"
    "  -v              every count at the end, those of each CPU, libbpf's warnings;\n"
    "                  -vv also libbpf's debug messages\n"
    "  --list-events [pattern]\n"
    "                  list the events this system offers, or those matching a glob\n"
    "                  (tracepoint:sched:*, uprobe:/usr/bin/bash:read*), and exit\n"
    "  -h              show this help;  -V  show the version\n"
    "  command         run it, sample it and its children, stop when it exits\n";

static struct fg_sample_opts opts = FG_SAMPLE_OPTS_INIT;
static struct fg_cfi_load_limits cfi_limits = FG_CFI_LOAD_LIMITS_DEFAULT;
/*
 * cfi: the side-band records waiting for the table loader's thread, at
 * most (a mapping record is at most 4 KiB; a process maps tens), and how
 * often they go to it (a new process' samples fall back until then); a
 * table no process maps stays loaded for the next that maps its file.
 */
#define CFI_QUEUE_BYTES (4u << 20)
/* Python processes whose stacks are walked at once, at most (the rest counted) */
#define PY_PROCS_MAX 4096
/* the JVMs' jcmd at the end of the run, all together, at most (each starts a JVM) */
#define JVM_MAPS_MS 15000
#define CFI_TICK_NS (20 * 1000 * 1000)
/*
 * The loop's turn with cfi when the last brought no side-band record: a
 * quiet machine's (a new process' first fallback wakes the loop anyway, and
 * is read from /proc).  A turn costs 100 to 150 us of CPU here, a woken
 * thread running cold: 3 to 4 ms a second at 20 ms.
 */
#define QUIET_TICK_NS (100 * 1000 * 1000)
/* processes remembered as asked for at their first samples (cfi_ask), at most */
#define CFI_ASKED_MAX (1u << 16)
/*
 * A process' mappings read again at a fallback's wakeup after this long (cfi_ask):
 * the program asks once in 10 ms on a CPU, unless the process exec'd since
 */
#define CFI_ASK_NS (2 * 1000 * 1000ull)
/*
 * A record reaches its buffer a little after its time was taken, and the
 * buffers are read one after another: a tick writes only what is older than
 * this, so that a record read a tick late still goes out in time order (one
 * later still is counted: fg_reorder_late).
 */
#define ORDER_MARGIN_NS (5 * 1000 * 1000)
/*
 * How often the stream is written out: every 100 ms, whatever the tick.  The
 * 20 ms ticks of cfi carry side-band records to the tables' thread; a write
 * each tick woke fg-sym and fg-fold 50 times a second, and a reader woken
 * after a sleep runs cold (on these guests 250 us a wakeup: fg-sym cost
 * 38 ms live against 18 on the same stream from a file).
 */
#define WRITE_EVERY_NS (100 * 1000 * 1000ull)
#define CFI_KEEP_NS (10 * 1000000000ull)
/*
 * By default the kernel's ORC tables are copied in only once the run has
 * taken this many kernel stacks with bpf_get_stack(): copying and building
 * them costs 11 to 15 ms of CPU, and each stack the walk takes rather than the
 * helper saves 1.5 to 2.5 us (docs/benchmarks.md, kstack), so that a run that
 * takes fewer never pays for them, and one that takes more pays at most
 * twice.  Most system-wide captures of programs take a few dozen.
 */
#define KORC_PAYS 4096
/* how often the CPUs online are read (a CPU that goes offline is reported) */
#define OFFLINE_CHECK_NS (250 * 1000 * 1000ull)

/* the events of the run (-e), looked up; their numbers are their places here */
static struct fg_evlist evlist;

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
	/* -v: its warnings (among them the verifier's log); -vv: all it says */
	if (!opts.verbose || (level == LIBBPF_DEBUG && opts.verbose < 2))
		return 0;
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

static noreturn void list_events(const char *pattern);

static void parse_options(int argc, char **argv)
{
	char why[512];
	int c, err;

	while ((c = getopt_long(argc, argv, FG_SAMPLE_SHORTOPTS, fg_sample_longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(fg_close_stdout());
		}
		if (c == 'V') {
			fg_print_version();
			exit(fg_close_stdout());
		}
		err = fg_sample_opt(&opts, c, optarg, why, sizeof(why));
		if (err == -ENOENT)
			usage_error(NULL); /* getopt said why */
		if (err < 0)
			usage_error("%s", why);
	}
	if (fg_sample_opts_check(&opts, argv + optind, why, sizeof(why)) < 0)
		usage_error("%s", why);
	if (opts.cfi_max_mib)
		cfi_limits.max_bytes = (uint64_t)opts.cfi_max_mib << 20;
	if (opts.cfi_max_rows)
		cfi_limits.max_rows = opts.cfi_max_rows;
	if (opts.cfi_max_files)
		cfi_limits.max_files = opts.cfi_max_files;
	if (opts.cfi_max_procs)
		cfi_limits.max_procs = opts.cfi_max_procs;
	cfi_limits.keep_ns = CFI_KEEP_NS;
	if (opts.list_events)
		list_events(opts.list_pattern);
	/* what the options name must be there */
	for (size_t i = 0; i < opts.npids; i++)
		if (kill((pid_t)opts.pids[i], 0) < 0 && errno == ESRCH)
			usage_error("no process with pid %" PRIu32, opts.pids[i]);
	for (size_t i = 0; i < opts.ntids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", opts.tids[i]);
		if (access(path, F_OK) < 0)
			usage_error("no thread with tid %" PRIu32, opts.tids[i]);
	}
	for (int i = 0; i < opts.ncpus; i++)
		if (!cpu_online(opts.cpus[i]))
			usage_error("CPU %d is not online", opts.cpus[i]);
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
		!bpf && !perfmon ? "CAP_BPF, CAP_PERFMON"
		: !bpf		 ? "CAP_BPF"
				 : "CAP_PERFMON");
}

static void check_kernel(void)
{
	/* FG_SAMPLE_BTF: another path to check, so that the tests can see this message */
	const char *btf =
	    getenv("FG_SAMPLE_BTF") ? getenv("FG_SAMPLE_BTF") : "/sys/kernel/btf/vmlinux";

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
	int *ring_fds;		 /* each sampled CPU's ring buffer of samples (opts.cpus' order) */
	struct bpf_link **links; /* every program attached, each with its perf event or -1 */
	int *pfds;
	int nlinks;
	size_t alinks;
	uint32_t ringbuf_bytes; /* each CPU's */
	struct fg_sideband *sb;
	struct fg_bpfsyms_stats bpfsyms; /* the BPF programs named at the start */
	int bpfsyms_err;
	struct fg_reorder *q;
	struct fg_rec_writer *w;
	struct fg_targets *targets; /* the processes whose side-band events are kept */
	bool filtering;
	int ncpus_possible;
	uint64_t *ringbuf_full_seen; /* per possible CPU */
	uint64_t *busy_seen;	     /* per possible CPU */
	uint64_t *event_samples;     /* per event: samples taken */
	uint64_t busy_total;	     /* events left out: their CPU's slot was busy */
	uint64_t misses;	     /* events the kernel did not run a program for */
	bool *offline_warned;	     /* per sampled CPU */
	uint64_t offline_checked;    /* when the CPUs online were last read */
	struct fg_spawn cmd;	     /* the command, if any */
	int child_status;
	bool child_done;
	int out_fd;
	struct fg_atomic out; /* -o */
	uint64_t bad_events;
	struct fg_rec_header header;
	struct fg_rec_summary sum;
	uint64_t nofp; /* samples written whose user chain ended at a frame without frame pointer */
	struct fg_cfi_loader *cfi; /* --call-graph cfi: the tables in the maps */
	struct fg_cfi_bpf_maps cfi_maps;
	struct fg_cfi_worker *cfi_worker; /* the thread that has r->cfi during the run */
	/*
	 * System-wide, the tables of a process running at the start are loaded when its
	 * samples first fall back (the pids asked for, and when), not all before sampling
	 */
	bool cfi_lazy;
	struct fg_hash *cfi_asked;
	struct fg_cfi_worker_stats cfi_wst;
	struct fg_pyprocs *py;		/* the Python processes, their frames' names */
	struct fg_jvmmaps *jvm;		/* the JVMs sampled, asked for their perf maps at the end */
	struct fg_cfi_store *cfi_store; /* --call-graph cfi's tables kept between runs, or NULL */
	/*
	 * The kernel's types for libbpf's CO-RE, kept between runs (fg/minbtf.h):
	 * their directory (-1: none, --no-cache), the file kept for this program
	 * and kernel (-1: none yet) and its name, and what became of them for -v
	 */
	struct {
		int dirfd, fd;
		char name[FG_MINBTF_NAME_MAX], path[32];
		const char *how;
		bool dropped; /* a file kept that did not do, removed */
		uint64_t make_ns;
		char *dir; /* the directory, to make after a load: there is none yet */
	} kbtf;
	struct fg_jvmmaps_stats jvm_st;
	uint64_t cfi_start_ns; /* the time the tables of the running processes took */
	uint64_t begin_ns;     /* CLOCK_MONOTONIC when main() began */
	bool sideband_quiet;   /* the loop's last turn read no side-band record */
	struct korc {
		bool on;	     /* kernel stacks unwound with the ORC tables */
		const char *why_not; /* or why not, when it was wanted */
		struct fg_korc_syms syms;
		const unsigned char *chunk; /* korc_chunk, fg_korc_copy's, mapped */
		uint64_t load_ns;	    /* the time the tables took to copy and build */
		uint32_t nrules;	    /* the distinct rules of their entries */
		/* copied once KORC_PAYS kernel stacks were taken without them (lazy) */
		bool lazy, loaded;
		uint64_t kstacks; /* the samples' kernel stacks, however taken */
	} korc;
	struct offcpu {
		uint32_t ring_bytes;	   /* the ring buffer of waits */
		uint64_t *lost_seen;	   /* per possible CPU: FG_STAT_WAITS_RINGBUF_FULL */
		uint64_t *unseen_seen;	   /* and FG_STAT_WAITS_UNSEEN, already in lost records */
		uint64_t *no_end_seen;	   /* and FG_STAT_WAITS_NO_END */
		uint64_t open, open_ns;	   /* waits still going on at the end, written */
		uint64_t written, wait_ns; /* waits written, and their time */
		uint64_t open_short, open_long; /* open ones left out by --min-block, --max-block */
	} off;
	int werr;
	bool epipe;
	int status;
};

static void kernel_btf_close(struct run *r);

/*
 * --call-graph cfi: the loader's thread, done with what was queued and
 * joined; the loader is this thread's again, without the tables kept for
 * processes to come (so that the end's tables are those of the processes
 * still running).
 */
static void stop_cfi(struct run *r)
{
	if (!r->cfi_worker)
		return;
	fg_cfi_worker_stop(r->cfi_worker, &r->cfi_wst);
	r->cfi_worker = NULL;
	fg_cfi_loader_drop_kept(r->cfi);
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
	for (int i = 0; r->ring_fds && i < opts.ncpus; i++)
		if (r->ring_fds[i] >= 0)
			close(r->ring_fds[i]);
	free(r->ring_fds);
	stop_cfi(r);
	fg_hash_free(r->cfi_asked);
	r->cfi_asked = NULL;
	fg_cfi_loader_free(r->cfi);
	fg_cfi_store_close(r->cfi_store);
	r->cfi_store = NULL;
	fg_cfi_bpf_maps_release(&r->cfi_maps);
	fg_pyprocs_free(r->py);
	r->py = NULL;
	fg_jvmmaps_free(r->jvm);
	r->jvm = NULL;
	fg_sample_bpf__destroy(r->skel);
	kernel_btf_close(r);
	fg_sideband_close(r->sb);
	r->cfi = NULL;
	r->links = NULL;
	r->pfds = NULL;
	r->rb = NULL;
	r->ring_fds = NULL;
	r->skel = NULL;
	r->sb = NULL;
	r->nlinks = r->alinks = 0;
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
			 " (kernel.perf_event_paranoid is %ld, which does not limit them)",
			 paranoid);
	fg_diex("%s: %s: %s() is denied although fg-sample has the privileges%s: a seccomp "
		"filter (a container's default profile) or a security module forbids it; run "
		"fg-sample outside the container, or allow bpf and perf_event_open "
		"(docker run --security-opt seccomp=unconfined)%s",
		what, strerror(-err), call, note, hint);
}

static noreturn void fail_setup(struct run *r, int err, const char *what)
{
	cleanup(r);
	if (err == -EPERM)
		fg_diex("%s: %s: run as root, or with CAP_BPF and CAP_PERFMON", what,
			strerror(-err));
	fg_diex("%s: %s", what, strerror(-err));
}

/*
 * perf_event_open() failed with `err` for an event on `cpu` (`what` says
 * which): say why in one line, and stop.  `rate`: the event samples at -F,
 * which the kernel refuses above its limit.
 */
static noreturn void fail_perf_event(struct run *r, int err, int cpu, bool rate, const char *what)
{
	if (err == -ENODEV && !cpu_online(cpu)) {
		cleanup(r);
		fg_diex("%s: the CPU is offline", what);
	}
	if (err == -EINVAL && rate) {
		cleanup(r);
		fg_diex("%s: %s: is -F %u above /proc/sys/kernel/perf_event_max_sample_rate?", what,
			strerror(-err), opts.freq);
	}
	if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP) {
		cleanup(r);
		fg_diex("%s: %s: perf events are unavailable on this kernel or CPU", what,
			strerror(-err));
	}
	if (err == -EPERM || err == -EACCES || err == -ENOSYS)
		refuse_denied(r, err, "perf_event_open", what);
	fail_setup(r, err, what);
}

/* Keep a program attached (and the perf event it is attached to, or -1), for cleanup(). */
static void keep_link(struct run *r, struct bpf_link *link, int pfd)
{
	FG_ALLOC_GROW(r->links, (size_t)r->nlinks + 1, r->alinks);
	r->pfds = fg_xreallocarray(r->pfds, r->alinks, sizeof(int));
	r->links[r->nlinks] = link;
	r->pfds[r->nlinks++] = pfd;
}

/* --- events (-e) --- */

/*
 * The tracefs directory, mounted when it is not (as perf does); NULL when it
 * cannot be (`say`: and why).
 */
static const char *tracefs_dir(bool say)
{
	static char dir[PATH_MAX];
	/* FG_SAMPLE_TRACEFS: another directory, so that the tests can give a made-up one */
	const char *env = getenv("FG_SAMPLE_TRACEFS");
	const char *dirs[] = {env, NULL};
	int err;

	if (fg_ev_tracefs_find(env ? dirs : fg_tracefs_dirs, dir, sizeof(dir)) == 0)
		return dir;
	if (env)
		return NULL;
	err = fg_ev_tracefs_mount(fg_tracefs_dirs[0]);
	if (err) {
		if (say)
			fg_warne(-err, "cannot mount tracefs on '%s'", fg_tracefs_dirs[0]);
		return NULL;
	}
	return fg_ev_tracefs_find(fg_tracefs_dirs, dir, sizeof(dir)) == 0 ? dir : NULL;
}

static bool need_tracefs(void)
{
	for (size_t i = 0; i < opts.nevents; i++)
		if (opts.events[i].kind == FG_EVENT_TRACEPOINT)
			return true;
	return false;
}

/* --list-events [PATTERN]: the list on standard output, then exit */
static noreturn void list_events(const char *pattern)
{
	struct fg_ev_env env = {.path = getenv("PATH"), .libdirs = fg_ev_libdirs};
	struct fg_buf out = FG_BUF_INIT;
	char why[512];
	long n;

	if (!pattern ||
	    !(fg_starts_with(pattern, "uprobe:") || fg_starts_with(pattern, "uretprobe:")))
		env.tracefs = tracefs_dir(false);
	n = fg_ev_list(&out, pattern, &env, why, sizeof(why));
	if (n < 0)
		fg_diex("%s", why);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	fg_buf_release(&out);
	fg_warn_names_cut();
	if (n == 0 && pattern)
		fg_diex("no event matches '%s'", pattern);
	if (!pattern && !env.tracefs)
		fg_warnx("tracepoints are not listed: tracefs is not mounted (run as root to mount "
			 "it)");
	exit(fg_close_stdout());
}

/*
 * The events of -e, looked up on this system: the first refusal stops the
 * tool, naming the event.  A glob that matched several says which.
 */
static void resolve_events(void)
{
	struct fg_ev_env env = {.path = getenv("PATH"), .libdirs = fg_ev_libdirs};
	char why[512];

	if (need_tracefs() && !(env.tracefs = tracefs_dir(true)))
		fg_diex("tracepoints need tracefs, which is not mounted on '%s' and cannot be",
			fg_tracefs_dirs[0]);
	for (size_t i = 0; i < opts.nevents; i++) {
		size_t n0 = evlist.n;

		if (fg_evlist_add(&evlist, &opts.events[i], &env, why, sizeof(why)) < 0)
			fg_diex("%s", why);
		if (evlist.n - n0 > 1) {
			struct fg_buf names = FG_BUF_INIT;

			for (size_t k = n0; k < evlist.n; k++)
				fg_buf_addf(&names, "%s%s", k > n0 ? ", " : "", evlist.ev[k].name);
			fg_warnx("'%s': %zu events: %s", opts.events[i].arg, evlist.n - n0,
				 names.data);
			fg_buf_release(&names);
		}
	}
	fg_evlist_default(&evlist);
}

/* whether an event is counted (-c) rather than a clock's (-F) */
static bool evlist_counts(void)
{
	for (size_t i = 0; i < evlist.n; i++)
		if (!evlist.ev[i].time_based)
			return true;
	return false;
}

/*
 * The ring buffer's default with counted events, pages per CPU: they come
 * in bursts (a fault for each page touched, a uprobe for each call, 100,000
 * a second and more on a CPU) between two drains 100 ms apart.  4 MiB a CPU
 * holds about 30,000 samples of short stacks.
 */
#define COUNT_PAGES 1024u

/* the period of the counted events: -c, or each event */
static uint64_t count_period(void)
{
	return fg_sample_opts_period(&opts);
}

/* the weight of a sample of event `id`: the events it stands for (1 for a clock's tick) */
static uint64_t event_weight(uint32_t id)
{
	return id < evlist.n && !evlist.ev[id].time_based ? count_period() : 1;
}

/*
 * A sample of process pid fell back to a snapshot: when the process ran before the
 * run and was not read yet, its tables are loaded now (the worker reads its mappings
 * from /proc).  Once a second at most for a pid (a pid used again, a process whose
 * code has no table); CFI_ASKED_MAX pids remembered, then forgotten all at once, so
 * that a machine cycling through its pids keeps the set's memory bounded.  `now`:
 * the program found none of the process' mappings in the maps, or only stale ones,
 * and woke us (FG_SAMPLE_F_CFI_ASK): read at once, unless read in the last
 * CFI_ASK_NS (the other CPU's ask).
 */
static void cfi_ask(struct run *r, uint32_t pid, uint64_t time, bool now)
{
	struct fg_hash_entry *e;
	bool inserted;

	if (!r->cfi_worker)
		return;
	e = fg_hash_get(r->cfi_asked, &pid, sizeof(pid));
	if (e && time - e->val.u < (now ? CFI_ASK_NS : 1000000000u))
		return;
	if (!e && fg_hash_count(r->cfi_asked) >= CFI_ASKED_MAX) {
		fg_hash_free(r->cfi_asked);
		r->cfi_asked = fg_hash_new(0);
	}
	e = fg_hash_upsert(r->cfi_asked, &pid, sizeof(pid), &inserted);
	e->val.u = time;
	fg_cfi_worker_load(r->cfi_worker, pid, now);
}

/* One sample from the BPF program, into the queue. */
static void on_sample(struct run *r, const uint8_t *data, size_t size)
{
	struct fg_rec_sample s;
	struct fg_rec_ustack u;
	struct fg_rec_pystack py = {0};
	const void *ips, *regs, *stack, *pyframes = NULL;
	uint64_t frames[FG_PY_DEPTH];
	uint32_t offsets[FG_PY_DEPTH + 1] = {0}; /* and a zero to pad an odd count to 8 */
	size_t nips;

	if (fg_bpf_event_sample(data, size, &s, &ips) < 0 || FG_SAMPLE_EVENT(s.flags) >= evlist.n) {
		r->bad_events++;
		return;
	}
	nips = 8 * ((size_t)s.nr_kernel + s.nr_user);
	if ((s.flags & FG_SAMPLE_F_CFI_FALLBACK) &&
	    (r->cfi_lazy || (s.flags & FG_SAMPLE_F_CFI_ASK)))
		cfi_ask(r, s.pid, s.time_ns, s.flags & FG_SAMPLE_F_CFI_ASK);
	s.flags &= ~FG_SAMPLE_F_CFI_ASK;
	if (s.flags & FG_SAMPLE_F_OFFCPU) {
		/* a wait weighs its time off the CPU, and is none of the events' samples */
		r->off.wait_ns += s.weight;
	} else {
		s.weight = event_weight(FG_SAMPLE_EVENT(s.flags));
		r->event_samples[FG_SAMPLE_EVENT(s.flags)]++;
		if (s.nr_kernel)
			r->korc.kstacks++;
		if (opts.wall) {
			/* a CPU sample stands for its sampling period of the thread's time */
			s.weight = fg_sample_period_ns(opts.freq);
			s.flags |= FG_SAMPLE_F_WEIGHT_NS;
		}
	}
	if (r->jvm && !(s.flags & FG_SAMPLE_F_KERNEL_THREAD))
		fg_jvmmaps_seen(r->jvm, s.pid);
	if ((s.flags & FG_SAMPLE_F_PYSTACK) &&
	    fg_bpf_event_pystack(data, size, &py, &pyframes) == 0) {
		/* each frame's instruction out of its code object's address, into offsets */
		fg_bpf_event_pyoffsets(pyframes, py.nr, frames, offsets);
		pyframes = frames;
		py.flags |= FG_PYSTACK_F_OFFSETS;
		if (r->py && py.nr)
			fg_pyprocs_name(r->py, s.pid, s.time_ns, frames, py.nr);
	}
	if (!(s.flags & FG_SAMPLE_F_USTACK_SNAPSHOT)) {
		struct iovec parts[] = {{&s, sizeof(s)},
					{(void *)ips, nips},
					{&py, sizeof(py)},
					{(void *)pyframes, 8 * (size_t)py.nr},
					{offsets, 8 * (((size_t)py.nr + 1) / 2)}};

		fg_reorder_addv(r->q, s.time_ns, FG_REC_SAMPLE, parts,
				s.flags & FG_SAMPLE_F_PYSTACK ? 5 : 2);
		return;
	}
	/* the snapshot comes before the IPs in the event, after them in the record */
	if (fg_bpf_event_ustack(data, size, &u, &regs, &stack) < 0) {
		r->bad_events++;
		return;
	}
	/* copied once, from the ring buffer into the queue */
	struct iovec parts[] = {{&s, sizeof(s)},
				{(void *)ips, nips},
				{&u, sizeof(u)},
				{(void *)regs, 8 * (size_t)u.nr_regs},
				{(void *)stack, u.size},
				{&py, sizeof(py)},
				{(void *)pyframes, 8 * (size_t)py.nr},
				{offsets, 8 * (((size_t)py.nr + 1) / 2)}};
	fg_reorder_addv(r->q, s.time_ns, FG_REC_SAMPLE, parts,
			s.flags & FG_SAMPLE_F_PYSTACK ? 8 : 5);
}

/* a record from the ring buffer (the BPF program counts the samples it could not put there) */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	on_sample(ctx, data, size);
	return 0;
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

static void lost_since(struct run *r, uint64_t now, enum fg_stat which, uint32_t reason,
		       uint64_t *seen)
{
	uint64_t percpu[MAX_CPUS];

	stat_total(r, which, percpu);
	for (int i = 0; i < r->ncpus_possible; i++) {
		if (percpu[i] > seen[i]) {
			struct fg_rec_lost l = {now, percpu[i] - seen[i], (uint32_t)i, reason};

			fg_reorder_add(r->q, now, FG_REC_LOST, &l, sizeof(l), NULL, 0);
			seen[i] = percpu[i];
		}
	}
}

/*
 * Queue a lost record for each CPU whose ring-buffer-full count grew, and
 * for each whose events were left out because its scratch slot was busy.
 */
static void check_lost(struct run *r, uint64_t now)
{
	lost_since(r, now, FG_STAT_RINGBUF_FULL, FG_LOST_RINGBUF_FULL, r->ringbuf_full_seen);
	lost_since(r, now, FG_STAT_BUSY, FG_LOST_BUSY, r->busy_seen);
	if (!opts.offcpu)
		return;
	lost_since(r, now, FG_STAT_WAITS_RINGBUF_FULL, FG_LOST_WAITS_RINGBUF_FULL,
		   r->off.lost_seen);
	lost_since(r, now, FG_STAT_WAITS_UNSEEN, FG_LOST_WAITS_UNSEEN, r->off.unseen_seen);
	lost_since(r, now, FG_STAT_WAITS_NO_END, FG_LOST_WAITS_NO_END, r->off.no_end_seen);
}

static void check_offline(struct run *r, uint64_t now, bool last)
{
	int online[MAX_CPUS];
	int n;

	/* (4 times a second, and at the end: a read of sysfs at each tick was half its CPU) */
	if (!last && now - r->offline_checked < OFFLINE_CHECK_NS)
		return;
	r->offline_checked = now;
	n = fg_cpus_online(NULL, online, MAX_CPUS);

	for (int i = 0; i < opts.ncpus && n > 0; i++) {
		if (fg_cpulist_has(online, n, opts.cpus[i]) || r->offline_warned[i])
			continue;
		struct fg_rec_lost l = {now, 0, (uint32_t)opts.cpus[i], FG_LOST_CPU_OFFLINE};

		fg_warnx("CPU %d went offline: its samples stopped", opts.cpus[i]);
		fg_reorder_add(r->q, now, FG_REC_LOST, &l, sizeof(l), NULL, 0);
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

/* --- the steps of a run, in order --- */

/* What a run needs before anything is opened: the CPUs, the counters, the signals. */
static void prepare(struct run *r)
{
	struct sigaction sa;

	if (!opts.output && isatty(STDOUT_FILENO))
		fg_diex("refusing to write binary records to a terminal: redirect standard "
			"output or use -o FILE");
	check_privileges();
	check_kernel();
	resolve_events();
	clamp_rate();
	if (!opts.ncpus) {
		opts.ncpus = fg_cpus_online(NULL, opts.cpus, MAX_CPUS);
		if (opts.ncpus <= 0)
			fg_diex(
			    "cannot read the online CPUs from '/sys/devices/system/cpu/online'");
	}
	r->ncpus_possible = libbpf_num_possible_cpus();
	if (r->ncpus_possible <= 0 || r->ncpus_possible > MAX_CPUS)
		fg_diex("cannot count the possible CPUs");
	r->ringbuf_full_seen = fg_xcalloc((size_t)r->ncpus_possible, sizeof(uint64_t));
	r->busy_seen = fg_xcalloc((size_t)r->ncpus_possible, sizeof(uint64_t));
	r->event_samples = fg_xcalloc(evlist.n, sizeof(uint64_t));
	r->offline_warned = fg_xcalloc((size_t)opts.ncpus, sizeof(bool));
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	libbpf_set_print(libbpf_print);
	r->q = fg_reorder_new();
	r->filtering = opts.npids || opts.ntids || opts.command;
	r->targets = fg_targets_new(opts.command != NULL);
}

/*
 * The programs of the events sampled, loaded only for the kinds of event in
 * the list (attach_events()): each one loaded costs the verifier's time at
 * every start, and the default, cpu-clock, needs only the perf_event one.
 */
static void setup_events_progs(struct run *r)
{
	bool samples = !opts.offcpu || opts.wall; /* --off-cpu alone takes no event's samples */

	bpf_program__set_autoload(r->skel->progs.fg_sample,
				  samples && fg_evlist_has(&evlist, FG_EVENT_SOFTWARE));
	bpf_program__set_autoload(r->skel->progs.fg_tracepoint,
				  samples && fg_evlist_has(&evlist, FG_EVENT_TRACEPOINT));
	bpf_program__set_autoload(r->skel->progs.fg_uprobe,
				  samples && (fg_evlist_has(&evlist, FG_EVENT_UPROBE) ||
					      fg_evlist_has(&evlist, FG_EVENT_URETPROBE)));
}

/*
 * --call-graph cfi: the programs that mark a process' mappings in the maps
 * stale as the kernel changes them (bpf/cfi_unwind.h).  Raw tracepoints: the
 * load asks nothing of the kernel's types, and the attach (attach_cfi_stale)
 * is where a kernel without the tracepoint says so.  Asking before the load
 * would take tracefs, often not mounted, or the kernel's whole BTF, some 8 ms
 * of CPU each run.
 */
static const struct {
	const char *tp, *when;
} cfi_stale_tps[] = {
    {"sched_prepare_exec", "after an exec, the old image's"},
    {"vm_unmapped_area", "after a library is opened where another was, the old one's"},
};

static struct bpf_program *cfi_stale_prog(struct run *r, size_t i)
{
	return i ? r->skel->progs.fg_cfi_mmap : r->skel->progs.fg_cfi_exec;
}

static void setup_cfi_stale(struct run *r)
{
	for (size_t i = 0; i < sizeof(cfi_stale_tps) / sizeof(cfi_stale_tps[0]); i++)
		bpf_program__set_autoload(cfi_stale_prog(r, i), opts.cfi);
}

/* an exec, a new mapping over a process' mappings: stale (before they are read) */
static void attach_cfi_stale(struct run *r)
{
	for (size_t i = 0; i < sizeof(cfi_stale_tps) / sizeof(cfi_stale_tps[0]); i++) {
		struct bpf_link *link = bpf_program__attach(cfi_stale_prog(r, i));
		int err = link ? 0 : -errno;

		if (err == -ENOENT) {
			fg_warnx("this kernel has no %s tracepoint: a process' walks right %s "
				 "tables may be used for its new code",
				 cfi_stale_tps[i].tp, cfi_stale_tps[i].when);
			continue;
		}
		keep_link(r, link, -1);
		if (err)
			fail_setup(r, err,
				   i ? "cannot attach the BPF program to vm_unmapped_area"
				     : "cannot attach the BPF program to sched_prepare_exec");
	}
}

/*
 * --off-cpu, --wall: the program on sched_switch, loaded only then.  Its
 * options; the idle tasks' waits, by CPU; a second scratch slot for each CPU
 * (the waits' stack walks never share one with a CPU sample's); the ring
 * buffer of waits, sized by -m or FG_SAMPLE_WAIT_PAGES.
 */
static void setup_offcpu(struct run *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned pages = opts.pages_given ? opts.pages : FG_SAMPLE_WAIT_PAGES;

	bpf_program__set_autoload(r->skel->progs.fg_offcpu, opts.offcpu);
	bpf_program__set_autoload(r->skel->progs.fg_open_waits, opts.offcpu);
	if (!opts.offcpu)
		return;
	r->skel->rodata->min_block_ns = opts.min_block_ns;
	r->skel->rodata->max_block_ns = opts.max_block_ns;
	r->skel->rodata->kernel_threads = opts.kernel_threads;
	/* -C: the waits that begin on these CPUs, through the map of CPUs of the other programs */
	r->skel->rodata->wait_slots = (uint32_t)r->ncpus_possible;
	bpf_map__set_max_entries(r->skel->maps.ustack, 2 * (uint32_t)r->ncpus_possible);
	bpf_map__set_max_entries(r->skel->maps.idle_waits, (uint32_t)r->ncpus_possible);
	r->off.ring_bytes = fg_bpf_ring_bytes(pages, opts.ncpus, page);
	if (!r->off.ring_bytes)
		usage_error("invalid buffer size '%u': the ring buffer of waits would take %" PRIu64
			    " MiB (pages x CPUs sampled), 1 GiB at most",
			    pages, (uint64_t)pages * page * (uint64_t)opts.ncpus >> 20);
	bpf_map__set_max_entries(r->skel->maps.wait_events, r->off.ring_bytes);
	r->off.lost_seen = fg_xcalloc((size_t)r->ncpus_possible, sizeof(uint64_t));
	r->off.unseen_seen = fg_xcalloc((size_t)r->ncpus_possible, sizeof(uint64_t));
	r->off.no_end_seen = fg_xcalloc((size_t)r->ncpus_possible, sizeof(uint64_t));
}

/*
 * Kernel stacks (--kernel-unwind): unwound in BPF with the kernel's ORC
 * tables (bpf/korc_unwind.h), those of tracepoints and of perf events (not
 * the waits' of --off-cpu), unless bpf_get_stack() is asked for or the run
 * takes no kernel stack.  Before the load:
 * where the tables are, from /proc/kallsyms (read once, for --off-cpu's
 * __schedule too), and the maps' sizes; they are
 * copied in after it (load_korc).  Without them the run takes the stacks
 * with bpf_get_stack() and says so, unless they are to be checked.
 */
static void korc_unavailable(struct run *r, int err, const char *why)
{
	if (opts.kernel_unwind == FG_KUNWIND_CHECK)
		fail_setup(r, err, why);
	fg_warnx("%s: %s; the kernel stacks are taken by bpf_get_stack()", why, strerror(-err));
	r->korc.why_not = why;
	r->korc.on = false;
}

/*
 * The kernel symbols of fg_korc_sym_names, asked of the kernel by name
 * (bpf/fg_ksym.bpf.c, run once): 0 and `s` set, or -errno where that cannot
 * answer (no such helper or program type, -EPERM where the addresses are
 * hidden, a table symbol missing), and /proc/kallsyms is read instead.
 */
static int ksyms_lookup(struct fg_korc_syms *s)
{
	_Static_assert(FG_KORC_NSYMS <= FG_KSYM_MAX, "struct fg_ksym_args' names");
	struct fg_ksym_args a = {.n = FG_KORC_NSYMS};
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &a, .ctx_size_in = sizeof(a));
	uint64_t addr[FG_KORC_NSYMS];
	struct fg_ksym_bpf *skel;
	unsigned found = 0;
	int err;

	for (int i = 0; i < FG_KORC_NSYMS; i++) {
		if (strlen(fg_korc_sym_names[i]) >= FG_KSYM_NAME)
			return -ENAMETOOLONG;
		strcpy(a.name[i], fg_korc_sym_names[i]);
	}
	skel = fg_ksym_bpf__open_and_load();
	if (!skel)
		return -errno;
	/* the kernel writes the context back where it came from */
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fg_ksym_lookup), &run);
	if (err < 0)
		err = -errno;
	fg_ksym_bpf__destroy(skel);
	if (err)
		return err;
	for (int i = 0; i < FG_KORC_NSYMS; i++) {
		if (a.err[i] == 0) {
			addr[i] = a.addr[i];
			found |= 1u << i;
		} else if (a.err[i] == -ENOENT) {
			addr[i] = 0;
		} else {
			return (int)a.err[i];
		}
	}
	return fg_korc_syms_set(addr, found, s);
}

static void setup_korc(struct run *r)
{
	char *data = NULL;
	size_t len = 0;
	int err;

	bool samples = !opts.offcpu || opts.wall; /* --off-cpu alone takes no event's samples */
	bool tp = samples && fg_evlist_has(&evlist, FG_EVENT_TRACEPOINT);
	bool perf = samples && fg_evlist_has(&evlist, FG_EVENT_SOFTWARE);

	r->korc.on = opts.kernel_unwind != FG_KUNWIND_HELPER && !opts.user_only && (tp || perf);
	bpf_program__set_autoload(r->skel->progs.fg_korc_copy, r->korc.on);
	if (!r->korc.on && !opts.offcpu)
		return;
	/*
	 * the tables' addresses and --off-cpu's __schedule: looked up by name,
	 * else read once from /proc/kallsyms (the same checks and messages)
	 */
	err = ksyms_lookup(&r->korc.syms);
	if (opts.verbose)
		fg_warnx("kernel symbols: %s%s%s",
			 err ? "read from '/proc/kallsyms' (bpf_kallsyms_lookup_name(): "
			     : "looked up with bpf_kallsyms_lookup_name()",
			 err ? strerror(-err) : "", err ? ")" : "");
	if (!err) {
		r->skel->rodata->schedule_addr = r->korc.syms.schedule;
	} else if (!(err =
			 fg_safeio_read_file("/proc/kallsyms", FG_KSYMS_MAX_BYTES, &data, &len))) {
		err = fg_korc_syms_parse(data, len, &r->korc.syms);
		free(data);
		r->skel->rodata->schedule_addr = r->korc.syms.schedule;
	} else if (r->korc.on) {
		bpf_program__set_autoload(r->skel->progs.fg_korc_copy, false);
		korc_unavailable(r, err, "cannot read '/proc/kallsyms'");
		return;
	}
	if (!r->korc.on)
		return;
#ifndef __x86_64__
	err = -EOPNOTSUPP;
#endif
	if (err) {
		bpf_program__set_autoload(r->skel->progs.fg_korc_copy, false);
		korc_unavailable(r, err,
				 err == -ENOENT ? "the kernel has no ORC tables in '/proc/kallsyms'"
				 : err == -EPERM ? "'/proc/kallsyms' hides the kernel's addresses"
						 : "cannot use the kernel's ORC tables");
		return;
	}
	r->skel->rodata->korc_unwind = true;
	r->skel->rodata->korc_check = opts.kernel_unwind == FG_KUNWIND_CHECK;
	r->skel->rodata->korc_perf = perf;
	r->skel->rodata->korc_text_start = r->korc.syms.info.text_start;
	r->skel->rodata->korc_text_end = r->korc.syms.info.text_end;
	r->skel->rodata->korc_graph_ret = r->korc.syms.info.graph_ret;
	r->skel->rodata->korc_rethook = r->korc.syms.info.rethook;
	r->skel->rodata->korc_nr = r->korc.syms.info.nr;
	r->skel->rodata->korc_nblocks = r->korc.syms.info.nblocks;
	bpf_map__set_max_entries(r->skel->maps.korc_table, r->korc.syms.info.nr);
	bpf_map__set_max_entries(r->skel->maps.korc_lookup, r->korc.syms.info.nblocks);
}

/* `len` bytes of the kernel at `addr`, through fg_korc_copy run once (fg_korc_load's reader) */
static int korc_read_kernel(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct run *r = arg;
	LIBBPF_OPTS(bpf_test_run_opts, run);

	if (len > FG_KORC_CHUNK)
		return -E2BIG;
	r->skel->bss->korc_src = addr;
	r->skel->bss->korc_len = (uint32_t)len;
	if (bpf_prog_test_run_opts(bpf_program__fd(r->skel->progs.fg_korc_copy), &run) < 0)
		return -errno;
	if (r->skel->bss->korc_err)
		return r->skel->bss->korc_err < 0 ? r->skel->bss->korc_err : -EIO;
	memcpy(buf, r->korc.chunk, len);
	return 0;
}

/*
 * After the load: the kernel's ORC tables copied and built, the entries
 * straight into korc_table's memory (mapped: no copy of 4 MiB to make and
 * then to copy again), the rules and the block index through copies (the
 * map's stride is 8 bytes, the index's 4).
 */
static void load_korc(struct run *r)
{
	_Static_assert(sizeof(struct fg_korc_entry) % 8 == 0, "korc_table's stride");
	_Static_assert(sizeof(struct fg_korc_rule) % 8 == 0, "korc_rules' stride");
	const struct fg_korc_info *t = &r->korc.syms.info;
	size_t table_len = (size_t)t->nr * sizeof(struct fg_korc_entry);
	struct fg_korc_out out = {0};
	void *chunk;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int err = 0;

	if (!r->korc.on)
		return;
	chunk = mmap(NULL, FG_KORC_CHUNK, PROT_READ, MAP_SHARED,
		     bpf_map__fd(r->skel->maps.korc_chunk), 0);
	out.e = mmap(NULL, table_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(r->skel->maps.korc_table), 0);
	if (chunk == MAP_FAILED || out.e == MAP_FAILED)
		err = -errno;
	out.lookup = fg_xcalloc(t->nblocks, sizeof(*out.lookup));
	out.rules = fg_xcalloc(FG_KORC_MAX_RULES, sizeof(*out.rules));
	r->korc.chunk = chunk;
	if (!err)
		err = fg_korc_load(&r->korc.syms, FG_KORC_CHUNK, korc_read_kernel, r, &out);
	if (!err)
		err = fg_bpf_fill_mmapable(bpf_map__fd(r->skel->maps.korc_lookup), t->nblocks,
					   sizeof(*out.lookup), out.lookup);
	if (!err && out.nrules)
		err = fg_bpf_fill_mmapable(bpf_map__fd(r->skel->maps.korc_rules), out.nrules,
					   sizeof(*out.rules), out.rules);
	free(out.lookup);
	free(out.rules);
	if (chunk != MAP_FAILED)
		munmap(chunk, FG_KORC_CHUNK);
	if (out.e != MAP_FAILED)
		munmap(out.e, table_len);
	r->korc.chunk = NULL;
	if (err) {
		korc_unavailable(r, err,
				 err == -E2BIG ? "the kernel's ORC tables have more distinct rules "
						 "than fit the BPF program's table"
					       : "cannot copy the kernel's ORC tables");
		return;
	}
	r->skel->bss->korc_ready = true;
	r->korc.loaded = true;
	r->korc.load_ns = now_ns(CLOCK_MONOTONIC) - t0;
	r->korc.nrules = out.nrules;
}

/*
 * A ring buffer of samples for each CPU sampled, drained every 100 ms (the
 * program asks for no wakeup).  One ring shared by the CPUs cost each sample
 * 50 to 175 ns more on 2 CPUs (README, Benchmarks, fg-sample --call-graph cfi).
 */
static void open_rings(struct run *r)
{
	r->ring_fds = fg_xcalloc((size_t)opts.ncpus, sizeof(int));
	for (int i = 0; i < opts.ncpus; i++)
		r->ring_fds[i] = -1;
	for (int i = 0; i < opts.ncpus; i++) {
		uint32_t cpu = (uint32_t)opts.cpus[i];
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fg_samples", 0, 0, r->ringbuf_bytes,
					NULL);

		if (fd < 0)
			fail_setup(r, -errno, "cannot make the BPF ring buffer for samples");
		r->ring_fds[i] = fd;
		if (bpf_map__update_elem(r->skel->maps.events, &cpu, sizeof(cpu), &fd, sizeof(fd),
					 BPF_ANY))
			fail_setup(r, -errno, "cannot set the BPF ring buffer for samples");
		if (i == 0)
			r->rb = ring_buffer__new(fd, on_ring_record, r, NULL);
		if (i == 0 ? !r->rb : ring_buffer__add(r->rb, fd, on_ring_record, r) < 0)
			fail_setup(r, -errno, "cannot map the BPF ring buffer for samples");
	}
}

/* pid's entry of the BPF program's Python processes: set, or with proc NULL deleted */
static int py_set(void *ctx, uint32_t pid, const struct fg_py_proc *proc)
{
	struct run *r = ctx;
	int fd = bpf_map__fd(r->skel->maps.py_procs);

	if (!proc)
		return bpf_map_delete_elem(fd, &pid) < 0 ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, proc, BPF_ANY) < 0 ? -errno : 0;
}

/* a code object's name, queued just before the sample that named it */
static void py_emit(void *ctx, uint64_t time_ns, const void *payload, size_t len)
{
	struct run *r = ctx;

	fg_reorder_add(r->q, time_ns ? time_ns - 1 : 0, FG_REC_PYCODE, payload, len, NULL, 0);
}

static void setup_python(struct run *r)
{
	struct fg_pyprocs_ops ops = {.set = py_set, .emit = py_emit, .ctx = r};

	if (opts.python)
		r->py = fg_pyprocs_new("/proc", &ops);
	if (!opts.no_jvm_maps && !opts.kernel_only)
		r->jvm = fg_jvmmaps_new("/proc");
}

/*
 * --call-graph cfi: the unwind tables kept between runs (fg/cfi_store.h), in
 * the user's cache directory, unless --no-cache; one that is not this user's
 * own (a home reached through sudo -E) is not used, and said so.
 */
static void open_cfi_store(struct run *r)
{
	char dir[PATH_MAX], bad[PATH_MAX] = "", why[PATH_MAX + 64];
	uid_t owner = 0;
	int err;

	if (opts.no_cache || !fg_user_cache_dir(dir, sizeof(dir), "cfi"))
		return;
	r->cfi_store = fg_cfi_store_open(dir, &err, bad, sizeof(bad), &owner);
	if (r->cfi_store) {
		fg_cfi_loader_set_store(r->cfi, r->cfi_store);
		return;
	}
	fg_safeio_dir_refusal(why, sizeof(why), err, bad, owner);
	fg_warnx("not keeping unwind tables in '%s': %s (--no-cache silences this)", dir, why);
}

/* --call-graph cfi: the loader of the tables, on the program's maps, with its store. */
static void new_cfi_loader(struct run *r)
{
	struct fg_cfi_load_ops ops;

	r->cfi_maps.rows = bpf_map__fd(r->skel->maps.cfi_rows);
	r->cfi_maps.rules = bpf_map__fd(r->skel->maps.cfi_rules);
	r->cfi_maps.files = bpf_map__fd(r->skel->maps.cfi_files);
	r->cfi_maps.procs = bpf_map__fd(r->skel->maps.cfi_procs);
	r->cfi_maps.inodes = bpf_map__fd(r->skel->maps.cfi_inodes);
	r->cfi_maps.procs_ver = (uint64_t *)&r->skel->bss->cfi_procs_ver; /* (a __u64) */
	fg_cfi_load_bpf_ops(&r->cfi_maps, &ops);
	r->cfi = fg_cfi_loader_new("/proc", &cfi_limits, &ops);
	open_cfi_store(r);
}

/*
 * The kernel's types libbpf relocates the program against: the minimal BTF
 * kept for this program and the running kernel (fg/minbtf.h) when there is
 * one, else the kernel's whole BTF, which libbpf reads and parses (15 to 20
 * ms of the start) and of which kernel_btf_keep() then keeps the part used.
 * Not with --no-cache.
 */
static void kernel_btf_find(struct run *r)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t len;
	const void *obj = fg_sample_bpf__elf_bytes(&len);
	int err;

	r->kbtf.dirfd = r->kbtf.fd = -1;
	r->kbtf.how = "the kernel's, not kept (--no-cache)";
	if (opts.no_cache)
		return;
	r->kbtf.how = "the kernel's, not kept (no cache directory)";
	if (!fg_user_cache_dir(dir, sizeof(dir), "btf"))
		return;
	if ((err = fg_minbtf_name(obj, len, r->kbtf.name, sizeof(r->kbtf.name))) != 0) {
		r->kbtf.how = "the kernel's, not kept (its identity cannot be read)";
		return;
	}
	/* (made only after a load: a run refused there leaves no directory behind) */
	r->kbtf.dirfd = fg_safeio_private_dir_open(dir, false, NULL, 0, NULL);
	if (r->kbtf.dirfd == -ENOENT) {
		r->kbtf.dirfd = -1;
		r->kbtf.dir = fg_xstrdup(dir);
		return;
	}
	if (r->kbtf.dirfd < 0) {
		r->kbtf.how = "the kernel's, not kept (the cache directory is refused)";
		return;
	}
	r->kbtf.fd =
	    fg_safeio_open_data_beneath(r->kbtf.dirfd, r->kbtf.name, FG_MINBTF_MAX_BYTES, &st);
	if (r->kbtf.fd < 0) {
		r->kbtf.fd = -1;
		return;
	}
	futimens(r->kbtf.fd, NULL); /* used now: the last to be evicted */
	snprintf(r->kbtf.path, sizeof(r->kbtf.path), "/proc/self/fd/%d", r->kbtf.fd);
	r->kbtf.how = "kept from an earlier run";
}

/* After a load that read the kernel's whole BTF: the part the program used, kept. */
static void kernel_btf_keep(struct run *r)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	struct btf *kernel, *m = NULL;
	int err;

	if (r->kbtf.dir) {
		r->kbtf.dirfd = fg_safeio_private_dir_open(r->kbtf.dir, true, NULL, 0, NULL);
		free(r->kbtf.dir);
		r->kbtf.dir = NULL;
		if (r->kbtf.dirfd < 0) {
			r->kbtf.dirfd = -1;
			r->kbtf.how = "the kernel's, not kept (the cache directory is refused)";
			return;
		}
	}
	if (r->kbtf.dirfd < 0 || r->kbtf.fd >= 0)
		return;
	fg_heap_huge_begin(16u << 20);
	kernel = btf__load_vmlinux_btf();
	err = kernel ? fg_minbtf_new(bpf_object__btf(r->skel->obj), kernel, &m) : -errno;
	btf__free(kernel);
	fg_heap_huge_end();
	if (!err)
		err = fg_minbtf_keep(r->kbtf.dirfd, r->kbtf.name, m);
	btf__free(m);
	r->kbtf.make_ns = now_ns(CLOCK_MONOTONIC) - t0;
	r->kbtf.how = err ? "the kernel's, not kept (it could not be written)"
			  : "the kernel's, its part used kept for the next runs";
}

static void kernel_btf_close(struct run *r)
{
	if (r->kbtf.fd >= 0)
		close(r->kbtf.fd);
	if (r->kbtf.dirfd >= 0)
		close(r->kbtf.dirfd);
	r->kbtf.fd = r->kbtf.dirfd = -1;
	free(r->kbtf.dir);
	r->kbtf.dir = NULL;
}

/*
 * A load that failed with the kernel's types kept: they go (the next run
 * keeps them again), with what the setup for that load took.
 */
static void kernel_btf_drop(struct run *r)
{
	unlinkat(r->kbtf.dirfd, r->kbtf.name, 0);
	close(r->kbtf.fd);
	r->kbtf.fd = -1;
	r->kbtf.dropped = true;
	fg_sample_bpf__destroy(r->skel);
	r->skel = NULL;
	free(r->off.lost_seen);
	free(r->off.unseen_seen);
	free(r->off.no_end_seen);
}

/* The program's options, in its read-only data (fixed at the load: the verifier prunes by them) */
static void set_options(struct run *r)
{
	r->skel->rodata->kernel_stacks = !opts.user_only;
	r->skel->rodata->user_stacks = !opts.kernel_only;
	r->skel->rodata->filter = r->filtering;
	r->skel->rodata->follow_children = opts.command != NULL;
	r->skel->rodata->include_idle = opts.idle;
	r->skel->rodata->kernel_depth = opts.depth;
	r->skel->rodata->user_depth = opts.depth;
	r->skel->rodata->snapshot_bytes = opts.snapshot;
	r->skel->rodata->cfi_unwind = opts.cfi;
	r->skel->rodata->cfi_check = opts.cfi_check;
	r->skel->rodata->count_period = count_period();
	r->skel->rodata->cpu_filter = opts.cpus_given;
	r->skel->rodata->python = opts.python;
}

/* The BPF program: opened, its options set, its maps sized, loaded; its ring buffer mapped. */
static void setup_bpf(struct run *r)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	int err;

	open_opts.btf_custom_path = r->kbtf.fd >= 0 ? r->kbtf.path : NULL;
	r->skel = fg_sample_bpf__open_opts(&open_opts);
	if (!r->skel)
		fail_setup(r, -errno, "cannot open the BPF program");
	set_options(r);
	bpf_map__set_max_entries(r->skel->maps.py_procs, PY_PROCS_MAX);
	bpf_map__set_max_entries(r->skel->maps.ustack, (uint32_t)r->ncpus_possible);
	bpf_map__set_max_entries(r->skel->maps.cpus, (uint32_t)r->ncpus_possible);
	bpf_map__set_max_entries(r->skel->maps.evcount, (uint32_t)evlist.n);
	/* the ids given, unless a command's descendants join them (the map's default) */
	if (!opts.command) {
		size_t ids = opts.npids + opts.ntids;

		bpf_map__set_max_entries(r->skel->maps.targets, (uint32_t)(ids ? ids : 1));
	}
	if (opts.cfi) {
		bpf_map__set_max_entries(r->skel->maps.cfi_rows, cfi_limits.max_files);
		bpf_map__set_max_entries(r->skel->maps.cfi_rules, cfi_limits.max_files);
		bpf_map__set_max_entries(r->skel->maps.cfi_files, cfi_limits.max_files);
		bpf_map__set_max_entries(r->skel->maps.cfi_inodes, cfi_limits.max_files);
		bpf_map__set_max_entries(r->skel->maps.cfi_procs, cfi_limits.max_procs);
		bpf_map__set_max_entries(r->skel->maps.cfi_mapped, cfi_limits.max_procs);
	}
	setup_cfi_stale(r);
	/* (with cfi a snapshot only where the walk falls back, unless --cfi-check) */
	unsigned every = opts.cfi && !opts.cfi_check ? FG_RING_CFI_EVERY : 1;

	if (!opts.pages)
		opts.pages = evlist_counts() && !opts.snapshot
				 ? COUNT_PAGES
				 : fg_bpf_ring_pages(opts.freq, opts.snapshot, every, opts.depth,
						     opts.ncpus, (size_t)sysconf(_SC_PAGESIZE));
	if (!fg_bpf_ring_bytes(opts.pages, opts.ncpus, (size_t)sysconf(_SC_PAGESIZE)))
		usage_error("invalid buffer size '%u': the ring buffer would take %" PRIu64
			    " MiB (pages x CPUs sampled), 1 GiB at most",
			    opts.pages,
			    (uint64_t)opts.pages * (uint64_t)sysconf(_SC_PAGESIZE) *
				    (uint64_t)opts.ncpus >>
				20);
	r->ringbuf_bytes = opts.pages * (uint32_t)sysconf(_SC_PAGESIZE);
	if (opts.snapshot && r->ringbuf_bytes < fg_bpf_event_max(opts.snapshot, opts.depth))
		usage_error("invalid buffer size '%u': with --call-graph %s,%u%s a sample "
			    "takes up to %" PRIu64 " KiB, more than the ring buffer's %u KiB%s",
			    opts.pages, opts.cfi ? "cfi" : "dwarf", opts.snapshot,
			    opts.call_graph_given ? "" : " (the default)",
			    (fg_bpf_event_max(opts.snapshot, opts.depth) + 1023) >> 10,
			    r->ringbuf_bytes >> 10,
			    opts.cfi ? " (a fallback's snapshot; --call-graph fp takes none)" : "");
	bpf_map__set_max_entries(r->skel->maps.events, (uint32_t)r->ncpus_possible);
	setup_events_progs(r);
	setup_offcpu(r);
	setup_korc(r);
	/* libbpf's copies of the kernel's BTF, in huge pages (fg/bigmem.h) */
	fg_heap_huge_begin(16u << 20);
	err = fg_sample_bpf__load(r->skel);
	fg_heap_huge_end();
	if (err && r->kbtf.fd >= 0) {
		kernel_btf_drop(r);
		setup_bpf(r); /* again, with the kernel's */
		return;
	}
	if (err == -EPERM || err == -ENOSYS)
		refuse_denied(r, err, "bpf", "cannot load the BPF program");
	if (err == -EACCES || err == -EINVAL)
		fail_setup(r, err, "the kernel refused the BPF program (-v shows its log)");
	if (err)
		fail_setup(r, err, "cannot load the BPF program");
	kernel_btf_keep(r);
	/* -C for the programs that run on every CPU (tracepoints, uprobes) */
	for (int i = 0; opts.cpus_given && i < opts.ncpus; i++) {
		uint32_t cpu = (uint32_t)opts.cpus[i], on = 1;

		err = bpf_map__update_elem(r->skel->maps.cpus, &cpu, sizeof(cpu), &on, sizeof(on),
					   BPF_ANY);
		if (err)
			fail_setup(r, err, "cannot set the CPUs of the BPF program");
	}
	/* by default once they pay (run_loop), given or checked at once */
	r->korc.lazy = opts.kernel_unwind == FG_KUNWIND_ORC && !opts.kernel_unwind_given;
	if (!r->korc.lazy)
		load_korc(r);
	open_rings(r);
	if (opts.cfi) {
		attach_cfi_stale(r);
		new_cfi_loader(r);
	}
	setup_python(r);
	/* the waits', read with the samples' (the program wakes the reader when it is half full) */
	if (opts.offcpu &&
	    ring_buffer__add(r->rb, bpf_map__fd(r->skel->maps.wait_events), on_ring_record, r) < 0)
		fail_setup(r, -errno, "cannot map the BPF ring buffer for waits");
}

/*
 * One target: the BPF program samples it (its `targets` map: `id` is a
 * thread group id for FG_TARGET_PID, a thread id for FG_TARGET_TID), and
 * the side-band records of its process are kept.
 */
static void add_target(struct run *r, uint32_t id, uint32_t kind)
{
	uint32_t tgid = kind == FG_TARGET_TID ? fg_task_tgid("/proc", id) : id;
	int err = bpf_map__update_elem(r->skel->maps.targets, &id, sizeof(id), &kind, sizeof(kind),
				       BPF_ANY);

	if (err) {
		char what[96];

		snprintf(what, sizeof(what),
			 "cannot add %s %" PRIu32 " to the BPF program's targets",
			 kind == FG_TARGET_TID ? "tid" : "pid", id);
		fail_setup(r, err, what);
	}
	if (tgid)
		fg_targets_add(r->targets, tgid);
}

/* The processes and threads to sample, with -p, -t or a command (forked here). */
static void add_targets(struct run *r)
{
	for (size_t i = 0; i < opts.npids; i++)
		add_target(r, opts.pids[i], FG_TARGET_PID);
	for (size_t i = 0; i < opts.ntids; i++)
		add_target(r, opts.tids[i], FG_TARGET_TID);
	if (opts.command) {
		/* held until sampling runs (start_stream()) */
		int err = fg_spawn_held(&r->cmd, opts.command, !opts.output);

		if (err)
			fail_setup(r, err, "cannot start the command");
		add_target(r, (uint32_t)r->cmd.pid, FG_TARGET_PID);
	}
}

/* A function of a BPF program loaded at the start, into the stream (time 0: first). */
static void queue_bpf_sym(void *arg, uint64_t addr, uint32_t len, const char *name)
{
	struct run *r = arg;

	fg_sideband_ksym(r->q, 0, addr, len, 0, name);
}

/*
 * The side-band events on every CPU, then the mappings of the processes
 * already running and the BPF programs loaded (kallsyms holds them only
 * while they are): in that order, so nothing between the two is missed.
 */
static void open_sideband(struct run *r)
{
	int failed_cpu = -1;
	/* cfi: more room, for the seconds a machine's tables take to build */
	int err =
	    fg_sideband_open(&r->sb, opts.cpus, opts.ncpus, opts.cfi ? 1024 : 128, &failed_cpu);

	if (err) {
		char what[96];

		snprintf(what, sizeof(what), "cannot open perf events on CPU %d", failed_cpu);
		fail_perf_event(r, err, failed_cpu, false, what);
	}
	if (!opts.user_only)
		r->bpfsyms_err = fg_bpfsyms_loaded(queue_bpf_sym, r, &r->bpfsyms);
	if (!r->filtering)
		fg_sideband_maps_all(r->q, "/proc");
	else
		for (size_t i = 0; i < fg_targets_count(r->targets); i++)
			fg_sideband_maps_pid(r->q, "/proc", fg_targets_at(r->targets, i));
	/* the Python processes running: their stacks walked from the start */
	if (r->py && !r->filtering)
		fg_pyprocs_scan_all(r->py);
	for (size_t i = 0; r->py && r->filtering && i < fg_targets_count(r->targets); i++)
		fg_pyprocs_scan(r->py, fg_targets_at(r->targets, i));
	if (r->cfi) {
		/*
		 * The tables of the processes to sample, before sampling starts; system-wide,
		 * those a process' samples need, when they first fall back (cfi_ask)
		 */
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);

		r->cfi_lazy = !r->filtering;
		r->cfi_asked = fg_hash_new(0);
		for (size_t i = 0; r->filtering && i < fg_targets_count(r->targets); i++)
			fg_cfi_loader_scan(r->cfi, fg_targets_at(r->targets, i));
		fg_cfi_loader_sync(r->cfi);
		fg_cfi_loader_started(r->cfi);
		r->cfi_start_ns = now_ns(CLOCK_MONOTONIC) - t0;
		/* from now on the tables are built in a thread of their own */
		err = fg_cfi_worker_start(&r->cfi_worker, r->cfi, CFI_QUEUE_BYTES);
		if (err)
			fail_setup(r, err, "cannot start the thread that loads the unwind tables");
	}
}

/* The kernel refused event `ev` (`how`: what was done to it): one line naming it, and stop. */
static noreturn void refuse_event(struct run *r, const struct fg_ev *ev, int err, const char *how)
{
	char what[512];

	snprintf(what, sizeof(what), "cannot %s event '%s'", how, ev->name);
	if (err == -EPERM || err == -EACCES || err == -ENOSYS)
		refuse_denied(r, err, "perf_event_open", what);
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL) {
		cleanup(r);
		fg_diex("%s: %s: the kernel refuses it", what, strerror(-err));
	}
	fail_setup(r, err, what);
}

/*
 * Event `ev`'s perf event on `cpu`, for all tasks: a software event sampled
 * at -F (clocks) or every -c events; a tracepoint each time, since its
 * program runs on every CPU and counts -c itself.
 */
static int open_perf_event(const struct fg_ev *ev, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ev->kind == FG_EVENT_TRACEPOINT ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE;
	attr.config = ev->config;
	if (ev->time_based) {
		attr.freq = 1;
		attr.sample_freq = opts.freq;
	} else {
		attr.sample_period = ev->kind == FG_EVENT_TRACEPOINT ? 1 : count_period();
	}
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* the processes a uprobe goes into: those of -p and -t, or all (-1) */
static size_t probe_pids(pid_t *pids, size_t max)
{
	size_t n = 0;

	if (opts.command || (!opts.npids && !opts.ntids)) {
		pids[0] = -1;
		return 1;
	}
	for (size_t i = 0; i < opts.npids + opts.ntids && n < max; i++) {
		uint32_t pid = i < opts.npids ? opts.pids[i]
					      : fg_task_tgid("/proc", opts.tids[i - opts.npids]);
		bool dup = false;

		for (size_t k = 0; k < n; k++)
			dup |= pids[k] == (pid_t)pid;
		if (pid && !dup)
			pids[n++] = (pid_t)pid;
	}
	return n;
}

/*
 * Sampling: each event attached.  Software events are perf events on each
 * CPU, the perf_event program on each; a tracepoint is one perf event, its
 * program runs wherever it fires; a uprobe goes into every process mapping
 * its file, or into the -p/-t processes.  The program's cookie is the
 * event's number.
 */
static void attach_events(struct run *r)
{
	struct bpf_program *perf_prog = r->skel->progs.fg_sample;
	struct bpf_program *tp_prog = r->skel->progs.fg_tracepoint;
	struct bpf_program *up_prog = r->skel->progs.fg_uprobe;
	pid_t pids[256];
	size_t npids;

	if (opts.offcpu && !opts.wall)
		return; /* --off-cpu: waits, no samples of events */
	npids = probe_pids(pids, FG_ARRAY_SIZE(pids));
	for (size_t e = 0; e < evlist.n; e++) {
		const struct fg_ev *ev = &evlist.ev[e];
		struct bpf_link *link;
		int fd, err;

		switch (ev->kind) {
		case FG_EVENT_SOFTWARE:
			for (int i = 0; i < opts.ncpus; i++) {
				LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = ev->id);

				fd = open_perf_event(ev, opts.cpus[i]);
				if (fd < 0) {
					char what[320];

					err = -errno;
					snprintf(what, sizeof(what),
						 "cannot open event '%s' on CPU %d", ev->name,
						 opts.cpus[i]);
					/* a clock's rate, an offline CPU: as for the side-band
					 * events */
					if (ev->time_based || !cpu_online(opts.cpus[i]))
						fail_perf_event(r, err, opts.cpus[i],
								ev->time_based, what);
					refuse_event(r, ev, err, "open");
				}
				link = bpf_program__attach_perf_event_opts(perf_prog, fd, &po);
				err = link ? 0 : -errno;
				keep_link(r, link, fd);
				if (err)
					refuse_event(r, ev, err, "attach the BPF program to");
			}
			break;
		case FG_EVENT_TRACEPOINT: {
			LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = ev->id);

			fd = open_perf_event(ev, opts.cpus[0]);
			if (fd < 0)
				refuse_event(r, ev, -errno, "open");
			link = bpf_program__attach_perf_event_opts(tp_prog, fd, &po);
			err = link ? 0 : -errno;
			keep_link(r, link, fd);
			if (err)
				refuse_event(r, ev, err, "attach the BPF program to");
			break;
		}
		default: /* FG_EVENT_UPROBE, FG_EVENT_URETPROBE */
			for (size_t i = 0; i < npids; i++) {
				bool entry = ev->kind == FG_EVENT_UPROBE && ev->offset == 0;
				LIBBPF_OPTS(bpf_uprobe_opts, uo,
					    .bpf_cookie = ev->id | (entry ? FG_COOKIE_ENTRY : 0),
					    .retprobe = ev->kind == FG_EVENT_URETPROBE);

				link = bpf_program__attach_uprobe_opts(up_prog, pids[i], ev->path,
								       ev->file_offset, &uo);
				err = link ? 0 : -errno;
				keep_link(r, link, -1);
				if (err)
					refuse_event(r, ev, err, "attach a uprobe for");
			}
		}
	}
}

/* --off-cpu, --wall: the program on sched_switch, on every CPU at once. */
static void attach_offcpu(struct run *r)
{
	struct bpf_link *link;
	int err;

	if (!opts.offcpu)
		return;
	link = bpf_program__attach(r->skel->progs.fg_offcpu);
	err = link ? 0 : -errno;
	keep_link(r, link, -1);
	if (err)
		fail_setup(r, err, "cannot attach the BPF program to the sched_switch tracepoint");
}

/* the event records, after the header: what the samples' numbers mean */
static void write_events(struct fg_rec_writer *w)
{
	for (size_t i = 0; i < evlist.n; i++) {
		const struct fg_ev *ev = &evlist.ev[i];
		struct fg_rec_event re = {
		    .id = ev->id,
		    .kind = ev->kind,
		    .config = ev->kind == FG_EVENT_UPROBE || ev->kind == FG_EVENT_URETPROBE
				  ? ev->file_offset
				  : ev->config,
		    .period = ev->time_based ? 0 : count_period(),
		    .freq = ev->time_based ? opts.freq : 0,
		};

		fg_rec_write_event(w, &re, ev->name);
	}
}

/* The output, opened only now: a refusal above leaves a file already there as it was. */
static void open_output(struct run *r)
{
	int err;

	r->out_fd = STDOUT_FILENO;
	if (!opts.output)
		return;
	/*
	 * 0600, as perf.data: kernel addresses and every process's mappings.
	 * In place at once, so that a run cut short leaves what it sampled.
	 */
	err = fg_atomic_open(&r->out, opts.output, FG_OUT_PRIVATE | FG_OUT_STREAM | FG_OUT_FD);
	if (err < 0) {
		cleanup(r);
		errno = -err;
		fg_die("cannot open '%s'", opts.output);
	}
	r->out_fd = r->out.fd;
}

/* The stream's header, and the command released: sampling has begun. */
static void start_stream(struct run *r)
{
	struct fg_rec_header *h = &r->header;
	int err;

	fg_rec_header_init(h);
	h->freq = fg_evlist_has_time(&evlist) ? opts.freq : 0;
	h->ncpus = (uint32_t)opts.ncpus;
	h->flags = (opts.user_only ? FG_HDR_F_USER_ONLY : 0) |
		   (opts.kernel_only ? FG_HDR_F_KERNEL_ONLY : 0) |
		   (r->filtering ? FG_HDR_F_FILTERED : 0) | (opts.idle ? FG_HDR_F_IDLE : 0) |
		   (opts.snapshot ? FG_HDR_F_USTACK_SNAPSHOT : 0) |
		   (opts.offcpu ? FG_HDR_F_OFFCPU : 0) | (opts.wall ? FG_HDR_F_WALL : 0);
	h->start_ns = now_ns(CLOCK_MONOTONIC);
	h->start_realtime_ns = now_ns(CLOCK_REALTIME);
	r->w = fg_rec_writer_new(r->out_fd);
	fg_rec_write_header(r->w, h);
	write_events(r->w);
	if (!opts.command)
		return;
	err = fg_spawn_release(&r->cmd);
	if (err) {
		fg_warne(-err, "cannot run '%s'", opts.command[0]);
		r->status = FG_EXIT_FAIL;
	}
}

/* Whether a record is a mapping of the snapshot taken from /proc at the start. */
static bool snapshot_mapping(uint32_t type, const void *payload, size_t len)
{
	struct fg_rec_mapping m;

	if (type != FG_REC_MAPPING || len < sizeof(m))
		return false;
	memcpy(&m, payload, sizeof(m));
	return m.flags & FG_MAP_F_SNAPSHOT;
}

/*
 * Which records to write (the targets' only, when filtering); with
 * --call-graph cfi, those written also keep the tables in the maps.
 */
static bool keep_record(void *ctx, uint32_t type, const void *payload, size_t len)
{
	struct run *r = ctx;

	if (r->filtering && !fg_targets_keep(r->targets, type, payload, len))
		return false;
	if (r->py)
		fg_pyprocs_record(r->py, type, payload, len);
	/* lazy: the start's snapshot of every process is not loaded, but asked for (cfi_ask) */
	if (r->cfi_worker && !(r->cfi_lazy && snapshot_mapping(type, payload, len)))
		fg_cfi_worker_push(r->cfi_worker, type, payload, len);
	return true;
}

/* Write what is queued up to `upto`: 0 or the writer's -errno. */
static int write_queued(struct run *r, uint64_t upto)
{
	int err = fg_reorder_flush(r->q, upto, r->w, keep_record, r);

	if (r->cfi_worker)
		fg_cfi_worker_wake(r->cfi_worker);
	return err;
}

/*
 * Queue up to `upto` to the writer, and out when `out` (at most every
 * WRITE_EVERY_NS): 0, or the write error (also kept in r->werr).
 */
static int flush(struct run *r, uint64_t upto, bool out)
{
	if (write_queued(r, upto) < 0 || (out && fg_rec_writer_flush(r->w) < 0))
		r->werr = fg_rec_writer_error(r->w);
	return r->werr;
}

/*
 * Until the loop's next turn (or the end of -d): 100 ms; with cfi 20 ms
 * while side-band records come, sooner to the loader, for the tables of new
 * processes (QUIET_TICK_NS after a turn that read none).  Meanwhile a
 * fallback that asks for its process' mappings (FG_SAMPLE_F_CFI_ASK) wakes
 * us: the samples read then (on_sample() asks the worker), and the worker
 * woken.  The other samples ask for no wakeup.
 */
static void wait_tick(struct run *r, uint64_t deadline)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t end = now + (r->sideband_quiet ? QUIET_TICK_NS : CFI_TICK_NS);

	if (deadline && deadline < end)
		end = deadline; /* (-d: a quiet turn ends with the run) */

	if (!opts.cfi || !r->cfi_worker) {
		struct timespec ts = {0, opts.cfi ? CFI_TICK_NS : 100 * 1000 * 1000};

		nanosleep(&ts, NULL);
		return;
	}
	for (; now < end && !stop_signal && !child_exited; now = now_ns(CLOCK_MONOTONIC)) {
		int n = ring_buffer__poll(r->rb, (int)((end - now + 999999) / 1000000));

		if (n > 0)
			fg_cfi_worker_wake(r->cfi_worker);
		else if (n < 0 && n != -EINTR)
			break;
	}
}

/* The loop: every 100 ms, side-band events and samples into time order, then out. */
static void run_loop(struct run *r)
{
	uint64_t deadline = 0, written = 0;

	if (opts.duration > 0)
		deadline = r->header.start_ns + (uint64_t)llround(opts.duration * 1e9);
	for (;;) {
		uint64_t cut;
		bool last = stop_signal || child_exited;

		if (!last)
			wait_tick(r, deadline);
		if (opts.command && !r->child_done) {
			int st;

			if (waitpid(r->cmd.pid, &st, WNOHANG) == r->cmd.pid) {
				r->child_done = true;
				r->child_status = st;
			}
		}
		cut = now_ns(CLOCK_MONOTONIC);
		if (deadline && cut >= deadline)
			last = true;
		if (r->child_done || stop_signal || targets_gone())
			last = true;
		r->sideband_quiet = fg_sideband_drain(r->sb, r->q) == 0;
		ring_buffer__consume(r->rb);
		check_lost(r, cut);
		check_offline(r, cut, last);
		if (r->korc.on && !r->korc.loaded && r->korc.kstacks >= KORC_PAYS && !last)
			load_korc(r);
		/* (the last one too: the programs run until finish(), which writes the rest) */
		bool out = last || cut - written >= WRITE_EVERY_NS;

		if (flush(r, cut - ORDER_MARGIN_NS, out) < 0 || last)
			break;
		if (out)
			written = cut;
		if (r->py)
			fg_pyprocs_tick(r->py);
	}
}

/*
 * --off-cpu: the waits still going on at the end, their threads not run
 * since, written with the time so far and flagged open, when that is within
 * --min-block and --max-block.
 */
static void open_wait(struct run *r, struct fg_event *e, uint64_t end)
{
	uint64_t so_far;

	if (!e->time_ns || e->time_ns > end || e->nr_kernel > MAX_STACK_DEPTH ||
	    e->nr_user > MAX_STACK_DEPTH)
		return; /* running, begun after the end, or not a wait */
	so_far = end - e->time_ns;
	if (so_far < opts.min_block_ns || so_far > opts.max_block_ns) {
		/* counted as the program counts the waits it leaves out */
		if (so_far < opts.min_block_ns)
			r->off.open_short++;
		else
			r->off.open_long++;
		return;
	}
	e->time_ns = end;
	e->weight = so_far;
	e->flags |= FG_SAMPLE_F_OPEN;
	on_sample(r, (const uint8_t *)e,
		  offsetof(struct fg_event, ips) + 8 * ((size_t)e->nr_kernel + e->nr_user));
	r->off.open++;
	r->off.open_ns += so_far;
}

/*
 * The threads' waits come through the program's iterator of tasks (task
 * storage cannot be walked from here), the idle tasks' from their array.
 */
static void open_waits(struct run *r, uint64_t end)
{
	static struct fg_event e;
	int fd = bpf_map__fd(r->skel->maps.idle_waits), it;
	struct bpf_link *link;
	size_t got = 0;
	ssize_t n;

	if (!opts.offcpu)
		return;
	for (uint32_t cpu = 0; cpu < (uint32_t)r->ncpus_possible; cpu++)
		if (bpf_map_lookup_elem(fd, &cpu, &e) == 0)
			open_wait(r, &e, end);
	link = bpf_program__attach_iter(r->skel->progs.fg_open_waits, NULL);
	it = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (it < 0) {
		fg_warn("cannot read the waits still going on at the end");
		bpf_link__destroy(link);
		return;
	}
	/* whole events, however the reads split them */
	while ((n = read(it, (char *)&e + got, sizeof(e) - got)) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0 && (got += (size_t)n) == sizeof(e)) {
			open_wait(r, &e, end);
			got = 0;
		}
	}
	if (n < 0)
		fg_warn("cannot read the waits still going on at the end");
	close(it);
	bpf_link__destroy(link);
}

/* what one of the BPF programs cost, and the events the kernel did not run it for */
struct prog_cost {
	const char *what; /* "" for the perf_event program, " for tracepoints", ... */
	uint64_t runs, ns, misses;
};

static void prog_costs(struct run *r, struct prog_cost pc[3])
{
	struct bpf_program *progs[3] = {r->skel->progs.fg_sample, r->skel->progs.fg_tracepoint,
					r->skel->progs.fg_uprobe};
	static const char *const what[3] = {" for perf events", " for tracepoints", " for uprobes"};

	for (int i = 0; i < 3; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		pc[i].what = what[i];
		/* not loaded: no event of its kind */
		if (!bpf_program__autoload(progs[i]) ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len) < 0)
			continue;
		pc[i].runs = info.run_cnt;
		pc[i].ns = info.run_time_ns;
		pc[i].misses = info.recursion_misses;
	}
}

/* whether the run samples the default event alone, cpu-clock */
static bool default_event_only(void)
{
	return evlist.n == 1 && evlist.ev[0].kind == FG_EVENT_SOFTWARE &&
	       evlist.ev[0].config == PERF_COUNT_SW_CPU_CLOCK;
}

/* the events the kernel did not run a program for: its CPU was running one */
static uint64_t prog_misses(struct run *r)
{
	struct prog_cost pc[3];

	prog_costs(r, pc);
	return pc[0].misses + pc[1].misses + pc[2].misses;
}

/*
 * Lines about the events, when there are other events than the default:
 * each program's cost, the samples of each event; and the events left out.
 */
static void report_events(const struct run *r, const struct prog_cost pc[3], struct fg_buf *b)
{
	if (!default_event_only()) {
		for (int i = 0; i < 3 && opts.verbose; i++)
			if (pc[i].runs)
				fg_buf_addf(b,
					    "the BPF program%s ran %" PRIu64 " times, %" PRIu64
					    " ns each on average (kernel.bpf_stats_enabled)\n",
					    pc[i].what, pc[i].runs, pc[i].ns / pc[i].runs);
		fg_buf_addstr(b, "samples by event: ");
		for (size_t i = 0; i < evlist.n; i++) {
			fg_buf_addf(b, "%s%s %" PRIu64, i ? ", " : "", evlist.ev[i].name,
				    r->event_samples[i]);
			if (evlist.ev[i].time_based)
				fg_buf_addf(b, " (%u Hz)", opts.freq);
			else if (count_period() == 1)
				fg_buf_addstr(b, " (each event)");
			else
				fg_buf_addf(b, " (every %" PRIu64 " events)", count_period());
		}
		fg_buf_addstr(b, "\n");
	}
	if (r->busy_total)
		fg_buf_addf(b,
			    "%" PRIu64 " events not sampled: their CPU was taking another sample "
			    "(a clock's tick within a uprobe's, or a probe's program preempted)\n",
			    r->busy_total);
	if (r->misses)
		fg_buf_addf(b,
			    "%" PRIu64 " events not sampled: the kernel does not run a BPF program "
			    "on a CPU already running one\n",
			    r->misses);
}

/* With -v: the BPF code named in the stream, for the kernel stacks that run through it */
static void report_bpfsyms(const struct run *r, struct fg_buf *b)
{
	if (!opts.verbose || opts.user_only)
		return;
	fg_buf_addf(b,
		    "BPF code: %" PRIu64 " functions of %" PRIu64
		    " programs named in the stream at the start (%" PRIu64
		    " programs not read%s%s), %" PRIu64 " loaded or unloaded since\n",
		    r->bpfsyms.syms, r->bpfsyms.progs, r->bpfsyms.unreadable,
		    r->bpfsyms_err ? "; the list: " : "",
		    r->bpfsyms_err ? strerror(-r->bpfsyms_err) : "", fg_sideband_ksyms(r->sb));
}

/* With -v: which kernel types libbpf relocated the program against */
static void report_kernel_btf(const struct run *r, struct fg_buf *b)
{
	if (!opts.verbose)
		return;
	fg_buf_addf(b, "kernel types for the BPF program: %s", r->kbtf.how);
	if (r->kbtf.make_ns)
		fg_buf_addf(b, " (%" PRIu64 " ms)", r->kbtf.make_ns / 1000000);
	fg_buf_addf(b, "%s%s%s%s\n", r->kbtf.dirfd >= 0 ? ", file '" : "",
		    r->kbtf.dirfd >= 0 ? r->kbtf.name : "", r->kbtf.dirfd >= 0 ? "'" : "",
		    r->kbtf.dropped ? "; the file kept before did not do: removed" : "");
}

/* --kernel-unwind: how the kernel stacks were taken */
static void report_korc(struct run *r, struct fg_buf *b)
{
	uint64_t percpu[MAX_CPUS], walks, text, other, before, checked, differ;
	char once[96] = "";

	report_bpfsyms(r, b);
	report_kernel_btf(r, b);
	if (!r->korc.on) {
		if (r->korc.why_not && opts.verbose)
			fg_buf_addf(b, "kernel stacks: by bpf_get_stack() (%s)\n", r->korc.why_not);
		return;
	}
	walks = stat_total(r, FG_STAT_KORC_WALKS, percpu);
	text = stat_total(r, FG_STAT_KORC_FB_TEXT, percpu);
	other = stat_total(r, FG_STAT_KORC_FB_OTHER, percpu);
	/* with -v, or --kernel-unwind check, which asks for it */
	if (!opts.verbose && opts.kernel_unwind != FG_KUNWIND_CHECK)
		return;
	if (!r->korc.loaded) {
		fg_buf_addf(b,
			    "kernel stacks: %" PRIu64
			    " by bpf_get_stack(), the kernel's ORC tables "
			    "not copied in (fewer than %d kernel stacks, which would not pay for "
			    "them)\n",
			    r->korc.kstacks, KORC_PAYS);
		return;
	}
	/* (those not taken with the tables, nor by their walk's fallback: taken before them) */
	before =
	    r->korc.kstacks > walks + text + other ? r->korc.kstacks - walks - text - other : 0;
	if (r->korc.lazy)
		snprintf(once, sizeof(once), " once %" PRIu64 " had been taken by bpf_get_stack()",
			 before);
	fg_buf_addf(b,
		    "kernel stacks: %" PRIu64 " unwound with the kernel's ORC tables "
		    "(%" PRIu32 " entries, %" PRIu32 " distinct rules, loaded in %" PRIu64
		    " ms%s), %" PRIu64 " by bpf_get_stack() instead (%" PRIu64
		    " reached code outside vmlinux's text, %" PRIu64 " a step not followed)\n",
		    walks, r->korc.syms.info.nr, r->korc.nrules, r->korc.load_ns / 1000000, once,
		    text + other, text, other);
	if (opts.kernel_unwind == FG_KUNWIND_CHECK) {
		checked = stat_total(r, FG_STAT_KORC_CHECKED, percpu);
		differ = stat_total(r, FG_STAT_KORC_DIFFER, percpu);
		fg_buf_addf(b,
			    "--kernel-unwind check: %" PRIu64
			    " stacks compared with bpf_get_stack()'s, %" PRIu64 " differ\n",
			    checked, differ);
	}
}

/* Detach, take the last samples and events, and close the stream with its summary record. */
static void finish(struct run *r)
{
	struct fg_rec_summary *sum = &r->sum;
	uint64_t percpu[MAX_CPUS], end = now_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < r->nlinks; i++) {
		bpf_link__destroy(r->links[i]);
		r->links[i] = NULL;
	}
	r->misses = prog_misses(r);
	if (r->werr == -EPIPE) {
		r->epipe = true;
	} else if (!r->werr) {
		ring_buffer__consume(r->rb);
		fg_sideband_drain(r->sb, r->q);
		check_lost(r, end);
		open_waits(r, end);
		if (r->misses) {
			struct fg_rec_lost l = {end, r->misses, UINT32_MAX, FG_LOST_BUSY};

			fg_reorder_add(r->q, end, FG_REC_LOST, &l, sizeof(l), NULL, 0);
		}
		write_queued(r, UINT64_MAX);
	}
	stop_cfi(r);
	/* the JVMs' perf maps, for fg-sym to name their JIT frames */
	if (r->jvm && !r->epipe)
		fg_jvmmaps_write(r->jvm, JVM_MAPS_MS, &r->jvm_st);
	memset(sum, 0, sizeof(*sum));
	sum->start_ns = r->header.start_ns;
	sum->end_ns = end;
	sum->samples = fg_reorder_written(r->q, FG_REC_SAMPLE);
	sum->mappings = fg_reorder_written(r->q, FG_REC_MAPPING);
	sum->lost = stat_total(r, FG_STAT_RINGBUF_FULL, percpu);
	/* of the samples written, so that none exceeds them (the BPF counts lost ones too) */
	sum->kstack_failed = fg_reorder_written_with(r->q, FG_SAMPLE_F_KSTACK_FAILED);
	sum->ustack_failed = fg_reorder_written_with(r->q, FG_SAMPLE_F_USTACK_FAILED);
	sum->ustack_cut = fg_reorder_written_with(r->q, FG_SAMPLE_F_USTACK_CUT);
	r->nofp = fg_reorder_written_with(r->q, FG_SAMPLE_F_USTACK_NOFP);
	sum->filtered = stat_total(r, FG_STAT_FILTERED, percpu);
	r->busy_total = stat_total(r, FG_STAT_BUSY, percpu);
	sum->sideband_lost = fg_sideband_lost(r->sb);
	sum->command_status = r->child_done ? r->child_status : -1;
	sum->flags = r->child_done ? FG_SUM_F_COMMAND : 0;
	if (!r->epipe && !r->werr) {
		fg_rec_write(r->w, FG_REC_SUMMARY, sum, sizeof(*sum));
		r->werr = fg_rec_writer_flush(r->w);
		if (r->werr == -EPIPE)
			r->epipe = true;
	}
	fg_rec_writer_free(r->w);
	r->w = NULL;
}

/* -v: the BPF program's counters CPU by CPU */
static void report_per_cpu(struct run *r)
{
	static uint64_t v[FG_STAT_MAX][MAX_CPUS];

	for (int k = 0; k < FG_STAT_MAX; k++)
		stat_total(r, (enum fg_stat)k, v[k]);
	for (int c = 0; c < r->ncpus_possible; c++) {
		char line[512];
		int len = snprintf(line, sizeof(line), "CPU %d:", c);

		for (int k = 0; k < FG_STAT_MAX && len > 0 && (size_t)len < sizeof(line); k++)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %s %" PRIu64,
					fg_bpf_stat_name((unsigned)k), v[k][c]);
		fg_warnx("%s", line);
	}
}

/* --call-graph cfi: the BPF program's counters (enum fg_cfi_stat), summed over the CPUs */
static void cfi_counters(struct run *r, uint64_t bpf[FG_CFI_STAT_MAX])
{
	uint64_t percpu[MAX_CPUS];

	for (uint32_t k = 0; k < FG_CFI_STAT_MAX; k++) {
		bpf[k] = 0;
		if (bpf_map__lookup_elem(r->skel->maps.cfi_stats, &k, sizeof(k), percpu,
					 sizeof(uint64_t) * (size_t)r->ncpus_possible, 0) == 0)
			for (int i = 0; i < r->ncpus_possible; i++)
				bpf[k] += percpu[i];
	}
}

/* --call-graph cfi: how the walks ended, the tables and the limits hit */
static void report_cfi(struct run *r, struct fg_buf *text)
{
	uint64_t bpf[FG_CFI_STAT_MAX];
	struct fg_cfi_load_stats st;

	fg_cfi_loader_stats(r->cfi, &st);
	if (!opts.verbose) {
		fg_cfi_load_problems(text, &st, &cfi_limits);
		return;
	}
	cfi_counters(r, bpf);
	fg_cfi_load_report(text, &st, &cfi_limits, bpf,
			   fg_reorder_written_with(r->q, FG_SAMPLE_F_CFI_FALLBACK), r->cfi_start_ns,
			   r->header.start_ns ? r->header.start_ns - r->begin_ns : 0);
	fg_cfi_worker_report(text, &r->cfi_wst);
}

/*
 * The first line's share of whole user stacks, as far as fg-sample can tell: those the
 * walk followed to the end, and the snapshots that hold the end of the stack (fg-sym
 * unwinds them, and says how far it got); with frame pointers, the chains not cut short.
 */
static void user_stacks(struct run *r, struct fg_sample_stats *st)
{
	uint64_t whole = st->snapshot_whole < st->snapshots ? st->snapshot_whole : st->snapshots;
	uint64_t all, broken, bpf[FG_CFI_STAT_MAX];

	if (opts.kernel_only)
		return;
	if (r->cfi) { /* walked in BPF, or a snapshot where no table was in */
		cfi_counters(r, bpf);
		st->user_stacks = bpf[FG_CFI_STAT_WALKS] + st->snapshots;
		st->user_whole = bpf[FG_CFI_STAT_END_STOP] + whole;
	} else if (opts.snapshot) { /* dwarf: a snapshot each */
		st->user_stacks = st->snapshots;
		st->user_whole = whole;
	} else { /* frame pointers: of the samples not in a kernel thread, those not cut short */
		all = r->sum.samples - fg_reorder_written_with(r->q, FG_SAMPLE_F_KERNEL_THREAD);
		broken = r->sum.ustack_failed + r->sum.ustack_cut;
		st->user_fp = true;
		st->user_stacks = all;
		st->user_whole = broken < all ? all - broken : 0;
	}
	if (st->user_whole > st->user_stacks)
		st->user_whole = st->user_stacks;
}

/* --off-cpu, --wall: what became of the waits, for the end-of-run lines */
static void report_offcpu(struct run *r, struct fg_sample_stats *st)
{
	uint64_t percpu[MAX_CPUS];
	struct bpf_prog_info info;
	uint32_t info_len = sizeof(info);

	st->offcpu = true;
	st->wall = opts.wall;
	st->waits = fg_reorder_written_with(r->q, FG_SAMPLE_F_OFFCPU);
	st->wait_ns = r->off.wait_ns;
	st->waits_open = r->off.open;
	st->waits_open_ns = r->off.open_ns;
	st->waits_lost = stat_total(r, FG_STAT_WAITS_RINGBUF_FULL, percpu);
	st->waits_unseen = stat_total(r, FG_STAT_WAITS_UNSEEN, percpu);
	st->waits_short = stat_total(r, FG_STAT_WAITS_SHORT, percpu);
	st->waits_long = stat_total(r, FG_STAT_WAITS_LONG, percpu) + r->off.open_long;
	st->waits_short += r->off.open_short;
	st->waits_no_start = stat_total(r, FG_STAT_WAITS_NO_START, percpu);
	st->waits_no_end = stat_total(r, FG_STAT_WAITS_NO_END, percpu);
	st->wait_ring_bytes = r->off.ring_bytes;
	st->wait_pages = opts.pages_given ? opts.pages : FG_SAMPLE_WAIT_PAGES;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(r->skel->progs.fg_offcpu), &info, &info_len)) {
		st->wait_prog_runs = info.run_cnt;
		st->wait_prog_run_ns = info.run_time_ns;
		st->wait_prog_missed = info.recursion_misses;
	}
}

/* the JVMs asked for perf maps; Python: the processes walked, the frames named, what was lost */
static void report_runtimes(struct run *r, struct fg_buf *text)
{
	uint64_t percpu[MAX_CPUS], cut, failed;
	struct fg_pyprocs_stats st;
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	/* by default, only when a JVM's map could not be had */
	if (r->jvm_st.jvms &&
	    (opts.verbose || r->jvm_st.failed || r->jvm_st.timed_out || r->jvm_st.skipped))
		fg_buf_addf(text,
			    "jvm: %" PRIu64
			    " JVMs asked for their perf maps (jcmd Compiler.perfmap): "
			    "%" PRIu64 " written, %" PRIu64 " failed, %" PRIu64
			    " timed out, %" PRIu64 " skipped\n",
			    r->jvm_st.jvms, r->jvm_st.written, r->jvm_st.failed,
			    r->jvm_st.timed_out, r->jvm_st.skipped);
	if (!r->py)
		return;
	fg_pyprocs_stats(r->py, &st);
	f = open_memstream(&line, &len);
	if (!f)
		return;
	fg_pyprocs_report(f, &st, opts.verbose);
	cut = stat_total(r, FG_STAT_PY_CUT, percpu);
	failed = stat_total(r, FG_STAT_PY_FAILED, percpu);
	if (st.procs && (opts.verbose || cut))
		fprintf(f,
			"python: %" PRIu64 " samples with %" PRIu64 " Python frames; %" PRIu64
			" stacks cut at %d frames, %" PRIu64 " ended by a failed read\n",
			stat_total(r, FG_STAT_PY_STACKS, percpu),
			stat_total(r, FG_STAT_PY_FRAMES, percpu), cut, FG_PY_DEPTH, failed);
	fclose(f);
	if (line)
		fg_buf_add(text, line, len);
	free(line);
}

/* What the run took, on standard error; nothing when the reader of the records went away. */
static void report(struct run *r)
{
	struct fg_sample_stats st = {.sum = r->sum,
				     .verbose = opts.verbose,
				     .freq = fg_evlist_has_time(&evlist) ? opts.freq : 0,
				     .ncpus = (unsigned)opts.ncpus,
				     .nofp = r->nofp,
				     .snapshot = opts.snapshot,
				     .ring_bytes = r->ringbuf_bytes,
				     .pages = opts.pages,
				     .bad_events = r->bad_events};
	uint64_t percpu[MAX_CPUS];
	struct prog_cost pc[3];
	struct fg_buf text = FG_BUF_INIT, events = FG_BUF_INIT;

	if (r->epipe)
		return;
	if (opts.verbose)
		report_per_cpu(r);
	if (r->werr) {
		/* the disk filled: what was taken is still worth knowing */
		fg_warne(-r->werr, "write error");
		fg_warnx("'%s' ends there, without its summary record; what was sampled:",
			 opts.output ? opts.output : "<stdout>");
		r->status = FG_EXIT_FAIL;
	}
	st.snapshots = stat_total(r, FG_STAT_SNAPSHOTS, percpu);
	st.snapshot_bytes = stat_total(r, FG_STAT_SNAPSHOT_BYTES, percpu);
	st.snapshot_whole = stat_total(r, FG_STAT_SNAPSHOT_WHOLE, percpu);
	user_stacks(r, &st);
	/* the programs' own cost, when the kernel counts it (kernel.bpf_stats_enabled=1) */
	prog_costs(r, pc);
	if (default_event_only()) {
		st.prog_runs = pc[0].runs;
		st.prog_run_ns = pc[0].ns;
	}
	if (opts.offcpu)
		report_offcpu(r, &st);
	report_events(r, pc, &events);
	report_korc(r, &events);
	st.events = events.data;
	st.command_done = r->child_done && r->status == FG_EXIT_OK;
	st.late = fg_reorder_late(r->q);
	fg_sample_summary(&text, &st);
	if (r->cfi)
		report_cfi(r, &text);
	report_runtimes(r, &text);
	for (char *line = text.data, *nl; line && (nl = strchr(line, '\n')); line = nl + 1)
		fg_warnx("%.*s", (int)(nl - line), line);
	fg_warn_names_cut(); /* of the functions -e named by their demangled names */
	fg_buf_release(&text);
	fg_buf_release(&events);
}

/* Everything released; the exit status. */
static int release(struct run *r)
{
	cleanup(r);
	if (opts.output && fg_atomic_commit(&r->out) < 0 && !r->epipe && !r->werr) {
		fg_warn("write error on '%s'", opts.output);
		r->status = FG_EXIT_FAIL;
	}
	fg_reorder_free(r->q);
	fg_targets_free(r->targets);
	free(r->ringbuf_full_seen);
	free(r->busy_seen);
	free(r->event_samples);
	free(r->offline_warned);
	free(r->off.lost_seen);
	free(r->off.unseen_seen);
	free(r->off.no_end_seen);
	fg_evlist_release(&evlist);
	fg_sample_opts_release(&opts);
	return r->status;
}

int main(int argc, char **argv)
{
	struct run r = {.cmd = {.pid = -1, .go_fd = -1, .err_fd = -1},
			.kbtf = {.dirfd = -1, .fd = -1},
			.child_status = -1,
			.begin_ns = now_ns(CLOCK_MONOTONIC)};

	fg_set_progname(argv[0]);
	parse_options(argc, argv);
	/* each step stops the tool with one line saying why, releasing what was set up */
	prepare(&r);
	kernel_btf_find(&r);
	setup_bpf(&r);
	add_targets(&r);
	open_sideband(&r);
	attach_events(&r);
	attach_offcpu(&r);
	open_output(&r);
	start_stream(&r);
	run_loop(&r);
	finish(&r);
	report(&r);
	return release(&r);
}
