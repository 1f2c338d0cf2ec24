// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fg/bigmem.h"
#include "fg/bpfsyms.h"
#include "fg/buf.h"
#include "fg/cfi.h"
#include "fg/debugfile.h"
#include "fg/debuginfod.h"
#include "fg/demangle.h"
#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/escape.h"
#include "fg/hash.h"
#include "fg/ksyms.h"
#include "fg/perfmap.h"
#include "fg/procmaps.h"
#include "fg/safeio.h"
#include "fg/sideband.h"
#include "fg/pysplice.h"
#include "fg/symbolize.h"
#include "fg/unwind_dw.h"
#include "fg/util.h"

const char *const fg_unnamed_reasons[FG_UNNAMED_COUNT] = {
    [FG_UNNAMED_NOSYMS] = "no symbols",	    [FG_UNNAMED_NOFILE] = "no file",
    [FG_UNNAMED_GONE] = "process gone",	    [FG_UNNAMED_NOMAP] = "no mapping",
    [FG_UNNAMED_NOJIT] = "no JIT map",	    [FG_UNNAMED_CHANGED] = "file changed",
    [FG_UNNAMED_NOID] = "no file identity", [FG_UNNAMED_DITIMEOUT] = "debuginfo timed out",
};

const char *const fg_sym_unwinder_names[FG_SYM_UNWIND_COUNT] = {
    [FG_SYM_UNWIND_TABLE] = "table",
    [FG_SYM_UNWIND_LIBDW] = "libdw",
    [FG_SYM_UNWIND_NONE] = "none",
};

const char *const fg_nosrc_reasons[FG_NOSRC_COUNT] = {
    [FG_NOSRC_NODWARF] = "no DWARF",
    [FG_NOSRC_TOOBIG] = "DWARF over the size limit",
    [FG_NOSRC_CORRUPT] = "corrupt DWARF",
    [FG_NOSRC_SPLIT] = "split DWARF",
    [FG_NOSRC_NOSUP] = "no supplementary DWARF file",
    [FG_NOSRC_NOLINE] = "no line there",
};

/* Bounds */
#define PROCMAPS_MAX (64u << 20) /* bytes of one /proc/PID/maps */
#define PERFMAP_MAX (64u << 20)	 /* bytes of one perf-PID.map */
#define RECHECK_MS 50		 /* a miss re-reads /proc maps or a perf map at most this often */
#define EXITED_KEEP 256		 /* exited processes whose mappings are kept (late samples) */
#define MAPS_PER_PROC_MAX 65536u /* mappings kept per process */
#define MEMO_SLOTS (1u << 16)	 /* frames remembered as text */
#define MEMO_TEXT_MAX 4096u	 /* longer frame lines are not remembered */
#define HELD_MAX (64u << 20)	 /* bytes of samples held back for debuginfod */
#define CHAIN_FRAMES_MAX 256u	 /* longer chains of callers are not remembered */
#define HDR_BITS 4 /* 1 << HDR_BITS headers' beginnings remembered, by thread and CPU */
#ifndef FG_FUZZING
#define CHAIN_SLOTS 4096u	    /* callers of unwound stacks remembered as text */
#define CHAIN_BYTES_MAX (32u << 20) /* all chains remembered together */
#else /* small, so that the fuzzer replaces chains and reaches the bound */
#define CHAIN_SLOTS 4u
#define CHAIN_BYTES_MAX 2048u
#endif

enum map_kind {
	MAP_FILE,
	MAP_ANON, /* anonymous memory: JIT code, named by perf-PID.map */
	MAP_VDSO,
	MAP_SPECIAL, /* [vsyscall] and other pseudo-files */
};

struct dso {
	struct fg_elfsyms *elf;
	char *prefix; /* where the file was found: "", symfs or a process root */
	char *path;   /* the path as mapped */
	struct fg_dwarf *dwarf;
	enum fg_nosrc nosrc; /* why dwarf is NULL */
	bool dbgi_pending;   /* its debug file is being fetched (debuginfod) */
	bool dbgi_timedout;  /* ... and did not come in time */
	bool dbgi_named;     /* its symbols are from a debug file fetched */
	struct fg_cfi *cfi;  /* its unwind table, once cfi_tried */
	int cfi_err;	     /* why cfi is NULL: -ENODATA (no CFI at all: frame pointers), ... */
	bool cfi_tried;
};

struct map {
	uint64_t id; /* never reused: names memo entries (see struct memo) */
	uint64_t start, end, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint8_t build_id[FG_BUILD_ID_MAX];
	size_t build_id_len;
	char *path;
	enum map_kind kind;
	bool resolved;
	enum fg_unnamed fail; /* when resolved without a dso */
	struct dso *dso;
	/* unwinding: pcs in [uw_lo, uw_hi) are in one segment of the file, at pc - uw_bias */
	uint64_t uw_lo, uw_hi, uw_bias;
};

struct jit {
	struct fg_perfmap *pm;
	char *base;	   /* the directory it is found under: a process root, --symfs, "/" */
	char *rel;	   /* its path below base, "tmp/perf-PID.map", no link followed */
	char *shown;	   /* the module shown: /tmp/perf-PID.map */
	uint64_t consumed; /* bytes parsed */
	struct fg_buf partial;
	dev_t dev;
	ino_t ino;
	uint64_t last_check_ms;
	uint64_t bad_lines;
	bool cut; /* over the bound of all maps together: counted once */
};

/* An address space: a process between two execs. */
struct space {
	struct map *maps; /* sorted, no overlaps */
	size_t nmaps, alloc;
	size_t hint; /* the index space_find found last (checked before it is used) */
};

struct proc {
	uint32_t pid;
	struct space cur;
	struct space old; /* before the last exec, for samples taken before it */
	uint64_t exec_ns; /* time of the last exec */
	bool from_stream; /* the stream recorded mappings for it */
	bool exited;	  /* the stream recorded its exit (or exec: see below) */
	bool gone;	  /* /proc no longer has it */
	bool procmaps_read;
	uint64_t procmaps_ms;
	struct jit *jit;
	bool jit_tried;
	struct fg_unwind_dw *dw; /* --unwinder libdw: its Dwfl, of the mappings of cur */
	uint64_t space_id;	 /* new at each change of its mappings: frames unwound are
				    cached under it (never 0, never reused) */
	bool creds_known;	 /* uid and gid from the stream */
	uint32_t uid, gid;
	size_t counted;		    /* mappings counted in maps_total */
	struct proc *hnext;	    /* the next of its hash bucket */
	struct proc *newer, *older; /* the order of use, for eviction */
};

/*
 * A frame as text, remembered by who owns the address (a mapping's id, or 0
 * for the kernel), the address, and whether it is the leaf: the same frame
 * comes back in sample after sample, and naming and formatting it again cost
 * more than the rest of the sample.  One slot a hash, the newest wins: the
 * memory is fixed, whatever the number of samples.
 */
struct memo {
	uint64_t owner, ip;
	char *text; /* NULL: an empty slot */
	uint32_t len;
	int8_t why; /* the enum fg_unnamed reason, or -1 when named */
	bool leaf;
	bool dbgi; /* named by a debug file fetched */
	bool bpf;  /* named by a ksym record */
};

/*
 * The callers of an unwound stack (its frames but the leaf) as text, when
 * each is a frame of a resolved file's mapping (fg_unwind_frame.tag): the
 * same callers come back in sample after sample, under leaves that vary.
 * Remembered by the frames themselves (mapping ids are never reused, so
 * their text never changes), one chain a slot, the newest wins, all
 * together within CHAIN_BYTES_MAX.
 */
struct chain {
	uint64_t hash;
	struct fg_unwind_frame *frames; /* n, then the text, in one allocation */
	const char *text;
	uint32_t n, len;
	uint32_t named; /* frames named, and the others by reason */
	uint32_t unnamed[FG_UNNAMED_COUNT];
	bool listed; /* in chains_used */
};

/*
 * A part of a sample's header, and what it is made of: its numbers, then
 * for each of two strings a byte saying whether it is there and the string
 * with its NUL.
 */
struct hdr_memo {
	char key[192];
	uint16_t a_len; /* the first string's length in key */
	uint16_t len;	/* of text; 0: none */
	char text[512];
};

/* A frame of a held sample, waiting for its file's debug file. */
struct hole {
	size_t at;    /* where its text goes in the sample's text */
	struct map m; /* the mapping as it was (m.path is the hole's) */
	uint64_t ip;
	uint32_t flags; /* FG_UNWIND_F_* */
};

/* A sample held back (fg_sym_opts.debuginfod), its frames named but the holes. */
struct held {
	char *text;
	size_t len;
	struct hole *holes;
	size_t nholes;
	struct held *next;
};

struct fg_symbolizer {
	struct fg_sym_opts o;
	struct fg_pysplice *py; /* Python frames: their names, spliced into the stacks */
	struct fg_big memo_mem;
	struct memo *memo;   /* MEMO_SLOTS, in memo_mem; NULL when frames vary (--inline) */
	uint32_t *memo_used; /* the slots ever filled: freed without touching the others */
	size_t nmemo_used, memo_used_alloc;
	struct chain *chains;  /* CHAIN_SLOTS, with memo */
	uint32_t *chains_used; /* the slots ever filled, as memo_used */
	size_t nchains_used, chains_used_alloc;
	size_t chain_bytes;
	/*
	 * The processes known, by pid, and in the order of their last event or
	 * sample: beyond FG_SYM_PROCS_MAX the one unused the longest is forgotten.
	 */
	struct proc **pbuckets;
	size_t npbuckets, nprocs;
	size_t maps_total;		 /* mappings kept, all processes together */
	uint64_t jit_bytes, jit_entries; /* read from JIT maps, all together (FG_SYM_JIT_*_MAX) */
	struct proc *newest, *oldest;
	struct fg_hash *dsos; /* identity key -> struct dso * */
	struct dso **all_dsos;
	size_t ndsos, dsos_alloc;
	struct proc *last_proc;
	struct fg_ksyms *ksyms;
	bool ksyms_tried;
	/*
	 * The kernel's BPF code the stream named (ksym records), and a count of
	 * its changes: the owner of kernel frames in the memo, so that none
	 * named before a change is used after it
	 */
	struct fg_bpfsyms *bpf;
	uint64_t kgen;
	int cache_fd;		 /* the kernel symbol cache's directory, or -1 (-2: refused) */
	bool cache_tried;	 /* cache_fd tried with create */
	struct fg_kstamp kstamp; /* the running kernel's, when kstamp_ok */
	bool kstamp_ok;
	struct dso *vdso;
	bool vdso_tried;
	const void *vdso_image; /* the running kernel's vdso, in this process */
	size_t vdso_size;
	bool unwinding; /* snapshots came: read unwind tables along with symbols */
	struct fg_unwind_frame *uw_frames; /* FG_SYM_UNWIND_MAX each, once unwinding */
	struct fg_unwind_cache *uw_cache;  /* rules looked up (tables live as long as s) */
	uint32_t *uw_flags;
	uint64_t uw_space;    /* the space_id of uw_proc the frames were found in (0: none) */
	struct proc *uw_proc; /* the process of the snapshot unwound last */
	uint32_t *exited;     /* ring of exited pids */
	size_t exited_head, exited_n;
	struct fg_sym_stats st;
	struct held *held, *held_tail; /* oldest first */
	size_t nheld, held_bytes;
	struct hole *holes; /* of the sample being named */
	size_t nholes, holes_alloc;
	struct map *defer_map; /* set by name_frame when it defers a frame */
	struct fg_buf out;
	struct fg_buf tmp;
	/*
	 * The header before the time, 1 << HDR_BITS of them by a hash of the pid,
	 * tid and CPU (threads take turns on CPUs), and after the time
	 */
	struct hdr_memo hdr_ids[1u << HDR_BITS], hdr_rest;
	uint64_t sec;	 /* the seconds of the last sample's time, */
	uint8_t sec_len; /* as text: sec_text[0..sec_len); 0: none yet */
	char sec_text[24];
	struct fg_rec_evnames *events; /* the names of the stream's events */
	char name_buf[PATH_MAX + 64];
	char perfmap_name[64];
};

static void warn(struct fg_symbolizer *s, const char *fmt, ...) FG_PRINTF(2, 3);
static void warn(struct fg_symbolizer *s, const char *fmt, ...)
{
	char msg[PATH_MAX + 256], safe[2 * PATH_MAX];
	va_list ap;

	if (!s->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the paths in messages come from the stream: no terminal controls, one line */
	s->o.warn(s->o.warn_arg, fg_escape(msg, safe, sizeof(safe)));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct fg_symbolizer *fg_symbolizer_new(const struct fg_sym_opts *opts)
{
	struct fg_symbolizer *s = fg_xcalloc(1, sizeof(*s));

	s->o = *opts;
	if (!s->o.kallsyms)
		s->o.kallsyms = "/proc/kallsyms";
	if (!s->o.proc_root)
		s->o.proc_root = "/proc";
	s->npbuckets = 256;
	s->pbuckets = fg_xcalloc(s->npbuckets, sizeof(*s->pbuckets));
	s->dsos = fg_hash_new(256);
	s->exited = fg_xcalloc(EXITED_KEEP, sizeof(*s->exited));
	s->cache_fd = -1;
	s->events = fg_rec_evnames_new();
	s->py = fg_pysplice_new(s->o.py_lines);
	if (!s->o.inline_frames && !s->o.srcline) {
		/*
		 * a slot a frame, by hash, so scattered: in one huge page where
		 * the kernel gives one (a 4-second capture of a busy program
		 * touched some 180 pages of 4 KiB, a fault each)
		 */
		fg_big_grow(&s->memo_mem, MEMO_SLOTS * sizeof(*s->memo));
		s->memo = s->memo_mem.p;
		s->chains = fg_xcalloc(CHAIN_SLOTS, sizeof(*s->chains));
	}
	return s;
}

static void dso_free(struct dso *d)
{
	if (!d)
		return;
	fg_cfi_free(d->cfi);
	fg_elfsyms_free(d->elf);
	fg_dwarf_free(d->dwarf);
	free(d->prefix);
	free(d->path);
	free(d);
}

static void space_clear(struct space *sp)
{
	for (size_t i = 0; i < sp->nmaps; i++)
		free(sp->maps[i].path);
	sp->nmaps = 0;
}

static void space_release(struct space *sp)
{
	space_clear(sp);
	free(sp->maps);
	memset(sp, 0, sizeof(*sp));
}

/* single-threaded, like the rest of the symbolizer */
static uint64_t space_ids;

/*
 * The address space changed: frames unwound in it are looked up again, and
 * a Dwfl of it is made again when next needed.
 */
static void forget_dw(struct proc *p)
{
	p->space_id = ++space_ids;
	fg_unwind_dw_free(p->dw);
	p->dw = NULL;
}

static void maps_clear(struct proc *p)
{
	forget_dw(p);
	space_release(&p->cur);
	space_release(&p->old);
	p->exec_ns = 0;
}

static void jit_free(struct jit *j)
{
	if (!j)
		return;
	fg_perfmap_free(j->pm);
	free(j->base);
	free(j->rel);
	free(j->shown);
	fg_buf_release(&j->partial);
	free(j);
}

static void held_free(struct held *h)
{
	for (size_t i = 0; i < h->nholes; i++)
		free(h->holes[i].m.path);
	free(h->holes);
	free(h->text);
	free(h);
}

static void proc_free(struct proc *p)
{
	maps_clear(p);
	jit_free(p->jit);
	free(p);
}

void fg_symbolizer_free(struct fg_symbolizer *s)
{
	if (!s)
		return;
	fg_pysplice_free(s->py);
	for (struct proc *p = s->newest, *next; p; p = next) {
		next = p->older;
		proc_free(p);
	}
	free(s->pbuckets);
	for (size_t i = 0; i < s->ndsos; i++)
		dso_free(s->all_dsos[i]);
	free(s->all_dsos);
	fg_hash_free(s->dsos);
	fg_ksyms_free(s->ksyms);
	fg_bpfsyms_free(s->bpf);
	if (s->cache_fd >= 0)
		close(s->cache_fd);
	if (s->kstamp_ok)
		fg_kstamp_free(&s->kstamp);
	free(s->exited);
	while (s->held) {
		struct held *h = s->held;

		s->held = h->next;
		held_free(h);
	}
	free(s->holes);
	free(s->uw_frames);
	free(s->uw_cache);
	free(s->uw_flags);
	fg_buf_release(&s->out);
	fg_buf_release(&s->tmp);
	fg_rec_evnames_free(s->events);
	for (size_t i = 0; i < s->nmemo_used; i++)
		free(s->memo[s->memo_used[i]].text);
	free(s->memo_used);
	for (size_t i = 0; i < s->nchains_used; i++)
		free(s->chains[s->chains_used[i]].frames);
	free(s->chains_used);
	free(s->chains);
	fg_big_free(&s->memo_mem);
	free(s);
}

static struct proc **bucket(const struct fg_symbolizer *s, uint32_t pid)
{
	return &s->pbuckets[(pid * 0x9e3779b1u) & (s->npbuckets - 1)];
}

static void lru_unlink(struct fg_symbolizer *s, struct proc *p)
{
	*(p->newer ? &p->newer->older : &s->newest) = p->older;
	*(p->older ? &p->older->newer : &s->oldest) = p->newer;
	p->newer = p->older = NULL;
}

static void lru_push(struct fg_symbolizer *s, struct proc *p)
{
	p->older = s->newest;
	p->newer = NULL;
	*(s->newest ? &s->newest->newer : &s->oldest) = p;
	s->newest = p;
}

/* The process `pid` if known, or NULL. */
static struct proc *lookup_proc(const struct fg_symbolizer *s, uint32_t pid)
{
	struct proc *p;

	for (p = *bucket(s, pid); p && p->pid != pid; p = p->hnext)
		;
	return p;
}

/* The same, and it becomes the most recently used. */
static struct proc *find_proc(struct fg_symbolizer *s, uint32_t pid)
{
	struct proc *p;

	if (s->last_proc && s->last_proc->pid == pid)
		return s->last_proc; /* already the newest */
	p = lookup_proc(s, pid);
	if (p && p != s->newest) {
		lru_unlink(s, p);
		lru_push(s, p);
	}
	if (p)
		s->last_proc = p;
	return p;
}

/*
 * Forget the process unused the longest: its mappings go, so that memory is
 * bounded by FG_SYM_PROCS_MAX processes whatever the number of pids in the
 * stream.  A later sample of it is named from /proc, if it is still there.
 */
static void evict_oldest(struct fg_symbolizer *s)
{
	struct proc *p = s->oldest, **pp;

	for (pp = bucket(s, p->pid); *pp != p; pp = &(*pp)->hnext)
		;
	*pp = p->hnext;
	lru_unlink(s, p);
	if (s->last_proc == p)
		s->last_proc = NULL;
	s->nprocs--;
	s->maps_total -= p->counted;
	s->st.evicted++;
	proc_free(p);
}

/*
 * Count the mappings p holds now, then forget the processes unused the
 * longest (never p) while all hold more than FG_SYM_MAPS_MAX: forks copy
 * their parent's mappings, so pids that never exit would otherwise fill
 * the memory.
 */
static void recount(struct fg_symbolizer *s, struct proc *p)
{
	size_t now = p->cur.nmaps + p->old.nmaps;

	s->maps_total = s->maps_total - p->counted + now;
	p->counted = now;
	while (s->maps_total > FG_SYM_MAPS_MAX && s->oldest && s->oldest != p)
		evict_oldest(s);
}

static struct proc *get_proc(struct fg_symbolizer *s, uint32_t pid)
{
	struct proc *p = find_proc(s, pid), **b;

	if (p)
		return p;
	if (s->nprocs >= FG_SYM_PROCS_MAX)
		evict_oldest(s);
	if (s->nprocs >= s->npbuckets && s->npbuckets < FG_SYM_PROCS_MAX) {
		/* grow the index (the list of all holds them in order) */
		free(s->pbuckets);
		s->npbuckets *= 2;
		s->pbuckets = fg_xcalloc(s->npbuckets, sizeof(*s->pbuckets));
		for (struct proc *q = s->newest; q; q = q->older) {
			b = bucket(s, q->pid);
			q->hnext = *b;
			*b = q;
		}
	}
	p = fg_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->space_id = ++space_ids;
	b = bucket(s, pid);
	p->hnext = *b;
	*b = p;
	lru_push(s, p);
	s->nprocs++;
	s->last_proc = p;
	return p;
}

static enum map_kind kind_of(const char *path)
{
	if (!*path || fg_starts_with(path, "[anon") || fg_starts_with(path, "//anon") ||
	    strcmp(path, "[heap]") == 0 || strcmp(path, "[stack]") == 0)
		return MAP_ANON;
	if (strcmp(path, "[vdso]") == 0)
		return MAP_VDSO;
	if (path[0] == '[')
		return MAP_SPECIAL;
	if (path[0] != '/') /* "/memfd:..." is a file of sorts; a relative name is not */
		return MAP_SPECIAL;
	return MAP_FILE;
}

/* single-threaded, like the rest of the symbolizer */
static uint64_t map_ids;

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Add a mapping as the kernel would: whatever it covers of older mappings is
 * replaced, so the array stays sorted and free of overlaps.
 */
static void add_map(struct space *p, const struct fg_sym_mapping *m)
{
	struct map nm;
	size_t n = p->nmaps;

	if (m->end <= m->start)
		return;
	for (size_t i = 0; i < n; i++) {
		struct map *o = &p->maps[i];

		if (o->end <= m->start || o->start >= m->end)
			continue;
		if (o->start < m->start && o->end > m->end) {
			/* the new one splits an old one in two */
			struct map tail = *o;

			tail.path = fg_xstrdup(o->path);
			tail.id = ++map_ids;
			tail.pgoff += m->end - o->start;
			tail.start = m->end;
			o->end = m->start;
			FG_ALLOC_GROW(p->maps, p->nmaps + 1, p->alloc);
			p->maps[p->nmaps++] = tail;
			continue;
		}
		if (o->start < m->start) {
			o->end = m->start;
		} else if (o->end > m->end) {
			o->pgoff += m->end - o->start;
			o->start = m->end;
		} else {
			o->end = o->start; /* covered whole: dropped below */
		}
	}
	/* compact away the emptied ones */
	size_t w = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].end > p->maps[i].start)
			p->maps[w++] = p->maps[i];
		else
			free(p->maps[i].path);
	}
	p->nmaps = w;
	if (p->nmaps >= MAPS_PER_PROC_MAX)
		return;
	memset(&nm, 0, sizeof(nm));
	nm.id = ++map_ids;
	nm.start = m->start;
	nm.end = m->end;
	nm.pgoff = m->pgoff;
	nm.dev_major = m->dev_major;
	nm.dev_minor = m->dev_minor;
	nm.inode = m->inode;
	if (m->build_id_len && m->build_id_len <= FG_BUILD_ID_MAX) {
		memcpy(nm.build_id, m->build_id, m->build_id_len);
		nm.build_id_len = m->build_id_len;
	}
	nm.path = fg_xstrdup(m->path ? m->path : "");
	nm.kind = kind_of(nm.path);
	FG_ALLOC_GROW(p->maps, p->nmaps + 1, p->alloc);
	p->maps[p->nmaps++] = nm;
	qsort(p->maps, p->nmaps, sizeof(*p->maps), cmp_map);
}

void fg_symbolizer_mapping(struct fg_symbolizer *s, const struct fg_sym_mapping *m)
{
	struct proc *p = get_proc(s, m->pid);

	if (p->exited) {
		/* a new process under a pid seen to exit: start afresh */
		maps_clear(p);
		p->exited = false;
		p->gone = false;
		jit_free(p->jit);
		p->jit = NULL;
		p->jit_tried = false;
		p->creds_known = false;
	}
	p->from_stream = true;
	forget_dw(p);
	/* a mapping made before the last exec belongs to the old program */
	add_map(p->old.nmaps && m->time_ns && m->time_ns < p->exec_ns ? &p->old : &p->cur, m);
	recount(s, p);
}

void fg_symbolizer_exec(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns)
{
	struct proc *p = get_proc(s, pid);

	/*
	 * A new program, a new address space.  Samples of the old program may
	 * still come (they travel apart from the exec record): the old space is
	 * kept for samples older than the exec.
	 */
	space_release(&p->old);
	p->old = p->cur;
	memset(&p->cur, 0, sizeof(p->cur));
	forget_dw(p);
	p->exec_ns = time_ns;
	p->exited = false;
	p->gone = false;
	p->from_stream = true;
	p->procmaps_read = false;
	/* a set-user-ID program runs as another user: a creds record follows if known */
	p->creds_known = false;
	recount(s, p);
}

void fg_symbolizer_creds(struct fg_symbolizer *s, uint32_t pid, uint32_t uid, uint32_t gid)
{
	struct proc *p = get_proc(s, pid);

	p->creds_known = true;
	p->uid = uid;
	p->gid = gid;
}

void fg_symbolizer_fork(struct fg_symbolizer *s, uint32_t pid, uint32_t ppid)
{
	struct proc *parent, *child;

	if (pid == ppid)
		return; /* a thread: same address space */
	parent = get_proc(s, ppid);
	child = get_proc(s, pid);
	if (child->exited) {
		maps_clear(child);
		jit_free(child->jit);
		child->jit = NULL;
		child->jit_tried = false;
		child->exited = false;
		child->gone = false;
	}
	/* a new process runs as its parent (a creds record may follow) */
	child->creds_known = parent->creds_known;
	child->uid = parent->uid;
	child->gid = parent->gid;
	if (!child->cur.nmaps && parent->cur.nmaps) {
		forget_dw(child);
		/* a child starts with a copy of its parent's address space */
		FG_ALLOC_GROW(child->cur.maps, parent->cur.nmaps, child->cur.alloc);
		for (size_t i = 0; i < parent->cur.nmaps; i++) {
			struct map m = parent->cur.maps[i];

			m.path = fg_xstrdup(m.path);
			child->cur.maps[child->cur.nmaps++] = m;
		}
		child->from_stream = parent->from_stream;
	}
	recount(s, child);
}

void fg_symbolizer_exit(struct fg_symbolizer *s, uint32_t pid)
{
	struct proc *p = get_proc(s, pid);

	if (p->exited)
		return;
	p->exited = true;
	/*
	 * Samples may still follow the exit record (they travel by another
	 * channel): keep the mappings of the last EXITED_KEEP processes, so that
	 * memory stays bounded by the processes alive, not by all that ever ran.
	 */
	if (s->exited_n == EXITED_KEEP) {
		struct proc *old = lookup_proc(s, s->exited[s->exited_head]);

		if (old && old->exited && old != p) {
			maps_clear(old);
			jit_free(old->jit);
			old->jit = NULL;
			recount(s, old);
		}
		s->exited[s->exited_head] = pid;
		s->exited_head = (s->exited_head + 1) % EXITED_KEEP;
	} else {
		s->exited[(s->exited_head + s->exited_n++) % EXITED_KEEP] = pid;
	}
	s->last_proc = p;
}

/* --- /proc fallback --- */

struct procmaps_ctx {
	struct proc *p;
};

static int procmaps_add(const struct fg_procmap *pm, void *arg)
{
	struct procmaps_ctx *c = arg;
	struct fg_sym_mapping m = {
	    .pid = c->p->pid,
	    .start = pm->start,
	    .end = pm->end,
	    .pgoff = pm->pgoff,
	    .dev_major = pm->dev_major,
	    .dev_minor = pm->dev_minor,
	    .inode = pm->inode,
	    .path = pm->path,
	    .exec = pm->exec,
	};

	if (!pm->exec)
		return 0;
	/* already known (from the stream or an earlier read): keep what we have */
	for (size_t i = 0; i < c->p->cur.nmaps; i++) {
		const struct map *o = &c->p->cur.maps[i];

		if (o->start == pm->start && o->end == pm->end && o->inode == pm->inode &&
		    o->pgoff == pm->pgoff)
			return 0;
	}
	add_map(&c->p->cur, &m);
	return 0;
}

static void read_procmaps(struct fg_symbolizer *s, struct proc *p)
{
	char path[PATH_MAX];
	uint64_t bad;
	char *data;
	size_t len;
	int err;

	p->procmaps_read = true;
	p->procmaps_ms = now_ms();
	snprintf(path, sizeof(path), "%s/%u/maps", s->o.proc_root, p->pid);
	err = fg_safeio_read_file(path, PROCMAPS_MAX, &data, &len);
	if (err < 0) {
		if (err == -ENOENT || err == -ESRCH)
			p->gone = true;
		else if (s->o.verbose)
			warn(s, "cannot read '%s': %s", path, strerror(-err));
		return;
	}
	struct procmaps_ctx c = {.p = p};
	forget_dw(p);
	if (fg_procmaps_parse(data, len, procmaps_add, &c, &bad) < 0)
		warn(s, "'%s': malformed line %llu", path, (unsigned long long)bad);
	free(data);
	recount(s, p);
}

/* --- files --- */

static bool same_build_id(const struct map *m, const struct fg_elfsyms *e)
{
	return e->build_id_len == m->build_id_len &&
	       memcmp(e->build_id, m->build_id, m->build_id_len) == 0;
}

/*
 * Is the file open on fd the one mapped?  By build-id when the mapping has
 * one: the file must carry the same (a file with another, or none, is not
 * that file: it changed since).  Else by device and inode, unless `trusted`
 * (a --symfs copy).  *elf receives the file's symbols when they had to be
 * read to decide.  A mapping with neither (resolve_map() never gets here)
 * names no file.
 */
static bool is_mapped_file(const struct map *m, int fd, const struct stat *st, bool trusted,
			   struct fg_elfsyms **elf)
{
	*elf = NULL;
	if (m->build_id_len) {
		*elf = fg_elfsyms_open_fd(fd);
		return *elf && (*elf)->build_id_len && same_build_id(m, *elf);
	}
	if (trusted)
		return true;
	return m->inode && st->st_ino == m->inode && major(st->st_dev) == m->dev_major &&
	       minor(st->st_dev) == m->dev_minor;
}

static void dso_key(char *key, size_t *len, char type, const struct map *m)
{
	key[0] = type;
	if (type == 'b') {
		memcpy(key + 1, m->build_id, m->build_id_len);
		*len = 1 + m->build_id_len;
	} else {
		uint64_t v[2] = {(uint64_t)m->dev_major << 32 | m->dev_minor, m->inode};

		memcpy(key + 1, v, sizeof(v));
		*len = 1 + sizeof(v);
	}
}

static struct dso *dso_cached(struct fg_symbolizer *s, const struct map *m)
{
	char key[1 + FG_BUILD_ID_MAX + 16];
	size_t len;
	struct fg_hash_entry *e;

	if (m->build_id_len) {
		dso_key(key, &len, 'b', m);
		e = fg_hash_get(s->dsos, key, len);
		if (e)
			return e->val.p;
	}
	if (m->inode) {
		dso_key(key, &len, 'i', m);
		e = fg_hash_get(s->dsos, key, len);
		if (e)
			return e->val.p;
	}
	return NULL;
}

static void dso_remember(struct fg_symbolizer *s, struct dso *d, const struct map *m,
			 const struct stat *st)
{
	char key[1 + FG_BUILD_ID_MAX + 16];
	size_t len;
	struct map id = *m;

	if (d->elf && d->elf->build_id_len) {
		memcpy(id.build_id, d->elf->build_id, d->elf->build_id_len);
		id.build_id_len = d->elf->build_id_len;
		dso_key(key, &len, 'b', &id);
		fg_hash_upsert(s->dsos, key, len, NULL)->val.p = d;
	}
	if (m->inode) {
		dso_key(key, &len, 'i', m);
		fg_hash_upsert(s->dsos, key, len, NULL)->val.p = d;
	} else if (st) {
		/* the identity of the file opened */
		id.dev_major = major(st->st_dev);
		id.dev_minor = minor(st->st_dev);
		id.inode = st->st_ino;
		dso_key(key, &len, 'i', &id);
		fg_hash_upsert(s->dsos, key, len, NULL)->val.p = d;
	}
	FG_ALLOC_GROW(s->all_dsos, s->ndsos + 1, s->dsos_alloc);
	s->all_dsos[s->ndsos++] = d;
	s->st.files++;
}

/*
 * Open a file that should hold data (an ELF file, a JIT map).  Beyond
 * fg_safeio_open_regular's checks: pseudo files that call themselves regular
 * (procfs, sysfs and the like, where reading can have effects, such as
 * /proc/kmsg) are refused, and so is a file under min_size bytes.
 */
static int open_data_file(const char *path, off_t min_size, uint64_t max_size, struct stat *st)
{
	int fd = fg_safeio_open_data(path, max_size, st);

	if (fd >= 0 && st->st_size < min_size) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int try_open(const char *path, struct stat *st)
{
	return open_data_file(path, 64, FG_ELF_MAX_FILE, st);
}

/*
 * The DWARF of a file, for --inline and --srcline: in its debug file when
 * there is one (open on dfd), else in the file itself.  Why there is none
 * is kept, to count the frames it leaves without source information.
 */
static void open_dwarf(struct fg_symbolizer *s, struct dso *d, int fd, int dfd, const char *dpath)
{
	char path[PATH_MAX * 2];
	int err = ENODATA;

	if (dfd >= 0 && !(d->dwarf = fg_dwarf_open_fd(dfd, dpath, d->prefix)))
		err = errno;
	snprintf(path, sizeof(path), "%s%s", d->prefix, d->path);
	if (!d->dwarf && fd >= 0 && !(d->dwarf = fg_dwarf_open_fd(fd, path, d->prefix)) &&
	    errno != ENODATA)
		err = errno;
	if (d->dwarf)
		return;
	d->nosrc = err == EFBIG	       ? FG_NOSRC_TOOBIG
		   : err == EOPNOTSUPP ? FG_NOSRC_SPLIT
		   : err == ENOENT     ? FG_NOSRC_NOSUP
		   : err == ENODATA    ? FG_NOSRC_NODWARF
				       : FG_NOSRC_CORRUPT;
	if (s->o.verbose && err != ENODATA)
		warn(s, "no source information from '%s': %s", dfd >= 0 ? dpath : path,
		     fg_nosrc_reasons[d->nosrc]);
}

/* A debug file debuginfod answered with (or not), for the file of `d`. */
static void dbgi_answer(struct fg_symbolizer *s, struct dso *d, struct fg_debuginfod_result *res)
{
	static const char *const why[] = {
	    [FG_DBGI_NOTFOUND] = "not found",
	    [FG_DBGI_TIMEDOUT] = "timed out",
	    [FG_DBGI_REFUSED] = "the file served has another build-id: refused",
	    [FG_DBGI_FAILED] = "the servers cannot be reached",
	    [FG_DBGI_UNUSABLE] = "the file served is over the size bound, or not ELF within "
				 "bounds: refused, and evicted from the cache",
	};

	d->dbgi_pending = false;
	if (res->state == FG_DBGI_TIMEDOUT)
		d->dbgi_timedout = true;
	if (res->state != FG_DBGI_FOUND) {
		if (s->o.verbose && res->state < FG_ARRAY_SIZE(why) && why[res->state])
			warn(s, "debuginfod: no debug file for '%s': %s", d->path, why[res->state]);
		return;
	}
	enum fg_elf_symtab before = d->elf->kind;
	fg_elfsyms_adopt(d->elf, res->df.elf);
	d->dbgi_named = d->elf->kind > before;
	if ((s->o.inline_frames || s->o.srcline) && !d->dwarf && d->nosrc == FG_NOSRC_NODWARF &&
	    d != s->vdso) /* the vdso's frames have no source (emit_source) */
		open_dwarf(s, d, -1, res->df.fd, res->df.path);
	fg_debugfile_release(&res->df);
}

/*
 * No debug file here: ask debuginfod for one, when the file lacks what
 * its debug file would give (a .symtab, or DWARF for --inline and --srcline).
 */
static void ask_debuginfod(struct fg_symbolizer *s, struct dso *d)
{
	struct fg_debuginfod_result res;
	const struct fg_elfsyms *e = d->elf;
	bool dwarf =
	    (s->o.inline_frames || s->o.srcline) && !d->dwarf && d->nosrc == FG_NOSRC_NODWARF;

	if (!s->o.debuginfod || !e->build_id_len || (e->kind == FG_ELF_SYMTAB && !dwarf))
		return;
	switch (fg_debuginfod_request(s->o.debuginfod, e->build_id, e->build_id_len, d, &res)) {
	case FG_DBGI_PENDING:
		d->dbgi_pending = true;
		break;
	case FG_DBGI_FOUND:
	case FG_DBGI_NOTFOUND:
	case FG_DBGI_TIMEDOUT:
	case FG_DBGI_REFUSED:
	case FG_DBGI_FAILED:
	case FG_DBGI_UNUSABLE:
		dbgi_answer(s, d, &res);
		break;
	default: /* asked before, under another identity of the same file */
		break;
	}
}

/* The debug files fetched since last asked. */
static void collect_fetches(struct fg_symbolizer *s)
{
	struct fg_debuginfod_result res;

	while (fg_debuginfod_collect(s->o.debuginfod, &res))
		dbgi_answer(s, res.tag, &res);
}

/*
 * What d's debug file adds: its symbols (a .symtab, when d's file has only
 * .dynsym), and the DWARF of --inline and --srcline, fd being the file
 * itself.  From this machine when it is there, else (asked) from debuginfod.
 * vdso: d is the kernel's vDSO, of this release (uname -r).
 */
static void read_debug(struct fg_symbolizer *s, struct dso *d, int fd, const char *vdso)
{
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;
	bool dwarf = (s->o.inline_frames || s->o.srcline) && !vdso, found;

	if (!d->elf || (d->elf->kind == FG_ELF_SYMTAB && !dwarf))
		return;
	fg_debugfile_want_init(&w, d->elf, d->path, d->prefix);
	if (vdso) {
		/* not a file: its debug file's place is the system's, or under --symfs */
		w.prefix = s->o.symfs;
		w.vdso_release = vdso;
	}
	found = fg_debugfile_find(&w, &df) == 0;
	if (found)
		fg_elfsyms_adopt(d->elf, df.elf);
	if (dwarf)
		open_dwarf(s, d, fd, df.fd, df.path);
	fg_debugfile_release(&df);
	if (!found)
		ask_debuginfod(s, d);
}

/* The kernel's vDSO, as this process has it mapped. */
static void load_vdso(struct fg_symbolizer *s)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char *data, *line, *save;
	struct utsname u;
	size_t len;

	s->vdso_tried = true;
	if (!base || fg_safeio_read_file("/proc/self/maps", PROCMAPS_MAX, &data, &len) < 0)
		return;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct fg_procmap m;

		if (fg_procmap_parse(line, strlen(line), &m) == 0 &&
		    strcmp(m.path, "[vdso]") == 0 && m.start == base) {
			struct dso *d = fg_xcalloc(1, sizeof(*d));

			/* this kernel's vdso is the same image in every process */
			s->vdso_image = (const void *)(uintptr_t)base;
			s->vdso_size = m.end - m.start;
			d->elf = fg_elfsyms_open_mem(s->vdso_image, s->vdso_size);
			d->cfi = fg_cfi_open_mem(s->vdso_image, s->vdso_size);
			d->cfi_err = d->cfi ? 0 : -errno;
			d->cfi_tried = true;
			d->path = fg_xstrdup("[vdso]");
			d->prefix = fg_xstrdup("");
			FG_ALLOC_GROW(s->all_dsos, s->ndsos + 1, s->dsos_alloc);
			s->all_dsos[s->ndsos++] = d;
			s->vdso = d;
			/* its .dynsym names what it exports; the others are in its debug file */
			if (d->elf && uname(&u) == 0 && !strchr(u.release, '/'))
				read_debug(s, d, -1, u.release);
			break;
		}
	}
	free(data);
}

/* A mapped file opened, and where it was found. */
struct opened {
	char path[PATH_MAX * 2];
	char root[PATH_MAX];
	const char *prefix; /* "", --symfs or root */
	struct stat st;
	struct fg_elfsyms *elf; /* its symbols, when they had to be read to check it; or NULL */
};

/*
 * Open the file that m maps (a MAP_FILE with an identity), from the most
 * trustworthy place to the least, and only when it is the very file mapped:
 * the descriptor, or -1 with m->fail set (o->elf NULL then).
 */
static int open_mapped(struct fg_symbolizer *s, struct proc *p, struct map *m, struct opened *o)
{
	bool live = !p->exited && !p->gone;
	int fd = -1, c;

	o->elf = NULL;
	o->prefix = "";
	m->fail = FG_UNNAMED_NOFILE;
	snprintf(o->root, sizeof(o->root), "%s/%u/root", s->o.proc_root, p->pid);
	for (c = 0; c < 4 && fd < 0; c++) {
		bool trusted = false;

		switch (c) {
		case 0: /* the very file the process mapped, even deleted or replaced */
			if (!live)
				continue;
			snprintf(o->path, sizeof(o->path), "%s/%u/map_files/%llx-%llx",
				 s->o.proc_root, p->pid, (unsigned long long)m->start,
				 (unsigned long long)m->end);
			o->prefix = o->root;
			break;
		case 1: /* a copy of the file system, as perf's --symfs */
			if (!s->o.symfs)
				continue;
			snprintf(o->path, sizeof(o->path), "%s%s", s->o.symfs, m->path);
			o->prefix = s->o.symfs;
			trusted = true;
			break;
		case 2: /* inside the process' root: containers */
			if (!live)
				continue;
			snprintf(o->path, sizeof(o->path), "%s%s", o->root, m->path);
			o->prefix = o->root;
			break;
		default:
			snprintf(o->path, sizeof(o->path), "%s", m->path);
			o->prefix = "";
			break;
		}
		fd = try_open(o->path, &o->st);
		if (fd < 0)
			continue;
		if (!is_mapped_file(m, fd, &o->st, trusted, &o->elf)) {
			/* a file, but not the one mapped: replaced since, or rebuilt */
			m->fail = FG_UNNAMED_CHANGED;
			fg_elfsyms_free(o->elf);
			o->elf = NULL;
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

/*
 * The unwind table of d's file, open on fd: from its .eh_frame and
 * .debug_frame, or, when it has neither, from its debug file's .debug_frame.
 */
static void read_cfi(struct fg_symbolizer *s, struct dso *d, int fd)
{
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;

	d->cfi_tried = true;
	/* rows compiled as lookups need them: a capture needs a few dozen functions of libc's */
	d->cfi = fg_cfi_open_lazy(fd);
	d->cfi_err = d->cfi ? 0 : -errno;
	if (d->cfi_err == -ENODATA && d->elf) {
		fg_debugfile_want_init(&w, d->elf, d->path, d->prefix);
		if (fg_debugfile_find(&w, &df) == 0) {
			d->cfi = fg_cfi_open_fd(fd, df.fd);
			d->cfi_err = d->cfi ? 0 : -errno;
			fg_debugfile_release(&df);
		}
	}
	if (d->cfi_err && d->cfi_err != -ENODATA && s->o.verbose)
		warn(s, "no unwind table from '%s%s': %s", d->prefix, d->path,
		     d->cfi_err == -EFBIG ? "over the size limit" : strerror(-d->cfi_err));
}

static void resolve_map(struct fg_symbolizer *s, struct proc *p, struct map *m)
{
	struct fg_elfsyms *elf = NULL;
	struct opened o;
	struct dso *d;
	int fd;

	m->resolved = true;
	m->fail = FG_UNNAMED_NOFILE;
	if (m->kind == MAP_VDSO) {
		if (!s->vdso_tried)
			load_vdso(s);
		m->dso = s->vdso;
		if (m->dso && m->build_id_len && m->dso->elf && !same_build_id(m, m->dso->elf)) {
			/* recorded under another kernel: its vdso is not this one */
			m->dso = NULL;
			m->fail = FG_UNNAMED_CHANGED;
		} else if (!m->dso) {
			m->fail = FG_UNNAMED_NOSYMS;
		}
		return;
	}
	if (m->kind != MAP_FILE)
		return;
	if (!m->build_id_len && !m->inode) {
		/*
		 * Nothing tells which file was mapped: opening the path would read
		 * whatever is there now, which a crafted capture could point at any
		 * file of the system
		 */
		m->fail = FG_UNNAMED_NOID;
		return;
	}
	d = dso_cached(s, m);
	if (d) {
		m->dso = d;
		return;
	}
	fd = open_mapped(s, p, m, &o);
	if (fd < 0) {
		if (s->o.verbose)
			warn(s, "%s the file mapped at '%s' (pid %u)",
			     m->fail == FG_UNNAMED_CHANGED ? "no file found is" : "cannot find",
			     m->path, p->pid);
		return;
	}
	elf = o.elf ? o.elf : fg_elfsyms_open_fd(fd);
	if (!elf) {
		int err = errno;

		if (err == E2BIG)
			s->st.refused++;
		if (s->o.verbose)
			warn(s, "cannot read symbols of '%s': %s", o.path,
			     err == E2BIG ? "refused: its ELF headers claim more than the bounds"
					  : strerror(err));
	} else if (elf->build_id_len) {
		/* perhaps a file already read under another name */
		struct map id = *m;
		struct fg_hash_entry *e;
		char key[1 + FG_BUILD_ID_MAX + 16];
		size_t len;

		memcpy(id.build_id, elf->build_id, elf->build_id_len);
		id.build_id_len = elf->build_id_len;
		dso_key(key, &len, 'b', &id);
		e = fg_hash_get(s->dsos, key, len);
		if (e) {
			fg_elfsyms_free(elf);
			m->dso = e->val.p;
			if (s->unwinding && !m->dso->cfi_tried)
				read_cfi(s, m->dso, fd);
			close(fd);
			if (m->inode) { /* remember this identity too */
				dso_key(key, &len, 'i', m);
				fg_hash_upsert(s->dsos, key, len, NULL)->val.p = m->dso;
			}
			return;
		}
	}
	d = fg_xcalloc(1, sizeof(*d));
	d->elf = elf;
	d->path = fg_xstrdup(m->path);
	d->prefix = fg_xstrdup(o.prefix);
	read_debug(s, d, fd, NULL);
	if (elf && elf->minidebug_err && elf->kind != FG_ELF_SYMTAB) {
		/* its functions stay unnamed: say why */
		s->st.bad_minidebug++;
		if (s->o.verbose)
			warn(s, "cannot read the .gnu_debugdata of '%s': %s", o.path,
			     elf->minidebug_err == -EFBIG ? "over the size limit" : "corrupt");
	}
	if (s->unwinding)
		read_cfi(s, d, fd);
	close(fd);
	dso_remember(s, d, m, &o.st);
	m->dso = d;
}

static struct map *space_find(struct space *p, uint64_t ip)
{
	size_t lo;

	/* the frames of a stack come mostly from a few mappings: the last one found first */
	if (p->hint < p->nmaps && p->maps[p->hint].start <= ip && ip < p->maps[p->hint].end)
		return &p->maps[p->hint];
	lo = FG_UPPER_BOUND(p->maps, p->nmaps, start, ip);
	if (lo == 0 || ip >= p->maps[lo - 1].end)
		return NULL;
	p->hint = lo - 1;
	return &p->maps[lo - 1];
}

/*
 * The mapping holding ip in the address space the process had at time_ns.
 * A sample taken inside execve() is stamped after the exec record but still
 * runs the old program: when the chosen space has nothing at ip, the other
 * one is asked.
 */
static struct map *find_map(struct proc *pr, uint64_t ip, uint64_t time_ns)
{
	bool old = pr->old.nmaps && time_ns < pr->exec_ns;
	struct map *m = space_find(old ? &pr->old : &pr->cur, ip);

	if (!m && pr->old.nmaps)
		m = space_find(old ? &pr->cur : &pr->old, ip);
	return m;
}

/*
 * The same, and when the address is in no mapping known, in those /proc
 * shows now (read again at most every RECHECK_MS).  The pointers to the
 * process' mappings taken before may not hold after this.
 */
static struct map *proc_map(struct fg_symbolizer *s, struct proc *p, uint64_t ip, uint64_t time_ns)
{
	struct map *m = find_map(p, ip, time_ns);

	if (!m && !p->exited && !p->gone &&
	    (!p->procmaps_read || now_ms() - p->procmaps_ms >= RECHECK_MS)) {
		read_procmaps(s, p);
		m = find_map(p, ip, time_ns);
	}
	return m;
}

/* --- JIT maps --- */

/*
 * From /proc/PID/status: the pid of a process in its own pid namespace
 * (NSpid's last field) and its effective uid.  0, or -errno (gone).
 */
static int proc_status(struct fg_symbolizer *s, uint32_t pid, uint32_t *nspid, uint32_t *uid)
{
	char path[PATH_MAX], *data, *line;
	struct fg_rec_creds c;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%u/status", s->o.proc_root, pid);
	if ((err = fg_safeio_read_file(path, 1 << 20, &data, &len)) < 0)
		return err;
	*nspid = 0;
	line = strstr(data, "\nNSpid:");
	if (line) {
		char *end = strchr(line + 1, '\n'), *tok, *save;

		if (end)
			*end = '\0';
		for (tok = strtok_r(line + 7, " \t", &save); tok;
		     tok = strtok_r(NULL, " \t", &save))
			*nspid = (uint32_t)strtoul(tok, NULL, 10);
		if (end)
			*end = '\n';
	}
	err = fg_sideband_creds_parse(data, &c);
	*uid = c.uid;
	free(data);
	return err;
}

/* Open a JIT map below its directory, following no symbolic link (fg/safeio.h). */
static int jit_open(const char *base, const char *rel, struct stat *st)
{
	int dfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (dfd < 0)
		return -errno;
	fd = fg_safeio_open_data_beneath(dfd, rel, 0, st);
	close(dfd);
	return fd;
}

/*
 * Whether to believe a JIT map: it names the frames of a process, so it must
 * be written by the user who runs it (as the kernel shows the process now,
 * or as the stream recorded it, also once the process is gone).  When
 * neither tells, perf's rule: the running user's or root's.  A file with
 * other names (hard links) is refused: it may be another's file, linked.
 */
static bool jit_trusted(struct fg_symbolizer *s, struct proc *p, const struct stat *st,
			const char *shown, bool live_known, uint32_t live_uid)
{
	uint32_t want;

	if (st->st_nlink != 1) {
		warn(s,
		     "ignoring '%s': it has %lu names (hard links), so it may be another "
		     "user's file",
		     shown, (unsigned long)st->st_nlink);
		return false;
	}
	if (live_known || p->creds_known) {
		want = live_known ? live_uid : p->uid;
		if (st->st_uid == want)
			return true;
		warn(s,
		     "ignoring '%s': it belongs to user %lu, not to user %lu who runs process %u",
		     shown, (unsigned long)st->st_uid, (unsigned long)want, p->pid);
		return false;
	}
	if (st->st_uid == geteuid() || st->st_uid == 0)
		return true;
	warn(s,
	     "ignoring '%s': it belongs to user %lu, and who ran process %u is not known "
	     "(no creds record): only your own or root's maps are used then",
	     shown, (unsigned long)st->st_uid, p->pid);
	return false;
}

/*
 * Whether the JIT maps of the run may grow: if not, count `j` as cut (once),
 * and say so for the first (the summary counts the rest).
 */
static bool jit_room(struct fg_symbolizer *s, struct jit *j)
{
	if (s->jit_bytes < FG_SYM_JIT_BYTES_MAX && s->jit_entries < FG_SYM_JIT_ENTRIES_MAX)
		return true;
	if (!j->cut) {
		j->cut = true;
		if (!s->st.jit_cut++)
			warn(s,
			     "'%s' read up to byte %llu only: the JIT maps of the run reached %llu "
			     "bytes and %llu entries in all, the most read (and more are not)",
			     j->shown, (unsigned long long)j->consumed,
			     (unsigned long long)s->jit_bytes, (unsigned long long)s->jit_entries);
	}
	return false;
}

static void jit_refresh(struct fg_symbolizer *s, struct jit *j)
{
	struct stat st;
	int fd = jit_open(j->base, j->rel, &st);
	char buf[65536];

	j->last_check_ms = now_ms();
	if (fd < 0)
		return;
	if (st.st_ino != j->ino || st.st_dev != j->dev) {
		/*
		 * Another file under the name: it was not checked (whose it is,
		 * its links), so it is not read; the names read so far stay.  A
		 * new process under the pid gets a new map (fg_symbolizer_fork).
		 */
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size < j->consumed) {
		/* rewritten from the start: read it again */
		fg_perfmap_free(j->pm);
		j->pm = fg_perfmap_new();
		j->consumed = 0;
		fg_buf_reset(&j->partial);
	}
	while (j->consumed < PERFMAP_MAX && jit_room(s, j)) {
		ssize_t r = pread(fd, buf, sizeof(buf), (off_t)(j->consumed + j->partial.len));
		size_t used, had = fg_perfmap_count(j->pm);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		fg_buf_add(&j->partial, buf, (size_t)r);
		used = fg_perfmap_add(j->pm, j->partial.data, j->partial.len, &j->bad_lines);
		s->jit_bytes += (uint64_t)r;
		s->jit_entries += fg_perfmap_count(j->pm) - had;
		j->consumed += used;
		memmove(j->partial.data, j->partial.data + used, j->partial.len - used);
		fg_buf_truncate(&j->partial, j->partial.len - used);
		if (j->partial.len > 65536) { /* a line that never ends: drop it */
			j->consumed += j->partial.len;
			j->bad_lines++;
			fg_buf_reset(&j->partial);
		}
	}
	close(fd);
}

static struct jit *get_jit(struct fg_symbolizer *s, struct proc *p)
{
	char base[PATH_MAX], rel[64], shown[64], path[PATH_MAX + 64];
	struct stat st;
	uint32_t nspid = 0, uid = 0;
	bool live_known = false;
	int fd = -ENOENT;

	if (p->jit_tried)
		return p->jit;
	p->jit_tried = true;
	snprintf(shown, sizeof(shown), "/tmp/perf-%u.map", p->pid);
	/* inside the process' root, under its pid there; then ours */
	if (!p->exited && !p->gone && proc_status(s, p->pid, &nspid, &uid) == 0) {
		live_known = true;
		if (nspid) {
			snprintf(base, sizeof(base), "%s/%u/root", s->o.proc_root, p->pid);
			snprintf(rel, sizeof(rel), "tmp/perf-%u.map", nspid);
			fd = jit_open(base, rel, &st);
		}
	}
	if (fd == -ENOENT) {
		snprintf(base, sizeof(base), "%s", s->o.symfs ? s->o.symfs : "/");
		snprintf(rel, sizeof(rel), "tmp/perf-%u.map", p->pid);
		fd = jit_open(base, rel, &st);
	}
	snprintf(path, sizeof(path), "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", rel);
	if (fd == -ELOOP)
		warn(s, "ignoring '%s': a symbolic link is on its path", path);
	if (fd < 0)
		return NULL;
	close(fd);
	if (!jit_trusted(s, p, &st, path, live_known, uid))
		return NULL;
	p->jit = fg_xcalloc(1, sizeof(*p->jit));
	p->jit->pm = fg_perfmap_new();
	p->jit->base = fg_xstrdup(base);
	p->jit->rel = fg_xstrdup(rel);
	p->jit->dev = st.st_dev;
	p->jit->ino = st.st_ino;
	p->jit->shown = fg_xstrdup(shown);
	jit_refresh(s, p->jit);
	return p->jit;
}

static const struct fg_perfmap_ent *jit_lookup(struct fg_symbolizer *s, struct proc *p, uint64_t ip,
					       struct jit **jout)
{
	struct jit *j = get_jit(s, p);
	const struct fg_perfmap_ent *e;

	*jout = j;
	if (!j)
		return NULL;
	e = fg_perfmap_lookup(j->pm, ip);
	if (!e && now_ms() - j->last_check_ms >= RECHECK_MS) {
		/* the JIT may have written more since */
		jit_refresh(s, j);
		e = fg_perfmap_lookup(j->pm, ip);
	}
	return e;
}

/* --- naming --- */

static const char *pretty(struct fg_symbolizer *s, struct fg_elf_sym *sym)
{
	if (s->o.no_demangle)
		return sym->name;
	if (!sym->pretty) {
		char *d = fg_demangle(sym->name);

		/* remember "not mangled" as the name itself, to demangle only once */
		sym->pretty = d ? d : fg_xstrdup(sym->name);
	}
	return sym->pretty;
}

static void unnamed(struct fg_symbolizer *s, struct fg_frame *f, enum fg_unnamed why)
{
	f->sym = NULL;
	f->why = why;
	s->st.unnamed[why]++;
}

/*
 * The directory of the kernel symbol cache (fg_safeio_private_dir_open: no link
 * followed, every directory the user's or root's), opened once, and made
 * when `create`.  A directory refused for safety is said once; any other
 * failure with -v only.  The descriptor, or -1.
 */
static int open_cache_dir(struct fg_symbolizer *s, bool create)
{
	char bad[PATH_MAX] = "", why[PATH_MAX + 64];
	uid_t owner = 0;
	int fd;

	if (s->cache_fd >= 0 || s->cache_fd == -2 || (create && s->cache_tried))
		return s->cache_fd >= 0 ? s->cache_fd : -1;
	fd = fg_safeio_private_dir_open(s->o.kallsyms_cache, create, bad, sizeof(bad), &owner);
	if (fd >= 0) {
		s->cache_fd = fd;
	} else if (fd == -ENOENT && !create) {
		return -1; /* made when first written */
	} else if (fg_safeio_dir_refusal(why, sizeof(why), fd, bad, owner)) {
		warn(s, "not using the kernel symbol cache in '%s': %s", s->o.kallsyms_cache, why);
		s->cache_fd = -2; /* refused: not tried again */
	} else if (s->o.verbose) {
		warn(s, "cannot use the kernel symbol cache directory '%s': %s",
		     s->o.kallsyms_cache, why);
	}
	if (create)
		s->cache_tried = true;
	return s->cache_fd >= 0 ? s->cache_fd : -1;
}

/* Read kallsyms itself (and refresh the cache from it). */
static void load_kallsyms(struct fg_symbolizer *s)
{
	struct fg_kstamp after;
	uint64_t bad;
	int r;

	fg_ksyms_free(s->ksyms);
	s->ksyms = fg_ksyms_load(s->o.kallsyms, &bad);
	if (!s->ksyms && bad)
		warn(s, "'%s': malformed line %llu; kernel frames stay unnamed", s->o.kallsyms,
		     (unsigned long long)bad);
	else if (!s->ksyms)
		warn(s, "cannot read '%s': %s; kernel frames stay unnamed", s->o.kallsyms,
		     strerror(errno));
	else if (fg_ksyms_hidden(s->ksyms))
		warn(s,
		     "kernel addresses in '%s' are hidden (kernel.kptr_restrict); "
		     "kernel frames stay unnamed",
		     s->o.kallsyms);
	if (!s->kstamp_ok || !s->ksyms || fg_ksyms_hidden(s->ksyms))
		return;
	/* a module loaded or unloaded while kallsyms was read: do not keep a mix */
	if (fg_kstamp_read(&after, "/proc") < 0)
		return;
	if (fg_kstamp_equal(&s->kstamp, &after) && open_cache_dir(s, true) >= 0) {
		r = fg_ksyms_save(s->ksyms, &s->kstamp, s->cache_fd, "kallsyms");
		if (r < 0 && s->o.verbose)
			warn(s, "cannot write the kernel symbol cache '%s/kallsyms': %s",
			     s->o.kallsyms_cache, strerror(-r));
	}
	fg_kstamp_free(&after);
}

/* The kernel's symbols, from the cache when it is this kernel's, else from kallsyms. */
static void first_kernel_frame(struct fg_symbolizer *s)
{
	s->ksyms_tried = true;
	if (s->o.kallsyms_cache && strcmp(s->o.kallsyms, "/proc/kallsyms") == 0)
		s->kstamp_ok = fg_kstamp_read(&s->kstamp, "/proc") == 0;
	if (s->kstamp_ok && open_cache_dir(s, false) >= 0) {
		s->ksyms = fg_ksyms_load_cache(s->cache_fd, "kallsyms", &s->kstamp);
		if (!s->ksyms && errno != ENOENT && errno != ESTALE && s->o.verbose)
			warn(s, "kernel symbol cache '%s/kallsyms' not used: %s",
			     s->o.kallsyms_cache,
			     errno == EPERM ? "not a file of this user's alone" : strerror(errno));
		if (s->ksyms)
			return;
	}
	load_kallsyms(s);
}

static void name_kernel(struct fg_symbolizer *s, uint64_t ip, bool leaf, struct fg_frame *f)
{
	const struct fg_ksym *k;
	uint64_t look = leaf || !ip ? ip : ip - 1;
	bool sure;

	f->addr = ip;
	/* BPF code the stream named: as kallsyms names it while it is loaded */
	if (s->bpf && (f->sym = fg_bpfsyms_lookup(s->bpf, look, &f->off)) != NULL) {
		f->module = "[bpf]";
		f->off = ip - f->off;
		s->st.named++;
		s->st.bpf_named++;
		return;
	}
	f->module = "[kernel.kallsyms]";
	if (!s->ksyms_tried)
		first_kernel_frame(s);
	k = fg_ksyms_lookup_sure(s->ksyms, look, &sure);
	if (!sure) {
		/* code the cache leaves out (a BPF program, a trampoline): ask the kernel */
		load_kallsyms(s);
		k = fg_ksyms_lookup(s->ksyms, look);
	}
	if (!k) {
		unnamed(s, f, FG_UNNAMED_NOSYMS);
		return;
	}
	if (k->module) {
		snprintf(s->name_buf, sizeof(s->name_buf), "[%s]", k->module);
		f->module = s->name_buf;
	}
	f->sym = k->name;
	f->off = ip - k->addr;
	s->st.named++;
}

/* The address a frame is named by: a return address one byte back, into the call. */
static uint64_t look_of(uint64_t ip, uint32_t flags)
{
	/* a signal trampoline is where the handler returns to: no call precedes it */
	return (flags & (FG_UNWIND_F_EXACT | FG_UNWIND_F_SIGNAL)) || !ip ? ip : ip - 1;
}

/* Name a frame in the file that m maps (m resolved); flags: FG_UNWIND_F_*. */
static void name_in_file(struct fg_symbolizer *s, const struct map *m, uint64_t ip, uint64_t look,
			 uint32_t flags, struct fg_frame *f)
{
	const struct dso *d = m->dso;
	uint64_t off, addr;

	if (!d || !d->elf) {
		unnamed(s, f, d ? FG_UNNAMED_NOSYMS : m->fail);
		return;
	}
	off = look - m->start + m->pgoff;
	if (!fg_elfsyms_offset_to_addr(d->elf, off, &addr)) {
		unnamed(s, f, FG_UNNAMED_NOSYMS);
		return;
	}
	/* file-relative, as perf prints it */
	f->addr = addr + (ip - look);
	struct fg_elf_sym *sym = fg_elfsyms_lookup(d->elf, addr);
	if (!sym && (flags & FG_UNWIND_F_SIGNAL)) {
		/*
		 * The unwinder went through it as its CFI says a signal
		 * trampoline is; Debian's libc names it in no symbol table.  The
		 * handler returns to its first instruction; where inside it a
		 * frame interrupted in it is, is not known.
		 */
		f->sym = "__restore_rt";
		f->off = 0;
		f->no_off = flags & FG_UNWIND_F_EXACT;
		s->st.named++;
		s->st.signal_named++;
		return;
	}
	if (!sym) {
		unnamed(s, f,
			d->dbgi_timedout || d->dbgi_pending ? FG_UNNAMED_DITIMEOUT
							    : FG_UNNAMED_NOSYMS);
		return;
	}
	f->sym = pretty(s, sym);
	f->off = f->addr - sym->addr;
	s->st.named++;
	if (d->dbgi_named)
		s->st.debuginfod_named++;
}

/*
 * fg_symbolizer_frame; with `defer`, a frame in a file whose debug file is
 * being fetched is left alone (not counted): true, and s->defer_map is its
 * mapping.
 */
static bool name_frame(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
		       bool kernel, uint32_t flags, struct fg_frame *f, bool defer)
{
	uint64_t look = look_of(ip, flags);
	struct proc *p;
	struct map *m;
	struct jit *j = NULL;
	const struct fg_perfmap_ent *je;

	memset(f, 0, sizeof(*f));
	if (kernel) {
		name_kernel(s, ip, flags & FG_UNWIND_F_EXACT, f);
		return false;
	}
	f->addr = ip;
	f->module = "[unknown]";
	p = get_proc(s, pid);
	m = proc_map(s, p, look, time_ns);
	if (!m || m->kind == MAP_ANON) {
		je = jit_lookup(s, p, ip, &j);
		if (je) {
			f->sym = je->name;
			f->off = ip - je->start;
			f->module = j->shown;
			s->st.named++;
			return false;
		}
		if (m)
			unnamed(s, f, FG_UNNAMED_NOJIT);
		else if (p->gone && !p->from_stream)
			unnamed(s, f, FG_UNNAMED_GONE);
		else
			unnamed(s, f, FG_UNNAMED_NOMAP);
		if (m && j)
			f->module = j->shown;
		else if (m && *m->path)
			f->module = m->path; /* "//anon", "[heap]" */
		return false;
	}
	f->module = m->path;
	if (!m->resolved)
		resolve_map(s, p, m);
	if (defer && m->dso && m->dso->dbgi_pending) {
		s->defer_map = m;
		return true;
	}
	name_in_file(s, m, ip, look, flags, f);
	return false;
}

void fg_symbolizer_frame(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
			 bool kernel, bool leaf, struct fg_frame *f)
{
	name_frame(s, pid, time_ns, ip, kernel, leaf ? FG_UNWIND_F_EXACT : 0, f, false);
}

/* --- unwinding stack snapshots --- */

/*
 * What the table unwinder's `find` needs: the process, the sample's time, the
 * last mapping; and the key of what it finds, the process' address space
 * and which of its two spaces is asked first.
 */
struct unwind_ctx {
	struct fg_symbolizer *s;
	struct proc *p;
	uint64_t time_ns;
	struct map *last;
	struct fg_unwind_map last_um;
	uint64_t space;
};

static uint64_t space_key(const struct proc *p, uint64_t time_ns)
{
	return p->space_id << 1 | (p->old.nmaps && time_ns < p->exec_ns);
}

/* The unwind table of the file m maps (m resolved, with a dso): read now if it was not. */
static void need_cfi(struct fg_symbolizer *s, struct proc *p, struct map *m)
{
	struct opened o;
	int fd;

	/* a file first resolved before any snapshot came: open it again */
	fd = open_mapped(s, p, m, &o);
	fg_elfsyms_free(o.elf);
	if (fd < 0) {
		m->dso->cfi_tried = true;
		m->dso->cfi_err = -ENOENT;
		return;
	}
	read_cfi(s, m->dso, fd);
	close(fd);
}

/*
 * The load bias of the table of m's file at pc (m with a table), and the pcs
 * of m the segment holding pc covers, remembered in m: false when pc is in
 * no segment of the file.
 */
static bool map_bias(struct map *m, const struct fg_cfi *c, uint64_t pc)
{
	uint64_t off = pc - m->start + m->pgoff;

	for (size_t i = 0; i < c->nloads; i++) {
		const struct fg_elf_load *l = &c->loads[i];

		if (off < l->offset || off - l->offset >= l->filesz)
			continue;
		m->uw_bias = pc - (off - l->offset + l->vaddr);
		m->uw_lo = l->offset > m->pgoff ? m->start + (l->offset - m->pgoff) : m->start;
		m->uw_hi = l->offset + l->filesz - m->pgoff < m->end - m->start
			       ? m->start + (l->offset + l->filesz - m->pgoff)
			       : m->end;
		return true;
	}
	return false;
}

/* fg_unwind's `find`: the table of the code at pc, NULL for frame pointers. */
static int unwind_find(void *arg, uint64_t pc, struct fg_unwind_map *um)
{
	struct unwind_ctx *c = arg;
	struct map *m = c->last;
	const struct dso *d;

	/*
	 * The last mapping found, when pc is in it and it is the one find_map
	 * gives (no older space to ask first): what find answers for a pc then
	 * depends only on the space (the cache by space relies on it)
	 */
	if (!m || pc < m->start || pc >= m->end || c->p->old.nmaps) {
		c->last = NULL;
		m = proc_map(c->s, c->p, pc, c->time_ns);
		c->space = space_key(c->p, c->time_ns); /* /proc may have been read */
		if (!m)
			return -ENOENT;
		um->cfi = NULL;
		um->bias = 0;
		um->tag = 0;
		if (m->kind == MAP_ANON)
			return 0; /* JIT code: frame pointers */
		if (m->kind == MAP_SPECIAL)
			return -ENODATA;
		if (!m->resolved)
			resolve_map(c->s, c->p, m);
		if (!m->dso)
			return -ESTALE; /* no file, another file, no identity */
		if (!m->dso->cfi_tried)
			need_cfi(c->s, c->p, m);
		d = m->dso;
		if (!d->cfi && d->cfi_err != -ENODATA)
			return -ENODATA; /* a table over the bounds, a corrupt file */
		/* a file without any CFI: frame pointers */
		um->cfi = d->cfi;
		um->tag = m->id; /* a file's (or the vdso's) mapping, resolved */
		c->last = m;
		c->last_um = *um;
	}
	*um = c->last_um;
	if (!um->cfi)
		return 0;
	if ((pc < m->uw_lo || pc >= m->uw_hi) && !map_bias(m, um->cfi, pc))
		return -ENODATA;
	um->bias = m->uw_bias;
	return 0;
}

/*
 * --unwinder libdw: the Dwfl of the process, made from its mappings (each
 * file opened and checked as for its symbols) when first needed, and again
 * after they change.
 */
static struct fg_unwind_dw *proc_dw(struct fg_symbolizer *s, struct proc *p)
{
	struct opened o;

	if (p->dw)
		return p->dw;
	if (!p->cur.nmaps && !p->exited && !p->gone)
		read_procmaps(s, p);
	p->dw = fg_unwind_dw_new();
	for (size_t i = 0; p->dw && i < p->cur.nmaps; i++) {
		struct map *m = &p->cur.maps[i];
		int fd;

		if (m->kind == MAP_VDSO) {
			if (!m->resolved)
				resolve_map(s, p, m);
			if (m->dso && s->vdso_image)
				fg_unwind_dw_map_image(p->dw, "[vdso]", s->vdso_image, s->vdso_size,
						       m->start);
		} else if (m->kind == MAP_FILE && (m->build_id_len || m->inode)) {
			fd = open_mapped(s, p, m, &o);
			fg_elfsyms_free(o.elf);
			if (fd >= 0) {
				fg_unwind_dw_map(p->dw, m->path, fd, m->start, m->end, m->pgoff);
				close(fd);
			}
		}
	}
	return p->dw;
}

/* The unwinder's arrays, allocated once; the files' tables are read from now on. */
static void uw_alloc(struct fg_symbolizer *s)
{
	if (!s->uw_frames) {
		s->uw_frames = fg_xmalloc(FG_SYM_UNWIND_MAX * sizeof(*s->uw_frames));
		s->uw_flags = fg_xmalloc(FG_SYM_UNWIND_MAX * sizeof(*s->uw_flags));
		s->uw_cache = fg_xcalloc(1, sizeof(*s->uw_cache));
	}
	s->unwinding = true;
}

/*
 * User frames unwound with CFI by the BPF program (--call-graph cfi): the
 * first exact, the others return addresses, except that a signal
 * trampoline, found by its CFI as the unwinder found it, is named
 * "__restore_rt" and the frame it returns to is exact: as for a snapshot.
 */
static void cfi_frame_flags(struct fg_symbolizer *s, struct fg_sym_sample *smp)
{
	struct unwind_ctx c = {.s = s, .p = get_proc(s, smp->pid), .time_ns = smp->time_ns};
	uint32_t flags = FG_UNWIND_F_EXACT;

	if (smp->nuips > FG_SYM_UNWIND_MAX)
		return;
	uw_alloc(s);
	for (size_t i = 0; i < smp->nuips; i++) {
		uint64_t pc = smp->uips[i], look = flags || !pc ? pc : pc - 1;
		struct fg_unwind_map um;

		s->uw_flags[i] = flags;
		flags = 0;
		if (unwind_find(&c, look, &um) == 0 && um.cfi &&
		    fg_cfi_lookup(um.cfi, look - um.bias)->kind == FG_CFI_SIGNAL) {
			s->uw_flags[i] |= FG_UNWIND_F_SIGNAL;
			flags = FG_UNWIND_F_EXACT;
		}
	}
	smp->uflags = s->uw_flags;
}

/*
 * Unwind the snapshot of *smp into s->uw_frames: how many, or -1 when the
 * snapshot is not unwound (its registers cannot be used, --unwinder none):
 * the frame-pointer frames it came with are written.
 */
static ssize_t unwind_snapshot(struct fg_symbolizer *s, const struct fg_sym_sample *smp)
{
	const struct fg_rec_ustack *u = smp->ustack;
	enum fg_unwind_end end = FG_UNWIND_END_NOINFO;
	struct fg_cfi_regs regs;
	struct proc *p;
	size_t n = 0;

	s->uw_space = 0;
	if (s->o.unwinder == FG_SYM_UNWIND_NONE) {
		s->st.unwind_skipped++;
		return -1;
	}
	if (fg_unwind_regs_from_perf(u->abi, u->regs_mask, smp->ustack_regs, u->nr_regs, &regs) <
	    0) {
		s->st.unwind_badregs++;
		return -1;
	}
	uw_alloc(s);
	p = get_proc(s, smp->pid);
	if (s->o.unwinder == FG_SYM_UNWIND_LIBDW) {
		struct fg_unwind_dw *dw = proc_dw(s, p);

		if (dw)
			n = fg_unwind_dw(dw, smp->tid, &regs, u->sp, smp->ustack_data, u->size,
					 s->uw_frames, FG_SYM_UNWIND_MAX, &end, NULL);
	} else {
		struct unwind_ctx c = {
		    .s = s, .p = p, .time_ns = smp->time_ns, .space = space_key(p, smp->time_ns)};
		struct fg_unwind_ops ops = {
		    .find = unwind_find, .arg = &c, .cache = s->uw_cache, .space = &c.space};
		uint64_t before = p->space_id;

		n = fg_unwind(&ops, &regs, u->sp, smp->ustack_data, u->size, s->uw_frames,
			      FG_SYM_UNWIND_MAX, &end);
		/* the frames' mappings name them, unless the mappings changed on the way */
		s->uw_space = p->space_id == before ? before : 0;
		s->uw_proc = p;
	}
	fg_unwind_count(&s->st.unwind, s->uw_frames, n, end);
	return (ssize_t)n;
}

/* --- output --- */

static void add_hex(struct fg_buf *b, uint64_t v, int width)
{
	char tmp[17];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	fg_buf_grow(b, (size_t)(width > n ? width : n));
	for (int i = n; i < width; i++)
		b->data[b->len++] = ' ';
	while (n)
		b->data[b->len++] = tmp[--n];
	b->data[b->len] = '\0';
}

/* A name from a file, a process or the stream: never a line break or a terminal control */
static void add_text(struct fg_buf *b, const char *text)
{
	fg_buf_add_escaped(b, text, strlen(text), 0);
}

static void emit(struct fg_symbolizer *s, const struct fg_frame *f)
{
	struct fg_buf *b = &s->out;

	fg_buf_addch(b, '\t');
	add_hex(b, f->addr, 16);
	fg_buf_addch(b, ' ');
	if (f->sym) {
		add_text(b, f->sym);
		if (!f->inlined && !f->no_off) {
			fg_buf_add(b, "+0x", 3);
			add_hex(b, f->off, 0);
		}
	} else {
		fg_buf_add(b, "[unknown]", 9);
	}
	fg_buf_add(b, " (", 2);
	if (f->inlined)
		fg_buf_add(b, "inlined", 7);
	else
		add_text(b, f->module);
	fg_buf_addch(b, ')');
	if (f->srcfile) {
		/* on a line of its own, the file's base name, as perf script -F+srcline */
		const char *base = strrchr(f->srcfile, '/');

		fg_buf_add(b, "\n  ", 3);
		add_text(b, base ? base + 1 : f->srcfile);
		fg_buf_addf(b, ":%u", f->srcline);
	}
	fg_buf_addch(b, '\n');
}

static struct memo *memo_slot(struct fg_symbolizer *s, uint64_t owner, uint64_t ip, bool leaf)
{
	uint64_t h = owner * 0x9e3779b97f4a7c15ull ^ ip * 0xff51afd7ed558ccdull ^ leaf;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return &s->memo[h & (MEMO_SLOTS - 1)];
}

/* Append a remembered frame to the output and count it: false when it is not remembered. */
static inline __attribute__((always_inline)) bool memo_emit(struct fg_symbolizer *s, uint64_t owner,
							    uint64_t ip, bool leaf)
{
	const struct memo *m = memo_slot(s, owner, ip, leaf);

	if (!m->text || m->owner != owner || m->ip != ip || m->leaf != leaf)
		return false;
	fg_buf_add(&s->out, m->text, m->len);
	if (m->dbgi)
		s->st.debuginfod_named++;
	if (m->bpf)
		s->st.bpf_named++;
	if (m->why < 0)
		s->st.named++;
	else
		s->st.unnamed[m->why]++;
	return true;
}

/* Name and write a frame, and remember its text (the output from byte `from` on). */
/* (owner: a mapping's id, or the kernel's, 0 or with bit 63 set) */
static void memo_frame(struct fg_symbolizer *s, uint64_t owner, uint32_t pid, uint64_t time_ns,
		       uint64_t ip, bool leaf)
{
	size_t from = s->out.len, len;
	uint64_t dbgi = s->st.debuginfod_named, bpf = s->st.bpf_named;
	struct fg_frame f;
	struct memo *m;

	fg_symbolizer_frame(s, pid, time_ns, ip, owner == 0 || owner >> 63, leaf, &f);
	emit(s, &f);
	len = s->out.len - from;
	if (len > MEMO_TEXT_MAX)
		return;
	m = memo_slot(s, owner, ip, leaf);
	if (!m->text) {
		FG_ALLOC_GROW(s->memo_used, s->nmemo_used + 1, s->memo_used_alloc);
		s->memo_used[s->nmemo_used++] = (uint32_t)(m - s->memo);
	}
	free(m->text);
	m->text = fg_xmalloc(len);
	memcpy(m->text, s->out.data + from, len);
	m->len = (uint32_t)len;
	m->owner = owner;
	m->ip = ip;
	m->leaf = leaf;
	m->why = f.sym ? -1 : (int8_t)f.why;
	m->dbgi = s->st.debuginfod_named != dbgi;
	m->bpf = s->st.bpf_named != bpf;
}

/* A frame of a file whose debug file is being fetched: its text comes later. */
static void add_hole(struct fg_symbolizer *s, const struct map *m, uint64_t ip, uint32_t flags)
{
	struct hole *h;

	FG_ALLOC_GROW(s->holes, s->nholes + 1, s->holes_alloc);
	h = &s->holes[s->nholes++];
	h->at = s->out.len;
	h->m = *m;
	h->m.path = fg_xstrdup(m->path);
	h->ip = ip;
	h->flags = flags;
}

static void emit_source(struct fg_symbolizer *s, const struct map *m, struct fg_frame *f,
			uint32_t flags);

/* A user frame (flags: FG_UNWIND_F_*), with its inlined functions when asked. */
static void emit_user(struct fg_symbolizer *s, uint32_t pid, uint64_t time_ns, uint64_t ip,
		      uint32_t flags)
{
	bool defer = s->o.debuginfod != NULL, leaf = flags & FG_UNWIND_F_EXACT;
	struct fg_frame f;
	struct proc *p;
	struct map *m;

	if (s->memo && !(flags & FG_UNWIND_F_SIGNAL)) {
		/* a mapping of a file, already opened: its frames do not change */
		p = get_proc(s, pid);
		m = find_map(p, look_of(ip, flags), time_ns);
		if (m && m->resolved && (m->kind == MAP_FILE || m->kind == MAP_VDSO)) {
			if (defer && m->dso && m->dso->dbgi_pending)
				add_hole(s, m, ip, flags);
			else if (!memo_emit(s, m->id, ip, leaf))
				memo_frame(s, m->id, pid, time_ns, ip, leaf);
			return;
		}
	}
	if (name_frame(s, pid, time_ns, ip, false, flags, &f, defer)) {
		add_hole(s, s->defer_map, ip, flags);
		return;
	}
	if (!(s->o.inline_frames || s->o.srcline) || !f.sym) {
		emit(s, &f);
		return;
	}
	p = get_proc(s, pid);
	m = find_map(p, look_of(ip, flags), time_ns);
	emit_source(s, m, &f, flags);
}

/*
 * Frames of a snapshot unwound by the tables: a frame's tag is the id of its
 * mapping (a resolved file's or the vdso's), which find_map gives while the
 * process' mappings stay as they were when it was unwound; its text is then
 * found by it.
 */
static void emit_tagged(struct fg_symbolizer *s, const struct fg_sym_sample *smp,
			const struct fg_unwind_frame *fr, size_t n)
{
	bool by_tag = s->memo && !s->o.debuginfod && s->uw_space;

	for (size_t i = 0; i < n; i++) {
		uint64_t tag = fr[i].tag, ip = fr[i].pc;
		uint32_t flags = fr[i].flags;

		if (by_tag && tag && !(flags & FG_UNWIND_F_SIGNAL) &&
		    s->uw_proc->space_id == s->uw_space) {
			bool leaf = flags & FG_UNWIND_F_EXACT;

			if (!memo_emit(s, tag, ip, leaf))
				memo_frame(s, tag, smp->pid, smp->time_ns, ip, leaf);
			continue;
		}
		emit_user(s, smp->pid, smp->time_ns, ip, flags);
	}
}

/*
 * The callers fr[0..n) of an unwound stack through the chain cache: false
 * when they are not all frames of resolved files' mappings (the caller
 * writes them one by one).
 */
static bool emit_chain(struct fg_symbolizer *s, const struct fg_sym_sample *smp,
		       const struct fg_unwind_frame *fr, size_t n)
{
	uint64_t h = n;
	uint32_t untagged = 0, flags = 0;
	struct chain *c;
	struct fg_buf *b = &s->out;
	size_t from, key = n * sizeof(*fr), len;
	struct fg_sym_stats before;

	if (!s->chains || s->o.debuginfod || !s->uw_space || n > CHAIN_FRAMES_MAX ||
	    s->uw_proc->space_id != s->uw_space)
		return false;
	/* hashed by the pcs alone (the tags and flags are compared below) */
	for (size_t i = 0; i < n; i++)
		h = (h ^ fr[i].pc) * 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	c = &s->chains[h & (CHAIN_SLOTS - 1)];
	/* a chain kept has only tagged frames, none a signal's: the same frames too */
	if (c->frames && c->hash == h && c->n == n && memcmp(c->frames, fr, key) == 0) {
		fg_buf_add(b, c->text, c->len);
		s->st.named += c->named;
		for (size_t i = 0; i < FG_UNNAMED_COUNT; i++)
			s->st.unnamed[i] += c->unnamed[i];
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		untagged |= !fr[i].tag;
		flags |= fr[i].flags;
	}
	if (untagged || (flags & FG_UNWIND_F_SIGNAL))
		return false;
	from = b->len;
	before = s->st;
	emit_tagged(s, smp, fr, n);
	len = b->len - from;
	if (c->frames) {
		s->chain_bytes -= c->n * sizeof(*fr) + c->len;
		free(c->frames);
		c->frames = NULL;
		s->st.chains_replaced++;
	}
	if (s->chain_bytes + key + len > CHAIN_BYTES_MAX || s->uw_proc->space_id != s->uw_space) {
		s->st.chains_unkept += s->chain_bytes + key + len > CHAIN_BYTES_MAX;
		return true;
	}
	if (!c->listed) {
		FG_ALLOC_GROW(s->chains_used, s->nchains_used + 1, s->chains_used_alloc);
		s->chains_used[s->nchains_used++] = (uint32_t)(c - s->chains);
		c->listed = true;
	}
	c->frames = fg_xmalloc(key + len);
	memcpy(c->frames, fr, key);
	memcpy((char *)c->frames + key, b->data + from, len);
	c->text = (const char *)c->frames + key;
	c->hash = h;
	c->n = (uint32_t)n;
	c->len = (uint32_t)len;
	c->named = (uint32_t)(s->st.named - before.named);
	for (size_t i = 0; i < FG_UNNAMED_COUNT; i++)
		c->unnamed[i] = (uint32_t)(s->st.unnamed[i] - before.unnamed[i]);
	s->chain_bytes += key + len;
	return true;
}

/* The frames of a snapshot unwound by the tables: the leaf, then its callers. */
static void emit_unwound(struct fg_symbolizer *s, const struct fg_sym_sample *smp,
			 const struct fg_unwind_frame *fr, size_t n)
{
	if (!n)
		return;
	emit_tagged(s, smp, fr, 1);
	if (!emit_chain(s, smp, fr + 1, n - 1))
		emit_tagged(s, smp, fr + 1, n - 1);
}

/* A named frame of the file m maps, with its inlined functions and source lines (DWARF). */
static void emit_source(struct fg_symbolizer *s, const struct map *m, struct fg_frame *f,
			uint32_t flags)
{
	if (!m || !m->dso || !m->dso->elf || m->kind != MAP_FILE) {
		s->st.nosrc[FG_NOSRC_NODWARF]++; /* the vdso, a JIT map */
		emit(s, f);
		return;
	}
	struct dso *d = m->dso;
	if (!d->dwarf) {
		s->st.nosrc[d->nosrc]++;
		emit(s, f);
		return;
	}
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	uint64_t look = look_of(f->addr, flags);
	int n = fg_dwarf_lookup(d->dwarf, look, locs, FG_ARRAY_SIZE(locs));
	if (n <= 0) {
		s->st.nosrc[n < 0 ? FG_NOSRC_CORRUPT : FG_NOSRC_NOLINE]++;
		emit(s, f);
		return;
	}
	/*
	 * locs[0] is the innermost inlined function (where the address is),
	 * locs[n-1] the function the symbol names.  perf prints the symbol's line
	 * first, then the inlined functions outward... we print leaf first, as
	 * the stack is: the innermost inlined function, then its callers, the
	 * real function last, so that folding keeps the order.
	 */
	if (s->o.inline_frames && n > 1) {
		for (int i = 0; i < n - 1; i++) {
			struct fg_frame in = *f;
			char *dn = NULL;

			in.inlined = true;
			if (locs[i].func && !s->o.no_demangle)
				dn = fg_demangle(locs[i].func);
			in.sym = dn ? dn : locs[i].func ? locs[i].func : "[unknown]";
			in.srcfile = s->o.srcline ? locs[i].file : NULL;
			in.srcline = locs[i].line;
			emit(s, &in);
			free(dn);
		}
	}
	if (s->o.srcline) {
		/* the real function's line: where the outermost inlined call sits */
		f->srcfile = locs[s->o.inline_frames ? n - 1 : 0].file;
		f->srcline = locs[s->o.inline_frames ? n - 1 : 0].line;
	}
	emit(s, f);
}

/* the decimal digits of 0 to 99, two a number */
static const char pairs[] = "00010203040506070809101112131415161718192021222324"
			    "25262728293031323334353637383940414243444546474849"
			    "50515253545556575859606162636465666768697071727374"
			    "75767778798081828384858687888990919293949596979899";

/*
 * A decimal number in at least `width` columns, padded with `pad` on the
 * left, or with spaces on the right when `left` (printf's %5u, %-5u, %03u).
 */
static void add_dec(struct fg_buf *b, uint64_t v, int width, char pad, bool left)
{
	char tmp[20], *end = tmp + sizeof(tmp), *p = end;
	int n;

	/* two digits a division */
	for (; v >= 100; v /= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	n = (int)(end - p);
	if (b->cap - b->len <= (size_t)(width > n ? width : n))
		fg_buf_grow(b, (size_t)(width > n ? width : n));
	for (int i = n; !left && i < width; i++)
		b->data[b->len++] = pad;
	memcpy(b->data + b->len, p, (size_t)n);
	b->len += (size_t)n;
	for (int i = n; left && i < width; i++)
		b->data[b->len++] = ' ';
	b->data[b->len] = '\0';
}

/*
 * A sample's time as perf script writes it, seconds and microseconds
 * ("%5lu.%06lu"): the seconds' text kept, as most samples share it with the
 * one before.
 */
static void add_time(struct fg_symbolizer *s, struct fg_buf *b, uint64_t ns)
{
	uint64_t sec = ns / 1000000000;
	uint32_t us = (uint32_t)(ns % 1000000000 / 1000);
	char *p;

	if (s->sec_len && s->sec == sec) {
		fg_buf_add(b, s->sec_text, s->sec_len);
	} else {
		size_t from = b->len;

		add_dec(b, sec, 5, ' ', false);
		s->sec = sec;
		s->sec_len = (uint8_t)(b->len - from);
		memcpy(s->sec_text, b->data + from, s->sec_len);
	}
	if (b->cap - b->len <= 7)
		fg_buf_grow(b, 7);
	p = b->data + b->len;
	*p++ = '.';
	memcpy(p, pairs + 2 * (us / 10000), 2);
	memcpy(p + 2, pairs + 2 * (us / 100 % 100), 2);
	memcpy(p + 4, pairs + 2 * (us % 100), 2);
	b->len += 7;
	b->data[b->len] = '\0';
}

/* A frame of a held sample, now that its file's debug file came (or did not). */
static void emit_hole(struct fg_symbolizer *s, const struct hole *h)
{
	uint64_t look = look_of(h->ip, h->flags);
	struct fg_frame f;

	memset(&f, 0, sizeof(f));
	f.addr = h->ip;
	f.module = h->m.path;
	name_in_file(s, &h->m, h->ip, look, h->flags, &f);
	if ((s->o.inline_frames || s->o.srcline) && f.sym)
		emit_source(s, &h->m, &f, h->flags);
	else
		emit(s, &f);
}

static bool held_ready(const struct held *h)
{
	for (size_t i = 0; i < h->nholes; i++)
		if (h->holes[i].m.dso && h->holes[i].m.dso->dbgi_pending)
			return false;
	return true;
}

/* Write the held samples whose files are all answered for, in order. */
static int write_held(struct fg_symbolizer *s, FILE *out)
{
	struct held *h;
	struct fg_buf *b = &s->out;

	while ((h = s->held) != NULL && held_ready(h)) {
		size_t pos = 0;

		fg_buf_reset(b);
		for (size_t i = 0; i < h->nholes; i++) {
			fg_buf_add(b, h->text + pos, h->holes[i].at - pos);
			pos = h->holes[i].at;
			emit_hole(s, &h->holes[i]);
		}
		fg_buf_add(b, h->text + pos, h->len - pos);
		s->held = h->next;
		if (!s->held)
			s->held_tail = NULL;
		s->nheld--;
		s->held_bytes -= h->len;
		held_free(h);
		if (fwrite(b->data, 1, b->len, out) != b->len)
			return -(errno ? errno : EIO);
	}
	return 0;
}

/* Hold the sample just named (s->out, s->holes) back. */
static void hold(struct fg_symbolizer *s)
{
	struct held *h = fg_xcalloc(1, sizeof(*h));

	h->text = fg_xmalloc(s->out.len + 1);
	memcpy(h->text, s->out.data, s->out.len);
	h->len = s->out.len;
	if (s->nholes) {
		h->holes = fg_xmalloc(s->nholes * sizeof(*h->holes));
		memcpy(h->holes, s->holes, s->nholes * sizeof(*h->holes));
		h->nholes = s->nholes;
		s->nholes = 0;
	}
	if (s->held_tail)
		s->held_tail->next = h;
	else
		s->held = h;
	s->held_tail = h;
	s->nheld++;
	s->held_bytes += h->len;
}

int fg_symbolizer_flush(struct fg_symbolizer *s, FILE *out, bool end)
{
	if (!s->o.debuginfod)
		return 0;
	collect_fetches(s);
	while (end && fg_debuginfod_outstanding(s->o.debuginfod)) {
		/* bounded: at the end of the budget, all that is outstanding times out */
		fg_debuginfod_wait(s->o.debuginfod, -1);
		collect_fetches(s);
	}
	return write_held(s, out);
}

size_t fg_symbolizer_held(const struct fg_symbolizer *s)
{
	return s->nheld;
}

/*
 * Whether a part of the header is made of the same numbers `ids` and strings
 * `a` and `b` (NULL or not) as the one h remembers: its text appended.  The
 * key is compared where it is kept, nothing copied: most samples hit.
 */
static bool hdr_same(const struct hdr_memo *h, const void *ids, size_t ids_len, const char *a,
		     const char *b, struct fg_buf *out)
{
	const char *k = h->key + ids_len;

	if (!h->len || memcmp(h->key, ids, ids_len) != 0 || *k++ != (char)!!a ||
	    (a && strcmp(k, a) != 0))
		return false;
	k += a ? h->a_len + 1 : 0;
	if (*k++ != (char)!!b || (b && strcmp(k, b) != 0))
		return false;
	fg_buf_add(out, h->text, h->len);
	return true;
}

/*
 * Remember the part of the header made from byte `from` of b, and what it is
 * made of (as hdr_same takes them); nothing when either is too long to keep.
 */
static void hdr_keep(struct hdr_memo *h, const void *ids, size_t ids_len, const char *a,
		     const char *b, const struct fg_buf *out, size_t from)
{
	size_t al = a ? strlen(a) : 0, bl = b ? strlen(b) : 0, len = out->len - from;
	char *k = h->key;

	h->len = 0;
	if (ids_len + 4 + al + bl > sizeof(h->key) || len > sizeof(h->text))
		return;
	memcpy(k, ids, ids_len);
	k += ids_len;
	*k++ = (char)!!a;
	if (a)
		memcpy(k, a, al + 1);
	k += a ? al + 1 : 0;
	*k++ = (char)!!b;
	if (b)
		memcpy(k, b, bl + 1);
	h->a_len = (uint16_t)al;
	memcpy(h->text, out->data + from, len);
	h->len = (uint16_t)len;
}

int fg_symbolizer_write(struct fg_symbolizer *s, FILE *out, const struct fg_sym_sample *sample)
{
	struct fg_sym_sample unwound, *smp = &unwound;
	struct fg_buf *b = &s->out;
	ssize_t nframes = -1;
	int r;

	unwound = *sample;
	if (smp->ustack)
		nframes = unwind_snapshot(s, smp);
	if (smp->cfi_unwound && !smp->uflags)
		cfi_frame_flags(s, smp);
	s->st.samples++;
	if (s->o.debuginfod && (r = fg_symbolizer_flush(s, out, false)) < 0)
		return r;
	s->nholes = 0;
	fg_buf_reset(b);
	/*
	 * perf script's header: "%s %5d/%-5d [%03d] %5lu.%06lu: %10lu %s: ";
	 * what comes before the time and after it, as the last sample's when
	 * made of the same
	 */
	uint32_t ids[3] = {smp->pid, smp->tid, smp->cpu};
	const char *event = smp->event ? smp->event : "cpu-clock";
	uint64_t slot = (((uint64_t)smp->tid << 32 | smp->cpu) ^ smp->pid) * 0x9e3779b97f4a7c15ull;
	struct hdr_memo *h = &s->hdr_ids[slot >> (64 - HDR_BITS)];
	size_t from;

	from = b->len;
	if (!hdr_same(h, ids, sizeof(ids), smp->comm, NULL, b)) {
		if (smp->comm && *smp->comm)
			fg_buf_add_escaped(b, smp->comm, strlen(smp->comm), FG_ESC_COMM);
		else
			fg_buf_add(b, ":-1", 3);
		fg_buf_addch(b, ' ');
		add_dec(b, smp->pid, 5, ' ', false);
		fg_buf_addch(b, '/');
		add_dec(b, smp->tid, 5, ' ', true);
		fg_buf_add(b, " [", 2);
		add_dec(b, smp->cpu, 3, '0', false);
		fg_buf_add(b, "] ", 2);
		hdr_keep(h, ids, sizeof(ids), smp->comm, NULL, b, from);
	}
	add_time(s, b, smp->time_ns);
	from = b->len;
	if (!hdr_same(&s->hdr_rest, &smp->weight, sizeof(smp->weight), event, smp->detail, b)) {
		fg_buf_add(b, ": ", 2);
		add_dec(b, smp->weight, 10, ' ', false);
		fg_buf_addch(b, ' ');
		fg_buf_addstr(b, event);
		fg_buf_add(b, ": ", 2);
		if (smp->detail)
			fg_buf_addstr(b, smp->detail);
		fg_buf_addch(b, '\n');
		hdr_keep(&s->hdr_rest, &smp->weight, sizeof(smp->weight), event, smp->detail, b,
			 from);
	}
	for (size_t i = 0; i < smp->nkips; i++) {
		struct fg_frame f;

		if (s->memo) {
			/* the kernel's owner: 0, then each change of its BPF code a new one */
			uint64_t owner = s->kgen ? 1ull << 63 | s->kgen : 0;

			if (!memo_emit(s, owner, smp->kips[i], i == 0))
				memo_frame(s, owner, smp->pid, smp->time_ns, smp->kips[i], i == 0);
			continue;
		}
		fg_symbolizer_frame(s, smp->pid, smp->time_ns, smp->kips[i], true, i == 0, &f);
		emit(s, &f);
	}
	from = b->len;
	if (nframes >= 0)
		emit_unwound(s, smp, s->uw_frames, (size_t)nframes);
	else
		for (size_t i = 0; i < smp->nuips; i++)
			emit_user(s, smp->pid, smp->time_ns, smp->uips[i],
				  smp->uflags ? smp->uflags[i]
				  : i == 0    ? FG_UNWIND_F_EXACT
					      : 0);
	/* Python frames in place of the eval loop's; not into text still to be filled in */
	if (smp->npy && s->nholes)
		fg_pysplice_skip(s->py);
	else if (smp->npy)
		fg_pysplice_stack(s->py, b, from, smp->pid, smp->pyframes, smp->pyoffsets, smp->npy,
				  smp->pyflags);
	fg_buf_addch(b, '\n');
	if (s->held || s->nholes) {
		/* behind a held sample, or waiting for a debug file itself */
		hold(s);
		while (s->held_bytes > HELD_MAX && fg_debuginfod_outstanding(s->o.debuginfod)) {
			/* memory is bounded: wait (within the budget) rather than hold more */
			fg_debuginfod_wait(s->o.debuginfod, -1);
			collect_fetches(s);
			if ((r = write_held(s, out)) < 0)
				return r;
		}
		return write_held(s, out);
	}
	if (fwrite(b->data, 1, b->len, out) != b->len)
		return -(errno ? errno : EIO);
	return 0;
}

int fg_symbolizer_record(struct fg_symbolizer *s, FILE *out, const struct fg_rec *rec)
{
	switch (rec->type) {
	case FG_REC_SAMPLE: {
		const struct fg_rec_sample *sm = rec->sample;
		char wait[48];
		struct fg_sym_sample smp = {
		    .comm = sm->comm,
		    .pid = sm->pid,
		    .tid = sm->tid,
		    .cpu = sm->cpu,
		    .time_ns = sm->time_ns,
		    .weight = sm->weight,
		    .event = sm->flags & FG_SAMPLE_F_OFFCPU ? "offcpu-time"
							    : fg_rec_evnames_get(s->events, sm),
		    .kips = rec->kips,
		    .nkips = sm->nr_kernel,
		    .uips = rec->uips,
		    .nuips = sm->nr_user,
		    .ustack = rec->ustack,
		    .ustack_regs = rec->ustack_regs,
		    .ustack_data = rec->ustack_data,
		    .cfi_unwound = sm->flags & FG_SAMPLE_F_USTACK_CFI,
		    .pyframes = rec->pyframes,
		    .pyoffsets = rec->pyoffsets,
		    .npy = rec->pystack ? rec->pystack->nr : 0,
		    .pyflags = rec->pystack ? rec->pystack->flags : 0,
		};
		if (sm->flags & FG_SAMPLE_F_OFFCPU) {
			/* as perf's sched_switch names it, where fg-fold --state finds it */
			snprintf(wait, sizeof(wait), "prev_state=%s%s",
				 fg_rec_wait_state(sm->flags),
				 sm->flags & FG_SAMPLE_F_OPEN ? " open=1" : "");
			smp.detail = wait;
		}
		return fg_symbolizer_write(s, out, &smp);
	}
	case FG_REC_MAPPING: {
		const struct fg_rec_mapping *mp = rec->mapping;
		struct fg_sym_mapping m = {
		    .pid = mp->pid,
		    .time_ns = mp->time_ns,
		    .start = mp->start,
		    .end = mp->end,
		    .pgoff = mp->pgoff,
		    .dev_major = mp->maj,
		    .dev_minor = mp->min,
		    .inode = mp->ino,
		    .path = rec->path,
		    .exec = mp->prot & 4, /* PROT_EXEC */
		};
		if (mp->flags & FG_MAP_F_BUILD_ID) {
			m.build_id = mp->build_id;
			m.build_id_len = mp->build_id_len;
		}
		fg_symbolizer_mapping(s, &m);
		break;
	}
	case FG_REC_COMM:
		if (rec->comm->flags & FG_COMM_F_EXEC)
			fg_symbolizer_exec(s, rec->comm->pid, rec->comm->time_ns);
		break;
	case FG_REC_FORK:
		fg_symbolizer_fork(s, rec->task->pid, rec->task->ppid);
		break;
	case FG_REC_EXIT:
		if (rec->task->pid == rec->task->tid)
			fg_symbolizer_exit(s, rec->task->pid);
		break;
	case FG_REC_CREDS:
		fg_symbolizer_creds(s, rec->creds->pid, rec->creds->uid, rec->creds->gid);
		break;
	case FG_REC_EVENT:
		fg_rec_evnames_add(s->events, rec);
		break;
	case FG_REC_PYCODE:
		fg_pysplice_name(s->py, rec->pycode, rec->py_name, rec->py_file, rec->py_table,
				 rec->py_table_len, rec->py_table_format);
		break;
	case FG_REC_KSYM:
		/* (code unloaded keeps its name: the last known at its addresses) */
		if (rec->ksym->flags & FG_KSYM_F_GONE)
			break;
		if (!s->bpf)
			s->bpf = fg_bpfsyms_new();
		if (fg_bpfsyms_add(s->bpf, rec->ksym->addr, rec->ksym->len, rec->ksym_name))
			s->kgen++;
		else
			s->st.bpf_over++;
		break;
	}
	return 0;
}

void fg_symbolizer_stats(const struct fg_symbolizer *s, struct fg_sym_stats *st)
{
	*st = s->st;
	fg_pysplice_stats(s->py, &st->py);
}
