/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's types that a BPF object's CO-RE relocations resolve against,
 * and no more: for libbpf's btf_custom_path.  Without it, libbpf reads and
 * parses all of the kernel's BTF at every load (5 MiB, some 100,000 types:
 * 15 to 20 ms of fg-sample's start on a guest), then scans every type once
 * for each type relocated (about a millisecond each).  With a file of the few
 * hundred types relocated, kept per kernel and object, it does neither.
 *
 * For each named struct, union and enum of the object's own BTF (`local`),
 * its flavors' suffix ("___x") cut off, every type of the kernel's BTF of
 * that name and kind is copied whole: its size, every member's name, offset
 * and bit field size.  What CO-RE compares along a member's path is copied as
 * the kernel has it: integers, floats, enums, arrays of them, and the structs
 * and unions embedded (typedefs and qualifiers are looked through, as CO-RE
 * does).  A pointer's target is not: CO-RE reads through a pointer with a
 * relocation of its own, so every pointer becomes a pointer to void.  The
 * relocations then resolve to the very offsets, sizes and existences that
 * the kernel's whole BTF gives (tests/unit/test_minbtf.c loads fg-sample's
 * program both ways and compares the instructions).
 *
 *	struct btf *m;
 *	int err = fg_minbtf_new(bpf_object__btf(obj), kernel_btf, &m);
 *	const void *raw = btf__raw_data(m, &size);	   (to a file)
 *	btf__free(m);
 */
#ifndef FG_MINBTF_H
#define FG_MINBTF_H

#include <stddef.h>

struct btf;

/* nesting of embedded structs, arrays and typedefs followed at most */
#define FG_MINBTF_MAX_DEPTH 64

/*
 * The types of `kernel` that the relocations of `local` can take into *out
 * (a new BTF for btf__free()): 0, or -ENOMEM, -ELOOP (nesting beyond
 * FG_MINBTF_MAX_DEPTH), -EINVAL (a type CO-RE cannot meet in a member: a
 * function, a variable), or libbpf's error.
 */
int fg_minbtf_new(const struct btf *local, const struct btf *kernel, struct btf **out);

/* The length of `name` without its CO-RE flavor ("task_struct___x": 11), as libbpf cuts it. */
size_t fg_minbtf_essential_len(const char *name);

/*
 * Kept between runs (fg-sample, in the user's cache directory): a file for
 * each BPF object and kernel, named by a hash of the object's bytes and of
 * the running kernel's identity (its notes, with its build-id, its release
 * and version, the size of its BTF); at most FG_MINBTF_KEEP files, the
 * least recently used removed.  The directory is the caller's to open
 * (fg_safeio_private_dir_open: the user's own).
 */
#define FG_MINBTF_KEEP 8
#define FG_MINBTF_NAME_MAX 48
#define FG_MINBTF_MAX_BYTES (16u << 20)

/* The file name for object (obj, len) on the running kernel into name: 0 or -errno. */
int fg_minbtf_name(const void *obj, size_t len, char *name, size_t size);
/*
 * Write m to `name` in directory dirfd (whole, then renamed), then remove the
 * least recently used beyond FG_MINBTF_KEEP.  0 or -errno.
 */
int fg_minbtf_keep(int dirfd, const char *name, const struct btf *m);

#endif
