// SPDX-License-Identifier: BSD-2-Clause
/*
 * fgr-make [FILE]: write a record stream (fg-record(5)) from a text
 * description, for fg-sym's tests.  One record a line, '#' starts a comment:
 *
 *	header [freq=N]                        (written first even when absent)
 *	mapping pid=N [tid=N] start=A end=A [pgoff=A] [maj=N] [min=N] [ino=N]
 *	        [prot=rx] [time=N] [buildid=HEX] path=PATH-TO-END-OF-LINE
 *	sample pid=N [tid=N] [cpu=N] [time=N] [weight=N] [comm=NAME]
 *	       [flags=N] [event=N] [k=IP,IP,...] [u=IP,IP,...]
 *	       [regs=REG:V,REG:V,... [stack=W,W,...] [abi=N]]
 *	event id=N [kind=N] [config=N] [period=N] [freq=N] name=NAME-TO-END-OF-LINE
 *	                                       (the name as it is, unchecked)
 *	ksym addr=A [len=N] [time=N] [gone=1] name=NAME-TO-END-OF-LINE
 *	comm pid=N [tid=N] [time=N] [exec=1] comm=NAME
 *	exit pid=N [tid=N] [time=N]
 *	fork pid=N ppid=N [tid=N] [ptid=N] [time=N]
 *	lost count=N [cpu=N] [reason=N]
 *	creds pid=N uid=N [gid=N] [time=N]
 *	summary [samples=N]
 *	nosummary                              (end without the summary record)
 *	bytes HEX                              (raw bytes, for corrupt streams)
 *
 * A stream ends with a summary record (samples= the sample lines), as
 * fg-sample ends a run, unless it has one already, or `nosummary` or raw
 * bytes came last.
 * With regs=, the sample carries a user stack snapshot (as --call-graph
 * dwarf): the registers named (ax bx cx dx si di bp sp ip flags cs ss ds es
 * fs gs r8 ... r15, perf_regs' x86-64 numbering, abi 1 unless abi= says
 * otherwise) and the stack from the sp register up, as 64-bit words.
 * Numbers are decimal or 0x-hexadecimal; IPs, addresses, register values and
 * stack words are hexadecimal with or without 0x.  In comm= and path=, \xHH, \n, \t and \\ stand
 *for the bytes they name, so that tests can write hostile names.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/record.h"

static unsigned long lineno;

static noreturn void bad(const char *what)
{
	fg_diex("line %lu: %s", lineno, what);
}

/* the value of key=..., or NULL; `rest` takes everything to the end of the line */
static const char *val(char *line, const char *key, bool rest, char *buf, size_t bufsz)
{
	size_t kl = strlen(key);
	char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = rest ? strlen(v) : strcspn(v, " ");

			if (n >= bufsz)
				bad("value too long");
			memcpy(buf, v, n);
			buf[n] = '\0';
			return buf;
		}
		p += kl;
	}
	return NULL;
}

/* decode \xHH, \n, \t and \\ in place */
static char *unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		unsigned v;

		if (*r != '\\' || !r[1]) {
			*w++ = *r;
		} else if (r[1] == 'x' && isxdigit((unsigned char)r[2]) &&
			   isxdigit((unsigned char)r[3]) && sscanf(r + 2, "%2x", &v) == 1) {
			*w++ = (char)v;
			r += 3;
		} else {
			r++;
			*w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
		}
	}
	*w = '\0';
	return s;
}

static uint64_t num(char *line, const char *key, uint64_t def, bool hex)
{
	char buf[64], *end;
	const char *v = val(line, key, false, buf, sizeof(buf));
	uint64_t n;

	if (!v)
		return def;
	errno = 0;
	n = strtoull(v, &end, hex ? 16 : 0);
	if (errno || *end || end == v)
		bad("bad number");
	return n;
}

static size_t ips(char *line, const char *key, uint64_t *out, size_t max)
{
	static char buf[1 << 16];
	const char *v = val(line, key, false, buf, sizeof(buf));
	size_t n = 0;
	char *p = (char *)v, *end;

	if (!v || !*v)
		return 0;
	for (;;) {
		if (n == max)
			bad("too many IPs");
		errno = 0;
		out[n++] = strtoull(p, &end, 16);
		if (errno || end == p)
			bad("bad IP");
		if (*end == '\0')
			break;
		if (*end != ',')
			bad("bad IP list");
		p = end + 1;
	}
	return n;
}

static size_t hexbytes(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (s[0] && s[1]) {
		unsigned v;

		if (n == max || sscanf(s, "%2x", &v) != 1)
			bad("bad hex bytes");
		out[n++] = (uint8_t)v;
		s += 2;
		while (*s == ' ')
			s++;
	}
	return n;
}

/* perf_regs' x86-64 numbering (FG_REG_X86_* of fg-sample's sample.h) */
static const char *const reg_names[] = {
    "ax", "bx", "cx", "dx", "si", "di", "bp",  "sp",  "ip",  "flags", "cs",  "ss",
    "ds", "es", "fs", "gs", "r8", "r9", "r10", "r11", "r12", "r13",   "r14", "r15",
};

/* A sample with regs=: its snapshot after its IPs, as fg-record(5) lays it out. */
static void write_snapshot_sample(struct fg_rec_writer *w, char *line, struct fg_rec_sample *s,
				  const uint64_t *ipbuf)
{
	static char buf[1 << 16];
	static uint64_t stack[FG_REC_MAX_FRAMES];
	uint64_t regs[24] = {0}, mask = 0, packed[24];
	struct fg_rec_ustack u;
	size_t nips = (size_t)s->nr_kernel + s->nr_user, nwords, at;
	uint32_t nregs = 0;
	uint8_t *p;
	char *tok, *save;

	val(line, "regs", false, buf, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end;
		size_t r;

		if (!colon)
			bad("bad register: REG:VALUE");
		*colon = '\0';
		for (r = 0; r < 24 && strcmp(reg_names[r], tok) != 0; r++)
			;
		if (r == 24)
			bad("unknown register");
		errno = 0;
		regs[r] = strtoull(colon + 1, &end, 16);
		if (errno || *end || end == colon + 1)
			bad("bad register value");
		mask |= 1ull << r;
	}
	for (size_t r = 0; r < 24; r++)
		if (mask >> r & 1)
			packed[nregs++] = regs[r];
	nwords = ips(line, "stack", stack, FG_REC_MAX_FRAMES);
	memset(&u, 0, sizeof(u));
	u.abi = (uint32_t)num(line, "abi", 1, false);
	u.nr_regs = nregs;
	u.regs_mask = mask;
	u.sp = regs[7];
	u.size = (uint32_t)(8 * nwords);
	s->flags |= FG_SAMPLE_F_USTACK_SNAPSHOT;
	size_t plen = sizeof(*s) + 8 * nips + sizeof(u) + 8 * (size_t)nregs + u.size;
	p = fg_xcalloc(1, plen);
	memcpy(p, s, sizeof(*s));
	at = sizeof(*s);
	memcpy(p + at, ipbuf, 8 * nips);
	at += 8 * nips;
	memcpy(p + at, &u, sizeof(u));
	at += sizeof(u);
	memcpy(p + at, packed, 8 * (size_t)nregs);
	at += 8 * (size_t)nregs;
	memcpy(p + at, stack, u.size);
	fg_rec_write(w, FG_REC_SAMPLE, p, plen);
	free(p);
}

static void write_summary(struct fg_rec_writer *w, uint64_t samples)
{
	struct fg_rec_summary s;

	memset(&s, 0, sizeof(s));
	s.samples = samples;
	s.command_status = -1;
	fg_rec_write(w, FG_REC_SUMMARY, &s, sizeof(s));
}

int main(int argc, char **argv)
{
	FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
	struct fg_rec_writer *w;
	struct fg_rec_header h;
	bool header_done = false, closed = false;
	uint64_t nsamples = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	static uint64_t ipbuf[2 * FG_REC_MAX_FRAMES];

	fg_set_progname("fgr-make");
	if (!in)
		fg_die("cannot open '%s'", argv[1]);
	w = fg_rec_writer_new(STDOUT_FILENO);
	fg_rec_header_init(&h);
	h.freq = 99;
	h.clock = FG_CLOCK_MONOTONIC;
	h.ncpus = 1;
	while ((len = getline(&line, &cap, in)) >= 0) {
		char cmd[32], buf[8192];
		const char *v;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!line[strspn(line, " \t")] || line[strspn(line, " \t")] == '#')
			continue;
		if (sscanf(line, "%31s", cmd) != 1)
			continue;
		if (strcmp(cmd, "bytes") == 0) {
			uint8_t raw[4096];
			size_t n = hexbytes(line + 6, raw, sizeof(raw));

			fg_rec_writer_flush(w);
			if (write(STDOUT_FILENO, raw, n) != (ssize_t)n)
				fg_die("write error");
			header_done = true;
			closed = true;
			continue;
		}
		closed = false;
		if (!header_done) {
			if (strcmp(cmd, "header") == 0)
				h.freq = num(line, "freq", 99, false);
			fg_rec_write_header(w, &h);
			header_done = true;
			if (strcmp(cmd, "header") == 0)
				continue;
		}
		if (strcmp(cmd, "mapping") == 0) {
			struct fg_rec_mapping m;

			memset(&m, 0, sizeof(m));
			m.pid = (uint32_t)num(line, "pid", 0, false);
			m.tid = (uint32_t)num(line, "tid", m.pid, false);
			m.time_ns = num(line, "time", 0, false);
			m.start = num(line, "start", 0, true);
			m.end = num(line, "end", 0, true);
			m.pgoff = num(line, "pgoff", 0, true);
			m.maj = (uint32_t)num(line, "maj", 0, false);
			m.min = (uint32_t)num(line, "min", 0, false);
			m.ino = num(line, "ino", 0, false);
			v = val(line, "prot", false, buf, sizeof(buf));
			m.prot = PROT_READ | PROT_EXEC;
			if (v)
				m.prot = (strchr(v, 'r') ? PROT_READ : 0) |
					 (strchr(v, 'w') ? PROT_WRITE : 0) |
					 (strchr(v, 'x') ? PROT_EXEC : 0);
			m.mflags = MAP_PRIVATE;
			m.flags = m.time_ns ? 0 : FG_MAP_F_SNAPSHOT;
			v = val(line, "buildid", false, buf, sizeof(buf));
			if (v) {
				m.build_id_len =
				    (uint8_t)hexbytes(v, m.build_id, FG_REC_BUILD_ID_MAX);
				m.flags |= FG_MAP_F_BUILD_ID;
			}
			v = val(line, "path", true, buf, sizeof(buf));
			fg_rec_write_mapping(w, &m, v ? unescape(buf) : "");
		} else if (strcmp(cmd, "sample") == 0) {
			struct fg_rec_sample s;

			memset(&s, 0, sizeof(s));
			s.pid = (uint32_t)num(line, "pid", 0, false);
			s.tid = (uint32_t)num(line, "tid", s.pid, false);
			s.cpu = (uint32_t)num(line, "cpu", 0, false);
			s.time_ns = num(line, "time", 0, false);
			s.weight = num(line, "weight", 1, false);
			/* flags=N: FG_SAMPLE_F_* and a wait's FG_SAMPLE_STATE_* (--off-cpu waits)
			 */
			s.flags = (uint32_t)num(line, "flags", 0, false) |
				  (uint32_t)num(line, "event", 0, false) << FG_SAMPLE_EVENT_SHIFT;
			v = val(line, "comm", false, buf, sizeof(buf));
			snprintf(s.comm, sizeof(s.comm), "%s", v ? unescape(buf) : "test");
			s.nr_kernel = (uint32_t)ips(line, "k", ipbuf, FG_REC_MAX_FRAMES);
			s.nr_user =
			    (uint32_t)ips(line, "u", ipbuf + s.nr_kernel, FG_REC_MAX_FRAMES);
			if (val(line, "regs", false, buf, sizeof(buf)))
				write_snapshot_sample(w, line, &s, ipbuf);
			else
				fg_rec_write_sample(w, &s, ipbuf);
			nsamples++;
		} else if (strcmp(cmd, "event") == 0) {
			struct fg_rec_event e;
			char payload[sizeof(e) + sizeof(buf)];
			size_t n;

			memset(&e, 0, sizeof(e));
			e.id = (uint32_t)num(line, "id", 0, false);
			e.kind = (uint32_t)num(line, "kind", FG_EVENT_SOFTWARE, false);
			e.config = num(line, "config", 0, false);
			e.period = num(line, "period", 0, false);
			e.freq = num(line, "freq", 0, false);
			v = val(line, "name", true, buf, sizeof(buf));
			n = v ? strlen(unescape(buf)) : 0;
			memcpy(payload, &e, sizeof(e));
			memcpy(payload + sizeof(e), v ? buf : "", n + 1);
			fg_rec_write(w, FG_REC_EVENT, payload, sizeof(e) + n + 1);
		} else if (strcmp(cmd, "ksym") == 0) {
			struct fg_rec_ksym k;
			char payload[sizeof(k) + sizeof(buf)];
			size_t n;

			memset(&k, 0, sizeof(k));
			k.addr = num(line, "addr", 0, true);
			k.len = (uint32_t)num(line, "len", 1, false);
			k.time_ns = num(line, "time", 0, false);
			k.flags = num(line, "gone", 0, false) ? FG_KSYM_F_GONE : 0;
			v = val(line, "name", true, buf, sizeof(buf));
			n = v ? strlen(unescape(buf)) : 0;
			memcpy(payload, &k, sizeof(k));
			memcpy(payload + sizeof(k), v ? buf : "", n + 1);
			fg_rec_write(w, FG_REC_KSYM, payload, sizeof(k) + n + 1);
		} else if (strcmp(cmd, "comm") == 0) {
			struct fg_rec_comm c;

			memset(&c, 0, sizeof(c));
			c.pid = (uint32_t)num(line, "pid", 0, false);
			c.tid = (uint32_t)num(line, "tid", c.pid, false);
			c.time_ns = num(line, "time", 0, false);
			c.flags = num(line, "exec", 0, false) ? FG_COMM_F_EXEC : 0;
			v = val(line, "comm", false, buf, sizeof(buf));
			snprintf(c.comm, sizeof(c.comm), "%s", v ? unescape(buf) : "");
			fg_rec_write(w, FG_REC_COMM, &c, sizeof(c));
		} else if (strcmp(cmd, "exit") == 0 || strcmp(cmd, "fork") == 0) {
			struct fg_rec_task t;

			memset(&t, 0, sizeof(t));
			t.pid = (uint32_t)num(line, "pid", 0, false);
			t.tid = (uint32_t)num(line, "tid", t.pid, false);
			t.ppid = (uint32_t)num(line, "ppid", 0, false);
			t.ptid = (uint32_t)num(line, "ptid", t.ppid, false);
			t.time_ns = num(line, "time", 0, false);
			fg_rec_write(w, cmd[0] == 'e' ? FG_REC_EXIT : FG_REC_FORK, &t, sizeof(t));
		} else if (strcmp(cmd, "lost") == 0) {
			struct fg_rec_lost l;

			memset(&l, 0, sizeof(l));
			l.count = num(line, "count", 1, false);
			l.cpu = (uint32_t)num(line, "cpu", 0, false);
			l.reason = (uint32_t)num(line, "reason", FG_LOST_RINGBUF_FULL, false);
			fg_rec_write(w, FG_REC_LOST, &l, sizeof(l));
		} else if (strcmp(cmd, "creds") == 0) {
			struct fg_rec_creds c;

			memset(&c, 0, sizeof(c));
			c.pid = (uint32_t)num(line, "pid", 0, false);
			c.uid = (uint32_t)num(line, "uid", 0, false);
			c.gid = (uint32_t)num(line, "gid", c.uid, false);
			c.time_ns = num(line, "time", 0, false);
			fg_rec_write(w, FG_REC_CREDS, &c, sizeof(c));
		} else if (strcmp(cmd, "summary") == 0) {
			write_summary(w, num(line, "samples", nsamples, false));
			closed = true;
		} else if (strcmp(cmd, "nosummary") == 0) {
			closed = true;
		} else {
			bad("unknown record kind");
		}
	}
	if (!header_done)
		fg_rec_write_header(w, &h);
	if (!closed)
		write_summary(w, nsamples);
	free(line);
	if (fg_rec_writer_free(w) < 0)
		fg_die("write error");
	return 0;
}
