// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the folder and the perf-script line parser: any bytes, in any of the
 * input formats, with any options.  Nothing may crash, leak or read out of
 * bounds, and every output line must be "STACK COUNT" (or two counts), a count
 * whole or with decimals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/fold.h"
#include "fg/perfscript.h"
#include "fg/symname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_output(const char *out, size_t len)
{
	const char *p = out, *end = out + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp;

		if (!nl)
			abort(); /* every line ends with a newline */
		sp = nl;
		while (sp > p && sp[-1] >= '0' && sp[-1] <= '9')
			sp--;
		if (sp > p && sp < nl && sp[-1] == '.') {
			/* "2.5": digits on both sides of the point */
			sp--;
			if (sp == p || sp[-1] < '0' || sp[-1] > '9')
				abort();
			while (sp > p && sp[-1] >= '0' && sp[-1] <= '9')
				sp--;
		}
		if (sp == nl || sp == p || sp[-1] != ' ')
			abort(); /* and with a count */
		p = nl + 1;
	}
}

static bool same_span(struct fg_span a, struct fg_span b)
{
	return a.p == b.p && a.len == b.len;
}

static bool same_header(const struct fg_ps_header *a, const struct fg_ps_header *b)
{
	return same_span(a->comm, b->comm) && same_span(a->pid, b->pid) &&
	       same_span(a->tid, b->tid) && same_span(a->time, b->time) &&
	       same_span(a->event, b->event) && same_span(a->rest, b->rest) &&
	       same_span(a->record, b->record) && a->pid_num == b->pid_num &&
	       a->tid_num == b->tid_num && a->has_period == b->has_period &&
	       a->period == b->period && a->weak == b->weak;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const skip[] = {"main", "[unknown]"};
	static const uint64_t pids[] = {1, 42};
	static const char *const comms[] = {"java", "a b"};
	static const char *const states[] = {"S", "R+"};
	struct fg_fold_opts o = {.input = FG_FOLD_AUTO};
	const char *text;
	size_t len;

	if (size < 2)
		return 0;
	uint8_t a = data[0], b = data[1];
	o.input = (enum fg_fold_input)(a & 3);
	o.include_pid = a & 4;
	o.include_tid = a & 8;
	o.annotate_kernel = a & 16;
	o.annotate_jit = a & 32;
	o.include_addrs = a & 64;
	o.count_samples = a & 128;
	o.srcline = b & 1;
	if (b & 2) {
		o.skip_after = skip;
		o.n_skip_after = 2;
	}
	if (b & 4) {
		o.only_pids = pids;
		o.n_only_pids = 2;
	}
	if (b & 8) {
		o.only_comms = comms;
		o.n_only_comms = 2;
	}
	if (b & 16)
		o.event_filter = (b & 32) ? "cycles:u" : "cycles";
	o.wall = b & 64;
	if (b & 128) {
		o.states = states;
		o.n_states = 2;
	}
	text = (const char *)data + 2;
	len = size - 2;

	/* the line parsers on their own, on every line */
	struct fg_ps_memo *memo = calloc(1, sizeof(*memo));
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct fg_ps_header h;
		struct fg_ps_frame fr;
		struct fg_span s;

		int hr = fg_ps_parse_header(p, n, &h);
		struct fg_ps_header g;

		/* the shorter path for perf's default header reads it as the general parser */
		if (fg_ps_parse_header_general(p, n, &g) != hr ||
		    ((hr == 0 || hr == FG_PS_SIDEBAND) && !same_header(&h, &g)))
			abort();
		/* and so does a shape remembered from a line before */
		if (fg_ps_parse_header_memo(memo, p, n, &g) != hr ||
		    ((hr == 0 || hr == FG_PS_SIDEBAND) && !same_header(&h, &g)))
			abort();
		if (hr == 0 || hr == FG_PS_SIDEBAND) {
			if (h.comm.p < p || h.comm.p + h.comm.len > p + n ||
			    h.rest.p + h.rest.len > p + n)
				abort();
			if (h.event.len)
				(void)fg_ps_event_base_len(h.event.p, h.event.len);
			if (hr == FG_PS_SIDEBAND &&
			    (h.record.p < p || h.record.p + h.record.len > p + n))
				abort();
			if (h.rest.len && fg_ps_find_frame(h.rest.p, h.rest.len, &fr) == 0 &&
			    (fr.addr.p < h.rest.p ||
			     fr.sym.p + fr.sym.len > h.rest.p + h.rest.len ||
			     fr.module.p + fr.module.len > h.rest.p + h.rest.len))
				abort();
		}
		if (fg_ps_parse_frame(p, n, &fr) == 0) {
			if (fr.sym.p < p || fr.module.p + fr.module.len > p + n)
				abort();
			(void)fg_ps_module_is_kernel(fr.module.p, fr.module.len);
			(void)fg_ps_module_is_jit(fr.module.p, fr.module.len);
			/* the Rust tidy never grows a name, and the argument cut stays inside */
			char *t = malloc(fr.sym.len + 1);
			if (fg_symname_rust_tidy(fr.sym.p, fr.sym.len, t) > fr.sym.len ||
			    fg_symname_args_start(fr.sym.p, fr.sym.len) > fr.sym.len)
				abort();
			free(t);
		}
		(void)fg_ps_is_srcline(p, n, &s);
		(void)fg_ps_is_extra_line(p, n);
		p += n + 1;
	}
	free(memo);

	struct fg_fold *f = fg_fold_new(&o, NULL, NULL);
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp = open_memstream(&out, &outlen);

	/* twice: a second input merges into the first */
	int r1 = fg_fold_read_mem(f, text, len, "fuzz");
	if (r1 == 0)
		r1 = fg_fold_read_mem(f, text, len, "fuzz2");
	fg_fold_write(f, fp);
	fclose(fp);
	check_output(out, outlen);

	/*
	 * The same inputs fed in pieces, as from a pipe: the same profile (lines
	 * cut between pieces are not looked up in the sample cache, so this also
	 * checks the cache against folding every sample).  Unless the input is
	 * bad: a stream keeps what it folded before a NUL byte says it is binary.
	 */
	struct fg_fold *g = fg_fold_new(&o, NULL, NULL);
	char *out2 = NULL;
	size_t outlen2 = 0;
	uint32_t seed = (uint32_t)b << 8 | a;
	int r2 = 0;

	for (int k = 0; k < 2 && r2 == 0; k++) {
		r2 = fg_fold_begin(g, k ? "fuzz2" : "fuzz");
		for (size_t pos = 0, n; pos < len && r2 == 0; pos += n) {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 61;
			if (n > len - pos)
				n = len - pos;
			r2 = fg_fold_feed(g, text + pos, n);
		}
		if (r2 == 0)
			r2 = fg_fold_end(g);
	}
	fp = open_memstream(&out2, &outlen2);
	fg_fold_write(g, fp);
	fclose(fp);
	const struct fg_fold_stats *s1 = fg_fold_stats(f), *s2 = fg_fold_stats(g);
	if (r1 != r2)
		abort(); /* bad to one, not to the other */
	if (r1 == 0 &&
	    (outlen != outlen2 || memcmp(out, out2, outlen) != 0 || s1->samples != s2->samples ||
	     s1->bad_lines != s2->bad_lines || s1->other_events != s2->other_events ||
	     s1->filtered != s2->filtered || s1->lines != s2->lines))
		abort(); /* not the profile of the whole input */
	free(out2);
	fg_fold_free(g);
	free(out);
	fg_fold_free(f);
	return 0;
}
