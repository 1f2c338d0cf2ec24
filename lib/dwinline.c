// SPDX-License-Identifier: BSD-2-Clause
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/debugfile.h"
#include "fg/diag.h"
#include "fg/dwarf.h"
#include "fg/dwinline.h"
#include "fg/elfsyms.h"
#include "fg/hash.h"
#include "fg/safeio.h"
#include "fg/symname.h"

/* the C++ runtime's demangler (libstdc++, which every tool links) */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct dwmod {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct fg_hmap *syms; /* function name (mangled, demangled, demangled without
				 arguments) -> address; built on first use */
	bool fixed;	      /* ET_EXEC: printed addresses are file addresses */
	bool failed_once;
	bool dw_checked, dw_ok; /* the DWARF passed fg_dwarf_guard */
	struct fg_dwarf *alt;	/* its supplementary file, handed to libdw */
};

struct fg_inliner {
	struct fg_hmap *mods; /* path -> struct dwmod *, NULL when the file cannot be used */
	char *debuginfo_path;
	Dwfl_Callbacks cb;
};

/*
 * libdwfl's own callbacks open files by name with a blocking open(2): a FIFO
 * or a device named by a build-id link or a .gnu_debuglink would hang fg-fold
 * or worse.  The main file is handed over as a descriptor; nothing else is
 * opened but through fg_dwarf_open_checked (regular files, within bounds).
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	*elfp = NULL;
	return -1; /* every module is reported with its descriptor */
}

/*
 * Separate debug information, found by lib/debugfile.c (as fg-sym finds it),
 * with DWARF within lib/dwarf.h's bounds.  libdwfl also asks here for the
 * supplementary file of dwz-compressed DWARF: that one is found and checked
 * by fg_dwarf_guard instead.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id = NULL;
	GElf_Addr vaddr, bias;
	GElf_Word crc;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);
	const char *link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &crc) : NULL;
	int idlen = dwfl_module_build_id(mod, &id, &vaddr), fd;
	struct fg_debugfile df;
	struct fg_debug_want w = {
	    .debuglink = debuglink_file,
	    .debuglink_crc = debuglink_crc,
	    .path = file_name,
	    .dwarf_bounds = true,
	};

	(void)userdata, (void)modname, (void)base;
	if (debuglink_file && (!link || strcmp(link, debuglink_file) != 0))
		return -1; /* the supplementary file: see fg_dwarf_guard */
	if (idlen > 0 && idlen <= FG_BUILD_ID_MAX) {
		w.build_id = id;
		w.build_id_len = (size_t)idlen;
	}
	if (fg_debugfile_find(&w, &df) < 0)
		return -1;
	fd = df.fd;
	*debuginfo_file_name = df.path;
	df.fd = -1;
	df.path = NULL;
	fg_debugfile_release(&df);
	return fd;
}

struct fg_inliner *fg_inliner_new(void)
{
	struct fg_inliner *in = fg_xcalloc(1, sizeof(*in));

	in->mods = fg_hmap_new(16);
	in->cb.find_elf = find_elf;
	in->cb.find_debuginfo = find_debuginfo;
	in->cb.section_address = dwfl_offline_section_address;
	in->cb.debuginfo_path = &in->debuginfo_path;
	return in;
}

static void dwmod_free(struct dwmod *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	fg_dwarf_free(m->alt); /* after the Dwarf it was given to */
	fg_hmap_free(m->syms);
	free(m);
}

void fg_inliner_free(struct fg_inliner *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < fg_hmap_count(in->mods); i++)
		dwmod_free(fg_hmap_at(in->mods, i)->val.p);
	fg_hmap_free(in->mods);
	free(in);
}

static struct dwmod *open_mod(struct fg_inliner *in, const char *path)
{
	struct dwmod *m;
	struct fg_elfsyms *e;
	GElf_Addr bias;
	Elf *elf;
	int fd = fg_dwarf_open_checked(path, NULL, 0);

	if (fd < 0)
		return NULL;
	/* libdwfl inflates .gnu_debugdata without a bound: a bomb is refused first */
	e = fg_elfsyms_open_fd(fd);
	if (!e || e->minidebug_err == -EFBIG) {
		fg_elfsyms_free(e);
		close(fd);
		return NULL;
	}
	fg_elfsyms_free(e);
	m = fg_xcalloc(1, sizeof(*m));
	m->dwfl = dwfl_begin(&in->cb);
	if (!m->dwfl) {
		close(fd);
		goto fail;
	}
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_offline(m->dwfl, path, path, fd); /* fd is libdwfl's now */
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		goto fail;
	elf = dwfl_module_getelf(m->mod, &bias);
	if (elf) {
		GElf_Ehdr eh;

		m->fixed = gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
	}
	return m;
fail:
	dwmod_free(m);
	return NULL;
}

static void add_sym(struct fg_hmap *h, const char *name, size_t len, uint64_t addr)
{
	bool ins;
	struct fg_hent *e = fg_hmap_upsert(h, name, len, &ins);

	if (ins)
		e->val.u = addr;
}

static void load_syms(struct dwmod *m)
{
	int n = dwfl_module_getsymtab(m->mod);

	m->syms = fg_hmap_new(n > 0 ? (size_t)n : 16);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name =
			dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);
		int status;

		if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		add_sym(m->syms, name, strlen(name), addr);
		/* a versioned dynamic symbol: "__libc_start_main@@GLIBC_2.34" */
		const char *at = strchr(name, '@');
		if (at)
			add_sym(m->syms, name, (size_t)(at - name), addr);
		if (name[0] == '_' && name[1] == 'Z') {
			char *dm = __cxa_demangle(name, NULL, NULL, &status);

			if (dm && status == 0) {
				size_t len = strlen(dm);

				add_sym(m->syms, dm, len, addr);
				add_sym(m->syms, dm, fg_symname_args_start(dm, len), addr);
			}
			free(dm);
		}
	}
}

static const char *die_name(Dwarf_Die *die, char **to_free)
{
	Dwarf_Attribute at;
	const char *s;
	int status;

	*to_free = NULL;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at)) &&
	    (s = dwarf_formstring(&at))) {
		char *dm = __cxa_demangle(s, NULL, NULL, &status);

		if (dm && status == 0)
			return *to_free = dm;
		free(dm);
		return s;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &at) && (s = dwarf_formstring(&at)))
		return s;
	return "??";
}

static const char *base_name(const char *path)
{
	const char *sl = path ? strrchr(path, '/') : NULL;

	return sl ? sl + 1 : path ? path : "??";
}

int fg_inliner_lookup(struct fg_inliner *in, const char *path, size_t path_len, uint64_t addr,
		      const char *sym, size_t sym_len, uint64_t sym_off, fg_inline_fn cb, void *ctx,
		      bool *first_failure)
{
	bool ins;
	struct fg_hent *e = fg_hmap_upsert(in->mods, path, path_len, &ins);
	struct dwmod *m;
	int r = 0;

	*first_failure = false;
	if (ins) {
		e->val.p = open_mod(in, e->key);
		*first_failure = e->val.p == NULL;
	}
	m = e->val.p;
	if (!m)
		return -ENOENT;

	/* where the frame is in the file */
	uint64_t at;
	struct fg_hent *s = NULL;

	if (sym_len) {
		if (!m->syms)
			load_syms(m);
		s = fg_hmap_get(m->syms, sym, sym_len);
	}
	if (s)
		at = s->val.u + sym_off;
	else if (m->fixed)
		at = addr;
	else
		r = -ESRCH;

	Dwarf_Addr bias;
	if (!r && !m->dw_checked) {
		/* before any DIE is read: bounds, split DWARF, the supplementary file */
		const char *main_file = NULL, *debug_file = NULL;
		Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);

		m->dw_checked = true;
		dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
		m->dw_ok = dw && fg_dwarf_guard(dw, debug_file ? debug_file : main_file, "",
						&m->alt) == 0;
	}
	if (!r && !m->dw_ok)
		r = -ENODATA;
	Dwarf_Die *cu = r ? NULL : dwfl_module_addrdie(m->mod, at, &bias);
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, at - bias, &scopes) : 0;
	if (n < 0)
		m->dw_ok = false; /* corrupt: libdw leaks on this; not asked again */
	if (n > 0) {
		/*
		 * dwarf_getscopes() puts an inlined function's abstract definition after
		 * it; the chain of callers is the concrete DIE's own enclosing scopes
		 */
		Dwarf_Die inner;
		Dwarf_Addr dbias;
		Dwarf *dw = dwfl_module_getdwarf(m->mod, &dbias);

		if (dw && dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner)) {
			free(scopes);
			scopes = NULL;
			n = dwarf_getscopes_die(&inner, &scopes);
			if (n < 0)
				m->dw_ok = false;
		}
	}
	Dwfl_Line *line = cu ? dwfl_module_getsrc(m->mod, at) : NULL;
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;

	if (!r && (n <= 0 || !file))
		r = -ENODATA;
	if (!r)
		dwarf_getsrcfiles(cu, &files, &nfiles);
	int count = 0;
	for (int i = 0; !r && i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		char *to_free;
		Dwarf_Attribute a;
		Dwarf_Word w;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		cb(ctx, die_name(&scopes[i], &to_free), base_name(file), (unsigned)lineno);
		free(to_free);
		count++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller is at this inlined call's site */
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &w) == 0)
			lineno = (int)w;
		if (files &&
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &w) == 0 &&
		    w < nfiles)
			file = dwarf_filesrc(files, w, NULL, NULL);
	}
	if (!r && count == 0)
		r = -ENODATA;
	if (!r)
		r = count;
	free(scopes);
	if (r < 0 && !m->failed_once) {
		m->failed_once = true;
		*first_failure = true;
	}
	return r;
}
