/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind tables kept on disk between runs: fg-sample builds a table from a
 * file's CFI each time it first samples the file (python3.11's, 65,000 rows,
 * takes some 10 ms), and a short capture repeated (a script's `-d 5`, one
 * capture a window) builds the same tables again each time.  A store is a
 * directory of one file per table, named by a hash of the file's identity:
 * its device, inode, size, modification and change times (to the
 * nanosecond) and the loader's key (its build-id, or device and inode),
 * and by the program that built it (the same of /proc/self/exe: a fix to
 * lib/cfi, rebuilt, builds every table again).  What changes a file changes
 * its change time, and a user cannot give a file of theirs another's device,
 * inode and change time, so a table is only ever used for the very file it
 * was built from, as this build of fg builds it.
 *
 * The directory is the running user's own (fg_safeio_private_dir_open: no
 * symbolic link on the way, nobody else's), each table file 0600 and this
 * user's, written whole to a temporary file and renamed; a table file's
 * bytes are still checked whole before use (fg_cfi_store_parse), and one
 * that is not right is counted, removed and built again.  The store keeps
 * at most FG_CFI_STORE_MAX_FILES tables and FG_CFI_STORE_MAX_BYTES bytes:
 * past either, the tables least recently used are removed.
 *
 *	struct fg_cfi_store *s = fg_cfi_store_open(dir, &err);	// NULL: see err
 *	struct fg_cfi *c = fg_cfi_store_get(s, fd, key, klen);	// NULL: build it
 *	fg_cfi_store_put(s, fd, key, klen, c);			// after a build
 *	fg_cfi_store_close(s);
 *
 * Not thread-safe: fg-sample's tables thread alone uses its store.
 */
#ifndef FG_CFI_STORE_H
#define FG_CFI_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fg/buf.h"
#include "fg/cfi.h"

#define FG_CFI_STORE_MAX_FILES 1024
#define FG_CFI_STORE_MAX_BYTES (256ull << 20)
/* a stored table's identity: the loader's key, the file's status, the builder's */
#define FG_CFI_STORE_KEY_MAX (FG_CFI_KEY_MAX + 80)

struct fg_cfi_store_stats {
	uint64_t hits;	  /* tables read from the store */
	uint64_t misses;  /* tables not there (built, then written) */
	uint64_t written; /* tables written */
	uint64_t refused; /* table files not right (removed, built again) */
	uint64_t errors;  /* tables that could not be written (a full disk, ...) */
	uint64_t evicted; /* table files removed for room */
	/* the first table file refused, and the offset of its first byte found wrong */
	char first_bad[32];
	uint64_t first_bad_at;
};

struct fg_cfi_store;

/*
 * The store in directory `dir` (absolute; made 0700 when missing), or NULL
 * with *err, `bad` and *owner as fg_safeio_private_dir_open() sets them.
 */
struct fg_cfi_store *fg_cfi_store_open(const char *dir, int *err, char *bad, size_t badsize,
				       uid_t *owner);
void fg_cfi_store_close(struct fg_cfi_store *s);
const struct fg_cfi_store_stats *fg_cfi_store_stats(const struct fg_cfi_store *s);

/*
 * The identity of the file open on `fd` with the loader's key (`key`,
 * `klen`), as tables of this store's builder: into id
 * (FG_CFI_STORE_KEY_MAX bytes); its length, 0 when fd cannot be read.
 */
size_t fg_cfi_store_id(const struct fg_cfi_store *s, int fd, const void *key, size_t klen,
		       unsigned char *id);

/* The table stored for identity `id`, or NULL (none, or refused: counted). */
struct fg_cfi *fg_cfi_store_get(struct fg_cfi_store *s, const unsigned char *id, size_t idlen);
/* Store `c` (a whole table, not a lazy one) for identity `id`. */
void fg_cfi_store_put(struct fg_cfi_store *s, const unsigned char *id, size_t idlen,
		      const struct fg_cfi *c);

/*
 * A table file's bytes: the table, checked whole (its identity `id`, its
 * sizes against the bounds of fg/cfi.h, the rows in order and their rules
 * there, a checksum), or NULL with *bad_at the offset of the first byte
 * found wrong.
 */
struct fg_cfi *fg_cfi_store_parse(const void *data, size_t len, const unsigned char *id,
				  size_t idlen, size_t *bad_at);
/* The bytes fg_cfi_store_parse() reads, appended to out. */
void fg_cfi_store_format(const struct fg_cfi *c, const unsigned char *id, size_t idlen,
			 struct fg_buf *out);

#endif
