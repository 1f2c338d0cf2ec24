/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Making call frame information and small ELF images around it, for the
 * tests of lib/cfi (tests/unit/test_cfi.c) and its fuzz target.
 *
 *	struct cfib b = { .vaddr = 0x1000 };
 *	size_t c = cfib_cie(&b, "zR", ins, sizeof(ins));
 *	cfib_fde(&b, c, 0x2000, 0x40, ins2, sizeof(ins2));
 *	size = cfi_elf(image, sizeof(image), &b, NULL, 0);
 */
#ifndef FG_TEST_CFI_ELF_H
#define FG_TEST_CFI_ELF_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

/* An .eh_frame (or .debug_frame) being written; vaddr is where it is loaded. */
struct cfib {
	uint8_t b[8192];
	size_t n;
	uint64_t vaddr;
	int debug;  /* .debug_frame: CIE id ~0, absolute 8-byte addresses */
	uint8_t ra; /* the CIEs' return address column: 0 for 16 (x86-64's; arm64's is 30) */
};

static inline void cfib_put(struct cfib *c, const void *p, size_t n)
{
	if (n && c->n + n <= sizeof(c->b)) {
		memcpy(c->b + c->n, p, n);
		c->n += n;
	}
}

static inline void cfib_u32(struct cfib *c, uint32_t v)
{
	cfib_put(c, &v, 4);
}

/* close the entry opened at `start` (its length field), padded with DW_CFA_nop */
static inline void cfib_close(struct cfib *c, size_t start)
{
	uint32_t len;

	while ((c->n - start) % 8)
		c->b[c->n++] = 0;
	len = (uint32_t)(c->n - start - 4);
	memcpy(c->b + start, &len, 4);
}

/*
 * A CIE: code alignment 1, data alignment -8, return address column 16 (or c->ra);
 * `aug` "zR" (FDE addresses pcrel sdata4) or "zRS" (a signal frame) in
 * .eh_frame, "" in .debug_frame.  Its offset.
 */
static inline size_t cfib_cie(struct cfib *c, const char *aug, const uint8_t *ins, size_t n)
{
	size_t start = c->n;
	uint8_t hdr[] = {1 /* version */};
	uint8_t tail[] = {1 /* code align */, 0x78 /* -8 */, c->ra ? c->ra : 16 /* ra */};

	cfib_u32(c, 0);
	cfib_u32(c, c->debug ? 0xffffffffu : 0);
	cfib_put(c, hdr, 1);
	cfib_put(c, aug, strlen(aug) + 1);
	cfib_put(c, tail, sizeof(tail));
	if (aug[0] == 'z') {
		uint8_t z[] = {1, 0x1b}; /* augmentation data: 1 byte, R = pcrel | sdata4 */

		cfib_put(c, z, sizeof(z));
	}
	cfib_put(c, ins, n);
	cfib_close(c, start);
	return start;
}

/* An FDE of the CIE at `cie` for [start, start + len). */
static inline void cfib_fde(struct cfib *c, size_t cie, uint64_t start, uint32_t len,
			    const uint8_t *ins, size_t n)
{
	size_t at = c->n;

	cfib_u32(c, 0);
	if (c->debug) {
		cfib_u32(c, (uint32_t)cie);
		cfib_put(c, &start, 8);
		uint64_t l = len;
		cfib_put(c, &l, 8);
	} else {
		cfib_u32(c, (uint32_t)(c->n - cie)); /* from the id field back to the CIE */
		int32_t rel = (int32_t)(start - (c->vaddr + c->n));
		cfib_put(c, &rel, 4);
		cfib_u32(c, len);
		uint8_t z = 0;
		cfib_put(c, &z, 1);
	}
	cfib_put(c, ins, n);
	cfib_close(c, at);
}

/*
 * An x86-64 ELF image (ET_DYN, one PT_LOAD over the whole file) holding
 * `eh` as .eh_frame at eh->vaddr (the builder's vaddr must be the offset it
 * gets: CFI_ELF_EH_OFF) and `df` as .debug_frame, either NULL.  With
 * `hdr_only`, no section headers: .eh_frame is found through
 * PT_GNU_EH_FRAME's .eh_frame_hdr.  Returns the size.
 */
#define CFI_ELF_EH_OFF 0x200u

static inline size_t cfi_elf(uint8_t *out, size_t cap, const struct cfib *eh, const struct cfib *df,
			     int hdr_only)
{
	static const char names[] = "\0.eh_frame\0.debug_frame\0.shstrtab\0.eh_frame_hdr";
	Elf64_Ehdr *e = (Elf64_Ehdr *)out;
	Elf64_Phdr *ph = (Elf64_Phdr *)(out + sizeof(*e));
	Elf64_Shdr sh[5];
	size_t off = CFI_ELF_EH_OFF, eh_off = 0, df_off = 0, str_off, hdr_off = 0, nsh = 0;

	memset(out, 0, cap);
	if (eh) {
		eh_off = off;
		memcpy(out + off, eh->b, eh->n);
		off += eh->n + 8; /* a zero terminator */
	}
	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel sdata4, no table */
	hdr_off = (off + 7) & ~(size_t)7;
	out[hdr_off] = 1;
	out[hdr_off + 1] = 0x1b;
	out[hdr_off + 2] = 0xff;
	out[hdr_off + 3] = 0xff;
	int32_t rel = (int32_t)((int64_t)eh_off - (int64_t)(hdr_off + 4));
	memcpy(out + hdr_off + 4, &rel, 4);
	off = hdr_off + 8;
	if (df) {
		df_off = (off + 7) & ~(size_t)7;
		memcpy(out + df_off, df->b, df->n);
		off = df_off + df->n;
	}
	str_off = off;
	memcpy(out + off, names, sizeof(names));
	off = (off + sizeof(names) + 7) & ~(size_t)7;
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_ehsize = sizeof(*e);
	e->e_phoff = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = eh ? 2 : 1;
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_align = 0x1000;
	ph[1].p_type = PT_GNU_EH_FRAME;
	ph[1].p_flags = PF_R;
	ph[1].p_offset = ph[1].p_vaddr = hdr_off;
	ph[1].p_filesz = ph[1].p_memsz = 8;
	if (!hdr_only) {
		memset(sh, 0, sizeof(sh));
		nsh = 1;
		if (eh) {
			sh[nsh] = (Elf64_Shdr){.sh_name = 1,
					       .sh_type = SHT_PROGBITS,
					       .sh_flags = SHF_ALLOC,
					       .sh_addr = eh_off,
					       .sh_offset = eh_off,
					       .sh_size = eh->n + 8,
					       .sh_addralign = 8};
			nsh++;
		}
		if (df) {
			sh[nsh] = (Elf64_Shdr){.sh_name = 11,
					       .sh_type = SHT_PROGBITS,
					       .sh_offset = df_off,
					       .sh_size = df->n,
					       .sh_addralign = 8};
			nsh++;
		}
		sh[nsh] = (Elf64_Shdr){.sh_name = 24,
				       .sh_type = SHT_STRTAB,
				       .sh_offset = str_off,
				       .sh_size = sizeof(names),
				       .sh_addralign = 1};
		e->e_shstrndx = (uint16_t)nsh++;
		e->e_shoff = off;
		e->e_shentsize = sizeof(Elf64_Shdr);
		e->e_shnum = (uint16_t)nsh;
		memcpy(out + off, sh, nsh * sizeof(Elf64_Shdr));
		off += nsh * sizeof(Elf64_Shdr);
	}
	ph[0].p_filesz = ph[0].p_memsz = off;
	return off;
}

#endif
