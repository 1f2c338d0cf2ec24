/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines and inlined functions from DWARF (elfutils libdw), for
 * fg-sym's --inline and --srcline and fg-fold's --inline and --context.
 *
 * The file may be hostile, as for lib/elfsyms.c.  Before libdw reads a byte of
 * DWARF, the section headers are checked: the debug sections, uncompressed,
 * must fit FG_DWARF_MAX_DEBUG bytes, so memory and the time of one look-up
 * (a walk of one unit at most) are bounded.  libdw itself opens other files
 * by name with a blocking open(2) (a dwz supplementary file, split DWARF's
 * .dwo and .dwp files); a FIFO or a device named there would hang or worse.
 * So those files are opened here, regular files only, non-blocking: the
 * supplementary file is found as gdb does and handed to libdw, and a file
 * with split DWARF units (skeletons) is refused.
 */
#ifndef FG_DWARF_H
#define FG_DWARF_H

#include <stddef.h>
#include <stdint.h>

#define FG_DWARF_MAX_INLINE 32
/* Bounds on the DWARF of one file. */
#define FG_DWARF_MAX_DEBUG (1ull << 30) /* bytes of .debug_* sections, uncompressed */
#define FG_DWARF_MAX_UNITS (1u << 20)	/* compilation units */

struct fg_dwarf_loc {
	const char *func; /* linkage or plain name; NULL when unknown */
	const char *file; /* NULL when unknown */
	unsigned line;
};

struct fg_dwarf;

/*
 * Read the DWARF of the ELF file open on `fd` (duplicated: the caller keeps fd).
 * `path` is where the file was found and `root` the directory the system's
 * files are under ("" or NULL for /; a --symfs or a process root): they place
 * a supplementary (dwz) file.  NULL with errno set: ENODATA when the file has
 * no DWARF, EFBIG when over a bound, ENOEXEC when it is corrupt, ENOENT when
 * its supplementary file cannot be found, EOPNOTSUPP for split DWARF.
 */
struct fg_dwarf *fg_dwarf_open_fd(int fd, const char *path, const char *root);
/* The same for a path (a regular file only). */
struct fg_dwarf *fg_dwarf_open(const char *path, const char *root);
/* The same for an image in memory (fuzzing); `image` must outlive the result. */
struct fg_dwarf *fg_dwarf_open_mem(const void *image, size_t size);
/*
 * The functions at `addr` (an address as the ELF file's symbols use them),
 * innermost inlined function first, the function the code belongs to last,
 * each with the source position inside it.  Returns how many (0 when DWARF
 * says nothing about addr), or -ENOEXEC once a look-up in the file has failed
 * on corrupt DWARF (it is not asked again).  Strings live as long as the
 * fg_dwarf.  The answers for recent addresses are kept (a bounded table per
 * file): asking again for an address costs a copy, not a walk of its unit.
 */
int fg_dwarf_lookup(struct fg_dwarf *d, uint64_t addr, struct fg_dwarf_loc *locs, int max);
void fg_dwarf_free(struct fg_dwarf *d);

#endif
