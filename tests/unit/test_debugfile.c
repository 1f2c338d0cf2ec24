// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/debugfile.c: where separate debug files are looked for, which are
 * taken (build-id, CRC), and the debuginfod client's bounds, against
 * listeners on loopback made here.  ELF files: this test's own executable,
 * copied and changed with objcopy.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fg/debugfile.h"
#include "fg/debuginfod.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"
#include "unit.h"

/*
 * glibc 2.36's dprintf(3) to a regular file leaks the stream buffer it
 * allocates (later glibc frees it); libdebuginfod writes the settings files of
 * a new cache that way.  That one leak is suppressed by name, which needs the
 * slow unwinder.
 */
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:__vdprintf_internal\n";
}
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

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
	int fd = fg_safeio_open_regular(path, FG_ELF_MAX_FILE, NULL);
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

TEST(the_vdso_places_follow_the_build_id_one)
{
	static const uint8_t id[] = {0xab, 0xcd, 0xef, 0x01};
	struct fg_debug_want w = {
	    .build_id = id,
	    .build_id_len = sizeof(id),
	    .path = "[vdso]",
	    .prefix = "/symfs",
	    .vdso_release = "6.1.0-9-amd64",
	};
	struct places p = {.n = 0};

	CHECK_INT(fg_debugfile_each_place(&w, collect, &p), 0);
	CHECK_INT(p.n, 6);
	CHECK_STR(p.list[0], "/symfs/usr/lib/debug/.build-id/ab/cdef01.debug");
	CHECK_STR(p.list[1], "/symfs/lib/modules/6.1.0-9-amd64/vdso/vdso64.so");
	CHECK_STR(p.list[2], "/symfs/usr/lib/debug/lib/modules/6.1.0-9-amd64/vdso/vdso64.so");
	CHECK_STR(p.list[3], "/usr/lib/debug/.build-id/ab/cdef01.debug");
	CHECK_STR(p.list[4], "/lib/modules/6.1.0-9-amd64/vdso/vdso64.so");
	CHECK_STR(p.list[5], "/usr/lib/debug/lib/modules/6.1.0-9-amd64/vdso/vdso64.so");
	/* not the vdso: none of them */
	w.vdso_release = NULL;
	p.n = 0;
	fg_debugfile_each_place(&w, collect, &p);
	CHECK_INT(p.n, 2);
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
	fg_debugfile_want_init(&w, self, "/usr/bin/prog", path);
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
	fg_debugfile_want_init(&w, self, "/usr/bin/prog", path);
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
	fg_debugfile_want_init(&w, e, bin, "");
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
	fg_debugfile_want_init(&w, self, "/usr/bin/prog", path);
	CHECK_INT(fg_debugfile_find(&w, &df), -ENOENT);
}

/* --- debuginfod, against listeners on loopback --- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A socket listening on 127.0.0.1 that never accepts: the kernel completes connections. */
static int silent_listener(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

/* A port on 127.0.0.1 where nothing listens (bound, then closed). */
static int closed_port(void)
{
	int port, s = silent_listener(&port);

	close(s);
	return port;
}

/* A dwz file fetched with a debug file sits beside it in debuginfod's cache. */
TEST(the_supplementary_file_sits_beside_a_fetched_debug_file)
{
	const uint8_t id[] = {0xab, 0xcd, 0x01};
	char buf[256];

	CHECK(fg_debuginfod_sibling("/home/u/.cache/debuginfod_client/0123ef/debuginfo", id,
				    sizeof(id), buf, sizeof(buf)));
	CHECK_STR(buf, "/home/u/.cache/debuginfod_client/abcd01/debuginfo");
	/* only a cache's file: HEX/debuginfo */
	CHECK(!fg_debuginfod_sibling("/usr/lib/debug/.build-id/01/23ef.debug", id, sizeof(id), buf,
				     sizeof(buf)));
	CHECK(!fg_debuginfod_sibling("/tmp/notahex/debuginfo", id, sizeof(id), buf, sizeof(buf)));
	CHECK(!fg_debuginfod_sibling("/debuginfo", id, sizeof(id), buf, sizeof(buf)));
	CHECK(!fg_debuginfod_sibling("0123/debuginfo", id, sizeof(id), buf, sizeof(buf)));
	CHECK(!fg_debuginfod_sibling(NULL, id, sizeof(id), buf, sizeof(buf)));
	CHECK(!fg_debuginfod_sibling("/c/01/debuginfo", id, 0, buf, sizeof(buf)));
	CHECK(!fg_debuginfod_sibling("/c/01/debuginfo", id, sizeof(id), buf, 8));
}

TEST(cache_directory_rules)
{
	char path[4096], urls[64];
	struct fg_debuginfod_opts o = {.urls = urls};
	struct fg_debuginfod *c;
	struct stat st;

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", closed_port());
	/* made, 0700, with the directories above it */
	snprintf(path, sizeof(path), "%s/cache/a/b", dir);
	o.cache = path;
	c = fg_debuginfod_new(&o);
	CHECK(c != NULL);
	CHECK_STR(fg_debuginfod_cache_path(c), path);
	fg_debuginfod_free(c);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* a symbolic link, at the end or above */
	snprintf(path, sizeof(path), "%s/cache/link", dir);
	CHECK(symlink("a", path) == 0);
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == ELOOP);
	snprintf(path, sizeof(path), "%s/cache/link/b", dir);
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == ELOOP);
	/* writable by others */
	snprintf(path, sizeof(path), "%s/cache/a", dir);
	CHECK(chmod(path, 0777) == 0);
	snprintf(path, sizeof(path), "%s/cache/a/b", dir);
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == EPERM);
	snprintf(path, sizeof(path), "%s/cache/a", dir);
	CHECK(chmod(path, 01777) == 0); /* sticky, as /tmp: fine above */
	snprintf(path, sizeof(path), "%s/cache/a/b", dir);
	c = fg_debuginfod_new(&o);
	CHECK(c != NULL);
	fg_debuginfod_free(c);
	CHECK(chmod(path, 0770) == 0); /* but not the cache itself */
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == EPERM);
	/* relative, or / itself: refused */
	o.cache = "relative/cache";
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == EINVAL);
	o.cache = "//";
	errno = 0;
	CHECK(fg_debuginfod_new(&o) == NULL && errno == EINVAL);
}

TEST(a_server_that_refuses_fails_at_once)
{
	char path[4096], urls[64];
	struct fg_debuginfod_opts o = {.urls = urls, .cache = path};
	struct fg_debuginfod_result res;
	struct fg_debuginfod_stats st;
	struct fg_debuginfod *c;
	int tag = 7;

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", closed_port());
	snprintf(path, sizeof(path), "%s/refused", dir);
	c = fg_debuginfod_new(&o);
	CHECK(c != NULL);
	CHECK_INT(fg_debuginfod_request(c, self->build_id, self->build_id_len, &tag, &res),
		  FG_DBGI_PENDING);
	/* at most one fetch per build-id */
	CHECK_INT(fg_debuginfod_request(c, self->build_id, self->build_id_len, &tag, &res),
		  -EALREADY);
	while (fg_debuginfod_outstanding(c) && !fg_debuginfod_collect(c, &res))
		fg_debuginfod_wait(c, -1);
	CHECK(res.tag == &tag);
	CHECK_INT(res.state, FG_DBGI_FAILED);
	CHECK_INT(res.err, ECONNREFUSED);
	fg_debuginfod_stats(c, &st);
	CHECK_INT(st.failed, 1);
	CHECK_INT(st.last_err, ECONNREFUSED);
	fg_debuginfod_free(c);
}

TEST(a_server_that_never_answers_is_bounded_by_the_budget)
{
	char path[4096], urls[64];
	struct fg_debuginfod_opts o = {.urls = urls, .cache = path, .budget_ms = 300};
	struct fg_debuginfod_result res;
	struct fg_debuginfod_stats st;
	struct fg_debuginfod *c;
	uint8_t other[20] = {1, 2, 3};
	uint64_t t0, t1, t2;
	int port, s = silent_listener(&port), tag = 1;

	CHECK(s >= 0);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	snprintf(path, sizeof(path), "%s/silent", dir);
	c = fg_debuginfod_new(&o);
	CHECK(c != NULL);
	t0 = now_ms();
	CHECK_INT(fg_debuginfod_request(c, self->build_id, self->build_id_len, &tag, &res),
		  FG_DBGI_PENDING);
	while (fg_debuginfod_outstanding(c) && !fg_debuginfod_collect(c, &res))
		fg_debuginfod_wait(c, -1);
	t1 = now_ms();
	printf("# timed out after %llu ms (budget 300)\n", (unsigned long long)(t1 - t0));
	CHECK_INT(res.state, FG_DBGI_TIMEDOUT);
	CHECK(t1 - t0 >= 290 && t1 - t0 < 1000);
	CHECK_INT(fg_debuginfod_remaining_ms(c), -1);
	/* the budget is spent: what is asked for now times out at once */
	CHECK_INT(fg_debuginfod_request(c, other, sizeof(other), &tag, &res), FG_DBGI_TIMEDOUT);
	fg_debuginfod_stats(c, &st);
	CHECK_INT(st.timedout, 2);
	CHECK_INT(st.used_ms, 300);
	/* the transfer under way is aborted at its next progress call */
	fg_debuginfod_free(c);
	t2 = now_ms();
	printf("# the client ended %llu ms after the budget\n", (unsigned long long)(t2 - t1));
	CHECK(t2 - t1 < 2000);
	close(s);
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
	RUN(the_vdso_places_follow_the_build_id_one);
	RUN(found_by_build_id_under_a_prefix);
	RUN(another_build_id_is_refused);
	RUN(found_by_debuglink_and_crc_without_build_id);
	RUN(a_fifo_is_not_opened);
	RUN(the_supplementary_file_sits_beside_a_fetched_debug_file);
	RUN(cache_directory_rules);
	RUN(a_server_that_refuses_fails_at_once);
	RUN(a_server_that_never_answers_is_bounded_by_the_budget);
	fg_elfsyms_free(self);
	sh("rm -rf '%s'", dir);
	/* the sanitizer's symbolizer, at exit, would ask the last server named */
	unsetenv("DEBUGINFOD_URLS");
	return unit_done();
}
