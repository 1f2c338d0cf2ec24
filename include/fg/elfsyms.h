/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function symbols of one ELF file (libelf): .symtab when present, else
 * .dynsym with the .symtab of MiniDebugInfo (.gnu_debugdata, an xz-compressed
 * ELF file, read with liblzma) when present; the PLT's entries, named after
 * their relocations (.rela.plt); its loadable segments, to turn a
 * file offset into the address the symbols use (the load bias of PIE
 * executables and shared libraries); its build-id and .gnu_debuglink, to find
 * separate debug information.
 *
 * The file may be hostile (fg-sym runs as root and reads what others mapped):
 * every size is checked against the file and against fixed bounds, so a
 * truncated, corrupt or crafted file gives an error, never a crash, and costs
 * bounded memory and time.
 */
#ifndef FG_ELFSYMS_H
#define FG_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on one file. */
#define FG_ELF_MAX_FILE (4ull << 30)	 /* bytes */
#define FG_ELF_MAX_SYMS (4u << 20)	 /* symbol table entries read */
#define FG_ELF_MAX_NAMES (256u << 20)	 /* bytes of names kept */
#define FG_ELF_MAX_SECTIONS 65536u	 /* section headers */
#define FG_ELF_MAX_PHDRS 65535u		 /* program headers */
#define FG_ELF_MAX_LOADS 256u		 /* PT_LOAD headers */
#define FG_ELF_MAX_MINIDEBUG (64u << 20) /* bytes of .gnu_debugdata, decompressed */
#define FG_BUILD_ID_MAX 64

/* Where the symbols came from, worst first. */
enum fg_elf_symtab {
	FG_ELF_NOSYMS = 0,
	FG_ELF_DYNSYM,
	FG_ELF_MINIDEBUG, /* .dynsym and the .symtab of .gnu_debugdata (MiniDebugInfo) */
	FG_ELF_SYMTAB,
};

struct fg_elf_sym {
	uint64_t addr, size;
	const char *name;
	char *pretty; /* demangled name, set by the caller (freed with the table) */
};

/* Another name of a function in fg_elfsyms.syms, at the same address. */
struct fg_elf_alias {
	uint64_t addr;
	const char *name;
};

struct fg_elf_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* p_flags: PF_X for code */
};

struct fg_elfsyms {
	enum fg_elf_symtab kind; /* where the symbols came from */
	bool shared;		 /* ET_DYN: PIE or shared library */
	uint8_t build_id[FG_BUILD_ID_MAX];
	size_t build_id_len;
	char *debuglink; /* .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;
	/* .gnu_debugaltlink: the build-id of the supplementary (dwz) file, when named */
	uint8_t altlink_id[FG_BUILD_ID_MAX];
	size_t altlink_id_len;
	int minidebug_err; /* -errno: .gnu_debugdata present but unreadable (EFBIG: too large) */
	struct fg_elf_load *loads;
	size_t nloads;
	struct fg_elf_sym *syms; /* by address, one (the best) name for each */
	size_t nsyms;
	struct fg_elf_alias *aliases; /* the other names, by address */
	size_t naliases;
	char *strings; /* the names */
	size_t strings_len;
	/*
	 * The PLT's entries (x86-64), named NAME@plt as objdump names them
	 * (after the relocation of the GOT slot each jumps through): plt[i] is
	 * the 16 bytes at plt_addr + 16 * i, unnamed when its name is NULL
	 * (.plt's header).  They stay when a debug file's symbols are adopted.
	 */
	struct fg_elf_sym *plt;
	size_t nplt;
	uint64_t plt_addr;
	char *plt_strings;
	/*
	 * The code of .init and .fini, named _init and _fini (what DT_INIT and
	 * DT_FINI run; a stripped library's .dynsym names neither), for the
	 * addresses no symbol holds.  They stay when a debug file's symbols are
	 * adopted.
	 */
	struct fg_elf_sym initfini[2];
	size_t ninitfini;
};

/*
 * Read the ELF file open on `fd` (a regular file; the descriptor stays the
 * caller's).  NULL with errno set: ENOEXEC when it is not ELF or is corrupt,
 * EFBIG when over a bound, E2BIG when its headers are refused (fg_elf_precheck).
 */
struct fg_elfsyms *fg_elfsyms_open_fd(int fd);
/* The same for an image in memory (the vdso, tests, fuzzing); `image` is copied. */
struct fg_elfsyms *fg_elfsyms_open_mem(const void *image, size_t size);

/*
 * Check an ELF file's headers before libelf sees it (the one place: both
 * functions below call it, and nothing else opens a user's ELF file).
 * libelf's elf_begin() allocates about 200 bytes for every section the
 * headers claim, before anyone can look: a sparse file of 8 KiB on disk can
 * claim tens of millions (e_shnum 0 and section 0's sh_size, the extended
 * count).  The image is `size` bytes, read from `fd` with pread, or at `image`
 * when not NULL.  0 when its headers are within bounds; -ENOEXEC when it is
 * not ELF; -E2BIG when it is refused: more than FG_ELF_MAX_SECTIONS sections
 * or FG_ELF_MAX_PHDRS program headers, a header table beyond the end of the
 * file, a header entry size that is not the ELF class's, a section name table
 * index beyond the sections.
 */
int fg_elf_precheck(int fd, const void *image, uint64_t size);

struct Elf; /* libelf's Elf */
/*
 * libelf over the regular file open on `fd` (the descriptor stays the
 * caller's, and must outlive the Elf), read with pread, never mapped: a file
 * truncated under it gives read errors, not SIGBUS.  NULL with errno EINVAL
 * (not a regular file), EFBIG (over FG_ELF_MAX_FILE), E2BIG (refused by
 * fg_elf_precheck) or ENOEXEC.
 */
struct Elf *fg_elf_begin_fd(int fd);
/*
 * libelf over a private copy of an image in memory (libelf may convert it in
 * place).  NULL with errno EFBIG (over FG_ELF_MAX_FILE), E2BIG (refused by
 * fg_elf_precheck) or ENOEXEC; else
 * *copy is to be freed after elf_end().
 */
struct Elf *fg_elf_memory(const void *image, size_t size, void **copy);
void fg_elfsyms_free(struct fg_elfsyms *e);
/* The PT_LOAD segments of an ELF file (FG_ELF_MAX_LOADS at most): how many; free *loads. */
size_t fg_elf_loads(struct Elf *elf, struct fg_elf_load **loads);
/* A symbol looked up by name: its value, when found. */
struct fg_elf_named {
	const char *name;
	uint64_t value;
	bool found;
};
/*
 * Look up syms[0..n) by name among the symbols of any type (data, TLS,
 * functions): sets each one's value and found; how many were found.  First
 * in .dynsym, through its GNU hash table when the file has one (a few
 * probes a name, however large the table).  Then .symtab, a scan of every
 * symbol, only when one of the first `need` names is not in .dynsym: a file
 * that exports those exports the rest of its API too (need == n: always
 * look in .symtab for what .dynsym lacks).
 */
size_t fg_elf_named_symbols(struct Elf *elf, struct fg_elf_named *syms, size_t n, size_t need);
/* The address of file offset `off` in the segments `loads`; false when in none. */
bool fg_elf_offset_to_addr(const struct fg_elf_load *loads, size_t n, uint64_t off, uint64_t *addr);

/* Take the symbols of `debug` (a separate debug file) into `e`, when better. */
void fg_elfsyms_adopt(struct fg_elfsyms *e, struct fg_elfsyms *debug);

/* The address (as symbols use them) of file offset `off`; false when in no segment. */
bool fg_elfsyms_offset_to_addr(const struct fg_elfsyms *e, uint64_t off, uint64_t *addr);
/* The function symbol holding `addr`, or NULL. */
struct fg_elf_sym *fg_elfsyms_lookup(const struct fg_elfsyms *e, uint64_t addr);

/* "ab/cdef..." hex form of a build-id into buf (2 * len + 2 bytes). */
void fg_build_id_hex(const uint8_t *id, size_t len, char *buf, bool slash);
/* gnu_debuglink's CRC-32 of a whole descriptor (bounded by FG_ELF_MAX_FILE). */
int fg_elf_crc32(int fd, uint32_t *crc);

#endif
