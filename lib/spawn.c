// SPDX-License-Identifier: BSD-2-Clause
/* A command forked held, executed when released. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "fg/spawn.h"

int fg_spawn_held(struct fg_spawn *s, char *const *argv, bool stdout_to_stderr)
{
	int go[2], er[2], err;

	s->pid = -1;
	s->go_fd = s->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(er, O_CLOEXEC) < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	s->pid = fork();
	if (s->pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return err;
	}
	if (s->pid == 0) {
		char c;

		close(go[1]);
		close(er[0]);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		if (stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], argv);
		err = errno;
		(void)!write(er[1], &err, sizeof(err));
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	s->go_fd = go[1];
	s->err_fd = er[0];
	return 0;
}

int fg_spawn_release(struct fg_spawn *s)
{
	int err = 0;

	if (s->go_fd < 0)
		return 0;
	(void)!write(s->go_fd, "g", 1);
	close(s->go_fd);
	s->go_fd = -1;
	/* the pipe closes at exec (O_CLOEXEC): nothing read means it ran */
	if (read(s->err_fd, &err, sizeof(err)) != sizeof(err))
		err = 0;
	close(s->err_fd);
	s->err_fd = -1;
	return err ? -err : 0;
}
