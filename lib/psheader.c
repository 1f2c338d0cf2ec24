// SPDX-License-Identifier: BSD-2-Clause
/* perf script's header comments: written for fg-sym --header, read for fg-pprof. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fg/perfscript.h"
#include "fg/psheader.h"

static const char *find(const char *s, size_t n, const char *lit)
{
	const char *p = memmem(s, n, lit, strlen(lit));

	return p ? p + strlen(lit) : NULL;
}

int fg_psheader_write(FILE *out, const struct fg_psheader_info *in)
{
	char date[64] = "";

	fputs("# ========\n", out);
	if (in->has_ref) {
		time_t t = (time_t)(in->ref_realtime_ns / 1000000000);
		struct tm tm;

		if (gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm);
		fprintf(out, "# captured on    : %s\n", date);
	}
	if (in->host)
		fprintf(out, "# hostname : %s\n", in->host);
	if (in->release)
		fprintf(out, "# os release : %s\n", in->release);
	if (in->event && in->freq)
		fprintf(out,
			"# event : name = %s, , type = 1, { sample_period, sample_freq } = %llu, "
			"sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD, freq = 1, clockid = 1\n",
			in->event, (unsigned long long)in->freq);
	if (in->has_ref) {
		time_t t = (time_t)(in->ref_realtime_ns / 1000000000);
		struct tm tm;

		date[0] = '\0';
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%F %T", &tm);
		fprintf(out, "# clockid: monotonic (1)\n");
		fprintf(
		    out,
		    "# reference time: %s.%06llu = %llu.%06llu (TOD) = %llu.%09llu (monotonic)\n",
		    date, (unsigned long long)(in->ref_realtime_ns % 1000000000 / 1000),
		    (unsigned long long)(in->ref_realtime_ns / 1000000000),
		    (unsigned long long)(in->ref_realtime_ns % 1000000000 / 1000),
		    (unsigned long long)(in->ref_clock_ns / 1000000000),
		    (unsigned long long)(in->ref_clock_ns % 1000000000));
	}
	fputs("# ========\n#\n", out);
	return ferror(out) ? -EIO : 0;
}

/* "SECS[.FRACTION]" at *p (before end): nanoseconds, *p moved past it; -EINVAL */
static int parse_secs(const char **p, const char *end, uint64_t *ns)
{
	const char *s = *p;
	uint64_t secs = 0, frac = 0;
	int digits = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(secs, 10, &secs) ||
		    __builtin_add_overflow(secs, (uint64_t)(*s - '0'), &secs))
			return -EINVAL;
	if (s < end && *s == '.') {
		for (s++; s < end && *s >= '0' && *s <= '9'; s++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (__builtin_mul_overflow(secs, 1000000000ull, &secs) ||
	    __builtin_add_overflow(secs, frac, ns))
		return -EINVAL;
	*p = s;
	return 0;
}

int fg_psheader_time(const char *line, size_t len, uint64_t *ns)
{
	struct fg_ps_header h;
	int r = fg_ps_parse_header(line, len, &h);

	if (r != 0 && r != FG_PS_SIDEBAND)
		return -ENOENT;
	return fg_psheader_time_ns(&h, ns);
}

int fg_psheader_time_ns(const struct fg_ps_header *h, uint64_t *ns)
{
	const char *p = h->time.p, *end;

	if (!h->time.len)
		return -ENOENT; /* (and no pointer arithmetic on a NULL span) */
	end = p + h->time.len;
	return parse_secs(&p, end, ns) == 0 && p == end ? 0 : -ENOENT;
}

/* a comment's text after "#" and its spaces */
static const char *body(const char *line, size_t *len)
{
	size_t i = 0;

	if (!*len || line[0] != '#')
		return NULL;
	for (i = 1; i < *len && line[i] == ' '; i++)
		;
	*len -= i;
	return line + i;
}

int fg_psheader_parse_event(const char *line, size_t len, struct fg_psheader_event *e)
{
	const char *s = body(line, &len), *end, *nm, *comma, *v;
	size_t n;

	if (!s || len < 8 || memcmp(s, "event : ", 8) != 0 || !(nm = find(s, len, "name = ")))
		return -EINVAL;
	end = s + len;
	memset(e, 0, sizeof(*e));
	comma = memchr(nm, ',', (size_t)(end - nm));
	n = fg_ps_event_base_len(nm, (size_t)((comma ? comma : end) - nm));
	if (n == 0 || n >= sizeof(e->name))
		return -EINVAL;
	memcpy(e->name, nm, n);
	if (!(v = find(s, len, "sample_freq } = ")) && !(v = find(s, len, "sample_freq = ")) &&
	    !(v = find(s, len, "sample_period = ")))
		return -EINVAL;
	for (; v < end && *v >= '0' && *v <= '9'; v++)
		if (__builtin_mul_overflow(e->n, 10, &e->n) ||
		    __builtin_add_overflow(e->n, (uint64_t)(*v - '0'), &e->n))
			return -EINVAL;
	e->freq_mode = find(s, len, " freq = 1") != NULL;
	return e->n ? 0 : -EINVAL;
}

int fg_psheader_parse_reftime(const char *line, size_t len, uint64_t *realtime_ns,
			      uint64_t *clock_ns)
{
	const char *s = body(line, &len), *end, *p;

	if (!s || len < 16 || memcmp(s, "reference time: ", 16) != 0 || !(p = find(s, len, " = ")))
		return -EINVAL;
	end = s + len;
	if (parse_secs(&p, end, realtime_ns) != 0 || (size_t)(end - p) < 9 ||
	    memcmp(p, " (TOD) = ", 9) != 0)
		return -EINVAL;
	p += 9;
	if (parse_secs(&p, end, clock_ns) != 0 || (size_t)(end - p) < 2 || memcmp(p, " (", 2) != 0)
		return -EINVAL;
	return 0;
}
