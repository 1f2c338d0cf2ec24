// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the ORC tables' code: kallsyms text up to a NUL, then bytes that
 * stand for the kernel's tables and its stack.  The symbols parse or are
 * refused; tables built from any bytes are refused or give entries that the
 * search finds within bounds; a walk over any stack ends within its bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/korc.h"
#include "fg/korc_step.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *bytes;
static size_t nbytes;

/* the rest of the input, as the kernel's memory from 0xffffc90000000000 */
static int read_rest(const struct fg_korc_mem *m, __u64 addr, __u64 *val)
{
	__u64 at = addr - 0xffffc90000000000ull;

	(void)m;
	if (addr < 0xffffc90000000000ull || at >= nbytes || nbytes - at < 8)
		return -1;
	memcpy(val, bytes + at, 8);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = nul ? (size_t)(nul - data) : size;
	struct fg_korc_syms s;
	struct fg_korc_entry *e;
	static struct fg_korc_rule rules[FG_KORC_MAX_RULES];
	struct fg_korc_out o;
	uint32_t *lookup;
	unsigned char *ips, *orcs;

	if (fg_korc_syms_parse((const char *)data, len, &s) < 0)
		return 0;
	if (s.info.nr > 4096 || s.info.nblocks > 65536)
		return 0; /* real sizes, but too slow for a fuzzer */
	bytes = nul ? nul + 1 : data + size;
	nbytes = nul ? size - len - 1 : 0;
	ips = calloc(s.info.nr, FG_KORC_IP_SIZE);
	orcs = calloc(s.info.nr, FG_KORC_ORC_SIZE);
	e = calloc(s.info.nr, sizeof(*e));
	lookup = calloc(s.info.nblocks, sizeof(*lookup));
	if (!ips || !orcs || !e || !lookup)
		abort();
	for (size_t i = 0; nbytes && i < (size_t)s.info.nr * FG_KORC_IP_SIZE; i++)
		ips[i] = bytes[i % nbytes];
	for (size_t i = 0; nbytes && i < (size_t)s.info.nr * FG_KORC_ORC_SIZE; i++)
		orcs[i] = bytes[(i * 7) % nbytes];
	o = (struct fg_korc_out){e, rules, 0, lookup};
	if (fg_korc_build(&s, ips, orcs, &o) == 0) {
		struct fg_korc_mem m = {.e = e,
					.rules = rules,
					.nrules = o.nrules,
					.lookup = lookup,
					.read = read_rest};
		struct fg_korc_state st;
		__u64 ip = s.info.text_start + (nbytes ? bytes[0] * 64u : 0);

		for (uint32_t off = 0; off < 1u << 16; off += 251) {
			int64_t i = fg_korc_find(&m, &s.info, off);

			if (i < -1 || i >= (int64_t)s.info.nr || (i >= 0 && e[i].rule >= o.nrules))
				abort();
		}
		if (fg_korc_start(&m, &s.info, ip, 0xffffc90000000000ull, 0, &st) == FG_KORC_NEXT)
			for (int n = 0; n < 127 && fg_korc_step(&m, &s.info, &st) == FG_KORC_NEXT;
			     n++)
				;
	}
	free(ips);
	free(orcs);
	free(e);
	free(lookup);
	return 0;
}
