// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "fg/cfi.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"
#include "cfi_elf.h"
#include "unit.h"

/* CIE initial instructions: CFA rsp+8, return address at c-8 */
static const uint8_t cie_ins[] = {0x0c, 7, 8, 0x90, 1};

static uint8_t image[65536];

/* the table of one .eh_frame at CFI_ELF_EH_OFF */
static struct fg_cfi *table_of(const struct cfib *eh, const struct cfib *df, int hdr_only)
{
	size_t n = cfi_elf(image, sizeof(image), eh, df, hdr_only);

	return fg_cfi_open_mem(image, n);
}

static void text(const struct fg_cfi *c, uint64_t pc, char *out, size_t len)
{
	char a[64], b[64], d[64];

	fg_cfi_rule_text(fg_cfi_lookup(c, pc), a, b, d, sizeof(a));
	snprintf(out, len, "%s %s %s", a, b, d);
}

#define CHECK_ROW(c, pc, want)                                                                     \
	do {                                                                                       \
		char t_[200];                                                                      \
		text(c, pc, t_, sizeof(t_));                                                       \
		CHECK_STR(t_, want);                                                               \
	} while (0)

TEST(cfi_rows_follow_the_program)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	/* push rbp; mov rsp,rbp; ...; leave: the classic frame */
	const uint8_t ins[] = {
	    0x41,	   /* advance 1 */
	    0x0e, 16,	   /* def_cfa_offset 16 */
	    0x86, 2,	   /* rbp at c-16 */
	    0x43,	   /* advance 3 */
	    0x0d, 6,	   /* def_cfa_register rbp */
	    0x02, 0x30,	   /* advance_loc1 0x30 */
	    0x0c, 7,	8, /* def_cfa rsp+8 */
	};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;
	uint64_t s, e;

	cfib_fde(&b, cie, 0x1000, 0x40, ins, sizeof(ins));
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK_ROW(c, 0xfff, "none - -");
	CHECK_ROW(c, 0x1000, "rsp+8 u c-8");
	CHECK_ROW(c, 0x1001, "rsp+16 c-16 c-8");
	CHECK_ROW(c, 0x1003, "rsp+16 c-16 c-8");
	CHECK_ROW(c, 0x1004, "rbp+16 c-16 c-8");
	CHECK_ROW(c, 0x1033, "rbp+16 c-16 c-8");
	CHECK_ROW(c, 0x1034, "rsp+8 c-16 c-8");
	CHECK_ROW(c, 0x103f, "rsp+8 c-16 c-8");
	CHECK_ROW(c, 0x1040, "none - -");
	fg_cfi_lookup_range(c, 0x1010, &s, &e);
	CHECK_INT(s, 0x1004);
	CHECK_INT(e, 0x1034);
	CHECK_INT(c->nrows, 5);
	CHECK_INT(c->st.fdes, 1);
	CHECK_INT(c->st.bad_entries, 0);
	/* each row is 8 bytes, each rule 20 */
	CHECK_INT(fg_cfi_table_bytes(c), 5 * 8 + c->nrules * 20);
	fg_cfi_free(c);
}

TEST(cfi_rules_are_shared_and_adjacent_rows_merge)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	const uint8_t ins[] = {0x41, 0x0e, 16, 0x41, 0x0e, 8};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;

	/* three functions, the first two adjacent, then a gap */
	cfib_fde(&b, cie, 0x1000, 0x10, ins, sizeof(ins));
	cfib_fde(&b, cie, 0x1010, 0x10, ins, sizeof(ins));
	cfib_fde(&b, cie, 0x1100, 0x10, NULL, 0);
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK_INT(c->st.fdes, 3);
	/* rules: none, rsp+8, rsp+16 */
	CHECK_INT(c->nrules, 3);
	CHECK_ROW(c, 0x1002, "rsp+8 u c-8");
	CHECK_ROW(c, 0x1010, "rsp+8 u c-8");
	CHECK_ROW(c, 0x1011, "rsp+16 u c-8");
	CHECK_ROW(c, 0x1020, "none - -");
	CHECK_ROW(c, 0x1100, "rsp+8 u c-8");
	/* the row at 0x1002 runs on into the next function: one row, not two */
	uint64_t s, e;
	fg_cfi_lookup_range(c, 0x1002, &s, &e);
	CHECK_INT(s, 0x1002);
	CHECK_INT(e, 0x1011);
	fg_cfi_free(c);
}

TEST(cfi_remember_and_restore_state)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	const uint8_t ins[] = {
	    0x41, 0x0e, 16,   0x86, 2, /* push rbp */
	    0x41, 0x0a,		       /* remember */
	    0x0e, 8,	0xc6,	       /* an early return: pop rbp, ret */
	    0x41, 0x0b,		       /* restore */
	    0x41, 0x2e, 8,	       /* GNU_args_size: ignored */
	};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x2000, 0x20, ins, sizeof(ins));
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK_ROW(c, 0x2001, "rsp+16 c-16 c-8");
	CHECK_ROW(c, 0x2002, "rsp+8 u c-8");
	CHECK_ROW(c, 0x2003, "rsp+16 c-16 c-8");
	CHECK_ROW(c, 0x201f, "rsp+16 c-16 c-8");
	fg_cfi_free(c);
}

TEST(cfi_expressions_plt_and_realignment)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	/* the PLT's: rsp + 8 + ((rip & 15) >= 11) << 3 */
	const uint8_t plt[] = {0x0f, 11,   0x77, 8,    0x80, 0,	  0x3f,
			       0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
	/* gcc's realignment: CFA r10+0, rbp at *(rbp+0), then CFA *(rbp-8) */
	const uint8_t realign[] = {0x41, 0x0c, 10, 0,		  /* def_cfa r10+0 */
				   0x41, 0x10, 6,  2,	 0x76, 0, /* expression rbp: breg6 0 */
				   0x41, 0x0f, 3,  0x76, 0x78, 0x06 /* cfa: breg6 -8; deref */};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	const struct fg_cfi_rule *r;
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x3000, 0x20, plt, sizeof(plt));
	cfib_fde(&b, cie, 0x3100, 0x20, realign, sizeof(realign));
	c = table_of(&b, NULL, 0);
	CHECK(c);
	r = fg_cfi_lookup(c, 0x3005);
	CHECK_INT(r->kind, FG_CFI_NORMAL);
	CHECK_INT(r->cfa, FG_CFI_CFA_PLT);
	CHECK_INT(r->cfa_reg, FG_CFI_RSP);
	CHECK_INT(r->cfa_off, 8);
	CHECK_INT(r->arg0, 15);
	CHECK_INT(r->arg1, 11);
	r = fg_cfi_lookup(c, 0x3101);
	CHECK_INT(r->cfa, FG_CFI_CFA_REG);
	CHECK_INT(r->cfa_reg, 10);
	r = fg_cfi_lookup(c, 0x3102);
	CHECK_INT(r->rbp, FG_CFI_AT_REG);
	CHECK_INT(r->rbp_reg, FG_CFI_RBP);
	CHECK_INT(r->rbp_off, 0);
	r = fg_cfi_lookup(c, 0x3110);
	CHECK_INT(r->cfa, FG_CFI_CFA_DEREF);
	CHECK_INT(r->cfa_reg, FG_CFI_RBP);
	CHECK_INT(r->cfa_off, -8);
	CHECK_INT(r->rbp, FG_CFI_AT_REG);
	fg_cfi_free(c);
}

/*
 * arm64: the CFA from sp (31) or x29, the return address in x30 (column 30)
 * until saved, DW_CFA_AARCH64_negate_ra_state marking it signed (and
 * remember/restore keeping that), a signal frame not held
 */
TEST(cfi_aarch64_rules)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF, .ra = 30};
	const uint8_t a64_cie[] = {0x0c, 31, 0}; /* def_cfa sp+0 */
	/* paciasp; stp x29, x30, [sp, -16]!; mov x29, sp; ...; ldp; autiasp; ret */
	const uint8_t fn[] = {0x41, 0x2d,		    /* +1: negate_ra_state */
			      0x41, 0x0e, 16,		    /* +2: cfa sp+16 */
			      0x9d, 2,	  0x9e, 1,	    /* x29 at c-16, x30 at c-8 */
			      0x41, 0x0d, 29,		    /* +3: cfa x29+16 */
			      0x41, 0x0a,		    /* +4: remember */
			      0x0c, 31,	  0,	0xdd, 0xde, /* cfa sp+0, restore x29, x30 */
			      0x2d,			    /* negate: unsigned again */
			      0x41, 0x0b};		    /* +5: restore: signed, saved */
	const uint8_t tramp[] = {0};
	size_t cie = cfib_cie(&b, "zR", a64_cie, sizeof(a64_cie));
	size_t sig = cfib_cie(&b, "zRS", a64_cie, sizeof(a64_cie));
	const struct fg_cfi_rule *r;
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x3000, 0x20, fn, sizeof(fn));
	cfib_fde(&b, sig, 0x3100, 0x10, tramp, sizeof(tramp));
	cfi_elf(image, sizeof(image), &b, NULL, 0);
	image[18] = EM_AARCH64;
	c = fg_cfi_open_mem(image, sizeof(image));
	CHECK(c);
	CHECK_INT(c->arch, FG_CFI_ARCH_ARM64);
	r = fg_cfi_lookup(c, 0x3000); /* the entry: cfa sp, the return address in x30 */
	CHECK_INT(r->kind, FG_CFI_NORMAL);
	CHECK_INT(r->cfa_reg, FG_CFI_A64_SP);
	CHECK_INT(r->cfa_off, 0);
	CHECK_INT(r->ra, FG_CFI_SAME);
	CHECK_INT(r->flags, 0);
	r = fg_cfi_lookup(c, 0x3001); /* signed, still in x30 */
	CHECK_INT(r->ra, FG_CFI_SAME);
	CHECK_INT(r->flags, FG_CFI_RULE_F_PAC);
	r = fg_cfi_lookup(c, 0x3003); /* the frame record made */
	CHECK_INT(r->cfa_reg, FG_CFI_A64_FP);
	CHECK_INT(r->cfa_off, 16);
	CHECK_INT(r->ra, FG_CFI_AT_CFA);
	CHECK_INT(r->ra_off, -8);
	CHECK_INT(r->rbp, FG_CFI_AT_CFA);
	CHECK_INT(r->rbp_off, -16);
	CHECK_INT(r->rbx, FG_CFI_AT_CFA); /* x30, the link register: where the return address is */
	CHECK_INT(r->flags, FG_CFI_RULE_F_PAC);
	r = fg_cfi_lookup(c, 0x3004); /* the epilogue: back in x30, authenticated */
	CHECK_INT(r->cfa_reg, FG_CFI_A64_SP);
	CHECK_INT(r->ra, FG_CFI_SAME);
	CHECK_INT(r->flags, 0);
	r = fg_cfi_lookup(c, 0x3005); /* restored: signed and saved again */
	CHECK_INT(r->ra, FG_CFI_AT_CFA);
	CHECK_INT(r->flags, FG_CFI_RULE_F_PAC);
	r = fg_cfi_lookup(c, 0x3100);
	CHECK_INT(r->kind, FG_CFI_INVALID);
	CHECK_INT(r->arg0, FG_CFI_WHY_ARCH);
	fg_cfi_free(c);
}

TEST(cfi_stop_signal_and_invalid_kinds_counted)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	const uint8_t undef_ra[] = {0x07, 16};		      /* _start: ra undefined */
	const uint8_t val_expr_ra[] = {0x16, 16, 2, 0x77, 0}; /* ra = rsp: not held */
	const uint8_t cfa_expr[] = {0x0f, 2, 0x31, 0x32};     /* CFA = lit1 lit2 */
	const uint8_t bad_op[] = {0x41, 0x2d, 0x41};	      /* GNU_window_save */
	const uint8_t underflow[] = {0x41, 0x0b};	      /* restore without remember */
	const uint8_t rbp_in_reg[] = {0x09, 6, 3};	      /* rbp in rbx: not held */
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	size_t sig = cfib_cie(&b, "zRS", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x1000, 0x10, undef_ra, sizeof(undef_ra));
	cfib_fde(&b, sig, 0x1010, 0x10, NULL, 0);
	cfib_fde(&b, cie, 0x1020, 0x10, val_expr_ra, sizeof(val_expr_ra));
	cfib_fde(&b, cie, 0x1030, 0x10, cfa_expr, sizeof(cfa_expr));
	cfib_fde(&b, cie, 0x1040, 0x10, bad_op, sizeof(bad_op));
	cfib_fde(&b, cie, 0x1050, 0x10, underflow, sizeof(underflow));
	cfib_fde(&b, cie, 0x1060, 0x10, rbp_in_reg, sizeof(rbp_in_reg));
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK_INT(fg_cfi_lookup(c, 0x1000)->kind, FG_CFI_STOP);
	CHECK_INT(fg_cfi_lookup(c, 0x1010)->kind, FG_CFI_SIGNAL);
	CHECK_INT(fg_cfi_lookup(c, 0x1020)->kind, FG_CFI_INVALID);
	CHECK_INT(fg_cfi_lookup(c, 0x1020)->arg0, FG_CFI_WHY_RA_RULE);
	CHECK_INT(fg_cfi_lookup(c, 0x1030)->arg0, FG_CFI_WHY_CFA_EXPR);
	/* an unknown instruction: the rows before it stand, every row after is invalid */
	CHECK_INT(fg_cfi_lookup(c, 0x1040)->kind, FG_CFI_NORMAL);
	CHECK_INT(fg_cfi_lookup(c, 0x1041)->arg0, FG_CFI_WHY_OP);
	CHECK_INT(fg_cfi_lookup(c, 0x104f)->arg0, FG_CFI_WHY_OP);
	CHECK_INT(fg_cfi_lookup(c, 0x1050)->kind, FG_CFI_NORMAL);
	CHECK_INT(fg_cfi_lookup(c, 0x1051)->arg0, FG_CFI_WHY_STATE);
	CHECK_INT(fg_cfi_lookup(c, 0x1060)->kind, FG_CFI_NORMAL);
	CHECK_INT(fg_cfi_lookup(c, 0x1060)->rbp, FG_CFI_LOST);
	CHECK_INT(c->st.stop_rows, 1);
	CHECK_INT(c->st.signal_rows, 1);
	CHECK_INT(c->st.invalid_rows, 4);
	CHECK_INT(c->st.invalid[FG_CFI_WHY_RA_RULE], 1);
	CHECK_INT(c->st.invalid[FG_CFI_WHY_CFA_EXPR], 1);
	CHECK_INT(c->st.invalid[FG_CFI_WHY_OP], 1);
	CHECK_INT(c->st.invalid[FG_CFI_WHY_STATE], 1);
	CHECK_INT(c->st.rbp_lost, 1);
	fg_cfi_free(c);
}

TEST(cfi_corrupt_entries_are_skipped_and_counted)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x1000, 0x10, NULL, 0);
	/* an FDE whose CIE pointer points before the section */
	size_t at = b.n;
	cfib_fde(&b, cie, 0x2000, 0x10, NULL, 0);
	uint32_t bogus = 0x7fffffff;
	memcpy(b.b + at + 4, &bogus, 4);
	/* an FDE overlapping the first: dropped */
	cfib_fde(&b, cie, 0x1008, 0x10, NULL, 0);
	/* an empty one */
	cfib_fde(&b, cie, 0x3000, 0, NULL, 0);
	cfib_fde(&b, cie, 0x4000, 0x10, NULL, 0);
	/* then a length that runs past the end */
	cfib_u32(&b, 0x1000);
	cfib_u32(&b, 0);
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK_INT(c->st.fdes, 2);
	CHECK_INT(c->st.overlaps, 1);
	CHECK_INT(c->st.empty, 1);
	CHECK_INT(c->st.bad_entries, 2);
	CHECK_INT(fg_cfi_lookup(c, 0x2000)->kind, FG_CFI_NONE);
	CHECK_INT(fg_cfi_lookup(c, 0x4000)->kind, FG_CFI_NORMAL);
	fg_cfi_free(c);
}

TEST(cfi_debug_frame_of_a_debug_file_fills_the_gaps)
{
	struct cfib eh = {.vaddr = CFI_ELF_EH_OFF}, df = {.debug = 1};
	const uint8_t ins[] = {0x41, 0x0e, 32};
	uint8_t dimage[16384];
	size_t cie = cfib_cie(&eh, "zR", cie_ins, sizeof(cie_ins)), n, dn;
	struct fg_cfi *c;
	void *copy, *dcopy;
	Elf *elf, *delf;

	cfib_fde(&eh, cie, 0x1000, 0x10, NULL, 0);
	cie = cfib_cie(&df, "", cie_ins, sizeof(cie_ins));
	cfib_fde(&df, cie, 0x1000, 0x10, ins, sizeof(ins)); /* .eh_frame wins here */
	cfib_fde(&df, cie, 0x5000, 0x10, ins, sizeof(ins));
	n = cfi_elf(image, sizeof(image), &eh, NULL, 0);
	dn = cfi_elf(dimage, sizeof(dimage), NULL, &df, 0);
	elf = fg_elf_memory(image, n, &copy);
	delf = fg_elf_memory(dimage, dn, &dcopy);
	CHECK(elf && delf);
	c = fg_cfi_from_elf(elf, delf);
	elf_end(elf);
	elf_end(delf);
	free(copy);
	free(dcopy);
	CHECK(c);
	CHECK_INT(c->st.eh_fdes, 1);
	CHECK_INT(c->st.debug_fdes, 1);
	CHECK_INT(c->st.overlaps, 1);
	CHECK_ROW(c, 0x1001, "rsp+8 u c-8");
	CHECK_ROW(c, 0x5001, "rsp+32 u c-8");
	fg_cfi_free(c);
}

TEST(cfi_found_through_eh_frame_hdr_without_section_headers)
{
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	struct fg_cfi *c;

	cfib_fde(&b, cie, 0x1000, 0x10, NULL, 0);
	c = table_of(&b, NULL, 1);
	CHECK(c);
	CHECK_INT(c->st.fdes, 1);
	CHECK_ROW(c, 0x1000, "rsp+8 u c-8");
	fg_cfi_free(c);
}

TEST(cfi_no_cfi_and_not_elf)
{
	struct fg_cfi *c;

	c = table_of(NULL, NULL, 0);
	CHECK(!c);
	CHECK_INT(errno, ENODATA);
	c = fg_cfi_open_mem("hello", 5);
	CHECK(!c);
	CHECK_INT(errno, ENOEXEC);
	/* 32-bit or another machine: not ours */
	cfi_elf(image, sizeof(image), NULL, NULL, 0);
	image[18] = 0x28; /* EM_ARM */
	CHECK(!fg_cfi_open_mem(image, 4096));
	CHECK_INT(errno, ENOEXEC);
}

/*
 * The dynamic linker's name, and the rule at a function's first instruction:
 * x86-64's CFA is rsp+8, the return address at c-8; arm64's CFA is sp (in the
 * slot of rsp), the return address still in x30 ("u": the same value)
 */
#if defined(__aarch64__)
#define LDSO "/ld-linux-aarch64.so.1"
#define ENTRY_ROW "rsp+0 u u"
#else
#define LDSO "/ld-linux-x86-64.so.2"
#define ENTRY_ROW "rsp+8 u c-8"
#endif

__attribute__((noinline)) void unit_cfi_function(void);
__attribute__((noinline)) void unit_cfi_function(void)
{
	__asm__ volatile("" ::: "memory");
}

TEST(cfi_of_this_program_and_the_vdso)
{
	int fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	struct fg_elfsyms *e;
	struct fg_cfi *c;
	const struct fg_elf_sym *s = NULL;

	CHECK(fd >= 0);
	c = fg_cfi_open_fd(fd, -1);
	e = fg_elfsyms_open_fd(fd);
	close(fd);
	CHECK(c && e);
	for (size_t i = 0; i < e->nsyms && !s; i++)
		if (strcmp(e->syms[i].name, "unit_cfi_function") == 0)
			s = &e->syms[i];
	CHECK(s);
	CHECK_ROW(c, s->addr, ENTRY_ROW);
	CHECK(c->st.fdes > 10);
	CHECK_INT(c->st.bad_entries, 0);
	fg_cfi_free(c);
	fg_elfsyms_free(e);

	/* the vdso, from the kernel's image in memory (qemu-user has none for arm64) */
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
#if defined(__aarch64__)
	if (!base)
		return;
#endif
	CHECK(base);
	c = fg_cfi_open_mem(base, 8192);
	e = fg_elfsyms_open_mem(base, 8192);
	CHECK(c && e);
	s = NULL;
	for (size_t i = 0; i < e->nsyms && !s; i++)
		if (strcmp(e->syms[i].name, "__vdso_clock_gettime") == 0)
			s = &e->syms[i];
	CHECK(s);
	CHECK_ROW(c, s->addr, ENTRY_ROW);
	fg_cfi_free(c);
	fg_elfsyms_free(e);
}

TEST(cfi_cache_by_identity)
{
	struct fg_cfi_cache *cc = fg_cfi_cache_new();
	struct cfib b = {.vaddr = CFI_ELF_EH_OFF};
	size_t cie = cfib_cie(&b, "zR", cie_ins, sizeof(cie_ins));
	char k1[FG_CFI_KEY_MAX], k2[FG_CFI_KEY_MAX], k3[FG_CFI_KEY_MAX];
	const uint8_t id[] = {1, 2, 3, 4};
	size_t l1 = fg_cfi_key(k1, id, sizeof(id), 8, 1, 42);
	size_t l2 = fg_cfi_key(k2, NULL, 0, 8, 1, 42);
	size_t l3 = fg_cfi_key(k3, NULL, 0, 8, 1, 43);
	struct fg_cfi *c, *got;
	int err;

	CHECK(k1[0] == 'b' && l1 == 5);
	CHECK(k2[0] == 'i' && l2 == 17);
	cfib_fde(&b, cie, 0x1000, 0x10, NULL, 0);
	c = table_of(&b, NULL, 0);
	CHECK(c);
	CHECK(!fg_cfi_cache_get(cc, k1, l1, &got, &err));
	/* one table under its build-id and its inode: held once, freed once */
	fg_cfi_cache_put(cc, k1, l1, c, 0);
	fg_cfi_cache_put(cc, k2, l2, c, 0);
	fg_cfi_cache_put(cc, k3, l3, NULL, -ENODATA);
	CHECK(fg_cfi_cache_get(cc, k2, l2, &got, &err));
	CHECK(got == c && err == 0);
	CHECK(fg_cfi_cache_get(cc, k3, l3, &got, &err));
	CHECK(!got && err == -ENODATA);
	fg_cfi_cache_free(cc);
}

/* The path of a mapped file of this process whose name ends with `tail`. */
static bool mapped_path(const char *tail, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		size_t n;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		n = strlen(p);
		if (n >= strlen(tail) && strcmp(p + n - strlen(tail), tail) == 0 && n < len) {
			memcpy(out, p, n + 1);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Every address of the whole table's span gives the same rule, looked up lazily. */
static size_t same_rules(const struct fg_cfi *whole, const struct fg_cfi *lazy)
{
	uint64_t lo = whole->base, hi = whole->base + whole->rows[whole->nrows - 1].pc + 16;
	size_t differ = 0;

	for (uint64_t pc = lo > 16 ? lo - 16 : 0; pc < hi; pc++)
		differ += memcmp(fg_cfi_lookup(whole, pc), fg_cfi_lookup(lazy, pc),
				 sizeof(struct fg_cfi_rule)) != 0;
	return differ;
}

TEST(cfi_lazy_lookups_match_the_whole_table)
{
	const char *tails[] = {"/libc.so.6", LDSO};
	char path[4096];

	for (size_t t = 0; t < 2; t++) {
		struct fg_cfi *whole, *lazy;
		int fd;

		CHECK(mapped_path(tails[t], path, sizeof(path)));
		fd = fg_safeio_open_regular(path, 0, NULL);
		CHECK(fd >= 0);
		whole = fg_cfi_open_fd(fd, -1);
		lazy = fg_cfi_open_lazy(fd);
		close(fd);
		CHECK(whole && lazy && whole->nrows > 100);
		/* Debian's libc and ld.so: .eh_frame with .eh_frame_hdr's table, no .debug_frame */
		CHECK(lazy->lazy && lazy->nrows == 0);
		CHECK_INT(same_rules(whole, lazy), 0);
		/* and a second time, from the rows compiled the first */
		CHECK_INT(same_rules(whole, lazy), 0);
		CHECK(lazy->nloads == whole->nloads && lazy->shared == whole->shared);
		fg_cfi_free(whole);
		fg_cfi_free(lazy);
	}
}

static uint64_t entry_of(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	uint64_t e = elf && gelf_getehdr(elf, &eh) ? eh.e_entry : 0;

	elf_end(elf);
	return e;
}

/*
 * ld.so's _start has no CFI: the instruction the kernel starts a process at
 * is a STOP row of one byte, in the whole table and the lazy one; a program
 * whose _start has CFI (this one's, from crt1) gets no such row.
 */
TEST(cfi_entry_point_without_cfi_is_the_outermost_frame)
{
	char path[4096];
	struct fg_cfi *whole, *lazy, *self;
	uint64_t entry, s, e;
	int fd;

	CHECK(mapped_path(LDSO, path, sizeof(path)));
	fd = fg_safeio_open_regular(path, 0, NULL);
	CHECK(fd >= 0);
	entry = entry_of(fd);
	whole = fg_cfi_open_fd(fd, -1);
	lazy = fg_cfi_open_lazy(fd);
	close(fd);
	CHECK(entry && whole && lazy && lazy->lazy);
#if defined(__aarch64__)
	/* arm64's ld.so gives its _start CFI (x30 undefined after its first instruction) */
	CHECK_INT(whole->st.entry_rows, 0);
	CHECK_INT(fg_cfi_lookup(whole, entry + 4)->kind, FG_CFI_STOP);
	(void)s, (void)e;
#else
	CHECK_INT(whole->st.entry_rows, 1);
	for (int k = 0; k < 2; k++) {
		struct fg_cfi *c = k ? lazy : whole;

		CHECK_INT(fg_cfi_lookup_range(c, entry, &s, &e)->kind, FG_CFI_STOP);
		CHECK(s == entry && e == entry + 1);
		CHECK_INT(fg_cfi_lookup(c, entry + 1)->kind, FG_CFI_NONE);
		CHECK_INT(fg_cfi_lookup(c, entry - 1)->kind, FG_CFI_NONE);
	}
#endif
	fg_cfi_free(whole);
	fg_cfi_free(lazy);
	fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	CHECK(fd >= 0);
	entry = entry_of(fd);
	self = fg_cfi_open_fd(fd, -1);
	close(fd);
	CHECK(self);
	CHECK_INT(self->st.entry_rows, 0);
#if defined(__aarch64__)
	/* crt1's own rule: x30 undefined after _start's first instruction */
	CHECK_INT(fg_cfi_lookup(self, entry + 4)->kind, FG_CFI_STOP);
#else
	CHECK_INT(fg_cfi_lookup(self, entry)->kind, FG_CFI_STOP); /* crt1's own rule */
#endif
	fg_cfi_free(self);
}

/* libc's image with its .eh_frame_hdr table changed by `spoil`: lazy lookups stay safe. */
static struct fg_cfi *spoiled(const char *img, size_t len, void (*spoil)(uint8_t *hdr, size_t n))
{
	uint8_t *copy = malloc(len);
	void *elfcopy;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct fg_cfi *c = NULL;

	memcpy(copy, img, len);
	elf = fg_elf_memory(copy, len, &elfcopy);
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    strcmp(name, ".eh_frame_hdr") == 0 &&
			    sh.sh_offset + sh.sh_size <= len) {
				elf_end(elf);
				free(elfcopy);
				spoil(copy + sh.sh_offset, sh.sh_size);
				elf = fg_elf_memory(copy, len, &elfcopy);
				c = fg_cfi_from_elf_lazy(elf);
				break;
			}
		}
	}
	elf_end(elf);
	free(elfcopy);
	free(copy);
	return c;
}

static void swap_first_two(uint8_t *h, size_t n)
{
	uint8_t t[8];

	if (n >= 28) {
		memcpy(t, h + 12, 8);
		memcpy(h + 12, h + 20, 8);
		memcpy(h + 20, t, 8);
	}
}

static void count_one_more(uint8_t *h, size_t n)
{
	if (n >= 12)
		h[8]++;
}

static void count_huge(uint8_t *h, size_t n)
{
	if (n >= 12)
		memset(h + 8, 0xff, 4);
}

static void fdes_astray(uint8_t *h, size_t n)
{
	/* every FDE address 4 GiB away or into the middle of another entry */
	for (size_t at = 12; at + 8 <= n; at += 8)
		h[at + 4 + (at / 8) % 4] ^= 0x5a;
}

static void starts_moved(uint8_t *h, size_t n)
{
	for (size_t at = 12; at + 8 <= n; at += 8)
		h[at] ^= 1; /* still sorted mostly, but not where the FDEs start */
}

TEST(cfi_lazy_hostile_header)
{
	char path[4096], *img;
	size_t len;
	struct fg_cfi *whole, *c;
	int fd;

	CHECK(mapped_path("/libc.so.6", path, sizeof(path)));
	CHECK_INT(fg_safeio_read_file(path, 64u << 20, &img, &len), 0);
	fd = fg_safeio_open_regular(path, 0, NULL);
	whole = fg_cfi_open_fd(fd, -1);
	close(fd);
	CHECK(whole);
	/* a table out of order, or a count .eh_frame does not hold: the whole table */
	c = spoiled(img, len, swap_first_two);
	CHECK(c && !c->lazy && c->nrows == whole->nrows);
	fg_cfi_free(c);
	c = spoiled(img, len, count_one_more);
	CHECK(c && !c->lazy && c->nrows == whole->nrows);
	fg_cfi_free(c);
	c = spoiled(img, len, count_huge);
	CHECK(c && !c->lazy);
	fg_cfi_free(c);
	/* entries that lead nowhere, or not to their FDE: no rows there, never a bad read */
	c = spoiled(img, len, fdes_astray);
	CHECK(c && c->lazy);
	CHECK(same_rules(whole, c) > 0);
	fg_cfi_free(c);
	c = spoiled(img, len, starts_moved);
	CHECK(c && c->lazy);
	CHECK(same_rules(whole, c) > 0);
	fg_cfi_free(c);
	fg_cfi_free(whole);
	free(img);
}

int main(void)
{
	RUN(cfi_rows_follow_the_program);
	RUN(cfi_rules_are_shared_and_adjacent_rows_merge);
	RUN(cfi_remember_and_restore_state);
	RUN(cfi_expressions_plt_and_realignment);
	RUN(cfi_aarch64_rules);
	RUN(cfi_stop_signal_and_invalid_kinds_counted);
	RUN(cfi_corrupt_entries_are_skipped_and_counted);
	RUN(cfi_debug_frame_of_a_debug_file_fills_the_gaps);
	RUN(cfi_found_through_eh_frame_hdr_without_section_headers);
	RUN(cfi_no_cfi_and_not_elf);
	RUN(cfi_of_this_program_and_the_vdso);
	RUN(cfi_cache_by_identity);
	RUN(cfi_lazy_lookups_match_the_whole_table);
	RUN(cfi_lazy_hostile_header);
	RUN(cfi_entry_point_without_cfi_is_the_outermost_frame);
	return unit_done();
}
