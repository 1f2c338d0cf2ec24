// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-snap [--comm NAME] [--strip DIR] [--no-vdso] SNAPFILE > out.fgr
 *
 * Turn the snapshots tests/unwind/snap.c wrote (registers, stack copies and
 * /proc/self/maps of a fixture run) into a record stream (fg-record(5)), as
 * fg-sample --call-graph dwarf writes it: mapping records for the executable
 * mappings (with the files' build-ids), then one sample record a snapshot
 * with FG_SAMPLE_F_USTACK_SNAPSHOT and struct fg_rec_ustack (abi and registers
 * as the snapshot file says: 1, x86-64's perf_regs, or 2, arm64's, when the
 * fixture ran under qemu-aarch64).  The leaf's pc is the sample's one user IP.
 *
 * --strip DIR: mapping paths under DIR/ become /REST (golden files that are
 * unwound later against a copy of the files, with --symfs).
 * --no-vdso: leave out snapshots whose leaf is in the vdso (whose image
 * differs from kernel to kernel), counted on standard error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/procmaps.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "fg/util.h"
#include "../unwind/snap.h"

struct ctx {
	struct fg_rec_writer *w;
	uint32_t pid;
	const char *strip;
	uint64_t vdso_start, vdso_end;
	int err;
};

static int one_map(const struct fg_procmap *pm, void *arg)
{
	struct ctx *c = arg;
	struct fg_rec_mapping m;
	struct fg_elfsyms *e = NULL;
	const char *path = pm->path;
	char buf[4096];

	if (!pm->exec)
		return 0;
	if (!path[0]) /* anonymous code (qemu-user's signal trampoline), as the kernel names it */
		path = "//anon";
	memset(&m, 0, sizeof(m));
	m.pid = m.tid = c->pid;
	m.start = pm->start;
	m.end = pm->end;
	m.pgoff = pm->pgoff;
	m.ino = pm->inode;
	m.maj = pm->dev_major;
	m.min = pm->dev_minor;
	m.prot = 5;   /* PROT_READ | PROT_EXEC */
	m.mflags = 2; /* MAP_PRIVATE */
	m.flags = FG_MAP_F_SNAPSHOT;
	if (strcmp(path, "[vdso]") == 0) {
		unsigned long base = getauxval(AT_SYSINFO_EHDR);

		c->vdso_start = pm->start;
		c->vdso_end = pm->end;
		if (base)
			e = fg_elfsyms_open_mem((const void *)base, pm->end - pm->start);
	} else if (path[0] == '/') {
		int fd = fg_safeio_open_regular(path, 0, NULL);

		if (fd >= 0) {
			e = fg_elfsyms_open_fd(fd);
			close(fd);
		}
	}
	if (e && e->build_id_len && e->build_id_len <= FG_REC_BUILD_ID_MAX) {
		memcpy(m.build_id, e->build_id, e->build_id_len);
		m.build_id_len = (uint8_t)e->build_id_len;
		m.flags |= FG_MAP_F_BUILD_ID;
	}
	fg_elfsyms_free(e);
	if (c->strip && fg_starts_with(path, c->strip) && path[strlen(c->strip)] == '/') {
		snprintf(buf, sizeof(buf), "%s", path + strlen(c->strip));
		path = buf;
		/* the golden file's files are found by build-id, not by where they were */
		m.ino = m.maj = m.min = 0;
	}
	c->err = fg_rec_write_mapping(c->w, &m, path);
	return c->err ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *comm = "fixture", *strip = NULL;
	bool no_vdso = false;
	struct snap_file_hdr h;
	struct fg_rec_header rh;
	struct ctx c = {0};
	char *data, *maps;
	size_t len, ssize;
	uint64_t left_out = 0, written = 0;
	struct fg_rec_summary sum;
	int i, err;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--comm") == 0 && i + 1 < argc)
			comm = argv[++i];
		else if (strcmp(argv[i], "--strip") == 0 && i + 1 < argc)
			strip = argv[++i];
		else if (strcmp(argv[i], "--no-vdso") == 0)
			no_vdso = true;
		else
			break;
	}
	if (i + 1 != argc) {
		fprintf(stderr,
			"usage: fgr-snap [--comm NAME] [--strip DIR] [--no-vdso] SNAPFILE\n");
		return 2;
	}
	err = fg_safeio_read_file(argv[i], 1u << 30, &data, &len);
	if (err < 0)
		fg_diex("cannot read '%s': %s", argv[i], strerror(-err));
	if (len < sizeof(h))
		fg_diex("'%s': too short", argv[i]);
	memcpy(&h, data, sizeof(h));
	ssize = snap_slot_size(h.data_max);
	if (memcmp(h.magic, SNAP_MAGIC, 8) != 0 || h.data_max > (1u << 20) ||
	    h.nregs > SNAP_MAX_REGS || (uint32_t)__builtin_popcountll(h.regs_mask) != h.nregs ||
	    h.sp_at >= h.nregs || h.pc_at >= h.nregs || h.maps_len > len - sizeof(h) ||
	    (len - sizeof(h) - h.maps_len) / ssize < h.nslots)
		fg_diex("'%s': not a snapshot file, or truncated", argv[i]);
	maps = fg_xmalloc(h.maps_len + 1);
	memcpy(maps, data + sizeof(h), h.maps_len);
	maps[h.maps_len] = '\0';
	c.w = fg_rec_writer_new(1);
	c.strip = strip;
	fg_rec_header_init(&rh);
	rh.freq = 250;
	fg_rec_write_header(c.w, &rh);
	/* the slots follow the maps text at any alignment: each is copied out first */
	struct snap_slot *s = fg_xmalloc(ssize);
	if (h.nslots)
		memcpy(s, data + sizeof(h) + h.maps_len, ssize);
	c.pid = h.nslots ? s->pid : (uint32_t)getpid();
	if (fg_procmaps_parse(maps, h.maps_len, one_map, &c, NULL) < 0)
		fg_diex("'%s': malformed maps", argv[i]);
	for (uint32_t k = 0; k < h.nslots; k++) {
		size_t plen, rlen;
		uint8_t *p;
		struct fg_rec_sample smp;
		struct fg_rec_ustack u;
		uint64_t ip;

		memcpy(s, data + sizeof(h) + h.maps_len + (size_t)k * ssize, ssize);
		ip = s->regs[h.pc_at];
		if (!s->ready || s->size > h.data_max) {
			left_out++;
			continue;
		}
		if (no_vdso && ip >= c.vdso_start && ip < c.vdso_end) {
			left_out++;
			continue;
		}
		memset(&smp, 0, sizeof(smp));
		smp.time_ns = s->time_ns;
		smp.pid = s->pid;
		smp.tid = s->tid;
		smp.flags = FG_SAMPLE_F_USER_MODE | FG_SAMPLE_F_USTACK_SNAPSHOT;
		smp.weight = 1;
		smp.nr_user = 1;
		snprintf(smp.comm, sizeof(smp.comm), "%s", comm);
		memset(&u, 0, sizeof(u));
		u.abi = h.abi;
		u.nr_regs = h.nregs;
		u.regs_mask = h.regs_mask;
		u.sp = s->regs[h.sp_at];
		u.size = s->size;
		rlen = (size_t)h.nregs * 8;
		plen = sizeof(smp) + 8 + sizeof(u) + rlen + s->size;
		p = fg_xcalloc(1, plen);
		memcpy(p, &smp, sizeof(smp));
		memcpy(p + sizeof(smp), &ip, 8);
		memcpy(p + sizeof(smp) + 8, &u, sizeof(u));
		memcpy(p + sizeof(smp) + 8 + sizeof(u), s->regs, rlen);
		memcpy(p + sizeof(smp) + 8 + sizeof(u) + rlen, s->data, s->size);
		fg_rec_write(c.w, FG_REC_SAMPLE, p, plen);
		written++;
		free(p);
	}
	/* the closing record, as fg-sample ends a run */
	memset(&sum, 0, sizeof(sum));
	sum.samples = written;
	sum.command_status = -1;
	fg_rec_write(c.w, FG_REC_SUMMARY, &sum, sizeof(sum));
	if (left_out || h.dropped)
		fprintf(stderr, "fgr-snap: %u snapshots, %llu left out, %u dropped (no slot)\n",
			h.nslots, (unsigned long long)left_out, h.dropped);
	free(s);
	free(maps);
	free(data);
	err = fg_rec_writer_free(c.w);
	if (err < 0 || c.err < 0)
		fg_diex("write error: %s", strerror(err < 0 ? -err : -c.err));
	return 0;
}
