// SPDX-License-Identifier: BSD-2-Clause
/*
 * A pprof profile, built in memory and encoded by hand (lib/proto.c):
 * strings, functions, mappings, locations and samples each interned in a
 * hash map, whose keys hold everything the encoder needs, in insertion
 * order, so ids are the order of first appearance (from 1; 0 means none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/pprof.h"
#include "fg/proto.h"
#include "fg/util.h"

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

struct mapping {
	uint32_t file, build_id; /* string indexes */
	bool unnamed;		 /* a location without a name */
	bool inlined;		 /* a location with inlined functions */
};

struct fg_pprof {
	struct fg_hash *strings;   /* index = entry order */
	struct fg_hash *functions; /* name -> string index; id = entry order + 1 */
	struct fg_hash *mappings;  /* file, NUL, build-id; id = entry order + 1 */
	struct mapping *maps;
	size_t amaps;
	struct fg_hash *locations; /* struct loc_key + function ids; id = entry order + 1 */
	struct fg_hash *samples;   /* struct sample_key + location ids; values by entry */
	int64_t (*values)[FG_PPROF_MAX_VALUES];
	size_t avalues;
	int64_t totals[FG_PPROF_MAX_VALUES];
	struct fg_buf key, lkey;
};

struct loc_key {
	uint64_t addr;
	uint32_t mapping;
	uint32_t pad;
	/* uint32_t function ids of the lines, leaf first */
};

struct sample_key {
	int64_t pid, tid;
	uint32_t comm; /* string index, 0: none */
	uint8_t has_pid, has_tid;
	uint8_t pad[2];
	/* uint32_t location ids, leaf first */
};

struct fg_pprof *fg_pprof_new(void)
{
	struct fg_pprof *p = fg_xcalloc(1, sizeof(*p));

	p->strings = fg_hash_new(1024);
	p->functions = fg_hash_new(1024);
	p->mappings = fg_hash_new(64);
	p->locations = fg_hash_new(1024);
	p->samples = fg_hash_new(1024);
	fg_hash_upsert(p->strings, "", 0, NULL); /* string_table[0] is "" */
	return p;
}

void fg_pprof_free(struct fg_pprof *p)
{
	if (!p)
		return;
	fg_hash_free(p->strings);
	fg_hash_free(p->functions);
	fg_hash_free(p->mappings);
	fg_hash_free(p->locations);
	fg_hash_free(p->samples);
	free(p->maps);
	free(p->values);
	fg_buf_release(&p->key);
	fg_buf_release(&p->lkey);
	free(p);
}

static uint32_t intern(struct fg_pprof *p, const char *s, size_t len)
{
	struct fg_hash_entry *e = fg_hash_upsert(p->strings, s ? s : "", s ? len : 0, NULL);

	return (uint32_t)(e - fg_hash_at(p->strings, 0));
}

static uint32_t function(struct fg_pprof *p, const char *name, size_t len)
{
	bool ins;
	struct fg_hash_entry *e = fg_hash_upsert(p->functions, name, len, &ins);

	if (ins)
		e->val.u = intern(p, name, len);
	return (uint32_t)(e - fg_hash_at(p->functions, 0)) + 1;
}

static uint32_t mapping(struct fg_pprof *p, const struct fg_pprof_frame *f)
{
	struct fg_buf *k = &p->lkey;
	bool ins;

	if (!f->file || !f->file_len)
		return 0;
	fg_buf_reset(k);
	fg_buf_add(k, f->file, f->file_len);
	fg_buf_addch(k, '\0');
	if (f->build_id)
		fg_buf_add(k, f->build_id, f->build_id_len);
	struct fg_hash_entry *e = fg_hash_upsert(p->mappings, k->data, k->len, &ins);
	size_t i = (size_t)(e - fg_hash_at(p->mappings, 0));
	if (ins) {
		FG_ALLOC_GROW(p->maps, i + 1, p->amaps);
		p->maps[i] = (struct mapping){
		    .file = intern(p, f->file, f->file_len),
		    .build_id = f->build_id ? intern(p, f->build_id, f->build_id_len) : 0,
		};
	}
	return (uint32_t)i + 1;
}

uint32_t fg_pprof_location(struct fg_pprof *p, const struct fg_pprof_frame *fr, size_t n)
{
	const struct fg_pprof_frame *real = &fr[n - 1];
	struct loc_key lk = {.addr = real->has_addr ? real->addr : 0};
	struct fg_buf *k = &p->lkey;
	uint32_t ids[64];
	size_t nids = 0;
	bool ins;

	for (size_t i = 0; i < n && nids < FG_ARRAY_SIZE(ids); i++)
		if (fr[i].name && fr[i].name_len)
			ids[nids++] = function(p, fr[i].name, fr[i].name_len);
	lk.mapping = mapping(p, real); /* (uses p->lkey) */
	fg_buf_reset(k);
	fg_buf_add(k, &lk, sizeof(lk));
	fg_buf_add(k, ids, nids * sizeof(ids[0]));
	struct fg_hash_entry *e = fg_hash_upsert(p->locations, k->data, k->len, &ins);
	if (ins && lk.mapping) {
		struct mapping *m = &p->maps[lk.mapping - 1];

		if (!nids)
			m->unnamed = true;
		if (nids > 1)
			m->inlined = true;
	}
	return (uint32_t)(e - fg_hash_at(p->locations, 0)) + 1;
}

int fg_pprof_add_ids(struct fg_pprof *p, const uint32_t *ids, size_t n,
		     const struct fg_pprof_sample *s)
{
	struct sample_key sk = {
	    .pid = s->has_pid ? s->pid : 0,
	    .tid = s->has_tid ? s->tid : 0,
	    .has_pid = s->has_pid,
	    .has_tid = s->has_tid,
	};
	bool ins;

	sk.comm = s->comm ? intern(p, s->comm, s->comm_len) : 0;
	fg_buf_reset(&p->key);
	fg_buf_add(&p->key, &sk, sizeof(sk));
	fg_buf_add(&p->key, ids, n * sizeof(*ids));
	struct fg_hash_entry *e = fg_hash_upsert(p->samples, p->key.data, p->key.len, &ins);
	size_t idx = (size_t)(e - fg_hash_at(p->samples, 0));
	if (ins) {
		FG_ALLOC_GROW(p->values, idx + 1, p->avalues);
		memset(p->values[idx], 0, sizeof(p->values[idx]));
	}
	for (int c = 0; c < FG_PPROF_MAX_VALUES; c++) {
		if (__builtin_add_overflow(p->values[idx][c], s->values[c], &p->values[idx][c]) ||
		    __builtin_add_overflow(p->totals[c], s->values[c], &p->totals[c]))
			return -EOVERFLOW;
	}
	return 0;
}

int fg_pprof_add(struct fg_pprof *p, const struct fg_pprof_sample *s)
{
	uint32_t *ids;
	size_t i = 0, n = 0;
	int err;

	if (s->nframes && s->frames[s->nframes - 1].inlined)
		return -EINVAL;
	ids = fg_xreallocarray(NULL, s->nframes ? s->nframes : 1, sizeof(*ids));
	while (i < s->nframes) {
		size_t j = i;

		while (s->frames[j].inlined)
			j++;
		ids[n++] = fg_pprof_location(p, s->frames + i, j - i + 1);
		i = j + 1;
	}
	err = fg_pprof_add_ids(p, ids, n, s);
	free(ids);
	return err;
}

size_t fg_pprof_count(const struct fg_pprof *p)
{
	return fg_hash_count(p->samples);
}

const int64_t *fg_pprof_totals(const struct fg_pprof *p)
{
	return p->totals;
}

/* --- encoding --- */

static void value_type(struct fg_buf *b, unsigned field, uint32_t type, uint32_t unit)
{
	size_t m = fg_proto_begin(b, field);

	fg_proto_uint(b, 1, type);
	fg_proto_uint(b, 2, unit);
	fg_proto_end(b, m);
}

static void label(struct fg_buf *b, uint32_t key, uint32_t str, int64_t num, bool is_num)
{
	size_t m = fg_proto_begin(b, 3);

	fg_proto_uint(b, 1, key);
	if (is_num)
		fg_proto_uint(b, 3, (uint64_t)num);
	else
		fg_proto_uint(b, 2, str);
	fg_proto_end(b, m);
}

static void encode_samples(struct fg_pprof *p, const struct fg_pprof_meta *m, struct fg_buf *b)
{
	uint32_t k_pid = intern(p, "pid", 3), k_tid = intern(p, "tid", 3);
	uint32_t k_comm = intern(p, "comm", 4);
	uint64_t *ids = NULL, vals[FG_PPROF_MAX_VALUES];
	size_t aids = 0;

	for (size_t i = 0; i < fg_hash_count(p->samples); i++) {
		const struct fg_hash_entry *e = fg_hash_at(p->samples, i);
		struct sample_key sk;
		size_t n = (e->len - sizeof(sk)) / sizeof(uint32_t);

		memcpy(&sk, e->key, sizeof(sk));
		FG_ALLOC_GROW(ids, n + 1, aids);
		for (size_t j = 0; j < n; j++) {
			uint32_t id;

			memcpy(&id, e->key + sizeof(sk) + j * sizeof(id), sizeof(id));
			ids[j] = id;
		}
		for (size_t t = 0; t < m->ntypes; t++)
			vals[t] = (uint64_t)p->values[i][m->column[t]];
		size_t mark = fg_proto_begin(b, PROFILE_SAMPLE);
		fg_proto_packed(b, 1, ids, n);
		fg_proto_packed(b, 2, vals, m->ntypes);
		if (sk.has_pid)
			label(b, k_pid, 0, sk.pid, true);
		if (sk.has_tid)
			label(b, k_tid, 0, sk.tid, true);
		if (sk.comm)
			label(b, k_comm, sk.comm, 0, false);
		fg_proto_end(b, mark);
	}
	free(ids);
}

static void encode_locations(struct fg_pprof *p, struct fg_buf *b)
{
	for (size_t i = 0; i < fg_hash_count(p->locations); i++) {
		const struct fg_hash_entry *e = fg_hash_at(p->locations, i);
		struct loc_key lk;
		size_t n = (e->len - sizeof(lk)) / sizeof(uint32_t);

		memcpy(&lk, e->key, sizeof(lk));
		size_t mark = fg_proto_begin(b, PROFILE_LOCATION);
		fg_proto_uint(b, 1, i + 1);
		fg_proto_uint(b, 2, lk.mapping);
		fg_proto_uint(b, 3, lk.addr);
		for (size_t j = 0; j < n; j++) {
			uint32_t id;

			memcpy(&id, e->key + sizeof(lk) + j * sizeof(id), sizeof(id));
			size_t lm = fg_proto_begin(b, 4);
			fg_proto_uint(b, 1, id);
			fg_proto_end(b, lm);
		}
		fg_proto_end(b, mark);
	}
}

/*
 * pprof takes the first mapping written for the profile's main file ("File:"):
 * files first, then the kernel and other "[...]" pseudo files; ids stay those
 * of first appearance
 */
static void encode_mappings(struct fg_pprof *p, struct fg_buf *b)
{
	for (size_t k = 0; k < 2 * fg_hash_count(p->mappings); k++) {
		size_t i = k % fg_hash_count(p->mappings);
		const struct mapping *mp = &p->maps[i];
		bool pseudo = fg_hash_at(p->mappings, i)->key[0] == '[';

		if (pseudo != (k >= fg_hash_count(p->mappings)))
			continue;
		size_t mark = fg_proto_begin(b, PROFILE_MAPPING);

		fg_proto_uint(b, 1, i + 1);
		/* the whole address space at offset 0: the addresses are the file's own */
		fg_proto_uint(b, 3, UINT64_MAX);
		fg_proto_uint(b, 5, mp->file);
		fg_proto_uint(b, 6, mp->build_id);
		fg_proto_uint(b, 7, !mp->unnamed);
		fg_proto_uint(b, 10, mp->inlined);
		fg_proto_end(b, mark);
	}
}

static void encode_functions(struct fg_pprof *p, struct fg_buf *b)
{
	for (size_t i = 0; i < fg_hash_count(p->functions); i++) {
		uint64_t name = fg_hash_at(p->functions, i)->val.u;
		size_t mark = fg_proto_begin(b, PROFILE_FUNCTION);

		fg_proto_uint(b, 1, i + 1);
		fg_proto_uint(b, 2, name);
		fg_proto_uint(b, 3, name);
		fg_proto_end(b, mark);
	}
}

void fg_pprof_encode(struct fg_pprof *p, const struct fg_pprof_meta *m, struct fg_buf *b)
{
	uint32_t types[FG_PPROF_MAX_VALUES], units[FG_PPROF_MAX_VALUES];
	uint32_t ptype = 0, punit = 0;
	size_t ntypes = m->ntypes < FG_PPROF_MAX_VALUES ? m->ntypes : FG_PPROF_MAX_VALUES;
	struct fg_pprof_meta mm = *m;

	mm.ntypes = ntypes;
	/* every string first: the table is written after the messages that use it */
	for (size_t t = 0; t < ntypes; t++) {
		types[t] = intern(p, m->type[t], strlen(m->type[t]));
		units[t] = intern(p, m->unit[t], strlen(m->unit[t]));
	}
	if (m->period_type) {
		ptype = intern(p, m->period_type, strlen(m->period_type));
		punit = intern(p, m->period_unit, strlen(m->period_unit));
	}
	for (size_t c = 0; c < m->ncomments; c++)
		intern(p, m->comments[c], strlen(m->comments[c]));
	intern(p, "pid", 3);
	intern(p, "tid", 3);
	intern(p, "comm", 4);

	for (size_t t = 0; t < ntypes; t++)
		value_type(b, PROFILE_SAMPLE_TYPE, types[t], units[t]);
	encode_samples(p, &mm, b);
	encode_mappings(p, b);
	encode_locations(p, b);
	encode_functions(p, b);
	for (size_t i = 0; i < fg_hash_count(p->strings); i++) {
		const struct fg_hash_entry *e = fg_hash_at(p->strings, i);

		fg_proto_bytes(b, PROFILE_STRING_TABLE, e->key, e->len);
	}
	fg_proto_uint(b, PROFILE_TIME_NANOS, (uint64_t)m->time_nanos);
	fg_proto_uint(b, PROFILE_DURATION_NANOS, (uint64_t)m->duration_nanos);
	if (m->period_type)
		value_type(b, PROFILE_PERIOD_TYPE, ptype, punit);
	fg_proto_uint(b, PROFILE_PERIOD, (uint64_t)m->period);
	for (size_t c = 0; c < m->ncomments; c++)
		fg_proto_uint(b, PROFILE_COMMENT,
			      intern(p, m->comments[c], strlen(m->comments[c])));
	if (m->default_type < ntypes)
		fg_proto_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, types[m->default_type]);
}

int fg_gzip_write(const void *data, size_t len, int level, FILE *out)
{
	unsigned char chunk[64 * 1024];
	z_stream z;
	int r, err = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper around the deflate stream */
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)data;
	do {
		size_t step = len > (1u << 30) ? (1u << 30) : len;

		z.avail_in = (unsigned)step;
		len -= step;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			r = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (r == Z_STREAM_ERROR) {
				err = -ENOMEM;
				goto out;
			}
			size_t have = sizeof(chunk) - z.avail_out;
			errno = 0;
			if (have && fwrite(chunk, 1, have, out) != have) {
				err = errno ? -errno : -EIO;
				goto out;
			}
		} while (z.avail_out == 0);
	} while (len);
out:
	deflateEnd(&z);
	return err;
}

int fg_pprof_write(struct fg_pprof *p, const struct fg_pprof_meta *m, FILE *out)
{
	struct fg_buf b = FG_BUF_INIT;
	int r;

	fg_buf_grow(&b, 64 * 1024);
	fg_pprof_encode(p, m, &b);
	r = fg_gzip_write(b.data, b.len, Z_DEFAULT_COMPRESSION, out);
	fg_buf_release(&b);
	errno = 0;
	if (r == 0 && (fflush(out) != 0 || ferror(out)))
		r = errno ? -errno : -EIO;
	return r;
}
