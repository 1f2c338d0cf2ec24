// SPDX-License-Identifier: BSD-2-Clause
/*
 * pystack [-lt] PID: the Python stack of each thread of a CPython process,
 * read from its memory by lib/python -- the oracle the BPF walk is checked
 * against.  Prints
 *
 *	python 3.12 /opt/python/3.12/lib/libpython3.12.so.1.0
 *	thread 4242 python3.12
 *		py::hot:/path/prog.py
 *		py::main:/path/prog.py
 *		py::<module>:/path/prog.py
 *
 * one "thread TID COMM" line for each thread state (newest first; TID -1
 * when not known, COMM "-" when no such thread is in /proc), then its frames
 * innermost first, with ":LINE" (the function's first line) with -l.  With
 * -t the thread line goes on with "tstate ADDR tss ADDR": the thread state's
 * address, and the one its pthread_getspecific() slot of CPython's
 * autoTSSkey holds (fg_py_tss_tstate, the BPF walk's way in), the same when
 * both are right.  What
 * failed is counted on standard error.  Exit 1 when the process runs no
 * CPython, or a version lib/python does not know, or is gone.
 *
 * pystack --offsets 3.X prints the table's layout of 3.X as
 * tests/data/python/offsets.c prints the headers' ("NAME VALUE" a line).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/python.h"
#include "fg/util.h"

#define MAX_THREADS 256

static const char usage[] = "usage: pystack [-lt] PID\n"
			    "       pystack --offsets 3.X\n";

static int print_offsets(const char *version)
{
	unsigned major, minor;
	const struct fg_py_offsets *o;
	struct fg_py_field f[64];
	size_t n;

	if (sscanf(version, "%u.%u", &major, &minor) != 2)
		fg_usage_error(usage, "invalid version '%s'", version);
	o = fg_py_offsets(major, minor);
	if (!o) {
		fg_warnx("python %u.%u: not in the table", major, minor);
		return FG_EXIT_FAIL;
	}
	n = fg_py_offsets_fields(o, f, FG_ARRAY_SIZE(f));
	printf("version %u.%u\n", major, minor);
	for (size_t i = 0; i < n && i < FG_ARRAY_SIZE(f); i++)
		printf("%s %d\n", f[i].name, f[i].value);
	return fg_close_stdout();
}

/* the thread's name in /proc, "-" when it has none (gone, or not a tid of pid) */
static void comm(pid_t pid, int64_t tid, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(buf, len, "-");
	snprintf(path, sizeof(path), "/proc/%d/task/%lld/comm", (int)pid, (long long)tid);
	if (tid <= 0 || !(f = fopen(path, "re")))
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void report(const struct fg_py_stats *s)
{
	if (s->read_errors)
		fg_warnx("%llu reads failed", (unsigned long long)s->read_errors);
	if (s->bad_objects)
		fg_warnx("%llu objects not of the expected type",
			 (unsigned long long)s->bad_objects);
	if (s->names_cut)
		fg_warnx("%llu names cut", (unsigned long long)s->names_cut);
	if (s->depth_limit)
		fg_warnx("%llu stacks cut at %d frames", (unsigned long long)s->depth_limit,
			 FG_PY_MAX_DEPTH);
	if (s->thread_limit)
		fg_warnx("more than %d threads", MAX_THREADS);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"offsets", required_argument, NULL, 'O'},
	    {0},
	};
	static struct fg_py_thread t[MAX_THREADS];
	static struct fg_py_frame f[FG_PY_MAX_DEPTH];
	char name[FG_PY_NAME_MAX + FG_PY_FILE_MAX + 32], tname[64];
	bool line = false, tss = false;
	struct fg_py py;
	uint64_t pid;
	size_t nt, nf;
	int c, err;

	while ((c = getopt_long(argc, argv, "hlt", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			return FG_EXIT_OK;
		case 'l':
			line = true;
			break;
		case 'O':
			return print_offsets(optarg);
		case 't':
			tss = true;
			break;
		default:
			fg_usage_error(usage, NULL, NULL);
		}
	}
	if (argc - optind != 1)
		fg_usage_error(usage, NULL, NULL);
	if (fg_parse_u64(argv[optind], 1, INT32_MAX, &pid) < 0)
		fg_usage_error(usage, "invalid pid '%s'", argv[optind]);
	err = fg_py_open(&py, "/proc", (pid_t)pid);
	if (err == -ENOTSUP && py.major)
		fg_warnx("process %d: python %u.%u is not supported", (int)pid, py.major, py.minor);
	else if (err == -ENOTSUP)
		fg_warnx("process %d: python of an unknown version", (int)pid);
	else if (err == -EPROTO)
		fg_warnx("process %d: python %u.%u describes a layout other than the table's "
			 "(free-threaded?)",
			 (int)pid, py.major, py.minor);
	else if (err == -ENOENT)
		fg_warnx("process %d: no python interpreter", (int)pid);
	else if (err)
		fg_warne(-err, "process %d", (int)pid);
	if (!err)
		err = fg_py_threads(&py, t, MAX_THREADS, &nt);
	if (err) {
		if (err != -ENOTSUP && err != -ENOENT && err != -EPROTO && py.off)
			fg_warne(-err, "process %d: cannot read its threads", (int)pid);
		report(&py.stats);
		fg_py_release(&py);
		return FG_EXIT_FAIL;
	}
	printf("python %u.%u %s\n", py.major, py.minor, py.path);
	for (size_t i = 0; i < nt; i++) {
		comm((pid_t)pid, t[i].native_tid, tname, sizeof(tname));
		printf("thread %lld %s", (long long)t[i].native_tid, tname);
		if (tss) {
			uint64_t ts;

			if (fg_py_tss_tstate(&py, t[i].thread_id, &ts) < 0)
				ts = 0;
			printf(" tstate 0x%llx tss 0x%llx", (unsigned long long)t[i].tstate,
			       (unsigned long long)ts);
		}
		putchar('\n');
		if (!t[i].frame || fg_py_stack(&py, t[i].frame, f, FG_PY_MAX_DEPTH, &nf) < 0)
			nf = 0;
		for (size_t k = 0; k < nf; k++) {
			fg_py_frame_name(&f[k], line, name, sizeof(name));
			printf("\t%s\n", name);
		}
	}
	report(&py.stats);
	fg_py_release(&py);
	return fg_close_stdout();
}
