// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fg/korc.h"

/* the symbols looked for, by name; each kallsyms line is "ADDRESS TYPE NAME[\t[MODULE]]" */
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
static const char *const names[S_N] = {
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
	unsigned found = 0;
	bool any_nonzero = false;

	memset(s, 0, sizeof(*s));
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
					    (size_t)(nend - name) == strlen(names[i]) &&
					    !memcmp(name, names[i], (size_t)(nend - name))) {
						addr[i] = a;
						found |= 1u << i;
						any_nonzero |= a != 0;
					}
				}
			}
		}
		p = eol + 1;
	}
	s->schedule = addr[S_SCHEDULE]; /* whether or not the tables are there */
	if ((found & 0x3f) != 0x3f)
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
	s->info.graph_ret = addr[S_GRAPH];
	s->info.rethook = addr[S_RETHOOK];
	return 0;
}

int fg_korc_build(const struct fg_korc_syms *s, const void *ips, const void *orcs,
		  struct fg_korc_entry *out, uint32_t *lookup)
{
	const unsigned char *ip = ips, *orc = orcs;
	uint64_t prev = 0;
	uint32_t j = 0;

	for (uint32_t i = 0; i < s->info.nr; i++) {
		int32_t rel;
		uint16_t bits;
		int16_t spo, bpo;
		uint64_t a;

		memcpy(&rel, ip + (size_t)i * FG_KORC_IP_SIZE, sizeof(rel));
		/* relative to the entry's own address: the kernel's orc_ip() */
		a = s->ip_start + (uint64_t)i * FG_KORC_IP_SIZE + (uint64_t)(int64_t)rel;
		if (a < s->info.text_start || a - s->info.text_start >= (1ull << 32) || a < prev)
			return -EINVAL;
		prev = a;
		memcpy(&spo, orc + (size_t)i * FG_KORC_ORC_SIZE, 2);
		memcpy(&bpo, orc + (size_t)i * FG_KORC_ORC_SIZE + 2, 2);
		memcpy(&bits, orc + (size_t)i * FG_KORC_ORC_SIZE + 4, 2);
		out[i] = (struct fg_korc_entry){
		    .ip = (uint32_t)(a - s->info.text_start),
		    .sp_offset = spo,
		    .bp_offset = bpo,
		    /* the bit fields, lowest first (x86-64): sp_reg:4 bp_reg:4 type:3 signal:1 */
		    .sp_reg = bits & 0xf,
		    .bp_reg = bits >> 4 & 0xf,
		    .type = bits >> 8 & 7,
		    .signal = bits >> 11 & 1,
		};
	}
	/*
	 * Block i starts the search at the last entry at or below its first
	 * byte (or at the first entry, when there is none, as the kernel's
	 * binary search answers); the last block, at _etext's.
	 */
	for (uint32_t b = 0; b < s->info.nblocks; b++) {
		uint64_t at = b + 1 < s->info.nblocks ? (uint64_t)b << FG_KORC_BLOCK_SHIFT
						      : s->info.text_end - s->info.text_start;

		while (j + 1 < s->info.nr && out[j + 1].ip <= at)
			j++;
		lookup[b] = j;
	}
	return 0;
}

/* n bytes at addr, chunk by chunk */
static int read_all(uint64_t addr, size_t n, size_t chunk,
		    int (*read)(void *arg, uint64_t addr, void *buf, size_t len), void *arg,
		    unsigned char *buf)
{
	for (size_t at = 0; at < n; at += chunk) {
		int err = read(arg, addr + at, buf + at, n - at < chunk ? n - at : chunk);

		if (err)
			return err;
	}
	return 0;
}

int fg_korc_load(const struct fg_korc_syms *s, size_t chunk,
		 int (*read)(void *arg, uint64_t addr, void *buf, size_t len), void *arg,
		 struct fg_korc_entry *out, uint32_t *lookup)
{
	unsigned char *ips = malloc((size_t)s->info.nr * FG_KORC_IP_SIZE);
	unsigned char *orcs = malloc((size_t)s->info.nr * FG_KORC_ORC_SIZE);
	int err = -ENOMEM;

	if (ips && orcs && chunk) {
		err = read_all(s->ip_start, (size_t)s->info.nr * FG_KORC_IP_SIZE, chunk, read, arg,
			       ips);
		if (!err)
			err = read_all(s->orc_start, (size_t)s->info.nr * FG_KORC_ORC_SIZE, chunk,
				       read, arg, orcs);
		if (!err)
			err = fg_korc_build(s, ips, orcs, out, lookup);
	}
	free(ips);
	free(orcs);
	return err;
}
