// SPDX-License-Identifier: BSD-2-Clause
/* CPython's line tables, decoded: see include/fg/pyline.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "fg/pyline.h"

/* a line beyond this either way is a table gone wrong, not a program */
#define LINE_MAX_ABS (1 << 30)

enum fg_pyline_format fg_pyline_format(unsigned major, unsigned minor)
{
	if (major != 3 || minor < 8)
		return FG_PYLINE_NONE;
	if (minor < 10)
		return FG_PYLINE_LNOTAB;
	return minor == 10 ? FG_PYLINE_RANGES : FG_PYLINE_LOCATIONS;
}

static bool line_ok(int64_t line)
{
	return line > -LINE_MAX_ABS && line < LINE_MAX_ABS;
}

/* 3.8, 3.9: (bytes advanced, signed lines advanced) pairs */
static int lnotab(const uint8_t *t, size_t len, int64_t line, uint32_t offset, int *out,
		  size_t *bad)
{
	uint64_t addr = 0;

	for (size_t i = 0; i < len; i += 2) {
		addr += t[i];
		if (addr > offset)
			break;
		line += (int8_t)t[i + 1];
		if (!line_ok(line)) {
			*bad = i + 1;
			return -EINVAL;
		}
	}
	*out = (int)line;
	return 0;
}

/* 3.10: (bytes the range covers, signed line delta or -128: none) pairs */
static int ranges(const uint8_t *t, size_t len, int64_t line, uint32_t offset, int *out,
		  size_t *bad)
{
	uint64_t end = 0;

	for (size_t i = 0; i < len; i += 2) {
		uint64_t start = end;
		int8_t delta = (int8_t)t[i + 1];

		end += t[i];
		if (delta != -128) {
			line += delta;
			if (!line_ok(line)) {
				*bad = i + 1;
				return -EINVAL;
			}
		}
		if (offset >= start && offset < end) {
			if (delta == -128)
				return -ENOENT;
			*out = (int)line;
			return 0;
		}
	}
	return -ENOENT;
}

/* one operand byte of a location entry at t[*i]: false when none or another entry's */
static bool operand(const uint8_t *t, size_t len, size_t *i, uint8_t *b)
{
	if (*i >= len || t[*i] & 0x80)
		return false;
	*b = t[(*i)++];
	return true;
}

/* a 6-bit-chunk varint, least significant first, bit 6 to continue */
static bool varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	uint8_t b;
	unsigned shift = 0;

	*v = 0;
	do {
		if (shift > 30 || !operand(t, len, i, &b))
			return false;
		*v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

/* the signed form: the lowest bit the sign, the rest the magnitude */
static bool svarint(const uint8_t *t, size_t len, size_t *i, int64_t *v)
{
	uint32_t u;

	if (!varint(t, len, i, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

/* one entry's operands from t[*i]: its line delta, and whether it has a line */
static bool location(const uint8_t *t, size_t len, size_t *i, unsigned code, int64_t *delta,
		     bool *has_line)
{
	uint8_t b;
	uint32_t u;

	*delta = 0;
	*has_line = code != 15;
	if (code <= 9)
		return operand(t, len, i, &b);
	if (code <= 12) {
		*delta = code - 10;
		return operand(t, len, i, &b) && operand(t, len, i, &b);
	}
	if (code == 13)
		return svarint(t, len, i, delta);
	if (code == 14)
		return svarint(t, len, i, delta) && varint(t, len, i, &u) &&
		       varint(t, len, i, &u) && varint(t, len, i, &u);
	return true;
}

/* 3.11+: the location table, entries of 1 to 8 code units */
static int locations(const uint8_t *t, size_t len, int64_t line, uint32_t offset, int *out,
		     size_t *bad)
{
	uint64_t unit = offset / 2, at = 0;
	size_t i = 0;

	while (i < len) {
		size_t start = i;
		unsigned code = t[i] >> 3 & 15, n = (t[i] & 7) + 1;
		int64_t delta;
		bool has_line;

		if (!(t[i] & 0x80) || (i++, !location(t, len, &i, code, &delta, &has_line))) {
			*bad = i < len ? i : start;
			return -EINVAL;
		}
		line += delta;
		if (!line_ok(line)) {
			*bad = start;
			return -EINVAL;
		}
		if (unit >= at && unit < at + n) {
			if (!has_line)
				return -ENOENT;
			*out = (int)line;
			return 0;
		}
		at += n;
	}
	return -ENOENT;
}

int fg_pyline_line(enum fg_pyline_format fmt, const uint8_t *t, size_t len, int firstlineno,
		   uint32_t offset, int *line, size_t *bad)
{
	*bad = 0;
	if ((fmt == FG_PYLINE_LNOTAB || fmt == FG_PYLINE_RANGES) && len % 2) {
		*bad = len - 1; /* pairs of bytes, the last one alone */
		return -EINVAL;
	}
	switch (fmt) {
	case FG_PYLINE_LNOTAB:
		return lnotab(t, len, firstlineno, offset, line, bad);
	case FG_PYLINE_RANGES:
		return ranges(t, len, firstlineno, offset, line, bad);
	case FG_PYLINE_LOCATIONS:
		return locations(t, len, firstlineno, offset, line, bad);
	default:
		return -EINVAL;
	}
}
