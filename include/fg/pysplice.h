/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-sym's Python frames: the names of code objects from a stream's
 * FG_REC_PYCODE records, and a sample's Python frames spliced into its
 * native stack as perf script text.
 *
 * Each run of Python frames one C call of the eval loop ran takes the place
 * of the _PyEval_EvalFrameDefault frame that ran it: the innermost run the
 * innermost such frame, and so on outwards (a frame with FG_PY_ENTRY ends
 * a run).  Native code called from Python then sits under the Python
 * function that called it, Python called back from C above the C.  A frame
 * is named as CPython's perf trampolines name it, py::QUALNAME:FILENAME,
 * with ":LINE" when asked: the line the frame runs, from its instruction and
 * its code object's line table, else the line the function starts at.
 *
 *	struct fg_pysplice *p = fg_pysplice_new(lines);
 *	fg_pysplice_name(p, rec->pycode, rec->py_name, rec->py_file);	// each FG_REC_PYCODE
 *	fg_pysplice_stack(p, &buf, from, pid, frames, n);	// text of the user frames at
 *buf[from..] fg_pysplice_free(p);
 */
#ifndef FG_PYSPLICE_H
#define FG_PYSPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/buf.h"
#include "fg/record.h"

#define FG_PYSPLICE_NAMES_MAX (1u << 20)     /* code objects named, all processes */
#define FG_PYSPLICE_BYTES_MAX (256ull << 20) /* the bytes of their names */

struct fg_pysplice_stats {
	uint64_t stacks;	/* samples with Python frames */
	uint64_t frames;	/* their frames, written */
	uint64_t unnamed;	/* frames with no name in the stream (py::[unknown]) */
	uint64_t runs_unplaced; /* runs with no eval-loop frame left: put outermost */
	uint64_t evals_unused;	/* eval-loop frames with no run left: kept as they were */
	uint64_t names_dropped; /* name records over the bounds */
	uint64_t cut;		/* stacks cut at the sampler's bound (FG_PYSTACK_F_CUT) */
	uint64_t not_spliced;	/* samples whose frames could not be spliced (held text) */
	/* with lines: frames given their function's first line, not the running one, because */
	uint64_t lines_no_offset; /* the sample has no instruction for it (an older capture) */
	uint64_t lines_no_table;  /* its name record has no line table */
	uint64_t lines_not_found; /* the table gives no line there, or is malformed */
};

struct fg_pysplice;

/* `lines`: ":LINE" after each name (fg-sym --py-lines).  Never NULL. */
struct fg_pysplice *fg_pysplice_new(bool lines);
void fg_pysplice_free(struct fg_pysplice *p);
/*
 * The name of a code object (a record already checked by fg_rec_parse), and
 * its line table of tlen bytes in `format` (enum fg_pyline_format), or NULL.
 */
void fg_pysplice_name(struct fg_pysplice *p, const struct fg_rec_pycode *c, const char *name,
		      const char *file, const uint8_t *table, uint32_t tlen, uint8_t format);
/*
 * The user frames written at b->data[from..b->len) as perf script lines
 * ("\tADDR SYMBOL (MODULE)", maybe followed by "  FILE:LINE" lines),
 * rewritten with the n Python frames of process pid in their place;
 * `offsets`, when not NULL, n uint32_t (unaligned): each frame's
 * instruction, for the line it runs (FG_PY_NO_OFFSET: its first line).
 */
void fg_pysplice_stack(struct fg_pysplice *p, struct fg_buf *b, size_t from, uint32_t pid,
		       const uint64_t *frames, const uint8_t *offsets, size_t n, uint32_t flags);
/* The text of a sample not spliced: counted. */
void fg_pysplice_skip(struct fg_pysplice *p);
void fg_pysplice_stats(const struct fg_pysplice *p, struct fg_pysplice_stats *st);

#endif
