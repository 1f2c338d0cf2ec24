// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-sym: name the frames of a record stream (fg-record(5)) and write them
 * as `perf script` text.  The naming is in lib/symbolize.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/bigmem.h"
#include "fg/bpfsyms.h"
#include "fg/capture.h"
#include "fg/debugfile.h"
#include "fg/debuginfod.h"
#include "fg/diag.h"
#include "fg/psheader.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "fg/sym_args.h"
#include "fg/symbolize.h"
#include "fg/util.h"

static const char usage_text[] =
    "usage: fg-sym [-fqv] [--header] [--inline] [--srcline] [--py-lines] [--no-demangle]\n"
    "              [--kallsyms FILE] [--no-cache] [--proc-root DIR] [--symfs DIR]\n"
    "              [--debuginfod URLS | --no-debuginfod] [--debuginfod-budget SECONDS]\n"
    "              [--unwinder table|libdw|none] [-o FILE] [FILE]\n"
    "\n"
    "Name the frames of fg-sample's records (FILE or standard input) and write\n"
    "them as perf script text.\n"
    "\n"
    "  -o, --output FILE    write to FILE instead of standard output (whole or not at all)\n"
    "  -f, --force          read a capture that another user owns\n"
    "      --header         start with perf script --header's comments: the host,\n"
    "                       the sampling frequency, the clock's wall-clock time\n"
    "      --inline         expand inlined functions (DWARF)\n"
    "      --srcline        add the source file and line of each frame (DWARF)\n"
    "      --py-lines       Python frames: py::NAME:FILE:LINE, the line each frame\n"
    "                       is running\n"
    "      --no-demangle    keep C++ and Rust names as they are in the symbol table\n"
    "      --kallsyms FILE  kernel symbols from FILE instead of /proc/kallsyms\n"
    "      --no-cache       neither read nor write the cache of /proc/kallsyms\n"
    "                       (${XDG_CACHE_HOME:-~/.cache}/fg/kallsyms)\n"
    "      --proc-root DIR  read DIR/PID/maps and the like instead of /proc\n"
    "      --symfs DIR      look for mapped files and debug files under DIR\n"
    "      --debuginfod URLS\n"
    "                       fetch missing debug files by build-id from these\n"
    "                       debuginfod servers (default: $DEBUGINFOD_URLS, but\n"
    "                       not as root through sudo)\n"
    "      --no-debuginfod  fetch no debug files\n"
    "      --debuginfod-budget SECONDS\n"
    "                       time for all fetches together (default 5)\n"
    "      --unwinder table|libdw|none\n"
    "                       how the stack snapshots of a dwarf capture are unwound:\n"
    "                       with tables from the files' call frame information\n"
    "                       (default), by elfutils' libdwfl (slower; to check the\n"
    "                       tables), or not at all (the frame-pointer frames then)\n"
    "  -q, --quiet          no summary on standard error\n"
    "  -v, --verbose        every count at the end, and a warning for each file not read\n"
    "  -h, --help           print this help\n"
    "  -V, --version        print the version\n";

static const struct option longopts[] = {
    {"debuginfod", required_argument, NULL, FG_SYM_ARG_DEBUGINFOD},
    {"debuginfod-budget", required_argument, NULL, FG_SYM_ARG_DEBUGINFOD_BUDGET},
    {"force", no_argument, NULL, 'f'},
    {"header", no_argument, NULL, FG_SYM_ARG_HEADER},
    {"help", no_argument, NULL, 'h'},
    {"inline", no_argument, NULL, FG_SYM_ARG_INLINE},
    {"kallsyms", required_argument, NULL, FG_SYM_ARG_KALLSYMS},
    {"no-cache", no_argument, NULL, FG_SYM_ARG_NO_CACHE},
    {"no-debuginfod", no_argument, NULL, FG_SYM_ARG_NO_DEBUGINFOD},
    {"no-demangle", no_argument, NULL, FG_SYM_ARG_NO_DEMANGLE},
    {"output", required_argument, NULL, 'o'},
    {"proc-root", required_argument, NULL, FG_SYM_ARG_PROC_ROOT},
    {"quiet", no_argument, NULL, 'q'},
    {"srcline", no_argument, NULL, FG_SYM_ARG_SRCLINE},
    {"py-lines", no_argument, NULL, FG_SYM_ARG_PY_LINES},
    {"symfs", required_argument, NULL, FG_SYM_ARG_SYMFS},
    {"unwinder", required_argument, NULL, FG_SYM_ARG_UNWINDER},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* debuginfod, as the options and the environment ask */
struct dbgi {
	const char *urls; /* --debuginfod */
	bool off;	  /* --no-debuginfod */
	uint64_t budget_ms;
	bool sudo_ignored; /* DEBUGINFOD_URLS was set, and ignored: root through sudo */
	struct fg_debuginfod *c;
};

/*
 * Root through sudo (or a set-user-ID program) has an environment another
 * user chose: the servers it names are not asked unless --debuginfod says so.
 */
static bool through_sudo(void)
{
	return geteuid() == 0 && (getuid() != 0 || getenv("SUDO_USER"));
}

static void debuginfod_start(struct dbgi *d)
{
	const char *env = getenv("DEBUGINFOD_URLS"), *cache = getenv("DEBUGINFOD_CACHE_PATH");
	const char *urls = d->urls;
	struct fg_debuginfod_opts o = {.budget_ms = d->budget_ms};
	char def[PATH_MAX];

	if (d->off)
		return;
	if (!urls) {
		if (!env || !*env)
			return;
		if (through_sudo()) {
			d->sudo_ignored = true;
			return;
		}
		urls = env;
	}
	if (through_sudo()) {
		/* files the user's environment names, which root must neither send nor write */
		unsetenv("DEBUGINFOD_HEADERS_FILE");
		unsetenv("SSLKEYLOGFILE");
	}
	if (!cache || !*cache)
		cache = fg_debuginfod_default_cache(def, sizeof(def)) == 0 ? def : NULL;
	o.urls = urls;
	o.cache = cache;
	d->c = fg_debuginfod_new(&o);
	if (d->c)
		return;
	if (!cache)
		fg_warnx(
		    "debuginfod off: no place for its cache (no HOME); set DEBUGINFOD_CACHE_PATH");
	else if (errno == ELOOP)
		fg_warnx(
		    "debuginfod off: the cache directory '%s' is, or is under, a symbolic link",
		    cache);
	else if (errno == EPERM)
		fg_warnx("debuginfod off: the cache directory '%s' (or one above it) is not this "
			 "user's alone; set DEBUGINFOD_CACHE_PATH",
			 cache);
	else if (errno == ENOSYS)
		fg_warnx("debuginfod off: cannot load libdebuginfod.so.1 (Debian: libdebuginfod1)");
	else
		fg_warne(errno, "debuginfod off: cache directory '%s'", cache);
}

static void summary_debuginfod(const struct fg_sym_stats *st, const struct dbgi *d, bool verbose)
{
	struct fg_debuginfod_stats ds;
	char more[256] = "";

	if (!d->c) {
		if (!st->unnamed[FG_UNNAMED_NOSYMS] || d->off)
			return;
		if (d->sudo_ignored)
			fg_warnx("DEBUGINFOD_URLS ignored: it came through sudo; --debuginfod URLS "
				 "fetches debug files as root");
		else
			fg_warnx("%llu frames in files without symbols: install their debug "
				 "packages, or fetch their debug files with debuginfod "
				 "(DEBUGINFOD_URLS or --debuginfod URLS)",
				 (unsigned long long)st->unnamed[FG_UNNAMED_NOSYMS]);
		return;
	}
	fg_debuginfod_stats(d->c, &ds);
	/* by default only when something went wrong */
	if (!verbose && !ds.timedout && !ds.failed && !ds.unusable && !ds.refused)
		return;
	if (ds.refused)
		snprintf(more, sizeof(more), ", %llu refused (not the build-id asked for)",
			 (unsigned long long)ds.refused);
	if (ds.unusable)
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
			 ", %llu refused and evicted (over %llu MiB, or not ELF within bounds)",
			 (unsigned long long)ds.unusable, (unsigned long long)(ds.max_bytes >> 20));
	if (ds.failed)
		snprintf(more + strlen(more), sizeof(more) - strlen(more), ", %llu failed (%s)",
			 (unsigned long long)ds.failed, strerror(ds.last_err));
	fg_warnx("debuginfod: %llu debug files fetched, %llu from the cache, %llu not found, "
		 "%llu timed out%s (%.1f of %.1f s); %llu frames named by them",
		 (unsigned long long)ds.fetched, (unsigned long long)ds.cached,
		 (unsigned long long)ds.notfound, (unsigned long long)ds.timedout, more,
		 (double)ds.used_ms / 1000, (double)ds.budget_ms / 1000,
		 (unsigned long long)st->debuginfod_named);
}

/*
 * The input pauses while samples wait for debug files: write them as the
 * files come, or as the budget ends, until there is input again.
 */
static int wait_input(struct fg_symbolizer *s, struct fg_debuginfod *c, int fd)
{
	while (fg_symbolizer_held(s)) {
		struct pollfd p[2] = {
		    {.fd = fd, .events = POLLIN},
		    {.fd = fg_debuginfod_event_fd(c), .events = POLLIN},
		};
		int ms = fg_debuginfod_remaining_ms(c);

		if (ms >= 0 && poll(p, 2, ms + 1) < 0 && errno != EINTR)
			return -errno;
		if (fg_symbolizer_flush(s, stdout, false) < 0 || fflush(stdout) != 0)
			return -EIO;
		if (ms < 0 || p[0].revents)
			break;
	}
	return 0;
}

/* How the stack snapshots were unwound, and why stacks ended early. */
static void summary_unwind(const struct fg_sym_stats *st, bool verbose)
{
	const struct fg_unwind_stats *u = &st->unwind;
	struct fg_buf b = FG_BUF_INIT;

	if (u->stacks && verbose) {
		for (int i = 0; i < FG_UNWIND_END_COUNT; i++)
			if (i != FG_UNWIND_END_STOP)
				fg_buf_addf(&b, "%s%llu %s", b.len ? ", " : "",
					    (unsigned long long)u->ends[i], fg_unwind_end_names[i]);
		fg_warnx("%llu stacks unwound: %llu whole, %llu ended early (%s); %llu frames, "
			 "%llu through frame pointers, %llu signal trampolines named by their CFI",
			 (unsigned long long)u->stacks,
			 (unsigned long long)u->ends[FG_UNWIND_END_STOP],
			 (unsigned long long)(u->stacks - u->ends[FG_UNWIND_END_STOP]), b.data,
			 (unsigned long long)u->frames, (unsigned long long)u->fp_frames,
			 (unsigned long long)st->signal_named);
	}
	if (st->unwind_badregs)
		fg_warnx("%llu stack snapshots not unwound: registers of another kind, or without "
			 "rip or rsp; their frame-pointer frames are written",
			 (unsigned long long)st->unwind_badregs);
	if (st->unwind_skipped)
		fg_warnx("%llu stack snapshots not unwound (--unwinder none): their frame-pointer "
			 "frames are written",
			 (unsigned long long)st->unwind_skipped);
	fg_buf_release(&b);
}

/* Python frames: how many, and what could not be named or placed */
static void summary_python(const struct fg_pysplice_stats *py, bool verbose)
{
	if (verbose && (py->stacks || py->not_spliced || py->names_dropped))
		fg_warnx(
		    "%llu samples with %llu Python frames: %llu unnamed (py::[unknown]), %llu "
		    "stacks cut at the sampler's bound; %llu runs without their eval-loop frame "
		    "(put outermost), %llu eval-loop frames without a run (kept)",
		    (unsigned long long)py->stacks, (unsigned long long)py->frames,
		    (unsigned long long)py->unnamed, (unsigned long long)py->cut,
		    (unsigned long long)py->runs_unplaced, (unsigned long long)py->evals_unused);
	if (py->not_spliced || py->names_dropped)
		fg_warnx("%llu samples' Python frames left out, their eval-loop frames kept (text "
			 "held for debuginfod); %llu "
			 "names over the bounds",
			 (unsigned long long)py->not_spliced,
			 (unsigned long long)py->names_dropped);
	if (py->lines_no_offset || py->lines_no_table || py->lines_not_found)
		fg_warnx(
		    "--py-lines: %llu Python frames given their function's first line: %llu "
		    "without their instruction (an older capture, or a frame not begun yet), %llu "
		    "without a line table, "
		    "%llu with no line there",
		    (unsigned long long)(py->lines_no_offset + py->lines_no_table +
					 py->lines_not_found),
		    (unsigned long long)py->lines_no_offset, (unsigned long long)py->lines_no_table,
		    (unsigned long long)py->lines_not_found);
}

static void summary(const struct fg_symbolizer *s, const struct fg_capture *cap, bool dwarf,
		    const struct dbgi *d, bool verbose)
{
	const struct fg_unwind_stats *u;
	struct fg_sym_stats st;
	uint64_t unnamed = 0, nosrc = 0;
	struct fg_buf b = FG_BUF_INIT;
	char why[512] = "";
	size_t n = 0;

	fg_symbolizer_stats(s, &st);
	u = &st.unwind;
	for (int i = 0; i < FG_UNNAMED_COUNT; i++) {
		unnamed += st.unnamed[i];
		if (i == FG_UNNAMED_DITIMEOUT && !d->c)
			continue;
		n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%llu %s", i ? ", " : "",
				      (unsigned long long)st.unnamed[i], fg_unnamed_reasons[i]);
	}
	if (verbose)
		fg_warnx("%llu samples, %llu frames named, %llu unnamed (%s); %llu files read",
			 (unsigned long long)st.samples, (unsigned long long)st.named,
			 (unsigned long long)unnamed, why, (unsigned long long)st.files);
	else if (u->stacks)
		fg_warnx("%llu samples, %llu frames named, %llu unnamed; %llu of %llu snapshots "
			 "unwound whole",
			 (unsigned long long)st.samples, (unsigned long long)st.named,
			 (unsigned long long)unnamed,
			 (unsigned long long)u->ends[FG_UNWIND_END_STOP],
			 (unsigned long long)u->stacks);
	else
		fg_warnx("%llu samples, %llu frames named, %llu unnamed",
			 (unsigned long long)st.samples, (unsigned long long)st.named,
			 (unsigned long long)unnamed);
	summary_unwind(&st, verbose);
	fg_warn_names_cut();
	if (st.refused)
		fg_warnx("%llu files refused: their ELF headers claim more sections or headers "
			 "than the bounds, or than the file holds; -v names them",
			 (unsigned long long)st.refused);
	if (st.bad_minidebug)
		fg_warnx(
		    "%llu files with an unreadable .gnu_debugdata (MiniDebugInfo); -v names them",
		    (unsigned long long)st.bad_minidebug);
	if (dwarf && verbose) {
		n = 0;
		for (int i = 0; i < FG_NOSRC_COUNT; i++) {
			nosrc += st.nosrc[i];
			n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%llu %s", i ? ", " : "",
					      (unsigned long long)st.nosrc[i], fg_nosrc_reasons[i]);
		}
		fg_warnx("%llu named frames without source information (%s)",
			 (unsigned long long)nosrc, why);
	}
	summary_debuginfod(&st, d, verbose);
	if (st.evicted)
		fg_warnx(
		    "%llu processes forgotten, those without a recent sample: over %u processes "
		    "or %u mappings are not kept",
		    (unsigned long long)st.evicted, FG_SYM_PROCS_MAX, FG_SYM_MAPS_MAX);
	if (st.jit_cut)
		fg_warnx("%llu JIT maps cut short or not read: the JIT maps of one run are read up "
			 "to %llu MiB and %u entries in all; name fewer processes at a time "
			 "(fg-sample -p PID)",
			 (unsigned long long)st.jit_cut, FG_SYM_JIT_BYTES_MAX >> 20,
			 FG_SYM_JIT_ENTRIES_MAX);
	if (st.bpf_named && verbose)
		fg_warnx("%llu kernel frames in BPF code named by the stream's ksym records",
			 (unsigned long long)st.bpf_named);
	if (st.bpf_over)
		fg_warnx("%llu ksym records left out: the names of more than %u ranges of BPF code "
			 "are not kept; their frames are named from kallsyms, if at all",
			 (unsigned long long)st.bpf_over, FG_BPFSYMS_MAX);
	summary_python(&st.py, verbose);
	if (fg_capture_describe_lost(cap, &b))
		fg_warnx("the sampler lost %s", b.data);
	if (cap->waits_open && verbose)
		fg_warnx("%llu of %llu waits were still going on when the run ended: written with "
			 "their time so far (open=1)",
			 (unsigned long long)cap->waits_open, (unsigned long long)cap->waits);
	if (cap->cpus_offline)
		fg_warnx("%llu CPU%s went offline during the run: %s samples stopped there",
			 (unsigned long long)cap->cpus_offline, cap->cpus_offline == 1 ? "" : "s",
			 cap->cpus_offline == 1 ? "its" : "their");
	fg_buf_release(&b);
}

/*
 * The input ended early: say so, and what is known of the capture.  A
 * stream cut after its header (fg-sample killed, its disk full) is still
 * named as far as it goes; exit status 0.
 */
static void incomplete(const char *name, const struct fg_capture *cap, const char *cut)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_capture_describe(cap, &b);
	fg_warnx("'%s': incomplete capture: %s, without the summary record that ends a run "
		 "(fg-sample was killed, or its output could not be written); named what it "
		 "holds: %s",
		 name, cut, b.data);
	fg_buf_release(&b);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* --inline keeps one descriptor per file with DWARF */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --header: perf script --header's comments, from the stream's header */
static int write_header(struct fg_rec_reader *r)
{
	const struct fg_rec_header *h;
	int rc = fg_rec_read_header(r, &h);

	if (rc < 0)
		return rc;
	struct fg_psheader_info info = {
	    .host = h->host,
	    .release = h->release,
	    .event = "cpu-clock",
	    .freq = h->freq,
	    .has_ref = h->clock == FG_CLOCK_MONOTONIC && h->start_realtime_ns,
	    .ref_realtime_ns = h->start_realtime_ns,
	    .ref_clock_ns = h->start_ns,
	};
	fg_psheader_write(stdout, &info); /* a write error shows when stdout is closed */
	return 0;
}

/*
 * A capture is read only by the user who wrote it, and root reads its own
 * alone.  As perf refuses a perf.data that is not the running user's or
 * root's: a capture another user wrote could name any file on the system,
 * and root reading it would read those files.  The other way round, root's
 * capture holds what other users may not see (kernel addresses, the
 * mappings of every process): made readable by mistake, it is not named for
 * them.  A pipe tells nothing: what comes through it is the reader's to see.
 */
static void check_owner(int fd, const char *name)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid == geteuid())
		return;
	if (geteuid() != 0 && st.st_uid == 0)
		fg_diex("refusing to read '%s': it belongs to root, not to you; a capture of "
			"root's holds kernel addresses and the mappings of processes that are not "
			"yours to see (-f to read it anyway)",
			name);
	fg_diex("refusing to read '%s': it belongs to user %lu, not to you or root; a capture "
		"someone else wrote can make fg-sym read files they cannot (-f to read it anyway)",
		name, (unsigned long)st.st_uid);
}

/* Name every record of the input: 0 at its end, or the reader's error. */
static int name_records(struct fg_rec_reader *r, struct fg_symbolizer *s, struct fg_capture *cap,
			bool header, bool live, struct dbgi *dbgi, int fd)
{
	struct fg_rec rec;
	int rc = 0;

	if (header)
		rc = write_header(r);
	while (rc >= 0) {
		/* the input pauses: let a live pipeline see what is named so far */
		if (live && !fg_rec_reader_has_buffered(r) &&
		    ((dbgi->c && wait_input(s, dbgi->c, fd) < 0) || fflush(stdout) != 0))
			break;
		rc = fg_rec_next(r, &rec);
		if (rc <= 0)
			break;
		fg_capture_add(cap, &rec);
		if (fg_symbolizer_record(s, stdout, &rec) < 0)
			break;
	}
	return rc;
}

/*
 * The same, a file mapped rather than read, and guarded: if it shrinks
 * under fg-sym, the SIGBUS of reading what is gone jumps back here, and is
 * bad input like any other (a sample's text is written whole or not at all).
 */
static int name_all(struct fg_rec_reader *r, struct fg_symbolizer *s, struct fg_capture *cap,
		    bool header, bool live, struct dbgi *dbgi, int fd)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1))
		return fg_rec_reader_fault(r);
	/* unguarded, a file is read() */
	if (!live && fg_rec_reader_guard(r, &jb) == 0)
		fg_rec_reader_map(r);
	int rc = name_records(r, s, cap, header, live, dbgi, fd);

	/* nothing reads the records after this: the jump's frame ends here */
	(void)fg_rec_reader_guard(r, NULL);
	return rc;
}

/* one run: the options, the input, the naming, the output */
struct run {
	struct fg_sym_args a;
	struct dbgi dbgi;
	int fd; /* the input */
	struct fg_atomic out;
	struct fg_symbolizer *s;
	struct fg_rec_reader *r;
	struct fg_capture cap;
	int status;
};

static void parse_options(struct fg_sym_args *a, int argc, char **argv)
{
	char why[256];
	int c;

	while ((c = getopt_long(argc, argv, FG_SYM_SHORTOPTS, longopts, NULL)) != -1) {
		fg_help_or_version(c, usage_text);
		fg_usage_check(fg_sym_arg(a, c, optarg, why, sizeof(why)), usage_text, why);
	}
	fg_usage_check(fg_sym_args_check(a, argv + optind, why, sizeof(why)), usage_text, why);
}

/* the input, refused if another user wrote it (unless -f) */
static void open_input(struct run *run)
{
	const char *input = run->a.input;

	run->fd = input ? open(input, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (run->fd < 0)
		fg_die("cannot open '%s'", input);
	if (!run->a.force)
		check_owner(run->fd, input ? input : "<stdin>");
}

/* -o's file as standard output.  False, said, when it cannot be opened. */
static bool open_output(struct run *run)
{
	static char outbuf[1 << 16];
	const char *output = run->a.output;

	if (output) {
		/* through a temporary file, renamed into place once all is written; 0600 */
		int err = fg_atomic_open(&run->out, output, FG_OUT_PRIVATE | FG_OUT_FD);

		if (err < 0 || dup2(run->out.fd, STDOUT_FILENO) < 0) {
			fg_warne(err < 0 ? -err : errno, "cannot open '%s'", output);
			return false;
		}
		close(run->out.fd);
		run->out.fd = -1;
	}
	/* with a NULL buffer, glibc ignores the size and writes 4 KiB at a time */
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	return true;
}

/* what the naming needs from the system: the kallsyms cache, descriptors, debuginfod */
static void prepare(struct run *run)
{
	static char cache[PATH_MAX];
	struct fg_sym_opts *o = &run->a.sym;

	if (!run->a.no_cache && !o->kallsyms)
		o->kallsyms_cache = fg_user_cache_dir(cache, sizeof(cache), NULL);
	if (o->inline_frames || o->srcline)
		raise_fd_limit();
	run->dbgi = (struct dbgi){.urls = run->a.debuginfod_urls,
				  .off = run->a.no_debuginfod,
				  .budget_ms = run->a.debuginfod_budget_ms};
	debuginfod_start(&run->dbgi);
	o->debuginfod = run->dbgi.c;
}

/* Name the records of the input, and say how it ended. */
static void name_input(struct run *run)
{
	const char *input = run->a.input;
	struct stat st;
	bool live;
	int rc;

	/* a file never pauses: flush only what comes through a pipe or the like */
	live = fstat(run->fd, &st) < 0 || !S_ISREG(st.st_mode);
	run->s = fg_symbolizer_new(&run->a.sym);
	run->r = fg_rec_reader_new(run->fd, input ? input : "<stdin>");
	rc = name_all(run->r, run->s, &run->cap, run->a.header, live, &run->dbgi, run->fd);
	/* the samples waiting for debug files, within the budget (a write error shows below) */
	(void)fg_symbolizer_flush(run->s, stdout, true);
	/* everything before the end or the damage is written first */
	fflush(stdout);
	if (rc < 0 && rc == -EPROTO && fg_rec_reader_truncated(run->r)) {
		incomplete(fg_rec_reader_name(run->r), &run->cap, fg_rec_reader_error(run->r));
	} else if (rc < 0) {
		if (rc == -EPROTO)
			fg_warnx("'%s': %s", fg_rec_reader_name(run->r),
				 fg_rec_reader_error(run->r));
		else
			fg_warne(-rc, "cannot read '%s'", fg_rec_reader_name(run->r));
		run->status = FG_EXIT_FAIL;
	} else if (rc == 0 && !run->cap.ended) {
		char cut[64];

		snprintf(cut, sizeof(cut), "the stream ends at byte %llu",
			 (unsigned long long)fg_rec_reader_offset(run->r));
		incomplete(fg_rec_reader_name(run->r), &run->cap, cut);
	}
}

/* standard output closed, -o's file committed, the summary */
static void finish(struct run *run)
{
	const char *output = run->a.output;
	const struct fg_sym_opts *o = &run->a.sym;
	bool ok = fg_close_stdout() == FG_EXIT_OK;
	int rc;

	if (!ok)
		run->status = FG_EXIT_FAIL;
	if (output && !ok)
		fg_atomic_abort(&run->out);
	else if (output && (rc = fg_atomic_commit(&run->out)) < 0) {
		fg_warne(-rc, "cannot write '%s'", output);
		run->status = FG_EXIT_FAIL;
	}
	if (!run->a.quiet)
		summary(run->s, &run->cap, o->inline_frames || o->srcline, &run->dbgi, o->verbose);
}

/* the exit status, everything released */
static int release(struct run *run)
{
	fg_rec_reader_free(run->r);
	fg_symbolizer_free(run->s);
	/* a transfer under way ends at its next progress call: within about a second */
	fg_debuginfod_free(run->dbgi.c);
	if (run->a.input)
		close(run->fd);
	return run->status;
}

int main(int argc, char **argv)
{
	struct run run = {.a = FG_SYM_ARGS_INIT, .status = FG_EXIT_OK};

	fg_set_progname(argv[0]);
	run.a.sym.warn = fg_log_warnx;
	parse_options(&run.a, argc, argv);
	fg_heap_huge_begin(FG_HEAP_HUGE_MAX);
	open_input(&run);
	if (!open_output(&run))
		return FG_EXIT_FAIL;
	prepare(&run);
	name_input(&run);
	finish(&run);
	return release(&run);
}
