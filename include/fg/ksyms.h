/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms (or a copy of it): the text symbols of
 * the kernel and of its modules, sorted for lookup by address.
 *
 *	struct fg_ksyms *k = fg_ksyms_load("/proc/kallsyms", &line);
 *	const struct fg_ksym *s = fg_ksyms_lookup(k, ip);
 *	fg_ksyms_free(k);
 */
#ifndef FG_KSYMS_H
#define FG_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_ksym {
	uint64_t addr;
	uint64_t end;	    /* first address after the symbol */
	const char *name;
	const char *module; /* NULL for the kernel itself, else the module's name */
};

struct fg_ksyms;

/* Largest kallsyms text accepted (the real one is about 10 MB). */
#define FG_KSYMS_MAX_BYTES (256u << 20)

/*
 * Parse kallsyms text (`data` is copied).  NULL with errno EINVAL on a
 * malformed line, whose number goes to *bad_line (if not NULL).
 */
struct fg_ksyms *fg_ksyms_parse(const char *data, size_t len, uint64_t *bad_line);
/* Read and parse a file.  NULL with errno set; *bad_line as above, else 0. */
struct fg_ksyms *fg_ksyms_load(const char *path, uint64_t *bad_line);
/* The text symbol holding `addr`, or NULL. */
const struct fg_ksym *fg_ksyms_lookup(const struct fg_ksyms *k, uint64_t addr);
/* True when every address was zero: kernel.kptr_restrict hides them. */
bool fg_ksyms_hidden(const struct fg_ksyms *k);
size_t fg_ksyms_count(const struct fg_ksyms *k);
void fg_ksyms_free(struct fg_ksyms *k);

#endif
