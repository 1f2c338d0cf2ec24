// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-vdso-sym NAME: the file offset of function NAME in this kernel's vdso
 * (in hexadecimal), for fg-sym's tests of vdso frames.  Exit 1 when absent.
 * fgr-vdso-sym --build-id: the vdso's build-id, in hexadecimal.
 * fgr-vdso-sym --dump: the vdso's image (its whole mapping) to standard output.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "fg/elfsyms.h"

/* the mapping of the vdso, as /proc/self/maps has it, written out */
static int dump(unsigned long base)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base || !strstr(line, "[vdso]"))
			continue;
		fclose(f);
		return write(1, (const void *)lo, hi - lo) == (ssize_t)(hi - lo) ? 0 : 1;
	}
	fclose(f);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct fg_elfsyms *e;

	if (argc != 2 || !base)
		return 1;
	if (strcmp(argv[1], "--dump") == 0)
		return dump(base);
	/* the vdso is at most a few pages; its ELF header says how much to read */
	e = fg_elfsyms_open_mem((const void *)base, 8192);
	if (!e)
		return 1;
	if (strcmp(argv[1], "--build-id") == 0) {
		char hex[2 * FG_BUILD_ID_MAX + 2];
		int rc = e->build_id_len ? 0 : 1;

		fg_build_id_hex(e->build_id, e->build_id_len, hex, false);
		printf("%s\n", hex);
		fg_elfsyms_free(e);
		return rc;
	}
	for (size_t i = 0; i < e->nsyms; i++) {
		if (strcmp(e->syms[i].name, argv[1]) != 0)
			continue;
		for (size_t j = 0; j < e->nloads; j++) {
			const struct fg_elf_load *l = &e->loads[j];

			if (e->syms[i].addr >= l->vaddr && e->syms[i].addr - l->vaddr < l->filesz) {
				printf("0x%llx\n", (unsigned long long)(e->syms[i].addr - l->vaddr +
									l->offset));
				fg_elfsyms_free(e);
				return 0;
			}
		}
	}
	fg_elfsyms_free(e);
	return 1;
}
