// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-vdso-sym NAME: the file offset of function NAME in this kernel's vdso
 * (in hexadecimal), for fg-sym's tests of vdso frames.  Exit 1 when absent.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "fg/elfsyms.h"

int main(int argc, char **argv)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct fg_elfsyms *e;

	if (argc != 2 || !base)
		return 1;
	/* the vdso is at most a few pages; its ELF header says how much to read */
	e = fg_elfsyms_open_mem((const void *)base, 8192);
	if (!e)
		return 1;
	for (size_t i = 0; i < e->nsyms; i++) {
		if (strcmp(e->syms[i].name, argv[1]) != 0)
			continue;
		for (size_t j = 0; j < e->nloads; j++) {
			const struct fg_elf_load *l = &e->loads[j];

			if (e->syms[i].addr >= l->vaddr && e->syms[i].addr - l->vaddr < l->filesz) {
				printf("0x%llx\n",
				       (unsigned long long)(e->syms[i].addr - l->vaddr + l->offset));
				fg_elfsyms_free(e);
				return 0;
			}
		}
	}
	fg_elfsyms_free(e);
	return 1;
}
