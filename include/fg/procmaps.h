/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * /proc/PID/maps lines, the one parser of them (fg-sym's live processes,
 * fg-sample's snapshot, the tests' tools):
 *	START-END PERMS OFFSET MAJOR:MINOR INODE   PATH
 *
 * The kernel appends " (deleted)" to the path of a file unlinked since it
 * was mapped; the parser takes it off and sets `deleted`, so that the path
 * names the file as it was mapped (a copy under --symfs has that name; the
 * file itself stays readable through /proc/PID/map_files/START-END).  A file
 * whose own name ends in " (deleted)" reads the same: the name is then the
 * wrong one, and the mapping's device and inode tell.
 */
#ifndef FG_PROCMAPS_H
#define FG_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_procmap {
	uint64_t start, end, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t prot;	  /* PROT_READ, PROT_WRITE, PROT_EXEC from "rwx" */
	bool shared;	  /* 's' (a MAP_SHARED mapping) rather than 'p' */
	bool exec;	  /* 'x' in the permissions */
	bool deleted;	  /* the path ended in " (deleted)", which is not part of path */
	const char *path; /* points into the line; "" for an anonymous mapping */
	size_t path_len;
};

/*
 * Parse one line (without its newline) in place: the path is cut off at its
 * end, so `line` must be writable up to and including line[len].  0, or -EINVAL when malformed.
 */
int fg_procmap_parse(char *line, size_t len, struct fg_procmap *m);

/*
 * Parse a whole maps file's text (writable, NUL-terminated at data[len]),
 * calling `fn` for each mapping.  Returns 0, a non-zero value from `fn`
 * (which stops the walk), or -EINVAL with *bad_line set.
 */
int fg_procmaps_parse(char *data, size_t len, int (*fn)(const struct fg_procmap *, void *),
		      void *arg, uint64_t *bad_line);

#endif
