// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include <zlib.h>

#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/radix.h"
#include "fg/util.h"

#define NOTE_GNU "GNU"
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* Symbols at one address: which name to show.  The higher the better. */
static int sym_rank(unsigned bind, const char *name)
{
	int r = 0;

	if (bind == STB_GLOBAL)
		r = 3;
	else if (bind == STB_WEAK)
		r = 2;
	else
		r = 1;
	r *= 4;
	/* fewer leading underscores: "memcpy" over "__memcpy" */
	if (name[0] != '_')
		r += 2;
	else if (name[1] != '_')
		r += 1;
	return r;
}

struct raw_sym {
	uint64_t addr, size;
	size_t name_off;
	int rank;
	size_t name_len;
};

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return x->name_off < y->name_off ? -1 : x->name_off > y->name_off;
}

static void once_init(void)
{
	static int done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = 1;
	}
}

static void read_notes(Elf_Scn *scn, struct fg_elfsyms *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(NOTE_GNU) &&
		    memcmp((char *)d->d_buf + name_off, NOTE_GNU, sizeof(NOTE_GNU)) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= FG_BUILD_ID_MAX && !e->build_id_len) {
			memcpy(e->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
			e->build_id_len = nh.n_descsz;
		}
		if (next <= off)
			break;
		off = next;
	}
}

static void read_debuglink(Elf *elf, Elf_Scn *scn, struct fg_elfsyms *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *s;
	size_t n, crc_off;

	if (!d || !d->d_buf || d->d_size < 6 || e->debuglink)
		return;
	s = d->d_buf;
	n = strnlen(s, d->d_size);
	if (n == 0 || n >= d->d_size || n > 1024 || memchr(s, '/', n))
		return;
	crc_off = (n + 1 + 3) & ~(size_t)3;
	if (crc_off + 4 > d->d_size)
		return;
	/* elf_getdata converted nothing here (bytes): read the CRC in the file's order */
	const unsigned char *c = (const unsigned char *)s + crc_off;
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return;
	if (eh.e_ident[EI_DATA] == ELFDATA2MSB)
		e->debuglink_crc =
		    (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		e->debuglink_crc =
		    (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	e->debuglink = fg_xstrndup(s, n);
}

/* .gnu_debugaltlink: the supplementary file's name, a NUL, then its build-id */
static void read_altlink(Elf_Scn *scn, struct fg_elfsyms *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n, idlen;

	if (!d || !d->d_buf || e->altlink_id_len)
		return;
	n = strnlen(d->d_buf, d->d_size);
	if (n >= d->d_size)
		return;
	idlen = d->d_size - n - 1;
	if (idlen == 0 || idlen > FG_BUILD_ID_MAX)
		return;
	memcpy(e->altlink_id, (const char *)d->d_buf + n + 1, idlen);
	e->altlink_id_len = idlen;
}

/* Symbols gathered from one or more tables, before sorting. */
struct collect {
	struct raw_sym *raw;
	size_t nraw, alloc;
	char *strings;
	size_t len, cap;
};

static int collect_symbols(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, const unsigned char *exec_scn,
			   size_t nscn, struct collect *c)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Shdr strsh;
	size_t n, room;

	if (!d || !sh->sh_entsize)
		return -ENOEXEC;
	n = sh->sh_size / sh->sh_entsize;
	if (n > FG_ELF_MAX_SYMS)
		n = FG_ELF_MAX_SYMS; /* bounded: the rest are not read */
	/*
	 * Room for every symbol and every name at once, rather than grown a
	 * copy at a time: what is not written is never touched (large blocks
	 * are mapped), and libc's debug symbols were copied twice over.
	 */
	if (c->nraw + n > c->alloc) {
		c->alloc = c->nraw + n;
		c->raw = fg_xreallocarray(c->raw, c->alloc, sizeof(*c->raw));
	}
	room = gelf_getshdr(elf_getscn(elf, sh->sh_link), &strsh) ? strsh.sh_size : 0;
	if (room > FG_ELF_MAX_NAMES - c->len)
		room = FG_ELF_MAX_NAMES - c->len;
	if (c->len + room > c->cap) {
		c->cap = c->len + room;
		c->strings = fg_xrealloc(c->strings, c->cap);
	}
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;
		size_t len;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		/* functions, and code labels (assembly entry points such as _start), as perf */
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= nscn || !exec_scn[s.st_shndx] ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name || (type == STT_NOTYPE && (name[0] == '$' || name[0] == '.')))
			continue;
		len = strlen(name);
		if (len > 65536)
			continue;
		if (c->len + len + 1 > FG_ELF_MAX_NAMES)
			break; /* bounded: a hostile table does not take all memory */
		FG_ALLOC_GROW(c->raw, c->nraw + 1, c->alloc);
		if (c->len + len + 1 > c->cap) {
			c->cap = (c->len + len + 1) * 2;
			c->strings = fg_xrealloc(c->strings, c->cap);
		}
		memcpy(c->strings + c->len, name, len + 1);
		c->raw[c->nraw] = (struct raw_sym){
		    .addr = s.st_value,
		    .size = s.st_size,
		    .name_off = c->len,
		    .name_len = len,
		    .rank = sym_rank(GELF_ST_BIND(s.st_info), name) -
			    (type == STT_NOTYPE ? 16 : 0), /* a function's name before a label's */
		};
		c->len += len + 1;
		c->nraw++;
	}
	return 0;
}

/*
 * c->raw in cmp_raw's order: by address (a radix sort, stable), then each
 * run of one address (an alias or two) by insertion.  Equal addresses being
 * in the order gathered, which is name_off's, the order is qsort()'s by
 * cmp_raw, in a fifth of its instructions on libc's debug symbols.
 */
static void sort_raw(struct collect *c)
{
	struct raw_sym *r = c->raw;

	fg_radix_sort(r, c->nraw, sizeof(*r), offsetof(struct raw_sym, addr));
	for (size_t i = 1; i < c->nraw; i++) {
		struct raw_sym x = r[i];
		size_t j = i;

		while (j > 0 && r[j - 1].addr == x.addr && cmp_raw(&r[j - 1], &x) > 0) {
			r[j] = r[j - 1];
			j--;
		}
		r[j] = x;
	}
}

/* Sort what was gathered into e's table, one name per address. */
static void finish_symbols(struct collect *c, struct fg_elfsyms *e)
{
	size_t w = 0, alloc = 0;

	sort_raw(c);
	if (c->len && c->len < c->cap) /* (gives back the room not used; no copy) */
		c->strings = fg_xrealloc(c->strings, c->len);
	e->syms = fg_xcalloc(c->nraw ? c->nraw : 1, sizeof(*e->syms));
	e->strings = c->strings;
	e->strings_len = c->len;
	for (size_t i = 0; i < c->nraw; i++) {
		if (w && e->syms[w - 1].addr == c->raw[i].addr) {
			/* an alias: the best name came first; keep the largest size */
			if (c->raw[i].size > e->syms[w - 1].size)
				e->syms[w - 1].size = c->raw[i].size;
			FG_ALLOC_GROW(e->aliases, e->naliases + 1, alloc);
			e->aliases[e->naliases++] = (struct fg_elf_alias){
			    .addr = c->raw[i].addr,
			    .name = c->strings + c->raw[i].name_off,
			};
			continue;
		}
		e->syms[w].addr = c->raw[i].addr;
		e->syms[w].size = c->raw[i].size;
		e->syms[w].name = c->strings + c->raw[i].name_off;
		e->syms[w].pretty = NULL;
		w++;
	}
	e->nsyms = w;
	free(c->raw);
	*c = (struct collect){0};
}

/* Which sections hold code (symbols elsewhere are not functions); NULL when none can be read. */
static unsigned char *exec_sections(Elf *elf, size_t *nscn, size_t *shstrndx)
{
	unsigned char *exec;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, nscn) < 0 || *nscn > FG_ELF_MAX_SECTIONS ||
	    elf_getshdrstrndx(elf, shstrndx) < 0)
		*nscn = 0;
	exec = fg_xcalloc(*nscn ? *nscn : 1, 1);
	while (*nscn && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		size_t idx = elf_ndxscn(scn);

		if (idx < *nscn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR))
			exec[idx] = 1;
	}
	return exec;
}

/* Decompress an xz image of at most FG_ELF_MAX_MINIDEBUG bytes.  0 or -errno. */
static int unxz(const void *in, size_t in_len, unsigned char **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = in_len * 4 < 65536 ? 65536 : in_len * 4;
	unsigned char *buf;
	lzma_ret r;

	if (cap > FG_ELF_MAX_MINIDEBUG)
		cap = FG_ELF_MAX_MINIDEBUG;
	if (lzma_stream_decoder(&strm, FG_ELF_MAX_MINIDEBUG, 0) != LZMA_OK)
		return -ENOMEM;
	buf = fg_xmalloc(cap);
	strm.next_in = in;
	strm.avail_in = in_len;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		r = lzma_code(&strm, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR)
			goto fail;
		if (strm.avail_out) /* stuck with room left: the input ends too soon */
			goto fail;
		if (cap >= FG_ELF_MAX_MINIDEBUG) {
			r = LZMA_MEMLIMIT_ERROR;
			goto fail;
		}
		size_t done = cap;

		cap = cap * 2 > FG_ELF_MAX_MINIDEBUG ? FG_ELF_MAX_MINIDEBUG : cap * 2;
		buf = fg_xrealloc(buf, cap);
		strm.next_out = buf + done;
		strm.avail_out = cap - done;
	}
	*out_len = (size_t)strm.total_out;
	*out = buf;
	lzma_end(&strm);
	return 0;
fail:
	lzma_end(&strm);
	free(buf);
	return r == LZMA_MEMLIMIT_ERROR ? -EFBIG : -ENOEXEC;
}

/*
 * MiniDebugInfo: an xz-compressed ELF file in .gnu_debugdata whose .symtab
 * holds the functions .dynsym lacks (Fedora's stripped binaries).  Its
 * function symbols join `c`.  0 or -errno.
 */
static int collect_minidebug(Elf_Scn *scn, struct collect *c)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	unsigned char *image, *exec = NULL;
	size_t len, nscn, shstrndx;
	Elf *mini;
	Elf_Scn *s = NULL;
	int err;

	if (!d || !d->d_buf || !d->d_size)
		return -ENOEXEC;
	err = unxz(d->d_buf, d->d_size, &image, &len);
	if (err)
		return err;
	err = fg_elf_precheck(-1, image, len);
	mini = err ? NULL : elf_memory((char *)image, len);
	if (!err)
		err = -ENOEXEC;
	if (!mini || elf_kind(mini) != ELF_K_ELF)
		goto out;
	exec = exec_sections(mini, &nscn, &shstrndx);
	while (nscn && (s = elf_nextscn(mini, s)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(s, &sh) && sh.sh_type == SHT_SYMTAB) {
			err = collect_symbols(mini, s, &sh, exec, nscn, c);
			break;
		}
	}
out:
	free(exec);
	elf_end(mini);
	free(image);
	return err;
}

/* The PLT's entries: 16 bytes each (.plt's first is its header, .plt.sec has none). */
#define PLT_ENTRY 16

/* A relocation of .rela.plt: the GOT slot it fills, the name of what it puts there. */
struct plt_rel {
	uint64_t got;
	size_t name_off; /* in the names, + 1; 0: unnamed */
};

static int cmp_plt_rel(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The name of the symbol `idx` of the symbol table `symscn`, or NULL. */
static const char *dynsym_name(Elf *elf, Elf_Scn *symscn, size_t idx)
{
	Elf_Data *d = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!d || !gelf_getshdr(symscn, &sh) || !sh.sh_entsize ||
	    idx >= sh.sh_size / sh.sh_entsize || !gelf_getsym(d, (int)idx, &sym))
		return NULL;
	return elf_strptr(elf, sh.sh_link, sym.st_name);
}

/*
 * The relocations of .rela.plt, sorted by GOT slot, with their names: a
 * JUMP_SLOT's symbol "NAME@plt", an IRELATIVE's "*ABS*+0xADDEND@plt", as
 * objdump names them.  How many; *names holds the names.
 */
static size_t plt_rels(Elf *elf, Elf_Scn *rela, const GElf_Shdr *rsh, struct plt_rel **rels,
		       char **names)
{
	Elf_Data *rd = elf_getdata(rela, NULL);
	size_t n, k = 0, len = 0, cap = 0;

	*rels = NULL;
	*names = NULL;
	if (!rd || !rsh->sh_entsize)
		return 0;
	n = rsh->sh_size / rsh->sh_entsize;
	if (n > FG_ELF_MAX_SYMS)
		n = FG_ELF_MAX_SYMS;
	*rels = fg_xcalloc(n ? n : 1, sizeof(**rels));
	for (size_t i = 0; i < n; i++) {
		char buf[64];
		const char *name = NULL;
		GElf_Rela r;
		size_t l;

		if (!gelf_getrela(rd, (int)i, &r))
			break;
		if (GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT && GELF_R_SYM(r.r_info)) {
			name =
			    dynsym_name(elf, elf_getscn(elf, rsh->sh_link), GELF_R_SYM(r.r_info));
		} else if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
			snprintf(buf, sizeof(buf), "*ABS*+0x%" PRIx64, (uint64_t)r.r_addend);
			name = buf;
		}
		if (!name || !*name || (l = strnlen(name, 65537)) > 65536)
			continue;
		if (len + l + sizeof("@plt") > FG_ELF_MAX_NAMES)
			break; /* bounded, as the symbols' names are */
		if (len + l + sizeof("@plt") > cap) {
			cap = (len + l + sizeof("@plt")) * 2;
			*names = fg_xrealloc(*names, cap);
		}
		memcpy(*names + len, name, l);
		memcpy(*names + len + l, "@plt", sizeof("@plt"));
		(*rels)[k++] = (struct plt_rel){.got = r.r_offset, .name_off = len + 1};
		len += l + sizeof("@plt");
	}
	if (k)
		qsort(*rels, k, sizeof(**rels), cmp_plt_rel);
	return k;
}

/* .init and .fini: their code, named as the functions DT_INIT and DT_FINI run */
static void init_or_fini(const char *name, const GElf_Shdr *sh, struct fg_elfsyms *e)
{
	const char *fn = strcmp(name, ".init") == 0   ? "_init"
			 : strcmp(name, ".fini") == 0 ? "_fini"
						      : NULL;

	if (!fn || !sh->sh_size || sh->sh_size > 4096 || e->ninitfini == 2)
		return;
	e->initfini[e->ninitfini++] =
	    (struct fg_elf_sym){.addr = sh->sh_addr, .size = sh->sh_size, .name = fn};
}

/*
 * Name the PLT's entries (x86-64) as objdump and perf do: each entry jumps
 * through a GOT slot (`jmp *disp(%rip)`, after an endbr64 or a bnd prefix),
 * and the relocation of .rela.plt that fills that slot names it.  A debug
 * file's sections are NOBITS and give none.
 */
static void read_plt(Elf *elf, const GElf_Ehdr *eh, size_t shstrndx, struct fg_elfsyms *e)
{
	Elf_Scn *scn = NULL, *plt = NULL, *sec = NULL, *rela = NULL, *code;
	GElf_Shdr sh, plt_sh = {0}, sec_sh = {0}, rsh = {0}, *csh;
	struct plt_rel *rels;
	char *names;
	size_t n, nrels;
	Elf_Data *d;

	if (eh->e_machine != EM_X86_64)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_PROGBITS && strcmp(name, ".plt") == 0 && !plt) {
			plt = scn;
			plt_sh = sh;
		} else if (sh.sh_type == SHT_PROGBITS && strcmp(name, ".plt.sec") == 0 && !sec) {
			sec = scn;
			sec_sh = sh;
		} else if (sh.sh_type == SHT_RELA && strcmp(name, ".rela.plt") == 0 && !rela) {
			rela = scn;
			rsh = sh;
		}
	}
	/* with IBT, calls go to .plt.sec; .plt holds the lazy binding's stubs */
	code = sec ? sec : plt;
	csh = sec ? &sec_sh : &plt_sh;
	/* (a static executable's .plt holds 8-byte stubs of IFUNCs: not named, as objdump) */
	if (!code || !rela || csh->sh_entsize != PLT_ENTRY || !(d = elf_getdata(code, NULL)) ||
	    !d->d_buf)
		return;
	n = (d->d_size < csh->sh_size ? d->d_size : csh->sh_size) / PLT_ENTRY;
	if (n > FG_ELF_MAX_SYMS)
		n = FG_ELF_MAX_SYMS;
	nrels = plt_rels(elf, rela, &rsh, &rels, &names);
	if (!n || !nrels) {
		free(rels);
		free(names);
		return;
	}
	e->plt = fg_xcalloc(n, sizeof(*e->plt));
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)d->d_buf + PLT_ENTRY * i;
		struct plt_rel key = {0}, *r = NULL;

		e->plt[i] =
		    (struct fg_elf_sym){.addr = csh->sh_addr + PLT_ENTRY * i, .size = PLT_ENTRY};
		for (size_t j = 0; j + 6 <= PLT_ENTRY; j++) {
			if (p[j] == 0xff && p[j + 1] == 0x25) {
				int32_t disp =
				    (int32_t)((uint32_t)p[j + 2] | (uint32_t)p[j + 3] << 8 |
					      (uint32_t)p[j + 4] << 16 | (uint32_t)p[j + 5] << 24);

				key.got = e->plt[i].addr + j + 6 + (uint64_t)(int64_t)disp;
				r = bsearch(&key, rels, nrels, sizeof(*rels), cmp_plt_rel);
				break;
			}
		}
		if (r)
			e->plt[i].name = names + r->name_off - 1;
	}
	e->nplt = n;
	e->plt_addr = csh->sh_addr;
	e->plt_strings = names;
	free(rels);
}

static struct fg_elfsyms *load(Elf *elf)
{
	struct fg_elfsyms *e;
	GElf_Ehdr eh;
	size_t nscn, shstrndx;
	unsigned char *exec_scn = NULL;
	Elf_Scn *scn, *symtab = NULL, *dynsym = NULL, *minidebug = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	struct collect c = {0};

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		errno = ENOEXEC;
		return NULL;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		errno = ENOEXEC;
		return NULL;
	}
	e = fg_xcalloc(1, sizeof(*e));
	e->shared = eh.e_type == ET_DYN;
	e->nloads = fg_elf_loads(elf, &e->loads);
	exec_scn = exec_sections(elf, &nscn, &shstrndx);
	for (scn = NULL; nscn && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		size_t idx = elf_ndxscn(scn);
		const char *name;

		if (idx >= nscn || !gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE) {
			read_notes(scn, e);
		} else if (sh.sh_type == SHT_PROGBITS) {
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && (sh.sh_flags & SHF_EXECINSTR))
				init_or_fini(name, &sh, e);
			else if (name && strcmp(name, ".gnu_debuglink") == 0)
				read_debuglink(elf, scn, e);
			else if (name && strcmp(name, ".gnu_debugaltlink") == 0)
				read_altlink(scn, e);
			else if (name && strcmp(name, ".gnu_debugdata") == 0 && !minidebug)
				minidebug = scn;
		}
	}
	if (nscn)
		read_plt(elf, &eh, shstrndx, e);
	/* a debug-only file's .symtab is SHT_SYMTAB too; a NOBITS symtab has no entries */
	if (symtab && collect_symbols(elf, symtab, &symtab_sh, exec_scn, nscn, &c) == 0 && c.nraw) {
		finish_symbols(&c, e);
		e->kind = FG_ELF_SYMTAB;
	} else {
		/* no .symtab: .dynsym, with the functions MiniDebugInfo adds */
		c.nraw = 0;
		if (dynsym)
			collect_symbols(elf, dynsym, &dynsym_sh, exec_scn, nscn, &c);
		size_t ndyn = c.nraw;
		if (minidebug)
			e->minidebug_err = collect_minidebug(minidebug, &c);
		bool mini = c.nraw > ndyn;
		finish_symbols(&c, e);
		if (e->nsyms)
			e->kind = mini ? FG_ELF_MINIDEBUG : FG_ELF_DYNSYM;
	}
	free(exec_scn);
	return e;
}

/* pread all of len bytes at off, or from the image: false when they are not all there. */
static bool precheck_read(int fd, const void *image, uint64_t size, uint64_t off, void *buf,
			  size_t len)
{
	if (off > size || size - off < len)
		return false;
	if (image) {
		memcpy(buf, (const unsigned char *)image + off, len);
		return true;
	}
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf = (unsigned char *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return true;
}

/* An integer of the file's byte order, `len` bytes at p. */
static uint64_t precheck_uint(const unsigned char *p, size_t len, bool msb)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len; i++)
		v |= (uint64_t)p[msb ? i : len - 1 - i] << (8 * (len - 1 - i));
	return v;
}

/* ENOEXEC: not ELF (so libelf would give no Elf either); E2BIG: refused */
int fg_elf_precheck(int fd, const void *image, uint64_t size)
{
	unsigned char eh[sizeof(Elf64_Ehdr)], sh0[sizeof(Elf64_Shdr)];
	uint64_t shoff, phoff, nsec, nph, shentsize, phentsize, strndx;
	bool is64, msb;

	if (!precheck_read(fd, image, size, 0, eh, EI_NIDENT) || memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB))
		return -ENOEXEC;
	is64 = eh[EI_CLASS] == ELFCLASS64;
	msb = eh[EI_DATA] == ELFDATA2MSB;
	if (!precheck_read(fd, image, size, 0, eh, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return -E2BIG; /* the magic, and no room for the header */
#define EH(field)                                                                                  \
	precheck_uint(eh + offsetof(Elf64_Ehdr, field), sizeof(((Elf64_Ehdr *)0)->field), msb)
#define EH32(field)                                                                                \
	precheck_uint(eh + offsetof(Elf32_Ehdr, field), sizeof(((Elf32_Ehdr *)0)->field), msb)
	shoff = is64 ? EH(e_shoff) : EH32(e_shoff);
	phoff = is64 ? EH(e_phoff) : EH32(e_phoff);
	nsec = is64 ? EH(e_shnum) : EH32(e_shnum);
	nph = is64 ? EH(e_phnum) : EH32(e_phnum);
	shentsize = is64 ? EH(e_shentsize) : EH32(e_shentsize);
	phentsize = is64 ? EH(e_phentsize) : EH32(e_phentsize);
	strndx = is64 ? EH(e_shstrndx) : EH32(e_shstrndx);
#undef EH
#undef EH32
	if (shoff) {
		size_t want = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);

		/* section 0 holds the counts too large for the header */
		if (shentsize != want || !precheck_read(fd, image, size, shoff, sh0, want))
			return -E2BIG;
#define SH(field)                                                                                  \
	precheck_uint(sh0 + offsetof(Elf64_Shdr, field), sizeof(((Elf64_Shdr *)0)->field), msb)
#define SH32(field)                                                                                \
	precheck_uint(sh0 + offsetof(Elf32_Shdr, field), sizeof(((Elf32_Shdr *)0)->field), msb)
		if (nsec == 0)
			nsec = is64 ? SH(sh_size) : SH32(sh_size);
		if (nph == PN_XNUM)
			nph = is64 ? SH(sh_info) : SH32(sh_info);
		if (strndx == SHN_XINDEX)
			strndx = is64 ? SH(sh_link) : SH32(sh_link);
#undef SH
#undef SH32
		if (nsec > FG_ELF_MAX_SECTIONS || nsec * shentsize > size - shoff ||
		    (nsec && strndx >= nsec))
			return -E2BIG;
	}
	if (nph) {
		if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
		    nph > FG_ELF_MAX_PHDRS || phoff > size || nph * phentsize > size - phoff)
			return -E2BIG;
	}
	return 0;
}

struct Elf *fg_elf_begin_fd(int fd)
{
	struct stat st;
	Elf *elf;

	once_init();
	if (fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	if ((uint64_t)st.st_size > FG_ELF_MAX_FILE) {
		errno = EFBIG;
		return NULL;
	}
	/* the headers first: libelf allocates for every section they claim */
	int err = fg_elf_precheck(fd, NULL, (uint64_t)st.st_size);

	if (err) {
		errno = -err;
		return NULL;
	}
	/*
	 * ELF_C_READ, not a mapping: libelf reads what it needs with pread, so a
	 * file truncated under us gives a read error rather than SIGBUS.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		errno = ENOEXEC;
	return elf;
}

struct fg_elfsyms *fg_elfsyms_open_fd(int fd)
{
	struct fg_elfsyms *e;
	Elf *elf = fg_elf_begin_fd(fd);

	if (!elf)
		return NULL;
	e = load(elf);
	int err = errno;
	elf_end(elf);
	errno = err;
	return e;
}

struct Elf *fg_elf_memory(const void *image, size_t size, void **copy)
{
	Elf *elf;

	once_init();
	*copy = NULL;
	if (size > FG_ELF_MAX_FILE) {
		errno = EFBIG;
		return NULL;
	}
	*copy = fg_xmalloc(size ? size : 1);
	memcpy(*copy, image, size);
	/* checked in the copy: the image may be shared with its owner */
	int err = fg_elf_precheck(-1, *copy, size);

	if (err) {
		free(*copy);
		*copy = NULL;
		errno = -err;
		return NULL;
	}
	elf = elf_memory(*copy, size);
	if (!elf) {
		free(*copy);
		*copy = NULL;
		errno = ENOEXEC;
	}
	return elf;
}

struct fg_elfsyms *fg_elfsyms_open_mem(const void *image, size_t size)
{
	struct fg_elfsyms *e;
	void *copy;
	Elf *elf = fg_elf_memory(image, size, &copy);

	if (!elf)
		return NULL;
	e = load(elf);
	int err = errno;
	elf_end(elf);
	free(copy);
	errno = err;
	return e;
}

static void free_symbols(struct fg_elfsyms *e)
{
	for (size_t i = 0; i < e->nsyms; i++)
		free(e->syms[i].pretty);
	free(e->syms);
	free(e->aliases);
	free(e->strings);
	e->syms = NULL;
	e->aliases = NULL;
	e->strings = NULL;
	e->nsyms = 0;
	e->naliases = 0;
	e->kind = FG_ELF_NOSYMS;
}

void fg_elfsyms_free(struct fg_elfsyms *e)
{
	if (!e)
		return;
	free_symbols(e);
	for (size_t i = 0; i < e->nplt; i++)
		free(e->plt[i].pretty);
	for (size_t i = 0; i < e->ninitfini; i++)
		free(e->initfini[i].pretty);
	free(e->plt);
	free(e->plt_strings);
	free(e->loads);
	free(e->debuglink);
	free(e);
}

void fg_elfsyms_adopt(struct fg_elfsyms *e, struct fg_elfsyms *debug)
{
	if (!debug || debug->kind < e->kind || !debug->nsyms ||
	    (debug->kind == e->kind && debug->nsyms <= e->nsyms))
		return;
	free_symbols(e);
	e->syms = debug->syms;
	e->nsyms = debug->nsyms;
	e->aliases = debug->aliases;
	e->naliases = debug->naliases;
	e->strings = debug->strings;
	e->strings_len = debug->strings_len;
	e->kind = debug->kind;
	debug->syms = NULL;
	debug->aliases = NULL;
	debug->strings = NULL;
	debug->nsyms = 0;
	debug->naliases = 0;
	debug->kind = FG_ELF_NOSYMS;
}

size_t fg_elf_loads(Elf *elf, struct fg_elf_load **loads)
{
	size_t nphdr, n = 0;

	*loads = NULL;
	if (elf_getphdrnum(elf, &nphdr) < 0)
		return 0;
	for (size_t i = 0; i < nphdr && i < 4096 && n < FG_ELF_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		*loads = fg_xreallocarray(*loads, n + 1, sizeof(**loads));
		(*loads)[n++] = (struct fg_elf_load){
		    .vaddr = ph.p_vaddr,
		    .memsz = ph.p_memsz,
		    .offset = ph.p_offset,
		    .filesz = ph.p_filesz,
		    .flags = ph.p_flags,
		};
	}
	return n;
}

/* Sets the value of each name of syms[0..n) not found yet that symbol i of table d names. */
static size_t named_match(Elf *elf, Elf_Data *d, size_t strndx, size_t i, struct fg_elf_named *syms,
			  size_t n)
{
	GElf_Sym sym;
	const char *name;
	size_t found = 0;

	if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_name)
		return 0;
	name = elf_strptr(elf, strndx, sym.st_name);
	for (size_t k = 0; name && k < n; k++)
		if (!syms[k].found && strcmp(name, syms[k].name) == 0) {
			syms[k].value = sym.st_value;
			syms[k].found = true;
			found++;
		}
	return found;
}

/* The symbol table of section `scn`, every symbol: how many names of syms it found. */
static size_t named_scan(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct fg_elf_named *syms,
			 size_t n, size_t found)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t nsym, got = 0;

	if (!d || !sh->sh_entsize)
		return 0;
	nsym = sh->sh_size / sh->sh_entsize;
	if (nsym > FG_ELF_MAX_SYMS)
		nsym = FG_ELF_MAX_SYMS;
	for (size_t i = 1; i < nsym && found + got < n; i++)
		got += named_match(elf, d, sh->sh_link, i, syms, n);
	return got;
}

/* The GNU hash of a symbol's name (the dynamic linker's dl_new_hash). */
static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

/*
 * The names of syms looked up in .dynsym through the GNU hash table `hash`
 * (sh: its header): a header of 4 words (buckets, the first symbol hashed,
 * the Bloom filter's words, its shift), the filter, a bucket of 4 bytes for
 * each hash modulo the buckets (the first symbol of its chain), then one
 * word a symbol from the first hashed: its hash, the low bit set on the
 * last of a chain.  Every index is checked against the sections' sizes, so
 * a hostile table finds nothing or a symbol of the table; false when the
 * table cannot be used (then .dynsym is scanned).
 */
static bool named_hashed(Elf *elf, Elf_Scn *hash, const GElf_Shdr *sh, struct fg_elf_named *syms,
			 size_t n, size_t *found)
{
	Elf_Scn *dscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *h = elf_getdata(hash, NULL), *d;
	GElf_Shdr dsh;
	uint32_t head[4];
	size_t word = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4, nsym, nchain, off;

	if (!h || !h->d_buf || h->d_size < sizeof(head) || !dscn || !gelf_getshdr(dscn, &dsh) ||
	    dsh.sh_type != SHT_DYNSYM || !dsh.sh_entsize || !(d = elf_getdata(dscn, NULL)))
		return false;
	memcpy(head, h->d_buf, sizeof(head));
	nsym = dsh.sh_size / dsh.sh_entsize;
	/* the buckets, then the chains, within the section */
	off = sizeof(head) + (size_t)head[2] * word;
	if (!head[0] || head[2] > h->d_size / word || off > h->d_size ||
	    head[0] > (h->d_size - off) / 4 || head[1] > nsym)
		return false;
	nchain = (h->d_size - off - (size_t)head[0] * 4) / 4;
	for (size_t k = 0; k < n; k++) {
		uint32_t want, i, v;

		if (syms[k].found)
			continue;
		want = gnu_hash(syms[k].name);
		memcpy(&i, (const char *)h->d_buf + off + (size_t)(want % head[0]) * 4, 4);
		if (!i)
			continue; /* an empty bucket: no such name */
		for (; i >= head[1] && i < nsym && i - head[1] < nchain; i++) {
			memcpy(&v,
			       (const char *)h->d_buf + off + (size_t)head[0] * 4 +
				   (size_t)(i - head[1]) * 4,
			       4);
			if ((v | 1) == (want | 1))
				*found += named_match(elf, d, dsh.sh_link, i, &syms[k], 1);
			if (syms[k].found || v & 1)
				break;
		}
	}
	return true;
}

size_t fg_elf_named_symbols(Elf *elf, struct fg_elf_named *syms, size_t n, size_t need)
{
	Elf_Scn *dynsym = NULL, *symtab = NULL, *hash = NULL;
	GElf_Shdr dsh, ssh, hsh;
	size_t found = 0;
	bool hashed = false;

	for (size_t k = 0; k < n; k++)
		syms[k].found = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn, dsh = sh;
		else if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn, ssh = sh;
		else if (sh.sh_type == SHT_GNU_HASH && !hash)
			hash = scn, hsh = sh;
	}
	if (hash)
		hashed = named_hashed(elf, hash, &hsh, syms, n, &found);
	if (dynsym && !hashed)
		found += named_scan(elf, dynsym, &dsh, syms, n, found);
	for (size_t k = 0; k < need && k < n; k++)
		if (!syms[k].found) {
			if (symtab)
				found += named_scan(elf, symtab, &ssh, syms, n, found);
			break;
		}
	return found;
}

bool fg_elf_offset_to_addr(const struct fg_elf_load *loads, size_t n, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < n; i++) {
		const struct fg_elf_load *l = &loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*addr = off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

bool fg_elfsyms_offset_to_addr(const struct fg_elfsyms *e, uint64_t off, uint64_t *addr)
{
	return fg_elf_offset_to_addr(e->loads, e->nloads, off, addr);
}

static struct fg_elf_sym *symbol_at(const struct fg_elfsyms *e, uint64_t addr)
{
	size_t lo = FG_UPPER_BOUND(e->syms, e->nsyms, addr, addr);
	struct fg_elf_sym *s;

	if (lo == 0)
		return NULL;
	s = &e->syms[lo - 1];
	if (s->size)
		return addr - s->addr < s->size ? s : NULL;
	/* no size: up to the next symbol, within reason */
	if (lo < e->nsyms)
		return addr < e->syms[lo].addr ? s : NULL;
	return addr - s->addr < 4096 ? s : NULL;
}

struct fg_elf_sym *fg_elfsyms_lookup(const struct fg_elfsyms *e, uint64_t addr)
{
	struct fg_elf_sym *s;

	if (addr >= e->plt_addr && (addr - e->plt_addr) / PLT_ENTRY < e->nplt &&
	    e->plt[(addr - e->plt_addr) / PLT_ENTRY].name)
		return &e->plt[(addr - e->plt_addr) / PLT_ENTRY];
	if ((s = symbol_at(e, addr)) != NULL)
		return s;
	for (size_t i = 0; i < e->ninitfini; i++) {
		s = (struct fg_elf_sym *)&e->initfini[i];
		if (addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

void fg_build_id_hex(const uint8_t *id, size_t len, char *buf, bool slash)
{
	static const char digits[] = "0123456789abcdef";
	char *p = buf;

	for (size_t i = 0; i < len; i++) {
		*p++ = digits[id[i] >> 4];
		*p++ = digits[id[i] & 15];
		if (slash && i == 0)
			*p++ = '/';
	}
	*p = '\0';
}

int fg_elf_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t total = 0;
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		c = crc32(c, buf, (uInt)r);
		off += r;
		total += (uint64_t)r;
		if (total > FG_ELF_MAX_FILE)
			return -EFBIG;
	}
	*crc = (uint32_t)c;
	return 0;
}
