/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's BPF code by address: the programs loaded now, named as
 * kallsyms names them (fg-sample writes them into the stream, ksym records),
 * and a table of such code for naming frames (fg-sym).
 *
 * kallsyms holds a BPF program only while it is loaded, and reading kallsyms
 * whole is costly (tens of milliseconds of system time); a capture names
 * the BPF code of its kernel stacks from its own records instead.
 *
 *	fg_bpfsyms_loaded(fn, arg, &st);		// fn(arg, addr, len, name) each
 *	struct fg_bpfsyms *t = fg_bpfsyms_new();
 *	fg_bpfsyms_add(t, addr, len, name);
 *	const char *name = fg_bpfsyms_lookup(t, addr, &start);
 *	fg_bpfsyms_free(t);
 */
#ifndef FG_BPFSYMS_H
#define FG_BPFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* code ranges a table holds at most; more are left out (fg_bpfsyms_add: false) */
#define FG_BPFSYMS_MAX 65536

struct fg_bpfsyms_stats {
	uint64_t progs;	     /* programs read */
	uint64_t syms;	     /* their functions, each a symbol */
	uint64_t unreadable; /* programs gone meanwhile, or not readable */
};

typedef void (*fg_bpfsyms_fn)(void *arg, uint64_t addr, uint32_t len, const char *name);

/*
 * Each function of each BPF program loaded now, to fn: its address, its
 * length and its name, "bpf_prog_TAG_NAME" as kallsyms has it (NAME the
 * function's in the program's BTF, else the program's name).  Needs
 * CAP_SYS_ADMIN.  0, or -errno when the programs could not be listed.
 */
int fg_bpfsyms_loaded(fg_bpfsyms_fn fn, void *arg, struct fg_bpfsyms_stats *st);

/* "bpf_prog_TAG[_NAME]" into buf, as the kernel names a program's function */
void fg_bpfsyms_name(char *buf, size_t size, const uint8_t tag[8], const char *name);

struct fg_bpfsyms;
struct fg_bpfsyms *fg_bpfsyms_new(void);
void fg_bpfsyms_free(struct fg_bpfsyms *t);
/*
 * The code of [addr, addr + len) is `name` from now on: the ranges it
 * overlaps are forgotten (their code was unloaded, the addresses reused).
 * False when the table holds FG_BPFSYMS_MAX ranges already, or len is 0.
 */
bool fg_bpfsyms_add(struct fg_bpfsyms *t, uint64_t addr, uint32_t len, const char *name);
/* The name of the code at addr and its first address, or NULL. */
const char *fg_bpfsyms_lookup(const struct fg_bpfsyms *t, uint64_t addr, uint64_t *start);
size_t fg_bpfsyms_count(const struct fg_bpfsyms *t);

#endif
