// SPDX-License-Identifier: BSD-2-Clause
/* Two folded profiles into one with two count columns, as difffolded.pl does. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fg/badline.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/diff.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/lines.h"

/* counts beyond this cannot be written as whole numbers exactly */
#define MAX_COUNT 9007199254740992.0 /* 2^53 */

struct fg_diff {
	struct fg_diff_opts o;
	struct fg_badlines bad;
	struct fg_diff_stats st;
	struct fg_hash *stacks; /* stack -> index into counts */
	double (*counts)[2];
	size_t acounts;
	struct fg_buf key;
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* the stack as the key: with strip_hex, each "0x" and hex digits becomes "0x..." */
static void make_key(struct fg_diff *d, const char *s, size_t n)
{
	struct fg_buf *k = &d->key;

	fg_buf_reset(k);
	if (!d->o.strip_hex) {
		fg_buf_add(k, s, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		if (s[i] == '0' && i + 2 < n && s[i + 1] == 'x' && is_hex(s[i + 2])) {
			fg_buf_add(k, "0x...", 5);
			for (i += 2; i < n && is_hex(s[i]); i++)
				;
		} else {
			fg_buf_addch(k, s[i++]);
		}
	}
}

static int one_line(struct fg_diff *d, int which, const char *name, uint64_t lineno,
		    const char *line, size_t len)
{
	struct fg_folded fl;
	bool ins;

	if (len && line[len - 1] == '\r')
		len--;
	if (fg_folded_parse(line, len, &fl) != 0) {
		size_t i = 0;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i < len)
			fg_badline(&d->bad, name, lineno, "line without a count", line, len);
		return 0;
	}
	if (!(fl.count <= MAX_COUNT)) {
		fg_badline(&d->bad, name, lineno, "count too large", line, len);
		return 0;
	}
	/* the stack: all before the whitespace before the last count */
	make_key(d, line, (size_t)(fl.count_text - line) - 1);
	struct fg_hash_entry *e = fg_hash_upsert(d->stacks, d->key.data, d->key.len, &ins);
	size_t i = (size_t)(e - fg_hash_at(d->stacks, 0));
	if (ins) {
		FG_ALLOC_GROW(d->counts, i + 1, d->acounts);
		d->counts[i][0] = d->counts[i][1] = 0;
	}
	d->counts[i][which] += fl.count;
	d->st.totals[which] += fl.count;
	d->st.lines[which]++;
	return 0;
}

int fg_diff_read(struct fg_diff *d, int which, int fd, const char *name)
{
	struct fg_lines l;
	const char *line;
	size_t len;
	int r;

	fg_lines_init_fd(&l, fd, name);
	while ((r = fg_lines_next(&l, &line, &len)) == 1)
		r = one_line(d, which ? 1 : 0, name, l.lineno, line, len);
	if (r < 0)
		fg_logf(d->bad.log, d->bad.ctx, "cannot read '%s': %s", name, strerror(-r));
	fg_lines_release(&l);
	return r;
}

int fg_diff_write(struct fg_diff *d, FILE *out)
{
	size_t n = fg_hash_count(d->stacks);
	struct fg_hash_entry **v = fg_hash_sorted(d->stacks);
	struct fg_hash_entry *first = n ? fg_hash_at(d->stacks, 0) : NULL;
	double scale = 1;

	/* -n: the first profile as if it had the second one's total */
	if (d->o.normalize && d->st.totals[0] > 0)
		scale = d->st.totals[1] / d->st.totals[0];
	for (size_t i = 0; i < n && !ferror(out); i++) {
		const double *c = d->counts[v[i] - first];

		fwrite(v[i]->key, 1, v[i]->len, out);
		fprintf(out, " %.0f %.0f\n", trunc(c[0] * scale), trunc(c[1]));
	}
	free(v);
	return ferror(out) ? -EIO : 0;
}

const struct fg_diff_stats *fg_diff_stats(struct fg_diff *d)
{
	d->st.stacks = fg_hash_count(d->stacks);
	d->st.bad_lines = d->bad.count;
	return &d->st;
}

struct fg_diff *fg_diff_new(const struct fg_diff_opts *opts, fg_log_fn log, void *ctx)
{
	struct fg_diff *d = fg_xcalloc(1, sizeof(*d));

	d->o = *opts;
	d->bad.log = log;
	d->bad.ctx = ctx;
	d->stacks = fg_hash_new(1024);
	return d;
}

void fg_diff_free(struct fg_diff *d)
{
	if (!d)
		return;
	fg_hash_free(d->stacks);
	free(d->counts);
	fg_buf_release(&d->key);
	free(d);
}
