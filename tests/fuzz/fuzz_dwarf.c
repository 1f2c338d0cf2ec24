// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the DWARF path (lib/dwarf.c): as fg-sym reads it (--inline,
 * --srcline), from memory and through a descriptor as fg-sym reads a mapped
 * file, and as fg-fold --inline --context reads it, by the path perf script
 * text names, frames placed by SYMBOL+0xOFFSET (lib/fold.c).  Any bytes give
 * DWARF or an error, never a crash or a hang; every look-up, at the file's
 * function symbols and at a few addresses the input chooses, gives names and
 * lines that can be read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);
/*
 * libdw 0.188's dwarf_getscopes leaks the scopes it gathered when the walk
 * fails on corrupt DIEs, and does not hand them back: lib/dwarf.c stops
 * asking such a file, so it leaks once per file at most.
 * That one leak is suppressed by name, which needs the slow unwinder (libdw
 * has no frame pointers).
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:dwarf_getscopes\n";
}

const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

static void look(struct fg_dwarf *d, uint64_t addr)
{
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	int n = fg_dwarf_lookup(d, addr, locs, FG_DWARF_MAX_INLINE);

	if ((n < 0 && n != -ENOEXEC) || n > FG_DWARF_MAX_INLINE)
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

static void log_msg(void *ctx, const char *msg)
{
	(void)ctx;
	sink += strlen(msg);
}

/* fg-fold's look-ups: frames by symbol name and offset, and one by address */
static void use_fold(const char *path, const struct fg_elfsyms *e)
{
	struct fg_fold_opts o = {.input = FG_FOLD_PERF, .inline_frames = true};
	struct fg_buf text = FG_BUF_INIT;
	char *out = NULL;
	size_t outlen = 0;

	for (int context = 0; context < 2; context++) {
		struct fg_fold *f;
		FILE *mem = open_memstream(&out, &outlen);

		o.inline_context = context;
		f = fg_fold_new(&o, log_msg, NULL);
		fg_buf_reset(&text);
		for (size_t i = 0; e && i < e->nsyms && i < 16; i++)
			fg_buf_addf(&text, "p 1 1.0: 1 cycles:\n\t1 %s+0x%llx (%s)\n\n",
				    e->syms[i].name, (unsigned long long)(e->syms[i].size / 2),
				    path);
		fg_buf_addf(&text, "p 1 1.0: 1 cycles:\n\t401000 [unknown] (%s)\n\n", path);
		fg_fold_read_mem(f, text.data, text.len, "fuzz");
		if (mem) {
			fg_fold_write(f, mem);
			fclose(mem);
			sink += outlen;
		}
		free(out);
		out = NULL;
		fg_fold_free(f);
	}
	fg_buf_release(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_elfsyms *e = fg_elfsyms_open_mem(data, size);
	int fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);

	use(fg_dwarf_open_mem(data, size), e, data, size);
	/* a supplementary file is looked for under a root that does not exist */
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
		char path[64];

		use(fg_dwarf_open_fd(fd, "/nonexistent/file", "/nonexistent"), e, data, size);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		use_fold(path, e);
	}
	if (fd >= 0)
		close(fd);
	fg_elfsyms_free(e);
	return 0;
}
