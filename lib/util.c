// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fg/util.h"

int fg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s || *end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fg_parse_double(const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || isnan(v))
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fg_scan_hex(const char **p, const char *end, int maxdigits, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (*p < end) {
		char c = **p;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (++n > maxdigits)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

int fg_refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *fg_user_cache_dir(char *buf, size_t size, const char *sub)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/fg%s%s", xdg, sub ? "/" : "", sub ? sub : "");
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/fg%s%s", home, sub ? "/" : "", sub ? sub : "");
	else
		return NULL;
	return n > 0 && (size_t)n < size ? buf : NULL;
}
