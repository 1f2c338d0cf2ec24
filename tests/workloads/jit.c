// SPDX-License-Identifier: BSD-2-Clause
/*
 * jit [SECONDS]: a JIT-like program.  It copies machine code for two
 * functions into an anonymous executable mapping, writes their names to
 * /tmp/perf-PID.map as a JIT would, and runs them: jit_outer (a frame of its
 * own) calls jit_loop (a counted loop).  Stacks come out as
 * main;run_jit;jit_outer;jit_loop with the JIT frames named only by the map.
 * x86-64 only.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#if defined(__x86_64__)
/* jit_loop(n): push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret */
static const unsigned char loop_code[] = {
    0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,
};
/* jit_outer(n): push %rbp; mov %rsp,%rbp; movabs $LOOP,%rax; call *%rax; pop %rbp; ret */
static unsigned char outer_code[] = {
    0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0, 0x5d, 0xc3,
};

typedef void (*jit_fn)(uint64_t);

WL_FN void run_jit(jit_fn fn)
{
	volatile int frame = 0;

	fn(2000000);
	(void)frame;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv, 3);
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *map;

	if (mem == MAP_FAILED)
		return 1;
	uint64_t loop = (uint64_t)(uintptr_t)(mem + 256);
	memcpy(mem + 256, loop_code, sizeof(loop_code));
	memcpy(outer_code + 6, &loop, sizeof(loop));
	memcpy(mem, outer_code, sizeof(outer_code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_outer\n", (unsigned long)(uintptr_t)mem, sizeof(outer_code));
	fprintf(map, "%lx %zx jit_loop\n", (unsigned long)loop, sizeof(loop_code));
	fclose(map);
	while (wl_now() < end)
		run_jit((jit_fn)(uintptr_t)mem);
	/* the map stays, as a JIT's does, so that the profile can be named afterwards */
	return 0;
}
#else
int main(void)
{
	fputs("jit: x86-64 only\n", stderr);
	return 1;
}
#endif
