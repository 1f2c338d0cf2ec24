// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for lib/pyline: each format's decoder against the tables the
 * real interpreters built (tests/data/python/lines-3.X.txt, made by
 * mklines.py under each version), and against hostile tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/pyline.h"
#include "unit.h"

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Every offset of every code object in one version's file decodes to the
 * line the interpreter gives: the number of offsets checked, or -1 (the
 * first mismatch printed).
 */
static long check_file(const char *version, unsigned minor)
{
	enum fg_pyline_format fmt = fg_pyline_format(3, minor);
	static char text[1 << 20];
	static uint8_t table[1 << 16];
	char path[256], *save = NULL;
	size_t len = 0, tlen = 0;
	int first = 0;
	long checked = 0;
	FILE *f;

	snprintf(path, sizeof(path), "tests/data/python/lines-%s.txt", version);
	f = fopen(path, "r");
	if (!f) {
		printf("# cannot open %s\n", path);
		return -1;
	}
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(ln, "code ", 5)) {
			char name[256], hx[1 << 17];

			if (sscanf(ln, "code %255s %d %131071s", name, &first, hx) != 3)
				return -1;
			tlen = 0;
			for (size_t i = 0; hx[i] && hx[i + 1] && hx[0] != '-'; i += 2)
				table[tlen++] = (uint8_t)(hex(hx[i]) << 4 | hex(hx[i + 1]));
		} else if (!strncmp(ln, "lines ", 6)) {
			char *p = ln + 6;
			unsigned off;
			int want, got, n, err;
			size_t bad;

			while (sscanf(p, "%u:%d%n", &off, &want, &n) == 2) {
				p += n;
				got = -1;
				err = fg_pyline_line(fmt, table, tlen, first, off, &got, &bad);
				if (err && err != -ENOENT) {
					printf("# %s: offset %u: error %d at byte %zu\n", version,
					       off, err, bad);
					return -1;
				}
				if (err)
					got = -1;
				if (got != want) {
					printf("# %s: offset %u: line %d, the interpreter's %d\n",
					       version, off, got, want);
					return -1;
				}
				checked++;
			}
		}
	}
	return checked;
}

TEST(lnotab_38_39)
{
	CHECK(check_file("3.8", 8) > 1000);
	CHECK(check_file("3.9", 9) > 1000);
}

TEST(ranges_310)
{
	CHECK(check_file("3.10", 10) > 1000);
}

TEST(locations_311_to_313)
{
	CHECK(check_file("3.11", 11) > 1000);
	CHECK(check_file("3.11-debian", 11) > 1000);
	CHECK(check_file("3.12", 12) > 1000);
	CHECK(check_file("3.13", 13) > 1000);
}

TEST(formats)
{
	CHECK_INT(fg_pyline_format(3, 7), FG_PYLINE_NONE);
	CHECK_INT(fg_pyline_format(2, 9), FG_PYLINE_NONE);
	CHECK_INT(fg_pyline_format(3, 8), FG_PYLINE_LNOTAB);
	CHECK_INT(fg_pyline_format(3, 10), FG_PYLINE_RANGES);
	CHECK_INT(fg_pyline_format(3, 13), FG_PYLINE_LOCATIONS);
}

/* malformed tables: refused with the byte where they break, never read past */
TEST(hostile)
{
	/* an odd length */
	static const uint8_t odd[] = {2, 1, 2};
	/* an entry's first byte without its top bit */
	static const uint8_t nohead[] = {0x80 | 13 << 3, 2, 0x05};
	/* a varint that never ends */
	static const uint8_t endless[] = {0x80 | 13 << 3, 0x41, 0x41};
	/* a varint too long for 32 bits */
	static const uint8_t huge[] = {0x80 | 13 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f};
	/* a line counted past any program's */
	uint8_t climb[4096];
	int line = 7;
	size_t bad = 99;

	CHECK_INT(fg_pyline_line(FG_PYLINE_LNOTAB, odd, sizeof(odd), 1, 10, &line, &bad), -EINVAL);
	CHECK_INT(bad, 2);
	CHECK_INT(fg_pyline_line(FG_PYLINE_RANGES, odd, sizeof(odd), 1, 10, &line, &bad), -EINVAL);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, nohead, sizeof(nohead), 1, 10, &line, &bad),
		  -EINVAL);
	CHECK_INT(bad, 2);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, endless, sizeof(endless), 1, 0, &line, &bad),
		  -EINVAL);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, huge, sizeof(huge), 1, 0, &line, &bad),
		  -EINVAL);
	for (size_t i = 0; i < sizeof(climb); i += 2) {
		climb[i] = 0;
		climb[i + 1] = 127;
	}
	CHECK_INT(fg_pyline_line(FG_PYLINE_LNOTAB, climb, sizeof(climb), (1 << 30) - 1000, 0, &line,
				 &bad),
		  -EINVAL);
	CHECK_INT(fg_pyline_line(FG_PYLINE_NONE, climb, 2, 1, 0, &line, &bad), -EINVAL);
	/* empty tables: lnotab's first line; none in the others */
	CHECK_INT(fg_pyline_line(FG_PYLINE_LNOTAB, climb, 0, 5, 40, &line, &bad), 0);
	CHECK_INT(line, 5);
	CHECK_INT(fg_pyline_line(FG_PYLINE_RANGES, climb, 0, 5, 0, &line, &bad), -ENOENT);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, climb, 0, 5, 0, &line, &bad), -ENOENT);
}

/* each location form by hand: short, one-line, no-column, long, none */
TEST(location_forms)
{
	static const uint8_t t[] = {
	    0x80 | 0 << 3 | 1,	0x12,		  /* units 0-1: short, line 10 */
	    0x80 | 12 << 3 | 0, 3,    9,	  /* unit 2: one-line, +2: 12 */
	    0x80 | 13 << 3 | 2, 0x47, 0x01,	  /* units 3-5: -(0x47&63 | 1<<6)>>1 ... */
	    0x80 | 15 << 3 | 0,			  /* unit 6: none */
	    0x80 | 14 << 3 | 7, 0x0a, 0,    1, 2, /* units 7-14: long, +5 */
	};
	int line = 0;
	size_t bad;

	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 2, &line, &bad), 0);
	CHECK_INT(line, 10);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 4, &line, &bad), 0);
	CHECK_INT(line, 12);
	/* 0x47, 0x01: 7 | 1 << 6 = 71, odd: -(35) */
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 10, &line, &bad), 0);
	CHECK_INT(line, 12 - 35);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 12, &line, &bad), -ENOENT);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 28, &line, &bad), 0);
	CHECK_INT(line, 12 - 35 + 5);
	CHECK_INT(fg_pyline_line(FG_PYLINE_LOCATIONS, t, sizeof(t), 10, 30, &line, &bad), -ENOENT);
}

int main(void)
{
	RUN(lnotab_38_39);
	RUN(ranges_310);
	RUN(locations_311_to_313);
	RUN(formats);
	RUN(hostile);
	RUN(location_forms);
	return unit_done();
}
