// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"
#include "fg/perfmap.h"
#include "unit.h"

TEST(perfmap_lookup_and_growth)
{
	struct fg_perfmap *pm = fg_perfmap_new();
	const char part1[] =
	    "7f0000001000 20 jit_outer\n0x7f0000002000 0x10 LazyCompile:*foo bar.js:1\n7f00";
	uint64_t bad = 0;
	size_t used = fg_perfmap_add(pm, part1, strlen(part1), &bad);
	const struct fg_perfmap_ent *e;

	/* the partial last line is left for later */
	CHECK_INT(used, strlen(part1) - 4);
	CHECK_INT(fg_perfmap_count(pm), 2);
	e = fg_perfmap_lookup(pm, 0x7f000000101f);
	CHECK(e);
	CHECK_STR(e->name, "jit_outer");
	CHECK(fg_perfmap_lookup(pm, 0x7f0000001020) == NULL);
	e = fg_perfmap_lookup(pm, 0x7f0000002008);
	CHECK_STR(e->name, "LazyCompile:*foo bar.js:1");
	/* later code at the same place wins; a bad line is counted */
	const char part2[] = "7f0000001000 40 jit_outer_v2\nnonsense\n1000 0 zero_size\n";
	fg_perfmap_add(pm, part2, strlen(part2), &bad);
	CHECK_INT(bad, 2);
	e = fg_perfmap_lookup(pm, 0x7f0000001010);
	CHECK_STR(e->name, "jit_outer_v2");
	e = fg_perfmap_lookup(pm, 0x7f0000001030);
	CHECK_STR(e->name, "jit_outer_v2");
	fg_perfmap_free(pm);
	fg_perfmap_free(NULL);
}

TEST(demangle_names)
{
	char *s;

	CHECK(fg_demangle("main") == NULL);
	CHECK(fg_demangle("_Zfoo_not_really") == NULL);
	s = fg_demangle("_ZN3foo3barIiEEvT_");
	CHECK_STR(s, "foo::bar<int>");
	free(s);
	s = fg_demangle("_ZN4core3fmt9Formatter3pad17h0123456789abcdefE");
	CHECK_STR(s, "core::fmt::Formatter::pad");
	free(s);
	s = fg_demangle("_RNvCs1234_7mycrate3foo");
	CHECK_STR(s, "mycrate::foo");
	free(s);
	/* with parameters, as perf -v and addr2line -C print it */
	s = fg_demangle_params("_ZN3foo3barIiEEvT_");
	CHECK_STR(s, "void foo::bar<int>(int)");
	free(s);
	CHECK(fg_demangle_params("main") == NULL);
}

int main(void)
{
	RUN(perfmap_lookup_and_growth);
	RUN(demangle_names);
	return unit_done();
}
