/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's ORC unwind tables (x86-64, CONFIG_UNWINDER_ORC), for the
 * kernel-stack unwinder of fg-sample's BPF program.  The kernel keeps them in
 * its read-only data: .orc_unwind_ip, one 32-bit address per entry, relative
 * to the entry's own place, and .orc_unwind, one 6-byte struct orc_entry per
 * address, both sorted by address (at build time, and again at boot).  Where
 * they are comes from /proc/kallsyms; their bytes are read by the caller
 * (fg-sample copies them through a BPF program: there is no /proc/kcore to
 * read them from).  This module turns them into the BPF program's tables
 * (fg/bpf_abi.h): struct fg_korc_entry, the addresses as offsets from _stext
 * with the index of their rule, the distinct rules (struct fg_korc_rule, the
 * bit fields spread into bytes), and the block index that finds an
 * address's entry in a few steps, as the kernel's orc_lookup does.
 *
 *	struct fg_korc_syms s;
 *	fg_korc_syms_parse(kallsyms, len, &s);   (or fg_korc_syms_set())
 *	... read s.nr entries at s.ip_start and s.orc_start ...
 *	struct fg_korc_out o = {entries, rules, 0, lookup};
 *	fg_korc_build(&s, ip_bytes, orc_bytes, &o);
 *
 * Finding an address's entry and unwinding a frame are fg/korc_step.h's,
 * shared with the BPF program.
 */
#ifndef FG_KORC_H
#define FG_KORC_H

#include <stddef.h>
#include <stdint.h>

#include "fg/korc_step.h"

/* the sizes of the kernel's entries: an int, and struct orc_entry (packed) */
#define FG_KORC_IP_SIZE 4
#define FG_KORC_ORC_SIZE 6

/* where the tables are: from /proc/kallsyms */
struct fg_korc_syms {
	/*
	 * _stext and _etext (the text the block index covers), the entries,
	 * the blocks of the index (the last one ends it), return_to_handler
	 * and arch_rethook_trampoline (0: not in this kernel)
	 */
	struct fg_korc_info info;
	uint64_t ip_start, orc_start; /* __start_orc_unwind_ip, __start_orc_unwind */
	/*
	 * __schedule (0: not found, or hidden), set even when the tables are
	 * not there: --off-cpu's waits leave out the frames above it
	 */
	uint64_t schedule;
};

/*
 * The symbols in kallsyms text (data, len).  0; -ENOENT when one is missing
 * (not an ORC kernel); -EPERM when the addresses are hidden (zeros:
 * kernel.kptr_restrict); -EINVAL when the tables make no sense (their sizes
 * disagree, or exceed FG_KORC_MAX_ENTRIES, or _etext is not above _stext).
 */
int fg_korc_syms_parse(const char *data, size_t len, struct fg_korc_syms *s);

/*
 * The symbols fg_korc_syms_parse() looks for, for a caller that finds their
 * addresses some other way (fg-sample: bpf_kallsyms_lookup_name()): _stext,
 * _etext and the tables' four bounds are required; return_to_handler,
 * arch_rethook_trampoline and __schedule are not.
 */
#define FG_KORC_NSYMS 9
extern const char *const fg_korc_sym_names[FG_KORC_NSYMS];

/*
 * `s` from addr[i], the address of fg_korc_sym_names[i] where bit i of
 * `found` is set, checked as fg_korc_syms_parse() checks what it finds (which
 * ends here): the same results.
 */
int fg_korc_syms_set(const uint64_t *addr, unsigned found, struct fg_korc_syms *s);

/* The BPF program's tables, in the caller's memory. */
struct fg_korc_out {
	struct fg_korc_entry *e;    /* s->info.nr */
	struct fg_korc_rule *rules; /* FG_KORC_MAX_RULES */
	uint32_t nrules;	    /* set: the distinct rules, in the order first met */
	uint32_t *lookup;	    /* s->info.nblocks */
};

/*
 * The BPF program's tables from the kernel's bytes: `ips`, s->info.nr entries
 * of FG_KORC_IP_SIZE bytes read at s->ip_start, and `orcs`, as many of
 * FG_KORC_ORC_SIZE read at s->orc_start.  0; -EINVAL when the addresses are
 * not sorted or fall below _stext or beyond 4 GiB of it; -E2BIG when there
 * are more than FG_KORC_MAX_RULES distinct rules; -ENOMEM.
 */
int fg_korc_build(const struct fg_korc_syms *s, const void *ips, const void *orcs,
		  struct fg_korc_out *out);

/*
 * The tables of `s` read with `read` (`len` bytes of the kernel at `addr`
 * into buf, at most `chunk` at a time; 0 or -errno) and built as
 * fg_korc_build() builds them, a chunk's worth of entries at a time (no
 * copy of the kernel's whole tables).  0, -ENOMEM, a read's -errno, -E2BIG,
 * or -EINVAL (also for a chunk smaller than FG_KORC_ORC_SIZE).
 */
int fg_korc_load(const struct fg_korc_syms *s, size_t chunk,
		 int (*read)(void *arg, uint64_t addr, void *buf, size_t len), void *arg,
		 struct fg_korc_out *out);

#endif
