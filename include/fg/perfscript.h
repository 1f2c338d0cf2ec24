/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parsing the text `perf script` prints (and fg-sym writes, DESIGN.md contract 2):
 * one block per sample, a header line then one line per frame, leaf first, then a
 * blank line:
 *
 *	comm PID/TID [CPU] SECS.USECS: PERIOD EVENT: [PAYLOAD]
 *		ADDR SYMBOL+0xOFF (MODULE)
 *		...
 *
 * Every header field but the comm, the thread id and one of CPU, time or event
 * is optional, as perf's -F allows; the comm may hold spaces.  A sample
 * recorded without a call chain puts its one frame on the header line, after
 * the event (the payload then is that frame).  `perf script -F+srcline` adds,
 * under a frame, a line with its source position.
 *
 * The functions here look at one line, in place: what they return points into
 * the line, nothing is copied or allocated, and nothing is printed.
 */
#ifndef FG_PERFSCRIPT_H
#define FG_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte range of a line. */
struct fg_span {
	const char *p;
	size_t len;
};

struct fg_ps_header {
	struct fg_span comm;  /* trimmed; may hold spaces */
	struct fg_span pid;   /* empty when perf printed one number only (then it is the tid) */
	struct fg_span tid;
	uint64_t pid_num;     /* pid when printed, else the tid */
	uint64_t tid_num;
	bool has_period;
	uint64_t period;      /* the sample's weight when has_period */
	struct fg_span event; /* without its final ':'; empty when the line names none */
	struct fg_span rest;  /* after the event: a tracepoint's payload, or the sample's frame */
};

struct fg_ps_frame {
	struct fg_span addr;   /* hexadecimal, as printed */
	struct fg_span sym;    /* as printed, without a final +0xOFFSET; may be empty */
	uint64_t offset;       /* that offset, 0 when none was printed */
	struct fg_span module; /* inside the parentheses; may hold spaces and parentheses */
};

/*
 * Parse a sample's header line.  0 on success; -EINVAL when the line is not a
 * header; -ERANGE when the period does not fit in 64 bits.
 */
int fg_ps_parse_header(const char *line, size_t len, struct fg_ps_header *h);

/* Parse a frame line ("ADDR SYMBOL (MODULE)", any indentation).  0 or -EINVAL. */
int fg_ps_parse_frame(const char *line, size_t len, struct fg_ps_frame *f);

/*
 * Whether an indented line is a source position as `perf script -F+srcline`
 * prints it under a frame ("  /src/file.c:123", "  ??:0", "  libc.so.6[9d3a]").
 * *src is the position without the indentation.
 */
bool fg_ps_is_srcline(const char *line, size_t len, struct fg_span *src);

/*
 * The length of an event name without perf's modifiers ("cycles:uppp" ->
 * "cycles", "cpu-clock:uhH" -> "cpu-clock"; "sched:sched_switch" is kept whole).
 */
size_t fg_ps_event_base_len(const char *event, size_t len);

/* Whether a module names the kernel or a kernel module ("[kernel.kallsyms]", vmlinux, *.ko). */
bool fg_ps_module_is_kernel(const char *mod, size_t len);

/* Whether a module is JIT code (a perf map "/tmp/perf-PID.map", or a jitdump "jitted-*.so"). */
bool fg_ps_module_is_jit(const char *mod, size_t len);

/* A whole decimal number: 0, -EINVAL when it is not one, -ERANGE beyond 64 bits. */
int fg_span_u64(struct fg_span s, uint64_t *out);

/* The value of hexadecimal digits (the last 16 when there are more), 0 for none. */
uint64_t fg_span_hex(struct fg_span s);

static inline bool fg_span_eq(struct fg_span s, const char *lit)
{
	size_t n = 0;

	while (lit[n])
		n++;
	return s.len == n && (n == 0 || __builtin_memcmp(s.p, lit, n) == 0);
}

#endif
