// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/korc.h"
#include "fg/korc_step.h"
#include "unit.h"

/* 100 entries' worth of tables: 400 bytes of addresses, 600 of entries */
static const char syms[] = "ffffffff81000000 T _text\n"
			   "ffffffff81000000 T _stext\n"
			   "ffffffff81001000 t helper\n"
			   "ffffffff81010010 T _etext\n"
			   "ffffffff82000000 R __start_orc_unwind_ip\n"
			   "ffffffff82000190 R __stop_orc_unwind_ip\n"
			   "ffffffff82000190 R __start_orc_unwind\n"
			   "ffffffff820003e8 R __stop_orc_unwind\n"
			   "ffffffffc0000000 t _etext\t[some_module]\n"
			   "ffffffff81002000 T return_to_handler\n"
			   "ffffffff81003000 t __schedule\n";

TEST(korc_syms)
{
	struct fg_korc_syms s;

	CHECK_INT(fg_korc_syms_parse(syms, sizeof(syms) - 1, &s), 0);
	CHECK(s.info.text_start == 0xffffffff81000000ull);
	CHECK(s.info.text_end ==
	      0xffffffff81010010ull); /* the module's _etext is not the kernel's */
	CHECK(s.ip_start == 0xffffffff82000000ull);
	CHECK(s.orc_start == 0xffffffff82000190ull);
	CHECK_INT(s.info.nr, 100);
	/* 0x10010 bytes of text: 257 blocks started, and the one that ends the index */
	CHECK_INT(s.info.nblocks, 258);
	CHECK(s.info.graph_ret == 0xffffffff81002000ull);
	CHECK(s.info.rethook == 0);
	CHECK(s.schedule == 0xffffffff81003000ull);
}

TEST(korc_syms_refused)
{
	struct fg_korc_syms s;
	char buf[sizeof(syms) + 64];
	const char *cut = strstr(syms, "ffffffff82000190 R __start_orc_unwind\n");
	const char *zeros = "0000000000000000 T _stext\n0000000000000000 T _etext\n"
			    "0000000000000000 R __start_orc_unwind_ip\n"
			    "0000000000000000 R __stop_orc_unwind_ip\n"
			    "0000000000000000 R __start_orc_unwind\n"
			    "0000000000000000 R __stop_orc_unwind\n";

	/* no __start_orc_unwind: not an ORC kernel */
	snprintf(buf, sizeof(buf), "%.*s", (int)(cut - syms), syms);
	CHECK_INT(fg_korc_syms_parse(buf, strlen(buf), &s), -ENOENT);
	CHECK(s.schedule == 0); /* the cut text ends before __schedule */
	/* __schedule is found for --off-cpu without the tables */
	CHECK_INT(fg_korc_syms_parse("ffffffff81003000 t __schedule\n", 31, &s), -ENOENT);
	CHECK(s.schedule == 0xffffffff81003000ull);
	CHECK_INT(fg_korc_syms_parse("", 0, &s), -ENOENT);
	CHECK(s.schedule == 0);
	/* kernel.kptr_restrict */
	CHECK_INT(fg_korc_syms_parse(zeros, strlen(zeros), &s), -EPERM);
	/* 101 entries of addresses against 100 of entries */
	snprintf(buf, sizeof(buf), "%s", syms);
	memcpy(strstr(buf, "82000190 R __stop_orc_unwind_ip"), "82000194", 8);
	CHECK_INT(fg_korc_syms_parse(buf, strlen(buf), &s), -EINVAL);
	/* malformed lines are skipped, not taken for symbols */
	const char *junk = "zz T _stext\nffffffff81000000 _stext\n\n12345678901234567 T _etext\n";
	CHECK_INT(fg_korc_syms_parse(junk, strlen(junk), &s), -ENOENT);
}

/* the names looked up one by one (fg-sample's bpf_kallsyms_lookup_name()): what the parse finds */
TEST(korc_syms_set)
{
	struct fg_korc_syms parsed, set;
	uint64_t addr[FG_KORC_NSYMS];
	unsigned found = 0;

	for (int i = 0; i < FG_KORC_NSYMS; i++) {
		char line[64];
		const char *at;

		/* the first line that names it, and no module's */
		snprintf(line, sizeof(line), " %s\n", fg_korc_sym_names[i]);
		at = strstr(syms, line);
		addr[i] = at ? strtoull(at - 18, NULL, 16) : 0;
		found |= at ? 1u << i : 0;
	}
	CHECK_INT(found, 0x17f); /* all but arch_rethook_trampoline */
	CHECK_INT(fg_korc_syms_parse(syms, sizeof(syms) - 1, &parsed), 0);
	CHECK_INT(fg_korc_syms_set(addr, found, &set), 0);
	CHECK(memcmp(&parsed, &set, sizeof(set)) == 0);
	/* an address not found is not taken, whatever it holds */
	addr[7] = 0xffffffff81004000ull;
	CHECK_INT(fg_korc_syms_set(addr, found, &set), 0);
	CHECK(set.info.rethook == 0);
	/* a table symbol missing; all hidden; sizes that disagree */
	CHECK_INT(fg_korc_syms_set(addr, found & ~4u, &set), -ENOENT);
	CHECK(set.schedule == 0xffffffff81003000ull);
	uint64_t zeros[FG_KORC_NSYMS] = {0};
	CHECK_INT(fg_korc_syms_set(zeros, 0x3f, &set), -EPERM);
	addr[3] += 4;
	CHECK_INT(fg_korc_syms_set(addr, found, &set), -EINVAL);
}

/* the rules' sp_offset: 8 + i, or with a period, 8 + i % period */
static uint32_t spo_period;

/* the kernel's tables for entries at `at` (offsets from _stext) with entry bits `bits` */
static void kernel_tables(const struct fg_korc_syms *s, const uint32_t *at, const uint16_t *bits,
			  unsigned char *ips, unsigned char *orcs)
{
	for (uint32_t i = 0; i < s->info.nr; i++) {
		int32_t rel =
		    (int32_t)(int64_t)(s->info.text_start + at[i] - (s->ip_start + 4ull * i));
		int16_t spo = (int16_t)(8 + (spo_period ? i % spo_period : i)), bpo = (int16_t)-16;

		memcpy(ips + 4 * i, &rel, 4);
		memcpy(orcs + 6 * i, &spo, 2);
		memcpy(orcs + 6 * i + 2, &bpo, 2);
		memcpy(orcs + 6 * i + 4, &bits[i], 2);
	}
}

TEST(korc_build_find)
{
	struct fg_korc_syms s;
	uint32_t at[100], lookup[258];
	uint16_t bits[100];
	unsigned char ips[400], orcs[600];
	struct fg_korc_entry e[100];
	static struct fg_korc_rule rules[FG_KORC_MAX_RULES];
	struct fg_korc_out out = {e, rules, 0, lookup};
	uint32_t off = 0x10;

	CHECK_INT(fg_korc_syms_parse(syms, sizeof(syms) - 1, &s), 0);
	srand(7);
	for (uint32_t i = 0; i < 100; i++) {
		/* gaps of 0 to 1499 bytes: several entries in a block, blocks with none */
		at[i] = off;
		off += (uint32_t)(rand() % 1500);
		if (i % 10 == 3)
			off -= off - at[i]; /* a duplicate address: the later entry wins */
		bits[i] = (uint16_t)(rand() & 0xfff);
	}
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &out), 0);
	CHECK_INT(out.nrules, 100); /* every sp_offset differs */
	CHECK_INT(e[5].ip, at[5]);
	CHECK_INT(e[5].rule, 5);
	CHECK_INT(rules[5].sp_offset, 13);
	CHECK_INT(rules[5].bp_offset, -16);
	CHECK_INT(rules[5].sp_reg, bits[5] & 0xf);
	CHECK_INT(rules[5].bp_reg, bits[5] >> 4 & 0xf);
	CHECK_INT(rules[5].type, bits[5] >> 8 & 7);
	CHECK_INT(rules[5].signal, bits[5] >> 11 & 1);
	/* every address of the text: the last entry at or below it, as a scan finds it */
	struct fg_korc_mem m = {.e = e, .rules = rules, .nrules = out.nrules, .lookup = lookup};
	for (uint32_t o = 0; o < 0x10010; o++) {
		int64_t want = 0, got = fg_korc_find(&m, &s.info, o);

		for (uint32_t i = 0; i < s.info.nr; i++)
			if (e[i].ip <= o)
				want = i;
		if (got != want) {
			fprintf(stderr, "offset %#x: entry %lld, not %lld\n", o, (long long)got,
				(long long)want);
			CHECK(got == want);
			break;
		}
	}
	/* beyond the index: none */
	CHECK(fg_korc_find(&m, &s.info, 0x10100) == -1);
	CHECK(fg_korc_find(&m, &s.info, UINT32_MAX) == -1);
}

TEST(korc_build_refused)
{
	struct fg_korc_syms s;
	uint32_t at[100], lookup[258];
	uint16_t bits[100] = {0};
	unsigned char ips[400], orcs[600];
	struct fg_korc_entry e[100];
	static struct fg_korc_rule rules[FG_KORC_MAX_RULES];
	struct fg_korc_out o = {e, rules, 0, lookup};

	CHECK_INT(fg_korc_syms_parse(syms, sizeof(syms) - 1, &s), 0);
	for (uint32_t i = 0; i < 100; i++)
		at[i] = 16 * i;
	at[50] = 16 * 60; /* out of order */
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), -EINVAL);
	at[50] = 16 * 50;
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), 0);
	/* below _stext */
	int32_t rel = -0x1000004;
	memcpy(ips, &rel, 4);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), -EINVAL);
}

/*
 * A kernel's worth of entries shares a few hundred rules: each distinct rule
 * is kept once, in the order first met; more than FG_KORC_MAX_RULES is
 * refused.
 */
TEST(korc_build_rules)
{
	enum { N = FG_KORC_MAX_RULES + 10 };
	static uint32_t at[N], lookup[N / 16 + 2];
	static uint16_t bits[N];
	static unsigned char ips[4 * N], orcs[6 * N];
	static struct fg_korc_entry e[N];
	static struct fg_korc_rule rules[FG_KORC_MAX_RULES];
	struct fg_korc_out o = {e, rules, 0, lookup};
	uint64_t addr[FG_KORC_NSYMS] = {0};
	struct fg_korc_syms s;

	addr[0] = 0xffffffff81000000ull; /* _stext */
	addr[1] = addr[0] + 16ull * N;	 /* _etext */
	addr[2] = 0xffffffff82000000ull; /* __start_orc_unwind_ip */
	addr[3] = addr[2] + 4ull * N;	 /* __stop_orc_unwind_ip */
	addr[4] = addr[3];		 /* __start_orc_unwind */
	addr[5] = addr[4] + 6ull * N;	 /* __stop_orc_unwind */
	CHECK_INT(fg_korc_syms_set(addr, 0x3f, &s), 0);
	CHECK_INT(s.info.nr, N);
	for (uint32_t i = 0; i < N; i++) {
		at[i] = 16 * i;
		bits[i] =
		    (uint16_t)(FG_ORC_TYPE_CALL << 8 | (i % 2 ? FG_ORC_REG_SP : FG_ORC_REG_BP));
	}
	/* 7 sp_offsets and 2 sp_regs: 14 rules, in the order first met */
	spo_period = 7;
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), 0);
	CHECK_INT(o.nrules, 14);
	for (uint32_t i = 0; i < N; i++)
		if (e[i].rule != i % 14 || rules[e[i].rule].sp_offset != (int16_t)(8 + i % 7) ||
		    rules[e[i].rule].sp_reg != (i % 2 ? FG_ORC_REG_SP : FG_ORC_REG_BP) ||
		    rules[e[i].rule].type != FG_ORC_TYPE_CALL) {
			CHECK_INT(e[i].rule, i % 14);
			CHECK(!"entry i's rule");
		}
	/* every sp_offset its own: one rule too many */
	spo_period = 0;
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), -E2BIG);
	CHECK_INT(o.nrules, FG_KORC_MAX_RULES);
}

/* fg_korc_load's reader: the kernel's tables at their addresses in `kmem` */
struct kmem {
	const struct fg_korc_syms *s;
	const unsigned char *ips, *orcs;
	size_t reads, max_len;
	int fail_at; /* the read that fails, or -1 */
};

static int read_kmem(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct kmem *k = arg;
	const unsigned char *from;

	if ((int)k->reads++ == k->fail_at)
		return -EFAULT;
	if (len > k->max_len)
		k->max_len = len;
	if (addr >= k->s->ip_start && addr + len <= k->s->ip_start + 400)
		from = k->ips + (addr - k->s->ip_start);
	else if (addr >= k->s->orc_start && addr + len <= k->s->orc_start + 600)
		from = k->orcs + (addr - k->s->orc_start);
	else
		return -EFAULT;
	memcpy(buf, from, len);
	return 0;
}

TEST(korc_load)
{
	struct fg_korc_syms s;
	uint32_t at[100], lookup[258], lookup2[258];
	uint16_t bits[100];
	unsigned char ips[400], orcs[600];
	struct fg_korc_entry e[100], e2[100];
	static struct fg_korc_rule rules[FG_KORC_MAX_RULES], rules2[FG_KORC_MAX_RULES];
	struct fg_korc_out o = {e, rules, 0, lookup}, o2 = {e2, rules2, 0, lookup2};
	struct kmem k = {.s = &s, .ips = ips, .orcs = orcs, .fail_at = -1};

	CHECK_INT(fg_korc_syms_parse(syms, sizeof(syms) - 1, &s), 0);
	for (uint32_t i = 0; i < 100; i++) {
		at[i] = 0x100 * i + 3;
		bits[i] = (uint16_t)(0x200 | (i & 0xff));
	}
	kernel_tables(&s, at, bits, ips, orcs);
	CHECK_INT(fg_korc_build(&s, ips, orcs, &o), 0);
	/*
	 * read 64 bytes at a time: 10 entries (60 bytes of them, 40 of their
	 * addresses) a round, two reads each; the same tables
	 */
	CHECK_INT(fg_korc_load(&s, 64, read_kmem, &k, &o2), 0);
	CHECK_INT(k.reads, 20);
	CHECK_INT(k.max_len, 60);
	CHECK(!memcmp(e, e2, sizeof(e)) && !memcmp(lookup, lookup2, sizeof(lookup)));
	CHECK(o2.nrules == o.nrules && !memcmp(rules, rules2, o.nrules * sizeof(*rules)));
	/* a last round of fewer entries: 64 a round, then 36 */
	k.reads = 0;
	memset(e2, 0, sizeof(e2));
	CHECK_INT(fg_korc_load(&s, 6 * 64 + 5, read_kmem, &k, &o2), 0);
	CHECK_INT(k.reads, 4);
	CHECK(!memcmp(e, e2, sizeof(e)) && !memcmp(lookup, lookup2, sizeof(lookup)));
	CHECK(o2.nrules == o.nrules && !memcmp(rules, rules2, o.nrules * sizeof(*rules)));
	/* a read that fails: its error */
	k.reads = 0;
	k.fail_at = 9;
	CHECK_INT(fg_korc_load(&s, 64, read_kmem, &k, &o2), -EFAULT);
	/* an entry out of order in a later round */
	k.fail_at = -1;
	memcpy(ips + 4 * 57, ips + 4 * 3, 4);
	CHECK_INT(fg_korc_load(&s, 64, read_kmem, &k, &o2), -EINVAL);
	/* a chunk smaller than one entry */
	CHECK_INT(fg_korc_load(&s, FG_KORC_ORC_SIZE - 1, read_kmem, &k, &o2), -EINVAL);
}

/* a made-up kernel stack: 64 words from STACK */
#define TEXT 0xffffffff81000000ull
#define STACK 0xffffc90000010000ull
static uint64_t stack[64];

static int read_stack(const struct fg_korc_mem *m, __u64 addr, __u64 *val)
{
	(void)m;
	if (addr < STACK || addr >= STACK + sizeof(stack) || addr & 7)
		return -1;
	*val = stack[(addr - STACK) / 8];
	return 0;
}

/* the walk's rules, one for each entry */
static struct fg_korc_rule walk_rules[16];
static uint32_t walk_nrules;

/*
 * An entry: from `ip` on, the caller's sp is reg + sp_off, its bp as
 * bp_reg/bp_off says (a rule of its own in walk_rules).
 */
static struct fg_korc_entry ent(uint32_t ip, uint8_t type, uint8_t sp_reg, int16_t sp_off,
				uint8_t bp_reg, int16_t bp_off, uint8_t signal)
{
	walk_rules[walk_nrules] = (struct fg_korc_rule){.sp_offset = sp_off,
							.bp_offset = bp_off,
							.sp_reg = sp_reg,
							.bp_reg = bp_reg,
							.type = type,
							.signal = signal};
	return (struct fg_korc_entry){.ip = ip, .rule = walk_nrules++};
}

TEST(korc_walk)
{
	/* a() at 0x100 keeps bp, b() at 0x200 does not, c() at 0x300 moves sp (bp-based),
	 * the entry code at 0x400 (registers at sp), then code without ORC data and the end */
	struct fg_korc_entry e[] = {
	    ent(0x000, FG_ORC_TYPE_UNDEFINED, 0, 0, 0, 0, 0),
	    ent(0x100, FG_ORC_TYPE_CALL, FG_ORC_REG_SP, 16, FG_ORC_REG_PREV_SP, -16, 0),
	    ent(0x200, FG_ORC_TYPE_CALL, FG_ORC_REG_SP, 8, FG_ORC_REG_UNDEFINED, 0, 0),
	    ent(0x300, FG_ORC_TYPE_CALL, FG_ORC_REG_BP, 16, FG_ORC_REG_PREV_SP, -16, 0),
	    ent(0x400, FG_ORC_TYPE_REGS, FG_ORC_REG_SP, 0, FG_ORC_REG_UNDEFINED, 0, 1),
	    ent(0x500, FG_ORC_TYPE_END_OF_STACK, 0, 0, 0, 0, 0),
	    ent(0x600, FG_ORC_TYPE_UNDEFINED, 0, 0, 0, 0, 0),
	};
	uint32_t lookup[0x1000 / 256 + 1];
	struct fg_korc_info t = {
	    .text_start = TEXT, .text_end = TEXT + 0x1000, .nr = 7, .nblocks = 0x1000 / 256 + 1};
	struct fg_korc_mem m = {.e = e,
				.rules = walk_rules,
				.nrules = walk_nrules,
				.lookup = lookup,
				.read = read_stack};
	struct fg_korc_state st;
	uint64_t frames[8];
	int n = 0, r;

	for (uint32_t b = 0; b < t.nblocks; b++) {
		uint32_t j = 0;

		for (uint32_t i = 0; i < t.nr; i++)
			if (e[i].ip <= b * 256u)
				j = i;
		lookup[b] = j;
	}
	memset(stack, 0, sizeof(stack));
	/* the frame of the function that fired the event: saved bp, return into a() */
	stack[0] = 0x1234;
	stack[1] = TEXT + 0x110;
	/* a(): 8 bytes of its own, its bp at 16 (c()'s frame address), return into b() */
	stack[2] = STACK + 48;
	stack[3] = TEXT + 0x210;
	/* b(): return into c() */
	stack[4] = TEXT + 0x310;
	/* c(): its frame at 48: saved bp, return into the entry code */
	stack[6] = 0x5678;
	stack[7] = TEXT + 0x401;
	/* the entry code's registers at 64: from user mode */
	stack[8 + FG_PTREGS_CS / 8] = 0x33;

	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	CHECK(st.sp == STACK + 16 && st.bp == 0x1234);
	frames[n++] = st.ip;
	while (n < 8 && (r = fg_korc_step(&m, &t, &st)) == FG_KORC_NEXT)
		frames[n++] = st.ip;
	CHECK_INT(r, FG_KORC_DONE);
	CHECK_INT(n, 4);
	CHECK(frames[1] == TEXT + 0x210 && frames[2] == TEXT + 0x310 && frames[3] == TEXT + 0x401);
	/* c()'s caller's bp from the stack */
	CHECK(st.bp == 0x1234 || st.bp == 0x5678);

	/* the registers from kernel mode: the walk goes on at their ip, looked up as is */
	stack[8 + FG_PTREGS_CS / 8] = 0x10;
	stack[8 + FG_PTREGS_IP / 8] = TEXT + 0x500; /* END_OF_STACK there, UNDEFINED just below */
	stack[8 + FG_PTREGS_SP / 8] = STACK + 400;
	stack[8 + FG_PTREGS_BP / 8] = 0x9abc;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	for (n = 1; n < 8 && (r = fg_korc_step(&m, &t, &st)) == FG_KORC_NEXT; n++)
		frames[n] = st.ip;
	CHECK_INT(n, 5);
	CHECK(frames[4] == TEXT + 0x500 && st.signal && st.bp == 0x9abc);
	CHECK_INT(r, FG_KORC_DONE); /* the signal frame's own entry, END_OF_STACK */

	/* a return address outside the text (a module's): fall back */
	stack[4] = 0xffffffffc0001000ull;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_FB_TEXT);
	/* a return address of 0 ends the stack, as in the kernel */
	stack[4] = 0;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_DONE);
	/* a tracer's trampoline in its place: fall back */
	t.graph_ret = TEXT + 0x310;
	stack[4] = TEXT + 0x310;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_FB_OTHER);
	t.graph_ret = 0;
	/* a stack read beyond what can be read: fall back */
	stack[2] = STACK + 4096;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_FB_OTHER);
	/* code without ORC data (UNDEFINED) ends the stack, as in the kernel */
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x10, STACK - 0x100, 0, &st), FG_KORC_FB_OTHER);
	stack[1] = TEXT + 0x610;
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x610, STACK, 0, &st), FG_KORC_NEXT);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_DONE);
	/* an interrupt's registers: their ip is the first frame, looked up as is (0x200 is b()'s
	 * first byte: ip - 1 would be a()'s), their bp kept */
	stack[4] = TEXT + 0x310;
	CHECK_INT(fg_korc_start_regs(&m, &t, STACK + 64, TEXT + 0x200, STACK + 32, 0x42, &st),
		  FG_KORC_NEXT);
	CHECK(st.signal && st.full_regs && st.regs == STACK + 64 && st.bp == 0x42);
	CHECK_INT(fg_korc_step(&m, &t, &st), FG_KORC_NEXT);
	CHECK(st.ip == TEXT + 0x310 && st.sp == STACK + 40 && !st.signal && !st.regs);
	CHECK_INT(fg_korc_start_regs(&m, &t, STACK + 64, 0xffffffffc0001000ull, STACK, 0, &st),
		  FG_KORC_FB_TEXT);
	/* the start: an interrupt's registers, a caller's address that is not on the stack */
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x610, STACK, FG_EFLAGS_FIXED, &st),
		  FG_KORC_FB_OTHER);
	CHECK_INT(fg_korc_start(&m, &t, TEXT + 0x110, STACK, 0, &st), FG_KORC_FB_OTHER);
	CHECK_INT(fg_korc_start(&m, &t, 0xffffffffc0001000ull, STACK, 0, &st), FG_KORC_FB_TEXT);
}

int main(void)
{
	RUN(korc_syms);
	RUN(korc_syms_refused);
	RUN(korc_syms_set);
	RUN(korc_build_find);
	RUN(korc_build_refused);
	RUN(korc_build_rules);
	RUN(korc_load);
	RUN(korc_walk);
	return unit_done();
}
