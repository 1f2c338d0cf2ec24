/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening and reading files that someone else chose.  fg-sym usually runs as
 * root and opens the files other users' processes mapped: it must never block
 * on a FIFO or a device, nor read without bound.  These helpers accept regular
 * files only, open them non-blocking and bound what they read.
 */
#ifndef FG_SAFEIO_H
#define FG_SAFEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Open a regular file for reading: stat first (a FIFO or a device is refused
 * before open() is called), open with O_NONBLOCK | O_NOCTTY | O_CLOEXEC, then
 * fstat again.  Returns the descriptor, or -errno (-EINVAL for a file that is
 * not regular, -EFBIG when larger than max_size unless max_size is 0).
 * `st` (optional) receives the descriptor's fstat.
 */
int fg_safeio_open_regular(const char *path, uint64_t max_size, struct stat *st);
/* The same relative to a directory descriptor (openat semantics). */
int fg_safeio_open_regular_at(int dirfd, const char *path, uint64_t max_size, struct stat *st);
/*
 * fg_safeio_open_regular for a file that should hold data (an ELF file, a map):
 * pseudo files that call themselves regular (procfs, sysfs and the like, where
 * a read can have effects, such as /proc/kmsg) are refused too (-EINVAL).
 */
int fg_safeio_open_data(const char *path, uint64_t max_size, struct stat *st);

/*
 * fg_safeio_open_data for a path that others may have built, below the directory
 * `dirfd` (AT_FDCWD, a process root, --symfs): no symbolic link is followed
 * anywhere on the way.  Each directory of `path` (relative; "." and empty
 * components are skipped) is opened with O_NOFOLLOW | O_DIRECTORY, the file
 * itself with O_NOFOLLOW.  -ELOOP when a component is a symbolic link,
 * -EINVAL for an absolute path or "..", else as fg_safeio_open_data.
 */
int fg_safeio_open_data_beneath(int dirfd, const char *path, uint64_t max_size, struct stat *st);

/*
 * Open, and create when `create` (each missing directory made with mode
 * 0700), the directory `path` (absolute) that the running user keeps private
 * files in, such as a cache.  No symbolic link is followed on the way; every
 * directory on it must belong to the running user or to root, and the last
 * one must also be writable by its owner alone; one above it may be writable
 * by others only when sticky (/tmp).  "/" itself is refused (-EINVAL).  So a directory that another
 * user controls (a home directory reached through `sudo -E`, a symbolic link
 * to elsewhere) is never written to, nor read from.
 *
 * Returns a descriptor of the directory (O_PATH, for the *at() calls), or
 * -errno: -ELOOP a component is a symbolic link, -EPERM it belongs to another
 * user (or the last one is writable by others), -ENOTDIR not a directory,
 * -ENOENT missing and not `create`.  For -ELOOP, -EPERM and -ENOTDIR, `bad`
 * (if not NULL) receives the path up to the component refused and *owner its
 * owner (if not NULL).
 */
int fg_safeio_private_dir_open(const char *path, bool create, char *bad, size_t badsize,
			       uid_t *owner);

/*
 * Why fg_safeio_private_dir_open() refused a directory, for a message:
 * "'BAD' belongs to user N, not to you or root", "'BAD' is a symbolic link",
 * "... is not a directory", "... is writable by other users", or the error's
 * text for any other `err`, into buf.  True when it was refused for safety
 * (-EPERM, -ELOOP, -ENOTDIR): a refusal worth saying without -v.
 */
bool fg_safeio_dir_refusal(char *buf, size_t size, int err, const char *bad, uid_t owner);

/*
 * A private directory kept within bounds (the tables kept between runs, the
 * kernel's types): past max_files files or max_bytes bytes (0: no bound on
 * bytes), the least recently modified are removed until at most to_files
 * and to_bytes (0: none) remain.
 */
struct fg_dir_bounds {
	uint64_t max_files, max_bytes, to_files, to_bytes;
};

/* What fg_safeio_dir_trim() counted, and removed. */
struct fg_dir_count {
	uint64_t files, bytes; /* those left */
	uint64_t removed;
};

/*
 * The regular files of directory dirfd whose name `accept` takes (NULL:
 * every name not starting with '.'), counted into *out and trimmed to `b`.
 * Symbolic links are neither followed nor counted.  0, or -errno when the
 * directory cannot be read.
 */
int fg_safeio_dir_trim(int dirfd, bool (*accept)(const char *name), const struct fg_dir_bounds *b,
		       struct fg_dir_count *out);

/*
 * Read the whole of `fd` from its current position into a new buffer of at
 * most `max` bytes (NUL-terminated, so text can be parsed in place).  Files
 * like /proc/kallsyms report size 0, so this reads until the end.  0 or
 * -errno (-EFBIG when the data exceeds `max`).
 */
int fg_safeio_read_all(int fd, size_t max, char **data, size_t *len);

/* fg_safeio_open_regular + fg_safeio_read_all. */
int fg_safeio_read_file(const char *path, size_t max, char **data, size_t *len);

#endif
