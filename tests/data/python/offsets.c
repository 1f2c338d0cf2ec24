/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The offsets lib/python.c's table holds for one CPython version, taken with
 * offsetof() and sizeof() from that version's own headers (internal ones
 * included), printed one "NAME VALUE" a line in the order and the names of
 * `pystack --offsets 3.X`.  tests/python.bats compiles it against each
 * installed Python's headers and compares:
 *
 *	cc -DPy_BUILD_CORE -I$INC -I$INC/internal offsets.c && ./a.out
 *
 * For 3.13 it also asserts, at compile time, where lib/python.c reads the
 * interpreter's own description of its layout (_Py_DebugOffsets).
 */
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x03090000
#include "pycore_runtime.h"
#endif
#include "pycore_pystate.h"
#if PY_VERSION_HEX >= 0x03090000
#include "pycore_interp.h"
#endif
#if PY_VERSION_HEX >= 0x030b0000
#include "pycore_frame.h"
#endif

#define P(name, value) printf("%s %ld\n", name, (long)(value))

/* the lowest bit of PyASCIIObject.state that `field` = `ones` sets */
#define STATE_BIT(name, field, ones)                                                               \
	do {                                                                                       \
		PyASCIIObject o;                                                                   \
		unsigned int w;                                                                    \
                                                                                                   \
		memset(&o, 0, sizeof(o));                                                          \
		o.state.field = ones;                                                              \
		memcpy(&w, &o.state, sizeof(w));                                                   \
		P(name, __builtin_ctz(w));                                                         \
	} while (0)

#if PY_VERSION_HEX >= 0x030d0000 && PY_VERSION_HEX < 0x030e0000
/* where lib/python.c reads 3.13's own description of its layout, at _PyRuntime's head */
_Static_assert(offsetof(_PyRuntimeState, debug_offsets) == 0, "debug offsets first");
_Static_assert(offsetof(_Py_DebugOffsets, runtime_state) == 24, "runtime_state");
_Static_assert(offsetof(_Py_DebugOffsets, interpreter_state) == 48, "interpreter_state");
_Static_assert(offsetof(_Py_DebugOffsets, thread_state) == 152, "thread_state");
_Static_assert(offsetof(_Py_DebugOffsets, interpreter_frame) == 224, "interpreter_frame");
_Static_assert(offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr) == 224 + 24, "instr_ptr");
_Static_assert(offsetof(_Py_DebugOffsets, code_object.co_code_adaptive) == 272 + 72, "co_code");
_Static_assert(offsetof(_Py_DebugOffsets, code_object) == 272, "code_object");
_Static_assert(offsetof(_Py_DebugOffsets, pyobject) == 352, "pyobject");
_Static_assert(offsetof(_Py_DebugOffsets, unicode_object) == 536, "unicode_object");
_Static_assert(sizeof(_Py_DebugOffsets) == 584, "its size");
#endif

int main(void)
{
	printf("version %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	P("runtime.interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX >= 0x030c0000
	P("runtime.tss_key", offsetof(_PyRuntimeState, autoTSSkey) + offsetof(Py_tss_t, _key));
#else
	P("runtime.tss_key",
	  offsetof(_PyRuntimeState, gilstate.autoTSSkey) + offsetof(Py_tss_t, _key));
#endif
#if PY_VERSION_HEX >= 0x030b0000
	P("interp.threads_head", offsetof(PyInterpreterState, threads.head));
#else
	P("interp.threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
	P("tstate.next", offsetof(PyThreadState, next));
	P("tstate.thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030b0000
	P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
#else
	P("tstate.native_thread_id", -1);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	P("tstate.frame", offsetof(PyThreadState, current_frame));
	P("cframe.current_frame", -1);
#elif PY_VERSION_HEX >= 0x030b0000
	P("tstate.frame", offsetof(PyThreadState, cframe));
	P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
#else
	P("tstate.frame", offsetof(PyThreadState, frame));
	P("cframe.current_frame", -1);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	P("frame.previous", offsetof(_PyInterpreterFrame, previous));
	P("frame.code", offsetof(_PyInterpreterFrame, f_executable));
	P("frame.owner", offsetof(_PyInterpreterFrame, owner));
	P("frame.owner_cstack", FRAME_OWNED_BY_CSTACK);
	P("frame.is_entry", -1);
#elif PY_VERSION_HEX >= 0x030b0000
	P("frame.previous", offsetof(_PyInterpreterFrame, previous));
	P("frame.code", offsetof(_PyInterpreterFrame, f_code));
	P("frame.owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030c0000
	P("frame.owner_cstack", FRAME_OWNED_BY_CSTACK);
	P("frame.is_entry", -1);
#else
	P("frame.owner_cstack", -1);
	P("frame.is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
#else
	P("frame.previous", offsetof(PyFrameObject, f_back));
	P("frame.code", offsetof(PyFrameObject, f_code));
	P("frame.owner", -1);
	P("frame.owner_cstack", -1);
	P("frame.is_entry", -1);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	P("frame.instr", offsetof(_PyInterpreterFrame, instr_ptr));
#elif PY_VERSION_HEX >= 0x030b0000
	P("frame.instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
	P("frame.instr", offsetof(PyFrameObject, f_lasti));
#endif
#if PY_VERSION_HEX >= 0x030b0000
	P("code.code", offsetof(PyCodeObject, co_code_adaptive));
#else
	P("code.code", -1);
#endif
	P("bytes.size", offsetof(PyVarObject, ob_size));
	P("bytes.data", offsetof(PyBytesObject, ob_sval));
	P("code.name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030b0000
	P("code.qualname", offsetof(PyCodeObject, co_qualname));
#else
	P("code.qualname", -1);
#endif
	P("code.filename", offsetof(PyCodeObject, co_filename));
	P("code.firstlineno", offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX >= 0x030a0000
	P("code.linetable", offsetof(PyCodeObject, co_linetable));
#else
	P("code.linetable", offsetof(PyCodeObject, co_lnotab));
#endif
	P("object.type", offsetof(PyObject, ob_type));
	P("unicode.length", offsetof(PyASCIIObject, length));
	P("unicode.state", offsetof(PyASCIIObject, state));
	P("unicode.ascii_data", sizeof(PyASCIIObject));
	P("unicode.compact_data", sizeof(PyCompactUnicodeObject));
	/* the state's bits: each field set alone in a zeroed object */
	STATE_BIT("unicode.kind_shift", kind, 7);
	STATE_BIT("unicode.compact_bit", compact, 1);
	STATE_BIT("unicode.ascii_bit", ascii, 1);
	return 0;
}
