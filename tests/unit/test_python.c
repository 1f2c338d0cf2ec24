// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/python on crafted memory: interpreter, thread states, frames, code
 * objects and str objects laid out by the table's own offsets in a fake
 * address space, then read as another process's would be.  Whether the
 * table matches CPython's headers is tests/python.bats' question.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/python.h"
#include "fg/util.h"
#include "unit.h"

/* the fake address space: [BASE, BASE + SIZE), less an unmapped hole */
#define BASE 0x10000u
#define SIZE 0x80000u
#define RUNTIME 0x10000u
#define INTERP 0x11000u
#define TSTATE 0x12000u
#define TSTATE2 0x13000u
#define CFRAME 0x14000u
#define FRAMES 0x20000u /* frame i at FRAMES + 0x100 * i */
#define CODES 0x30000u	/* code object i at CODES + 0x100 * i */
#define STRS 0x40000u	/* str objects, 0x1000 apart */
#define CODE_TYPE 0x70000u
#define UNICODE_TYPE 0x70100u

struct mem {
	unsigned char bytes[SIZE];
	uint64_t hole_start, hole_end; /* reads here fail with EFAULT */
	bool gone;		       /* every read fails with ESRCH */
	unsigned reads;
};

static struct mem mem;

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (m->gone)
		return -ESRCH;
	if (addr < BASE || addr + len > BASE + SIZE || addr + len < addr)
		return -EFAULT;
	if (addr < m->hole_end && addr + len > m->hole_start)
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - BASE), len);
	return 0;
}

static void put(uint64_t addr, const void *v, size_t len)
{
	memcpy(mem.bytes + (addr - BASE), v, len);
}

static void put64(uint64_t addr, uint64_t v)
{
	put(addr, &v, sizeof(v));
}

static void put32(uint64_t addr, uint32_t v)
{
	put(addr, &v, sizeof(v));
}

/* a compact str at addr of `n` characters of `kind` bytes each (ascii: kind 1, all < 128) */
static void put_str(const struct fg_py_offsets *o, uint64_t addr, const void *chars, size_t n,
		    unsigned kind, bool ascii)
{
	uint32_t state = kind << o->unicode_kind_shift | 1u << o->unicode_compact_bit |
			 (uint32_t)ascii << o->unicode_ascii_bit;

	put64(addr + (uint64_t)o->object_type, UNICODE_TYPE);
	put64(addr + (uint64_t)o->unicode_length, n);
	put32(addr + (uint64_t)o->unicode_state, state);
	put(addr + (uint64_t)(ascii ? o->unicode_ascii_data : o->unicode_compact_data), chars,
	    n * kind);
}

static void put_ascii(const struct fg_py_offsets *o, uint64_t addr, const char *s)
{
	put_str(o, addr, s, strlen(s), 1, true);
}

/* code object i named `name` (qualname, and name) in file "/srv/app.py", first line 10 + i */
static uint64_t put_code(const struct fg_py_offsets *o, unsigned i, const char *name)
{
	uint64_t code = CODES + 0x100u * i, s = STRS + 0x2000u * i;

	put64(code + (uint64_t)o->object_type, CODE_TYPE);
	put_ascii(o, s, name);
	put_ascii(o, s + 0x1000, "/srv/app.py");
	put64(code + (uint64_t)o->code_name, s);
	if (o->code_qualname >= 0)
		put64(code + (uint64_t)o->code_qualname, s);
	put64(code + (uint64_t)o->code_filename, s + 0x1000);
	put32(code + (uint64_t)o->code_firstlineno, 10 + i);
	return code;
}

/* frame i running code `code`, called by frame `prev` (an address, 0: none) */
static uint64_t put_frame(const struct fg_py_offsets *o, unsigned i, uint64_t code, uint64_t prev,
			  int owner)
{
	uint64_t f = FRAMES + 0x100u * i;

	put64(f + (uint64_t)o->frame_code, code);
	put64(f + (uint64_t)o->frame_previous, prev);
	if (o->frame_owner >= 0)
		mem.bytes[f + (uint64_t)o->frame_owner - BASE] = (unsigned char)owner;
	return f;
}

/* 3.13's _Py_DebugOffsets at the head of _PyRuntime, as 3.13.0 writes it: what the table says */
static void put_debug_offsets(const struct fg_py_offsets *o)
{
	put(RUNTIME, "xdebugpy", 8);
	put64(RUNTIME + 8, 0x030d00f0);
	put64(RUNTIME + 16, 0); /* not free-threaded */
	put64(RUNTIME + 24 + 16, (uint64_t)o->runtime_interpreters_head);
	put64(RUNTIME + 48 + 24, (uint64_t)o->interp_threads_head);
	put64(RUNTIME + 152 + 16, (uint64_t)o->tstate_next);
	put64(RUNTIME + 152 + 32, (uint64_t)o->tstate_frame);
	put64(RUNTIME + 152 + 40, (uint64_t)o->tstate_thread_id);
	put64(RUNTIME + 152 + 48, (uint64_t)o->tstate_native_thread_id);
	put64(RUNTIME + 224 + 8, (uint64_t)o->frame_previous);
	put64(RUNTIME + 224 + 16, (uint64_t)o->frame_code);
	put64(RUNTIME + 224 + 40, (uint64_t)o->frame_owner);
	put64(RUNTIME + 224 + 24, (uint64_t)o->frame_instr);
	put64(RUNTIME + 272 + 8, (uint64_t)o->code_filename);
	put64(RUNTIME + 272 + 16, (uint64_t)o->code_name);
	put64(RUNTIME + 272 + 24, (uint64_t)o->code_qualname);
	put64(RUNTIME + 272 + 32, (uint64_t)o->code_linetable);
	put64(RUNTIME + 272 + 40, (uint64_t)o->code_firstlineno);
	put64(RUNTIME + 272 + 72, (uint64_t)o->code_code);
	put64(RUNTIME + 352 + 8, (uint64_t)o->object_type);
	put64(RUNTIME + 536 + 8, (uint64_t)o->unicode_state);
	put64(RUNTIME + 536 + 16, (uint64_t)o->unicode_length);
	put64(RUNTIME + 536 + 24, (uint64_t)o->unicode_ascii_data);
}

/*
 * A process of version 3.minor: one thread (tid 4242) whose stack is
 * <module> -> main -> [a C-stack shim frame, 3.12+] -> hot.
 */
static const struct fg_py_offsets *craft(struct fg_py *py, unsigned minor)
{
	const struct fg_py_offsets *o = fg_py_offsets(3, minor);
	uint64_t mod, mainf, shim, hot;

	memset(&mem, 0, sizeof(mem));
	if (o && minor == 13)
		put_debug_offsets(o);
	if (!o || fg_py_open_mem(py, 3, minor, RUNTIME, mem_read, &mem) != 0)
		return NULL;
	py->code_type = CODE_TYPE;
	py->unicode_type = UNICODE_TYPE;
	py->pthread_tid_off = 0x2d0;
	put64(RUNTIME + (uint64_t)o->runtime_interpreters_head, INTERP);
	put64(INTERP + (uint64_t)o->interp_threads_head, TSTATE);
	put64(TSTATE + (uint64_t)o->tstate_thread_id, 0x60000);
	put32(0x60000 + 0x2d0, 4242); /* glibc's struct pthread, for <3.11 */
	if (o->tstate_native_thread_id >= 0)
		put64(TSTATE + (uint64_t)o->tstate_native_thread_id, 4242);
	mod = put_frame(o, 0, put_code(o, 0, "<module>"), 0, 0);
	mainf = put_frame(o, 1, put_code(o, 1, "main"), mod, 0);
	shim = mainf;
	if (o->frame_owner_cstack >= 0)
		shim = put_frame(o, 2, put_code(o, 2, "<shim>"), mainf, o->frame_owner_cstack);
	hot = put_frame(o, 3, put_code(o, 3, "Worker.hot"), shim, 0);
	if (o->cframe_current_frame >= 0) {
		put64(TSTATE + (uint64_t)o->tstate_frame, CFRAME);
		put64(CFRAME + (uint64_t)o->cframe_current_frame, hot);
	} else {
		put64(TSTATE + (uint64_t)o->tstate_frame, hot);
	}
	return o;
}

TEST(python_table_knows_38_to_313_and_nothing_else)
{
	struct fg_py py;
	struct fg_py_field f[64];

	for (unsigned minor = 8; minor <= 13; minor++) {
		const struct fg_py_offsets *o = fg_py_offsets(3, minor);

		CHECK(o && o->major == 3 && o->minor == minor);
		CHECK(o->code_filename > 0 && o->frame_previous >= 0 && o->tstate_frame > 0);
		/* qualified names and native thread ids came with 3.11 */
		CHECK((o->code_qualname >= 0) == (minor >= 11));
		CHECK((o->tstate_native_thread_id >= 0) == (minor >= 11));
		CHECK((o->cframe_current_frame >= 0) == (minor == 11 || minor == 12));
	}
	CHECK(fg_py_offsets(3, 7) == NULL);
	CHECK(fg_py_offsets(3, 14) == NULL);
	CHECK(fg_py_offsets(2, 7) == NULL);
	/* a version the table lacks is reported, not guessed */
	CHECK_INT(fg_py_open_mem(&py, 3, 14, RUNTIME, mem_read, &mem), -ENOTSUP);
	CHECK(py.off == NULL && py.major == 3 && py.minor == 14);
	fg_py_release(&py);
	/* the fields by the names offsets.c prints */
	size_t n = fg_py_offsets_fields(fg_py_offsets(3, 12), f, FG_ARRAY_SIZE(f));
	CHECK(n > 20 && n <= FG_ARRAY_SIZE(f));
	CHECK_STR(f[0].name, "runtime.interpreters_head");
	CHECK_INT(f[0].value, 40);
	CHECK(fg_py_offsets_fields(fg_py_offsets(3, 12), f, 1) == n);
}

/* 3.13 describes its own layout: one that is not the table's is refused */
TEST(python_313_checks_its_own_description)
{
	const struct fg_py_offsets *o = fg_py_offsets(3, 13);
	struct fg_py py;

	CHECK(o);
	memset(&mem, 0, sizeof(mem));
	put_debug_offsets(o);
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), 0);
	/* a field moved (a patch release), free-threaded, no cookie, another version */
	put64(RUNTIME + 272 + 24, (uint64_t)o->code_qualname + 8);
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), -EPROTO);
	put_debug_offsets(o);
	put64(RUNTIME + 16, 1);
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), -EPROTO);
	put_debug_offsets(o);
	put(RUNTIME, "xdebugpz", 8);
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), -EPROTO);
	put_debug_offsets(o);
	put64(RUNTIME + 8, 0x030e00f0);
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), -EPROTO);
	/* unreadable */
	mem.gone = true;
	CHECK_INT(fg_py_open_mem(&py, 3, 13, RUNTIME, mem_read, &mem), -ESRCH);
	/* the versions before describe nothing: not read */
	mem.reads = 0;
	CHECK_INT(fg_py_open_mem(&py, 3, 12, RUNTIME, mem_read, &mem), 0);
	CHECK_INT(mem.reads, 0);
}

TEST(python_reads_a_crafted_stack_of_each_version)
{
	for (unsigned minor = 8; minor <= 13; minor++) {
		struct fg_py py;
		struct fg_py_thread t[4];
		struct fg_py_frame f[8];
		char name[2048];
		size_t nt, nf;

		CHECK(craft(&py, minor));
		CHECK_INT(fg_py_threads(&py, t, 4, &nt), 0);
		CHECK_INT(nt, 1);
		CHECK_INT(t[0].native_tid, 4242);
		CHECK_INT(t[0].tstate, TSTATE);
		CHECK_INT(fg_py_stack(&py, t[0].frame, f, 8, &nf), 0);
		CHECK_INT(nf, 3); /* the shim frame (3.12+) is not a Python function's */
		fg_py_frame_name(&f[0], false, name, sizeof(name));
		CHECK_STR(name, "py::Worker.hot:/srv/app.py");
		fg_py_frame_name(&f[1], true, name, sizeof(name));
		CHECK_STR(name, "py::main:/srv/app.py:11");
		CHECK_STR(f[2].name, "<module>");
		CHECK(py.stats.read_errors == 0 && py.stats.bad_objects == 0);
		fg_py_release(&py);
	}
}

TEST(python_decodes_each_kind_of_str)
{
	static const unsigned char latin1[] = {'c', 'a', 'f', 0xe9};
	static const uint16_t ucs2[] = {0x394, 'x', 0x4e2d};
	static const uint32_t ucs4[] = {0x1f600, 'a', '\n', 0xd800};
	struct fg_py py;
	const struct fg_py_offsets *o = craft(&py, 12);
	char out[64];

	CHECK(o);
	put_ascii(o, 0x50000, "spin");
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), 0);
	CHECK_STR(out, "spin");
	put_str(o, 0x51000, latin1, 4, 1, false);
	CHECK_INT(fg_py_read_str(&py, 0x51000, out, sizeof(out)), 0);
	CHECK_STR(out, "caf\xc3\xa9");
	put_str(o, 0x52000, ucs2, 3, 2, false);
	CHECK_INT(fg_py_read_str(&py, 0x52000, out, sizeof(out)), 0);
	CHECK_STR(out, "\xce\x94x\xe4\xb8\xad");
	/* a control character and a lone surrogate become '?': names stay one line of UTF-8 */
	put_str(o, 0x53000, ucs4, 4, 4, false);
	CHECK_INT(fg_py_read_str(&py, 0x53000, out, sizeof(out)), 0);
	CHECK_STR(out, "\xf0\x9f\x98\x80"
		       "a??");
	/* the empty string */
	put_ascii(o, 0x54000, "");
	CHECK_INT(fg_py_read_str(&py, 0x54000, out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK(py.stats.names_cut == 0 && py.stats.bad_objects == 0);
	/* the 3.11 layout (a wstr pointer, 8 bytes more before the data) */
	o = craft(&py, 11);
	CHECK(o);
	put_str(o, 0x51000, latin1, 4, 1, false);
	CHECK_INT(fg_py_read_str(&py, 0x51000, out, sizeof(out)), 0);
	CHECK_STR(out, "caf\xc3\xa9");
}

TEST(python_cuts_long_names_and_counts_them)
{
	static const uint16_t ucs2[] = {0x394, 0x394, 0x394};
	struct fg_py py;
	const struct fg_py_offsets *o = craft(&py, 13);
	char out[5], big[FG_PY_FILE_MAX * 2];

	CHECK(o);
	put_ascii(o, 0x50000, "abcdefgh");
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -E2BIG);
	CHECK_STR(out, "abcd");
	/* a character is not split: two 2-byte characters fit in 4 bytes, not the third */
	put_str(o, 0x51000, ucs2, 3, 2, false);
	CHECK_INT(fg_py_read_str(&py, 0x51000, out, sizeof(out)), -E2BIG);
	CHECK_STR(out, "\xce\x94\xce\x94");
	CHECK_INT(py.stats.names_cut, 2);
	/* a length of 2^62 characters reads no more than FG_PY_FILE_MAX characters */
	put64(0x50000 + (uint64_t)o->unicode_length, 1ull << 62);
	mem.reads = 0;
	CHECK_INT(fg_py_read_str(&py, 0x50000, big, sizeof(big)), -E2BIG);
	CHECK_INT(strlen(big), FG_PY_FILE_MAX - 1);
	CHECK_INT(mem.reads, 2);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -E2BIG);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, 0), -E2BIG);
}

TEST(python_refuses_what_is_not_a_str_or_code)
{
	struct fg_py py;
	const struct fg_py_offsets *o = craft(&py, 12);
	struct fg_py_frame f[8];
	char out[64];
	size_t n;

	CHECK(o);
	put_ascii(o, 0x50000, "x");
	/* the wrong type */
	put64(0x50000 + (uint64_t)o->object_type, CODE_TYPE);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -EINVAL);
	put64(0x50000 + (uint64_t)o->object_type, UNICODE_TYPE);
	/* not compact (a legacy string), a kind of 3 bytes, ascii of 2-byte kind, a length < 0 */
	put32(0x50000 + (uint64_t)o->unicode_state, 1u << o->unicode_kind_shift);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -EINVAL);
	put32(0x50000 + (uint64_t)o->unicode_state,
	      3u << o->unicode_kind_shift | 1u << o->unicode_compact_bit);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -EINVAL);
	put32(0x50000 + (uint64_t)o->unicode_state, 2u << o->unicode_kind_shift |
							1u << o->unicode_compact_bit |
							1u << o->unicode_ascii_bit);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -EINVAL);
	put_ascii(o, 0x50000, "x");
	put64(0x50000 + (uint64_t)o->unicode_length, UINT64_MAX);
	CHECK_INT(fg_py_read_str(&py, 0x50000, out, sizeof(out)), -EINVAL);
	CHECK_INT(py.stats.bad_objects, 5);
	/* a frame whose code is not a code object is left out, counted, and the walk goes on */
	put64(CODES + 0x100 * 1 + (uint64_t)o->object_type, UNICODE_TYPE);
	CHECK_INT(fg_py_stack(&py, FRAMES + 0x100 * 3, f, 8, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(f[0].name, "Worker.hot");
	CHECK_STR(f[1].name, "<module>");
	CHECK_INT(py.stats.bad_objects, 6);
}

TEST(python_survives_loops_holes_and_exits)
{
	struct fg_py py;
	const struct fg_py_offsets *o = craft(&py, 11);
	struct fg_py_thread t[4];
	struct fg_py_frame f[8];
	size_t n;

	CHECK(o);
	/* a frame that is its own caller: the walk stops at the bound, counted */
	put64(FRAMES + (uint64_t)o->frame_previous, FRAMES);
	CHECK_INT(fg_py_stack(&py, FRAMES, f, 8, &n), 0);
	CHECK_INT(n, 8);
	CHECK_INT(py.stats.depth_limit, 1);
	/* a thread list that loops: bounded, counted */
	put64(TSTATE + (uint64_t)o->tstate_next, TSTATE2);
	put64(TSTATE2 + (uint64_t)o->tstate_next, TSTATE);
	CHECK_INT(fg_py_threads(&py, t, 4, &n), 0);
	CHECK_INT(n, 4);
	CHECK(py.stats.thread_limit == 1);
	put64(TSTATE + (uint64_t)o->tstate_next, 0);
	/* a caller that cannot be read ends the stack there */
	CHECK(craft(&py, 11));
	mem.hole_start = FRAMES + 0x100;
	mem.hole_end = FRAMES + 0x200;
	CHECK_INT(fg_py_stack(&py, FRAMES + 0x300, f, 8, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(py.stats.read_errors, 1);
	/* a null or wild pointer is not followed */
	CHECK_INT(fg_py_stack(&py, 8, f, 8, &n), -EFAULT);
	CHECK_INT(fg_py_stack(&py, UINT64_MAX - 4, f, 8, &n), -EFAULT);
	CHECK_INT(fg_py_read_str(&py, 0, (char[8]){0}, 8), -EFAULT);
	/* the process gone: an error, no threads, no frames */
	mem.gone = true;
	CHECK_INT(fg_py_threads(&py, t, 4, &n), -ESRCH);
	CHECK_INT(n, 0);
	CHECK_INT(fg_py_stack(&py, FRAMES + 0x300, f, 8, &n), -ESRCH);
	CHECK_INT(n, 0);
	/* an interpreter not yet made: no threads, no error */
	o = craft(&py, 13);
	CHECK(o);
	put64(RUNTIME + (uint64_t)o->runtime_interpreters_head, 0);
	CHECK_INT(fg_py_threads(&py, t, 4, &n), 0);
	CHECK_INT(n, 0);
}

/* a thread's state through its slot of autoTSSkey, as pthread_getspecific() finds it */
TEST(python_finds_a_thread_state_by_its_tss_slot)
{
	struct fg_py py;
	const struct fg_py_offsets *o = craft(&py, 12);
	uint64_t pthread = 0x60000, key_at, ts;

	CHECK(o);
	key_at = RUNTIME + (uint64_t)o->runtime_tss_key;
	py.pthread_specific_off = 0x310;
	/* not made yet */
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), 0);
	CHECK_INT(ts, 0);
	/* key 5: the first level's slot 5, {seq, data} */
	put32(key_at - 4, 1);
	put32(key_at, 5);
	put64(pthread + 0x310 + 16 * 5 + 8, TSTATE);
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), 0);
	CHECK_INT(ts, TSTATE);
	/* key 70: the second level, specific[2]'s slot 6 */
	put32(key_at, 70);
	put64(pthread + 0x310 + 16 * 32 + 8 * 2, 0x61000);
	put64(0x61000 + 16 * 6 + 8, TSTATE2);
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), 0);
	CHECK_INT(ts, TSTATE2);
	/* no second-level block: none; a key past glibc's 1024: refused */
	put64(pthread + 0x310 + 16 * 32 + 8 * 2, 0);
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), 0);
	CHECK_INT(ts, 0);
	put32(key_at, 5000);
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), -EINVAL);
	/* glibc's offsets unknown */
	py.pthread_specific_off = -1;
	CHECK_INT(fg_py_tss_tstate(&py, pthread, &ts), -ENOTSUP);
	/* this process's own glibc: found by fg_py_open_mem */
	CHECK(craft(&py, 12) && py.pthread_specific_off > 0);
}

/* a code object's line table: read within the caller's bound, its type checked, a longer one
 * counted */
TEST(python_reads_line_tables)
{
	struct fg_py py;
	const struct fg_py_offsets *o;
	uint8_t buf[16];
	size_t len = 99;
	const uint64_t tab = 0x50000;

	for (unsigned minor = 8; minor <= 13; minor++) {
		CHECK((o = craft(&py, minor)) != NULL);
		py.bytes_type = 0x70200;
		put64(CODES + (uint64_t)o->code_linetable, tab);
		put64(tab + (uint64_t)o->object_type, 0x70200);
		put64(tab + (uint64_t)o->bytes_size, 5);
		put(tab + (uint64_t)o->bytes_data, "\x81\x12\x82\x13\xf8", 5);
		CHECK_INT(fg_py_linetable(&py, CODES, buf, sizeof(buf), &len), 0);
		CHECK_INT(len, 5);
		CHECK(!memcmp(buf, "\x81\x12\x82\x13\xf8", 5));
		/* longer than the bound: not read, counted */
		CHECK_INT(fg_py_linetable(&py, CODES, buf, 4, &len), -E2BIG);
		CHECK_INT(py.stats.tables_cut, 1);
		/* a negative size, or another type: not a table */
		put64(tab + (uint64_t)o->bytes_size, (uint64_t)-1);
		CHECK_INT(fg_py_linetable(&py, CODES, buf, sizeof(buf), &len), -EINVAL);
		put64(tab + (uint64_t)o->bytes_size, 5);
		put64(tab + (uint64_t)o->object_type, UNICODE_TYPE);
		CHECK_INT(fg_py_linetable(&py, CODES, buf, sizeof(buf), &len), -EINVAL);
		/* a wild pointer: the read's error */
		put64(CODES + (uint64_t)o->code_linetable, 0x7fff0000);
		CHECK(fg_py_linetable(&py, CODES, buf, sizeof(buf), &len) < 0 && len == 0);
		fg_py_release(&py);
	}
}

int main(void)
{
	RUN(python_table_knows_38_to_313_and_nothing_else);
	RUN(python_313_checks_its_own_description);
	RUN(python_reads_a_crafted_stack_of_each_version);
	RUN(python_decodes_each_kind_of_str);
	RUN(python_cuts_long_names_and_counts_them);
	RUN(python_refuses_what_is_not_a_str_or_code);
	RUN(python_survives_loops_holes_and_exits);
	RUN(python_finds_a_thread_state_by_its_tss_slot);
	RUN(python_reads_line_tables);
	return unit_done();
}
