/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The naming engine of fg-sym: turns the instruction pointers of a sample
 * into function names, and writes samples as `perf script` text.
 *
 * Mappings come from the record stream first (they outlive the processes),
 * then from /proc/PID/maps.  Mapped files are opened through
 * /proc/PID/map_files/, --symfs, /proc/PID/root/ and their own path, and a
 * file is used only when its device and inode (or build-id) are those the
 * mapping names.  Symbol tables are cached by file identity.  Kernel frames
 * are named from kallsyms, JIT frames from /tmp/perf-PID.map.
 *
 * A sample with a user stack snapshot (fg-sample --call-graph dwarf) is
 * unwound first: with the unwind tables of the mapped files (lib/cfi, read
 * from the same identity-checked files as the symbols, cached with them),
 * frame pointers where a mapping has no call frame information (JIT code),
 * the running kernel's vdso image for the vdso; or by libdwfl (the oracle,
 * FG_SYM_UNWIND_LIBDW).  The unwound frames replace the frame-pointer ones.
 *
 *	struct fg_symbolizer *s = fg_symbolizer_new(&opts);
 *	fg_symbolizer_mapping(s, &m);		// as mapping records arrive
 *	fg_symbolizer_write(s, stdout, &sample);
 *	fg_symbolizer_stats(s, &st);
 *	fg_symbolizer_free(s);
 */
#ifndef FG_SYMBOLIZE_H
#define FG_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fg/diag.h"
#include "fg/log.h"
#include "fg/pysplice.h"
#include "fg/record.h"
#include "fg/unwind.h"

struct fg_debuginfod;

/* What is done with a sample's user stack snapshot. */
enum fg_sym_unwinder {
	FG_SYM_UNWIND_TABLE = 0, /* lib/unwind with lib/cfi's tables (the default) */
	FG_SYM_UNWIND_LIBDW,	 /* elfutils' libdwfl, one Dwfl per process (the oracle) */
	FG_SYM_UNWIND_NONE,	 /* not unwound: the frame-pointer frames are written */
	FG_SYM_UNWIND_COUNT,
};

/* "table", "libdw", "none" */
extern const char *const fg_sym_unwinder_names[FG_SYM_UNWIND_COUNT];

/* The most frames an unwound user stack keeps (deeper: FG_UNWIND_END_MAXDEPTH). */
#define FG_SYM_UNWIND_MAX 1024

struct fg_sym_opts {
	const char *kallsyms; /* default /proc/kallsyms */
	/*
	 * The directory of a cache of /proc/kallsyms (fg/ksyms.h): the file
	 * "kallsyms" in it is read instead of /proc/kallsyms when its stamp is
	 * the running kernel's, and written after reading it; NULL for none.
	 * Used only when `kallsyms` is /proc/kallsyms, and only when
	 * fg_safeio_private_dir_open() accepts the directory (no symbolic link on the
	 * way, each directory the running user's or root's).
	 */
	const char *kallsyms_cache;
	const char *proc_root; /* default /proc */
	const char *symfs;     /* a directory holding the files, as perf's --symfs; or NULL */
	bool no_demangle;
	bool inline_frames; /* expand inlined functions (DWARF) */
	bool srcline;	    /* add file:line (DWARF) */
	bool py_lines;	    /* Python frames: ":LINE", the line each frame runs */
	bool verbose;	    /* warn about each file that cannot be read */
	enum fg_sym_unwinder unwinder;
	/*
	 * Debug files fetched by build-id (fg/debugfile.h) for files with no
	 * .symtab (or no DWARF, with inline_frames or srcline) and no local debug
	 * file; NULL for none.  The caller's, freed after the symbolizer.  With
	 * it, fg_symbolizer_write holds back a sample with frames in a file
	 * being fetched (and those after it, to keep their order) until the file
	 * comes or the budget is spent: see fg_symbolizer_flush.
	 */
	struct fg_debuginfod *debuginfod;
	/* diagnostics (the library does not print); may be NULL */
	fg_log_fn warn;
	void *warn_arg;
};

/* Why a frame could not be named. */
enum fg_unnamed {
	FG_UNNAMED_NOSYMS,  /* the file has no symbol there (or kallsyms has none) */
	FG_UNNAMED_NOFILE,  /* the mapped file cannot be found */
	FG_UNNAMED_GONE,    /* the process is gone and its mappings were not recorded */
	FG_UNNAMED_NOMAP,   /* the address is in no known mapping */
	FG_UNNAMED_NOJIT,   /* anonymous executable memory, and no /tmp/perf-PID.map names it */
	FG_UNNAMED_CHANGED, /* a file is there, but not the one mapped (build-id, or inode) */
	FG_UNNAMED_NOID,    /* the mapping names its file by neither build-id nor inode */
	/* no symbol there, and debuginfod did not bring the file's debug file in time */
	FG_UNNAMED_DITIMEOUT,
	FG_UNNAMED_COUNT,
};

extern const char *const fg_unnamed_reasons[FG_UNNAMED_COUNT];

/* Why a named frame got no source information (--inline, --srcline). */
enum fg_nosrc {
	FG_NOSRC_NODWARF, /* neither the file nor its debug file has DWARF */
	FG_NOSRC_TOOBIG,  /* DWARF over the bounds of lib/dwarf.h: not read */
	FG_NOSRC_CORRUPT, /* DWARF that libdw cannot read */
	FG_NOSRC_SPLIT,	  /* split DWARF (.dwo, .dwp files): not read */
	FG_NOSRC_NOSUP,	  /* the supplementary (dwz) file it needs is not found */
	FG_NOSRC_NOLINE,  /* DWARF says nothing about the address */
	FG_NOSRC_COUNT,
};

extern const char *const fg_nosrc_reasons[FG_NOSRC_COUNT];

struct fg_sym_stats {
	uint64_t samples;
	uint64_t named;
	uint64_t unnamed[FG_UNNAMED_COUNT];
	uint64_t nosrc[FG_NOSRC_COUNT]; /* named frames without source information */
	uint64_t files;			/* distinct files whose symbols were read */
	uint64_t bad_minidebug; /* files whose .gnu_debugdata (MiniDebugInfo) cannot be read */
	uint64_t refused; /* files whose ELF headers claim more than the bounds (fg_elf_precheck) */
	/* frames named by a debug file that debuginfod brought */
	uint64_t debuginfod_named;
	uint64_t evicted; /* processes forgotten (FG_SYM_PROCS_MAX, FG_SYM_MAPS_MAX), unused the
			     longest */
	/* stack snapshots unwound: stacks, frames, how each ended (fg/unwind.h) */
	struct fg_unwind_stats unwind;
	/* snapshots not unwound: registers fg-sym cannot use (another architecture, rip or rsp
	 * missing); their frame-pointer frames were written */
	uint64_t unwind_badregs;
	uint64_t unwind_skipped; /* snapshots not unwound: FG_SYM_UNWIND_NONE */
	uint64_t signal_named;	 /* signal trampolines named __restore_rt by their CFI */
	/* the callers of unwound stacks remembered as text: replaced by others in their slot,
	 * and not remembered (over the memory bound) */
	uint64_t chains_replaced;
	uint64_t chains_unkept;
	/* JIT maps cut short or left unread: over FG_SYM_JIT_BYTES_MAX or FG_SYM_JIT_ENTRIES_MAX */
	uint64_t jit_cut;
	struct fg_pysplice_stats py; /* Python frames */
	/* kernel frames in BPF code named by the stream's ksym records; those records left out
	 * (over FG_BPFSYMS_MAX) */
	uint64_t bpf_named;
	uint64_t bpf_over;
};

/*
 * The most processes whose mappings are kept.  A stream may name any number
 * of pids (a million that never exit); beyond this, the process whose last
 * event or sample is the oldest is forgotten (and counted), and a later
 * sample of it is named from /proc if it is still running.
 */
#ifndef FG_FUZZING
#define FG_SYM_PROCS_MAX 32768u
/* The same when all processes together hold more than this many mappings (about 40 MiB). */
#define FG_SYM_MAPS_MAX 262144u
#else /* small, so that the fuzzer forgets processes all the time */
#define FG_SYM_PROCS_MAX 4u
#define FG_SYM_MAPS_MAX 16u
#endif

/*
 * JIT maps (/tmp/perf-PID.map) read in one run, all processes together: at
 * most this many bytes of their text, and this many entries (about 80 bytes
 * of memory each).  One map may hold 64 MiB; eight users' processes with a
 * map that size each would otherwise cost root gigabytes and minutes.  What
 * is over is not read: the rest of the map that reaches a bound, and every
 * map after it, are counted (jit_cut) and their frames are "no JIT map".
 */
#define FG_SYM_JIT_BYTES_MAX (256ull << 20)
#define FG_SYM_JIT_ENTRIES_MAX (4u << 20)

/* A mapping of a file (or anonymous memory) into a process. */
struct fg_sym_mapping {
	uint32_t pid;
	uint64_t time_ns; /* when it was made; 0 when not known (a snapshot) */
	uint64_t start, end, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode; /* 0: unknown */
	const uint8_t *build_id;
	size_t build_id_len;
	const char *path; /* "" for anonymous memory; "[vdso]" and the like */
	bool exec;
};

struct fg_sym_sample {
	const char *comm;
	uint32_t pid, tid, cpu;
	uint64_t time_ns;
	uint64_t weight;
	const char *event;	     /* "cpu-clock" */
	const char *detail;	     /* after the event on the header line, or NULL */
	const uint64_t *kips, *uips; /* leaf first */
	size_t nkips, nuips;
	/*
	 * FG_UNWIND_F_* of each user frame (fg/unwind.h): EXACT names the
	 * address itself, otherwise it is a return address, looked up one byte
	 * back; SIGNAL marks a signal trampoline, named "__restore_rt" when no
	 * symbol holds it.  NULL: the first is exact, the others return addresses.
	 */
	const uint32_t *uflags;
	/*
	 * A user stack snapshot (fg-record(5)), or NULL: unwound (as
	 * fg_sym_opts.unwinder says) into the user frames, in place of uips.
	 */
	const struct fg_rec_ustack *ustack;
	const uint64_t *ustack_regs; /* ustack->nr_regs registers */
	const uint8_t *ustack_data;  /* ustack->size bytes from ustack->sp */
	/*
	 * uips were unwound with CFI by the BPF program (--call-graph cfi):
	 * their signal trampolines are found in the files' tables (uflags NULL).
	 */
	bool cfi_unwound;
	/* Python frames (fg/pysplice.h): code objects, innermost first, and FG_PYSTACK_F_* */
	const uint64_t *pyframes;
	const uint8_t *pyoffsets; /* npy uint32_t, unaligned: their instructions, or NULL */
	size_t npy;
	uint32_t pyflags;
};

/* One named (or unnamed) frame. */
struct fg_frame {
	uint64_t addr; /* as perf prints it: absolute for kernel and JIT, file-relative for files */
	const char *sym; /* NULL: [unknown] */
	uint64_t off;
	enum fg_unnamed why; /* with sym NULL: why it is unnamed */
	const char *module;  /* never NULL: "[unknown]" when nothing is known */
	bool inlined;	     /* an inlined function within the previous frame's */
	bool no_off;	     /* the offset is not known: none is printed */
	const char *srcfile; /* with srcline: the source file, or NULL */
	unsigned srcline;
};

struct fg_symbolizer;

struct fg_symbolizer *fg_symbolizer_new(const struct fg_sym_opts *opts);
void fg_symbolizer_free(struct fg_symbolizer *s);

/* Events of the record stream. */
void fg_symbolizer_mapping(struct fg_symbolizer *s, const struct fg_sym_mapping *m);
/* A process called exec at time_ns: a new address space. */
void fg_symbolizer_exec(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns);
/* A process (pid != ppid) or thread (pid == ppid) was created. */
void fg_symbolizer_fork(struct fg_symbolizer *s, uint32_t pid, uint32_t ppid);
void fg_symbolizer_exit(struct fg_symbolizer *s, uint32_t pid);
/*
 * Who process `pid` runs as (a creds record): its JIT map is trusted only
 * when the file is that user's.  A fork passes it on; an exec forgets it.
 */
void fg_symbolizer_creds(struct fg_symbolizer *s, uint32_t pid, uint32_t uid, uint32_t gid);
/*
 * One record of the stream: a sample is named and written to `out`, the
 * other kinds feed the calls above.  0, or -errno on a write error.
 */
int fg_symbolizer_record(struct fg_symbolizer *s, FILE *out, const struct fg_rec *rec);

/*
 * Name one frame of process `pid`.  `leaf` is false for return addresses
 * (every frame but the first of a stack), which are looked up one byte back
 * so that a call at the very end of a function is named after that function.
 * The strings stay valid until the next call.
 */
void fg_symbolizer_frame(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
			 bool kernel, bool leaf, struct fg_frame *f);

/*
 * Name a sample's frames (unwinding its snapshot first, when it has one) and
 * write it as a perf-script block (or hold it back: see debuginfod above).
 * 0 or -errno (write error).
 */
int fg_symbolizer_write(struct fg_symbolizer *s, FILE *out, const struct fg_sym_sample *smp);
/*
 * Take the debug files fetched since, and write the samples no longer held
 * back.  With `end`, first wait for every fetch (within the budget), so that
 * nothing stays held.  0 or -errno (write error).
 */
int fg_symbolizer_flush(struct fg_symbolizer *s, FILE *out, bool end);
/* Samples held back. */
size_t fg_symbolizer_held(const struct fg_symbolizer *s);

void fg_symbolizer_stats(const struct fg_symbolizer *s, struct fg_sym_stats *st);

#endif
