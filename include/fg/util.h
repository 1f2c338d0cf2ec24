/* SPDX-License-Identifier: BSD-2-Clause */
/* Small helpers for parsing numbers and options. */
#ifndef FG_UTIL_H
#define FG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Parse a whole decimal (or 0x hexadecimal) unsigned number within
 * [min, max].  0 on success, -EINVAL when it is not a number, -ERANGE when
 * outside the range.
 */
int fg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * Scan hexadecimal digits (no prefix) at *p, before `end`, advancing *p past
 * them: 0, or -EINVAL when there is no digit or more than `maxdigits`.
 */
int fg_scan_hex(const char **p, const char *end, int maxdigits, uint64_t *out);
/* The same for a finite double within [min, max]. */
int fg_parse_double(const char *s, double min, double max, double *out);
/*
 * An option's refusal: the reason, formatted, into why (len bytes), and
 * -EINVAL to return (the *_opts and *_args modules' convention).
 */
int fg_refuse(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True when `s` starts with `prefix`. */
static inline bool fg_starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

#define FG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Binary search of an array sorted by a uint64_t key (an address): the index
 * of the first element whose key is above `key`, so that the element before
 * it, when the result is not 0, is the last one at or below `key` (C++'s
 * std::upper_bound).  `n` elements of `size` bytes, the key `key_off` bytes
 * into each.  Inline: with the constant size and offset FG_UPPER_BOUND gives,
 * the compiler makes it the loop each caller would write.
 */
static inline size_t fg_upper_bound(const void *base, size_t n, size_t size, size_t key_off,
				    uint64_t key)
{
	const char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, p + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The running user's cache directory for fg, ${XDG_CACHE_HOME:-$HOME/.cache}/fg
 * (a relative XDG_CACHE_HOME ignored, as the XDG rules say), with "/" and
 * `sub` appended when `sub` is not NULL; NULL when neither variable is an
 * absolute path, or it does not fit.  Open it with
 * fg_safeio_private_dir_open(), which refuses another user's.
 */
const char *fg_user_cache_dir(char *buf, size_t size, const char *sub);

/* fg_upper_bound over `n` elements of the array `arr` by its uint64_t member `member`. */
#define FG_UPPER_BOUND(arr, n, member, key)                                                        \
	((void)sizeof(char[sizeof((arr)->member) == sizeof(uint64_t) ? 1 : -1]),                   \
	 fg_upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), member), (key)))

#endif
