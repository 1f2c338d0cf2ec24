// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/cfi_load: the tables of this very process, through ops that keep the
 * "maps" in memory, looked up as the BPF program looks them up (a mapping by
 * binary search, the row by fg_cfi_find_row): the same rules as lib/cfi
 * gives for the file; tables shared across processes, freed with the last
 * one, and each limit counted.  And through the real BPF maps (as root): a
 * slot's loads told apart by their gen, a rewritten file's by their key.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fg/cfi_load.h"
#include "fg/cfi_worker.h"
#include "fg/record.h"
#include "unit.h"

#define SLOTS 64
#define PROCS 16

struct fake {
	struct fg_cfi_row *rows[SLOTS];
	struct fg_cfi_rule *rules[SLOTS];
	uint32_t nrows[SLOTS];
	uint32_t pids[PROCS];
	struct fg_cfi_proc procs[PROCS];
	int nprocs;
	int loads, unloads;
	int procs_sent; /* set_proc calls with a process (read across threads: atomic) */
	/* cfi_inodes */
	struct fg_cfi_inode_key ikeys[SLOTS];
	struct fg_cfi_inode inodes[SLOTS];
	int ninodes;
};

static int fake_load(void *arg, uint32_t slot, const struct fg_cfi *c)
{
	struct fake *f = arg;

	if (slot >= SLOTS || f->rows[slot])
		return -EINVAL;
	f->rows[slot] = malloc(c->nrows * sizeof(*c->rows));
	f->rules[slot] = malloc(c->nrules * sizeof(*c->rules));
	memcpy(f->rows[slot], c->rows, c->nrows * sizeof(*c->rows));
	memcpy(f->rules[slot], c->rules, c->nrules * sizeof(*c->rules));
	f->nrows[slot] = c->nrows;
	f->loads++;
	return 0;
}

static void fake_unload(void *arg, uint32_t slot)
{
	struct fake *f = arg;

	free(f->rows[slot]);
	free(f->rules[slot]);
	f->rows[slot] = NULL;
	f->rules[slot] = NULL;
	f->unloads++;
}

static int fake_set_proc(void *arg, uint32_t pid, const struct fg_cfi_proc *p)
{
	struct fake *f = arg;
	int i;

	for (i = 0; i < f->nprocs && f->pids[i] != pid; i++)
		;
	if (!p) {
		if (i < f->nprocs) {
			f->pids[i] = f->pids[--f->nprocs];
			f->procs[i] = f->procs[f->nprocs];
		}
		return 0;
	}
	if (i == f->nprocs) {
		if (f->nprocs == PROCS)
			return -E2BIG;
		f->nprocs++;
	}
	f->pids[i] = pid;
	f->procs[i] = *p;
	__atomic_add_fetch(&f->procs_sent, 1, __ATOMIC_RELEASE);
	return 0;
}

static int fake_set_file(void *arg, const struct fg_cfi_inode_key *k, const struct fg_cfi_inode *v)
{
	struct fake *f = arg;
	int i;

	for (i = 0; i < f->ninodes && memcmp(&f->ikeys[i], k, sizeof(*k)) != 0; i++)
		;
	if (!v) {
		if (i == f->ninodes)
			return -ENOENT;
		f->ninodes--;
		f->ikeys[i] = f->ikeys[f->ninodes];
		f->inodes[i] = f->inodes[f->ninodes];
		return 0;
	}
	if (i == f->ninodes) {
		if (f->ninodes == SLOTS)
			return -E2BIG;
		f->ninodes++;
	}
	f->ikeys[i] = *k;
	f->inodes[i] = *v;
	return 0;
}

/*
 * As the BPF program finds a mapping it was not given: pc's line of
 * /proc/self/maps (the kernel's mapping), its file's entry in cfi_inodes,
 * and sub computed from the entry.  false when the program would fall back.
 */
static bool fake_vma(struct fake *f, uint64_t pc, uint32_t *table, uint64_t *sub)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi, off, ino;
	unsigned maj, min;
	char line[512], path[512];
	bool found = false;
	struct stat st;

	while (maps && !found && fgets(line, sizeof(line), maps)) {
		struct fg_cfi_inode_key k = {0};

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %511s", &lo, &hi, &off, &maj, &min,
			   &ino, path) != 7 ||
		    pc < lo || pc >= hi)
			continue;
		k.ino = ino;
		k.dev = maj << 20 | min;
		/* and the change time, which the program reads from the inode */
		if (stat(path, &st) == 0 && st.st_ino == ino) {
			k.ctime_sec = st.st_ctim.tv_sec;
			k.ctime_nsec = (uint32_t)st.st_ctim.tv_nsec;
		}
		for (int i = 0; i < f->ninodes; i++) {
			const struct fg_cfi_inode *v = &f->inodes[i];

			if (memcmp(&f->ikeys[i], &k, sizeof(k)) != 0)
				continue;
			for (uint32_t j = 0; j < v->nloads && j < FG_CFI_INODE_LOADS; j++)
				if (off >= v->loads[j].offset &&
				    off - v->loads[j].offset < v->loads[j].filesz) {
					*sub = lo - (off - v->loads[j].offset + v->loads[j].vaddr) +
					       v->base;
					*table = v->table;
					found = true;
					break;
				}
		}
		break;
	}
	if (maps)
		fclose(maps);
	return found;
}

static const struct fg_cfi_proc *fake_proc(struct fake *f, uint32_t pid)
{
	for (int i = 0; i < f->nprocs; i++)
		if (f->pids[i] == pid)
			return &f->procs[i];
	return NULL;
}

/* As the BPF program does: the rule for pc in process pid; NULL when it would fall back. */
static const struct fg_cfi_rule *fake_lookup(struct fake *f, uint32_t pid, uint64_t pc,
					     uint32_t *table)
{
	const struct fg_cfi_proc *p = fake_proc(f, pid);
	uint32_t lo = 0, hi;
	long i;

	if (!p)
		return NULL;
	for (hi = p->n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[lo - 1].end)
		return NULL;
	*table = p->maps[lo - 1].table;
	if (*table >= SLOTS)
		return NULL;
	i = fg_cfi_find_row(f->rows[*table], f->nrows[*table],
			    (uint32_t)(pc - p->maps[lo - 1].sub));
	if (i < 0)
		return NULL;
	return &f->rules[*table][f->rows[*table][i].rule];
}

static struct fg_cfi_loader *new_loader(struct fake *f, const struct fg_cfi_load_limits *lim)
{
	struct fg_cfi_load_ops ops = {fake_load, fake_unload, fake_set_proc, NULL,
				      NULL,	 f,	      fake_set_file};

	memset(f, 0, sizeof(*f));
	return fg_cfi_loader_new("/proc", lim, &ops);
}

__attribute__((noinline)) static int here(void)
{
	return 0;
}

TEST(own_process_rules_match_the_files)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	uint32_t pid = (uint32_t)getpid(), table = 0;
	const struct fg_cfi_rule *r;
	struct fg_cfi_load_stats st;
	struct fg_cfi *c;

	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == 1);
	CHECK(st.tables >= 2); /* this program and libc at least */
	CHECK(st.bytes > 0 && st.bytes == st.bytes_peak);
	/* the rule for a function of ours, and for libc's memcpy, as lib/cfi gives it */
	r = fake_lookup(f, pid, (uint64_t)(uintptr_t)here, &table);
	CHECK(r != NULL);
	c = fg_cfi_open_fd(open("/proc/self/exe", O_RDONLY | O_CLOEXEC), -1);
	CHECK(c != NULL);
	if (r && c) {
		/* the file address of here(): through the mapping, as fg-sym finds it */
		const struct fg_cfi_rule *want = NULL;
		FILE *maps = fopen("/proc/self/maps", "r");
		char line[512];
		unsigned long long lo, hi, off;

		while (maps && fgets(line, sizeof(line), maps))
			if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 &&
			    (uintptr_t)here >= lo && (uintptr_t)here < hi) {
				uint64_t v0;

				CHECK(fg_cfi_offset_to_vaddr(c, off, &v0));
				want = fg_cfi_lookup(c, (uintptr_t)here - lo + v0);
			}
		if (maps)
			fclose(maps);
		CHECK(want && memcmp(want, r, sizeof(*r)) == 0);
	}
	fg_cfi_free(c);
	r = fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table);
	CHECK(r != NULL && r->kind == FG_CFI_NORMAL);
	/* the vdso has its table too */
	r = fake_lookup(f, pid, (uint64_t)(uintptr_t)getauxval(AT_SYSINFO_EHDR) + 0x800, &table);
	(void)r; /* a gap, maybe; but the mapping holds a table, not a fallback */
	{
		const struct fg_cfi_proc *p = fake_proc(f, pid);
		int pending = 0;

		for (uint32_t i = 0; p && i < p->n; i++)
			pending += p->maps[i].table == FG_CFI_TABLE_PENDING;
		CHECK(p && pending == 0);
		/* every file's table by its identity too: the same table, the same sub */
		for (uint32_t i = 0; p && i < p->n; i++) {
			uint64_t sub = 0;

			table = FG_CFI_TABLE_PENDING;
			if (p->maps[i].table == FG_CFI_TABLE_FP)
				continue;
			if (p->maps[i].start == getauxval(AT_SYSINFO_EHDR)) {
				/* the vdso has no file: the program falls back */
				CHECK(!fake_vma(f, p->maps[i].start, &table, &sub));
				continue;
			}
			CHECK(fake_vma(f, p->maps[i].start, &table, &sub));
			CHECK(table == p->maps[i].table && sub == p->maps[i].sub);
		}
	}
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	CHECK(f->ninodes == 0); /* withdrawn with their tables */
	free(f);
}

TEST(shared_by_fork_freed_with_the_last)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	uint32_t pid = (uint32_t)getpid(), child = 4000000, table;
	struct fg_rec_task t = {child, child, pid, pid, 1};
	struct fg_rec_comm cm = {child, child, 2, FG_COMM_F_EXEC, 0, "x"};
	struct fg_cfi_load_stats st0, st;

	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st0);
	/* a fork: the child maps the same files, no table loaded again */
	fg_cfi_loader_record(l, FG_REC_FORK, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == 2 && st.loaded == st0.loaded && st.bytes == st0.bytes);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	/* the child execs: its mappings are gone, the parent's stay */
	fg_cfi_loader_record(l, FG_REC_COMM, &cm, sizeof(cm));
	fg_cfi_loader_sync(l);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) == NULL);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	/* both exit: every table freed, nothing left in the maps */
	fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	t.pid = t.tid = pid;
	fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == 0 && st.tables == 0 && st.bytes == 0 && st.freed == st0.loaded);
	CHECK(f->nprocs == 0 && f->loads == f->unloads);
	/* a child whose exit record was lost (there is no pid 4000000): swept */
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	t.pid = t.tid = child;
	fg_cfi_loader_record(l, FG_REC_FORK, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	/* the first sweep finds it missing, the second drops it */
	CHECK(fg_cfi_loader_sweep(l) == 0);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	CHECK(fg_cfi_loader_sweep(l) == 1);
	fg_cfi_loader_sync(l);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) == NULL);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.swept == 1 && st.procs == 1);
	fg_cfi_loader_free(l);
	free(f);
}

/* Many files (the whole machine's, as root): the files' index grows under them; all freed. */
TEST(every_process_then_none)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	struct fg_cfi_load_stats st;
	uint32_t *pids = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	lim.max_files = SLOTS;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan_all(l) >= 1);
	fg_cfi_loader_free(l); /* every table freed with its processes */
	CHECK(f->loads >= 2 && f->loads == f->unloads);
	/* the same, the processes exiting one by one */
	l = new_loader(f, &lim);
	d = opendir("/proc");
	while (d && (de = readdir(d)))
		if (atoi(de->d_name) > 0) {
			pids = realloc(pids, (n + 1) * sizeof(*pids));
			pids[n++] = (uint32_t)atoi(de->d_name);
		}
	if (d)
		closedir(d);
	for (size_t i = 0; i < n; i++)
		fg_cfi_loader_scan(l, pids[i]);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables >= 2 && st.procs >= 1);
	for (size_t i = 0; i < n; i++) {
		struct fg_rec_task t = {pids[i], pids[i], 0, 0, 1};

		fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	}
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0 && st.bytes == 0 && st.procs == 0 && f->nprocs == 0);
	CHECK(f->loads == f->unloads);
	fg_cfi_loader_free(l);
	free(pids);
	free(f);
}

TEST(limits_are_counted)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	struct fg_cfi_load_stats st;
	struct fg_buf text = FG_BUF_INIT;
	uint64_t bpf[FG_CFI_STAT_MAX] = {0};

	/* one table at most: the others are counted, and their mappings fall back */
	lim.max_files = 1;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, (uint32_t)getpid()) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 1 && st.over_files >= 1);
	fg_cfi_load_report(&text, &st, &lim, bpf, 0, 0, 0);
	CHECK(strstr(text.data, "over the tables at once, 1 (raise with --cfi-max-files)") != NULL);
	CHECK(strstr(text.data, " ms at start\n") != NULL);
	/* the whole start-up, when known */
	fg_buf_reset(&text);
	fg_cfi_load_report(&text, &st, &lim, bpf, 0, 35000000, 412999999);
	CHECK(strstr(text.data, " 35 ms at start (sampling began 412 ms after fg-sample did)\n") !=
	      NULL);
	fg_cfi_loader_free(l);
	/* rows: no table of this process has fewer than 2 */
	lim = (struct fg_cfi_load_limits)FG_CFI_LOAD_LIMITS_DEFAULT;
	lim.max_rows = 1;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, (uint32_t)getpid()) == 0);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0 && st.over_rows >= 2);
	fg_buf_reset(&text);
	fg_cfi_load_report(&text, &st, &lim, bpf, 0, 0, 0);
	CHECK(strstr(text.data, "over the rows of one table, 1 (raise with --cfi-max-rows)") !=
	      NULL);
	fg_cfi_loader_free(l);
	/* bytes */
	lim = (struct fg_cfi_load_limits)FG_CFI_LOAD_LIMITS_DEFAULT;
	lim.max_bytes = 64;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, (uint32_t)getpid()) == 0);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0 && st.over_bytes >= 2);
	fg_cfi_loader_free(l);
	fg_buf_release(&text);
	free(f);
}

TEST(bad_records_are_ignored)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	char buf[sizeof(struct fg_rec_mapping) + 8];
	struct fg_cfi_load_stats st;

	/* a path without its NUL, short records: nothing happens */
	memset(buf, 'a', sizeof(buf));
	fg_cfi_loader_record(l, FG_REC_MAPPING, buf, sizeof(buf));
	fg_cfi_loader_record(l, FG_REC_MAPPING, buf, 3);
	fg_cfi_loader_record(l, FG_REC_EXIT, buf, 3);
	fg_cfi_loader_record(l, FG_REC_FORK, buf, 3);
	fg_cfi_loader_record(l, FG_REC_COMM, buf, 3);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == 0 && st.tables == 0);
	CHECK(fg_cfi_loader_scan(l, 0x7ffffff0) < 0);
	fg_cfi_loader_free(l);
	free(f);
}

/* Kept after the last process: the next process mapping the files finds them, no parse. */
TEST(kept_tables_are_reused_then_expire)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	uint32_t pid = (uint32_t)getpid(), table;
	struct fg_rec_task t = {pid, pid, 0, 0, 1};
	struct fg_cfi_load_stats st0, st;

	lim.keep_ns = 3600ull * 1000000000u;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st0);
	CHECK(st0.tables >= 2 && st0.kept == 0);
	/* the process exits: its tables stay loaded, kept */
	fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == 0 && st.freed == 0 && st.kept == st0.tables && st.bytes == st0.bytes);
	CHECK(f->unloads == 0 && f->nprocs == 0);
	/* a process maps the same files (this one, read again) */
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.loaded == st0.loaded && st.kept == 0 && st.reused == st0.tables);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	/* dropped at the end: every table loaded is freed, the counts add up */
	fg_cfi_loader_drop_kept(l);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0 && st.kept == 0 && st.bytes == 0 && st.freed == st.loaded);
	CHECK(f->loads == f->unloads);
	fg_cfi_loader_free(l);
	/* kept 1 ns: gone at the next sync */
	lim.keep_ns = 1;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_record(l, FG_REC_EXIT, &t, sizeof(t));
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0 && st.kept == 0 && st.freed == st.loaded && f->loads == f->unloads);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

/*
 * A kept table belongs to its file's content: the same file rewritten in
 * place (device and inode unchanged) gets a table of its own, under a
 * cfi_inodes key of its own, and the old one is neither reused nor lost.
 */
TEST(rewritten_file_gets_a_new_table)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	uint32_t pid = (uint32_t)getpid();
	struct fg_cfi_load_stats st0, st1, st2, st3;
	char path[] = "/tmp/fg-test-cfi-load.XXXXXX";
	int fd = mkstemp(path), self = open("/proc/self/exe", O_RDONLY);
	char buf[65536];
	ssize_t n;
	off_t size = 0;
	void *m;
	int n0;

	CHECK(fd >= 0 && self >= 0);
	while ((n = read(self, buf, sizeof(buf))) > 0)
		CHECK(write(fd, buf, (size_t)n) == n);
	close(self);
	size = lseek(fd, 0, SEEK_END);
	lim.keep_ns = 3600ull * 1000000000u;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st0);
	/* the copy mapped as code: its table is loaded, and published by its inode */
	m = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st1);
	CHECK(st1.loaded == st0.loaded + 1 && st1.tables == st0.tables + 1);
	n0 = f->ninodes;
	munmap(m, (size_t)size);
	/* its last mapping gone (the process' mappings read again): kept */
	CHECK(fg_cfi_loader_rescan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st2);
	CHECK(st2.kept == 1 && st2.tables == st1.tables && f->ninodes == n0);
	/* rewritten in place (a coarse clock: a tick apart), and mapped again */
	nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	CHECK(pread(fd, buf, 1, 0) == 1 && pwrite(fd, buf, 1, 0) == 1); /* the same byte */
	m = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(fg_cfi_loader_rescan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st3);
	/* a new table, not the kept one; both in cfi_inodes, each under its own key */
	CHECK(st3.loaded == st2.loaded + 1 && st3.reused == st2.reused);
	CHECK(st3.tables == st2.tables + 1 && st3.kept == 1 && f->ninodes == n0 + 1);
	munmap(m, (size_t)size);
	close(fd);
	unlink(path);
	fg_cfi_loader_drop_kept(l);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads && f->ninodes == 0);
	free(f);
}

/* A copy of this program in a file of its own (unlinked by the caller), its size in *size. */
static int copy_of_self(char *path, off_t *size)
{
	int fd = mkstemp(path), self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	char buf[65536];
	ssize_t n;

	while (fd >= 0 && self >= 0 && (n = read(self, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	if (self >= 0)
		close(self);
	*size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	return fd;
}

/* A copy of this program, mapped as code. */
struct mapped {
	char path[64];
	off_t size;
	int fd;
	void *m;
};

/* c, made from the mkstemp() template tmpl: 0, or -1 (c->m MAP_FAILED). */
static int mapped_new(struct mapped *c, const char *tmpl)
{
	snprintf(c->path, sizeof(c->path), "%s", tmpl);
	c->fd = copy_of_self(c->path, &c->size);
	c->m = c->fd >= 0
		   ? mmap(NULL, (size_t)c->size, PROT_READ | PROT_EXEC, MAP_PRIVATE, c->fd, 0)
		   : MAP_FAILED;
	return c->m == MAP_FAILED ? -1 : 0;
}

static void mapped_free(struct mapped *c)
{
	if (c->m != MAP_FAILED)
		munmap(c->m, (size_t)c->size);
	if (c->fd >= 0)
		close(c->fd);
	unlink(c->path);
}

/* The record of p, `size` bytes of `path` mapped as code at offset 0 by process pid, at time t. */
static void map_record(struct fg_cfi_loader *l, uint32_t pid, const void *p, off_t size,
		       const char *path, uint64_t t)
{
	struct fg_rec_mapping m = {.pid = pid, .tid = pid, .time_ns = t, .prot = 5};
	char buf[sizeof(m) + 64] = {0};
	size_t n = strlen(path) + 1;
	struct stat st;

	/* (opened through /proc/PID/root by its device and inode, map_files being root's) */
	if (stat(path, &st) == 0) {
		m.ino = st.st_ino;
		m.maj = major(st.st_dev);
		m.min = minor(st.st_dev);
	}
	m.start = (uintptr_t)p;
	m.end = m.start + (((uint64_t)size + 4095) & ~4095ull);
	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), path, n < 64 ? n : 64);
	fg_cfi_loader_record(l, FG_REC_MAPPING, buf, sizeof(m) + 64);
}

/*
 * Anonymous code (JIT), "//anon" in perf's mmap events: walked by frame
 * pointers, not waiting for a table that never comes (every sample of it
 * fell back to a snapshot).
 */
TEST(anonymous_code_is_walked_by_frame_pointers)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	uint32_t pid = (uint32_t)getpid();
	const struct fg_cfi_proc *p;
	struct fg_cfi_load_stats st;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	CHECK(m != MAP_FAILED);
	map_record(l, pid, m, 4096, "//anon", 1000);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 1 && p->maps[0].table == FG_CFI_TABLE_FP);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.unreadable == 0 && st.tables == 0);
	munmap(m, 4096);
	fg_cfi_loader_free(l);
	free(f);
}

/*
 * The program takes a process' mappings for its own only until it maps code
 * over them: each version of them is as of the newest record it is from (a
 * mapping, the fork that copied them, the exec that emptied them), or of
 * when /proc was read.
 */
TEST(mappings_are_as_of_their_newest_record)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	uint32_t pid = (uint32_t)getpid(), child = 4000004;
	struct fg_rec_task fork = {child, child, pid, pid, 2000};
	struct fg_rec_comm exec = {child, child, 3000, FG_COMM_F_EXEC, 0, "x"};
	char path[] = "/tmp/fg-test-cfi-since.XXXXXX";
	const struct fg_cfi_proc *p;
	struct timespec t0;
	off_t size;
	int fd = copy_of_self(path, &size);
	void *m = fd >= 0 ? mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)
			  : MAP_FAILED;

	CHECK(m != MAP_FAILED);
	map_record(l, pid, m, size, path, 1000);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 1 && p->maps[0].table < SLOTS && p->since == 1000);
	/* a record older than those applied (the same mapping) does not make them older */
	map_record(l, pid, m, size, path, 500);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 1 && p->since == 1000);
	/* a fork: the parent's, as they were at the fork */
	fg_cfi_loader_record(l, FG_REC_FORK, &fork, sizeof(fork));
	fg_cfi_loader_sync(l);
	p = fake_proc(f, child);
	CHECK(p && p->n == 1 && p->since == 2000);
	/* the child's exec: none, from the exec on */
	fg_cfi_loader_record(l, FG_REC_COMM, &exec, sizeof(exec));
	fg_cfi_loader_sync(l);
	p = fake_proc(f, child);
	CHECK(p && p->n == 0 && p->since == 3000);
	/* read from /proc: as they were when read (the clock of bpf_ktime_get_ns()) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(fg_cfi_loader_rescan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n > 1 &&
	      p->since >= (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec);
	munmap(m, (size_t)size);
	close(fd);
	unlink(path);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

/* The table of process pid's mapping at `at` in the maps (FG_CFI_TABLE_PENDING: none). */
static uint32_t table_at(struct fake *f, uint32_t pid, const void *at)
{
	const struct fg_cfi_proc *p = fake_proc(f, pid);

	for (uint32_t i = 0; p && i < p->n && i < FG_CFI_PROC_MAPS; i++)
		if (p->maps[i].start == (uintptr_t)at)
			return p->maps[i].table;
	return FG_CFI_TABLE_PENDING;
}

/*
 * A table left out for lack of room (one slot, taken) is built and loaded at
 * the next mapping of its file once there is room: a process read from /proc
 * when fg-sample is asked can come before the exit records that free it.
 */
TEST(a_table_left_out_for_room_is_loaded_when_room_comes)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	uint32_t pid = (uint32_t)getpid();
	struct fg_cfi_load_stats st;
	struct mapped c1, c2;

	CHECK(mapped_new(&c1, "/tmp/fg-test-cfi-room1.XXXXXX") == 0);
	CHECK(mapped_new(&c2, "/tmp/fg-test-cfi-room2.XXXXXX") == 0);
	lim.max_files = 1;
	lim.keep_ns = 0;
	l = new_loader(f, &lim);
	map_record(l, pid, c1.m, c1.size, c1.path, 1000);
	map_record(l, pid, c2.m, c2.size, c2.path, 1001);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 1 && st.over_files == 1);
	CHECK(table_at(f, pid, c1.m) < SLOTS && table_at(f, pid, c2.m) == FG_CFI_TABLE_PENDING);
	/* the first file's mapping gone (its table freed, the slot free after the sync) */
	map_record(l, pid, c1.m, c1.size, "//anon", 1002);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 0);
	/* the second file mapped again: its table built and loaded now (no read of PROC) */
	map_record(l, pid, c2.m, c2.size, c2.path, 1003);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 1 && st.over_files == 1 && st.room_reads == 0);
	CHECK(table_at(f, pid, c1.m) == FG_CFI_TABLE_FP && table_at(f, pid, c2.m) < SLOTS);
	mapped_free(&c1);
	mapped_free(&c2);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

/* PROC/PID of a fake /proc: maps holding c's mapping only, map_files this process'.  0 or -1. */
static int fake_proc_maps(const char *proc, uint32_t pid, const struct mapped *c)
{
	char name[512];
	struct stat st;
	FILE *out;

	snprintf(name, sizeof(name), "%s/%u", proc, pid);
	if (stat(c->path, &st) < 0 || mkdir(name, 0700) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s/%u/map_files", proc, pid);
	if (symlink("/proc/self/map_files", name) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s/%u/maps", proc, pid);
	out = fopen(name, "w");
	if (!out)
		return -1;
	fprintf(out, "%lx-%lx r-xp 00000000 %02x:%02x %lu %s\n", (unsigned long)(uintptr_t)c->m,
		(unsigned long)((uintptr_t)c->m + (((uint64_t)c->size + 4095) & ~4095ull)),
		major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, c->path);
	return fclose(out);
}

/*
 * A process whose table was left out for room (one slot, another's) is read
 * again from PROC once the slot is free, though no record of it comes: the
 * exit that frees the slot can be the last record of the run.
 */
static void wait_for_room(uint64_t keep_ns)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_load_ops ops = {fake_load, fake_unload, fake_set_proc, NULL,
				      NULL,	 f,	      fake_set_file};
	struct fg_cfi_loader *l;
	uint32_t a = 4000011, b = 4000012;
	struct fg_rec_task exit_a = {a, a, 1, 1, 1002};
	char proc[] = "/tmp/fg-test-cfi-proc.XXXXXX", name[512];
	struct fg_cfi_load_stats st;
	struct mapped c1, c2;

	CHECK(mapped_new(&c1, "/tmp/fg-test-cfi-wait1.XXXXXX") == 0);
	CHECK(mapped_new(&c2, "/tmp/fg-test-cfi-wait2.XXXXXX") == 0 && mkdtemp(proc));
	CHECK(fake_proc_maps(proc, a, &c1) == 0 && fake_proc_maps(proc, b, &c2) == 0);
	memset(f, 0, sizeof(*f));
	lim.max_files = 1;
	lim.keep_ns = keep_ns;
	l = fg_cfi_loader_new(proc, &lim, &ops);
	map_record(l, a, c1.m, c1.size, c1.path, 1000);
	map_record(l, b, c2.m, c2.size, c2.path, 1001);
	CHECK(!fg_cfi_loader_sync(l));
	CHECK(!fg_cfi_loader_sync(l));
	fg_cfi_loader_stats(l, &st);
	/* no room yet: b waits, and is not read again */
	CHECK(st.tables == 1 && st.over_files == 1 && st.room_reads == 0);
	CHECK(table_at(f, a, c1.m) < SLOTS && table_at(f, b, c2.m) == FG_CFI_TABLE_PENDING);
	/*
	 * a exits: its slot free after the sync, which says so (b waits), b read
	 * again at the next.  With a's table kept for reuse, b is read at once,
	 * which frees it, and again when its slot is free.
	 */
	fg_cfi_loader_record(l, FG_REC_EXIT, &exit_a, sizeof(exit_a));
	CHECK(fg_cfi_loader_sync(l));
	CHECK(!fg_cfi_loader_sync(l));
	fg_cfi_loader_stats(l, &st);
	CHECK(st.tables == 1 && st.room_reads == 1 + !!keep_ns);
	CHECK(table_at(f, b, c2.m) < SLOTS);
	/* and no more */
	CHECK(!fg_cfi_loader_sync(l));
	fg_cfi_loader_stats(l, &st);
	CHECK(st.room_reads == 1 + !!keep_ns);
	for (uint32_t pid = a; pid <= b; pid++) {
		snprintf(name, sizeof(name), "%s/%u/maps", proc, pid);
		unlink(name);
		snprintf(name, sizeof(name), "%s/%u/map_files", proc, pid);
		unlink(name);
		snprintf(name, sizeof(name), "%s/%u", proc, pid);
		rmdir(name);
	}
	rmdir(proc);
	mapped_free(&c1);
	mapped_free(&c2);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

TEST(a_process_waiting_for_room_is_read_again_once_a_slot_is_freed)
{
	wait_for_room(0);
}

/* The same when the table of the process gone is kept for reuse: room too. */
TEST(a_process_waiting_for_room_is_read_again_once_a_table_is_kept)
{
	wait_for_room(60ull * 1000000000u);
}

/*
 * A new process read from /proc at its first samples (fg-sample asks as its
 * walks fall back), before the records of its fork and exec are handed over:
 * those older records leave what was read, the newer ones apply.
 */
TEST(a_read_outlives_older_fork_exec_and_mapping_records)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l = new_loader(f, &lim);
	uint32_t pid = (uint32_t)getpid(), parent = 4000006;
	struct fg_rec_task fork = {pid, pid, parent, parent, 2000};
	struct fg_rec_comm exec = {pid, pid, 3000, FG_COMM_F_EXEC, 0, "x"};
	const struct fg_cfi_proc *p;
	struct mapped c;
	uint64_t since;
	uint32_t n;

	CHECK(mapped_new(&c, "/tmp/fg-test-cfi-asked.XXXXXX") == 0);
	map_record(l, parent, c.m, c.size, c.path, 1000);
	CHECK(fg_cfi_loader_rescan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n > 1 && p->since > 3000);
	since = p->since;
	/* its fork, exec and a mapping, from before the read: what was read stays */
	n = p->n;
	fg_cfi_loader_record(l, FG_REC_FORK, &fork, sizeof(fork));
	fg_cfi_loader_record(l, FG_REC_COMM, &exec, sizeof(exec));
	map_record(l, pid, (void *)0x10000, 4096, c.path, 3500);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == n && p->since == since);
	/* an exec after the read: none from then on */
	exec.time_ns = since + 1;
	fg_cfi_loader_record(l, FG_REC_COMM, &exec, sizeof(exec));
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 0 && p->since == since + 1);
	/* and a fork after that (the pid used again): the parent's */
	fork.time_ns = since + 2;
	fg_cfi_loader_record(l, FG_REC_FORK, &fork, sizeof(fork));
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 1 && p->since == since + 2);
	/* a mapping after that: added */
	map_record(l, pid, (void *)0x10000, 4096, c.path, since + 3);
	fg_cfi_loader_sync(l);
	p = fake_proc(f, pid);
	CHECK(p && p->n == 2 && p->since == since + 3);
	mapped_free(&c);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

/* The BPF program's maps of tables, made as fg-sample's skeleton makes them: 0 or -errno. */
static int bpf_maps_new(struct fg_cfi_bpf_maps *m, uint32_t slots)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	int rows =
	    bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rows", 4, sizeof(struct fg_cfi_row), 1, &inner);
	int rules =
	    bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4, sizeof(struct fg_cfi_rule), 1, &inner);
	int err = rows < 0 || rules < 0 ? -errno : 0;

	memset(m, 0, sizeof(*m));
	outer.inner_map_fd = rows;
	m->rows = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_cfi_rows", 4, 4, slots, &outer);
	outer.inner_map_fd = rules;
	m->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_cfi_rules", 4, 4, slots, &outer);
	m->files = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_cfi_files", 4, sizeof(struct fg_cfi_file),
				  slots, NULL);
	m->procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_cfi_procs", 4, sizeof(struct fg_cfi_proc),
				  4, &hash);
	m->inodes =
	    bpf_map_create(BPF_MAP_TYPE_HASH, "t_cfi_inodes", sizeof(struct fg_cfi_inode_key),
			   sizeof(struct fg_cfi_inode), slots, &hash);
	if (!err && (m->rows < 0 || m->rules < 0 || m->files < 0 || m->procs < 0 || m->inodes < 0))
		err = -errno;
	if (rows >= 0)
		close(rows);
	if (rules >= 0)
		close(rules);
	return err;
}

static void bpf_maps_close(struct fg_cfi_bpf_maps *m)
{
	int fds[] = {m->rows, m->rules, m->files, m->procs, m->inodes};

	fg_cfi_bpf_maps_release(m);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The file open on fd as the program finds it in cfi_inodes (device, inode, change time). */
static struct fg_cfi_inode_key inode_key(int fd)
{
	struct fg_cfi_inode_key k = {0};
	struct stat st;

	if (fstat(fd, &st) == 0) {
		k.ino = st.st_ino;
		k.dev = major(st.st_dev) << 20 | minor(st.st_dev);
		k.ctime_sec = st.st_ctim.tv_sec;
		k.ctime_nsec = (uint32_t)st.st_ctim.tv_nsec;
	}
	return k;
}

/*
 * Through the BPF maps themselves, one slot: a table loaded in it, freed,
 * and another loaded in it has another gen (the program's kept rows tell
 * them apart by it); a file rewritten in place is another key in
 * cfi_inodes, the old one withdrawn; a slot freed is given to another
 * table only after the sync that empties it.  Every write of the process'
 * entry, and its delete, bumps cfi_procs_ver (the walks keep what they read
 * of the entry while it stays the same).
 */
/* The entries of the table in array of maps `outer` at `slot` (0: none). */
static uint32_t table_entries(int outer, uint32_t slot)
{
	struct bpf_map_info info = {0};
	uint32_t id, len = sizeof(info);
	int fd;

	if (bpf_map_lookup_elem(outer, &slot, &id) < 0 || (fd = bpf_map_get_fd_by_id(id)) < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

TEST(slot_freed_and_reused_gets_a_new_gen)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fg_cfi_bpf_maps bm;
	struct fg_cfi_load_ops ops;
	struct fg_cfi_loader *l;
	uint32_t pid = (uint32_t)getpid(), slot = 0;
	struct fg_rec_task exit_ = {pid, pid, 0, 0, 1};
	struct fg_cfi_inode_key k1, k2;
	struct fg_cfi_inode v;
	struct fg_cfi_file file, none = {0, 0, 0, 0};
	struct fg_cfi_proc *proc = calloc(1, sizeof(*proc));
	struct fg_cfi_load_stats st;
	char path[] = "/tmp/fg-test-cfi-gen.XXXXXX", c;
	uint32_t g1;
	uint64_t ver = 0, v0;
	off_t size;
	void *m;
	int fd, err = bpf_maps_new(&bm, 1);

	if (err) {
		/* (no BPF: not root) */
		printf("# cannot create BPF maps: %s%s\n", strerror(-err),
		       getenv("FG_TEST_STRICT") ? "" : "; skipped");
		bpf_maps_close(&bm);
		free(proc);
		CHECK(!getenv("FG_TEST_STRICT"));
		return;
	}
	bm.procs_ver = &ver;
	fg_cfi_load_bpf_ops(&bm, &ops);
	lim.max_files = 1;
	l = fg_cfi_loader_new("/proc", &lim, &ops);
	fd = copy_of_self(path, &size);
	m = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	map_record(l, pid, m, size, path, 1);
	fg_cfi_loader_sync(l);
	CHECK(ver == 1 && bpf_map_lookup_elem(bm.procs, &pid, proc) == 0);
	CHECK(bpf_map_lookup_elem(bm.files, &slot, &file) == 0);
	g1 = file.gen;
	CHECK(g1 != 0 && file.nrows > 1);
	CHECK(table_entries(bm.rows, slot) == file.nrows && table_entries(bm.rules, slot) > 1);
	k1 = inode_key(fd);
	CHECK(bpf_map_lookup_elem(bm.inodes, &k1, &v) == 0 && v.table == slot);
	/* the process gone: the slot emptied (no table: gen 0), the file's key withdrawn */
	fg_cfi_loader_record(l, FG_REC_EXIT, &exit_, sizeof(exit_));
	fg_cfi_loader_sync(l);
	CHECK(ver == 2 && bpf_map_lookup_elem(bm.procs, &pid, proc) < 0 && errno == ENOENT);
	CHECK(bpf_map_lookup_elem(bm.files, &slot, &file) == 0);
	CHECK(memcmp(&file, &none, sizeof(file)) == 0);
	CHECK(bpf_map_lookup_elem(bm.inodes, &k1, &v) < 0 && errno == ENOENT);
	/* its rows and rules replaced by empty maps (in one batch each), their memory freed */
	CHECK(table_entries(bm.rows, slot) == 1 && table_entries(bm.rules, slot) == 1);
	/* the file rewritten in place (a coarse clock: a tick apart), mapped again */
	munmap(m, (size_t)size);
	nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	CHECK(pread(fd, &c, 1, 0) == 1 && pwrite(fd, &c, 1, 0) == 1);
	m = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	v0 = ver;
	map_record(l, pid, m, size, path, 2);
	fg_cfi_loader_sync(l);
	CHECK(ver > v0);
	/* the one slot again, another load of it: another gen; the file under its new key only */
	CHECK(bpf_map_lookup_elem(bm.files, &slot, &file) == 0);
	CHECK(file.gen != 0 && file.gen != g1 && file.nrows > 1);
	k2 = inode_key(fd);
	CHECK(memcmp(&k1, &k2, sizeof(k1)) != 0);
	CHECK(bpf_map_lookup_elem(bm.inodes, &k2, &v) == 0 && v.table == slot);
	CHECK(bpf_map_lookup_elem(bm.inodes, &k1, &v) < 0 && errno == ENOENT);
	g1 = file.gen;
	/* freed, and mapped again before the next sync: not in the slot being emptied (pending) */
	fg_cfi_loader_record(l, FG_REC_EXIT, &exit_, sizeof(exit_));
	map_record(l, pid, m, size, path, 3);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.over_files == 1);
	CHECK(bpf_map_lookup_elem(bm.files, &slot, &file) == 0);
	CHECK(memcmp(&file, &none, sizeof(file)) == 0);
	CHECK(bpf_map_lookup_elem(bm.procs, &pid, proc) == 0);
	CHECK(proc->n == 1 && proc->maps[0].table == FG_CFI_TABLE_PENDING);
	munmap(m, (size_t)size);
	close(fd);
	unlink(path);
	fg_cfi_loader_free(l);
	bpf_maps_close(&bm);
	free(proc);
}

/* the worker's own mark of a process to load, which fg_cfi_worker_push() must not take */
#define LOAD_PID_LOOKALIKE UINT32_MAX

/* The loader in its thread: records queued, fed in batches; a full queue read again from /proc. */
TEST(worker_feeds_the_loader_and_counts)
{
	struct fg_cfi_load_limits lim = FG_CFI_LOAD_LIMITS_DEFAULT;
	struct fake *f = calloc(1, sizeof(*f));
	struct fg_cfi_loader *l;
	struct fg_cfi_worker *w;
	struct fg_cfi_worker_stats ws;
	struct fg_cfi_load_stats st0, st;
	uint32_t pid = (uint32_t)getpid(), child = 4000002, table;
	struct fg_rec_task fork = {child, child, pid, pid, 1}, exit_ = fork;
	struct fg_rec_task thread = {pid, pid + 1, pid, pid, 1};
	char sample[64] = {0};
	int sent;

	lim.max_files = SLOTS;
	l = new_loader(f, &lim);
	CHECK(fg_cfi_loader_scan(l, pid) == 0);
	fg_cfi_loader_sync(l);
	fg_cfi_loader_stats(l, &st0);
	CHECK(fg_cfi_worker_start(&w, l, 1u << 20) == 0);
	/* a fork (wanted), a thread's exit and a sample (not), the child's exit */
	fg_cfi_worker_push(w, FG_REC_FORK, &fork, sizeof(fork));
	fg_cfi_worker_push(w, FG_REC_EXIT, &thread, sizeof(thread));
	fg_cfi_worker_push(w, FG_REC_SAMPLE, sample, sizeof(sample));
	fg_cfi_worker_wake(w);
	fg_cfi_worker_stop(w, &ws);
	CHECK(ws.records == 1 && ws.dropped == 0 && ws.rescans == 0 && ws.batches >= 1);
	CHECK(fake_lookup(f, child, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs == st0.procs + 1 && st.loaded == st0.loaded);
	/* a queue of 16 bytes: the exit does not fit, is counted, and every process is read
	 * again (the child, not in /proc, stays until the sweeps find it gone) */
	CHECK(fg_cfi_worker_start(&w, l, 16) == 0);
	fg_cfi_worker_push(w, FG_REC_EXIT, &exit_, sizeof(exit_));
	fg_cfi_worker_stop(w, &ws);
	CHECK(ws.records == 0 && ws.dropped == 1 && ws.rescans == 1);
	fg_cfi_loader_stats(l, &st);
	CHECK(st.procs >= st0.procs + 1 && st.map_errors == 0);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	{
		struct fg_buf text = FG_BUF_INIT;

		fg_cfi_worker_report(&text, &ws);
		CHECK(strstr(text.data, "1 left out, its queue full (every process read again 1 "
					"times)") != NULL);
		fg_buf_release(&text);
	}
	/* a process loaded at its first sample: read from /proc by the worker, its tables in */
	fg_cfi_loader_free(l);
	l = new_loader(f, &lim);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) == NULL);
	CHECK(fg_cfi_worker_start(&w, l, 1u << 20) == 0);
	sent = __atomic_load_n(&f->procs_sent, __ATOMIC_ACQUIRE);
	fg_cfi_worker_load(w, pid, true);
	fg_cfi_worker_push(w, LOAD_PID_LOOKALIKE, &pid, sizeof(pid)); /* not a record: ignored */
	fg_cfi_worker_wake(w);
	/* (a load still queued when the run ends is dropped: wait for it first) */
	for (int i = 0; i < 10000 && __atomic_load_n(&f->procs_sent, __ATOMIC_ACQUIRE) == sent; i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	fg_cfi_worker_stop(w, &ws);
	CHECK(ws.loads == 1 && ws.asked == 1 && ws.records == 0 && ws.dropped == 0);
	CHECK(fake_lookup(f, pid, (uint64_t)(uintptr_t)memcpy, &table) != NULL);
	/* nothing pushed: started and stopped, nothing fed */
	CHECK(fg_cfi_worker_start(&w, l, 1u << 20) == 0);
	fg_cfi_worker_stop(w, &ws);
	CHECK(ws.records == 0 && ws.dropped == 0);
	fg_cfi_worker_stop(NULL, NULL);
	fg_cfi_loader_free(l);
	CHECK(f->loads == f->unloads);
	free(f);
}

int main(void)
{
	RUN(own_process_rules_match_the_files);
	RUN(shared_by_fork_freed_with_the_last);
	RUN(every_process_then_none);
	RUN(limits_are_counted);
	RUN(bad_records_are_ignored);
	RUN(kept_tables_are_reused_then_expire);
	RUN(rewritten_file_gets_a_new_table);
	RUN(anonymous_code_is_walked_by_frame_pointers);
	RUN(mappings_are_as_of_their_newest_record);
	RUN(a_read_outlives_older_fork_exec_and_mapping_records);
	RUN(a_table_left_out_for_room_is_loaded_when_room_comes);
	RUN(a_process_waiting_for_room_is_read_again_once_a_slot_is_freed);
	RUN(a_process_waiting_for_room_is_read_again_once_a_table_is_kept);
	RUN(slot_freed_and_reused_gets_a_new_gen);
	RUN(worker_feeds_the_loader_and_counts);
	return unit_done();
}
