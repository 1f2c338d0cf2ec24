// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-dump [-x] [FILE]: print a record stream (fg-record(5)) as text, one
 * line a record, for tests and debugging.  A sample with a user stack
 * snapshot ends with it: " abi=1 regs=ax:HEX,bx:HEX,... sp=HEX size=N",
 * registers by their perf_regs names; with -x, then " data=HEX", the stack
 * bytes.  A bad stream: the records before it, then "fgr-dump: 'FILE':
 * REASON" and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/record.h"

/* perf_regs names of x86-64 (abi 1) */
static const char *const reg_names[FG_REG_X86_MAX] = {
    "ax", "bx", "cx", "dx", "si", "di", "bp",  "sp",  "ip",  "flags", "cs",  "ss",
    "ds", "es", "fs", "gs", "r8", "r9", "r10", "r11", "r12", "r13",   "r14", "r15",
};

/* a record's line, with a snapshot's registers and size (and bytes: `data`) at its end */
static void print_record(const struct fg_rec *rec, bool data)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (!f)
		fg_die("cannot print a record");
	fg_rec_print(f, rec);
	if (fclose(f) != 0)
		fg_die("cannot print a record");
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	fputs(line, stdout);
	free(line);
	if (rec->ustack) {
		const struct fg_rec_ustack *u = rec->ustack;
		char sep = '=';

		printf(" abi=%" PRIu32 " regs", u->abi);
		for (unsigned i = 0; i < 64; i++) {
			uint64_t v;

			if (fg_rec_ustack_reg(rec, i, &v) < 0)
				continue;
			if (u->abi == FG_USTACK_ABI_X86_64 && i < FG_REG_X86_MAX)
				printf("%c%s:%" PRIx64, sep, reg_names[i], v);
			else
				printf("%creg%u:%" PRIx64, sep, i, v);
			sep = ',';
		}
		if (sep == '=')
			fputs("=-", stdout);
		printf(" sp=%" PRIx64 " size=%" PRIu32, u->sp, u->size);
		if (data) {
			fputs(" data=", stdout);
			for (uint32_t i = 0; i < u->size; i++)
				printf("%02x", rec->ustack_data[i]);
		}
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	bool data = argc > 1 && strcmp(argv[1], "-x") == 0;
	const char *name;
	int fd;
	struct fg_rec_reader *r;
	const struct fg_rec_header *h;
	struct fg_rec rec;
	int rc, status = FG_EXIT_OK;

	argc -= data;
	argv += data;
	if (argc > 2) {
		fprintf(stderr, "usage: fgr-dump [-x] [FILE]\n");
		return FG_EXIT_USAGE;
	}
	name = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : NULL;
	fd = name ? open(name, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0)
		fg_die("cannot open '%s'", name);
	r = fg_rec_reader_new(fd, name ? name : "<stdin>");
	rc = fg_rec_read_header(r, &h);
	if (rc == 0) {
		fg_rec_print_header(stdout, h);
		while ((rc = fg_rec_next(r, &rec)) > 0)
			print_record(&rec, data);
	}
	if (rc < 0) {
		fflush(stdout);
		fg_warnx("'%s': %s", fg_rec_reader_name(r), fg_rec_reader_error(r));
		status = FG_EXIT_FAIL;
	}
	if (fg_close_stdout())
		status = FG_EXIT_FAIL;
	if (fg_rec_reader_skipped(r))
		fg_warnx("%llu records of unknown types skipped",
			 (unsigned long long)fg_rec_reader_skipped(r));
	fg_rec_reader_free(r);
	if (name)
		close(fd);
	return status;
}
