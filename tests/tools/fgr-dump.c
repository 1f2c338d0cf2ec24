// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-dump [FILE]: print a record stream (fg-record(5)) as text, one line a
 * record, for tests and debugging.  A bad stream: the records before it,
 * then "fgr-dump: 'FILE': REASON" and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/record.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : NULL;
	int fd = name ? open(name, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	struct fg_rec_reader *r;
	const struct fg_rec_header *h;
	struct fg_rec rec;
	int rc, status = FG_EXIT_OK;

	if (argc > 2) {
		fprintf(stderr, "usage: fgr-dump [FILE]\n");
		return FG_EXIT_USAGE;
	}
	if (fd < 0)
		fg_die("cannot open '%s'", name);
	r = fg_rec_reader_new(fd, name ? name : "<stdin>");
	rc = fg_rec_read_header(r, &h);
	if (rc == 0) {
		fg_rec_print_header(stdout, h);
		while ((rc = fg_rec_next(r, &rec)) > 0)
			fg_rec_print(stdout, &rec);
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
