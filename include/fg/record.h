/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The record stream: what fg-sample writes and fg-sym reads (fg-record(5)).
 *
 * A stream is a header, then records.  Everything is in the writer's native
 * byte order; the magic, read as a 64-bit number, reveals a stream of the
 * other byte order, which readers refuse.  The stream needs no seek, so it
 * works through pipes.
 *
 *	header:  struct fg_rec_header (header_size bytes; later versions may
 *	         append fields, readers skip what they do not know)
 *	record:  struct fg_rec_hdr { u32 type; u32 size; } then size - 8 bytes
 *	         of payload; size counts the 8-byte record header and is a
 *	         multiple of 8, so every record starts 8-byte aligned
 *
 * A reader skips records of a type it does not know.  Fixed-size payloads
 * may grow in later versions by appending fields: a reader accepts a record
 * longer than it expects and ignores the tail.
 *
 * Reading:
 *	struct fg_rec_reader *r = fg_rec_reader_new(fd, "run.fgr");
 *	struct fg_rec rec;
 *	while ((err = fg_rec_next(r, &rec)) > 0)
 *		switch (rec.type) { case FG_REC_SAMPLE: use(rec.sample, rec.kips, rec.uips); ... }
 *	if (err < 0) fg_warnx("'%s': %s", name, fg_rec_reader_error(r));
 *	fg_rec_reader_free(r);
 */
#ifndef FG_RECORD_H
#define FG_RECORD_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "fg/sample_flags.h"

/* "FGSTACK1" as the bytes of a little-endian u64; a big-endian writer's bytes read "1KCATSGF" */
#define FG_REC_MAGIC 0x314b434154534746ULL
#define FG_REC_VERSION 1u
#define FG_REC_HOST_LEN 72	   /* nodename, NUL-terminated (uname: at most 64 + NUL) */
#define FG_REC_RELEASE_LEN 72	   /* kernel release, NUL-terminated */
#define FG_REC_COMM_LEN 16	   /* TASK_COMM_LEN; a comm is always NUL-terminated */
#define FG_REC_BUILD_ID_MAX 20	   /* bytes; the kernel's BUILD_ID_SIZE_MAX */
#define FG_REC_MAX_SIZE (1u << 24) /* the largest record a reader accepts (16 MiB) */
#define FG_REC_MAX_FRAMES 4096u	   /* per stack, kernel or user */

/* clocks the timestamps may come from (header.clock) */
enum fg_rec_clock {
	FG_CLOCK_MONOTONIC = 1, /* CLOCK_MONOTONIC, as bpf_ktime_get_ns() and perf use */
};

struct fg_rec_header {
	uint64_t magic;	      /* FG_REC_MAGIC */
	uint32_t version;     /* FG_REC_VERSION */
	uint32_t header_size; /* bytes of this header, >= sizeof(struct fg_rec_header) in v1 */
	uint32_t clock;	      /* enum fg_rec_clock */
	uint32_t flags;	      /* FG_HDR_F_* */
	uint64_t freq;	      /* samples a second per CPU (-F) */
	uint64_t start_ns;    /* the clock at the start of sampling */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same moment, for wall-clock times */
	uint32_t ncpus;		    /* CPUs sampled */
	uint32_t page_size;
	char host[FG_REC_HOST_LEN];
	char release[FG_REC_RELEASE_LEN];
};

#define FG_HDR_F_USER_ONLY (1u << 0)	   /* no kernel stacks were taken (--user-only) */
#define FG_HDR_F_KERNEL_ONLY (1u << 1)	   /* no user stacks were taken (--kernel-only) */
#define FG_HDR_F_FILTERED (1u << 2)	   /* only some processes were sampled (-p, -t, COMMAND) */
#define FG_HDR_F_IDLE (1u << 3)		   /* the idle task (pid 0) was sampled (-I) */
#define FG_HDR_F_USTACK_SNAPSHOT (1u << 4) /* samples carry stack snapshots (call graph dwarf) */
#define FG_HDR_F_OFFCPU (1u << 5)	   /* waits were recorded (--off-cpu) */
#define FG_HDR_F_WALL (1u << 6)		   /* CPU samples weigh their period in ns (--wall) */

/* record types */
enum fg_rec_type {
	FG_REC_SAMPLE = 1,
	FG_REC_MAPPING = 2,
	FG_REC_COMM = 3,
	FG_REC_EXIT = 4,
	FG_REC_FORK = 5,
	FG_REC_LOST = 6,
	FG_REC_SUMMARY = 7,
	FG_REC_CREDS = 8,
	FG_REC_EVENT = 9,
	FG_REC_PYCODE = 10,
	FG_REC_KSYM = 11,
	FG_REC_TYPE_MAX = FG_REC_KSYM, /* the last type this reader knows */
};

struct fg_rec_hdr {
	uint32_t type; /* enum fg_rec_type */
	uint32_t size; /* bytes of the whole record, this header included; a multiple of 8 */
};

/*
 * A stack sample.  Followed by nr_kernel kernel IPs, then nr_user user IPs
 * (u64 each, leaf first).  With FG_SAMPLE_F_USTACK_SNAPSHOT in flags
 * (fg-sample --call-graph dwarf), the IPs are followed by struct
 * fg_rec_ustack, its registers and its stack bytes; the user IPs are then
 * still those of the frame-pointer walk.  Flags are FG_SAMPLE_F_*
 * (include/fg/sample_flags.h).  weight is 1 for a CPU sample; with
 * FG_SAMPLE_F_WEIGHT_NS it is a time in nanoseconds: a CPU sample's
 * sampling period (fg-sample --wall), or with FG_SAMPLE_F_OFFCPU a wait's
 * time off the CPU (fg-sample --off-cpu).  A wait's time_ns is when it
 * ended (the thread ran again; for one still going on at the end of the run,
 * FG_SAMPLE_F_OPEN, the end of the run), its stacks and cpu those of when it
 * began, and its task state is FG_SAMPLE_STATE_* of the flags.  The top 12
 * bits of flags are the sample's event (FG_SAMPLE_EVENT()), which an event
 * record describes (struct fg_rec_event).
 */
struct fg_rec_sample {
	uint64_t time_ns;
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint32_t flags;
	uint64_t weight;
	uint32_t nr_kernel;
	uint32_t nr_user;
	char comm[FG_REC_COMM_LEN];
	/* uint64_t ips[nr_kernel + nr_user]; */
};

/*
 * A user stack snapshot, after a sample's IPs when FG_SAMPLE_F_USTACK_SNAPSHOT
 * is set: nr_regs registers, then size bytes copied from the stack pointer
 * up, padded to 8 with zeros.
 *
 * abi names the registers' numbering: FG_USTACK_ABI_X86_64 (1), the
 * kernel's perf_regs for x86-64 (FG_REG_X86_*, PERF_REG_X86_*).  regs[]
 * holds the registers whose bits are set in regs_mask, in the order of
 * their numbers (so nr_regs is the number of bits set; fg_rec_ustack_reg()
 * finds one).  fg-sample writes FG_USTACK_REGS_X86_64: ax bx cx dx si di bp
 * sp ip flags cs ss r8-r15, 20 registers, as perf does; they are the user
 * registers the thread had when it was interrupted, or when it entered the
 * kernel for a sample taken in kernel mode.
 *
 * The data starts at address sp (the sp register) and ends where the copy
 * stopped: at the size asked for (--call-graph dwarf,BYTES) or at the first
 * page that could not be read, the end of the stack; size 0 when nothing
 * could be read.  A reader that does not know snapshots finds a sample
 * record longer than it expects, and ignores the tail, as for any record.
 */
struct fg_rec_ustack {
	uint32_t abi;	    /* FG_USTACK_ABI_X86_64: x86-64 perf_regs numbering */
	uint32_t nr_regs;   /* the bits set in regs_mask, at most 64 */
	uint64_t regs_mask; /* which perf_regs the regs[] array holds */
	uint64_t sp;	    /* the address the data starts at */
	uint32_t size;	    /* bytes of stack data */
	uint32_t pad;
	/* uint64_t regs[nr_regs]; uint8_t data[size]; padding to 8 */
};

/*
 * A sample's Python frames, after its IPs (and its snapshot, if any) when
 * FG_SAMPLE_F_PYSTACK is set: nr frames, innermost first, each the address
 * of its code object in the process, FG_PY_ENTRY set on the outermost frame
 * of each run of frames one C call of the eval loop ran
 * (_PyEval_EvalFrameDefault).  FG_REC_PYCODE records name them.  Added
 * after version 1 was fixed: a reader that does not know it ignores the
 * tail, as for any record.  With FG_PYSTACK_F_OFFSETS (added later still;
 * older readers ignore it, this reader reads streams without it), the
 * frames are followed by each frame's instruction: its byte offset in its
 * code object's bytecode (f_lasti, or prev_instr/instr_ptr from the start
 * of co_code_adaptive), FG_PY_NO_OFFSET when not known; padded to 8.
 */
struct fg_rec_pystack {
	uint32_t nr;	/* at most FG_REC_MAX_FRAMES */
	uint32_t flags; /* FG_PYSTACK_F_* */
			/* uint64_t frames[nr]; with FG_PYSTACK_F_OFFSETS: uint32_t offsets[nr]; */
};
#define FG_PY_NO_OFFSET UINT32_MAX

/*
 * The name of a Python code object of process pid, from time_ns on, as
 * fg-sample read it from the process's memory while it ran: co_qualname
 * (co_name before 3.11), then co_filename, each NUL-terminated UTF-8
 * without control characters, at most FG_REC_PY_NAME_MAX and
 * FG_REC_PY_FILE_MAX bytes with the NUL.  A later record for the same pid
 * and address replaces it (the object was freed and another made there).
 * Added after version 1 was fixed: readers that do not know the type skip it.
 * Added later still, and ignored by older readers: after the file name, its
 * line table (struct fg_rec_pyline, then len bytes: co_lnotab or
 * co_linetable as the process held it), when it could be read and was at
 * most FG_REC_PY_TABLE_MAX bytes; the payload's padding (under 8 bytes)
 * is not one.
 */
struct fg_rec_pycode {
	uint32_t pid;
	int32_t firstlineno; /* co_firstlineno */
	uint64_t code;	     /* the code object's address */
	uint64_t time_ns;
	/* char name[]; char file[]; */
};

/*
 * Kernel code that kallsyms holds only while it exists: a BPF program (or
 * one of its functions), a BPF trampoline or dispatcher, named as kallsyms
 * names it ("bpf_prog_TAG_NAME").  Those there at the start (time_ns 0), then
 * each loaded or unloaded during the run (FG_KSYM_F_GONE: from then on not
 * there).  Followed by the name, NUL-terminated, printable, at most
 * FG_REC_KSYM_NAME_MAX bytes with the NUL.  So that a capture names the
 * BPF code in its kernel stacks after that code is gone, without reading
 * kallsyms.  Added after version 1 was fixed: older readers skip it.
 */
struct fg_rec_ksym {
	uint64_t addr; /* first address */
	uint64_t time_ns;
	uint32_t len;	/* bytes of code, at least 1 */
	uint32_t flags; /* FG_KSYM_F_* */
			/* char name[]; */
};

#define FG_KSYM_F_GONE (1u << 0) /* unloaded at time_ns */
#define FG_REC_KSYM_NAME_MAX 512 /* the kernel's KSYM_NAME_LEN */

struct fg_rec_pyline {
	uint32_t len;	/* bytes of the table, at most FG_REC_PY_TABLE_MAX */
	uint8_t format; /* enum fg_pyline_format (fg/pyline.h): 1 co_lnotab, 2 3.10's, 3 3.11+'s */
	uint8_t pad[3];
	/* uint8_t table[len]; */
};

#define FG_REC_PY_TABLE_MAX 65536
#define FG_REC_PY_NAME_MAX 256
#define FG_REC_PY_FILE_MAX 1024

/*
 * An executable mapping of a process.  Followed by the path, NUL-terminated
 * (padded to 8).  From a /proc snapshot at start (FG_MAP_F_SNAPSHOT) or from
 * the kernel's mmap events.  A build-id, when the kernel supplied one, comes
 * instead of the device and inode (which are then 0).
 */
struct fg_rec_mapping {
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns; /* 0 for the start snapshot */
	uint64_t start;	  /* first address */
	uint64_t end;	  /* one past the last address */
	uint64_t pgoff;	  /* file offset of start, in bytes */
	uint64_t ino;
	uint32_t maj;
	uint32_t min;
	uint32_t prot;	      /* PROT_* */
	uint32_t mflags;      /* MAP_* (MAP_SHARED, MAP_PRIVATE) */
	uint32_t flags;	      /* FG_MAP_F_* */
	uint8_t build_id_len; /* 0..FG_REC_BUILD_ID_MAX */
	uint8_t pad[3];
	uint8_t build_id[FG_REC_BUILD_ID_MAX];
	uint32_t pad2;
	/* char path[]; NUL-terminated */
};

#define FG_MAP_F_SNAPSHOT (1u << 0) /* from /proc/PID/maps at start */
#define FG_MAP_F_BUILD_ID (1u << 1) /* build_id is valid (dev and inode are not) */

/* A thread changed its name; with FG_COMM_F_EXEC, because the process called exec. */
struct fg_rec_comm {
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;
	uint32_t flags; /* FG_COMM_F_* */
	uint32_t pad;
	char comm[FG_REC_COMM_LEN];
};

#define FG_COMM_F_EXEC (1u << 0)

/* A thread or process ended (FG_REC_EXIT) or was created (FG_REC_FORK). */
struct fg_rec_task {
	uint32_t pid;
	uint32_t tid;
	uint32_t ppid;
	uint32_t ptid;
	uint64_t time_ns;
};

/*
 * Who a process runs as: its effective user and group ids (as
 * /proc/PID/status shows them to fg-sample), from time_ns on.  fg-sample
 * writes one for each process of its /proc snapshot (time 0) and after each
 * fork of a process and each exec, when the process could still be read.  A
 * forked process runs as its parent until told otherwise; after an exec
 * without a creds record, who it runs as is not known.  fg-sym trusts a
 * process's JIT map (/tmp/perf-PID.map) only when the file belongs to that
 * user, also once the process is gone.  Added after version 1 was fixed:
 * readers that do not know the type skip it.
 */
struct fg_rec_creds {
	uint32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint32_t flags; /* none yet: 0 */
	uint64_t time_ns;
};

/*
 * What the samples of one event are: fg-sample writes one for each event of
 * the run (-e), right after the header, before any sample.  A sample names
 * its event by the number in the top bits of its flags (FG_SAMPLE_EVENT()).
 * Followed by the event's name as perf names it ("page-faults",
 * "syscalls:sys_enter_write", "probe_prog:target"), NUL-terminated: 1 to
 * FG_REC_EVENT_NAME_MAX bytes of letters, digits and "_.:+-".
 *
 * A stream without event records (written before they existed) has
 * "cpu-clock" samples, and "offcpu-time" ones with FG_SAMPLE_F_WEIGHT_NS;
 * readers name a sample of an event without a record so too, and a reader
 * that does not know the type skips it, as any unknown type, and names every
 * sample so.  Added after version 1 was fixed.
 */
struct fg_rec_event {
	uint32_t id;	 /* as samples carry it: 0 to FG_REC_EVENTS_MAX - 1 */
	uint32_t kind;	 /* enum fg_event_kind */
	uint64_t config; /* software: PERF_COUNT_SW_*; tracepoint: its tracefs id;
			    uprobe, uretprobe: the file offset probed */
	uint64_t period; /* a sample every `period` events (-c), or 0: `freq` a second */
	uint64_t freq;	 /* with period 0: samples a second per CPU (-F) */
	uint32_t flags;	 /* FG_EVENT_F_* */
	uint32_t pad;
	/* char name[]; NUL-terminated */
};

enum fg_event_kind {
	FG_EVENT_SOFTWARE = 1,	 /* a perf software event: cpu-clock, page-faults, ... */
	FG_EVENT_TRACEPOINT = 2, /* a kernel tracepoint */
	FG_EVENT_UPROBE = 3,	 /* the entry of a user function (or an offset into it) */
	FG_EVENT_URETPROBE = 4,	 /* the return of a user function */
	FG_EVENT_OFFCPU = 5,	 /* time off the CPU, from sched_switch: weights in ns */
};

#define FG_EVENT_F_WEIGHT_NS (1u << 0) /* its samples weigh nanoseconds (FG_SAMPLE_F_WEIGHT_NS) */

#define FG_REC_EVENTS_MAX 4096u /* event numbers: the 12 top bits of a sample's flags */
#define FG_REC_EVENT_NAME_MAX 255u

/* Records or samples lost, and why. */
struct fg_rec_lost {
	uint64_t time_ns;
	uint64_t count;
	uint32_t cpu;	 /* UINT32_MAX when not known */
	uint32_t reason; /* enum fg_lost_reason */
};

enum fg_lost_reason {
	FG_LOST_RINGBUF_FULL = 1, /* samples: the BPF ring buffer was full */
	FG_LOST_SIDEBAND = 2,	  /* mmap/comm/task events: the perf buffer overflowed */
	FG_LOST_CPU_OFFLINE = 3,  /* a CPU went offline: its samples stopped */
	/*
	 * events: the BPF program could not run or take the sample because the
	 * CPU was inside another of fg-sample's BPF programs (an event within an
	 * event, as a uprobe's program interrupted by a clock tick)
	 */
	FG_LOST_BUSY = 4,
	FG_LOST_WAITS_RINGBUF_FULL = 5, /* waits: their BPF ring buffer was full */
	FG_LOST_WAITS_UNSEEN = 6,	/* waits not followed: no memory to keep them */
	FG_LOST_WAITS_NO_END = 7,	/* waits whose end the kernel did not report */
};

/* The closing record: what the run produced. */
struct fg_rec_summary {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t samples;	/* sample records written */
	uint64_t lost;		/* samples lost (the BPF ring buffer was full) */
	uint64_t kstack_failed; /* samples whose kernel stack could not be read */
	uint64_t ustack_failed; /* samples whose user stack could not be read */
	uint64_t ustack_cut;	/* samples whose user chain was cut short */
	uint64_t sideband_lost; /* mmap/comm/task events lost */
	uint64_t mappings;	/* mapping records written */
	uint64_t filtered;	/* samples of other processes left out in the kernel */
	int32_t command_status; /* the wait status of COMMAND, or -1 */
	uint32_t flags;		/* FG_SUM_F_* */
};

#define FG_SUM_F_COMMAND (1u << 0) /* command_status is valid */
#define FG_SUM_F_EPIPE (1u << 1)   /* never written to a pipe whose reader left; reserved */

/* A record as the reader hands it out; the pointers stay valid until the next call. */
struct fg_rec {
	uint32_t type;
	uint32_t size;	     /* bytes of the whole record */
	uint64_t offset;     /* byte offset of the record in the stream */
	const void *payload; /* size - 8 bytes */
	union {
		const struct fg_rec_sample *sample;
		const struct fg_rec_mapping *mapping;
		const struct fg_rec_comm *comm;
		const struct fg_rec_task *task; /* FG_REC_EXIT, FG_REC_FORK */
		const struct fg_rec_lost *lost;
		const struct fg_rec_summary *summary;
		const struct fg_rec_creds *creds;
		const struct fg_rec_event *event;
		const struct fg_rec_pycode *pycode;
		const struct fg_rec_ksym *ksym;
	};
	/* FG_REC_SAMPLE */
	const uint64_t *kips;		    /* sample->nr_kernel kernel IPs, leaf first */
	const uint64_t *uips;		    /* sample->nr_user user IPs, leaf first */
	const struct fg_rec_ustack *ustack; /* with FG_SAMPLE_F_USTACK_SNAPSHOT, else NULL */
	const uint64_t *ustack_regs;
	const uint8_t *ustack_data;
	const struct fg_rec_pystack *pystack; /* with FG_SAMPLE_F_PYSTACK, else NULL */
	const uint64_t *pyframes;	      /* pystack->nr, innermost first */
	const uint8_t *pyoffsets; /* pystack->nr uint32_t (unaligned), or NULL: not in the record */
	/* FG_REC_MAPPING */
	const char *path;
	/* FG_REC_EVENT: checked (1 to FG_REC_EVENT_NAME_MAX bytes of [A-Za-z0-9_.:+-]) */
	const char *event_name;
	/* FG_REC_PYCODE: checked as the record says */
	const char *py_name, *py_file;
	const uint8_t *py_table; /* the line table, or NULL: none in the record */
	uint32_t py_table_len;
	uint8_t py_table_format;
	/* FG_REC_KSYM: checked as the record says */
	const char *ksym_name;
};

/* --- reading --- */

struct fg_rec_reader;

/*
 * Read a stream from `fd` (a pipe or a file; stays the caller's).  `name`
 * is kept for the caller's messages.  Never NULL.
 */
struct fg_rec_reader *fg_rec_reader_new(int fd, const char *name);
void fg_rec_reader_free(struct fg_rec_reader *r);
/*
 * Read and check the stream header (fg_rec_next() does it when needed).
 * 0, or -EPROTO for a bad header (fg_rec_reader_error() says what), or
 * -errno from read().
 */
int fg_rec_read_header(struct fg_rec_reader *r, const struct fg_rec_header **h);
/*
 * The next record of a known type, checked: 1 with *rec set, 0 at the end
 * of the stream, -EPROTO for a bad or truncated stream, -errno from read().
 * Records of unknown types are skipped (and counted).  Returns as soon as
 * the record is complete: it never waits for more bytes than that.
 */
int fg_rec_next(struct fg_rec_reader *r, struct fg_rec *rec);
/*
 * True when the next fg_rec_next() can return without calling read(): a
 * whole record (or the end) is already buffered.  A tool that flushes its
 * output when its input pauses asks this before each call.
 */
bool fg_rec_reader_has_buffered(const struct fg_rec_reader *r);
/*
 * Map the input rather than read() it, when it is a regular file that can
 * be mapped (else, and for a pipe, read() as before; the same checks either
 * way): the records are read in place, not copied.  A window of the file is
 * mapped at a time, the next one as the records reach its end.  Call it
 * before the first record is read.  A file truncated under the reader then
 * raises SIGBUS where its records are read: guard the reading with
 * fg_rec_reader_guard().
 */
void fg_rec_reader_map(struct fg_rec_reader *r);
/* True once the input is mapped (at the first read, when it can be). */
bool fg_rec_reader_mapped(const struct fg_rec_reader *r);
/*
 * Guard the reading of a mapped input, and of the records it hands out,
 * from the file shrinking under it: until fg_rec_reader_guard(r, NULL) (or
 * fg_rec_reader_free()), a SIGBUS raised by reading the mapping jumps to
 * `jb`, set by the caller with sigsetjmp(jb, 1); the caller then calls
 * fg_rec_reader_fault(), which fails the reader.  Any other SIGBUS keeps
 * the action it had.  One reader at a time: -EBUSY for a second.  0 or
 * -errno.
 */
int fg_rec_reader_guard(struct fg_rec_reader *r, sigjmp_buf *jb);
/*
 * After the jump: disarm the guard, and fail the reader with -EPROTO, its
 * error naming the byte whose page had gone ("the file shrank while being
 * read ... at byte N").  Returns -EPROTO.
 */
int fg_rec_reader_fault(struct fg_rec_reader *r);
/* Why the last call failed: "truncated sample record at byte 1234". */
const char *fg_rec_reader_error(const struct fg_rec_reader *r);
/*
 * True when the last call failed because the input ended inside a record
 * (after a whole header): the stream was cut short, as when its writer was
 * killed or its disk filled, rather than damaged.
 */
bool fg_rec_reader_truncated(const struct fg_rec_reader *r);
/* Bytes consumed so far (the offset of the next record). */
uint64_t fg_rec_reader_offset(const struct fg_rec_reader *r);
/* Records of unknown types skipped so far. */
uint64_t fg_rec_reader_skipped(const struct fg_rec_reader *r);
const char *fg_rec_reader_name(const struct fg_rec_reader *r);

/* The name of a record type ("sample"), or "unknown". */
const char *fg_rec_type_name(uint32_t type);
/*
 * The task state of a wait (flags with FG_SAMPLE_F_OFFCPU) as perf's
 * sched_switch prints prev_state: "S", "D", "R+" (preempted)...; "?" for a
 * value this reader does not know.
 */
const char *fg_rec_wait_state(uint32_t flags);
/*
 * Check one record in memory (header included, `len` bytes, 8-aligned) and
 * fill *rec.  0, or -EPROTO with a reason in `why` (at least 128 bytes).
 */
int fg_rec_parse(const void *data, size_t len, struct fg_rec *rec, char *why, size_t whylen);

/*
 * The names of a stream's events, for its readers: kept from its event
 * records, looked up for each sample.  Never NULL; free with NULL-safe
 * fg_rec_evnames_free().
 */
struct fg_rec_evnames;
struct fg_rec_evnames *fg_rec_evnames_new(void);
void fg_rec_evnames_free(struct fg_rec_evnames *n);
/* Remember the name of an FG_REC_EVENT record (a later record for the same number replaces it). */
void fg_rec_evnames_add(struct fg_rec_evnames *n, const struct fg_rec *rec);
/*
 * The name of a sample's event: its event record's, else "offcpu-time" for
 * a sample weighing nanoseconds and "cpu-clock" for event 0 (streams written
 * before event records), else "event-N".  Valid until the next call.
 */
const char *fg_rec_evnames_get(struct fg_rec_evnames *n, const struct fg_rec_sample *s);

/* Print a record as one line of text (tests, debugging): "sample time=... ips=...". */
void fg_rec_print(FILE *f, const struct fg_rec *rec);
void fg_rec_print_header(FILE *f, const struct fg_rec_header *h);

/* --- writing --- */

struct fg_rec_writer;

/* Write to `fd` (stays the caller's), buffered.  Never NULL. */
struct fg_rec_writer *fg_rec_writer_new(int fd);
/* Flush, then free.  Returns the first write error (-errno) or 0.  NULL-safe. */
int fg_rec_writer_free(struct fg_rec_writer *w);
/*
 * Each returns 0 or the first write error as -errno (sticky: once a write
 * failed, every later call returns the same error and writes nothing).
 */
int fg_rec_write_header(struct fg_rec_writer *w, const struct fg_rec_header *h);
/* Any record: type, then a payload of `len` bytes (padded to 8 with zeros). */
int fg_rec_write(struct fg_rec_writer *w, uint32_t type, const void *payload, size_t len);
/* A sample: s->nr_kernel + s->nr_user IPs follow in `ips`. */
int fg_rec_write_sample(struct fg_rec_writer *w, const struct fg_rec_sample *s,
			const uint64_t *ips);
/* A mapping and its path. */
int fg_rec_write_mapping(struct fg_rec_writer *w, const struct fg_rec_mapping *m, const char *path);
/* An event and its name; -EINVAL for a name fg_rec_event_name_ok() refuses or an id too large. */
int fg_rec_write_event(struct fg_rec_writer *w, const struct fg_rec_event *e, const char *name);
/* Whether `name` (len bytes) may name an event in the stream. */
bool fg_rec_event_name_ok(const char *name, size_t len);
/* Bytes of a record of `len` payload bytes, header and padding included; 0 when too large. */
size_t fg_rec_size(size_t len);
/*
 * Lay a record out at `out`, which holds fg_rec_size() of the parts' total
 * (not 0): the header, the n parts end to end, zeros to the next 8 bytes.
 */
void fg_rec_lay(void *out, uint32_t type, const struct iovec *parts, int n);
/*
 * Whole records already laid out as written (each a struct fg_rec_hdr whose
 * size is a multiple of 8 and covers its payload and padding), `len` bytes
 * end to end: a large run is written from where it lies, not copied.
 */
int fg_rec_writer_put(struct fg_rec_writer *w, const void *recs, size_t len);
int fg_rec_writer_flush(struct fg_rec_writer *w);
/* The sticky error, or 0. */
int fg_rec_writer_error(const struct fg_rec_writer *w);
/* Bytes handed to write() so far plus those buffered. */
uint64_t fg_rec_writer_bytes(const struct fg_rec_writer *w);

/*
 * Register `reg` (FG_REG_X86_*, in the numbering of rec->ustack->abi) of a
 * sample's snapshot: 0 with *val set, or -ENOENT when the sample has no
 * snapshot or the snapshot not that register.
 */
int fg_rec_ustack_reg(const struct fg_rec *rec, unsigned reg, uint64_t *val);

/* Fill a header with this machine's facts (magic, version, sizes, host, release, page size). */
void fg_rec_header_init(struct fg_rec_header *h);

#endif
