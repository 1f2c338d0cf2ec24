// SPDX-License-Identifier: BSD-2-Clause
/* lib/events.c: -e arguments parsed, looked up in a made-up tracefs and in real ELF files. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/elfsyms.h"
#include "fg/events.h"
#include "fg/procmaps.h"
#include "fg/record.h"
#include "fg/safeio.h"
#include "unit.h"

__attribute__((noinline, used)) void unit_probe_target(void);
__attribute__((noinline, used)) void unit_probe_target(void)
{
	__asm__ volatile("nop; nop; nop; nop" ::: "memory");
}

static char why[512];

/* parse `arg`, which must succeed */
#define PARSE(arg, spec) CHECK_INT(fg_ev_parse((arg), (spec), why, sizeof(why)), 0)

TEST(parse_software_events)
{
	struct fg_ev_spec s;

	PARSE("page-faults", &s);
	CHECK_INT(s.kind, FG_EVENT_SOFTWARE);
	CHECK_INT(s.sw->config, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(!s.sw->time_based);
	fg_ev_spec_release(&s);
	PARSE("cs", &s); /* perf's alias */
	CHECK_STR(s.sw->name, "context-switches");
	fg_ev_spec_release(&s);
	PARSE("cpu-clock", &s);
	CHECK(s.sw->time_based);
	CHECK_INT(s.sw->config, PERF_COUNT_SW_CPU_CLOCK);
	fg_ev_spec_release(&s);
	CHECK(fg_ev_software_find("major-faults"));
	CHECK(fg_ev_software_find("migrations") == fg_ev_software_find("cpu-migrations"));
	CHECK(fg_ev_software_find("cycles") == NULL);
	fg_ev_spec_release(NULL);
}

TEST(parse_tracepoints)
{
	struct fg_ev_spec s;

	PARSE("tracepoint:syscalls:sys_enter_write", &s);
	CHECK_INT(s.kind, FG_EVENT_TRACEPOINT);
	CHECK_STR(s.category, "syscalls");
	CHECK_STR(s.tracepoint, "sys_enter_write");
	CHECK_STR(s.arg, "tracepoint:syscalls:sys_enter_write");
	fg_ev_spec_release(&s);
	/* perf's spelling */
	PARSE("sched:sched_switch", &s);
	CHECK_INT(s.kind, FG_EVENT_TRACEPOINT);
	CHECK_STR(s.category, "sched");
	fg_ev_spec_release(&s);
	PARSE("tracepoint:sys*:sys_enter_[rw]*", &s);
	CHECK_STR(s.tracepoint, "sys_enter_[rw]*");
	fg_ev_spec_release(&s);
}

TEST(parse_probes)
{
	struct fg_ev_spec s;

	PARSE("uprobe:/usr/bin/prog:target", &s);
	CHECK_INT(s.kind, FG_EVENT_UPROBE);
	CHECK_STR(s.path, "/usr/bin/prog");
	CHECK_STR(s.function, "target");
	CHECK_INT(s.offset, 0);
	fg_ev_spec_release(&s);
	PARSE("uprobe:prog:target+0x10", &s);
	CHECK_STR(s.function, "target");
	CHECK_INT(s.offset, 16);
	fg_ev_spec_release(&s);
	PARSE("uprobe:prog:target+12", &s);
	CHECK_INT(s.offset, 12);
	fg_ev_spec_release(&s);
	/* C++: the path ends at the first colon, the name may hold more; operator+ is a name */
	PARSE("uprobe:/lib/libx.so:ns::Klass::operator+", &s);
	CHECK_STR(s.path, "/lib/libx.so");
	CHECK_STR(s.function, "ns::Klass::operator+");
	CHECK_INT(s.offset, 0);
	fg_ev_spec_release(&s);
	PARSE("uretprobe:libc:mall*", &s);
	CHECK_INT(s.kind, FG_EVENT_URETPROBE);
	CHECK_STR(s.path, "libc");
	CHECK_STR(s.function, "mall*");
	fg_ev_spec_release(&s);
}

/* each bad argument is -EINVAL with a message naming it, and leaves nothing to free */
TEST(parse_refusals)
{
	static const struct {
		const char *arg, *msg;
	} bad[] = {
	    {"", "invalid event ''"},
	    {"page-fault", "unknown event 'page-fault' (fg-sample --list-events lists them)"},
	    {"cycles", "unknown event 'cycles'"},
	    {"page-faults:u", "invalid event 'page-faults:u': no modifiers"},
	    {"tracepoint:syscalls", "invalid tracepoint 'tracepoint:syscalls'"},
	    {"tracepoint:../..:x", "invalid tracepoint"},
	    {"tracepoint:a/b:c", "invalid tracepoint"},
	    {"tracepoint::x", "invalid tracepoint"},
	    {"a b:c", "unknown event 'a b:c'"},
	    {"uprobe:/bin/x", "invalid event 'uprobe:/bin/x' (uprobe:PATH:FUNCTION[+OFFSET])"},
	    {"uprobe::f", "invalid event"},
	    {"uprobe:/bin/x:", "invalid event"},
	    {"uretprobe:/bin/x:f+4", "a uretprobe takes no offset"},
	    {"uprobe:/bin/x:f+99999999999", "invalid offset in event"},
	    {"uprobe:/bin/x:f\n", "a control character"},
	};
	struct fg_ev_spec s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK_INT(fg_ev_parse(bad[i].arg, &s, why, sizeof(why)), -EINVAL);
		if (!strstr(why, bad[i].msg)) {
			printf("# '%s': '%s'\n", bad[i].arg, why);
			CHECK(0);
		}
		CHECK(s.arg == NULL && s.path == NULL && s.category == NULL);
	}
	/* a name with a newline is escaped in the message */
	CHECK_INT(fg_ev_parse("x\ny", &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "'x\\x0ay'"));
}

static void probe_name(char *out, size_t n, const char *path, const char *sym, bool ret)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_ev_probe_name(&b, path, sym, ret);
	snprintf(out, n, "%s", b.data);
	fg_buf_release(&b);
}

/* as perf probe names them */
TEST(probe_names)
{
	char n[256], longsym[300];

	probe_name(n, sizeof(n), "/usr/bin/prog", "target", false);
	CHECK_STR(n, "probe_prog:target");
	probe_name(n, sizeof(n), "/lib/x86_64-linux-gnu/libc.so.6", "malloc", true);
	CHECK_STR(n, "probe_libc:malloc__return");
	probe_name(n, sizeof(n), "my-prog", "foo.isra.0", false);
	CHECK_STR(n, "probe_my:foo");
	probe_name(n, sizeof(n), "/x/y", "memcpy@GLIBC_2.2.5", false);
	CHECK_STR(n, "probe_y:memcpy");
	probe_name(n, sizeof(n), "/x/y", ".hidden", false);
	CHECK_STR(n, "probe_y:hidden");
	probe_name(n, sizeof(n), "/x/y", "_ZN2ns4funcEv", false);
	CHECK_STR(n, "probe_y:_ZN2ns4funcEv");
	probe_name(n, sizeof(n), "/x/.z", "a$b", false);
	CHECK_STR(n, "probe_:a_b");
	memset(longsym, 'a', sizeof(longsym) - 1);
	longsym[sizeof(longsym) - 1] = '\0';
	probe_name(n, sizeof(n), "/x/y", longsym, false);
	CHECK_INT(strlen(n), FG_EV_PROBE_NAME_MAX);
	CHECK(fg_rec_event_name_ok(n, strlen(n)));
}

/* a made-up symbol table: C, a version, C++ overloads, Rust */
static struct fg_elf_sym fake_syms[] = {
    {0x1000, 0x40, "malloc", NULL},
    {0x1040, 0x20, "malloc_usable_size", NULL},
    {0x1060, 0x10, "memcpy@GLIBC_2.2.5", NULL},
    {0x1070, 0x10, "_ZN2ns4funcEv", NULL},
    {0x1080, 0x10, "_ZN2ns4funcEi", NULL},
    {0x1090, 0x10, "_ZN4core3fmt5write17h0123456789abcdefE", NULL},
    {0x10a0, 0x10, "free", NULL},
};

static struct fg_elf_load fake_loads[] = {{0x0, 0x2000, 0x0, 0x2000, 5}};

static struct fg_elfsyms fake = {
    .kind = FG_ELF_SYMTAB,
    .syms = fake_syms,
    .nsyms = sizeof(fake_syms) / sizeof(fake_syms[0]),
    .loads = fake_loads,
    .nloads = 1,
};

TEST(find_functions)
{
	struct fg_ev_func *f;
	size_t n;

	CHECK_INT(fg_ev_find_functions(&fake, "malloc", 10, &f, &n), 0);
	CHECK_INT(n, 1);
	CHECK_STR(f[0].symbol, "malloc");
	CHECK_INT(f[0].addr, 0x1000);
	free(f);
	CHECK_INT(fg_ev_find_functions(&fake, "mall*", 10, &f, &n), 0);
	CHECK_INT(n, 2);
	free(f);
	/* the version does not count */
	CHECK_INT(fg_ev_find_functions(&fake, "memcpy", 10, &f, &n), 0);
	CHECK_INT(n, 1);
	free(f);
	/* demangled: both overloads, in address order */
	CHECK_INT(fg_ev_find_functions(&fake, "ns::func", 10, &f, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(f[0].symbol, "_ZN2ns4funcEv");
	CHECK_STR(f[1].symbol, "_ZN2ns4funcEi");
	free(f);
	CHECK_INT(fg_ev_find_functions(&fake, "_ZN2ns4funcEi", 10, &f, &n), 0);
	CHECK_INT(n, 1);
	free(f);
	CHECK_INT(fg_ev_find_functions(&fake, "core::fmt::write", 10, &f, &n), 0);
	CHECK_INT(n, 1);
	free(f);
	CHECK_INT(fg_ev_find_functions(&fake, "core::*", 10, &f, &n), 0);
	CHECK_INT(n, 1);
	free(f);
	CHECK_INT(fg_ev_find_functions(&fake, "calloc", 10, &f, &n), -ENOENT);
	CHECK(f == NULL);
	CHECK_INT(fg_ev_find_functions(&fake, "*", 3, &f, &n), -E2BIG);
	CHECK_INT(n, 7);
	free(f);
}

TEST(addr_to_offset)
{
	struct fg_elf_load loads[] = {{0x400000, 0x1000, 0x0, 0x1000, 4},
				      {0x401000, 0x3000, 0x1000, 0x2000, 5}};
	struct fg_elfsyms e = {.loads = loads, .nloads = 2};
	uint64_t off;

	CHECK_INT(fg_ev_addr_to_offset(&e, 0x400010, &off), 0);
	CHECK_INT(off, 0x10);
	CHECK_INT(fg_ev_addr_to_offset(&e, 0x402abc, &off), 0);
	CHECK_INT(off, 0x2abc);
	/* in memory only (.bss), or nowhere */
	CHECK_INT(fg_ev_addr_to_offset(&e, 0x403100, &off), -ENOENT);
	CHECK_INT(fg_ev_addr_to_offset(&e, 0x10, &off), -ENOENT);
}

/* --- a made-up tracefs --- */

static char tracefs[256];

static void put(const char *rel, const char *text)
{
	char path[1024], *slash;

	snprintf(path, sizeof(path), "%s/%s", tracefs, rel);
	for (slash = path + strlen(tracefs) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

static void make_tracefs(void)
{
	snprintf(tracefs, sizeof(tracefs), "/tmp/fg-unit-tracefs-XXXXXX");
	if (!mkdtemp(tracefs))
		abort();
	put("events/enable", "0\n");
	put("events/header_page", "x\n");
	put("events/sched/sched_switch/id", "315\n");
	put("events/sched/sched_wakeup/id", "317\n");
	put("events/sched/enable", "0\n");
	put("events/syscalls/sys_enter_write/id", "840\n");
	put("events/syscalls/sys_enter_read/id", "842\n");
	put("events/syscalls/sys_exit_write/id", "839\n");
	put("events/broken/noid/format", "x\n");
	put("events/broken/badid/id", "what\n");
}

static int add(struct fg_evlist *l, const char *arg, const struct fg_ev_env *env)
{
	struct fg_ev_spec s;
	int err = fg_ev_parse(arg, &s, why, sizeof(why));

	if (!err)
		err = fg_evlist_add(l, &s, env, why, sizeof(why));
	fg_ev_spec_release(&s);
	return err;
}

TEST(tracefs_lookups)
{
	const char *dirs[] = {"/nonexistent", tracefs, NULL};
	struct fg_ev_env env = {.tracefs = tracefs};
	struct fg_evlist l = FG_EVLIST_INIT;
	char dir[256];

	CHECK_INT(fg_ev_tracefs_find(dirs, dir, sizeof(dir)), 0);
	CHECK_STR(dir, tracefs);
	CHECK_INT(fg_ev_tracefs_find(dirs + 2, dir, sizeof(dir)), -ENOENT);
	CHECK_INT(add(&l, "tracepoint:syscalls:sys_enter_write", &env), 0);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.ev[0].name, "syscalls:sys_enter_write");
	CHECK_INT(l.ev[0].config, 840);
	CHECK_INT(l.ev[0].kind, FG_EVENT_TRACEPOINT);
	CHECK_INT(l.ev[0].id, 0);
	/* a glob: every match, sorted, each its own event */
	CHECK_INT(add(&l, "sched:*", &env), 0);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.ev[1].name, "sched:sched_switch");
	CHECK_STR(l.ev[2].name, "sched:sched_wakeup");
	CHECK_INT(l.ev[2].id, 2);
	/* refusals leave the list as it was */
	CHECK_INT(add(&l, "sched:sched_swtch", &env), -ENOENT);
	CHECK(strstr(why, "no tracepoint 'sched:sched_swtch'"));
	CHECK_INT(add(&l, "nosuch:*", &env), -ENOENT);
	CHECK(strstr(why, "no tracepoint matches 'nosuch:*'"));
	CHECK_INT(add(&l, "syscalls:sys_*", &env), -EEXIST);
	CHECK(strstr(why, "given twice (as 'syscalls:sys_enter_write')"));
	CHECK_INT(l.n, 3);
	CHECK_INT(add(&l, "broken:noid", &env), -ENOENT);
	CHECK_INT(add(&l, "broken:badid", &env), -EINVAL);
	CHECK_INT(l.n, 3);
	struct fg_ev_env none = {0};
	CHECK_INT(add(&l, "sched:sched_switch", &none), -ENOENT);
	CHECK(strstr(why, "tracefs is not mounted"));
	fg_evlist_release(&l);
	CHECK_INT(l.n, 0);
}

TEST(software_list)
{
	struct fg_evlist l = FG_EVLIST_INIT;
	struct fg_ev_env env = {0};

	fg_evlist_default(&l);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.ev[0].name, "cpu-clock");
	CHECK(l.ev[0].time_based);
	fg_evlist_default(&l); /* only when empty */
	CHECK_INT(l.n, 1);
	CHECK(fg_evlist_has_time(&l));
	fg_evlist_release(&l);
	CHECK_INT(add(&l, "faults", &env), 0);
	CHECK_STR(l.ev[0].name, "page-faults");
	CHECK(!fg_evlist_has_time(&l));
	CHECK(fg_evlist_has(&l, FG_EVENT_SOFTWARE));
	CHECK(!fg_evlist_has(&l, FG_EVENT_UPROBE));
	CHECK_INT(add(&l, "page-faults", &env), -EEXIST);
	CHECK_INT(add(&l, "cs", &env), 0);
	CHECK_STR(l.ev[1].name, "context-switches");
	CHECK_INT(l.ev[1].config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	fg_evlist_release(&l);
	fg_evlist_release(NULL);
}

/* --- probes on a real file: this test program --- */

struct find {
	uintptr_t addr;
	uint64_t off;
	bool found;
};

static int find_fn(const struct fg_procmap *m, void *arg)
{
	struct find *f = arg;

	if (f->addr >= m->start && f->addr < m->end) {
		f->off = f->addr - m->start + m->pgoff;
		f->found = true;
		return 1;
	}
	return 0;
}

/* the file offset of one of our functions, as the kernel mapped it */
static uint64_t self_offset(uintptr_t addr)
{
	struct find f = {.addr = addr};
	char *data;
	size_t n;

	if (fg_safeio_read_file("/proc/self/maps", 1 << 24, &data, &n) < 0)
		return 0;
	fg_procmaps_parse(data, n, find_fn, &f, NULL);
	free(data);
	return f.found ? f.off : 0;
}

static char self[4096];

TEST(probes_on_a_real_file)
{
	struct fg_ev_env env = {0};
	struct fg_evlist l = FG_EVLIST_INIT;
	char arg[4200];
	uint64_t off = self_offset((uintptr_t)unit_probe_target);

	CHECK(off != 0);
	snprintf(arg, sizeof(arg), "uprobe:%s:unit_probe_target", self);
	CHECK_INT(add(&l, arg, &env), 0);
	CHECK_INT(l.n, 1);
	CHECK_INT(l.ev[0].kind, FG_EVENT_UPROBE);
	CHECK_INT(l.ev[0].file_offset, off);
	CHECK_STR(l.ev[0].symbol, "unit_probe_target");
	CHECK_STR(l.ev[0].path, self);
	CHECK_STR(l.ev[0].name, "probe_test_events:unit_probe_target");
	/* an offset into it: another event, and perf's suffix for the same name */
	snprintf(arg, sizeof(arg), "uprobe:%s:unit_probe_target+1", self);
	CHECK_INT(add(&l, arg, &env), 0);
	CHECK_INT(l.ev[1].file_offset, off + 1);
	CHECK_STR(l.ev[1].name, "probe_test_events:unit_probe_target_1");
	snprintf(arg, sizeof(arg), "uretprobe:%s:unit_probe_target", self);
	CHECK_INT(add(&l, arg, &env), 0);
	CHECK_INT(l.ev[2].kind, FG_EVENT_URETPROBE);
	CHECK_STR(l.ev[2].name, "probe_test_events:unit_probe_target__return");
	/* the same probe twice */
	snprintf(arg, sizeof(arg), "uprobe:%s:unit_probe_target+0", self);
	CHECK_INT(add(&l, arg, &env), -EEXIST);
	/* no such function, an offset past its end */
	snprintf(arg, sizeof(arg), "uprobe:%s:no_such_function", self);
	CHECK_INT(add(&l, arg, &env), -ENOENT);
	CHECK(strstr(why, "no function 'no_such_function' in '"));
	snprintf(arg, sizeof(arg), "uprobe:%s:unit_probe_target+100000", self);
	CHECK_INT(add(&l, arg, &env), -EINVAL);
	CHECK(strstr(why, "is beyond 'unit_probe_target'"));
	/* a glob over many functions: all of them, or refused when too many */
	snprintf(arg, sizeof(arg), "uprobe:%s:*", self);
	CHECK_INT(add(&l, arg, &env), -E2BIG);
	CHECK(strstr(why, "at most 256"));
	CHECK_INT(l.n, 3);
	fg_evlist_release(&l);
	/* files: missing, not regular, not ELF */
	CHECK_INT(add(&l, "uprobe:/nonexistent/x:f", &env), -ENOENT);
	CHECK(strstr(why, "no file '/nonexistent/x'"));
	CHECK_INT(add(&l, "uprobe:/dev/null:f", &env), -EINVAL);
	CHECK(strstr(why, "is not a regular file"));
	CHECK_INT(add(&l, "uprobe:/proc/self/status:f", &env), -ENOEXEC);
	CHECK(strstr(why, "is not an ELF file"));
	CHECK_INT(l.n, 0);
}

/* a bare name: in $PATH, then in the library directories, also as libNAME.so.N */
TEST(probes_by_bare_name)
{
	char dir[64] = "/tmp/fg-unit-bin-XXXXXX", lib[64] = "/tmp/fg-unit-lib-XXXXXX";
	char path[256], *data;
	size_t n;
	const char *libdirs[] = {lib, NULL};
	struct fg_ev_env env = {.path = "/nonexistent:", .libdirs = libdirs};
	struct fg_evlist l = FG_EVLIST_INIT;
	char envpath[300];

	CHECK(mkdtemp(dir) && mkdtemp(lib));
	CHECK_INT(fg_safeio_read_file(self, 64u << 20, &data, &n), 0);
	snprintf(path, sizeof(path), "%s/myprog", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0755);
	CHECK(fd >= 0 && write(fd, data, n) == (ssize_t)n);
	close(fd);
	snprintf(path, sizeof(path), "%s/libmine.so.3", lib);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, data, n) == (ssize_t)n);
	close(fd);
	free(data);
	snprintf(envpath, sizeof(envpath), "/nonexistent::%s", dir);
	env.path = envpath;
	CHECK_INT(add(&l, "uprobe:myprog:unit_probe_target", &env), 0);
	snprintf(path, sizeof(path), "%s/myprog", dir);
	CHECK_STR(l.ev[0].path, path);
	CHECK_STR(l.ev[0].name, "probe_myprog:unit_probe_target");
	CHECK_INT(add(&l, "uprobe:mine:unit_probe_target", &env), 0);
	snprintf(path, sizeof(path), "%s/libmine.so.3", lib);
	CHECK_STR(l.ev[1].path, path);
	CHECK_STR(l.ev[1].name, "probe_libmine:unit_probe_target");
	CHECK_INT(add(&l, "uprobe:nothere:f", &env), -ENOENT);
	CHECK(strstr(why, "no file 'nothere' in $PATH or the library directories"));
	fg_evlist_release(&l);
	/* the listing of a file's functions */
	struct fg_buf out = FG_BUF_INIT;
	CHECK_INT(fg_ev_list(&out, "uprobe:myprog:unit_probe_t*", &env, why, sizeof(why)), 1);
	snprintf(path, sizeof(path), "uprobe:%s/myprog:unit_probe_target", dir);
	CHECK(strncmp(out.data, path, strlen(path)) == 0);
	CHECK(strstr(out.data, "probe_myprog:unit_probe_target\n"));
	fg_buf_release(&out);
	snprintf(path, sizeof(path), "%s/myprog", dir);
	unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/libmine.so.3", lib);
	unlink(path);
	rmdir(lib);
}

TEST(listing)
{
	struct fg_ev_env env = {.tracefs = tracefs};
	struct fg_buf out = FG_BUF_INIT;
	long n;

	n = fg_ev_list(&out, NULL, &env, why, sizeof(why));
	/* software, 3 categories (broken, sched, syscalls), 2 probe lines */
	CHECK_INT(n, (long)fg_ev_nsoftware + 3 + 2);
	CHECK(strncmp(out.data, "cpu-clock ", 10) == 0);
	CHECK(strstr(out.data, "\npage-faults "));
	CHECK(strstr(out.data, "(or -e faults)"));
	CHECK(strstr(out.data, "\ntracepoint:sched:*"));
	CHECK(strstr(out.data, "tracepoints: 2\n"));
	CHECK(strstr(out.data, "tracepoints: 3\n"));
	CHECK(!strstr(out.data, "enable"));
	fg_buf_reset(&out);
	n = fg_ev_list(&out, "syscalls:*write", &env, why, sizeof(why));
	CHECK_INT(n, 2);
	CHECK(strncmp(out.data, "tracepoint:syscalls:sys_enter_write ", 36) == 0);
	CHECK(strstr(out.data, "\ntracepoint:syscalls:sys_exit_write "));
	fg_buf_reset(&out);
	CHECK_INT(fg_ev_list(&out, "*faults", &env, why, sizeof(why)), 5);
	fg_buf_reset(&out);
	CHECK_INT(fg_ev_list(&out, "tracepoint:s*", &env, why, sizeof(why)), 2);
	fg_buf_reset(&out);
	CHECK_INT(fg_ev_list(&out, "nothing*", &env, why, sizeof(why)), 0);
	CHECK_INT(out.len, 0);
	fg_buf_release(&out);
}

/* --- the event record --- */

TEST(event_records)
{
	struct fg_rec_event e = {.id = 3, .kind = FG_EVENT_TRACEPOINT, .config = 840, .period = 1};
	uint8_t buf[256];
	struct fg_rec rec;
	char reason[256];
	char *data;
	size_t len;
	FILE *f = open_memstream(&data, &len);
	int fds[2];

	CHECK(fg_rec_event_name_ok("syscalls:sys_enter_write", 24));
	CHECK(fg_rec_event_name_ok("probe_libc:malloc__return", 25));
	CHECK(!fg_rec_event_name_ok("", 0));
	CHECK(!fg_rec_event_name_ok("a b", 3));
	CHECK(!fg_rec_event_name_ok("a\nb", 3));
	CHECK(!fg_rec_event_name_ok("a/b", 3));
	memset(buf, 'a', sizeof(buf));
	CHECK(fg_rec_event_name_ok((char *)buf, FG_REC_EVENT_NAME_MAX));
	CHECK(!fg_rec_event_name_ok((char *)buf, FG_REC_EVENT_NAME_MAX + 1));

	CHECK(pipe(fds) == 0);
	struct fg_rec_writer *w = fg_rec_writer_new(fds[1]);
	struct fg_rec_header h;
	fg_rec_header_init(&h);
	CHECK_INT(fg_rec_write_header(w, &h), 0);
	CHECK_INT(fg_rec_write_event(w, &e, "syscalls:sys_enter_write"), 0);
	CHECK_INT(fg_rec_write_event(w, &e, "bad name"), -EINVAL);
	e.id = FG_REC_EVENTS_MAX;
	CHECK_INT(fg_rec_write_event(w, &e, "x"), -EINVAL);
	CHECK_INT(fg_rec_writer_free(w), 0);
	close(fds[1]);
	struct fg_rec_reader *r = fg_rec_reader_new(fds[0], "pipe");
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_EVENT);
	CHECK_INT(rec.event->id, 3);
	CHECK_INT(rec.event->config, 840);
	CHECK_STR(rec.event_name, "syscalls:sys_enter_write");
	CHECK_STR(fg_rec_type_name(FG_REC_EVENT), "event");
	fg_rec_print(f, &rec);
	fclose(f);
	CHECK(strstr(data, "event @200 id=3 kind=2 config=840 period=1 freq=0 flags=0x0 "
			   "name=syscalls:sys_enter_write\n"));
	free(data);
	CHECK_INT(fg_rec_next(r, &rec), 0);
	fg_rec_reader_free(r);
	close(fds[0]);

	/* damaged records: refused with a reason */
	struct {
		struct fg_rec_hdr h;
		struct fg_rec_event e;
		char name[16];
	} raw = {{FG_REC_EVENT, sizeof(raw)}, {.id = 1}, "ok"};
	CHECK_INT(fg_rec_parse(&raw, sizeof(raw), &rec, reason, sizeof(reason)), 0);
	memcpy(raw.name, "a\tb", 4);
	CHECK_INT(fg_rec_parse(&raw, sizeof(raw), &rec, reason, sizeof(reason)), -EPROTO);
	CHECK(strstr(reason, "bad event name"));
	memset(raw.name, 'x', sizeof(raw.name));
	CHECK_INT(fg_rec_parse(&raw, sizeof(raw), &rec, reason, sizeof(reason)), -EPROTO);
	CHECK(strstr(reason, "not NUL-terminated"));
	raw.name[0] = '\0';
	CHECK_INT(fg_rec_parse(&raw, sizeof(raw), &rec, reason, sizeof(reason)), -EPROTO);
	memcpy(raw.name, "ok", 3);
	raw.e.id = FG_REC_EVENTS_MAX;
	CHECK_INT(fg_rec_parse(&raw, sizeof(raw), &rec, reason, sizeof(reason)), -EPROTO);
	CHECK(strstr(reason, "event number 4096"));
	raw.e.id = 0;
	raw.h.size = sizeof(raw.h) + sizeof(raw.e);
	CHECK_INT(fg_rec_parse(&raw, raw.h.size, &rec, reason, sizeof(reason)), -EPROTO);
	/* the sample's flags carry the event in their top bits */
	CHECK_INT(FG_SAMPLE_EVENT(0x00790021u), 7);
	CHECK_INT(FG_SAMPLE_EVENT(0xfff00000u), 0xfff);
	CHECK_INT(0x00790021u & FG_SAMPLE_F_MASK, 0x21);
	CHECK_INT((0x00790021u & FG_SAMPLE_STATE_MASK) >> FG_SAMPLE_STATE_SHIFT, 9);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	make_tracefs();
	RUN(parse_software_events);
	RUN(parse_tracepoints);
	RUN(parse_probes);
	RUN(parse_refusals);
	RUN(probe_names);
	RUN(find_functions);
	RUN(addr_to_offset);
	RUN(tracefs_lookups);
	RUN(software_list);
	RUN(probes_on_a_real_file);
	RUN(probes_by_bare_name);
	RUN(listing);
	RUN(event_records);
	char rm[300];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", tracefs);
	if (system(rm) != 0)
		return 1;
	return unit_done();
}
