// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the record reader: any bytes give records that are whole and
 * consistent, then the end or an error naming a byte offset inside the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* every IP and byte handed out is read, so the sanitizers see any read out of bounds */
static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = "fuzz";
	int fd = memfd_create("fg-fuzz-record", MFD_CLOEXEC);
	struct fg_rec_reader *r;
	struct fg_rec rec;
	uint64_t sum = 0, last = 0;
	FILE *null;
	int rc;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return 0;
	}
	null = fopen("/dev/null", "w");
	r = fg_rec_reader_new(fd, path);
	while ((rc = fg_rec_next(r, &rec)) > 0) {
		/* records lie inside the input, in order, 8-aligned */
		if (rec.offset + rec.size > size || rec.offset < last || rec.size % 8)
			abort();
		last = rec.offset + rec.size;
		if (rec.type == FG_REC_SAMPLE) {
			for (uint32_t i = 0; i < rec.sample->nr_kernel; i++)
				sum += rec.kips[i];
			for (uint32_t i = 0; i < rec.sample->nr_user; i++)
				sum += rec.uips[i];
			if (rec.ustack) {
				/* the snapshot lies inside its record: read all of it */
				const uint8_t *end = (const uint8_t *)rec.payload + rec.size - 8;
				uint64_t v;

				if (rec.ustack_data + rec.ustack->size > end ||
				    (const uint8_t *)(rec.ustack_regs + rec.ustack->nr_regs) > end)
					abort();
				for (uint32_t i = 0; i < rec.ustack->size; i++)
					sum += rec.ustack_data[i];
				for (unsigned reg = 0; reg <= 64; reg++)
					if (fg_rec_ustack_reg(&rec, reg, &v) == 0)
						sum += v;
			}
		} else if (rec.type == FG_REC_MAPPING) {
			sum += strlen(rec.path);
		}
		if (null)
			fg_rec_print(null, &rec);
	}
	if (rc < 0) {
		const char *msg = fg_rec_reader_error(r);
		const char *at = strstr(msg, "at byte ");

		if (!at || strtoull(at + 8, NULL, 10) > size)
			abort();
	}
	if (rc == 0 && fg_rec_reader_offset(r) != size)
		abort();
	fg_rec_reader_free(r);
	if (null)
		fclose(null);
	close(fd);
	sink += sum;
	return 0;
}
