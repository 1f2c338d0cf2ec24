// SPDX-License-Identifier: BSD-2-Clause
/*
 * .eh_frame and .debug_frame into compact unwind tables (fg/cfi.h).
 *
 * Why an interpreter of our own rather than libdw's CFI API: libdw answers
 * "what are the rules at address A" (dwarf_cfi_addrframe) and decodes the
 * FDE's program from its start for each question.  A table needs every row
 * of every FDE, and a row ends where the program advances the location:
 * with libdw we would decode the programs ourselves to find those places,
 * then ask libdw again at each, decoding each FDE once per row (quadratic in
 * its length).  Walking the programs once gives the rows and their
 * boundaries together; libdw stays the test oracle (tests/tools/cfi-dump
 * --libdw checks each row against dwarf_frame_cfa/dwarf_frame_register).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/cfi.h"
#include "fg/diag.h"
#include "fg/hash.h"

const char *const fg_cfi_why_names[FG_CFI_WHY_COUNT] = {
    [FG_CFI_WHY_NONE] = "none",
    [FG_CFI_WHY_CFA_EXPR] = "CFA expression",
    [FG_CFI_WHY_CFA_REG] = "CFA register",
    [FG_CFI_WHY_RA_RULE] = "return address rule",
    [FG_CFI_WHY_RA_COLUMN] = "return address column",
    [FG_CFI_WHY_ARCH] = "signal frame of arm64",
    [FG_CFI_WHY_RANGE] = "offset out of range",
    [FG_CFI_WHY_OP] = "CFA instruction",
    [FG_CFI_WHY_STATE] = "remember/restore state",
};

/* DWARF constants (dwarf.h has them, but this file reads only these) */
enum {
	CFA_advance_loc = 0x40,
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_AARCH64_negate_ra_state = 0x2d, /* SPARC's DW_CFA_GNU_window_save */
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
	OP_deref = 0x06,
	OP_and = 0x1a,
	OP_plus = 0x22,
	OP_shl = 0x24,
	OP_ge = 0x2a,
	OP_lit0 = 0x30,
	OP_lit31 = 0x4f,
	OP_breg0 = 0x70,
	OP_breg31 = 0x8f,
	PE_omit = 0xff,
	PE_pcrel = 0x10,
	PE_datarel = 0x30,
};

/* --- bounded reading --- */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_n(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++) /* little-endian: x86-64 only */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* LEB128, unsigned or signed */
static uint64_t rd_leb(struct rd *r, bool sign)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !r->bad; shift += 7) {
		uint8_t b;

		if (r->p >= r->end || shift > 63) {
			r->bad = true;
			break;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			shift += 7;
			if (sign && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	return 0;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n)
		r->bad = true;
	else
		r->p += n;
}

/*
 * A pointer in encoding `enc` (DW_EH_PE_*); `field` is the address the field
 * is loaded at (pcrel), `data` the base of datarel.  false when the encoding
 * is not supported or the bytes run out.
 */
static bool rd_enc(struct rd *r, uint8_t enc, uint64_t field, uint64_t data, uint64_t *out)
{
	uint64_t v;

	*out = 0;
	if (enc == PE_omit)
		return false;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04:
		v = rd_n(r, 8);
		break;
	case 0x01:
		v = rd_uleb(r);
		break;
	case 0x02:
		v = rd_n(r, 2);
		break;
	case 0x03:
		v = rd_n(r, 4);
		break;
	case 0x09:
		v = (uint64_t)rd_sleb(r);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4);
		break;
	case 0x0c:
		v = rd_n(r, 8);
		break;
	default:
		r->bad = true;
		return false;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_pcrel:
		v += field;
		break;
	case PE_datarel:
		v += data;
		break;
	default: /* textrel, funcrel, aligned: not used on x86-64 */
		r->bad = true;
		return false;
	}
	if (enc & 0x80) /* indirect: would need the loaded image */
		r->bad = true;
	*out = v;
	return !r->bad;
}

/* --- the pieces --- */

struct sect {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr; /* where it is loaded (.eh_frame), for pcrel */
	bool eh;	/* .eh_frame rules, else .debug_frame's */
};

struct cie {
	bool bad;
	bool has_z;
	bool signal;
	uint8_t fde_enc;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t arch; /* enum fg_cfi_arch: how its register numbers read */
	const uint8_t *ins, *ins_end;
};

struct fde {
	uint64_t start, end;
	uint32_t cie; /* index into cies */
	uint8_t sect;
	const uint8_t *ins, *ins_end;
};

/* Where a register is, while a program runs */
struct reg_rule {
	uint8_t how; /* enum fg_cfi_save */
	uint8_t reg;
	int64_t off;
};

struct state {
	uint8_t cfa; /* enum fg_cfi_cfa, or CFA_BAD */
	uint8_t cfa_reg;
	uint8_t cfa_why; /* with CFA_BAD */
	uint8_t plt_mask, plt_min;
	int64_t cfa_off;
	struct reg_rule rbp, rbx, ra;
	bool ra_signed; /* arm64: DW_CFA_AARCH64_negate_ra_state toggled it on */
};

#define CFA_BAD 0xff

struct prog;

struct row64 {
	uint64_t pc;
	uint32_t rule;
};

struct builder {
	struct sect sects[3];
	int nsects;
	struct cie *cies;
	size_t ncies, cies_alloc;
	struct fg_hash *cie_at; /* (section, offset) -> index + 1 */
	struct fde *fdes;
	size_t nfdes, fdes_alloc;
	struct row64 *rows;
	size_t nrows, rows_alloc;
	struct fg_cfi_rule *rules;
	size_t nrules, rules_alloc;
	struct fg_hash *rule_at; /* rule bytes -> index */
	/* the rules met lately, by a hash of their bytes: most rows repeat a few rules */
	struct rule_memo {
		struct fg_cfi_rule r;
		uint32_t idx; /* + 1; 0: empty */
	} memo[256];
	struct fg_cfi_stats st;
	int err;	   /* a bound was hit: -EFBIG */
	struct prog *prog; /* the interpreter's state, reused for each FDE */
	uint64_t entry;	   /* the ELF entry point (0: none), the outermost frame */
	uint8_t arch;	   /* enum fg_cfi_arch */
};

/*
 * The rule of an entry point no FDE covers (ld.so's _start): the kernel
 * starts a process there with no return address on its stack, so a frame
 * there is the outermost, whatever rbp holds.  One instruction only: the code
 * after it has callers' frames or its own.
 */
static const struct fg_cfi_rule entry_rule = {.kind = FG_CFI_STOP, .ra = FG_CFI_UNDEF};

/* The entry point of an executable or shared object, 0 when it has none. */
static uint64_t elf_entry(Elf *elf)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return 0;
	return eh.e_entry;
}

static uint32_t add_rule(struct builder *b, const struct fg_cfi_rule *r)
{
	uint64_t w[3] = {0, 0, 0};
	struct rule_memo *m;
	struct fg_hash_entry *e;
	bool inserted;

	_Static_assert(sizeof(*r) <= sizeof(w), "a rule in three words");
	memcpy(w, r, sizeof(*r));
	m = &b->memo[((w[0] ^ (w[1] * 0x9e3779b97f4a7c15u) ^ (w[2] << 17)) * 0xff51afd7ed558ccdu) >>
		     56];
	if (m->idx && memcmp(&m->r, r, sizeof(*r)) == 0)
		return m->idx - 1;
	e = fg_hash_upsert(b->rule_at, r, sizeof(*r), &inserted);
	if (inserted) {
		if (b->nrules >= FG_CFI_MAX_RULES) {
			b->err = -EFBIG;
			return 0;
		}
		FG_ALLOC_GROW(b->rules, b->nrules + 1, b->rules_alloc);
		b->rules[b->nrules] = *r;
		e->val.u = b->nrules++;
	}
	m->r = *r;
	m->idx = (uint32_t)e->val.u + 1;
	return (uint32_t)e->val.u;
}

/* A row from pc on; rows are added in address order. */
static void add_row(struct builder *b, uint64_t pc, uint32_t rule)
{
	size_t n = b->nrows;

	if (n && b->rows[n - 1].pc == pc) {
		/* the previous row is empty (an FDE's closing row, where the next one starts) */
		b->rows[n - 1].rule = rule;
		if (n >= 2 && b->rows[n - 2].rule == rule)
			b->nrows--;
		return;
	}
	if (n && b->rows[n - 1].rule == rule)
		return; /* the same rule goes on */
	if (n >= FG_CFI_MAX_ROWS) {
		b->err = -EFBIG;
		return;
	}
	FG_ALLOC_GROW(b->rows, n + 1, b->rows_alloc);
	b->rows[n] = (struct row64){.pc = pc, .rule = rule};
	b->nrows++;
}

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/*
 * The slot (include/fg/cfi_step.h) of DWARF register `reg` of an `arch` table,
 * FG_CFI_NREGS when it has none: x86-64's are their own numbers; arm64's sp
 * (31), x29 (29) and x30 (30) take the slots of rsp, rbp and rbx.
 */
static unsigned slot_of(uint8_t arch, uint64_t reg)
{
	if (arch == FG_CFI_ARCH_ARM64)
		return reg == 31   ? FG_CFI_A64_SP
		       : reg == 29 ? FG_CFI_A64_FP
		       : reg == 30 ? FG_CFI_A64_LR
				   : FG_CFI_NREGS;
	return reg < FG_CFI_NREGS ? (unsigned)reg : FG_CFI_NREGS;
}

/* The row's rule from the state of the program. */
static uint32_t state_rule(struct builder *b, const struct cie *c, const struct state *s,
			   uint8_t why)
{
	struct fg_cfi_rule r;
	bool arm64 = c->arch == FG_CFI_ARCH_ARM64;
	unsigned slot = slot_of(c->arch, s->cfa_reg);

	memset(&r, 0, sizeof(r));
	r.kind = FG_CFI_NORMAL;
	if (!why && c->ra_reg != (arm64 ? 30 : FG_CFI_RIP))
		why = FG_CFI_WHY_RA_COLUMN;
	if (!why && c->signal && arm64)
		why = FG_CFI_WHY_ARCH;
	if (!why && c->signal) {
		r.kind = FG_CFI_SIGNAL;
		goto out;
	}
	if (!why && s->cfa != CFA_BAD) {
		if (slot >= FG_CFI_NREGS)
			why = FG_CFI_WHY_CFA_REG;
		else if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
			why = FG_CFI_WHY_RANGE;
		else if (arm64 && s->cfa == FG_CFI_CFA_PLT)
			why = FG_CFI_WHY_CFA_EXPR; /* x86-64's PLT expression */
		r.cfa = s->cfa;
		r.cfa_reg = (uint8_t)slot;
		r.cfa_off = (int32_t)s->cfa_off;
		if (s->cfa == FG_CFI_CFA_PLT) {
			r.arg0 = s->plt_mask;
			r.arg1 = s->plt_min;
		}
	}
	if (!why && s->ra.how == FG_CFI_UNDEF) {
		r.kind = FG_CFI_STOP;
		r.ra = FG_CFI_UNDEF;
		if (s->cfa == CFA_BAD)
			r.cfa = r.cfa_reg = 0;
		goto out;
	}
	if (!why && s->cfa == CFA_BAD)
		why = s->cfa_why;
	/* arm64: the return address may still be in x30 (a leaf, a prologue) */
	if (!why && s->ra.how != FG_CFI_AT_CFA && !(arm64 && s->ra.how == FG_CFI_SAME))
		why = FG_CFI_WHY_RA_RULE;
	if (!why && !fits16(s->ra.off))
		why = FG_CFI_WHY_RANGE;
	if (why) {
		memset(&r, 0, sizeof(r));
		r.kind = FG_CFI_INVALID;
		r.arg0 = why;
		goto out;
	}
	r.ra = s->ra.how;
	r.ra_off = r.ra == FG_CFI_AT_CFA ? (int16_t)s->ra.off : 0;
	if (arm64 && s->ra_signed)
		r.flags |= FG_CFI_RULE_F_PAC;
	r.rbp = s->rbp.how;
	if (r.rbp == FG_CFI_AT_CFA || r.rbp == FG_CFI_VAL_CFA || r.rbp == FG_CFI_AT_REG) {
		unsigned at = r.rbp == FG_CFI_AT_REG ? slot_of(c->arch, s->rbp.reg) : 0;

		if (fits16(s->rbp.off) && at < FG_CFI_NREGS) {
			r.rbp_off = (int16_t)s->rbp.off;
			r.rbp_reg = (uint8_t)at;
		} else {
			r.rbp = FG_CFI_LOST;
		}
	}
	if (arm64) {
		/* x30, the link register, in rbx's slot: the caller's is the return address */
		r.rbx = r.ra;
		r.rbx_off = r.ra_off;
		goto out;
	}
	/* rbx: only at or as the CFA plus an offset (a "bregN" expression is not held) */
	r.rbx = s->rbx.how == FG_CFI_AT_REG ? FG_CFI_LOST : s->rbx.how;
	if (r.rbx == FG_CFI_AT_CFA || r.rbx == FG_CFI_VAL_CFA) {
		if (fits16(s->rbx.off))
			r.rbx_off = (int16_t)s->rbx.off;
		else
			r.rbx = FG_CFI_LOST;
	}
out:
	return add_rule(b, &r);
}

/* A CFA expression: "bregN off", "bregN off; deref", or the PLT's. */
static void cfa_expression(struct state *s, const uint8_t *p, uint64_t len)
{
	struct rd r = {p, p + len, false};
	uint8_t op, ops[16];
	int64_t off = 0;
	int n = 0, reg = -1;
	uint8_t lits[3];
	int nlits = 0;

	s->cfa = CFA_BAD;
	s->cfa_why = FG_CFI_WHY_CFA_EXPR;
	while (r.p < r.end && n < (int)sizeof(ops)) {
		op = (uint8_t)rd_n(&r, 1);
		ops[n++] = op;
		if (op >= OP_breg0 && op <= OP_breg31) {
			int64_t o = rd_sleb(&r);

			if (n == 1) {
				reg = op - OP_breg0;
				off = o;
			} else if (n == 2 && (op != OP_breg0 + FG_CFI_RIP || o != 0)) {
				return;
			}
		} else if (op >= OP_lit0 && op <= OP_lit31) {
			if (nlits < 3)
				lits[nlits] = op - OP_lit0;
			nlits++;
		}
		if (r.bad)
			return;
	}
	if (r.p < r.end || reg < 0)
		return;
	if (n == 1) {
		s->cfa = FG_CFI_CFA_REG;
	} else if (n == 2 && ops[1] == OP_deref) {
		s->cfa = FG_CFI_CFA_DEREF;
	} else if (n == 9 && reg == FG_CFI_RSP && ops[1] == OP_breg0 + FG_CFI_RIP &&
		   ops[2] >= OP_lit0 && ops[2] <= OP_lit31 && ops[3] == OP_and &&
		   ops[4] >= OP_lit0 && ops[4] <= OP_lit31 && ops[5] == OP_ge &&
		   ops[6] == OP_lit0 + 3 && ops[7] == OP_shl && ops[8] == OP_plus && nlits == 3) {
		s->cfa = FG_CFI_CFA_PLT;
		s->plt_mask = lits[0];
		s->plt_min = lits[1];
	} else {
		return;
	}
	s->cfa_reg = (uint8_t)reg;
	s->cfa_off = off;
	s->cfa_why = 0;
}

/* A register's expression: "bregN off" (saved at reg + off) is held, the rest is not. */
static void reg_expression(struct reg_rule *rr, const uint8_t *p, uint64_t len)
{
	struct rd r = {p, p + len, false};
	uint8_t op = (uint8_t)rd_n(&r, 1);

	rr->how = FG_CFI_LOST;
	if (r.bad || op < OP_breg0 || op > OP_breg31)
		return;
	rr->off = rd_sleb(&r);
	if (r.bad || r.p != r.end)
		return;
	rr->how = FG_CFI_AT_REG;
	rr->reg = (uint8_t)(op - OP_breg0);
}

/*
 * An offset times a factor (the data alignment); a product that overflows
 * becomes INT64_MIN, out of every field's range: the row says so.
 */
static int64_t scaled(int64_t v, int64_t factor)
{
	int64_t r;

	if (__builtin_mul_overflow(v, factor, &r) || r == INT64_MIN)
		return INT64_MIN;
	return r;
}

/* The rule for register `reg`, when it is one we keep; NULL otherwise. */
static struct reg_rule *reg_of(struct state *s, const struct cie *c, uint64_t reg)
{
	if (reg == c->ra_reg)
		return &s->ra;
	switch (slot_of(c->arch, reg)) {
	case FG_CFI_RBP:
		return &s->rbp;
	case FG_CFI_RBX: /* (arm64's x30 is its return address column) */
		return c->arch == FG_CFI_ARCH_X86_64 ? &s->rbx : NULL;
	default:
		return NULL;
	}
}

struct prog {
	struct builder *b;
	const struct cie *c;
	const struct sect *sect;
	const struct fde *f; /* NULL while running the CIE's initial instructions */
	struct state s, init;
	struct state stack[FG_CFI_MAX_STATE];
	unsigned depth;
	uint64_t loc, row_loc;
	uint8_t why; /* a fatal error: every row from here on is invalid */
};

/* Move the location to `to`, closing the row that started at row_loc; false at the FDE's end. */
static bool move_to(struct prog *g, uint64_t to)
{
	if (to > g->f->end)
		to = g->f->end;
	if (to > g->row_loc) {
		add_row(g->b, g->row_loc, state_rule(g->b, g->c, &g->s, g->why));
		g->row_loc = to;
	}
	g->loc = to;
	return to < g->f->end;
}

static bool advance(struct prog *g, uint64_t delta)
{
	uint64_t to;

	if (__builtin_mul_overflow(delta, g->c->code_align, &delta) ||
	    __builtin_add_overflow(g->loc, delta, &to))
		to = g->f->end;
	return move_to(g, to);
}

/* The CFA interpreter, one case per DW_CFA_ opcode: runs a CIE's or an FDE's program into g's
 * rows; false when it ends early (the FDE's end reached, or an error).  The one function of the
 * library over 120 lines: a switch over the opcodes reads best whole. */
static bool cfa_interpret(struct prog *g, const uint8_t *p, const uint8_t *end)
{
	struct rd r = {p, end, false};
	const struct cie *c = g->c;
	struct state *s = &g->s;

	while (r.p < r.end && !r.bad) {
		uint8_t op = (uint8_t)rd_n(&r, 1), low = op & 0x3f;
		uint64_t reg, v;
		int64_t sv;
		struct reg_rule *rr;

		switch (op & 0xc0) {
		case CFA_advance_loc:
			if (g->f && !advance(g, low))
				return false;
			continue;
		case CFA_offset:
			v = rd_uleb(&r);
			if ((rr = reg_of(s, c, low)) != NULL)
				*rr = (struct reg_rule){FG_CFI_AT_CFA, 0,
							scaled((int64_t)v, c->data_align)};
			continue;
		case CFA_restore:
			if ((rr = reg_of(s, c, low)) != NULL)
				*rr = *reg_of(&g->init, c, low);
			continue;
		}
		switch (op) {
		case CFA_nop:
			break;
		case CFA_set_loc:
			if (!g->f ||
			    !rd_enc(&r, g->sect->eh ? c->fde_enc : 0,
				    g->sect->vaddr + (uint64_t)(r.p - g->sect->data), 0, &v) ||
			    v < g->loc)
				goto bad;
			if (!move_to(g, v))
				return false;
			break;
		case CFA_advance_loc1:
		case CFA_advance_loc2:
		case CFA_advance_loc4:
			v = rd_n(&r, op == CFA_advance_loc1 ? 1 : op == CFA_advance_loc2 ? 2 : 4);
			if (r.bad)
				goto bad;
			if (g->f && !advance(g, v))
				return false;
			break;
		case CFA_offset_extended:
		case CFA_val_offset:
		case CFA_GNU_negative_offset_extended:
			reg = rd_uleb(&r);
			v = rd_uleb(&r);
			sv = op == CFA_GNU_negative_offset_extended ? scaled((int64_t)v, -1)
								    : (int64_t)v;
			if ((rr = reg_of(s, c, reg)) != NULL)
				*rr = (struct reg_rule){op == CFA_val_offset ? FG_CFI_VAL_CFA
									     : FG_CFI_AT_CFA,
							0, scaled(sv, c->data_align)};
			break;
		case CFA_offset_extended_sf:
		case CFA_val_offset_sf:
			reg = rd_uleb(&r);
			sv = rd_sleb(&r);
			if ((rr = reg_of(s, c, reg)) != NULL)
				*rr = (struct reg_rule){op == CFA_val_offset_sf ? FG_CFI_VAL_CFA
										: FG_CFI_AT_CFA,
							0, scaled(sv, c->data_align)};
			break;
		case CFA_restore_extended:
			reg = rd_uleb(&r);
			if ((rr = reg_of(s, c, reg)) != NULL)
				*rr = *reg_of(&g->init, c, reg);
			break;
		case CFA_undefined:
		case CFA_same_value:
			reg = rd_uleb(&r);
			if ((rr = reg_of(s, c, reg)) != NULL)
				*rr = (struct reg_rule){
				    op == CFA_undefined ? FG_CFI_UNDEF : FG_CFI_SAME, 0, 0};
			break;
		case CFA_register:
			reg = rd_uleb(&r);
			rd_uleb(&r);
			if ((rr = reg_of(s, c, reg)) != NULL)
				*rr = (struct reg_rule){FG_CFI_LOST, 0, 0};
			break;
		case CFA_remember_state:
			if (g->depth >= FG_CFI_MAX_STATE) {
				g->why = FG_CFI_WHY_STATE;
				break;
			}
			g->stack[g->depth++] = *s;
			break;
		case CFA_restore_state:
			if (!g->depth) {
				g->why = FG_CFI_WHY_STATE;
				break;
			}
			/* the CFA and the registers, as DWARF 5 says (the location stays) */
			*s = g->stack[--g->depth];
			break;
		case CFA_def_cfa:
		case CFA_def_cfa_sf:
			reg = rd_uleb(&r);
			sv = op == CFA_def_cfa ? (int64_t)rd_uleb(&r)
					       : scaled(rd_sleb(&r), c->data_align);
			s->cfa = reg < 256 ? FG_CFI_CFA_REG : CFA_BAD;
			s->cfa_why = FG_CFI_WHY_CFA_REG;
			s->cfa_reg = reg < 256 ? (uint8_t)reg : 0xff;
			s->cfa_off = sv;
			break;
		case CFA_def_cfa_register:
			reg = rd_uleb(&r);
			s->cfa = reg < 256 ? FG_CFI_CFA_REG : CFA_BAD;
			s->cfa_why = FG_CFI_WHY_CFA_REG;
			s->cfa_reg = reg < 256 ? (uint8_t)reg : 0xff;
			break;
		case CFA_def_cfa_offset:
		case CFA_def_cfa_offset_sf:
			sv = op == CFA_def_cfa_offset ? (int64_t)rd_uleb(&r)
						      : scaled(rd_sleb(&r), c->data_align);
			if (s->cfa == FG_CFI_CFA_REG)
				s->cfa_off = sv;
			else if (s->cfa != CFA_BAD) { /* an offset to an expression: not DWARF */
				s->cfa = CFA_BAD;
				s->cfa_why = FG_CFI_WHY_CFA_EXPR;
			}
			break;
		case CFA_def_cfa_expression:
			v = rd_uleb(&r);
			if (r.bad || v > (uint64_t)(r.end - r.p))
				goto bad;
			cfa_expression(s, r.p, v);
			r.p += v;
			break;
		case CFA_expression:
		case CFA_val_expression:
			reg = rd_uleb(&r);
			v = rd_uleb(&r);
			if (r.bad || v > (uint64_t)(r.end - r.p))
				goto bad;
			if ((rr = reg_of(s, c, reg)) != NULL) {
				if (op == CFA_expression)
					reg_expression(rr, r.p, v);
				else
					*rr = (struct reg_rule){FG_CFI_LOST, 0, 0};
			}
			r.p += v;
			break;
		case CFA_GNU_args_size:
			rd_uleb(&r);
			break;
		case CFA_AARCH64_negate_ra_state:
			/* pointer authentication: the return address is signed from here on
			 * (or no longer), a state remember/restore keeps */
			if (c->arch != FG_CFI_ARCH_ARM64)
				goto bad;
			s->ra_signed = !s->ra_signed;
			break;
		default:
			goto bad;
		}
	}
	if (!r.bad)
		return true;
bad:
	g->why = FG_CFI_WHY_OP;
	return true;
}

static const struct state initial_state = {
    .cfa = CFA_BAD,
    .cfa_why = FG_CFI_WHY_CFA_EXPR,
};

/* The rows of one FDE. */
static void fde_rows(struct builder *b, const struct fde *f)
{
	struct prog *g = b->prog;

	g->b = b;
	g->f = NULL;
	g->why = 0;
	g->c = &b->cies[f->cie];
	g->sect = &b->sects[f->sect];
	g->s = initial_state;
	/* the CIE's initial instructions, then the FDE's */
	cfa_interpret(g, g->c->ins, g->c->ins_end);
	g->init = g->s;
	g->depth = 0;
	g->f = f;
	g->loc = g->row_loc = f->start;
	if (cfa_interpret(g, f->ins, f->ins_end) && g->row_loc < f->end)
		add_row(b, g->row_loc, state_rule(b, g->c, &g->s, g->why));
	add_row(b, f->end, 0);
}

/* --- CIEs and FDEs --- */

/* The entry at `off` of a section: its body [*body, *end) and the id field's value. */
static bool entry_at(const struct sect *s, uint64_t off, struct rd *body, uint64_t *id,
		     uint64_t *next, bool *is64)
{
	struct rd r = {s->data, s->data + s->size, false};
	uint64_t len;

	if (off >= s->size)
		return false;
	r.p += off;
	len = rd_n(&r, 4);
	*is64 = false;
	if (len == 0xffffffff) {
		len = rd_n(&r, 8);
		*is64 = true;
	} else if (len >= 0xfffffff0) {
		return false;
	}
	if (r.bad || len == 0 || len > (uint64_t)(r.end - r.p))
		return false;
	body->p = r.p;
	body->end = r.p + len;
	body->bad = false;
	*next = (uint64_t)(body->end - s->data);
	*id = rd_n(body, *is64 ? 8 : 4);
	return !body->bad;
}

static void parse_cie(const struct sect *s, struct rd *r, struct cie *c)
{
	uint8_t version = (uint8_t)rd_n(r, 1);
	const char *aug = (const char *)r->p;
	size_t auglen;

	memset(c, 0, sizeof(*c));
	c->bad = true;
	if (r->bad || !memchr(aug, 0, (size_t)(r->end - r->p)))
		return;
	auglen = strlen(aug);
	r->p += auglen + 1;
	if (version != 1 && version != 3 && version != 4)
		return;
	if (version == 4) {
		uint8_t asz = (uint8_t)rd_n(r, 1), seg = (uint8_t)rd_n(r, 1);

		if (asz != 8 || seg != 0)
			return;
	}
	c->code_align = rd_uleb(r);
	c->data_align = rd_sleb(r);
	c->ra_reg = version == 1 ? rd_n(r, 1) : rd_uleb(r);
	if (r->bad)
		return;
	if (aug[0] == 'z') {
		uint64_t n = rd_uleb(r);
		struct rd a;

		if (r->bad || n > (uint64_t)(r->end - r->p))
			return;
		a = (struct rd){r->p, r->p + n, false};
		r->p += n;
		c->has_z = true;
		for (size_t i = 1; i < auglen && !a.bad; i++) {
			uint8_t enc;
			uint64_t dummy;

			switch (aug[i]) {
			case 'R':
				c->fde_enc = (uint8_t)rd_n(&a, 1);
				break;
			case 'L':
				rd_n(&a, 1);
				break;
			case 'P':
				enc = (uint8_t)rd_n(&a, 1);
				/* the personality routine: skipped, only its size matters */
				if (!a.bad && !rd_enc(&a, enc & 0x7f, 0, 0, &dummy))
					return;
				break;
			case 'S':
				c->signal = true;
				break;
			default: /* 'B', 'G' and future ones: the rest of the data is skipped */
				i = auglen;
				break;
			}
		}
		if (a.bad)
			return;
	} else if (auglen) {
		return; /* "eh" and the like: unknown layout */
	}
	if (!s->eh && c->fde_enc)
		return;
	if (c->code_align == 0)
		return;
	c->ins = r->p;
	c->ins_end = r->end;
	c->bad = false;
}

/* The index of the CIE at `off` of section `si`, parsed once; -1 when bad. */
static long get_cie(struct builder *b, int si, uint64_t off)
{
	uint64_t key[2] = {(uint64_t)si, off}, id, next;
	struct fg_hash_entry *e;
	struct rd body;
	bool inserted, is64;
	const struct sect *s = &b->sects[si];
	struct cie c;

	e = fg_hash_upsert(b->cie_at, key, sizeof(key), &inserted);
	if (!inserted)
		return (long)e->val.u - 1;
	e->val.u = 0;
	if (!entry_at(s, off, &body, &id, &next, &is64))
		return -1;
	if (s->eh ? id != 0 : id != (is64 ? ~(uint64_t)0 : 0xffffffffu))
		return -1;
	parse_cie(s, &body, &c);
	c.arch = b->arch;
	b->st.cies++;
	if (c.bad) {
		b->st.bad_entries++;
		return -1;
	}
	FG_ALLOC_GROW(b->cies, b->ncies + 1, b->cies_alloc);
	b->cies[b->ncies++] = c;
	/* the hash map may have moved: find the entry again */
	fg_hash_get(b->cie_at, key, sizeof(key))->val.u = b->ncies;
	return (long)b->ncies - 1;
}

static void parse_fde(struct builder *b, int si, uint64_t off, struct rd *r, uint64_t id, bool is64)
{
	const struct sect *s = &b->sects[si];
	uint64_t cie_off, start, range;
	long ci;
	struct fde f;

	if (s->eh) {
		/* relative to the id field itself */
		uint64_t field = off + (is64 ? 12 : 4);

		if (id > field)
			goto bad;
		cie_off = field - id;
	} else {
		cie_off = id;
	}
	ci = get_cie(b, si, cie_off);
	if (ci < 0)
		goto bad;
	const struct cie *c = &b->cies[ci];
	uint64_t field = s->vaddr + (uint64_t)(r->p - s->data);
	if (!rd_enc(r, s->eh ? c->fde_enc : 0, field, 0, &start) ||
	    !rd_enc(r, s->eh ? (c->fde_enc & 0x0f) : 0, 0, 0, &range))
		goto bad;
	if (c->has_z) {
		uint64_t n = rd_uleb(r);

		rd_skip(r, n);
		if (r->bad)
			goto bad;
	}
	if (range == 0) {
		b->st.empty++;
		return;
	}
	if (start + range < start)
		goto bad;
	if (b->nfdes >= FG_CFI_MAX_FDES) {
		b->err = -EFBIG;
		return;
	}
	f = (struct fde){
	    .start = start,
	    .end = start + range,
	    .cie = (uint32_t)ci,
	    .sect = (uint8_t)si,
	    .ins = r->p,
	    .ins_end = r->end,
	};
	FG_ALLOC_GROW(b->fdes, b->nfdes + 1, b->fdes_alloc);
	b->fdes[b->nfdes++] = f;
	return;
bad:
	b->st.bad_entries++;
}

/* Every entry of a section, in order; .eh_frame ends at a zero length. */
static void walk(struct builder *b, int si)
{
	const struct sect *s = &b->sects[si];
	uint64_t off = 0, id, next;
	struct rd body;
	bool is64;

	while (off + 4 <= s->size && !b->err) {
		if (!entry_at(s, off, &body, &id, &next, &is64)) {
			/* a zero length ends .eh_frame; anything else is corrupt */
			struct rd r = {s->data + off, s->data + s->size, false};

			if (rd_n(&r, 4) != 0)
				b->st.bad_entries++;
			break;
		}
		if (s->eh ? id == 0 : id == (is64 ? ~(uint64_t)0 : 0xffffffffu))
			get_cie(b, si, off);
		else
			parse_fde(b, si, off, &body, id, is64);
		off = next;
	}
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* .eh_frame (added first) before .debug_frame */
	if (x->sect != y->sect)
		return x->sect < y->sect ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* Does an FDE of b's (sorted) cover vaddr? */
static bool fde_covers(const struct builder *b, uint64_t vaddr)
{
	for (size_t i = 0; i < b->nfdes && b->fdes[i].start <= vaddr; i++)
		if (vaddr < b->fdes[i].end)
			return true;
	return false;
}

static struct fg_cfi *build(struct builder *b)
{
	struct fg_cfi *c;
	struct fg_cfi_rule none;
	uint64_t last_end = 0, base = 0;
	bool any = false, entry;

	memset(&none, 0, sizeof(none));
	b->cie_at = fg_hash_new(64);
	b->rule_at = fg_hash_new(256);
	b->prog = fg_xcalloc(1, sizeof(*b->prog));
	add_rule(b, &none); /* rules[0] */
	for (int i = 0; i < b->nsects && !b->err; i++)
		walk(b, i);
	if (b->nfdes)
		qsort(b->fdes, b->nfdes, sizeof(*b->fdes), cmp_fde);
	entry = b->entry && b->entry < UINT64_MAX && !b->err && !fde_covers(b, b->entry);
	for (size_t i = 0; i <= b->nfdes && !b->err; i++) {
		const struct fde *f = i < b->nfdes ? &b->fdes[i] : NULL;

		if (f && b->st.fdes && f->start < last_end) {
			b->st.overlaps++;
			continue;
		}
		if (entry && (!f || b->entry < f->start)) {
			/* in a gap before f (or after the last FDE): its own row */
			entry = false;
			if (!any) {
				base = b->entry;
				any = true;
			}
			if (b->entry + 1 - base <= UINT32_MAX) {
				add_row(b, b->entry, add_rule(b, &entry_rule));
				add_row(b, b->entry + 1, 0);
				b->st.entry_rows++;
			}
		}
		if (!f)
			break;
		if (!any) {
			base = f->start;
			any = true;
		}
		if (f->end - base > UINT32_MAX) {
			b->st.bad_entries++; /* rows hold 32-bit offsets from the first */
			continue;
		}
		fde_rows(b, f);
		last_end = f->end;
		b->st.fdes++;
		if (b->sects[f->sect].eh)
			b->st.eh_fdes++;
		else
			b->st.debug_fdes++;
	}
	if (b->err) {
		errno = -b->err;
		return NULL;
	}
	c = fg_xcalloc(1, sizeof(*c));
	c->base = base;
	c->nrows = (uint32_t)b->nrows;
	c->rows = fg_xcalloc(b->nrows ? b->nrows : 1, sizeof(*c->rows));
	for (size_t i = 0; i < b->nrows; i++) {
		c->rows[i].pc = (uint32_t)(b->rows[i].pc - base);
		c->rows[i].rule = b->rows[i].rule;
	}
	c->nrules = (uint32_t)b->nrules;
	c->rules = b->rules;
	b->rules = NULL;
	for (size_t i = 0; i < b->nrows; i++) {
		const struct fg_cfi_rule *r = &c->rules[c->rows[i].rule];

		if (r->kind == FG_CFI_STOP)
			b->st.stop_rows++;
		else if (r->kind == FG_CFI_SIGNAL)
			b->st.signal_rows++;
		else if (r->kind == FG_CFI_INVALID) {
			b->st.invalid_rows++;
			b->st.invalid[r->arg0 < FG_CFI_WHY_COUNT ? r->arg0 : 0]++;
		} else if (r->kind == FG_CFI_NORMAL) {
			b->st.rbp_lost += r->rbp == FG_CFI_LOST;
			b->st.rbx_lost += r->rbx == FG_CFI_LOST;
		}
	}
	b->st.rows = c->nrows;
	b->st.rules = c->nrules;
	c->st = b->st;
	return c;
}

static void builder_release(struct builder *b)
{
	free(b->cies);
	free(b->fdes);
	free(b->rows);
	free(b->rules);
	fg_hash_free(b->cie_at);
	fg_hash_free(b->rule_at);
	free(b->prog);
}

/* --- ELF --- */

/* The machine of an ELF file whose CFI can be read (enum fg_cfi_arch), -1 for another. */
static int elf_arch(Elf *elf)
{
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -1;
	return eh.e_machine == EM_X86_64    ? FG_CFI_ARCH_X86_64
	       : eh.e_machine == EM_AARCH64 ? FG_CFI_ARCH_ARM64
					    : -1;
}

static bool elf_ok(Elf *elf)
{
	return elf_arch(elf) >= 0;
}

/* The bytes of a section, decompressed when needed; false when absent, bad or too large. */
static bool section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, struct sect *out)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0)
		return false;
	if (sh->sh_size > FG_CFI_MAX_SECTION)
		return false;
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch) || ch.ch_size > FG_CFI_MAX_SECTION ||
		    elf_compress(scn, 0, 0) < 0)
			return false;
		d = elf_getdata(scn, NULL);
	} else {
		d = elf_rawdata(scn, NULL);
	}
	if (!d || !d->d_buf || d->d_size > FG_CFI_MAX_SECTION)
		return false;
	out->data = d->d_buf;
	out->size = d->d_size;
	out->vaddr = sh->sh_addr;
	return true;
}

/*
 * .eh_frame or .debug_frame by name: 1 with *out set, 0 when there is no such
 * section, -1 when it has no bytes here (NOBITS: a debug file's), -2 when it
 * is over the bounds or cannot be read.
 */
static int find_section(Elf *elf, const char *want, struct sect *out)
{
	size_t shstrndx, nscn;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, &nscn) < 0 || nscn > FG_ELF_MAX_SECTIONS ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return 0;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
			return -1;
		return section_bytes(scn, &sh, out) ? 1 : -2;
	}
	return 0;
}

/* .eh_frame found through PT_GNU_EH_FRAME (.eh_frame_hdr's eh_frame_ptr). */
static bool eh_frame_by_hdr(Elf *elf, const struct fg_cfi *c, struct sect *out)
{
	size_t nphdr;
	GElf_Phdr ph;
	bool found = false;

	if (elf_getphdrnum(elf, &nphdr) < 0)
		return false;
	for (size_t i = 0; i < nphdr && i < 4096; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			found = true;
			break;
		}
	}
	if (!found || ph.p_filesz < 8 || ph.p_filesz > FG_CFI_MAX_SECTION)
		return false;
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
	if (!d || !d->d_buf)
		return false;
	struct rd r = {d->d_buf, (const uint8_t *)d->d_buf + d->d_size, false};
	uint8_t version = (uint8_t)rd_n(&r, 1), enc = (uint8_t)rd_n(&r, 1);
	uint64_t at;

	rd_n(&r, 2); /* the FDE count's and the table's encodings */
	if (version != 1 || !rd_enc(&r, enc, ph.p_vaddr + 4, ph.p_vaddr, &at))
		return false;
	for (size_t i = 0; i < c->nloads; i++) {
		const struct fg_elf_load *l = &c->loads[i];
		uint64_t size;

		if (at < l->vaddr || at - l->vaddr >= l->filesz)
			continue;
		size = l->filesz - (at - l->vaddr);
		if (size > FG_CFI_MAX_SECTION)
			size = FG_CFI_MAX_SECTION;
		d = elf_getdata_rawchunk(elf, (int64_t)(l->offset + (at - l->vaddr)), size,
					 ELF_T_BYTE);
		if (!d || !d->d_buf)
			return false;
		out->data = d->d_buf;
		out->size = d->d_size;
		out->vaddr = at;
		return true;
	}
	return false;
}

static void once_init(void)
{
	static int done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = 1;
	}
}

struct fg_cfi *fg_cfi_from_elf(struct Elf *elf, struct Elf *debug)
{
	struct builder b;
	struct fg_cfi tmp, *c;
	bool unusable = false;
	GElf_Ehdr eh;
	size_t nscn;
	int r;

	once_init();
	if (!elf || !elf_ok(elf) || (debug && elf_arch(debug) != elf_arch(elf))) {
		errno = ENOEXEC;
		return NULL;
	}
	memset(&b, 0, sizeof(b));
	b.arch = (uint8_t)elf_arch(elf);
	memset(&tmp, 0, sizeof(tmp));
	tmp.nloads = fg_elf_loads(elf, &tmp.loads);
	r = find_section(elf, ".eh_frame", &b.sects[b.nsects]);
	/* no section headers at all (an image in memory): PT_GNU_EH_FRAME leads to .eh_frame */
	if (r == 0 && (elf_getshdrnum(elf, &nscn) < 0 || nscn == 0) &&
	    eh_frame_by_hdr(elf, &tmp, &b.sects[b.nsects]))
		r = 1;
	unusable |= r == -2;
	if (r == 1)
		b.sects[b.nsects++].eh = true;
	r = find_section(elf, ".debug_frame", &b.sects[b.nsects]);
	unusable |= r == -2;
	if (r == 1)
		b.nsects++;
	if (debug) {
		r = find_section(debug, ".debug_frame", &b.sects[b.nsects]);
		unusable |= r == -2;
		if (r == 1)
			b.nsects++;
	}
	if (!b.nsects) {
		free(tmp.loads);
		errno = unusable ? EFBIG : ENODATA;
		return NULL;
	}
	b.entry = elf_entry(elf);
	c = build(&b);
	int err = errno;
	builder_release(&b);
	if (!c) {
		free(tmp.loads);
		errno = err;
		return NULL;
	}
	c->loads = tmp.loads;
	c->nloads = tmp.nloads;
	c->arch = b.arch;
	c->shared = gelf_getehdr(elf, &eh) && eh.e_type == ET_DYN;
	return c;
}

struct fg_cfi *fg_cfi_open_fd(int fd, int debug_fd)
{
	Elf *elf, *dbg = NULL;
	struct fg_cfi *c;
	int err;

	once_init();
	if (!(elf = fg_elf_begin_fd(fd)))
		return NULL;
	if (debug_fd >= 0 && !(dbg = fg_elf_begin_fd(debug_fd))) {
		err = errno;
		elf_end(elf);
		errno = err;
		return NULL;
	}
	c = fg_cfi_from_elf(elf, dbg);
	err = errno;
	elf_end(dbg);
	elf_end(elf);
	errno = err;
	return c;
}

struct fg_cfi *fg_cfi_open_mem(const void *image, size_t size)
{
	void *copy;
	Elf *elf = fg_elf_memory(image, size, &copy);
	struct fg_cfi *c;
	int err;

	if (!elf)
		return NULL;
	c = fg_cfi_from_elf(elf, NULL);
	err = errno;
	elf_end(elf);
	free(copy);
	errno = err;
	return c;
}

static void lazy_free(struct fg_cfi_lazy *z);
static const struct fg_cfi_rule *lazy_lookup(const struct fg_cfi *c, uint64_t vaddr,
					     uint64_t *start, uint64_t *end);

void fg_cfi_free(struct fg_cfi *c)
{
	if (!c)
		return;
	if (c->map) {
		munmap(c->map, c->map_len);
	} else {
		free(c->rows);
		free(c->rules);
	}
	free(c->loads);
	lazy_free(c->lazy);
	free(c);
}

const struct fg_cfi_rule *fg_cfi_lookup_range(const struct fg_cfi *c, uint64_t vaddr,
					      uint64_t *start, uint64_t *end)
{
	long i;

	*start = *end = vaddr;
	if (c->lazy)
		return lazy_lookup(c, vaddr, start, end);
	if (!c->nrows || vaddr < c->base || vaddr - c->base > UINT32_MAX)
		return &c->rules[0];
	i = fg_cfi_find_row(c->rows, c->nrows, (uint32_t)(vaddr - c->base));
	if (i < 0)
		return &c->rules[0];
	*start = c->base + c->rows[i].pc;
	*end = (uint32_t)i + 1 < c->nrows ? c->base + c->rows[i + 1].pc : *start + 1;
	return &c->rules[c->rows[i].rule];
}

const struct fg_cfi_rule *fg_cfi_lookup(const struct fg_cfi *c, uint64_t vaddr)
{
	uint64_t s, e;

	return fg_cfi_lookup_range(c, vaddr, &s, &e);
}

bool fg_cfi_offset_to_vaddr(const struct fg_cfi *c, uint64_t off, uint64_t *vaddr)
{
	return fg_elf_offset_to_addr(c->loads, c->nloads, off, vaddr);
}

size_t fg_cfi_table_bytes(const struct fg_cfi *c)
{
	return (size_t)c->nrows * sizeof(*c->rows) + (size_t)c->nrules * sizeof(*c->rules);
}

static const char *const reg_names[FG_CFI_NREGS] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static void save_text(uint8_t how, int off, char *buf, size_t len)
{
	switch (how) {
	case FG_CFI_AT_CFA:
		snprintf(buf, len, "c%+d", off);
		break;
	case FG_CFI_VAL_CFA:
		snprintf(buf, len, "v%+d", off);
		break;
	case FG_CFI_AT_REG:
		snprintf(buf, len, "exp");
		break;
	case FG_CFI_LOST:
		snprintf(buf, len, "lost");
		break;
	default: /* same value and undefined: readelf prints "u" for both a column not yet set and
		    undefined */
		snprintf(buf, len, "u");
		break;
	}
}

void fg_cfi_rule_text(const struct fg_cfi_rule *r, char *cfa, char *rbp, char *ra, size_t len)
{
	static const char *const kinds[] = {"none", "", "", "signal", "invalid"};

	if (r->kind != FG_CFI_NORMAL && r->kind != FG_CFI_STOP) {
		snprintf(cfa, len, "%s", r->kind < 5 ? kinds[r->kind] : "?");
		snprintf(rbp, len, "-");
		snprintf(ra, len, "-");
		return;
	}
	if (r->cfa == FG_CFI_CFA_REG)
		snprintf(cfa, len, "%s%+d", r->cfa_reg < FG_CFI_NREGS ? reg_names[r->cfa_reg] : "?",
			 r->cfa_off);
	else
		snprintf(cfa, len, "exp");
	save_text(r->rbp, r->rbp_off, rbp, len);
	save_text(r->ra, r->ra_off, ra, len);
}

/*
 * --- lazy tables: one FDE at a time, found through .eh_frame_hdr ---
 *
 * The header's search table is a sorted array of (initial location, FDE
 * address) pairs, each a 4-byte offset from the header (DW_EH_PE_datarel |
 * sdata4: the only encoding linkers write).  It is trusted only after its
 * count matches the FDEs of .eh_frame and its order is checked; each FDE it
 * leads to must start where it says.  The whole table keeps the first of
 * two overlapping FDEs; a lookup that finds an FDE overlapping its
 * predecessor builds the whole table instead, so that the answers stay the
 * same.
 */

/* One FDE's rows, compiled on its first lookup. */
struct lazy_row {
	uint64_t pc;
	struct fg_cfi_rule rule;
};

struct lazy_fde {
	uint64_t start, end;
	uint32_t nrows;
	struct lazy_row rows[];
};

struct fg_cfi_lazy {
	uint8_t *eh;		/* a copy of .eh_frame */
	uint8_t *table;		/* a copy of the header's search table */
	uint64_t hdr_vaddr;	/* what its offsets are relative to */
	uint32_t count;		/* its entries */
	struct lazy_fde **fdes; /* [count]: NULL until compiled */
	uint64_t nrows;		/* rows compiled, at most FG_CFI_MAX_ROWS */
	struct builder b;	/* sects[0] is .eh_frame; CIEs, rules and interpreter reused */
	struct fg_cfi *whole;	/* the whole table, when the header cannot be followed */
	bool whole_tried;
	uint64_t entry; /* the ELF entry point (0: none): entry_rule where no FDE is */
};

/* an FDE without rows: corrupt, or over a bound */
static struct lazy_fde no_fde;

/* Entry i's initial location (field 0) or FDE address (field 1). */
static uint64_t lazy_loc(const struct fg_cfi_lazy *z, uint32_t i, int field)
{
	int32_t v;

	memcpy(&v, z->table + 8 * (size_t)i + 4 * (size_t)field, 4);
	return z->hdr_vaddr + (uint64_t)(int64_t)v;
}

/* The FDE of entry i, its range and program; false when corrupt, empty or not where it says. */
static bool lazy_parse(struct fg_cfi_lazy *z, uint32_t i, struct fde *out)
{
	struct builder *b = &z->b;
	const struct sect *s = &b->sects[0];
	uint64_t at = lazy_loc(z, i, 1), id, next;
	struct rd body;
	bool is64;

	if (at < s->vaddr || !entry_at(s, at - s->vaddr, &body, &id, &next, &is64) || id == 0)
		return false;
	b->nfdes = 0;
	parse_fde(b, 0, at - s->vaddr, &body, id, is64);
	if (b->nfdes != 1 || b->fdes[0].start != lazy_loc(z, i, 0))
		return false;
	*out = b->fdes[0];
	return true;
}

/* Entry i's rows, compiled once; NULL when it overlaps the entry before. */
static const struct lazy_fde *lazy_compile(struct fg_cfi_lazy *z, uint32_t i)
{
	struct builder *b = &z->b;
	struct lazy_fde *out;
	struct fde f, prev;

	if (z->fdes[i])
		return z->fdes[i];
	if (!lazy_parse(z, i, &f)) {
		z->fdes[i] = &no_fde;
		return &no_fde;
	}
	if (i > 0 && lazy_parse(z, i - 1, &prev) && prev.end > f.start)
		return NULL;
	b->nrows = 0;
	fde_rows(b, &f);
	/* the bounds of the whole table: rows hold 32-bit offsets from the first FDE */
	if (b->err || b->nrows > FG_CFI_MAX_ROWS - z->nrows ||
	    f.end - lazy_loc(z, 0, 0) > UINT32_MAX) {
		z->fdes[i] = &no_fde;
		return &no_fde;
	}
	out = fg_xcalloc(1, sizeof(*out) + b->nrows * sizeof(out->rows[0]));
	out->start = f.start;
	out->end = f.end;
	out->nrows = (uint32_t)b->nrows;
	for (size_t k = 0; k < b->nrows; k++) {
		out->rows[k].pc = b->rows[k].pc;
		out->rows[k].rule = b->rules[b->rows[k].rule];
	}
	z->nrows += b->nrows;
	z->fdes[i] = out;
	return out;
}

/* No FDE holds vaddr: no rule, but at the entry point (entry_rule), as build() has it. */
static const struct fg_cfi_rule *lazy_none(const struct fg_cfi *c, uint64_t vaddr, uint64_t *start,
					   uint64_t *end)
{
	if (!c->lazy->entry || vaddr != c->lazy->entry)
		return &c->rules[0];
	*start = vaddr;
	*end = vaddr + 1;
	return &entry_rule;
}

static const struct fg_cfi_rule *lazy_lookup(const struct fg_cfi *c, uint64_t vaddr,
					     uint64_t *start, uint64_t *end)
{
	struct fg_cfi_lazy *z = c->lazy;
	const struct lazy_fde *f;
	uint32_t lo = 0, hi = z->count;

	if (z->whole_tried)
		return z->whole ? fg_cfi_lookup_range(z->whole, vaddr, start, end) : &c->rules[0];
	/* the last entry that starts at or below vaddr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (lazy_loc(z, mid, 0) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return lazy_none(c, vaddr, start, end);
	f = lazy_compile(z, lo - 1);
	if (!f) {
		struct builder wb;

		memset(&wb, 0, sizeof(wb));
		wb.sects[0] = z->b.sects[0];
		wb.nsects = 1;
		wb.entry = z->entry;
		z->whole = build(&wb);
		builder_release(&wb);
		z->whole_tried = true;
		return lazy_lookup(c, vaddr, start, end);
	}
	if (vaddr < f->start || vaddr >= f->end)
		return lazy_none(c, vaddr, start, end);
	/* the last row that starts at or below vaddr */
	lo = 0;
	hi = f->nrows;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->rows[mid].pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return &c->rules[0];
	*start = f->rows[lo - 1].pc;
	*end = lo < f->nrows ? f->rows[lo].pc : f->end;
	return &f->rows[lo - 1].rule;
}

/* The header's table, checked against .eh_frame; NULL when it cannot be followed. */
static struct fg_cfi_lazy *lazy_new(const struct sect *eh, const struct sect *hdr)
{
	struct rd r = {hdr->data, hdr->data + hdr->size, false};
	uint8_t version = (uint8_t)rd_n(&r, 1), ptr_enc = (uint8_t)rd_n(&r, 1);
	uint8_t count_enc = (uint8_t)rd_n(&r, 1), table_enc = (uint8_t)rd_n(&r, 1);
	uint64_t at, count, off = 0, id, next, fdes = 0;
	struct fg_cfi_lazy *z;
	struct fg_cfi_rule none;
	struct rd body;
	bool is64;

	if (r.bad || version != 1 || table_enc != 0x3b ||
	    !rd_enc(&r, ptr_enc, hdr->vaddr + 4, hdr->vaddr, &at) || at != eh->vaddr ||
	    !rd_enc(&r, count_enc, hdr->vaddr + (uint64_t)(r.p - hdr->data), hdr->vaddr, &count) ||
	    count == 0 || count > FG_CFI_MAX_FDES || count * 8 > (uint64_t)(r.end - r.p))
		return NULL;
	/* as many FDEs as .eh_frame holds, up to its end or a zero length, as walk() reads it */
	while (off + 4 <= eh->size && fdes <= count &&
	       entry_at(eh, off, &body, &id, &next, &is64)) {
		fdes += id != 0;
		off = next;
	}
	if (fdes != count)
		return NULL;
	z = fg_xcalloc(1, sizeof(*z));
	z->table = fg_xmalloc(count * 8);
	memcpy(z->table, r.p, count * 8);
	z->hdr_vaddr = hdr->vaddr;
	z->count = (uint32_t)count;
	for (uint32_t i = 1; i < z->count; i++) {
		if (lazy_loc(z, i - 1, 0) > lazy_loc(z, i, 0)) {
			free(z->table);
			free(z);
			return NULL;
		}
	}
	z->eh = fg_xmalloc(eh->size);
	memcpy(z->eh, eh->data, eh->size);
	z->b.sects[0] = (struct sect){z->eh, eh->size, eh->vaddr, true};
	z->b.nsects = 1;
	z->fdes = fg_xcalloc(count, sizeof(*z->fdes));
	z->b.cie_at = fg_hash_new(64);
	z->b.rule_at = fg_hash_new(256);
	z->b.prog = fg_xcalloc(1, sizeof(*z->b.prog));
	memset(&none, 0, sizeof(none));
	add_rule(&z->b, &none);
	return z;
}

static void lazy_free(struct fg_cfi_lazy *z)
{
	if (!z)
		return;
	for (uint32_t i = 0; i < z->count; i++)
		if (z->fdes[i] != &no_fde)
			free(z->fdes[i]);
	free(z->fdes);
	builder_release(&z->b);
	fg_cfi_free(z->whole);
	free(z->table);
	free(z->eh);
	free(z);
}

struct fg_cfi *fg_cfi_from_elf_lazy(struct Elf *elf)
{
	struct sect eh, hdr, df;
	struct fg_cfi_lazy *z = NULL;
	struct fg_cfi *c;
	GElf_Ehdr ehdr;

	once_init();
	if (!elf || !elf_ok(elf) || find_section(elf, ".eh_frame", &eh) != 1 ||
	    find_section(elf, ".debug_frame", &df) != 0 ||
	    find_section(elf, ".eh_frame_hdr", &hdr) != 1 || !(z = lazy_new(&eh, &hdr)))
		return fg_cfi_from_elf(elf, NULL);
	c = fg_xcalloc(1, sizeof(*c));
	c->rows = fg_xcalloc(1, sizeof(*c->rows));
	c->rules = fg_xcalloc(1, sizeof(*c->rules)); /* rules[0]: FG_CFI_NONE */
	c->nrules = 1;
	c->nloads = fg_elf_loads(elf, &c->loads);
	c->shared = gelf_getehdr(elf, &ehdr) && ehdr.e_type == ET_DYN;
	c->arch = z->b.arch = (uint8_t)elf_arch(elf);
	z->entry = elf_entry(elf);
	c->lazy = z;
	return c;
}

struct fg_cfi *fg_cfi_open_lazy(int fd)
{
	Elf *elf;
	struct fg_cfi *c;
	int err;

	once_init();
	if (!(elf = fg_elf_begin_fd(fd)))
		return NULL;
	c = fg_cfi_from_elf_lazy(elf);
	err = errno;
	elf_end(elf);
	errno = err;
	return c;
}

/* --- the cache --- */

struct fg_cfi_cache {
	struct fg_hash *m; /* key -> index + 1 into tables, or -errno */
	struct fg_cfi **tables;
	size_t ntables, alloc;
};

struct fg_cfi_cache *fg_cfi_cache_new(void)
{
	struct fg_cfi_cache *cc = fg_xcalloc(1, sizeof(*cc));

	cc->m = fg_hash_new(64);
	return cc;
}

void fg_cfi_cache_free(struct fg_cfi_cache *cc)
{
	if (!cc)
		return;
	for (size_t i = 0; i < cc->ntables; i++)
		fg_cfi_free(cc->tables[i]);
	free(cc->tables);
	fg_hash_free(cc->m);
	free(cc);
}

bool fg_cfi_cache_get(struct fg_cfi_cache *cc, const void *key, size_t len, struct fg_cfi **cfi,
		      int *err)
{
	struct fg_hash_entry *h = fg_hash_get(cc->m, key, len);

	if (!h)
		return false;
	*cfi = h->val.i > 0 ? cc->tables[h->val.i - 1] : NULL;
	*err = h->val.i > 0 ? 0 : (int)h->val.i;
	return true;
}

void fg_cfi_cache_put(struct fg_cfi_cache *cc, const void *key, size_t len, struct fg_cfi *cfi,
		      int err)
{
	struct fg_hash_entry *h = fg_hash_upsert(cc->m, key, len, NULL);
	size_t i;

	if (!cfi) {
		h->val.i = err < 0 ? err : -ENODATA;
		return;
	}
	/* a table already held (under another key) is not held twice */
	for (i = 0; i < cc->ntables && cc->tables[i] != cfi; i++)
		;
	if (i == cc->ntables) {
		FG_ALLOC_GROW(cc->tables, cc->ntables + 1, cc->alloc);
		cc->tables[cc->ntables++] = cfi;
	}
	h->val.i = (int64_t)i + 1;
}

size_t fg_cfi_key(char *key, const uint8_t *build_id, size_t build_id_len, uint32_t dev_major,
		  uint32_t dev_minor, uint64_t inode)
{
	if (build_id_len && build_id_len <= FG_BUILD_ID_MAX) {
		key[0] = 'b';
		memcpy(key + 1, build_id, build_id_len);
		return 1 + build_id_len;
	}
	uint64_t v[2] = {(uint64_t)dev_major << 32 | dev_minor, inode};

	key[0] = 'i';
	memcpy(key + 1, v, sizeof(v));
	return 1 + sizeof(v);
}
