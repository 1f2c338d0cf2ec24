// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/bigmem.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/ksyms.h"
#include "fg/safeio.h"
#include "fg/util.h"

/* How far past the last symbol of a run an address still belongs to it. */
#define KSYM_TAIL 4096

/*
 * The names are copied into 2 MiB chunks, and the symbols kept in one array,
 * all in huge pages (fg/bigmem.h): a kernel's worth is about 4 MiB, and in
 * small pages the faults alone took longer than the parsing.
 */
struct arena_chunk {
	struct arena_chunk *next;
	struct fg_big mem;
	char data[];
};

#define CACHE_MAGIC "FGKSYMS1"
#define CACHE_NO_MODULE UINT32_MAX
#define CACHE_MAX (256u << 20)

struct cache_hdr {
	char magic[8];
	char boot_id[40];
	uint64_t modules;
	uint64_t nsyms;
	uint64_t names_len;
};

struct cache_sym {
	uint64_t addr, end;
	uint32_t name, module; /* offsets into the names; module CACHE_NO_MODULE: the kernel */
};

struct fg_ksyms {
	struct arena_chunk *chunks; /* the names, copied */
	char *cur;
	size_t left;
	struct fg_big symmem; /* holds syms */
	struct fg_ksym *syms;
	size_t n, alloc;
	const char *last_module; /* the latest module name copied */
	size_t chunk_hint;	 /* bytes of names a chunk is made for */
	bool hidden, any_nonzero;
	bool from_cache;
	struct fg_big cache; /* a cache file's bytes, which the names point into */
	/*
	 * A cache's symbols as the file has them, each checked and copied into
	 * syms when first looked up: a table of 100,000 symbols copied whole
	 * touched 1,500 fresh pages, a millisecond of page faults, for the few
	 * hundred a run names.
	 */
	const struct cache_sym *raw;
	uint64_t names_len;
	size_t sorted; /* how many symbols from the start are in address order */
	uint64_t lineno;
};

#define READ_CHUNK (256u * 1024)

/* a copy of the n bytes at str, and a NUL */
static const char *arena_dup(struct fg_ksyms *k, const char *str, size_t n)
{
	char *p;

	if (n + 1 > k->left) {
		struct fg_big mem = {0};
		struct arena_chunk *c;

		fg_big_grow(&mem, sizeof(*c) + (n + 1 > k->chunk_hint ? n + 1 : k->chunk_hint));
		c = mem.p;
		c->mem = mem;
		c->next = k->chunks;
		k->chunks = c;
		k->cur = c->data;
		k->left = mem.size - sizeof(*c);
	}
	p = k->cur;
	memcpy(p, str, n);
	p[n] = '\0';
	k->cur += n + 1;
	k->left -= n + 1;
	return p;
}

static void grow_syms(struct fg_ksyms *k, size_t need)
{
	if (need <= k->alloc)
		return;
	if (k->raw)
		fg_big_grow_sparse(&k->symmem, need * sizeof(*k->syms));
	else
		fg_big_grow(&k->symmem, need * sizeof(*k->syms));
	k->syms = k->symmem.p;
	k->alloc = k->symmem.size / sizeof(*k->syms);
}

/* hexadecimal digit values, -1 for anything else */
static const signed char hexv[256] = {
    ['0'] = 0, 1,  2,  3,  4,  5,	   6,  7,  8,  9,  ['A'] = 10,
    11,	       12, 13, 14, 15, ['a'] = 10, 11, 12, 13, 14, 15,
};

static int hexval(char c)
{
	unsigned char u = (unsigned char)c;

	if (u == '0')
		return 0;
	return hexv[u] ? hexv[u] : -1;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct fg_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* the kernel's own names before modules', then by name, for a stable order */
	if (!x->module != !y->module)
		return x->module ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* one line of kallsyms, its fields not yet copied */
struct line {
	uint64_t addr;
	const char *name, *mod; /* mod is NULL for the kernel itself */
	size_t name_len, mod_len;
	char type;
};

/*
 * One line: "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]", without its
 * newline.  0 on success, -EINVAL when malformed.
 */
static int parse_line(const char *p, const char *end, struct line *l)
{
	uint64_t addr = 0;
	int digits = 0, v;
	const char *name;

	while (p < end && (v = hexval(*p)) >= 0) {
		if (++digits > 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (!digits || p + 3 > end || *p != ' ' || p[2] != ' ')
		return -EINVAL;
	l->addr = addr;
	l->type = p[1];
	name = p + 3;
	for (p = name; p < end && *p != '\t' && *p != ' '; p++)
		if (!*p)
			return -EINVAL;
	if (p == name)
		return -EINVAL;
	l->name = name;
	l->name_len = (size_t)(p - name);
	l->mod = NULL;
	l->mod_len = 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end) {
		if (*p != '[' || end[-1] != ']' || end - p < 3 ||
		    memchr(p, '\0', (size_t)(end - p)))
			return -EINVAL;
		l->mod = p + 1;
		l->mod_len = (size_t)(end - p - 2);
	}
	return 0;
}

/*
 * Parse the complete lines in [p, end), keeping text symbols with copies of
 * their names.  With `final`, a last line without a newline counts too.
 * Returns the bytes used, or -EINVAL on a malformed line (k->lineno is its
 * number).
 */
static ssize_t add_lines(struct fg_ksyms *k, const char *p, const char *end, bool final)
{
	const char *start = p;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct line l;

		if (!nl && !final)
			break;
		k->lineno++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (eol > p) {
			if (parse_line(p, eol, &l) < 0)
				return -EINVAL;
			if (l.addr)
				k->any_nonzero = true;
			/*
			 * __pfx_NAME marks the padding before NAME (about half the
			 * symbols of a recent kernel): no code runs there, and perf
			 * leaves them out too
			 */
			if ((l.type == 't' || l.type == 'T' || l.type == 'w' || l.type == 'W') &&
			    !(l.name_len >= 6 && memcmp(l.name, "__pfx_", 6) == 0)) {
				struct fg_ksym *s;

				grow_syms(k, k->n + 1);
				s = &k->syms[k->n];
				s->addr = l.addr;
				s->end = 0;
				s->name = arena_dup(k, l.name, l.name_len);
				s->module = NULL;
				if (l.mod) {
					/* a module's symbols come together: one copy of its name */
					const char *last = k->last_module;

					if (!last || strncmp(last, l.mod, l.mod_len) != 0 ||
					    last[l.mod_len] != '\0')
						k->last_module = arena_dup(k, l.mod, l.mod_len);
					s->module = k->last_module;
				}
				if (k->sorted == k->n &&
				    (!k->n || k->syms[k->n - 1].addr <= l.addr))
					k->sorted++;
				k->n++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return p - start;
}

static struct fg_ksyms *ksyms_new(void)
{
	struct fg_ksyms *k = fg_xcalloc(1, sizeof(*k));

	return k;
}

/*
 * The kernel lists its own symbols and its modules' in address order; what
 * comes after them (BPF programs, trampolines) may not be.  Sort that tail
 * alone and merge it in, rather than sorting the whole table.
 */
static void sort_tail(struct fg_ksyms *k)
{
	size_t p = k->sorted, nt = k->n - p;
	struct fg_ksym *tail;

	if (nt == 0)
		return;
	qsort(k->syms + p, nt, sizeof(*k->syms), cmp_ksym);
	if (p == 0 || k->syms[p - 1].addr <= k->syms[p].addr)
		return;
	tail = fg_xreallocarray(NULL, nt, sizeof(*tail));
	memcpy(tail, k->syms + p, nt * sizeof(*tail));
	/* merge from the back, into the room the tail leaves */
	for (size_t i = p, j = nt, w = k->n; j > 0;) {
		if (i > 0 && k->syms[i - 1].addr > tail[j - 1].addr)
			k->syms[--w] = k->syms[--i];
		else
			k->syms[--w] = tail[--j];
	}
	free(tail);
}

static struct fg_ksyms *finish(struct fg_ksyms *k)
{
	k->hidden = k->n > 0 && !k->any_nonzero;
	if (k->hidden) {
		k->n = 0; /* every address zero: nothing can be looked up */
		return k;
	}
	sort_tail(k);
	/* one symbol an address: of aliases, the first in cmp_ksym's order */
	size_t w = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (w && k->syms[w - 1].addr == k->syms[i].addr) {
			if (cmp_ksym(&k->syms[i], &k->syms[w - 1]) < 0)
				k->syms[w - 1] = k->syms[i];
			continue;
		}
		k->syms[w++] = k->syms[i];
	}
	k->n = w;
	for (size_t i = 0; i < k->n; i++) {
		struct fg_ksym *s = &k->syms[i];
		const struct fg_ksym *next = i + 1 < k->n ? s + 1 : NULL;
		bool same_owner = next && (!s->module == !next->module) &&
				  (!s->module || strcmp(s->module, next->module) == 0);

		/* a symbol ends where the next one starts, unless the next belongs elsewhere */
		if (next && (same_owner || next->addr - s->addr <= KSYM_TAIL))
			s->end = next->addr;
		else
			s->end = s->addr + KSYM_TAIL < s->addr ? UINT64_MAX : s->addr + KSYM_TAIL;
	}
	return k;
}

static struct fg_ksyms *refuse(struct fg_ksyms *k, uint64_t *bad_line, int err)
{
	if (bad_line && err == EINVAL)
		*bad_line = k->lineno;
	fg_ksyms_free(k);
	errno = err;
	return NULL;
}

struct fg_ksyms *fg_ksyms_parse(const char *data, size_t len, uint64_t *bad_line)
{
	struct fg_ksyms *k = ksyms_new();
	ssize_t r;

	if (bad_line)
		*bad_line = 0;
	r = add_lines(k, data, data + len, true);
	return r < 0 ? refuse(k, bad_line, EINVAL) : finish(k);
}

/*
 * Read in chunks, keeping only the text symbols: /proc/kallsyms is about
 * 10 MB, most of it data symbols, and fresh memory is not free.
 */
struct fg_ksyms *fg_ksyms_load(const char *path, uint64_t *bad_line)
{
	struct fg_ksyms *k;
	char *buf;
	size_t have = 0;
	uint64_t total = 0;
	int fd;

	if (bad_line)
		*bad_line = 0;
	fd = fg_safeio_open_regular(path, FG_KSYMS_MAX_BYTES, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	k = ksyms_new();
	/*
	 * Room for a kernel's worth of text symbols and their names at once:
	 * growing by copies would touch each page twice.
	 */
	grow_syms(k, 1u << 17);
	k->chunk_hint = 2u << 20;
	buf = fg_xmalloc(READ_CHUNK + 1);
	for (;;) {
		ssize_t got = read(fd, buf + have, READ_CHUNK - have), used;
		int err;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || (total += (uint64_t)(got > 0 ? got : 0)) > FG_KSYMS_MAX_BYTES) {
			err = got < 0 ? errno : EFBIG;
			free(buf);
			close(fd);
			return refuse(k, bad_line, err);
		}
		have += (size_t)got;
		buf[have] = '\0';
		used = add_lines(k, buf, buf + have, got == 0);
		/* a line longer than the whole buffer is not kallsyms either */
		if (used < 0 || (used == 0 && have == READ_CHUNK)) {
			if (used == 0)
				k->lineno++;
			free(buf);
			close(fd);
			return refuse(k, bad_line, EINVAL);
		}
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (got == 0)
			break;
	}
	free(buf);
	close(fd);
	return finish(k);
}

static const struct fg_ksym *cached_sym(const struct fg_ksyms *k, size_t i);

const struct fg_ksym *fg_ksyms_lookup(const struct fg_ksyms *k, uint64_t addr)
{
	size_t lo;

	if (!k || !k->n)
		return NULL;
	if (k->raw) {
		lo = FG_UPPER_BOUND(k->raw, k->n, addr, addr);
		if (lo == 0)
			return NULL;
		const struct fg_ksym *s = cached_sym(k, lo - 1);
		return s && addr < s->end ? s : NULL;
	}
	/* the last symbol starting at or below addr */
	lo = FG_UPPER_BOUND(k->syms, k->n, addr, addr);
	if (lo == 0)
		return NULL;
	const struct fg_ksym *s = &k->syms[lo - 1];
	return addr < s->end ? s : NULL;
}

bool fg_ksyms_hidden(const struct fg_ksyms *k)
{
	return k && k->hidden;
}

size_t fg_ksyms_count(const struct fg_ksyms *k)
{
	return k ? k->n : 0;
}

void fg_ksyms_free(struct fg_ksyms *k)
{
	if (!k)
		return;
	while (k->chunks) {
		struct arena_chunk *next = k->chunks->next;
		struct fg_big mem = k->chunks->mem;

		fg_big_free(&mem);
		k->chunks = next;
	}
	fg_big_free(&k->symmem);
	fg_big_free(&k->cache);
	free(k);
}

/* --- the cache --- */

int fg_kstamp_read(struct fg_kstamp *st, const char *proc)
{
	char path[PATH_MAX], *data = NULL;
	size_t len;
	int r;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc);
	r = fg_safeio_read_file(path, 64, &data, &len);
	if (r < 0)
		return r;
	len = strcspn(data, "\n");
	if (len == 0 || len >= sizeof(st->boot_id)) {
		free(data);
		return -EINVAL;
	}
	memcpy(st->boot_id, data, len);
	free(data);
	st->names = fg_hash_new(64);
	/* a kernel without modules has no /proc/modules */
	snprintf(path, sizeof(path), "%s/modules", proc);
	r = fg_safeio_read_file(path, 16u << 20, &data, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		fg_kstamp_free(st);
		return r;
	}
	/* "NAME SIZE REFS DEPS STATE ADDR [TAINT]": the references and users change freely */
	uint64_t h = 0;
	for (char *line = data, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
		char *f[6];
		int n = 0;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		for (char *save = NULL, *t = strtok_r(line, " ", &save); t && n < 6;
		     t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		if (n < 6)
			continue;
		fg_hash_upsert(st->names, f[0], strlen(f[0]), NULL);
		for (int i = 0; i < 6; i++)
			if (i != 2 && i != 3)
				h = fg_hash_bytes(f[i], strlen(f[i]) + 1, h);
		if (!nl)
			break;
	}
	st->modules = h;
	free(data);
	return 0;
}

void fg_kstamp_free(struct fg_kstamp *st)
{
	fg_hash_free(st->names);
	memset(st, 0, sizeof(*st));
}

bool fg_kstamp_equal(const struct fg_kstamp *a, const struct fg_kstamp *b)
{
	return strcmp(a->boot_id, b->boot_id) == 0 && a->modules == b->modules;
}

static bool cached_owner(const struct fg_ksym *s, const struct fg_kstamp *st)
{
	return !s->module || fg_hash_get(st->names, s->module, strlen(s->module)) != NULL;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fg_ksyms_save(const struct fg_ksyms *k, const struct fg_kstamp *st, int dirfd, const char *name)
{
	struct cache_hdr h = {.magic = CACHE_MAGIC};
	struct fg_big syms = {0}, names = {0};
	const char *last_mod = NULL;
	uint32_t last_mod_off = CACHE_NO_MODULE;
	size_t n = 0, nlen = 0;
	struct fg_atomic rep;
	int fd, r = 0;

	if (!k || k->hidden || k->from_cache || !k->n)
		return -EINVAL;
	fg_big_grow(&syms, k->n * sizeof(struct cache_sym));
	for (size_t i = 0; i < k->n; i++) {
		const struct fg_ksym *s = &k->syms[i];
		struct cache_sym *c = (struct cache_sym *)syms.p + n;
		size_t len = strlen(s->name) + 1;

		if (!cached_owner(s, st))
			continue;
		if (s->module && s->module != last_mod) {
			size_t ml = strlen(s->module) + 1;

			fg_big_grow(&names, nlen + ml);
			memcpy((char *)names.p + nlen, s->module, ml);
			last_mod = s->module;
			last_mod_off = (uint32_t)nlen;
			nlen += ml;
		}
		fg_big_grow(&names, nlen + len);
		memcpy((char *)names.p + nlen, s->name, len);
		c->addr = s->addr;
		c->end = s->end;
		c->name = (uint32_t)nlen;
		c->module = s->module ? last_mod_off : CACHE_NO_MODULE;
		nlen += len;
		n++;
		if (nlen > CACHE_MAX / 2) {
			r = -EFBIG;
			goto out;
		}
	}
	memcpy(h.boot_id, st->boot_id, sizeof(h.boot_id));
	h.modules = st->modules;
	h.nsyms = n;
	h.names_len = nlen;
	/* mode 0600: kernel addresses are for the owner's eyes only */
	r = fg_atomic_openat(&rep, dirfd, name, FG_OUT_PRIVATE | FG_OUT_FD);
	if (r < 0)
		goto out;
	fd = rep.fd;
	r = write_all(fd, &h, sizeof(h));
	if (!r)
		r = write_all(fd, syms.p, n * sizeof(struct cache_sym));
	if (!r)
		r = write_all(fd, names.p, nlen);
	if (r)
		fg_atomic_abort(&rep);
	else
		r = fg_atomic_commit(&rep);
out:
	fg_big_free(&syms);
	fg_big_free(&names);
	return r;
}

/* Check and adopt a cache's bytes (k->cache); NULL with errno set. */
static struct fg_ksyms *adopt_cache(struct fg_ksyms *k, size_t len, const struct fg_kstamp *st)
{
	const char *data = k->cache.p;
	struct cache_hdr h;
	const struct cache_sym *cs;
	uint64_t need;

	if (len < sizeof(h))
		return refuse(k, NULL, EINVAL);
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0 ||
	    h.boot_id[sizeof(h.boot_id) - 1] != '\0' || h.nsyms > CACHE_MAX / sizeof(*cs) ||
	    h.names_len > CACHE_MAX)
		return refuse(k, NULL, EINVAL);
	need = sizeof(h) + h.nsyms * sizeof(*cs) + h.names_len;
	if (need != len || (h.names_len && data[len - 1] != '\0'))
		return refuse(k, NULL, EINVAL);
	if (st && (strcmp(h.boot_id, st->boot_id) != 0 || h.modules != st->modules))
		return refuse(k, NULL, ESTALE);
	cs = (const struct cache_sym *)(data + sizeof(h));
	/*
	 * each symbol is checked when first looked up (cached_sym), into
	 * ordinary pages: a run names a few hundred symbols of 100,000
	 */
	k->raw = cs;
	grow_syms(k, h.nsyms ? h.nsyms : 1);
	k->names_len = h.names_len;
	k->n = h.nsyms;
	k->from_cache = true;
	k->any_nonzero = true;
	return k;
}

static struct cache_sym raw_at(const struct fg_ksyms *k, size_t i)
{
	struct cache_sym c;

	memcpy(&c, &k->raw[i], sizeof(c));
	return c;
}

/*
 * The cache's symbol i, checked against its neighbours and copied into
 * syms; NULL when the file is malformed there (the caller is then not
 * sure, and asks the kernel).  A table is only ever written whole, by
 * this user, but its bytes are still not trusted.
 */
static const struct fg_ksym *cached_sym(const struct fg_ksyms *k, size_t i)
{
	struct fg_ksym *s = &k->syms[i];
	struct cache_sym c, o;

	if (s->name)
		return s;
	c = raw_at(k, i);
	if (c.name >= k->names_len || (c.module != CACHE_NO_MODULE && c.module >= k->names_len) ||
	    c.end <= c.addr)
		return NULL;
	if (i) {
		o = raw_at(k, i - 1);
		if (o.addr >= c.addr || o.end > c.addr)
			return NULL;
	}
	if (i + 1 < k->n) {
		o = raw_at(k, i + 1);
		if (o.addr <= c.addr || c.end > o.addr)
			return NULL;
	}
	/* the names end in a NUL: adopt_cache checked the last byte */
	const char *names = (const char *)(k->raw + k->n);
	*s = (struct fg_ksym){
	    .addr = c.addr,
	    .end = c.end,
	    .name = names + c.name,
	    .module = c.module == CACHE_NO_MODULE ? NULL : names + c.module,
	};
	return s;
}

struct fg_ksyms *fg_ksyms_parse_cache(const void *data, size_t len, const struct fg_kstamp *st)
{
	struct fg_ksyms *k = ksyms_new();

	if (len > CACHE_MAX)
		return refuse(k, NULL, EINVAL);
	fg_big_grow(&k->cache, len ? len : 1);
	memcpy(k->cache.p, data, len);
	return adopt_cache(k, len, st);
}

struct fg_ksyms *fg_ksyms_load_cache(int dirfd, const char *name, const struct fg_kstamp *st)
{
	struct fg_ksyms *k;
	struct stat sb;
	size_t have;
	void *p;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP)
			errno = EPERM;
		return NULL;
	}
	/* ours alone: whoever could write it could choose the names we print */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	if (sb.st_size > CACHE_MAX) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	k = ksyms_new();
	if (sb.st_size < (off_t)sizeof(struct cache_hdr)) {
		close(fd);
		return refuse(k, NULL, EINVAL);
	}
	/*
	 * Mapped, not read: a copy is 700 fresh pages to fault in.  The file is
	 * this user's alone and replaced whole, never cut short in place.
	 */
	have = (size_t)sb.st_size;
	p = mmap(NULL, have, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return refuse(k, NULL, errno);
	k->cache.p = p;
	k->cache.size = have;
	return adopt_cache(k, have, st);
}

bool fg_ksyms_from_cache(const struct fg_ksyms *k)
{
	return k && k->from_cache;
}

const struct fg_ksym *fg_ksyms_lookup_sure(const struct fg_ksyms *k, uint64_t addr, bool *sure)
{
	const struct fg_ksym *s = fg_ksyms_lookup(k, addr);

	*sure = true;
	if (!k || !k->from_cache)
		return s;
	/*
	 * Between two symbols of one owner there is nothing but its code; past
	 * the last one, or outside all, may be code the cache leaves out.
	 */
	const struct fg_ksym *next =
	    s && s != &k->syms[k->n - 1] ? cached_sym(k, (size_t)(s - k->syms) + 1) : NULL;
	if (!next || next->module != s->module)
		*sure = false;
	return s;
}
