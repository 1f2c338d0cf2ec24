/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hash map from byte strings to a 64-bit value (a count, a number or a
 * pointer).  Open addressing with linear probing over a power-of-two index,
 * keys copied into an arena, entries kept densely in insertion order so that
 * callers can walk or sort them without touching the index.
 *
 *	struct fg_hash *m = fg_hash_new(0);
 *	struct fg_hash_entry *e = fg_hash_upsert(m, key, len, NULL);
 *	e->val.u += count;
 *	for (size_t i = 0; i < fg_hash_count(m); i++) use(fg_hash_at(m, i));
 *	fg_hash_free(m);
 */
#ifndef FG_HASH_H
#define FG_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

union fg_hval {
	uint64_t u;
	int64_t i;
	double d;
	void *p;
};

struct fg_hash_entry {
	const char *key; /* NUL-terminated copy owned by the map */
	uint32_t len;
	uint32_t hash;
	union fg_hval val; /* zero when inserted */
};

struct fg_hash;

/* A fast 64-bit hash of a byte string (not cryptographic). */
uint64_t fg_hash_bytes(const void *data, size_t len, uint64_t seed);

/* `hint`: expected number of keys (0 for a small default).  Never NULL. */
struct fg_hash *fg_hash_new(size_t hint);
void fg_hash_free(struct fg_hash *m);
/* Find `key`, inserting it (value zero) when absent.  *inserted tells which. */
struct fg_hash_entry *fg_hash_upsert(struct fg_hash *m, const void *key, size_t len,
				     bool *inserted);
/* Find `key`; NULL when absent. */
struct fg_hash_entry *fg_hash_get(const struct fg_hash *m, const void *key, size_t len);
size_t fg_hash_count(const struct fg_hash *m);
/* The i-th entry in insertion order, 0 <= i < fg_hash_count(m).  Stable until the next insert. */
struct fg_hash_entry *fg_hash_at(const struct fg_hash *m, size_t i);
/* Bytes held by the map (index, entries and keys), for memory reports. */
size_t fg_hash_memory(const struct fg_hash *m);
/*
 * The entries sorted bytewise by key (a key before the longer ones it begins),
 * as the folded stacks and palette.map are written: an array of
 * fg_hash_count(m) pointers that the caller frees.
 */
struct fg_hash_entry **fg_hash_sorted(const struct fg_hash *m);

#endif
