// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/hash.h"

/* --- the hash function: 16 bytes per 64x64->128 multiply, folded --- */

static inline uint64_t fold_mul(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#define K0 0x9e3779b97f4a7c15ULL
#define K1 0xd6e8feb86659fd93ULL
#define K2 0xa0761d6478bd642fULL

uint64_t fg_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ K0 ^ ((uint64_t)len * K2);
	uint64_t a = 0, b = 0;

	while (len > 16) {
		h = fold_mul(load64(p) ^ K1, load64(p + 8) ^ h);
		p += 16;
		len -= 16;
	}
	if (len >= 8) {
		a = load64(p);
		b = load64(p + len - 8);
	} else if (len >= 4) {
		a = load32(p);
		b = load32(p + len - 4);
	} else if (len > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
	}
	h = fold_mul(a ^ K1, b ^ h ^ K2);
	return fold_mul(h ^ K0, h ^ K1);
}

/* --- the map --- */

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	char data[];
};

struct fg_hash {
	uint64_t *slots; /* 0 empty, else (hash high 32 bits) << 32 | (entry index + 1) */
	size_t mask;
	struct fg_hash_entry *ents;
	size_t n, alloc;
	struct arena_chunk *chunks;
	char *cur;
	size_t left;
	size_t arena_bytes;
};

struct fg_hash *fg_hash_new(size_t hint)
{
	struct fg_hash *m = fg_xcalloc(1, sizeof(*m));
	size_t cap = 64;

	while (cap < hint * 2)
		cap *= 2;
	m->slots = fg_xcalloc(cap, sizeof(*m->slots));
	m->mask = cap - 1;
	return m;
}

void fg_hash_free(struct fg_hash *m)
{
	struct arena_chunk *c, *next;

	if (!m)
		return;
	for (c = m->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(m->slots);
	free(m->ents);
	free(m);
}

static char *arena_copy(struct fg_hash *m, const void *key, size_t len)
{
	char *s;

	if (len + 1 > m->left) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
		struct arena_chunk *c = fg_xmalloc(sizeof(*c) + size);

		c->next = m->chunks;
		m->chunks = c;
		m->cur = c->data;
		m->left = size;
		m->arena_bytes += sizeof(*c) + size;
	}
	s = m->cur;
	if (len)
		memcpy(s, key, len);
	s[len] = '\0';
	m->cur += len + 1;
	m->left -= len + 1;
	return s;
}

static void rehash(struct fg_hash *m)
{
	size_t cap = (m->mask + 1) * 2;
	uint64_t *slots = fg_xcalloc(cap, sizeof(*slots));

	for (size_t i = 0; i < m->n; i++) {
		uint64_t h = m->ents[i].hash;
		size_t j = (size_t)h & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = ((uint64_t)(uint32_t)h << 32) | (i + 1);
	}
	free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
}

static inline uint32_t hash32(const void *key, size_t len)
{
	return (uint32_t)fg_hash_bytes(key, len, 0);
}

static struct fg_hash_entry *lookup(const struct fg_hash *m, const void *key, size_t len,
				    uint32_t h, size_t *slot)
{
	size_t j = h & m->mask;

	for (;; j = (j + 1) & m->mask) {
		uint64_t s = m->slots[j];

		if (!s) {
			*slot = j;
			return NULL;
		}
		if ((uint32_t)(s >> 32) == h) {
			struct fg_hash_entry *e = &m->ents[(uint32_t)s - 1];

			if (e->len == len && (len == 0 || memcmp(e->key, key, len) == 0))
				return e;
		}
	}
}

struct fg_hash_entry *fg_hash_get(const struct fg_hash *m, const void *key, size_t len)
{
	size_t slot;

	return lookup(m, key, len, hash32(key, len), &slot);
}

struct fg_hash_entry *fg_hash_upsert(struct fg_hash *m, const void *key, size_t len, bool *inserted)
{
	uint32_t h = hash32(key, len);
	size_t slot;
	struct fg_hash_entry *e = lookup(m, key, len, h, &slot);

	if (inserted)
		*inserted = e == NULL;
	if (e)
		return e;
	if (len > UINT32_MAX || m->n >= UINT32_MAX - 1)
		fg_diex("hash map: key or table too large");
	FG_ALLOC_GROW(m->ents, m->n + 1, m->alloc);
	e = &m->ents[m->n];
	e->key = arena_copy(m, key, len);
	e->len = (uint32_t)len;
	e->hash = h;
	e->val.u = 0;
	m->slots[slot] = ((uint64_t)h << 32) | (m->n + 1);
	m->n++;
	/* keep the load below 1/2 so that probes stay short */
	if (m->n * 2 > m->mask + 1)
		rehash(m);
	return e;
}

size_t fg_hash_count(const struct fg_hash *m)
{
	return m->n;
}

struct fg_hash_entry *fg_hash_at(const struct fg_hash *m, size_t i)
{
	return &m->ents[i];
}

size_t fg_hash_memory(const struct fg_hash *m)
{
	return sizeof(*m) + (m->mask + 1) * sizeof(*m->slots) + m->alloc * sizeof(*m->ents) +
	       m->arena_bytes;
}

static int cmp_key(const void *a, const void *b)
{
	const struct fg_hash_entry *x = *(const struct fg_hash_entry *const *)a;
	const struct fg_hash_entry *y = *(const struct fg_hash_entry *const *)b;
	int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

struct fg_hash_entry **fg_hash_sorted(const struct fg_hash *m)
{
	struct fg_hash_entry **v = fg_xreallocarray(NULL, m->n ? m->n : 1, sizeof(*v));

	for (size_t i = 0; i < m->n; i++)
		v[i] = &m->ents[i];
	qsort(v, m->n, sizeof(*v), cmp_key);
	return v;
}
