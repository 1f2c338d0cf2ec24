// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/bpfsyms.c: the BPF programs loaded, named as kallsyms names them; the table.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/bpfsyms.h"
#include "unit.h"

TEST(names_as_the_kernel_makes_them)
{
	const uint8_t tag[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	char buf[64];

	fg_bpfsyms_name(buf, sizeof(buf), tag, "fg_sample");
	CHECK_STR(buf, "bpf_prog_0123456789abcdef_fg_sample");
	fg_bpfsyms_name(buf, sizeof(buf), tag, "");
	CHECK_STR(buf, "bpf_prog_0123456789abcdef");
	fg_bpfsyms_name(buf, sizeof(buf), tag, NULL);
	CHECK_STR(buf, "bpf_prog_0123456789abcdef");
	/* cut to the buffer, NUL-terminated */
	fg_bpfsyms_name(buf, 12, tag, "x");
	CHECK_STR(buf, "bpf_prog_01");
}

TEST(a_range_named_replaces_those_it_overlaps)
{
	struct fg_bpfsyms *t = fg_bpfsyms_new();
	uint64_t start = 0;

	CHECK(fg_bpfsyms_add(t, 0x1000, 0x100, "a"));
	CHECK(fg_bpfsyms_add(t, 0x3000, 0x100, "c"));
	CHECK(fg_bpfsyms_add(t, 0x2000, 0x100, "b"));
	CHECK_STR(fg_bpfsyms_lookup(t, 0x1000, &start), "a");
	CHECK(start == 0x1000);
	CHECK_STR(fg_bpfsyms_lookup(t, 0x20ff, &start), "b");
	CHECK(start == 0x2000);
	CHECK(fg_bpfsyms_lookup(t, 0x2100, &start) == NULL);
	CHECK(fg_bpfsyms_lookup(t, 0xfff, &start) == NULL);
	CHECK(fg_bpfsyms_lookup(t, 0x4000, &start) == NULL);
	/* a program loaded where two were: it alone is there */
	CHECK(fg_bpfsyms_add(t, 0x1080, 0x1000, "d"));
	CHECK(fg_bpfsyms_count(t) == 2);
	CHECK(fg_bpfsyms_lookup(t, 0x1000, &start) == NULL);
	CHECK_STR(fg_bpfsyms_lookup(t, 0x2000, &start), "d");
	CHECK(start == 0x1080);
	CHECK_STR(fg_bpfsyms_lookup(t, 0x3000, &start), "c");
	/* the same range again: renamed */
	CHECK(fg_bpfsyms_add(t, 0x3000, 0x100, "e"));
	CHECK(fg_bpfsyms_count(t) == 2);
	CHECK_STR(fg_bpfsyms_lookup(t, 0x3050, &start), "e");
	/* no bytes, or past the end of the address space: refused */
	CHECK(!fg_bpfsyms_add(t, 0x5000, 0, "f"));
	CHECK(!fg_bpfsyms_add(t, ~0ull - 4, 0x10, "g"));
	fg_bpfsyms_free(t);
	CHECK(fg_bpfsyms_lookup(NULL, 0x1000, &start) == NULL);
}

TEST(the_table_is_bounded)
{
	struct fg_bpfsyms *t = fg_bpfsyms_new();
	uint64_t start;

	for (uint64_t i = 0; i < FG_BPFSYMS_MAX; i++)
		CHECK(fg_bpfsyms_add(t, 0x10000 + 16 * i, 16, "p"));
	CHECK(!fg_bpfsyms_add(t, 0x10, 16, "over"));
	/* replacing one is no more of them */
	CHECK(fg_bpfsyms_add(t, 0x10000, 16, "q"));
	CHECK_STR(fg_bpfsyms_lookup(t, 0x10008, &start), "q");
	fg_bpfsyms_free(t);
}

struct found {
	uint64_t addr;
	const char *want;
	bool seen;
	uint32_t len;
};

static void on_sym(void *arg, uint64_t addr, uint32_t len, const char *name)
{
	struct found *f = arg;

	if (addr == f->addr && strcmp(name, f->want) == 0) {
		f->seen = true;
		f->len = len;
	}
}

/* A program loaded here is in the list, by its address and its name as kallsyms has it. */
TEST(a_program_loaded_is_listed)
{
	const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info);
	uint64_t addr = 0;
	struct fg_bpfsyms_stats st;
	struct found f = {0};
	char name[64];
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "fg_test_prog", "GPL", insns, 2, NULL);
	if (fd < 0 && (errno == ENOSYS || (errno == EPERM && geteuid() != 0))) {
		/* (qemu-user has no bpf(2): check-arm64's run) */
		printf("# no program loaded: %s\n",
		       errno == ENOSYS ? "no bpf(2) here" : "not root");
		return;
	}
	if (fd < 0)
		printf("# bpf_prog_load: %s\n", strerror(errno));
	CHECK(fd >= 0);
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uint64_t)(uintptr_t)&addr;
	CHECK(bpf_obj_get_info_by_fd(fd, &info, &len) == 0);
	CHECK(addr != 0); /* JIT-compiled (net.core.bpf_jit_enable) */
	fg_bpfsyms_name(name, sizeof(name), info.tag, "fg_test_prog");
	f.addr = addr;
	f.want = name;
	CHECK(fg_bpfsyms_loaded(on_sym, &f, &st) == 0);
	CHECK(f.seen && f.len > 0);
	CHECK(st.progs >= 1 && st.syms >= 1);
	close(fd);
}

int main(void)
{
	RUN(names_as_the_kernel_makes_them);
	RUN(a_range_named_replaces_those_it_overlaps);
	RUN(the_table_is_bounded);
	RUN(a_program_loaded_is_listed);
	return unit_done();
}
