/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fast line reader over a file descriptor: large reads, memchr for the
 * newline, lines handed out in place without copying.  Counts lines and
 * bytes so that diagnostics can name "FILE:LINE" or a byte offset.
 */
#ifndef FG_LINES_H
#define FG_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_lines {
	int fd;
	bool own_fd;
	bool eof;
	const char *name; /* for messages: the path, or "<stdin>" */
	char *buf;
	size_t cap;
	size_t start;	   /* first unread byte */
	size_t end;	   /* end of valid data */
	uint64_t lineno;   /* number of the line last returned, from 1 */
	uint64_t offset;   /* byte offset of the line last returned */
	uint64_t consumed; /* bytes handed out so far */
	size_t max_line;   /* longer lines are skipped (-E2BIG); 0: no limit */
};

/* Open `path` for reading; NULL or "-" is standard input.  0 or -errno. */
int fg_lines_open(struct fg_lines *l, const char *path);
/* Read from an open descriptor, which stays the caller's. */
void fg_lines_init_fd(struct fg_lines *l, int fd, const char *name);
/*
 * The next line, without its '\n' (a final line without one is returned too).
 * Returns 1 with *line and *len set, 0 at the end, -errno on a read error.
 * The line stays valid until the next call.  A line of max_line bytes or more
 * (when max_line is set) is read past without being kept: the call returns
 * -E2BIG, lineno and offset name that line, and the next call goes on after it.
 */
int fg_lines_next(struct fg_lines *l, const char **line, size_t *len);
/*
 * Look at up to `want` bytes ahead without consuming them (fewer at the end
 * of the input).  Returns 0 or -errno.
 */
int fg_lines_peek(struct fg_lines *l, size_t want, const char **data, size_t *len);
/* Close (if opened by fg_lines_open) and free.  Safe on a zeroed struct. */
void fg_lines_release(struct fg_lines *l);

#endif
