// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/hash.h"
#include "fg/ksyms.h"
#include "fg/safeio.h"
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
	struct fg_ksyms *k = fg_ksyms_parse("", 0, &bad);
	CHECK(k != NULL);
	fg_ksyms_free(k);
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

/* a fixture /proc with a boot id and the modules given */
static void fake_proc(const char *dir, const char *boot_id, const char *modules)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "mkdir -p %s/sys/kernel/random", dir);
	CHECK(system(path) == 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", dir);
	f = fopen(path, "w");
	fprintf(f, "%s\n", boot_id);
	fclose(f);
	snprintf(path, sizeof(path), "%s/modules", dir);
	if (!modules) {
		unlink(path);
		return;
	}
	f = fopen(path, "w");
	fputs(modules, f);
	fclose(f);
}

static const char mods[] = "nf_tables 352256 5 nft_chain_nat, Live 0xffffffffc0a00000\n"
			   "x_tables 65536 1 nf_tables, Live 0xffffffffc0900000 (E)\n";

TEST(kstamp)
{
	char dir[] = "/tmp/fg-test-kstamp-XXXXXX";
	struct fg_kstamp a, b;

	CHECK(mkdtemp(dir));
	fake_proc(dir, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f", mods);
	CHECK_INT(fg_kstamp_read(&a, dir), 0);
	CHECK_STR(a.boot_id, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f");
	CHECK(fg_hash_get(a.names, "nf_tables", 9) != NULL);
	CHECK(fg_hash_get(a.names, "x_tables", 8) != NULL);
	/* references and users change all the time: the stamp does not */
	fake_proc(dir, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f",
		  "nf_tables 352256 9 nft_chain_nat,nft_ct, Live 0xffffffffc0a00000\n"
		  "x_tables 65536 3 nf_tables,a,b, Live 0xffffffffc0900000 (E)\n");
	CHECK_INT(fg_kstamp_read(&b, dir), 0);
	CHECK(fg_kstamp_equal(&a, &b));
	fg_kstamp_free(&b);
	/* a module loaded elsewhere does */
	fake_proc(dir, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f",
		  "nf_tables 352256 5 nft_chain_nat, Live 0xffffffffc0b00000\n"
		  "x_tables 65536 1 nf_tables, Live 0xffffffffc0900000 (E)\n");
	CHECK_INT(fg_kstamp_read(&b, dir), 0);
	CHECK(!fg_kstamp_equal(&a, &b));
	fg_kstamp_free(&b);
	/* and so does another boot; a kernel without modules has no /proc/modules */
	fake_proc(dir, "00000000-0d1e-4b8e-9f3c-1a2b3c4d5e6f", NULL);
	CHECK_INT(fg_kstamp_read(&b, dir), 0);
	CHECK(!fg_kstamp_equal(&a, &b));
	CHECK_INT(fg_hash_count(b.names), 0);
	fg_kstamp_free(&b);
	fg_kstamp_free(&a);
	fake_proc(dir, "", mods);
	CHECK_INT(fg_kstamp_read(&b, dir), -EINVAL);
	char none[64];
	snprintf(none, sizeof(none), "%s/none", dir);
	CHECK_INT(fg_kstamp_read(&b, none), -ENOENT);
	snprintf(none, sizeof(none), "rm -rf %s", dir);
	CHECK(system(none) == 0);
}

static const char cache_text[] = "ffffffff81000000 T _stext\n"
				 "ffffffff81000100 t helper\n"
				 "ffffffff81000300 T last_text\n"
				 "ffffffffa0000000 t bpf_prog_1234_handler\t[bpf]\n"
				 "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
				 "ffffffffc0a00000 t nft_do_chain\t[nf_tables]\n"
				 "ffffffffc0a00040 T nft_other\t[nf_tables]\n"
				 "ffffffffc0a00080 T nft_last\t[nf_tables]\n";

TEST(ksyms_cache)
{
	char dir[] = "/tmp/fg-test-kcache-XXXXXX", path[256], cmd[600];
	struct fg_ksyms *k = fg_ksyms_parse(cache_text, sizeof(cache_text) - 1, NULL), *c;
	struct fg_kstamp st, other;
	const struct fg_ksym *s;
	bool sure;

	CHECK(mkdtemp(dir));
	fake_proc(dir, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f", mods);
	CHECK_INT(fg_kstamp_read(&st, dir), 0);
	/* in a private directory, made with its parents; the file 0600 */
	snprintf(path, sizeof(path), "%s/cache/fg", dir);
	int dfd = fg_safeio_private_dir_open(path, true, NULL, 0, NULL);
	CHECK(dfd >= 0);
	snprintf(path, sizeof(path), "%s/cache/fg/kallsyms", dir);
	CHECK_INT(fg_ksyms_save(k, &st, dfd, "kallsyms"), 0);
	struct stat sb;
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	c = fg_ksyms_load_cache(dfd, "kallsyms", &st);
	CHECK(c);
	if (!c)
		return;
	CHECK(fg_ksyms_from_cache(c));
	CHECK(!fg_ksyms_from_cache(k));
	/* BPF programs and trampolines are left out */
	CHECK_INT(fg_ksyms_count(c), 6);
	s = fg_ksyms_lookup_sure(c, 0xffffffff81000104, &sure);
	CHECK(s && sure);
	CHECK_STR(s->name, "helper");
	CHECK(s->module == NULL);
	s = fg_ksyms_lookup_sure(c, 0xffffffffc0a00044, &sure);
	CHECK(s && sure);
	CHECK_STR(s->name, "nft_other");
	CHECK_STR(s->module, "nf_tables");
	/* past the last symbol of the kernel or of a module, or outside all: not sure */
	s = fg_ksyms_lookup_sure(c, 0xffffffff81000304, &sure);
	CHECK(!sure);
	s = fg_ksyms_lookup_sure(c, 0xffffffffc0a00084, &sure);
	CHECK(!sure);
	s = fg_ksyms_lookup_sure(c, 0xffffffffa0000010, &sure);
	CHECK(!s && !sure);
	s = fg_ksyms_lookup_sure(c, 0xffffffffc0201010, &sure);
	CHECK(!sure);
	/* a table from kallsyms is always sure */
	s = fg_ksyms_lookup_sure(k, 0xffffffffa0000010, &sure);
	CHECK(s && sure);
	CHECK_STR(s->name, "bpf_prog_1234_handler");
	/* a table from a cache lacks what it left out: it is not written back */
	CHECK_INT(fg_ksyms_save(c, &st, dfd, "kallsyms"), -EINVAL);
	CHECK_INT(fg_ksyms_save(NULL, &st, dfd, "kallsyms"), -EINVAL);
	fg_ksyms_free(c);

	/* another boot, other modules: stale */
	fake_proc(dir, "6f1c3a52-0d1e-4b8e-9f3c-1a2b3c4d5e6f", "nf_tables 1 0 - Live 0x1\n");
	CHECK_INT(fg_kstamp_read(&other, dir), 0);
	errno = 0;
	CHECK(fg_ksyms_load_cache(dfd, "kallsyms", &other) == NULL);
	CHECK_INT(errno, ESTALE);
	fg_kstamp_free(&other);
	/* writable by others, or a symbolic link: not ours alone */
	CHECK(chmod(path, 0644) == 0);
	c = fg_ksyms_load_cache(dfd, "kallsyms", &st);
	CHECK(c);
	fg_ksyms_free(c);
	CHECK(chmod(path, 0666) == 0);
	errno = 0;
	CHECK(fg_ksyms_load_cache(dfd, "kallsyms", &st) == NULL);
	CHECK_INT(errno, EPERM);
	CHECK(chmod(path, 0600) == 0);
	snprintf(cmd, sizeof(cmd), "ln -s %s %s.link", path, path);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "%s.link", path);
	errno = 0;
	CHECK(fg_ksyms_load_cache(dfd, "kallsyms.link", &st) == NULL);
	CHECK_INT(errno, EPERM);
	unlink(cmd);
	/* cut short anywhere: malformed */
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	CHECK(n > 100 && n < sizeof(buf));
	for (size_t cut = 0; cut < n; cut += 7) {
		errno = 0;
		CHECK(fg_ksyms_parse_cache(buf, cut, NULL) == NULL);
		CHECK_INT(errno, EINVAL);
	}
	c = fg_ksyms_parse_cache(buf, n, NULL);
	CHECK(c && fg_ksyms_count(c) == 6);
	fg_ksyms_free(c);
	/*
	 * A symbol is checked when first looked up (the table is mapped, not
	 * copied): one that is malformed is never named from, and its
	 * neighbours are not sure, so the caller asks the kernel.
	 */
	char bad[sizeof(buf)];
	uint64_t a0, a3, in3;
	uint32_t huge = UINT32_MAX - 1;
	const size_t hdr = 72, ent = 24;
	memcpy(&a0, buf + hdr, sizeof(a0));
	memcpy(&a3, buf + hdr + 3 * ent, sizeof(a3));
	memcpy(bad, buf, n);
	memcpy(bad + hdr + 1 * ent + 16, &huge, sizeof(huge)); /* symbol 1's name: out of range */
	in3 = a3 + 1;
	memcpy(bad + hdr + 4 * ent, &in3, sizeof(in3)); /* symbol 4 starts inside 3 */
	c = fg_ksyms_parse_cache(bad, n, NULL);
	CHECK(c && fg_ksyms_count(c) == 6);
	s = fg_ksyms_lookup_sure(c, a0, &sure);
	CHECK(s && !sure); /* its neighbour is malformed */
	uint64_t a1;
	memcpy(&a1, buf + hdr + ent, sizeof(a1));
	s = fg_ksyms_lookup_sure(c, a1, &sure);
	CHECK(!s && !sure);
	s = fg_ksyms_lookup_sure(c, a3, &sure);
	CHECK(!s && !sure); /* overlapped by symbol 4 */
	s = fg_ksyms_lookup_sure(c, in3, &sure);
	CHECK(!s && !sure); /* overlapping symbol 3 */
	fg_ksyms_free(c);
	buf[0] ^= 1;
	CHECK(fg_ksyms_parse_cache(buf, n, NULL) == NULL);
	errno = 0;
	CHECK(fg_ksyms_load_cache(dfd, "none", &st) == NULL);
	CHECK_INT(errno, ENOENT);
	close(dfd);
	fg_kstamp_free(&st);
	fg_ksyms_free(k);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(ksyms_lookup);
	RUN(ksyms_unsorted_tail);
	RUN(ksyms_many);
	RUN(kstamp);
	RUN(ksyms_cache);
	RUN(ksyms_hidden);
	RUN(ksyms_bad_line);
	RUN(ksyms_empty_and_missing);
	return unit_done();
}
