/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines and inlined functions from DWARF (elfutils libdw), for
 * fg-sym's --inline and --srcline.
 */
#ifndef FG_DWARF_H
#define FG_DWARF_H

#include <stdint.h>

#define FG_DWARF_MAX_INLINE 32

struct fg_dwarf_loc {
	const char *func; /* linkage or plain name; NULL when unknown */
	const char *file; /* NULL when unknown */
	unsigned line;
};

struct fg_dwarf;

/* Read the DWARF of the ELF file open on `fd` (duplicated: the caller keeps fd).  NULL if none. */
struct fg_dwarf *fg_dwarf_open_fd(int fd);
/* The same for a path (a regular file only). */
struct fg_dwarf *fg_dwarf_open(const char *path);
/*
 * The functions at `addr` (an address as the ELF file's symbols use them),
 * innermost inlined function first, the function the code belongs to last,
 * each with the source position inside it.  Returns how many (0 when DWARF
 * says nothing about addr).  Strings live as long as the fg_dwarf.
 */
int fg_dwarf_lookup(struct fg_dwarf *d, uint64_t addr, struct fg_dwarf_loc *locs, int max);
void fg_dwarf_free(struct fg_dwarf *d);

#endif
