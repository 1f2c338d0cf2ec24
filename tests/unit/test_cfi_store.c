// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/cfi_store.h"
#include "fg/hash.h"
#include "fg/util.h"
#include "unit.h"

/* this test program's own table, as fg-sample builds it */
static struct fg_cfi *own_table(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct fg_cfi *c = fd < 0 ? NULL : fg_cfi_open_fd(fd, -1);

	if (fd >= 0)
		close(fd);
	return c;
}

static int same_table(const struct fg_cfi *a, const struct fg_cfi *b)
{
	if (a->nrows != b->nrows || a->nrules != b->nrules || a->nloads != b->nloads ||
	    a->base != b->base || a->shared != b->shared || a->arch != b->arch ||
	    a->st.bad_entries != b->st.bad_entries)
		return 0;
	if (memcmp(a->rows, b->rows, a->nrows * sizeof(*a->rows)) ||
	    memcmp(a->rules, b->rules, a->nrules * sizeof(*a->rules)))
		return 0;
	for (size_t i = 0; i < a->nloads; i++)
		if (a->loads[i].vaddr != b->loads[i].vaddr ||
		    a->loads[i].memsz != b->loads[i].memsz ||
		    a->loads[i].offset != b->loads[i].offset ||
		    a->loads[i].filesz != b->loads[i].filesz ||
		    a->loads[i].flags != b->loads[i].flags)
			return 0;
	return 1;
}

static const unsigned char id[] = "an identity: device, inode, times, build-id";

/* A table's file parses back to the very table; another identity's does not. */
TEST(store_format_parse)
{
	struct fg_cfi *c = own_table(), *d;
	struct fg_buf b = FG_BUF_INIT;
	size_t bad_at = 0;

	CHECK(c != NULL && c->nrows > 10);
	fg_cfi_store_format(c, id, sizeof(id), &b);
	d = fg_cfi_store_parse(b.data, b.len, id, sizeof(id), &bad_at);
	CHECK(d != NULL);
	CHECK(same_table(c, d));
	fg_cfi_free(d);
	/* the same length, another identity: refused where the identity is */
	unsigned char other[sizeof(id)];
	memcpy(other, id, sizeof(id));
	other[3] ^= 1;
	CHECK(fg_cfi_store_parse(b.data, b.len, other, sizeof(other), &bad_at) == NULL);
	CHECK(bad_at > 0 && bad_at < b.len);
	CHECK(fg_cfi_store_parse(b.data, b.len, id, sizeof(id) - 1, &bad_at) == NULL);
	fg_cfi_free(c);
	fg_buf_release(&b);
}

/* Every byte changed, every length cut short: refused, at an offset within the file. */
TEST(store_parse_refuses_bad_bytes)
{
	struct fg_cfi c = {0};
	struct fg_cfi_row rows[3] = {{0, 1}, {16, 2}, {40, 0}};
	struct fg_cfi_rule rules[3] = {
	    {.kind = FG_CFI_NONE}, {.kind = FG_CFI_NORMAL, .cfa_off = 8}, {.kind = FG_CFI_STOP}};
	struct fg_elf_load loads[1] = {{0x1000, 0x2000, 0, 0x2000, 5}};
	struct fg_buf b = FG_BUF_INIT;
	struct fg_cfi *d;
	size_t bad_at;

	c.rows = rows;
	c.nrows = 3;
	c.rules = rules;
	c.nrules = 3;
	c.loads = loads;
	c.nloads = 1;
	c.base = 0x1000;
	c.shared = true;
	fg_cfi_store_format(&c, id, sizeof(id), &b);
	d = fg_cfi_store_parse(b.data, b.len, id, sizeof(id), &bad_at);
	CHECK(d != NULL && same_table(&c, d));
	fg_cfi_free(d);
	for (size_t i = 0; i < b.len; i++)
		for (int bit = 0; bit < 8; bit += 3) {
			b.data[i] ^= (char)(1 << bit);
			bad_at = SIZE_MAX;
			d = fg_cfi_store_parse(b.data, b.len, id, sizeof(id), &bad_at);
			b.data[i] ^= (char)(1 << bit);
			if (d || bad_at > b.len) {
				printf("# byte %zu bit %d: %s at %zu\n", i, bit,
				       d ? "taken" : "refused", bad_at);
				fg_cfi_free(d);
				CHECK(!"a changed byte refused");
			}
		}
	for (size_t len = 0; len < b.len; len++) {
		bad_at = SIZE_MAX;
		CHECK(fg_cfi_store_parse(b.data, len, id, sizeof(id), &bad_at) == NULL);
		CHECK(bad_at <= len);
	}
	fg_buf_release(&b);
}

/* Bytes whose sum is right but whose table is not: rows out of order, a rule not there. */
TEST(store_parse_refuses_bad_tables)
{
	struct fg_cfi_row rows[3] = {{0, 1}, {16, 1}, {40, 0}};
	struct fg_cfi_rule rules[2] = {{.kind = FG_CFI_NONE}, {.kind = FG_CFI_NORMAL}};
	struct fg_cfi c = {.rows = rows, .nrows = 3, .rules = rules, .nrules = 2};
	const struct {
		uint32_t pc1, rule2;
		uint8_t kind1;
	} cases[] = {{16, 3, FG_CFI_NORMAL}, {0, 0, FG_CFI_NORMAL}, {16, 0, FG_CFI_INVALID + 1}};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct fg_buf b = FG_BUF_INIT;
		size_t bad_at = 0;
		uint64_t sum;

		rows[1].pc = cases[k].pc1;
		rows[2].rule = cases[k].rule2;
		rules[1].kind = cases[k].kind1;
		fg_cfi_store_format(&c, id, sizeof(id), &b);
		sum = fg_hash_bytes(b.data + 16, b.len - 16, 0);
		CHECK(!memcmp(b.data + 8, &sum, 8)); /* the format's sum: right */
		CHECK(fg_cfi_store_parse(b.data, b.len, id, sizeof(id), &bad_at) == NULL);
		CHECK(bad_at > 64 && bad_at < b.len);
		fg_buf_release(&b);
	}
}

static char dir[64], base[64]; /* the store's directory, and the one made for it */

static size_t count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/*
 * A table put is got back by the same identity only; a file not right under
 * its name (cut short, another user's, a symbolic link) is refused and the
 * table built again, the link's target untouched.
 */
TEST(store_put_get)
{
	struct fg_cfi *c = own_table(), *d;
	unsigned char id2[FG_CFI_STORE_KEY_MAX];
	struct fg_cfi_store *s;
	char only[400];
	size_t len2;
	int err, fd;

	CHECK(c != NULL);
	snprintf(dir, sizeof(dir), "/tmp/fg-test-store.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0700) == 0);
	memcpy(base, dir, sizeof(base));
	strcat(dir, "/tables"); /* (mkdtemp's 25 bytes, and 7) */
	s = fg_cfi_store_open(dir, &err, NULL, 0, NULL);
	CHECK(s != NULL);
	fd = open("/proc/self/exe", O_RDONLY);
	len2 = fg_cfi_store_id(s, fd, "bKEY", 4, id2);
	close(fd);
	CHECK(len2 > 4);
	CHECK(fg_cfi_store_get(s, id2, len2) == NULL);
	CHECK_INT(fg_cfi_store_stats(s)->misses, 1);
	fg_cfi_store_put(s, id2, len2, c);
	CHECK_INT(fg_cfi_store_stats(s)->written, 1);
	d = fg_cfi_store_get(s, id2, len2);
	CHECK(d != NULL && same_table(c, d));
	fg_cfi_free(d);
	CHECK_INT(fg_cfi_store_stats(s)->hits, 1);
	CHECK_INT(count_files(), 1);

	/* its file cut short: refused, removed, counted with its name */
	DIR *dd = opendir(dir);
	struct dirent *de;
	char name[256] = "";
	while (dd && (de = readdir(dd)))
		if (de->d_name[0] != '.')
			snprintf(name, sizeof(name), "%s", de->d_name);
	closedir(dd);
	snprintf(only, sizeof(only), "%s/%s", dir, name);
	CHECK(truncate(only, 100) == 0);
	CHECK(fg_cfi_store_get(s, id2, len2) == NULL);
	CHECK_INT(fg_cfi_store_stats(s)->refused, 1);
	CHECK_STR(fg_cfi_store_stats(s)->first_bad, name);
	CHECK_INT(fg_cfi_store_stats(s)->first_bad_at, 100);
	CHECK_INT(count_files(), 0);

	/* a symbolic link planted under its name: not followed, replaced by the table */
	char target[160];
	snprintf(target, sizeof(target), "%s/target", base);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	CHECK(symlink(target, only) == 0);
	CHECK(fg_cfi_store_get(s, id2, len2) == NULL);
	fg_cfi_store_put(s, id2, len2, c);
	struct stat sb;
	CHECK(lstat(only, &sb) == 0 && S_ISREG(sb.st_mode));
	CHECK(stat(target, &sb) == 0 && sb.st_size == 4);
	d = fg_cfi_store_get(s, id2, len2);
	CHECK(d != NULL);
	fg_cfi_free(d);

	/* another user's file: not taken */
	if (geteuid() == 0) {
		CHECK(chown(only, 65534, 65534) == 0);
		CHECK(fg_cfi_store_get(s, id2, len2) == NULL);
		CHECK_INT(fg_cfi_store_stats(s)->refused, 2);
	}
	fg_cfi_store_close(s);
	unlink(target);
	fg_cfi_free(c);
}

/* Past FG_CFI_STORE_MAX_FILES, the least recently used are removed, to nine tenths. */
TEST(store_room)
{
	struct fg_cfi *c = own_table();
	struct fg_cfi_store *s;
	int err;

	CHECK(c != NULL);
	s = fg_cfi_store_open(dir, &err, NULL, 0, NULL);
	CHECK(s != NULL);
	for (unsigned i = 0; i < FG_CFI_STORE_MAX_FILES + 5; i++) {
		char name[128];
		struct timespec t[2] = {{1000 + i, 0}, {1000 + i, 0}};
		int fd;

		snprintf(name, sizeof(name), "%s/old%04u.cfi", dir, i);
		fd = open(name, O_WRONLY | O_CREAT, 0600);
		CHECK(fd >= 0);
		CHECK(futimens(fd, t) == 0);
		close(fd);
	}
	unsigned char id3[] = "a new one";
	fg_cfi_store_put(s, id3, sizeof(id3), c);
	CHECK(count_files() <= FG_CFI_STORE_MAX_FILES / 10 * 9);
	CHECK(fg_cfi_store_stats(s)->evicted >= 100);
	/* the newest, and the oldest gone */
	struct fg_cfi *d = fg_cfi_store_get(s, id3, sizeof(id3));
	CHECK(d != NULL);
	fg_cfi_free(d);
	char oldest[128];
	snprintf(oldest, sizeof(oldest), "%s/old0000.cfi", dir);
	CHECK(access(oldest, F_OK) < 0);
	fg_cfi_store_close(s);
	fg_cfi_free(c);
}

/* A directory another user owns is not used. */
TEST(store_refuses_others_dir)
{
	char other[96];
	struct fg_cfi_store *s;
	uid_t owner = 0;
	int err = 0;

	if (geteuid() != 0)
		return; /* (a directory of another user's needs root to make) */
	snprintf(other, sizeof(other), "%s/others", base);
	CHECK(mkdir(other, 0700) == 0);
	CHECK(chown(other, 65534, 65534) == 0);
	s = fg_cfi_store_open(other, &err, NULL, 0, &owner);
	CHECK(s == NULL);
	CHECK_INT(err, -EPERM);
	CHECK_INT(owner, 65534);
	rmdir(other);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (!strncmp(base, "/tmp/fg-test-store.", 19))
		(void)system(cmd);
}

int main(void)
{
	RUN(store_format_parse);
	RUN(store_parse_refuses_bad_bytes);
	RUN(store_parse_refuses_bad_tables);
	RUN(store_put_get);
	RUN(store_room);
	RUN(store_refuses_others_dir);
	cleanup();
	return unit_done();
}
