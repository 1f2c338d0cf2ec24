// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz fg-diff's reading and writing: any bytes as the two profiles (split
 * at the first NUL), with any options.  Nothing may crash, leak or read out
 * of bounds, and every output line must be "STACK COUNT1 COUNT2".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd(const uint8_t *p, size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

/* a line ends with " DIGITS DIGITS" */
static void check_line(const char *p, const char *nl)
{
	for (int k = 0; k < 2; k++) {
		const char *d = nl;

		while (d > p && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == nl || d == p || d[-1] != ' ')
			abort();
		nl = d - 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_diff_opts o;
	const uint8_t *split;
	char *out = NULL;
	size_t outlen = 0;
	FILE *mem;

	if (size == 0)
		return 0;
	o.normalize = data[0] & 1;
	o.strip_hex = data[0] & 2;
	data++;
	size--;
	split = memchr(data, '\0', size);
	size_t n1 = split ? (size_t)(split - data) : size;
	int fd1 = memfd(data, n1);
	int fd2 = memfd(split ? split + 1 : data, split ? size - n1 - 1 : 0);
	struct fg_diff *d = fg_diff_new(&o, NULL, NULL);
	fg_diff_read(d, 0, fd1, "a");
	fg_diff_read(d, 1, fd2, "b");
	mem = open_memstream(&out, &outlen);
	if (!mem)
		abort();
	fg_diff_write(d, mem);
	fclose(mem);
	for (const char *p = out, *end = out + outlen; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			abort();
		check_line(p, nl);
		p = nl + 1;
	}
	free(out);
	fg_diff_free(d);
	close(fd1);
	close(fd2);
	return 0;
}
