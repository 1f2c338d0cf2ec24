// SPDX-License-Identifier: BSD-2-Clause
/* fg-sample's Python processes and the names of their frames: see include/fg/pyprocs.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/bpf_abi.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/pyline.h"
#include "fg/pyprocs.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "fg/util.h"

#define MAPS_MAX (64u << 20)

/* One process: its interpreter (NULL: not Python, or refused), its names by code object. */
struct pyp {
	struct fg_py *py;
	struct fg_hash *names; /* code address -> struct seen * */
};

struct fg_pyprocs {
	char proc[256];
	struct fg_pyprocs_ops ops;
	struct fg_hash *procs; /* pid -> struct pyp * (NULL once gone) */
	struct pending {
		uint32_t pid;
		uint32_t tries; /* ticks it was tried in */
	} pending[FG_PYPROCS_PENDING_MAX];
	size_t npending;
	uint64_t nnames; /* cached, all processes */
	uint64_t tick;	 /* fg_pyprocs_tick()s so far: code objects are checked once in each */
	struct fg_pyprocs_stats st;
	/* a pycode record being made: its head, names, and line table */
	uint8_t rec[sizeof(struct fg_rec_pycode) + FG_PY_NAME_MAX + FG_PY_FILE_MAX +
		    sizeof(struct fg_rec_pyline) + FG_REC_PY_TABLE_MAX];
};

int fg_pyprocs_proc_of(const struct fg_py *py, struct fg_py_proc *out)
{
	const struct fg_py_offsets *o = py->off;
	int read = 0;

	memset(out, 0, sizeof(*out));
	out->frame_instr = -1;
	out->code_code = -1;
	if (!o || py->pthread_specific_off < 0 || o->runtime_tss_key < 4)
		return -ENOTSUP;
	/* the BPF walk reads the two pointers within the first 64 bytes of a frame, 8-aligned */
	if (o->frame_previous < 0 || o->frame_previous > 56 || o->frame_previous % 8 ||
	    o->frame_code < 0 || o->frame_code > 56 || o->frame_code % 8)
		return -ENOTSUP;
	read = (o->frame_previous > o->frame_code ? o->frame_previous : o->frame_code) + 8;
	if (o->frame_owner >= read)
		read = o->frame_owner + 1;
	if (o->frame_is_entry >= read)
		read = o->frame_is_entry + 1;
	/* the instruction: an int (f_lasti) 4-aligned, a pointer 8-aligned, in the same read */
	if (o->frame_instr >= 0 && o->frame_instr % (o->code_code >= 0 ? 8 : 4) == 0 &&
	    o->frame_instr + (o->code_code >= 0 ? 8 : 4) <= FG_PY_FRAME_READ_MAX - 8) {
		out->frame_instr = o->frame_instr;
		out->code_code = o->code_code;
		out->instr_kind = o->code_code >= 0 ? FG_PY_INSTR_POINTER
				  : py->minor >= 10 ? FG_PY_INSTR_LASTI_UNITS
						    : FG_PY_INSTR_LASTI_BYTES;
		if (o->frame_instr + (o->code_code >= 0 ? 8 : 4) > read)
			read = o->frame_instr + (o->code_code >= 0 ? 8 : 4);
	}
	read = (read + 7) & ~7;
	if (read > FG_PY_FRAME_READ_MAX - 1)
		return -ENOTSUP;
	out->tss_key = py->runtime + (uint64_t)o->runtime_tss_key - 4;
	out->pthread_specific_off = py->pthread_specific_off;
	out->tstate_frame = o->tstate_frame;
	out->cframe_current_frame = o->cframe_current_frame;
	out->frame_previous = o->frame_previous;
	out->frame_code = o->frame_code;
	out->frame_owner = o->frame_owner;
	out->frame_is_entry = o->frame_is_entry;
	out->owner_cstack = o->frame_owner_cstack;
	out->frame_read = (uint16_t)read;
	out->minor = (uint8_t)py->minor;
	if (o->frame_owner_cstack >= 0 && o->frame_owner >= 0)
		out->kind = FG_PY_KIND_CSTACK;
	else if (o->frame_is_entry >= 0)
		out->kind = FG_PY_KIND_IS_ENTRY;
	else if (o->frame_owner < 0)
		out->kind = FG_PY_KIND_OBJECTS;
	else
		return -ENOTSUP;
	return 0;
}

struct fg_pyprocs *fg_pyprocs_new(const char *proc, const struct fg_pyprocs_ops *ops)
{
	struct fg_pyprocs *p = fg_xcalloc(1, sizeof(*p));

	snprintf(p->proc, sizeof(p->proc), "%s", proc);
	p->ops = *ops;
	p->procs = fg_hash_new(0);
	return p;
}

/* the readers' counts into the totals, then the process's state freed */
static void pyp_free(struct fg_pyprocs *p, struct pyp *q)
{
	if (!q)
		return;
	if (q->py) {
		struct fg_py_stats *a = &p->st.reads, *b = &q->py->stats;

		a->read_errors += b->read_errors;
		a->bad_objects += b->bad_objects;
		a->names_cut += b->names_cut;
		a->depth_limit += b->depth_limit;
		a->thread_limit += b->thread_limit;
		a->tables_cut += b->tables_cut;
		fg_py_release(q->py);
		free(q->py);
	}
	if (q->names) {
		p->nnames -= fg_hash_count(q->names);
		for (size_t i = 0; i < fg_hash_count(q->names); i++)
			free(fg_hash_at(q->names, i)->val.p);
		fg_hash_free(q->names);
	}
	free(q);
}

void fg_pyprocs_free(struct fg_pyprocs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < fg_hash_count(p->procs); i++)
		pyp_free(p, fg_hash_at(p->procs, i)->val.p);
	fg_hash_free(p->procs);
	free(p);
}

/* pid's process, forgotten (it exited or exec'd): out of the map, its names dropped */
static void forget(struct fg_pyprocs *p, uint32_t pid)
{
	struct fg_hash_entry *e = fg_hash_get(p->procs, &pid, sizeof(pid));
	struct pyp *q;

	if (!e || !e->val.p)
		return;
	q = e->val.p;
	if (q->py)
		p->ops.set(p->ops.ctx, pid, NULL);
	pyp_free(p, q);
	e->val.p = NULL;
}

/*
 * Open process pid, unless known already: 0, or -EAGAIN when it could not be
 * settled and `last` is false (a process still being loaded: its data not
 * mapped yet, its interpreter's description of itself not in place), to be
 * tried again at the next tick.
 */
static int scan(struct fg_pyprocs *p, uint32_t pid, bool last)
{
	struct fg_hash_entry *e = fg_hash_upsert(p->procs, &pid, sizeof(pid), NULL);
	struct fg_py_proc bp;
	struct pyp *q;
	int err;

	if (e->val.p)
		return 0; /* known: Python or not */
	q = fg_xcalloc(1, sizeof(*q));
	q->py = fg_xmalloc(sizeof(*q->py));
	err = fg_py_open(q->py, p->proc, (pid_t)pid);
	if (!err)
		err = fg_pyprocs_proc_of(q->py, &bp);
	if (err && err != -ENOENT && err != -ESRCH && !last) {
		free(q->py);
		free(q);
		return -EAGAIN;
	}
	if (err == -ENOTSUP || err == -EPROTO) {
		p->st.unknown++;
		p->st.unknown_minor = q->py->major == 3 ? q->py->minor : 0;
		p->st.unknown_pid = pid;
	} else if (err && err != -ENOENT) {
		p->st.open_failed++;
		free(q->py);
		free(q);
		return 0; /* tried again at its next mapping */
	}
	if (!err && p->ops.set(p->ops.ctx, pid, &bp) < 0) {
		p->st.map_failed++;
		err = -ENOSPC;
	}
	if (err) {
		/* known not to be walked, until it exec's */
		fg_py_release(q->py);
		free(q->py);
		q->py = NULL;
	} else {
		p->st.procs++;
		p->st.by_minor[q->py->minor & 15]++;
		q->names = fg_hash_new(0);
	}
	e->val.p = q;
	return 0;
}

void fg_pyprocs_scan(struct fg_pyprocs *p, uint32_t pid)
{
	scan(p, pid, true);
}

/* whether a file of this name may hold an interpreter: python*, libpython3.* */
static bool candidate_path(const char *path, size_t len)
{
	const char *base = path;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	len -= (size_t)(base - path);
	return (len >= 6 && !memcmp(base, "python", 6)) ||
	       (len >= 11 && !memcmp(base, "libpython3.", 11));
}

/* whether process pid is worth opening: its executable, or a file it maps, a candidate */
static bool candidate_pid(const struct fg_pyprocs *p, uint32_t pid)
{
	char name[512], exe[4096], *maps = NULL;
	size_t len = 0;
	ssize_t n;
	bool yes = false;
	int fd;

	snprintf(name, sizeof(name), "%s/%" PRIu32 "/exe", p->proc, pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	if (n > 0 && candidate_path(exe, (size_t)n))
		return true;
	snprintf(name, sizeof(name), "%s/%" PRIu32 "/maps", p->proc, pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fg_safeio_read_all(fd, MAPS_MAX, &maps, &len) == 0)
		yes = memmem(maps, len, "/libpython3.", 12) != NULL;
	close(fd);
	free(maps);
	return yes;
}

void fg_pyprocs_scan_all(struct fg_pyprocs *p)
{
	DIR *d = opendir(p->proc);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (candidate_pid(p, (uint32_t)pid))
			fg_pyprocs_scan(p, (uint32_t)pid);
	}
	closedir(d);
}

static void add_pending(struct fg_pyprocs *p, uint32_t pid)
{
	struct fg_hash_entry *e = fg_hash_get(p->procs, &pid, sizeof(pid));

	if (e && e->val.p)
		return;
	for (size_t i = 0; i < p->npending; i++)
		if (p->pending[i].pid == pid)
			return;
	if (p->npending == FG_PYPROCS_PENDING_MAX) {
		p->st.pending_dropped++;
		return;
	}
	p->pending[p->npending++] = (struct pending){.pid = pid};
}

void fg_pyprocs_record(struct fg_pyprocs *p, uint32_t type, const void *payload, size_t len)
{
	if (type == FG_REC_MAPPING && len > sizeof(struct fg_rec_mapping)) {
		struct fg_rec_mapping m;
		const char *path = (const char *)payload + sizeof(m);

		memcpy(&m, payload, sizeof(m));
		if (candidate_path(path, strnlen(path, len - sizeof(m))))
			add_pending(p, m.pid);
	} else if (type == FG_REC_COMM && len >= sizeof(struct fg_rec_comm)) {
		struct fg_rec_comm c;

		memcpy(&c, payload, sizeof(c));
		if (c.flags & FG_COMM_F_EXEC)
			forget(p, c.pid);
	} else if (type == FG_REC_EXIT && len >= sizeof(struct fg_rec_task)) {
		struct fg_rec_task t;

		memcpy(&t, payload, sizeof(t));
		if (t.pid == t.tid)
			forget(p, t.pid);
	}
}

void fg_pyprocs_tick(struct fg_pyprocs *p)
{
	size_t kept = 0;

	p->tick++;
	for (size_t i = 0; i < p->npending; i++) {
		struct pending c = p->pending[i];

		c.tries++;
		if (scan(p, c.pid, c.tries >= FG_PYPROCS_TRIES) == -EAGAIN)
			p->pending[kept++] = c;
	}
	p->npending = kept;
}

/*
 * A code object's name into the stream: its record, written through ops.emit,
 * with its line table when it can be read (its lack counted).
 */
static void emit_name(struct fg_pyprocs *p, struct fg_py *py, uint32_t pid, uint64_t time_ns,
		      const struct fg_py_frame *f)
{
	struct fg_rec_pycode c = {.pid = pid, .firstlineno = f->firstlineno, .code = f->code};
	size_t nl = strlen(f->name) + 1, fl = strlen(f->file) + 1, at, tlen;
	struct fg_rec_pyline t = {.format = (uint8_t)fg_pyline_format(py->major, py->minor)};
	uint8_t *buf = p->rec;

	_Static_assert(FG_PY_NAME_MAX <= FG_REC_PY_NAME_MAX && FG_PY_FILE_MAX <= FG_REC_PY_FILE_MAX,
		       "names fit the record's bounds");
	c.time_ns = time_ns;
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), f->name, nl);
	memcpy(buf + sizeof(c) + nl, f->file, fl);
	at = sizeof(c) + nl + fl;
	if (t.format != FG_PYLINE_NONE &&
	    fg_py_linetable(py, f->code, buf + at + sizeof(t), FG_REC_PY_TABLE_MAX, &tlen) == 0) {
		t.len = (uint32_t)tlen;
		memcpy(buf + at, &t, sizeof(t));
		at += sizeof(t) + tlen;
	} else {
		p->st.no_table++;
	}
	p->ops.emit(p->ops.ctx, time_ns, buf, at);
}

/* a code object of a process: its identity when last checked, and in which tick */
struct seen {
	uint64_t tick;
	struct fg_py_code_head head; /* all 0: could not be read */
};

/*
 * Whether code object `code` of q needs a record now: first seen, or its
 * identity changed since the last tick's check (freed, another made at its
 * address).  At most one read of it a tick.
 */
static bool needs_name(struct fg_pyprocs *p, struct pyp *q, uint64_t code, bool *fresh)
{
	struct fg_hash_entry *e = fg_hash_get(q->names, &code, sizeof(code));
	struct fg_py_code_head h = {0};
	struct seen *s;

	*fresh = !e;
	if (e && ((struct seen *)e->val.p)->tick == p->tick)
		return false;
	if (!e && p->nnames >= FG_PYPROCS_NAMES_MAX) {
		p->st.names_full++;
		return false;
	}
	if (fg_py_code_head(q->py, code, &h) < 0)
		memset(&h, 0, sizeof(h)); /* gone, or not a code object (counted below) */
	if (!e) {
		e = fg_hash_upsert(q->names, &code, sizeof(code), NULL);
		e->val.p = fg_xcalloc(1, sizeof(struct seen));
		p->nnames++;
	}
	s = e->val.p;
	s->tick = p->tick;
	if (!*fresh && (!h.name || !memcmp(&s->head, &h, sizeof(h))))
		return false; /* the same, or no longer readable: its name stands */
	s->head = h;
	if (!h.name) {
		p->st.name_failed++;
		return false;
	}
	return true;
}

void fg_pyprocs_name(struct fg_pyprocs *p, uint32_t pid, uint64_t time_ns, const uint64_t *frames,
		     size_t n)
{
	struct fg_hash_entry *pe = fg_hash_get(p->procs, &pid, sizeof(pid));
	struct pyp *q = pe ? pe->val.p : NULL;

	if (!q || !q->py) {
		p->st.unknown_proc += n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t code = frames[i] & ~FG_PY_ENTRY;
		struct fg_py_frame f;
		bool fresh;

		if (!needs_name(p, q, code, &fresh))
			continue;
		if (fg_py_code(q->py, code, &f) < 0) {
			p->st.name_failed++;
			continue;
		}
		emit_name(p, q->py, pid, time_ns, &f);
		if (fresh)
			p->st.named++;
		else
			p->st.renamed++;
	}
}

void fg_pyprocs_stats(const struct fg_pyprocs *p, struct fg_pyprocs_stats *st)
{
	*st = p->st;
	for (size_t i = 0; i < fg_hash_count(p->procs); i++) {
		const struct pyp *q = fg_hash_at(p->procs, i)->val.p;

		if (q && q->py) {
			st->reads.read_errors += q->py->stats.read_errors;
			st->reads.bad_objects += q->py->stats.bad_objects;
			st->reads.names_cut += q->py->stats.names_cut;
			st->reads.tables_cut += q->py->stats.tables_cut;
		}
	}
}

void fg_pyprocs_report(FILE *f, const struct fg_pyprocs_stats *st, bool verbose)
{
	if (st->procs && verbose) {
		fprintf(f, "python: %" PRIu64 " processes walked (", st->procs);
		for (unsigned m = 0, first = 1; m < 16; m++) {
			if (!st->by_minor[m])
				continue;
			fprintf(f, "%s3.%u: %" PRIu64, first ? "" : ", ", m, st->by_minor[m]);
			first = 0;
		}
		fprintf(f, "), %" PRIu64 " code objects named", st->named);
		if (st->renamed)
			fprintf(f, ", %" PRIu64 " renamed", st->renamed);
		if (st->name_failed)
			fprintf(f, ", %" PRIu64 " could not be read", st->name_failed);
		if (st->names_full)
			fprintf(f, ", %" PRIu64 " frames over the names' bound", st->names_full);
		if (st->reads.names_cut)
			fprintf(f, ", %" PRIu64 " names cut", st->reads.names_cut);
		if (st->no_table)
			fprintf(f,
				", %" PRIu64 " without their line table (%" PRIu64
				" over its bound)",
				st->no_table, st->reads.tables_cut);
		fputs("\n", f);
	}
	if (st->unknown) {
		fprintf(f, "python: %" PRIu64 " processes of a version not known (", st->unknown);
		if (st->unknown_minor)
			fprintf(f, "3.%" PRIu32 ", ", st->unknown_minor);
		fprintf(f, "pid %" PRIu32 "): their native frames only\n", st->unknown_pid);
	}
	if (st->open_failed || st->map_failed || st->pending_dropped)
		fprintf(f,
			"python: processes not walked: %" PRIu64 " could not be read, %" PRIu64
			" over the map's room, %" PRIu64 " over the queue's\n",
			st->open_failed, st->map_failed, st->pending_dropped);
}
