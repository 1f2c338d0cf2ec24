// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the ELF symbol reader, through a file descriptor as fg-sym reads
 * mapped files and from memory as it reads the vdso: any bytes give symbols
 * or an error, never a crash, and every symbol found (PLT entries too) can
 * be looked up.  Names are looked up too, as fg-sample finds a Python
 * interpreter's (through .gnu.hash, then .symtab): the count is theirs.
 */
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/demangle.h"
#include "fg/elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use(struct fg_elfsyms *e)
{
	uint64_t addr;

	if (!e)
		return;
	for (size_t i = 0; i < e->nsyms; i++) {
		struct fg_elf_sym *s = fg_elfsyms_lookup(e, e->syms[i].addr);

		/* a symbol's own address finds a symbol at that address (or a PLT entry there) */
		if (!s || (s->addr != e->syms[i].addr && (s < e->plt || s >= e->plt + e->nplt)))
			abort();
		if (i < 64)
			free(fg_demangle(s->name));
	}
	/* each named PLT entry holds its 16 bytes */
	for (size_t i = 0; i < e->nplt; i++)
		if (e->plt[i].name && (fg_elfsyms_lookup(e, e->plt[i].addr + 15) != &e->plt[i] ||
				       e->plt[i].addr != e->plt_addr + 16 * i))
			abort();
	for (size_t i = 0; i < e->nloads; i++)
		fg_elfsyms_offset_to_addr(e, e->loads[i].offset, &addr);
	fg_elfsyms_free(e);
}

static void named(const uint8_t *data, size_t size)
{
	struct fg_elf_named v[] = {
	    {.name = "_PyRuntime"}, {.name = "helper"}, {.name = "main"}, {.name = ""}};
	size_t found = 0, n;
	void *copy;
	Elf *elf = fg_elf_memory(data, size, &copy);

	if (!elf)
		return;
	n = fg_elf_named_symbols(elf, v, 4, 1);
	for (size_t k = 0; k < 4; k++)
		found += v[k].found;
	if (n != found)
		abort();
	elf_end(elf);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	use(fg_elfsyms_open_mem(data, size));
	named(data, size);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size)
		use(fg_elfsyms_open_fd(fd));
	close(fd);
	return 0;
}
