// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fg/procmaps.h"
#include "unit.h"

TEST(procmaps_line)
{
	char l1[] = "5630fc5ba000-5630fc5bf000 r-xp 00002000 fe:00 247134                     "
		    "/usr/bin/cat";
	char l2[] = "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]";
	char l3[] = "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ";
	char l4[] = "400000-401000 r-xs 00001000 103:02 12 /tmp/my file (deleted)";
	struct fg_procmap m;

	CHECK_INT(fg_procmap_parse(l1, strlen(l1), &m), 0);
	CHECK(m.start == 0x5630fc5ba000 && m.end == 0x5630fc5bf000 && m.pgoff == 0x2000);
	CHECK(m.dev_major == 0xfe && m.dev_minor == 0 && m.inode == 247134 && m.exec);
	CHECK_STR(m.path, "/usr/bin/cat");
	CHECK(m.prot == (PROT_READ | PROT_EXEC) && !m.shared && !m.deleted);
	CHECK_INT(fg_procmap_parse(l2, strlen(l2), &m), 0);
	CHECK_STR(m.path, "[vdso]");
	CHECK_INT(fg_procmap_parse(l3, strlen(l3), &m), 0);
	CHECK_STR(m.path, "");
	CHECK(!m.exec);
	CHECK_INT(m.prot, PROT_READ | PROT_WRITE);
	CHECK_INT(fg_procmap_parse(l4, strlen(l4), &m), 0);
	CHECK_STR(m.path, "/tmp/my file");
	CHECK(m.deleted && m.dev_major == 0x103 && m.dev_minor == 2);
	CHECK(m.shared && m.prot == (PROT_READ | PROT_EXEC));
}

TEST(procmaps_bad)
{
	const char *bad[] = {
	    "",
	    "zz-10 r-xp 0 0:0 0 x",
	    "20-10 r-xp 00000000 00:00 0 x",
	    "10-20 r-x 00000000 00:00 0 x",
	    "10-20 rzxp 00000000 00:00 0 x",
	    "10-20 r-xp 00000000 0000 0 x",
	    "10-20 r-xp 00000000 00:00 x",
	    "10-20 r-xp",
	    "11111111111111111-20 r-xp 00000000 00:00 0 x",
	    "10-20 r-xp 00000000 00:00 999999999999999999999 x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[128];
		struct fg_procmap m;

		strcpy(line, bad[i]);
		if (fg_procmap_parse(line, strlen(line), &m) != -EINVAL) {
			printf("# accepted: %s\n", bad[i]);
			CHECK(0);
		}
	}
}

static int count_fn(const struct fg_procmap *m, void *arg)
{
	(void)m;
	(*(int *)arg)++;
	return 0;
}

TEST(procmaps_file)
{
	char text[] = "10-20 r-xp 00000000 00:00 0 /a\n\n30-40 r--p 00000000 00:00 0 /b\n"
		      "garbage\n";
	uint64_t bad = 0;
	int n = 0;

	CHECK_INT(fg_procmaps_parse(text, strlen(text), count_fn, &n, &bad), -EINVAL);
	CHECK_INT(n, 2);
	CHECK_INT(bad, 4);
}

int main(void)
{
	RUN(procmaps_line);
	RUN(procmaps_bad);
	RUN(procmaps_file);
	return unit_done();
}
