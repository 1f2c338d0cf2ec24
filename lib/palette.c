// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/atomicfile.h"
#include "fg/diag.h"
#include "fg/fold.h"
#include "fg/hash.h"
#include "fg/palette.h"
#include "fg/util.h"

static const char *const names[] = {
    [FG_PAL_HOT] = "hot",	[FG_PAL_MEM] = "mem",	    [FG_PAL_IO] = "io",
    [FG_PAL_WAKEUP] = "wakeup", [FG_PAL_CHAIN] = "chain",   [FG_PAL_JAVA] = "java",
    [FG_PAL_JS] = "js",		[FG_PAL_PERL] = "perl",	    [FG_PAL_RED] = "red",
    [FG_PAL_GREEN] = "green",	[FG_PAL_BLUE] = "blue",	    [FG_PAL_AQUA] = "aqua",
    [FG_PAL_YELLOW] = "yellow", [FG_PAL_PURPLE] = "purple", [FG_PAL_ORANGE] = "orange",
};

int fg_palette_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *fg_palette_name(enum fg_palette p)
{
	return names[p];
}

const char *fg_palette_bg(enum fg_palette p)
{
	switch (p) {
	case FG_PAL_MEM:
		return "green";
	case FG_PAL_IO:
	case FG_PAL_WAKEUP:
	case FG_PAL_CHAIN:
		return "blue";
	case FG_PAL_RED:
	case FG_PAL_GREEN:
	case FG_PAL_BLUE:
	case FG_PAL_AQUA:
	case FG_PAL_YELLOW:
	case FG_PAL_PURPLE:
	case FG_PAL_ORANGE:
		return "grey";
	default:
		return "yellow";
	}
}

/*
 * flamegraph.pl's name hash: a value in [0, 1] from the first three
 * characters, weighting earlier ones more, after dropping a "module`"
 * prefix.  `reversed` hashes the name read backwards.
 */
static double namehash(const char *s, size_t len, bool reversed)
{
	double vector = 0, weight = 1, max = 1;
	int mod = 10;
	size_t start = 0;

#define AT(i) ((unsigned char)(reversed ? s[len - 1 - (i)] : s[i]))
	/* a module name of one character or more, then a backtick */
	for (size_t i = 1; i < len; i++)
		if (AT(i) == '`') {
			start = i + 1;
			break;
		}
	for (size_t i = start; i < len; i++) {
		vector += ((double)(AT(i) % mod) / (mod - 1)) * weight;
		mod++;
		max += weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
#undef AT
	return 1 - vector / max;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64* */
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static double unit(uint64_t v)
{
	return (double)(v >> 11) / 9007199254740992.0; /* [0, 1) */
}

/* The single-hue palette a multi-palette gives this name. */
static enum fg_palette refine(enum fg_palette p, const char *n, size_t len)
{
	/* the waits of a wall-clock profile (fg-fold --wall): off-CPU blue, apart from the rest */
	if (len == strlen(FG_FOLD_OFFCPU_FRAME) && memcmp(n, FG_FOLD_OFFCPU_FRAME, len) == 0)
		return p == FG_PAL_IO || p == FG_PAL_BLUE ? FG_PAL_AQUA : FG_PAL_IO;
	switch (p) {
	case FG_PAL_JAVA:
		if (ends_with(n, len, "_[j]"))
			return FG_PAL_GREEN;
		if (ends_with(n, len, "_[i]"))
			return FG_PAL_AQUA;
		{
			static const char *const pkgs[] = {"java/", "javax/", "jdk/", "net/",
							   "org/",  "com/",   "io/",  "sun/"};
			size_t o = len > 0 && n[0] == 'L' ? 1 : 0;

			for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++)
				if (len - o >= strlen(pkgs[i]) &&
				    memcmp(n + o, pkgs[i], strlen(pkgs[i])) == 0)
					return FG_PAL_GREEN;
			/* also without the 'L' when the name starts with one */
			for (size_t i = 0; o && i < sizeof(pkgs) / sizeof(pkgs[0]); i++)
				if (len >= strlen(pkgs[i]) &&
				    memcmp(n, pkgs[i], strlen(pkgs[i])) == 0)
					return FG_PAL_GREEN;
		}
		if (contains(n, len, ":::"))
			return FG_PAL_GREEN;
		if (contains(n, len, "::"))
			return FG_PAL_YELLOW;
		if (ends_with(n, len, "_[k]"))
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_PERL:
		if (contains(n, len, "::"))
			return FG_PAL_YELLOW;
		if (contains(n, len, "Perl") || contains(n, len, ".pl"))
			return FG_PAL_GREEN;
		if (ends_with(n, len, "_[k]"))
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_JS:
		if (ends_with(n, len, "_[j]"))
			return memchr(n, '/', len) ? FG_PAL_GREEN : FG_PAL_AQUA;
		if (contains(n, len, "::"))
			return FG_PAL_YELLOW;
		{
			const char *slash = memchr(n, '/', len);

			if (slash && contains(slash, len - (size_t)(slash - n), ".js"))
				return FG_PAL_GREEN;
		}
		if (memchr(n, ':', len))
			return FG_PAL_AQUA;
		if (len == 1 && n[0] == ' ')
			return FG_PAL_GREEN;
		if (contains(n, len, "_[k]"))
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_WAKEUP:
		return FG_PAL_AQUA;
	case FG_PAL_CHAIN:
		return contains(n, len, "_[w]") ? FG_PAL_AQUA : FG_PAL_BLUE;
	default:
		return p;
	}
}

struct fg_rgb fg_palette_color(enum fg_palette p, enum fg_pick pick, const char *name, size_t len,
			       uint64_t *rng)
{
	double v1, v2, v3;

	switch (pick) {
	case FG_PICK_RANDOM:
		v1 = unit(next_random(rng));
		v2 = unit(next_random(rng));
		v3 = unit(next_random(rng));
		break;
	case FG_PICK_DETERMINISTIC: {
		uint64_t h = fg_hash_bytes(name, len, 0x666c616d65ull);

		v1 = unit(next_random(&h));
		v2 = unit(next_random(&h));
		v3 = unit(next_random(&h));
		break;
	}
	default:
		v1 = namehash(name, len, false);
		v2 = v3 = namehash(name, len, true);
		break;
	}
	p = refine(p, name, len);
	switch (p) {
	case FG_PAL_HOT:
		return (struct fg_rgb){(uint8_t)(205 + (int)(50 * v3)), (uint8_t)(230 * v1),
				       (uint8_t)(55 * v2)};
	case FG_PAL_MEM:
		return (struct fg_rgb){0, (uint8_t)(190 + (int)(50 * v2)), (uint8_t)(210 * v1)};
	case FG_PAL_IO: {
		uint8_t r = (uint8_t)(80 + (int)(60 * v1));

		return (struct fg_rgb){r, r, (uint8_t)(190 + (int)(55 * v2))};
	}
	case FG_PAL_RED: {
		uint8_t x = (uint8_t)(50 + (int)(80 * v1));

		return (struct fg_rgb){(uint8_t)(200 + (int)(55 * v1)), x, x};
	}
	case FG_PAL_GREEN: {
		uint8_t x = (uint8_t)(50 + (int)(60 * v1));

		return (struct fg_rgb){x, (uint8_t)(200 + (int)(55 * v1)), x};
	}
	case FG_PAL_BLUE: {
		uint8_t x = (uint8_t)(80 + (int)(60 * v1));

		return (struct fg_rgb){x, x, (uint8_t)(205 + (int)(50 * v1))};
	}
	case FG_PAL_YELLOW: {
		uint8_t x = (uint8_t)(175 + (int)(55 * v1));

		return (struct fg_rgb){x, x, (uint8_t)(50 + (int)(20 * v1))};
	}
	case FG_PAL_PURPLE: {
		uint8_t x = (uint8_t)(190 + (int)(65 * v1));

		return (struct fg_rgb){x, (uint8_t)(80 + (int)(60 * v1)), x};
	}
	case FG_PAL_AQUA:
		return (struct fg_rgb){(uint8_t)(50 + (int)(60 * v1)),
				       (uint8_t)(165 + (int)(55 * v1)),
				       (uint8_t)(165 + (int)(55 * v1))};
	case FG_PAL_ORANGE:
		return (struct fg_rgb){(uint8_t)(190 + (int)(65 * v1)),
				       (uint8_t)(90 + (int)(65 * v1)), 0};
	default:
		return (struct fg_rgb){0, 0, 0};
	}
}

struct fg_rgb fg_palette_delta(double delta, double maxdelta, bool negate)
{
	struct fg_rgb c = {255, 255, 255};

	if (negate)
		delta = -delta;
	if (maxdelta <= 0)
		return c;
	if (delta > 0)
		c.g = c.b = (uint8_t)(int)(210 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		c.r = c.g = (uint8_t)(int)(210 * (maxdelta + delta) / maxdelta);
	return c;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int fg_rgb_parse(const char *s, size_t len, struct fg_rgb *out)
{
	int v[3] = {0, 0, 0};

	if (len == 7 && s[0] == '#') {
		for (int i = 0; i < 3; i++) {
			int hi = hexval(s[1 + 2 * i]), lo = hexval(s[2 + 2 * i]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			v[i] = hi * 16 + lo;
		}
	} else if (len > 5 && memcmp(s, "rgb(", 4) == 0 && s[len - 1] == ')') {
		size_t p = 4;

		for (int i = 0; i < 3; i++) {
			size_t digits = 0;

			while (p < len && s[p] == ' ')
				p++;
			while (p < len && s[p] >= '0' && s[p] <= '9' && digits < 4) {
				v[i] = v[i] * 10 + (s[p++] - '0');
				digits++;
			}
			while (p < len && s[p] == ' ')
				p++;
			if (!digits || v[i] > 255 || p >= len || s[p] != (i < 2 ? ',' : ')'))
				return -EINVAL;
			p++;
		}
		if (p != len)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	*out = (struct fg_rgb){(uint8_t)v[0], (uint8_t)v[1], (uint8_t)v[2]};
	return 0;
}

int fg_palette_background(const char *name, const char **top, const char **bottom)
{
	static const struct {
		const char *name, *top, *bottom;
	} bgs[] = {
	    {"yellow", "#eeeeee", "#eeeeb0"},
	    {"blue", "#eeeeee", "#e0e0ff"},
	    {"green", "#eef2ee", "#e0ffe0"},
	    {"grey", "#f8f8f8", "#e8e8e8"},
	};
	struct fg_rgb c;

	for (size_t i = 0; i < FG_ARRAY_SIZE(bgs); i++)
		if (strcmp(name, bgs[i].name) == 0) {
			*top = bgs[i].top;
			*bottom = bgs[i].bottom;
			return 0;
		}
	if (name[0] != '#' || fg_rgb_parse(name, strlen(name), &c) < 0)
		return -EINVAL;
	*top = *bottom = name;
	return 0;
}

void fg_palette_map_parse(struct fg_hash *m, const char *data, size_t len, uint64_t *bad,
			  uint64_t *first_bad)
{
	uint64_t lineno = 0;
	size_t pos = 0;

	*bad = *first_bad = 0;
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos), *arrow = NULL;
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		struct fg_rgb c;

		pos += n + 1;
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		/* the colour follows the last "->": names may hold one (operator->) */
		for (size_t i = n; i-- > 1;)
			if (line[i - 1] == '-' && line[i] == '>') {
				arrow = line + i - 1;
				break;
			}
		if (!arrow || fg_rgb_parse(arrow + 2, (size_t)(line + n - arrow - 2), &c) < 0) {
			if (n && !(*bad)++)
				*first_bad = lineno;
			continue;
		}
		fg_hash_upsert(m, line, (size_t)(arrow - line), NULL)->val.u = fg_rgb_pack(c);
	}
}

int fg_palette_map_write(const struct fg_hash *m, const char *path)
{
	size_t n = fg_hash_count(m);
	struct fg_hash_entry **v;
	struct fg_atomic a;
	int err = fg_atomic_open(&a, path, 0);

	if (err < 0)
		return err;
	v = fg_hash_sorted(m);
	for (size_t i = 0; i < n; i++) {
		struct fg_rgb c = fg_rgb_unpack(v[i]->val.u);

		fwrite(v[i]->key, 1, v[i]->len, a.fp);
		fprintf(a.fp, "->rgb(%u,%u,%u)\n", c.r, c.g, c.b);
	}
	free(v);
	return fg_atomic_commit(&a);
}
