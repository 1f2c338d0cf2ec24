/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug files: where the symbols and the DWARF of a stripped file
 * are.  The one place that looks for them, for fg-sym's names (and its
 * --inline and --srcline), fg-fold's --inline, and the CFI tables'
 * .debug_frame.  In the order gdb and perf look:
 *
 *  1. by build-id: PREFIX/usr/lib/debug/.build-id/xx/yyyy.debug;
 *  2. by .gnu_debuglink: next to the file, in its .debug/ directory, then
 *     PREFIX/usr/lib/debug/DIR/ (DIR: the file's directory);
 *     both under PREFIX first (where the file itself was found: a --symfs,
 *     a process root), then under /;
 *  For the kernel's vDSO (its image in memory names only the functions it
 *  exports), after 1: where the kernel's `make vdso_install` puts its
 *  unstripped image, PREFIX/lib/modules/RELEASE/vdso/vdso64.so, then where
 *  a distribution's kernel debug package does,
 *  PREFIX/usr/lib/debug/lib/modules/RELEASE/vdso/vdso64.so;
 *  3. through debuginfod servers, by build-id (struct fg_debuginfod, in
 *     fg/debuginfod.h),
 *     when the caller asks: a network fetch, in the background, bounded in
 *     time.
 *
 * MiniDebugInfo (.gnu_debugdata) is not looked for here: it is a section of
 * the file itself, read by lib/elfsyms.c along with .dynsym, and holds
 * function symbols only.  A debug file found here is read as well, and its
 * .symtab replaces those (fg_elfsyms_adopt keeps the better table); DWARF only
 * ever comes from the file or its debug file.
 *
 * Every candidate is opened as a data file (lib/safeio.h: regular, not a
 * pseudo file, non-blocking, bounded) and used only when it is the file's own:
 * the same build-id when the file has one, else the CRC-32 that its
 * .gnu_debuglink names.  A file fetched through debuginfod is checked the same
 * way, by build-id.
 */
#ifndef FG_DEBUGFILE_H
#define FG_DEBUGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_elfsyms;

/* What identifies the debug file looked for, and where to look. */
struct fg_debug_want {
	const uint8_t *build_id; /* the file's build-id, or NULL */
	size_t build_id_len;
	const char *debuglink; /* its .gnu_debuglink name (no '/'), or NULL */
	uint32_t debuglink_crc;
	const char *path;   /* the file's path (debuglink names are relative to it), or NULL */
	const char *prefix; /* where the system's files are: "" or NULL for / */
	const char *vdso_release; /* the vDSO of this kernel release (uname -r), or NULL */
};

/* A debug file found (and checked). */
struct fg_debugfile {
	int fd;			/* open on the very file checked, or -1 */
	char *path;		/* where it was found */
	struct fg_elfsyms *elf; /* its symbols */
};

#define FG_DEBUGFILE_INIT                                                                          \
	{                                                                                          \
		.fd = -1                                                                           \
	}

/* What to look for for the file whose symbols are `e`, found at prefix + path. */
void fg_debugfile_want_init(struct fg_debug_want *w, const struct fg_elfsyms *e, const char *path,
			    const char *prefix);

/*
 * Is the ELF file open on `fd` the debug file `w` wants?  0 with *elf its
 * symbols (when elf is not NULL), -ESTALE when it is another file's (another
 * build-id or CRC), else -errno (ENOEXEC: not ELF, EFBIG: over a bound).
 */
int fg_debugfile_check(int fd, const struct fg_debug_want *w, struct fg_elfsyms **elf);

/*
 * Call fn for each place a debug file is looked for, in order, until fn
 * returns non-zero (which is returned); 0 after the last.
 */
int fg_debugfile_each_place(const struct fg_debug_want *w, int (*fn)(const char *path, void *arg),
			    void *arg);

/*
 * Look for the debug file on this machine (places 1 and 2 above).  0 with *df
 * filled (release it with fg_debugfile_release), -ENOENT when none is there.
 */
int fg_debugfile_find(const struct fg_debug_want *w, struct fg_debugfile *df);
void fg_debugfile_release(struct fg_debugfile *df);

#endif
