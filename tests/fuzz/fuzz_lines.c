// SPDX-License-Identifier: BSD-2-Clause
/* Fuzz the line reader: any bytes, any split, every line accounted for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fg-fuzz-lines-XXXXXX";
	int fd = mkstemp(path);
	struct fg_lines l;
	const char *line;
	size_t len, total = 0;

	if (fd < 0)
		return 0;
	unlink(path);
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return 0;
	}
	fg_lines_init_fd(&l, fd, path);
	while (fg_lines_next(&l, &line, &len) == 1) {
		if (memchr(line, '\n', len))
			abort();
		total += len + 1;
	}
	/* every byte was handed out, the last newline perhaps missing */
	if (total != size && total != size + 1)
		abort();
	fg_lines_release(&l);
	close(fd);
	return 0;
}
