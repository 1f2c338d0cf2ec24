/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parsing the text `perf script` prints (and fg-sym writes; fg-fold(1),
 * "Input formats", and fg-sym(1) describe it): one block per sample, a header
 * line then one line per frame, leaf first, then a blank line:
 *
 *	comm PID/TID [CPU] SECS.USECS: PERIOD EVENT: [PAYLOAD]
 *		ADDR SYMBOL+0xOFF (MODULE)
 *		...
 *
 * perf's -F picks and orders the fields: every header field but the thread id
 * is optional (perf prints them in this order whatever -F's order), and the
 * comm may hold spaces.  A header with a CPU, a time or an event is "strong":
 * it cannot be taken for anything else.  One without ("comm TID [PERIOD]", -F
 * comm,tid,period,ip,sym) is "weak": a reader believes it only when a frame
 * follows.  So is one without a thread id ("comm", "comm event:", "event:":
 * -F comm,ip,sym, -F comm,event,ip,sym); a number in a weak header is the
 * thread id only when padded as perf pads one ("%5d"), as a comm may hold
 * numbers.  A sample recorded without a call chain (or printed with -G) puts
 * its one frame on the header line, after the event, perhaps between other
 * fields (-F +addr, +data_src, +insn, +phys_addr).  `perf script -F+srcline`
 * adds, under a frame, a line with its source position; -F +insn, +srccode,
 * +brstack, +ipc, +phys_addr add lines of their own (fg_ps_is_extra_line).
 * The --show-*-events options interleave side-band records, which start like
 * a header and then name the record: "comm TID TIME: PERF_RECORD_MMAP2 ...".
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
	struct fg_span comm; /* trimmed; may hold spaces */
	struct fg_span pid;  /* empty when perf printed one number only (then it is the tid) */
	struct fg_span tid;
	uint64_t pid_num; /* pid when printed, else the tid */
	uint64_t tid_num;
	bool has_period;
	uint64_t period;       /* the sample's weight when has_period */
	struct fg_span time;   /* "SECS.FRACTION" without its ':'; empty when not printed */
	struct fg_span event;  /* without its final ':'; empty when the line names none */
	struct fg_span rest;   /* after the event: a tracepoint's payload, or the sample's frame */
	bool weak;	       /* neither CPU, time nor event: believe it if a frame follows */
	struct fg_span record; /* FG_PS_SIDEBAND: "PERF_RECORD_COMM" (no final ':') */
};

struct fg_ps_frame {
	struct fg_span addr;   /* hexadecimal, as printed */
	struct fg_span sym;    /* as printed, without a final +0xOFFSET; may be empty */
	uint64_t offset;       /* that offset, 0 when none was printed */
	struct fg_span module; /* inside the parentheses; may hold spaces and parentheses */
};

/* fg_ps_parse_header's answer for a side-band record ("... PERF_RECORD_LOST lost 4") */
#define FG_PS_SIDEBAND 1

/*
 * Parse a sample's header line.  0 for a sample's header; FG_PS_SIDEBAND for a
 * side-band record (h->record names it, h->rest is what follows the name, the
 * comm and ids are set as for a sample); -EINVAL when the line is neither;
 * -ERANGE when the period does not fit in 64 bits.
 */
int fg_ps_parse_header(const char *line, size_t len, struct fg_ps_header *h);

/*
 * The same, by the general parser alone: fg_ps_parse_header reads perf's
 * default header ("COMM PID/TID [CPU] SECS.FRAC: PERIOD EVENT:") by a shorter
 * path first, and the tests check that both give the same.
 */
int fg_ps_parse_header_general(const char *line, size_t len, struct fg_ps_header *h);

/* where the fields of perf's default header lie in a line (offsets) */
struct fg_ps_shape {
	uint32_t len; /* the line's; 0: none */
	uint32_t comm, comm_len, pid, slash, tid, tid_end, time, time_end, period, period_end;
	uint32_t event, end;
};

#define FG_PS_MEMO_SLOTS 256
#define FG_PS_MEMO_LINE 128

/*
 * The default headers read before, by their shape.  A header that differs
 * from one of them only in its digits (another thread, CPU, time or period)
 * has its fields where that one had them: fg_ps_parse_header_memo reads it
 * without parsing it again.  Zeroed to start; about 46 KB.
 */
struct fg_ps_memo {
	struct fg_ps_memo_ent {
		struct fg_ps_shape shape;
		char line[FG_PS_MEMO_LINE];
	} ents[FG_PS_MEMO_SLOTS];
	uint64_t hits; /* headers read by a shape remembered */
};

/* fg_ps_parse_header, remembering the default headers' shapes in m */
int fg_ps_parse_header_memo(struct fg_ps_memo *m, const char *line, size_t len,
			    struct fg_ps_header *h);

/*
 * Parse a frame line: "ADDR SYMBOL (MODULE)", any indentation, or, when the
 * line starts with a tab (perf's call-chain lines), "ADDR [SYMBOL]" without a
 * module (-F ip,sym).  0 or -EINVAL.
 */
int fg_ps_parse_frame(const char *line, size_t len, struct fg_ps_frame *f);

/*
 * Where the module of a frame ("... SYMBOL (MODULE)") opens: the index of its
 * '(' in line[from, end), or 0 when there is none.  The '(' follows a space,
 * and the module runs to the ')' that ends the line.  It is the group that
 * ')' closes, parentheses balanced, when that group is a path or a "[name]"
 * ("/opt/App (x86)/x", "/bin/x (deleted)", "[kernel.kallsyms]").  Otherwise
 * (a path with a lone parenthesis: "/tmp/x)y/burn", "/tmp/a(b/burn") it is
 * the first group that starts with '/' or '['; failing that, the balanced
 * group ("(inlined)", "(bpf_prog_6deef7357e7b4530_x)").
 */
size_t fg_ps_module_open(const char *line, size_t from, size_t end);

/*
 * Find the frame in what follows a header's event (h->rest) when perf printed
 * the sample's one frame on the header line: "ADDR SYMBOL (MODULE)", perhaps
 * after other fields (-F +addr, +data_src: "0  1e05080021 |OP N/A|... ADDR
 * SYM (MOD)") and before others (" insn: 48 89 c2", -F +phys_addr's number).
 * The address is the first hexadecimal word whose symbol does not start with
 * another number or a data source.  0 or -EINVAL (no frame there).
 */
int fg_ps_find_frame(const char *rest, size_t len, struct fg_ps_frame *f);

/*
 * Whether a line is one that perf script prints in a sample besides its
 * frames: -F +insn / +insnlen ("insn: 48 89 c2", "ilen: 3"), +ipc ("IPC:
 * ..."), +srccode ("|16   source"), +brstack / +brstacksym ("0x1/0x2/P/-/-/0
 * ..."), or a lone number (+phys_addr).  Frames and source positions are not.
 */
bool fg_ps_is_extra_line(const char *line, size_t len);

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
