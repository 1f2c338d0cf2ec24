// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/diff.c: two folded profiles into one differential profile. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/diff.h"
#include "unit.h"

static int memfd(const char *text)
{
	int fd = memfd_create("t", 0);

	if (fd >= 0 && (write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
			lseek(fd, 0, SEEK_SET) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int nlogged;

static void count_log(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
	nlogged++;
}

/* the differential profile of two texts, as a string the caller frees */
static char *diff(const char *a, const char *b, bool normalize, bool strip_hex, uint64_t *bad)
{
	struct fg_diff_opts o = {.normalize = normalize, .strip_hex = strip_hex};
	struct fg_diff *d = fg_diff_new(&o, count_log, NULL);
	int fa = memfd(a), fb = memfd(b);
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);

	fg_diff_read(d, 0, fa, "a");
	fg_diff_read(d, 1, fb, "b");
	fg_diff_write(d, mem);
	fclose(mem);
	*bad = fg_diff_stats(d)->bad_lines;
	fg_diff_free(d);
	close(fa);
	close(fb);
	return out;
}

TEST(sorted_union_with_zeros)
{
	uint64_t bad;
	char *s = diff("b;c 2\na 1\nb;c 3\n", "a 4\nz 1\n", false, false, &bad);

	CHECK_STR(s, "a 1 4\nb;c 5 0\nz 0 1\n");
	CHECK_INT(bad, 0);
	free(s);
}

TEST(normalize_truncates)
{
	uint64_t bad;
	/* totals 3 and 10: 1 -> 3.33 -> 3, 2 -> 6.67 -> 6 */
	char *s = diff("x 1\ny 2\n", "x 5\ny 5\n", true, false, &bad);

	CHECK_STR(s, "x 3 5\ny 6 5\n");
	free(s);
}

TEST(strip_hex_merges_addresses)
{
	uint64_t bad;
	char *s = diff("a;0x1f;b 1\na;0xABC;b 2\n10x5 1\n0x 1\n", "a;0x2;b 4\n", false, true, &bad);

	CHECK_STR(s, "0x 1 0\n10x... 1 0\na;0x...;b 3 4\n");
	free(s);
}

TEST(fractions_and_bad_lines)
{
	uint64_t bad;

	nlogged = 0;
	char *s = diff("a 1.5\na 1.75\nno count\n\n  \n", "a 2.\n", false, false, &bad);
	CHECK_STR(s, "a 3 2\n");
	CHECK_INT(bad, 1);
	CHECK_INT(nlogged, 1);
	free(s);
}

int main(void)
{
	RUN(sorted_union_with_zeros);
	RUN(normalize_truncates);
	RUN(strip_hex_merges_addresses);
	RUN(fractions_and_bad_lines);
	return unit_done();
}
