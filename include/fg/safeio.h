/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening and reading files that someone else chose.  fg-sym usually runs as
 * root and opens the files other users' processes mapped: it must never block
 * on a FIFO or a device, nor read without bound.  These helpers accept regular
 * files only, open them non-blocking and bound what they read.
 */
#ifndef FG_SAFEIO_H
#define FG_SAFEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Open a regular file for reading: stat first (a FIFO or a device is refused
 * before open() is called), open with O_NONBLOCK | O_NOCTTY | O_CLOEXEC, then
 * fstat again.  Returns the descriptor, or -errno (-EINVAL for a file that is
 * not regular, -EFBIG when larger than max_size unless max_size is 0).
 * `st` (optional) receives the descriptor's fstat.
 */
int fg_open_regular(const char *path, uint64_t max_size, struct stat *st);
/* The same relative to a directory descriptor (openat semantics). */
int fg_open_regular_at(int dirfd, const char *path, uint64_t max_size, struct stat *st);
/*
 * fg_open_regular for a file that should hold data (an ELF file, a map):
 * pseudo files that call themselves regular (procfs, sysfs and the like, where
 * a read can have effects, such as /proc/kmsg) are refused too (-EINVAL).
 */
int fg_open_data(const char *path, uint64_t max_size, struct stat *st);

/*
 * Read the whole of `fd` from its current position into a new buffer of at
 * most `max` bytes (NUL-terminated, so text can be parsed in place).  Files
 * like /proc/kallsyms report size 0, so this reads until the end.  0 or
 * -errno (-EFBIG when the data exceeds `max`).
 */
int fg_read_all(int fd, size_t max, char **data, size_t *len);

/* fg_open_regular + fg_read_all. */
int fg_read_file(const char *path, size_t max, char **data, size_t *len);

#endif
