// SPDX-License-Identifier: BSD-2-Clause
/* The kernel's BPF code by address: the programs loaded now, and a table for naming frames. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/bpfsyms.h"
#include "fg/diag.h"

/* functions of one program read at most (the verifier allows far fewer) */
#define MAX_FUNCS 4096u

void fg_bpfsyms_name(char *buf, size_t size, const uint8_t tag[8], const char *name)
{
	int n = snprintf(buf, size, "bpf_prog_");

	for (int i = 0; i < 8 && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%02x", tag[i]);
	if (name && *name && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "_%s", name);
}

/* The BTF of id, loaded once for the listing (most programs of one object share theirs). */
struct btfs {
	uint32_t id[16];
	struct btf *btf[16];
	unsigned n, next;
};

static struct btf *btf_of(struct btfs *b, uint32_t id)
{
	unsigned i;

	for (i = 0; i < b->n; i++)
		if (b->id[i] == id)
			return b->btf[i];
	i = b->n < 16 ? b->n++ : b->next++ % 16;
	if (b->btf[i])
		btf__free(b->btf[i]);
	b->id[i] = id;
	b->btf[i] = btf__load_from_kernel_by_id(id);
	if (libbpf_get_error(b->btf[i]))
		b->btf[i] = NULL;
	return b->btf[i];
}

/* The name of function k of a program: its BTF's, else the program's (the first only). */
static const char *func_name(struct btfs *b, const struct bpf_prog_info *info,
			     const struct bpf_func_info *fi, uint32_t k)
{
	struct btf *btf = k < info->nr_func_info && info->btf_id ? btf_of(b, info->btf_id) : NULL;
	const struct btf_type *t = btf ? btf__type_by_id(btf, fi[k].type_id) : NULL;
	const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	if (name && *name)
		return name;
	return k == 0 ? info->name : NULL;
}

/* One program's functions to fn: 0, or -errno (gone meanwhile, or over the bound). */
static int list_prog(int fd, struct btfs *b, fg_bpfsyms_fn fn, void *arg,
		     struct fg_bpfsyms_stats *st)
{
	struct bpf_prog_info info = {0}, want = {0};
	uint32_t len = sizeof(info), n;
	uint64_t *addrs = NULL;
	uint32_t *lens = NULL;
	uint8_t(*tags)[8] = NULL;
	struct bpf_func_info *fi = NULL;
	char name[512];
	int err = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	n = info.nr_jited_ksyms;
	if (!n)
		return 0; /* not JIT-compiled: no code of its own in kallsyms */
	if (n > MAX_FUNCS || info.nr_jited_func_lens != n)
		return -ENOEXEC;
	addrs = fg_xcalloc(n, sizeof(*addrs));
	lens = fg_xcalloc(n, sizeof(*lens));
	want.nr_jited_ksyms = n;
	want.jited_ksyms = (uint64_t)(uintptr_t)addrs;
	want.nr_jited_func_lens = n;
	want.jited_func_lens = (uint64_t)(uintptr_t)lens;
	if (info.nr_prog_tags == n) {
		tags = fg_xcalloc(n, sizeof(*tags));
		want.nr_prog_tags = n;
		want.prog_tags = (uint64_t)(uintptr_t)tags;
	}
	if (info.nr_func_info == n && info.func_info_rec_size == sizeof(*fi)) {
		fi = fg_xcalloc(n, sizeof(*fi));
		want.nr_func_info = n;
		want.func_info_rec_size = sizeof(*fi);
		want.func_info = (uint64_t)(uintptr_t)fi;
	}
	len = sizeof(want);
	if (bpf_obj_get_info_by_fd(fd, &want, &len) < 0) {
		err = -errno;
		goto out;
	}
	/* (the counts again: the kernel fills no more than it was asked for) */
	want.nr_func_info = fi ? want.nr_func_info : 0;
	for (uint32_t k = 0; k < n && k < want.nr_jited_ksyms; k++) {
		if (!addrs[k] || !lens[k])
			continue;
		/* (kallsyms names the first function by the program's tag, the others by theirs) */
		fg_bpfsyms_name(name, sizeof(name), k && tags ? tags[k] : want.tag,
				func_name(b, &want, fi, k));
		fn(arg, addrs[k], lens[k], name);
		st->syms++;
	}
	st->progs++;
out:
	free(addrs);
	free(lens);
	free(tags);
	free(fi);
	return err;
}

int fg_bpfsyms_loaded(fg_bpfsyms_fn fn, void *arg, struct fg_bpfsyms_stats *st)
{
	struct btfs b = {0};
	uint32_t id = 0;
	int err = 0;

	memset(st, 0, sizeof(*st));
	for (;;) {
		int fd;

		if (bpf_prog_get_next_id(id, &id) < 0) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0 || list_prog(fd, &b, fn, arg, st) < 0)
			st->unreadable++;
		if (fd >= 0)
			close(fd);
	}
	for (unsigned i = 0; i < b.n; i++)
		btf__free(b.btf[i]);
	return err;
}

/* --- the table --- */

struct range {
	uint64_t start, end;
	char *name;
};

struct fg_bpfsyms {
	struct range *r; /* sorted, none overlapping */
	size_t n, alloc;
};

struct fg_bpfsyms *fg_bpfsyms_new(void)
{
	return fg_xcalloc(1, sizeof(struct fg_bpfsyms));
}

void fg_bpfsyms_free(struct fg_bpfsyms *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->r[i].name);
	free(t->r);
	free(t);
}

size_t fg_bpfsyms_count(const struct fg_bpfsyms *t)
{
	return t ? t->n : 0;
}

/* The first range that ends after addr. */
static size_t first_after(const struct fg_bpfsyms *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool fg_bpfsyms_add(struct fg_bpfsyms *t, uint64_t addr, uint32_t len, const char *name)
{
	uint64_t end = addr + len;
	size_t lo, hi;

	if (!len || end < addr)
		return false;
	lo = first_after(t, addr);
	for (hi = lo; hi < t->n && t->r[hi].start < end; hi++)
		free(t->r[hi].name);
	if (hi == lo && t->n >= FG_BPFSYMS_MAX)
		return false;
	/* the ranges [lo, hi) overlap the new one: it takes their place */
	if (hi == lo) {
		FG_ALLOC_GROW(t->r, t->n + 1, t->alloc);
		memmove(t->r + lo + 1, t->r + lo, (t->n - lo) * sizeof(*t->r));
		t->n++;
	} else if (hi > lo + 1) {
		memmove(t->r + lo + 1, t->r + hi, (t->n - hi) * sizeof(*t->r));
		t->n -= hi - lo - 1;
	}
	t->r[lo] = (struct range){addr, end, fg_xstrdup(name)};
	return true;
}

const char *fg_bpfsyms_lookup(const struct fg_bpfsyms *t, uint64_t addr, uint64_t *start)
{
	size_t i = t ? first_after(t, addr) : 0;

	if (!t || i >= t->n || t->r[i].start > addr)
		return NULL;
	*start = t->r[i].start;
	return t->r[i].name;
}
