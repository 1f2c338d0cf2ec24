// SPDX-License-Identifier: BSD-2-Clause
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fg/elfsyms.h"
#include "fg/procmaps.h"
#include "fg/safeio.h"
#include "unit.h"

__attribute__((noinline)) void unit_known_function(void);
__attribute__((noinline)) void unit_known_function(void)
{
	__asm__ volatile("" ::: "memory");
}
/* a data object and a thread-local one, for fg_elf_named_symbols */
int unit_known_data[4] = {1, 2, 3, 4};
__thread int unit_known_tls = 5;

/* another name of it: kept among the aliases */
void unit_known_function_alias(void) __attribute__((alias("unit_known_function")));

struct find {
	uintptr_t addr;
	struct fg_procmap m;
	char path[4096];
	bool found;
};

static int find_fn(const struct fg_procmap *m, void *arg)
{
	struct find *f = arg;

	if (f->addr >= m->start && f->addr < m->end) {
		f->m = *m;
		snprintf(f->path, sizeof(f->path), "%s", m->path);
		f->found = true;
		return 1;
	}
	return 0;
}

/* The file offset of one of our own functions, as /proc/self/maps says. */
static int self_offset(uintptr_t addr, uint64_t *off, char *path, size_t len)
{
	struct find f = {.addr = addr};
	char *data;
	size_t n;

	if (fg_safeio_read_file("/proc/self/maps", 1 << 24, &data, &n) < 0)
		return -1;
	fg_procmaps_parse(data, n, find_fn, &f, NULL);
	free(data);
	if (!f.found)
		return -1;
	*off = addr - f.m.start + f.m.pgoff;
	snprintf(path, len, "%s", f.path);
	return 0;
}

TEST(elfsyms_names_our_own_function)
{
	char path[4096];
	uint64_t off, addr;
	struct fg_elfsyms *e;
	struct fg_elf_sym *s;
	int fd;

	CHECK(self_offset((uintptr_t)unit_known_function, &off, path, sizeof(path)) == 0);
	fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	CHECK(fd >= 0);
	e = fg_elfsyms_open_fd(fd);
	close(fd);
	CHECK(e);
	CHECK_INT(e->kind, FG_ELF_SYMTAB);
	CHECK(e->nloads > 0);
	CHECK(fg_elfsyms_offset_to_addr(e, off, &addr));
	s = fg_elfsyms_lookup(e, addr);
	CHECK(s);
	CHECK_STR(s->name, "unit_known_function");
	CHECK(addr == s->addr);
	bool alias = false;
	for (size_t i = 0; i < e->naliases; i++)
		if (strcmp(e->aliases[i].name, "unit_known_function_alias") == 0)
			alias = e->aliases[i].addr == addr;
	CHECK(alias);
	/* nothing before the first function, nothing far past the last */
	CHECK(fg_elfsyms_lookup(e, 0) == NULL);
	CHECK(fg_elfsyms_lookup(e, UINT64_MAX) == NULL);
	fg_elfsyms_free(e);
	fg_elfsyms_free(NULL);
}

/* Data and TLS symbols by name, which the function table leaves out. */
TEST(elf_named_symbols_finds_data_and_tls)
{
	struct fg_elf_named v[] = {
	    {.name = "unit_known_data"},
	    {.name = "unit_known_tls"},
	    {.name = "unit_no_such_symbol"},
	    {.name = "unit_known_function"},
	};
	uint64_t off, addr;
	char path[4096];
	struct fg_elf_load *loads;
	struct Elf *elf;
	size_t n;
	int fd;

	fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	CHECK(fd >= 0);
	elf = fg_elf_begin_fd(fd);
	CHECK(elf);
	CHECK_INT(fg_elf_named_symbols(elf, v, 4, 4), 3);
	CHECK(v[0].found && v[1].found && !v[2].found && v[3].found);
	/* the data symbol is where the program's own pointer to it says, after the load bias */
	n = fg_elf_loads(elf, &loads);
	CHECK(self_offset((uintptr_t)unit_known_function, &off, path, sizeof(path)) == 0);
	CHECK(fg_elf_offset_to_addr(loads, n, off, &addr));
	CHECK((uintptr_t)unit_known_data - v[0].value == (uintptr_t)unit_known_function - addr);
	/* a TLS symbol's value is its offset in the file's TLS block: small */
	CHECK(v[1].value < 4096);
	free(loads);
	elf_end(elf);
	close(fd);
}

/* With need 0, .symtab is not read: our data symbol is in .symtab alone. */
TEST(elf_named_symbols_reads_symtab_only_when_needed)
{
	struct fg_elf_named v[] = {{.name = "unit_known_data"}};
	struct Elf *elf;
	int fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);

	CHECK(fd >= 0);
	elf = fg_elf_begin_fd(fd);
	CHECK(elf);
	CHECK_INT(fg_elf_named_symbols(elf, v, 1, 0), 0);
	CHECK(!v[0].found);
	CHECK_INT(fg_elf_named_symbols(elf, v, 1, 1), 1);
	CHECK(v[0].found && v[0].value);
	elf_end(elf);
	close(fd);
}

/*
 * libc's exported names, each looked up alone through .gnu.hash, give what a
 * scan of .dynsym gives (names defined twice, at two versions, left out);
 * `image` may be spoiled first, and then nothing found may be wrong.
 */
static size_t libc_names_agree(const void *image, size_t len, void (*spoil)(Elf *), size_t *bad)
{
	void *copy;
	Elf *elf = fg_elf_memory(image, len, &copy);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d = NULL;
	size_t found = 0;

	*bad = 0;
	if (!elf)
		return 0;
	if (spoil)
		spoil(elf);
	while ((scn = elf_nextscn(elf, scn)) &&
	       (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM))
		;
	if (scn)
		d = elf_getdata(scn, NULL);
	for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym, other;
		const char *name;
		struct fg_elf_named v;
		size_t same = 0;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_name)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		for (size_t j = 1; j < sh.sh_size / sh.sh_entsize; j++)
			if (gelf_getsym(d, (int)j, &other) && other.st_name &&
			    other.st_shndx != SHN_UNDEF &&
			    strcmp(elf_strptr(elf, sh.sh_link, other.st_name), name) == 0)
				same++;
		if (same != 1)
			continue;
		v = (struct fg_elf_named){.name = name};
		if (fg_elf_named_symbols(elf, &v, 1, 0) == 1 && v.value == sym.st_value)
			found++;
		else if (v.found)
			(*bad)++;
	}
	elf_end(elf);
	free(copy);
	return found;
}

static void *libc_image(size_t *len)
{
	char path[4096];
	uint64_t off;
	char *data;

	if (self_offset((uintptr_t)&getpid, &off, path, sizeof(path)) < 0 ||
	    fg_safeio_read_file(path, 1 << 26, &data, len) < 0)
		return NULL;
	return data;
}

/* The GNU hash table's first bucket word, and the first chain word, of `elf`'s .gnu.hash. */
static uint32_t *gnu_hash_words(Elf *elf, size_t *nbuckets, size_t *nchain)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	uint32_t *w;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH)
			break;
	if (!scn || !(d = elf_getdata(scn, NULL)))
		return NULL;
	w = d->d_buf;
	*nbuckets = w[0];
	*nchain = (d->d_size - 16 - (size_t)w[2] * sizeof(long)) / 4 - w[0];
	return w + 4 + w[2] * sizeof(long) / 4;
}

/* every bucket past the end of .dynsym */
static void spoil_buckets(Elf *elf)
{
	size_t nb, nc;
	uint32_t *b = gnu_hash_words(elf, &nb, &nc);

	for (size_t i = 0; b && i < nb; i++)
		b[i] = 0xfffffff0u;
}

/* no chain ends: each walk runs to the end of the table */
static void spoil_chain_ends(Elf *elf)
{
	size_t nb, nc;
	uint32_t *b = gnu_hash_words(elf, &nb, &nc);

	for (size_t i = 0; b && i < nc; i++)
		b[nb + i] &= ~1u;
}

/* Names found by hash as a scan finds them; a spoilt table finds nothing wrong, and ends. */
TEST(elf_named_symbols_by_gnu_hash)
{
	size_t len, bad, all;
	void *image = libc_image(&len);

	CHECK(image);
	all = libc_names_agree(image, len, NULL, &bad);
	CHECK(all > 1000);
	CHECK_INT(bad, 0);
	CHECK_INT(libc_names_agree(image, len, spoil_buckets, &bad), 0);
	CHECK_INT(bad, 0);
	/* a chain that does not end still finds its names, by their hash and name */
	CHECK_INT(libc_names_agree(image, len, spoil_chain_ends, &bad), all);
	CHECK_INT(bad, 0);
	free(image);
}

/* Our own PLT: each entry named after the symbol its GOT slot is bound to, 16 bytes. */
TEST(elfsyms_names_plt_entries)
{
	struct fg_elfsyms *e;
	const struct fg_elf_sym *close_plt = NULL;
	size_t named = 0;
	int fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);

	CHECK(fd >= 0);
	e = fg_elfsyms_open_fd(fd);
	close(fd);
	CHECK(e);
	CHECK(e->nplt > 1);
	/* .plt's first 16 bytes are its header, no entry */
	CHECK(e->plt[0].name == NULL);
	for (size_t i = 0; i < e->nplt; i++) {
		const struct fg_elf_sym *p = &e->plt[i];

		CHECK(p->addr == e->plt_addr + 16 * i && p->size == 16);
		if (!p->name)
			continue;
		named++;
		CHECK(strlen(p->name) > 4 && strcmp(p->name + strlen(p->name) - 4, "@plt") == 0);
		CHECK(fg_elfsyms_lookup(e, p->addr) == p);
		CHECK(fg_elfsyms_lookup(e, p->addr + 15) == p);
		if (strcmp(p->name, "close@plt") == 0)
			close_plt = p;
	}
	CHECK(named + 1 == e->nplt);
	CHECK(close_plt);
	fg_elfsyms_free(e);
}

/* The address and size of section `want` of an ELF64 image, and its header's index. */
static int section_of(const char *data, size_t len, const char *want, Elf64_Shdr *out)
{
	const Elf64_Ehdr *eh = (const void *)data;
	const Elf64_Shdr *sh = (const void *)(data + eh->e_shoff);
	const char *names;

	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len ||
	    eh->e_shstrndx >= eh->e_shnum)
		return -1;
	names = data + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, want) == 0) {
			*out = sh[i];
			return i;
		}
	}
	return -1;
}

TEST(elfsyms_names_init_and_fini_of_a_stripped_file)
{
	struct fg_elfsyms *e;
	struct fg_elf_sym *s;
	Elf64_Shdr init, fini, symtab;
	Elf64_Shdr *shdrs;
	char *data;
	size_t len;
	int i;

	/* this program, its .symtab gone as strip(1) leaves it: .dynsym names no _init */
	CHECK(fg_safeio_read_file("/proc/self/exe", 64u << 20, &data, &len) == 0);
	CHECK(section_of(data, len, ".init", &init) > 0);
	CHECK(section_of(data, len, ".fini", &fini) > 0);
	e = fg_elfsyms_open_mem(data, len);
	CHECK(e && e->kind == FG_ELF_SYMTAB);
	s = fg_elfsyms_lookup(e, init.sh_addr);
	CHECK(s && strcmp(s->name, "_init") == 0); /* .symtab's own */
	fg_elfsyms_free(e);
	i = section_of(data, len, ".symtab", &symtab);
	CHECK(i > 0);
	shdrs = (Elf64_Shdr *)(data + ((Elf64_Ehdr *)data)->e_shoff);
	shdrs[i].sh_type = SHT_NULL;
	e = fg_elfsyms_open_mem(data, len);
	CHECK(e && e->kind < FG_ELF_SYMTAB); /* .dynsym's, or none */
	s = fg_elfsyms_lookup(e, init.sh_addr);
	CHECK(s && strcmp(s->name, "_init") == 0 && s->addr == init.sh_addr);
	CHECK(fg_elfsyms_lookup(e, init.sh_addr + init.sh_size - 1) == s);
	s = fg_elfsyms_lookup(e, fini.sh_addr + 1);
	CHECK(s && strcmp(s->name, "_fini") == 0 && s->size == fini.sh_size);
	/* past .fini's end: not _fini */
	s = fg_elfsyms_lookup(e, fini.sh_addr + fini.sh_size);
	CHECK(!s || strcmp(s->name, "_fini") != 0);
	fg_elfsyms_free(e);
	free(data);
}

/* Every prefix of a real ELF file and many corrupted copies: errors, never crashes. */
TEST(elfsyms_survives_truncation_and_corruption)
{
	char *data;
	size_t len;
	unsigned seed = 12345;

	CHECK(fg_safeio_read_file("/proc/self/exe", 64u << 20, &data, &len) == 0);
	for (size_t cut = 0; cut < len; cut += cut < 4096 ? 61 : 4093) {
		struct fg_elfsyms *e = fg_elfsyms_open_mem(data, cut);

		if (e) {
			for (size_t i = 0; i < e->nsyms; i++)
				CHECK(e->syms[i].name && e->syms[i].name[0]);
			fg_elfsyms_lookup(e, 0x1000);
			fg_elfsyms_free(e);
		}
	}
	for (int round = 0; round < 200; round++) {
		char *copy = malloc(len);

		memcpy(copy, data, len);
		for (int k = 0; k < 16; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 4) % (round < 100 ? 4096 : len);
			copy[at] = (char)(seed >> 20);
		}
		/* through a real descriptor, as fg-sym reads files */
		int fd = memfd_create("elf", MFD_CLOEXEC);
		CHECK(fd >= 0);
		CHECK(write(fd, copy, len) == (ssize_t)len);
		struct fg_elfsyms *e = fg_elfsyms_open_fd(fd);
		if (e) {
			uint64_t a;

			fg_elfsyms_offset_to_addr(e, 0x1000, &a);
			fg_elfsyms_lookup(e, 0x1000);
		}
		fg_elfsyms_free(e);
		close(fd);
		free(copy);
	}
	free(data);
}

TEST(elfsyms_not_elf)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";

	errno = 0;
	CHECK(fg_elfsyms_open_mem(text, sizeof(text)) == NULL);
	CHECK_INT(errno, ENOEXEC);
	CHECK(fg_elfsyms_open_mem(text, 0) == NULL);
}

/* A memfd of `size` bytes (sparse): an ELF header, section 0 at shoff; -1 on failure. */
static int sparse_elf(const Elf64_Ehdr *eh, const Elf64_Shdr *sh0, uint64_t size)
{
	int fd = memfd_create("elf", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
	    pwrite(fd, eh, sizeof(*eh), 0) != (ssize_t)sizeof(*eh) ||
	    (sh0 && pwrite(fd, sh0, sizeof(*sh0), (off_t)eh->e_shoff) != (ssize_t)sizeof(*sh0))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* fg_elf_precheck of such a file */
static int precheck_of(const Elf64_Ehdr *eh, const Elf64_Shdr *sh0, uint64_t size)
{
	int fd = sparse_elf(eh, sh0, size), r;

	if (fd < 0)
		return -EIO;
	r = fg_elf_precheck(fd, NULL, size);
	close(fd);
	return r;
}

TEST(elf_precheck_refuses_what_libelf_would_allocate_for)
{
	Elf64_Ehdr eh = {
	    .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
	    .e_type = ET_DYN,
	    .e_machine = EM_X86_64,
	    .e_version = EV_CURRENT,
	    .e_ehsize = sizeof(Elf64_Ehdr),
	    .e_shoff = 8192,
	    .e_shentsize = sizeof(Elf64_Shdr)};
	Elf64_Shdr sh0 = {.sh_size = 16u << 20}; /* the extended count: 16 million sections */
	uint64_t size = 1ull << 30;		 /* room for all their headers */
	struct rusage before, after;
	char *data;
	size_t len;
	int fd;

	/* our own executable passes, from a descriptor and from memory */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(fg_safeio_read_file("/proc/self/exe", 64u << 20, &data, &len) == 0);
	CHECK_INT(fg_elf_precheck(fd, NULL, len), 0);
	CHECK_INT(fg_elf_precheck(-1, data, len), 0);
	close(fd);
	/* not ELF */
	CHECK_INT(fg_elf_precheck(-1, "#!/bin/sh\n", 10), -ENOEXEC);
	CHECK_INT(fg_elf_precheck(-1, data, 3), -ENOEXEC);
	/* ELF, and cut inside its header */
	CHECK_INT(fg_elf_precheck(-1, data, 40), -E2BIG);
	free(data);

	/* 16 million sections in a sparse GiB: refused at once, nothing allocated */
	getrusage(RUSAGE_SELF, &before);
	fd = sparse_elf(&eh, &sh0, size);
	CHECK(fd >= 0);
	CHECK_INT(fg_elf_precheck(fd, NULL, size), -E2BIG);
	errno = 0;
	CHECK(fg_elfsyms_open_fd(fd) == NULL);
	CHECK_INT(errno, E2BIG);
	getrusage(RUSAGE_SELF, &after);
	CHECK(after.ru_maxrss - before.ru_maxrss < 16 * 1024); /* KiB */
	close(fd);
	/* the bound itself passes, one more is refused */
	sh0.sh_size = FG_ELF_MAX_SECTIONS;
	CHECK_INT(precheck_of(&eh, &sh0, size), 0);
	sh0.sh_size = FG_ELF_MAX_SECTIONS + 1;
	CHECK_INT(precheck_of(&eh, &sh0, size), -E2BIG);
	/* a section header table beyond the end of the file */
	sh0.sh_size = 1000;
	CHECK_INT(precheck_of(&eh, &sh0, 8192 + 999 * sizeof(Elf64_Shdr)), -E2BIG);
	CHECK_INT(fg_elf_precheck(-1, &eh, sizeof(eh)), -E2BIG); /* section 0 itself missing */
	/* section headers of another size than the class's */
	eh.e_shentsize = 32;
	CHECK_INT(precheck_of(&eh, &sh0, size), -E2BIG);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	/* the section name table beyond the sections (SHN_XINDEX: section 0's sh_link) */
	eh.e_shstrndx = SHN_XINDEX;
	sh0.sh_link = 1000;
	CHECK_INT(precheck_of(&eh, &sh0, size), -E2BIG);
	eh.e_shstrndx = 0;
	/* program headers: PN_XNUM and a count in section 0's sh_info, over the bound */
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = PN_XNUM;
	sh0.sh_info = 10u << 20;
	CHECK_INT(precheck_of(&eh, &sh0, size), -E2BIG);
	/* within the bound, but beyond the end of the file */
	eh.e_phnum = 100;
	fd = sparse_elf(&eh, &sh0, 8192 + 1000 * sizeof(Elf64_Shdr));
	CHECK(fd >= 0);
	CHECK_INT(fg_elf_precheck(fd, NULL, 8192 + 1000 * sizeof(Elf64_Shdr)), 0);
	eh.e_phoff = 8192 + 1000 * sizeof(Elf64_Shdr) - 99 * sizeof(Elf64_Phdr);
	CHECK(pwrite(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh));
	CHECK_INT(fg_elf_precheck(fd, NULL, 8192 + 1000 * sizeof(Elf64_Shdr)), -E2BIG);
	close(fd);
	/* the same header, big-endian: the counts read in the file's byte order */
	eh.e_phnum = 0;
	eh.e_phoff = 0;
	eh.e_ident[EI_DATA] = ELFDATA2MSB;
	eh.e_shoff = __builtin_bswap64(8192);
	eh.e_shentsize = __builtin_bswap16(sizeof(Elf64_Shdr));
	sh0 = (Elf64_Shdr){.sh_size = __builtin_bswap64(16u << 20)};
	fd = sparse_elf(&(Elf64_Ehdr){0}, NULL, size);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh));
	CHECK(pwrite(fd, &sh0, sizeof(sh0), 8192) == (ssize_t)sizeof(sh0));
	CHECK_INT(fg_elf_precheck(fd, NULL, size), -E2BIG);
	sh0.sh_size = __builtin_bswap64(100);
	CHECK(pwrite(fd, &sh0, sizeof(sh0), 8192) == (ssize_t)sizeof(sh0));
	CHECK_INT(fg_elf_precheck(fd, NULL, size), 0);
	close(fd);
}

TEST(build_id_hex)
{
	uint8_t id[4] = {0xab, 0x01, 0xff, 0x10};
	char buf[16];

	fg_build_id_hex(id, 4, buf, true);
	CHECK_STR(buf, "ab/01ff10");
	fg_build_id_hex(id, 4, buf, false);
	CHECK_STR(buf, "ab01ff10");
}

TEST(safeio_refuses_what_is_not_regular)
{
	char *data;
	size_t len;

	CHECK_INT(fg_safeio_open_regular("/dev/null", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_regular("/", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_regular("/nonexistent", 0, NULL), -ENOENT);
	CHECK_INT(fg_safeio_open_regular("/proc/self/exe", 10, NULL), -EFBIG);
	/* a procfs file reports size 0 but has contents */
	CHECK_INT(fg_safeio_read_file("/proc/self/status", 1 << 20, &data, &len), 0);
	CHECK(len > 0 && strlen(data) == len);
	free(data);
	CHECK_INT(fg_safeio_read_file("/proc/self/status", 10, &data, &len), -EFBIG);
}

int main(void)
{
	RUN(elfsyms_names_our_own_function);
	RUN(elf_named_symbols_finds_data_and_tls);
	RUN(elf_named_symbols_reads_symtab_only_when_needed);
	RUN(elf_named_symbols_by_gnu_hash);
	RUN(elfsyms_names_plt_entries);
	RUN(elfsyms_names_init_and_fini_of_a_stripped_file);
	RUN(elfsyms_survives_truncation_and_corruption);
	RUN(elfsyms_not_elf);
	RUN(elf_precheck_refuses_what_libelf_would_allocate_for);
	RUN(build_id_hex);
	RUN(safeio_refuses_what_is_not_regular);
	return unit_done();
}
