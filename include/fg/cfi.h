/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Compact unwind tables: the call frame information of one ELF file
 * (.eh_frame, found by its section or through PT_GNU_EH_FRAME's
 * .eh_frame_hdr, and .debug_frame, of the file itself or of its separate
 * debug file) compiled into sorted rows of deduplicated rules, the layout of
 * include/fg/cfi_step.h.  x86-64 and arm64 (AArch64) files.
 *
 * The CFA programs are interpreted here, one whole FDE at a time: each
 * advance of the location closes a row, so the table's row boundaries are
 * those of the CFI itself (libdw's dwarf_cfi_addrframe answers for one
 * address and would have to be asked at every boundary, found by decoding
 * the same programs).
 *
 * The file may be hostile: every size, count and offset is checked before it
 * is read, against the section and against the bounds below; a corrupt FDE
 * or CIE is skipped and counted, never read past.
 *
 *	struct fg_cfi *c = fg_cfi_open_fd(fd, debug_fd_or_-1);
 *	const struct fg_cfi_rule *r = fg_cfi_lookup(c, vaddr);
 *	fg_cfi_free(c);
 */
#ifndef FG_CFI_H
#define FG_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/cfi_step.h"
#include "fg/elfsyms.h"

/* Bounds on one file. */
#define FG_CFI_MAX_SECTION (256u << 20) /* bytes of one .eh_frame or .debug_frame */
#define FG_CFI_MAX_FDES (4u << 20)	/* FDEs read from one file */
#define FG_CFI_MAX_ROWS (16u << 20)	/* rows of one table */
#define FG_CFI_MAX_RULES 65536u		/* distinct rules of one table */
#define FG_CFI_MAX_STATE 64u		/* DW_CFA_remember_state depth */

struct fg_cfi_stats {
	uint64_t cies;	       /* CIEs read */
	uint64_t fdes;	       /* FDEs in the table */
	uint64_t eh_fdes;      /* of which from .eh_frame */
	uint64_t debug_fdes;   /* of which from .debug_frame */
	uint64_t bad_entries;  /* CIEs and FDEs skipped: corrupt or unsupported */
	uint64_t overlaps;     /* FDEs dropped: their range overlaps one already taken */
	uint64_t empty;	       /* FDEs of no address range */
	uint64_t rows;	       /* rows of the table (the closing one included) */
	uint64_t rules;	       /* distinct rules */
	uint64_t stop_rows;    /* FG_CFI_STOP rows */
	uint64_t signal_rows;  /* FG_CFI_SIGNAL rows */
	uint64_t invalid_rows; /* FG_CFI_INVALID rows... */
	uint64_t invalid[FG_CFI_WHY_COUNT]; /* ...by reason */
	uint64_t rbp_lost;		    /* rows whose rbp rule is not held (FG_CFI_LOST) */
	uint64_t rbx_lost;		    /* rows whose rbx rule is not held (FG_CFI_LOST) */
	uint64_t entry_rows; /* 1: the ELF entry point, in no FDE, is a STOP row (ld.so's _start) */
};

/* Where a reason of fg_cfi_why is explained: "CFA expression", ... */
extern const char *const fg_cfi_why_names[FG_CFI_WHY_COUNT];

struct fg_cfi {
	uint64_t base; /* rows[].pc are relative to this file address */
	struct fg_cfi_row *rows;
	uint32_t nrows;
	struct fg_cfi_rule *rules;
	uint32_t nrules;
	struct fg_cfi_stats st;
	struct fg_elf_load *loads; /* the PT_LOAD segments, to place file offsets */
	size_t nloads;
	bool shared;		  /* ET_DYN */
	uint8_t arch;		  /* enum fg_cfi_arch: the file's machine */
	struct fg_cfi_lazy *lazy; /* fg_cfi_open_lazy's: rows compiled on demand */
	/* rows and rules in a file mapped whole (fg_cfi_store_get), unmapped by fg_cfi_free */
	void *map;
	size_t map_len;
};

struct Elf;
/*
 * Build the table of an ELF file opened with libelf, and of its separate
 * debug file `debug` (NULL for none; only its .debug_frame is read).  Where
 * both describe an address, .eh_frame wins.  NULL with errno set: ENOEXEC
 * (not ELF, or neither x86-64 nor arm64), ENODATA (no CFI at all: use frame pointers),
 * EFBIG (over a bound above).
 */
struct fg_cfi *fg_cfi_from_elf(struct Elf *elf, struct Elf *debug);
/* The same for descriptors (stay the caller's); debug_fd -1 for none.  Regular files only. */
struct fg_cfi *fg_cfi_open_fd(int fd, int debug_fd);
/* The same for an image in memory (the kernel's vdso, tests, fuzzing); it is copied. */
struct fg_cfi *fg_cfi_open_mem(const void *image, size_t size);
void fg_cfi_free(struct fg_cfi *c);
/*
 * Like fg_cfi_open_fd(fd, -1), but when the file's only CFI is an .eh_frame
 * with .eh_frame_hdr's sorted search table, nothing is compiled yet: a lookup
 * finds the pc's FDE by binary search in that table and compiles its rows
 * once (the table keeps them until it is freed: never more rows than the
 * whole table would hold).  rows/nrows stay empty, c->lazy is set, and the
 * lookups answer as the whole table would, rule for rule.  A lookup then
 * writes to the table: one thread at a time.  Any other file (no table in
 * the header, a .debug_frame, an FDE count or order the header gets wrong)
 * gets the whole table, as fg_cfi_open_fd.
 */
struct fg_cfi *fg_cfi_open_lazy(int fd);
/* The same for an ELF file opened with libelf (its bytes are copied). */
struct fg_cfi *fg_cfi_from_elf_lazy(struct Elf *elf);

/* The rule for file address `vaddr`: rules[0] (FG_CFI_NONE) when no row holds it.  Never NULL. */
const struct fg_cfi_rule *fg_cfi_lookup(const struct fg_cfi *c, uint64_t vaddr);
/* Like fg_cfi_lookup, with the row's range [*start, *end) as file addresses. */
const struct fg_cfi_rule *fg_cfi_lookup_range(const struct fg_cfi *c, uint64_t vaddr,
					      uint64_t *start, uint64_t *end);
/* The file address of file offset `off`; false when in no loadable segment. */
bool fg_cfi_offset_to_vaddr(const struct fg_cfi *c, uint64_t off, uint64_t *vaddr);
/* Bytes of the rows and rules (what a BPF map of this table would hold). */
size_t fg_cfi_table_bytes(const struct fg_cfi *c);
/*
 * A rule as text, in the columns of `readelf --debug-dump=frames-interp`:
 * the CFA ("rsp+8", "exp" for an expression), rbp and the return address
 * ("c-16", "u" undefined or unchanged, "v+8" value, "exp").  The kinds
 * other than NORMAL and STOP print as "none", "signal" and "invalid".
 */
void fg_cfi_rule_text(const struct fg_cfi_rule *r, char *cfa, char *rbp, char *ra, size_t len);

/*
 * Tables cached by file identity: the key is the caller's (lib/symbolize.c's
 * 'b'+build-id or 'i'+device+inode scheme: fg_cfi_key()).  A file that has
 * no table is cached too (cfi NULL, err its -errno), so it is read once.
 */
struct fg_cfi_cache;
struct fg_cfi_cache *fg_cfi_cache_new(void);
/* Frees every table it holds. */
void fg_cfi_cache_free(struct fg_cfi_cache *cc);
/* true when `key` is cached: *cfi (NULL when the file has none) and *err. */
bool fg_cfi_cache_get(struct fg_cfi_cache *cc, const void *key, size_t len, struct fg_cfi **cfi,
		      int *err);
/* Cache `cfi` (may be NULL, with err < 0) under key; the cache owns it (once, under any number of
 * keys). */
void fg_cfi_cache_put(struct fg_cfi_cache *cc, const void *key, size_t len, struct fg_cfi *cfi,
		      int err);
/*
 * The identity key of a file: 'b' and the build-id when build_id_len, else
 * 'i', the device (major << 32 | minor) and the inode.  `key` holds at least
 * FG_CFI_KEY_MAX bytes; returns the key's length.
 */
#define FG_CFI_KEY_MAX (1 + FG_BUILD_ID_MAX + 16)
size_t fg_cfi_key(char *key, const uint8_t *build_id, size_t build_id_len, uint32_t dev_major,
		  uint32_t dev_minor, uint64_t inode);

#endif
