// SPDX-License-Identifier: BSD-2-Clause
/* Mappings and process events beside the samples: the /proc snapshot and perf side-band. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/lines.h"
#include "fg/sideband.h"

/* --- the /proc snapshot --- */

void fg_sideband_maps_record(const struct fg_procmap *pm, struct fg_rec_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = pm->start;
	m->end = pm->end;
	m->pgoff = pm->pgoff;
	m->maj = pm->dev_major;
	m->min = pm->dev_minor;
	m->ino = pm->inode;
	m->prot = pm->prot;
	m->mflags = pm->shared ? MAP_SHARED : MAP_PRIVATE;
	m->flags = FG_MAP_F_SNAPSHOT;
}

/* The numbers after "Uid:" or "Gid:" in /proc/PID/status text: the second is the effective one. */
static int status_id(const char *text, const char *key, uint32_t *out)
{
	const char *p = text;
	unsigned long real, eff;

	/* at the start of a line: a process may name itself "Uid: 0 0" */
	while ((p = strstr(p, key)) != NULL && p != text && p[-1] != '\n')
		p++;
	if (!p || sscanf(p + strlen(key), " %lu %lu", &real, &eff) != 2 || eff > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)eff;
	return 0;
}

int fg_sideband_creds_parse(const char *status, struct fg_rec_creds *c)
{
	memset(c, 0, sizeof(*c));
	if (status_id(status, "Uid:", &c->uid) < 0 || status_id(status, "Gid:", &c->gid) < 0)
		return -EINVAL;
	return 0;
}

int fg_sideband_creds_read(const char *proc, uint32_t pid, struct fg_rec_creds *c)
{
	char name[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "%s/%u/status", proc, pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Uid and Gid come within the first lines */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (fg_sideband_creds_parse(buf, c) < 0)
		return n == 0 ? -ESRCH : -EINVAL;
	c->pid = pid;
	return 0;
}

/* Queue a creds record for pid at `time`, when it can still be read.  1 if queued. */
static int queue_creds(struct fg_reorder *q, const char *proc, uint32_t pid, uint64_t time)
{
	struct fg_rec_creds c;

	if (fg_sideband_creds_read(proc, pid, &c) < 0)
		return 0;
	c.time_ns = time;
	fg_reorder_add(q, time, FG_REC_CREDS, &c, sizeof(c), NULL, 0);
	return 1;
}

int fg_sideband_maps_pid(struct fg_reorder *q, const char *proc, uint32_t pid)
{
	static const char anon[] = "//anon";
	char name[64];
	struct fg_lines l;
	struct fg_procmap pm;
	struct fg_rec_mapping m;
	const char *line;
	size_t len;
	int rc, n = 0;
	struct fg_buf copy = FG_BUF_INIT; /* the line, which the parser cuts in place */

	snprintf(name, sizeof(name), "%s/%u/maps", proc, pid);
	rc = fg_lines_open(&l, name);
	if (rc < 0)
		return rc;
	queue_creds(q, proc, pid, 0);
	while ((rc = fg_lines_next(&l, &line, &len)) == 1) {
		fg_buf_reset(&copy);
		fg_buf_add(&copy, line, len);
		/* a line the kernel would not write, or a mapping no sample can be in */
		if (fg_procmap_parse(copy.data, len, &pm) < 0 || !pm.exec || pm.end == pm.start)
			continue;
		fg_sideband_maps_record(&pm, &m);
		m.pid = pid;
		m.tid = pid;
		if (pm.path_len)
			fg_reorder_add(q, 0, FG_REC_MAPPING, &m, sizeof(m), pm.path,
				       pm.path_len + 1);
		else
			fg_reorder_add(q, 0, FG_REC_MAPPING, &m, sizeof(m), anon, sizeof(anon));
		n++;
	}
	fg_buf_release(&copy);
	fg_lines_release(&l);
	/* a process that exited while we read it: what we read is still true */
	return rc < 0 && rc != -ESRCH ? rc : n;
}

int fg_sideband_maps_all(struct fg_reorder *q, const char *proc)
{
	DIR *d = opendir(proc);
	struct dirent *de;
	int total = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, &end, 10);
		if (*end || pid == 0 || pid > UINT32_MAX)
			continue;
		int n = fg_sideband_maps_pid(q, proc, (uint32_t)pid);
		if (n > 0)
			total += n;
	}
	closedir(d);
	return total;
}

/* --- the kernel's side-band events --- */

struct sb_cpu {
	int fd;
	int cpu;
	void *base;  /* the metadata page, then the data pages */
	size_t size; /* bytes of data */
	uint64_t lost;
};

struct fg_sideband {
	struct sb_cpu *cpus;
	int n;
	size_t page;
	uint64_t lost;
	uint64_t ksyms;
	uint8_t *tmp; /* a record that wraps around the end of the buffer */
	size_t tmpcap;
};

/* the sample_id trailer of every side-band record: PERF_SAMPLE_TID | TIME | CPU */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

#define SB_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

int fg_sideband_open(struct fg_sideband **out, const int *cpus, int ncpus, unsigned pages,
		     int *failed_cpu)
{
	struct fg_sideband *sb = fg_xcalloc(1, sizeof(*sb));
	struct perf_event_attr attr;
	int err = 0;

	sb->page = (size_t)sysconf(_SC_PAGESIZE);
	sb->cpus = fg_xcalloc((size_t)ncpus, sizeof(*sb->cpus));
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = SB_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.ksymbol = 1;
	attr.build_id = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.exclude_kernel = 1; /* events only; keeps the paranoid check to user space */
	for (int i = 0; i < ncpus; i++) {
		struct sb_cpu *c = &sb->cpus[i];
		int fd =
		    (int)syscall(SYS_perf_event_open, &attr, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == EINVAL && attr.ksymbol) {
			/* kernels before 5.1: no BPF code's symbols (nor build-ids) */
			attr.ksymbol = 0;
			fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpus[i], -1,
					  PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0 && errno == EINVAL && attr.build_id) {
			/* kernels before 5.12: device and inode instead of build-ids */
			attr.build_id = 0;
			fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpus[i], -1,
					  PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0) {
			err = -errno;
			*failed_cpu = cpus[i];
			break;
		}
		c->fd = fd;
		c->cpu = cpus[i];
		c->size = pages * sb->page;
		c->base = mmap(NULL, c->size + sb->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		sb->n = i + 1;
		if (c->base == MAP_FAILED) {
			c->base = NULL;
			err = -errno;
			*failed_cpu = cpus[i];
			break;
		}
	}
	if (err) {
		fg_sideband_close(sb);
		return err;
	}
	*out = sb;
	return 0;
}

void fg_sideband_close(struct fg_sideband *sb)
{
	if (!sb)
		return;
	for (int i = 0; i < sb->n; i++) {
		if (sb->cpus[i].base)
			munmap(sb->cpus[i].base, sb->cpus[i].size + sb->page);
		close(sb->cpus[i].fd);
	}
	free(sb->cpus);
	free(sb->tmp);
	free(sb);
}

uint64_t fg_sideband_lost(const struct fg_sideband *sb)
{
	return sb->lost;
}

uint64_t fg_sideband_ksyms(const struct fg_sideband *sb)
{
	return sb->ksyms;
}

static void copy_comm(char *dst, const char *src, size_t avail)
{
	size_t n = strnlen(src, avail);

	if (n > FG_REC_COMM_LEN - 1)
		n = FG_REC_COMM_LEN - 1;
	memset(dst, 0, FG_REC_COMM_LEN);
	memcpy(dst, src, n);
}

/* PERF_RECORD_MMAP2: an executable mapping, with its build-id or its inode */
static int sb_mmap2(const struct perf_event_header *h, const uint8_t *body, size_t blen,
		    const struct sample_id *id, struct fg_reorder *q)
{
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		union {
			struct {
				uint32_t maj, min;
				uint64_t ino, ino_generation;
			};
			struct {
				uint8_t build_id_size, res1;
				uint16_t res2;
				uint8_t build_id[20];
			};
		};
		uint32_t prot, flags;
	} ev;
	struct fg_rec_mapping m;
	const char *name = (const char *)body + sizeof(ev);
	size_t nlen;

	if (blen < sizeof(ev) + 1)
		return 0;
	memcpy(&ev, body, sizeof(ev));
	if (!(ev.prot & 4) || ev.len == 0) /* PROT_EXEC */
		return 0;
	memset(&m, 0, sizeof(m));
	m.pid = ev.pid;
	m.tid = ev.tid;
	m.time_ns = id->time;
	m.start = ev.addr;
	m.end = ev.addr + ev.len;
	m.pgoff = ev.pgoff;
	m.prot = ev.prot;
	m.mflags = ev.flags;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.flags = FG_MAP_F_BUILD_ID;
		m.build_id_len = ev.build_id_size <= FG_REC_BUILD_ID_MAX ? ev.build_id_size
									 : FG_REC_BUILD_ID_MAX;
		memcpy(m.build_id, ev.build_id, m.build_id_len);
	} else {
		m.maj = ev.maj;
		m.min = ev.min;
		m.ino = ev.ino;
	}
	nlen = strnlen(name, blen - sizeof(ev));
	if (nlen == 0 || m.end <= m.start)
		return 0;
	char *path = fg_xstrndup(name, nlen);
	fg_reorder_add(q, id->time, FG_REC_MAPPING, &m, sizeof(m), path, nlen + 1);
	free(path);
	return 1;
}

/* PERF_RECORD_COMM: a thread's new name, and after an exec who the process runs as */
static int sb_comm(const struct perf_event_header *h, const uint8_t *body, size_t blen,
		   const struct sample_id *id, struct fg_reorder *q)
{
	struct fg_rec_comm r;
	uint32_t ids[2];

	if (blen < 8 + 1)
		return 0;
	memcpy(ids, body, 8);
	memset(&r, 0, sizeof(r));
	r.pid = ids[0];
	r.tid = ids[1];
	r.time_ns = id->time;
	r.flags = h->misc & PERF_RECORD_MISC_COMM_EXEC ? FG_COMM_F_EXEC : 0;
	copy_comm(r.comm, (const char *)body + 8, blen - 8);
	fg_reorder_add(q, id->time, FG_REC_COMM, &r, sizeof(r), NULL, 0);
	/* an exec may change who the process runs as (set-user-ID programs) */
	if (r.flags & FG_COMM_F_EXEC)
		return 1 + queue_creds(q, "/proc", r.pid, id->time);
	return 1;
}

/* PERF_RECORD_FORK and _EXIT: a task begins or ends */
static int sb_task(const struct perf_event_header *h, const uint8_t *body, size_t blen,
		   struct fg_reorder *q)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} ev;
	struct fg_rec_task t;
	uint32_t type = h->type == PERF_RECORD_FORK ? FG_REC_FORK : FG_REC_EXIT;

	if (blen < sizeof(ev))
		return 0;
	memcpy(&ev, body, sizeof(ev));
	t.pid = ev.pid;
	t.tid = ev.tid;
	t.ppid = ev.ppid;
	t.ptid = ev.ptid;
	t.time_ns = ev.time;
	fg_reorder_add(q, ev.time, type, &t, sizeof(t), NULL, 0);
	/* a new process: who it runs as, if it is still there */
	if (type == FG_REC_FORK && t.pid == t.tid && t.pid != t.ppid)
		return 1 + queue_creds(q, "/proc", t.pid, ev.time);
	return 1;
}

void fg_sideband_ksym(struct fg_reorder *q, uint64_t time_ns, uint64_t addr, uint32_t len,
		      uint32_t flags, const char *name)
{
	struct fg_rec_ksym k = {.addr = addr, .time_ns = time_ns, .len = len, .flags = flags};
	size_t nlen = strnlen(name, FG_REC_KSYM_NAME_MAX - 1);
	char payload[sizeof(k) + FG_REC_KSYM_NAME_MAX];

	memcpy(payload, &k, sizeof(k));
	memcpy(payload + sizeof(k), name, nlen);
	payload[sizeof(k) + nlen] = '\0';
	fg_reorder_add(q, time_ns, FG_REC_KSYM, payload, sizeof(k) + nlen + 1, NULL, 0);
}

/* PERF_RECORD_KSYMBOL: kernel code loaded or unloaded, a BPF program's above all */
static int sb_ksymbol(struct fg_sideband *sb, const uint8_t *body, size_t blen,
		      const struct sample_id *id, struct fg_reorder *q)
{
	struct {
		uint64_t addr;
		uint32_t len;
		uint16_t type, flags;
	} ev;
	char name[FG_REC_KSYM_NAME_MAX];
	struct sample_id at;
	size_t nlen, idat;

	if (blen < sizeof(ev) + 1)
		return 0;
	memcpy(&ev, body, sizeof(ev));
	nlen = strnlen((const char *)body + sizeof(ev), blen - sizeof(ev));
	if (!ev.len || !nlen || nlen >= sizeof(name))
		return 0;
	/*
	 * The sample_id comes right after the name (padded to 8): the kernel
	 * may say the record is longer than that (6.18 does so for code
	 * unloaded in a deferred work, the tail zeros), so it is read there,
	 * not from the end.
	 */
	idat = sizeof(ev) + ((nlen + 1 + 7) & ~(size_t)7);
	if (idat < blen) { /* (the record goes on sizeof(at) bytes past blen) */
		memcpy(&at, body + idat, sizeof(at));
		id = &at;
	}
	memcpy(name, body + sizeof(ev), nlen);
	name[nlen] = '\0';
	/* (a name as the kernel makes it: no control characters; any would make it unreadable) */
	for (size_t i = 0; i < nlen; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
	sb->ksyms++;
	fg_sideband_ksym(q, id->time, ev.addr, ev.len,
			 ev.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER ? FG_KSYM_F_GONE : 0,
			 name);
	return 1;
}

/* PERF_RECORD_LOST: side-band records the kernel could not write, counted */
static int sb_lost(struct fg_sideband *sb, struct sb_cpu *c, const uint8_t *body, size_t blen,
		   const struct sample_id *id, struct fg_reorder *q)
{
	uint64_t v[2];
	struct fg_rec_lost l;

	if (blen < sizeof(v))
		return 0;
	memcpy(v, body, sizeof(v));
	c->lost += v[1];
	sb->lost += v[1];
	l.time_ns = id->time;
	l.count = v[1];
	l.cpu = (uint32_t)c->cpu;
	l.reason = FG_LOST_SIDEBAND;
	fg_reorder_add(q, id->time, FG_REC_LOST, &l, sizeof(l), NULL, 0);
	return 1;
}

/* One side-band record (whole, in `p`, `size` bytes) to the queue.  1 if queued. */
static int sb_event(struct fg_sideband *sb, struct sb_cpu *c, const uint8_t *p, size_t size,
		    struct fg_reorder *q)
{
	const struct perf_event_header *h = (const void *)p;
	struct sample_id id;
	const uint8_t *body = p + sizeof(*h);
	size_t blen;

	if (size < sizeof(*h) + sizeof(id))
		return 0;
	memcpy(&id, p + size - sizeof(id), sizeof(id));
	blen = size - sizeof(*h) - sizeof(id);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return sb_mmap2(h, body, blen, &id, q);
	case PERF_RECORD_COMM:
		return sb_comm(h, body, blen, &id, q);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sb_task(h, body, blen, q);
	case PERF_RECORD_LOST:
		return sb_lost(sb, c, body, blen, &id, q);
	case PERF_RECORD_KSYMBOL:
		return sb_ksymbol(sb, body, blen, &id, q);
	}
	return 0;
}

int fg_sideband_drain(struct fg_sideband *sb, struct fg_reorder *q)
{
	int queued = 0;

	for (int i = 0; i < sb->n; i++) {
		struct sb_cpu *c = &sb->cpus[i];
		struct perf_event_mmap_page *meta = c->base;
		const uint8_t *data = (const uint8_t *)c->base + sb->page;
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;

		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			size_t at = (size_t)(tail % c->size);
			const uint8_t *rec;

			if (at + sizeof(h) <= c->size) {
				memcpy(&h, data + at, sizeof(h));
			} else {
				size_t first = c->size - at;

				memcpy(&h, data + at, first);
				memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
			}
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			if (at + h.size <= c->size) {
				rec = data + at;
			} else {
				size_t first = c->size - at;

				if (sb->tmpcap < h.size) {
					sb->tmp = fg_xrealloc(sb->tmp, h.size);
					sb->tmpcap = h.size;
				}
				memcpy(sb->tmp, data + at, first);
				memcpy(sb->tmp + first, data, h.size - first);
				rec = sb->tmp;
			}
			queued += sb_event(sb, c, rec, h.size, q);
			tail += h.size;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return queued;
}
