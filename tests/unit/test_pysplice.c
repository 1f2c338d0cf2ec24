// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for Python frames: fg-sym's splice of each run in place of the
 * eval loop's frame (lib/pysplice), and fg-sample's layout for the BPF walk
 * of every version in the table (lib/pyprocs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/bpf_abi.h"
#include "fg/pyline.h"
#include "fg/pyprocs.h"
#include "fg/pysplice.h"
#include "unit.h"

#define EVAL "\t  10 _PyEval_EvalFrameDefault+0x10 (/usr/bin/python3.11)\n"

static void name(struct fg_pysplice *p, uint32_t pid, uint64_t code, const char *n, const char *f,
		 int line)
{
	struct fg_rec_pycode c = {.pid = pid, .firstlineno = line, .code = code};

	fg_pysplice_name(p, &c, n, f, NULL, 0, 0);
}

/* the text of a stack spliced: the frames' symbols only, one a line */
static char *spliced(struct fg_pysplice *p, const char *text, uint32_t pid, const uint64_t *fr,
		     size_t n)
{
	struct fg_buf b = FG_BUF_INIT;
	size_t from;

	fg_buf_addstr(&b, "header\n");
	from = b.len;
	fg_buf_addstr(&b, text);
	fg_pysplice_stack(p, &b, from, pid, fr, NULL, n, 0);
	return fg_buf_detach(&b, NULL);
}

/* each run takes its eval frame's place, innermost first; native frames between stay */
TEST(runs_take_their_eval_frames)
{
	struct fg_pysplice *p = fg_pysplice_new(false);
	/* cmp (called back from qsort) is one run; hot, main another */
	uint64_t fr[] = {0x100 | FG_PY_ENTRY, 0x200, 0x300 | FG_PY_ENTRY};
	struct fg_pysplice_stats st;
	char *out;

	name(p, 7, 0x100, "cmp", "/a.py", 3);
	name(p, 7, 0x200, "Packer.pack", "/srv/app/pack.py", 10);
	name(p, 7, 0x300, "main", "/a.py", 20);
	out = spliced(p,
		      "\t   1 deflate+0x1 (/lib/libz.so)\n" EVAL
		      "\t   2 qsort+0x2 (/lib/libc.so)\n" EVAL
		      "\t   3 main+0x3 (/usr/bin/python3.11)\n",
		      7, fr, 3);
	CHECK_STR(out, "header\n"
		       "\t   1 deflate+0x1 (/lib/libz.so)\n"
		       "\t             100 py::cmp:/a.py (/usr/bin/python3.11)\n"
		       "\t   2 qsort+0x2 (/lib/libc.so)\n"
		       "\t             200 py::Packer.pack:/srv/app/pack.py (/usr/bin/python3.11)\n"
		       "\t             300 py::main:/a.py (/usr/bin/python3.11)\n"
		       "\t   3 main+0x3 (/usr/bin/python3.11)\n");
	free(out);
	fg_pysplice_stats(p, &st);
	CHECK_INT(st.stacks, 1);
	CHECK_INT(st.frames, 3);
	CHECK_INT(st.unnamed + st.runs_unplaced + st.evals_unused, 0);
	fg_pysplice_free(p);
}

/* frames without a name, runs without an eval frame, eval frames without a run: counted */
TEST(what_does_not_fit_is_counted)
{
	struct fg_pysplice *p = fg_pysplice_new(true);
	uint64_t one[] = {0x100 | FG_PY_ENTRY, 0x999 | FG_PY_ENTRY};
	struct fg_pysplice_stats st;
	char *out;

	name(p, 7, 0x100, "f", "/a.py", 3);
	name(p, 8, 0x999, "other", "/b.py", 1); /* another process's */
	out = spliced(p, EVAL, 7, one, 2);
	CHECK_STR(out, "header\n"
		       "\t             100 py::f:/a.py:3 (/usr/bin/python3.11)\n"
		       "\t             999 py::[unknown] (/usr/bin/python3.11)\n");
	free(out);
	out = spliced(p, EVAL EVAL, 7, one, 1);
	CHECK(strstr(out, "py::f:/a.py:3") && strstr(out, "_PyEval_EvalFrameDefault+0x10"));
	free(out);
	fg_pysplice_stats(p, &st);
	CHECK_INT(st.unnamed, 1);
	CHECK_INT(st.runs_unplaced, 1);
	CHECK_INT(st.evals_unused, 1);
	/* a later record replaces the name at that address; names are escaped when written */
	name(p, 7, 0x100, "g\xff", "/c.py", 9);
	out = spliced(p, EVAL, 7, one, 1);
	CHECK(strstr(out, "py::g\\xff:/c.py:9 ") != NULL);
	free(out);
	fg_pysplice_free(p);
}

/* a frame whose symbol only begins like the eval loop's is not taken for it */
TEST(only_the_eval_loop)
{
	struct fg_pysplice *p = fg_pysplice_new(false);
	uint64_t one[] = {0x100 | FG_PY_ENTRY};
	char *out;

	out = spliced(p,
		      "\t  10 _PyEval_EvalFrameDefaultX+0x1 (/x)\n"
		      "\t  11 _PyEval_EvalFrameDefault.cold+0x1 (/y)\n",
		      7, one, 1);
	CHECK_STR(out, "header\n"
		       "\t  10 _PyEval_EvalFrameDefaultX+0x1 (/x)\n"
		       "\t             100 py::[unknown] (/y)\n");
	free(out);
	fg_pysplice_free(p);
}

/* with lines: the line each frame runs, from its instruction and its table; else its first */
TEST(running_lines)
{
	struct fg_pysplice *p = fg_pysplice_new(true);
	/* 3.11+: units 0-1 line 10 (short form), unit 2 line 12, unit 3 none */
	static const uint8_t table[] = {0x80 | 1, 0x12, 0x80 | 12 << 3, 3, 9, 0x80 | 15 << 3};
	struct fg_rec_pycode c = {.pid = 7, .firstlineno = 10, .code = 0x100};
	struct fg_rec_pycode d = {.pid = 7, .firstlineno = 20, .code = 0x200};
	uint64_t fr[] = {0x100, 0x100, 0x100, 0x100, 0x200 | FG_PY_ENTRY};
	uint32_t off[] = {4, 2, 6, FG_PY_NO_OFFSET, 0};
	struct fg_pysplice_stats st;
	struct fg_buf b = FG_BUF_INIT;
	char *out;

	fg_pysplice_name(p, &c, "f", "/a.py", table, sizeof(table), FG_PYLINE_LOCATIONS);
	fg_pysplice_name(p, &d, "g", "/b.py", NULL, 0, 0);
	fg_buf_addstr(&b, "header\n" EVAL);
	fg_pysplice_stack(p, &b, 7, 7, fr, (const uint8_t *)off, 5, 0);
	out = fg_buf_detach(&b, NULL);
	CHECK_STR(out, "header\n"
		       "\t             100 py::f:/a.py:12 (/usr/bin/python3.11)\n"
		       "\t             100 py::f:/a.py:10 (/usr/bin/python3.11)\n"
		       "\t             100 py::f:/a.py:10 (/usr/bin/python3.11)\n"
		       "\t             100 py::f:/a.py:10 (/usr/bin/python3.11)\n"
		       "\t             200 py::g:/b.py:20 (/usr/bin/python3.11)\n");
	free(out);
	fg_pysplice_stats(p, &st);
	CHECK_INT(st.lines_not_found, 1);
	CHECK_INT(st.lines_no_offset, 1);
	CHECK_INT(st.lines_no_table, 1);
	fg_pysplice_free(p);
}

/* the BPF walk's layout of each version: the frame read covers every field it reads */
TEST(layouts_for_the_bpf_walk)
{
	static const unsigned minors[] = {8, 9, 10, 11, 12, 13};
	static const uint8_t kinds[] = {FG_PY_KIND_OBJECTS,  FG_PY_KIND_OBJECTS, FG_PY_KIND_OBJECTS,
					FG_PY_KIND_IS_ENTRY, FG_PY_KIND_CSTACK,	 FG_PY_KIND_CSTACK};
	static const uint8_t instrs[] = {FG_PY_INSTR_LASTI_BYTES, FG_PY_INSTR_LASTI_BYTES,
					 FG_PY_INSTR_LASTI_UNITS, FG_PY_INSTR_POINTER,
					 FG_PY_INSTR_POINTER,	  FG_PY_INSTR_POINTER};

	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		struct fg_py py = {.major = 3,
				   .minor = minors[i],
				   .runtime = 0x10000,
				   .pthread_specific_off = 0x310};
		struct fg_py_proc bp;

		py.off = fg_py_offsets(3, minors[i]);
		CHECK(py.off != NULL);
		CHECK_INT(fg_pyprocs_proc_of(&py, &bp), 0);
		CHECK_INT(bp.kind, kinds[i]);
		CHECK_INT(bp.tss_key, 0x10000 + py.off->runtime_tss_key - 4);
		CHECK(bp.frame_read >= bp.frame_previous + 8 && bp.frame_read >= bp.frame_code + 8);
		CHECK(bp.frame_read > bp.frame_owner && bp.frame_read > bp.frame_is_entry);
		CHECK(bp.frame_read < FG_PY_FRAME_READ_MAX && bp.frame_read % 8 == 0);
		/* the instruction, in the same read: f_lasti before 3.11, a pointer after */
		CHECK_INT(bp.instr_kind, instrs[i]);
		CHECK(bp.frame_read >= bp.frame_instr + (minors[i] >= 11 ? 8 : 4));
		CHECK_INT(bp.code_code, py.off->code_code);
	}
	/* glibc's slots not found: nothing to walk */
	struct fg_py none = {.major = 3, .minor = 12, .pthread_specific_off = -1};
	struct fg_py_proc bp;

	none.off = fg_py_offsets(3, 12);
	CHECK_INT(fg_pyprocs_proc_of(&none, &bp), -ENOTSUP);
}

int main(void)
{
	RUN(runs_take_their_eval_frames);
	RUN(what_does_not_fit_is_counted);
	RUN(only_the_eval_loop);
	RUN(running_lines);
	RUN(layouts_for_the_bpf_walk);
	return unit_done();
}
