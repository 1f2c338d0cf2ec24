// SPDX-License-Identifier: BSD-2-Clause
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fg/radix.h"
#include "unit.h"

/* a record with its key inside, and its place before sorting */
struct rec {
	uint32_t before;
	uint64_t key;
	char pad[5];
};

/* the order a stable sort gives: by key, then by place */
static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->before < y->before ? -1 : x->before > y->before;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* n records of keys `mask & random`, sorted both ways: the same */
static int same_as_stable(size_t n, uint64_t mask)
{
	struct rec *a = calloc(n ? n : 1, sizeof(*a)), *b = calloc(n ? n : 1, sizeof(*b));
	int ok = a && b;

	for (size_t i = 0; ok && i < n; i++) {
		a[i].before = (uint32_t)i;
		a[i].key = next() & mask;
		a[i].pad[i % 5] = (char)i;
		b[i] = a[i];
	}
	if (ok) {
		fg_radix_sort(a, n, sizeof(*a), offsetof(struct rec, key));
		qsort(b, n, sizeof(*b), cmp_rec);
		for (size_t i = 0; i < n; i++)
			ok &= memcmp(&a[i], &b[i], sizeof(a[i])) == 0;
	}
	free(a);
	free(b);
	return ok;
}

TEST(radix_sorts_stably)
{
	CHECK(same_as_stable(0, ~0ull));
	CHECK(same_as_stable(1, ~0ull));
	CHECK(same_as_stable(2, 1));
	/* every byte differs somewhere */
	CHECK(same_as_stable(5000, ~0ull));
	/* many equal keys: their order is kept */
	CHECK(same_as_stable(5000, 0x7));
	/* keys that differ in a few bytes only (addresses of one library), some in the top one */
	CHECK(same_as_stable(5000, 0x1fffffull));
	CHECK(same_as_stable(5000, 0xff000000000000f0ull));
	/* all equal */
	CHECK(same_as_stable(100, 0));
}

int main(void)
{
	RUN(radix_sorts_stably);
	return unit_done();
}
