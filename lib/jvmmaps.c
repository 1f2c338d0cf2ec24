// SPDX-License-Identifier: BSD-2-Clause
/* fg-sample's JVMs, asked for their perf maps at the end: see include/fg/jvmmaps.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/jvmmaps.h"
#include "fg/sideband.h"

struct fg_jvmmaps {
	char proc[256];
	struct fg_hash *pids; /* pid -> 1 a JVM, 2 not */
	uint64_t skipped;
};

struct fg_jvmmaps *fg_jvmmaps_new(const char *proc)
{
	struct fg_jvmmaps *j = fg_xcalloc(1, sizeof(*j));

	snprintf(j->proc, sizeof(j->proc), "%s", proc);
	j->pids = fg_hash_new(0);
	return j;
}

void fg_jvmmaps_free(struct fg_jvmmaps *j)
{
	if (!j)
		return;
	fg_hash_free(j->pids);
	free(j);
}

/* whether pid's executable is named java */
static bool is_jvm(const struct fg_jvmmaps *j, uint32_t pid)
{
	char name[300], exe[4096];
	ssize_t n;
	const char *base;

	snprintf(name, sizeof(name), "%s/%" PRIu32 "/exe", j->proc, pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	return strcmp(base ? base + 1 : exe, "java") == 0;
}

void fg_jvmmaps_seen(struct fg_jvmmaps *j, uint32_t pid)
{
	struct fg_hash_entry *e = fg_hash_get(j->pids, &pid, sizeof(pid));

	if (e)
		return;
	if (fg_hash_count(j->pids) >= FG_JVMMAPS_PIDS) {
		j->skipped++;
		return;
	}
	e = fg_hash_upsert(j->pids, &pid, sizeof(pid), NULL);
	e->val.u = is_jvm(j, pid) ? 1 : 2;
}

/* jcmd PID Compiler.perfmap as uid:gid, its output to /dev/null: the child's pid, or -errno */
static pid_t ask(uint32_t pid, uint32_t uid, uint32_t gid)
{
	char arg[16];
	pid_t child;

	snprintf(arg, sizeof(arg), "%" PRIu32, pid);
	child = fork();
	if (child != 0)
		return child < 0 ? -errno : child;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	/* the process's own user: never root's rights over another user's JVM */
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0 ||
	    (uid != 0 && setuid(0) == 0))
		_exit(126);
	if (chdir("/") < 0)
		_exit(126);
	execlp("jcmd", "jcmd", arg, "Compiler.perfmap", (char *)NULL);
	_exit(127);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* wait for the children until the deadline, then kill those left: their outcomes counted */
static void reap(pid_t *kids, size_t n, uint64_t deadline, struct fg_jvmmaps_stats *st)
{
	size_t left = n;

	while (left) {
		for (size_t i = 0; i < n; i++) {
			int status;

			if (kids[i] <= 0 || waitpid(kids[i], &status, WNOHANG) != kids[i])
				continue;
			kids[i] = 0;
			left--;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				st->written++;
			else
				st->failed++;
		}
		if (!left || now_ms() >= deadline)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		if (kids[i] <= 0)
			continue;
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
		st->timed_out++;
	}
}

void fg_jvmmaps_write(struct fg_jvmmaps *j, unsigned timeout_ms, struct fg_jvmmaps_stats *st)
{
	pid_t kids[FG_JVMMAPS_MAX];
	size_t n = 0;
	uint64_t deadline = now_ms() + timeout_ms;

	memset(st, 0, sizeof(*st));
	st->skipped = j->skipped;
	for (size_t i = 0; i < fg_hash_count(j->pids); i++) {
		const struct fg_hash_entry *e = fg_hash_at(j->pids, i);
		struct fg_rec_creds c;
		uint32_t pid;
		pid_t kid;

		memcpy(&pid, e->key, sizeof(pid));
		/* still a JVM: the pid not reused since */
		if (e->val.u != 1 || !is_jvm(j, pid))
			continue;
		st->jvms++;
		if (n == FG_JVMMAPS_MAX || fg_sideband_creds_read(j->proc, pid, &c) < 0) {
			st->skipped++;
			continue;
		}
		kid = ask(pid, c.uid, c.gid);
		if (kid < 0)
			st->failed++;
		else
			kids[n++] = kid;
	}
	reap(kids, n, deadline, st);
}
