// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the /proc task helpers. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fg/task.h"
#include "unit.h"

TEST(alive_and_gone)
{
	pid_t child;
	struct timespec ts = {0, 20 * 1000 * 1000};

	CHECK(fg_task_alive("/proc", (uint32_t)getpid()));
	CHECK(!fg_task_alive("/proc", 0x7fffffff));
	CHECK(!fg_task_alive("/nonexistent", (uint32_t)getpid()));
	child = fork();
	CHECK(child >= 0);
	if (child == 0)
		_exit(0);
	/* a zombie until reaped: gone already */
	for (int i = 0; i < 250 && fg_task_alive("/proc", (uint32_t)child); i++)
		nanosleep(&ts, NULL);
	CHECK(!fg_task_alive("/proc", (uint32_t)child));
	CHECK(waitpid(child, NULL, 0) == child);
}

TEST(tgid_of_a_thread)
{
	CHECK_INT(fg_task_tgid("/proc", (uint32_t)getpid()), getpid());
	CHECK_INT(fg_task_tgid("/proc", 0x7fffffff), 0);
}

TEST(capabilities)
{
	uint64_t caps = 0;

	CHECK_INT(fg_caps_effective(&caps), 0);
	if (geteuid() == 0)
		CHECK(caps & (1ull << FG_CAP_SYS_ADMIN));
}

int main(void)
{
	RUN(alive_and_gone);
	RUN(tgid_of_a_thread);
	RUN(capabilities);
	return unit_done();
}
