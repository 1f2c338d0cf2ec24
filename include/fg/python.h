/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPython's own frames, read from another process's memory: which
 * interpreter a process runs (3.8 to 3.13), its threads, and each thread's
 * Python stack named as CPython's perf support names it,
 * py::QUALNAME:FILENAME.
 *
 *	struct fg_py py;
 *	struct fg_py_thread t[16];
 *	struct fg_py_frame f[FG_PY_MAX_DEPTH];
 *	size_t nt, nf;
 *
 *	int err = fg_py_open(&py, "/proc", pid);	// -ENOENT: no interpreter,
 *	if (err == 0)					// -ENOTSUP: a version not in the table
 *		err = fg_py_threads(&py, t, 16, &nt);
 *	for (size_t i = 0; err == 0 && i < nt; i++)
 *		if (fg_py_stack(&py, t[i].frame, f, FG_PY_MAX_DEPTH, &nf) == 0)
 *			... f[0] innermost; fg_py_frame_name(&f[0], false, buf, sizeof(buf)) ...
 *	fg_py_release(&py);				// py.stats: what failed, counted
 *
 * Where the interpreter is: the mapping of libpython3.X.so (pyenv's builds,
 * embedders) or else the executable (Debian's python3.11 links it in).  Its
 * exported symbols give _PyRuntime (the root of everything read), Py_Version
 * (3.11+; before that the file's name, python3.X or libpython3.X.so, gives
 * the version), and PyCode_Type, PyUnicode_Type and PyBytes_Type (to check
 * that what a pointer leads to is a code object or a string), found in
 * .dynsym through its hash table: .symtab, large in pyenv's builds, is read
 * only when _PyRuntime is not exported.  The thread state of a thread is its
 * TSS key's slot in the thread's pthread (fg_py_tss_tstate), not the
 * thread-local _Py_tss_tstate of 3.12+, which is in .symtab alone.
 *
 * What is read, by offsets from the table below:
 *	_PyRuntime.interpreters.head		the main interpreter
 *	  ->threads.head (tstate_head <3.11)	its thread states, a list by ->next
 *	    ->thread_id, native_thread_id (3.11+)
 *	    ->frame (<3.11), ->cframe->current_frame (3.11, 3.12), ->current_frame (3.13)
 *	      the innermost frame, a list by ->f_back (PyFrameObject, <3.11) or
 *	      ->previous (_PyInterpreterFrame, 3.11+), skipping the frames the C
 *	      stack owns (->owner == FRAME_OWNED_BY_CSTACK, 3.12+: the shim frames)
 *	      ->f_code (->f_executable in 3.13): the code object
 *	        ->co_qualname (3.11+; co_name before), ->co_filename, ->co_firstlineno
 *	          str objects: compact, 1, 2 or 4 bytes a character after the header
 *
 * Every offset is CPython's headers' own (Include/ and Include/internal/,
 * built with Py_BUILD_CORE), taken with offsetof() by
 * tests/data/python/offsets.c, which tests/python.bats compiles against the
 * headers of each installed version and compares with this table (pyenv's
 * 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0 and Debian's 3.11.2 were
 * checked).  The layouts are those of x86-64 and other LP64 targets.
 * From 3.13 the interpreter describes its own layout at the head of
 * _PyRuntime (_Py_DebugOffsets); fg_py_open compares it with the table and
 * refuses a process that disagrees (a free-threaded build, a patch release
 * that moved a field) rather than misread it.
 *
 * The memory read may be hostile or changing under the reader (the process
 * runs on): every read is bounded (FG_PY_OBJ_MAX bytes of a struct, names cut
 * at FG_PY_NAME_MAX bytes, FG_PY_MAX_THREADS threads, the caller's depth), a
 * pointer is followed only to an object of the expected type, and every
 * failure is counted in fg_py.stats, never a crash.
 */
#ifndef FG_PYTHON_H
#define FG_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FG_PY_NAME_MAX 256     /* bytes of a name, its NUL included (UTF-8); longer is cut */
#define FG_PY_FILE_MAX 1024    /* bytes of a file name, the same */
#define FG_PY_MAX_DEPTH 128    /* frames: a sensible caller's bound */
#define FG_PY_MAX_THREADS 4096 /* thread states followed in one interpreter's list */

/*
 * The layout of one minor version: byte offsets into CPython's structs, -1
 * where the version has no such field.  Names are struct.field as
 * fg_py_offsets_fields() prints them.
 */
struct fg_py_offsets {
	uint8_t major, minor;
	int16_t runtime_interpreters_head; /* _PyRuntimeState.interpreters.head */
	int16_t runtime_tss_key;	   /* .gilstate.autoTSSkey._key (.autoTSSkey 3.12+) */
	int16_t interp_threads_head;	   /* PyInterpreterState.threads.head (tstate_head <3.11) */
	int16_t tstate_next;		   /* PyThreadState.next */
	int16_t tstate_thread_id;	   /* .thread_id: pthread_self() */
	int16_t tstate_native_thread_id;   /* .native_thread_id: the kernel's tid (3.11+) */
	int16_t tstate_frame;		   /* .frame, .cframe (3.11, 3.12), .current_frame (3.13) */
	int16_t cframe_current_frame;	   /* _PyCFrame.current_frame (3.11, 3.12) */
	int16_t frame_previous;		   /* PyFrameObject.f_back, _PyInterpreterFrame.previous */
	int16_t frame_code;		   /* .f_code, .f_executable (3.13) */
	int16_t frame_owner;		   /* _PyInterpreterFrame.owner, a char (3.11+) */
	int16_t frame_owner_cstack;	   /* FRAME_OWNED_BY_CSTACK's value (3.12+) */
	int16_t frame_is_entry;		   /* _PyInterpreterFrame.is_entry, a bool (3.11) */
	int16_t frame_instr;   /* .f_lasti (<3.11, an int), .prev_instr (3.11, 3.12), .instr_ptr */
	int16_t code_code;     /* PyCodeObject.co_code_adaptive: the bytecode (3.11+) */
	int16_t bytes_size;    /* PyBytesObject's ob_size */
	int16_t bytes_data;    /* its ob_sval */
	int16_t code_name;     /* PyCodeObject.co_name */
	int16_t code_qualname; /* .co_qualname (3.11+) */
	int16_t code_filename; /* .co_filename */
	int16_t code_firstlineno;     /* .co_firstlineno, an int */
	int16_t code_linetable;	      /* .co_linetable (.co_lnotab <3.10) */
	int16_t object_type;	      /* PyObject.ob_type */
	int16_t unicode_length;	      /* PyASCIIObject.length, in characters */
	int16_t unicode_state;	      /* .state, a 32-bit bit-field */
	int16_t unicode_ascii_data;   /* sizeof(PyASCIIObject): a compact ASCII string's data */
	int16_t unicode_compact_data; /* sizeof(PyCompactUnicodeObject): other compact data */
	int16_t unicode_kind_shift;   /* state's kind (1, 2, 4 bytes a character), 3 bits */
	int16_t unicode_compact_bit;  /* state's compact bit */
	int16_t unicode_ascii_bit;    /* state's ascii bit */
};

/* The layout of CPython major.minor, or NULL when the table has none. */
const struct fg_py_offsets *fg_py_offsets(unsigned major, unsigned minor);

/* One field of a layout, by the name tests/data/python/offsets.c prints. */
struct fg_py_field {
	const char *name;
	int value;
};
/* The fields of `o` into out[0..max), in a fixed order; how many there are. */
size_t fg_py_offsets_fields(const struct fg_py_offsets *o, struct fg_py_field *out, size_t max);

/* What went wrong while reading, counted. */
struct fg_py_stats {
	uint64_t read_errors;  /* a read of the process's memory failed */
	uint64_t bad_objects;  /* a pointer led to an object of the wrong type or shape */
	uint64_t names_cut;    /* a name longer than its buffer, cut */
	uint64_t depth_limit;  /* a stack deeper than the caller's bound, cut */
	uint64_t thread_limit; /* more thread states than the caller's bound, or a loop */
	uint64_t tables_cut;   /* a line table longer than the caller's bound, not read */
};

/*
 * Reads `len` bytes of the process's memory at `addr` into `buf`: 0, or
 * -errno (-ESRCH: the process is gone; -EFAULT: not mapped).
 */
typedef int (*fg_py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* A process's interpreter, as found; on the stack, released with fg_py_release(). */
struct fg_py {
	pid_t pid;
	unsigned major, minor; /* 0.0 when not known */
	uint64_t version_hex;  /* Py_Version (PY_VERSION_HEX, 3.11+), 0 when absent */
	char path[4096];       /* the file the interpreter is in, as mapped */
	uint64_t bias;	       /* its load bias: symbol value + bias = address */
	uint64_t runtime;      /* &_PyRuntime */
	uint64_t code_type;    /* &PyCode_Type, 0 when unknown (then not checked) */
	uint64_t unicode_type; /* &PyUnicode_Type, the same */
	uint64_t bytes_type;   /* &PyBytes_Type, the same */
	const struct fg_py_offsets *off;
	int pthread_tid_off;	  /* <3.11: the tid's offset in glibc's struct pthread, or -1 */
	int pthread_specific_off; /* its pthread_getspecific() slots', or -1 */
	fg_py_read_fn read;	  /* process_vm_readv of pid, unless a test sets its own */
	void *read_ctx;
	struct fg_py_stats stats;
};

/*
 * Find the interpreter of process `pid` (its maps and files under `proc`,
 * normally "/proc"), and its layout.  0; -ENOENT when the process runs no
 * CPython 3 (no libpython3.X mapped, and no _PyRuntime in the executable);
 * -ENOTSUP when it does but its version is not known or not in the table,
 * or a libpython3.X has no _PyRuntime (3.6 and older) -- py->major and
 * minor say which it is, when known; -EPROTO when the interpreter's own
 * description of its layout (_Py_DebugOffsets, 3.13) disagrees with the
 * table (a free-threaded build, or a patch release that moved a field);
 * -ESRCH when the process is gone; other
 * -errno when /proc or the file cannot be read.  py is ready for
 * fg_py_release() whatever the result.
 */
int fg_py_open(struct fg_py *py, const char *proc, pid_t pid);
/* For tests: a process of version major.minor read through `read`; -ENOTSUP, -EPROTO as above. */
int fg_py_open_mem(struct fg_py *py, unsigned major, unsigned minor, uint64_t runtime,
		   fg_py_read_fn read, void *ctx);
void fg_py_release(struct fg_py *py);

/* One of the interpreter's threads. */
struct fg_py_thread {
	uint64_t tstate;    /* its PyThreadState's address */
	uint64_t thread_id; /* pthread_self() of the thread */
	int64_t native_tid; /* the kernel's thread id, -1 when not known */
	uint64_t frame;	    /* the innermost frame's address, 0 when none (idle) */
};

/*
 * The main interpreter's threads into t[0..max), newest first: 0 with *n set
 * (more than max are counted in stats.thread_limit), or -errno when the
 * list cannot be read at all.  For versions before 3.11, which keep no
 * native id, the tid is read from glibc's struct pthread (thread_id points
 * to it) at the offset this process's own glibc keeps it at.
 */
int fg_py_threads(struct fg_py *py, struct fg_py_thread *t, size_t max, size_t *n);

/*
 * The thread state CPython keeps for the thread whose glibc struct pthread
 * is at `pthread` (its pthread_self(), fg_py_thread.thread_id; on x86-64
 * its thread pointer, fs_base): its slot of _PyRuntime's autoTSSkey, read as
 * pthread_getspecific() reads it, with glibc's offsets as this process's
 * glibc has them.  The lookup the BPF walk is to make from a sampled
 * thread's fs_base, in every version 3.8 to 3.13.  0 with *tstate set (0:
 * none, or the key not made yet), -ENOTSUP when glibc's offsets are not
 * known, or the read's -errno.
 */
int fg_py_tss_tstate(struct fg_py *py, uint64_t pthread, uint64_t *tstate);

/* One Python frame. */
struct fg_py_frame {
	uint64_t code;		   /* the code object's address */
	int firstlineno;	   /* co_firstlineno */
	char name[FG_PY_NAME_MAX]; /* co_qualname (3.11+), else co_name */
	char file[FG_PY_FILE_MAX]; /* co_filename */
};

/*
 * The stack whose innermost frame is at `frame` into f[0..max), innermost
 * first: 0 with *n set (a deeper stack is cut at max and counted), or -errno
 * when the first frame cannot be read (-ESRCH: the process is gone).  A
 * later frame that cannot be read ends the stack there, counted.
 */
int fg_py_stack(struct fg_py *py, uint64_t frame, struct fg_py_frame *f, size_t max, size_t *n);

/*
 * The code object at `code` into *f (its name, file and first line): 0, or
 * -errno (counted): -EINVAL when it is not a code object.
 */
int fg_py_code(struct fg_py *py, uint64_t code, struct fg_py_frame *f);

/*
 * The line table of the code object at `code` (co_lnotab before 3.10,
 * co_linetable from it: fg/pyline.h decodes it) into buf[0..max): 0 with
 * *len set; -E2BIG when longer than max (not read, counted in
 * stats.tables_cut); -EINVAL when not a bytes object; the read's -errno.
 */
int fg_py_linetable(struct fg_py *py, uint64_t code, uint8_t *buf, size_t max, size_t *len);

/*
 * A code object's identity, read in one go: its name's and file name's
 * str objects (their addresses) and its first line.  What changes when the
 * object is freed and another made at its address: 0, or -errno as above.
 */
struct fg_py_code_head {
	uint64_t name, file;
	int firstlineno;
};
int fg_py_code_head(struct fg_py *py, uint64_t code, struct fg_py_code_head *h);

/*
 * f's name as CPython's perf trampolines name it, py::NAME:FILE, with
 * ":LINE" (the function's first line) after it when `line`; snprintf's result.
 */
int fg_py_frame_name(const struct fg_py_frame *f, bool line, char *buf, size_t len);

/*
 * The str object at `addr` in UTF-8 into out[0..outlen), NUL-terminated:
 * 0, -E2BIG when cut to fit (still terminated, counted), -EINVAL when it is
 * not a compact str of a known kind (counted), or the read's -errno.
 */
int fg_py_read_str(struct fg_py *py, uint64_t addr, char *out, size_t outlen);

#endif
