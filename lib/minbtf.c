// SPDX-License-Identifier: BSD-2-Clause
#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/minbtf.h"
#include "fg/safeio.h"

size_t fg_minbtf_essential_len(const char *name)
{
	size_t n = strlen(name);

	/* the last "X___Y" where neither X nor Y is an underscore: the name is what comes before */
	for (size_t i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;)
		if (name[i] != '_' && name[i + 1] == '_' && name[i + 2] == '_' &&
		    name[i + 3] == '_' && name[i + 4] != '_')
			return i + 1;
	return n;
}

/* a name wanted: a local type's essential name, and its kind */
struct want {
	const char *name;
	size_t len;
	unsigned kind;
};

static int cmp_want(const void *a, const void *b)
{
	const struct want *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* the kinds a CO-RE relocation's root can be (enum and enum64 meet each other) */
static unsigned root_kind(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
		return BTF_KIND_STRUCT;
	case BTF_KIND_UNION:
		return BTF_KIND_UNION;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return BTF_KIND_ENUM;
	default:
		return 0;
	}
}

struct copier {
	const struct btf *k; /* the kernel's */
	struct btf *out;
	uint32_t *memo; /* kernel type id -> out's, 0 when not copied yet */
	int void_ptr;	/* out's pointer to void, 0 until made */
};

static int copy_type(struct copier *c, uint32_t id, int depth);

/* A struct or union: the types of its members first (a struct's fields must follow it). */
static int copy_composite(struct copier *c, const struct btf_type *t, int depth)
{
	const struct btf_member *m = btf_members(t);
	unsigned n = btf_vlen(t);
	int *types = n ? calloc(n, sizeof(*types)) : NULL;
	int id, err = 0;

	if (n && !types)
		return -ENOMEM;
	for (unsigned i = 0; i < n && !err; i++) {
		types[i] = copy_type(c, m[i].type, depth + 1);
		if (types[i] < 0)
			err = types[i];
	}
	if (err) {
		free(types);
		return err;
	}
	id = btf_is_struct(t)
		 ? btf__add_struct(c->out, btf__name_by_offset(c->k, t->name_off), t->size)
		 : btf__add_union(c->out, btf__name_by_offset(c->k, t->name_off), t->size);
	for (unsigned i = 0; id > 0 && i < n && !err; i++)
		err = btf__add_field(c->out, btf__name_by_offset(c->k, m[i].name_off), types[i],
				     btf_member_bit_offset(t, i), btf_member_bitfield_size(t, i));
	free(types);
	return err < 0 ? err : id;
}

/* Kernel type `id` in out (copied once), as CO-RE meets it in a member; its id there. */
static int copy_type(struct copier *c, uint32_t id, int depth)
{
	const struct btf_type *t;
	int r;

	if (id == 0)
		return 0; /* void */
	if (depth > FG_MINBTF_MAX_DEPTH)
		return -ELOOP;
	if (id >= btf__type_cnt(c->k) || !(t = btf__type_by_id(c->k, id)))
		return -EINVAL;
	if (c->memo[id])
		return (int)c->memo[id];
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
		r = btf__add_type(c->out, c->k, t); /* (they refer to no other type) */
		break;
	case BTF_KIND_PTR:
		if (!c->void_ptr)
			c->void_ptr = btf__add_ptr(c->out, 0);
		r = c->void_ptr;
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		r = copy_type(c, t->type, depth + 1);
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int elem = copy_type(c, a->type, depth + 1);
		int index = elem < 0 ? elem : copy_type(c, a->index_type, depth + 1);

		r = index < 0 ? index : btf__add_array(c->out, index, elem, a->nelems);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		r = copy_composite(c, t, depth);
		break;
	default:
		return -EINVAL; /* a function, a variable, a section: never a member's type */
	}
	if (r > 0)
		c->memo[id] = (uint32_t)r;
	return r;
}

/* The wanted names: the local types' that a relocation can start from, sorted. */
static size_t local_wants(const struct btf *local, struct want **wants)
{
	uint32_t n = btf__type_cnt(local);
	size_t w = 0;

	*wants = calloc(n ? n : 1, sizeof(**wants));
	if (!*wants)
		return 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		const char *name = t ? btf__name_by_offset(local, t->name_off) : NULL;

		if (!t || !root_kind(t) || !name || !*name)
			continue;
		(*wants)[w++] = (struct want){name, fg_minbtf_essential_len(name), root_kind(t)};
	}
	qsort(*wants, w, sizeof(**wants), cmp_want);
	return w;
}

int fg_minbtf_new(const struct btf *local, const struct btf *kernel, struct btf **out)
{
	struct copier c = {.k = kernel};
	struct want *wants = NULL;
	uint32_t n = btf__type_cnt(kernel);
	size_t nwants = local_wants(local, &wants);
	int err = wants ? 0 : -ENOMEM;

	*out = NULL;
	c.memo = err ? NULL : calloc(n, sizeof(*c.memo));
	c.out = c.memo ? btf__new_empty() : NULL;
	if (!err && !c.out)
		err = -ENOMEM;
	/* every kernel type a wanted name's relocation could take as its candidate */
	for (uint32_t id = 1; !err && nwants && id < n; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);
		const char *name = t ? btf__name_by_offset(kernel, t->name_off) : NULL;
		struct want key;
		int r;

		if (!t || !root_kind(t) || !name || !*name)
			continue;
		key = (struct want){name, fg_minbtf_essential_len(name), root_kind(t)};
		if (!bsearch(&key, wants, nwants, sizeof(*wants), cmp_want))
			continue;
		r = copy_type(&c, id, 0);
		if (r < 0)
			err = r;
	}
	free(wants);
	free(c.memo);
	if (err) {
		btf__free(c.out);
		return err;
	}
	*out = c.out;
	return 0;
}

int fg_minbtf_name(const void *obj, size_t len, char *name, size_t size)
{
	struct utsname u;
	struct stat st;
	char *notes = NULL;
	size_t nlen = 0;
	uint64_t k;
	int err, n;

	/* the kernel: its notes (its build-id among them), release, version, BTF's size */
	err = fg_safeio_read_file("/sys/kernel/notes", 1u << 16, &notes, &nlen);
	if (err)
		return err;
	if (uname(&u) < 0 || stat("/sys/kernel/btf/vmlinux", &st) < 0) {
		free(notes);
		return -errno;
	}
	k = fg_hash_bytes(notes, nlen, (uint64_t)st.st_size);
	k = fg_hash_bytes(u.release, strlen(u.release), k);
	k = fg_hash_bytes(u.version, strlen(u.version), k);
	free(notes);
	n = snprintf(name, size, "%016" PRIx64 "-%016" PRIx64 ".btf", k,
		     fg_hash_bytes(obj, len, (uint64_t)len));
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

static bool is_kept_name(const char *s)
{
	size_t n = strlen(s);

	return n == 37 && strcmp(s + 33, ".btf") == 0 && s[16] == '-' &&
	       strspn(s, "0123456789abcdef") == 16 && strspn(s + 17, "0123456789abcdef") == 16;
}

/* The files beyond the FG_MINBTF_KEEP most recently used (modified) removed. */
static void evict(int dirfd)
{
	static const struct fg_dir_bounds b = {.max_files = FG_MINBTF_KEEP,
					       .to_files = FG_MINBTF_KEEP};
	struct fg_dir_count n;

	(void)fg_safeio_dir_trim(dirfd, is_kept_name, &b, &n);
}

int fg_minbtf_keep(int dirfd, const char *name, const struct btf *m)
{
	struct fg_atomic a;
	uint32_t size;
	const void *raw = btf__raw_data(m, &size);
	int err;

	if (!raw)
		return -ENOMEM;
	err = fg_atomic_openat(&a, dirfd, name, FG_OUT_PRIVATE);
	if (err)
		return err;
	fwrite(raw, 1, size, a.fp); /* (a short write: the commit's error, nothing renamed) */
	err = fg_atomic_commit(&a);
	if (!err)
		evict(dirfd);
	return err;
}
