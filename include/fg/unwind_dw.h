/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The oracle: the same snapshots unwound by elfutils' libdwfl, as perf does
 * (dwfl_attach_state with callbacks that read the snapshot, one Dwfl per
 * process, so that libdwfl's CFI caches serve every sample of the process).
 * For tests and for debugging (fg-sym --unwinder=libdw): libdwfl reads the
 * files with its own code, so it is only as bounded as libdw is.
 *
 *	struct fg_unwind_dw *u = fg_unwind_dw_new();
 *	fg_unwind_dw_map(u, path, fd, start, end, pgoff);   // each mapped file
 *	n = fg_unwind_dw(u, tid, &regs, sp, data, size, frames, max, &end);
 *	fg_unwind_dw_free(u);
 */
#ifndef FG_UNWIND_DW_H
#define FG_UNWIND_DW_H

#include <stddef.h>
#include <stdint.h>

#include "fg/unwind.h"

struct fg_unwind_dw;

struct fg_unwind_dw *fg_unwind_dw_new(void);
void fg_unwind_dw_free(struct fg_unwind_dw *u);
/*
 * A file mapped at [start, end) from file offset pgoff, open on fd (a
 * regular ELF file; the descriptor stays the caller's, libdwfl gets a
 * duplicate).  A file is reported once, at its first mapping.  0 or -errno.
 */
int fg_unwind_dw_map(struct fg_unwind_dw *u, const char *name, int fd, uint64_t start, uint64_t end,
		     uint64_t pgoff);
/* An ELF image in memory (the kernel's vdso) mapped at start; copied. 0 or -errno. */
int fg_unwind_dw_map_image(struct fg_unwind_dw *u, const char *name, const void *image, size_t size,
			   uint64_t start);
/*
 * Unwind one snapshot of thread `tid`, as fg_unwind() does: frames leaf first,
 * FG_UNWIND_F_EXACT on those libdwfl says are exact (activations), and
 * FG_UNWIND_F_SIGNAL on the frame before each exact one past the leaf (the
 * signal frame that made it exact), as fg_unwind() marks them.  When
 * libdwfl gives no frame at all (no module reported to attach to, a leaf in
 * no module), the leaf alone, as fg_unwind() gives it.  *end
 * maps libdwfl's reason onto ours; *msg (optional) gets libdwfl's message.
 */
size_t fg_unwind_dw(struct fg_unwind_dw *u, uint32_t tid, const struct fg_cfi_regs *regs,
		    uint64_t sp, const void *stack, size_t size, struct fg_unwind_frame *frames,
		    size_t max, enum fg_unwind_end *end, const char **msg);

#endif
