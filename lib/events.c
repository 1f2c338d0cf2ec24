// SPDX-License-Identifier: BSD-2-Clause
/* The events fg-sample takes stacks on: parsed, looked up, named (fg/events.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/demangle.h"
#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/escape.h"
#include "fg/events.h"
#include "fg/safeio.h"
#include "fg/util.h"

const struct fg_ev_software fg_ev_software[] = {
    {"cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK, true,
     "CPU time: a sample every 1/F s on each CPU (the default)"},
    {"task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, true,
     "time of the tasks on the CPUs, sampled as cpu-clock"},
    {"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, false, "page faults, minor and major"},
    {"minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, false, "page faults served without I/O"},
    {"major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false, "page faults that waited for I/O"},
    {"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, false,
     "a task leaving its CPU: its stack as it left"},
    {"cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS, false,
     "a task moved to another CPU"},
    {"alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS, false,
     "unaligned accesses the kernel fixed up"},
    {"emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS, false,
     "instructions the kernel emulated"},
};
const size_t fg_ev_nsoftware = FG_ARRAY_SIZE(fg_ev_software);

const char *const fg_tracefs_dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing", NULL};

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH "unknown"
#endif

const char *const fg_ev_libdirs[] = {
    "/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

static int say(char *why, size_t len, int err, const char *fmt, ...) FG_PRINTF(4, 5);

static int say(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* the text of a user's argument in a message, escaped */
#define QUOTE_MAX 256
#define Q(s, buf) fg_escape((s), (buf), sizeof(buf))

const struct fg_ev_software *fg_ev_software_find(const char *name)
{
	for (size_t i = 0; i < fg_ev_nsoftware; i++)
		if (strcmp(name, fg_ev_software[i].name) == 0 ||
		    (fg_ev_software[i].alias && strcmp(name, fg_ev_software[i].alias) == 0))
			return &fg_ev_software[i];
	return NULL;
}

/* `s` up to the first `c`, into buf */
static const char *prefix_of(const char *s, char c, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(s, (char[]){c, '\0'}), s);
	return buf;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* a tracepoint's category or name (or a glob of one): a directory name in tracefs, no more */
static bool tracepoint_word(const char *s, size_t n)
{
	if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    !strchr("_-.*?[]!", c))
			return false;
	}
	return true;
}

/* "CAT:NAME" into the spec's tracepoint: false when it is not one */
static bool parse_tracepoint(const char *s, struct fg_ev_spec *spec)
{
	const char *colon = strchr(s, ':');

	if (!colon || !tracepoint_word(s, (size_t)(colon - s)) ||
	    !tracepoint_word(colon + 1, strlen(colon + 1)))
		return false;
	spec->kind = FG_EVENT_TRACEPOINT;
	spec->category = fg_xstrndup(s, (size_t)(colon - s));
	spec->tracepoint = fg_xstrdup(colon + 1);
	return true;
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* "PATH:FUNCTION[+OFFSET]" of a uprobe into the spec */
static int parse_probe(const char *arg, const char *s, bool ret, struct fg_ev_spec *spec, char *why,
		       size_t len)
{
	const char *colon = strchr(s, ':');
	char q[QUOTE_MAX];
	const char *plus;

	if (!colon || colon == s || !colon[1])
		return say(why, len, -EINVAL, "invalid event '%s' (%s:PATH:FUNCTION%s)", Q(arg, q),
			   ret ? "uretprobe" : "uprobe", ret ? "" : "[+OFFSET]");
	if (!printable(s))
		return say(why, len, -EINVAL, "invalid event '%s': a control character", Q(arg, q));
	spec->kind = ret ? FG_EVENT_URETPROBE : FG_EVENT_UPROBE;
	spec->path = fg_xstrndup(s, (size_t)(colon - s));
	spec->function = fg_xstrdup(colon + 1);
	/* an offset is a number after the last '+': "operator+" stays a name */
	plus = strrchr(spec->function, '+');
	if (plus && plus != spec->function && plus[1] >= '0' && plus[1] <= '9') {
		if (ret)
			return say(why, len, -EINVAL,
				   "invalid event '%s': a uretprobe takes no offset", Q(arg, q));
		if (fg_parse_u64(plus + 1, 0, 1u << 30, &spec->offset) < 0)
			return say(why, len, -EINVAL, "invalid offset in event '%s'", Q(arg, q));
		spec->function[plus - spec->function] = '\0';
	}
	return 0;
}

int fg_ev_parse(const char *arg, struct fg_ev_spec *spec, char *why, size_t len)
{
	char q[QUOTE_MAX];
	int err = 0;

	memset(spec, 0, sizeof(*spec));
	if (!*arg)
		return say(why, len, -EINVAL,
			   "invalid event '' (fg-sample --list-events lists them)");
	if (strlen(arg) > 4096)
		return say(why, len, -EINVAL, "invalid event: longer than 4096 bytes");
	spec->arg = fg_xstrdup(arg);
	if ((spec->sw = fg_ev_software_find(arg)) != NULL) {
		spec->kind = FG_EVENT_SOFTWARE;
	} else if (fg_starts_with(arg, "tracepoint:")) {
		if (!parse_tracepoint(arg + 11, spec))
			err = say(why, len, -EINVAL,
				  "invalid tracepoint '%s' (tracepoint:CATEGORY:NAME)", Q(arg, q));
	} else if (fg_starts_with(arg, "uprobe:")) {
		err = parse_probe(arg, arg + 7, false, spec, why, len);
	} else if (fg_starts_with(arg, "uretprobe:")) {
		err = parse_probe(arg, arg + 10, true, spec, why, len);
	} else if (strchr(arg, ':') && fg_ev_software_find(prefix_of(arg, ':', q, sizeof(q)))) {
		err = say(why, len, -EINVAL,
			  "invalid event '%s': no modifiers (--user-only and --kernel-only choose "
			  "the stacks)",
			  Q(arg, q));
	} else if (!parse_tracepoint(arg, spec)) {
		/* perf's CATEGORY:NAME is a tracepoint; anything else is unknown */
		err = say(why, len, -EINVAL,
			  "unknown event '%s' (fg-sample --list-events lists them)", Q(arg, q));
	}
	if (err)
		fg_ev_spec_release(spec);
	return err;
}

void fg_ev_spec_release(struct fg_ev_spec *spec)
{
	if (!spec)
		return;
	free(spec->category);
	free(spec->tracepoint);
	free(spec->path);
	free(spec->function);
	free(spec->arg);
	memset(spec, 0, sizeof(*spec));
}

/* --- naming --- */

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

void fg_ev_probe_name(struct fg_buf *b, const char *path, const char *symbol, bool ret)
{
	const char *base = strrchr(path, '/');
	size_t start = b->len, n;

	base = base ? base + 1 : path;
	fg_buf_addstr(b, "probe_");
	for (const char *p = base; *p && ident_char(*p); p++)
		fg_buf_addch(b, *p);
	fg_buf_addch(b, ':');
	if (*symbol == '.')
		symbol++;
	n = strcspn(symbol, ".@");
	if (n == 0)
		n = strlen(symbol); /* nothing before the dot: keep it all (as perf keeps ".") */
	for (size_t i = 0; i < n; i++)
		fg_buf_addch(b, ident_char(symbol[i]) ? symbol[i] : '_');
	if (ret)
		fg_buf_addstr(b, "__return");
	if (b->len - start > FG_EV_PROBE_NAME_MAX)
		fg_buf_truncate(b, start + FG_EV_PROBE_NAME_MAX);
}

/* --- the list --- */

static bool same_event(const struct fg_ev *a, const struct fg_ev *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case FG_EVENT_UPROBE:
	case FG_EVENT_URETPROBE:
		return a->file_offset == b->file_offset && strcmp(a->path, b->path) == 0;
	default:
		return a->config == b->config;
	}
}

static bool name_taken(const struct fg_evlist *l, size_t upto, const char *name)
{
	for (size_t i = 0; i < upto; i++)
		if (strcmp(l->ev[i].name, name) == 0)
			return true;
	return false;
}

/*
 * Append `ev` (its strings now the list's), named `name` or, when taken,
 * "name_1", "name_2"..., as perf names a second probe on the same function.
 */
static void append(struct fg_evlist *l, struct fg_ev *ev, const char *name)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_buf_addstr(&b, name);
	for (unsigned i = 1; name_taken(l, l->n, b.data); i++) {
		fg_buf_reset(&b);
		fg_buf_addf(&b, "%s_%u", name, i);
	}
	ev->name = fg_buf_detach(&b, NULL);
	ev->id = (uint32_t)l->n;
	FG_ALLOC_GROW(l->ev, l->n + 1, l->alloc);
	l->ev[l->n++] = *ev;
}

static void ev_release(struct fg_ev *ev)
{
	free(ev->name);
	free(ev->path);
	free(ev->symbol);
}

/* Undo the appends since `n0` (an error half-way through a glob's matches). */
static void truncate_list(struct fg_evlist *l, size_t n0)
{
	while (l->n > n0)
		ev_release(&l->ev[--l->n]);
}

/* the new event `ev`: refused when the list has it already, or is full */
static int check_new(const struct fg_evlist *l, const struct fg_ev *ev, const char *arg, char *why,
		     size_t len)
{
	char q[QUOTE_MAX];

	if (l->n >= FG_EV_MAX)
		return say(why, len, -E2BIG, "too many events: at most %u", FG_EV_MAX);
	for (size_t i = 0; i < l->n; i++)
		if (same_event(&l->ev[i], ev))
			return say(why, len, -EEXIST, "event '%s' is given twice (as '%s')",
				   Q(arg, q), l->ev[i].name);
	return 0;
}

static int add_software(struct fg_evlist *l, const struct fg_ev_spec *spec, char *why, size_t len)
{
	struct fg_ev ev = {.kind = FG_EVENT_SOFTWARE,
			   .config = spec->sw->config,
			   .time_based = spec->sw->time_based};
	int err = check_new(l, &ev, spec->arg, why, len);

	if (!err)
		append(l, &ev, spec->sw->name);
	return err;
}

/* --- tracefs --- */

int fg_ev_tracefs_find(const char *const *dirs, char *dir, size_t len)
{
	for (; *dirs; dirs++) {
		char events[PATH_MAX];
		struct stat st;

		snprintf(events, sizeof(events), "%s/events", *dirs);
		if (stat(events, &st) == 0 && S_ISDIR(st.st_mode) && strlen(*dirs) < len) {
			snprintf(dir, len, "%s", *dirs);
			return 0;
		}
	}
	return -ENOENT;
}

int fg_ev_tracefs_mount(const char *dir)
{
	return mount("nodev", dir, "tracefs", 0, NULL) < 0 ? -errno : 0;
}

static int only_dirs(const struct dirent *d)
{
	return d->d_name[0] != '.' && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN);
}

/*
 * The directories of `dir` whose names match `glob` (all with NULL), sorted,
 * as scandir(3) gives them: their number, or -errno.
 */
static int list_dirs(const char *dir, const char *glob, struct dirent ***out)
{
	struct dirent **all;
	int n = scandir(dir, &all, only_dirs, alphasort), kept = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		bool keep = !glob || fnmatch(glob, all[i]->d_name, 0) == 0;

		if (keep && all[i]->d_type == DT_UNKNOWN) {
			snprintf(path, sizeof(path), "%s/%s", dir, all[i]->d_name);
			keep = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		}
		if (keep)
			all[kept++] = all[i];
		else
			free(all[i]);
	}
	*out = all;
	return kept;
}

static void free_dirs(struct dirent **d, int n)
{
	for (int i = 0; i < n; i++)
		free(d[i]);
	free(d);
}

/* a tracepoint's id, from DIR/events/CAT/NAME/id: 0 or -errno (-ENOENT: no such tracepoint) */
static int tracepoint_id(const char *tracefs, const char *cat, const char *name, uint64_t *id)
{
	char path[PATH_MAX], text[32];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, cat, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	text[n] = '\0';
	if (n && text[n - 1] == '\n')
		text[n - 1] = '\0';
	return fg_parse_u64(text, 0, UINT32_MAX, id) < 0 ? -EINVAL : 0;
}

/* One tracepoint found: appended to the list (with a glob), or checked and appended. */
static int add_one_tracepoint(struct fg_evlist *l, const struct fg_ev_spec *spec,
			      const char *tracefs, const char *cat, const char *name, char *why,
			      size_t len)
{
	struct fg_ev ev = {.kind = FG_EVENT_TRACEPOINT};
	char full[600];
	int err = tracepoint_id(tracefs, cat, name, &ev.config);

	if (err == -ENOENT || err == -ENOTDIR)
		return say(why, len, -ENOENT, "no tracepoint '%s:%s' (in '%s/events')", cat, name,
			   tracefs);
	if (err)
		return say(why, len, err, "cannot read the id of tracepoint '%s:%s': %s", cat, name,
			   strerror(-err));
	if ((err = check_new(l, &ev, spec->arg, why, len)) != 0)
		return err;
	snprintf(full, sizeof(full), "%s:%s", cat, name);
	append(l, &ev, full);
	return 0;
}

/*
 * The tracepoints CATEGORY:NAME of tracefs whose names match the globs
 * (NULL: any), in sorted order: fn(arg, category, name, 0) for each, or with
 * `categories`, fn(arg, category, NULL, number of its tracepoints) for each
 * category.  Stops at the first non-zero fn() and returns it; -errno when
 * tracefs cannot be read.
 */
static int each_tracepoint(const char *tracefs, const char *catglob, const char *nameglob,
			   bool categories, int (*fn)(void *, const char *, const char *, int),
			   void *arg)
{
	char dir[PATH_MAX];
	struct dirent **cats;
	int ncats, err = 0;

	snprintf(dir, sizeof(dir), "%s/events", tracefs);
	ncats = list_dirs(dir, catglob, &cats);
	if (ncats < 0)
		return ncats;
	for (int c = 0; c < ncats && !err; c++) {
		struct dirent **names;
		char cdir[PATH_MAX + 256];
		int nn;

		snprintf(cdir, sizeof(cdir), "%s/%s", dir, cats[c]->d_name);
		nn = list_dirs(cdir, nameglob, &names);
		if (categories)
			err = fn(arg, cats[c]->d_name, NULL, nn > 0 ? nn : 0);
		for (int i = 0; i < nn && !err && !categories; i++)
			err = fn(arg, cats[c]->d_name, names[i]->d_name, 0);
		if (nn > 0)
			free_dirs(names, nn);
	}
	free_dirs(cats, ncats);
	return err;
}

struct add_tp {
	struct fg_evlist *l;
	const struct fg_ev_spec *spec;
	const char *tracefs;
	char *why;
	size_t len;
	size_t found;
};

static int add_tp_one(void *arg, const char *cat, const char *name, int n)
{
	struct add_tp *a = arg;
	char q[QUOTE_MAX];

	(void)n;
	if (++a->found > FG_EV_GLOB_MAX)
		return say(a->why, a->len, -E2BIG, "event '%s' matches more than %u tracepoints",
			   Q(a->spec->arg, q), FG_EV_GLOB_MAX);
	return add_one_tracepoint(a->l, a->spec, a->tracefs, cat, name, a->why, a->len);
}

static int add_tracepoints(struct fg_evlist *l, const struct fg_ev_spec *spec,
			   const struct fg_ev_env *env, char *why, size_t len)
{
	struct add_tp a = {l, spec, env->tracefs, why, len, 0};
	size_t n0 = l->n;
	char q[QUOTE_MAX];
	int err;

	if (!env->tracefs)
		return say(why, len, -ENOENT,
			   "event '%s': tracefs is not mounted (on /sys/kernel/tracing)",
			   Q(spec->arg, q));
	if (!has_glob(spec->category) && !has_glob(spec->tracepoint))
		return add_one_tracepoint(l, spec, env->tracefs, spec->category, spec->tracepoint,
					  why, len);
	err =
	    each_tracepoint(env->tracefs, spec->category, spec->tracepoint, false, add_tp_one, &a);
	if (err < 0 && !a.found)
		say(why, len, err, "cannot read '%s/events': %s", env->tracefs, strerror(-err));
	if (!err && !a.found)
		err = say(why, len, -ENOENT, "no tracepoint matches '%s' (in '%s/events')",
			  Q(spec->arg, q), env->tracefs);
	if (err)
		truncate_list(l, n0);
	return err;
}

/* --- uprobes --- */

static bool is_file(const char *path, bool exec)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (!exec || access(path, X_OK) == 0);
}

/*
 * The file of a probe: a path as it is (made absolute), a bare name in
 * $PATH, then in the library directories as it is, as NAME.so* and
 * libNAME.so* (the first that is ELF with symbols).  Candidates go into
 * *c, best first; 0, or -ENOENT.
 */
static int find_files(const char *name, const struct fg_ev_env *env, char ***c, size_t *n)
{
	size_t alloc = 0;

	*c = NULL;
	*n = 0;
	if (strchr(name, '/')) {
		char *abs = realpath(name, NULL);

		if (!abs)
			return -errno;
		if (!is_file(abs, false)) {
			free(abs);
			return -EINVAL;
		}
		FG_ALLOC_GROW(*c, 1, alloc);
		(*c)[(*n)++] = abs;
		return 0;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -ENOENT;
	for (const char *p = env->path; p && *p;) {
		size_t dl = strcspn(p, ":");
		char path[PATH_MAX];

		if (dl &&
		    (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)dl, p, name) <
			sizeof(path) &&
		    is_file(path, true)) {
			char *abs = realpath(path, NULL);

			if (abs) {
				FG_ALLOC_GROW(*c, *n + 1, alloc);
				(*c)[(*n)++] = abs;
				return 0;
			}
		}
		p += dl + (p[dl] == ':');
	}
	for (const char *const *d = env->libdirs; d && *d; d++) {
		static const char *const forms[] = {"%s/%s", "%s/%s.so*", "%s/lib%s.so*"};

		for (size_t f = 0; f < FG_ARRAY_SIZE(forms); f++) {
			char pat[PATH_MAX];
			glob_t g;

			if ((size_t)snprintf(pat, sizeof(pat), forms[f], *d, name) >= sizeof(pat))
				continue;
			if (f == 0) {
				if (is_file(pat, false)) {
					FG_ALLOC_GROW(*c, *n + 1, alloc);
					(*c)[(*n)++] = fg_xstrdup(pat);
				}
				continue;
			}
			/* the name itself has no glob characters to escape: pat's are ours */
			if (has_glob(name) || glob(pat, 0, NULL, &g) != 0)
				continue;
			for (size_t i = 0; i < g.gl_pathc && *n < 64; i++) {
				if (!is_file(g.gl_pathv[i], false))
					continue;
				FG_ALLOC_GROW(*c, *n + 1, alloc);
				(*c)[(*n)++] = fg_xstrdup(g.gl_pathv[i]);
			}
			globfree(&g);
		}
	}
	return *n ? 0 : -ENOENT;
}

static void free_files(char **c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i]);
	free(c);
}

/* The symbols of the file of a probe: 0 with *e and *path set (to be freed), or an error. */
static int open_probe_file(const char *name, const char *arg, const struct fg_ev_env *env,
			   struct fg_elfsyms **e, char **path, char *why, size_t len)
{
	char **c, q[QUOTE_MAX], q2[QUOTE_MAX];
	size_t n;
	int err = find_files(name, env, &c, &n), first = 0;

	*e = NULL;
	*path = NULL;
	if (err == -EINVAL)
		return say(why, len, -EINVAL, "event '%s': '%s' is not a regular file", Q(arg, q),
			   Q(name, q2));
	if (err)
		return say(why, len, -ENOENT, "event '%s': no file '%s'%s", Q(arg, q), Q(name, q2),
			   strchr(name, '/') ? "" : " in $PATH or the library directories");
	for (size_t i = 0; i < n && !*e; i++) {
		int fd = fg_safeio_open_regular(c[i], FG_ELF_MAX_FILE, NULL);
		struct fg_elfsyms *s;

		if (fd < 0) {
			first = first ? first : fd;
			continue;
		}
		s = fg_elfsyms_open_fd(fd);
		if (!s)
			first = first ? first : -errno;
		close(fd);
		if (s && s->kind == FG_ELF_NOSYMS) {
			fg_elfsyms_free(s);
			s = NULL;
			first = first ? first : -ENODATA;
		}
		if (s) {
			*e = s;
			*path = fg_xstrdup(c[i]);
		}
	}
	if (!*e) {
		err = first ? first : -ENOENT;
		if (err == -ENODATA)
			say(why, len, -ENOENT, "event '%s': '%s' has no symbols (stripped)",
			    Q(arg, q), Q(c[0], q2));
		else if (err == -ENOEXEC)
			say(why, len, err, "event '%s': '%s' is not an ELF file", Q(arg, q),
			    Q(c[0], q2));
		else
			say(why, len, err, "event '%s': cannot read '%s': %s", Q(arg, q),
			    Q(c[0], q2), strerror(-err));
		if (err == -ENODATA)
			err = -ENOENT;
	}
	free_files(c, n);
	return err;
}

static bool mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Whether symbol `name` is the function `pattern` names. */
static bool function_matches(const char *name, const char *pattern, bool glob)
{
	const char *at = strchr(name, '@');
	char *cut = NULL, *pretty;
	bool m;

	if (at && at != name)
		name = cut = fg_xstrndup(name, (size_t)(at - name));
	m = glob ? fnmatch(pattern, name, 0) == 0 : strcmp(name, pattern) == 0;
	if (!m && mangled(name) && (pretty = fg_demangle(name)) != NULL) {
		m = glob ? fnmatch(pattern, pretty, 0) == 0 : strcmp(pretty, pattern) == 0;
		free(pretty);
	}
	free(cut);
	return m;
}

int fg_ev_find_functions(const struct fg_elfsyms *e, const char *pattern, size_t max,
			 struct fg_ev_func **out, size_t *n)
{
	bool glob = has_glob(pattern);
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < e->nsyms; i++) {
		const struct fg_elf_sym *s = &e->syms[i];

		if (!function_matches(s->name, pattern, glob))
			continue;
		if (*n < max) {
			FG_ALLOC_GROW(*out, *n + 1, alloc);
			(*out)[*n] = (struct fg_ev_func){s->name, s->addr, s->size};
		}
		(*n)++;
	}
	if (*n > max)
		return -E2BIG;
	return *n ? 0 : -ENOENT;
}

int fg_ev_addr_to_offset(const struct fg_elfsyms *e, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < e->nloads; i++) {
		const struct fg_elf_load *l = &e->loads[i];

		if (addr >= l->vaddr && addr - l->vaddr < l->filesz) {
			*off = addr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int add_probes(struct fg_evlist *l, const struct fg_ev_spec *spec,
		      const struct fg_ev_env *env, char *why, size_t len)
{
	bool ret = spec->kind == FG_EVENT_URETPROBE;
	char q[QUOTE_MAX], q2[QUOTE_MAX], q3[QUOTE_MAX], *path;
	struct fg_elfsyms *e;
	struct fg_ev_func *f = NULL;
	size_t nf = 0, n0 = l->n;
	int err = open_probe_file(spec->path, spec->arg, env, &e, &path, why, len);

	if (err)
		return err;
	err = fg_ev_find_functions(e, spec->function, FG_EV_GLOB_MAX, &f, &nf);
	if (err == -ENOENT)
		say(why, len, err, "event '%s': no function '%s' in '%s'", Q(spec->arg, q),
		    Q(spec->function, q3), Q(path, q2));
	else if (err == -E2BIG)
		say(why, len, err, "event '%s': '%s' matches %zu functions in '%s', at most %u",
		    Q(spec->arg, q), Q(spec->function, q3), nf, Q(path, q2), FG_EV_GLOB_MAX);
	for (size_t i = 0; i < nf && !err; i++) {
		struct fg_ev ev = {.kind = spec->kind, .addr = f[i].addr, .offset = spec->offset};
		struct fg_buf name = FG_BUF_INIT;

		if (f[i].size && spec->offset >= f[i].size) {
			err =
			    say(why, len, -EINVAL,
				"event '%s': offset %" PRIu64 " is beyond '%s' (%" PRIu64 " bytes)",
				Q(spec->arg, q), spec->offset, Q(f[i].symbol, q3), f[i].size);
			break;
		}
		if (fg_ev_addr_to_offset(e, f[i].addr + spec->offset, &ev.file_offset) < 0) {
			err = say(why, len, -ENOENT,
				  "event '%s': '%s' is in no loadable segment of '%s'",
				  Q(spec->arg, q), Q(f[i].symbol, q3), Q(path, q2));
			break;
		}
		ev.path = path;
		if ((err = check_new(l, &ev, spec->arg, why, len)) != 0)
			break;
		ev.path = fg_xstrdup(path);
		ev.symbol = fg_xstrdup(f[i].symbol);
		fg_ev_probe_name(&name, path, f[i].symbol, ret);
		append(l, &ev, name.data);
		fg_buf_release(&name);
	}
	if (err)
		truncate_list(l, n0);
	free(f);
	free(path);
	fg_elfsyms_free(e);
	return err;
}

int fg_evlist_add(struct fg_evlist *l, const struct fg_ev_spec *spec, const struct fg_ev_env *env,
		  char *why, size_t len)
{
	switch (spec->kind) {
	case FG_EVENT_SOFTWARE:
		return add_software(l, spec, why, len);
	case FG_EVENT_TRACEPOINT:
		return add_tracepoints(l, spec, env, why, len);
	case FG_EVENT_UPROBE:
	case FG_EVENT_URETPROBE:
		return add_probes(l, spec, env, why, len);
	default:
		return say(why, len, -EINVAL, "not an event");
	}
}

void fg_evlist_default(struct fg_evlist *l)
{
	struct fg_ev_spec spec = {
	    .kind = FG_EVENT_SOFTWARE, .sw = &fg_ev_software[0], .arg = (char *)"cpu-clock"};

	if (!l->n)
		add_software(l, &spec, NULL, 0);
}

void fg_evlist_release(struct fg_evlist *l)
{
	if (!l)
		return;
	truncate_list(l, 0);
	free(l->ev);
	*l = (struct fg_evlist)FG_EVLIST_INIT;
}

bool fg_evlist_has(const struct fg_evlist *l, enum fg_event_kind kind)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ev[i].kind == kind)
			return true;
	return false;
}

bool fg_evlist_has_time(const struct fg_evlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ev[i].time_based)
			return true;
	return false;
}

/* --- listing --- */

static void line(struct fg_buf *out, const char *arg, const char *fmt, ...) FG_PRINTF(3, 4);

static void line(struct fg_buf *out, const char *arg, const char *fmt, ...)
{
	size_t at = out->len;
	va_list ap;

	fg_buf_add_escaped(out, arg, strlen(arg), 0);
	while (out->len - at < 34)
		fg_buf_addch(out, ' ');
	fg_buf_addch(out, ' ');
	va_start(ap, fmt);
	fg_buf_vaddf(out, fmt, ap);
	va_end(ap);
	fg_buf_addch(out, '\n');
}

static size_t count_lines(const struct fg_buf *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

static long list_software(struct fg_buf *out, const char *glob)
{
	long n = 0;

	for (size_t i = 0; i < fg_ev_nsoftware; i++) {
		const struct fg_ev_software *s = &fg_ev_software[i];

		if (glob && fnmatch(glob, s->name, 0) != 0 &&
		    !(s->alias && fnmatch(glob, s->alias, 0) == 0))
			continue;
		if (s->alias)
			line(out, s->name, "software: %s (or -e %s)", s->what, s->alias);
		else
			line(out, s->name, "software: %s", s->what);
		n++;
	}
	return n;
}

static int list_tp_one(void *arg, const char *cat, const char *name, int n)
{
	char text[600];

	if (name) {
		snprintf(text, sizeof(text), "tracepoint:%s:%s", cat, name);
		line(arg, text, "tracepoint");
	} else {
		snprintf(text, sizeof(text), "tracepoint:%s:*", cat);
		line(arg, text, "tracepoints: %d", n);
	}
	return 0;
}

static long list_functions(struct fg_buf *out, const struct fg_ev_spec *spec,
			   const struct fg_ev_env *env, char *why, size_t len)
{
	bool ret = spec->kind == FG_EVENT_URETPROBE;
	struct fg_elfsyms *e;
	struct fg_ev_func *f;
	char *path;
	size_t nf;
	int err = open_probe_file(spec->path, spec->arg, env, &e, &path, why, len);

	if (err)
		return err;
	err = fg_ev_find_functions(e, spec->function, e->nsyms, &f, &nf);
	for (size_t i = 0; i < nf && !err; i++) {
		struct fg_buf arg = FG_BUF_INIT, name = FG_BUF_INIT;
		char *pretty = mangled(f[i].symbol) ? fg_demangle(f[i].symbol) : NULL;

		fg_buf_addf(&arg, "%s:%s:%s", ret ? "uretprobe" : "uprobe", path, f[i].symbol);
		fg_ev_probe_name(&name, path, f[i].symbol, ret);
		if (pretty) {
			fg_buf_addstr(&name, ", ");
			fg_buf_add_escaped(&name, pretty, strlen(pretty), 0);
		}
		line(out, arg.data, "function at 0x%" PRIx64 ", %" PRIu64 " bytes: %s", f[i].addr,
		     f[i].size, name.data);
		free(pretty);
		fg_buf_release(&arg);
		fg_buf_release(&name);
	}
	free(f);
	free(path);
	fg_elfsyms_free(e);
	return err == -ENOENT ? 0 : err < 0 ? err : (long)nf;
}

long fg_ev_list(struct fg_buf *out, const char *pattern, const struct fg_ev_env *env, char *why,
		size_t len)
{
	struct fg_ev_spec spec;
	const char *colon;
	long n, m = 0;
	size_t lines;
	int err = 0;

	if (!pattern) {
		n = list_software(out, NULL);
		lines = count_lines(out);
		if (env->tracefs)
			err = each_tracepoint(env->tracefs, NULL, NULL, true, list_tp_one, out);
		if (err)
			return say(why, len, err, "cannot read '%s/events': %s", env->tracefs,
				   strerror(-err));
		m = (long)(count_lines(out) - lines);
		line(out, "uprobe:PATH:FUNCTION[+OFFSET]",
		     "probe: a function's entry (or an offset)");
		line(out, "uretprobe:PATH:FUNCTION", "probe: a function's return");
		return n + m + 2;
	}
	if (fg_starts_with(pattern, "uprobe:") || fg_starts_with(pattern, "uretprobe:")) {
		err = fg_ev_parse(pattern, &spec, why, len);
		if (err)
			return err;
		n = list_functions(out, &spec, env, why, len);
		fg_ev_spec_release(&spec);
		return n;
	}
	if (fg_starts_with(pattern, "tracepoint:"))
		pattern += 11;
	else
		m = list_software(out, pattern);
	if (!env->tracefs)
		return m;
	lines = count_lines(out);
	colon = strchr(pattern, ':');
	if (colon) {
		char *cat = fg_xstrndup(pattern, (size_t)(colon - pattern));

		err = each_tracepoint(env->tracefs, cat, colon + 1, false, list_tp_one, out);
		free(cat);
	} else {
		err = each_tracepoint(env->tracefs, pattern, NULL, true, list_tp_one, out);
	}
	if (err)
		return say(why, len, err, "cannot read '%s/events': %s", env->tracefs,
			   strerror(-err));
	return m + (long)(count_lines(out) - lines);
}
