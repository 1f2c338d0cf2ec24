// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-sym: name the frames of a record stream (fg-record(5)) and write them
 * as `perf script` text.  The naming is in lib/symbolize.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/psheader.h"
#include "fg/record.h"
#include "fg/symbolize.h"

static const char usage_text[] =
	"usage: fg-sym [-qv] [--header] [--inline] [--srcline] [--no-demangle]\n"
	"              [--kallsyms FILE] [--no-cache] [--proc-root DIR] [--symfs DIR]\n"
	"              [-o FILE] [FILE]\n"
	"\n"
	"Name the frames of fg-sample's records (FILE or standard input) and write\n"
	"them as perf script text.\n"
	"\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"      --header         start with perf script --header's comments: the host,\n"
	"                       the sampling frequency, the clock's wall-clock time\n"
	"      --inline         expand inlined functions (DWARF)\n"
	"      --srcline        add the source file and line of each frame (DWARF)\n"
	"      --no-demangle    keep C++ and Rust names as they are in the symbol table\n"
	"      --kallsyms FILE  kernel symbols from FILE instead of /proc/kallsyms\n"
	"      --no-cache       neither read nor write the cache of /proc/kallsyms\n"
	"                       (${XDG_CACHE_HOME:-~/.cache}/fg/kallsyms)\n"
	"      --proc-root DIR  read DIR/PID/maps and the like instead of /proc\n"
	"      --symfs DIR      look for mapped files and debug files under DIR\n"
	"  -q, --quiet          no summary on standard error\n"
	"  -v, --verbose        warn about each file that cannot be read\n"
	"  -h, --help           print this help\n"
	"  -V, --version        print the version\n";

enum {
	OPT_INLINE = 256,
	OPT_SRCLINE,
	OPT_NO_DEMANGLE,
	OPT_KALLSYMS,
	OPT_NO_CACHE,
	OPT_PROC_ROOT,
	OPT_SYMFS,
	OPT_HEADER,
};

static const struct option longopts[] = {
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "help", no_argument, NULL, 'h' },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "output", required_argument, NULL, 'o' },
	{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "srcline", no_argument, NULL, OPT_SRCLINE },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static noreturn void usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

static void lib_warn(void *arg, const char *fmt, ...) FG_PRINTF(2, 3);
static void lib_warn(void *arg, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	(void)arg;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fg_warnx("%s", msg);
}

static void summary(const struct fg_symbolizer *s, uint64_t lost, bool dwarf)
{
	struct fg_sym_stats st;
	uint64_t unnamed = 0, nosrc = 0;
	char why[512] = "";
	size_t n = 0;

	fg_symbolizer_stats(s, &st);
	for (int i = 0; i < FG_UNNAMED_COUNT; i++) {
		unnamed += st.unnamed[i];
		n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%llu %s", i ? ", " : "",
				      (unsigned long long)st.unnamed[i], fg_unnamed_reasons[i]);
	}
	fg_warnx("%llu samples, %llu frames named, %llu unnamed (%s); %llu files read",
		 (unsigned long long)st.samples, (unsigned long long)st.named,
		 (unsigned long long)unnamed, why, (unsigned long long)st.files);
	if (st.bad_minidebug)
		fg_warnx("%llu files with an unreadable .gnu_debugdata (MiniDebugInfo); -v names them",
			 (unsigned long long)st.bad_minidebug);
	if (dwarf) {
		n = 0;
		for (int i = 0; i < FG_NOSRC_COUNT; i++) {
			nosrc += st.nosrc[i];
			n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%llu %s", i ? ", " : "",
					      (unsigned long long)st.nosrc[i], fg_nosrc_reasons[i]);
		}
		fg_warnx("%llu named frames without source information (%s)",
			 (unsigned long long)nosrc, why);
	}
	if (lost)
		fg_warnx("%llu samples lost by the sampler", (unsigned long long)lost);
}

/* ${XDG_CACHE_HOME:-$HOME/.cache}/fg/kallsyms, or NULL */
static const char *cache_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	/* the XDG base directory rules: a relative path is to be ignored */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/fg/kallsyms", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/fg/kallsyms", home);
	else
		return NULL;
	return n > 0 && (size_t)n < size ? buf : NULL;
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
	struct fg_ps_info info = {
		.host = h->host,
		.release = h->release,
		.event = "cpu-clock",
		.freq = h->freq,
		.has_ref = h->clock == FG_CLOCK_MONOTONIC && h->start_realtime_ns,
		.ref_realtime_ns = h->start_realtime_ns,
		.ref_clock_ns = h->start_ns,
	};
	fg_ps_write_header(stdout, &info); /* a write error shows when stdout is closed */
	return 0;
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct fg_sym_opts o = { .warn = lib_warn };
	const char *input = NULL, *output = NULL;
	bool quiet = false, no_cache = false, header = false, live;
	char cache[PATH_MAX];
	struct stat st;
	struct fg_symbolizer *s;
	struct fg_rec_reader *r;
	struct fg_rec rec;
	uint64_t lost = 0;
	int c, fd, rc = 0, status = FG_EXIT_OK;

	fg_set_progname("fg-sym");
	while ((c = getopt_long(argc, argv, "ho:qvV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(FG_EXIT_OK);
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'V':
			fg_print_version();
			return FG_EXIT_OK;
		case OPT_HEADER:
			header = true;
			break;
		case OPT_INLINE:
			o.inline_frames = true;
			break;
		case OPT_KALLSYMS:
			o.kallsyms = optarg;
			break;
		case OPT_NO_CACHE:
			no_cache = true;
			break;
		case OPT_NO_DEMANGLE:
			o.no_demangle = true;
			break;
		case OPT_PROC_ROOT:
			o.proc_root = optarg;
			break;
		case OPT_SRCLINE:
			o.srcline = true;
			break;
		case OPT_SYMFS:
			o.symfs = optarg;
			break;
		default:
			usage(FG_EXIT_USAGE);
		}
	}
	if (argc - optind > 1) {
		fg_warnx("too many operands");
		usage(FG_EXIT_USAGE);
	}
	if (optind < argc && strcmp(argv[optind], "-") != 0)
		input = argv[optind];
	fd = input ? open(input, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0)
		fg_die("cannot open '%s'", input);
	if (output && !freopen(output, "w", stdout))
		fg_die("cannot open '%s'", output);
	/* with a NULL buffer, glibc ignores the size and writes 4 KiB at a time */
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (!no_cache && !o.kallsyms)
		o.kallsyms_cache = cache_path(cache, sizeof(cache));
	if (o.inline_frames || o.srcline)
		raise_fd_limit();

	/* a file never pauses: flush only what comes through a pipe or the like */
	live = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode);
	s = fg_symbolizer_new(&o);
	r = fg_rec_reader_new(fd, input ? input : "<stdin>");
	if (header)
		rc = write_header(r);
	while (rc == 0) {
		/* the input pauses: let a live pipeline see what is named so far */
		if (live && !fg_rec_reader_has_buffered(r) && fflush(stdout) != 0)
			break;
		rc = fg_rec_next(r, &rec);
		if (rc <= 0)
			break;
		rc = 0;
		switch (rec.type) {
		case FG_REC_SAMPLE: {
			const struct fg_rec_sample *sm = rec.sample;
			struct fg_sym_sample smp = {
				.comm = sm->comm,
				.pid = sm->pid,
				.tid = sm->tid,
				.cpu = sm->cpu,
				.time_ns = sm->time_ns,
				.weight = sm->weight,
				.event = sm->flags & FG_SAMPLE_F_WEIGHT_NS ? "offcpu-time" : "cpu-clock",
				.kips = rec.kips,
				.nkips = sm->nr_kernel,
				.uips = rec.uips,
				.nuips = sm->nr_user,
			};
			if (fg_symbolizer_write(s, stdout, &smp) < 0)
				goto done;
			break;
		}
		case FG_REC_MAPPING: {
			const struct fg_rec_mapping *mp = rec.mapping;
			struct fg_sym_mapping m = {
				.pid = mp->pid,
				.time_ns = mp->time_ns,
				.start = mp->start,
				.end = mp->end,
				.pgoff = mp->pgoff,
				.dev_major = mp->maj,
				.dev_minor = mp->min,
				.inode = mp->ino,
				.path = rec.path,
				.exec = mp->prot & PROT_EXEC,
			};
			if (mp->flags & FG_MAP_F_BUILD_ID) {
				m.build_id = mp->build_id;
				m.build_id_len = mp->build_id_len;
			}
			fg_symbolizer_mapping(s, &m);
			break;
		}
		case FG_REC_COMM:
			if (rec.comm->flags & FG_COMM_F_EXEC)
				fg_symbolizer_exec(s, rec.comm->pid, rec.comm->time_ns);
			break;
		case FG_REC_FORK:
			fg_symbolizer_fork(s, rec.task->pid, rec.task->ppid);
			break;
		case FG_REC_EXIT:
			if (rec.task->pid == rec.task->tid)
				fg_symbolizer_exit(s, rec.task->pid);
			break;
		case FG_REC_LOST:
			lost += rec.lost->count;
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		/* everything before the bad record is written first */
		fflush(stdout);
		if (rc == -EPROTO)
			fg_warnx("'%s': %s", fg_rec_reader_name(r), fg_rec_reader_error(r));
		else
			fg_warne(-rc, "cannot read '%s'", fg_rec_reader_name(r));
		status = FG_EXIT_FAIL;
	}
done:
	if (fg_close_stdout() != FG_EXIT_OK)
		status = FG_EXIT_FAIL;
	if (!quiet)
		summary(s, lost, o.inline_frames || o.srcline);
	fg_rec_reader_free(r);
	fg_symbolizer_free(s);
	if (input)
		close(fd);
	return status;
}
