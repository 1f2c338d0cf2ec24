/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FG_DEBUGINFOD_H
#define FG_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/debugfile.h"

/*
 * Fetches debug files by build-id from debuginfod servers through elfutils'
 * libdebuginfod (its cache, its DEBUGINFOD_* variables), in background
 * threads: whoever asks never waits on the network.
 *
 * Bounded: at most one fetch per build-id in the life of the object, and a
 * time budget for them all: the clock runs while any fetch is outstanding,
 * and while a file found in the cache is read; when the budget is spent,
 * what is still outstanding is given up (timed out), the transfers under way
 * are killed (each runs in a child process: within 10 ms) and later
 * requests time out at once, the cache's included.  And a bound on the size
 * of one file as written in the cache, once curl has decoded it (gzip): the
 * child's RLIMIT_FSIZE.  A file refused (another build-id, over the bound,
 * not ELF within bounds) is removed from the cache.
 *
 * Files are kept in libdebuginfod's cache, a directory that must be the
 * user's own (see fg_debuginfod_new); a file already there is served from it
 * at once, without a thread or the network.
 *
 *	struct fg_debuginfod *c = fg_debuginfod_new(&opts);
 *	fg_debuginfod_request(c, id, len, tag, &res);	// FG_DBGI_PENDING, or done
 *	... poll(fg_debuginfod_event_fd(c)) or fg_debuginfod_wait(c, ms) ...
 *	while (fg_debuginfod_collect(c, &res)) ... res.tag, res.state, res.df ...
 *	fg_debuginfod_free(c);
 */
struct fg_debuginfod;

struct fg_debuginfod_opts {
	const char *urls; /* the servers, space-separated (DEBUGINFOD_URLS' form) */
	/*
	 * The cache directory, made when missing; NULL: libdebuginfod's default
	 * ($XDG_CACHE_HOME/debuginfod_client, else $HOME/.cache/debuginfod_client).
	 */
	const char *cache;
	uint64_t budget_ms; /* for all fetches together; 0: FG_DEBUGINFOD_BUDGET_MS */
	unsigned workers;   /* fetches at once; 0: FG_DEBUGINFOD_WORKERS */
};

#define FG_DEBUGINFOD_BUDGET_MS 5000u
#define FG_DEBUGINFOD_MAX_BYTES (1ull << 30) /* one file, decompressed; DEBUGINFOD_MAXSIZE */
#define FG_DEBUGINFOD_WORKERS 4u

enum fg_dbgi_state {
	FG_DBGI_PENDING,  /* being fetched */
	FG_DBGI_FOUND,	  /* res.df holds the file, checked */
	FG_DBGI_NOTFOUND, /* no server has it */
	FG_DBGI_TIMEDOUT, /* not fetched within the budget */
	FG_DBGI_REFUSED,  /* the file served is not the one asked for (build-id) */
	FG_DBGI_FAILED,	  /* the servers could not be asked (res.err) */
	FG_DBGI_UNUSABLE, /* the file served is over the bound (res.err EFBIG), or not ELF
			     within bounds (E2BIG, ENOEXEC): evicted from the cache */
};

struct fg_debuginfod_result {
	void *tag; /* as given to fg_debuginfod_request */
	enum fg_dbgi_state state;
	bool cached;		/* FOUND: from the cache, not the network */
	int err;		/* FAILED: the error (ECONNREFUSED, EHOSTUNREACH, ...) */
	struct fg_debugfile df; /* FOUND: the caller's, to release */
};

struct fg_debuginfod_stats {
	uint64_t fetched;     /* files fetched from a server */
	uint64_t cached;      /* files served from the cache */
	uint64_t notfound;    /* build-ids no server has */
	uint64_t timedout;    /* not fetched within the budget */
	uint64_t refused;     /* files whose build-id is not the one asked for */
	uint64_t unusable;    /* files over the size bound, or not ELF within bounds */
	uint64_t failed;      /* requests that could not reach a server */
	int last_err;	      /* the error of the last failed one */
	uint64_t sup_found;   /* supplementary (dwz) files fetched or in the cache */
	uint64_t sup_missing; /* supplementary files not fetched (not found, timed out...) */
	uint64_t used_ms;     /* of the budget */
	uint64_t budget_ms;
	uint64_t max_bytes; /* the bound on one file */
};

/*
 * Start a client (no thread runs before the first request).  libdebuginfod
 * reads its settings from the environment only: this sets DEBUGINFOD_URLS,
 * DEBUGINFOD_CACHE_PATH (to the checked directory, opened: see below) and
 * DEBUGINFOD_MAXSIZE (the bound on one file: as set, within FG_ELF_MAX_FILE;
 * FG_DEBUGINFOD_MAX_BYTES when unset), so call it before other threads start.
 *
 * The cache directory and the directories above it are opened one by one
 * without following symbolic links; each must belong to root or to the
 * effective user and be writable by no one else (unless sticky, as /tmp), and
 * the cache itself must be the effective user's and writable by no one else.
 * Missing directories are made, 0700.  libdebuginfod is then handed the
 * directory as opened (/proc/self/fd/N), so nobody can swap it for another.
 * NULL with errno: ENOENT (no HOME to place the default cache), ELOOP (a
 * symbolic link), EPERM (another user's, or writable by others), EINVAL (no
 * server, or a relative path), ENOSYS (libdebuginfod.so.1, loaded then, is
 * missing), or as open(2) and mkdir(2).
 */
struct fg_debuginfod *fg_debuginfod_new(const struct fg_debuginfod_opts *o);
/*
 * libdebuginfod's default cache directory, the one used when opts.cache is
 * NULL: 0, or -ENOENT when neither XDG_CACHE_HOME nor HOME is an absolute path.
 */
int fg_debuginfod_default_cache(char *buf, size_t size);
/* Where the cache is, as named (for messages). */
const char *fg_debuginfod_cache_path(const struct fg_debuginfod *c);
/*
 * Ask for the debug file of a build-id.  FG_DBGI_PENDING: the answer comes
 * later through fg_debuginfod_collect.  Otherwise it is done, in *res: served
 * from the cache, or timed out (the budget is spent).  -EALREADY when that
 * build-id was asked for before (its answer comes once), -EINVAL for an empty
 * or oversized build-id.
 */
int fg_debuginfod_request(struct fg_debuginfod *c, const uint8_t *id, size_t len, void *tag,
			  struct fg_debuginfod_result *res);
/*
 * Take one finished request: true with *res filled, false when none is
 * finished (call it until then: the event descriptor is read once for all).
 * Requests outstanding when the budget is spent come out timed out.
 */
bool fg_debuginfod_collect(struct fg_debuginfod *c, struct fg_debuginfod_result *res);
/* Requests not collected yet (outstanding or finished). */
unsigned fg_debuginfod_outstanding(struct fg_debuginfod *c);
/* Readable when a request may be collected (poll it with the input), or -1. */
int fg_debuginfod_event_fd(const struct fg_debuginfod *c);
/* Milliseconds until the budget is spent with the requests outstanding; -1: none. */
int fg_debuginfod_remaining_ms(struct fg_debuginfod *c);
/* Wait at most timeout_ms (-1: the budget) for a request to be collected. */
void fg_debuginfod_wait(struct fg_debuginfod *c, int timeout_ms);
void fg_debuginfod_stats(struct fg_debuginfod *c, struct fg_debuginfod_stats *st);
/*
 * A debug file fetched (its path as fg_debuginfod_result.df.path gives it,
 * CACHE/HEX/debuginfo) may name a supplementary (dwz) file in its
 * .gnu_debugaltlink, as Debian's do: debuginfod serves that one too, by its
 * build-id, and the worker that fetched the debug file fetches it into the
 * same cache, as one with it (the same budget; once per build-id; counted in
 * sup_found, sup_missing).  This gives where it is: CACHE/HEX-OF-ID/debuginfo
 * into buf.  False when debug_path is not such a cache's file (or buf is too
 * small).  lib/dwarf.c looks there last; what it finds is checked by build-id.
 */
bool fg_debuginfod_sibling(const char *debug_path, const uint8_t *id, size_t len, char *buf,
			   size_t size);
/* Aborts the fetches under way (within about a second) and waits for the threads. */
void fg_debuginfod_free(struct fg_debuginfod *c);

#endif
