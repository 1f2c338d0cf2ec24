// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the record reader: any bytes give records that are whole and
 * consistent, then the end or an error naming a byte offset inside the input.
 * Each input is read twice, with read() and mapped (fg_rec_reader_map), and
 * the two must agree record for record, and on the end or the error.
 */
#include <setjmp.h>
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

/* What one reading saw: its records' offsets, sizes and types, and how it ended. */
struct seen {
	uint64_t sum, records, last, end;
	int rc;
	char msg[256];
};

static void check_record(const struct fg_rec *rec, size_t size, struct seen *s, FILE *null)
{
	/* records lie inside the input, in order, 8-aligned */
	if (rec->offset + rec->size > size || rec->offset < s->last || rec->size % 8)
		abort();
	s->last = rec->offset + rec->size;
	s->records++;
	s->sum = s->sum * 31 + rec->offset * 7 + rec->size + rec->type;
	if (rec->type == FG_REC_SAMPLE) {
		for (uint32_t i = 0; i < rec->sample->nr_kernel; i++)
			s->sum += rec->kips[i];
		for (uint32_t i = 0; i < rec->sample->nr_user; i++)
			s->sum += rec->uips[i];
		if (rec->ustack) {
			/* the snapshot lies inside its record: read all of it */
			const uint8_t *end = (const uint8_t *)rec->payload + rec->size - 8;
			uint64_t v;

			if (rec->ustack_data + rec->ustack->size > end ||
			    (const uint8_t *)(rec->ustack_regs + rec->ustack->nr_regs) > end)
				abort();
			for (uint32_t i = 0; i < rec->ustack->size; i++)
				s->sum += rec->ustack_data[i];
			for (unsigned reg = 0; reg <= 64; reg++)
				if (fg_rec_ustack_reg(rec, reg, &v) == 0)
					s->sum += v;
		}
	} else if (rec->type == FG_REC_MAPPING) {
		s->sum += strlen(rec->path);
	} else if (rec->type == FG_REC_KSYM) {
		/* its name ends inside the record */
		if ((const uint8_t *)rec->ksym_name + strlen(rec->ksym_name) >=
		    (const uint8_t *)rec->payload + rec->size - 8)
			abort();
		s->sum += rec->ksym->addr + rec->ksym->len;
	}
	if (null)
		fg_rec_print(null, rec);
}

static void read_input(int fd, bool map, size_t size, struct seen *s, FILE *null)
{
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "fuzz");
	struct fg_rec rec;
	sigjmp_buf jb;

	memset(s, 0, sizeof(*s));
	if (map) {
		/* nothing truncates the file here: a SIGBUS would be a reader's bug */
		if (sigsetjmp(jb, 1))
			abort();
		if (fg_rec_reader_guard(r, &jb) < 0)
			abort();
		fg_rec_reader_map(r);
	}
	while ((s->rc = fg_rec_next(r, &rec)) > 0)
		check_record(&rec, size, s, null);
	if (map && size && !fg_rec_reader_mapped(r))
		abort();
	if (s->rc < 0) {
		const char *msg = fg_rec_reader_error(r);
		const char *at = strstr(msg, "at byte ");

		if (!at || strtoull(at + 8, NULL, 10) > size)
			abort();
		snprintf(s->msg, sizeof(s->msg), "%s", msg);
	}
	s->end = fg_rec_reader_offset(r);
	if (s->rc == 0 && s->end != size)
		abort();
	fg_rec_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fg-fuzz-record", MFD_CLOEXEC);
	struct seen by_read, mapped;
	FILE *null;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return 0;
	}
	null = fopen("/dev/null", "w");
	read_input(fd, false, size, &by_read, null);
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	read_input(fd, true, size, &mapped, NULL);
	/* one parser: the same records, the same end, the same words */
	if (by_read.rc != mapped.rc || by_read.records != mapped.records ||
	    by_read.sum != mapped.sum || by_read.end != mapped.end ||
	    strcmp(by_read.msg, mapped.msg) != 0)
		abort();
	if (null)
		fclose(null);
	close(fd);
	sink += by_read.sum;
	return 0;
}
