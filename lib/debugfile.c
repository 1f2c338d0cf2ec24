// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/debugfile.h"
#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/hash.h"
#include "fg/safeio.h"
#include "fg/util.h"

#define MIN_ELF_SIZE 64 /* bytes: smaller is no ELF file */

void fg_debugfile_want_init(struct fg_debug_want *w, const struct fg_elfsyms *e, const char *path,
			    const char *prefix)
{
	memset(w, 0, sizeof(*w));
	w->build_id = e->build_id_len ? e->build_id : NULL;
	w->build_id_len = e->build_id_len;
	w->debuglink = e->debuglink;
	w->debuglink_crc = e->debuglink_crc;
	w->path = path;
	w->prefix = prefix;
}

int fg_debugfile_check(int fd, const struct fg_debug_want *w, struct fg_elfsyms **elf)
{
	struct fg_elfsyms *d = fg_elfsyms_open_fd(fd);
	bool ok;

	if (elf)
		*elf = NULL;
	if (!d)
		return -errno;
	if (w->build_id_len) {
		ok = d->build_id_len == w->build_id_len &&
		     memcmp(d->build_id, w->build_id, w->build_id_len) == 0;
	} else {
		uint32_t crc;

		ok = w->debuglink && fg_elf_crc32(fd, &crc) == 0 && crc == w->debuglink_crc;
	}
	if (!ok || !elf) {
		fg_elfsyms_free(d);
		return ok ? 0 : -ESTALE;
	}
	*elf = d;
	return 0;
}

int fg_debugfile_each_place(const struct fg_debug_want *w, int (*fn)(const char *path, void *arg),
			    void *arg)
{
	static const char *const link_fmts[] = {
	    "%s%.*s/%s",	       /* next to the file */
	    "%s%.*s/.debug/%s",	       /* in its .debug/ */
	    "%s/usr/lib/debug%.*s/%s", /* under /usr/lib/debug */
	};
	static const char *const vdso_fmts[] = {
	    "%s/lib/modules/%s/vdso/vdso64.so",		      /* make vdso_install */
	    "%s/usr/lib/debug/lib/modules/%s/vdso/vdso64.so", /* a kernel debug package */
	};
	const char *pre = w->prefix ? w->prefix : "";
	const char *prefixes[2] = {pre, ""};
	const char *slash = w->path ? strrchr(w->path, '/') : NULL;
	bool link = w->debuglink && *w->debuglink && !strchr(w->debuglink, '/') && slash;
	char path[PATH_MAX * 2];
	int r;

	for (int pi = 0; pi < 2; pi++) {
		if (pi == 1 && !*pre)
			break;
		if (w->build_id_len >= 2) {
			char hex[2 * FG_BUILD_ID_MAX + 2];

			fg_build_id_hex(w->build_id, w->build_id_len, hex, true);
			snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%s.debug",
				 prefixes[pi], hex);
			if ((r = fn(path, arg)) != 0)
				return r;
		}
		for (size_t i = 0; w->vdso_release && i < FG_ARRAY_SIZE(vdso_fmts); i++) {
			snprintf(path, sizeof(path), vdso_fmts[i], prefixes[pi], w->vdso_release);
			if ((r = fn(path, arg)) != 0)
				return r;
		}
		if (!link)
			continue;
		int dirlen = (int)(slash - w->path);

		for (size_t i = 0; i < FG_ARRAY_SIZE(link_fmts); i++) {
			if (i == 0 && strcmp(slash + 1, w->debuglink) == 0)
				continue; /* the file itself */
			snprintf(path, sizeof(path), link_fmts[i], prefixes[pi], dirlen, w->path,
				 w->debuglink);
			if ((r = fn(path, arg)) != 0)
				return r;
		}
	}
	return 0;
}

struct find_ctx {
	const struct fg_debug_want *w;
	struct fg_debugfile *df;
};

static int try_place(const char *path, void *arg)
{
	struct find_ctx *c = arg;
	struct stat st;
	int fd;

	fd = fg_safeio_open_data(path, FG_ELF_MAX_FILE, &st);
	if (fd < 0)
		return 0;
	if (st.st_size < MIN_ELF_SIZE || fg_debugfile_check(fd, c->w, &c->df->elf) < 0) {
		close(fd);
		return 0;
	}
	c->df->fd = fd;
	c->df->path = fg_xstrdup(path);
	return 1;
}

int fg_debugfile_find(const struct fg_debug_want *w, struct fg_debugfile *df)
{
	struct find_ctx c = {.w = w, .df = df};

	df->fd = -1;
	df->path = NULL;
	df->elf = NULL;
	return fg_debugfile_each_place(w, try_place, &c) ? 0 : -ENOENT;
}

void fg_debugfile_release(struct fg_debugfile *df)
{
	if (!df)
		return;
	if (df->fd >= 0)
		close(df->fd);
	free(df->path);
	fg_elfsyms_free(df->elf);
	df->fd = -1;
	df->path = NULL;
	df->elf = NULL;
}
