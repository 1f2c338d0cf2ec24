// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the perf-script line parser and the folder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/fold.h"
#include "fg/foldopts.h"
#include "fg/folded.h"
#include "fg/perfscript.h"
#include "fg/symname.h"
#include "fg/util.h"
#include "unit.h"

static int span_is(struct fg_span s, const char *lit)
{
	return fg_span_eq(s, lit);
}

#define CHECK_SPAN(s, lit)                                                                         \
	do {                                                                                       \
		if (!span_is((s), (lit))) {                                                        \
			printf("# %s:%d: '%.*s' != '%s'\n", __FILE__, __LINE__, (int)(s).len,      \
			       (s).p ? (s).p : "", (lit));                                         \
			unit_cur_failed = 1;                                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static int header(const char *line, struct fg_ps_header *h)
{
	return fg_ps_parse_header(line, strlen(line), h);
}

static int frame(const char *line, struct fg_ps_frame *f)
{
	return fg_ps_parse_frame(line, strlen(line), f);
}

TEST(header_full)
{
	struct fg_ps_header h;

	CHECK_INT(header("java 24636/25607 [000] 4794564.109216:     250000 cycles:uppp: ", &h), 0);
	CHECK_SPAN(h.comm, "java");
	CHECK_SPAN(h.pid, "24636");
	CHECK_SPAN(h.tid, "25607");
	CHECK_INT(h.pid_num, 24636);
	CHECK_INT(h.tid_num, 25607);
	CHECK(h.has_period);
	CHECK_INT(h.period, 250000);
	CHECK_SPAN(h.event, "cycles:uppp");
	CHECK_INT(h.rest.len, 0);
}

TEST(header_variants)
{
	struct fg_ps_header h;

	/* only the tid, no period */
	CHECK_INT(header("java 12688 [002] 6544038.708352: cpu-clock:", &h), 0);
	CHECK_INT(h.pid.len, 0);
	CHECK_SPAN(h.tid, "12688");
	CHECK_INT(h.pid_num, 12688);
	CHECK(!h.has_period);
	CHECK_SPAN(h.event, "cpu-clock");
	/* a comm with spaces, no cpu */
	CHECK_INT(header("V8 WorkerThread 25607 4794564.109216: cycles:", &h), 0);
	CHECK_SPAN(h.comm, "V8 WorkerThread");
	/* a comm holding a number */
	CHECK_INT(header("worker 3 1234/1235 [000] 1.5: 7 cycles:", &h), 0);
	CHECK_SPAN(h.comm, "worker 3");
	CHECK_SPAN(h.pid, "1234");
	/* no time */
	CHECK_INT(header("node-v011 31912 cpu-clock: ", &h), 0);
	CHECK_SPAN(h.comm, "node-v011");
	CHECK_SPAN(h.event, "cpu-clock");
	/* FlameGraph issue 259: a one-letter comm */
	CHECK_INT(header("t 99076 10314749.002559: cpu-clock:", &h), 0);
	CHECK_SPAN(h.comm, "t");
	/* padded comm, and the frame of a sample without a call chain on the same line */
	CHECK_INT(header("           false 39654 19115.489713:          1 cycles:u:  "
			 "ffffffff9b201293 [unknown] ([unknown])",
			 &h),
		  0);
	CHECK_SPAN(h.comm, "false");
	CHECK_SPAN(h.event, "cycles:u");
	CHECK_SPAN(h.rest, "ffffffff9b201293 [unknown] ([unknown])");
	/* a tracepoint's payload */
	CHECK_INT(header("f  9566 [001] 18490161.191159: kfree: "
			 "call_site=ffffffff81092295 ptr=(nil)",
			 &h),
		  0);
	CHECK_SPAN(h.comm, "f");
	CHECK_SPAN(h.event, "kfree");
	CHECK_SPAN(h.rest, "call_site=ffffffff81092295 ptr=(nil)");
	CHECK(!h.has_period);
}

TEST(header_rejects)
{
	struct fg_ps_header h;

	CHECK_INT(header("", &h), -EINVAL);
	CHECK_INT(header("   ", &h), -EINVAL);
	CHECK_INT(header("c e: PERF_RECORD_X:", &h), -EINVAL);
	CHECK_INT(header("\t  4005d0 main+0x10 (/bin/x)", &h), -EINVAL);
	CHECK_INT(header("  split7030.c:16", &h), -EINVAL);
	/* text without perf's padding of a tid, or the space after a lone comm: no header */
	CHECK_INT(header("garbage 1", &h), -EINVAL);
	CHECK_INT(header("a;b;c 12", &h), -EINVAL);
	CHECK_INT(header("garbage words", &h), -EINVAL);
	CHECK_INT(header("a;b;c 12 x y", &h), -EINVAL);
	/* these look like weak headers: believed only when a frame follows (fold.c) */
	CHECK_INT(header("garbage 1 ", &h), 0);
	CHECK(h.weak);
	CHECK_INT(header("garbage words ", &h), 0);
	CHECK(h.weak);
	CHECK_INT(header("a;b;c    12", &h), 0);
	CHECK(h.weak);
	CHECK_INT(header("a 1 1.0: 18446744073709551616 cycles:", &h), -ERANGE);
	CHECK_INT(header("a 1 1.0: 18446744073709551615 cycles:", &h), 0);
	CHECK(h.period == UINT64_MAX);
}

TEST(frame_parts)
{
	struct fg_ps_frame f;

	CHECK_INT(frame("\t7f533952bc77 _dl_check_map_versions+0x597 (/lib/ld-2.28.so)", &f), 0);
	CHECK_SPAN(f.addr, "7f533952bc77");
	CHECK_SPAN(f.sym, "_dl_check_map_versions");
	CHECK_INT(f.offset, 0x597);
	CHECK_SPAN(f.module, "/lib/ld-2.28.so");
	/* no offset; a symbol with spaces and parentheses */
	CHECK_INT(frame("  561aa58dc06e std::function<int (int, int)>::operator() (/home/u/p)", &f),
		  0);
	CHECK_SPAN(f.sym, "std::function<int (int, int)>::operator()");
	CHECK_SPAN(f.module, "/home/u/p");
	/* a module with spaces and parentheses */
	CHECK_INT(frame("\t1000 [unknown] (/opt/my app/libx (old).so)", &f), 0);
	CHECK_SPAN(f.sym, "[unknown]");
	CHECK_SPAN(f.module, "/opt/my app/libx (old).so");
	/* no symbol at all */
	CHECK_INT(frame("\t7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)", &f), 0);
	CHECK_INT(f.sym.len, 0);
	/* "+0x" inside a name is kept */
	CHECK_INT(frame("\t10 a+0xzz (m)", &f), 0);
	CHECK_SPAN(f.sym, "a+0xzz");
	CHECK_INT(f.offset, 0);
	CHECK_INT(frame("\t10 b+0xFFffFFffFFffFFff (m)", &f), 0);
	CHECK(f.offset == UINT64_MAX);
	CHECK_INT(frame("\t10 kernel+0x800047c022ec ([kernel.kallsyms])", &f), 0);
	CHECK_SPAN(f.sym, "kernel");
	CHECK_SPAN(f.module, "[kernel.kallsyms]");
}

TEST(frame_module_parentheses)
{
	struct fg_ps_frame f;

	/* a path with a lone ')' or '(' (issue 27) */
	CHECK_INT(frame("\t    5555555551ad main+0x4d (/tmp/x)y/burn)", &f), 0);
	CHECK_SPAN(f.sym, "main");
	CHECK_INT(f.offset, 0x4d);
	CHECK_SPAN(f.module, "/tmp/x)y/burn");
	CHECK_INT(frame("\t1 main+0x4d (/tmp/a(b/burn)", &f), 0);
	CHECK_SPAN(f.sym, "main");
	CHECK_SPAN(f.module, "/tmp/a(b/burn");
	CHECK_INT(frame("\t1 main+0x4d (/tmp/a (b/burn)", &f), 0);
	CHECK_SPAN(f.sym, "main");
	CHECK_SPAN(f.module, "/tmp/a (b/burn");
	CHECK_INT(frame("\t1 main+0x4d (/tmp/x) (y/burn)", &f), 0);
	CHECK_SPAN(f.module, "/tmp/x) (y/burn");
	CHECK_INT(frame("  1 main (/tmp/x)y/burn)", &f), 0); /* not a call chain's line */
	CHECK_SPAN(f.module, "/tmp/x)y/burn");
	/* parentheses that pair, in the path, in the symbol, in both */
	CHECK_INT(frame("\t1 main+0x4d (/opt/App (x86)/bin/burn)", &f), 0);
	CHECK_SPAN(f.sym, "main");
	CHECK_SPAN(f.module, "/opt/App (x86)/bin/burn");
	CHECK_INT(frame("\t1 spin (/usr/bin/burn (deleted))", &f), 0);
	CHECK_SPAN(f.module, "/usr/bin/burn (deleted)");
	CHECK_INT(frame("\t1 foo(int)+0x1 (/tmp/x)y/burn)", &f), 0);
	CHECK_SPAN(f.sym, "foo(int)");
	CHECK_SPAN(f.module, "/tmp/x)y/burn");
	CHECK_INT(frame("\t1 (anonymous namespace)::f(char) (/tmp/x)y/b)", &f), 0);
	CHECK_SPAN(f.sym, "(anonymous namespace)::f(char)");
	CHECK_SPAN(f.module, "/tmp/x)y/b");
	CHECK_INT(frame("\t1 (anonymous namespace)::f (/tmp/a (b/c)", &f), 0);
	CHECK_SPAN(f.sym, "(anonymous namespace)::f");
	CHECK_SPAN(f.module, "/tmp/a (b/c");
	CHECK_INT(
	    frame("\t1 std::function<void (int)>::operator()(int) const (/opt/App (x86)/p)", &f),
	    0);
	CHECK_SPAN(f.sym, "std::function<void (int)>::operator()(int) const");
	CHECK_SPAN(f.module, "/opt/App (x86)/p");
	CHECK_INT(frame("\t1 S::operator() (/tmp/a(b/p)", &f), 0);
	CHECK_SPAN(f.sym, "S::operator()");
	CHECK_SPAN(f.module, "/tmp/a(b/p");
	/* modules that are not paths: the group at the end, balanced */
	CHECK_INT(frame("\t1 f (inlined)", &f), 0);
	CHECK_SPAN(f.module, "inlined");
	CHECK_INT(frame("\t1 g(int) (bpf_prog_2b956549c660136a_uni_l4lb)", &f), 0);
	CHECK_SPAN(f.sym, "g(int)");
	CHECK_SPAN(f.module, "bpf_prog_2b956549c660136a_uni_l4lb");
	CHECK_INT(frame("\t1 [unknown] ([unknown])", &f), 0);
	CHECK_SPAN(f.module, "[unknown]");
	/* -F ip,sym: a symbol that ends with a group, no module */
	CHECK_INT(frame("\t1 (anonymous namespace)::f()", &f), 0);
	CHECK_SPAN(f.sym, "(anonymous namespace)::f()");
	CHECK_INT(f.module.len, 0);
	CHECK_INT(frame("\t1 foo(int)", &f), 0);
	CHECK_SPAN(f.sym, "foo(int)");
	CHECK_INT(f.module.len, 0);
	/* on a header line (-G) */
	CHECK_INT(fg_ps_find_frame("55d spin+0x28 (/tmp/x)y/burn)", 29, &f), 0);
	CHECK_SPAN(f.sym, "spin");
	CHECK_SPAN(f.module, "/tmp/x)y/burn");
}

TEST(frame_rejects)
{
	struct fg_ps_frame f;

	CHECK_INT(frame("", &f), -EINVAL);
	CHECK_INT(frame("\t          THIS_IS_A_WEIRD_LINE", &f), -EINVAL);
	CHECK_INT(frame("  401b97 main+0x1f", &f), -EINVAL); /* no module, not a call chain */
	CHECK_INT(frame("               0", &f), -EINVAL);   /* -F +phys_addr */
	CHECK_INT(frame(" insn: 48 83 c0 01", &f), -EINVAL);
	CHECK_INT(frame("\tzz main (m)", &f), -EINVAL);
	CHECK_INT(frame("  401b97 main (m", &f), -EINVAL);
	CHECK_INT(frame("  401b97 main m)", &f), -EINVAL);
	CHECK_INT(frame("  401b97 main(m)", &f), -EINVAL);
	CHECK_INT(frame("401b97", &f), -EINVAL);
}

TEST(header_shapes)
{
	struct fg_ps_header h;

	/* -F comm,tid,ip,sym: no cpu, time, period nor event */
	CHECK_INT(header("split7030 32627 ", &h), 0);
	CHECK(h.weak);
	CHECK_SPAN(h.comm, "split7030");
	CHECK_SPAN(h.tid, "32627");
	CHECK(!h.has_period);
	/* -F comm,tid,period,ip,sym,dso */
	CHECK_INT(header("split7030 32627    5025125 ", &h), 0);
	CHECK(h.weak && h.has_period);
	CHECK_INT(h.period, 5025125);
	/* -F tid,ip,sym: no comm */
	CHECK_INT(header("32627 ", &h), 0);
	CHECK_INT(h.comm.len, 0);
	CHECK_SPAN(h.tid, "32627");
	/* -F comm,ip,sym: the comm alone, numbers in it; a thread id is padded ("%5d") */
	CHECK_INT(header("cxx ", &h), 0);
	CHECK(h.weak && !h.has_period);
	CHECK_SPAN(h.comm, "cxx");
	CHECK_INT(h.tid.len, 0);
	CHECK_INT(header("V8 Worker 12 34 ", &h), 0);
	CHECK(h.weak && !h.has_period);
	CHECK_SPAN(h.comm, "V8 Worker 12 34");
	CHECK_INT(header("V8 Worker 12 34    99 ", &h), 0);
	CHECK_SPAN(h.comm, "V8 Worker 12 34");
	CHECK_SPAN(h.tid, "99");
	CHECK_INT(header("V8 Worker 12 34  4321/4322  ", &h), 0);
	CHECK_SPAN(h.comm, "V8 Worker 12 34");
	CHECK_SPAN(h.pid, "4321");
	CHECK_SPAN(h.tid, "4322");
	/* -F comm,ip,sym without a call chain: "%16s", then the frame */
	CHECK_INT(header("       split7030      55d52f07a1ca spin (/b/s)", &h), 0);
	CHECK(h.weak);
	CHECK_SPAN(h.comm, "split7030");
	CHECK_SPAN(h.rest, "55d52f07a1ca spin (/b/s)");
	CHECK_INT(header("  cafe 12 babe  ffffffff82241157 exc_page_fault", &h), 0);
	CHECK_SPAN(h.comm, "cafe 12 babe");
	CHECK_SPAN(h.rest, "ffffffff82241157 exc_page_fault");
	/* an indented comm alone is no header: it could be any line; nor a frame after one space */
	CHECK_INT(header("  split7030 ", &h), -EINVAL);
	CHECK_INT(header("  not a frame", &h), -EINVAL);
	/* a comm that holds a frame's shape, before a call chain */
	CHECK_INT(header("not a frame ", &h), 0);
	CHECK(h.weak);
	CHECK_SPAN(h.comm, "not a frame");
	CHECK_INT(h.rest.len, 0);
	/* -F comm,event,ip,sym and -F event,ip,sym: no thread id, weak all the same */
	CHECK_INT(header("split7030 cpu-clock: ", &h), 0);
	CHECK(h.weak);
	CHECK_SPAN(h.comm, "split7030");
	CHECK_SPAN(h.event, "cpu-clock");
	CHECK_INT(header("cpu-clock: ", &h), 0);
	CHECK(h.weak);
	CHECK_INT(h.comm.len, 0);
	CHECK_SPAN(h.event, "cpu-clock");
	CHECK_INT(header("       a b cpu-clock:      55d52f07a1ca spin (/b/s)", &h), 0);
	CHECK_SPAN(h.comm, "a b");
	CHECK_SPAN(h.event, "cpu-clock");
	CHECK_SPAN(h.rest, "55d52f07a1ca spin (/b/s)");
	/* -F +misc: flags between the tid and the time */
	CHECK_INT(header("split7030 32627 U       360.768587:    5025125 cpu-clock:ppp: ", &h), 0);
	CHECK(!h.weak);
	CHECK_SPAN(h.event, "cpu-clock:ppp");
	CHECK_INT(h.period, 5025125);
	/* -F +tod */
	CHECK_INT(header("s  5874 [000] 2026-11-30 14:39:14.288240  1216.638374:   10101010 "
			 "cpu-clock:ppp: ",
			 &h),
		  0);
	CHECK_SPAN(h.event, "cpu-clock:ppp");
	CHECK_INT(h.period, 10101010);
	/* --ns */
	CHECK_INT(header("split7030 32627   360.768587268:    5025125 cpu-clock:ppp: ", &h), 0);
	CHECK_SPAN(h.event, "cpu-clock:ppp");
	/* -F comm,tid,period,ip,sym -G: the period, then the frame on the line */
	CHECK_INT(header("       split7030 32619    5025125      55db24dfe1c0 spin (/bin/s)", &h),
		  0);
	CHECK(h.weak && h.has_period);
	CHECK_SPAN(h.rest, "55db24dfe1c0 spin (/bin/s)");
	/* side-band records */
	CHECK_INT(
	    header("perf-exec     0     0.000000: PERF_RECORD_COMM: perf-exec:32627/32627", &h),
	    FG_PS_SIDEBAND);
	CHECK_SPAN(h.record, "PERF_RECORD_COMM");
	CHECK_SPAN(h.comm, "perf-exec");
	CHECK_INT(
	    header("split7030 32627   360.763507: PERF_RECORD_COMM exec: split7030:32627/32627",
		   &h),
	    FG_PS_SIDEBAND);
	CHECK_SPAN(h.rest, "exec: split7030:32627/32627");
	CHECK_INT(header("split7030  4397   418.597491: PERF_RECORD_LOST lost 4", &h),
		  FG_PS_SIDEBAND);
	CHECK_SPAN(h.rest, "lost 4");
	CHECK_INT(header("split7030 32627 PERF_RECORD_SWITCH OUT preempt", &h), FG_PS_SIDEBAND);
	CHECK_INT(header("swapper     0     0.000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000("
			 "0x12090c8) @ 0xffffffff81000000]: x [kernel.kallsyms]_text",
			 &h),
		  FG_PS_SIDEBAND);
	CHECK_SPAN(h.record, "PERF_RECORD_MMAP");
}

/*
 * Whether fg_ps_parse_header (with the memo m, when given) and the general
 * parser alone read line alike
 */
static bool same_header_memo(struct fg_ps_memo *m, const char *line)
{
	struct fg_ps_header a, b;
	size_t len = strlen(line);
	int ra = m ? fg_ps_parse_header_memo(m, line, len, &a) : fg_ps_parse_header(line, len, &a);
	int rb = fg_ps_parse_header_general(line, len, &b);

	if (ra != rb)
		return false;
	if (ra != 0 && ra != FG_PS_SIDEBAND)
		return true;
#define SAME_SPAN(x) (a.x.p == b.x.p && a.x.len == b.x.len)
	return SAME_SPAN(comm) && SAME_SPAN(pid) && SAME_SPAN(tid) && SAME_SPAN(time) &&
	       SAME_SPAN(event) && SAME_SPAN(rest) && SAME_SPAN(record) && a.pid_num == b.pid_num &&
	       a.tid_num == b.tid_num && a.has_period == b.has_period && a.period == b.period &&
	       a.weak == b.weak;
#undef SAME_SPAN
}

static bool same_header(const char *line)
{
	return same_header_memo(NULL, line);
}

TEST(header_default_path)
{
	static const char *const lines[] = {
	    /* perf's default header, read by the shorter path */
	    "swapper 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "grpc server 1098/1099 [025] 1000.042266:   1001001 cpu-clock: ",
	    "kworker/3:1 1056 [022] 1000.304062: 1 cycles:u:",
	    "\tx\t\t1/2\t[0]\t5:\t7\te:\r",
	    "1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "   a 1234567890123456789/1234567890123456789 [1] 1.5: 1234567890123456789 e:",
	    /* without the period, the CPU, or both */
	    "noploop 6101 [001] 4794564.109216: cpu-clock: ",
	    "swapper     0 [000]  1046.540012: cycles:uppp:",
	    "func_ab 5543 1067.453402: cpu-clock:",
	    "perf_stacks 25211  1046.540012:    250000 cpu-clock: ",
	    "a 1/2 1.5: 7 e:",
	    /* near it: the general parser decides */
	    "a 5 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "x 7 [3] 9.5: 1 e: 1/2 [0] 1.5: 1 e:",
	    "a 5/6 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "a 12345678901234567890/1 [0] 1.5: 1 e:",
	    "a 1/12345678901234567890 [0] 1.5: 1 e:",
	    "a 1/2 [0] 1.5: 12345678901234567890 e:",
	    "a 1/2 [0] 1.5: 99999999999999999999 e:",
	    "a 1/2 [0] 1.: 1 e:",
	    "a 1/2 [0] .5: 1 e:",
	    "a 1/2 [0] 1.2.3: 1 e:",
	    "a 1/2 [] 1.5: 1 e:",
	    "a 1/2 [x] 1.5: 1 e:",
	    "a 1//2 [0] 1.5: 1 e:",
	    "a /2 [0] 1.5: 1 e:",
	    "a 1/2 [0] 1.5: 1 :",
	    "a 1/2 [0] 1.5: 1 e",
	    "a 1/2 [0] 1.5: 1 e: 7f12 f (m)",
	    "a 1/2 [0] 1.5: e:",
	    "a 1/2 [0]1.5: 1 e:",
	    "a1/2 [0] 1.5: 1 e:",
	    "U 1/2 [0] 1.5: 1 e:",
	    "a 1/2 U [0] 1.5: 1 e:",
	    "a 1/2 [0] 1.5: 1 PERF_RECORD_X:",
	    "a 1/2 [0] 1.5: PERF_RECORD_X:",
	    "a 1/2 1.5: PERF_RECORD_COMM: a:1/2",
	    "a 1/2 [0] 1.5: PERF_RECORD_:",
	    "a 1/2 [0] 1.5: x1 e:",
	    "a 1/2 [0] 1.5:1 e:",
	    "a 1/2 U 1.5: 1 e:",
	    "a 1/2 2026-11-30 14:39:14.288240 1.5: 1 e:",
	    "func_ab 5543 cpu-clock:",
	    "func_ab 5543 5: cpu-clock:",
	    "2026-11-30 1/2 [0] 1.5: 1 e:",
	    /* a comm of more than 64 bytes */
	    "a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a 1/2 [0] 1.5: 1 e:",
	    "a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a 1/2 [0] 1.5: 1 e:",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		if (!same_header(lines[i])) {
			printf("# read otherwise by the general parser: '%s'\n", lines[i]);
			CHECK(0);
		}
	}
	struct fg_ps_header h;

	CHECK_INT(
	    header("   a 1234567890123456789/1234567890123456780 [1] 1.5: 1234567890123456781 e:",
		   &h),
	    0);
	CHECK_INT(h.pid_num == UINT64_C(1234567890123456789), 1);
	CHECK_INT(h.tid_num == UINT64_C(1234567890123456780), 1);
	CHECK_INT(h.period == UINT64_C(1234567890123456781), 1);
	CHECK_INT(header("a 1/2 [0] 1.5: 99999999999999999999 e:", &h), -ERANGE);
	CHECK_INT(header("noploop 6101 [001] 4794564.109216: cpu-clock: ", &h), 0);
	CHECK(!h.has_period && !h.weak);
	CHECK_SPAN(h.time, "4794564.109216");
	CHECK_SPAN(h.event, "cpu-clock");
	CHECK_INT(header("func_ab 5543 1067.453402: 7 cpu-clock:", &h), 0);
	CHECK(h.has_period && h.period == 7);
	CHECK_SPAN(h.tid, "5543");
	/* a comm that holds what a header ends with: the first thread id reads */
	CHECK_INT(header("x 7 [3] 9.5: 1 e: 1/2 [0] 1.5: 1 e:", &h), 0);
	CHECK_SPAN(h.comm, "x");
	CHECK_SPAN(h.tid, "7");
	CHECK_SPAN(h.rest, "1/2 [0] 1.5: 1 e:");
}

TEST(header_memo)
{
	static const char *const lines[] = {
	    "swapper 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    /* the same shape: read by it */
	    "swapper 2205/2207 [003] 1999.100017:   1001009 cpu-clock:",
	    "swapper 9999/0000 [999] 9999.999999:   9999999 cpu-clock:",
	    /* another byte than a digit differs: parsed */
	    "swapper 2205/2207 [003] 1999.100017:   1001009 cpu-clocj:",
	    "swapper 2205/2207 [003] 1999.1000x7:   1001009 cpu-clock:",
	    "swapper 2205 2207 [003] 1999.100017:   1001009 cpu-clock:",
	    "swapper 2205/2207 [003] 1999.100017:  11001009 cpu-clock:",
	    "swapper 2205/2207 [003] 1999.100017:   1001009 cpu-clock: ",
	    "swappe5 2205/2207 [003] 1999.100017:   1001009 cpu-clock:",
	    /* not perf's default header: never remembered */
	    "a 5 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "a 6 1105/1106 [018] 1000.000016:   1001001 cpu-clock:",
	    "x 7 [3] 9.5: 1 e: 1/2 [0] 1.5: 1 e:",
	    "x 8 [3] 9.5: 1 e: 1/2 [0] 1.5: 1 e:",
	    "a 1/2 [0] 1.5: 99999999999999999999 e:",
	    "a 1/2 [0] 1.5: 99999999999999999998 e:",
	    "perf-exec     0     0.000000: PERF_RECORD_COMM: perf-exec:32627/32627",
	    "perf-exec     1     0.000001: PERF_RECORD_COMM: perf-exec:32627/32627",
	};
	struct fg_ps_memo *m = calloc(1, sizeof(*m));
	struct fg_ps_header h;

	for (size_t round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
			if (!same_header_memo(m, lines[i])) {
				printf("# read otherwise by the general parser: '%s'\n", lines[i]);
				free(m);
				CHECK(0);
			}
		}
	}
	/* each round reads at least the second and third lines by the first's shape */
	CHECK(m->hits >= 4);
	uint64_t hits = m->hits;
	const char *l = "swapper 3/4 [5] 6.7:   8 cpu-clock: ";
	CHECK_INT(fg_ps_parse_header_memo(m, l, strlen(l), &h), 0);
	CHECK_INT(m->hits, hits);
	l = "swapper 9/8 [7] 6.5:   4 cpu-clock: ";
	CHECK_INT(fg_ps_parse_header_memo(m, l, strlen(l), &h), 0);
	CHECK_INT(m->hits, hits + 1);
	CHECK_SPAN(h.pid, "9");
	CHECK_SPAN(h.tid, "8");
	CHECK_SPAN(h.time, "6.5");
	CHECK_INT(h.period, 4);
	CHECK_SPAN(h.event, "cpu-clock");
	CHECK(h.rest.p == l + strlen(l) && h.rest.len == 0);
	free(m);
}

static int find(const char *rest, struct fg_ps_frame *f)
{
	return fg_ps_find_frame(rest, strlen(rest), f);
}

TEST(frame_on_header_line)
{
	struct fg_ps_frame f;

	CHECK_INT(find("559d200781ce spin+0x28 (/b/split7030)", &f), 0);
	CHECK_SPAN(f.sym, "spin");
	CHECK_SPAN(f.module, "/b/split7030");
	/* -F +addr,+data_src before the frame */
	CHECK_INT(find("               0      1e05080021 |OP N/A|LVL N/A or N/A|SNP N/A|TLB N/A|"
		       "LCK N/A|BLK  N/A     559d200781ce spin+0x28 (/b/split7030)",
		       &f),
		  0);
	CHECK_SPAN(f.addr, "559d200781ce");
	CHECK_SPAN(f.sym, "spin");
	/* -F +insn, +phys_addr after it */
	CHECK_INT(find("559d200781ce spin+0x28 (/b/split7030) insn: 48 83 c0 01", &f), 0);
	CHECK_SPAN(f.module, "/b/split7030");
	CHECK_INT(find("559d200781c0 spin+0x1a (/b/split7030)               0", &f), 0);
	CHECK_SPAN(f.module, "/b/split7030");
	/* no module (-F ip,sym) */
	CHECK_INT(find("5025125      55db24dfe1c0 spin", &f), 0);
	CHECK_SPAN(f.addr, "55db24dfe1c0");
	CHECK_SPAN(f.sym, "spin");
	/* a tracepoint's payload is no frame */
	CHECK_INT(find("prev_comm=swapper/0 prev_pid=0 prev_prio=120 ==> next_comm=x", &f),
		  -EINVAL);
	CHECK_INT(find("0", &f), -EINVAL);
	CHECK_INT(find("", &f), -EINVAL);
}

TEST(extra_lines)
{
	CHECK(fg_ps_is_extra_line(" insn: 48 83 c0 01", 18));
	CHECK(fg_ps_is_extra_line(" ilen: 4", 8));
	CHECK(fg_ps_is_extra_line("  IPC: 1.23 (12/34) ", 20));
	CHECK(fg_ps_is_extra_line("|16       \tfor (uint64_t i = 0; i < n; i++)", 43));
	CHECK(fg_ps_is_extra_line("               0", 16));
	CHECK(fg_ps_is_extra_line(" 0x4011ce/0x401207/P/-/-/0  0x4011c0/0x4011ce/P/-/-/0", 52));
	CHECK(!fg_ps_is_extra_line("\t            11ce", 18)); /* a frame of -F ip */
	CHECK(!fg_ps_is_extra_line("\t            11ce spin (/bin/x)", 31));
	CHECK(!fg_ps_is_extra_line("  split7030.c:16", 16));
	CHECK(!fg_ps_is_extra_line("garbage 1", 9));
	CHECK(!fg_ps_is_extra_line("", 0));
}

static int count(const char *text, struct fg_count *c)
{
	return fg_count_parse(text, strlen(text), c);
}

TEST(counts)
{
	struct fg_count a, b;
	char buf[48];

	CHECK_INT(count("12", &a), 0);
	CHECK(a.whole == 12 && a.dec == 0);
	CHECK_INT(count("2.50", &a), 0);
	CHECK(a.whole == 2 && a.frac == 5 && a.dec == 1);
	CHECK_INT(count("12.", &a), 0);
	CHECK(a.whole == 12 && a.dec == 0);
	CHECK_INT(count(".5", &a), -EINVAL);
	CHECK_INT(count("1x", &a), -EINVAL);
	CHECK_INT(count("18446744073709551616", &a), -ERANGE);
	CHECK_INT(count("18446744073709551615.999", &a), 0);
	CHECK_INT(count("0.001", &b), 0);
	CHECK_INT(fg_count_add(&a, &b), -EOVERFLOW); /* 0.999 + 0.001 carries past 2^64-1 */
	CHECK(a.whole == UINT64_MAX && a.frac == 999);
	/* more decimals than kept */
	CHECK_INT(count("0.1234567890123456789999", &a), 0);
	CHECK_INT(a.dec, FG_COUNT_MAX_DEC);
	fg_count_format(&a, buf, sizeof(buf));
	CHECK_STR(buf, "0.123456789012345678");
	CHECK_INT(count("1.25", &a), 0);
	CHECK_INT(count("0.75", &b), 0);
	CHECK_INT(fg_count_add(&a, &b), 0);
	fg_count_format(&a, buf, sizeof(buf));
	CHECK_STR(buf, "2");
}

/* fg_symname_rust_tidy of s, as a string */
static const char *rust(const char *s)
{
	static char out[256];
	size_t n = fg_symname_rust_tidy(s, strlen(s), out);

	out[n] = '\0';
	return out;
}

TEST(symnames)
{
	/* the example of issue 14, and inferno's */
	CHECK_STR(
	    rust("gc::gc::GcBox$LT$T$GT$::new::_$u7b$$u7b$closure$u7d$$u7d$::ha2ed0674a1c3dc9f"),
	    "gc::gc::GcBox<T>::new::_{{closure}}");
	CHECK_STR(
	    rust("_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::"
		 "next::hc14f1750ca79129b"),
	    "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next");
	CHECK_STR(rust("std::sys::unix::fs::File::open::hb90e1c1c787080f0"),
		  "std::sys::unix::fs::File::open");
	/* each escape */
	CHECK_STR(rust("a$LT$b$GT$::h0123456789abcdef"), "a<b>");
	CHECK_STR(rust("a$RF$b::h0123456789abcdef"), "a&b");
	CHECK_STR(rust("a$BP$b::h0123456789abcdef"), "a*b");
	CHECK_STR(rust("a$C$b::h0123456789abcdef"), "a,b");
	CHECK_STR(rust("a$SP$b::h0123456789abcdef"), "a@b");
	CHECK_STR(rust("a$LP$b$RP$::h0123456789abcdef"), "a(b)");
	CHECK_STR(rust("a$u7b$$u7d$$u7e$$u20$$u27$$u3d$$u5b$$u5d$$u3b$$u2b$$u21$$u22$$u2d$::"
		       "h0123456789abcdef"),
		  "a{}~ '=[];+!\"-");
	CHECK_STR(rust("a..b.c::h0123456789abcdef"), "a::b.c");
	/* no control characters: "$u0a$" stays, with the rest */
	CHECK_STR(rust("a$u0a$b$LT$::h0123456789abcdef"), "a$u0a$b$LT$");
	CHECK_STR(rust("a$XX$b::h0123456789abcdef"), "a$XX$b");
	/* not a legacy Rust name: unchanged */
	CHECK(!fg_symname_is_rust_legacy("std::fs::File::open", 19));
	CHECK(!fg_symname_is_rust_legacy("a::h0123456789abcdeg", 20));
	CHECK(!fg_symname_is_rust_legacy("ah0123456789abcdef", 18));
	CHECK(
	    !fg_symname_is_rust_legacy("_ZN3std2rt19lang_start_internal17h540c897fe52ba9c5E", 51));
	CHECK_STR(rust("a$LT$b$GT$"), "a$LT$b$GT$");

	/* argument lists */
	CHECK_INT(fg_symname_args_start("ns::f<int>(char)", 16), 10);
	CHECK_INT(fg_symname_args_start("f(int)", 6), 1);
	CHECK_INT(fg_symname_args_start("std::map<a, b (c)>::g(x)", 24), 21);
	CHECK_INT(fg_symname_args_start("net/http.(*Client).Do", 21), 21);
	CHECK_INT(fg_symname_args_start("(anonymous namespace)::f(int)", 29), 24);
	CHECK_INT(fg_symname_args_start("a::operator<(b)", 15), 12);
	CHECK_INT(fg_symname_args_start("main", 4), 4);
}

TEST(srclines)
{
	struct fg_span s;

	CHECK(fg_ps_is_srcline("  prog.c:12", 11, &s));
	CHECK_SPAN(s, "prog.c:12");
	CHECK(fg_ps_is_srcline("  /a/b.c:7 (discriminator 3)", 28, &s));
	CHECK_SPAN(s, "/a/b.c:7");
	CHECK(fg_ps_is_srcline("  ??:0", 6, &s));
	CHECK(fg_ps_is_srcline("  ld-2.29.so[11634]", 19, &s));
	CHECK_SPAN(s, "ld-2.29.so[11634]");
	CHECK(fg_ps_is_srcline("  split7030.c:17               0", 32, &s)); /* -F +phys_addr */
	CHECK_SPAN(s, "split7030.c:17");
	CHECK(fg_ps_is_srcline("  [kernel.kallsyms][ffffffff813a2313]               0", 53, &s));
	CHECK_SPAN(s, "[kernel.kallsyms][ffffffff813a2313]");
	CHECK(!fg_ps_is_srcline("  12 0", 6, &s));
	CHECK(!fg_ps_is_srcline("prog.c:12", 9, &s));
	CHECK(!fg_ps_is_srcline("  main+0x10", 11, &s));
	CHECK(!fg_ps_is_srcline("  x[zz]", 7, &s));
	CHECK(!fg_ps_is_srcline("   ", 3, &s));
}

TEST(events_and_modules)
{
	CHECK_INT(fg_ps_event_base_len("cycles:uppp", 11), 6);
	CHECK_INT(fg_ps_event_base_len("cpu-clock:uhH", 13), 9);
	CHECK_INT(fg_ps_event_base_len("cycles", 6), 6);
	CHECK_INT(fg_ps_event_base_len("sched:sched_switch", 18), 18);
	CHECK_INT(fg_ps_event_base_len("cycles:", 7), 7);

	CHECK(fg_ps_module_is_kernel("[kernel.kallsyms]", 17));
	CHECK(fg_ps_module_is_kernel("[nf_conntrack_ipv4]", 19));
	CHECK(!fg_ps_module_is_kernel("[unknown]", 9));
	CHECK(fg_ps_module_is_kernel("/lib/modules/4.1.0-virtual/build/vmlinux", 40));
	CHECK(fg_ps_module_is_kernel("/usr/lib/debug/boot/vmlinux-5.4.14", 34));
	CHECK(fg_ps_module_is_kernel("/lib/modules/5.4/kernel/drivers/net/mlx5_core.ko", 48));
	CHECK(!fg_ps_module_is_kernel("/usr/lib/libc.so.6", 18));
	CHECK(!fg_ps_module_is_kernel("bpf_prog_2b956549c660136a_uni_l4lb", 34));

	CHECK(fg_ps_module_is_jit("/tmp/perf-7539.map", 18));
	CHECK(!fg_ps_module_is_jit("/tmp/perf-x.map", 15));
	CHECK(fg_ps_module_is_jit("/root/.debug/jit/java-jit-2020/jitted-1234-5.so", 47));
	CHECK(!fg_ps_module_is_jit("/usr/lib/libjitted.so", 21));
}

/* fold `in` with `o`, the output in a string the caller frees */
static char *fold(const struct fg_fold_opts *o, const char *in, int *ret)
{
	struct fg_fold *f = fg_fold_new(o, NULL, NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	*ret = fg_fold_read_mem(f, in, strlen(in), "test");
	fg_fold_write(f, fp);
	fclose(fp);
	fg_fold_free(f);
	return out;
}

#define CHECK_FOLD(opts, in, expected)                                                             \
	do {                                                                                       \
		int unit_r;                                                                        \
		char *unit_out = fold((opts), (in), &unit_r);                                      \
		int unit_same = strcmp(unit_out, (expected)) == 0;                                 \
		if (!unit_same)                                                                    \
			printf("# %s:%d: got '%s'\n", __FILE__, __LINE__, unit_out);               \
		free(unit_out);                                                                    \
		CHECK(unit_same);                                                                  \
		CHECK_INT(unit_r, 0);                                                              \
	} while (0)

static const struct fg_fold_opts plain = {.input = FG_FOLD_AUTO};

TEST(fold_names)
{
	CHECK_FOLD(&plain,
		   "p 1 1.0: 5 cycles:\n"
		   "\t1 std::_Function_handler<int (int, int), main::{lambda(int, int)#1}>"
		   "::_M_invoke(std::_Any_data const&) (/p)\n"
		   "\t2 (anonymous namespace)::f(int) (/p)\n"
		   "\t3 net/http.(*Client).Do+0x12 (/p)\n"
		   "\t4 a;b\"c'd (/p)\n"
		   "\t5 std::operator<< <char>(std::ostream&) (/p)\n"
		   "\t6 [unknown] (/usr/lib/libc.so.6)\n"
		   "\t7 (stray) (/p)\n\n",
		   "p;[libc.so.6];std::operator<< <char>;a:bcd;net/http.(*Client).Do;"
		   "(anonymous namespace)::f;"
		   "std::_Function_handler<int (int, int), main::{lambda(int, int)#1}>"
		   "::_M_invoke 5\n");
}

TEST(fold_java)
{
	CHECK_FOLD(&plain,
		   "java 1 1.0: 1 cycles:\n"
		   "\t1 Lorg/x/Y;.call(Lorg/x/Z;)V (/tmp/perf-1.map)\n"
		   "\t2 Lorg/x/A;.a->Lorg/x/B;.b->Lorg/x/C;.c (/tmp/perf-1.map)\n\n",
		   "java;org/x/A:.a;org/x/B:.b_[i];org/x/C:.c_[i];org/x/Y:.call 1\n");
	/* not java: the L stays */
	CHECK_FOLD(&plain, "javac 1 1.0: 1 cycles:\n\t1 Lorg/x/Y;.call (/p)\n\n",
		   "javac;Lorg/x/Y:.call 1\n");
}

TEST(fold_options)
{
	struct fg_fold_opts o = {.annotate_kernel = true, .annotate_jit = true};
	const char *in = "a b 7/8 [000] 1.0: 3 cpu-clock:\n"
			 "\tffff0001 do_idle ([kernel.kallsyms])\n"
			 "\t10 run (/tmp/perf-7.map)\n"
			 "\t20 [unknown] ([unknown])\n\n";

	CHECK_FOLD(&o, in, "a_b;[unknown];run_[j];do_idle_[k] 3\n");
	CHECK_FOLD(&plain, "x;y 1 [000] 1.0: 1 c:\n\t1 f (m)\n\n", "x:y;f 1\n");
	o = (struct fg_fold_opts){.include_tid = true, .include_addrs = true};
	CHECK_FOLD(&o, in, "a_b-7/8;[unknown <20>];run;do_idle 3\n");
	o = (struct fg_fold_opts){.include_pid = true, .count_samples = true};
	CHECK_FOLD(&o, in, "a_b-7;[unknown];run;do_idle 1\n");
	const char *const skip[] = {"run"};
	o = (struct fg_fold_opts){.skip_after = skip, .n_skip_after = 1};
	CHECK_FOLD(&o, in, "a_b;run;do_idle 3\n");
	const uint64_t pids[] = {9};
	o = (struct fg_fold_opts){.only_pids = pids, .n_only_pids = 1};
	CHECK_FOLD(&o, in, "");
	o = (struct fg_fold_opts){.event_filter = "cpu-clock"};
	CHECK_FOLD(&o, in, "a_b;[unknown];run;do_idle 3\n");
}

TEST(fold_formats_and_errors)
{
	struct fg_fold_opts o = plain;
	int r;
	char *out;

	CHECK_FOLD(&plain, "b 2\na;x y 3\nb 1\n", "a;x y 3\nb 3\n");
	CHECK_FOLD(&plain, "b 2 3\nb 1 1\n", "b 3 4\n");
	CHECK_FOLD(&plain, "@[\n    f+1\n    main+2\n]: 4\n", "main;f 4\n");
	/* the line whose count would pass 2^64-1 is left out, nothing else */
	CHECK_FOLD(&plain, "a 18446744073709551615\nb 1\na 1\n", "a 18446744073709551615\nb 1\n");
	/* fractional counts, summed exactly */
	CHECK_FOLD(&plain, "a;b 5\nc;d 2.5\n", "a;b 5\nc;d 2.5\n");
	CHECK_FOLD(&plain, "c 0.1\nc 0.2\nc 2.70\nd 1.\n", "c 3\nd 1\n");
	CHECK_FOLD(&plain, "c 0.125\nc 0.5\n", "c 0.625\n");
	CHECK_FOLD(&plain, "a\tb 3\na\tb  4\n", "a\tb 7\n");
	out = fold(&plain, "FGSTACK1\0", &r);
	free(out);
	CHECK_INT(r, 0); /* strlen stops at the NUL: "FGSTACK1" alone is a bad line */
	struct fg_fold *f = fg_fold_new(&o, NULL, NULL);
	CHECK_INT(fg_fold_read_mem(f, "FGSTACK1\0\1\0\0\0", 13, "bin"), -EMEDIUMTYPE);
	CHECK_INT(fg_fold_read_mem(f, "x 1 1.0: 1 c:\n\tgarbage\n", 23, "t"), 0);
	CHECK_INT(fg_fold_stats(f)->bad_lines, 1);
	CHECK_INT(fg_fold_read_mem(f, "a 1 2\n", 6, "two"), -EINVAL);
	fg_fold_free(f);
	CHECK_INT(fg_fold_input_parse("bpftrace"), FG_FOLD_BPFTRACE);
	CHECK_INT(fg_fold_input_parse("xml"), -1);
	CHECK_STR(fg_fold_input_name(FG_FOLD_FOLDED), "folded");
}

TEST(fold_perf_shapes)
{
	/* a weak header is believed when a frame follows */
	CHECK_FOLD(
	    &plain,
	    "s     1 \n\t 11ce spin\n\t 1207 hot\n\ns     1 \n\t 11ce spin\n\t 1225 cold\n\n",
	    "s;cold;spin 1\ns;hot;spin 1\n");
	CHECK_FOLD(&plain, "s     1          7 \n\t 11ce spin (/b/s)\n\n", "s;spin 7\n");
	/* the comm alone (-F comm,ip,sym,dso), with numbers in it; with its frame on the line */
	CHECK_FOLD(&plain,
		   "cxx 12 34 \n\t 11ce spin (/b/s)\n\t 1207 hot (/b/s)\n\n"
		   "cxx 12 34 \n\t 11ce spin (/b/s)\n\t 1225 cold (/b/s)\n\n",
		   "cxx_12_34;cold;spin 1\ncxx_12_34;hot;spin 1\n");
	CHECK_FOLD(&plain, "       cxx      11ce spin (/b/s)\n       cxx      11ce spin (/b/s)\n",
		   "cxx;spin 2\n");
	/* a comm that reads as a strong header does not make the weak ones bad lines */
	CHECK_FOLD(&plain,
		   "good \n\t 11ce spin (/b/s)\n\n1/1 1: 9 e: \n\t 11ce evil (/b/e)\n\n"
		   "good \n\t 11ce spin (/b/s)\n\ngood \n\t 11ce spin (/b/s)\n\n",
		   "evil 9\ngood;spin 3\n");
	/* a line that could be a comm, but no frame follows: a bad line */
	CHECK_FOLD(&plain, "cxx \nnot a frame\n\n", "");
	/* no comm, no module, no symbol */
	CHECK_FOLD(&plain, "1 \n\t 11ce spin\n\t 20\n\n", "[unknown];spin 1\n");
	/* side-band records are neither samples nor the first event */
	CHECK_FOLD(&plain,
		   "perf-exec 0 0.0: PERF_RECORD_COMM: perf-exec:1/1\n"
		   "s 1 0.1: PERF_RECORD_COMM exec: s:1/1\n"
		   "s 1 0.2: PERF_RECORD_MMAP2 1/1: [0x1(0x2) @ 0 00:00 0 0]: r-xp /b/s\n"
		   "s 1 0.3: 5 cpu-clock: \n\t 11ce spin (/b/s)\n\n"
		   "s 1 0.4: PERF_RECORD_LOST lost 4\n"
		   "s 1 0.5: PERF_RECORD_SWITCH OUT preempt\n",
		   "s;spin 5\n");
	/* lines perf adds to a sample: not frames, and they end nothing */
	CHECK_FOLD(&plain,
		   "s 1 0.3: 5 c: \n\t 11ce spin (/b/s)\n insn: 48 83\n"
		   "s 1 0.4: 5 c: \n\t 11ce spin (/b/s)\n               0\n"
		   "s 1 0.5: 5 c: \n\t 11ce spin (/b/s)\n\n|16   for (;;)\n",
		   "s;spin 15\n");
	/* single-frame samples: comm;sym */
	CHECK_FOLD(
	    &plain,
	    "       s 1 0.3:    5 c:      559d200781ce spin+0x28 (/b/s) insn: 48 83 c0 01\n"
	    "       s 1 0.4:    5 c:   0   1e05 |OP N/A|BLK  N/A   559d200781c0 spin+0x1a (/b/s)\n",
	    "s;spin 10\n");
	/* Rust names perf left half-demangled */
	CHECK_FOLD(&plain, "r 1 0.1: 1 c:\n\t1 a..b$LT$T$GT$::f::h0123456789abcdef+0x1 (/b/r)\n\n",
		   "r;a::b<T>::f 1\n");

	struct fg_fold *f = fg_fold_new(&plain, NULL, NULL);
	const char *in = "s 1 0.1: PERF_RECORD_LOST lost 4\ns 1 0.2: PERF_RECORD_LOST lost 5\n"
			 "s 1 0.2: PERF_RECORD_MMAP2 x\ns 1 0.3: 1 c:\n\t1 f (m)\n insn: 1\n";
	CHECK_INT(fg_fold_read_mem(f, in, strlen(in), "t"), 0);
	const struct fg_fold_stats *st = fg_fold_stats(f);
	CHECK_INT(st->sideband, 3);
	CHECK_INT(st->lost_records, 2);
	CHECK_INT(st->lost, 9);
	CHECK_INT(st->n_sideband_kinds, 2);
	CHECK_STR(st->sideband_kinds[0].name, "PERF_RECORD_LOST");
	CHECK_INT(st->sideband_kinds[1].n, 1);
	CHECK_INT(st->extra_lines, 1);
	CHECK_INT(st->samples, 1);
	CHECK_INT(st->bad_lines, 0);
	fg_fold_free(f);
}

/* fold `in` whole, or fed a byte at a time (every line then cut: no sample cache) */
static char *fold_fed(const struct fg_fold_opts *o, const char *in, bool bytewise,
		      struct fg_fold_stats *st)
{
	struct fg_fold *f = fg_fold_new(o, NULL, NULL);
	size_t n = strlen(in), len = 0;
	char *out = NULL;
	FILE *fp = open_memstream(&out, &len);

	fg_fold_begin(f, "t");
	for (size_t i = 0; i < n; i += bytewise ? 1 : n)
		fg_fold_feed(f, in + i, bytewise ? 1 : n);
	fg_fold_end(f);
	fg_fold_write(f, fp);
	fclose(fp);
	*st = *fg_fold_stats(f);
	fg_fold_free(f);
	return out;
}

TEST(fold_sample_cache)
{
	/* samples repeated at other leaf addresses, other events, comms, a bad line */
	static const char *const samples[] = {
	    "app 1/2 [000] 1.0: 10 cpu-clock:\n\t%x leaf+0x%x (/b/app)\n"
	    "\t2000 mid+0x1 (/b/app)\n\t3000 main (/b/app)\n\n",
	    "app 1/3 [000] 1.0: 7 cpu-clock:\n\t%x [unknown] (/b/app)\n\t3000 main (/b/app)\n\n",
	    "java 5/5 [001] 1.1: 3 cpu-clock:\n\t%x Lx/Y;.f (/tmp/perf-5.map)\n"
	    "\tffff%x do_idle ([kernel.kallsyms])\n\n",
	    "app 1/2 [000] 1.2: 1 page-faults:\n\t%x leaf+0x%x (/b/app)\n\n",
	    "app 1/2 [000] 1.3: 2 cpu-clock:\n\t%x leaf+0x%x (/b/app)\n\tno frame %x\n\n",
	    "app 1/2 [000] 1.4: 4 cpu-clock:\r\n\t%x leaf+0x%x (/b/app)\r\n\t1 main "
	    "(/b/app)\r\n\r\n",
	    "other 9/9 [000] 1.5: 5 cpu-clock:\n\t%x leaf+0x%x (/b/app)\n\n",
	    "app 4/6 [000] 1.6: 10 cpu-clock:\n\t%x leaf+0x%x (/b/app)\n"
	    "\t2000 mid+0x1 (/b/app)\n\t3000 main (/b/app)\n\n",
	};
	struct fg_buf in = FG_BUF_INIT;
	const char *const comms[] = {"app"};
	const uint64_t pids[] = {4};
	struct fg_fold_opts opts[] = {
	    plain,
	    {.annotate_kernel = true, .annotate_jit = true, .include_tid = true},
	    {.include_addrs = true, .count_samples = true},
	    {.only_comms = comms, .n_only_comms = 1, .event_filter = "page-faults"},
	    {.only_pids = pids, .n_only_pids = 1, .extra_event = "page-faults"},
	};

	for (int i = 0; i < 300; i++)
		fg_buf_addf(&in, samples[i % FG_ARRAY_SIZE(samples)], 0x1000 + i % 7, i % 7);
	for (size_t k = 0; k < FG_ARRAY_SIZE(opts); k++) {
		struct fg_fold_stats a, b;
		char *whole = fold_fed(&opts[k], in.data, false, &a);
		char *bytes = fold_fed(&opts[k], in.data, true, &b);

		CHECK_STR(whole, bytes);
		CHECK(a.cached > 100);
		CHECK_INT(b.cached, 0);
		CHECK_INT(a.samples, b.samples);
		CHECK(a.samples > 0);
		CHECK_INT(a.other_events, b.other_events);
		CHECK_INT(a.filtered, b.filtered);
		CHECK_INT(a.bad_lines, b.bad_lines);
		CHECK_INT(a.lines, b.lines);
		free(whole);
		free(bytes);
	}
	fg_buf_release(&in);
}

/*
 * Samples alike to their first caller (the sample cache's hash): one ends
 * there, one has no caller, and 12 differ in a deeper caller, more than the
 * cache keeps with one hash; counted as folding each sample again counts them
 */
TEST(fold_sample_cache_same_head)
{
	struct fg_buf in = FG_BUF_INIT;
	struct fg_fold_stats a, b;

	for (int i = 0; i < 600; i++) {
		int v = i % 14;

		fg_buf_addf(&in, "app 1/2 [000] 1.0: 1 cpu-clock:\n\t%x leaf+0x%x (/b/app)\n",
			    0x1000 + i % 5, i % 5);
		if (v == 0) {
			fg_buf_addf(&in, "\n");
			continue;
		}
		fg_buf_addf(&in, "\t2000 mid+0x1 (/b/app)\n");
		if (v > 1)
			fg_buf_addf(&in, "\t%x deep%d (/b/app)\n\t3000 main (/b/app)\n", 0x4000 + v,
				    v);
		fg_buf_addf(&in, "\n");
	}
	char *whole = fold_fed(&plain, in.data, false, &a);
	char *bytes = fold_fed(&plain, in.data, true, &b);

	CHECK_STR(whole, bytes);
	CHECK(strstr(whole, "app;main;deep13;mid;leaf 42\n") != NULL);
	CHECK(strstr(whole, "\napp;mid;leaf 43\n") != NULL);
	CHECK(strncmp(whole, "app;leaf 43\n", 12) == 0);
	CHECK_INT(a.samples, 600);
	CHECK_INT(b.cached, 0);
	/*
	 * Cached after its first sample: the one with no caller, and 8 of the 13
	 * with mid first; the other 5 (deep9 to deep13: 43, 43, 43, 42, 42
	 * samples) are folded each time
	 */
	CHECK_INT(a.cached, 600 - 9 - (3 * 43 + 2 * 42));
	CHECK_INT(a.lines, b.lines);
	free(whole);
	free(bytes);
	fg_buf_release(&in);
}

TEST(fold_command_line_options)
{
	struct fg_fold_opts o = {.input = FG_FOLD_AUTO};
	uint64_t every = 0;
	const char *why = "x";

	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_INPUT, "bpftrace", &o, &every, &why), 0);
	CHECK_INT(o.input, FG_FOLD_BPFTRACE);
	CHECK(why == NULL);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_INPUT, "auto", &o, &every, &why), -EINVAL);
	CHECK_STR(why, "unknown input format '%s' (perf, folded or bpftrace)");
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_EVENT_FILTER, "cycles:u", &o, &every, &why), 0);
	CHECK_STR(o.event_filter, "cycles:u");
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_EVENT_FILTER, "", &o, &every, &why), -EINVAL);
	CHECK_STR(why, "invalid event name '%s'");
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_EVERY, "0.25", &o, &every, &why), 0);
	CHECK_INT(every, 250000000);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_EVERY, "0.0009", &o, &every, &why), -EINVAL);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_EVERY, "1", &o, NULL, &why), -ENOENT);
	CHECK(why == NULL);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_PID, NULL, &o, NULL, &why), 0);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_TID, NULL, &o, NULL, &why), 0);
	CHECK_INT(fg_fold_opt(FG_FOLD_OPT_SAMPLES, NULL, &o, NULL, &why), 0);
	CHECK(o.include_pid && o.include_tid && o.count_samples);
	CHECK_INT(fg_fold_opt('?', NULL, &o, &every, &why), -ENOENT);
}

int main(void)
{
	RUN(header_full);
	RUN(header_variants);
	RUN(header_rejects);
	RUN(header_shapes);
	RUN(header_default_path);
	RUN(header_memo);
	RUN(frame_on_header_line);
	RUN(extra_lines);
	RUN(counts);
	RUN(symnames);
	RUN(frame_parts);
	RUN(frame_module_parentheses);
	RUN(frame_rejects);
	RUN(srclines);
	RUN(events_and_modules);
	RUN(fold_names);
	RUN(fold_java);
	RUN(fold_options);
	RUN(fold_formats_and_errors);
	RUN(fold_perf_shapes);
	RUN(fold_sample_cache);
	RUN(fold_sample_cache_same_head);
	RUN(fold_command_line_options);
	return unit_done();
}
