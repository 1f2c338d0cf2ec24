// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the record stream: round trips, streaming, every kind of damage. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/record.h"
#include "unit.h"

/* A whole stream in memory: the writer writes into a temporary file, read back here. */
struct mem {
	uint8_t *data;
	size_t len;
};

static int tmpfd(void)
{
	char path[] = "/tmp/fg-unit-rec-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static struct mem slurp(int fd)
{
	struct mem m = {NULL, 0};
	off_t end = lseek(fd, 0, SEEK_END);

	m.len = (size_t)end;
	m.data = malloc(m.len + 1);
	if (pread(fd, m.data, m.len, 0) != (ssize_t)m.len)
		m.len = 0;
	return m;
}

static const uint64_t ips[] = {0xffffffff81000010, 0xffffffff81000020, 0x401136, 0x401150,
			       0x7f0000001000};

/* Every kind of record once; returns the stream. */
static struct mem sample_stream(void)
{
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	struct fg_rec_sample s = {.time_ns = 1000,
				  .cpu = 1,
				  .pid = 42,
				  .tid = 43,
				  .weight = 1,
				  .nr_kernel = 2,
				  .nr_user = 3};
	struct fg_rec_mapping m = {.pid = 42,
				   .tid = 42,
				   .start = 0x400000,
				   .end = 0x402000,
				   .pgoff = 0x1000,
				   .ino = 77,
				   .maj = 8,
				   .min = 1,
				   .prot = 5,
				   .flags = FG_MAP_F_SNAPSHOT};
	struct fg_rec_comm c = {.pid = 42, .tid = 42, .time_ns = 900, .flags = FG_COMM_F_EXEC};
	struct fg_rec_task ex = {.pid = 42, .tid = 43, .ppid = 1, .ptid = 1, .time_ns = 2000};
	struct fg_rec_lost lost = {
	    .time_ns = 1500, .count = 3, .cpu = 0, .reason = FG_LOST_RINGBUF_FULL};
	struct fg_rec_summary sum = {
	    .start_ns = 1, .end_ns = 3000, .samples = 1, .lost = 3, .command_status = -1};
	static const char unknown[] = "from the future!";

	fg_rec_header_init(&h);
	h.freq = 99;
	h.ncpus = 2;
	memcpy(s.comm, "hot", 4);
	memcpy(c.comm, "split7030", 10);
	fg_rec_write_header(w, &h);
	fg_rec_write_mapping(w, &m, "/usr/bin/split7030");
	fg_rec_write(w, FG_REC_COMM, &c, sizeof(c));
	fg_rec_write(w, 99, unknown, sizeof(unknown));
	fg_rec_write_sample(w, &s, ips);
	fg_rec_write(w, FG_REC_FORK, &ex, sizeof(ex));
	fg_rec_write(w, FG_REC_LOST, &lost, sizeof(lost));
	fg_rec_write(w, FG_REC_EXIT, &ex, sizeof(ex));
	fg_rec_write(w, FG_REC_SUMMARY, &sum, sizeof(sum));
	if (fg_rec_writer_free(w) != 0)
		abort();
	struct mem mem = slurp(fd);
	close(fd);
	return mem;
}

static int pipe_with(const void *data, size_t len, bool close_it, int *wfd)
{
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	if (len && write(fds[1], data, len) != (ssize_t)len)
		return -1;
	if (close_it)
		close(fds[1]);
	else
		*wfd = fds[1];
	return fds[0];
}

/* A file holding `len` bytes of data after `skip` bytes of something else, read from `skip` on. */
static int file_with(const void *data, size_t len, size_t skip)
{
	int fd = tmpfd();
	char junk[64] = {0};

	if (fd < 0 || skip > sizeof(junk) || write(fd, junk, skip) != (ssize_t)skip ||
	    (len && write(fd, data, len) != (ssize_t)len) ||
	    lseek(fd, (off_t)skip, SEEK_SET) != (off_t)skip)
		abort();
	return fd;
}

static int read_fd(int fd, bool map, bool *mapped, int *nrec, char *msg, size_t msglen)
{
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "mem");
	struct fg_rec rec;
	int rc;

	if (map)
		fg_rec_reader_map(r);
	*nrec = 0;
	while ((rc = fg_rec_next(r, &rec)) > 0)
		(*nrec)++;
	snprintf(msg, msglen, "%s", rc < 0 ? fg_rec_reader_error(r) : "");
	*mapped = fg_rec_reader_mapped(r);
	fg_rec_reader_free(r);
	close(fd);
	return rc;
}

/*
 * Read a stream held in memory; the error message of a failure into msg.
 * Through a pipe (read()), and mapped from a file, which must agree.
 */
static int read_all(const void *data, size_t len, int *nrec, char *msg, size_t msglen)
{
	char msg2[256];
	bool mapped;
	int n2, rc = read_fd(pipe_with(data, len, true, NULL), false, &mapped, nrec, msg, msglen);
	int rc2 = read_fd(file_with(data, len, 0), true, &mapped, &n2, msg2, sizeof(msg2));

	/* an empty file is read(): it may be a pseudo file */
	if (rc2 != rc || n2 != *nrec || strcmp(msg2, msg) != 0 || mapped != (len > 0)) {
		printf("# mapped: %d, %d records, '%s'; read(): %d, %d records, '%s'\n", rc2, n2,
		       msg2, rc, *nrec, msg);
		unit_cur_failed = 1;
	}
	return rc;
}

TEST(round_trip_every_kind)
{
	struct mem m = sample_stream();
	int fd = pipe_with(m.data, m.len, true, NULL);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "pipe");
	const struct fg_rec_header *h;
	struct fg_rec rec;

	CHECK_INT(fg_rec_read_header(r, &h), 0);
	CHECK_INT(h->version, FG_REC_VERSION);
	CHECK_INT(h->freq, 99);
	CHECK_INT(h->header_size, sizeof(*h));
	CHECK(h->host[0] != '\0');

	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_MAPPING);
	CHECK_INT(rec.offset, sizeof(struct fg_rec_header));
	CHECK_INT(rec.mapping->start, 0x400000);
	CHECK_INT(rec.mapping->pgoff, 0x1000);
	CHECK_STR(rec.path, "/usr/bin/split7030");
	CHECK_INT(rec.size % 8, 0);

	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_COMM);
	CHECK_STR(rec.comm->comm, "split7030");
	CHECK(rec.comm->flags & FG_COMM_F_EXEC);

	CHECK_INT(fg_rec_next(r, &rec), 1); /* the unknown record was skipped */
	CHECK_INT(rec.type, FG_REC_SAMPLE);
	CHECK_INT(fg_rec_reader_skipped(r), 1);
	CHECK_INT(rec.sample->pid, 42);
	CHECK_INT(rec.sample->tid, 43);
	CHECK_INT(rec.sample->cpu, 1);
	CHECK_INT(rec.sample->weight, 1);
	CHECK_STR(rec.sample->comm, "hot");
	CHECK_INT(rec.sample->nr_kernel, 2);
	CHECK_INT(rec.sample->nr_user, 3);
	CHECK(rec.kips[0] == ips[0] && rec.kips[1] == ips[1]);
	CHECK(rec.uips[0] == ips[2] && rec.uips[2] == ips[4]);
	CHECK(rec.ustack == NULL);

	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_FORK);
	CHECK_INT(rec.task->ppid, 1);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_LOST);
	CHECK_INT(rec.lost->count, 3);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_EXIT);
	CHECK_INT(rec.task->time_ns, 2000);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_SUMMARY);
	CHECK_INT(rec.summary->end_ns, 3000);
	CHECK_INT(rec.summary->command_status, -1);
	CHECK_INT(fg_rec_next(r, &rec), 0);
	CHECK_INT(fg_rec_next(r, &rec), 0);
	CHECK_INT(fg_rec_reader_offset(r), m.len);
	fg_rec_reader_free(r);
	close(fd);
	free(m.data);
}

/* Cut the stream at every byte: each cut is the end (at a record boundary) or a clear error. */
TEST(truncated_anywhere)
{
	struct mem m = sample_stream();
	char msg[256];
	int n, full;

	CHECK_INT(read_all(m.data, m.len, &full, msg, sizeof(msg)), 0);
	CHECK_INT(full, 7);
	for (size_t cut = 0; cut < m.len; cut++) {
		int rc = read_all(m.data, cut, &n, msg, sizeof(msg));

		if (rc == 0) {
			CHECK(n < full);
			continue;
		}
		CHECK_INT(rc, -EPROTO);
		CHECK(strstr(msg, "truncated") || strstr(msg, "empty stream"));
		CHECK(strstr(msg, " at byte "));
	}
	free(m.data);
}

TEST(truncated_sample_names_its_offset)
{
	struct mem m = sample_stream();
	int fd = pipe_with(m.data, m.len, true, NULL);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "x");
	struct fg_rec rec;
	uint64_t at = 0;
	char want[80], msg[256];
	int n;

	while (fg_rec_next(r, &rec) > 0)
		if (rec.type == FG_REC_SAMPLE)
			at = rec.offset;
	fg_rec_reader_free(r);
	close(fd);
	CHECK(at > 0);
	CHECK_INT(read_all(m.data, at + 20, &n, msg, sizeof(msg)), -EPROTO);
	snprintf(want, sizeof(want), "truncated sample record at byte %llu",
		 (unsigned long long)at);
	CHECK_STR(msg, want);
	CHECK_INT(n, 2);
	free(m.data);
}

TEST(bad_headers)
{
	struct mem m = sample_stream();
	uint8_t *d = m.data;
	uint64_t magic = __builtin_bswap64(FG_REC_MAGIC);
	char msg[256];
	int n;

	CHECK_INT(read_all(d, 0, &n, msg, sizeof(msg)), -EPROTO);
	CHECK_STR(msg, "empty stream: no header at byte 0");

	memcpy(d, &magic, 8);
	CHECK_INT(read_all(d, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "byte-swapped") != NULL);

	memcpy(d, "PERFILE2", 8);
	CHECK_INT(read_all(d, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK_STR(msg, "not an fg record stream (bad magic) at byte 0");

	magic = FG_REC_MAGIC;
	memcpy(d, &magic, 8);
	uint32_t v = 2;
	memcpy(d + 8, &v, 4);
	CHECK_INT(read_all(d, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "unsupported record stream version 2") != NULL);

	v = FG_REC_VERSION;
	memcpy(d + 8, &v, 4);
	v = 12;
	memcpy(d + 12, &v, 4);
	CHECK_INT(read_all(d, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK_STR(msg, "bad header size 12 at byte 12");

	/* a longer header from a later writer is skipped */
	free(m.data);
	m = sample_stream();
	size_t extra = 16, hs = sizeof(struct fg_rec_header);
	uint8_t *big = calloc(1, m.len + extra);
	memcpy(big, m.data, hs);
	memcpy(big + hs + extra, m.data + hs, m.len - hs);
	v = (uint32_t)(hs + extra);
	memcpy(big + 12, &v, 4);
	CHECK_INT(read_all(big, m.len + extra, &n, msg, sizeof(msg)), 0);
	CHECK_INT(n, 7);
	free(big);
	free(m.data);
}

/* Find the first record of `type` in a stream: its offset. */
static size_t find(const struct mem *m, uint32_t type)
{
	size_t at = sizeof(struct fg_rec_header);

	while (at + 8 <= m->len) {
		struct fg_rec_hdr h;

		memcpy(&h, m->data + at, 8);
		if (h.type == type)
			return at;
		at += h.size;
	}
	abort();
}

TEST(bad_records)
{
	struct mem m = sample_stream();
	size_t s = find(&m, FG_REC_SAMPLE), mp = find(&m, FG_REC_MAPPING);
	size_t c = find(&m, FG_REC_COMM);
	uint8_t *copy = malloc(m.len);
	char msg[256], want[128];
	uint32_t v;
	int n;

#define RESET() memcpy(copy, m.data, m.len)
	RESET();
	v = 13;
	memcpy(copy + s + 4, &v, 4);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	snprintf(want, sizeof(want), "bad size 13 for sample record at byte %zu", s);
	CHECK_STR(msg, want);

	RESET();
	v = 5000; /* nr_user */
	memcpy(copy + s + 8 + offsetof(struct fg_rec_sample, nr_user), &v, 4);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "too many frames") != NULL);

	RESET();
	v = 40; /* nr_user: more than the record holds */
	memcpy(copy + s + 8 + offsetof(struct fg_rec_sample, nr_user), &v, 4);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	snprintf(want, sizeof(want), "bad sample record at byte %zu: 2 + 40 frames", s);
	CHECK(strncmp(msg, want, strlen(want)) == 0);

	RESET();
	memset(copy + s + 8 + offsetof(struct fg_rec_sample, comm), 'x', FG_REC_COMM_LEN);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "comm not NUL-terminated") != NULL);

	RESET();
	v = FG_SAMPLE_F_USTACK_SNAPSHOT;
	memcpy(copy + s + 8 + offsetof(struct fg_rec_sample, flags), &v, 4);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "snapshot") != NULL);

	RESET();
	struct fg_rec_hdr mh;
	memcpy(&mh, copy + mp, 8);
	memset(copy + mp + 8 + sizeof(struct fg_rec_mapping), 'a',
	       mh.size - 8 - sizeof(struct fg_rec_mapping));
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	snprintf(want, sizeof(want), "bad mapping record at byte %zu: path not NUL-terminated", mp);
	CHECK_STR(msg, want);

	RESET();
	copy[mp + 8 + offsetof(struct fg_rec_mapping, build_id_len)] = 21;
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "build-id of 21 bytes") != NULL);

	RESET();
	memset(copy + mp + 8 + offsetof(struct fg_rec_mapping, end), 0, 8);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "empty address range") != NULL);

	RESET();
	v = 16; /* a comm record too short for its payload */
	memcpy(copy + c + 4, &v, 4);
	CHECK_INT(read_all(copy, m.len, &n, msg, sizeof(msg)), -EPROTO);
	snprintf(want, sizeof(want), "bad comm record at byte %zu: payload of 8 bytes, too short",
		 c);
	CHECK_STR(msg, want);
	free(copy);
	free(m.data);
#undef RESET
}

/* a record of `type` with payload[0..len) built in buf (8-aligned, zero-padded): its size */
static size_t build(uint64_t *buf, uint32_t type, const void *payload, size_t len)
{
	struct fg_rec_hdr h = {.type = type, .size = (uint32_t)(8 + (len + 7) / 8 * 8)};

	memset(buf, 0, h.size);
	memcpy(buf, &h, sizeof(h));
	memcpy((uint8_t *)buf + 8, payload, len);
	return h.size;
}

/* the Python tails: each frame's instruction after the frames, a line table after the names */
TEST(python_offsets_and_line_tables)
{
	static uint64_t buf[256];
	uint8_t p[1024] = {0};
	struct fg_rec_sample s = {.nr_user = 1, .flags = FG_SAMPLE_F_PYSTACK};
	struct fg_rec_pystack py = {.nr = 3, .flags = FG_PYSTACK_F_OFFSETS};
	uint64_t fr[3] = {0x1000, 0x2000, 0x3000 | FG_PY_ENTRY}, ip = 0x401136;
	uint32_t off[3] = {4, FG_PY_NO_OFFSET, 10};
	struct fg_rec_pycode c = {.pid = 1, .firstlineno = 5, .code = 0x1000};
	struct fg_rec_pyline t = {.len = 3, .format = 3};
	struct fg_rec rec;
	char why[256];
	size_t at = 0, n;
	uint32_t o;

	memcpy(p, &s, sizeof(s));
	at = sizeof(s);
	memcpy(p + at, &ip, 8);
	memcpy(p + at + 8, &py, sizeof(py));
	memcpy(p + at + 8 + sizeof(py), fr, sizeof(fr));
	memcpy(p + at + 8 + sizeof(py) + sizeof(fr), off, sizeof(off));
	n = build(buf, FG_REC_SAMPLE, p, at + 8 + sizeof(py) + sizeof(fr) + sizeof(off));
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), 0);
	CHECK(rec.pyoffsets != NULL);
	memcpy(&o, rec.pyoffsets + 8, 4);
	CHECK_INT(o, 10);
	/* the offsets cut short: refused, said */
	n = build(buf, FG_REC_SAMPLE, p, at + 8 + sizeof(py) + sizeof(fr) + 4);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	CHECK(strstr(why, "3 Python offsets need") != NULL);
	/* without the flag (a capture of before), no offsets */
	py.flags = 0;
	memcpy(p + at + 8, &py, sizeof(py));
	n = build(buf, FG_REC_SAMPLE, p, at + 8 + sizeof(py) + sizeof(fr));
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), 0);
	CHECK(rec.pystack && rec.pystack->nr == 3 && !rec.pyoffsets);

	/* a pycode record with its table, and one without (the padding is not one) */
	memcpy(p, &c, sizeof(c));
	memcpy(p + sizeof(c), "f\0/a.py", 8);
	at = sizeof(c) + 8;
	n = build(buf, FG_REC_PYCODE, p, at);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), 0);
	CHECK(rec.py_table == NULL);
	memcpy(p + at, &t, sizeof(t));
	memcpy(p + at + sizeof(t), "\x81\x12\xf8", 3);
	n = build(buf, FG_REC_PYCODE, p, at + sizeof(t) + 3);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), 0);
	CHECK(rec.py_table && rec.py_table_len == 3 && rec.py_table_format == 3);
	CHECK(!memcmp(rec.py_table, "\x81\x12\xf8", 3));
	/* a table longer than the record, or of no format known: refused */
	t.len = 100;
	memcpy(p + at, &t, sizeof(t));
	n = build(buf, FG_REC_PYCODE, p, at + sizeof(t) + 3);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	CHECK(strstr(why, "Python line table of 100 bytes") != NULL);
	t.len = 3;
	t.format = 9;
	memcpy(p + at, &t, sizeof(t));
	n = build(buf, FG_REC_PYCODE, p, at + sizeof(t) + 3);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
}

/* a ksym record: a range of code and its name; an empty range, or a name unreadable, refused */
TEST(kernel_symbols_of_bpf_code)
{
	static uint64_t buf[128];
	uint8_t p[600] = {0};
	struct fg_rec_ksym k = {.addr = 0xffffffffc0001000ull, .len = 64, .flags = FG_KSYM_F_GONE};
	struct fg_rec rec;
	char why[256];
	size_t n;

	memcpy(p, &k, sizeof(k));
	memcpy(p + sizeof(k), "bpf_prog_0123456789abcdef_x", 28);
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 28);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), 0);
	CHECK(rec.ksym->addr == k.addr && rec.ksym->len == 64 && rec.ksym->flags == FG_KSYM_F_GONE);
	CHECK_STR(rec.ksym_name, "bpf_prog_0123456789abcdef_x");
	/* no NUL within the record, a control character, an empty name */
	memset(p + sizeof(k), 'a', 32);
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 32);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	CHECK(strstr(why, "kernel symbol name") != NULL);
	memcpy(p + sizeof(k), "bpf_prog_0123456789abcdef_x", 28);
	p[sizeof(k) + 3] = '\n';
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 28);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	memset(p + sizeof(k), 0, 28);
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 28);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	/* no bytes of code, or a range past the end of the address space */
	memcpy(p + sizeof(k), "x", 2);
	k.len = 0;
	memcpy(p, &k, sizeof(k));
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 2);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	CHECK(strstr(why, "address range") != NULL);
	k.len = 0x2000;
	k.addr = ~0ull - 0x100;
	memcpy(p, &k, sizeof(k));
	n = build(buf, FG_REC_KSYM, p, sizeof(k) + 2);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
	/* too short for its fixed part */
	n = build(buf, FG_REC_KSYM, p, 8);
	CHECK_INT(fg_rec_parse(buf, n, &rec, why, sizeof(why)), -EPROTO);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "# the reader waited for bytes it did not need\n";
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

/* A record is handed out as soon as it is complete; has_buffered tells when a read is next. */
TEST(streams_without_waiting)
{
	struct mem m = sample_stream();
	size_t s = find(&m, FG_REC_SAMPLE);
	struct fg_rec_hdr sh;
	int wfd, fd;
	struct fg_rec rec;

	memcpy(&sh, m.data + s, 8);
	signal(SIGALRM, on_alarm);
	alarm(10);
	/* everything up to the middle of the sample */
	fd = pipe_with(m.data, s + 16, false, &wfd);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "pipe");
	CHECK(!fg_rec_reader_has_buffered(r));
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_MAPPING);
	CHECK(fg_rec_reader_has_buffered(r)); /* the comm record is there */
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_COMM);
	CHECK(!fg_rec_reader_has_buffered(r)); /* an unknown record, then half a sample */
	/* the rest of the sample: returned without waiting for the writer to close */
	CHECK(write(wfd, m.data + s + 16, sh.size - 16) == (ssize_t)(sh.size - 16));
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_SAMPLE);
	CHECK(!fg_rec_reader_has_buffered(r));
	CHECK(write(wfd, m.data + s + sh.size, m.len - s - sh.size) ==
	      (ssize_t)(m.len - s - sh.size));
	close(wfd);
	int n = 0;
	while (fg_rec_next(r, &rec) > 0)
		n++;
	CHECK_INT(n, 4);
	CHECK(fg_rec_reader_has_buffered(r)); /* at the end: nothing to wait for */
	alarm(0);
	fg_rec_reader_free(r);
	close(fd);
	free(m.data);
}

TEST(big_records_and_snapshots)
{
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	size_t n = 2 * 4096, len = sizeof(struct fg_rec_sample) + 8 * n + 32 + 8 * 3 + 1000;
	uint8_t *p = calloc(1, len);
	struct fg_rec_sample *s = (void *)p;
	struct fg_rec_ustack *u = (void *)(p + sizeof(*s) + 8 * n);
	uint64_t *bigips = (uint64_t *)(p + sizeof(*s));

	fg_rec_header_init(&h);
	s->nr_kernel = 4096;
	s->nr_user = 4096;
	s->flags = FG_SAMPLE_F_USTACK_SNAPSHOT;
	for (size_t i = 0; i < n; i++)
		bigips[i] = i;
	u->nr_regs = 3;
	u->regs_mask = 7;
	u->size = 1000;
	p[len - 1] = 0xaa;
	CHECK_INT(fg_rec_write_header(w, &h), 0);
	for (int i = 0; i < 20; i++) /* more than the write buffer holds */
		CHECK_INT(fg_rec_write(w, FG_REC_SAMPLE, p, len), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);
	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "file");
	struct fg_rec rec;
	int k = 0;
	while (fg_rec_next(r, &rec) > 0) {
		CHECK(rec.ustack != NULL);
		CHECK_INT(rec.ustack->size, 1000);
		CHECK_INT(rec.ustack_data[999], 0xaa);
		CHECK_INT(rec.uips[4095], 8191);
		k++;
	}
	CHECK_INT(k, 20);
	CHECK_STR(fg_rec_reader_error(r), "no error");
	fg_rec_reader_free(r);
	close(fd);
	s = &(struct fg_rec_sample){.nr_kernel = 5000};
	w = fg_rec_writer_new(-1);
	CHECK_INT(fg_rec_write_sample(w, s, ips), -EINVAL);
	free(p);
	fg_rec_writer_free(w);
}

TEST(write_errors_are_reported_and_sticky)
{
	int fd = open("/dev/full", O_WRONLY);
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	struct fg_rec_lost l = {.count = 1};

	CHECK(fd >= 0);
	fg_rec_header_init(&h);
	CHECK_INT(fg_rec_write_header(w, &h), 0); /* buffered */
	CHECK_INT(fg_rec_writer_flush(w), -ENOSPC);
	CHECK_INT(fg_rec_write(w, FG_REC_LOST, &l, sizeof(l)), -ENOSPC);
	CHECK_INT(fg_rec_writer_error(w), -ENOSPC);
	CHECK_INT(fg_rec_writer_free(w), -ENOSPC);
	close(fd);

	int fds[2];
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	w = fg_rec_writer_new(fds[1]);
	fg_rec_write_header(w, &h);
	CHECK_INT(fg_rec_writer_free(w), -EPIPE);
	close(fds[1]);
	signal(SIGPIPE, SIG_DFL);
}

TEST(print_is_one_line_per_record)
{
	struct mem m = sample_stream();
	int fd = pipe_with(m.data, m.len, true, NULL);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "x");
	const struct fg_rec_header *h;
	struct fg_rec rec;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_INT(fg_rec_read_header(r, &h), 0);
	fg_rec_print_header(f, h);
	while (fg_rec_next(r, &rec) > 0)
		fg_rec_print(f, &rec);
	fclose(f);
	CHECK(strstr(text, "header version=1 ") == text);
	CHECK(strstr(text, "\nsample @") != NULL);
	CHECK(strstr(text, " comm=hot weight=1 flags=0x0 kernel=2 user=3 k:ffffffff81000010 "
			   "k:ffffffff81000020 u:401136 u:401150 u:7f0000001000\n") != NULL);
	CHECK(strstr(text, " path=/usr/bin/split7030\n") != NULL);
	CHECK(strstr(text, "\nsummary @") != NULL);
	int lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	CHECK_INT(lines, 8);
	free(text);
	fg_rec_reader_free(r);
	close(fd);
	free(m.data);
}

/* The creds record (type 8): written, read back, printed; a stream cut inside a record says so. */
TEST(creds_record_and_cut_streams)
{
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	struct fg_rec_creds c = {.pid = 42, .uid = 1000, .gid = 100, .time_ns = 7};
	struct fg_rec_reader *r;
	struct fg_rec rec;
	char line[256];
	FILE *f;

	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	CHECK_INT(fg_rec_write(w, FG_REC_CREDS, &c, sizeof(c)), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);
	struct mem m = slurp(fd);
	close(fd);
	fd = pipe_with(m.data, m.len, true, NULL);
	r = fg_rec_reader_new(fd, "creds");
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_CREDS);
	CHECK_STR(fg_rec_type_name(rec.type), "creds");
	CHECK_INT(rec.creds->pid, 42);
	CHECK_INT(rec.creds->uid, 1000);
	CHECK_INT(rec.creds->gid, 100);
	f = fmemopen(line, sizeof(line), "w");
	fg_rec_print(f, &rec);
	fclose(f);
	CHECK_STR(line, "creds @200 time=7 pid=42 uid=1000 gid=100\n");
	CHECK_INT(fg_rec_next(r, &rec), 0);
	CHECK(!fg_rec_reader_truncated(r));
	fg_rec_reader_free(r);
	close(fd);
	/* a payload too short for it is damage */
	uint32_t size = 16;
	memcpy(m.data + 204, &size, 4);
	fd = pipe_with(m.data, 200 + 16, true, NULL);
	r = fg_rec_reader_new(fd, "short");
	CHECK_INT(fg_rec_next(r, &rec), -EPROTO);
	CHECK(!fg_rec_reader_truncated(r));
	fg_rec_reader_free(r);
	close(fd);
	/* cut inside the record: truncated, not damaged */
	size = 32;
	memcpy(m.data + 204, &size, 4);
	fd = pipe_with(m.data, m.len - 4, true, NULL);
	r = fg_rec_reader_new(fd, "cut");
	CHECK_INT(fg_rec_next(r, &rec), -EPROTO);
	CHECK(fg_rec_reader_truncated(r));
	fg_rec_reader_free(r);
	close(fd);
	free(m.data);
}

/* A mapped file: records in place, the same as read(); where it cannot be mapped, read(). */
TEST(mapped_input)
{
	struct mem m = sample_stream();
	struct fg_rec_reader *r;
	struct fg_rec rec;
	bool mapped;
	char msg[256];
	int n, fd;

	/* from the descriptor's offset on (stdin redirected from a file read in part) */
	CHECK_INT(read_fd(file_with(m.data, m.len, 16), true, &mapped, &n, msg, sizeof(msg)), 0);
	CHECK(mapped);
	CHECK_INT(n, 7);
	/* an offset that is not 8-aligned: read(), the fields being read in place when mapped */
	CHECK_INT(read_fd(file_with(m.data, m.len, 12), true, &mapped, &n, msg, sizeof(msg)), 0);
	CHECK(!mapped);
	CHECK_INT(n, 7);
	/* not asked: read() */
	CHECK_INT(read_fd(file_with(m.data, m.len, 0), false, &mapped, &n, msg, sizeof(msg)), 0);
	CHECK(!mapped);
	/* the records point into the file's mapping; a record past the first window's end */
	fd = file_with(m.data, m.len, 0);
	r = fg_rec_reader_new(fd, "file");
	fg_rec_reader_map(r);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK(fg_rec_reader_mapped(r));
	CHECK_INT(rec.type, FG_REC_MAPPING);
	CHECK_STR(rec.path, "/usr/bin/split7030");
	CHECK(fg_rec_reader_has_buffered(r)); /* a file never pauses */
	/* a file that grows: the reader goes on past the size it first saw */
	{
		int wfd = dup(fd);
		struct fg_rec_writer *w;

		CHECK(lseek(wfd, 0, SEEK_END) == (off_t)m.len);
		w = fg_rec_writer_new(wfd);
		struct fg_rec_lost more = {.time_ns = 4000, .count = 1};

		CHECK_INT(fg_rec_write(w, FG_REC_LOST, &more, sizeof(more)), 0);
		CHECK_INT(fg_rec_writer_free(w), 0);
		close(wfd);
	}
	for (n = 1; fg_rec_next(r, &rec) > 0;)
		if (++n == 8)
			CHECK(rec.type == FG_REC_LOST && rec.lost->time_ns == 4000);
	CHECK_INT(n, 8);
	fg_rec_reader_free(r);
	close(fd);
	/* a pipe is read(), asked or not */
	CHECK_INT(
	    read_fd(pipe_with(m.data, m.len, true, NULL), true, &mapped, &n, msg, sizeof(msg)), 0);
	CHECK(!mapped);
	CHECK_INT(n, 7);
	free(m.data);
}

/* A temporary file and a writer on it, the stream's header written. */
static struct fg_rec_writer *stream_writer(int *fd)
{
	struct fg_rec_header h;
	struct fg_rec_writer *w;

	*fd = tmpfd();
	w = fg_rec_writer_new(*fd);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	return w;
}

/* A big stream, its pages let go as it is read: every record whole, in order. */
TEST(mapped_big_stream)
{
	int fd;
	struct fg_rec_writer *w = stream_writer(&fd);
	struct fg_rec_reader *r;
	struct fg_rec rec;
	static uint64_t many[FG_REC_MAX_FRAMES];
	struct fg_rec_sample s = {.pid = 1, .tid = 1, .weight = 1, .nr_user = 1000};
	uint64_t n = 0, want = 3000; /* about 24 MiB: more than one MAP_RELEASE */
	bool checked = false;
	unsigned char vec;

	for (uint64_t i = 0; i < want; i++) {
		s.time_ns = i;
		many[0] = i;
		many[999] = ~i;
		fg_rec_write_sample(w, &s, many);
	}
	CHECK_INT(fg_rec_writer_free(w), 0);
	lseek(fd, 0, SEEK_SET);
	r = fg_rec_reader_new(fd, "big");
	fg_rec_reader_map(r);
	while (fg_rec_next(r, &rec) > 0) {
		if (rec.sample->time_ns != n || rec.uips[0] != n || rec.uips[999] != ~n)
			break;
		if (!checked && rec.offset >= (8u << 20)) {
			/*
			 * the window let go of what was read up to 8 MiB, a whole
			 * 2 MiB span of the file (where a huge mapping would not be
			 * split), not up to this record's page: the file's byte at
			 * 8 MiB is still mapped
			 */
			uintptr_t at = (uintptr_t)rec.sample - (rec.offset - (8u << 20));

			checked = true;
			CHECK_INT(mincore((void *)(at & ~(uintptr_t)4095), 1, &vec), 0);
		}
		n++;
	}
	CHECK(checked);
	CHECK(fg_rec_reader_mapped(r));
	CHECK_INT(n, want);
	CHECK_INT(fg_rec_reader_offset(r), lseek(fd, 0, SEEK_END));
	fg_rec_reader_free(r);
	close(fd);
}

/*
 * A file truncated under the reader: the SIGBUS of reading what is gone
 * jumps to the guard, and the reader fails naming the byte; a SIGBUS
 * elsewhere is not the guard's.
 */
static int read_guarded(struct fg_rec_reader *r, int fd, off_t cut_to, int cut_after, int *nrec)
{
	sigjmp_buf jb;
	struct fg_rec rec;

	if (sigsetjmp(jb, 1))
		return fg_rec_reader_fault(r);
	if (fg_rec_reader_guard(r, &jb) < 0)
		return -EBUSY;
	for (;;) {
		int rc = fg_rec_next(r, &rec);

		if (rc <= 0) {
			(void)fg_rec_reader_guard(r, NULL);
			return rc;
		}
		if (++*nrec == cut_after && ftruncate(fd, cut_to) != 0)
			abort();
	}
}

/*
 * A stream of 1.1 GiB, sparse (records of a type from the future, skipped,
 * 16 MiB of zeros each), mapped a 1 GiB window at a time: one record
 * across the first window's end, then a sample and the summary after it.
 */
TEST(mapped_window_by_window)
{
	int fd, n = 0;
	struct fg_rec_writer *w = stream_writer(&fd);
	struct fg_rec_sample s = {.pid = 7, .tid = 7, .weight = 1, .nr_user = 1};
	struct fg_rec_summary sum = {.samples = 1};
	uint64_t ip = 0x401000, at = sizeof(struct fg_rec_header);
	struct fg_rec_hdr big = {.type = 999, .size = FG_REC_MAX_SIZE};
	struct fg_rec_reader *r;
	struct fg_rec rec;

	CHECK_INT(fg_rec_writer_free(w), 0);
	for (int i = 0; i < 70; i++, at += big.size)
		CHECK_INT(pwrite(fd, &big, sizeof(big), (off_t)at), sizeof(big));
	CHECK(lseek(fd, (off_t)at, SEEK_SET) == (off_t)at);
	w = fg_rec_writer_new(fd);
	fg_rec_write_sample(w, &s, &ip);
	fg_rec_write(w, FG_REC_SUMMARY, &sum, sizeof(sum));
	CHECK_INT(fg_rec_writer_free(w), 0);
	lseek(fd, 0, SEEK_SET);
	r = fg_rec_reader_new(fd, "sparse");
	fg_rec_reader_map(r);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK(fg_rec_reader_mapped(r));
	CHECK_INT(rec.type, FG_REC_SAMPLE);
	CHECK_INT(rec.offset, at);
	CHECK_INT(rec.uips[0], ip);
	CHECK_INT(fg_rec_reader_skipped(r), 70);
	while (fg_rec_next(r, &rec) > 0)
		n++;
	CHECK_INT(n, 1);
	CHECK_INT(rec.type, FG_REC_SUMMARY);
	fg_rec_reader_free(r);
	close(fd);
}

/* A file of 40 samples of 8,064 bytes after the header's 200, from byte 0, mapped. */
static struct fg_rec_reader *forty_samples(int fd)
{
	struct fg_rec_writer *w;
	struct fg_rec_header h;
	struct fg_rec_reader *r;
	static uint64_t many[1000];
	struct fg_rec_sample s = {.pid = 1, .tid = 1, .weight = 1, .nr_user = 1000};

	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	w = fg_rec_writer_new(fd);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	for (int i = 0; i < 40; i++)
		fg_rec_write_sample(w, &s, many);
	if (fg_rec_writer_free(w) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	r = fg_rec_reader_new(fd, "cut");
	fg_rec_reader_map(r);
	return r;
}

TEST(mapped_file_truncated_under_the_reader)
{
	int fd = tmpfd(), n = 0, rc;
	struct fg_rec_reader *r = forty_samples(fd), *other;
	struct fg_rec rec;
	sigjmp_buf jb;

	/* one reader guarded at a time */
	other = fg_rec_reader_new(fd, "other");
	CHECK_INT(fg_rec_reader_guard(other, &jb), 0);
	CHECK_INT(fg_rec_reader_guard(r, &jb), -EBUSY);
	CHECK_INT(fg_rec_reader_guard(other, NULL), 0);
	fg_rec_reader_free(other);
	/* after the 3rd record, the file cut to 20000 bytes: the 4th, at byte 24392, is gone */
	rc = read_guarded(r, fd, 20000, 3, &n);
	CHECK_INT(rc, -EPROTO);
	CHECK_INT(n, 3);
	CHECK_STR(fg_rec_reader_error(r), "the file shrank while being read (truncated under this "
					  "reader) at byte 24392");
	CHECK_INT(fg_rec_next(r, &rec), -EPROTO); /* sticky */
	fg_rec_reader_free(r);
	/* cut after its last record was read: found at the end, where a smaller size shows */
	r = forty_samples(fd);
	n = 0;
	CHECK_INT(read_guarded(r, fd, 20000, 40, &n), -EPROTO);
	CHECK_INT(n, 40);
	CHECK_STR(fg_rec_reader_error(r), "the file shrank while being read (truncated under this "
					  "reader) at byte 20000");
	fg_rec_reader_free(r);
	close(fd);
}

int main(void)
{
	RUN(round_trip_every_kind);
	RUN(truncated_anywhere);
	RUN(truncated_sample_names_its_offset);
	RUN(bad_headers);
	RUN(bad_records);
	RUN(python_offsets_and_line_tables);
	RUN(kernel_symbols_of_bpf_code);
	RUN(streams_without_waiting);
	RUN(big_records_and_snapshots);
	RUN(write_errors_are_reported_and_sticky);
	RUN(print_is_one_line_per_record);
	RUN(creds_record_and_cut_streams);
	RUN(mapped_input);
	RUN(mapped_big_stream);
	RUN(mapped_window_by_window);
	RUN(mapped_file_truncated_under_the_reader);
	return unit_done();
}
