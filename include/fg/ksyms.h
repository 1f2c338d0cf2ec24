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

struct fg_hash;

struct fg_ksym {
	uint64_t addr;
	uint64_t end; /* first address after the symbol */
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

/*
 * A cache of the kernel's symbols.  Reading /proc/kallsyms makes the kernel
 * format some 120,000 lines, which costs more than naming thousands of
 * samples; yet the kernel's own symbols change only at boot and its
 * modules' only when one is loaded or unloaded.  A cache file holds the text
 * symbols of the kernel and of the modules in /proc/modules (not those of
 * BPF programs or trampolines, which come and go), stamped with the boot id
 * and a digest of /proc/modules.
 *
 * A table read from a cache cannot tell about an address outside what it
 * covers: fg_ksyms_lookup_sure() then says it is not sure, and the caller
 * reads /proc/kallsyms after all.
 */
struct fg_kstamp {
	char boot_id[40];      /* /proc/sys/kernel/random/boot_id */
	uint64_t modules;      /* digest of /proc/modules: names, sizes, states, addresses */
	struct fg_hash *names; /* the modules' names */
};

/* The stamp of the running kernel, from `proc` (normally "/proc").  0 or -errno. */
int fg_kstamp_read(struct fg_kstamp *st, const char *proc);
void fg_kstamp_free(struct fg_kstamp *st);
bool fg_kstamp_equal(const struct fg_kstamp *a, const struct fg_kstamp *b);

/*
 * Write the symbols of the kernel and of st's modules to the file `name` in
 * the directory `dirfd` (fg_safeio_private_dir_open() opens one that is safe to
 * use), replaced whole through a temporary file, mode 0600: the addresses
 * are secret from other users.  0 or -errno.
 */
int fg_ksyms_save(const struct fg_ksyms *k, const struct fg_kstamp *st, int dirfd,
		  const char *name);
/*
 * Read a cache written for stamp `st` from `name` in `dirfd`.  NULL with
 * errno ENOENT (none), ESTALE (another boot, other modules), EPERM (a
 * symbolic link, not a regular file of ours, or writable by others) or
 * EINVAL (malformed).
 */
struct fg_ksyms *fg_ksyms_load_cache(int dirfd, const char *name, const struct fg_kstamp *st);
/* The same from memory; `st` NULL accepts any stamp. */
struct fg_ksyms *fg_ksyms_parse_cache(const void *data, size_t len, const struct fg_kstamp *st);
/* Whether the table came from a cache. */
bool fg_ksyms_from_cache(const struct fg_ksyms *k);
/*
 * fg_ksyms_lookup(), and whether the answer holds: false when the table came
 * from a cache and the address is outside the code it covers (or past the
 * last symbol of the kernel or of a module, where other code may follow).
 */
const struct fg_ksym *fg_ksyms_lookup_sure(const struct fg_ksyms *k, uint64_t addr, bool *sure);
size_t fg_ksyms_count(const struct fg_ksyms *k);
void fg_ksyms_free(struct fg_ksyms *k);

#endif
