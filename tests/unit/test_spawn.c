// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for commands started held. */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fg/spawn.h"
#include "unit.h"

/* A command held until released; exec's failure comes back; never released, it ends 127. */
TEST(commands_held)
{
	struct fg_spawn s;
	char *ok[] = {"sh", "-c", "exit 3", NULL}, *missing[] = {"/nonexistent/fg-unit", NULL};
	int st;

	CHECK_INT(fg_spawn_held(&s, ok, false), 0);
	CHECK(s.pid > 0);
	CHECK_INT(waitpid(s.pid, &st, WNOHANG), 0); /* held */
	CHECK_INT(fg_spawn_release(&s), 0);
	CHECK_INT(waitpid(s.pid, &st, 0), s.pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	CHECK_INT(fg_spawn_release(&s), 0); /* once only */
	CHECK_INT(fg_spawn_held(&s, missing, true), 0);
	CHECK_INT(fg_spawn_release(&s), -ENOENT);
	CHECK_INT(waitpid(s.pid, &st, 0), s.pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	CHECK_INT(fg_spawn_held(&s, ok, false), 0);
	close(s.go_fd);
	close(s.err_fd);
	CHECK_INT(waitpid(s.pid, &st, 0), s.pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 127);
}

int main(void)
{
	RUN(commands_held);
	return unit_done();
}
