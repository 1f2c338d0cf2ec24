// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz fg-pprof's reader (perf script text, folded stacks, bpftrace maps, the
 * header comments) and the profile it builds: any bytes, with or without
 * windows.  Nothing may crash, leak or read out of bounds, and every profile
 * must be well-formed protobuf whose ids and string indexes all resolve.
 * The protobuf reader is fuzzed on the raw bytes too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/pprof_read.h"
#include "fg/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct counts {
	uint64_t strings, functions, locations, mappings;
	uint64_t max_string, max_function, max_location, max_mapping;
};

/* every field of a message parses; returns the number of fields, or aborts */
static size_t walk(const uint8_t *p, size_t len,
		   void (*each)(struct counts *, unsigned, const struct fg_proto_field *),
		   struct counts *c, unsigned parent)
{
	struct fg_proto_reader r = {p, p + len};
	struct fg_proto_field f;
	size_t n = 0;
	int err;

	while ((err = fg_proto_next(&r, &f)) > 0) {
		n++;
		if (each)
			each(c, parent, &f);
	}
	if (err < 0)
		abort();
	return n;
}

static void note(uint64_t *max, uint64_t v)
{
	if (v > *max)
		*max = v;
}

static void nested(struct counts *c, unsigned parent, const struct fg_proto_field *f)
{
	uint64_t *v = NULL;
	size_t n = 0, alloc = 0;

	switch (parent * 100 + f->num) {
	case 201: /* Sample.location_id */
		if (fg_proto_unpack(f, &v, &n, &alloc) < 0)
			abort();
		for (size_t i = 0; i < n; i++)
			note(&c->max_location, v[i]);
		break;
	case 203: /* Sample.label */
	case 404: /* Location.line */
		walk(f->data, f->len, nested, c, parent * 10 + f->num);
		break;
	case 2031: /* Label.key */
	case 2032: /* Label.str */
	case 305:  /* Mapping.filename */
	case 306:  /* Mapping.build_id */
	case 502:  /* Function.name */
	case 503:  /* Function.system_name */
	case 101:  /* ValueType.type */
	case 102:  /* ValueType.unit */
		note(&c->max_string, f->v);
		break;
	case 402: /* Location.mapping_id */
		note(&c->max_mapping, f->v);
		break;
	case 4041: /* Line.function_id */
		note(&c->max_function, f->v);
		break;
	default:
		break;
	}
	free(v);
}

static void top(struct counts *c, unsigned parent, const struct fg_proto_field *f)
{
	(void)parent;
	switch (f->num) {
	case 1:
	case 11:
		walk(f->data, f->len, nested, c, 1);
		break;
	case 2:
	case 3:
	case 4:
	case 5:
		walk(f->data, f->len, nested, c, f->num);
		c->functions += f->num == 5;
		c->locations += f->num == 4;
		c->mappings += f->num == 3;
		break;
	case 6:
		c->strings++;
		break;
	case 13:
	case 14:
		note(&c->max_string, f->v);
		break;
	default:
		break;
	}
}

static int check(void *ctx, const struct fg_pprof_window *w)
{
	struct fg_buf b = FG_BUF_INIT;
	struct counts c = {0};

	(void)ctx;
	fg_pprof_encode(w->profile, w->meta, &b);
	walk((const uint8_t *)b.data, b.len, top, &c, 0);
	/* ids count from 1 in the order written; string indexes from 0 */
	if (c.strings == 0 || c.max_string >= c.strings || c.max_function > c.functions ||
	    c.max_location > c.locations || c.max_mapping > c.mappings)
		abort();
	fg_buf_release(&b);
	return 0;
}

/* the raw bytes as protobuf: each field inside the input, or a clean refusal */
static void raw(const uint8_t *data, size_t size)
{
	struct fg_proto_reader r = {data, data + size};
	struct fg_proto_field f;

	while (fg_proto_next(&r, &f) > 0)
		if (f.wire == FG_PROTO_LEN && (f.data < data || f.data + f.len > data + size))
			abort();
	if (r.p < data || r.p > data + size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_pprof_reader_opts o = {.input = FG_FOLD_AUTO};
	struct fg_pprof_reader *r;
	int fd;

	raw(data, size);
	if (size == 0)
		return 0;
	/* the first byte picks the options */
	o.every_ns = data[0] & 1 ? 1000000000ull : 0;
	o.freq = data[0] & 2 ? 99 : 0;
	o.event_filter = data[0] & 4 ? "cpu-clock" : NULL;
	if (data[0] & 8)
		o.input = (enum fg_fold_input)(1 + (data[0] >> 4) % 3);
	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1) ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	r = fg_pprof_reader_new(&o, check, NULL, NULL, NULL);
	if (fg_pprof_reader_read(r, fd, "fuzz") == 0)
		fg_pprof_reader_finish(r);
	fg_pprof_reader_free(r);
	close(fd);
	return 0;
}
