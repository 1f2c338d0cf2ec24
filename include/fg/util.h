/* SPDX-License-Identifier: BSD-2-Clause */
/* Small helpers for parsing numbers and options. */
#ifndef FG_UTIL_H
#define FG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* True when `s` starts with `prefix`. */
static inline bool fg_starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

#define FG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
