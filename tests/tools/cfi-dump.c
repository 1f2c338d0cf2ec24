// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi-dump [--libdw] [--stats] FILE [DEBUGFILE]: the rows lib/cfi builds for
 * FILE, one a line, "ADDR CFA RBP RA" in the columns of `readelf
 * --debug-dump=frames-interp` (tests/cfi.bats compares them).
 *
 * --libdw: instead, check every row against libdw's CFI (dwarf_cfi_addrframe
 * at the row's first and last address, its CFA, rbp, rbx and the return
 * address; a rule the table does not hold, "lost", is not compared): print the
 * rows that differ, a summary line "checked N rows: M differ, K skipped
 * (signal/invalid)", exit 1 when any differs.
 * --stats: the table's statistics, as "name value" lines.
 * --time N: build the table N times, and print the median time ("build_ns").
 * cfi-dump --vdso: the rows of this kernel's vdso, built from its image in
 * memory, each followed by the function that starts there, if any.
 *
 * The row lib/cfi adds at an entry point no FDE covers (stats entry_rows) is
 * printed "ADDR entry - -"; --libdw leaves it out (it is not CFI).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "fg/cfi.h"
#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"

static const char *const regs[] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static const char *reg_name(uint64_t r)
{
	return r < 17 ? regs[r] : "?";
}

/* Our rule in an exact form: "rsp+8", "*(rbp-8)", "plt(rsp+8,15,11)"; "c-16", "s", "u". */
static void ours(const struct fg_cfi_rule *r, char *cfa, char *rbp, char *rbx, char *ra, size_t len)
{
	if (r->cfa == FG_CFI_CFA_REG)
		snprintf(cfa, len, "%s%+d", reg_name(r->cfa_reg), r->cfa_off);
	else if (r->cfa == FG_CFI_CFA_DEREF)
		snprintf(cfa, len, "*(%s%+d)", reg_name(r->cfa_reg), r->cfa_off);
	else
		snprintf(cfa, len, "plt(%s%+d,%u,%u)", reg_name(r->cfa_reg), r->cfa_off, r->arg0,
			 r->arg1);
	for (int i = 0; i < 3; i++) {
		uint8_t how = i == 2 ? r->rbx : i ? r->ra : r->rbp;
		int off = i == 2 ? r->rbx_off : i ? r->ra_off : r->rbp_off;
		char *out = i == 2 ? rbx : i ? ra : rbp;

		switch (how) {
		case FG_CFI_AT_CFA:
			snprintf(out, len, "c%+d", off);
			break;
		case FG_CFI_VAL_CFA:
			snprintf(out, len, "v%+d", off);
			break;
		case FG_CFI_AT_REG:
			snprintf(out, len, "*(%s%+d)", reg_name(r->rbp_reg), off);
			break;
		case FG_CFI_UNDEF:
			snprintf(out, len, "u");
			break;
		case FG_CFI_SAME:
			snprintf(out, len, "s");
			break;
		default:
			snprintf(out, len, "lost");
			break;
		}
	}
}

static int breg(const Dwarf_Op *op, uint64_t *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return 1;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (int64_t)op->number2;
		return 1;
	}
	return 0;
}

/* The file's entry point when lib/cfi made a row of it, else 0. */
static uint64_t entry_pc;

/* libdw's CFA in the same form; "?" for what our layout does not hold. */
static void dw_cfa(Dwarf_Op *ops, size_t n, char *out, size_t len)
{
	uint64_t reg;
	int64_t off;

	snprintf(out, len, "?");
	if (n >= 1 && breg(&ops[0], &reg, &off)) {
		if (n == 1)
			snprintf(out, len, "%s%+" PRId64, reg_name(reg), off);
		else if (n == 2 && ops[1].atom == DW_OP_deref)
			snprintf(out, len, "*(%s%+" PRId64 ")", reg_name(reg), off);
		else if (n == 9 && ops[1].atom == DW_OP_breg16 && ops[2].atom >= DW_OP_lit0 &&
			 ops[2].atom <= DW_OP_lit31 && ops[3].atom == DW_OP_and &&
			 ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit31 &&
			 ops[5].atom == DW_OP_ge && ops[6].atom == DW_OP_lit3 &&
			 ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus)
			snprintf(out, len, "plt(%s%+" PRId64 ",%u,%u)", reg_name(reg), off,
				 ops[2].atom - DW_OP_lit0, ops[4].atom - DW_OP_lit0);
	}
}

static void dw_reg(Dwarf_Frame *fr, int regno, char *out, size_t len)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	uint64_t reg;
	int64_t off;

	snprintf(out, len, "?");
	if (dwarf_frame_register(fr, regno, mem, &ops, &n) < 0) {
		snprintf(out, len, "?(%s)", dwarf_errmsg(-1));
		return;
	}
	if (n == 0) {
		snprintf(out, len, "%s", ops ? "u" : "s");
		return;
	}
	bool value = ops[n - 1].atom == DW_OP_stack_value;
	if (value)
		n--;
	if (!value && n == 2 && ops[0].atom == DW_OP_call_frame_cfa && breg(&ops[1], &reg, &off)) {
		/* DW_CFA_expression: the CFA pushed first, then the expression, which ignores it */
		snprintf(out, len, "*(%s%+" PRId64 ")", reg_name(reg), off);
	} else if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		off = 0;
		if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
			off = (int64_t)ops[1].number;
		else if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
			off = (int64_t)ops[1].number;
		else if (n != 1)
			return;
		snprintf(out, len, "%c%+" PRId64, value ? 'v' : 'c', off);
	} else if (!value && n == 1 && breg(&ops[0], &reg, &off)) {
		snprintf(out, len, "*(%s%+" PRId64 ")", reg_name(reg), off);
	} else {
		char *p = out;

		/* another expression, shown as libdw gives it */
		for (size_t i = 0; i < n && p < out + len - 24; i++)
			p += snprintf(p, (size_t)(out + len - p), "%s0x%x/%" PRId64, i ? ";" : "[",
				      ops[i].atom, (int64_t)ops[i].number);
		snprintf(p, (size_t)(out + len - p), "]");
	}
}

static int check_libdw(const struct fg_cfi *c, int fd, int dfd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL), *delf = NULL;
	Dwarf_CFI *eh = elf ? dwarf_getcfi_elf(elf) : NULL, *df = NULL;
	Dwarf *dw = NULL;
	uint64_t checked = 0, differ = 0, skipped = 0;

	if (dfd >= 0) {
		delf = elf_begin(dfd, ELF_C_READ, NULL);
		dw = delf ? dwarf_begin_elf(delf, DWARF_C_READ, NULL) : NULL;
	} else if (elf) {
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	}
	if (dw)
		df = dwarf_getcfi(dw);
	for (uint32_t i = 0; i + 1 < c->nrows; i++) {
		const struct fg_cfi_rule *r = &c->rules[c->rows[i].rule];
		uint64_t start = c->base + c->rows[i].pc, end = c->base + c->rows[i + 1].pc;

		if (r->kind == FG_CFI_NONE || (entry_pc && start == entry_pc))
			continue;
		if (r->kind != FG_CFI_NORMAL && r->kind != FG_CFI_STOP) {
			skipped++;
			continue;
		}
		for (int k = 0; k < 2; k++) {
			uint64_t pc = k ? end - 1 : start;
			Dwarf_Frame *fr = NULL;
			char a[64], b[64], cc[64], bx[64], x[64], y[64], z[64], yx[64];
			Dwarf_Op *ops;
			size_t n;

			if ((!eh || dwarf_cfi_addrframe(eh, pc, &fr) < 0) &&
			    (!df || dwarf_cfi_addrframe(df, pc, &fr) < 0)) {
				printf("%016" PRIx64 " libdw has no frame: %s\n", pc,
				       dwarf_errmsg(-1));
				differ++;
				break;
			}
			ours(r, a, b, bx, cc, sizeof(a));
			if (dwarf_frame_cfa(fr, &ops, &n) == 0)
				dw_cfa(ops, n, x, sizeof(x));
			else
				snprintf(x, sizeof(x), "?");
			dw_reg(fr, FG_CFI_RBP, y, sizeof(y));
			dw_reg(fr, FG_CFI_RBX, yx, sizeof(yx));
			dw_reg(fr, FG_CFI_RIP, z, sizeof(z));
			free(fr);
			checked++;
			/* rbp: a rule we do not hold is "lost", whatever libdw says */
			bool rbp_ok = strcmp(b, y) == 0 || strcmp(b, "lost") == 0;
			/* no rule for rbx: the same value to us (it is callee-saved), undefined to
			 * libdw's x86-64 defaults */
			bool rbx_ok = strcmp(bx, yx) == 0 || strcmp(bx, "lost") == 0 ||
				      (strcmp(bx, "s") == 0 && strcmp(yx, "u") == 0);
			if (r->kind == FG_CFI_STOP) /* only the return address matters */
				rbp_ok = rbx_ok = true, snprintf(a, sizeof(a), "%s", x);
			if (strcmp(a, x) != 0 || !rbp_ok || !rbx_ok || strcmp(cc, z) != 0) {
				printf("%016" PRIx64 " ours %s %s %s %s libdw %s %s %s %s\n", pc, a,
				       b, bx, cc, x, y, yx, z);
				differ++;
			}
		}
	}
	printf("checked %" PRIu64 " rows: %" PRIu64 " differ, %" PRIu64
	       " skipped (signal/invalid)\n",
	       checked, differ, skipped);
	if (eh)
		dwarf_cfi_end(eh);
	dwarf_end(dw);
	elf_end(delf);
	elf_end(elf);
	return differ ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int time_builds(int fd, int dfd, int times)
{
	double *t = fg_xcalloc((size_t)times, sizeof(*t));

	for (int k = 0; k < times; k++) {
		struct timespec a, b;
		struct fg_cfi *c;

		clock_gettime(CLOCK_MONOTONIC, &a);
		c = fg_cfi_open_fd(fd, dfd);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!c)
			fg_die("cannot build the table");
		fg_cfi_free(c);
		t[k] = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	}
	qsort(t, (size_t)times, sizeof(*t), cmp_double);
	printf("build_ns %.0f\n", t[times / 2]);
	free(t);
	return 0;
}

static void print_stats(const struct fg_cfi *c)
{
	const struct fg_cfi_stats *s = &c->st;

	printf("cies %" PRIu64 "\nfdes %" PRIu64 "\neh_fdes %" PRIu64 "\ndebug_fdes %" PRIu64
	       "\nbad_entries %" PRIu64 "\noverlaps %" PRIu64 "\nempty %" PRIu64 "\nrows %" PRIu64
	       "\nrules %" PRIu64 "\nbytes %zu\nstop_rows %" PRIu64 "\nsignal_rows %" PRIu64
	       "\ninvalid_rows %" PRIu64 "\nrbp_lost %" PRIu64 "\nrbx_lost %" PRIu64
	       "\nentry_rows %" PRIu64 "\n",
	       s->cies, s->fdes, s->eh_fdes, s->debug_fdes, s->bad_entries, s->overlaps, s->empty,
	       s->rows, s->rules, fg_cfi_table_bytes(c), s->stop_rows, s->signal_rows,
	       s->invalid_rows, s->rbp_lost, s->rbx_lost, s->entry_rows);
	for (int i = 1; i < FG_CFI_WHY_COUNT; i++)
		printf("invalid[%s] %" PRIu64 "\n", fg_cfi_why_names[i], s->invalid[i]);
}

static void print_rows(const struct fg_cfi *c, const struct fg_elfsyms *e)
{
	for (uint32_t r = 0; r < c->nrows; r++) {
		char a[64], b[64], d[64];
		uint64_t pc = c->base + c->rows[r].pc;
		const struct fg_elf_sym *s = e ? fg_elfsyms_lookup(e, pc) : NULL;

		fg_cfi_rule_text(&c->rules[c->rows[r].rule], a, b, d, sizeof(a));
		if (entry_pc && pc == entry_pc) {
			snprintf(a, sizeof(a), "entry");
			snprintf(b, sizeof(b), "-");
			snprintf(d, sizeof(d), "-");
		}
		printf("%016" PRIx64 " %s %s %s%s%s\n", pc, a, b, d, s && s->addr == pc ? " " : "",
		       s && s->addr == pc ? s->name : "");
	}
}

/* This kernel's vdso: the table of its image in memory, and its symbols. */
static int dump_vdso(void)
{
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct fg_elfsyms *e;
	struct fg_cfi *c;

	if (!base)
		fg_diex("no vdso");
	/* a few pages at most; the ELF headers say what is read */
	c = fg_cfi_open_mem(base, 8192);
	e = fg_elfsyms_open_mem(base, 8192);
	if (!c || !e)
		fg_die("cannot build the table of the vdso");
	print_rows(c, e);
	fg_cfi_free(c);
	fg_elfsyms_free(e);
	return fg_close_stdout();
}

int main(int argc, char **argv)
{
	bool libdw = false, stats = false;
	int times = 0;
	int i = 1, fd, dfd = -1, rc = 0;
	struct fg_cfi *c;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--libdw") == 0)
			libdw = true;
		else if (strcmp(argv[i], "--stats") == 0)
			stats = true;
		else if (strcmp(argv[i], "--vdso") == 0)
			return dump_vdso();
		else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc)
			times = atoi(argv[++i]);
		else
			break;
	}
	if (argc - i < 1 || argc - i > 2) {
		fprintf(
		    stderr,
		    "usage: cfi-dump [--libdw | --stats | --time N] FILE [DEBUGFILE] | --vdso\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	fd = fg_safeio_open_regular(argv[i], 0, NULL);
	if (fd < 0)
		fg_diex("cannot open '%s': %s", argv[i], strerror(-fd));
	if (i + 1 < argc && (dfd = fg_safeio_open_regular(argv[i + 1], 0, NULL)) < 0)
		fg_diex("cannot open '%s': %s", argv[i + 1], strerror(-dfd));
	c = fg_cfi_open_fd(fd, dfd);
	if (!c)
		fg_die("cannot build the table of '%s'", argv[i]);
	if (c->st.entry_rows) {
		Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
		GElf_Ehdr eh;

		if (elf && gelf_getehdr(elf, &eh))
			entry_pc = eh.e_entry;
		elf_end(elf);
	}
	if (times > 0) {
		rc = time_builds(fd, dfd, times);
	} else if (libdw) {
		rc = check_libdw(c, fd, dfd);
	} else if (stats) {
		print_stats(c);
	} else {
		print_rows(c, NULL);
	}
	fg_cfi_free(c);
	close(fd);
	if (dfd >= 0)
		close(dfd);
	return rc ? rc : fg_close_stdout();
}
