// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fg/bpf_event.h"
#include "fg/cfi_load.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/procmaps.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "fg/sideband.h"
#include "fg/util.h"

/* A file's table, shared by the mappings of it. */
struct cfile {
	uint32_t slot; /* in the maps, or FG_CFI_TABLE_FP / FG_CFI_TABLE_PENDING */
	uint32_t refs; /* mappings of it */
	uint64_t bytes;
	uint64_t base; /* the table's rows are relative to this file address */
	struct fg_elf_load *loads;
	size_t nloads;
	/* no mapping of it left, kept loaded for the next process (lim.keep_ns): since idle_ns */
	uint64_t idle_ns;
	struct cfile *prev, *next; /* in the kept list, oldest first */
	/* its key in files (whose entry's val.p is NULL once it is freed) */
	char key[FG_CFI_KEY_MAX];
	size_t klen;
	/* in cfi_inodes (published), or to be at the next sync (in l->publish) */
	bool published, to_publish;
	/* not loaded for lack of room (slots or bytes; `bytes` its size): tried again (file_get) */
	bool no_room;
};

/* One executable mapping of a process. */
struct cmap {
	uint64_t start, end, sub;
	struct cfile *f;  /* NULL: code without a file (anonymous, JIT): frame pointers */
	uint32_t pending; /* no table to use: the program falls back */
};

struct cproc {
	uint32_t pid;
	struct cmap *maps; /* sorted by start, not overlapping */
	size_t n, alloc;
	bool dirty, partial, in_maps, refused;
	bool missing;	 /* not in PROC at the last sweep */
	bool waits_room; /* a table of its left out for lack of room: in l->room_waits */
	uint64_t since;	 /* the time of the newest record (or read of PROC) the mappings are from */
	uint64_t room_gen; /* l->room_gen when it began to wait */
};

struct fg_cfi_loader {
	char proc[256];
	uint64_t vdso_size; /* our vdso's (vdso_get()): 0 not read yet, UINT64_MAX none */
	struct fg_cfi_load_limits lim;
	struct fg_cfi_load_ops ops;
	struct fg_hash *files; /* identity key -> struct cfile * */
	struct fg_hash *procs; /* pid -> struct cproc * */
	uint32_t *free_slots;
	size_t nfree;
	uint32_t *quarantine; /* slots unloaded since the last sync: free after it */
	size_t nquarantine;
	uint32_t next_slot;
	uint32_t *dirty;
	size_t ndirty, adirty;
	struct fg_cfi_proc *buf;	/* what set_proc sends */
	uint32_t proc_gen;		/* the last version of a process' mappings sent */
	struct cfile *kept, *kept_last; /* tables no process maps, oldest first */
	struct cfile **publish;		/* tables loaded since the last sync, for cfi_inodes */
	size_t npublish, apublish;
	/* processes with a table left out for room, read again once a table is freed */
	uint32_t *room_waits;
	size_t nroom_waits, aroom_waits;
	uint64_t room_gen;	    /* syncs that freed slots */
	struct fg_cfi_store *store; /* tables kept between runs, or NULL */
	struct fg_cfi_load_stats st;
};

uint64_t fg_cfi_load_table_bytes(uint32_t nrows, uint32_t nrules)
{
	/* array maps hold their values 8-aligned */
	return (uint64_t)nrows * sizeof(struct fg_cfi_row) +
	       (uint64_t)nrules * ((sizeof(struct fg_cfi_rule) + 7) & ~(size_t)7);
}

struct fg_cfi_loader *fg_cfi_loader_new(const char *proc, const struct fg_cfi_load_limits *lim,
					const struct fg_cfi_load_ops *ops)
{
	struct fg_cfi_loader *l = fg_xcalloc(1, sizeof(*l));

	snprintf(l->proc, sizeof(l->proc), "%s", proc);
	l->lim = *lim;
	l->ops = *ops;
	l->files = fg_hash_new(0);
	l->procs = fg_hash_new(0);
	l->buf = fg_xmalloc(sizeof(*l->buf));
	return l;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool file_loaded(const struct cfile *f)
{
	return f->slot != FG_CFI_TABLE_FP && f->slot != FG_CFI_TABLE_PENDING;
}

/*
 * The identity of f's file as the kernel names it (its key: device and
 * inode) and what turns its mappings' offsets into its table's pcs: false
 * for a table the program cannot find that way (the vdso; more segments
 * than it looks at).
 */
static bool inode_of(const struct cfile *f, struct fg_cfi_inode_key *k, struct fg_cfi_inode *v)
{
	uint64_t id[4]; /* file_key()'s */

	if (f->klen != 1 + sizeof(id) || f->key[0] != 'i' || f->nloads > FG_CFI_INODE_LOADS)
		return false;
	memcpy(id, f->key + 1, sizeof(id));
	memset(k, 0, sizeof(*k));
	/* the kernel's dev_t: major << 20 | minor (MINORBITS) */
	k->dev = (uint32_t)((id[0] >> 32) << 20 | (id[0] & 0xfffff));
	k->ino = id[1];
	k->ctime_sec = (int64_t)id[2];
	k->ctime_nsec = (uint32_t)id[3];
	if (!v)
		return true;
	memset(v, 0, sizeof(*v));
	v->table = f->slot;
	v->nloads = (uint32_t)f->nloads;
	v->base = f->base;
	v->xvaddr = FG_CFI_NO_CODE;
	for (size_t i = 0; i < f->nloads; i++) {
		v->loads[i].offset = f->loads[i].offset;
		v->loads[i].filesz = f->loads[i].filesz;
		v->loads[i].vaddr = f->loads[i].vaddr;
		if ((f->loads[i].flags & PF_X) && f->loads[i].vaddr < v->xvaddr)
			v->xvaddr = f->loads[i].vaddr;
	}
	return true;
}

/* f into cfi_inodes once its table is committed (at the next sync) */
static void inode_publish(struct fg_cfi_loader *l, struct cfile *f)
{
	if (!l->ops.set_file || !file_loaded(f) ||
	    !inode_of(f, &(struct fg_cfi_inode_key){0}, NULL))
		return;
	FG_ALLOC_GROW(l->publish, l->npublish + 1, l->apublish);
	l->publish[l->npublish++] = f;
	f->to_publish = true;
}

/* f out of cfi_inodes (before its slot is emptied), or out of those to publish */
static void inode_withdraw(struct fg_cfi_loader *l, struct cfile *f)
{
	struct fg_cfi_inode_key k;

	if (f->published && inode_of(f, &k, NULL) && l->ops.set_file(l->ops.arg, &k, NULL) < 0)
		l->st.map_errors++;
	f->published = false;
	if (!f->to_publish)
		return;
	for (size_t i = 0; i < l->npublish; i++)
		if (l->publish[i] == f) {
			l->publish[i] = l->publish[--l->npublish];
			break;
		}
	f->to_publish = false;
}

/* f, mapped by no process, out of the maps and freed. */
static void file_free(struct fg_cfi_loader *l, struct cfile *f)
{
	inode_withdraw(l, f);
	if (file_loaded(f)) {
		l->ops.unload(l->ops.arg, f->slot);
		l->quarantine =
		    fg_xreallocarray(l->quarantine, l->nquarantine + 1, sizeof(uint32_t));
		l->quarantine[l->nquarantine++] = f->slot;
		l->st.tables--;
		l->st.bytes -= f->bytes;
		l->st.freed++;
	}
	/* (looked up again: an insert moves the entries) */
	fg_hash_get(l->files, f->key, f->klen)->val.p = NULL;
	free(f->loads);
	free(f);
}

static void kept_unlink(struct fg_cfi_loader *l, struct cfile *f)
{
	*(f->prev ? &f->prev->next : &l->kept) = f->next;
	*(f->next ? &f->next->prev : &l->kept_last) = f->prev;
	f->prev = f->next = NULL;
	l->st.kept--;
}

/* The oldest table kept, freed.  false when none is kept. */
static bool kept_evict(struct fg_cfi_loader *l)
{
	struct cfile *f = l->kept;

	if (!f)
		return false;
	kept_unlink(l, f);
	file_free(l, f);
	return true;
}

/* A mapping of f gone: the last one frees f, or keeps it loaded a while for the next process. */
static void file_put(struct fg_cfi_loader *l, struct cfile *f)
{
	if (!f || --f->refs)
		return;
	if (!file_loaded(f) || !l->lim.keep_ns) {
		file_free(l, f);
		return;
	}
	f->idle_ns = now_ns();
	f->prev = l->kept_last;
	*(l->kept_last ? &l->kept_last->next : &l->kept) = f;
	l->kept_last = f;
	l->st.kept++;
	/* room: a table kept gives its slot to the next that needs one (room_retry()) */
	l->room_gen++;
}

/* The tables kept longer than lim.keep_ns (all: every one), freed. */
static void kept_expire(struct fg_cfi_loader *l, bool all)
{
	uint64_t now = l->kept ? now_ns() : 0;

	while (l->kept && (all || now - l->kept->idle_ns >= l->lim.keep_ns))
		kept_evict(l);
}

void fg_cfi_loader_drop_kept(struct fg_cfi_loader *l)
{
	kept_expire(l, true);
}

static bool take_slot(struct fg_cfi_loader *l, uint32_t *slot)
{
	if (l->nfree) {
		*slot = l->free_slots[--l->nfree];
		return true;
	}
	if (l->next_slot >= l->lim.max_files)
		return false;
	*slot = l->next_slot++;
	return true;
}

/*
 * Into the maps, within the limits: c's slot, or FG_CFI_TABLE_PENDING (counted;
 * *no_room when only the room it would take is lacking).
 */
static uint32_t load_table(struct fg_cfi_loader *l, const struct fg_cfi *c, uint64_t *bytes,
			   bool *no_room)
{
	uint32_t slot;

	*no_room = false;
	*bytes = fg_cfi_load_table_bytes(c->nrows, c->nrules);
	if (c->nrows > l->lim.max_rows) {
		l->st.over_rows++;
		return FG_CFI_TABLE_PENDING;
	}
	/* the tables kept for reuse make room first (a slot freed is free after the next sync) */
	while ((l->st.bytes + *bytes > l->lim.max_bytes ||
		(!l->nfree && l->next_slot >= l->lim.max_files)) &&
	       kept_evict(l))
		;
	if (l->st.bytes + *bytes > l->lim.max_bytes) {
		l->st.over_bytes++;
		*no_room = *bytes <= l->lim.max_bytes;
		return FG_CFI_TABLE_PENDING;
	}
	if (!take_slot(l, &slot)) {
		l->st.over_files++;
		*no_room = true;
		return FG_CFI_TABLE_PENDING;
	}
	if (l->ops.load(l->ops.arg, slot, c) < 0) {
		l->st.map_errors++;
		l->free_slots = fg_xreallocarray(l->free_slots, l->nfree + 1, sizeof(uint32_t));
		l->free_slots[l->nfree++] = slot;
		return FG_CFI_TABLE_PENDING;
	}
	l->st.loaded++;
	l->st.tables++;
	l->st.bytes += *bytes;
	if (l->st.bytes > l->st.bytes_peak)
		l->st.bytes_peak = l->st.bytes;
	return slot;
}

/*
 * The table of the file open on fd (or of the image): from the store where
 * it is there, else built (and written to the store).  NULL with errno set,
 * as fg_cfi_open_fd().
 */
static struct fg_cfi *table_of(struct fg_cfi_loader *l, const char *key, size_t klen, int fd,
			       const void *image, size_t size)
{
	unsigned char id[FG_CFI_STORE_KEY_MAX];
	size_t idlen = l->store && !image ? fg_cfi_store_id(l->store, fd, key, klen, id) : 0;
	struct fg_cfi *c = idlen ? fg_cfi_store_get(l->store, id, idlen) : NULL;

	if (c)
		return c;
	c = image ? fg_cfi_open_mem(image, size) : fg_cfi_open_fd(fd, -1);
	if (c && c->nrows && idlen)
		fg_cfi_store_put(l->store, id, idlen, c);
	return c;
}

/* The table of the file open on fd (or of the image), built and loaded: a new struct cfile. */
static struct cfile *file_build(struct fg_cfi_loader *l, const char *key, size_t klen, int fd,
				const void *image, size_t size)
{
	struct cfile *f = fg_xcalloc(1, sizeof(*f));
	uint64_t t0 = now_ns();
	struct fg_cfi *c = table_of(l, key, klen, fd, image, size);
	int err = c ? 0 : errno;

	f->slot = FG_CFI_TABLE_PENDING;
	if (c && !c->nrows) {
		/* a table of nothing (every entry corrupt): as a file without CFI */
		l->st.bad_entries += c->st.bad_entries;
		fg_cfi_free(c);
		c = NULL;
		err = ENODATA;
	}
	if (!c) {
		if (err == ENODATA || err == ENOEXEC) {
			f->slot = FG_CFI_TABLE_FP; /* no CFI, or not ELF: frame pointers */
			l->st.fp_files++;
		} else if (err == E2BIG) {
			l->st.refused++; /* fg_elf_precheck: frame pointers */
			f->slot = FG_CFI_TABLE_FP;
		} else if (err == EFBIG) {
			l->st.over_rows++;
		} else {
			l->st.unreadable++;
		}
	} else {
		l->st.bad_entries += c->st.bad_entries;
		f->base = c->base;
		f->nloads = c->nloads;
		f->loads = fg_xreallocarray(NULL, c->nloads ? c->nloads : 1, sizeof(*f->loads));
		if (c->nloads)
			memcpy(f->loads, c->loads, c->nloads * sizeof(*f->loads));
		f->slot = load_table(l, c, &f->bytes, &f->no_room);
		fg_cfi_free(c);
	}
	l->st.build_ns += now_ns() - t0;
	return f;
}

/*
 * Whether a table of `bytes` could be loaded now, slots freed at the last sync
 * and the tables kept for reuse counted as room.
 */
static bool room_for(const struct fg_cfi_loader *l, uint64_t bytes)
{
	return (l->nfree || l->next_slot < l->lim.max_files || l->kept) &&
	       (l->st.bytes + bytes <= l->lim.max_bytes || l->kept);
}

/*
 * f's table, left out for lack of room, built and loaded again from fd (or
 * the image) once there is room: a process read from /proc at its first
 * samples can come before the records of another's exit that free the room
 * (fg-sample reads it when asked, ahead of the records), and room_retry()
 * reads again the processes that wait.
 */
static void file_retry(struct fg_cfi_loader *l, struct cfile *f, int fd, const void *image,
		       size_t size)
{
	uint64_t t0 = now_ns();
	struct fg_cfi *c;

	if (!f->no_room || (fd < 0 && !image) || !room_for(l, f->bytes))
		return;
	c = table_of(l, f->key, f->klen, fd, image, size);
	if (c && c->nrows) {
		f->slot = load_table(l, c, &f->bytes, &f->no_room);
		if (f->slot != FG_CFI_TABLE_PENDING)
			inode_publish(l, f);
	}
	fg_cfi_free(c);
	l->st.build_ns += now_ns() - t0;
}

/* The file of key, found or built (fd or image); a reference taken. */
static struct cfile *file_get(struct fg_cfi_loader *l, const char *key, size_t klen, int fd,
			      const void *image, size_t size)
{
	bool inserted;
	struct fg_hash_entry *e = fg_hash_upsert(l->files, key, klen, &inserted);
	struct cfile *f = e->val.p;

	if (f) {
		if (file_loaded(f))
			l->st.shared++;
		if (!f->refs) { /* kept since its last process: loaded already, no parse */
			kept_unlink(l, f);
			l->st.reused++;
		}
		if (f->slot == FG_CFI_TABLE_PENDING)
			file_retry(l, f, fd, image, size);
	} else {
		f = file_build(l, key, klen, fd, image, size);
		memcpy(f->key, key, klen);
		f->klen = klen;
		e->val.p = f;
		inode_publish(l, f);
	}
	f->refs++;
	return f;
}

/*
 * The kernel's vdso, the same in every process: this process' own.  Its size
 * read from our mappings once (every new process maps one).
 */
static struct cfile *vdso_get(struct fg_cfi_loader *l)
{
	uint64_t start = getauxval(AT_SYSINFO_EHDR), size = 0;
	char *data = NULL;
	size_t len;

	if (!start || l->vdso_size == UINT64_MAX)
		return NULL;
	if (!l->vdso_size) {
		if (fg_safeio_read_file("/proc/self/maps", 1u << 24, &data, &len) < 0)
			return NULL; /* (read again for the next process) */
		for (char *line = data, *nl; line < data + len; line = nl + 1) {
			struct fg_procmap pm;

			nl = memchr(line, '\n', (size_t)(data + len - line));
			if (!nl)
				nl = data + len;
			if (fg_procmap_parse(line, (size_t)(nl - line), &pm) == 0 &&
			    pm.start == start && strcmp(pm.path, "[vdso]") == 0)
				size = pm.end - pm.start;
		}
		free(data);
		l->vdso_size = size ? size : UINT64_MAX;
		if (!size)
			return NULL;
	}
	return file_get(l, "vdso", 4, -1, (const void *)(uintptr_t)start, l->vdso_size);
}

/*
 * The file mapping m of process pid, opened where it is certainly the file
 * mapped: /proc/PID/map_files/START-END, else PROC/PID/root/PATH when its
 * device and inode are the mapping's.  -1 when neither.
 */
static int open_mapped(struct fg_cfi_loader *l, const struct fg_rec_mapping *m, const char *path,
		       struct stat *st)
{
	char name[PATH_MAX + 300];
	int fd;

	snprintf(name, sizeof(name), "%s/%u/map_files/%llx-%llx", l->proc, m->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 && fstat(fd, st) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	if (!m->ino || path[0] != '/')
		return -1;
	snprintf(name, sizeof(name), "%s/%u/root%s", l->proc, m->pid, path);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) == 0 && st->st_ino == m->ino && major(st->st_dev) == m->maj &&
	    minor(st->st_dev) == m->min)
		return fd;
	close(fd);
	return -1;
}

/*
 * The identity of the file st describes: fg_cfi_key()'s device and inode,
 * then its change time, as the program's cfi_inodes key has them (a file
 * rewritten in place, or a new one given a freed inode, needs a new table).
 */
static size_t file_key(char *key, const struct stat *st)
{
	uint64_t ctime[2] = {(uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec};
	size_t len = fg_cfi_key(key, NULL, 0, major(st->st_dev), minor(st->st_dev), st->st_ino);

	_Static_assert(1 + 16 + sizeof(ctime) <= FG_CFI_KEY_MAX, "room for the change time");
	memcpy(key + len, ctime, sizeof(ctime));
	return len + sizeof(ctime);
}

/* What the mapping is: its table (a reference), or NULL and *pending. */
static struct cfile *resolve(struct fg_cfi_loader *l, const struct fg_rec_mapping *m,
			     const char *path, uint32_t *pending)
{
	char key[FG_CFI_KEY_MAX];
	struct cfile *f;
	struct stat st;
	size_t klen;
	int fd;

	*pending = 0;
	if (strcmp(path, "[vdso]") == 0) {
		f = vdso_get(l);
		*pending = !f;
		return f;
	}
	/* anonymous memory, JIT code (perf's mmap events name it "//anon"): frame pointers */
	if (path[0] != '/' || fg_starts_with(path, "//anon"))
		return NULL;
	fd = open_mapped(l, m, path, &st);
	if (fd < 0) {
		char dir[300];

		snprintf(dir, sizeof(dir), "%s/%u", l->proc, m->pid);
		if (access(dir, F_OK) < 0)
			l->st.gone++;
		else
			l->st.unreadable++;
		*pending = 1;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	klen = file_key(key, &st);
	f = file_get(l, key, klen, fd, NULL, 0);
	close(fd);
	return f;
}

static struct cproc *proc_get(struct fg_cfi_loader *l, uint32_t pid, bool create)
{
	struct fg_hash_entry *e = create ? fg_hash_upsert(l->procs, &pid, sizeof(pid), NULL)
					 : fg_hash_get(l->procs, &pid, sizeof(pid));
	struct cproc *p;

	if (!e)
		return NULL;
	p = e->val.p;
	if (!p && create) {
		p = fg_xcalloc(1, sizeof(*p));
		p->pid = pid;
		e->val.p = p;
	}
	return p;
}

static void mark_dirty(struct fg_cfi_loader *l, struct cproc *p)
{
	if (p->dirty)
		return;
	p->dirty = true;
	FG_ALLOC_GROW(l->dirty, l->ndirty + 1, l->adirty);
	l->dirty[l->ndirty++] = p->pid;
}

/* Drop the mappings [from, to) of p. */
static void drop_maps(struct fg_cfi_loader *l, struct cproc *p, size_t from, size_t to)
{
	if (from == to)
		return;
	for (size_t i = from; i < to; i++)
		file_put(l, p->maps[i].f);
	memmove(p->maps + from, p->maps + to, (p->n - to) * sizeof(*p->maps));
	p->n -= to - from;
}

/*
 * p waits for room (room_retry()).  The pids of processes gone while they
 * waited are dropped when they outnumber the processes known, so that the
 * list stays bounded while no room comes.
 */
static void room_wait(struct fg_cfi_loader *l, struct cproc *p)
{
	if (l->nroom_waits >= 2 * fg_hash_count(l->procs) + 64) {
		size_t n = 0;

		for (size_t i = 0; i < l->nroom_waits; i++) {
			struct cproc *q = proc_get(l, l->room_waits[i], false);

			if (q && q->waits_room)
				l->room_waits[n++] = l->room_waits[i];
		}
		l->nroom_waits = n;
	}
	p->waits_room = true;
	p->room_gen = l->room_gen;
	FG_ALLOC_GROW(l->room_waits, l->nroom_waits + 1, l->aroom_waits);
	l->room_waits[l->nroom_waits++] = p->pid;
}

static void add_mapping(struct fg_cfi_loader *l, const struct fg_rec_mapping *m, const char *path)
{
	struct cproc *p = proc_get(l, m->pid, true);
	struct cmap cm = {m->start, m->end, 0, NULL, 0};
	size_t lo = 0, hi;
	uint64_t v0;

	/*
	 * A mapping stamped before the mappings were read from /proc is in them, or
	 * was gone by then (the kernel stamps it once the mapping is in place)
	 */
	if (m->end <= m->start || m->time_ns < p->since)
		return;
	if (m->time_ns > p->since)
		p->since = m->time_ns;
	/* the first mapping ending after start, then those overlapping: replaced */
	while (lo < p->n && p->maps[lo].end <= m->start)
		lo++;
	hi = lo;
	while (hi < p->n && p->maps[hi].start < m->end)
		hi++;
	cm.f = resolve(l, m, path, &cm.pending);
	if (cm.f && cm.f->slot == FG_CFI_TABLE_PENDING) {
		cm.pending = 1;
	} else if (cm.f && cm.f->slot != FG_CFI_TABLE_FP) {
		/*
		 * pc - sub: the pc of the table's rows, on 32 bits over the whole
		 * mapping.  Addresses below the table's base wrap to the top of
		 * the 32 bits, past its closing row: no information, as for
		 * lib/cfi.
		 */
		uint64_t sub;

		if (!fg_elf_offset_to_addr(cm.f->loads, cm.f->nloads, m->pgoff, &v0)) {
			cm.pending = 1;
		} else {
			sub = m->start - v0 + cm.f->base;
			if ((int64_t)(m->end - 1 - sub) >= (int64_t)UINT32_MAX ||
			    (int64_t)(m->start - sub) < -(int64_t)INT32_MAX)
				cm.pending = 1;
			else
				cm.sub = sub;
		}
	}
	drop_maps(l, p, lo, hi);
	if (p->n >= FG_CFI_PROC_MAPS) {
		file_put(l, cm.f);
		if (!p->partial)
			l->st.over_maps++;
		p->partial = true;
		mark_dirty(l, p);
		return;
	}
	if (cm.f && cm.f->no_room && !p->waits_room)
		room_wait(l, p);
	FG_ALLOC_GROW(p->maps, p->n + 1, p->alloc);
	memmove(p->maps + lo + 1, p->maps + lo, (p->n - lo) * sizeof(*p->maps));
	p->maps[lo] = cm;
	p->n++;
	mark_dirty(l, p);
}

static void proc_clear(struct fg_cfi_loader *l, struct cproc *p)
{
	drop_maps(l, p, 0, p->n);
	p->partial = false;
	mark_dirty(l, p);
}

/*
 * Process child forked from parent at time `t`: the parent's mappings, as they were then.
 * Not when the child's own were read from /proc after that (fg_cfi_loader_rescan(), asked
 * for at its first samples, before the records that came since were handed over).
 */
static void proc_fork(struct fg_cfi_loader *l, uint32_t child, uint32_t parent, uint64_t t)
{
	struct cproc *pp = proc_get(l, parent, false), *c;

	if (!pp || child == parent)
		return;
	c = proc_get(l, child, false);
	if (c && c->since > t)
		return;
	c = proc_get(l, child, true);
	proc_clear(l, c);
	FG_ALLOC_GROW(c->maps, pp->n, c->alloc);
	for (size_t i = 0; i < pp->n; i++) {
		c->maps[i] = pp->maps[i];
		if (c->maps[i].f)
			c->maps[i].f->refs++;
	}
	c->n = pp->n;
	c->partial = pp->partial;
	c->since = t;
}

static void proc_exit(struct fg_cfi_loader *l, uint32_t pid)
{
	struct cproc *p = proc_get(l, pid, false);

	if (!p)
		return;
	drop_maps(l, p, 0, p->n);
	if (p->in_maps) {
		l->ops.set_proc(l->ops.arg, pid, NULL);
		l->st.procs--;
		l->st.proc_bytes -= sizeof(struct fg_cfi_proc);
	}
	if (p->dirty) /* no longer: its pid stays in the dirty list, found gone */
		p->dirty = false;
	free(p->maps);
	free(p);
	fg_hash_get(l->procs, &pid, sizeof(pid))->val.p = NULL;
}

void fg_cfi_loader_record(struct fg_cfi_loader *l, uint32_t type, const void *payload, size_t len)
{
	switch (type) {
	case FG_REC_MAPPING: {
		struct fg_rec_mapping m;
		const char *path = (const char *)payload + sizeof(m);

		if (len <= sizeof(m) || !memchr(path, 0, len - sizeof(m)))
			return;
		memcpy(&m, payload, sizeof(m));
		add_mapping(l, &m, path);
		break;
	}
	case FG_REC_COMM: {
		struct fg_rec_comm c;
		struct cproc *p;

		if (len < sizeof(c))
			return;
		memcpy(&c, payload, sizeof(c));
		/*
		 * Mappings read from /proc after the exec's record was stamped (since:
		 * when the read began) are the new image's already: the kernel stamps it
		 * once the new address space is in place.
		 */
		if ((c.flags & FG_COMM_F_EXEC) && (p = proc_get(l, c.pid, false)) &&
		    p->since <= c.time_ns) {
			proc_clear(l, p);
			if (c.time_ns > p->since)
				p->since = c.time_ns;
		}
		break;
	}
	case FG_REC_FORK:
	case FG_REC_EXIT: {
		struct fg_rec_task t;

		if (len < sizeof(t))
			return;
		memcpy(&t, payload, sizeof(t));
		if (t.pid != t.tid)
			return; /* a thread: its process' mappings stay */
		if (type == FG_REC_FORK)
			proc_fork(l, t.pid, t.ppid, t.time_ns);
		else
			proc_exit(l, t.pid);
		break;
	}
	default:
		break;
	}
}

static int scan_one(const struct fg_procmap *pm, void *arg)
{
	struct fg_cfi_loader *l = ((void **)arg)[0];
	uint32_t pid = *(uint32_t *)((void **)arg)[1];
	struct fg_rec_mapping m;

	if (!pm->exec || pm->end == pm->start)
		return 0;
	fg_sideband_maps_record(pm, &m);
	m.pid = m.tid = pid;
	m.time_ns = *(uint64_t *)((void **)arg)[2]; /* as they were when read */
	add_mapping(l, &m, pm->path_len ? pm->path : "//anon");
	return 0;
}

int fg_cfi_loader_scan(struct fg_cfi_loader *l, uint32_t pid)
{
	char name[300], *data = NULL;
	uint64_t bad, t = now_ns();
	void *arg[3] = {l, &pid, &t};
	size_t len;
	int err;

	snprintf(name, sizeof(name), "%s/%u/maps", l->proc, pid);
	err = fg_safeio_read_file(name, 64u << 20, &data, &len);
	if (err)
		return err;
	err = fg_procmaps_parse(data, len, scan_one, arg, &bad);
	free(data);
	return err < 0 ? err : 0;
}

int fg_cfi_loader_rescan(struct fg_cfi_loader *l, uint32_t pid)
{
	struct cproc *p = proc_get(l, pid, false);
	struct cmap *old;
	size_t n;
	int err;

	if (!p)
		return fg_cfi_loader_scan(l, pid);
	/* the old mappings' references are dropped after the new ones are taken: no reload */
	old = p->maps;
	n = p->n;
	p->maps = NULL;
	p->n = p->alloc = 0;
	p->partial = false;
	err = fg_cfi_loader_scan(l, pid);
	for (size_t i = 0; i < n; i++)
		file_put(l, old[i].f);
	free(old);
	mark_dirty(l, p);
	if (err == -ENOENT)
		proc_exit(l, pid);
	return err;
}

/* Every process in PROC, scanned (again: rescanned).  How many were read. */
static int scan_dir(struct fg_cfi_loader *l, bool again)
{
	DIR *d = opendir(l->proc);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t pid;

		if (!isdigit((unsigned char)de->d_name[0]) ||
		    fg_parse_u64(de->d_name, 1, INT32_MAX, &pid) < 0)
			continue;
		if ((again ? fg_cfi_loader_rescan : fg_cfi_loader_scan)(l, (uint32_t)pid) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int fg_cfi_loader_scan_all(struct fg_cfi_loader *l)
{
	return scan_dir(l, false);
}

int fg_cfi_loader_rescan_all(struct fg_cfi_loader *l)
{
	return scan_dir(l, true);
}

bool fg_cfi_loader_wants(uint32_t type, const void *payload, size_t len)
{
	struct fg_rec_comm c;
	struct fg_rec_task t;

	switch (type) {
	case FG_REC_MAPPING:
		return true;
	case FG_REC_COMM:
		if (len < sizeof(c))
			return false;
		memcpy(&c, payload, sizeof(c));
		return c.flags & FG_COMM_F_EXEC;
	case FG_REC_FORK:
	case FG_REC_EXIT:
		if (len < sizeof(t))
			return false;
		memcpy(&t, payload, sizeof(t));
		return t.pid == t.tid;
	default:
		return false;
	}
}

size_t fg_cfi_loader_sweep(struct fg_cfi_loader *l)
{
	size_t n = 0;

	for (size_t i = 0; i < fg_hash_count(l->procs); i++) {
		struct cproc *p = fg_hash_at(l->procs, i)->val.p;
		char dir[300];

		if (!p)
			continue;
		snprintf(dir, sizeof(dir), "%s/%u", l->proc, p->pid);
		if (access(dir, F_OK) == 0 || errno != ENOENT) {
			p->missing = false;
		} else if (!p->missing) {
			/* its exit record may be on its way still: the next sweep's */
			p->missing = true;
		} else {
			proc_exit(l, p->pid);
			n++;
		}
	}
	l->st.swept += n;
	return n;
}

/* Whether a table of p's is left out for lack of room. */
static bool waits_room(const struct cproc *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].f && p->maps[i].f->no_room)
			return true;
	return false;
}

/*
 * The processes waiting for room, read again from PROC once slots were freed
 * since they began to wait (at the end of a sync): their tables are loaded
 * then (file_retry()), though no record of theirs may come again.
 */
static void room_retry(struct fg_cfi_loader *l)
{
	uint32_t *pids = l->room_waits;
	size_t n = l->nroom_waits;

	if (!n || !room_for(l, 0))
		return;
	l->room_waits = NULL;
	l->nroom_waits = l->aroom_waits = 0;
	for (size_t i = 0; i < n; i++) {
		struct cproc *p = proc_get(l, pids[i], false);

		if (!p || !p->waits_room)
			continue;
		if (p->room_gen == l->room_gen || !room_for(l, 0)) {
			uint64_t gen = p->room_gen;

			room_wait(l, p);
			p->room_gen = gen;
			continue;
		}
		p->waits_room = false;
		if (!waits_room(p))
			continue; /* (its tables loaded since, by file_retry()) */
		l->st.room_reads++;
		fg_cfi_loader_rescan(l, pids[i]);
	}
	free(pids);
}

bool fg_cfi_loader_sync(struct fg_cfi_loader *l)
{
	kept_expire(l, false);
	room_retry(l);
	if (l->ops.commit_loads && l->ops.commit_loads(l->ops.arg) < 0)
		l->st.map_errors++;
	/* the tables committed, by their files' identity */
	for (size_t i = 0; i < l->npublish; i++) {
		struct cfile *f = l->publish[i];
		struct fg_cfi_inode_key k;
		struct fg_cfi_inode v;

		f->to_publish = false;
		if (!inode_of(f, &k, &v))
			continue;
		if (l->ops.set_file(l->ops.arg, &k, &v) < 0)
			l->st.map_errors++;
		else
			f->published = true;
	}
	l->npublish = 0;
	for (size_t i = 0; i < l->ndirty; i++) {
		struct cproc *p = proc_get(l, l->dirty[i], false);
		struct fg_cfi_proc *v = l->buf;
		int err;

		if (!p || !p->dirty)
			continue;
		p->dirty = false;
		memset(v, 0, sizeof(*v));
		v->n = (uint32_t)p->n;
		v->flags = p->partial ? FG_CFI_PROC_F_PARTIAL : 0;
		if (++l->proc_gen == 0)
			l->proc_gen = 1;
		v->gen = l->proc_gen;
		v->since = p->since;
		for (size_t k = 0; k < p->n; k++) {
			const struct cmap *cm = &p->maps[k];

			v->maps[k].start = cm->start;
			v->maps[k].end = cm->end;
			v->maps[k].sub = cm->sub;
			v->maps[k].table = cm->pending ? FG_CFI_TABLE_PENDING
					   : cm->f     ? cm->f->slot
						       : FG_CFI_TABLE_FP;
		}
		err = l->ops.set_proc(l->ops.arg, p->pid, v);
		if (err == -E2BIG || err == -ENOMEM) {
			if (!p->refused)
				l->st.over_procs++;
			p->refused = true;
		} else if (err) {
			l->st.map_errors++;
		} else if (!p->in_maps) {
			p->in_maps = true;
			l->st.procs++;
			l->st.proc_bytes += sizeof(struct fg_cfi_proc);
			if (l->st.procs > l->st.procs_peak)
				l->st.procs_peak = l->st.procs;
		}
	}
	l->ndirty = 0;
	if (l->ops.commit_unloads && l->ops.commit_unloads(l->ops.arg) < 0)
		l->st.map_errors++;
	/* no process uses them any more: free for other tables */
	if (!l->nquarantine)
		return false;
	l->free_slots =
	    fg_xreallocarray(l->free_slots, l->nfree + l->nquarantine, sizeof(uint32_t));
	memcpy(l->free_slots + l->nfree, l->quarantine, l->nquarantine * sizeof(uint32_t));
	l->nfree += l->nquarantine;
	l->nquarantine = 0;
	l->room_gen++;
	return l->nroom_waits > 0;
}

void fg_cfi_loader_started(struct fg_cfi_loader *l)
{
	l->st.start_tables = l->st.tables;
	l->st.start_bytes = l->st.bytes;
}

void fg_cfi_loader_set_store(struct fg_cfi_loader *l, struct fg_cfi_store *s)
{
	l->store = s;
}

void fg_cfi_loader_stats(const struct fg_cfi_loader *l, struct fg_cfi_load_stats *st)
{
	*st = l->st;
	st->store = l->store != NULL;
	if (l->store)
		st->stored = *fg_cfi_store_stats(l->store);
}

void fg_cfi_loader_free(struct fg_cfi_loader *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < fg_hash_count(l->procs); i++) {
		struct cproc *p = fg_hash_at(l->procs, i)->val.p;

		if (p)
			proc_exit(l, p->pid);
	}
	kept_expire(l, true);
	fg_hash_free(l->procs);
	fg_hash_free(l->files);
	free(l->free_slots);
	free(l->quarantine);
	free(l->publish);
	free(l->room_waits);
	free(l->dirty);
	free(l->buf);
	free(l);
}

static const char *const end_names[FG_CFI_STAT_MAX] = {
    [FG_CFI_STAT_END_NOINFO] = "no unwind information",
    [FG_CFI_STAT_END_INVALID] = "unsupported rule",
    [FG_CFI_STAT_END_NOREG] = "register unknown",
    [FG_CFI_STAT_END_UNREAD] = "unreadable",
    [FG_CFI_STAT_END_LOOP] = "loop",
    [FG_CFI_STAT_END_DEPTH] = "too deep",
};

static double mib(uint64_t b)
{
	return (double)b / (1 << 20);
}

void fg_cfi_load_report(struct fg_buf *out, const struct fg_cfi_load_stats *st,
			const struct fg_cfi_load_limits *lim, const uint64_t *bpf,
			uint64_t fallbacks, uint64_t start_ns, uint64_t begin_ns)
{
	uint64_t walks = bpf[FG_CFI_STAT_WALKS];
	const char *sep = "";

	fg_buf_addf(out,
		    "cfi: %" PRIu64 " user stacks unwound in BPF, %.1f frames on average (%" PRIu64
		    " frames in all through frame pointers: code without CFI), %" PRIu64
		    " whole (%.1f%%); %" PRIu64
		    " samples fell back to a snapshot (no table yet: %" PRIu64
		    " of a process not loaded yet)\n",
		    walks, walks ? (double)bpf[FG_CFI_STAT_FRAMES] / (double)walks : 0.0,
		    bpf[FG_CFI_STAT_FP_FRAMES], bpf[FG_CFI_STAT_END_STOP],
		    walks ? 100.0 * (double)bpf[FG_CFI_STAT_END_STOP] / (double)walks : 0.0,
		    fallbacks, bpf[FG_CFI_STAT_FALLBACK_NOPROC]);
	if (fallbacks || bpf[FG_CFI_STAT_VMA_LOOKUPS] || bpf[FG_CFI_STAT_EXE_MAPS])
		fg_buf_addf(out,
			    "cfi: the program's fallbacks: %" PRIu64
			    " a file without its table yet, %" PRIu64
			    " a table being built or over a limit, %" PRIu64
			    " code in no file it could look up, %" PRIu64
			    " a table freed meanwhile; %" PRIu64
			    " mappings looked up in the kernel's list, %" PRIu64
			    " found with their table, %" PRIu64
			    " executables' code found from their address space; %" PRIu64
			    " walks of a process that had mapped code over its mappings loaded\n",
			    bpf[FG_CFI_STAT_FALLBACK_NOTABLE], bpf[FG_CFI_STAT_FALLBACK_PENDING],
			    bpf[FG_CFI_STAT_FALLBACK_NOVMA], bpf[FG_CFI_STAT_FALLBACK_GONE],
			    bpf[FG_CFI_STAT_VMA_LOOKUPS], bpf[FG_CFI_STAT_VMA_MAPS],
			    bpf[FG_CFI_STAT_EXE_MAPS], bpf[FG_CFI_STAT_STALE]);
	if (walks > bpf[FG_CFI_STAT_END_STOP]) {
		fg_buf_addf(out, "cfi: stacks ended early: ");
		for (int k = 0; k < FG_CFI_STAT_MAX; k++)
			if (end_names[k] && bpf[k]) {
				fg_buf_addf(out, "%s%" PRIu64 " %s", sep, bpf[k], end_names[k]);
				sep = ", ";
			}
		fg_buf_addf(out, "\n");
	}
	fg_buf_addf(out,
		    "cfi: %" PRIu64 " tables in BPF maps, %.1f MiB (at most %.1f), and %" PRIu64
		    " processes' mappings, %.1f MiB; %" PRIu64 " tables loaded, %" PRIu64
		    " freed, %" PRIu64 " mappings shared one (%" PRIu64
		    " kept since its last process); %" PRIu64
		    " files without CFI (frame pointers); %" PRIu64 " ms building tables, %" PRIu64
		    " ms at start",
		    st->tables, mib(st->bytes), mib(st->bytes_peak), st->procs, mib(st->proc_bytes),
		    st->loaded, st->freed, st->shared, st->reused, st->fp_files,
		    st->build_ns / 1000000, start_ns / 1000000);
	if (begin_ns)
		fg_buf_addf(out, " (sampling began %" PRIu64 " ms after fg-sample did)",
			    begin_ns / 1000000);
	fg_buf_addf(out, "\n");
	fg_buf_addf(out,
		    "cfi: tables at the start %" PRIu64 ", %.1f MiB; at the end %" PRIu64
		    ", %.1f MiB (those of the processes still running)\n",
		    st->start_tables, mib(st->start_bytes), st->tables, mib(st->bytes));
	if (st->store)
		fg_buf_addf(out,
			    "cfi: tables kept between runs: %" PRIu64 " read, %" PRIu64
			    " not there (%" PRIu64 " written), %" PRIu64
			    " refused and built again, %" PRIu64 " not written, %" PRIu64
			    " removed for room\n",
			    st->stored.hits, st->stored.misses, st->stored.written,
			    st->stored.refused, st->stored.errors, st->stored.evicted);
	if (st->store && st->stored.refused)
		fg_buf_addf(out,
			    "cfi: the first table file refused: '%s', wrong from byte %" PRIu64
			    " (not this user's own, or not the table of the file it is named "
			    "for)\n",
			    st->stored.first_bad, st->stored.first_bad_at);
	if (st->unreadable)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " mapped files could not be opened: their samples "
			    "fell back to snapshots\n",
			    st->unreadable);
	if (st->refused)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " mapped files refused: their ELF headers claim more "
			    "sections or headers than the bounds, or than the file holds (frame "
			    "pointers)\n",
			    st->refused);
	if (st->swept)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " processes found gone without their exit record "
			    "(side-band events lost): their tables freed\n",
			    st->swept);
	if (st->gone)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " mappings of processes gone before their tables "
			    "were loaded (their samples fell back to snapshots)\n",
			    st->gone);
	if (st->bad_entries)
		fg_buf_addf(out, "cfi: %" PRIu64 " CIEs and FDEs skipped: corrupt or unsupported\n",
			    st->bad_entries);
	fg_cfi_load_problems(out, st, lim);
}

/* The lines of fg_cfi_load_report() that call for action: limits hit, maps not updated. */
void fg_cfi_load_problems(struct fg_buf *out, const struct fg_cfi_load_stats *st,
			  const struct fg_cfi_load_limits *lim)
{
	const struct {
		uint64_t n;
		const char *what, *opt;
		uint64_t limit;
	} over[] = {
	    {st->over_rows, "tables not loaded: over the rows of one table", "rows", lim->max_rows},
	    {st->over_bytes, "tables not loaded: over the MiB of tables", "mib",
	     lim->max_bytes >> 20},
	    {st->over_files, "tables not loaded: over the tables at once", "files", lim->max_files},
	    {st->over_procs, "processes not loaded: over the processes", "procs", lim->max_procs},
	};
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++)
		if (over[i].n)
			fg_buf_addf(out,
				    "cfi: %" PRIu64 " %s, %" PRIu64
				    " (raise with --cfi-max-%s); their samples fell back to "
				    "snapshots\n",
				    over[i].n, over[i].what, over[i].limit, over[i].opt);
	if (st->room_reads)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " processes read again for those tables, once "
			    "another was freed\n",
			    st->room_reads);
	if (st->map_errors)
		fg_buf_addf(out, "cfi: %" PRIu64 " updates of the BPF maps failed\n",
			    st->map_errors);
	if (st->store && st->stored.errors)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " tables could not be written to the store of tables "
			    "kept between runs (a full disk?); they are built again next time\n",
			    st->stored.errors);
	if (st->over_maps)
		fg_buf_addf(out,
			    "cfi: %" PRIu64 " processes have more than %d executable mappings: "
			    "samples in the others fell back to snapshots (a fixed bound)\n",
			    st->over_maps, FG_CFI_PROC_MAPS);
}

/* --- the BPF program's maps --- */

/*
 * A table's rows and rules into maps of their own, filled through a mapping
 * of each; they go into the arrays of maps at the next commit.
 */
static int bpf_load(void *arg, uint32_t slot, const struct fg_cfi *c)
{
	struct fg_cfi_bpf_maps *m = arg;
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	int rows = -1, rules = -1, err = 0;

	if (!c->nrows || !c->nrules)
		return -EINVAL;
	rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fg_cfi_rows", 4, sizeof(struct fg_cfi_row),
			      c->nrows, &o);
	if (rows < 0)
		return -errno;
	rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fg_cfi_rules", 4, sizeof(struct fg_cfi_rule),
			       c->nrules, &o);
	if (rules < 0)
		err = -errno;
	if (!err)
		err = fg_bpf_fill_mmapable(rows, c->nrows, sizeof(struct fg_cfi_row), c->rows);
	if (!err)
		err = fg_bpf_fill_mmapable(rules, c->nrules, sizeof(struct fg_cfi_rule), c->rules);
	if (err) {
		close(rows);
		if (rules >= 0)
			close(rules);
		return err;
	}
	if (m->nloads == m->aloads) {
		m->aloads = m->aloads ? 2 * m->aloads : 16;
		m->load_slots = fg_xreallocarray(m->load_slots, m->aloads, sizeof(uint32_t));
		m->load_rows = fg_xreallocarray(m->load_rows, m->aloads, sizeof(int));
		m->load_rules = fg_xreallocarray(m->load_rules, m->aloads, sizeof(int));
		m->load_files =
		    fg_xreallocarray(m->load_files, m->aloads, sizeof(struct fg_cfi_file));
	}
	m->load_slots[m->nloads] = slot;
	m->load_rows[m->nloads] = rows;
	m->load_rules[m->nloads] = rules;
	if (!++m->gen) /* 0 is no table's */
		m->gen = 1;
	m->load_files[m->nloads++] = (struct fg_cfi_file){c->nrows, c->nrules, m->gen, 0};
	return 0;
}

static void bpf_unload(void *arg, uint32_t slot)
{
	struct fg_cfi_bpf_maps *m = arg;

	FG_ALLOC_GROW(m->unload_slots, m->nunloads + 1, m->aunloads);
	m->unload_slots[m->nunloads++] = slot;
}

/* One batch update of a map, for a thread of its own (update_tables()): 0 or -errno. */
struct batch {
	int fd;
	const void *keys, *vals;
	uint32_t n;
	int err;
};

static void *batch_run(void *arg)
{
	struct batch *b = arg;
	uint32_t n = b->n;

	b->err = bpf_map_update_batch(b->fd, b->keys, b->vals, &n, NULL) < 0 ? -errno : 0;
	return NULL;
}

/*
 * The rows' and the rules' arrays of maps set at the same `n` slots, at once:
 * each update of an array of maps waits for a grace period (8 to 16 ms of wall
 * time here, while a new process' walks fall back), and the two waits overlap
 * when the second update runs in a thread of its own.  0 or -errno.
 */
static int update_tables(struct fg_cfi_bpf_maps *m, const uint32_t *slots, const int *rows,
			 const int *rules, uint32_t n)
{
	struct batch a = {m->rows, slots, rows, n, 0}, b = {m->rules, slots, rules, n, 0};
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, batch_run, &b) == 0;

	batch_run(&a);
	if (threaded)
		pthread_join(t, NULL);
	else
		batch_run(&b);
	return a.err ? a.err : b.err;
}

static int bpf_commit_loads(void *arg)
{
	struct fg_cfi_bpf_maps *m = arg;
	uint32_t n = (uint32_t)m->nloads;
	int err = 0;

	if (!n)
		return 0;
	/* the sizes first: a slot without its maps reads as no table (a fallback) */
	if (bpf_map_update_batch(m->files, m->load_slots, m->load_files, &n, NULL) < 0)
		err = -errno;
	else
		err = update_tables(m, m->load_slots, m->load_rows, m->load_rules,
				    (uint32_t)m->nloads);
	/* the arrays of maps hold the tables now */
	for (size_t i = 0; i < m->nloads; i++) {
		close(m->load_rows[i]);
		close(m->load_rules[i]);
	}
	m->nloads = 0;
	return err;
}

static int bpf_commit_unloads(void *arg)
{
	struct fg_cfi_bpf_maps *m = arg;
	uint32_t n = (uint32_t)m->nunloads;
	int err = 0;

	if (!n)
		return 0;
	/*
	 * The sizes first: the slot then reads as no table.  Then its maps
	 * replaced by empty ones, in one batch for all (arrays of maps have no
	 * batch delete, and each delete waits for a grace period): the tables'
	 * memory is freed after it.
	 */
	if (!m->empty_rows) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);

		m->empty_rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fg_cfi_rows", 4,
					       sizeof(struct fg_cfi_row), 1, &o);
		m->empty_rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fg_cfi_rules", 4,
						sizeof(struct fg_cfi_rule), 1, &o);
	}
	FG_ALLOC_GROW(m->unload_files, n, m->aunload_files);
	FG_ALLOC_GROW(m->unload_rows, n, m->aunload_fds);
	m->unload_rules = fg_xreallocarray(m->unload_rules, m->aunload_fds, sizeof(int));
	for (uint32_t i = 0; i < n; i++) {
		m->unload_files[i] = (struct fg_cfi_file){0, 0, 0, 0};
		m->unload_rows[i] = m->empty_rows;
		m->unload_rules[i] = m->empty_rules;
	}
	if (bpf_map_update_batch(m->files, m->unload_slots, m->unload_files, &n, NULL) < 0)
		err = -errno;
	else if (m->empty_rows < 0 || m->empty_rules < 0)
		err = -EBADF; /* (not made: the slots read as no table all the same) */
	else
		err = update_tables(m, m->unload_slots, m->unload_rows, m->unload_rules,
				    (uint32_t)m->nunloads);
	m->nunloads = 0;
	return err;
}

static int bpf_set_file(void *arg, const struct fg_cfi_inode_key *k, const struct fg_cfi_inode *v)
{
	struct fg_cfi_bpf_maps *m = arg;

	if (!v)
		return bpf_map_delete_elem(m->inodes, k) < 0 ? -errno : 0;
	return bpf_map_update_elem(m->inodes, k, v, BPF_ANY) < 0 ? -errno : 0;
}

static int bpf_set_proc(void *arg, uint32_t pid, const struct fg_cfi_proc *p)
{
	struct fg_cfi_bpf_maps *m = arg;
	int err;

	if (!p)
		err = bpf_map_delete_elem(m->procs, &pid) < 0 ? -errno : 0;
	else
		err = bpf_map_update_elem(m->procs, &pid, p, BPF_ANY) < 0 ? -errno : 0;
	/*
	 * After the write, failed or not: a walk that read the version before
	 * it and the entry before it looks the entry up again at its next
	 * sample (bpf/cfi_unwind.h, cfi_procs_ver).
	 */
	if (m->procs_ver)
		__atomic_fetch_add(m->procs_ver, 1, __ATOMIC_SEQ_CST);
	return err;
}

void fg_cfi_load_bpf_ops(struct fg_cfi_bpf_maps *m, struct fg_cfi_load_ops *ops)
{
	ops->load = bpf_load;
	ops->unload = bpf_unload;
	ops->set_proc = bpf_set_proc;
	ops->set_file = bpf_set_file;
	ops->commit_loads = bpf_commit_loads;
	ops->commit_unloads = bpf_commit_unloads;
	ops->arg = m;
}

void fg_cfi_bpf_maps_release(struct fg_cfi_bpf_maps *m)
{
	for (size_t i = 0; i < m->nloads; i++) {
		close(m->load_rows[i]);
		close(m->load_rules[i]);
	}
	free(m->load_slots);
	free(m->load_rows);
	free(m->load_rules);
	free(m->load_files);
	free(m->unload_slots);
	free(m->unload_files);
	free(m->unload_rows);
	free(m->unload_rules);
	if (m->empty_rows > 0)
		close(m->empty_rows);
	if (m->empty_rules > 0)
		close(m->empty_rules);
	memset(m, 0, sizeof(*m));
}
