/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwinding one user stack snapshot (registers and a copy of the stack from
 * rsp up, as fg-sample --call-graph dwarf records them) with the tables of
 * lib/cfi, through the step function of include/fg/cfi_step.h.
 *
 * The leaf's pc is looked up as it is, each caller's return address one byte
 * back (the call instruction), and the pc a signal frame restores as it is.
 * Code without any CFI (a mapping whose `find` gives no table: JIT code),
 * and a pc in a gap of a file's CFI (crti's _init and _fini, hand-written
 * assembly), are walked by their frame pointer, as libdwfl and libunwind
 * do.  The walk ends at a STOP row (_start, a thread's start), at a frame
 * pointer of zero in code without CFI (the ABI's mark of the outermost
 * frame), or when something is missing, and says why.
 *
 *	struct fg_unwind_ops ops = { .find = my_find, .arg = my_process };
 *	struct fg_cfi_regs regs;
 *	fg_unwind_regs_from_perf(u->abi, u->regs_mask, rec.ustack_regs, u->nr_regs, &regs);
 *	n = fg_unwind(&ops, &regs, u->sp, rec.ustack_data, u->size, frames, max, &end);
 */
#ifndef FG_UNWIND_H
#define FG_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "fg/cfi.h"

/* Why a walk ended. */
enum fg_unwind_end {
	FG_UNWIND_END_STOP,	  /* at the outermost frame: the whole stack */
	FG_UNWIND_END_TRUNCATED,  /* a read past the end of the snapshot: it is too small */
	FG_UNWIND_END_NOINFO,	  /* no unwind information for a pc (a gap in the CFI, a file
				     without a usable table, no frame pointer where one was
				     needed) */
	FG_UNWIND_END_UNREADABLE, /* a read below the snapshot or of memory that cannot be read */
	FG_UNWIND_END_LOOP,	  /* the stack pointer did not move up */
	FG_UNWIND_END_MAXDEPTH,	  /* the caller's array is full */
	FG_UNWIND_END_INVALID,	  /* a rule lib/cfi does not hold (fg_cfi_why) */
	FG_UNWIND_END_NOREG,	  /* a rule needs a register the walk did not recover */
	FG_UNWIND_END_NOMAP,	  /* a pc in no mapping */
	FG_UNWIND_END_NOFILE,	  /* the mapped file is not found (or is not the one mapped) */
	FG_UNWIND_END_COUNT,
};

/* "stop", "snapshot too small", ... */
extern const char *const fg_unwind_end_names[FG_UNWIND_END_COUNT];

/* The code at one pc, as the caller's `find` describes it. */
struct fg_unwind_map {
	const struct fg_cfi *cfi; /* the file's table; NULL for code without CFI: frame pointers */
	uint64_t bias;		  /* pc - bias is the file address the table uses */
	uint64_t tag;		  /* the caller's (its mapping, say), handed back in the frame */
};

#define FG_UNWIND_F_EXACT                                                                          \
	(1u << 0) /* pc is exact (the leaf, or interrupted by a signal):                           \
		     name it as is, not pc - 1 */
#define FG_UNWIND_F_FP                                                                             \
	(1u << 1) /* found through a frame pointer (code without CFI for its callee) */
#define FG_UNWIND_F_SIGNAL                                                                         \
	(1u << 2) /* a signal trampoline (its CFI says so: __restore_rt,                           \
		     which Debian's libc names in no symbol table) */

struct fg_unwind_frame {
	uint64_t pc;
	uint32_t flags; /* FG_UNWIND_F_* */
	uint32_t pad;
	uint64_t tag; /* fg_unwind_map.tag of the code at pc; 0 when `find` failed */
};

/*
 * Where the last walk from a leaf pc found its frames: the offsets from sp
 * of each frame's CFA, kept in fg_unwind_cache by address space and leaf
 * pc.  The next snapshot of that pc asks for those lines of its stack at
 * once (a prefetch: the walk's reads depend one on the other, and each
 * would wait for memory in turn), not for every line of the snapshot.  Where
 * the walk leaves the trail, the rest of the snapshot is asked for.
 *
 * A walk whose every step took its CFA from rsp (so that where it reads
 * depends on the pcs alone, never on a register's value) and that ended at
 * a STOP row, at the snapshot's end or at `max` frames is also kept whole:
 * its frames, and where each step read its return address.  A snapshot of
 * the same leaf pc, space, size, `max` and rsp (its offset from where the
 * copy starts) whose words there are the same return addresses would be
 * walked the same way step for step: its frames are those (a replay: one
 * read and compare a frame).
 */
#define FG_UNWIND_TRAIL_SLOTS 512
#define FG_UNWIND_TRAIL_MAX 64
struct fg_unwind_trail {
	uint64_t key;	  /* the space */
	uint64_t pc;	  /* the leaf's */
	uint32_t n;	  /* offsets in off[]; 0: an empty slot */
	uint32_t nframes; /* frames in frames[]: 0 when the walk cannot be replayed */
	uint64_t size;	  /* the snapshot's, the walk's max and rsp - the copy's start: */
	uint64_t max;	  /* a replay's must be the same */
	uint64_t rsp_off;
	uint32_t end;			   /* enum fg_unwind_end */
	uint16_t off[FG_UNWIND_TRAIL_MAX]; /* a frame's CFA - sp, within the snapshot */
	uint16_t ra[FG_UNWIND_TRAIL_MAX];  /* where step i read frame i + 1's pc, - sp */
	struct fg_unwind_frame frames[FG_UNWIND_TRAIL_MAX];
};

/*
 * The rules looked up lately: a cache the caller keeps across walks
 * (optional; zeroed to start), one entry a slot, the newest wins.  Without
 * fg_unwind_ops.space, by table and file address; with it, by address space
 * and pc, with what `find` said of the pc (one probe a frame, no `find`).
 * It holds pointers into the tables: zero it again before freeing a table it
 * may hold.
 */
#define FG_UNWIND_CACHE_SLOTS 4096
struct fg_unwind_cache {
	struct fg_unwind_cached {
		uint64_t key; /* the table's address, or the space */
		uint64_t addr;
		const struct fg_cfi_rule *rule; /* NULL: frame pointers (by space only) */
		uint64_t tag;			/* by space: fg_unwind_map.tag */
		uint32_t by;			/* 0: empty, 1: by table, 2: by space */
	} slot[FG_UNWIND_CACHE_SLOTS];
	/* by space only: the trails, and how the walks followed them */
	struct fg_unwind_trail trail[FG_UNWIND_TRAIL_SLOTS];
	uint64_t trail_kept; /* walks that found their trail and kept to it */
	uint64_t trail_left; /* walks that found one and left it (the rest asked for) */
	uint64_t trail_none; /* walks without one (the whole snapshot asked for) */
	uint64_t replayed;   /* walks whose frames were a trail's (counted as kept too) */
};

struct fg_unwind_ops {
	/*
	 * Describe the code at `pc`: 0 with *m filled, -ENOENT when no mapping
	 * holds pc, -ENODATA when there is no unwind information for it (a
	 * table that cannot be built, a pseudo-file), another -errno when the
	 * mapped file cannot be found or read.
	 */
	int (*find)(void *arg, uint64_t pc, struct fg_unwind_map *m);
	/* Optional: memory outside the snapshot, 8 bytes at addr.  0 or -errno. */
	int (*read)(void *arg, uint64_t addr, uint64_t *val);
	void *arg;
	struct fg_unwind_cache *cache; /* optional */
	/*
	 * Optional, with a cache: the identity of the address space, which the
	 * caller changes (to a value never used before) whenever `find` may
	 * answer otherwise for some pc than it did, `find` included (it may
	 * read the mappings again).  A pc found once is then not given to
	 * `find` again while *space stays.  A failed `find` is not cached.
	 */
	const uint64_t *space;
};

/*
 * Unwind the snapshot: `regs` at the sample, `size` bytes of stack copied
 * from address `sp`.  Fills frames[] leaf first (at most `max`), returns how
 * many and sets *end.
 */
size_t fg_unwind(const struct fg_unwind_ops *ops, const struct fg_cfi_regs *regs, uint64_t sp,
		 const void *stack, size_t size, struct fg_unwind_frame *frames, size_t max,
		 enum fg_unwind_end *end);

/*
 * Registers of a snapshot record (struct fg_rec_ustack: `abi` 1 is the x86-64
 * perf_regs order, 2 arm64's; regs[] holds those of `mask`, in bit order) in
 * the slots of include/fg/cfi_step.h, out->arch saying whose.  A walk uses
 * the tables of files of that machine only.  0, or -EINVAL when the abi is
 * unknown, nregs does not match the mask, or the pc or the stack pointer is
 * missing.
 */
int fg_unwind_regs_from_perf(uint32_t abi, uint64_t mask, const uint64_t *regs, uint32_t nregs,
			     struct fg_cfi_regs *out);

/* Stacks ended, by reason: what a tool reports. */
struct fg_unwind_stats {
	uint64_t stacks;
	uint64_t frames;
	uint64_t fp_frames; /* of which found through frame pointers */
	uint64_t ends[FG_UNWIND_END_COUNT];
};

static inline void fg_unwind_count(struct fg_unwind_stats *st, const struct fg_unwind_frame *f,
				   size_t n, enum fg_unwind_end end)
{
	st->stacks++;
	st->frames += n;
	for (size_t i = 0; i < n; i++)
		st->fp_frames += !!(f[i].flags & FG_UNWIND_F_FP);
	st->ends[end]++;
}

#endif
