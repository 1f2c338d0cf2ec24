// SPDX-License-Identifier: BSD-2-Clause
/* The record stream (fg-record(5)): a buffered writer and a streaming, validating reader. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/escape.h"
#include "fg/record.h"

_Static_assert(sizeof(struct fg_rec_header) == 200, "header layout");
_Static_assert(sizeof(struct fg_rec_hdr) == 8, "record header layout");
_Static_assert(sizeof(struct fg_rec_sample) == 56, "sample layout");
_Static_assert(sizeof(struct fg_rec_ustack) == 32, "ustack layout");
_Static_assert(sizeof(struct fg_rec_mapping) == 96, "mapping layout");
_Static_assert(sizeof(struct fg_rec_comm) == 40, "comm layout");
_Static_assert(sizeof(struct fg_rec_task) == 24, "task layout");
_Static_assert(sizeof(struct fg_rec_lost) == 24, "lost layout");
_Static_assert(sizeof(struct fg_rec_summary) == 88, "summary layout");
_Static_assert(sizeof(struct fg_rec_creds) == 24, "creds layout");
_Static_assert(sizeof(struct fg_rec_event) == 40, "event layout");
_Static_assert(FG_REC_EVENTS_MAX == 1u << (32 - FG_SAMPLE_EVENT_SHIFT), "event numbers");
_Static_assert(FG_SAMPLE_F_MASK >> FG_SAMPLE_EVENT_SHIFT == 0, "flags below the event");
_Static_assert((FG_SAMPLE_STATE_MASK & FG_SAMPLE_F_MASK) == 0 &&
		   FG_SAMPLE_STATE_MASK >> FG_SAMPLE_EVENT_SHIFT == 0,
	       "a wait's state between the flags and the event");
_Static_assert(FG_STATE_MAX <= FG_SAMPLE_STATE_MASK >> FG_SAMPLE_STATE_SHIFT, "task states");

#define HDR sizeof(struct fg_rec_hdr)
#define HEADER_MAX 65536u
#define USTACK_MAX_REGS 64u

static inline size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

const char *fg_rec_wait_state(uint32_t flags)
{
	static const char *const names[FG_STATE_MAX + 1] = {
	    [FG_STATE_RUNNING] = "R",
	    [FG_STATE_INTERRUPTIBLE] = "S",
	    [FG_STATE_UNINTERRUPTIBLE] = "D",
	    [FG_STATE_STOPPED] = "T",
	    [FG_STATE_TRACED] = "t",
	    [FG_STATE_DEAD] = "X",
	    [FG_STATE_ZOMBIE] = "Z",
	    [FG_STATE_PARKED] = "P",
	    [FG_STATE_IDLE] = "I",
	    [FG_STATE_PREEMPTED] = "R+",
	};
	uint32_t state = (flags & FG_SAMPLE_STATE_MASK) >> FG_SAMPLE_STATE_SHIFT;

	return state <= FG_STATE_MAX ? names[state] : "?";
}

const char *fg_rec_type_name(uint32_t type)
{
	switch (type) {
	case FG_REC_SAMPLE:
		return "sample";
	case FG_REC_MAPPING:
		return "mapping";
	case FG_REC_COMM:
		return "comm";
	case FG_REC_EXIT:
		return "exit";
	case FG_REC_FORK:
		return "fork";
	case FG_REC_LOST:
		return "lost";
	case FG_REC_SUMMARY:
		return "summary";
	case FG_REC_CREDS:
		return "creds";
	case FG_REC_EVENT:
		return "event";
	case FG_REC_PYCODE:
		return "pycode";
	case FG_REC_KSYM:
		return "ksym";
	}
	return "unknown";
}

static bool known_type(uint32_t type)
{
	return type >= FG_REC_SAMPLE && type <= FG_REC_TYPE_MAX;
}

/* --- checking one record --- */

static int bad(char *why, size_t whylen, const char *fmt, ...) FG_PRINTF(3, 4);

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

static int parse_sample(const uint8_t *p, size_t plen, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_sample *s = (const void *)p;
	size_t need = sizeof(*s);

	if (plen < need)
		return bad(why, wl, "payload of %zu bytes, shorter than %zu", plen, need);
	if (s->nr_kernel > FG_REC_MAX_FRAMES || s->nr_user > FG_REC_MAX_FRAMES)
		return bad(why, wl, "too many frames (%" PRIu32 " kernel, %" PRIu32 " user)",
			   s->nr_kernel, s->nr_user);
	if (!memchr(s->comm, '\0', sizeof(s->comm)))
		return bad(why, wl, "comm not NUL-terminated");
	need += 8 * ((size_t)s->nr_kernel + s->nr_user);
	if (plen < need)
		return bad(why, wl,
			   "%" PRIu32 " + %" PRIu32 " frames need %zu bytes, payload has %zu",
			   s->nr_kernel, s->nr_user, need, plen);
	rec->sample = s;
	rec->kips = (const uint64_t *)(p + sizeof(*s));
	rec->uips = rec->kips + s->nr_kernel;
	if (s->flags & FG_SAMPLE_F_USTACK_SNAPSHOT) {
		const struct fg_rec_ustack *u = (const void *)(p + need);

		if (plen < need + sizeof(*u))
			return bad(why, wl, "stack snapshot flag set but no snapshot");
		if (u->nr_regs > USTACK_MAX_REGS)
			return bad(why, wl, "stack snapshot with %" PRIu32 " registers",
				   u->nr_regs);
		if (u->nr_regs != (uint32_t)__builtin_popcountll(u->regs_mask))
			return bad(why, wl,
				   "stack snapshot with %" PRIu32 " registers for mask 0x%" PRIx64,
				   u->nr_regs, u->regs_mask);
		if (u->size > FG_REC_MAX_SIZE)
			return bad(why, wl, "stack snapshot of %" PRIu32 " bytes", u->size);
		size_t total = need + sizeof(*u) + 8 * (size_t)u->nr_regs + align8(u->size);

		if (plen < total)
			return bad(why, wl, "stack snapshot needs %zu bytes, payload has %zu",
				   total, plen);
		rec->ustack = u;
		rec->ustack_regs = (const uint64_t *)(p + need + sizeof(*u));
		rec->ustack_data = (const uint8_t *)(rec->ustack_regs + u->nr_regs);
		need = total;
	}
	if (s->flags & FG_SAMPLE_F_PYSTACK) {
		const struct fg_rec_pystack *py = (const void *)(p + need);

		if (plen < need + sizeof(*py))
			return bad(why, wl, "Python stack flag set but no Python stack");
		if (py->nr > FG_REC_MAX_FRAMES)
			return bad(why, wl, "too many Python frames (%" PRIu32 ")", py->nr);
		if (plen < need + sizeof(*py) + 8 * (size_t)py->nr)
			return bad(why, wl,
				   "%" PRIu32 " Python frames need %zu bytes, payload has %zu",
				   py->nr, need + sizeof(*py) + 8 * (size_t)py->nr, plen);
		rec->pystack = py;
		rec->pyframes = (const uint64_t *)(p + need + sizeof(*py));
		if (py->flags & FG_PYSTACK_F_OFFSETS) {
			size_t at = need + sizeof(*py) + 8 * (size_t)py->nr;

			if (plen < at + 4 * (size_t)py->nr)
				return bad(why, wl,
					   "%" PRIu32
					   " Python offsets need %zu bytes, payload has %zu",
					   py->nr, at + 4 * (size_t)py->nr, plen);
			rec->pyoffsets = p + at;
		}
	}
	return 0;
}

/* a NUL-terminated string of 1 to max bytes at p (len left), without control characters */
static const char *text_string(const char *p, size_t len, size_t max)
{
	const char *nul = memchr(p, '\0', len < max ? len : max);

	if (!nul)
		return NULL;
	for (const char *c = p; c < nul; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return NULL;
	return nul + 1;
}

/* a pycode record's line table, after its file name at `at` (less than 8 bytes left: padding) */
static int parse_pyline(const uint8_t *p, size_t plen, const uint8_t *at, struct fg_rec *rec,
			char *why, size_t wl)
{
	size_t left = plen - (size_t)(at - p);
	struct fg_rec_pyline t;

	if (left < sizeof(t))
		return 0;
	memcpy(&t, at, sizeof(t));
	if (t.len > FG_REC_PY_TABLE_MAX || t.len > left - sizeof(t) || t.format < 1 || t.format > 3)
		return bad(why, wl, "Python line table of %" PRIu32 " bytes, format %u, in %zu",
			   t.len, t.format, left - sizeof(t));
	rec->py_table = at + sizeof(t);
	rec->py_table_len = t.len;
	rec->py_table_format = t.format;
	return 0;
}

static int parse_pycode(const uint8_t *p, size_t plen, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_pycode *c = (const void *)p;
	const char *name = (const char *)(p + sizeof(*c)), *file, *end = (const char *)p + plen;

	if (plen < sizeof(*c) + 2)
		return bad(why, wl, "payload of %zu bytes, shorter than %zu", plen, sizeof(*c) + 2);
	file = text_string(name, (size_t)(end - name), FG_REC_PY_NAME_MAX);
	if (!file || file >= end || !text_string(file, (size_t)(end - file), FG_REC_PY_FILE_MAX))
		return bad(why, wl,
			   "Python name or file name not NUL-terminated within %u and %u bytes, or "
			   "with control characters",
			   FG_REC_PY_NAME_MAX, FG_REC_PY_FILE_MAX);
	rec->pycode = c;
	rec->py_name = name;
	rec->py_file = file;
	return parse_pyline(
	    p, plen, (const uint8_t *)text_string(file, (size_t)(end - file), FG_REC_PY_FILE_MAX),
	    rec, why, wl);
}

static int parse_ksym(const uint8_t *p, size_t plen, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_ksym *k = (const void *)p;
	const char *name = (const char *)(p + sizeof(*k));

	if (plen < sizeof(*k) + 2)
		return bad(why, wl, "payload of %zu bytes, shorter than %zu", plen, sizeof(*k) + 2);
	if (!k->len || k->addr + k->len < k->addr)
		return bad(why, wl, "address range 0x%" PRIx64 " of %" PRIu32 " bytes", k->addr,
			   k->len);
	if (!text_string(name, plen - sizeof(*k), FG_REC_KSYM_NAME_MAX) || !*name)
		return bad(why, wl,
			   "kernel symbol name empty, not NUL-terminated within %u bytes, or with "
			   "control characters",
			   FG_REC_KSYM_NAME_MAX);
	rec->ksym = k;
	rec->ksym_name = name;
	return 0;
}

static int parse_mapping(const uint8_t *p, size_t plen, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_mapping *m = (const void *)p;
	const char *path = (const char *)(p + sizeof(*m));

	if (plen < sizeof(*m) + 1)
		return bad(why, wl, "payload of %zu bytes, shorter than %zu", plen, sizeof(*m) + 1);
	if (m->build_id_len > FG_REC_BUILD_ID_MAX)
		return bad(why, wl, "build-id of %u bytes", m->build_id_len);
	if (m->start >= m->end)
		return bad(why, wl, "empty address range 0x%" PRIx64 "-0x%" PRIx64, m->start,
			   m->end);
	if (!memchr(path, '\0', plen - sizeof(*m)))
		return bad(why, wl, "path not NUL-terminated");
	if (!*path)
		return bad(why, wl, "empty path");
	rec->mapping = m;
	rec->path = path;
	return 0;
}

bool fg_rec_event_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > FG_REC_EVENT_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '_' && c != '.' && c != ':' && c != '+' && c != '-')
			return false;
	}
	return true;
}

static int parse_event(const uint8_t *p, size_t plen, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_event *e = (const void *)p;
	const char *name = (const char *)(p + sizeof(*e));
	const char *nul;

	if (plen < sizeof(*e) + 2)
		return bad(why, wl, "payload of %zu bytes, shorter than %zu", plen, sizeof(*e) + 2);
	if (e->id >= FG_REC_EVENTS_MAX)
		return bad(why, wl, "event number %" PRIu32 ", at most %u", e->id,
			   FG_REC_EVENTS_MAX - 1);
	nul = memchr(name, '\0', plen - sizeof(*e));
	if (!nul)
		return bad(why, wl, "event name not NUL-terminated");
	if (!fg_rec_event_name_ok(name, (size_t)(nul - name)))
		return bad(why, wl, "bad event name (1 to %u bytes of letters, digits, '_.:+-')",
			   FG_REC_EVENT_NAME_MAX);
	rec->event = e;
	rec->event_name = name;
	return 0;
}

int fg_rec_parse(const void *data, size_t len, struct fg_rec *rec, char *why, size_t wl)
{
	const struct fg_rec_hdr *h = data;
	const uint8_t *p = (const uint8_t *)data + HDR;
	size_t plen;

	memset(rec, 0, sizeof(*rec));
	if (len < HDR)
		return bad(why, wl, "record shorter than its header");
	if (h->size < HDR || h->size % 8 || h->size > FG_REC_MAX_SIZE || h->size > len)
		return bad(why, wl, "bad record size %" PRIu32, h->size);
	plen = h->size - HDR;
	rec->type = h->type;
	rec->size = h->size;
	rec->payload = p;
	switch (h->type) {
	case FG_REC_SAMPLE:
		return parse_sample(p, plen, rec, why, wl);
	case FG_REC_MAPPING:
		return parse_mapping(p, plen, rec, why, wl);
	case FG_REC_COMM:
		if (plen < sizeof(struct fg_rec_comm))
			break;
		rec->comm = (const void *)p;
		if (!memchr(rec->comm->comm, '\0', FG_REC_COMM_LEN))
			return bad(why, wl, "comm not NUL-terminated");
		return 0;
	case FG_REC_EXIT:
	case FG_REC_FORK:
		if (plen < sizeof(struct fg_rec_task))
			break;
		rec->task = (const void *)p;
		return 0;
	case FG_REC_LOST:
		if (plen < sizeof(struct fg_rec_lost))
			break;
		rec->lost = (const void *)p;
		return 0;
	case FG_REC_SUMMARY:
		if (plen < sizeof(struct fg_rec_summary))
			break;
		rec->summary = (const void *)p;
		return 0;
	case FG_REC_CREDS:
		if (plen < sizeof(struct fg_rec_creds))
			break;
		rec->creds = (const void *)p;
		return 0;
	case FG_REC_EVENT:
		return parse_event(p, plen, rec, why, wl);
	case FG_REC_PYCODE:
		return parse_pycode(p, plen, rec, why, wl);
	case FG_REC_KSYM:
		return parse_ksym(p, plen, rec, why, wl);
	default:
		return 0; /* unknown: the caller skips it */
	}
	return bad(why, wl, "payload of %zu bytes, too short", plen);
}

/* --- the names of the events --- */

struct fg_rec_evnames {
	char **names; /* by event number; NULL when no record named it */
	size_t n;
	char other[32];
};

struct fg_rec_evnames *fg_rec_evnames_new(void)
{
	return fg_xcalloc(1, sizeof(struct fg_rec_evnames));
}

void fg_rec_evnames_free(struct fg_rec_evnames *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		free(n->names[i]);
	free(n->names);
	free(n);
}

void fg_rec_evnames_add(struct fg_rec_evnames *n, const struct fg_rec *rec)
{
	uint32_t id;

	if (rec->type != FG_REC_EVENT || !rec->event || !rec->event_name)
		return;
	id = rec->event->id; /* checked: < FG_REC_EVENTS_MAX */
	if (id >= n->n) {
		n->names = fg_xreallocarray(n->names, (size_t)id + 1, sizeof(*n->names));
		memset(n->names + n->n, 0, ((size_t)id + 1 - n->n) * sizeof(*n->names));
		n->n = (size_t)id + 1;
	}
	free(n->names[id]);
	n->names[id] = fg_xstrdup(rec->event_name);
}

const char *fg_rec_evnames_get(struct fg_rec_evnames *n, const struct fg_rec_sample *s)
{
	uint32_t id = FG_SAMPLE_EVENT(s->flags);

	if (id < n->n && n->names[id])
		return n->names[id];
	if (s->flags & FG_SAMPLE_F_WEIGHT_NS)
		return "offcpu-time";
	if (id == 0)
		return "cpu-clock";
	snprintf(n->other, sizeof(n->other), "event-%" PRIu32, id);
	return n->other;
}

/* --- the reader --- */

#define READ_CHUNK 65536u
/* a mapped input is mapped this much at a time (more for a larger record) */
#define MAP_WINDOW (1u << 30)
/* and what has been read of it let go by this much, in whole spans of this much */
#define MAP_RELEASE (8u << 20)
#define HUGE_SPAN (2u << 20)

enum map_state { MAP_NO, MAP_ASKED, MAP_YES };

struct fg_rec_reader {
	int fd;
	char *name;
	uint8_t *buf; /* read(): the buffer; mapped: the window (NULL when none) */
	size_t cap, start, end;
	uint64_t offset; /* stream offset of buf[start] */
	uint64_t skipped;
	bool eof, have_header, failed, truncated;
	int err; /* sticky result once failed */
	/* a mapped input (fg_rec_reader_map): buf[0..cap) maps the file from mapoff */
	enum map_state map;
	uint64_t base;	       /* the file offset of the stream's byte 0 */
	uint64_t mapoff;       /* the file offset of buf[0] */
	uint64_t size;	       /* the file's size when last looked at */
	sigjmp_buf *guard;     /* where a SIGBUS in the window jumps (fg_rec_reader_guard) */
	volatile size_t fault; /* 1 + the window's byte whose access raised SIGBUS, or 0 */
	struct fg_rec_header hdr;
	char msg[256];
};

struct fg_rec_reader *fg_rec_reader_new(int fd, const char *name)
{
	struct fg_rec_reader *r = fg_xcalloc(1, sizeof(*r));

	r->fd = fd;
	r->name = fg_xstrdup(name ? name : "<stdin>");
	return r;
}

static void unmap(struct fg_rec_reader *r)
{
	if (r->buf)
		munmap(r->buf, r->cap);
	r->buf = NULL;
	r->cap = r->start = r->end = 0;
}

void fg_rec_reader_free(struct fg_rec_reader *r)
{
	if (!r)
		return;
	if (r->guard)
		(void)fg_rec_reader_guard(r, NULL);
	if (r->map == MAP_YES)
		unmap(r);
	free(r->buf);
	free(r->name);
	free(r);
}

const char *fg_rec_reader_error(const struct fg_rec_reader *r)
{
	return r->msg[0] ? r->msg : "no error";
}

uint64_t fg_rec_reader_offset(const struct fg_rec_reader *r)
{
	return r->offset;
}

bool fg_rec_reader_truncated(const struct fg_rec_reader *r)
{
	return r->truncated;
}

uint64_t fg_rec_reader_skipped(const struct fg_rec_reader *r)
{
	return r->skipped;
}

const char *fg_rec_reader_name(const struct fg_rec_reader *r)
{
	return r->name;
}

static int fail(struct fg_rec_reader *r, int err, const char *fmt, ...) FG_PRINTF(3, 4);

static int fail(struct fg_rec_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->failed = true;
	r->err = err;
	return err;
}

static size_t avail(const struct fg_rec_reader *r)
{
	return r->end - r->start;
}

static int shrank(struct fg_rec_reader *r, uint64_t at)
{
	return fail(
	    r, -EPROTO,
	    "the file shrank while being read (truncated under this reader) at byte %" PRIu64, at);
}

/*
 * Leave the mapping for read(), from the stream's byte `offset + avail`
 * on, the bytes of the window not consumed yet kept: a later window cannot
 * be mapped.
 */
static int map_to_read(struct fg_rec_reader *r)
{
	size_t have = avail(r);
	uint8_t *keep = fg_xmalloc(have + READ_CHUNK);

	if (lseek(r->fd, (off_t)(r->base + r->offset + have), SEEK_SET) < 0) {
		int err = -errno;

		free(keep);
		return err;
	}
	if (have)
		memcpy(keep, r->buf + r->start, have);
	unmap(r);
	r->map = MAP_NO;
	r->buf = keep;
	r->cap = have + READ_CHUNK;
	r->end = have;
	return 0;
}

/* The first use of a mapped input: map it if it is a regular file that can be mapped. */
static void map_start(struct fg_rec_reader *r)
{
	struct stat st;
	off_t at;

	r->map = MAP_NO;
	/* an empty "regular" file may be a pseudo file (procfs): read() it */
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return;
	at = lseek(r->fd, 0, SEEK_CUR);
	/* the records' fields are read in place: they must stay 8-aligned */
	if (at < 0 || at % 8)
		return;
	r->base = (uint64_t)at;
	r->size = (uint64_t)st.st_size;
	r->map = MAP_YES;
}

/*
 * The mapped ensure(): a window of the file holding the `n` bytes from the
 * stream's offset, or all there is up to the file's end.
 */
static int ensure_mapped(struct fg_rec_reader *r, size_t n)
{
	uint64_t pos = r->base + r->offset, from, len, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct stat st;
	void *p;

	if (r->eof)
		return 0;
	if (fstat(r->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < r->size)
		return shrank(r, (uint64_t)st.st_size > r->base ? st.st_size - r->base : 0);
	r->size = (uint64_t)st.st_size;
	from = pos / page * page;
	len = r->size > from ? r->size - from : 0;
	if (len > pos - from + n && len > MAP_WINDOW)
		len = MAP_WINDOW > pos - from + n ? MAP_WINDOW : pos - from + n;
	if (len > SIZE_MAX)
		return -EFBIG;
	if (pos - from >= len) {
		r->eof = true; /* nothing more: the end (what is buffered is a record cut short) */
		return 0;
	}
	unmap(r);
	p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, r->fd, (off_t)from);
	if (p == MAP_FAILED)
		return -errno;
	(void)madvise(p, (size_t)len, MADV_SEQUENTIAL);
	r->buf = p;
	r->cap = r->end = (size_t)len;
	r->start = (size_t)(pos - from);
	r->mapoff = from;
	if (from + len == r->size && avail(r) < n)
		r->eof = true;
	return avail(r) >= n;
}

/*
 * Have at least `n` bytes buffered: 1 yes, 0 the stream ended first, -errno.
 * Each read() returns what the pipe holds, so this never waits for more
 * than the `n` bytes it needs.
 */
static int ensure(struct fg_rec_reader *r, size_t n)
{
	if (r->map == MAP_ASKED)
		map_start(r);
	if (r->map == MAP_YES && avail(r) < n) {
		int rc = ensure_mapped(r, n);

		if (rc != -ENOMEM && rc != -ENODEV && rc != -EACCES)
			return rc;
		/* a window cannot be mapped: read() the rest */
		if ((rc = map_to_read(r)) < 0)
			return rc;
	}
	while (avail(r) < n) {
		ssize_t got;

		if (r->eof)
			return 0;
		if (r->start && r->cap - r->start < n) {
			memmove(r->buf, r->buf + r->start, avail(r));
			r->end -= r->start;
			r->start = 0;
		}
		if (r->cap - r->start < n) {
			size_t cap = r->cap ? r->cap : READ_CHUNK;

			while (cap < n + READ_CHUNK)
				cap *= 2;
			r->buf = fg_xrealloc(r->buf, cap);
			r->cap = cap;
		}
		do
			got = read(r->fd, r->buf + r->end, r->cap - r->end);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return -errno;
		if (got == 0)
			r->eof = true;
		r->end += (size_t)got;
	}
	return 1;
}

static void consume(struct fg_rec_reader *r, size_t n)
{
	r->start += n;
	r->offset += n;
	if (r->start == r->end && r->map != MAP_YES)
		r->start = r->end = 0;
}

static int read_error(struct fg_rec_reader *r, int err)
{
	if (r->failed) /* ensure() said why: the file shrank */
		return r->err;
	return fail(r, err, "read error at byte %" PRIu64 ": %s", r->offset + avail(r),
		    strerror(-err));
}

int fg_rec_read_header(struct fg_rec_reader *r, const struct fg_rec_header **out)
{
	uint64_t magic;
	uint32_t version, size;
	int rc;

	if (r->failed)
		return r->err;
	if (r->have_header)
		goto done;
	rc = ensure(r, 16);
	if (rc < 0)
		return read_error(r, rc);
	if (avail(r) >= 8) {
		memcpy(&magic, r->buf + r->start, 8);
		if (magic == __builtin_bswap64(FG_REC_MAGIC))
			return fail(r, -EPROTO,
				    "byte-swapped record stream (written on a machine "
				    "of the other byte order) at byte 0");
		if (magic != FG_REC_MAGIC)
			return fail(r, -EPROTO, "not an fg record stream (bad magic) at byte 0");
	}
	if (rc == 0)
		return fail(r, -EPROTO, "%s at byte %zu",
			    avail(r) ? "truncated stream header" : "empty stream: no header",
			    avail(r));
	memcpy(&version, r->buf + r->start + 8, 4);
	memcpy(&size, r->buf + r->start + 12, 4);
	if (version != FG_REC_VERSION)
		return fail(r, -EPROTO,
			    "unsupported record stream version %" PRIu32 " (this reader knows %u) "
			    "at byte 8",
			    version, FG_REC_VERSION);
	if (size < sizeof(r->hdr) || size > HEADER_MAX || size % 8)
		return fail(r, -EPROTO, "bad header size %" PRIu32 " at byte 12", size);
	rc = ensure(r, size);
	if (rc < 0)
		return read_error(r, rc);
	if (rc == 0)
		return fail(r, -EPROTO, "truncated stream header at byte %zu", avail(r));
	memcpy(&r->hdr, r->buf + r->start, sizeof(r->hdr));
	if (r->hdr.clock != FG_CLOCK_MONOTONIC)
		return fail(r, -EPROTO, "unknown clock %" PRIu32 " in the header at byte 16",
			    r->hdr.clock);
	if (!memchr(r->hdr.host, '\0', sizeof(r->hdr.host)) ||
	    !memchr(r->hdr.release, '\0', sizeof(r->hdr.release)))
		return fail(r, -EPROTO, "unterminated host or release in the header at byte %zu",
			    offsetof(struct fg_rec_header, host));
	consume(r, size);
	r->have_header = true;
done:
	if (out)
		*out = &r->hdr;
	return 0;
}

/*
 * A mapped record: its pages faulted in here, where a SIGBUS (the file
 * truncated under the reader) leaves nothing half done.  Its lines are not
 * asked for here: the unwinder asks for those of a stack snapshot it will
 * read (lib/unwind, the trails), a quarter of them or so.
 */
static void touch(const struct fg_rec_reader *r, size_t n)
{
	const volatile uint8_t *p = r->buf + r->start;

	for (size_t i = 0; i < n; i += 4096)
		(void)p[i];
	(void)p[n - 1];
}

/*
 * The window's pages already read, let go: a mapped file takes no more
 * memory (resident pages) than a buffer would, whatever its size.  Whole
 * 2 MiB spans of the file only: where the page cache holds the file in
 * large folios (a file just written), the kernel maps 2 MiB of it at a
 * time, and letting go of part of one would split the mapping (on the
 * dwarf bench's capture, 0.93 of the CPU to read it, side by side).
 */
static void release(struct fg_rec_reader *r)
{
	uint64_t upto = (r->mapoff + r->start) / HUGE_SPAN * HUGE_SPAN;
	size_t n;

	if (upto <= r->mapoff)
		return;
	n = (size_t)(upto - r->mapoff);
	if (munmap(r->buf, n) < 0)
		return;
	r->buf += n;
	r->cap -= n;
	r->start -= n;
	r->end -= n;
	r->mapoff += n;
}

int fg_rec_next(struct fg_rec_reader *r, struct fg_rec *rec)
{
	struct fg_rec_hdr h;
	char why[160];
	int rc;

	if (r->failed)
		return r->err;
	if (!r->have_header && (rc = fg_rec_read_header(r, NULL)) < 0)
		return rc;
	/* the last record's pointers are no longer valid */
	if (r->map == MAP_YES && r->start >= MAP_RELEASE)
		release(r);
	for (;;) {
		rc = ensure(r, HDR);
		if (rc < 0)
			return read_error(r, rc);
		if (rc == 0) {
			if (!avail(r))
				return 0;
			r->truncated = true;
			return fail(r, -EPROTO, "truncated record header at byte %" PRIu64,
				    r->offset);
		}
		memcpy(&h, r->buf + r->start, HDR);
		if (h.size < HDR || h.size % 8 || h.size > FG_REC_MAX_SIZE)
			return fail(r, -EPROTO,
				    "bad size %" PRIu32 " for %s record at byte %" PRIu64, h.size,
				    fg_rec_type_name(h.type), r->offset);
		rc = ensure(r, h.size);
		if (rc < 0)
			return read_error(r, rc);
		if (rc == 0) {
			r->truncated = true;
			return fail(r, -EPROTO, "truncated %s record at byte %" PRIu64,
				    fg_rec_type_name(h.type), r->offset);
		}
		if (!known_type(h.type)) {
			r->skipped++;
			consume(r, h.size);
			continue;
		}
		if (r->map == MAP_YES)
			touch(r, h.size);
		if (fg_rec_parse(r->buf + r->start, h.size, rec, why, sizeof(why)) < 0)
			return fail(r, -EPROTO, "bad %s record at byte %" PRIu64 ": %s",
				    fg_rec_type_name(h.type), r->offset, why);
		rec->offset = r->offset;
		consume(r, h.size);
		return 1;
	}
}

bool fg_rec_reader_has_buffered(const struct fg_rec_reader *r)
{
	size_t at = r->start;

	/* a mapped file never pauses */
	if (r->failed || r->eof || r->map == MAP_YES)
		return true;
	if (!r->have_header) {
		uint32_t size;

		if (avail(r) < 16)
			return false;
		memcpy(&size, r->buf + at + 12, 4);
		if (size > avail(r))
			return false;
		at += size; /* a bad size fails without reading */
		if (at > r->end)
			return true;
	}
	/* skip over buffered records of unknown types, as fg_rec_next() will */
	while (r->end - at >= HDR) {
		struct fg_rec_hdr h;

		memcpy(&h, r->buf + at, HDR);
		if (h.size < HDR || h.size % 8 || h.size > FG_REC_MAX_SIZE)
			return true; /* fails at once */
		if (h.size > r->end - at)
			return false;
		if (known_type(h.type))
			return true;
		at += h.size;
	}
	return false;
}

/* --- a mapped input --- */

void fg_rec_reader_map(struct fg_rec_reader *r)
{
	/* decided at the first read: a test may write the file before */
	if (r->map == MAP_NO && !r->end && !r->offset && !r->failed)
		r->map = MAP_ASKED;
}

bool fg_rec_reader_mapped(const struct fg_rec_reader *r)
{
	return r->map == MAP_YES;
}

/* the reader whose window a SIGBUS may hit, and what SIGBUS did before */
static struct fg_rec_reader *volatile guarded;
static struct sigaction old_bus;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	struct fg_rec_reader *r = guarded;
	const uint8_t *a = si->si_addr;

	(void)uc;
	if (r && r->map == MAP_YES && si->si_code > 0 && a >= r->buf && a < r->buf + r->cap) {
		r->fault = (size_t)(a - r->buf) + 1;
		siglongjmp(*r->guard, 1);
	}
	/* not an access to the window: what SIGBUS does otherwise, once unblocked */
	sigaction(SIGBUS, &old_bus, NULL);
	raise(sig);
}

int fg_rec_reader_guard(struct fg_rec_reader *r, sigjmp_buf *jb)
{
	struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};

	if (!jb) {
		if (guarded != r)
			return 0;
		guarded = NULL;
		r->guard = NULL;
		return sigaction(SIGBUS, &old_bus, NULL) < 0 ? -errno : 0;
	}
	if (guarded && guarded != r)
		return -EBUSY;
	if (!guarded) {
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &old_bus) < 0)
			return -errno;
	}
	r->guard = jb;
	r->fault = 0;
	guarded = r;
	return 0;
}

int fg_rec_reader_fault(struct fg_rec_reader *r)
{
	size_t fault = r->fault;
	uint64_t at = r->mapoff + (fault ? fault - 1 : 0);

	(void)fg_rec_reader_guard(r, NULL);
	r->fault = 0;
	return shrank(r, at > r->base ? at - r->base : 0);
}

/* --- printing, for tests and debugging --- */

/* a name from the stream, escaped (fg/escape.h): one record, one line */
static void print_name(FILE *f, const char *name, size_t len)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_add_escaped(&b, name, len, 0);
	if (b.len)
		fwrite(b.data, 1, b.len, f);
	fg_buf_release(&b);
}

static void print_comm(FILE *f, const char *comm)
{
	print_name(f, comm, strnlen(comm, FG_REC_COMM_LEN));
}

void fg_rec_print_header(FILE *f, const struct fg_rec_header *h)
{
	fprintf(
	    f,
	    "header version=%" PRIu32 " size=%" PRIu32 " clock=%s freq=%" PRIu64 " ncpus=%" PRIu32
	    " flags=0x%" PRIx32 " start=%" PRIu64 " realtime=%" PRIu64 " host=%s release=%s\n",
	    h->version, h->header_size, h->clock == FG_CLOCK_MONOTONIC ? "monotonic" : "?", h->freq,
	    h->ncpus, h->flags, h->start_ns, h->start_realtime_ns, h->host, h->release);
}

void fg_rec_print(FILE *f, const struct fg_rec *rec)
{
	fprintf(f, "%s @%" PRIu64, fg_rec_type_name(rec->type), rec->offset);
	switch (rec->type) {
	case FG_REC_SAMPLE: {
		const struct fg_rec_sample *s = rec->sample;

		fprintf(f,
			" time=%" PRIu64 " cpu=%" PRIu32 " pid=%" PRIu32 " tid=%" PRIu32 " comm=",
			s->time_ns, s->cpu, s->pid, s->tid);
		print_comm(f, s->comm);
		fprintf(f,
			" weight=%" PRIu64 " flags=0x%" PRIx32 " kernel=%" PRIu32 " user=%" PRIu32,
			s->weight, s->flags, s->nr_kernel, s->nr_user);
		for (uint32_t i = 0; i < s->nr_kernel; i++)
			fprintf(f, " k:%" PRIx64, rec->kips[i]);
		for (uint32_t i = 0; i < s->nr_user; i++)
			fprintf(f, " u:%" PRIx64, rec->uips[i]);
		if (rec->ustack)
			fprintf(f, " snapshot=%" PRIu32 "+%" PRIu32, rec->ustack->nr_regs,
				rec->ustack->size);
		if (rec->pystack)
			fprintf(f, " py_flags=0x%" PRIx32, rec->pystack->flags);
		for (uint32_t i = 0; rec->pystack && i < rec->pystack->nr; i++) {
			uint32_t off;

			fprintf(f, " py:%" PRIx64, rec->pyframes[i]);
			if (!rec->pyoffsets)
				continue;
			memcpy(&off, rec->pyoffsets + 4 * (size_t)i, sizeof(off));
			if (off != FG_PY_NO_OFFSET)
				fprintf(f, "@%" PRIu32, off);
		}
		break;
	}
	case FG_REC_PYCODE:
		fprintf(f,
			" time=%" PRIu64 " pid=%" PRIu32 " code=%" PRIx64 " line=%" PRId32 " name=",
			rec->pycode->time_ns, rec->pycode->pid, rec->pycode->code,
			rec->pycode->firstlineno);
		print_name(f, rec->py_name, strlen(rec->py_name));
		fputs(" file=", f);
		print_name(f, rec->py_file, strlen(rec->py_file));
		if (rec->py_table)
			fprintf(f, " table=%u/%" PRIu32, rec->py_table_format, rec->py_table_len);
		break;
	case FG_REC_KSYM:
		fprintf(f, " time=%" PRIu64 " addr=%" PRIx64 " len=%" PRIu32 "%s name=",
			rec->ksym->time_ns, rec->ksym->addr, rec->ksym->len,
			rec->ksym->flags & FG_KSYM_F_GONE ? " gone" : "");
		print_name(f, rec->ksym_name, strlen(rec->ksym_name));
		break;
	case FG_REC_MAPPING: {
		const struct fg_rec_mapping *m = rec->mapping;

		fprintf(f,
			" time=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " start=%" PRIx64
			" end=%" PRIx64 " pgoff=%" PRIx64 " dev=%" PRIu32 ":%" PRIu32
			" ino=%" PRIu64 " prot=%" PRIu32 " flags=0x%" PRIx32 " build_id=",
			m->time_ns, m->pid, m->tid, m->start, m->end, m->pgoff, m->maj, m->min,
			m->ino, m->prot, m->flags);
		if (!m->build_id_len)
			fputc('-', f);
		for (unsigned i = 0; i < m->build_id_len; i++)
			fprintf(f, "%02x", m->build_id[i]);
		fputs(" path=", f);
		print_name(f, rec->path, strlen(rec->path));
		break;
	}
	case FG_REC_COMM:
		fprintf(f, " time=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " exec=%d comm=",
			rec->comm->time_ns, rec->comm->pid, rec->comm->tid,
			!!(rec->comm->flags & FG_COMM_F_EXEC));
		print_comm(f, rec->comm->comm);
		break;
	case FG_REC_EXIT:
	case FG_REC_FORK:
		fprintf(f,
			" time=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " ppid=%" PRIu32
			" ptid=%" PRIu32,
			rec->task->time_ns, rec->task->pid, rec->task->tid, rec->task->ppid,
			rec->task->ptid);
		break;
	case FG_REC_LOST:
		fprintf(f, " time=%" PRIu64 " count=%" PRIu64 " cpu=%" PRId32 " reason=%" PRIu32,
			rec->lost->time_ns, rec->lost->count, (int32_t)rec->lost->cpu,
			rec->lost->reason);
		break;
	case FG_REC_SUMMARY: {
		const struct fg_rec_summary *s = rec->summary;

		fprintf(f,
			" start=%" PRIu64 " end=%" PRIu64 " samples=%" PRIu64 " lost=%" PRIu64
			" kstack_failed=%" PRIu64 " ustack_failed=%" PRIu64 " ustack_cut=%" PRIu64
			" sideband_lost=%" PRIu64 " mappings=%" PRIu64 " filtered=%" PRIu64
			" command_status=%" PRId32 " flags=0x%" PRIx32,
			s->start_ns, s->end_ns, s->samples, s->lost, s->kstack_failed,
			s->ustack_failed, s->ustack_cut, s->sideband_lost, s->mappings, s->filtered,
			s->command_status, s->flags);
		break;
	}
	case FG_REC_CREDS:
		fprintf(f, " time=%" PRIu64 " pid=%" PRIu32 " uid=%" PRIu32 " gid=%" PRIu32,
			rec->creds->time_ns, rec->creds->pid, rec->creds->uid, rec->creds->gid);
		break;
	case FG_REC_EVENT:
		fprintf(f,
			" id=%" PRIu32 " kind=%" PRIu32 " config=%" PRIu64 " period=%" PRIu64
			" freq=%" PRIu64 " flags=0x%" PRIx32 " name=%s",
			rec->event->id, rec->event->kind, rec->event->config, rec->event->period,
			rec->event->freq, rec->event->flags, rec->event_name);
		break;
	default:
		fprintf(f, " type=%" PRIu32 " size=%" PRIu32, rec->type, rec->size);
	}
	fputc('\n', f);
}

/* --- the writer --- */

#define WRITE_BUF (256u * 1024)
#define WRITE_DIRECT (64u * 1024) /* fg_rec_writer_put: runs this large are not copied */

struct fg_rec_writer {
	int fd;
	int err;
	uint8_t *buf;
	size_t len, cap;
	uint64_t flushed;
};

struct fg_rec_writer *fg_rec_writer_new(int fd)
{
	struct fg_rec_writer *w = fg_xcalloc(1, sizeof(*w));

	w->fd = fd;
	w->cap = WRITE_BUF;
	w->buf = fg_xmalloc(w->cap);
	return w;
}

/* `len` bytes at p to the file, whole: 0 or the (sticky) error */
static int write_out(struct fg_rec_writer *w, const uint8_t *p, size_t len)
{
	size_t done = 0;

	while (!w->err && done < len) {
		ssize_t n = write(w->fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
		w->flushed += (uint64_t)n;
	}
	return w->err;
}

int fg_rec_writer_flush(struct fg_rec_writer *w)
{
	if (w->err)
		return w->err;
	write_out(w, w->buf, w->len);
	w->len = 0;
	return w->err;
}

/* Room for n more bytes in the buffer: flush first when full, grow for a huge record. */
static int reserve(struct fg_rec_writer *w, size_t n)
{
	if (w->err)
		return w->err;
	if (w->cap - w->len < n && fg_rec_writer_flush(w))
		return w->err;
	if (w->cap < n) {
		w->buf = fg_xrealloc(w->buf, n);
		w->cap = n;
	}
	return 0;
}

int fg_rec_writer_put(struct fg_rec_writer *w, const void *recs, size_t len)
{
	if (w->err)
		return w->err;
	if (len < WRITE_DIRECT) {
		if (reserve(w, len))
			return w->err;
		memcpy(w->buf + w->len, recs, len);
		w->len += len;
		return 0;
	}
	/* a large run goes out from where it is, after what is buffered */
	if (fg_rec_writer_flush(w))
		return w->err;
	return write_out(w, recs, len);
}

int fg_rec_writer_free(struct fg_rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = fg_rec_writer_flush(w);
	free(w->buf);
	free(w);
	return err;
}

int fg_rec_writer_error(const struct fg_rec_writer *w)
{
	return w->err;
}

uint64_t fg_rec_writer_bytes(const struct fg_rec_writer *w)
{
	return w->flushed + w->len;
}

size_t fg_rec_size(size_t len)
{
	size_t total = align8(HDR + len);

	return total > FG_REC_MAX_SIZE || total < len ? 0 : total;
}

void fg_rec_lay(void *out, uint32_t type, const struct iovec *parts, int n)
{
	struct fg_rec_hdr h = {.type = type};
	uint8_t *o = (uint8_t *)out + HDR;
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		if (parts[i].iov_len)
			memcpy(o + len, parts[i].iov_base, parts[i].iov_len);
		len += parts[i].iov_len;
	}
	h.size = (uint32_t)align8(HDR + len);
	memcpy(out, &h, HDR);
	memset(o + len, 0, h.size - HDR - len);
}

static int write_parts(struct fg_rec_writer *w, uint32_t type, const struct iovec *parts, int n)
{
	size_t len = 0, total;

	for (int i = 0; i < n; i++)
		len += parts[i].iov_len;
	total = fg_rec_size(len);
	if (!total)
		return -EMSGSIZE;
	if (reserve(w, total))
		return w->err;
	fg_rec_lay(w->buf + w->len, type, parts, n);
	w->len += total;
	return 0;
}

int fg_rec_write(struct fg_rec_writer *w, uint32_t type, const void *payload, size_t len)
{
	struct iovec p = {(void *)payload, len};

	return write_parts(w, type, &p, 1);
}

int fg_rec_write_sample(struct fg_rec_writer *w, const struct fg_rec_sample *s, const uint64_t *ips)
{
	struct iovec p[2] = {
	    {(void *)s, sizeof(*s)},
	    {(void *)ips, 8 * ((size_t)s->nr_kernel + s->nr_user)},
	};

	if (s->nr_kernel > FG_REC_MAX_FRAMES || s->nr_user > FG_REC_MAX_FRAMES)
		return -EINVAL;
	return write_parts(w, FG_REC_SAMPLE, p, 2);
}

int fg_rec_write_mapping(struct fg_rec_writer *w, const struct fg_rec_mapping *m, const char *path)
{
	struct iovec p[2] = {
	    {(void *)m, sizeof(*m)},
	    {(void *)path, strlen(path) + 1},
	};

	if (!*path || m->start >= m->end || m->build_id_len > FG_REC_BUILD_ID_MAX)
		return -EINVAL;
	return write_parts(w, FG_REC_MAPPING, p, 2);
}

int fg_rec_write_event(struct fg_rec_writer *w, const struct fg_rec_event *e, const char *name)
{
	struct iovec p[2] = {
	    {(void *)e, sizeof(*e)},
	    {(void *)name, strlen(name) + 1},
	};

	if (e->id >= FG_REC_EVENTS_MAX || !fg_rec_event_name_ok(name, strlen(name)))
		return -EINVAL;
	return write_parts(w, FG_REC_EVENT, p, 2);
}

int fg_rec_write_header(struct fg_rec_writer *w, const struct fg_rec_header *h)
{
	if (reserve(w, sizeof(*h)))
		return w->err;
	memcpy(w->buf + w->len, h, sizeof(*h));
	w->len += sizeof(*h);
	return 0;
}

int fg_rec_ustack_reg(const struct fg_rec *rec, unsigned reg, uint64_t *val)
{
	const struct fg_rec_ustack *u = rec->ustack;

	if (!u || reg >= 64 || !(u->regs_mask & (1ull << reg)))
		return -ENOENT;
	/* the registers of the mask, in the order of their numbers */
	memcpy(val, rec->ustack_regs + __builtin_popcountll(u->regs_mask & ((1ull << reg) - 1)),
	       sizeof(*val));
	return 0;
}

void fg_rec_header_init(struct fg_rec_header *h)
{
	struct utsname u;
	long page = sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	h->magic = FG_REC_MAGIC;
	h->version = FG_REC_VERSION;
	h->header_size = sizeof(*h);
	h->clock = FG_CLOCK_MONOTONIC;
	h->page_size = page > 0 ? (uint32_t)page : 4096;
	if (uname(&u) == 0) {
		snprintf(h->host, sizeof(h->host), "%s", u.nodename);
		snprintf(h->release, sizeof(h->release), "%s", u.release);
	}
}
