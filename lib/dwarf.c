// SPDX-License-Identifier: BSD-2-Clause
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/debugfile.h"
#include "fg/debuginfod.h"
#include "fg/diag.h"
#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"
#include "fg/util.h"

struct fg_dwarf {
	int fd;
	Elf *elf;
	Dwarf *dw;
	void *image;		 /* the copy read by fg_dwarf_open_mem */
	struct fg_dwarf *alt;	 /* the supplementary (dwz) file */
	bool broken;		 /* a look-up failed: no more (see fg_dwarf_lookup) */
	struct cu_range *ranges; /* built when .debug_aranges does not place an address */
	size_t nranges;
	bool ranges_built;
	struct memo *memo; /* MEMO_SLOTS of them, made at the first look-up */
};

/*
 * Look-ups remembered, per file, in a table indexed by the address's hash,
 * each slot holding the last address that fell there: a profile asks for the
 * same addresses again and again, and one look-up walks a whole unit's DIEs
 * (twice past an inlined instance).  At most MEMO_SLOTS * FG_DWARF_MAX_INLINE
 * locations a file.
 */
#define MEMO_BITS 11
#define MEMO_SLOTS (1u << MEMO_BITS)

struct memo {
	uint64_t addr;
	int n;			   /* locations at addr; -1: the slot is empty */
	struct fg_dwarf_loc *locs; /* n of them */
};

struct cu_range {
	uint64_t start, end;
	Dwarf_Off cu; /* the unit's DIE */
};

#define MAX_CU_RANGES (1u << 22)

static bool is_debug_section(const char *name, bool *compressed_gnu)
{
	*compressed_gnu = strncmp(name, ".zdebug_", 8) == 0;
	return *compressed_gnu || strncmp(name, ".debug_", 7) == 0;
}

/*
 * Before libdw reads anything: the debug sections, uncompressed, within
 * FG_DWARF_MAX_DEBUG; is there DWARF at all; does it need other files.
 */
static int check_sections(Elf *elf, bool *has_altlink)
{
	size_t nscn, shstrndx;
	uint64_t total = 0;
	bool has_info = false;
	Elf_Scn *scn = NULL;

	*has_altlink = false;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrnum(elf, &nscn) < 0 ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -ENOEXEC;
	if (nscn > FG_ELF_MAX_SECTIONS)
		return -EFBIG;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		uint64_t size;
		bool gnu;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".gnu_debugaltlink") == 0)
			*has_altlink = true;
		/* DWARF 5's supplementary file: newer libdw open it by name; not read here */
		if (strcmp(name, ".debug_sup") == 0)
			return -EOPNOTSUPP;
		if (!is_debug_section(name, &gnu) || sh.sh_type == SHT_NOBITS)
			continue;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return -ENOEXEC;
			size = ch.ch_size;
		} else if (gnu) {
			ssize_t n = dwelf_scn_gnu_compressed_size(scn);

			if (n < 0)
				return -ENOEXEC;
			size = (uint64_t)n;
		}
		if (size > FG_DWARF_MAX_DEBUG - total)
			return -EFBIG;
		total += size;
		if (strcmp(name + (gnu ? 2 : 1), "debug_info") == 0 && size)
			has_info = true;
	}
	return has_info ? 0 : -ENODATA;
}

/*
 * Walk the unit headers: bounded in number, and no split DWARF (a skeleton
 * unit makes libdw open its .dwo or .dwp file by name).  No DIE is read here.
 */
static int check_units(Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	uint8_t type;
	size_t n = 0;
	int r;

	while ((r = dwarf_get_units(dw, cu, &cu, NULL, &type, NULL, NULL)) == 0) {
		if (++n > FG_DWARF_MAX_UNITS)
			return -EFBIG;
		if (type == DW_UT_skeleton)
			return -EOPNOTSUPP;
	}
	/* a corrupt unit ends the walk; libdw goes no further either */
	return r < 0 && n == 0 ? -ENOEXEC : 0;
}

/*
 * libdw reads names in the string sections with strlen(), past the end of a
 * section that does not end in a NUL.  Checked once decompressed, as libdw
 * sees them.
 */
static int check_strings(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		bool gnu;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !is_debug_section(name, &gnu) || sh.sh_type == SHT_NOBITS)
			continue;
		name += gnu ? 2 : 1;
		if (strcmp(name, "debug_str") != 0 && strcmp(name, "debug_line_str") != 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_size &&
		    (!data->d_buf || ((const char *)data->d_buf)[data->d_size - 1]))
			return -ENOEXEC;
	}
	return 0;
}

static struct fg_dwarf *dwarf_new(Elf *elf, int fd, void *image, int *err)
{
	struct fg_dwarf *d = fg_xcalloc(1, sizeof(*d));
	bool altlink;

	d->fd = fd;
	d->elf = elf;
	d->image = image;
	*err = elf ? check_sections(elf, &altlink) : -ENOEXEC;
	if (*err)
		goto fail;
	d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		*err = -ENOEXEC;
		goto fail;
	}
	*err = check_strings(elf);
	if (!*err)
		*err = check_units(d->dw);
	if (*err)
		goto fail;
	/* the caller finds the supplementary file: libdw must not look for it itself */
	if (altlink)
		*err = -ENOENT;
	return d;
fail:
	fg_dwarf_free(d);
	return NULL;
}

/* A file whose build-id is `id`, opened safely: the supplementary file. */
static struct fg_dwarf *open_alt(const char *path, const void *id, size_t idlen)
{
	const void *got;
	struct fg_dwarf *a;
	ssize_t n;
	int fd = fg_safeio_open_data(path, FG_ELF_MAX_FILE, NULL), err;
	Elf *elf;

	if (fd < 0)
		return NULL;
	elf = fg_elf_begin_fd(fd);
	n = elf ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	if (n <= 0 || (size_t)n != idlen || memcmp(got, id, idlen) != 0) {
		elf_end(elf);
		close(fd);
		return NULL;
	}
	a = dwarf_new(elf, fd, NULL, &err);
	if (a && err) { /* a supplementary file has none of its own */
		fg_dwarf_free(a);
		a = NULL;
	}
	return a;
}

struct alt_place {
	const void *id;
	size_t idlen;
	struct fg_dwarf *alt;
};

static int try_alt(const char *path, void *arg)
{
	struct alt_place *a = arg;

	a->alt = open_alt(path, a->id, a->idlen);
	return a->alt != NULL;
}

/*
 * Where gdb and libdw look for the file .gnu_debugaltlink names: by build-id,
 * where lib/debugfile.c looks for any debug file by build-id (under `root`,
 * then under /), then by its name, under `root`, relative to the directory of
 * the file that names it.  Last, for a debug file fetched from debuginfod,
 * beside it in the cache, where the supplementary file is fetched with it
 * (lib/debuginfod.c).
 */
static int find_alt(Dwarf *dw, const char *path, const char *root, struct fg_dwarf **alt)
{
	const char *name;
	const void *id;
	char p[PATH_MAX * 2];
	ssize_t idlen = dwelf_dwarf_gnu_debugaltlink(dw, &name, &id);
	struct fg_debug_want w = {.prefix = root};
	struct alt_place a = {0};

	*alt = NULL;
	if (idlen <= 0 || idlen > FG_BUILD_ID_MAX || !name)
		return -ENOEXEC;
	if (!root)
		root = "";
	w.build_id = a.id = id;
	w.build_id_len = a.idlen = (size_t)idlen;
	fg_debugfile_each_place(&w, try_alt, &a);
	*alt = a.alt;
	if (!*alt && name[0] == '/') {
		snprintf(p, sizeof(p), "%s%s", root, name);
		*alt = open_alt(p, id, (size_t)idlen);
	} else if (!*alt && path) {
		const char *slash = strrchr(path, '/');

		snprintf(p, sizeof(p), "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, name);
		*alt = open_alt(p, id, (size_t)idlen);
	}
	if (!*alt && fg_debuginfod_sibling(path, id, (size_t)idlen, p, sizeof(p)))
		*alt = open_alt(p, id, (size_t)idlen);
	if (!*alt)
		return -ENOENT;
	dwarf_setalt(dw, (*alt)->dw);
	return 0;
}

static struct fg_dwarf *finish(struct fg_dwarf *d, int err, const char *path, const char *root)
{
	if (err == -ENOENT && d)
		err = find_alt(d->dw, path, root, &d->alt);
	if (err) {
		fg_dwarf_free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

struct fg_dwarf *fg_dwarf_open_fd(int fd, const char *path, const char *root)
{
	struct fg_dwarf *d;
	Elf *elf;
	int dfd, err;

	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return NULL;
	/* read, not mapped: a file truncated under us must not raise SIGBUS */
	elf = fg_elf_begin_fd(dfd);
	if (!elf) {
		err = errno;
		close(dfd);
		errno = err;
		return NULL;
	}
	d = dwarf_new(elf, dfd, NULL, &err);
	return finish(d, err, path, root);
}

struct fg_dwarf *fg_dwarf_open(const char *path, const char *root)
{
	int fd = fg_safeio_open_data(path, FG_ELF_MAX_FILE, NULL);
	struct fg_dwarf *d;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	d = fg_dwarf_open_fd(fd, path, root);
	int err = errno;
	close(fd);
	errno = err;
	return d;
}

struct fg_dwarf *fg_dwarf_open_mem(const void *image, size_t size)
{
	struct fg_dwarf *d;
	void *copy;
	Elf *elf = fg_elf_memory(image, size, &copy);
	int err;

	if (!elf)
		return NULL;
	d = dwarf_new(elf, -1, copy, &err); /* on failure, copy and elf are freed */
	return finish(d, err, NULL, NULL);
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Compilers that emit no .debug_aranges (clang, rustc) leave dwarf_addrdie
 * without an answer in libdw 0.188: the units' own address ranges, gathered
 * once, sorted, bounded.
 */
static bool cu_by_ranges(struct fg_dwarf *d, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo, alloc = 0;

	if (!d->ranges_built) {
		Dwarf_CU *u = NULL;
		Dwarf_Die cudie;
		uint8_t type;

		d->ranges_built = true;
		while (dwarf_get_units(d->dw, u, &u, NULL, &type, &cudie, NULL) == 0) {
			Dwarf_Addr base, start, end;
			ptrdiff_t off = 0;

			if (type != DW_UT_compile && type != DW_UT_partial)
				continue;
			while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0 &&
			       d->nranges < MAX_CU_RANGES) {
				if (start >= end)
					continue;
				FG_ALLOC_GROW(d->ranges, d->nranges + 1, alloc);
				d->ranges[d->nranges++] = (struct cu_range){
				    .start = start,
				    .end = end,
				    .cu = dwarf_dieoffset(&cudie),
				};
			}
		}
		if (d->nranges)
			qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_range);
	}
	lo = FG_UPPER_BOUND(d->ranges, d->nranges, start, addr);
	return lo > 0 && addr < d->ranges[lo - 1].end &&
	       dwarf_offdie(d->dw, d->ranges[lo - 1].cu, cu);
}

static const char *func_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* the linkage name demangles to the qualified name; else the plain one */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

/* fg_dwarf_lookup, without the memo */
static int lookup(struct fg_dwarf *d, uint64_t addr, struct fg_dwarf_loc *locs, int max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *line;
	Dwarf_Files *files = NULL;
	int nscopes, n = 0;
	const char *file = NULL;
	unsigned lineno = 0;

	if (!dwarf_addrdie(d->dw, addr, &cu) && !cu_by_ranges(d, addr, &cu))
		return 0;
	line = dwarf_getsrc_die(&cu, addr);
	if (line) {
		int l = 0;

		file = dwarf_linesrc(line, NULL, NULL);
		if (dwarf_lineno(line, &l) == 0 && l > 0)
			lineno = (unsigned)l;
	}
	dwarf_getsrcfiles(&cu, &files, NULL);
	nscopes = dwarf_getscopes(&cu, addr, &scopes);
	/*
	 * libdw 0.188 leaks what it had gathered when the walk fails on corrupt
	 * DIEs: such a file is not asked again, so at most one leak per file.
	 */
	if (nscopes < 0)
		d->broken = true;
	/*
	 * Past an inlined instance, dwarf_getscopes continues with the scopes of
	 * its abstract definition; the concrete nesting (the functions it was
	 * inlined into) comes from the scopes holding the innermost instance.
	 */
	for (int i = 0; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die inner = scopes[i], *concrete = NULL;
			int nc = dwarf_getscopes_die(&inner, &concrete);

			if (nc < 0)
				d->broken = true;
			free(scopes);
			scopes = concrete;
			nscopes = nc;
			break;
		}
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
	}
	for (int i = 0; i < nscopes && n < max; i++) {
		Dwarf_Die *sc = &scopes[i];
		int tag = dwarf_tag(sc);
		Dwarf_Attribute attr;
		Dwarf_Word v;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		locs[n].func = func_name(sc);
		locs[n].file = file;
		locs[n].line = lineno;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's position: where this function was inlined */
		file = NULL;
		lineno = 0;
		if (files && dwarf_formudata(dwarf_attr(sc, DW_AT_call_file, &attr), &v) == 0)
			file = dwarf_filesrc(files, (size_t)v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(sc, DW_AT_call_line, &attr), &v) == 0)
			lineno = (unsigned)v;
	}
	free(scopes);
	if (n == 0 && (file || lineno)) {
		locs[0].func = NULL;
		locs[0].file = file;
		locs[0].line = lineno;
		n = 1;
	}
	return n;
}

int fg_dwarf_lookup(struct fg_dwarf *d, uint64_t addr, struct fg_dwarf_loc *locs, int max)
{
	struct fg_dwarf_loc all[FG_DWARF_MAX_INLINE];
	struct memo *m;
	int n;

	if (d && d->broken)
		return -ENOEXEC;
	if (!d || max <= 0)
		return 0;
	if (!d->memo) {
		d->memo = fg_xmalloc(MEMO_SLOTS * sizeof(*d->memo));
		for (size_t i = 0; i < MEMO_SLOTS; i++)
			d->memo[i] = (struct memo){.n = -1};
	}
	m = &d->memo[(addr * 0x9e3779b97f4a7c15ull) >> (64 - MEMO_BITS)];
	if (m->n < 0 || m->addr != addr) {
		n = lookup(d, addr, all, FG_DWARF_MAX_INLINE);
		free(m->locs);
		m->locs = NULL;
		if (n > 0) {
			m->locs = fg_xmalloc((size_t)n * sizeof(*all));
			memcpy(m->locs, all, (size_t)n * sizeof(*all));
		}
		m->addr = addr;
		m->n = n;
	}
	n = m->n < max ? m->n : max;
	if (n > 0)
		memcpy(locs, m->locs, (size_t)n * sizeof(*locs));
	return n;
}

void fg_dwarf_free(struct fg_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	/* set with dwarf_setalt: the main file's dwarf_end leaves it alone */
	fg_dwarf_free(d->alt);
	free(d->ranges);
	for (size_t i = 0; d->memo && i < MEMO_SLOTS; i++)
		free(d->memo[i].locs);
	free(d->memo);
	if (d->elf)
		elf_end(d->elf);
	free(d->image);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
