// SPDX-License-Identifier: BSD-2-Clause
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"

struct fg_dwarf {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

struct fg_dwarf *fg_dwarf_open_fd(int fd)
{
	struct fg_dwarf *d;
	int dfd;

	elf_version(EV_CURRENT);
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return NULL;
	d = fg_xcalloc(1, sizeof(*d));
	d->fd = dfd;
	/* read, not mapped: a file truncated under us must not raise SIGBUS */
	d->elf = elf_begin(dfd, ELF_C_READ, NULL);
	if (d->elf)
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		fg_dwarf_free(d);
		return NULL;
	}
	return d;
}

struct fg_dwarf *fg_dwarf_open(const char *path)
{
	int fd = fg_open_regular(path, FG_ELF_MAX_FILE, NULL);
	struct fg_dwarf *d;

	if (fd < 0)
		return NULL;
	d = fg_dwarf_open_fd(fd);
	close(fd);
	return d;
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

int fg_dwarf_lookup(struct fg_dwarf *d, uint64_t addr, struct fg_dwarf_loc *locs, int max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *line;
	Dwarf_Files *files = NULL;
	int nscopes, n = 0;
	const char *file = NULL;
	unsigned lineno = 0;

	if (!d || max <= 0 || !dwarf_addrdie(d->dw, addr, &cu))
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
	 * Past an inlined instance, dwarf_getscopes continues with the scopes of
	 * its abstract definition; the concrete nesting (the functions it was
	 * inlined into) comes from the scopes holding the innermost instance.
	 */
	for (int i = 0; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die inner = scopes[i], *concrete = NULL;
			int nc = dwarf_getscopes_die(&inner, &concrete);

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
	if (n == 0 && (file || lineno) && max > 0) {
		locs[0].func = NULL;
		locs[0].file = file;
		locs[0].line = lineno;
		n = 1;
	}
	return n;
}

void fg_dwarf_free(struct fg_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
