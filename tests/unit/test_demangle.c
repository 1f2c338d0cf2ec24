// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/demangle.c: names as perf shows them, and bounded whatever the input. */
#include <stdbool.h>
#include <stdlib.h>

#include "fg/buf.h"
#include "fg/demangle.h"
#include "unit.h"

/*
 * A name nesting a<X, X> `depth` levels deep by substitution: each level's
 * arguments are the previous level (S1_, S3_, S5_, ... in base 36), so the
 * demangled name doubles with each level while the mangled one grows by ten
 * bytes.  Depth 25 is about 300 bytes, demangled to about a gigabyte.
 */
static char *bomb_of(const char *a, int depth)
{
	static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addf(&b, "_Z1fI%sIiiE", a);
	for (int k = 1; k <= depth; k++) {
		int id = 2 * k - 1;
		char s[8];

		if (id < 36)
			snprintf(s, sizeof(s), "%c", b36[id]);
		else
			snprintf(s, sizeof(s), "%c%c", b36[id / 36], b36[id % 36]);
		fg_buf_addf(&b, "%sIS%s_S%s_E", a, s, s);
	}
	fg_buf_addf(&b, "EvT_");
	return fg_buf_detach(&b, NULL);
}

static char *bomb(int depth)
{
	return bomb_of("1a", depth);
}

static size_t demangled_len(const char *name, bool params)
{
	char *d = params ? fg_demangle_params(name) : fg_demangle(name);
	size_t n = d ? strlen(d) : 0;

	free(d);
	return n;
}

TEST(names_as_perf_shows_them)
{
	char *d;

	CHECK_STR(d = fg_demangle("_ZN2ns1fIiEEvT_"), "ns::f<int>");
	free(d);
	CHECK_STR(d = fg_demangle_params("_ZN2ns1fIiEEvT_"), "void ns::f<int>(int)");
	free(d);
	CHECK_STR(d = fg_demangle("_ZN4core3str5Split4next17h0123456789abcdefE"),
		  "core::str::Split::next");
	free(d);
	CHECK_STR(d = fg_demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
	free(d);
	CHECK(fg_demangle("main") == NULL);
	CHECK(fg_demangle("_Zinvalid") == NULL);
}

TEST(a_small_nesting_is_whole)
{
	char *b = bomb(3), *d = fg_demangle_params(b);
	uint64_t before = fg_demangle_cut_count();

	/* c++filt: 259 bytes, each level doubling */
	CHECK(d != NULL);
	CHECK_INT(strlen(d), 259);
	CHECK(strstr(d, FG_DEMANGLE_CUT_MARK) == NULL);
	CHECK_INT(fg_demangle_cut_count(), before);
	free(d);
	free(b);
	b = bomb(4);
	CHECK_INT(demangled_len(b, true), 527);
	free(b);
}

TEST(a_bomb_is_cut_at_the_bound)
{
	for (int depth = 10; depth <= 60; depth += 10) {
		char *b = bomb(depth), *d;
		uint64_t before = fg_demangle_cut_count();

		for (int params = 0; params < 2; params++) {
			d = params ? fg_demangle_params(b) : fg_demangle(b);
			CHECK(d != NULL);
			CHECK_INT(strlen(d), FG_DEMANGLE_MAX);
			CHECK(strncmp(d,
				      params ? "void f<a<int, int>, a<a<int"
					     : "f<a<int, int>, a<a<int",
				      params ? 27 : 22) == 0);
			CHECK_STR(d + FG_DEMANGLE_MAX - strlen(FG_DEMANGLE_CUT_MARK),
				  FG_DEMANGLE_CUT_MARK);
			free(d);
		}
		CHECK_INT(fg_demangle_cut_count(), before + 2);
		free(b);
	}
}

TEST(a_cut_keeps_whole_characters)
{
	/* a template of an identifier in UTF-8 ("é", 2 bytes), nested past the bound */
	char *b = bomb_of("2\xc3\xa9", 20), *d = fg_demangle(b);

	CHECK(d != NULL);
	CHECK(strlen(d) <= FG_DEMANGLE_MAX);
	size_t n = strlen(d) - strlen(FG_DEMANGLE_CUT_MARK);
	CHECK_STR(d + n, FG_DEMANGLE_CUT_MARK);
	/* the byte before the mark ends a character: not a lead byte of two */
	CHECK(((unsigned char)d[n - 1] & 0xe0) != 0xc0);
	free(d);
	free(b);
}

/*
 * A pack expansion whose pattern nests a<X, X> `depth` levels by substitution,
 * defined inside the pattern: libiberty walks the whole pattern for a pack
 * before it prints a byte (depth 28, 90 bytes: 40 s).
 */
static char *pack_bomb(int depth)
{
	static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addf(&b, "_Z1fDp");
	for (int k = 0; k < depth; k++)
		fg_buf_addf(&b, "1aI");
	fg_buf_addf(&b, "1aIiiE");
	/* level k's second argument is level k - 1: substitution depth + k, S<depth + k - 1>_ */
	for (int k = 1; k <= depth; k++)
		fg_buf_addf(&b, "S%c_E", b36[depth + k - 1]);
	return fg_buf_detach(&b, NULL);
}

TEST(a_pack_expansion_bomb_gives_the_mangled_name)
{
	char *b = pack_bomb(2), *d = fg_demangle_params(b);
	uint64_t before;

	CHECK_STR(d, "f((a<a<a<int, int>, a<int, int> >, a<a<int, int>, a<int, int> > >)...)");
	free(d);
	free(b);
	b = pack_bomb(17);
	before = fg_demangle_cut_count();
	d = fg_demangle_params(b);
	CHECK(d != NULL);
	CHECK(strncmp(d, b, strlen(b)) == 0);
	CHECK_STR(d + strlen(b), FG_DEMANGLE_CUT_MARK);
	CHECK_INT(fg_demangle_cut_count(), before + 1);
	free(d);
	free(b);
}

/* a Rust v0 name binding millions of lifetimes where nothing is printed: at once, left mangled */
TEST(a_rust_binder_bomb_gives_the_mangled_name)
{
	uint64_t before = fg_demangle_cut_count();
	char *d = fg_demangle("_RXYFGFFFB3_");

	CHECK(d != NULL);
	CHECK(strncmp(d, "_RXYFGFFFB3_", 12) == 0);
	CHECK_STR(d + 12, FG_DEMANGLE_CUT_MARK);
	CHECK_INT(fg_demangle_cut_count(), before + 1);
	free(d);
	/* a binder of two lifetimes is a name */
	d = fg_demangle("_RNvCs1234_7mycrate3fooFG0_EuE");
	free(d);
}

TEST(a_long_mangled_name_is_left_alone)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addf(&b, "_ZN");
	while (b.len <= FG_DEMANGLE_MAX_MANGLED)
		fg_buf_addf(&b, "3abc");
	fg_buf_addf(&b, "Ev");
	CHECK(fg_demangle(b.data) == NULL);
	fg_buf_release(&b);
}

int main(void)
{
	RUN(names_as_perf_shows_them);
	RUN(a_small_nesting_is_whole);
	RUN(a_bomb_is_cut_at_the_bound);
	RUN(a_cut_keeps_whole_characters);
	RUN(a_pack_expansion_bomb_gives_the_mangled_name);
	RUN(a_long_mangled_name_is_left_alone);
	RUN(a_rust_binder_bomb_gives_the_mangled_name);
	return unit_done();
}
