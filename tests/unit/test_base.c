// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the foundation: buffers, the hash map, the line reader, number parsing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/hash.h"
#include "fg/lines.h"
#include "fg/util.h"
#include "unit.h"

TEST(buf_add_and_format)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addstr(&b, "main");
	fg_buf_addch(&b, ';');
	fg_buf_addf(&b, "%s %d", "hot", 42);
	CHECK_STR(b.data, "main;hot 42");
	CHECK_INT(b.len, 11);
	fg_buf_truncate(&b, 4);
	CHECK_STR(b.data, "main");
	fg_buf_reset(&b);
	CHECK_INT(b.len, 0);
	CHECK_STR(b.data, "");
	fg_buf_release(&b);
	CHECK(b.data == NULL);
	fg_buf_release(NULL);
}

TEST(buf_reserve_is_exact)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addstr(&b, "abc");
	fg_buf_reserve(&b, 1000);
	CHECK_INT(b.cap, 1001);
	CHECK_STR(b.data, "abc");
	fg_buf_reserve(&b, 10); /* never shrinks */
	CHECK_INT(b.cap, 1001);
	fg_buf_add(&b, "x", 1);
	CHECK_INT(b.cap, 1001);
	CHECK_STR(b.data, "abcx");
	fg_buf_release(&b);
}

TEST(buf_grows_past_many_pages)
{
	struct fg_buf b = FG_BUF_INIT;
	size_t len;
	char *s;

	for (int i = 0; i < 100000; i++)
		fg_buf_addf(&b, "%05d", i % 100000);
	CHECK_INT(b.len, 500000);
	CHECK(memcmp(b.data + 5 * 99999, "99999", 5) == 0);
	s = fg_buf_detach(&b, &len);
	CHECK_INT(len, 500000);
	CHECK(b.data == NULL && b.len == 0);
	free(s);
	s = fg_buf_detach(&b, NULL);
	CHECK_STR(s, "");
	free(s);
}

TEST(hash_is_stable_and_spreads)
{
	CHECK(fg_hash_bytes("abc", 3, 0) == fg_hash_bytes("abc", 3, 0));
	CHECK(fg_hash_bytes("abc", 3, 0) != fg_hash_bytes("abd", 3, 0));
	CHECK(fg_hash_bytes("abc", 3, 0) != fg_hash_bytes("abc", 3, 1));
	CHECK(fg_hash_bytes("", 0, 0) != fg_hash_bytes("\0", 1, 0));
	/* every length through the short and the 16-byte paths */
	char key[64];
	memset(key, 'x', sizeof(key));
	for (size_t n = 1; n < sizeof(key); n++)
		CHECK(fg_hash_bytes(key, n, 0) != fg_hash_bytes(key, n - 1, 0));
}

TEST(hmap_counts_and_keeps_order)
{
	struct fg_hash *m = fg_hash_new(0);
	char key[32];
	bool ins;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 10000; i++) {
			int n = snprintf(key, sizeof(key), "main;f%d", i);
			struct fg_hash_entry *e = fg_hash_upsert(m, key, (size_t)n, &ins);

			CHECK(ins == (round == 0));
			e->val.u += (uint64_t)i;
		}
	}
	CHECK_INT(fg_hash_count(m), 10000);
	for (int i = 0; i < 10000; i++) {
		struct fg_hash_entry *e = fg_hash_at(m, (size_t)i);

		snprintf(key, sizeof(key), "main;f%d", i);
		CHECK_STR(e->key, key);
		CHECK_INT(e->val.u, 3 * i);
	}
	CHECK(fg_hash_get(m, "main;f77", 8) != NULL);
	CHECK(fg_hash_get(m, "main;f77x", 9) == NULL);
	CHECK(fg_hash_get(m, "main;f7", 6) == NULL);
	CHECK(fg_hash_memory(m) > 10000 * 8);
	fg_hash_free(m);
	fg_hash_free(NULL);
}

TEST(hmap_sorted_bytewise)
{
	static const char *const keys[] = {"b;a", "a;b;c", "", "a;b", "\xc3\xa9", "a;B", "a b"};
	static const char *const sorted[] = {"", "a b", "a;B", "a;b", "a;b;c", "b;a", "\xc3\xa9"};
	struct fg_hash *m = fg_hash_new(0);

	for (size_t i = 0; i < FG_ARRAY_SIZE(keys); i++)
		fg_hash_upsert(m, keys[i], strlen(keys[i]), NULL)->val.u = i;
	struct fg_hash_entry **v = fg_hash_sorted(m);
	for (size_t i = 0; i < FG_ARRAY_SIZE(sorted); i++)
		CHECK_STR(v[i]->key, sorted[i]);
	CHECK_INT(v[0]->val.u, 2); /* the entries themselves */
	free(v);
	fg_hash_free(m);
	m = fg_hash_new(0);
	free(fg_hash_sorted(m));
	fg_hash_free(m);
}

TEST(hmap_binary_and_empty_keys)
{
	struct fg_hash *m = fg_hash_new(4);

	fg_hash_upsert(m, "", 0, NULL)->val.u = 1;
	fg_hash_upsert(m, "a\0b", 3, NULL)->val.u = 2;
	fg_hash_upsert(m, "a\0c", 3, NULL)->val.u = 3;
	CHECK_INT(fg_hash_get(m, "", 0)->val.u, 1);
	CHECK_INT(fg_hash_get(m, "a\0b", 3)->val.u, 2);
	CHECK_INT(fg_hash_get(m, "a\0c", 3)->val.u, 3);
	CHECK_INT(fg_hash_count(m), 3);
	fg_hash_free(m);
}

static int pipe_with(const char *data, size_t len)
{
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	if (write(fds[1], data, len) != (ssize_t)len)
		return -1;
	close(fds[1]);
	return fds[0];
}

TEST(lines_split_and_count)
{
	static const char text[] = "one\ntwo\n\nlast";
	struct fg_lines l;
	const char *line, *peek;
	size_t len, plen;
	int fd = pipe_with(text, sizeof(text) - 1);

	CHECK(fd >= 0);
	fg_lines_init_fd(&l, fd, "pipe");
	CHECK_INT(fg_lines_peek(&l, 5, &peek, &plen), 0);
	CHECK_INT(plen, 5);
	CHECK(memcmp(peek, "one\nt", 5) == 0);
	CHECK_INT(fg_lines_next(&l, &line, &len), 1);
	CHECK(len == 3 && memcmp(line, "one", 3) == 0);
	CHECK_INT(l.lineno, 1);
	CHECK_INT(fg_lines_next(&l, &line, &len), 1);
	CHECK(len == 3 && memcmp(line, "two", 3) == 0);
	CHECK_INT(l.offset, 4);
	CHECK_INT(fg_lines_next(&l, &line, &len), 1);
	CHECK_INT(len, 0);
	CHECK_INT(fg_lines_next(&l, &line, &len), 1);
	CHECK(len == 4 && memcmp(line, "last", 4) == 0);
	CHECK_INT(l.lineno, 4);
	CHECK_INT(l.offset, 9);
	CHECK_INT(fg_lines_next(&l, &line, &len), 0);
	CHECK_INT(fg_lines_next(&l, &line, &len), 0);
	fg_lines_release(&l);
	close(fd);
}

TEST(lines_longer_than_the_buffer)
{
	char path[] = "/tmp/fg-unit-XXXXXX";
	int fd = mkstemp(path);
	size_t big = 3 * 1024 * 1024 + 17;
	char *data = malloc(big);
	struct fg_lines l;
	const char *line;
	size_t len;
	int n = 0;

	CHECK(fd >= 0 && data);
	memset(data, 'a', big);
	data[10] = '\n';
	data[big - 1] = '\n';
	CHECK(write(fd, data, big) == (ssize_t)big);
	close(fd);
	CHECK_INT(fg_lines_open(&l, path), 0);
	while (fg_lines_next(&l, &line, &len) == 1) {
		n++;
		if (n == 2)
			CHECK_INT(len, big - 12);
	}
	CHECK_INT(n, 2);
	fg_lines_release(&l);
	unlink(path);
	free(data);
	CHECK_INT(fg_lines_open(&l, "/nonexistent/fg"), -ENOENT);
}

TEST(parse_numbers)
{
	uint64_t v;
	double d;

	CHECK_INT(fg_parse_u64("99", 1, 100, &v), 0);
	CHECK_INT(v, 99);
	CHECK_INT(fg_parse_u64("0x10", 0, 100, &v), 0);
	CHECK_INT(v, 16);
	CHECK_INT(fg_parse_u64("0", 1, 100, &v), -ERANGE);
	CHECK_INT(fg_parse_u64("101", 1, 100, &v), -ERANGE);
	CHECK_INT(fg_parse_u64("-1", 0, 100, &v), -EINVAL);
	CHECK_INT(fg_parse_u64("12x", 0, 100, &v), -EINVAL);
	CHECK_INT(fg_parse_u64("", 0, 100, &v), -EINVAL);
	CHECK_INT(fg_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT(fg_parse_double("0.5", 0, 1, &d), 0);
	CHECK(d == 0.5);
	CHECK_INT(fg_parse_double("nan", 0, 1, &d), -EINVAL);
	CHECK_INT(fg_parse_double("2", 0, 1, &d), -ERANGE);
	const char *hex = "7fA0 x", *q = hex;
	CHECK_INT(fg_scan_hex(&q, hex + 6, 16, &v), 0);
	CHECK_INT(v, 0x7fa0);
	CHECK(q == hex + 4);
	q = hex;
	CHECK_INT(fg_scan_hex(&q, hex + 6, 3, &v), -EINVAL);
	q = hex + 4;
	CHECK_INT(fg_scan_hex(&q, hex + 6, 16, &v), -EINVAL);
	CHECK(fg_starts_with("fg-fold", "fg-"));
	CHECK(!fg_starts_with("fg", "fg-"));
}

TEST(upper_bound_finds_the_last_at_or_below)
{
	struct ent {
		uint32_t pad;
		uint64_t at;
		char tag;
	} v[] = {{0, 10, 'a'}, {0, 20, 'b'}, {0, 20, 'c'}, {0, 30, 'd'}};
	uint64_t keys[] = {5, 10, 15, 20, 29, 30, UINT64_MAX};
	size_t want[] = {0, 1, 1, 3, 3, 4, 4};

	for (size_t i = 0; i < FG_ARRAY_SIZE(keys); i++)
		CHECK_INT(FG_UPPER_BOUND(v, FG_ARRAY_SIZE(v), at, keys[i]), want[i]);
	/* of equal keys, the last: the element before the bound */
	CHECK(v[FG_UPPER_BOUND(v, FG_ARRAY_SIZE(v), at, 20) - 1].tag == 'c');
	CHECK_INT(FG_UPPER_BOUND(v, 0, at, 100), 0);
	CHECK_INT(FG_UPPER_BOUND(v, 1, at, 100), 1);
}

int main(void)
{
	RUN(buf_add_and_format);
	RUN(buf_reserve_is_exact);
	RUN(buf_grows_past_many_pages);
	RUN(hash_is_stable_and_spreads);
	RUN(hmap_counts_and_keeps_order);
	RUN(hmap_sorted_bytewise);
	RUN(hmap_binary_and_empty_keys);
	RUN(lines_split_and_count);
	RUN(lines_longer_than_the_buffer);
	RUN(parse_numbers);
	RUN(upper_bound_finds_the_last_at_or_below);
	return unit_done();
}
