// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * --call-graph cfi: the user stack unwound here, with the tables lib/cfi
 * builds, which fg-sample loads into the maps of fg/bpf_cfi.h.  Included by
 * fg_sample.bpf.c once its stack copy (struct ustack_copy, copy_page) and
 * struct walk are defined.
 *
 * Each frame, a call of the global function cfi_step_one in a bounded loop
 * (up to --max-depth frames), handed the stack copy and the walk's state
 * the walk looked up once: the
 * process' mapping holding the pc (a binary search of its sorted array),
 * the row of the mapping's table (the row of the last walk's frame at the
 * same depth, else a per-CPU cache of rows, else fg_cfi_find_row through
 * the table's inner map), then the rule applied by
 * fg_cfi_step, the very step fg-sym runs on snapshots
 * (include/fg/cfi_step.h).  The stack is read inside the copy of its top
 * that the frame-pointer walk uses, extended a page at a time as the CFA
 * climbs (out of line: the steps' inlined reads only look in the copy);
 * words outside it are read one by one.  Code
 * without CFI (a mapping without a table) and gaps of a table are walked by
 * frame pointers, as lib/unwind does; SIGNAL rows read the ucontext, STOP
 * rows end the walk.
 *
 * A pc in no loaded table (a process or a mapping fg-sample has not loaded
 * yet: just started, a dlopen) makes the sample fall back: it carries the
 * snapshot of --call-graph dwarf instead, for fg-sym to unwind.
 */
#include "fg/bpf_cfi.h"

/* the step reads the stack and the rows as defined below */
struct cfi_mem;
static __always_inline int cfi_read(struct cfi_mem *m, __u64 addr, __u64 *val);
static __always_inline __u32 cfi_row_pc(void *rows, __u32 i);
#define FG_CFI_CTX struct cfi_mem
#define FG_CFI_READ(ctx, addr, val) cfi_read((ctx), (addr), (val))
#define FG_CFI_ROWS void
#define FG_CFI_ROW_PC(rows, i) cfi_row_pc((rows), (i))
#define FG_CFI_INLINE static __always_inline
#include "fg/cfi_step.h"

const volatile bool cfi_unwind = false; /* --call-graph cfi */
const volatile bool cfi_check = false;	/* and a snapshot with every sample (tests) */

struct cfi_rows_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE); /* filled through mmap */
	__uint(key_size, sizeof(__u32));
	__uint(value_size,
	       sizeof(struct fg_cfi_row)); /* (a __type here would be a mere FWD in BTF) */
};

struct cfi_rules_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE); /* filled through mmap */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct fg_cfi_rule));
};

/* table slot -> its rows, its rules; fg-sample sets the slots (--cfi-max-files) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct cfi_rows_inner);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct cfi_rules_inner);
} cfi_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_cfi_file);
} cfi_files SEC(".maps");

/* a file's identity -> its loaded table; fg-sample sets the size (--cfi-max-files) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fg_cfi_inode_key);
	__type(value, struct fg_cfi_inode);
} cfi_inodes SEC(".maps");

/* pid -> its executable mappings; fg-sample sets the size (--cfi-max-procs) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct fg_cfi_proc);
} cfi_procs SEC(".maps");

/*
 * Where and when a process' mappings in cfi_procs stopped being its own:
 * the kernel found room for a new mapping of it over them (a library
 * closed, another opened at its address), or it exec'd (all of them).
 * Those in [start, end) are stale until an entry of a later record
 * replaces them (struct fg_cfi_proc's since); the others stay good (the
 * loader never hears of an unmapping: code unmapped, then data mapped
 * there, would otherwise make the whole process stale for good).
 */
struct cfi_mapped {
	__u64 time; /* bpf_ktime_get_ns(), before the records saying so */
	__u64 start, end;
};

/*
 * pid -> its struct cfi_mapped, set by fg_cfi_exec and fg_cfi_mmap below.
 * An exec counts without an entry in cfi_procs too: a forked process'
 * entry, a copy of its parent's, may come after its exec.  Sized as
 * cfi_procs; processes not sampled age out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_mapped);
} cfi_mapped SEC(".maps");

/*
 * The version of cfi_procs and cfi_mapped: every writer bumps it after its
 * write (fg-sample's loader through the mapping of .bss, after each update
 * or delete of a process' entry; cfi_stale_now below).  A walk reads it
 * before it looks the two maps up, and keeps what it read for the next
 * walks on its CPU of the same process while the version stays the same
 * (struct cfi_state): a write it missed changes the version after it.
 */
__u64 cfi_procs_ver;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_CFI_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cfi_stats SEC(".maps");

/*
 * A row kept in the per-CPU cache: table `slot` at its load `gen`, pcs
 * [lo, hi), a gap of the table when `gap` (gen 0: none).  512 of them,
 * direct-mapped: with 64, a system-wide run searched 0.8 to 1.3 times a
 * sample, with 512 0.4 (README).
 */
#define CFI_CACHE_BITS 9
#define CFI_CACHE (1u << CFI_CACHE_BITS)
struct cfi_cached {
	__u32 slot, gen, lo, hi, gap;
	struct fg_cfi_rule rule;
};

/* the rows of the last walk, frame by frame (struct cfi_state's trace) */
#define CFI_TRACE 128u
_Static_assert(CFI_TRACE >= MAX_STACK_DEPTH + 1, "a row for each frame of a walk");

/* mappings found in the kernel's list, kept a while (struct cfi_state) */
#define CFI_VMA_KEEP 4
#define CFI_VMA_NS 100000000ull
#define CFI_VSETS 4
/* a process' mappings asked for again on a CPU after this long (cfi_ask()) */
#define CFI_ASK_NS 10000000ull
#define CFI_ASK_TRIES 4
#define CFI_ASK_SLOW_NS 1000000000ull
#define CFI_ASKS 4
struct cfi_asked {
	__u32 pid, n; /* n: asks in a row */
	__u64 ns, mtime;
};

/*
 * The mappings of one address space found in the kernel's list (see
 * cfi_state's vsets): of process `pid`, address space `mm`, since `time`.
 */
struct cfi_vset {
	__u64 mm, time;
	__u32 pid, next;
	struct fg_cfi_map maps[CFI_VMA_KEEP];
	__u32 gen[CFI_VMA_KEEP];
};

/* the walk's registers, per CPU: in a map, so that the verifier tracks none of their values */
struct cfi_state {
	struct fg_cfi_regs g;
	__u32 pid;
	__u32 exact; /* the pc is exact (the leaf, or after a signal frame) */
	__u32 end;   /* enum fg_cfi_stat: how the walk ended */
	__u32 why;   /* with end FG_CFI_STAT_FALLBACK: FG_CFI_STAT_FALLBACK_*, why */
	__u32 gen;   /* the version of the process' mappings map and prev are from (0: none) */
	/* with stale, the process' mappings in [sstart, send) are no longer its own (cfi_mapped) */
	__u32 stale;
	/* process pid has an entry in cfi_procs, of version pgen */
	__u32 hasp, pgen;
	__u64 sstart, send;
	/*
	 * What the walk of process pid read of cfi_procs and cfi_mapped (hasp,
	 * pgen, stale, sstart, send, mtime: its cfi_mapped's time, 0 none), at
	 * cfi_procs_ver pver - 1 (pver 0: nothing read yet): the next walk of
	 * the same process takes it while the version is the same.
	 */
	__u64 pver, mtime;
	/*
	 * The last frame's mapping, kept for the next frame: callers are
	 * often in the same file (map.end 0: none yet); and the mapping before
	 * it (a program's frames around those of its libc).  The mappings are
	 * kept for the next walk too, while the process and the version of
	 * its mappings stay the same (the next tick on this CPU is often the
	 * same process').
	 */
	struct fg_cfi_map map, prev;
	/*
	 * Mappings found in the kernel's list of them (cfi_vma_map), kept for
	 * the next walks of the same process and address space (a vset's pid
	 * and mm) for CFI_VMA_NS from its time: a walk finds one (see there),
	 * and a new process' next file is found at its next sample.  Each with
	 * the load of its table's slot (gen), checked again at each use; or,
	 * with table FG_CFI_TABLE_PENDING, a mapping without one (gen: why),
	 * so that the next walks fall back without a lookup.  A set for each
	 * of CFI_VSETS processes, by pid: new processes take turns on a CPU (a
	 * shell and the command it waits for), and one set alone was emptied
	 * at each turn.  vset: the walk's set; vtried: this walk looked one up.
	 */
	struct cfi_vset vsets[CFI_VSETS];
	__u32 vset, vtried;
	/* the processes whose mappings fallbacks asked for (cfi_ask()), by pid */
	struct cfi_asked asks[CFI_ASKS];
	/*
	 * The row of each frame of the last walk on this CPU that had one, by
	 * its depth: the next walk looks there first, at the same depth, while
	 * it finds its rows there (tuse; the leaf's may differ).  The next
	 * tick on a CPU is often the same code's (the same thread, or another
	 * of the same program), and its frames are read in order, each
	 * trace[] entry after the last.  And the last frame's row (trace[last],
	 * this walk's; last 0: none yet): recursion, the same row frame after
	 * frame.  Checked as cache[]'s are.
	 */
	struct cfi_cached trace[CFI_TRACE];
	__u32 tuse, last;
	/*
	 * Rows found by earlier walks on this CPU, by their pc: the return
	 * addresses of one program repeat from sample to sample, and a hit
	 * saves a binary search of helper calls.
	 */
	struct cfi_cached cache[CFI_CACHE];
};

/*
 * Per CPU, one for each program that walks: a clock tick's program may
 * interrupt the off-CPU program's walk (sched_switch) on its CPU, and must
 * not overwrite its registers.  The sampling programs keep out of one
 * another's way through their ustack slot's `busy`.
 */
#define CFI_STATE_SAMPLE 0u
#define CFI_STATE_OFFCPU 1u
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct cfi_state);
} cfi_state SEC(".maps");
/* a per-CPU array's value is 32 KiB at most (PCPU_MIN_UNIT_SIZE) */
_Static_assert(sizeof(struct cfi_state) <= 32768, "the per-CPU cache of rows");

/* (a global function, as count()) */
__noinline int cfi_count(__u32 which, __u64 n)
{
	map_add(&cfi_stats, which, n);
	return 0;
}

/* The step's memory: the copy of the stack's top, extended as the walk climbs. */
struct cfi_mem {
	struct walk *w;
	struct ustack_copy *c;
};

/* One more page at the end of the copy (copy_page(), with its bounds where the verifier sees them).
 */
static __always_inline void cfi_more(struct walk *w, struct ustack_copy *c)
{
	__u64 at = c->copied;

	barrier_var(at);
	if (c->ended || at > COPY_CAP - PAGE)
		return;
	if (bpf_probe_read_user(c->data + at, PAGE, (void *)(w->sp + at)) < 0) {
		c->ended = 1;
		return;
	}
	c->copied = at + PAGE;
}

/*
 * A word the copy does not hold yet: the copy extended by a page or two (a
 * CFA a page or two above it: the pages in between are stack too), else the
 * word read alone.  A call, out of the steps' inlined code; a global
 * function, which the verifier checks once for any arguments (static, it was
 * checked again at each of its call sites' states: 15% of the program's
 * verification).
 */
__noinline int cfi_read_more(struct walk *w, struct ustack_copy *c, __u64 addr, __u64 *val)
{
	__u64 off;

	if (!w || !c || !val)
		return FG_CFI_END_UNREADABLE;
	off = addr - w->sp;
	if (addr >= w->sp && off < COPY_CAP - PAGE) {
		if (off + 8 > c->copied)
			cfi_more(w, c);
		if (off + 8 > c->copied)
			cfi_more(w, c);
		barrier_var(off); /* or clang computes it again, out of the verifier's sight */
		if (off <= COPY_CAP - 8 && off + 8 <= c->copied) {
			*val = *(__u64 *)(c->data + off);
			return 0;
		}
	}
	if (bpf_probe_read_user(val, 8, (void *)addr) < 0)
		return FG_CFI_END_UNREADABLE;
	return 0;
}

static __always_inline int cfi_read(struct cfi_mem *m, __u64 addr, __u64 *val)
{
	struct ustack_copy *c = m->c;
	__u64 off = addr - m->w->sp;

	barrier_var(off);
	if (addr >= m->w->sp && off <= COPY_CAP - 8 && off + 8 <= c->copied) {
		*val = *(__u64 *)(c->data + off);
		return 0;
	}
	return cfi_read_more(m->w, m->c, addr, val);
}

static __always_inline __u32 cfi_row_pc(void *rows, __u32 i)
{
	struct fg_cfi_row *r = bpf_map_lookup_elem(rows, &i);

	return r ? r->pc : 0xffffffffu;
}

/*
 * A binary search, one halving per bpf_loop() step, in what was looked up
 * once before it: the process' mappings, or the table's map of rows.
 */
struct cfi_search {
	const void *p;
	__u64 pc;
	__u32 n;
	__u32 lo, hi;
};

static long cfi_map_halve(__u32 i, void *arg)
{
	struct cfi_search *s = arg;
	const struct fg_cfi_proc *p = s->p;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	if (mid >= FG_CFI_PROC_MAPS)
		return 1;
	if (p->maps[mid].start <= s->pc)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

static long cfi_row_halve(__u32 i, void *arg)
{
	struct cfi_search *s = arg;

	return fg_cfi_find_halve((void *)s->p, s->n, (__u32)s->pc, &s->lo, &s->hi);
}

/* whether mapping m is no longer the process' own (stale, cfi_mapped) */
static __always_inline bool cfi_map_stale(const struct cfi_state *st, const struct fg_cfi_map *m)
{
	return st->stale && m->start < st->send && m->end > st->sstart;
}

/*
 * The mapping of process `pid` holding `pc`, or NULL (none, or stale: the
 * kernel's list has the process' code there).
 */
static __always_inline const struct fg_cfi_map *cfi_find_map(struct cfi_state *st, __u32 pid,
							     __u64 pc)
{
	const struct fg_cfi_proc *p = bpf_map_lookup_elem(&cfi_procs, &pid);
	struct cfi_search s = {.p = p, .pc = pc};
	const struct fg_cfi_map *m;

	if (!p || p->n > FG_CFI_PROC_MAPS)
		return NULL;
	s.hi = p->n;
	bpf_loop(FG_CFI_PROC_MAPS_LOG + 1, cfi_map_halve, &s, 0);
	if (s.lo == 0 || s.lo > FG_CFI_PROC_MAPS)
		return NULL;
	m = &p->maps[(s.lo - 1) & (FG_CFI_PROC_MAPS - 1)];
	return pc < m->end && !cfi_map_stale(st, m) ? m : NULL;
}

/* whether row `e` is table `slot`'s at its load `gen` (never 0), and holds `rel` */
static __always_inline bool cfi_row_holds(const struct cfi_cached *e, __u32 slot, __u32 gen,
					  __u32 rel)
{
	return e->gen == gen && e->slot == slot && rel >= e->lo && rel < e->hi;
}

/*
 * The rule of table `slot` for `rel` (a pc of its rows), for the frame at
 * `depth`: NULL in a gap of the table, or with *gone set when the slot
 * holds no table (being loaded or freed: the sample falls back).  Looked
 * for in the last walk's row at this depth, then in
 * the last frame's, then in the cache, then in the table; kept in
 * st->trace[depth] for the next walk.  Every row kept holds the load of
 * the slot it is from (a slot is loaded again only after it was emptied:
 * gen tells its tables apart) and the whole range of its pcs, both checked
 * at each use: an entry of another table, another load, or another range
 * is never taken.
 */
static __always_inline const struct fg_cfi_rule *cfi_find_rule(struct cfi_state *st, __u32 slot,
							       __u32 rel, __u32 depth, bool *gone)
{
	const struct fg_cfi_file *f = bpf_map_lookup_elem(&cfi_files, &slot);
	struct cfi_cached *t = &st->trace[depth & (CFI_TRACE - 1)];
	struct cfi_cached *e;
	struct cfi_search s = {.pc = rel};
	const struct fg_cfi_row *row;
	const struct fg_cfi_rule *r;
	void *rows, *rules;
	__u32 gen, i;

	if (!f || !f->gen || !f->nrows) {
		*gone = true;
		return NULL;
	}
	gen = f->gen;
	if (st->tuse) {
		if (cfi_row_holds(t, slot, gen, rel))
			goto found;
		/* (past the leaf) the two walks parted: the rest of the trace is the other's */
		if (depth > 1)
			st->tuse = 0;
	}
	e = &st->trace[st->last & (CFI_TRACE - 1)];
	if (st->last && cfi_row_holds(e, slot, gen, rel)) {
		*t = *e;
		goto found;
	}
	e = &st->cache[(((rel >> 4) ^ (slot << 19)) * 2654435761u) >> (32 - CFI_CACHE_BITS)];
	if (!cfi_row_holds(e, slot, gen, rel)) {
		rows = bpf_map_lookup_elem(&cfi_rows, &slot);
		rules = bpf_map_lookup_elem(&cfi_rules, &slot);
		if (!rows || !rules) {
			*gone = true;
			return NULL;
		}
		s.p = rows;
		s.n = s.hi = f->nrows;
		bpf_loop(32, cfi_row_halve, &s, 0);
		if (s.lo == 0)
			return NULL;
		i = s.lo - 1;
		row = bpf_map_lookup_elem(rows, &i);
		if (!row)
			return NULL;
		r = bpf_map_lookup_elem(rules, &(__u32){row->rule});
		if (!r)
			return NULL;
		e->slot = slot;
		e->gen = gen;
		e->lo = row->pc;
		e->hi = s.lo < f->nrows ? cfi_row_pc(rows, s.lo) : 0xffffffffu;
		e->gap = r->kind == FG_CFI_NONE;
		e->rule = *r;
	}
	*t = *e;
found:
	st->last = depth;
	return t->gap ? NULL : &t->rule;
}

/*
 * A mapping the process' array of them lacks (a process fg-sample has not
 * read yet: it just started), found in the kernel's own list of its
 * mappings, and its file's table by the file's identity: most new
 * processes run files whose tables are loaded already (another process'
 * sh, cc1, libc), and walk at once rather than fall back.
 */
struct cfi_vma {
	struct fg_cfi_map map;
	__u32 why; /* FG_CFI_STAT_FALLBACK_* when none */
};

#define CFI_VM_EXEC 0x4ul

/*
 * What the key of an inode's table takes of struct inode: its number, its
 * file system's device and its change time, as kernels before 6.11 and
 * since name it (only the fields the running kernel has are read).  One
 * type for all of them: libbpf looks each type relocated up among all of
 * the kernel's (about a millisecond each at every start), so a flavor for
 * each way of naming the change time would cost three more.  Nanoseconds
 * fit in 30 bits; kernels with multigrain timestamps keep a flag in the
 * bits above (I_CTIME_QUERIED), which stat(2) does not show.
 */
#define CFI_CTIME_NSEC_MASK ((1u << 30) - 1)
struct inode___fg {
	unsigned long i_ino;
	struct super_block *i_sb;
	time64_t i_ctime_sec; /* 6.11 and later */
	u32 i_ctime_nsec;
	struct timespec64 __i_ctime; /* 6.6 to 6.10 */
	struct timespec64 i_ctime;   /* before 6.6 */
} __attribute__((preserve_access_index));

/* the key cfi_inodes files the table of inode `ino`'s file by */
static __always_inline void cfi_inode_key(struct inode *inode, struct fg_cfi_inode_key *k)
{
	struct inode___fg *ino = (void *)inode;

	k->ino = BPF_CORE_READ(ino, i_ino);
	k->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	if (bpf_core_field_exists(ino->i_ctime_sec)) {
		k->ctime_sec = BPF_CORE_READ(ino, i_ctime_sec);
		k->ctime_nsec = BPF_CORE_READ(ino, i_ctime_nsec) & CFI_CTIME_NSEC_MASK;
	} else if (bpf_core_field_exists(ino->__i_ctime)) {
		k->ctime_sec = BPF_CORE_READ(ino, __i_ctime.tv_sec);
		k->ctime_nsec = BPF_CORE_READ(ino, __i_ctime.tv_nsec);
	} else {
		k->ctime_sec = BPF_CORE_READ(ino, i_ctime.tv_sec);
		k->ctime_nsec = BPF_CORE_READ(ino, i_ctime.tv_nsec);
	}
}

/*
 * v: the mapping [start, end) of table t's file, whose address `vaddr` is
 * at start; false when the table's pcs, on 32 bits over the mapping, cannot
 * cover it (as lib/cfi_load's add_mapping()).
 */
static __always_inline bool cfi_vma_set(struct cfi_vma *v, const struct fg_cfi_inode *t,
					__u64 start, __u64 end, __u64 vaddr)
{
	__u64 sub = start - vaddr + t->base;

	if ((__s64)(end - 1 - sub) >= (__s64)0xffffffffu ||
	    (__s64)(start - sub) < -(__s64)0x7fffffff)
		return false;
	v->map.start = start;
	v->map.end = end;
	v->map.sub = sub;
	v->map.table = t->table;
	v->why = 0;
	return true;
}

static long cfi_vma_found(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	struct cfi_vma *v = arg;
	struct fg_cfi_inode_key k = {};
	const struct fg_cfi_inode *t;
	struct file *f = vma->vm_file;
	__u64 start = vma->vm_start, end = vma->vm_end, off = (__u64)vma->vm_pgoff << 12;

	/* (kept as a mapping without a table unless found below) */
	v->map.start = start;
	v->map.end = end;
	v->map.table = FG_CFI_TABLE_PENDING;
	if (!(vma->vm_flags & CFI_VM_EXEC))
		return 0; /* not code: the sample falls back */
	if (!f) {
#ifdef __TARGET_ARCH_x86
		/* the vdso has CFI, which its table brings: falls back until it is there */
		if (start == (__u64)BPF_CORE_READ(vma, vm_mm, context.vdso))
			return 0;
#endif
		/* anonymous code (JIT): walked by frame pointers, as the loader has it */
		v->map.table = FG_CFI_TABLE_FP;
		v->why = 0;
		return 0;
	}
	cfi_inode_key(f->f_inode, &k);
	t = bpf_map_lookup_elem(&cfi_inodes, &k);
	if (!t) {
		v->why = FG_CFI_STAT_FALLBACK_NOTABLE;
		return 0;
	}
	for (int i = 0; i < FG_CFI_INODE_LOADS; i++) {
		if (i >= t->nloads)
			break;
		if (off < t->loads[i].offset || off - t->loads[i].offset >= t->loads[i].filesz)
			continue;
		if (!cfi_vma_set(v, t, start, end, off - t->loads[i].offset + t->loads[i].vaddr))
			break;
		return 0;
	}
	v->why = FG_CFI_STAT_FALLBACK_NOTABLE;
	return 0;
}

/*
 * The executable's own code, found without the kernel's list: the address
 * space's start_code and end_code (its code segments, placed) and exe_file,
 * read without a lock as the kernel's /proc/PID/stat reads them, and the
 * table by the file's identity; the bias from where its code starts, as
 * the loader would have it from the mapping.  Spares a new process' walks
 * a lookup in the kernel's list (bpf_find_vma(): one a walk at most, some
 * 15 us each on this guest) for the file most of their frames are in.
 * Read with probe reads, not through the current task's trusted pointer:
 * the verifier searches the whole kernel BTF by name at each load through
 * one (whether the field is trusted), on every path it checks.
 */
static __always_inline bool cfi_exe_map(struct cfi_vma *v, __u64 pc)
{
	struct mm_struct *mm = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm);
	struct fg_cfi_inode_key k = {};
	const struct fg_cfi_inode *t;
	struct inode *ino;
	__u64 start, end;

	if (!mm)
		return false;
	start = BPF_CORE_READ(mm, start_code);
	end = BPF_CORE_READ(mm, end_code);
	if (pc < start || pc >= end)
		return false;
	ino = BPF_CORE_READ(mm, exe_file, f_inode);
	if (!ino)
		return false;
	cfi_inode_key(ino, &k);
	t = bpf_map_lookup_elem(&cfi_inodes, &k);
	if (!t || t->xvaddr == FG_CFI_NO_CODE || start < t->xvaddr)
		return false;
	return cfi_vma_set(v, t, start, end, t->xvaddr);
}

/*
 * st->map from the kernel's mapping holding pc: false (st->why set) when it
 * has no table.  One lookup a walk at most succeeds: in interrupt context
 * bpf_find_vma() leaves the address space's lock to an irq_work, which
 * runs once the interrupt is over, and refuses another lookup until then.
 * So the mappings found are kept a while for the next walks (vmaps).
 */
__noinline int cfi_vma_map(struct cfi_state *st, __u64 pc)
{
	struct cfi_vma v = {.why = FG_CFI_STAT_FALLBACK_NOVMA};
	struct cfi_vset *vs;
	const struct fg_cfi_file *f;
	bool exe;
	__u32 k;

	if (!st)
		return 0;
	vs = &st->vsets[st->vset & (CFI_VSETS - 1)];

	/*
	 * Not kept for the next walk (which looks the process' mappings up
	 * again): its table's slot could be another file's by then.
	 */
	st->gen = 0;
	for (int i = 0; i < CFI_VMA_KEEP; i++) {
		if (pc < vs->maps[i].start || pc >= vs->maps[i].end)
			continue;
		if (vs->maps[i].table == FG_CFI_TABLE_PENDING) {
			st->why = vs->gen[i];
			return false;
		}
		if (vs->maps[i].table == FG_CFI_TABLE_FP) {
			st->map = vs->maps[i];
			return true;
		}
		f = bpf_map_lookup_elem(&cfi_files, &vs->maps[i].table);
		if (!f || f->gen != vs->gen[i])
			break; /* its table gone since: looked up again */
		st->map = vs->maps[i];
		return true;
	}
	st->why = FG_CFI_STAT_FALLBACK_NOVMA;
	exe = cfi_exe_map(&v, pc);
	if (!exe) {
		if (st->vtried)
			return false; /* (another lookup would be refused) */
		st->vtried = 1;
		cfi_count(FG_CFI_STAT_VMA_LOOKUPS, 1);
		if (bpf_find_vma(bpf_get_current_task_btf(), pc, cfi_vma_found, &v, 0) < 0)
			return false; /* no mapping there, or its lock taken */
	}
	k = vs->next++ & (CFI_VMA_KEEP - 1);
	vs->maps[k] = v.map;
	vs->gen[k] = v.why;
	if (v.why) {
		st->why = v.why;
		return false;
	}
	if (v.map.table == FG_CFI_TABLE_FP) {
		st->map = v.map;
		return true;
	}
	f = bpf_map_lookup_elem(&cfi_files, &v.map.table);
	if (!f || !f->gen) {
		vs->maps[k].end = 0;
		st->why = FG_CFI_STAT_FALLBACK_GONE;
		return false;
	}
	st->map = v.map;
	vs->gen[k] = f->gen;
	cfi_count(exe ? FG_CFI_STAT_EXE_MAPS : FG_CFI_STAT_VMA_MAPS, 1);
	return true;
}

/*
 * A walk fell back, and the process' mappings are not in the maps, or are no
 * longer its own (an exec), or the code is in a mapping they lack (a library
 * opened since): the sample wakes fg-sample to read them now rather than at
 * its next tick, 20 ms on (a new process' first milliseconds are the
 * fallbacks of a busy machine).  Once in CFI_ASK_NS on a CPU for a process,
 * unless it was marked stale again since (mtime: its exec); after
 * CFI_ASK_TRIES asks that changed nothing (code in no file), once in
 * CFI_ASK_SLOW_NS.
 */
static __always_inline void cfi_ask(struct cfi_state *st, struct ustack_copy *c, __u32 pid)
{
	struct cfi_asked *a = &st->asks[pid & (CFI_ASKS - 1)];
	__u64 now = c->ev.time_ns;

	if (a->pid != pid || a->mtime != st->mtime)
		a->n = 0;
	else if (now - a->ns < (a->n < CFI_ASK_TRIES ? CFI_ASK_NS : CFI_ASK_SLOW_NS))
		return;
	a->pid = pid;
	a->ns = now;
	a->mtime = st->mtime;
	a->n++;
	c->ev.flags |= FG_SAMPLE_F_CFI_ASK;
}

static __always_inline long cfi_end(struct cfi_state *st, __u32 why)
{
	st->end = why;
	return 1;
}

static __always_inline __u32 cfi_end_of(int res)
{
	switch (res) {
	case FG_CFI_END_STOP:
		return FG_CFI_STAT_END_STOP;
	case FG_CFI_END_INVALID:
		return FG_CFI_STAT_END_INVALID;
	case FG_CFI_END_NOREG:
		return FG_CFI_STAT_END_NOREG;
	case FG_CFI_END_TRUNCATED:
	case FG_CFI_END_UNREADABLE:
		return FG_CFI_STAT_END_UNREAD;
	default:
		return FG_CFI_STAT_END_NOINFO;
	}
}

/*
 * A rule applied: fg_cfi_step() as a global function of its own, which the
 * verifier checks once, apart from the lookups before it.  Inlined in
 * cfi_step_one(), its paths were checked again for each way the lookups could
 * end: 72,000 instructions verified in all, 25,000 now, half the kernel's
 * time at the start.
 */
__noinline int cfi_apply(const struct fg_cfi_rule *rule, struct fg_cfi_regs *g, struct walk *w,
			 struct ustack_copy *c)
{
	struct cfi_mem mem = {.w = w, .c = c};

	if (!rule || !g || !w || !c)
		return FG_CFI_END_INVALID;
	return fg_cfi_step(rule, g, &mem);
}

/*
 * One frame: the caller of the frame whose registers are in st (its pc
 * already in c's sample), as lib/unwind's fg_unwind() finds it; 0 to go on.
 * A global function, which the verifier checks once, for any arguments: as
 * a bpf_loop() callback itself, the step was checked again for each state
 * the loop could be in (some 76 times, 0.9 to 1.1 s of the kernel's time at
 * every start).  Called from a plain bounded loop, not from a bpf_loop()
 * callback (which must be static: a second call and return each frame, and
 * a return costs a safe-RET thunk on this AMD guest: 0.83 to 0.93 times the
 * cost a sample, README).
 */
__noinline int cfi_step_one(struct walk *w, struct ustack_copy *c, struct cfi_state *st)
{
	const struct fg_cfi_rule *rule = NULL;
	const struct fg_cfi_map *m;
	struct cfi_mem mem;
	struct fg_cfi_regs *g;
	__u64 pc, look, rsp;
	__u32 nu, idx;
	int res;

	/* (memory of the arguments' types' sizes, or NULL, as the verifier sees them) */
	if (!w || !c || !st)
		return 1;
	nu = w->nu;
	idx = w->nk + nu;
	g = &st->g;
	pc = g->r[FG_CFI_RIP];
	rsp = g->r[FG_CFI_RSP];
	look = st->exact ? pc : pc - 1;
	if (look < st->map.start || look >= st->map.end) {
		struct fg_cfi_map last = st->map;

		if (look >= st->prev.start && look < st->prev.end) {
			st->map = st->prev;
		} else {
			m = cfi_find_map(st, st->pid, look);
			if (m && m->table != FG_CFI_TABLE_PENDING) {
				st->map = *m;
			} else if (!cfi_vma_map(st, look)) {
				/* (a table pending: being built, or over a limit) */
				if (m)
					st->why = FG_CFI_STAT_FALLBACK_PENDING;
				return cfi_end(st, FG_CFI_STAT_FALLBACK);
			}
		}
		st->prev = last;
	}
	m = &st->map; /* (never FG_CFI_TABLE_PENDING) */
	mem.w = w;
	mem.c = c;
	if (m->table != FG_CFI_TABLE_FP) {
		bool gone = false;

		rule = cfi_find_rule(st, m->table, (__u32)(look - m->sub), nu, &gone);
		if (gone) {
			st->why = FG_CFI_STAT_FALLBACK_GONE;
			return cfi_end(st, FG_CFI_STAT_FALLBACK);
		}
	}
	if (rule) {
		res = cfi_apply(rule, g, w, c);
	} else if ((g->valid & FG_CFI_BIT(FG_CFI_RBP)) && !g->r[FG_CFI_RBP]) {
		/* a frame pointer of zero: the outermost frame, or not known */
		return cfi_end(st, fg_cfi_rbp0_outermost(m->table != FG_CFI_TABLE_FP, st->exact)
				       ? FG_CFI_STAT_END_STOP
				       : FG_CFI_STAT_END_NOINFO);
	} else if (m->table != FG_CFI_TABLE_FP && !(g->valid & FG_CFI_BIT(FG_CFI_RBP))) {
		return cfi_end(st, FG_CFI_STAT_END_NOINFO);
	} else {
		res = fg_cfi_step_fp(g, &mem);
		cfi_count(FG_CFI_STAT_FP_FRAMES, 1);
	}
	if (res == FG_CFI_OK_EXACT) {
		if (g->r[FG_CFI_RSP] == rsp && g->r[FG_CFI_RIP] == pc)
			return cfi_end(st, FG_CFI_STAT_END_LOOP);
	} else if (res != FG_CFI_OK) {
		return cfi_end(st, cfi_end_of(res));
	} else if (g->r[FG_CFI_RSP] <= rsp) {
		return cfi_end(st, FG_CFI_STAT_END_LOOP);
	}
	st->exact = res == FG_CFI_OK_EXACT;
	if (!g->r[FG_CFI_RIP])
		return cfi_end(st, FG_CFI_STAT_END_NOINFO); /* a return address of zero */
	if (nu >= user_depth || idx >= 2 * MAX_STACK_DEPTH)
		return cfi_end(st, FG_CFI_STAT_END_DEPTH);
	barrier_var(idx);
	c->ev.ips[idx & 255] = g->r[FG_CFI_RIP];
	w->nu = nu + 1;
	return 0;
}

/*
 * Unwind the user stack of the task whose registers are `regs`, its leaf pc
 * already at c->ev.ips[w->nk] (w->nu 1), in the state `which`
 * (CFI_STATE_*): true with the frames in the sample, false when the sample
 * must fall back to a snapshot.
 */
static __always_inline bool cfi_walk(struct pt_regs *regs, struct ustack_copy *c, struct walk *w,
				     __u32 pid, __u32 which)
{
	struct cfi_state *st = bpf_map_lookup_elem(&cfi_state, &which);
	const struct fg_cfi_proc *p;
	const struct cfi_mapped *mapped;
	__u64 ver;
	bool same;

	if (!st)
		return false;
	/* read in place, as walk_user() reads them */
	st->g.r[FG_CFI_RIP] = PT_REGS_IP(regs);
	st->g.r[FG_CFI_RSP] = PT_REGS_SP(regs);
	st->g.r[FG_CFI_RBP] = PT_REGS_FP(regs);
#ifdef __TARGET_ARCH_x86
	/*
	 * The leaf's every register, in DWARF's order, as a snapshot has them: a
	 * rule may take the CFA from another one (gcc's realigned frames, from
	 * r10 in their prologue); a step keeps only those it restores
	 */
	st->g.r[0] = regs->ax;
	st->g.r[1] = regs->dx;
	st->g.r[2] = regs->cx;
	st->g.r[FG_CFI_RBX] = regs->bx;
	st->g.r[4] = regs->si;
	st->g.r[5] = regs->di;
	st->g.r[8] = regs->r8;
	st->g.r[9] = regs->r9;
	st->g.r[10] = regs->r10;
	st->g.r[11] = regs->r11;
	st->g.r[12] = regs->r12;
	st->g.r[13] = regs->r13;
	st->g.r[14] = regs->r14;
	st->g.r[15] = regs->r15;
	st->g.valid = (1u << FG_CFI_NREGS) - 1;
#else
	st->g.valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP) | FG_CFI_BIT(FG_CFI_RBP);
#endif
	/* the version first, then the maps: a write after the lookups bumps it after this read */
	ver = *(volatile __u64 *)&cfi_procs_ver;
	barrier();
	same = st->pid == pid;
	if (!same || st->pver != ver + 1) {
		p = bpf_map_lookup_elem(&cfi_procs, &pid);
		mapped = bpf_map_lookup_elem(&cfi_mapped, &pid);
		st->hasp = p != NULL;
		st->pgen = p ? p->gen : 0;
		st->mtime = mapped ? mapped->time : 0;
		/* mapped over since its mappings were loaded: those there are not its own */
		st->stale = p && mapped && mapped->time > p->since;
		if (st->stale) {
			st->sstart = mapped->start;
			st->send = mapped->end;
		}
		st->pver = ver + 1;
	}
	if (st->stale)
		cfi_count(FG_CFI_STAT_STALE, 1);
	if (!st->hasp || !same || st->gen != st->pgen) {
		st->map.end = 0;
		st->prev.end = 0;
	}
	if (cfi_map_stale(st, &st->map))
		st->map.end = 0;
	if (cfi_map_stale(st, &st->prev))
		st->prev.end = 0;
	st->pid = pid;
	st->gen = st->pgen;
	/* the mappings found in the kernel's list: of this address space, lately, since it changed
	 */
	{
		__u64 mm = (__u64)BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm);
		__u64 now = c->ev.time_ns;
		struct cfi_vset *vs = &st->vsets[pid & (CFI_VSETS - 1)];

		if (vs->pid != pid || vs->mm != mm || now - vs->time > CFI_VMA_NS ||
		    (st->mtime && st->mtime >= vs->time)) {
			for (int i = 0; i < CFI_VMA_KEEP; i++)
				vs->maps[i].end = 0;
			vs->pid = pid;
			vs->mm = mm;
			vs->time = now;
		}
		st->vset = pid & (CFI_VSETS - 1);
		st->vtried = 0;
	}
	st->exact = 1;
	st->tuse = 1;
	st->last = 0;
	st->end = FG_CFI_STAT_END_DEPTH;
	/* (127 iterations of a call: the verifier checks the step once, not in each) */
	for (__u32 i = 0; i < MAX_STACK_DEPTH; i++)
		if (cfi_step_one(w, c, st))
			break;
	if (st->end == FG_CFI_STAT_FALLBACK) {
		cfi_count(FG_CFI_STAT_FALLBACK, 1);
		cfi_count(st->why, 1);
		if (!st->hasp)
			cfi_count(FG_CFI_STAT_FALLBACK_NOPROC, 1);
		w->nu = 1;
		c->ev.flags |= FG_SAMPLE_F_CFI_FALLBACK;
		if (!st->hasp || st->stale || st->why == FG_CFI_STAT_FALLBACK_NOTABLE ||
		    st->why == FG_CFI_STAT_FALLBACK_NOVMA)
			cfi_ask(st, c, pid);
		return false;
	}
	cfi_count(FG_CFI_STAT_WALKS, 1);
	cfi_count(FG_CFI_STAT_FRAMES, w->nu);
	cfi_count(st->end, 1);
	c->ev.flags |= FG_SAMPLE_F_USTACK_CFI;
	if (st->end != FG_CFI_STAT_END_STOP)
		c->ev.flags |= FG_SAMPLE_F_USTACK_CUT;
	return true;
}

/*
 * Process pid's mappings in [start, end) made stale from now on (p: its
 * entry in cfi_procs, if any); with those of a mark its entry does not
 * cover yet, if any (the two ranges' hull: a few more walks through the
 * kernel's list, never a stale mapping taken).
 */
static __always_inline void cfi_stale_now(__u32 pid, const struct fg_cfi_proc *p, __u64 start,
					  __u64 end)
{
	const struct cfi_mapped *old = bpf_map_lookup_elem(&cfi_mapped, &pid);
	struct cfi_mapped v = {bpf_ktime_get_ns(), start, end};

	if (old && (!p || old->time > p->since)) {
		v.start = old->start < start ? old->start : start;
		v.end = old->end > end ? old->end : end;
	}
	bpf_map_update_elem(&cfi_mapped, &pid, &v, BPF_ANY);
	/* after the write (which may evict another process' entry too): the walks look again */
	__sync_fetch_and_add(&cfi_procs_ver, 1);
}

/*
 * A process execs: its mappings in cfi_procs (or a forked one's copy of its
 * parent's, should that come later) are no longer its own.  Before the exec
 * record that fg-sample's loader reads.  Raw tracepoints, not tp_btf: libbpf
 * attaches those by name, where a tp_btf program would have it read the
 * kernel's whole BTF at every start (fg/minbtf.h).
 */
SEC("raw_tp/sched_prepare_exec")
int BPF_PROG(fg_cfi_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	cfi_stale_now(pid, bpf_map_lookup_elem(&cfi_procs, &pid), 0, ~0ull);
	return 0;
}

/*
 * The kernel found room for a new mapping of the current process (an mmap
 * without MAP_FIXED: a library's first, which its segments then fill): when
 * over one of its mappings in cfi_procs (code unmapped since, maybe another
 * file's coming at the same pcs, as dlclose then dlopen does), the mappings
 * there are stale from now on, until fg-sample loads those of a later
 * record.
 */
SEC("raw_tp/vm_unmapped_area")
int BPF_PROG(fg_cfi_mmap, unsigned long addr, struct vm_unmapped_area_info *info)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	const struct fg_cfi_proc *p = bpf_map_lookup_elem(&cfi_procs, &pid);
	struct cfi_search s = {.p = p};
	const struct fg_cfi_map *m;
	__u64 len = BPF_CORE_READ(info, length);

	if (!p || p->n > FG_CFI_PROC_MAPS || addr >= (__u64)-4095 || !len)
		return 0; /* (a failure: an error number) */
	/* the last mapping starting below the new one's end: the only one that can overlap */
	s.pc = addr + len - 1;
	s.hi = p->n;
	bpf_loop(FG_CFI_PROC_MAPS_LOG + 1, cfi_map_halve, &s, 0);
	if (s.lo == 0 || s.lo > FG_CFI_PROC_MAPS)
		return 0;
	m = &p->maps[(s.lo - 1) & (FG_CFI_PROC_MAPS - 1)];
	if (m->end > addr)
		cfi_stale_now(pid, p, addr, addr + len);
	return 0;
}
