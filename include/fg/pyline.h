/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPython's line tables, decoded: the line of the instruction at an offset
 * of a code object's bytecode, as the interpreter's own tracebacks give it.
 *
 *	int line;
 *	size_t bad;
 *	int err = fg_pyline_line(fg_pyline_format(3, 11), table, len, firstlineno,
 *				 offset_in_bytes, &line, &bad);
 *	// 0: line set; -ENOENT: no line there; -EINVAL: the table is malformed at byte `bad`
 *
 * The three formats, written from CPython's descriptions of them
 * (Objects/lnotab_notes.txt, Objects/locations.md), never from its code:
 *
 * FG_PYLINE_LNOTAB (3.8, 3.9, co_lnotab): pairs of bytes, (bytecode bytes
 *	advanced, lines advanced as a signed byte); the line of an offset is
 *	co_firstlineno plus the line steps of every pair whose address, summed,
 *	is not past it.
 * FG_PYLINE_RANGES (3.10, co_linetable, PEP 626): pairs (bytes the range
 *	covers, signed line delta), each pair a range of bytecode following the
 *	one before; a delta of -128 means the range has no line (the line
 *	stays where it was for the next).
 * FG_PYLINE_LOCATIONS (3.11+, co_linetable, PEP 657): entries each opening
 *	with a byte whose top bit is set, its bits 3-6 a code and bits 0-2 the
 *	entry's length in code units (2 bytes) less one, then the code's
 *	operands in 6-bit varints (bit 6: more follows; signed: the lowest bit
 *	is the sign).  Codes 0-9: the same line (one column byte), 10-12: the
 *	line plus code-10 (two column bytes), 13: a signed line delta only,
 *	14: a signed line delta and three varints (end line, columns), 15: no
 *	line.
 *
 * The table may be hostile (another process's memory): every read is
 * bounded by len, a runaway line count is refused, and a malformed table is
 * -EINVAL with the byte where it breaks, never a crash.
 */
#ifndef FG_PYLINE_H
#define FG_PYLINE_H

#include <stddef.h>
#include <stdint.h>

enum fg_pyline_format {
	FG_PYLINE_NONE,	     /* a version without a table this reads */
	FG_PYLINE_LNOTAB,    /* 3.8, 3.9 */
	FG_PYLINE_RANGES,    /* 3.10 */
	FG_PYLINE_LOCATIONS, /* 3.11 to 3.13 (and on, while locations.md holds) */
};

/* The format of CPython major.minor's table. */
enum fg_pyline_format fg_pyline_format(unsigned major, unsigned minor);

/*
 * The line of the instruction at byte `offset` of the bytecode whose table is
 * t[0..len) and whose first line is `firstlineno`: 0 with *line set; -ENOENT
 * when the table gives no line there (an offset past its end, a range
 * without a line); -EINVAL when the table is malformed (*bad: the byte
 * offset where it breaks), or the format unknown.
 */
int fg_pyline_line(enum fg_pyline_format fmt, const uint8_t *t, size_t len, int firstlineno,
		   uint32_t offset, int *line, size_t *bad);

#endif
