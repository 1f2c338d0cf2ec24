/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal unit-test harness printing TAP, which tests/run counts.
 *
 *	TEST(buf_grows) { ... CHECK(x == 1); CHECK_STR(a, "b"); }
 *	int main(void) { RUN(buf_grows); return unit_done(); }
 */
#ifndef FG_UNIT_H
#define FG_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_n, unit_failed, unit_cur_failed;

#define TEST(name) static void name(void)

#define RUN(name)                                                                                  \
	do {                                                                                       \
		unit_cur_failed = 0;                                                               \
		name();                                                                            \
		unit_n++;                                                                          \
		if (unit_cur_failed)                                                               \
			unit_failed++;                                                             \
		printf("%s %d - %s\n", unit_cur_failed ? "not ok" : "ok", unit_n, #name);          \
		fflush(stdout);                                                                    \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("# %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);          \
			unit_cur_failed = 1;                                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *unit_a = (a), *unit_b = (b);                                           \
		if (!unit_a || !unit_b || strcmp(unit_a, unit_b) != 0) {                           \
			printf("# %s:%d: '%s' != '%s'\n", __FILE__, __LINE__,                      \
			       unit_a ? unit_a : "(null)", unit_b ? unit_b : "(null)");            \
			unit_cur_failed = 1;                                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long unit_a = (long long)(a), unit_b = (long long)(b);                        \
		if (unit_a != unit_b) {                                                            \
			printf("# %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a,     \
			       unit_a, unit_b);                                                    \
			unit_cur_failed = 1;                                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif
