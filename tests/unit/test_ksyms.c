// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/ksyms.h"
#include "unit.h"

static const char text[] = "ffffffff81000000 T _stext\n"
			   "ffffffff81000000 T _text\n"
			   "ffffffff810000f0 t __pfx_helper\n"
			   "ffffffff81000100 t helper\n"
			   "ffffffff81000180 D some_data\n"
			   "ffffffff81000200 W weak_fn\n"
			   "ffffffff81000300 T last_text\n"
			   "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
			   "ffffffffc0a00000 t nft_do_chain\t[nf_tables]\n"
			   "ffffffffc0a00040 T nft_other\t[nf_tables]\n";

TEST(ksyms_lookup)
{
	uint64_t bad = 99;
	struct fg_ksyms *k = fg_ksyms_parse(text, sizeof(text) - 1, &bad);
	const struct fg_ksym *s;

	CHECK(k);
	CHECK_INT(bad, 0);
	CHECK(!fg_ksyms_hidden(k));
	/* aliases at one address count once; data symbols are left out */
	CHECK_INT(fg_ksyms_count(k), 7);
	s = fg_ksyms_lookup(k, 0xffffffff81000010);
	CHECK(s && s->addr == 0xffffffff81000000 && !s->module);
	CHECK_STR(s->name, "_stext");
	s = fg_ksyms_lookup(k, 0xffffffff810001ff);
	CHECK_STR(s->name, "helper"); /* data does not end a function */
	/* padding symbols are left out: the padding belongs to the function before */
	s = fg_ksyms_lookup(k, 0xffffffff810000f8);
	CHECK_STR(s->name, "_stext");
	s = fg_ksyms_lookup(k, 0xffffffff81000201);
	CHECK_STR(s->name, "weak_fn");
	s = fg_ksyms_lookup(k, 0xffffffffc0a00010);
	CHECK(s);
	CHECK_STR(s->name, "nft_do_chain");
	CHECK_STR(s->module, "nf_tables");
	CHECK(fg_ksyms_lookup(k, 0xffffffff80000000) == NULL);
	/* far past the kernel's last symbol: not named after it */
	CHECK(fg_ksyms_lookup(k, 0xffffffff90000000) == NULL);
	CHECK(fg_ksyms_lookup(k, 0xffffffffc0a00040 + 8192) == NULL);
	fg_ksyms_free(k);
}

TEST(ksyms_hidden)
{
	static const char h[] = "0000000000000000 T _stext\n0000000000000000 t foo\n";
	struct fg_ksyms *k = fg_ksyms_parse(h, sizeof(h) - 1, NULL);

	CHECK(k);
	CHECK(fg_ksyms_hidden(k));
	CHECK(fg_ksyms_lookup(k, 0) == NULL);
	fg_ksyms_free(k);
}

TEST(ksyms_bad_line)
{
	static const char b[] = "ffffffff81000000 T _stext\nnot a line\n";
	static const char c[] = "ffffffff81000000 T _stext\nffffffff81000000 T\n";
	static const char d[] = "12345678123456781 T toolong\n";
	uint64_t bad = 0;

	errno = 0;
	CHECK(fg_ksyms_parse(b, sizeof(b) - 1, &bad) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(bad, 2);
	CHECK(fg_ksyms_parse(c, sizeof(c) - 1, &bad) == NULL);
	CHECK_INT(bad, 2);
	CHECK(fg_ksyms_parse(d, sizeof(d) - 1, &bad) == NULL);
	CHECK_INT(bad, 1);
	CHECK(fg_ksyms_parse("", 0, &bad) != NULL || 0);
}

TEST(ksyms_empty_and_missing)
{
	struct fg_ksyms *k = fg_ksyms_parse("", 0, NULL);
	uint64_t bad;

	CHECK(k);
	CHECK_INT(fg_ksyms_count(k), 0);
	CHECK(!fg_ksyms_hidden(k));
	fg_ksyms_free(k);
	fg_ksyms_free(NULL);
	errno = 0;
	CHECK(fg_ksyms_load("/nonexistent/kallsyms", &bad) == NULL);
	CHECK_INT(errno, ENOENT);
	/* a device is refused without being read */
	CHECK(fg_ksyms_load("/dev/zero", &bad) == NULL);
	CHECK_INT(errno, EINVAL);
}

/* BPF programs and trampolines come after the modules, not in address order */
TEST(ksyms_unsorted_tail)
{
	static const char t[] = "ffffffff81000000 T _stext\n"
				"ffffffff81000100 t helper\n"
				"ffffffffc0a00000 t nft_do_chain\t[nf_tables]\n"
				"ffffffffc0a00040 T nft_other\t[nf_tables]\n"
				"ffffffffc0c00000 t bpf_prog_b\t[bpf]\n"
				"ffffffffa0000000 t bpf_prog_a\t[bpf]\n"
				"ffffffff81000080 t bpf_trampoline_1\t[bpf]\n";
	struct fg_ksyms *k = fg_ksyms_parse(t, sizeof(t) - 1, NULL);
	const struct fg_ksym *s;

	CHECK(k);
	CHECK_INT(fg_ksyms_count(k), 7);
	s = fg_ksyms_lookup(k, 0xffffffff81000090);
	CHECK(s);
	CHECK_STR(s->name, "bpf_trampoline_1");
	s = fg_ksyms_lookup(k, 0xffffffff81000010);
	CHECK_STR(s->name, "_stext");
	s = fg_ksyms_lookup(k, 0xffffffffa0000010);
	CHECK(s);
	CHECK_STR(s->name, "bpf_prog_a");
	CHECK_STR(s->module, "bpf");
	s = fg_ksyms_lookup(k, 0xffffffffc0a00044);
	CHECK_STR(s->name, "nft_other");
	s = fg_ksyms_lookup(k, 0xffffffffc0c00004);
	CHECK_STR(s->name, "bpf_prog_b");
	fg_ksyms_free(k);
}

/* more symbols than the first allocation holds, in several chunks of names */
TEST(ksyms_many)
{
	char path[] = "/tmp/fg-test-ksyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	const size_t n = 300000;
	struct fg_ksyms *k;
	uint64_t bad;
	char want[64];

	CHECK(f);
	if (!f)
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%016llx t a_rather_long_function_name_number_%zu%s\n",
			0xffffffff81000000ull + 16 * i, i, i >= n - 10 ? "\t[mod]" : "");
	fclose(f);
	k = fg_ksyms_load(path, &bad);
	unlink(path);
	CHECK(k);
	CHECK_INT(fg_ksyms_count(k), n);
	for (size_t i = 0; i < n; i += 4999) {
		const struct fg_ksym *s = fg_ksyms_lookup(k, 0xffffffff81000000ull + 16 * i + 3);

		snprintf(want, sizeof(want), "a_rather_long_function_name_number_%zu", i);
		CHECK(s);
		if (s)
			CHECK_STR(s->name, want);
	}
	CHECK_STR(fg_ksyms_lookup(k, 0xffffffff81000000ull + 16 * (n - 1))->module, "mod");
	fg_ksyms_free(k);
}

int main(void)
{
	RUN(ksyms_lookup);
	RUN(ksyms_unsorted_tail);
	RUN(ksyms_many);
	RUN(ksyms_hidden);
	RUN(ksyms_bad_line);
	RUN(ksyms_empty_and_missing);
	return unit_done();
}
