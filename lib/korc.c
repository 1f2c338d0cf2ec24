// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fg/korc.h"

/* the symbols looked for, by name, in fg_korc_sym_names' order */
enum {
	S_STEXT,
	S_ETEXT,
	S_IP_START,
	S_IP_STOP,
	S_ORC_START,
	S_ORC_STOP,
	S_GRAPH,
	S_RETHOOK,
	S_SCHEDULE,
	S_N
};
_Static_assert(S_N == FG_KORC_NSYMS, "fg_korc_sym_names' count");
/* the first six are required: the tables */
#define S_REQUIRED ((1u << S_GRAPH) - 1)
const char *const fg_korc_sym_names[FG_KORC_NSYMS] = {
    "_stext",
    "_etext",
    "__start_orc_unwind_ip",
    "__stop_orc_unwind_ip",
    "__start_orc_unwind",
    "__stop_orc_unwind",
    "return_to_handler",
    "arch_rethook_trampoline",
    "__schedule",
};

/* the address at the start of a line, or -1 when it is not 16 hex digits and a space */
static int parse_addr(const char *p, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	for (; p < end && *p != ' '; p++, n++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -1;
		if (n >= 16)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (n == 0 || p >= end)
		return -1;
	*v = x;
	return n + 1;
}

int fg_korc_syms_parse(const char *data, size_t len, struct fg_korc_syms *s)
{
	const char *p = data, *end = data + len;
	uint64_t addr[S_N] = {0};
	size_t nlen[S_N];
	unsigned found = 0;

	for (int i = 0; i < S_N; i++)
		nlen[i] = strlen(fg_korc_sym_names[i]);
	/* each kallsyms line is "ADDRESS TYPE NAME[\t[MODULE]]" */
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *name, *nend;
		uint64_t a;
		int n;

		if (!eol)
			eol = end;
		n = parse_addr(p, eol, &a);
		/* "ADDRESS T NAME": the type is one character, then a space */
		if (n > 0 && eol - (p + n) > 2 && p[n + 1] == ' ') {
			name = p + n + 2;
			nend = memchr(name, '\t', (size_t)(eol - name)); /* a module's: not ours */
			if (!nend) {
				nend = eol;
				for (int i = 0; i < S_N; i++) {
					if (!(found & 1u << i) &&
					    (size_t)(nend - name) == nlen[i] &&
					    !memcmp(name, fg_korc_sym_names[i], nlen[i])) {
						addr[i] = a;
						found |= 1u << i;
					}
				}
			}
		}
		p = eol + 1;
	}
	return fg_korc_syms_set(addr, found, s);
}

int fg_korc_syms_set(const uint64_t *addr, unsigned found, struct fg_korc_syms *s)
{
	bool any_nonzero = false;

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < S_N; i++)
		any_nonzero |= (found & 1u << i) && addr[i] != 0;
	s->schedule = found & 1u << S_SCHEDULE ? addr[S_SCHEDULE] : 0; /* tables or not */
	if ((found & S_REQUIRED) != S_REQUIRED)
		return -ENOENT;
	if (!any_nonzero)
		return -EPERM;
	if (addr[S_ETEXT] <= addr[S_STEXT] || addr[S_IP_STOP] < addr[S_IP_START] ||
	    addr[S_ORC_STOP] < addr[S_ORC_START])
		return -EINVAL;
	uint64_t nip = addr[S_IP_STOP] - addr[S_IP_START];
	uint64_t norc = addr[S_ORC_STOP] - addr[S_ORC_START];
	uint64_t text = addr[S_ETEXT] - addr[S_STEXT];

	if (nip % FG_KORC_IP_SIZE || norc % FG_KORC_ORC_SIZE ||
	    nip / FG_KORC_IP_SIZE != norc / FG_KORC_ORC_SIZE || !nip ||
	    nip / FG_KORC_IP_SIZE > FG_KORC_MAX_ENTRIES || text >= (1ull << 32))
		return -EINVAL;
	s->info.text_start = addr[S_STEXT];
	s->info.text_end = addr[S_ETEXT];
	s->ip_start = addr[S_IP_START];
	s->orc_start = addr[S_ORC_START];
	s->info.nr = (uint32_t)(nip / FG_KORC_IP_SIZE);
	/* the kernel's: a block for each started block of text, and one that ends the index */
	s->info.nblocks =
	    (uint32_t)((text + (1u << FG_KORC_BLOCK_SHIFT) - 1) >> FG_KORC_BLOCK_SHIFT) + 1;
	s->info.graph_ret = found & 1u << S_GRAPH ? addr[S_GRAPH] : 0;
	s->info.rethook = found & 1u << S_RETHOOK ? addr[S_RETHOOK] : 0;
	return 0;
}

/*
 * The distinct rules met so far, to find a rule's index: open addressing
 * over twice FG_KORC_MAX_RULES slots (never full), each the rule's 48 bits
 * plus one (0: empty) and its index.
 */
#define DEDUP_SLOTS (2 * FG_KORC_MAX_RULES)
struct dedup {
	uint64_t key[DEDUP_SLOTS];
	uint32_t idx[DEDUP_SLOTS];
};

/* The index in out->rules of the rule in 6 bytes at `orc`, added when new; -E2BIG when full. */
static int64_t rule_index(struct dedup *d, struct fg_korc_out *out, const unsigned char *orc)
{
	uint16_t raw[3];
	uint64_t key;
	uint32_t h;

	memcpy(raw, orc, sizeof(raw));
	key = ((uint64_t)raw[0] | (uint64_t)raw[1] << 16 | (uint64_t)raw[2] << 32) + 1;
	h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % DEDUP_SLOTS;
	while (d->key[h] && d->key[h] != key)
		h = (h + 1) % DEDUP_SLOTS;
	if (d->key[h])
		return d->idx[h];
	if (out->nrules >= FG_KORC_MAX_RULES)
		return -E2BIG;
	out->rules[out->nrules] = (struct fg_korc_rule){
	    .sp_offset = (int16_t)raw[0],
	    .bp_offset = (int16_t)raw[1],
	    /* the bit fields, lowest first (x86-64): sp_reg:4 bp_reg:4 type:3 signal:1 */
	    .sp_reg = raw[2] & 0xf,
	    .bp_reg = raw[2] >> 4 & 0xf,
	    .type = raw[2] >> 8 & 7,
	    .signal = raw[2] >> 11 & 1,
	};
	d->key[h] = key;
	d->idx[h] = out->nrules;
	return out->nrules++;
}

/*
 * Entry i from its FG_KORC_IP_SIZE bytes at `ip` and FG_KORC_ORC_SIZE at
 * `orc`; -EINVAL when its address is out of order (*prev: the one before) or
 * out of the text, -E2BIG when its rule is one too many.
 */
static int korc_entry(const struct fg_korc_syms *s, uint32_t i, const unsigned char *ip,
		      const unsigned char *orc, uint64_t *prev, struct dedup *d,
		      struct fg_korc_out *out)
{
	int32_t rel;
	int64_t rule;
	uint64_t a;

	memcpy(&rel, ip, sizeof(rel));
	/* relative to the entry's own address: the kernel's orc_ip() */
	a = s->ip_start + (uint64_t)i * FG_KORC_IP_SIZE + (uint64_t)(int64_t)rel;
	if (a < s->info.text_start || a - s->info.text_start >= (1ull << 32) || a < *prev)
		return -EINVAL;
	*prev = a;
	rule = rule_index(d, out, orc);
	if (rule < 0)
		return (int)rule;
	out->e[i] = (struct fg_korc_entry){.ip = (uint32_t)(a - s->info.text_start),
					   .rule = (uint32_t)rule};
	return 0;
}
/*
 * Block i starts the search at the last entry at or below its first byte
 * (or at the first entry, when there is none, as the kernel's binary search
 * answers); the last block, at _etext's.
 */
static void korc_index(const struct fg_korc_syms *s, const struct fg_korc_entry *e,
		       uint32_t *lookup)
{
	uint32_t j = 0;

	for (uint32_t b = 0; b < s->info.nblocks; b++) {
		uint64_t at = b + 1 < s->info.nblocks ? (uint64_t)b << FG_KORC_BLOCK_SHIFT
						      : s->info.text_end - s->info.text_start;

		while (j + 1 < s->info.nr && e[j + 1].ip <= at)
			j++;
		lookup[b] = j;
	}
}

int fg_korc_build(const struct fg_korc_syms *s, const void *ips, const void *orcs,
		  struct fg_korc_out *out)
{
	const unsigned char *ip = ips, *orc = orcs;
	struct dedup *d = calloc(1, sizeof(*d));
	uint64_t prev = 0;
	int err = d ? 0 : -ENOMEM;

	out->nrules = 0;
	for (uint32_t i = 0; !err && i < s->info.nr; i++)
		err = korc_entry(s, i, ip + (size_t)i * FG_KORC_IP_SIZE,
				 orc + (size_t)i * FG_KORC_ORC_SIZE, &prev, d, out);
	if (!err)
		korc_index(s, out->e, out->lookup);
	free(d);
	return err;
}

int fg_korc_load(const struct fg_korc_syms *s, size_t chunk,
		 int (*read)(void *arg, uint64_t addr, void *buf, size_t len), void *arg,
		 struct fg_korc_out *out)
{
	/* the entries of a chunk of .orc_unwind, the larger table, and their addresses */
	size_t per = chunk / FG_KORC_ORC_SIZE;
	unsigned char *ips = per ? malloc(per * FG_KORC_IP_SIZE) : NULL;
	unsigned char *orcs = per ? malloc(per * FG_KORC_ORC_SIZE) : NULL;
	struct dedup *d = calloc(1, sizeof(*d));
	uint64_t prev = 0;
	int err = !per ? -EINVAL : ips && orcs && d ? 0 : -ENOMEM;

	out->nrules = 0;
	for (uint32_t i = 0; !err && i < s->info.nr; i += (uint32_t)per) {
		uint32_t m = s->info.nr - i < per ? s->info.nr - i : (uint32_t)per;

		err = read(arg, s->ip_start + (uint64_t)i * FG_KORC_IP_SIZE, ips,
			   (size_t)m * FG_KORC_IP_SIZE);
		if (!err)
			err = read(arg, s->orc_start + (uint64_t)i * FG_KORC_ORC_SIZE, orcs,
				   (size_t)m * FG_KORC_ORC_SIZE);
		for (uint32_t j = 0; !err && j < m; j++)
			err = korc_entry(s, i + j, ips + (size_t)j * FG_KORC_IP_SIZE,
					 orcs + (size_t)j * FG_KORC_ORC_SIZE, &prev, d, out);
	}
	if (!err)
		korc_index(s, out->e, out->lookup);
	free(d);
	free(ips);
	free(orcs);
	return err;
}
