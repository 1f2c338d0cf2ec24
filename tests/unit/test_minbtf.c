// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for lib/minbtf.c: the kernel's types a BPF object relocates
 * against, and nothing else; fg-sample's program relocated by them exactly
 * as by the kernel's whole BTF.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/minbtf.h"
#include "fg_sample.skel.h"
#include "unit.h"

TEST(flavors_are_cut_as_libbpf_cuts_them)
{
	CHECK_INT(fg_minbtf_essential_len("task_struct"), 11);
	CHECK_INT(fg_minbtf_essential_len("task_struct___x"), 11);
	CHECK_INT(fg_minbtf_essential_len("inode___ctime_ts"), 5);
	/* the last separator: "a___b___c" is a flavor of "a___b" */
	CHECK_INT(fg_minbtf_essential_len("a___b___c"), 5);
	/* no separator: underscores on either side, or too short */
	CHECK_INT(fg_minbtf_essential_len("a____b"), 6);
	CHECK_INT(fg_minbtf_essential_len("___b"), 4);
	CHECK_INT(fg_minbtf_essential_len("a___"), 4);
	CHECK_INT(fg_minbtf_essential_len(""), 0);
}

/* The id of the type named `name` of `kind` in b, or 0. */
static int find(const struct btf *b, const char *name, int kind)
{
	int id = btf__find_by_name_kind(b, name, kind);

	return id > 0 ? id : 0;
}

/*
 * A kernel of a few types: struct outer embeds struct inner and an anonymous
 * union, points to itself, has an array of typedef'd ints and a bit field;
 * struct unrelated and enum other are named by nothing local.
 */
static struct btf *small_kernel(void)
{
	struct btf *k = btf__new_empty();
	int i32 = btf__add_int(k, "int", 4, BTF_INT_SIGNED);
	int u8 = btf__add_int(k, "unsigned char", 1, 0);
	int td = btf__add_typedef(k, "pid_t", i32);
	int cst = btf__add_const(k, td);
	int inner = btf__add_struct(k, "inner", 8);

	btf__add_field(k, "a", i32, 0, 0);
	btf__add_field(k, "b", i32, 32, 0);
	int un = btf__add_union(k, NULL, 4);
	btf__add_field(k, "u1", i32, 0, 0);
	btf__add_field(k, "u2", u8, 0, 0);
	int arr = btf__add_array(k, i32, cst, 4);
	int fwd = btf__add_fwd(k, "outer", BTF_FWD_STRUCT);
	int ptr = btf__add_ptr(k, fwd);
	int outer = btf__add_struct(k, "outer", 48);
	btf__add_field(k, "in", inner, 0, 0);
	btf__add_field(k, "next", ptr, 64, 0);
	btf__add_field(k, "ids", arr, 128, 0);
	btf__add_field(k, NULL, un, 256, 0);
	btf__add_field(k, "flag", u8, 288, 3);
	btf__add_struct(k, "unrelated", 4);
	btf__add_field(k, "x", i32, 0, 0);
	btf__add_enum(k, "other", 4);
	btf__add_enum_value(k, "OTHER_A", 1);
	btf__add_enum(k, "color", 4);
	btf__add_enum_value(k, "RED", 0);
	btf__add_enum_value(k, "BLUE", -2);
	return outer > 0 ? k : NULL;
}

TEST(copies_the_types_named_whole_and_nothing_else)
{
	struct btf *k = small_kernel(), *l = btf__new_empty(), *m = NULL;
	const struct btf_type *t, *mt;
	const struct btf_member *mm;
	int id, li;

	CHECK(k && l);
	/* the local side: a flavor of outer, the enum, and a type the kernel lacks */
	li = btf__add_int(l, "int", 4, BTF_INT_SIGNED);
	btf__add_struct(l, "outer___fg", 4);
	btf__add_field(l, "flag", li, 0, 0);
	btf__add_enum(l, "color", 4);
	btf__add_enum_value(l, "RED", 0);
	btf__add_struct(l, "fg_event", 4);
	btf__add_field(l, "x", li, 0, 0);
	CHECK_INT(fg_minbtf_new(l, k, &m), 0);
	CHECK(m != NULL);
	CHECK(!find(m, "unrelated", BTF_KIND_STRUCT));
	CHECK(!find(m, "other", BTF_KIND_ENUM));
	CHECK(!find(m, "fg_event", BTF_KIND_STRUCT));
	CHECK(!find(m, "pid_t", BTF_KIND_TYPEDEF)); /* looked through */
	id = find(m, "outer", BTF_KIND_STRUCT);
	CHECK(id);
	t = btf__type_by_id(m, id);
	CHECK_INT(t->size, 48);
	CHECK_INT(btf_vlen(t), 5);
	mm = btf_members(t);
	/* each member's name, offset and bit field size, as the kernel has them */
	CHECK_STR(btf__name_by_offset(m, mm[0].name_off), "in");
	CHECK_STR(btf__name_by_offset(m, mm[4].name_off), "flag");
	CHECK_STR(btf__name_by_offset(m, mm[3].name_off), "");
	static const int offsets[] = {0, 64, 128, 256, 288};

	for (int i = 0; i < 5; i++)
		CHECK_INT(btf_member_bit_offset(t, i), offsets[i]);
	CHECK_INT(btf_member_bitfield_size(t, 4), 3);
	/* embedded: inner whole; the pointer: to void */
	mt = btf__type_by_id(m, mm[0].type);
	CHECK(btf_is_struct(mt) && btf_vlen(mt) == 2);
	CHECK_STR(btf__name_by_offset(m, mt->name_off), "inner");
	mt = btf__type_by_id(m, mm[1].type);
	CHECK(btf_is_ptr(mt) && mt->type == 0);
	/* the array of const pid_t: of int, 4 of them */
	mt = btf__type_by_id(m, mm[2].type);
	CHECK(btf_is_array(mt) && btf_array(mt)->nelems == 4);
	CHECK(btf_is_int(btf__type_by_id(m, btf_array(mt)->type)));
	/* the anonymous union, its members */
	mt = btf__type_by_id(m, mm[3].type);
	CHECK(btf_is_union(mt) && btf_vlen(mt) == 2 && mt->size == 4);
	/* the enum, every value */
	id = find(m, "color", BTF_KIND_ENUM);
	CHECK(id);
	t = btf__type_by_id(m, id);
	CHECK_INT(btf_vlen(t), 2);
	CHECK_INT((int32_t)btf_enum(t)[1].val, -2);
	/* what comes out parses back (a file of it is what libbpf reads) */
	uint32_t size;
	const void *raw = btf__raw_data(m, &size);
	struct btf *back = raw ? btf__new(raw, size) : NULL;

	CHECK(back && find(back, "outer", BTF_KIND_STRUCT));
	btf__free(back);
	btf__free(m);
	btf__free(l);
	btf__free(k);
}

TEST(nesting_beyond_the_bound_is_refused)
{
	struct btf *k = btf__new_empty(), *l = btf__new_empty(), *m = NULL;
	int id = btf__add_int(k, "int", 4, BTF_INT_SIGNED);

	CHECK(k && l);
	for (int i = 0; i < FG_MINBTF_MAX_DEPTH + 2; i++)
		id = btf__add_typedef(k, "t", id);
	btf__add_struct(k, "deep", 4);
	btf__add_field(k, "x", id, 0, 0);
	btf__add_struct(l, "deep", 4);
	btf__add_field(l, "x", btf__add_int(l, "int", 4, 0), 0, 0);
	CHECK_INT(fg_minbtf_new(l, k, &m), -ELOOP);
	CHECK(m == NULL);
	btf__free(l);
	btf__free(k);
}

TEST(named_by_object_and_kernel)
{
	char a[FG_MINBTF_NAME_MAX], b[FG_MINBTF_NAME_MAX], c[FG_MINBTF_NAME_MAX];
	int err = fg_minbtf_name("object one", 10, a, sizeof(a));

	if (err == -EACCES || err == -ENOENT) {
		printf("# no kernel identity to read here: %s\n", strerror(-err));
		CHECK(access("/sys/kernel/notes", R_OK) != 0);
		return;
	}
	CHECK_INT(err, 0);
	CHECK_INT(fg_minbtf_name("object one", 10, b, sizeof(b)), 0);
	CHECK_INT(fg_minbtf_name("object two", 10, c, sizeof(c)), 0);
	CHECK_STR(a, b);
	/* the kernel's half the same, the object's not */
	CHECK_INT(strlen(a), 37);
	CHECK(strncmp(a, c, 17) == 0 && strcmp(a + 17, c + 17) != 0);
	CHECK_STR(a + 33, ".btf");
	CHECK_INT(fg_minbtf_name("object one", 10, a, 20), -ENAMETOOLONG);
}

TEST(keeps_the_most_recently_used_and_nothing_else_is_touched)
{
	char dir[] = "/tmp/fg-test-minbtf-keep.XXXXXX", path[128], name[64];
	struct btf *m = btf__new_empty();
	struct timespec t[2] = {{0, 0}, {0, 0}};
	struct stat st;
	int dirfd, n = 0;

	CHECK(m && mkdtemp(dir));
	btf__add_int(m, "int", 4, BTF_INT_SIGNED);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dirfd >= 0);
	/* another file of the directory, older than all: not one of ours, left alone */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	CHECK(close(open(path, O_WRONLY | O_CREAT, 0600)) == 0);
	CHECK(utimensat(dirfd, "notes.txt", t, 0) == 0);
	for (int i = 0; i < FG_MINBTF_KEEP + 3; i++) {
		snprintf(name, sizeof(name), "%016x-%016x.btf", i, i);
		CHECK_INT(fg_minbtf_keep(dirfd, name, m), 0);
		/* its use: the i-th second, whatever the clock's grain */
		t[0].tv_sec = t[1].tv_sec = 1000 + i;
		CHECK(utimensat(dirfd, name, t, 0) == 0);
	}
	for (int i = 0; i < FG_MINBTF_KEEP + 3; i++) {
		snprintf(name, sizeof(name), "%016x-%016x.btf", i, i);
		if (fstatat(dirfd, name, &st, 0) == 0) {
			CHECK(i >= 3); /* the three used least recently went */
			CHECK_INT(st.st_mode & 0777, 0600);
			n++;
		}
	}
	/* each write removed what went beyond 8 */
	CHECK_INT(n, FG_MINBTF_KEEP);
	CHECK(fstatat(dirfd, "notes.txt", &st, 0) == 0);
	for (int i = 0; i < FG_MINBTF_KEEP + 3; i++) {
		snprintf(name, sizeof(name), "%016x-%016x.btf", i, i);
		unlinkat(dirfd, name, 0);
	}
	unlinkat(dirfd, "notes.txt", 0);
	close(dirfd);
	rmdir(dir);
	btf__free(m);
}

static bool kernel_btf_loaded;

static int watch_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (strstr(fmt, "loading kernel BTF"))
		kernel_btf_loaded = true;
	(void)ap;
	return 0;
}

/* fg-sample's program, loaded; every program's instructions after libbpf's relocations. */
static int load_program(const char *btf_path, bool tracing, struct bpf_insn **insns, size_t *n)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .btf_custom_path = btf_path);
	struct fg_sample_bpf *s = fg_sample_bpf__open_opts(&o);
	struct bpf_program *p;
	size_t i = 0;
	int err;

	if (!s)
		return -errno;
	/* the programs that attach by the kernel's BTF, off-CPU's, need it whatever else */
	bpf_program__set_autoload(s->progs.fg_offcpu, tracing);
	bpf_program__set_autoload(s->progs.fg_open_waits, tracing);
	kernel_btf_loaded = false;
	err = fg_sample_bpf__load(s);
	bpf_object__for_each_program(p, s->obj)
	{
		if (err || !bpf_program__autoload(p))
			continue;
		n[i] = bpf_program__insn_cnt(p);
		insns[i] = malloc(n[i] * sizeof(struct bpf_insn));
		memcpy(insns[i], bpf_program__insns(p), n[i] * sizeof(struct bpf_insn));
		i++;
	}
	fg_sample_bpf__destroy(s);
	return err;
}

TEST(fg_sample_relocated_by_the_minimal_btf_as_by_the_kernels)
{
	struct btf *kernel = btf__load_vmlinux_btf(), *m = NULL;
	struct fg_sample_bpf *s;
	struct bpf_insn *a[16] = {0}, *b[16] = {0};
	size_t na[16] = {0}, nb[16] = {0}, nprogs = 0;
	char path[] = "/tmp/fg-test-minbtf.XXXXXX";
	uint32_t size;
	const void *raw;
	int fd, err;

	if (!kernel) {
		printf("# no kernel BTF here (%s): nothing to relocate against\n", strerror(errno));
		CHECK(access("/sys/kernel/btf/vmlinux", F_OK) != 0);
		return;
	}
	s = fg_sample_bpf__open();
	CHECK(s);
	CHECK_INT(fg_minbtf_new(bpf_object__btf(s->obj), kernel, &m), 0);
	fg_sample_bpf__destroy(s);
	raw = btf__raw_data(m, &size);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, raw, size) == (ssize_t)size);
	close(fd);
	printf("# %u types of the kernel's %u kept, %u bytes\n", btf__type_cnt(m) - 1,
	       btf__type_cnt(kernel) - 1, size);
	CHECK(btf__type_cnt(m) < btf__type_cnt(kernel) / 20);
	btf__free(m);
	btf__free(kernel);
	libbpf_set_print(watch_libbpf);
	for (int tracing = 0; tracing < 2; tracing++) {
		err = load_program(NULL, tracing, a, na);
		if (err == -ENOSYS || (err == -EPERM && geteuid() != 0)) {
			/* (qemu-user has no bpf(2): check-arm64's run) */
			printf("# no program loaded: %s\n", strerror(-err));
			break;
		}
		CHECK_INT(err, 0);
		CHECK(kernel_btf_loaded);
		CHECK_INT(load_program(path, tracing, b, nb), 0);
		/* without programs that attach by BTF, libbpf reads none of the kernel's */
		CHECK(kernel_btf_loaded == (bool)tracing);
		for (nprogs = 0; nprogs < 16 && a[nprogs]; nprogs++) {
			CHECK_INT(nb[nprogs], na[nprogs]);
			CHECK(memcmp(a[nprogs], b[nprogs], na[nprogs] * sizeof(struct bpf_insn)) ==
			      0);
			free(a[nprogs]);
			free(b[nprogs]);
			a[nprogs] = b[nprogs] = NULL;
		}
		printf("# %zu programs, the same instructions both ways%s\n", nprogs,
		       tracing ? " (off-CPU's among them)" : "");
		CHECK(nprogs >= 6);
	}
	libbpf_set_print(NULL);
	unlink(path);
}

int main(void)
{
	RUN(flavors_are_cut_as_libbpf_cuts_them);
	RUN(copies_the_types_named_whole_and_nothing_else);
	RUN(nesting_beyond_the_bound_is_refused);
	RUN(named_by_object_and_kernel);
	RUN(keeps_the_most_recently_used_and_nothing_else_is_touched);
	RUN(fg_sample_relocated_by_the_minimal_btf_as_by_the_kernels);
	return unit_done();
}
