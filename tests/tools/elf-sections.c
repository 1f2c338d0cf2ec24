// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf-sections FILE COUNT SIZE [SECONDS]: write FILE, an ELF header that
 * claims COUNT sections the extended way (e_shnum 0, section 0's sh_size
 * COUNT), its section header table at 8 KiB, the file made SIZE bytes long
 * by truncation (sparse: a few KiB on disk).  At 4 KiB, a function of x86-64
 * code: a loop of RDI turns.  With SECONDS, then map the first 8 KiB
 * PROT_EXEC, as a program maps a library, and spin on the CPU that long in
 * that function (elsewhere than x86-64: in this program), so that a profiler
 * samples the process in the file and names frames there.
 * Exit 1 when the file cannot be written or mapped, 2 on a usage error.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CODE_AT 4096
#define SHDRS_AT 8192

/* dec %rdi; jnz .-3; ret */
static const unsigned char loop[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	Elf64_Ehdr eh = {0};
	Elf64_Shdr sh0 = {0};
#if !defined(__x86_64__)
	volatile uint64_t spin = 0;
#endif
	unsigned long long count, size;
	char *end;
	int fd;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: elf-sections FILE COUNT SIZE [SECONDS]\n");
		return 2;
	}
	count = strtoull(argv[2], &end, 0);
	if (*end)
		return 2;
	size = strtoull(argv[3], &end, 0);
	if (*end || size < SHDRS_AT + sizeof(sh0))
		return 2;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = SHDRS_AT;
	eh.e_shentsize = sizeof(sh0);
	eh.e_shnum = 0; /* the count is section 0's sh_size */
	sh0.sh_size = count;
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || pwrite(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    pwrite(fd, loop, sizeof(loop), CODE_AT) != (ssize_t)sizeof(loop) ||
	    pwrite(fd, &sh0, sizeof(sh0), SHDRS_AT) != (ssize_t)sizeof(sh0) ||
	    ftruncate(fd, (off_t)size) < 0) {
		perror(argv[1]);
		return 1;
	}
	if (argc == 5) {
		double until = now() + strtod(argv[4], NULL);
		unsigned char *p = mmap(NULL, SHDRS_AT, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		while (now() < until) {
#if defined(__x86_64__)
			void (*fn)(uint64_t);
			void *at = p + CODE_AT;

			memcpy(&fn, &at, sizeof(fn));
			fn(10000000);
#else
			for (int i = 0; i < 1000000; i++)
				spin++;
#endif
		}
	}
	close(fd);
	return 0;
}
