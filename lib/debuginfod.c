// SPDX-License-Identifier: BSD-2-Clause
/* Debug files fetched from debuginfod servers: see fg/debuginfod.h. */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fg/debuginfod.h"
#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/hash.h"
#include "fg/safeio.h"
#include "fg/util.h"

/* --- the cache directory --- */

/*
 * The cache directory, made 0700 when missing, by fg_safeio_private_dir_open()'s
 * rules (no symbolic link, no one else's directory on the way), as a
 * descriptor that can be read (libdebuginfod gets it as /proc/self/fd/N).
 */
static int private_dir_open(const char *path)
{
	int dfd = fg_safeio_private_dir_open(path, true, NULL, 0, NULL), fd;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(dfd);
	return fd;
}

/* libdebuginfod's default cache: $XDG_CACHE_HOME/debuginfod_client, ~/.cache/debuginfod_client */
int fg_debuginfod_default_cache(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/debuginfod_client", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/debuginfod_client", home);
	else
		return -ENOENT;
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* --- debuginfod --- */

/*
 * libdebuginfod is loaded when first needed, as libdwfl loads it: linked in,
 * it and libcurl's dependencies (some thirty libraries) cost every run of
 * every tool about 7 ms to load, debuginfod or not.
 */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_end) *end;
	int err; /* 0: loaded */
} dl;
static pthread_once_t dl_once = PTHREAD_ONCE_INIT;

static void dl_load(void)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		dl.err = ENOSYS;
		return;
	}
	dl.begin = (__typeof__(dl.begin))dlsym(h, "debuginfod_begin");
	dl.find_debuginfo = (__typeof__(dl.find_debuginfo))dlsym(h, "debuginfod_find_debuginfo");
	dl.set_progressfn = (__typeof__(dl.set_progressfn))dlsym(h, "debuginfod_set_progressfn");
	dl.end = (__typeof__(dl.end))dlsym(h, "debuginfod_end");
	if (!dl.begin || !dl.find_debuginfo || !dl.set_progressfn || !dl.end)
		dl.err = ENOSYS; /* the handle stays: nothing else loads it */
}

struct req {
	uint8_t id[FG_BUILD_ID_MAX];
	size_t len;
	void *tag;
	struct fg_debuginfod_result res;
	bool abandoned; /* given up by the budget while a worker fetches it */
	struct req *next;
};

struct worker {
	struct fg_debuginfod *c;
	pthread_t th;
	struct req *cur; /* the request it fetches (under mu) */
};

struct fg_debuginfod {
	pthread_mutex_t mu;
	pthread_cond_t work;		/* to workers: a request is queued, or stop */
	pthread_cond_t done_cv;		/* to the owner: a request is done */
	struct fg_hash *asked;		/* build-ids asked for (owner's thread only) */
	struct fg_hash *sups;		/* supplementary files' build-ids (under mu): SUP_* */
	pthread_cond_t sup_cv;		/* to workers: a supplementary file is fetched */
	struct req *queue, *queue_tail; /* not started */
	struct req *done, *done_tail;	/* finished, not collected */
	unsigned outstanding;		/* asked for, not yet finished nor given up */
	unsigned active;		/* being fetched */
	struct worker *workers;
	unsigned nworkers, max_workers;
	uint64_t budget_ms, used_ms, busy_since;
	bool spent, stop;
	int evfd;
	int cache_fd;
	char *cache_path;
	uint64_t max_bytes; /* of one file, decompressed (as written in the cache) */
	struct fg_debuginfod_stats st;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* With mu held: is the budget spent?  The clock runs while anything is outstanding. */
static bool budget_spent(struct fg_debuginfod *c, uint64_t now)
{
	if (!c->spent && c->outstanding && c->used_ms + (now - c->busy_since) >= c->budget_ms) {
		c->spent = true;
		c->used_ms = c->budget_ms;
	}
	return c->spent;
}

/* With mu held: one outstanding request fewer. */
static void outstanding_dec(struct fg_debuginfod *c, uint64_t now)
{
	if (--c->outstanding == 0 && !c->spent) {
		c->used_ms += now - c->busy_since;
		if (c->used_ms >= c->budget_ms) {
			c->used_ms = c->budget_ms;
			c->spent = true;
		}
	}
}

/* With mu held: hand a finished request to the owner. */
static void push_done(struct fg_debuginfod *c, struct req *r)
{
	uint64_t one = 1;

	r->next = NULL;
	if (c->done_tail)
		c->done_tail->next = r;
	else
		c->done = r;
	c->done_tail = r;
	pthread_cond_broadcast(&c->done_cv);
	if (write(c->evfd, &one, sizeof(one)) < 0) {
		/* the counter is full: it is readable anyway */
	}
}

/* The relative name of a build-id's debug file in libdebuginfod's cache. */
static void cache_name(const struct req *r, char *buf, size_t size)
{
	char hex[2 * FG_BUILD_ID_MAX + 2];

	fg_build_id_hex(r->id, r->len, hex, false);
	snprintf(buf, size, "%s/debuginfo", hex);
}

/* The cache's path of a file in it, for messages and to place a dwz file */
static char *cache_file_path(const struct fg_debuginfod *c, const char *name)
{
	size_t n = strlen(c->cache_path) + strlen(name) + 2;
	char *p = fg_xmalloc(n);

	snprintf(p, n, "%s/%s", c->cache_path, name);
	return p;
}

/*
 * The file `name` in the cache is not r's debug file (err: ESTALE, another
 * build-id), or cannot be (EFBIG: over max_bytes; E2BIG: ELF headers refused;
 * ENOEXEC: not ELF): r is refused, and the file evicted, so that it is
 * neither kept nor read again by the next runs.  Another error (EIO, ENOMEM)
 * says nothing of the file: it stays, and r failed.
 */
static void refuse(struct fg_debuginfod *c, struct req *r, const char *name, int err)
{
	r->res.err = err;
	if (err == ESTALE) {
		r->res.state = FG_DBGI_REFUSED;
	} else if (err == EFBIG || err == E2BIG || err == ENOEXEC) {
		r->res.state = FG_DBGI_UNUSABLE;
	} else {
		r->res.state = FG_DBGI_FAILED;
		return;
	}
	unlinkat(c->cache_fd, name, 0);
}

/* A debug file in the cache, checked: true when found there (res filled). */
static bool from_cache(struct fg_debuginfod *c, struct req *r)
{
	struct fg_debug_want w = {.build_id = r->id, .build_id_len = r->len};
	char name[2 * FG_BUILD_ID_MAX + 32];
	struct stat st;
	int fd, err;

	cache_name(r, name, sizeof(name));
	fd = fg_safeio_open_regular_at(c->cache_fd, name, c->max_bytes, &st);
	if (fd == -EFBIG) {
		r->res.cached = true;
		refuse(c, r, name, EFBIG);
		return true;
	}
	if (fd < 0)
		return false;
	if (st.st_size == 0) { /* libdebuginfod's note of a miss: let it decide */
		close(fd);
		return false;
	}
	r->res.cached = true;
	err = fg_debugfile_check(fd, &w, &r->res.df.elf);
	if (err < 0) {
		close(fd);
		refuse(c, r, name, -err);
		return true;
	}
	r->res.state = FG_DBGI_FOUND;
	r->res.df.fd = fd;
	r->res.df.path = cache_file_path(c, name);
	return true;
}

/* A supplementary file's fetch, by build-id (fg_debuginfod.sups) */
enum { SUP_NONE, SUP_FETCHING, SUP_DONE };

/* The build-id of the supplementary (dwz) file of a debug file found, or NULL. */
static const uint8_t *sup_id(const struct req *r, size_t *len)
{
	const struct fg_elfsyms *e = r->res.state == FG_DBGI_FOUND ? r->res.df.elf : NULL;

	*len = e ? e->altlink_id_len : 0;
	return *len ? e->altlink_id : NULL;
}

/* With mu held: a supplementary file still to fetch for the debug file r found? */
static bool sup_wanted(struct fg_debuginfod *c, const struct req *r)
{
	size_t len;
	const uint8_t *id = sup_id(r, &len);
	struct fg_hash_entry *e = id ? fg_hash_get(c->sups, id, len) : NULL;

	return id && (!e || e->val.u == SUP_NONE);
}

static void fetch(struct worker *wk, debuginfod_client *dc, struct req *r);

/*
 * In the owner's thread: the debug file r was found in the cache, but not the
 * supplementary file it names, which no worker fetched yet: r goes to a
 * worker, which fetches it (r's result is reset).
 */
static bool sup_to_fetch(struct fg_debuginfod *c, struct req *r)
{
	char name[2 * FG_BUILD_ID_MAX + 32];
	struct req sup;
	struct stat st;
	const uint8_t *id = sup_id(r, &sup.len);
	bool want;

	if (!id)
		return false;
	memcpy(sup.id, id, sup.len);
	cache_name(&sup, name, sizeof(name));
	if (fstatat(c->cache_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0)
		return false; /* lib/dwarf.c checks it */
	pthread_mutex_lock(&c->mu);
	want = sup_wanted(c, r);
	pthread_mutex_unlock(&c->mu);
	if (want) {
		fg_debugfile_release(&r->res.df);
		r->res = (struct fg_debuginfod_result){.tag = r->tag, .df.fd = -1};
	}
	return want;
}

/*
 * The supplementary (dwz) file that the debug file r found names in its
 * .gnu_debugaltlink (Debian's do): fetched by its build-id into the cache,
 * beside the debug file, where lib/dwarf.c looks for it
 * (fg_debuginfod_sibling).  As the debug file's own: within the budget
 * (r is outstanding while this runs), once per build-id (a worker that
 * needs one another is fetching waits for it), checked by build-id.
 */
static void fetch_sup(struct worker *wk, debuginfod_client *dc, const struct req *r)
{
	struct fg_debuginfod *c = wk->c;
	struct req sup = {.res.df.fd = -1};
	const uint8_t *id = sup_id(r, &sup.len);
	struct fg_hash_entry *e;
	bool ins;

	if (!id)
		return;
	memcpy(sup.id, id, sup.len);
	pthread_mutex_lock(&c->mu);
	e = fg_hash_upsert(c->sups, sup.id, sup.len, &ins);
	while (e->val.u == SUP_FETCHING && !c->stop && !budget_spent(c, mono_ms())) {
		struct timespec ts;

		/* the budget is not signalled: look again every 100 ms */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->sup_cv, &c->mu, &ts);
		e = fg_hash_get(c->sups, sup.id, sup.len); /* the map may have grown */
	}
	if (e->val.u != SUP_NONE) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	e->val.u = SUP_FETCHING;
	pthread_mutex_unlock(&c->mu);
	fetch(wk, dc, &sup);
	fg_debugfile_release(&sup.res.df);
	pthread_mutex_lock(&c->mu);
	fg_hash_get(c->sups, sup.id, sup.len)->val.u = SUP_DONE;
	if (sup.res.state == FG_DBGI_FOUND)
		c->st.sup_found++;
	else
		c->st.sup_missing++;
	pthread_cond_broadcast(&c->sup_cv);
	pthread_mutex_unlock(&c->mu);
}

bool fg_debuginfod_sibling(const char *debug_path, const uint8_t *id, size_t len, char *buf,
			   size_t size)
{
	const char *base = debug_path ? strrchr(debug_path, '/') : NULL, *dir;
	struct req r;
	char name[2 * FG_BUILD_ID_MAX + 32];
	int n;

	/* CACHE/HEX/debuginfo */
	if (!base || strcmp(base, "/debuginfo") != 0 || !len || len > FG_BUILD_ID_MAX)
		return false;
	for (dir = base; dir > debug_path && dir[-1] != '/'; dir--)
		if (!strchr("0123456789abcdef", dir[-1]))
			return false;
	if (dir == base || dir == debug_path)
		return false;
	memcpy(r.id, id, len);
	r.len = len;
	cache_name(&r, name, sizeof(name));
	n = snprintf(buf, size, "%.*s%s", (int)(dir - debug_path), debug_path, name);
	return n > 0 && (size_t)n < size;
}

/* The child's exit status when the file it wrote reached max_bytes. */
#define CHILD_TOOBIG 250

static volatile sig_atomic_t child_toobig;

static void on_xfsz(int sig)
{
	(void)sig;
	child_toobig = 1;
}

/*
 * In the child: did it write `max` bytes?  A write that crosses
 * RLIMIT_FSIZE is cut short without a signal, and curl then gives up: only
 * the count of bytes written tells (a new process's count starts at zero).
 */
static bool child_wrote(uint64_t max)
{
	char buf[512], *p;
	int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strstr(buf, "wchar:");
	return p && strtoull(p + 6, NULL, 10) >= max;
}

/* Remove what a fetch killed midway left: CACHE/HEX/debuginfo.XXXXXX (libdebuginfod's). */
static void remove_partial(const struct fg_debuginfod *c, const struct req *r)
{
	char hex[2 * FG_BUILD_ID_MAX + 2];
	struct dirent *de;
	DIR *d;
	int fd;

	fg_build_id_hex(r->id, r->len, hex, false);
	fd = openat(c->cache_fd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (fg_starts_with(de->d_name, "debuginfo."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

/*
 * libdebuginfod's fetch of r, in a child process: 0 when the file is in the
 * cache, else -errno (-EFBIG: it reached max_bytes; -ECANCELED: the budget
 * was spent, or the client is ending, and the child killed).
 *
 * Why a child: what libdebuginfod writes is what curl decoded, and it asks
 * for gzip, so a reply of 1 MB can write 1 GiB; DEBUGINFOD_MAXSIZE checks
 * only the sizes the server announces, and the progress callback runs
 * between steps of curl's that may each decode the whole reply.  The child's
 * RLIMIT_FSIZE stops the write at max_bytes (the transfer then fails and
 * libdebuginfod removes its file), and the child can be killed the moment
 * the budget is spent, whatever curl is doing.  It runs only what a forked
 * child of a threaded process may: libdebuginfod with a client of its own
 * (the worker's copy, without the progress callback, which takes mu), then
 * _exit.
 */
static int find_in_child(struct worker *wk, debuginfod_client *dc, const struct req *r)
{
	struct fg_debuginfod *c = wk->c;
	bool killed = false;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = c->max_bytes, .rlim_max = c->max_bytes};
		struct sigaction sa = {.sa_handler = on_xfsz};
		int fd;

		sigaction(SIGXFSZ, &sa, NULL); /* the write fails with EFBIG, and we know */
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(EPERM);
		dl.set_progressfn(dc, NULL);
		fd = dl.find_debuginfo(dc, r->id, (int)r->len, NULL);
		if (fd < 0 && (child_toobig || child_wrote(c->max_bytes)))
			_exit(CHILD_TOOBIG);
		_exit(fd >= 0 ? 0 : -fd > 200 ? EIO : -fd);
	}
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		struct timespec ts = {.tv_nsec = 10 * 1000000};

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -ECHILD;
		pthread_mutex_lock(&c->mu);
		bool stop = c->stop || budget_spent(c, mono_ms());
		pthread_mutex_unlock(&c->mu);
		if (stop && !killed) {
			kill(pid, SIGKILL);
			killed = true;
		}
		nanosleep(&ts, NULL);
	}
	if (killed || !WIFEXITED(status)) {
		remove_partial(c, r);
		return -ECANCELED;
	}
	status = WEXITSTATUS(status);
	return status == 0 ? 0 : status == CHILD_TOOBIG ? -EFBIG : -status;
}

/* Fetch one (in a worker). */
static void fetch(struct worker *wk, debuginfod_client *dc, struct req *r)
{
	struct fg_debuginfod *c = wk->c;
	struct fg_debug_want w = {.build_id = r->id, .build_id_len = r->len};
	char name[2 * FG_BUILD_ID_MAX + 32];
	int fd, err;

	if (from_cache(c, r))
		return;
	fd = find_in_child(wk, dc, r);
	if (fd < 0) {
		if (fd == -ECANCELED || fd == -EFBIG) {
			/*
			 * An aborted transfer leaves libdebuginfod's note of a miss,
			 * which would make the next runs skip this build-id: not a miss
			 */
			struct stat st;

			cache_name(r, name, sizeof(name));
			if (fstatat(c->cache_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && st.st_size == 0)
				unlinkat(c->cache_fd, name, 0);
			r->res.state = fd == -EFBIG ? FG_DBGI_UNUSABLE : FG_DBGI_TIMEDOUT;
			r->res.err = fd == -EFBIG ? EFBIG : 0;
		} else if (fd == -ENOENT) {
			r->res.state = FG_DBGI_NOTFOUND;
		} else {
			r->res.state = FG_DBGI_FAILED;
			r->res.err = -fd;
		}
		return;
	}
	/* read what is now in the cache, through a descriptor of our own */
	cache_name(r, name, sizeof(name));
	int own = fg_safeio_open_regular_at(c->cache_fd, name, c->max_bytes, NULL);
	if (own < 0) {
		refuse(c, r, name, -own); /* EFBIG: decoded over the bound at the last step */
		return;
	}
	err = fg_debugfile_check(own, &w, &r->res.df.elf);
	if (err < 0) {
		close(own);
		refuse(c, r, name, -err);
		return;
	}
	r->res.state = FG_DBGI_FOUND;
	r->res.df.fd = own;
	r->res.df.path = cache_file_path(c, name);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct fg_debuginfod *c = wk->c;
	/* used by the children only (find_in_child), without a progress callback */
	debuginfod_client *dc = dl.begin();

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct req *r = c->queue;

		if (c->stop)
			break;
		if (!r) {
			pthread_cond_wait(&c->work, &c->mu);
			continue;
		}
		c->queue = r->next;
		if (!c->queue)
			c->queue_tail = NULL;
		c->active++;
		wk->cur = r;
		pthread_mutex_unlock(&c->mu);
		if (dc) {
			fetch(wk, dc, r);
			fetch_sup(wk, dc, r);
		} else {
			r->res.state = FG_DBGI_FAILED;
			r->res.err = ENOMEM;
		}
		pthread_mutex_lock(&c->mu);
		c->active--;
		wk->cur = NULL;
		if (r->abandoned) {
			/* the budget gave it up and the owner was told so */
			fg_debugfile_release(&r->res.df);
			free(r);
			continue;
		}
		outstanding_dec(c, mono_ms());
		push_done(c, r);
	}
	pthread_mutex_unlock(&c->mu);
	if (dc)
		dl.end(dc);
	return NULL;
}

/* The bound on one file: DEBUGINFOD_MAXSIZE when set (within FG_ELF_MAX_FILE), else the default. */
static uint64_t max_bytes(const char *env)
{
	char *end;
	unsigned long long v;

	if (!env || !*env)
		return FG_DEBUGINFOD_MAX_BYTES;
	errno = 0;
	v = strtoull(env, &end, 10);
	if (errno || *end || v == 0 || *env == '-')
		return FG_DEBUGINFOD_MAX_BYTES;
	return v > FG_ELF_MAX_FILE ? FG_ELF_MAX_FILE : v;
}

struct fg_debuginfod *fg_debuginfod_new(const struct fg_debuginfod_opts *o)
{
	struct fg_debuginfod *c;
	char def[PATH_MAX], env[64];
	const char *cache = o->cache;
	int fd, err;

	if (!o->urls || !*o->urls) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&dl_once, dl_load);
	if (dl.err) {
		errno = dl.err;
		return NULL;
	}
	if (!cache || !*cache) {
		err = fg_debuginfod_default_cache(def, sizeof(def));
		if (err < 0) {
			errno = -err;
			return NULL;
		}
		cache = def;
	}
	fd = private_dir_open(cache);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	c = fg_xcalloc(1, sizeof(*c));
	c->cache_fd = fd;
	c->cache_path = fg_xstrdup(cache);
	c->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->evfd < 0) {
		err = errno;
		close(fd);
		free(c->cache_path);
		free(c);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	pthread_cond_init(&c->sup_cv, NULL);
	c->asked = fg_hash_new(64);
	c->sups = fg_hash_new(16);
	c->budget_ms = o->budget_ms ? o->budget_ms : FG_DEBUGINFOD_BUDGET_MS;
	c->st.budget_ms = c->budget_ms;
	c->max_workers = o->workers ? o->workers : FG_DEBUGINFOD_WORKERS;
	c->workers = fg_xcalloc(c->max_workers, sizeof(*c->workers));
	/*
	 * libdebuginfod reads these at each query.  The cache, by the directory
	 * checked and opened: whoever can rename what is above it cannot make
	 * libdebuginfod write or read elsewhere.
	 */
	snprintf(env, sizeof(env), "/proc/self/fd/%d", fd);
	struct stat a, b;
	bool by_fd = stat(env, &a) == 0 && fstat(fd, &b) == 0 && a.st_ino == b.st_ino &&
		     a.st_dev == b.st_dev;
	/* without /proc: the path checked */
	setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, by_fd ? env : c->cache_path, 1);
	setenv(DEBUGINFOD_URLS_ENV_VAR, o->urls, 1);
	c->max_bytes = max_bytes(getenv(DEBUGINFOD_MAXSIZE_ENV_VAR));
	c->st.max_bytes = c->max_bytes;
	char max[32];

	snprintf(max, sizeof(max), "%llu", (unsigned long long)c->max_bytes);
	setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, max, 1);
	return c;
}

const char *fg_debuginfod_cache_path(const struct fg_debuginfod *c)
{
	return c ? c->cache_path : NULL;
}

int fg_debuginfod_request(struct fg_debuginfod *c, const uint8_t *id, size_t len, void *tag,
			  struct fg_debuginfod_result *res)
{
	struct fg_hash_entry *e;
	struct req *r;
	bool inserted;
	uint64_t now;

	if (!len || len > FG_BUILD_ID_MAX)
		return -EINVAL;
	e = fg_hash_upsert(c->asked, id, len, &inserted);
	if (!inserted)
		return -EALREADY;
	e->val.p = NULL;
	r = fg_xcalloc(1, sizeof(*r));
	memcpy(r->id, id, len);
	r->len = len;
	r->tag = tag;
	r->res.tag = tag;
	r->res.df.fd = -1;
	now = mono_ms();
	pthread_mutex_lock(&c->mu);
	bool spent = c->spent;
	pthread_mutex_unlock(&c->mu);
	/* already here: no thread, no wait (unless its supplementary file is to be fetched) */
	if (!spent && from_cache(c, r) && !sup_to_fetch(c, r)) {
		*res = r->res;
		pthread_mutex_lock(&c->mu);
		/* reading it is debuginfod's work too: on the budget (busy_since counts it) */
		if (!c->outstanding && !c->spent) {
			c->used_ms += mono_ms() - now;
			if (c->used_ms >= c->budget_ms) {
				c->used_ms = c->budget_ms;
				c->spent = true;
			}
		}
		if (res->state == FG_DBGI_FOUND)
			c->st.cached++;
		else if (res->state == FG_DBGI_REFUSED)
			c->st.refused++;
		else if (res->state == FG_DBGI_UNUSABLE)
			c->st.unusable++;
		else
			c->st.failed++;
		pthread_mutex_unlock(&c->mu);
		free(r);
		return res->state;
	}
	now = mono_ms();
	pthread_mutex_lock(&c->mu);
	if (c->spent) {
		c->st.timedout++;
		pthread_mutex_unlock(&c->mu);
		*res = r->res;
		res->state = FG_DBGI_TIMEDOUT;
		free(r);
		return FG_DBGI_TIMEDOUT;
	}
	if (c->outstanding++ == 0)
		c->busy_since = now;
	if (c->queue_tail)
		c->queue_tail->next = r;
	else
		c->queue = r;
	c->queue_tail = r;
	/* one worker per request outstanding, up to max_workers */
	if (c->nworkers < c->outstanding && c->nworkers < c->max_workers) {
		struct worker *w = &c->workers[c->nworkers];

		w->c = c;
		if (pthread_create(&w->th, NULL, worker_main, w) == 0)
			c->nworkers++;
	}
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->mu);
	if (!c->nworkers) {
		/* no thread could start: nothing will fetch it */
		pthread_mutex_lock(&c->mu);
		c->queue = c->queue_tail = NULL;
		outstanding_dec(c, mono_ms());
		c->st.failed++;
		c->st.last_err = EAGAIN;
		pthread_mutex_unlock(&c->mu);
		*res = r->res;
		res->state = FG_DBGI_FAILED;
		res->err = EAGAIN;
		free(r);
		return FG_DBGI_FAILED;
	}
	res->tag = tag;
	res->state = FG_DBGI_PENDING;
	return FG_DBGI_PENDING;
}

/* With mu held: a result of its own for a request that stays with a worker. */
static void push_timed_out(struct fg_debuginfod *c, void *tag)
{
	struct req *t = fg_xcalloc(1, sizeof(*t));

	t->tag = tag;
	t->res.tag = tag;
	t->res.state = FG_DBGI_TIMEDOUT;
	t->res.df.fd = -1;
	push_done(c, t);
}

/* With mu held: give up what the spent budget leaves outstanding. */
static void give_up(struct fg_debuginfod *c)
{
	struct req *r;

	while ((r = c->queue) != NULL) {
		c->queue = r->next;
		r->res.state = FG_DBGI_TIMEDOUT;
		c->outstanding--;
		push_done(c, r);
	}
	c->queue_tail = NULL;
	/* those under way: told as timed out now; the worker aborts and drops its own */
	for (unsigned i = 0; i < c->nworkers; i++) {
		r = c->workers[i].cur;
		if (r && !r->abandoned) {
			r->abandoned = true;
			c->outstanding--;
			push_timed_out(c, r->tag);
		}
	}
}

bool fg_debuginfod_collect(struct fg_debuginfod *c, struct fg_debuginfod_result *res)
{
	struct req *r;
	uint64_t drain;

	if (!c)
		return false;
	if (read(c->evfd, &drain, sizeof(drain)) < 0) {
		/* nothing signalled: there may still be requests to give up */
	}
	pthread_mutex_lock(&c->mu);
	if (c->outstanding && budget_spent(c, mono_ms()))
		give_up(c);
	r = c->done;
	if (r) {
		c->done = r->next;
		if (!c->done)
			c->done_tail = NULL;
		switch (r->res.state) {
		case FG_DBGI_FOUND:
			if (r->res.cached)
				c->st.cached++;
			else
				c->st.fetched++;
			break;
		case FG_DBGI_NOTFOUND:
			c->st.notfound++;
			break;
		case FG_DBGI_TIMEDOUT:
			c->st.timedout++;
			break;
		case FG_DBGI_REFUSED:
			c->st.refused++;
			break;
		case FG_DBGI_UNUSABLE:
			c->st.unusable++;
			break;
		default:
			c->st.failed++;
			c->st.last_err = r->res.err;
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (!r)
		return false;
	*res = r->res;
	free(r);
	return true;
}

unsigned fg_debuginfod_outstanding(struct fg_debuginfod *c)
{
	unsigned n = 0;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->mu);
	n = c->outstanding;
	for (const struct req *r = c->done; r; r = r->next)
		n++;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int fg_debuginfod_event_fd(const struct fg_debuginfod *c)
{
	return c ? c->evfd : -1;
}

/* With mu held. */
static int remaining_locked(struct fg_debuginfod *c, uint64_t now)
{
	uint64_t used;

	if (!c->outstanding)
		return -1;
	if (budget_spent(c, now))
		return 0;
	used = c->used_ms + (now - c->busy_since);
	return (int)(c->budget_ms - used);
}

int fg_debuginfod_remaining_ms(struct fg_debuginfod *c)
{
	int ms;

	if (!c)
		return -1;
	pthread_mutex_lock(&c->mu);
	ms = remaining_locked(c, mono_ms());
	pthread_mutex_unlock(&c->mu);
	return ms;
}

void fg_debuginfod_wait(struct fg_debuginfod *c, int timeout_ms)
{
	struct timespec ts;
	int left;

	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	left = remaining_locked(c, mono_ms());
	if (!c->done && left > 0) {
		if (timeout_ms >= 0 && timeout_ms < left)
			left = timeout_ms;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (long)(left % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->done_cv, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
}

void fg_debuginfod_stats(struct fg_debuginfod *c, struct fg_debuginfod_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	*st = c->st;
	st->used_ms = c->used_ms;
	if (c->outstanding && !c->spent)
		st->used_ms += mono_ms() - c->busy_since;
	if (st->used_ms > c->budget_ms)
		st->used_ms = c->budget_ms;
	pthread_mutex_unlock(&c->mu);
}

void fg_debuginfod_free(struct fg_debuginfod *c)
{
	struct req *r;

	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = true;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
	/* a worker waiting on its child kills it within 10 ms of seeing `stop` */
	for (unsigned i = 0; i < c->nworkers; i++)
		pthread_join(c->workers[i].th, NULL);
	while ((r = c->queue) != NULL) {
		c->queue = r->next;
		free(r);
	}
	while ((r = c->done) != NULL) {
		c->done = r->next;
		fg_debugfile_release(&r->res.df);
		free(r);
	}
	fg_hash_free(c->asked);
	fg_hash_free(c->sups);
	free(c->workers);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->done_cv);
	pthread_cond_destroy(&c->sup_cv);
	pthread_mutex_destroy(&c->mu);
	close(c->evfd);
	close(c->cache_fd);
	free(c->cache_path);
	free(c);
}
