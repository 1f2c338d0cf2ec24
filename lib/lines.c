// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/lines.h"

#define LINES_BUF (1024 * 1024)

void fg_lines_init_fd(struct fg_lines *l, int fd, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->name = name;
}

int fg_lines_open(struct fg_lines *l, const char *path)
{
	int fd;

	if (!path || strcmp(path, "-") == 0) {
		fg_lines_init_fd(l, STDIN_FILENO, "<stdin>");
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fg_lines_init_fd(l, fd, path);
	l->own_fd = true;
	return 0;
}

void fg_lines_release(struct fg_lines *l)
{
	if (!l)
		return;
	if (l->own_fd && l->fd >= 0)
		close(l->fd);
	free(l->buf);
	l->buf = NULL;
	l->fd = -1;
	l->own_fd = false;
}

/* Read more data after what is buffered; 1 read something, 0 end, -errno. */
static int fill(struct fg_lines *l)
{
	ssize_t n;

	if (l->eof)
		return 0;
	if (l->start > 0 && (l->start == l->end || l->end == l->cap)) {
		memmove(l->buf, l->buf + l->start, l->end - l->start);
		l->end -= l->start;
		l->start = 0;
	}
	if (l->end == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : LINES_BUF;

		l->buf = fg_xrealloc(l->buf, cap);
		l->cap = cap;
	}
	do
		n = read(l->fd, l->buf + l->end, l->cap - l->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0) {
		l->eof = true;
		return 0;
	}
	l->end += (size_t)n;
	return 1;
}

/* drop the line being read, up to its newline, keeping no more than a buffer of it */
static int skip_line(struct fg_lines *l)
{
	uint64_t skipped = 0;

	for (;;) {
		char *p = l->buf + l->start;
		char *nl = memchr(p, '\n', l->end - l->start);

		if (nl) {
			skipped += (uint64_t)(nl - p) + 1;
			l->start += (size_t)(nl - p) + 1;
			break;
		}
		skipped += l->end - l->start;
		l->start = l->end;
		int r = fill(l);
		if (r < 0)
			return r;
		if (r == 0)
			break;
	}
	l->lineno++;
	l->offset = l->consumed;
	l->consumed += skipped;
	return -E2BIG;
}

int fg_lines_next(struct fg_lines *l, const char **line, size_t *len)
{
	size_t scanned = 0;

	for (;;) {
		char *p = l->buf ? l->buf + l->start : NULL;
		size_t avail = l->end - l->start;
		char *nl = avail > scanned ? memchr(p + scanned, '\n', avail - scanned) : NULL;

		if (nl) {
			*line = p;
			*len = (size_t)(nl - p);
			l->start += *len + 1;
			goto got;
		}
		scanned = avail;
		if (l->max_line && avail >= l->max_line)
			return skip_line(l);
		int r = fill(l);
		if (r < 0)
			return r;
		if (r == 0) {
			if (l->start == l->end)
				return 0;
			*line = l->buf + l->start;
			*len = l->end - l->start;
			l->start = l->end;
			goto got;
		}
	}
got:
	l->lineno++;
	l->offset = l->consumed;
	l->consumed = l->consumed + *len + 1;
	return 1;
}

int fg_lines_peek(struct fg_lines *l, size_t want, const char **data, size_t *len)
{
	while (l->end - l->start < want) {
		int r = fill(l);

		if (r < 0)
			return r;
		if (r == 0)
			break;
	}
	*data = l->buf ? l->buf + l->start : "";
	*len = l->end - l->start < want ? l->end - l->start : want;
	return 0;
}
