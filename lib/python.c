// SPDX-License-Identifier: BSD-2-Clause
/* CPython's threads and frames, read from another process's memory: see include/fg/python.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fg/elfsyms.h"
#include "fg/procmaps.h"
#include "fg/python.h"
#include "fg/safeio.h"
#include "fg/util.h"

/* The most bytes of one struct read: each table's largest offset, and a pointer after it. */
#define OBJ_MAX 256
#define MAPS_MAX (64u << 20)

/* the compact str header, the same in every version (PyASCIIObject, PyCompactUnicodeObject) */
#define UNICODE_38 /* 3.8 to 3.11: a wstr pointer in each, and ready */                            \
	.object_type = 8, .unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48,     \
	.unicode_compact_data = 72, .unicode_kind_shift = 2, .unicode_compact_bit = 5,             \
	.unicode_ascii_bit = 6
#define UNICODE_312 /* 3.12+: wstr gone */                                                         \
	.object_type = 8, .unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40,     \
	.unicode_compact_data = 56, .unicode_kind_shift = 2, .unicode_compact_bit = 5,             \
	.unicode_ascii_bit = 6

/* PyBytesObject (co_linetable, co_lnotab): its size, its bytes */
#define BYTES .bytes_size = 16, .bytes_data = 32

/* 3.8 to 3.10: PyFrameObject, co_name, and a tid only in glibc's struct pthread */
#define FRAME_OBJECTS(minor_, tss_key, lasti)                                                      \
	{                                                                                          \
		.major = 3, .minor = minor_, .runtime_interpreters_head = 32,                      \
		.runtime_tss_key = tss_key, .interp_threads_head = 8, .tstate_next = 8,            \
		.tstate_thread_id = 176, .tstate_native_thread_id = -1, .tstate_frame = 24,        \
		.cframe_current_frame = -1, .frame_previous = 24, .frame_code = 32,                \
		.frame_owner = -1, .frame_owner_cstack = -1, .frame_is_entry = -1,                 \
		.frame_instr = lasti, .code_code = -1, BYTES, .code_name = 112,                    \
		.code_qualname = -1, .code_filename = 104, .code_firstlineno = 40,                 \
		.code_linetable = 120, UNICODE_38,                                                 \
	}

/*
 * From each version's headers by offsetof() (tests/data/python/offsets.c;
 * tests/python.bats checks this table against every installed version).
 */
static const struct fg_py_offsets table[] = {
    FRAME_OBJECTS(8, 1396, 104),
    FRAME_OBJECTS(9, 588, 104),
    FRAME_OBJECTS(10, 588, 96),
    {
	.major = 3,
	.minor = 11,
	.runtime_interpreters_head = 40,
	.runtime_tss_key = 596,
	.interp_threads_head = 16,
	.tstate_next = 8,
	.tstate_thread_id = 152,
	.tstate_native_thread_id = 160,
	.tstate_frame = 56,
	.cframe_current_frame = 8,
	.frame_previous = 48,
	.frame_code = 32,
	.frame_owner = 69,
	.frame_owner_cstack = -1,
	.frame_is_entry = 68,
	.frame_instr = 56,
	.code_code = 184,
	BYTES,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 72,
	.code_linetable = 136,
	UNICODE_38,
    },
    {
	.major = 3,
	.minor = 12,
	.runtime_interpreters_head = 40,
	.runtime_tss_key = 1548,
	.interp_threads_head = 72,
	.tstate_next = 8,
	.tstate_thread_id = 136,
	.tstate_native_thread_id = 144,
	.tstate_frame = 56,
	.cframe_current_frame = 0,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_owner = 70,
	.frame_owner_cstack = 3,
	.frame_is_entry = -1,
	.frame_instr = 56,
	.code_code = 192,
	BYTES,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 68,
	.code_linetable = 136,
	UNICODE_312,
    },
    {
	.major = 3,
	.minor = 13,
	.runtime_interpreters_head = 632,
	.runtime_tss_key = 2164,
	.interp_threads_head = 7344,
	.tstate_next = 8,
	.tstate_thread_id = 152,
	.tstate_native_thread_id = 160,
	.tstate_frame = 72,
	.cframe_current_frame = -1,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_owner = 70,
	.frame_owner_cstack = 3,
	.frame_is_entry = -1,
	.frame_instr = 56,
	.code_code = 200,
	BYTES,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 68,
	.code_linetable = 136,
	UNICODE_312,
    },
};

const struct fg_py_offsets *fg_py_offsets(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(table); i++)
		if (table[i].major == major && table[i].minor == minor)
			return &table[i];
	return NULL;
}

/* each field by the name offsets.c prints: the struct's, a dot, the field's */
#define FIELD(name, f)                                                                             \
	{                                                                                          \
		name, offsetof(struct fg_py_offsets, f)                                            \
	}
static const struct {
	const char *name;
	size_t off;
} fields[] = {
    FIELD("runtime.interpreters_head", runtime_interpreters_head),
    FIELD("runtime.tss_key", runtime_tss_key),
    FIELD("interp.threads_head", interp_threads_head),
    FIELD("tstate.next", tstate_next),
    FIELD("tstate.thread_id", tstate_thread_id),
    FIELD("tstate.native_thread_id", tstate_native_thread_id),
    FIELD("tstate.frame", tstate_frame),
    FIELD("cframe.current_frame", cframe_current_frame),
    FIELD("frame.previous", frame_previous),
    FIELD("frame.code", frame_code),
    FIELD("frame.owner", frame_owner),
    FIELD("frame.owner_cstack", frame_owner_cstack),
    FIELD("frame.is_entry", frame_is_entry),
    FIELD("frame.instr", frame_instr),
    FIELD("code.code", code_code),
    FIELD("bytes.size", bytes_size),
    FIELD("bytes.data", bytes_data),
    FIELD("code.name", code_name),
    FIELD("code.qualname", code_qualname),
    FIELD("code.filename", code_filename),
    FIELD("code.firstlineno", code_firstlineno),
    FIELD("code.linetable", code_linetable),
    FIELD("object.type", object_type),
    FIELD("unicode.length", unicode_length),
    FIELD("unicode.state", unicode_state),
    FIELD("unicode.ascii_data", unicode_ascii_data),
    FIELD("unicode.compact_data", unicode_compact_data),
    FIELD("unicode.kind_shift", unicode_kind_shift),
    FIELD("unicode.compact_bit", unicode_compact_bit),
    FIELD("unicode.ascii_bit", unicode_ascii_bit),
};

size_t fg_py_offsets_fields(const struct fg_py_offsets *o, struct fg_py_field *out, size_t max)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(fields) && i < max; i++) {
		int16_t v;

		memcpy(&v, (const char *)o + fields[i].off, sizeof(v));
		out[i] = (struct fg_py_field){.name = fields[i].name, .value = v};
	}
	return FG_ARRAY_SIZE(fields);
}

/* process_vm_readv of py->pid: all of it or an error */
static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fg_py *py = ctx;
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t got = process_vm_readv(py->pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	return got < 0 ? -errno : -EFAULT;
}

/* py->read, counted when it fails; a null or tiny address is not read */
static int rd(struct fg_py *py, uint64_t addr, void *buf, size_t len)
{
	int err;

	if (addr < 4096 || addr + len < addr) {
		py->stats.bad_objects++;
		return -EFAULT;
	}
	err = py->read(py->read_ctx, addr, buf, len);
	if (err)
		py->stats.read_errors++;
	return err;
}

static uint64_t u64_at(const unsigned char *buf, int off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *buf, int off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* the bytes to read of a struct of which these offsets (-1: none) are read, 8 bytes each */
static size_t span(const int16_t *offs, size_t n)
{
	int max = 0;

	for (size_t i = 0; i < n; i++)
		if (offs[i] > max)
			max = offs[i];
	return (size_t)max + 8;
}

void fg_py_release(struct fg_py *py)
{
	(void)py; /* nothing held yet: a name cache will be */
}

/* the offset of the tid in this process's glibc struct pthread (pthread_self()), or -1 */
static int pthread_tid_offset(void)
{
	const unsigned char *self = (const unsigned char *)pthread_self();
	pid_t tid = gettid();

	/* glibc's struct pthread is over 2 KB; its tid is in the first 1 KB on every target */
	for (int off = 0; off + (int)sizeof(pid_t) <= 1024; off += sizeof(pid_t)) {
		pid_t v;

		memcpy(&v, self + off, sizeof(v));
		if (v == tid)
			return off;
	}
	return -1;
}

/*
 * The offset of specific_1stblock, the first 32 of pthread_getspecific()'s
 * slots ({seq, data}, 16 bytes each), in this process's glibc struct pthread,
 * or -1: where a value set in a new key of ours shows.
 */
static int pthread_specific_offset(void)
{
	const unsigned char *self = (const unsigned char *)pthread_self();
	static const char marker[] = "fg_py";
	int found = -1;
	pthread_key_t key;

	if (pthread_key_create(&key, NULL) != 0)
		return -1;
	if (key < 32 && pthread_setspecific(key, marker) == 0) {
		for (int off = 0; off + 8 <= 2048; off += 8) {
			const void *v;

			memcpy(&v, self + off, sizeof(v));
			if (v == marker) {
				found = off - 8 - 16 * (int)key;
				break;
			}
		}
	}
	pthread_setspecific(key, NULL);
	pthread_key_delete(key);
	return found;
}

static void init(struct fg_py *py, pid_t pid)
{
	memset(py, 0, sizeof(*py));
	py->pid = pid;
	py->pthread_tid_off = -1;
	py->pthread_specific_off = -1;
	py->read = vm_read;
	py->read_ctx = py;
}

static int set_layout(struct fg_py *py)
{
	py->off = fg_py_offsets(py->major, py->minor);
	if (!py->off)
		return -ENOTSUP;
	if (py->off->tstate_native_thread_id < 0)
		py->pthread_tid_off = pthread_tid_offset();
	py->pthread_specific_off = pthread_specific_offset();
	return 0;
}

/*
 * 3.13's _PyRuntime opens with _Py_DebugOffsets (Include/internal/pycore_runtime.h),
 * the layout as the running interpreter itself was built: a cookie, the
 * version, whether it is free-threaded, then uint64_t offsets.  Where each of
 * those the table also holds sits in it (a wrong position here would not
 * match a live 3.13 in tests/python.bats), and which field of the table's
 * it must equal.
 */
#define DEBUG_313_SIZE 584
#define TABLE(f) offsetof(struct fg_py_offsets, f)
static const struct {
	uint16_t at;
	uint16_t field;
} debug_313[] = {
    {24 + 16, TABLE(runtime_interpreters_head)}, /* runtime_state, at 24 */
    {48 + 24, TABLE(interp_threads_head)},	 /* interpreter_state, at 48 */
    {152 + 16, TABLE(tstate_next)},		 /* thread_state, at 152 */
    {152 + 32, TABLE(tstate_frame)},
    {152 + 40, TABLE(tstate_thread_id)},
    {152 + 48, TABLE(tstate_native_thread_id)},
    {224 + 8, TABLE(frame_previous)}, /* interpreter_frame, at 224 */
    {224 + 16, TABLE(frame_code)},
    {224 + 40, TABLE(frame_owner)},
    {224 + 24, TABLE(frame_instr)},
    {272 + 8, TABLE(code_filename)}, /* code_object, at 272 */
    {272 + 16, TABLE(code_name)},
    {272 + 24, TABLE(code_qualname)},
    {272 + 32, TABLE(code_linetable)},
    {272 + 40, TABLE(code_firstlineno)},
    {272 + 72, TABLE(code_code)},
    {352 + 8, TABLE(object_type)},   /* pyobject, at 352 */
    {536 + 8, TABLE(unicode_state)}, /* unicode_object, at 536 */
    {536 + 16, TABLE(unicode_length)},
    {536 + 24, TABLE(unicode_ascii_data)},
};

/* 3.13: the table agrees with the interpreter's own offsets: 0, -EPROTO, or the read's -errno */
static int check_debug_offsets(struct fg_py *py)
{
	unsigned char d[DEBUG_313_SIZE];
	int err;

	if (py->major != 3 || py->minor != 13)
		return 0;
	err = rd(py, py->runtime, d, sizeof(d));
	if (err)
		return err;
	if (memcmp(d, "xdebugpy", 8) != 0 || (u64_at(d, 8) >> 16) != 0x030d ||
	    u64_at(d, 16) != 0 /* free-threaded: another layout */)
		return -EPROTO;
	for (size_t i = 0; i < FG_ARRAY_SIZE(debug_313); i++) {
		int16_t want;

		memcpy(&want, (const char *)py->off + debug_313[i].field, sizeof(want));
		if (u64_at(d, debug_313[i].at) != (uint64_t)want)
			return -EPROTO;
	}
	return 0;
}

int fg_py_open_mem(struct fg_py *py, unsigned major, unsigned minor, uint64_t runtime,
		   fg_py_read_fn read, void *ctx)
{
	init(py, 0);
	py->major = major;
	py->minor = minor;
	py->runtime = runtime;
	py->read = read;
	py->read_ctx = ctx;
	int err = set_layout(py);
	return err ? err : check_debug_offsets(py);
}

/*
 * The minor version in a file's name: libpython3.X.so..., python3.X (the
 * executable), 0 when none.  libpython3.so (the stable ABI's stub) has none.
 */
static unsigned name_minor(const char *path, size_t len, bool *lib)
{
	const char *base = path, *p;
	unsigned minor = 0;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	*lib = fg_starts_with(base, "libpython3.");
	if (*lib)
		p = base + strlen("libpython3.");
	else if (fg_starts_with(base, "python3."))
		p = base + strlen("python3.");
	else
		return 0;
	for (int d = 0; *p >= '0' && *p <= '9' && d < 3; p++, d++)
		minor = minor * 10 + (unsigned)(*p - '0');
	/* the ABI flags of the name (3.7m, 3.13d, 3.13t) before .so */
	while (*lib && *p >= 'a' && *p <= 'z')
		p++;
	if (*lib && !fg_starts_with(p, ".so"))
		return 0;
	return minor;
}

/* The mapping holding the interpreter: libpython's, else the executable's. */
struct pick {
	const char *exe;
	char path[4096];
	uint64_t start, end, pgoff, inode;
	unsigned minor; /* from the name */
	int rank;	/* 2: libpython, 1: the executable, 0: none */
};

static int pick_mapping(const struct fg_procmap *m, void *arg)
{
	struct pick *p = arg;
	bool lib;
	unsigned minor;
	int rank;

	if (!m->path_len || m->path[0] != '/' || m->path_len >= sizeof(p->path))
		return 0;
	minor = name_minor(m->path, m->path_len, &lib);
	if (lib && minor)
		rank = 2;
	else if (p->exe && strlen(p->exe) == m->path_len && !memcmp(p->exe, m->path, m->path_len))
		rank = 1;
	else
		return 0;
	/* the file's first mapping (the lowest), for its load bias */
	if (rank > p->rank) {
		p->rank = rank;
		memcpy(p->path, m->path, m->path_len);
		p->path[m->path_len] = '\0';
		p->start = m->start;
		p->end = m->end;
		p->pgoff = m->pgoff;
		p->inode = m->inode;
		p->minor = minor;
	}
	return 0;
}

/* the mapped file: /proc/PID/map_files/START-END, else /proc/PID/root/PATH of the same inode */
static int open_mapped(const char *proc, pid_t pid, const struct pick *p)
{
	char name[4096 + 64];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%s/%d/map_files/%llx-%llx", proc, (int)pid,
		 (unsigned long long)p->start, (unsigned long long)p->end);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0)
		return fd;
	snprintf(name, sizeof(name), "%s/%d/root%s", proc, (int)pid, p->path);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_ino != p->inode)) {
		close(fd);
		return -ENOENT;
	}
	return fd >= 0 ? fd : -errno;
}

enum { SYM_RUNTIME, SYM_VERSION, SYM_CODE_TYPE, SYM_UNICODE_TYPE, SYM_BYTES_TYPE, NSYMS };

/* the file's symbols and load bias into py: 0, -ENOENT when it has no _PyRuntime */
static int read_symbols(struct fg_py *py, int fd, const struct pick *p)
{
	struct Elf *elf = fg_elf_begin_fd(fd);
	struct fg_elf_load *loads = NULL;
	struct fg_elf_named v[NSYMS] = {
	    [SYM_RUNTIME] = {.name = "_PyRuntime"},
	    [SYM_VERSION] = {.name = "Py_Version"},
	    [SYM_CODE_TYPE] = {.name = "PyCode_Type"},
	    [SYM_UNICODE_TYPE] = {.name = "PyUnicode_Type"},
	    [SYM_BYTES_TYPE] = {.name = "PyBytes_Type"},
	};
	uint64_t first;
	size_t nloads;
	int err = 0;

	if (!elf)
		return -errno;
	nloads = fg_elf_loads(elf, &loads);
	/* all exported: .symtab only when _PyRuntime is not (a static embedder's) */
	fg_elf_named_symbols(elf, v, NSYMS, 1);
	if (!v[SYM_RUNTIME].found)
		err = -ENOENT;
	else if (!fg_elf_offset_to_addr(loads, nloads, p->pgoff, &first))
		err = -ENOEXEC;
	if (!err) {
		py->bias = p->start - first;
		py->runtime = v[SYM_RUNTIME].value + py->bias;
		py->code_type = v[SYM_CODE_TYPE].found ? v[SYM_CODE_TYPE].value + py->bias : 0;
		py->unicode_type =
		    v[SYM_UNICODE_TYPE].found ? v[SYM_UNICODE_TYPE].value + py->bias : 0;
		py->bytes_type = v[SYM_BYTES_TYPE].found ? v[SYM_BYTES_TYPE].value + py->bias : 0;
		if (v[SYM_VERSION].found && rd(py, v[SYM_VERSION].value + py->bias,
					       &py->version_hex, sizeof(py->version_hex)) < 0)
			py->version_hex = 0;
	}
	free(loads);
	elf_end(elf);
	return err;
}

int fg_py_open(struct fg_py *py, const char *proc, pid_t pid)
{
	char name[4096], exe[4096], *maps = NULL;
	struct pick p = {0};
	size_t len;
	ssize_t n;
	int fd, err;

	init(py, pid);
	snprintf(name, sizeof(name), "%s/%d/exe", proc, (int)pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		p.exe = exe;
	}
	snprintf(name, sizeof(name), "%s/%d/maps", proc, (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = fg_safeio_read_all(fd, MAPS_MAX, &maps, &len);
	close(fd);
	if (err)
		return err;
	err = fg_procmaps_parse(maps, len, pick_mapping, &p, NULL);
	free(maps);
	if (err)
		return err;
	if (!p.rank)
		return -ENOENT;
	memcpy(py->path, p.path, sizeof(py->path));
	fd = open_mapped(proc, pid, &p);
	if (fd < 0)
		return fd;
	err = read_symbols(py, fd, &p);
	close(fd);
	if (err == -ENOENT && p.minor) {
		/* python3.X by its name, but none this reads (3.6 has no _PyRuntime) */
		py->major = 3;
		py->minor = p.minor;
		return -ENOTSUP;
	}
	if (err)
		return err;
	if (py->version_hex) {
		py->major = (unsigned)(py->version_hex >> 24) & 0xff;
		py->minor = (unsigned)(py->version_hex >> 16) & 0xff;
	} else if (p.minor) {
		py->major = 3;
		py->minor = p.minor;
	} else {
		return -ENOTSUP;
	}
	err = set_layout(py);
	return err ? err : check_debug_offsets(py);
}

int fg_py_threads(struct fg_py *py, struct fg_py_thread *t, size_t max, size_t *n)
{
	const struct fg_py_offsets *o = py->off;
	const int16_t offs[] = {o->tstate_next, o->tstate_thread_id, o->tstate_native_thread_id,
				o->tstate_frame};
	size_t size = span(offs, FG_ARRAY_SIZE(offs));
	unsigned char buf[OBJ_MAX];
	uint64_t interp, tstate;
	size_t count = 0;
	int err;

	*n = 0;
	err = rd(py, py->runtime + (uint64_t)o->runtime_interpreters_head, &interp, sizeof(interp));
	if (err)
		return err;
	if (!interp)
		return 0; /* not initialized yet, or finalized */
	err = rd(py, interp + (uint64_t)o->interp_threads_head, &tstate, sizeof(tstate));
	if (err)
		return err;
	for (; tstate && count < FG_PY_MAX_THREADS; count++) {
		struct fg_py_thread th = {.tstate = tstate, .native_tid = -1};

		err = rd(py, tstate, buf, size);
		if (err)
			return *n ? 0 : err; /* the list ends at what could not be read */
		th.thread_id = u64_at(buf, o->tstate_thread_id);
		th.frame = u64_at(buf, o->tstate_frame);
		if (o->cframe_current_frame >= 0 && th.frame) {
			uint64_t cframe = th.frame;

			th.frame = 0;
			if (rd(py, cframe + (uint64_t)o->cframe_current_frame, &th.frame,
			       sizeof(th.frame)) < 0)
				th.frame = 0;
		}
		if (o->tstate_native_thread_id >= 0) {
			th.native_tid = (int64_t)u64_at(buf, o->tstate_native_thread_id);
		} else if (py->pthread_tid_off >= 0 && th.thread_id) {
			int32_t tid;

			if (rd(py, th.thread_id + (uint64_t)py->pthread_tid_off, &tid,
			       sizeof(tid)) == 0 &&
			    tid > 0)
				th.native_tid = tid;
		}
		if (*n < max)
			t[(*n)++] = th;
		tstate = u64_at(buf, o->tstate_next);
	}
	if (count > max || tstate)
		py->stats.thread_limit++;
	return 0;
}

int fg_py_tss_tstate(struct fg_py *py, uint64_t pthread, uint64_t *tstate)
{
	const struct fg_py_offsets *o = py->off;
	uint32_t tss[2]; /* Py_tss_t: int _is_initialized; pthread_key_t _key */
	uint64_t slot;
	int err;

	*tstate = 0;
	if (py->pthread_specific_off < 0)
		return -ENOTSUP;
	err = rd(py, py->runtime + (uint64_t)o->runtime_tss_key - 4, tss, sizeof(tss));
	if (err)
		return err;
	if (!tss[0])
		return 0; /* not made yet */
	if (tss[1] < 32) {
		slot = pthread + (uint64_t)py->pthread_specific_off + 16ull * tss[1];
	} else if (tss[1] < 1024) {
		/* the second level: specific[key / 32], after the 32 slots of the first */
		uint64_t block;

		err = rd(py,
			 pthread + (uint64_t)py->pthread_specific_off + 16 * 32 + 8 * (tss[1] / 32),
			 &block, sizeof(block));
		if (err)
			return err;
		if (!block)
			return 0;
		slot = block + 16ull * (tss[1] % 32);
	} else {
		py->stats.bad_objects++;
		return -EINVAL;
	}
	return rd(py, slot + 8, tstate, sizeof(*tstate));
}

/* UTF-8 of code point c into out (4 bytes room); its length */
static size_t utf8(uint32_t c, char *out)
{
	if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = '?'; /* no control characters in a name, no invalid UTF-8 */
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

int fg_py_read_str(struct fg_py *py, uint64_t addr, char *out, size_t outlen)
{
	const struct fg_py_offsets *o = py->off;
	unsigned char hdr[OBJ_MAX], data[FG_PY_FILE_MAX * 4];
	uint32_t state, kind;
	int64_t length;
	size_t chars, w = 0;
	int err;

	if (!outlen)
		return -E2BIG;
	out[0] = '\0';
	if (outlen > FG_PY_FILE_MAX)
		outlen = FG_PY_FILE_MAX;
	err = rd(py, addr, hdr, (size_t)o->unicode_compact_data);
	if (err)
		return err;
	state = u32_at(hdr, o->unicode_state);
	kind = state >> o->unicode_kind_shift & 7;
	length = (int64_t)u64_at(hdr, o->unicode_length);
	if ((py->unicode_type && u64_at(hdr, o->object_type) != py->unicode_type) ||
	    !(state >> o->unicode_compact_bit & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state >> o->unicode_ascii_bit & 1) && kind != 1) || length < 0) {
		py->stats.bad_objects++;
		return -EINVAL;
	}
	/* each character is one byte of UTF-8 or more: no more than outlen - 1 fit */
	chars = (uint64_t)length < outlen - 1 ? (size_t)length : outlen - 1;
	if (chars) {
		uint64_t at =
		    addr + (uint64_t)(state >> o->unicode_ascii_bit & 1 ? o->unicode_ascii_data
									: o->unicode_compact_data);

		err = rd(py, at, data, chars * kind);
		if (err)
			return err;
	}
	for (size_t i = 0; i < chars; i++) {
		char u[4];
		uint32_t c;
		size_t ul;

		if (kind == 1) {
			c = data[i];
		} else if (kind == 2) {
			uint16_t c16;

			memcpy(&c16, data + 2 * i, sizeof(c16));
			c = c16;
		} else {
			memcpy(&c, data + 4 * i, sizeof(c));
		}
		ul = utf8(c, u);
		if (w + ul > outlen - 1) {
			chars = 0; /* cut */
			break;
		}
		memcpy(out + w, u, ul);
		w += ul;
	}
	out[w] = '\0';
	if (chars < (uint64_t)length) {
		py->stats.names_cut++;
		return -E2BIG;
	}
	return 0;
}

/* the code object at `code` into f: 0 or -errno (counted) */
int fg_py_code_head(struct fg_py *py, uint64_t code, struct fg_py_code_head *h)
{
	const struct fg_py_offsets *o = py->off;
	const int16_t offs[] = {o->object_type, o->code_name, o->code_qualname, o->code_filename,
				o->code_firstlineno};
	unsigned char buf[OBJ_MAX];
	int err;

	err = rd(py, code, buf, span(offs, FG_ARRAY_SIZE(offs)));
	if (err)
		return err;
	if (py->code_type && u64_at(buf, o->object_type) != py->code_type) {
		py->stats.bad_objects++;
		return -EINVAL;
	}
	h->name = u64_at(buf, o->code_qualname >= 0 ? o->code_qualname : o->code_name);
	h->file = u64_at(buf, o->code_filename);
	h->firstlineno = (int)u32_at(buf, o->code_firstlineno);
	return 0;
}

/* the code object at `code` into f: 0 or -errno (counted) */
static int read_code(struct fg_py *py, uint64_t code, struct fg_py_frame *f)
{
	struct fg_py_code_head h;
	int err = fg_py_code_head(py, code, &h);

	if (err)
		return err;
	f->code = code;
	f->firstlineno = h.firstlineno;
	err = fg_py_read_str(py, h.name, f->name, sizeof(f->name));
	if (err && err != -E2BIG)
		return err;
	err = fg_py_read_str(py, h.file, f->file, sizeof(f->file));
	return err == -E2BIG ? 0 : err;
}

int fg_py_linetable(struct fg_py *py, uint64_t code, uint8_t *buf, size_t max, size_t *len)
{
	const struct fg_py_offsets *o = py->off;
	unsigned char hdr[OBJ_MAX];
	uint64_t tab;
	int64_t size;
	int err;

	*len = 0;
	err = rd(py, code + (uint64_t)o->code_linetable, &tab, sizeof(tab));
	if (err)
		return err;
	err = rd(py, tab, hdr, (size_t)o->bytes_data);
	if (err)
		return err;
	size = (int64_t)u64_at(hdr, o->bytes_size);
	if ((py->bytes_type && u64_at(hdr, o->object_type) != py->bytes_type) || size < 0) {
		py->stats.bad_objects++;
		return -EINVAL;
	}
	if ((uint64_t)size > max) {
		py->stats.tables_cut++;
		return -E2BIG;
	}
	if (size && (err = rd(py, tab + (uint64_t)o->bytes_data, buf, (size_t)size)) < 0)
		return err;
	*len = (size_t)size;
	return 0;
}

int fg_py_code(struct fg_py *py, uint64_t code, struct fg_py_frame *f)
{
	memset(f, 0, sizeof(*f));
	return read_code(py, code, f);
}

int fg_py_stack(struct fg_py *py, uint64_t frame, struct fg_py_frame *f, size_t max, size_t *n)
{
	const struct fg_py_offsets *o = py->off;
	const int16_t offs[] = {o->frame_previous, o->frame_code, o->frame_owner};
	size_t size = span(offs, FG_ARRAY_SIZE(offs));
	/* the frames the C stack owns are skipped, not kept: a bound of their own */
	size_t steps = 0, max_steps = 2 * max + 16;
	unsigned char buf[OBJ_MAX];
	int err;

	*n = 0;
	for (; frame; steps++) {
		if (*n == max || steps == max_steps) {
			py->stats.depth_limit++;
			break;
		}
		err = rd(py, frame, buf, size);
		if (err)
			return steps ? 0 : err;
		frame = u64_at(buf, o->frame_previous);
		if (o->frame_owner_cstack >= 0 && buf[o->frame_owner] == o->frame_owner_cstack)
			continue;
		if (read_code(py, u64_at(buf, o->frame_code), &f[*n]) == 0)
			(*n)++;
	}
	return 0;
}

int fg_py_frame_name(const struct fg_py_frame *f, bool line, char *buf, size_t len)
{
	if (line)
		return snprintf(buf, len, "py::%s:%s:%d", f->name, f->file, f->firstlineno);
	return snprintf(buf, len, "py::%s:%s", f->name, f->file);
}
