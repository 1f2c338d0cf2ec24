/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Un-inlining frames from DWARF line information (elfutils libdw), for
 * fg-fold --inline and --context: what stackcollapse-perf.pl asks of
 * `addr2line -i -f -s -C`, without a process per frame.
 *
 * A frame is found in its file by SYMBOL+0xOFFSET (the symbol's address in the
 * file's symbol table, mangled or demangled, plus the offset), which holds for
 * shared libraries and position-independent executables wherever they were
 * loaded; when the symbol is not in the table, the printed address is used if
 * the file is a fixed-address executable.  Files are opened once and cached.
 */
#ifndef FG_DWINLINE_H
#define FG_DWINLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_inliner;

/* One function of the chain, innermost first: its name and where in it the code is. */
typedef void (*fg_inline_fn)(void *ctx, const char *func, const char *file, unsigned line);

struct fg_inliner *fg_inliner_new(void);
void fg_inliner_free(struct fg_inliner *in);

/*
 * Call `cb` for each function at the frame, the innermost (inlined) first and the
 * function that holds them last.  Returns how many, or -errno: -ENOENT when the
 * file cannot be opened, -ENODATA when it has no line information for the
 * address, -ESRCH when the frame cannot be placed in the file.  *first_failure
 * is set when this is the first failure for this file (to report it once).
 */
int fg_inliner_lookup(struct fg_inliner *in, const char *path, size_t path_len, uint64_t addr,
		      const char *sym, size_t sym_len, uint64_t sym_off, fg_inline_fn cb, void *ctx,
		      bool *first_failure);

#endif
