// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for CPU lists. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/cpulist.h"
#include "unit.h"

TEST(lists_parse)
{
	int cpus[8], n = 0;

	CHECK_INT(fg_cpulist_parse("0,2-3", cpus, &n, 8), 0);
	CHECK_INT(n, 3);
	CHECK(cpus[0] == 0 && cpus[1] == 2 && cpus[2] == 3);
	CHECK_INT(fg_cpulist_parse("3,1", cpus, &n, 8), 0); /* 3 again: kept once */
	CHECK_INT(n, 4);
	CHECK_INT(cpus[3], 1);
	CHECK(fg_cpulist_has(cpus, n, 2) && !fg_cpulist_has(cpus, n, 5));
	n = 0;
	CHECK_INT(fg_cpulist_parse("0-7", cpus, &n, 8), 0);
	CHECK_INT(n, 8);
}

TEST(bad_lists)
{
	int cpus[8], n = 0;
	static const char *const bad[] = {"",	"x",  "1-",  "-1",    "3-1",
					  "1,", ",1", "1 2", "1-2-3", "+1"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 0;
		CHECK_INT(fg_cpulist_parse(bad[i], cpus, &n, 8), -EINVAL);
	}
	n = 0;
	CHECK_INT(fg_cpulist_parse("8", cpus, &n, 8), -E2BIG);
	CHECK_INT(fg_cpulist_parse("99999999999999999999", cpus, &n, 8), -E2BIG);
}

TEST(online_from_a_file)
{
	char path[] = "/tmp/fg-unit-cpus-XXXXXX";
	int fd = mkstemp(path), cpus[16];

	CHECK(fd >= 0);
	CHECK(write(fd, "0-2,5\n", 6) == 6);
	close(fd);
	CHECK_INT(fg_cpus_online(path, cpus, 16), 4);
	CHECK_INT(cpus[3], 5);
	unlink(path);
	CHECK_INT(fg_cpus_online(path, cpus, 16), -ENOENT);
	CHECK(fg_cpus_online(NULL, cpus, 16) >= 1); /* this machine's */
}

int main(void)
{
	RUN(lists_parse);
	RUN(bad_lists);
	RUN(online_from_a_file);
	return unit_done();
}
