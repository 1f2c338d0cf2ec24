// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-unwind [options] FILE.fgr: unwind the stack snapshots of a record
 * stream with lib/unwind (the tables of lib/cfi) and name the frames with
 * lib/symbolize, printing perf-script text as fg-sym would.  A test and
 * measuring tool for the library until fg-sym does it.
 *
 *	--libdw          unwind with the libdwfl oracle instead
 *	--compare        unwind with both and compare frame for frame: every
 *	                 difference is printed on standard error; exit 1 on any
 *	--check PCT      exit 1 unless at least PCT% of the stacks are complete:
 *	                 they end at a STOP row in _start or a thread's start and
 *	                 every frame is named (a signal trampoline without a
 *	                 symbol, such as Debian libc's __restore_rt, by its CFI)
 *	--symfs DIR      find the mapped files under DIR (as fg-sym --symfs)
 *	--proc-root DIR  as fg-sym's (default /proc)
 *	--bench N        unwind every snapshot N times with each unwinder (no
 *	                 naming, no output) and print the time per snapshot
 *	--only table|libdw  with --bench: that unwinder only (for callgrind)
 *	-q               no perf-script text
 *
 * The summary on standard error counts stacks by how they ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "fg/cfi.h"
#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/hash.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "fg/symbolize.h"
#include "fg/unwind.h"
#include "fg/unwind_dw.h"
#include "fg/util.h"

#define MAX_FRAMES 512

struct map {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id[FG_REC_BUILD_ID_MAX];
	uint8_t build_id_len;
	char *path;
	bool resolved;
	int err;		  /* -errno: no table and no frame pointers either */
	const struct fg_cfi *cfi; /* NULL: frame pointers */
};

struct proc {
	uint32_t pid;
	struct map *maps;
	size_t nmaps, alloc;
	bool sorted;
	struct fg_unwind_dw *dw;
	struct map *last;
};

struct sample {
	struct fg_rec_sample s;
	struct fg_rec_ustack u;
	uint64_t *regs;
	uint8_t *data;
};

static struct {
	const char *symfs;
	const char *proc_root;
	bool libdw, compare, quiet;
	double check;
	int bench;
	const char *only;
} opt = {.proc_root = "/proc", .check = -1};

static struct fg_hmap *procs;
static struct fg_cfi_cache *cache;
static struct sample *samples;
static size_t nsamples, samples_alloc;

static struct proc *get_proc(uint32_t pid)
{
	bool inserted;
	struct fg_hent *e = fg_hmap_upsert(procs, &pid, sizeof(pid), &inserted);

	if (inserted) {
		struct proc *p = fg_xcalloc(1, sizeof(*p));

		p->pid = pid;
		e->val.p = p;
	}
	return e->val.p;
}

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct map *find_map(struct proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nmaps;

	if (p->last && pc >= p->last->start && pc < p->last->end)
		return p->last;
	if (!p->sorted) {
		qsort(p->maps, p->nmaps, sizeof(*p->maps), cmp_map);
		p->sorted = true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= p->maps[lo - 1].end)
		return NULL;
	return p->last = &p->maps[lo - 1];
}

/* Open the mapped file: under --symfs or at its path, and only when its build-id is the mapped one.
 */
static int open_mapped(const struct map *m)
{
	char path[PATH_MAX * 2];
	struct fg_elfsyms *e;
	int fd;

	snprintf(path, sizeof(path), "%s%s", opt.symfs ? opt.symfs : "", m->path);
	fd = fg_open_data(path, FG_ELF_MAX_FILE, NULL);
	if (fd < 0 || !m->build_id_len)
		return fd;
	e = fg_elfsyms_open_fd(fd);
	if (!e || e->build_id_len != m->build_id_len ||
	    memcmp(e->build_id, m->build_id, m->build_id_len) != 0) {
		fg_elfsyms_free(e);
		close(fd);
		return -ESTALE;
	}
	fg_elfsyms_free(e);
	return fd;
}

static bool vdso_image(const struct map *m, const void **img, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct fg_elfsyms *e;
	bool ok;

	if (!base)
		return false;
	*img = (const void *)base;
	*size = m->end - m->start;
	if (!m->build_id_len)
		return true;
	/* the recorded vdso must be this kernel's */
	e = fg_elfsyms_open_mem(*img, *size);
	ok = e && e->build_id_len == m->build_id_len &&
	     memcmp(e->build_id, m->build_id, m->build_id_len) == 0;
	fg_elfsyms_free(e);
	return ok;
}

static void resolve(struct map *m)
{
	char key[FG_CFI_KEY_MAX];
	size_t klen;
	struct fg_cfi *c;
	const void *img;
	size_t size;
	int err, fd;

	m->resolved = true;
	if (!*m->path || fg_starts_with(m->path, "//anon") || fg_starts_with(m->path, "[anon"))
		return; /* JIT code: frame pointers */
	if (strcmp(m->path, "[vdso]") == 0) {
		if (!vdso_image(m, &img, &size)) {
			m->err = -ESTALE;
			return;
		}
		klen = fg_cfi_key(key, m->build_id, m->build_id_len, 0, 0, 1);
		if (!fg_cfi_cache_get(cache, key, klen, &c, &err)) {
			c = fg_cfi_open_mem(img, size);
			err = c ? 0 : -errno;
			fg_cfi_cache_put(cache, key, klen, c, err);
		}
		m->cfi = c;
		m->err = err;
		return;
	}
	if (m->path[0] != '/') { /* [vsyscall] and the like */
		m->err = -EINVAL;
		return;
	}
	klen = fg_cfi_key(key, m->build_id, m->build_id_len, m->maj, m->min, m->ino);
	if (!fg_cfi_cache_get(cache, key, klen, &c, &err)) {
		fd = open_mapped(m);
		if (fd < 0) {
			err = fd;
			c = NULL;
		} else {
			c = fg_cfi_open_fd(fd, -1);
			err = c ? 0 : -errno;
			close(fd);
		}
		fg_cfi_cache_put(cache, key, klen, c, err);
	}
	m->cfi = c;
	/* a file without any CFI is walked by frame pointers */
	m->err = err == -ENODATA ? 0 : err;
}

static int find(void *arg, uint64_t pc, struct fg_unwind_map *um)
{
	struct proc *p = arg;
	struct map *m = find_map(p, pc);
	uint64_t vaddr;

	if (!m)
		return -ENOENT;
	if (!m->resolved)
		resolve(m);
	if (m->err)
		return m->err;
	um->cfi = m->cfi;
	um->bias = 0;
	if (m->cfi) {
		if (!fg_cfi_offset_to_vaddr(m->cfi, pc - m->start + m->pgoff, &vaddr))
			return -ENOEXEC;
		um->bias = pc - vaddr;
	}
	return 0;
}

static struct fg_unwind_dw *oracle(struct proc *p)
{
	const void *img;
	size_t size;

	if (p->dw)
		return p->dw;
	p->dw = fg_unwind_dw_new();
	if (!p->dw)
		fg_die("libdwfl");
	for (size_t i = 0; i < p->nmaps; i++) {
		struct map *m = &p->maps[i];
		int fd;

		if (strcmp(m->path, "[vdso]") == 0) {
			if (vdso_image(m, &img, &size))
				fg_unwind_dw_map_image(p->dw, "[vdso]", img, size, m->start);
			continue;
		}
		if (m->path[0] != '/')
			continue;
		fd = open_mapped(m);
		if (fd < 0)
			continue;
		fg_unwind_dw_map(p->dw, m->path, fd, m->start, m->end, m->pgoff);
		close(fd);
	}
	return p->dw;
}

static size_t unwind_one(const struct sample *smp, bool libdw, struct fg_unwind_frame *f,
			 enum fg_unwind_end *end, const char **msg)
{
	struct proc *p = get_proc(smp->s.pid);
	struct fg_unwind_ops ops = {.find = find, .arg = p};
	struct fg_cfi_regs regs;

	*msg = "";
	if (fg_unwind_regs_from_perf(smp->u.abi, smp->u.regs_mask, smp->regs, smp->u.nr_regs,
				     &regs) < 0) {
		*end = FG_UNWIND_END_NOREG;
		return 0;
	}
	if (libdw)
		return fg_unwind_dw(oracle(p), smp->s.tid, &regs, smp->u.sp, smp->data, smp->u.size,
				    f, MAX_FRAMES, end, msg);
	return fg_unwind(&ops, &regs, smp->u.sp, smp->data, smp->u.size, f, MAX_FRAMES, end);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void bench(void)
{
	struct fg_unwind_frame f[MAX_FRAMES];
	enum fg_unwind_end end;
	const char *msg;

	for (int which = 0; which < 2; which++) {
		const char *name = which ? "libdw" : "table";
		uint64_t frames = 0;
		double t0;

		if (opt.only && strcmp(opt.only, name) != 0)
			continue;
		/* a first pass builds the tables (and libdwfl's caches) */
		for (size_t i = 0; i < nsamples; i++)
			unwind_one(&samples[i], which, f, &end, &msg);
		t0 = now_ns();
		for (int k = 0; k < opt.bench; k++)
			for (size_t i = 0; i < nsamples; i++)
				frames += unwind_one(&samples[i], which, f, &end, &msg);
		double ns =
		    (now_ns() - t0) / ((double)opt.bench * (double)(nsamples ? nsamples : 1));
		printf("%s: %zu snapshots x %d: %.0f ns a snapshot, %.1f frames a snapshot\n", name,
		       nsamples, opt.bench, ns,
		       (double)frames / ((double)opt.bench * (double)(nsamples ? nsamples : 1)));
	}
}

static const char *const outer[] = {"_start", "clone3", "__clone3", "clone", "__clone", NULL};

static int run(struct fg_symbolizer *sym)
{
	struct fg_unwind_frame f[MAX_FRAMES], g[MAX_FRAMES];
	struct fg_unwind_stats st = {0}, dst = {0};
	uint64_t complete = 0, differ = 0, unnamed = 0;
	uint64_t pcs[MAX_FRAMES];
	int rc = 0;

	for (size_t i = 0; i < nsamples; i++) {
		const struct sample *smp = &samples[i];
		enum fg_unwind_end end, dend;
		const char *msg;
		size_t n = unwind_one(smp, opt.libdw, f, &end, &msg);
		bool named = true, whole = false;

		fg_unwind_count(&st, f, n, end);
		for (size_t k = 0; k < n; k++) {
			struct fg_frame fr;

			pcs[k] = f[k].pc;
			fg_symbolizer_frame(sym, smp->s.pid, smp->s.time_ns, f[k].pc, false,
					    f[k].flags & FG_UNWIND_F_EXACT, &fr);
			/* a signal trampoline its CFI names, where no symbol does */
			if (!fr.sym && !(f[k].flags & FG_UNWIND_F_SIGNAL))
				named = false;
			if (k == n - 1 && fr.sym)
				for (int o = 0; outer[o]; o++)
					whole |= strcmp(fr.sym, outer[o]) == 0;
		}
		unnamed += !named;
		if (end == FG_UNWIND_END_STOP && named && whole)
			complete++;
		else if (opt.check >= 0)
			fprintf(stderr,
				"incomplete stack, sample %zu (tid %u): %zu frames, %s%s%s\n", i,
				smp->s.tid, n, fg_unwind_end_names[end], *msg ? ": " : "", msg);
		if (opt.compare) {
			size_t dn = unwind_one(smp, true, g, &dend, &msg);
			bool same = dn == n;

			fg_unwind_count(&dst, g, dn, dend);
			for (size_t k = 0; same && k < n; k++)
				same = f[k].pc == g[k].pc;
			if (!same) {
				differ++;
				fprintf(stderr,
					"sample %zu (tid %u): table %zu frames (%s), libdw %zu "
					"(%s%s%s)\n",
					i, smp->s.tid, n, fg_unwind_end_names[end], dn,
					fg_unwind_end_names[dend], *msg ? ": " : "", msg);
				for (size_t k = 0; k < n || k < dn; k++)
					fprintf(stderr, "  %2zu %16" PRIx64 " %16" PRIx64 "%s\n", k,
						k < n ? f[k].pc : 0, k < dn ? g[k].pc : 0,
						k < n && k < dn && f[k].pc == g[k].pc ? ""
										      : "  <-");
			}
		}
		if (!opt.quiet) {
			struct fg_sym_sample s = {
			    .comm = smp->s.comm,
			    .pid = smp->s.pid,
			    .tid = smp->s.tid,
			    .cpu = smp->s.cpu,
			    .time_ns = smp->s.time_ns,
			    .weight = smp->s.weight,
			    .event = "cpu-clock",
			    .uips = pcs,
			    .nuips = n,
			};
			if (fg_symbolizer_write(sym, stdout, &s) < 0)
				fg_die("write error");
		}
	}
	fprintf(stderr,
		"fgr-unwind: %" PRIu64 " stacks, %" PRIu64 " frames (%" PRIu64
		" by frame pointer);",
		st.stacks, st.frames, st.fp_frames);
	for (int e = 0; e < FG_UNWIND_END_COUNT; e++)
		if (st.ends[e])
			fprintf(stderr, " %s %" PRIu64 ",", fg_unwind_end_names[e], st.ends[e]);
	fprintf(stderr, " complete %" PRIu64 " (%.2f%%), with an unnamed frame %" PRIu64 "\n",
		complete, st.stacks ? 100.0 * (double)complete / (double)st.stacks : 0.0, unnamed);
	if (opt.compare) {
		fprintf(stderr,
			"fgr-unwind: libdw: %" PRIu64 " frames; table and libdw differ on %" PRIu64
			" of %" PRIu64 " stacks\n",
			dst.frames, differ, st.stacks);
		if (differ || !st.stacks)
			rc = 1;
	}
	if (opt.check >= 0 &&
	    (!st.stacks || 100.0 * (double)complete / (double)st.stacks < opt.check))
		rc = 1;
	return rc;
}

static void read_stream(const char *path, struct fg_symbolizer *sym)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	struct fg_rec_reader *r;
	struct fg_rec rec;
	int err;

	if (fd < 0)
		fg_die("cannot open '%s'", path);
	r = fg_rec_reader_new(fd, path);
	while ((err = fg_rec_next(r, &rec)) > 0) {
		if (rec.type == FG_REC_MAPPING) {
			const struct fg_rec_mapping *m = rec.mapping;
			struct proc *p = get_proc(m->pid);
			struct fg_sym_mapping sm = {
			    .pid = m->pid,
			    .time_ns = m->time_ns,
			    .start = m->start,
			    .end = m->end,
			    .pgoff = m->pgoff,
			    .dev_major = m->maj,
			    .dev_minor = m->min,
			    .inode = m->ino,
			    .build_id = m->build_id,
			    .build_id_len = m->build_id_len,
			    .path = rec.path,
			    .exec = m->prot & 4,
			};

			fg_symbolizer_mapping(sym, &sm);
			FG_ALLOC_GROW(p->maps, p->nmaps + 1, p->alloc);
			p->maps[p->nmaps++] = (struct map){
			    .start = m->start,
			    .end = m->end,
			    .pgoff = m->pgoff,
			    .maj = m->maj,
			    .min = m->min,
			    .ino = m->ino,
			    .build_id_len =
				m->build_id_len <= FG_REC_BUILD_ID_MAX ? m->build_id_len : 0,
			    .path = fg_xstrdup(rec.path),
			};
			memcpy(p->maps[p->nmaps - 1].build_id, m->build_id, FG_REC_BUILD_ID_MAX);
			p->sorted = false;
			p->last = NULL;
		} else if (rec.type == FG_REC_SAMPLE && rec.ustack) {
			struct sample s;

			s.s = *rec.sample;
			s.u = *rec.ustack;
			s.regs = fg_xmalloc(8 * (rec.ustack->nr_regs + 1));
			memcpy(s.regs, rec.ustack_regs, 8 * rec.ustack->nr_regs);
			s.data = fg_xmalloc(rec.ustack->size + 1);
			memcpy(s.data, rec.ustack_data, rec.ustack->size);
			FG_ALLOC_GROW(samples, nsamples + 1, samples_alloc);
			samples[nsamples++] = s;
		}
	}
	if (err < 0)
		fg_diex("'%s': %s", path, fg_rec_reader_error(r));
	fg_rec_reader_free(r);
	if (fd > 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"libdw", no_argument, NULL, 'L'},		 {"compare", no_argument, NULL, 'C'},
	    {"check", required_argument, NULL, 'K'},	 {"symfs", required_argument, NULL, 'S'},
	    {"proc-root", required_argument, NULL, 'P'}, {"bench", required_argument, NULL, 'B'},
	    {"only", required_argument, NULL, 'O'},	 {NULL, 0, NULL, 0},
	};
	struct fg_symbolizer *sym;
	int c, rc;

	while ((c = getopt_long(argc, argv, "q", longs, NULL)) != -1) {
		switch (c) {
		case 'B':
			opt.bench = atoi(optarg);
			break;
		case 'C':
			opt.compare = true;
			break;
		case 'K':
			opt.check = atof(optarg);
			break;
		case 'L':
			opt.libdw = true;
			break;
		case 'O':
			opt.only = optarg;
			break;
		case 'P':
			opt.proc_root = optarg;
			break;
		case 'S':
			opt.symfs = optarg;
			break;
		case 'q':
			opt.quiet = true;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr,
			"usage: fgr-unwind [--libdw | --compare] [--check PCT] [--symfs DIR] "
			"[--proc-root DIR] [--bench N [--only table|libdw]] [-q] FILE\n");
		return 2;
	}
	procs = fg_hmap_new(16);
	cache = fg_cfi_cache_new();
	struct fg_sym_opts so = {
	    .kallsyms = "/dev/null",
	    .proc_root = opt.proc_root,
	    .symfs = opt.symfs,
	};
	sym = fg_symbolizer_new(&so);
	read_stream(argv[optind], sym);
	if (opt.bench > 0) {
		bench();
		rc = 0;
	} else {
		rc = run(sym);
	}
	fg_symbolizer_free(sym);
	for (size_t i = 0; i < fg_hmap_count(procs); i++) {
		struct proc *p = fg_hmap_at(procs, i)->val.p;

		for (size_t k = 0; k < p->nmaps; k++)
			free(p->maps[k].path);
		free(p->maps);
		fg_unwind_dw_free(p->dw);
		free(p);
	}
	fg_hmap_free(procs);
	for (size_t i = 0; i < nsamples; i++) {
		free(samples[i].regs);
		free(samples[i].data);
	}
	free(samples);
	fg_cfi_cache_free(cache);
	return rc ? rc : fg_close_stdout();
}
