// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/debugfile.c: where separate debug files are looked for, and which are
 * taken (build-id, CRC).  ELF files: this test's own executable, copied and
 * changed with objcopy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/debugfile.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"
#include "unit.h"

static char dir[] = "/tmp/fg-debugfile-XXXXXX";
static char exe[4096]; /* this test's executable (/proc/self/exe is the shell's in sh()) */
static struct fg_elfsyms *self;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static struct fg_elfsyms *elf_of(const char *path)
{
	int fd = fg_open_regular(path, FG_ELF_MAX_FILE, NULL);
	struct fg_elfsyms *e;

	if (fd < 0)
		return NULL;
	e = fg_elfsyms_open_fd(fd);
	close(fd);
	return e;
}

struct places {
	char list[16][4096];
	int n;
};

static int collect(const char *path, void *arg)
{
	struct places *p = arg;

	if (p->n < 16)
		snprintf(p->list[p->n++], sizeof(p->list[0]), "%s", path);
	return 0;
}

TEST(places_in_gdb_order_under_the_prefix_then_root)
{
	static const uint8_t id[] = {0xab, 0xcd, 0xef, 0x01};
	struct fg_debug_want w = {
	    .build_id = id,
	    .build_id_len = sizeof(id),
	    .debuglink = "prog.debug",
	    .path = "/usr/bin/prog",
	    .prefix = "/root/of/ns",
	};
	struct places p = {.n = 0};

	CHECK_INT(fg_debugfile_each_place(&w, collect, &p), 0);
	CHECK_INT(p.n, 8);
	CHECK_STR(p.list[0], "/root/of/ns/usr/lib/debug/.build-id/ab/cdef01.debug");
	CHECK_STR(p.list[1], "/root/of/ns/usr/bin/prog.debug");
	CHECK_STR(p.list[2], "/root/of/ns/usr/bin/.debug/prog.debug");
	CHECK_STR(p.list[3], "/root/of/ns/usr/lib/debug/usr/bin/prog.debug");
	CHECK_STR(p.list[4], "/usr/lib/debug/.build-id/ab/cdef01.debug");
	CHECK_STR(p.list[7], "/usr/lib/debug/usr/bin/prog.debug");
	/* no prefix: once; a debuglink naming the file itself, or a path, is skipped */
	w.prefix = NULL;
	w.debuglink = "prog";
	p.n = 0;
	fg_debugfile_each_place(&w, collect, &p);
	CHECK_INT(p.n, 3);
	CHECK_STR(p.list[1], "/usr/bin/.debug/prog");
	w.debuglink = "../../etc/shadow";
	p.n = 0;
	fg_debugfile_each_place(&w, collect, &p);
	CHECK_INT(p.n, 1);
}

TEST(found_by_build_id_under_a_prefix)
{
	char hex[2 * FG_BUILD_ID_MAX + 2], path[4096];
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;

	CHECK(self && self->build_id_len >= 2);
	fg_build_id_hex(self->build_id, self->build_id_len, hex, true);
	snprintf(path, sizeof(path), "%s/root/usr/lib/debug/.build-id/%s.debug", dir, hex);
	CHECK(sh("mkdir -p \"$(dirname '%s')\" && cp %s '%s'", path, exe, path) == 0);
	snprintf(path, sizeof(path), "%s/root", dir);
	fg_debug_want_init(&w, self, "/usr/bin/prog", path);
	CHECK_INT(fg_debugfile_find(&w, &df), 0);
	CHECK(df.fd >= 0 && df.elf && df.path);
	CHECK(strstr(df.path, "/root/usr/lib/debug/.build-id/") != NULL);
	CHECK_INT(df.elf->build_id_len, self->build_id_len);
	fg_debugfile_release(&df);
	CHECK_INT(df.fd, -1);
}

TEST(another_build_id_is_refused)
{
	char hex[2 * FG_BUILD_ID_MAX + 2], path[4096], other[4096];
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;
	int fd;

	fg_build_id_hex(self->build_id, self->build_id_len, hex, true);
	snprintf(path, sizeof(path), "%s/bad/usr/lib/debug/.build-id/%s.debug", dir, hex);
	snprintf(other, sizeof(other), "%s/other", dir);
	/* the same program with another build-id */
	CHECK(sh("objcopy --remove-section=.note.gnu.build-id %s '%s' && "
		 "mkdir -p \"$(dirname '%s')\"",
		 exe, other, path) == 0);
	CHECK(sh("cp '%s' '%s'", other, path) == 0);
	snprintf(path, sizeof(path), "%s/bad", dir);
	fg_debug_want_init(&w, self, "/usr/bin/prog", path);
	CHECK_INT(fg_debugfile_find(&w, &df), -ENOENT);
	CHECK_INT(df.fd, -1);
	fd = open(other, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_INT(fg_debugfile_check(fd, &w, NULL), -ESTALE);
	close(fd);
}

TEST(found_by_debuglink_and_crc_without_build_id)
{
	char bin[4096], dbg[4096];
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;
	struct fg_elfsyms *e;

	snprintf(bin, sizeof(bin), "%s/link/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/link/.debug/prog.dbg", dir);
	CHECK(sh("mkdir -p \"$(dirname '%s')\" && objcopy --remove-section=.note.gnu.build-id "
		 "%s '%s'",
		 dbg, exe, dbg) == 0);
	CHECK(sh("objcopy --strip-debug --remove-section=.note.gnu.build-id "
		 "--add-gnu-debuglink='%s' %s '%s'",
		 dbg, exe, bin) == 0);
	e = elf_of(bin);
	CHECK(e && e->debuglink && !e->build_id_len);
	fg_debug_want_init(&w, e, bin, "");
	CHECK_INT(fg_debugfile_find(&w, &df), 0);
	CHECK(strstr(df.path, "/link/.debug/prog.dbg") != NULL);
	fg_debugfile_release(&df);
	/* a file with the name but not the CRC */
	CHECK(sh("cp %s '%s'", exe, dbg) == 0);
	CHECK_INT(fg_debugfile_find(&w, &df), -ENOENT);
	fg_elfsyms_free(e);
}

TEST(a_fifo_is_not_opened)
{
	char hex[2 * FG_BUILD_ID_MAX + 2], path[4096];
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;

	fg_build_id_hex(self->build_id, self->build_id_len, hex, true);
	snprintf(path, sizeof(path), "%s/fifo/usr/lib/debug/.build-id/%s.debug", dir, hex);
	CHECK(sh("mkdir -p \"$(dirname '%s')\" && mkfifo '%s'", path, path) == 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	fg_debug_want_init(&w, self, "/usr/bin/prog", path);
	CHECK_INT(fg_debugfile_find(&w, &df), -ENOENT);
}

int main(void)
{
	int fd;

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || !mkdtemp(dir))
		return 1;
	exe[n] = '\0';
	fd = open("/proc/self/exe", O_RDONLY);
	self = fd >= 0 ? fg_elfsyms_open_fd(fd) : NULL;
	if (fd >= 0)
		close(fd);
	RUN(places_in_gdb_order_under_the_prefix_then_root);
	RUN(found_by_build_id_under_a_prefix);
	RUN(another_build_id_is_refused);
	RUN(found_by_debuglink_and_crc_without_build_id);
	RUN(a_fifo_is_not_opened);
	fg_elfsyms_free(self);
	sh("rm -rf '%s'", dir);
	return unit_done();
}
