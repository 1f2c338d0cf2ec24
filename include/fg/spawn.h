/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A command started held: forked at once (so that its pid can be watched
 * before it runs), but executed only when released, as perf record does
 * with its workload.  The child waits on a pipe; releasing it reports
 * whether exec succeeded.  A command never released ends with status 127
 * when its parent goes away.
 *
 *	struct fg_spawn s;
 *	if (fg_spawn_held(&s, argv, false) < 0) ...;
 *	watch(s.pid);
 *	err = fg_spawn_release(&s);	// 0, or -errno of exec ("no such file")
 */
#ifndef FG_SPAWN_H
#define FG_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

struct fg_spawn {
	pid_t pid;
	int go_fd;  /* the parent's end of the pipe the child waits on; -1 once released */
	int err_fd; /* where the child writes exec's errno */
};

/*
 * Fork `argv` (argv[0] looked up in PATH), held.  With stdout_to_stderr its
 * standard output is its standard error (when the parent's standard output
 * carries data).  The child restores SIGPIPE's default.  0, or -errno with
 * nothing forked.
 */
int fg_spawn_held(struct fg_spawn *s, char *const *argv, bool stdout_to_stderr);
/* Let the command run.  0 when exec succeeded, or -errno of the exec that failed. */
int fg_spawn_release(struct fg_spawn *s);

#endif
