/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building a pprof profile (profile.proto of github.com/google/pprof) and
 * writing it gzipped, as `go tool pprof`, Grafana Pyroscope and Parca read it.
 *
 *	struct fg_pprof *p = fg_pprof_new();
 *	fg_pprof_add(p, &sample);		(for each sample)
 *	fg_pprof_write(p, &meta, out);
 *	fg_pprof_free(p);
 *
 * Samples with the same frames and labels are summed into one.  A location is
 * made for each distinct (mapping, address) with the names found there: its
 * inlined functions become extra Lines, leaf first, as Go's own profiles
 * have them.  A function is made for each distinct name, a mapping for each
 * distinct file (and build-id).  Frames come with the addresses `perf script`
 * prints, relative to their file for files: such a mapping spans the whole
 * address space at offset 0, pprof's convention for addresses already
 * relative to the file, so that pprof can name them again from the file.
 * A mapping whose every location is named says so (has_functions); one with
 * unnamed frames leaves it clear, so pprof and the backends name them.
 *
 * Memory grows with the distinct stacks, locations and names, not with the
 * samples; a new profile (or fg_pprof_free) gives it all back.
 */
#ifndef FG_PPROF_H
#define FG_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FG_PPROF_MAX_VALUES 4

struct fg_pprof_frame {
	const char *name; /* the function; NULL or empty: unnamed */
	size_t name_len;
	const char *file; /* the mapping's file ("[kernel.kallsyms]", a path); NULL: none */
	size_t file_len;
	const char *build_id; /* hexadecimal, or NULL */
	size_t build_id_len;
	uint64_t addr;
	bool has_addr;
	/*
	 * An inlined function: it shares the location of the next frame (its
	 * caller, which holds the address and the mapping), as an extra Line
	 */
	bool inlined;
};

struct fg_pprof_sample {
	const struct fg_pprof_frame *frames; /* leaf first */
	size_t nframes;
	int64_t values[FG_PPROF_MAX_VALUES]; /* added to the sample's values, by column */
	bool has_pid, has_tid;
	int64_t pid, tid;
	const char *comm; /* NULL: no comm label */
	size_t comm_len;
};

struct fg_pprof_meta {
	size_t ntypes;			       /* sample types, at most FG_PPROF_MAX_VALUES */
	const char *type[FG_PPROF_MAX_VALUES]; /* "samples", "cpu" */
	const char *unit[FG_PPROF_MAX_VALUES]; /* "count", "nanoseconds" */
	int column[FG_PPROF_MAX_VALUES];       /* which of the samples' values each type shows */
	size_t default_type;		       /* index into type[]; the one pprof shows first */
	const char *period_type, *period_unit; /* NULL: none */
	int64_t period;
	int64_t time_nanos; /* wall-clock start, ns since the epoch; 0 when not known */
	int64_t duration_nanos;
	const char *const *comments; /* free-text comments shown by pprof -comments */
	size_t ncomments;
};

struct fg_pprof;

struct fg_pprof *fg_pprof_new(void);
void fg_pprof_free(struct fg_pprof *p);

/* Add a sample.  0, or -EINVAL for a sample pprof cannot hold (an inlined frame last). */
int fg_pprof_add(struct fg_pprof *p, const struct fg_pprof_sample *s);

/*
 * The same in two steps, for a reader that remembers locations: the id of the
 * location of frames[0..n) (the inlined functions first, the frame that holds
 * the address and the mapping last), made when new; then a sample by the ids
 * of its locations, leaf first (s->frames is not read).  Ids stay valid for
 * the life of the profile.
 */
uint32_t fg_pprof_location(struct fg_pprof *p, const struct fg_pprof_frame *frames, size_t n);
int fg_pprof_add_ids(struct fg_pprof *p, const uint32_t *ids, size_t n,
		     const struct fg_pprof_sample *s);

/* Samples (distinct stacks and labels) held, and all the samples' values added up by column. */
size_t fg_pprof_count(const struct fg_pprof *p);
const int64_t *fg_pprof_totals(const struct fg_pprof *p);

/* The profile as protobuf bytes (not compressed), into *out (appended). */
struct fg_buf;
void fg_pprof_encode(struct fg_pprof *p, const struct fg_pprof_meta *m, struct fg_buf *out);

/* Encode and write gzipped to `out`.  0, -errno when writing failed (-EIO if unknown), -ENOMEM
 * (zlib). */
int fg_pprof_write(struct fg_pprof *p, const struct fg_pprof_meta *m, FILE *out);

/* gzip `len` bytes of `data` to `out` (level: zlib's, -1 for its default).  0 or -errno. */
int fg_gzip_write(const void *data, size_t len, int level, FILE *out);

#endif
