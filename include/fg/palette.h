/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Frame colours, flamegraph.pl's palettes: a palette name, a way to choose
 * within it (by a hash of the name, so that a name keeps its colour in every
 * graph, or at random), the differential red/blue scale, and palette.map
 * files ("NAME->rgb(R,G,B)" a line) that pin colours across graphs.
 */
#ifndef FG_PALETTE_H
#define FG_PALETTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fg_palette {
	FG_PAL_HOT,
	FG_PAL_MEM,
	FG_PAL_IO,
	FG_PAL_WAKEUP,
	FG_PAL_CHAIN,
	FG_PAL_JAVA,
	FG_PAL_JS,
	FG_PAL_PERL,
	FG_PAL_RED,
	FG_PAL_GREEN,
	FG_PAL_BLUE,
	FG_PAL_AQUA,
	FG_PAL_YELLOW,
	FG_PAL_PURPLE,
	FG_PAL_ORANGE,
};

enum fg_pick {
	FG_PICK_HASH,	       /* flamegraph.pl's --hash: weighted by the first characters */
	FG_PICK_DETERMINISTIC, /* a hash of the whole name */
	FG_PICK_RANDOM,	       /* random, a new choice each run */
};

struct fg_rgb {
	uint8_t r, g, b;
};

/* The palette called `name`; -1 when there is none. */
int fg_palette_parse(const char *name);
const char *fg_palette_name(enum fg_palette p);
/* The background gradient flamegraph.pl gives the palette: "yellow", "blue", ... */
const char *fg_palette_bg(enum fg_palette p);

/*
 * The colour of frame `name` (annotation included).  `rng` is the state for
 * FG_PICK_RANDOM (any nonzero seed).
 */
struct fg_rgb fg_palette_color(enum fg_palette p, enum fg_pick pick, const char *name, size_t len,
			       uint64_t *rng);
/* Differential: red for more, blue for less (swapped when negate), white for equal. */
struct fg_rgb fg_palette_delta(double delta, double maxdelta, bool negate);

/* Parse "rgb(R,G,B)" or "#rrggbb".  0 or -EINVAL. */
int fg_rgb_parse(const char *s, size_t len, struct fg_rgb *out);

/* Colours in an fg_hash value: packed with a flag so that black is not "unset". */
static inline uint64_t fg_rgb_pack(struct fg_rgb c)
{
	return (1u << 24) | ((uint64_t)c.r << 16) | ((uint64_t)c.g << 8) | c.b;
}

static inline struct fg_rgb fg_rgb_unpack(uint64_t v)
{
	return (struct fg_rgb){(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
}

/*
 * The background gradient called `name`, one of flamegraph.pl's ("yellow",
 * "blue", "green", "grey"), or one colour "#rrggbb" for both ends: 0 with
 * the top and bottom colours in *top and *bottom (static strings, or `name`
 * itself), or -EINVAL.
 */
int fg_palette_background(const char *name, const char **top, const char **bottom);

struct fg_hash;

/*
 * Palette maps, flamegraph.pl's palette.map: "NAME->rgb(R,G,B)" a line, which
 * keeps a name's colour across graphs.  A name may hold "->" itself
 * (operator->): the colour follows the last one.  In memory, an fg_hash from
 * NAME to fg_rgb_pack'd colour.
 *
 * fg_palette_map_parse adds the lines of data[0, len) to `m` (a later line
 * wins); lines of another form are skipped, counted in *bad, the number of
 * the first in *first_bad (0 when there is none).
 */
void fg_palette_map_parse(struct fg_hash *m, const char *data, size_t len, uint64_t *bad,
			  uint64_t *first_bad);
/* Read the palette map `path` into `m`.  0, or -errno (-ENOENT when there is none). */
int fg_palette_map_read(struct fg_hash *m, const char *path, uint64_t *bad, uint64_t *first_bad);
/*
 * Write `m`, sorted by name, to `path`, whole or not at all (fg_atomic: an
 * existing map survives a failed write).  0 or -errno.
 */
int fg_palette_map_write(const struct fg_hash *m, const char *path);

#endif
