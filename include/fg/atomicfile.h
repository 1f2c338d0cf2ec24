/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way the tools write an output file (every -o, fg-fold's windows,
 * the kernel-symbol cache).  The data goes to a new temporary file in the
 * same directory, which replaces the file only once everything is written
 * and flushed: a failure (a full disk, a signal, a crash) leaves no partial
 * file behind, and an existing file as it was.
 *
 *	struct fg_atomic out;
 *	if (fg_atomic_open(&out, "cpu.folded", 0) < 0) ...error...
 *	fprintf(out.fp, ...);
 *	if (fg_atomic_commit(&out) < 0) ...error: nothing was replaced...
 *
 * What the path names decides how it is written:
 *
 *   - nothing, or a regular file: a new file is made and renamed over the
 *     name.  The old file's contents are never opened or truncated, so a hard
 *     link to someone else's file, planted under the name, is replaced rather
 *     than written to.
 *   - a symbolic link: followed (written in place, as a shell's redirection
 *     would, the link kept) only when the link belongs to the user who writes
 *     or to root, as /dev/stdout does.  Another user's link is refused with
 *     -EPERM, wherever it is: a user who plants /tmp/out.svg -> /etc/passwd
 *     cannot make root write there, fs.protected_symlinks or not.
 *   - a FIFO or a socket: written in place when it belongs to the user who
 *     writes or to root; another user's is refused with -EPERM, so that root
 *     never hands its output to a reader someone else planted.
 *   - a device (/dev/null, a terminal): written in place.
 *
 * The directories on the way are taken as given.
 *
 * Modes: a new file gets 0666 less the umask, or 0600 with FG_OUT_PRIVATE
 * (captures and perf text: kernel addresses, other users' mappings).  A
 * regular file replaced keeps its permission bits (0777, less those of
 * others with FG_OUT_PRIVATE) only when it belongs to the user who writes;
 * another user's file is replaced as if new.  Set-user-ID, set-group-ID and
 * sticky bits are never carried over.
 */
#ifndef FG_ATOMICFILE_H
#define FG_ATOMICFILE_H

#include <stdio.h>

enum {
	FG_OUT_PRIVATE = 1 << 0, /* the owner's alone: new files 0600 */
	FG_OUT_STREAM = 1 << 1,	 /* renamed into place at once: a long run's file grows there */
	FG_OUT_FD = 1 << 2,	 /* no FILE: write to .fd */
};

struct fg_atomic {
	FILE *fp;   /* write here (NULL with FG_OUT_FD) */
	int fd;	    /* the descriptor under fp, or to write to with FG_OUT_FD */
	int dirfd;  /* what path is relative to */
	char *path; /* the name written */
	char *tmp;  /* the temporary file; NULL when written in place or streamed */
};

/*
 * Open `path` for writing by the rules above, with FG_OUT_* `flags`.  0, or
 * -errno with nothing created (-EPERM: another user's link or FIFO).  With
 * FG_OUT_STREAM, the new file takes the name at once (a partial capture
 * stays to be read, as fg-sample's must); commit only closes it then.
 */
int fg_atomic_open(struct fg_atomic *a, const char *path, unsigned flags);
/* The same, `path` relative to the directory `dirfd` (or AT_FDCWD). */
int fg_atomic_openat(struct fg_atomic *a, int dirfd, const char *path, unsigned flags);

/*
 * Flush, sync and close the data, then rename the temporary file over the
 * path.  0, or -errno (the write or rename error) with the temporary file
 * removed and the path untouched.  `a` is released either way.
 */
int fg_atomic_commit(struct fg_atomic *a);

/* Give up: close and remove the temporary file.  Safe on a released or zeroed struct. */
void fg_atomic_abort(struct fg_atomic *a);

#endif
