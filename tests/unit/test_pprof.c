// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the protobuf encoder, the pprof builder, perf script's header comments. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/pprof.h"
#include "fg/pprof_read.h"
#include "fg/proto.h"
#include "fg/psheader.h"
#include "unit.h"

static struct fg_proto_reader reader(const struct fg_buf *b)
{
	return (struct fg_proto_reader){(const uint8_t *)b->data,
					(const uint8_t *)b->data + b->len};
}

TEST(varints_round_trip)
{
	static const uint64_t v[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX};
	struct fg_buf b = FG_BUF_INIT;
	struct fg_proto_reader r;
	struct fg_proto_field f;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fg_buf_reset(&b);
		fg_proto_uint(&b, 1, v[i]);
		if (v[i] == 0) {
			CHECK_INT(b.len, 0); /* proto3: a default value is left out */
			continue;
		}
		r = reader(&b);
		CHECK_INT(fg_proto_next(&r, &f), 1);
		CHECK_INT(f.num, 1);
		CHECK_INT(f.wire, FG_PROTO_VARINT);
		CHECK(f.v == v[i]);
		CHECK_INT(fg_proto_next(&r, &f), 0);
	}
	/* 300 is "ac 02", the example of protobuf's documentation */
	fg_buf_reset(&b);
	fg_proto_varint(&b, 300);
	CHECK_INT(b.len, 2);
	CHECK_INT((uint8_t)b.data[0], 0xac);
	CHECK_INT((uint8_t)b.data[1], 0x02);
	fg_buf_release(&b);
}

TEST(nested_and_packed)
{
	struct fg_buf b = FG_BUF_INIT;
	uint64_t ids[] = {1, 2, 300}, *got = NULL;
	size_t n = 0, alloc = 0;
	struct fg_proto_reader r, in;
	struct fg_proto_field f, g;
	char big[200];

	memset(big, 'x', sizeof(big));
	size_t m = fg_proto_begin(&b, 2);
	fg_proto_packed(&b, 1, ids, 3);
	fg_proto_bytes(&b, 6, big, sizeof(big)); /* a body over 127 bytes: a two-byte length */
	fg_proto_end(&b, m);
	fg_proto_bytes(&b, 6, "", 0);
	r = reader(&b);
	CHECK_INT(fg_proto_next(&r, &f), 1);
	CHECK_INT(f.num, 2);
	CHECK_INT(f.wire, FG_PROTO_LEN);
	in = (struct fg_proto_reader){f.data, f.data + f.len};
	CHECK_INT(fg_proto_next(&in, &g), 1);
	CHECK_INT(fg_proto_unpack(&g, &got, &n, &alloc), 0);
	CHECK_INT(n, 3);
	CHECK(got[0] == 1 && got[1] == 2 && got[2] == 300);
	CHECK_INT(fg_proto_next(&in, &g), 1);
	CHECK_INT(g.len, sizeof(big));
	CHECK_INT(fg_proto_next(&in, &g), 0);
	CHECK_INT(fg_proto_next(&r, &f), 1);
	CHECK_INT(f.num, 6);
	CHECK_INT(f.len, 0);
	CHECK_INT(fg_proto_next(&r, &f), 0);
	free(got);
	fg_buf_release(&b);
}

TEST(malformed_protobuf_is_refused)
{
	static const struct {
		const char *bytes;
		size_t len;
	} bad[] = {
	    {"\x08", 1}, /* a varint field without its value */
	    {"\x12\x05"
	     "ab",
	     4},						  /* a length past the end */
	    {"\x00\x01", 2},					  /* field number 0 */
	    {"\x0b\x01", 2},					  /* a group (wire type 3) */
	    {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11}, /* a varint over 64 bits */
	    {"\x09\x01\x02", 3},				  /* a fixed64 cut short */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fg_proto_reader r = {(const uint8_t *)bad[i].bytes,
					    (const uint8_t *)bad[i].bytes + bad[i].len};
		struct fg_proto_field f;

		CHECK_INT(fg_proto_next(&r, &f), -EINVAL);
		CHECK(r.p == (const uint8_t *)bad[i].bytes); /* where the bad field starts */
	}
}

/* the number of fields numbered `num` of a message */
static int count_fields(const struct fg_buf *b, unsigned num)
{
	struct fg_proto_reader r = reader(b);
	struct fg_proto_field f;
	int n = 0, err;

	while ((err = fg_proto_next(&r, &f)) > 0)
		n += f.num == num;
	return err < 0 ? -1 : n;
}

TEST(profile_interns_and_sums)
{
	struct fg_pprof *p = fg_pprof_new();
	struct fg_pprof_frame fr[] = {
	    {.name = "inner", .name_len = 5, .inlined = true},
	    {.name = "outer",
	     .name_len = 5,
	     .file = "/bin/a",
	     .file_len = 6,
	     .addr = 0x10,
	     .has_addr = true},
	    {.name = "main",
	     .name_len = 4,
	     .file = "/bin/a",
	     .file_len = 6,
	     .addr = 0x20,
	     .has_addr = true},
	};
	struct fg_pprof_sample s = {.frames = fr,
				    .nframes = 3,
				    .values = {1, 100},
				    .has_pid = true,
				    .pid = 7,
				    .comm = "a",
				    .comm_len = 1};
	struct fg_pprof_meta m = {.ntypes = 2,
				  .type = {"samples", "cpu"},
				  .unit = {"count", "nanoseconds"},
				  .column = {0, 1},
				  .default_type = 1,
				  .period_type = "cpu",
				  .period_unit = "nanoseconds",
				  .period = 100};
	struct fg_buf b = FG_BUF_INIT;

	CHECK_INT(fg_pprof_add(p, &s), 0);
	CHECK_INT(fg_pprof_add(p, &s), 0); /* the same stack and labels: one sample */
	s.pid = 8;
	CHECK_INT(fg_pprof_add(p, &s), 0);
	CHECK_INT(fg_pprof_count(p), 2);
	CHECK_INT(fg_pprof_totals(p)[1], 300);
	/* an inlined frame must have a caller after it */
	s.nframes = 1;
	CHECK_INT(fg_pprof_add(p, &s), -EINVAL);
	fg_pprof_encode(p, &m, &b);
	CHECK_INT(count_fields(&b, 1), 2); /* sample types */
	CHECK_INT(count_fields(&b, 2), 2); /* samples */
	CHECK_INT(count_fields(&b, 3), 1); /* one mapping: /bin/a */
	CHECK_INT(count_fields(&b, 4), 2); /* locations: 0x10 (inner, outer) and 0x20 */
	CHECK_INT(count_fields(&b, 5), 3); /* functions */
	CHECK_INT(count_fields(&b, 11), 1);
	CHECK_INT(count_fields(&b, 14), 1);
	fg_buf_release(&b);
	fg_pprof_free(p);
}

TEST(gzip_output_inflates)
{
	char *out = NULL;
	size_t outlen = 0;
	FILE *mem = open_memstream(&out, &outlen);
	const char msg[] = "a profile, gzipped";
	unsigned char back[64];
	z_stream z;

	CHECK(mem != NULL);
	CHECK_INT(fg_gzip_write(msg, sizeof(msg), -1, mem), 0);
	fclose(mem);
	CHECK((unsigned char)out[0] == 0x1f && (unsigned char)out[1] == 0x8b);
	memset(&z, 0, sizeof(z));
	CHECK_INT(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)out;
	z.avail_in = (unsigned)outlen;
	z.next_out = back;
	z.avail_out = sizeof(back);
	CHECK_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
	CHECK_INT(z.total_out, sizeof(msg));
	CHECK_STR((char *)back, msg);
	inflateEnd(&z);
	free(out);
}

TEST(header_comments)
{
	struct fg_psheader_event e;
	uint64_t tod, clk, ns;
	const char *ev =
	    "# event : name = cpu-clock:ppp, , id = { 463, 464 }, type = 1, size = 128, "
	    "{ sample_period, sample_freq } = 999, sample_type = IP|TID, freq = 1, "
	    "enable_on_exec = 1";
	const char *fixed = "# event : name = cycles, , { sample_period, sample_freq } = 10000";
	const char *ref = "# reference time: 2026-11-30 14:33:04.860210 = 1796049184.860210 (TOD) "
			  "= 847.210343509 (monotonic)";

	CHECK_INT(fg_psheader_parse_event(ev, strlen(ev), &e), 0);
	CHECK_STR(e.name, "cpu-clock");
	CHECK(e.freq_mode);
	CHECK_INT(e.n, 999);
	CHECK_INT(fg_psheader_parse_event(fixed, strlen(fixed), &e), 0);
	CHECK(!e.freq_mode);
	CHECK_INT(e.n, 10000);
	CHECK_INT(fg_psheader_parse_event(ref, strlen(ref), &e), -EINVAL);
	CHECK_INT(fg_psheader_parse_reftime(ref, strlen(ref), &tod, &clk), 0);
	CHECK(tod == 1796049184860210000ull);
	CHECK(clk == 847210343509ull);
	CHECK_INT(fg_psheader_parse_reftime(ev, strlen(ev), &tod, &clk), -EINVAL);

	const char *h1 = "leaves 11804/11804 [001]   982.425128:          1 cpu-clock: ";
	const char *h2 = "a  8395   436.766364:    1001001 cpu-clock:ppp: ";
	const char *h3 = "perf 12 [000] 1.5: PERF_RECORD_COMM: perf:12/12";
	const char *h4 = "java 24636/25607 cycles:u: ";
	CHECK_INT(fg_psheader_time(h1, strlen(h1), &ns), 0);
	CHECK(ns == 982425128000ull);
	CHECK_INT(fg_psheader_time(h2, strlen(h2), &ns), 0);
	CHECK(ns == 436766364000ull);
	CHECK_INT(fg_psheader_time(h3, strlen(h3), &ns), 0);
	CHECK(ns == 1500000000ull);
	CHECK_INT(fg_psheader_time(h4, strlen(h4), &ns), -ENOENT);
}

TEST(header_comments_round_trip)
{
	struct fg_psheader_info in = {.host = "h",
				      .release = "6.1",
				      .event = "cpu-clock",
				      .freq = 99,
				      .has_ref = true,
				      .ref_realtime_ns = 1700000000123456000ull,
				      .ref_clock_ns = 5000000001ull};
	char *out = NULL, *line, *save = NULL;
	size_t outlen = 0;
	FILE *mem = open_memstream(&out, &outlen);
	struct fg_psheader_event e;
	uint64_t tod = 0, clk = 0;
	int events = 0, refs = 0;

	CHECK_INT(fg_psheader_write(mem, &in), 0);
	fclose(mem);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		CHECK(line[0] == '#');
		if (fg_psheader_parse_event(line, strlen(line), &e) == 0) {
			CHECK_STR(e.name, "cpu-clock");
			CHECK(e.freq_mode && e.n == 99);
			events++;
		}
		if (fg_psheader_parse_reftime(line, strlen(line), &tod, &clk) == 0)
			refs++;
	}
	CHECK_INT(events, 1);
	CHECK_INT(refs, 1);
	CHECK(tod == 1700000000123456000ull); /* microseconds, as perf prints them */
	CHECK(clk == 5000000001ull);
	free(out);
}

static int emitted;
static uint64_t emitted_samples;

static int count_emit(void *ctx, const struct fg_pprof_window *w)
{
	(void)ctx;
	emitted++;
	emitted_samples += w->samples;
	return 0;
}

TEST(reader_windows_add_up)
{
	struct fg_pprof_reader_opts o = {.every_ns = 1000000000ull};
	struct fg_pprof_reader *r;
	char path[] = "/tmp/fg-test-pprof-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	CHECK(f != NULL);
	/* 5 samples a second for 3.2 s: windows of 5, 5, 5 and 1 */
	for (int i = 0; i < 16; i++)
		fprintf(f, "a 1/1 [000] %d.%06d: 1 cpu-clock: \n\t1000 f+0x1 (/a)\n\n", 10 + i / 5,
			(i % 5) * 200000);
	fclose(f);
	fd = open(path, O_RDONLY);
	emitted = 0;
	emitted_samples = 0;
	r = fg_pprof_reader_new(&o, count_emit, NULL, NULL, NULL);
	CHECK_INT(fg_pprof_reader_read(r, fd, path), 0);
	CHECK_INT(fg_pprof_reader_finish(r), 0);
	CHECK_INT(emitted, 4);
	CHECK_INT(emitted_samples, 16);
	CHECK_INT(fg_pprof_reader_stats(r)->samples, 16);
	fg_pprof_reader_free(r);
	close(fd);
	unlink(path);
}

int main(void)
{
	RUN(varints_round_trip);
	RUN(nested_and_packed);
	RUN(malformed_protobuf_is_refused);
	RUN(profile_interns_and_sums);
	RUN(gzip_output_inflates);
	RUN(header_comments);
	RUN(header_comments_round_trip);
	RUN(reader_windows_add_up);
	return unit_done();
}
