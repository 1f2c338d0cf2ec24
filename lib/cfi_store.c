// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/cfi_store.h"
#include "fg/hash.h"
#include "fg/safeio.h"
#include "fg/util.h"

#define MAGIC "fgcfi01\n"
#define MAX_LOADS 256u
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

struct fg_cfi_store {
	int dirfd; /* O_PATH */
	struct fg_cfi_store_stats st;
	/* its table files and their bytes, as last counted and written since (files -1: not yet) */
	int64_t files;
	uint64_t bytes;
	/* the builder: /proc/self/exe's device, inode, size and modification time */
	uint64_t builder[4];
};

/* A table file: this header, the identity (to 8 bytes), rows, rules (to 8 bytes), loads. */
struct hdr {
	char magic[8];
	uint64_t sum; /* fg_hash_bytes() of every byte after it */
	uint32_t idlen, nrows, nrules, nloads;
	uint64_t base;
	uint8_t shared, arch, pad[6];
	struct fg_cfi_stats st;
};

/* A load segment, without struct fg_elf_load's padding. */
struct disk_load {
	uint64_t vaddr, memsz, offset, filesz, flags;
};

struct fg_cfi_store *fg_cfi_store_open(const char *dir, int *err, char *bad, size_t badsize,
				       uid_t *owner)
{
	int fd = fg_safeio_private_dir_open(dir, true, bad, badsize, owner);
	struct fg_cfi_store *s;
	struct stat sb;

	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	s = fg_xcalloc(1, sizeof(*s));
	s->dirfd = fd;
	s->files = -1;
	if (stat("/proc/self/exe", &sb) == 0) {
		s->builder[0] = (uint64_t)sb.st_dev;
		s->builder[1] = (uint64_t)sb.st_ino;
		s->builder[2] = (uint64_t)sb.st_size;
		s->builder[3] = (uint64_t)sb.st_mtim.tv_sec << 30 ^ (uint64_t)sb.st_mtim.tv_nsec;
	}
	*err = 0;
	return s;
}

void fg_cfi_store_close(struct fg_cfi_store *s)
{
	if (!s)
		return;
	close(s->dirfd);
	free(s);
}

const struct fg_cfi_store_stats *fg_cfi_store_stats(const struct fg_cfi_store *s)
{
	return &s->st;
}

size_t fg_cfi_store_id(const struct fg_cfi_store *s, int fd, const void *key, size_t klen,
		       unsigned char *id)
{
	struct stat sb;
	uint64_t f[10];

	if (klen > FG_CFI_KEY_MAX || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return 0;
	f[0] = (uint64_t)sb.st_dev;
	f[1] = (uint64_t)sb.st_ino;
	f[2] = (uint64_t)sb.st_size;
	f[3] = (uint64_t)sb.st_mtim.tv_sec << 30 ^ (uint64_t)sb.st_mtim.tv_nsec;
	f[4] = (uint64_t)sb.st_ctim.tv_sec << 30 ^ (uint64_t)sb.st_ctim.tv_nsec;
	f[5] = klen;
	memcpy(&f[6], s->builder, sizeof(s->builder));
	_Static_assert(sizeof(f) <= FG_CFI_STORE_KEY_MAX - FG_CFI_KEY_MAX, "the identity's room");
	memcpy(id, f, sizeof(f));
	memcpy(id + sizeof(f), key, klen);
	return sizeof(f) + klen;
}

/* The file name of identity id: 16 hex digits and ".cfi". */
static void id_name(const unsigned char *id, size_t idlen, char name[32])
{
	snprintf(name, 32, "%016" PRIx64 ".cfi", fg_hash_bytes(id, idlen, 0x6667636669ull));
}

/* The offsets of a table file's parts, from its header's counts. */
struct layout {
	size_t id, rows, rules, loads, end;
};

static struct layout layout_of(uint32_t idlen, uint32_t nrows, uint32_t nrules, uint32_t nloads)
{
	struct layout l;

	l.id = sizeof(struct hdr);
	l.rows = l.id + ALIGN8((size_t)idlen);
	l.rules = l.rows + (size_t)nrows * sizeof(struct fg_cfi_row);
	l.loads = l.rules + ALIGN8((size_t)nrules * sizeof(struct fg_cfi_rule));
	l.end = l.loads + (size_t)nloads * sizeof(struct disk_load);
	return l;
}

void fg_cfi_store_format(const struct fg_cfi *c, const unsigned char *id, size_t idlen,
			 struct fg_buf *out)
{
	struct hdr h = {.magic = MAGIC};
	struct layout l = layout_of((uint32_t)idlen, c->nrows, c->nrules, (uint32_t)c->nloads);
	size_t at = out->len;
	char *p;

	h.idlen = (uint32_t)idlen;
	h.nrows = c->nrows;
	h.nrules = c->nrules;
	h.nloads = (uint32_t)c->nloads;
	h.base = c->base;
	h.shared = c->shared;
	h.arch = c->arch;
	h.st = c->st;
	fg_buf_grow(out, l.end);
	p = out->data + at;
	memset(p, 0, l.end);
	memcpy(p + l.id, id, idlen);
	memcpy(p + l.rows, c->rows, (size_t)c->nrows * sizeof(*c->rows));
	memcpy(p + l.rules, c->rules, (size_t)c->nrules * sizeof(*c->rules));
	for (size_t i = 0; i < c->nloads; i++) {
		struct disk_load d = {c->loads[i].vaddr, c->loads[i].memsz, c->loads[i].offset,
				      c->loads[i].filesz, c->loads[i].flags};

		memcpy(p + l.loads + i * sizeof(d), &d, sizeof(d));
	}
	memcpy(p, &h, sizeof(h));
	/* the sum of the header from idlen on, and of the rest */
	h.sum = fg_hash_bytes(p + 16, l.end - 16, 0);
	memcpy(p + offsetof(struct hdr, sum), &h.sum, sizeof(h.sum));
	out->len = at + l.end;
	out->data[out->len] = '\0';
}

/* NULL, with *bad_at = at */
static struct fg_cfi *bad(size_t *bad_at, size_t at)
{
	*bad_at = at;
	return NULL;
}

/*
 * The table in a table file's bytes, checked whole; its rows and rules
 * copied, or (`borrow`) pointing into data, which must then outlive it.
 */
static struct fg_cfi *parse(const char *p, size_t len, const unsigned char *id, size_t idlen,
			    size_t *bad_at, bool borrow)
{
	struct disk_load loads[MAX_LOADS];
	struct fg_cfi *c;
	struct layout l;
	uint32_t prev = 0;
	struct hdr h;

	if (len < sizeof(h))
		return bad(bad_at, len);
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) != 0)
		return bad(bad_at, 0);
	if (h.idlen != idlen || h.idlen > FG_CFI_STORE_KEY_MAX)
		return bad(bad_at, offsetof(struct hdr, idlen));
	if (!h.nrows || h.nrows > FG_CFI_MAX_ROWS)
		return bad(bad_at, offsetof(struct hdr, nrows));
	if (!h.nrules || h.nrules > FG_CFI_MAX_RULES)
		return bad(bad_at, offsetof(struct hdr, nrules));
	if (h.nloads > MAX_LOADS)
		return bad(bad_at, offsetof(struct hdr, nloads));
	if (h.arch > FG_CFI_ARCH_ARM64 || h.shared > 1)
		return bad(bad_at, offsetof(struct hdr, shared));
	for (size_t i = 0; i < sizeof(h.pad); i++)
		if (h.pad[i])
			return bad(bad_at, offsetof(struct hdr, pad) + i);
	l = layout_of(h.idlen, h.nrows, h.nrules, h.nloads);
	if (len != l.end)
		return bad(bad_at, len < l.end ? len : l.end);
	if (h.sum != fg_hash_bytes(p + 16, len - 16, 0))
		return bad(bad_at, offsetof(struct hdr, sum));
	if (memcmp(p + l.id, id, idlen) != 0)
		return bad(bad_at, l.id);
	/* the padding, zeros: one table, one file */
	for (size_t i = l.id + idlen; i < l.rows; i++)
		if (p[i])
			return bad(bad_at, i);
	for (size_t i = l.rules + (size_t)h.nrules * sizeof(struct fg_cfi_rule); i < l.loads; i++)
		if (p[i])
			return bad(bad_at, i);
	/* what the walks rely on: rows in order, each rule there, each rule of a known kind */
	for (uint32_t i = 0; i < h.nrows; i++) {
		struct fg_cfi_row r;

		memcpy(&r, p + l.rows + (size_t)i * sizeof(r), sizeof(r));
		if (r.rule >= h.nrules || (i && r.pc <= prev))
			return bad(bad_at, l.rows + (size_t)i * sizeof(r));
		prev = r.pc;
	}
	for (uint32_t i = 0; i < h.nrules; i++) {
		struct fg_cfi_rule r;

		memcpy(&r, p + l.rules + (size_t)i * sizeof(r), sizeof(r));
		if (r.kind > FG_CFI_INVALID)
			return bad(bad_at, l.rules + (size_t)i * sizeof(r));
	}
	for (uint32_t i = 0; i < h.nloads; i++) {
		memcpy(&loads[i], p + l.loads + (size_t)i * sizeof(loads[i]), sizeof(loads[i]));
		if (loads[i].flags > UINT32_MAX)
			return bad(bad_at, l.loads + (size_t)i * sizeof(loads[i]));
	}
	c = fg_xcalloc(1, sizeof(*c));
	c->base = h.base;
	c->shared = h.shared;
	c->arch = h.arch;
	c->st = h.st;
	c->nrows = h.nrows;
	c->nrules = h.nrules;
	c->nloads = h.nloads;
	if (borrow) {
		/* (each part at a multiple of 8 bytes from the start) */
		c->rows = (struct fg_cfi_row *)(uintptr_t)(p + l.rows);
		c->rules = (struct fg_cfi_rule *)(uintptr_t)(p + l.rules);
	} else {
		c->rows = fg_xreallocarray(NULL, h.nrows, sizeof(*c->rows));
		c->rules = fg_xreallocarray(NULL, h.nrules, sizeof(*c->rules));
		memcpy(c->rows, p + l.rows, (size_t)h.nrows * sizeof(*c->rows));
		memcpy(c->rules, p + l.rules, (size_t)h.nrules * sizeof(*c->rules));
	}
	c->loads = fg_xreallocarray(NULL, h.nloads ? h.nloads : 1, sizeof(*c->loads));
	for (uint32_t i = 0; i < h.nloads; i++)
		c->loads[i] = (struct fg_elf_load){loads[i].vaddr, loads[i].memsz, loads[i].offset,
						   loads[i].filesz, (uint32_t)loads[i].flags};
	return c;
}

struct fg_cfi *fg_cfi_store_parse(const void *data, size_t len, const unsigned char *id,
				  size_t idlen, size_t *bad_at)
{
	return parse(data, len, id, idlen, bad_at, false);
}

struct fg_cfi *fg_cfi_store_get(struct fg_cfi_store *s, const unsigned char *id, size_t idlen)
{
	struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	struct fg_cfi *c = NULL;
	char name[32];
	struct stat sb;
	size_t len, bad_at = 0;
	void *map;
	int fd;

	id_name(id, idlen, name);
	fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		s->st.misses++;
		return NULL;
	}
	/*
	 * Ours alone, no larger than the largest table, and mapped rather than
	 * read: the walks' tables go from the page cache to the maps with no
	 * copy between.  (A file is only ever replaced whole, by a rename: no
	 * table file mapped changes under us.)
	 */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    !(sb.st_mode & 022) && sb.st_size > 0 &&
	    sb.st_size <=
		(off_t)layout_of(FG_CFI_STORE_KEY_MAX, FG_CFI_MAX_ROWS, FG_CFI_MAX_RULES, MAX_LOADS)
		    .end) {
		len = (size_t)sb.st_size;
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			map = NULL;
		else if ((c = parse(map, len, id, idlen, &bad_at, true))) {
			c->map = map;
			c->map_len = len;
		} else {
			munmap(map, len);
		}
	}
	if (c) {
		/* used: the last to go when room is made */
		(void)futimens(fd, now);
		s->st.hits++;
	} else {
		/* not right (another identity under its name, cut short, not ours): built again */
		(void)unlinkat(s->dirfd, name, 0);
		if (!s->st.refused++) {
			snprintf(s->st.first_bad, sizeof(s->st.first_bad), "%s", name);
			s->st.first_bad_at = bad_at;
		}
	}
	close(fd);
	return c;
}

/*
 * The table files counted (the first write of a run, and whenever those
 * written since may have gone past a bound); past FG_CFI_STORE_MAX_FILES or
 * _BYTES, the least recently used removed, to nine tenths of both.
 */
static void make_room(struct fg_cfi_store *s, size_t written)
{
	static const struct fg_dir_bounds b = {FG_CFI_STORE_MAX_FILES, FG_CFI_STORE_MAX_BYTES,
					       FG_CFI_STORE_MAX_FILES / 10 * 9,
					       FG_CFI_STORE_MAX_BYTES / 10 * 9};
	struct fg_dir_count n;

	if (s->files >= 0) {
		s->files++;
		s->bytes += written;
		if (s->files <= FG_CFI_STORE_MAX_FILES && s->bytes <= FG_CFI_STORE_MAX_BYTES)
			return;
	}
	if (fg_safeio_dir_trim(s->dirfd, NULL, &b, &n) < 0)
		return;
	s->st.evicted += n.removed;
	s->files = (int64_t)n.files;
	s->bytes = n.bytes;
}

void fg_cfi_store_put(struct fg_cfi_store *s, const unsigned char *id, size_t idlen,
		      const struct fg_cfi *c)
{
	struct fg_buf b = FG_BUF_INIT;
	char name[32], tmp[64];
	size_t done = 0;
	int fd;

	if (c->lazy || !c->nrows || c->nloads > MAX_LOADS)
		return; /* (no such table is built for the BPF maps) */
	fg_cfi_store_format(c, id, idlen, &b);
	id_name(id, idlen, name);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", name, (long)getpid());
	/*
	 * A file of its own, renamed whole over the name (no sync: a file cut
	 * short by a crash fails its checksum, and is built again)
	 */
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	while (fd >= 0 && done < b.len) {
		ssize_t w = write(fd, b.data + done, b.len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (fd >= 0 && close(fd) == 0 && done == b.len &&
	    renameat(s->dirfd, tmp, s->dirfd, name) == 0) {
		s->st.written++;
		make_room(s, b.len);
	} else {
		if (fd >= 0)
			(void)unlinkat(s->dirfd, tmp, 0);
		s->st.errors++;
	}
	fg_buf_release(&b);
}
