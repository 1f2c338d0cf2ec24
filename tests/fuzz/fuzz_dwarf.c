// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz fg-sym's DWARF path (--inline, --srcline): any bytes, read from memory
 * and through a descriptor as fg-sym reads a mapped file, give DWARF or an
 * error, never a crash, a hang or an open of another file; every look-up, at
 * the file's function symbols and at a few addresses the input chooses, gives
 * names and lines that can be read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/dwarf.h"
#include "fg/elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void look(struct fg_dwarf *d, uint64_t addr)
{
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	int n = fg_dwarf_lookup(d, addr, locs, FG_DWARF_MAX_INLINE);

	if (n < 0 || n > FG_DWARF_MAX_INLINE)
		abort();
	for (int i = 0; i < n; i++) {
		/* read every byte handed out */
		if (locs[i].func)
			sink += strlen(locs[i].func);
		if (locs[i].file)
			sink += strlen(locs[i].file);
		sink += locs[i].line;
	}
}

static void use(struct fg_dwarf *d, const struct fg_elfsyms *e, const uint8_t *data, size_t size)
{
	if (!d)
		return;
	for (size_t i = 0; e && i < e->nsyms && i < 64; i++) {
		look(d, e->syms[i].addr);
		look(d, e->syms[i].addr + e->syms[i].size / 2);
	}
	/* addresses from the input's last bytes */
	for (size_t off = 0; off + 8 <= size && off < 64; off += 8) {
		uint64_t a;

		memcpy(&a, data + size - 8 - off, 8);
		look(d, a);
	}
	fg_dwarf_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_elfsyms *e = fg_elfsyms_open_mem(data, size);
	int fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);

	use(fg_dwarf_open_mem(data, size), e, data, size);
	/* a supplementary file is looked for under a root that does not exist */
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size)
		use(fg_dwarf_open_fd(fd, "/nonexistent/file", "/nonexistent"), e, data, size);
	if (fd >= 0)
		close(fd);
	fg_elfsyms_free(e);
	return 0;
}
