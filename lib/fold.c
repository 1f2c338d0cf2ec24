// SPDX-License-Identifier: BSD-2-Clause
/*
 * Folding stacks.  The naming rules are stackcollapse-perf.pl's, with inferno's
 * corrections, restated here from their documented behaviour:
 *
 *  - the root frame is the comm, spaces turned into '_' and ';' into ':' ("-PID" or "-PID/TID"
 *    added with --pid/--tid; "?" stands for a PID perf did not print);
 *  - a symbol loses its "+0xOFFSET"; one starting with '(' is skipped, unless it is
 *    "(anonymous namespace)...";
 *  - "[unknown]" becomes "[MODULE-BASENAME]" when the module is known, and with
 *    --addrs "[MODULE-BASENAME <ADDR>]" or "[unknown <ADDR>]";
 *  - ';' becomes ':'; a C++ argument list is cut off at its first '(' outside
 *    template brackets, but "(anonymous namespace)" and Go's "pkg.(*T).M" stay;
 *    quotes are dropped;
 *  - Java: "Lpkg/Class;.m" loses its 'L' when the comm is "java"; "a->b->c"
 *    (perf's Java inlining) is three frames, the inner two marked "_[i]";
 *  - --kernel marks frames of [kernel.kallsyms], [module], vmlinux* and *.ko
 *    with "_[k]"; --jit marks /tmp/perf-PID.map and jitdump jitted-*.so frames
 *    with "_[j]";
 *  - a Rust name that perf left half-demangled ("...$LT$T$GT$::new::h0123...") is
 *    decoded as inferno does (lib/symname.c);
 *  - the weight of a sample is its period (1 when perf printed none).
 *
 * perf script's other records (PERF_RECORD_* side-band lines, the lines -F +insn,
 * +srccode and the like add to a sample) are recognised, counted and left out.  A
 * header with neither CPU, time nor event ("comm TID PERIOD", from -F) is believed
 * when a frame follows it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fg/badline.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/debugfile.h"
#include "fg/demangle.h"
#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/fold.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/perfscript.h"
#include "fg/safeio.h"
#include "fg/symname.h"
#include "fg/util.h"

#define MAX_LOGGED_BAD_LINES 10
#define DETECT_BYTES FG_FOLD_DETECT_BYTES
#define DETECT_LINES 32
#define READ_SIZE (1024 * 1024)

enum annot { ANNOT_NONE, ANNOT_KERNEL, ANNOT_JIT, ANNOT_INLINE };
/* what a sample in the sample cache gave: a stack, or nothing for a reason */
enum { SC_STACK = 1, SC_OTHER, SC_FILTERED };
static const char *const annot_str[] = {"", "_[k]", "_[j]", "_[i]"};
static const uint8_t annot_len[] = {0, 4, 4, 4};

struct frame {
	uint32_t off, len;	   /* the name in f->names */
	uint32_t src_off, src_len; /* --srcline position in f->names, or len 0 */
	uint8_t annot;
};

/* FG_FOLD_FRAMES: a frame line of the sample, kept as offsets into f->stext */
struct rawframe {
	const char *base; /* the line, where it stays (the frame cache's copy); or NULL: */
	size_t line;	  /* where the line starts in stext (SIZE_MAX: the header's line) */
	size_t len;
	uint32_t line_id;
	uint32_t fpi; /* its parse in fparse[line_id >> 31], or UINT32_MAX: */
	size_t a0, alen, s0, slen, m0, mlen; /* address, symbol, module: from `line` */
	uint64_t offset;
	size_t src0, srclen; /* the source line, from stext's start */
	size_t name0, nnames;
	bool inlined;
};

/*
 * The sample cache's table: keys in two parts (the header's fields, then the
 * frame lines as they lie in the piece, compared where they are), copied into
 * one arena when inserted.  The hash is of the fields and the first caller's
 * line only (sc_head): a sample seen before is found without its end being
 * looked for, and its frame lines are compared once, by memcmp: with the
 * arena's copy, or, when the same lines came earlier in the piece being
 * folded, with those (in the processor's cache, where the arena, megabytes
 * for a few thousand deep stacks, mostly is not).
 */
struct sc_ent {
	uint64_t hash; /* 0: empty */
	size_t off;    /* the key in arena */
	uint32_t plen, rlen;
	uint64_t val;
	uint64_t lines;	    /* its frame lines */
	const char *recent; /* its frame lines, equal to the arena's, in piece number `piece` */
	uint64_t piece;
};

struct scache {
	struct sc_ent *ents;
	size_t mask, n;
	struct fg_buf arena;
};

struct fg_fold {
	struct fg_fold_opts o;
	fg_log_fn log;
	void *log_ctx;
	struct fg_fold_stats st;
	struct fg_hash *map;
	struct fg_count (*counts)[2]; /* the count columns, by entry index */
	size_t counts_alloc;
	int err; /* sticky failure of the current input */
	size_t max_line;

	/* the event folded */
	char *event;
	size_t event_len;
	bool event_exact; /* compare with modifiers ("cycles:u"), else the base name */

	/* the current input */
	const char *name;
	uint64_t lineno;
	uint64_t blank_lines; /* and comments */
	enum fg_fold_input fmt;
	int file_columns;

	/* perf script: the headers seen, and a weak one waiting for its frame */
	bool has_pending;
	struct fg_buf pending;
	uint64_t pending_lineno;

	/* the current perf sample */
	bool in_sample;
	uint64_t sample_lineno; /* its header's line */
	bool skip;		/* filtered out: consume its lines */
	uint64_t sample_lines;	/* frame lines seen in it */
	uint64_t weight;
	bool java;
	bool offcpu; /* a wait folded into a wall-clock profile: ends in [off-cpu] */
	struct fg_buf pname;
	struct fg_buf names;
	struct frame *frames;
	size_t nframes, aframes;
	size_t line_first; /* first frame pushed for the last frame line, or SIZE_MAX */
	struct fg_buf key;

	/* the input being fed (fg_fold_begin .. fg_fold_end) */
	bool decided; /* its format is known: lines are folded as they come */
	bool eof;
	bool skipping;	     /* in a line of max_line bytes or more: dropped up to its newline */
	uint64_t fed;	     /* bytes fed so far */
	struct fg_buf carry; /* a line cut between pieces; before `decided`, all that came */

	/*
	 * The sample cache: a perf sample whose lines are all in the piece being
	 * fed, frames only, is looked up whole (see sample_cached)
	 */
	struct scache sc;
	struct fg_buf skey;   /* the key's fields; the frame lines stay where they are */
	const char *cand_raw; /* the looked-up sample's caller lines, */
	size_t cand_rlen;
	uint64_t cand_hash;
	uint64_t cand_lines;
	bool cand;		    /* the current sample is to be cached if it ends */
	const char *cand_end;	    /* at this blank line */
	bool clean;		    /* with frame lines only */
	uint8_t skip_kind;	    /* why it is skipped (SC_OTHER, SC_FILTERED) */
	uint32_t last_id;	    /* the stack fold_stack added to */
	const char *cur_line;	    /* the line being folded, when it is in the piece */
	const char *piece_end;	    /* the end of that piece */
	const char *jump;	    /* a sample read whole from the cache: go on from here */
	uint32_t sc_tries, sc_hits; /* lookups and hits in this round of SC_ROUND */
	uint32_t sc_pause;	    /* samples not looked up (the cache did not pay) */
	uint64_t piece;		    /* the pieces folded in place: fold_lines' calls */

	/* the hooks, and what they need of the current sample */
	struct fg_fold_hooks hooks;
	struct fg_buf stext;	 /* FG_FOLD_FRAMES: its header line, then its frame lines */
	struct fg_buf hline;	 /* a hook: the header line */
	struct fg_ps_header hdr; /* a hook: the header, into hline */
	bool extra;		 /* a sample of opts.extra_event */
	struct rawframe *raw;	 /* FG_FOLD_FRAMES: the frame lines, leaf first */
	size_t nraw, araw;
	struct fg_fold_frame *hframes; /* what the hook gets */
	size_t ahframes;
	struct fg_fold_name *hnames;
	size_t ahnames;

	/* the current bpftrace entry */
	bool in_entry;
	bool entry_damaged;

	struct fg_buf rust; /* a Rust name being tidied */

	struct fg_hash *inl_files; /* --inline: path -> struct inl_file * */

	fg_fold_line_fn hook; /* sample headers and comments, before folding the sample */
	void *hook_ctx;

	/*
	 * Frame lines seen before and the name they gave (the same line gives the
	 * same frame), by the comm being "java" or not; bounded, so that memory
	 * does not grow with the input
	 */
	struct fg_hash *fcache[2];
	struct fg_buf fcache_names;
	struct fg_ps_memo *psmemo; /* the shapes of the sample headers read */
	struct fparse *fparse[2];  /* FG_FOLD_FRAMES: how each line cached parsed, by entry */
	size_t nfparse[2], afparse[2];
};

/* FG_FOLD_FRAMES: a cached frame line, parsed (offsets into the line) */
struct fparse {
	uint32_t a0, alen, s0, slen, m0, mlen;
	uint64_t offset;
	bool inlined;
};

#define FCACHE_MAX_LINES (1 << 16)
#define FCACHE_MAX_BYTES (8 << 20)

/* --- messages --- */

#define logf_(f, ...) fg_logf((f)->log, (f)->log_ctx, __VA_ARGS__)

/* a printable excerpt of a line for messages */
static void excerpt(struct fg_buf *b, const char *line, size_t len)
{
	size_t n = len > 80 ? 80 : len;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c == '\t')
			fg_buf_addstr(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			fg_buf_addf(b, "\\x%02x", c);
		else
			fg_buf_addch(b, (char)c);
	}
	if (n < len)
		fg_buf_addstr(b, "...");
}

static void bad_line(struct fg_fold *f, const char *what, const char *line, size_t len)
{
	f->st.bad_lines++;
	if (f->st.bad_lines <= MAX_LOGGED_BAD_LINES) {
		struct fg_buf b = FG_BUF_INIT;

		excerpt(&b, line, len);
		logf_(f, "%s:%llu: %s skipped: '%s'", f->name, (unsigned long long)f->lineno, what,
		      b.data ? b.data : "");
		fg_buf_release(&b);
	} else if (f->st.bad_lines == MAX_LOGGED_BAD_LINES + 1) {
		logf_(f, "%s:%llu: more bad lines; not showing them", f->name,
		      (unsigned long long)f->lineno);
	}
}

/* --- the table of stacks --- */

/*
 * Add a stack's counts.  A count that would carry the stack's total past
 * 2^64-1 is refused: that one sample (or line) is left out, counted and
 * reported, and the profile keeps everything else.
 */
static int add_counts(struct fg_fold *f, size_t i, const struct fg_count *c1,
		      const struct fg_count *c2)
{
	if (i >= f->counts_alloc) {
		size_t old = f->counts_alloc;

		FG_ALLOC_GROW(f->counts, i + 1, f->counts_alloc);
		memset(f->counts + old, 0, (f->counts_alloc - old) * sizeof(*f->counts));
	}
	struct fg_count *c = f->counts[i];
	struct fg_count s0 = c[0], s1 = c[1];
	if (fg_count_add(&s0, c1) != 0 || (c2 && fg_count_add(&s1, c2) != 0)) {
		f->st.refused++;
		if (f->st.refused <= MAX_LOGGED_BAD_LINES)
			logf_(f, "%s:%llu: the count of a stack would pass 2^64-1; left out",
			      f->name,
			      (unsigned long long)(f->fmt == FG_FOLD_PERF ? f->sample_lineno
									  : f->lineno));
		return 0;
	}
	c[0] = s0;
	c[1] = s1;
	return 1;
}

/* add to a stack's counts (1), or refuse them (0); *id is the stack's number either way */
static int add_stack(struct fg_fold *f, const char *key, size_t len, const struct fg_count *c1,
		     const struct fg_count *c2, uint32_t *id)
{
	struct fg_hash_entry *e = fg_hash_upsert(f->map, key, len, NULL);

	*id = (uint32_t)(e - fg_hash_at(f->map, 0));
	return add_counts(f, *id, c1, c2);
}

/*
 * A stack and its counts: into the table (unless the hook takes it all), then
 * to the hook.  0, or the hook's error.
 */
static int fold_stack(struct fg_fold *f, struct fg_fold_sample *s)
{
	uint32_t id = FG_FOLD_NO_ID;

	if (!(f->hooks.flags & FG_FOLD_NO_TABLE) &&
	    !add_stack(f, s->stack, s->stack_len, &s->count, s->columns == 2 ? &s->count2 : NULL,
		       &id)) {
		f->last_id = id;
		return 0;
	}
	f->last_id = id;
	f->st.samples++;
	if (!f->hooks.sample)
		return 0;
	s->stack_id = id;
	s->input = f->fmt;
	s->columns = f->st.columns;
	int r = f->hooks.sample(f->hooks.ctx, s);
	if (r)
		f->err = r;
	return r;
}

/* --- frame names --- */

static bool span_is(const char *p, size_t len, const char *lit, size_t litlen)
{
	return len == litlen && memcmp(p, lit, litlen) == 0;
}

static inline bool starts(const char *p, size_t len, const char *lit, size_t litlen)
{
	return len >= litlen && memcmp(p, lit, litlen) == 0;
}

/* bytes that make a name need more than a copy, and the '-' of "->" */
/* CLS_KEEPQ is no class: it tells tidy_append to keep quotes (a Rust lifetime's, decoded) */
enum { CLS_PAREN = 1, CLS_CHAR = 2, CLS_DASH = 4, CLS_KEEPQ = 8, CLS_TIDY = CLS_PAREN | CLS_CHAR };
static const uint8_t special[256] = {
    ['('] = CLS_PAREN, [';'] = CLS_CHAR, ['"'] = CLS_CHAR, ['\''] = CLS_CHAR, ['-'] = CLS_DASH,
};

/* which of the CLS_ classes occur in s: the hot loop, 16 bytes at a time where SSE2 is */
static unsigned classify(const char *s, size_t n)
{
	unsigned r = 0;
	size_t i = 0;

#ifdef __SSE2__
	if (n >= 16) {
		const __m128i semi = _mm_set1_epi8(';'), par = _mm_set1_epi8('(');
		const __m128i dq = _mm_set1_epi8('"'), sq = _mm_set1_epi8('\'');
		const __m128i dash = _mm_set1_epi8('-');

		for (;; i += 16) {
			if (i + 16 > n)
				i = n - 16; /* the last 16 bytes, overlapping */
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			__m128i q = _mm_or_si128(_mm_cmpeq_epi8(v, dq), _mm_cmpeq_epi8(v, sq));
			__m128i t = _mm_or_si128(_mm_cmpeq_epi8(v, semi), q);

			if (_mm_movemask_epi8(t))
				r |= CLS_CHAR;
			if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, par)))
				r |= CLS_PAREN;
			if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, dash)))
				r |= CLS_DASH;
			if (i + 16 >= n)
				return r;
		}
	}
#endif
	for (; i < n; i++)
		r |= special[(unsigned char)s[i]];
	return r;
}

/*
 * Append `s` to b tidied: ';' -> ':', the argument list cut, quotes dropped.
 * `cls` is classify(s, len), or CLS_TIDY when not known.
 */
static void tidy_append(struct fg_buf *b, const char *s, size_t len, unsigned cls)
{
	size_t cut = cls & CLS_PAREN ? fg_symname_args_start(s, len) : len;

	if (!(cls & CLS_CHAR)) {
		fg_buf_add(b, s, cut);
		return;
	}
	fg_buf_grow(b, cut);
	for (size_t i = 0; i < cut; i++) {
		char c = s[i];

		if (c == ';')
			c = ':';
		else if ((c == '"' || c == '\'') && !(cls & CLS_KEEPQ))
			continue;
		b->data[b->len++] = c;
	}
	b->data[b->len] = '\0';
}

static void push_frame(struct fg_fold *f, size_t off, uint8_t annot)
{
	struct frame *fr;

	FG_ALLOC_GROW(f->frames, f->nframes + 1, f->aframes);
	fr = &f->frames[f->nframes++];
	fr->off = (uint32_t)off;
	fr->len = (uint32_t)(f->names.len - off);
	fr->src_off = 0;
	fr->src_len = 0;
	fr->annot = annot;
}

/*
 * --inline: the functions inlined at a frame, from the DWARF of the file perf
 * printed as its module, as fg-sym --inline finds them: the file and its
 * debug file opened as lib/safeio and lib/debugfile open them, the chain from
 * lib/dwarf (libdw, within its bounds), names demangled by lib/demangle.
 */
struct inl_file {
	struct fg_elfsyms *elf; /* its symbols (or its debug file's); NULL: not ELF */
	struct fg_dwarf *dwarf; /* its DWARF (or its debug file's); NULL: none */
	struct fg_hash *names;	/* function name -> address, made at the first named frame */
	bool said;		/* a failure was reported */
};

static struct inl_file *inl_open(const char *path)
{
	struct inl_file *in = fg_xcalloc(1, sizeof(*in));
	struct fg_debugfile df = FG_DEBUGFILE_INIT;
	struct fg_debug_want w;
	int fd = fg_safeio_open_data(path, FG_ELF_MAX_FILE, NULL);

	if (fd < 0 || !(in->elf = fg_elfsyms_open_fd(fd))) {
		if (fd >= 0)
			close(fd);
		return in;
	}
	/* the DWARF of its debug file when there is one, else its own */
	fg_debugfile_want_init(&w, in->elf, path, "");
	if (fg_debugfile_find(&w, &df) == 0) {
		fg_elfsyms_adopt(in->elf, df.elf);
		in->dwarf = fg_dwarf_open_fd(df.fd, df.path, "");
	}
	if (!in->dwarf)
		in->dwarf = fg_dwarf_open_fd(fd, path, "");
	fg_debugfile_release(&df);
	close(fd);
	return in;
}

static void inl_free(struct inl_file *in)
{
	if (!in)
		return;
	fg_dwarf_free(in->dwarf);
	fg_elfsyms_free(in->elf);
	fg_hash_free(in->names);
	free(in);
}

static void inl_add_name(struct fg_hash *h, const char *name, size_t len, uint64_t addr)
{
	bool ins;
	struct fg_hash_entry *e = fg_hash_upsert(h, name, len, &ins);

	if (ins)
		e->val.u = addr;
}

/*
 * A function's names as perf may print them: raw, unversioned, demangled
 * (perf's default), demangled with parameters (perf -v) and without them
 * ("int ns::f<int>": a template function's return type stays)
 */
static void inl_add_names(struct fg_hash *h, const char *name, uint64_t addr)
{
	size_t len = strlen(name);
	const char *at = memchr(name, '@', len); /* "memcpy@@GLIBC_2.14" */
	char *dm = fg_demangle(name), *full;

	inl_add_name(h, name, len, addr);
	if (at)
		inl_add_name(h, name, (size_t)(at - name), addr);
	if (!dm)
		return;
	inl_add_name(h, dm, strlen(dm), addr);
	free(dm);
	full = fg_demangle_params(name);
	if (full) {
		len = strlen(full);
		inl_add_name(h, full, len, addr);
		inl_add_name(h, full, fg_symname_args_start(full, len), addr);
	}
	free(full);
}

/*
 * Where the frame is in the file: SYMBOL+0xOFFSET holds wherever a shared
 * library or a position-independent executable was loaded; the printed
 * address, only in a fixed-address executable.  False when neither places it.
 */
static bool inl_place(struct inl_file *in, const struct fg_ps_frame *fr, bool known, uint64_t *at)
{
	const struct fg_elfsyms *e = in->elf;
	struct fg_hash_entry *s = NULL;

	if (known) {
		if (!in->names) {
			in->names = fg_hash_new(e->nsyms + e->naliases);
			for (size_t i = 0; i < e->nsyms; i++)
				inl_add_names(in->names, e->syms[i].name, e->syms[i].addr);
			for (size_t i = 0; i < e->naliases; i++)
				inl_add_names(in->names, e->aliases[i].name, e->aliases[i].addr);
		}
		s = fg_hash_get(in->names, fr->sym.p, fr->sym.len);
		/* "ns::f(int)", as perf -v prints it: the name without its arguments */
		if (!s)
			s = fg_hash_get(in->names, fr->sym.p,
					fg_symname_args_start(fr->sym.p, fr->sym.len));
	}
	if (s)
		*at = s->val.u + fr->offset;
	else if (!e->shared)
		*at = fg_span_hex(fr->addr);
	return s || !e->shared;
}

static const char *base_name(const char *path)
{
	const char *sl = path ? strrchr(path, '/') : NULL;

	return sl ? sl + 1 : path ? path : "??";
}

/*
 * Replace the frame with the functions inlined there, from the file's DWARF;
 * false when the frame is to be named as usual.  Like the perl script, this
 * leaves JIT maps, the kernel and "[...]" modules alone.
 */
static bool add_inlined(struct fg_fold *f, const struct fg_ps_frame *fr)
{
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	const char *mod = fr->module.p, *why = NULL;
	size_t mlen = fr->module.len, first = f->nframes;
	struct inl_file *in;
	struct fg_hash_entry *e;
	uint64_t at;
	bool ins;
	int n = 0;

	if (mlen == 0 || mod[0] != '/' || fg_ps_module_is_jit(mod, mlen) ||
	    fg_ps_module_is_kernel(mod, mlen))
		return false;
	if (!f->inl_files)
		f->inl_files = fg_hash_new(16);
	e = fg_hash_upsert(f->inl_files, mod, mlen, &ins);
	if (ins)
		e->val.p = inl_open(e->key);
	in = e->val.p;
	bool known = fr->sym.len && !span_is(fr->sym.p, fr->sym.len, "[unknown]", 9);
	if (!in->elf)
		why = "cannot read it as ELF";
	else if (!inl_place(in, fr, known, &at))
		why = "cannot place the frames in it";
	else if (!in->dwarf ||
		 (n = fg_dwarf_lookup(in->dwarf, at, locs, FG_ARRAY_SIZE(locs))) <= 0 ||
		 !locs[0].file || (n == 1 && !locs[0].func))
		why = "no DWARF line information"; /* nor a function there */
	if (why) {
		f->st.not_inlined++;
		if (!in->said)
			logf_(f, "%.*s: %s; --inline leaves its frames as they are", (int)mlen, mod,
			      why);
		in->said = true;
		return false;
	}
	/*
	 * Innermost first, as frames are pushed (the stack is reversed when
	 * folded).  Named as `addr2line -C` names them for the perl script, with
	 * a template function's return type: "int ns::f<int>(int)", its argument
	 * list then cut off as any frame's.
	 */
	for (int i = 0; i < n; i++) {
		size_t off = f->names.len;
		char *dm = locs[i].func ? fg_demangle_params(locs[i].func) : NULL;
		const char *func = dm ? dm : locs[i].func ? locs[i].func : "??";
		size_t len = strlen(func);

		tidy_append(&f->names, func, len, classify(func, len));
		if (f->o.inline_context)
			fg_buf_addf(&f->names, ":%s:%u", base_name(locs[i].file), locs[i].line);
		push_frame(f, off, ANNOT_NONE);
		free(dm);
	}
	/* all but the outermost function were inlined */
	for (size_t i = first; i + 1 < f->nframes; i++)
		f->frames[i].annot = ANNOT_INLINE;
	f->line_first = first;
	return true;
}

/*
 * A Rust legacy name decoded in f->rust, into *raw and *rlen: quotes dropped
 * from the raw name first, as from any name; then decoded, so that $u27$ gives
 * a lifetime's ' that stays, as in inferno: <core::str::Split<'a, P> as
 * ...>::next.  CLS_KEEPQ when decoded, else 0 (the name left as it is).
 */
static unsigned rust_legacy_name(struct fg_fold *f, const char **raw, size_t *rlen)
{
	size_t n = 0;

	if (!fg_symname_is_rust_legacy(*raw, *rlen))
		return 0;
	fg_buf_reset(&f->rust);
	fg_buf_grow(&f->rust, *rlen);
	for (size_t i = 0; i < *rlen; i++)
		if ((*raw)[i] != '"' && (*raw)[i] != '\'')
			f->rust.data[n++] = (*raw)[i];
	f->rust.len = fg_symname_rust_tidy(f->rust.data, n, f->rust.data);
	f->rust.data[f->rust.len] = '\0';
	if (!f->rust.len)
		return 0;
	*raw = f->rust.data;
	*rlen = f->rust.len;
	return CLS_KEEPQ;
}

/* an unnamed frame: [unknown], or [MODULE] and with --addrs its address, as the perl script
 * names it */
static void add_unknown_name(struct fg_fold *f, const struct fg_ps_frame *fr, const char *mod,
			     size_t mlen)
{
	struct fg_buf *b = &f->names;
	bool known = !span_is(mod, mlen, "[unknown]", 9);
	const char *base = mod;
	size_t blen = mlen, off = b->len;

	if (known) {
		const char *sl = memrchr(mod, '/', mlen);

		if (sl) {
			base = sl + 1;
			blen = mlen - (size_t)(base - mod);
		}
	}
	if (!known && !f->o.include_addrs) {
		fg_buf_add(b, "[unknown]", 9);
		return;
	}
	fg_buf_addch(b, '[');
	if (known)
		fg_buf_add(b, base, blen);
	else
		fg_buf_add(b, "unknown", 7);
	if (f->o.include_addrs) {
		fg_buf_add(b, " <", 2);
		fg_buf_add(b, fr->addr.p, fr->addr.len);
		fg_buf_addch(b, '>');
	}
	fg_buf_addch(b, ']');
	/* a module name is no C++ signature: keep its parentheses */
	for (size_t q = off; q < b->len; q++)
		if (b->data[q] == ';')
			b->data[q] = ':';
}

/* the mark of the name just added at off: inlined (a Java inlining's callee), kernel, JIT */
static uint8_t frame_annot(const struct fg_fold *f, size_t off, bool inlined, const char *mod,
			   size_t mlen)
{
	const char *nm = f->names.data + off;
	size_t nl = f->names.len - off;

	if (inlined)
		return memmem(nm, nl, "_[i]", 4) ? ANNOT_NONE : ANNOT_INLINE;
	if (f->o.annotate_kernel && fg_ps_module_is_kernel(mod, mlen))
		return ANNOT_KERNEL;
	if (f->o.annotate_jit && fg_ps_module_is_jit(mod, mlen))
		return memmem(nm, nl, "_[j]", 4) ? ANNOT_NONE : ANNOT_JIT;
	return ANNOT_NONE;
}

/*
 * One frame of perf script text to f's stack: its name tidied as the perl script tidies it
 * (or un-inlined with --inline), a Java inlining "a->b->c" as a frame each, marked with
 * --kernel and --jit.
 */
static void add_perf_frame(struct fg_fold *f, const struct fg_ps_frame *fr)
{
	const char *raw = fr->sym.p, *mod = fr->module.p;
	size_t rlen = fr->sym.len, mlen = fr->module.len;
	const char *parts[64];
	size_t plen[64], nparts = 0;

	f->line_first = SIZE_MAX;
	if (mlen == 0) {
		/* -F ip,sym: no module printed */
		mod = "[unknown]";
		mlen = 9;
	}
	if (rlen == 0) {
		/* "ADDR  (MODULE)": the perl script names this frame " "; "ADDR" alone is unknown
		 */
		raw = fr->module.len ? " " : "[unknown]";
		rlen = strlen(raw);
	}
	/* the perl script skips "(...)" pseudo-frames; a C++ anonymous namespace is a real one */
	if (raw[0] == '(' && !starts(raw, rlen, "(anonymous namespace)", 21))
		return;
	if (f->names.len > UINT32_MAX / 2)
		return; /* absurdly deep stack: keep what we have */
	if (f->o.inline_frames && add_inlined(f, fr))
		return;
	unsigned keepq = rust_legacy_name(f, &raw, &rlen);

	/* "a->b->c": Java inlining, root-most first */
	const char *p = raw, *end = raw + rlen;
	unsigned cls = classify(raw, rlen);
	while ((cls & CLS_DASH) && nparts < FG_ARRAY_SIZE(parts) - 1) {
		const char *arrow = memchr(p, '-', (size_t)(end - p));

		while (arrow && !(arrow + 1 < end && arrow[1] == '>'))
			arrow = memchr(arrow + 1, '-', (size_t)(end - arrow - 1));
		if (!arrow)
			break;
		parts[nparts] = p;
		plen[nparts++] = (size_t)(arrow - p);
		p = arrow + 2;
	}
	parts[nparts] = p;
	plen[nparts++] = (size_t)(end - p);

	/* pushed leaf-most first: the stack is reversed when folded */
	for (size_t k = nparts; k-- > 0;) {
		size_t off = f->names.len;

		if (span_is(parts[k], plen[k], "[unknown]", 9))
			add_unknown_name(f, fr, mod, mlen);
		else
			tidy_append(&f->names, parts[k], plen[k],
				    (nparts == 1 ? cls : CLS_TIDY) | keepq);
		if (f->java && f->names.len - off > 1 && f->names.data[off] == 'L' &&
		    memchr(f->names.data + off, '/', f->names.len - off)) {
			char *nm = f->names.data + off;

			memmove(nm, nm + 1, f->names.len - off - 1);
			fg_buf_truncate(&f->names, f->names.len - 1);
		}
		if (f->line_first == SIZE_MAX)
			f->line_first = f->nframes;
		push_frame(f, off, frame_annot(f, off, k > 0, mod, mlen));
	}
}

/* --- perf script --- */

static bool in_list(const char *const *list, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return true;
	return false;
}

static bool event_matches(struct fg_fold *f, struct fg_span ev)
{
	size_t n = f->event_exact ? ev.len : fg_ps_event_base_len(ev.p, ev.len);

	return n == f->event_len && memcmp(ev.p, f->event, n) == 0;
}

/* move the spans of a header parsed from `from` to the same line copied at `to` */
static void rebase_header(struct fg_ps_header *h, const char *from, const char *to)
{
	struct fg_span *sp[] = {&h->comm,  &h->pid,  &h->tid,	&h->time,
				&h->event, &h->rest, &h->record};

	for (size_t i = 0; i < FG_ARRAY_SIZE(sp); i++)
		if (sp[i]->p)
			sp[i]->p = to + (sp[i]->p - from);
}

/* a hook: keep the sample's header line, which the next pieces may not hold */
static void keep_header(struct fg_fold *f, const struct fg_ps_header *h, const char *line,
			size_t len)
{
	fg_buf_reset(&f->hline);
	fg_buf_add(&f->hline, line, len);
	f->hdr = *h;
	rebase_header(&f->hdr, line, f->hline.data);
	if (f->hooks.flags & FG_FOLD_FRAMES) {
		fg_buf_reset(&f->stext);
		f->nraw = 0;
	}
}

/*
 * FG_FOLD_FRAMES: keep the frame line that gave the frames from `first` on
 * (`line` NULL: the frame on the header line, from h->rest)
 */
static void record_frame(struct fg_fold *f, const char *line, size_t len,
			 const struct fg_ps_frame *fr, size_t first)
{
	struct rawframe *rf;
	const char *base;
	size_t at;

	if (!(f->hooks.flags & FG_FOLD_FRAMES))
		return;
	if (line) {
		at = f->stext.len;
		base = line;
		fg_buf_add(&f->stext, line, len);
	} else {
		/* the frame on the header line: from h->rest, in hline */
		at = SIZE_MAX;
		base = f->hline.data;
		line = f->hdr.rest.p;
		len = f->hdr.rest.len;
	}
	FG_ALLOC_GROW(f->raw, f->nraw + 1, f->araw);
	rf = &f->raw[f->nraw++];
	*rf = (struct rawframe){
	    .line = at,
	    .len = len,
	    .line_id = FG_FOLD_NO_ID,
	    .fpi = UINT32_MAX,
	    .a0 = (size_t)(fr->addr.p - base),
	    .alen = fr->addr.len,
	    .s0 = (size_t)(fr->sym.p - base),
	    .slen = fr->sym.len,
	    .m0 = (size_t)(fr->module.p - base),
	    .mlen = fr->module.len,
	    .offset = fr->offset,
	    .name0 = first,
	    .nnames = f->nframes - first,
	    .inlined = fg_span_eq(fr->module, "inlined"),
	};
}

/* what a hook gets of a perf sample besides its stack: the header, the frames, the names */
static void sample_details(struct fg_fold *f, struct fg_fold_sample *s, size_t top)
{
	s->h = &f->hdr;
	s->header = f->hline.data;
	s->header_len = f->hline.len;
	s->extra_event = f->extra;
	if (!(f->hooks.flags & FG_FOLD_FRAMES))
		return;
	FG_ALLOC_GROW(f->hnames, top + 1, f->ahnames);
	for (size_t i = 0; i < top; i++) {
		const struct frame *fr = &f->frames[i];

		f->hnames[i] = (struct fg_fold_name){
		    .name = f->names.data + fr->off,
		    .len = fr->len,
		    .src = fr->src_len ? f->names.data + fr->src_off : NULL,
		    .src_len = fr->src_len,
		    .annot = (enum fg_fold_annot)fr->annot,
		};
	}
	FG_ALLOC_GROW(f->hframes, f->nraw + 1, f->ahframes);
	for (size_t i = 0; i < f->nraw; i++) {
		const struct rawframe *rf = &f->raw[i];
		const char *b = rf->base	       ? rf->base
				: rf->line == SIZE_MAX ? f->hline.data
						       : f->stext.data + rf->line;
		struct fg_fold_frame *o = &f->hframes[i];

		o->line = rf->line == SIZE_MAX ? f->hdr.rest : (struct fg_span){b, rf->len};
		o->line_id = rf->line_id;
		if (rf->fpi != UINT32_MAX) {
			const struct fparse *fp = &f->fparse[rf->line_id >> 31][rf->fpi];

			o->ps.addr = (struct fg_span){b + fp->a0, fp->alen};
			o->ps.sym = (struct fg_span){b + fp->s0, fp->slen};
			o->ps.module = (struct fg_span){b + fp->m0, fp->mlen};
			o->ps.offset = fp->offset;
		} else {
			o->ps.addr = (struct fg_span){b + rf->a0, rf->alen};
			o->ps.sym = (struct fg_span){b + rf->s0, rf->slen};
			o->ps.module = (struct fg_span){b + rf->m0, rf->mlen};
			o->ps.offset = rf->offset;
		}
		o->src = (struct fg_span){rf->srclen ? f->stext.data + rf->src0 : NULL, rf->srclen};
		o->inlined = rf->inlined;
		/* the names kept (--skip-after keeps the leaf-most `top`) */
		o->name0 = rf->name0 < top ? rf->name0 : top;
		o->nnames = rf->name0 + rf->nnames <= top ? rf->nnames : top - o->name0;
	}
	s->frames = f->hframes;
	s->nframes = f->nraw;
	s->names = f->hnames;
	s->nnames = top;
}

static void sample_cache_put(struct fg_fold *f);

/* perf's and fg-sym's name of the waits of an off-CPU profile */
static bool is_offcpu_event(struct fg_span ev)
{
	size_t n = fg_ps_event_base_len(ev.p, ev.len);

	return n == 11 && memcmp(ev.p, "offcpu-time", 11) == 0;
}

/* whether the "prev_state=X" among what follows the event names one of the states kept */
static bool state_matches(struct fg_fold *f, struct fg_span rest)
{
	static const char key[] = "prev_state=";
	const size_t klen = sizeof(key) - 1;

	for (size_t i = 0; i + klen <= rest.len; i++) {
		size_t n = 0;

		if ((i > 0 && rest.p[i - 1] != ' ') || memcmp(rest.p + i, key, klen) != 0)
			continue;
		i += klen;
		while (i + n < rest.len && rest.p[i + n] != ' ')
			n++;
		return in_list(f->o.states, f->o.n_states, rest.p + i, n);
	}
	return false;
}

static int end_sample(struct fg_fold *f)
{
	int r = 0;

	if (f->in_sample && !f->skip) {
		size_t top = f->nframes;
		/* a hook that takes the frames and names, and not the table: no stack */
		bool nokey = (f->hooks.flags & (FG_FOLD_FRAMES | FG_FOLD_NO_TABLE)) ==
			     (FG_FOLD_FRAMES | FG_FOLD_NO_TABLE);

		if (f->o.n_skip_after) {
			for (size_t i = 0; i < f->nframes; i++) {
				const struct frame *fr = &f->frames[i];

				const char *nm = f->names.data + fr->off;

				if (in_list(f->o.skip_after, f->o.n_skip_after, nm, fr->len)) {
					top = i + 1;
					break;
				}
			}
		}
		fg_buf_reset(&f->key);
		fg_buf_add(&f->key, f->pname.data, f->pname.len);
		for (size_t i = nokey ? 0 : top; i-- > 0;) {
			const struct frame *fr = &f->frames[i];
			size_t need = fr->len + fr->src_len + 6;

			fg_buf_grow(&f->key, need);
			char *d = f->key.data + f->key.len;
			*d++ = ';';
			memcpy(d, f->names.data + fr->off, fr->len);
			d += fr->len;
			if (fr->src_len) {
				*d++ = ':';
				memcpy(d, f->names.data + fr->src_off, fr->src_len);
				d += fr->src_len;
			}
			memcpy(d, annot_str[fr->annot], annot_len[fr->annot]);
			d += annot_len[fr->annot];
			f->key.len = (size_t)(d - f->key.data);
		}
		f->key.data[f->key.len] = '\0';
		if (f->pname.len == 0 && f->key.len > 0) {
			/* -F tid,...: no comm, no root frame */
			memmove(f->key.data, f->key.data + 1, f->key.len);
			f->key.len--;
		}
		if (f->key.len == 0 && !nokey)
			fg_buf_addstr(&f->key, "[unknown]"); /* nor any frame */
		if (f->offcpu) {
			if (!nokey)
				fg_buf_addstr(&f->key, ";" FG_FOLD_OFFCPU_FRAME);
			f->st.waits++;
		}
		struct fg_fold_sample s = {
		    .lineno = f->sample_lineno,
		    .stack = nokey ? NULL : f->key.data,
		    .stack_len = nokey ? 0 : f->key.len,
		    .count = {.whole = f->weight},
		    .columns = 1,
		};
		if (f->hooks.sample)
			sample_details(f, &s, top);
		r = fold_stack(f, &s);
	}
	if (f->cand)
		sample_cache_put(f);
	f->in_sample = false;
	f->skip = false;
	f->nframes = 0;
	f->sample_lines = 0;
	f->line_first = SIZE_MAX;
	fg_buf_reset(&f->names);
	return r;
}

static bool event_is(struct fg_span ev, const char *name)
{
	size_t n = strlen(name);

	return fg_ps_event_base_len(ev.p, ev.len) == n && memcmp(ev.p, name, n) == 0;
}

static void start_sample(struct fg_fold *f, const struct fg_ps_header *h, const char *line,
			 size_t len)
{
	f->in_sample = true;
	f->sample_lineno = f->lineno;
	f->skip = false;
	f->sample_lines = 0;
	f->nframes = 0;
	f->line_first = SIZE_MAX;
	fg_buf_reset(&f->names);

	f->extra = false;
	f->offcpu = false;
	/* before the default event is chosen: with --state, the first wait's event */
	if (f->o.n_states && !state_matches(f, h->rest)) {
		f->st.state_filtered++;
		f->skip = true;
		return;
	}
	if (h->event.len && f->o.extra_event && event_is(h->event, f->o.extra_event)) {
		f->extra = true;
	} else if (f->o.wall && h->event.len && is_offcpu_event(h->event)) {
		f->offcpu = true; /* with the event folded, whichever it is */
	} else if (h->event.len) {
		if (!f->event) {
			f->event_len = fg_ps_event_base_len(h->event.p, h->event.len);
			f->event = fg_xstrndup(h->event.p, f->event_len);
			f->st.event = f->event;
			f->st.event_defaulted = true;
		}
		if (!event_matches(f, h->event)) {
			f->st.other_events++;
			f->skip = true;
			f->skip_kind = SC_OTHER;
			return;
		}
	}
	if ((f->o.n_only_pids || f->o.n_only_comms)) {
		bool keep = false;

		for (size_t i = 0; i < f->o.n_only_pids && !keep; i++)
			keep = f->o.only_pids[i] == h->pid_num;
		if (!keep)
			keep = in_list(f->o.only_comms, f->o.n_only_comms, h->comm.p, h->comm.len);
		if (!keep) {
			f->st.filtered++;
			f->skip = true;
			f->skip_kind = SC_FILTERED;
			return;
		}
	}
	f->weight = f->o.count_samples ? 1 : h->has_period ? h->period : 1;

	struct fg_buf *pn = &f->pname;
	fg_buf_reset(pn);
	fg_buf_add(pn, h->comm.p, h->comm.len);
	for (size_t i = 0; i < pn->len; i++) {
		if (pn->data[i] == ' ')
			pn->data[i] = '_';
		else if (pn->data[i] == ';') /* the frame separator */
			pn->data[i] = ':';
	}
	f->java = pn->len == 4 && memcmp(pn->data, "java", 4) == 0;
	if (f->hooks.sample)
		keep_header(f, h, line, len);
	if (f->o.include_tid) {
		fg_buf_addch(pn, '-');
		if (h->pid.len)
			fg_buf_add(pn, h->pid.p, h->pid.len);
		else
			fg_buf_addch(pn, '?');
		fg_buf_addch(pn, '/');
		if (h->tid.len)
			fg_buf_add(pn, h->tid.p, h->tid.len);
		else
			fg_buf_addch(pn, '?');
	} else if (f->o.include_pid) {
		fg_buf_addch(pn, '-');
		if (h->pid.len)
			fg_buf_add(pn, h->pid.p, h->pid.len);
		else
			fg_buf_addch(pn, '?');
	}

	/* a sample without a call chain: its frame follows the event on the same line */
	if (h->rest.len) {
		struct fg_ps_frame fr;

		if (fg_ps_find_frame(h->rest.p, h->rest.len, &fr) == 0) {
			size_t first = f->nframes;

			add_perf_frame(f, &fr);
			f->sample_lines++;
			if (f->hooks.sample) {
				/* its spans into the header's copy */
				fr.addr.p = f->hline.data + (fr.addr.p - line);
				fr.sym.p = f->hline.data + (fr.sym.p - line);
				fr.module.p = f->hline.data + (fr.module.p - line);
				record_frame(f, NULL, 0, &fr, first);
			}
		}
	}
}

static bool all_space(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

static void add_srcline(struct fg_fold *f, struct fg_span src)
{
	if ((f->hooks.flags & FG_FOLD_FRAMES) && f->nraw && !f->raw[f->nraw - 1].srclen) {
		struct rawframe *rf = &f->raw[f->nraw - 1];

		rf->src0 = f->stext.len;
		rf->srclen = src.len;
		fg_buf_add(&f->stext, src.p, src.len);
	}
	if (!f->o.srcline || f->line_first == SIZE_MAX || f->line_first >= f->nframes)
		return;
	struct frame *fr = &f->frames[f->line_first];
	size_t off = f->names.len;

	fg_buf_add(&f->names, src.p, src.len);
	fr->src_off = (uint32_t)off;
	fr->src_len = (uint32_t)src.len;
	f->line_first = SIZE_MAX;
}

/* FG_FOLD_FRAMES: the frame of cache entry e (line_id: its number), from the cache's copy */
static void record_cached(struct fg_fold *f, const struct fg_hash_entry *e, size_t idx,
			  size_t first)
{
	const struct fparse *fp = &f->fparse[f->java][idx];
	struct rawframe *rf;

	if (f->nraw + 1 > f->araw)

		FG_ALLOC_GROW(f->raw, f->nraw + 1, f->araw);
	rf = &f->raw[f->nraw++];
	rf->base = e->key;
	rf->len = e->len;
	rf->line_id = (uint32_t)idx | (uint32_t)f->java << 31;
	rf->fpi = (uint32_t)idx;
	rf->srclen = 0;
	rf->name0 = first;
	rf->nnames = 1;
	rf->inlined = fp->inlined;
}

/* a frame line seen before: its frame pushed again, true; else false */
static bool cached_frame(struct fg_fold *f, const char *line, size_t len)
{
	struct fg_hash *c = f->fcache[f->java];
	struct fg_hash_entry *e;

	if (!c || f->names.len > UINT32_MAX / 2 || !(e = fg_hash_get(c, line, len)))
		return false;
	if (f->hooks.flags & FG_FOLD_FRAMES) {
		size_t idx = (size_t)(e - fg_hash_at(c, 0));

		if (idx >= f->nfparse[f->java])
			return false; /* cached before the hooks were set: parse it */
		record_cached(f, e, idx, f->nframes);
	}
	size_t off = f->names.len;
	uint32_t len_name = (uint32_t)(e->val.u >> 8) & 0xffffff;

	fg_buf_add(&f->names, f->fcache_names.data + (e->val.u >> 32), len_name);
	f->line_first = f->nframes;
	push_frame(f, off, (uint8_t)e->val.u);
	f->sample_lines++;
	return true;
}

/*
 * Remember the frame a line gave, when it gave exactly one; true when it did
 * and (FG_FOLD_FRAMES) the frame is recorded from the cache's copy
 */
static bool cache_frame(struct fg_fold *f, const char *line, size_t len, size_t before,
			const struct fg_ps_frame *pf)
{
	struct fg_hash **c = &f->fcache[f->java];
	int k = f->java;

	if (f->nframes != before + 1 || f->o.inline_frames)
		return false;
	const struct frame *fr = &f->frames[before];
	if (fr->len >= (1 << 24) || f->fcache_names.len + fr->len > FCACHE_MAX_BYTES ||
	    len >= UINT32_MAX)
		return false;
	if (!*c)
		*c = fg_hash_new(1024);
	if (fg_hash_count(*c) >= FCACHE_MAX_LINES)
		return false;
	uint64_t off = f->fcache_names.len;
	fg_buf_add(&f->fcache_names, f->names.data + fr->off, fr->len);
	struct fg_hash_entry *e = fg_hash_upsert(*c, line, len, NULL);
	e->val.u = off << 32 | (uint64_t)fr->len << 8 | fr->annot;
	if (!(f->hooks.flags & FG_FOLD_FRAMES))
		return false;
	size_t idx = (size_t)(e - fg_hash_at(*c, 0));
	if (idx != f->nfparse[k])
		return false; /* entries cached without their parse: no more from here */
	FG_ALLOC_GROW(f->fparse[k], idx + 1, f->afparse[k]);
	f->fparse[k][idx] = (struct fparse){
	    .a0 = (uint32_t)(pf->addr.p - line),
	    .alen = (uint32_t)pf->addr.len,
	    .s0 = (uint32_t)(pf->sym.p - line),
	    .slen = (uint32_t)pf->sym.len,
	    .m0 = (uint32_t)(pf->module.p - line),
	    .mlen = (uint32_t)pf->module.len,
	    .offset = pf->offset,
	    .inlined = fg_span_eq(pf->module, "inlined"),
	};
	f->nfparse[k]++;
	record_cached(f, e, idx, before);
	return true;
}

/* a side-band record (--show-*-events): counted by kind, never a sample */
static int sideband(struct fg_fold *f, const struct fg_ps_header *h, const char *line, size_t len)
{
	struct fg_fold_stats *st = &f->st;
	struct fg_fold_sideband *k = NULL;
	size_t n = h->record.len < sizeof(k->name) ? h->record.len : sizeof(k->name) - 1;
	int r = 0;

	if (f->in_sample)
		r = end_sample(f);
	st->sideband++;
	for (size_t i = 0; i < st->n_sideband_kinds && !k; i++)
		if (strlen(st->sideband_kinds[i].name) == n &&
		    memcmp(st->sideband_kinds[i].name, h->record.p, n) == 0)
			k = &st->sideband_kinds[i];
	if (!k && st->n_sideband_kinds < FG_FOLD_SIDEBAND_KINDS - 1) {
		k = &st->sideband_kinds[st->n_sideband_kinds++];
		memcpy(k->name, h->record.p, n);
		k->name[n] = '\0';
	} else if (!k) {
		/* the last slot holds every other kind */
		k = &st->sideband_kinds[FG_FOLD_SIDEBAND_KINDS - 1];
		strcpy(k->name, "other");
		if (st->n_sideband_kinds < FG_FOLD_SIDEBAND_KINDS)
			st->n_sideband_kinds = FG_FOLD_SIDEBAND_KINDS;
	}
	k->n++;
	/* "PERF_RECORD_LOST lost 4", "PERF_RECORD_LOST_SAMPLES lost 4" */
	if (starts(h->record.p, h->record.len, "PERF_RECORD_LOST", 16)) {
		const char *p = h->rest.p, *end = h->rest.p + h->rest.len;
		uint64_t v = 0;

		st->lost_records++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (starts(p, (size_t)(end - p), "lost ", 5)) {
			const char *d = p + 5, *e;

			while (d < end && *d == ' ')
				d++;
			for (e = d; e < end && *e >= '0' && *e <= '9'; e++)
				;
			if (fg_span_u64((struct fg_span){d, (size_t)(e - d)}, &v) == -ERANGE)
				v = UINT64_MAX;
			if (__builtin_add_overflow(st->lost, v, &st->lost))
				st->lost = UINT64_MAX;
		}
	}
	if (r == 0 && f->hooks.record && (r = f->hooks.record(f->hooks.ctx, h, line, len)) != 0)
		f->err = r;
	return r;
}

/* --- the sample cache --- */

#define SC_MAX_BYTES ((size_t)64 << 20)
#define SC_ROUND 1024  /* lookups between two looks at how well the cache does */
#define SC_PAUSE 16384 /* samples not looked up when fewer than 1 in 8 were found */
#define SC_SAME 8      /* samples at most cached with one hash (only deeper callers differ) */

/* a field of the key, its length first, where room was made (fg_buf_grow) */
static void add_key_span(struct fg_buf *b, const char *p, size_t len)
{
	uint32_t n = (uint32_t)len;

	memcpy(b->data + b->len, &n, sizeof(n));
	if (len) /* an absent field's p is NULL */
		memcpy(b->data + b->len + sizeof(n), p, len);
	b->len += sizeof(n) + len;
}

/* not with --inline: it counts and reports each frame it cannot place */
static bool scache_usable(const struct fg_fold *f)
{
	/* --wall and --state count waits and filtered states as a sample starts: not cached */
	return !(f->hooks.flags & (FG_FOLD_FRAMES | FG_FOLD_NO_TABLE)) && !f->o.inline_frames &&
	       !f->o.wall && !f->o.n_states;
}

static void scache_clear(struct fg_fold *f)
{
	free(f->sc.ents);
	fg_buf_release(&f->sc.arena);
	memset(&f->sc, 0, sizeof(f->sc));
	f->cand = false;
}

/*
 * How much of raw (the leaf's newline, then the callers' lines; n bytes of it
 * known) is hashed: to the end of the first caller's line, or the newline
 * alone when the sample has no caller; 0 when that end is not in the n bytes
 */
static size_t sc_head(const char *raw, size_t n)
{
	const char *nl;

	if (n < 2 || raw[1] == '\n')
		return 1;
	nl = memchr(raw + 1, '\n', n - 1);
	return nl ? (size_t)(nl - raw) + 1 : 0;
}

static uint64_t sc_hash(const char *pre, size_t plen, const char *raw, size_t hlen)
{
	return fg_hash_bytes(raw, hlen, fg_hash_bytes(pre, plen, 0)) | 1;
}

static bool sc_same_pre(const struct scache *c, const struct sc_ent *e, uint64_t h, const char *pre,
			size_t plen)
{
	return e->hash == h && e->plen == plen && memcmp(c->arena.data + e->off, pre, plen) == 0;
}

/*
 * The entry whose frame lines start raw (n bytes of it in piece number
 * `piece`) and are followed there by the empty line; or NULL.  Found, it
 * points to raw as its recent copy.
 */
static struct sc_ent *sc_find(struct scache *c, uint64_t h, const char *pre, size_t plen,
			      const char *raw, size_t n, uint64_t piece)
{
	for (size_t j = h & c->mask;; j = (j + 1) & c->mask) {
		struct sc_ent *e = &c->ents[j];

		if (!e->hash)
			return NULL;
		if (e->rlen < n && raw[e->rlen] == '\n' && sc_same_pre(c, e, h, pre, plen) &&
		    memcmp(e->piece == piece ? e->recent : c->arena.data + e->off + plen, raw,
			   e->rlen) == 0) {
			e->recent = raw;
			e->piece = piece;
			return e;
		}
	}
}

static void sc_insert(struct fg_fold *f, uint64_t h, const char *pre, size_t plen, const char *raw,
		      size_t rlen, uint64_t lines, uint64_t val)
{
	struct scache *c = &f->sc;
	size_t same = 0, j;

	if (plen + rlen > SC_MAX_BYTES)
		return;
	if (c->arena.len + plen + rlen > SC_MAX_BYTES)
		scache_clear(f);
	if (!c->ents || (c->n + 1) * 2 > c->mask + 1) {
		/* twice the slots, the entries placed again */
		size_t nslots = c->ents ? (c->mask + 1) * 2 : 4096;
		struct sc_ent *old = c->ents;
		size_t oldn = c->ents ? c->mask + 1 : 0;

		c->ents = fg_xcalloc(nslots, sizeof(*c->ents));
		c->mask = nslots - 1;
		for (size_t i = 0; i < oldn; i++) {
			j = old[i].hash & c->mask;

			if (!old[i].hash)
				continue;
			while (c->ents[j].hash)
				j = (j + 1) & c->mask;
			c->ents[j] = old[i];
		}
		free(old);
	}
	/* the same key already in, or too many with its hash: a hostile input's, not cached */
	for (j = h & c->mask; c->ents[j].hash; j = (j + 1) & c->mask) {
		const struct sc_ent *e = &c->ents[j];

		if (!sc_same_pre(c, e, h, pre, plen))
			continue;
		if ((e->rlen == rlen && memcmp(c->arena.data + e->off + plen, raw, rlen) == 0) ||
		    ++same >= SC_SAME)
			return;
	}
	c->ents[j] = (struct sc_ent){.hash = h,
				     .off = c->arena.len,
				     .plen = (uint32_t)plen,
				     .rlen = (uint32_t)rlen,
				     .val = val,
				     .lines = lines,
				     .recent = raw,
				     .piece = f->piece};
	fg_buf_add(&c->arena, pre, plen);
	fg_buf_add(&c->arena, raw, rlen);
	c->n++;
}

/*
 * From q (a line starting with a tab) in [q, end): the empty line after lines
 * that each start with a tab, or NULL (another line first, or not all in
 * [q, end)); *leaf_end is the first line's newline, *n the lines.
 */
static const char *frames_end(const char *q, const char *end, const char **leaf_end, uint64_t *n)
{
	uint64_t k = 0;

	*leaf_end = NULL;
	for (const char *p = q, *nl; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))) || nl + 1 >= end)
			return NULL;
		if (k++ == 0)
			*leaf_end = nl;
		if (nl[1] == '\n') {
			*n = k;
			return nl + 1;
		}
		if (nl[1] != '\t')
			return NULL;
	}
	return NULL;
}

/*
 * A perf sample read whole.  When the header `line` (parsed into h) is
 * followed, in the piece being fed, by frame lines that each start with a tab
 * and then an empty line, what fg_fold makes of the sample depends only on
 * the header's naming fields (comm, event, what follows the event, the ids
 * when they name the root or choose the samples), the leaf's symbol and
 * module (its address too with --addrs) and the callers' lines as they are.
 * The leaf's address moves the most; the callers' return addresses repeat.
 * That is the key.  A sample seen before is counted from the cache: true,
 * with f->jump past its empty line.  Else it is read line by line, and cached
 * when it ends at that empty line with frames only (sample_cache_put).  A
 * sample leaves no state that changes how a later one is named, so the
 * result is the same either way (tests/fuzz/fuzz_fold.c checks it).
 */
static bool sample_cached(struct fg_fold *f, const struct fg_ps_header *h, const char *line,
			  size_t len, int *r)
{
	const char *end = f->piece_end, *q = line + len + 1, *leaf_end, *p;
	bool raw_leaf = f->o.include_addrs;
	struct fg_ps_frame leaf;
	size_t head;
	uint64_t n = 0;

	f->cand = false;
	if (f->sc_pause) {
		f->sc_pause--;
		return false;
	}
	/* the leaf's line, then the first caller's */
	if (q >= end || *q != '\t' || !(leaf_end = memchr(q, '\n', (size_t)(end - q))) ||
	    leaf_end[-1] == '\r' || !(head = sc_head(leaf_end, (size_t)(end - leaf_end))))
		return false;
	if (!raw_leaf && fg_ps_parse_frame(q, (size_t)(leaf_end - q), &leaf) != 0)
		return false;
	struct fg_buf *k = &f->skey;
	fg_buf_reset(k);
	fg_buf_grow(k, 7 * sizeof(uint32_t) + h->comm.len + h->event.len + h->rest.len +
			   h->pid.len + h->tid.len + (size_t)(leaf_end - q));
	add_key_span(k, h->comm.p, h->comm.len);
	add_key_span(k, h->event.p, h->event.len);
	add_key_span(k, h->rest.p, h->rest.len);
	if (f->o.include_pid || f->o.n_only_pids) {
		add_key_span(k, h->pid.p, h->pid.len);
		add_key_span(k, h->tid.p, h->tid.len);
	}
	if (raw_leaf) {
		memcpy(k->data + k->len, q, (size_t)(leaf_end - q));
		k->len += (size_t)(leaf_end - q);
	} else {
		add_key_span(k, leaf.sym.p, leaf.sym.len);
		add_key_span(k, leaf.module.p, leaf.module.len);
	}
	/* then the callers' lines, as they are, to the empty line */
	const char *raw = leaf_end;
	uint64_t hash = sc_hash(k->data, k->len, raw, head);
	struct sc_ent *e =
	    f->sc.ents ? sc_find(&f->sc, hash, k->data, k->len, raw, (size_t)(end - raw), f->piece)
		       : NULL;

	if (++f->sc_tries == SC_ROUND) {
		if (f->sc_hits * 8 < SC_ROUND)
			f->sc_pause = SC_PAUSE;
		f->sc_tries = f->sc_hits = 0;
	}
	if (!e) {
		if (!(p = frames_end(q, end, &leaf_end, &n)))
			return false;
		f->cand = true;
		f->cand_end = p;
		f->cand_raw = raw;
		f->cand_rlen = (size_t)(p - raw);
		f->cand_hash = hash;
		f->cand_lines = n;
		f->clean = true;
		return false;
	}
	f->sc_hits++;
	f->st.cached++;
	f->sample_lineno = f->lineno;
	f->lineno += e->lines + 1;
	f->blank_lines++;
	f->jump = raw + e->rlen + 1;
	uint32_t id = (uint32_t)(e->val >> 32);
	switch (e->val & 0xff) {
	case SC_OTHER:
		f->st.other_events++;
		break;
	case SC_FILTERED:
		f->st.filtered++;
		break;
	default: {
		struct fg_count c = {.whole = f->o.count_samples ? 1
					      : h->has_period	 ? h->period
								 : 1};

		if (!add_counts(f, id, &c, NULL))
			break;
		f->st.samples++;
		if (f->hooks.sample) {
			const struct fg_hash_entry *se = fg_hash_at(f->map, id);
			struct fg_fold_sample s = {
			    .input = FG_FOLD_PERF,
			    .lineno = f->sample_lineno,
			    .stack = se->key,
			    .stack_len = se->len,
			    .stack_id = id,
			    .columns = 1,
			    .count = c,
			    .extra_event = h->event.len && f->o.extra_event &&
					   event_is(h->event, f->o.extra_event),
			    .h = h,
			    .header = line,
			    .header_len = len,
			};
			if ((*r = f->hooks.sample(f->hooks.ctx, &s)) != 0)
				f->err = *r;
		}
	}
	}
	return true;
}

/* the sample that ends now was looked up and not found: cache it if it is what was looked up */
static void sample_cache_put(struct fg_fold *f)
{
	uint64_t v;

	f->cand = false;
	if (f->cur_line != f->cand_end || !f->clean)
		return;
	if (f->skip)
		v = f->skip_kind;
	else if (f->last_id != FG_FOLD_NO_ID)
		v = (uint64_t)f->last_id << 32 | SC_STACK;
	else
		return;
	sc_insert(f, f->cand_hash, f->skey.data, f->skey.len, f->cand_raw, f->cand_rlen,
		  f->cand_lines, v);
}

/* a sample header `line`: the sample before it ends, the line hook sees it, then it starts */
static int perf_header(struct fg_fold *f, const struct fg_ps_header *h, const char *line,
		       size_t len)
{
	int r = 0;

	if (f->in_sample)
		r = end_sample(f);
	if (r == 0 && f->hook && (r = f->hook(f->hook_ctx, line, len)) != 0)
		f->err = r;
	if (r == 0 && f->cur_line == line && !h->weak && scache_usable(f) &&
	    sample_cached(f, h, line, len, &r))
		return r;
	if (r == 0)
		start_sample(f, h, line, len);
	return r;
}

/* a line that is not a header: a frame, a source position, a line perf adds, or bad */
static int perf_body(struct fg_fold *f, const char *line, size_t len)
{
	struct fg_ps_frame fr;
	struct fg_span src;

	if (f->in_sample) {
		if (f->skip) {
			if (all_space(line, len))
				goto blank;
			f->sample_lines++;
			return 0;
		}
		if (fg_ps_parse_frame(line, len, &fr) == 0) {
			size_t first = f->nframes;

			f->sample_lines++;
			add_perf_frame(f, &fr);
			record_frame(f, line, len, &fr, first);
			return 0;
		}
		if (f->sample_lines && fg_ps_is_srcline(line, len, &src)) {
			add_srcline(f, src);
			return 0;
		}
	}
	if (fg_ps_is_extra_line(line, len)) {
		f->st.extra_lines++;
		return 0;
	}
	if (all_space(line, len))
		goto blank;
	bad_line(f, f->in_sample ? "unrecognized line" : "line outside a sample", line, len);
	return 0;
blank:
	f->blank_lines++;
	/* a blank line ends a sample, unless nothing came since its header */
	if (f->in_sample && f->sample_lines)
		return end_sample(f);
	return 0;
}

/* the weak header held back: a header when a frame follows it, else a line like any other */
static int resolve_pending(struct fg_fold *f, bool is_header)
{
	struct fg_ps_header h;
	uint64_t lineno = f->lineno;
	int r;

	f->has_pending = false;
	f->lineno = f->pending_lineno;
	if (is_header && fg_ps_parse_header(f->pending.data, f->pending.len, &h) == 0)
		r = perf_header(f, &h, f->pending.data, f->pending.len);
	else
		r = perf_body(f, f->pending.data, f->pending.len);
	f->lineno = lineno;
	return r;
}

static int perf_line(struct fg_fold *f, const char *line, size_t len)
{
	struct fg_ps_header h;
	struct fg_ps_frame fr;
	int r = 0;

	if (len && line[len - 1] == '\r')
		len--;
	if (f->has_pending) {
		bool framed = len && (line[0] == '\t' || line[0] == ' ') &&
			      fg_ps_parse_frame(line, len, &fr) == 0;

		if ((r = resolve_pending(f, framed)) != 0)
			return r;
	}
	if (len == 0)
		return perf_body(f, line, len);
	if (f->in_sample && line[0] == '\t') {
		/* perf's frames start with a tab: the common case, first */
		if (f->skip) {
			f->sample_lines++;
			return 0;
		}
		if (cached_frame(f, line, len))
			return 0;
		if (fg_ps_parse_frame(line, len, &fr) == 0) {
			size_t before = f->nframes;

			f->sample_lines++;
			add_perf_frame(f, &fr);
			if (!cache_frame(f, line, len, before, &fr))
				record_frame(f, line, len, &fr, before);
			return 0;
		}
	}
	f->clean = false; /* a line that is no frame: the sample is not cached */
	if (line[0] == '#') {
		f->blank_lines++; /* a comment: as good as blank */
		if (f->hook && (r = f->hook(f->hook_ctx, line, len)) != 0)
			f->err = r;
		if (r == 0 && f->hooks.comment &&
		    (r = f->hooks.comment(f->hooks.ctx, line, len)) != 0)
			f->err = r;
		return r;
	}
	if (!f->psmemo)
		f->psmemo = fg_xcalloc(1, sizeof(*f->psmemo));
	r = fg_ps_parse_header_memo(f->psmemo, line, len, &h);
	if (r == -ERANGE) {
		/* this sample is left out; its frames are read past */
		if (f->in_sample && (r = end_sample(f)) != 0)
			return r;
		f->st.refused++;
		if (f->st.refused <= MAX_LOGGED_BAD_LINES)
			logf_(f, "%s:%llu: the period does not fit in 64 bits; sample left out",
			      f->name, (unsigned long long)f->lineno);
		f->in_sample = true;
		f->skip = true;
		f->sample_lines = 0;
		return 0;
	}
	if (r == FG_PS_SIDEBAND)
		return sideband(f, &h, line, len);
	if (r == 0 && !h.weak)
		return perf_header(f, &h, line, len);
	if (r == 0) {
		/*
		 * A weak header: with its frame on the line, or until the next line
		 * says.  Believed even after strong ones: a comm can look like one
		 * ("1/1 1: 9 e:"), and it must not make the headers of the other
		 * processes (-F comm,ip,sym, -F comm,tid,ip,sym) lines to skip.
		 */
		if (h.rest.len)
			return perf_header(f, &h, line, len);
		fg_buf_reset(&f->pending);
		fg_buf_add(&f->pending, line, len);
		f->pending_lineno = f->lineno;
		f->has_pending = true;
		return 0;
	}
	return perf_body(f, line, len);
}

/* --- folded stacks --- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* a count's value; a whole part past 2^64-1 refuses the line */
static int count_of(struct fg_fold *f, const char *text, size_t len, struct fg_count *c)
{
	if (fg_count_parse(text, len, c) == 0)
		return 0;
	f->st.refused++;
	if (f->st.refused <= MAX_LOGGED_BAD_LINES)
		logf_(f, "%s:%llu: a count does not fit in 64 bits; line left out", f->name,
		      (unsigned long long)f->lineno);
	return -ERANGE;
}

/*
 * A folded line, read by lib/folded.c as flamegraph.pl reads it; fg-fold also
 * takes blanks after the count, and drops those between the stack and its
 * count(s), so that "a;b  5" and "a;b 5" are one stack.
 */
static int folded_line(struct fg_fold *f, const char *line, size_t len)
{
	struct fg_folded fl;
	struct fg_count c1, c2;
	size_t n;
	int two;

	while (len && is_blank(line[len - 1]))
		len--;
	if (len == 0) {
		f->blank_lines++;
		return 0;
	}
	if (fg_folded_parse(line, len, &fl) != 0) {
		bad_line(f, "line without a count", line, len);
		return 0;
	}
	/* "a;b 1  2": blanks between the counts still make two */
	if (!fl.diff) {
		size_t k = fl.stack_len;

		while (k && is_blank(line[k - 1]))
			k--;
		if (k < fl.stack_len) {
			struct fg_folded inner;

			if (fg_folded_parse(line, k, &inner) == 0) {
				fl.before_text = inner.count_text;
				fl.before_text_len = inner.count_text_len;
				fl.stack_len = inner.stack_len;
				fl.diff = true;
			}
		}
	}
	two = fl.diff;
	if (count_of(f, fl.count_text, fl.count_text_len, &c2) != 0 ||
	    (two && count_of(f, fl.before_text, fl.before_text_len, &c1) != 0))
		return 0;
	if (f->file_columns == 0) {
		f->file_columns = two ? 2 : 1;
		if (f->st.columns == 0) {
			f->st.columns = f->file_columns;
		} else if (f->st.columns != f->file_columns) {
			logf_(f, "%s:%llu: cannot merge a %s-column profile with a %s-column one",
			      f->name, (unsigned long long)f->lineno,
			      f->file_columns == 2 ? "two" : "one",
			      f->st.columns == 2 ? "two" : "one");
			return f->err = -EINVAL;
		}
	}
	n = fl.stack_len;
	if (f->st.columns == 2) {
		if (!two) {
			bad_line(f, "line without two counts", line, len);
			return 0;
		}
	} else if (two) {
		/* one column: the "before" count is part of the stack, as before */
		n = (size_t)(fl.count_text - line);
		c1 = c2;
	} else {
		c1 = c2;
	}
	while (n && is_blank(line[n - 1]))
		n--;
	if (n == 0) {
		bad_line(f, "line without a stack", line, len);
		return 0;
	}
	struct fg_fold_sample s = {
	    .lineno = f->lineno,
	    .stack = line,
	    .stack_len = n,
	    .count = c1,
	    .count2 = c2,
	    .columns = f->st.columns,
	};
	return fold_stack(f, &s);
}

/* --- bpftrace --- */

static void bpf_add_frame(struct fg_fold *f, const char *s, size_t n)
{
	struct fg_ps_frame fr;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n == 0)
		return;
	/* ustack(perf) mode prints perf's frame lines */
	if (fg_ps_parse_frame(s, n, &fr) == 0) {
		add_perf_frame(f, &fr);
		return;
	}
	/* "func+123 (/path/module)": drop the module, then the offset, as for perf's frames */
	size_t open = fg_ps_module_open(s, 0, n);

	if (open) {
		n = open;
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n == 0)
			return;
	}
	size_t d = n;
	while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
		d--;
	if (d < n && d > 1 && s[d - 1] == '+')
		n = d - 1;
	size_t off = f->names.len;
	tidy_append(&f->names, s, n, CLS_TIDY);
	push_frame(f, off, ANNOT_NONE);
}

/* scalar key elements ("comm", "pid") between ", " separators */
static void bpf_add_scalars(struct fg_fold *f, const char *s, size_t n)
{
	while (n) {
		const char *comma = memchr(s, ',', n);
		size_t k = comma ? (size_t)(comma - s) : n;

		bpf_add_frame(f, s, k);
		if (!comma)
			break;
		s += k + 1;
		n -= k + 1;
	}
}

static int bpf_end_entry(struct fg_fold *f, const char *cnt, size_t n)
{
	uint64_t v = 0;
	size_t i = 0, j;
	int r;

	f->in_entry = false;
	while (i < n && cnt[i] == ' ')
		i++;
	for (j = i; j < n && cnt[j] >= '0' && cnt[j] <= '9'; j++)
		;
	r = fg_span_u64((struct fg_span){cnt + i, j - i}, &v);
	if (r == -EINVAL)
		return r;
	if (r == -ERANGE) {
		f->st.refused++;
		if (f->st.refused <= MAX_LOGGED_BAD_LINES)
			logf_(f, "%s:%llu: a count does not fit in 64 bits; entry left out",
			      f->name, (unsigned long long)f->lineno);
		f->nframes = 0;
		fg_buf_reset(&f->names);
		f->entry_damaged = false;
		return 0;
	}
	if (f->nframes == 0)
		return 0;
	/* bpftrace lists leaf first and the key's elements in order: reverse it all */
	fg_buf_reset(&f->key);
	for (size_t k = f->nframes; k-- > 0;) {
		const struct frame *fr = &f->frames[k];

		if (f->key.len)
			fg_buf_addch(&f->key, ';');
		fg_buf_add(&f->key, f->names.data + fr->off, fr->len);
	}
	f->nframes = 0;
	fg_buf_reset(&f->names);
	if (f->entry_damaged) {
		f->entry_damaged = false;
		f->st.damaged++;
		return 0;
	}
	struct fg_fold_sample s = {
	    .lineno = f->lineno,
	    .stack = f->key.data,
	    .stack_len = f->key.len,
	    .count = {.whole = v},
	    .columns = 1,
	};
	return fold_stack(f, &s);
}

static int bpftrace_line(struct fg_fold *f, const char *line, size_t len)
{
	const char *s = line, *end;
	size_t n = len;

	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	end = s + n;
	if (n == 0)
		f->blank_lines++;
	if (!f->in_entry) {
		if (n == 0 || starts(s, n, "Attaching ", 10) || span_is(s, n, "^C", 2))
			return 0;
		if (s[0] != '@') {
			bad_line(f, "unrecognized line", line, len);
			return 0;
		}
		const char *lb = memchr(s, '[', n);
		const char *colon = memchr(s, ':', n);
		if (!lb || (colon && colon < lb))
			return 0; /* a map without keys: "@count: 3" */
		f->in_entry = true;
		f->nframes = 0;
		fg_buf_reset(&f->names);
		s = lb + 1;
		n = (size_t)(end - s);
	}
	if (n && s[0] == ',') {
		s++;
		n--;
	}
	/* "...]: COUNT" closes the entry */
	const char *close = NULL;
	for (const char *p = end - 1; p > s; p--) {
		if (p[-1] == ']' && p[0] == ':') {
			close = p - 1;
			break;
		}
	}
	if (!close && n >= 2 && s[0] == ']' && s[1] == ':')
		close = s;
	if (close) {
		bpf_add_scalars(f, s, (size_t)(close - s));
		int r = bpf_end_entry(f, close + 2, (size_t)(end - close - 2));

		if (r == -EINVAL)
			bad_line(f, "entry without a count", line, len);
		return r == -EINVAL ? 0 : r;
	}
	if (line != s && (line[0] == ' ' || line[0] == '\t'))
		bpf_add_frame(f, s, n);
	else
		bpf_add_scalars(f, s, n);
	return 0;
}

/* --- inputs --- */

/*
 * The format of an input from its first 32 lines that are neither blank nor
 * comments: bpftrace when the first is a map entry, folded stacks when all are
 * folded lines, else perf script text.  Whatever the lines' length: when the
 * data ends before the lines that decide and `all` is false, *more asks for
 * more (*partial: where the line the data ends in starts, *nlines: the lines
 * that count before it).
 */
static enum fg_fold_input detect(const char *data, size_t len, bool all, bool *more,
				 size_t *partial, int *nlines)
{
	const char *p = data, *end = data + len;
	int folded = 0, lines = 0;

	*more = false;
	*nlines = 0;
	while (p < end && lines < DETECT_LINES) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t n = (size_t)(le - p);

		if (p[0] == ' ' || p[0] == '\t')
			return FG_FOLD_PERF; /* an indented line: a frame */
		if (!nl && !all)
			break;
		while (n && is_blank(p[n - 1]))
			n--;
		if (n && p[0] != '#') {
			lines++;
			if (lines == 1 && (p[0] == '@' || starts(p, n, "Attaching ", 10)))
				return FG_FOLD_BPFTRACE;
			if (!fg_folded_is_line(p, n))
				return FG_FOLD_PERF;
			folded++;
		}
		p = le + 1;
	}
	if (!all && lines < DETECT_LINES) {
		*more = true;
		*partial = p < end ? (size_t)(p - data) : len;
		*nlines = lines;
		return FG_FOLD_AUTO;
	}
	return folded ? FG_FOLD_FOLDED : FG_FOLD_PERF;
}

enum fg_fold_input fg_fold_detect(const char *data, size_t len, bool complete)
{
	bool more;
	size_t partial;
	int nlines;
	enum fg_fold_input in = detect(data, len, complete, &more, &partial, &nlines);

	return more ? FG_FOLD_AUTO : in;
}

/* a line of max_line bytes or more, read past: the sample or entry it was in is left out */
static void long_line(struct fg_fold *f)
{
	f->clean = false;
	f->st.long_lines++;
	if (f->st.long_lines <= MAX_LOGGED_BAD_LINES)
		logf_(f, "%s:%llu: line of %zu bytes or more skipped (the limit)", f->name,
		      (unsigned long long)f->lineno, f->max_line);
	if (f->fmt == FG_FOLD_PERF && f->in_sample && !f->skip) {
		f->skip = true;
		f->st.damaged++;
	}
	if (f->fmt == FG_FOLD_BPFTRACE && f->in_entry)
		f->entry_damaged = true;
}

static inline int one_line(struct fg_fold *f, const char *line, size_t len)
{
	f->lineno++;
	switch (f->fmt) {
	case FG_FOLD_FOLDED:
		return folded_line(f, line, len);
	case FG_FOLD_BPFTRACE:
		return bpftrace_line(f, line, len);
	default:
		return perf_line(f, line, len);
	}
}

int fg_fold_begin(struct fg_fold *f, const char *name)
{
	f->name = name;
	f->lineno = 0;
	f->blank_lines = 0;
	f->err = 0;
	f->file_columns = 0;
	f->fmt = FG_FOLD_AUTO;
	f->decided = false;
	f->eof = false;
	f->skipping = false;
	f->fed = 0;
	fg_buf_reset(&f->carry);
	f->cand = false;
	f->in_sample = false;
	f->in_entry = false;
	f->entry_damaged = false;
	f->has_pending = false;
	f->nframes = 0;
	fg_buf_reset(&f->names);
	return 0;
}

/* the format is known: the input's folding starts */
static int decide(struct fg_fold *f, enum fg_fold_input fmt)
{
	f->decided = true;
	f->fmt = f->o.input != FG_FOLD_AUTO ? f->o.input : fmt;
	f->st.input = f->fmt;
	if (f->fmt != FG_FOLD_FOLDED) {
		if (f->st.columns == 2) {
			logf_(f, "%s: cannot merge %s input with a two-column profile", f->name,
			      fg_fold_input_name(f->fmt));
			return f->err = -EINVAL;
		}
		f->st.columns = 1;
	}
	return 0;
}

/*
 * Fold the lines of [p, end): whole lines in place, a line cut at `end` kept
 * in f->carry until its end comes; a line of max_line bytes or more skipped.
 */
static int fold_lines(struct fg_fold *f, const char *p, const char *end)
{
	const char *nl;
	int r;

	f->piece++; /* the sample cache's recent copies in the piece before are gone */
	if (f->skipping) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			return 0;
		f->skipping = false;
		p = nl + 1;
	}
	if (f->carry.len && p < end) {
		/* the line cut between the pieces */
		nl = memchr(p, '\n', (size_t)(end - p));
		size_t take = (size_t)((nl ? nl : end) - p);

		if (f->carry.len + take >= f->max_line) {
			fg_buf_reset(&f->carry);
			f->lineno++;
			long_line(f);
			f->skipping = !nl;
			if (!nl)
				return 0;
		} else {
			fg_buf_add(&f->carry, p, take);
			if (!nl)
				return 0;
			r = one_line(f, f->carry.data, f->carry.len);
			fg_buf_reset(&f->carry);
			if (r)
				return r;
		}
		p = nl + 1;
	}
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			if ((size_t)(end - p) >= f->max_line) {
				f->lineno++;
				long_line(f);
				f->skipping = true;
			} else {
				fg_buf_add(&f->carry, p, (size_t)(end - p));
			}
			return 0;
		}
		if ((size_t)(nl - p) >= f->max_line) {
			f->lineno++;
			long_line(f);
		} else {
			/* a line in the piece: the sample cache may look past it */
			f->cur_line = p;
			f->piece_end = end;
			r = one_line(f, p, (size_t)(nl - p));
			f->cur_line = NULL;
			if (f->jump) {
				/* a sample counted from the sample cache: on past its blank line */
				nl = f->jump - 1;
				f->jump = NULL;
			}
			if (r)
				return r;
		}
		p = nl + 1;
	}
	return 0;
}

/*
 * Hold bytes until the format is known.  At most the line limit and a read
 * are held (then the first lines decide): the buffer grows straight to that
 * once doubling would reach the limit, rather than to twice the limit.
 */
static void hold(struct fg_fold *f, const char *p, size_t n)
{
	struct fg_buf *c = &f->carry;

	if (c->len + n + 1 > c->cap && c->cap * 2 >= f->max_line)
		fg_buf_reserve(c, c->len + n > f->max_line + READ_SIZE ? c->len + n
								       : f->max_line + READ_SIZE);
	fg_buf_add(c, p, n);
}

/*
 * Before the format is known: decide from what came ([p, end) when nothing is
 * held, else f->carry), then fold it; or hold it all until more comes.
 */
static int try_decide(struct fg_fold *f, const char *p, const char *end)
{
	bool held = f->carry.len > 0, more;
	size_t partial, len;
	int nlines, r;
	enum fg_fold_input fmt;

	if (held || f->skipping) {
		if (f->skipping) {
			/* the rest of a long line, then the lines after it */
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			if (!nl)
				return 0;
			f->skipping = false;
			p = nl + 1;
		}
		hold(f, p, (size_t)(end - p));
		held = true;
	}
	const char *data = held ? f->carry.data : p;
	len = held ? f->carry.len : (size_t)(end - p);
	if (!data)
		data = "";
	fmt = detect(data, len, f->eof, &more, &partial, &nlines);
	if (more && len >= f->max_line) {
		if (nlines > 0) {
			fmt = detect(data, partial, true, &more, &partial, &nlines);
		} else if (len - partial >= f->max_line) {
			/* the first line that counts is too long: skip it, look after it */
			for (const char *q = data; q < data + partial; q++)
				if (*q == '\n') {
					f->lineno++;
					f->blank_lines++;
				}
			f->lineno++;
			long_line(f);
			fg_buf_reset(&f->carry);
			f->skipping = true;
			return 0;
		} else {
			fmt = FG_FOLD_PERF; /* 64 MB of comments: the default */
			more = false;
		}
	} else if (more) {
		if (!held)
			hold(f, p, (size_t)(end - p));
		return 0;
	}
	if ((r = decide(f, fmt)) != 0)
		return r;
	if (!held)
		return fold_lines(f, p, end);
	/* fold what was held, from a buffer of its own (carry takes a cut line) */
	struct fg_buf held_buf = f->carry;
	f->carry = (struct fg_buf)FG_BUF_INIT;
	r = fold_lines(f, held_buf.data, held_buf.data + held_buf.len);
	fg_buf_release(&held_buf);
	return r;
}

int fg_fold_feed(struct fg_fold *f, const char *data, size_t len)
{
	if (f->err)
		return f->err;
	if (len == 0)
		return 0;
	if (f->fed < DETECT_BYTES) {
		size_t n = len < DETECT_BYTES - f->fed ? len : DETECT_BYTES - (size_t)f->fed;

		if (memchr(data, '\0', n)) {
			logf_(
			    f,
			    "%s: binary input, not text (records from fg-sample?); run it through "
			    "fg-sym first: fg-sym < FILE | %s",
			    f->name, fg_progname());
			return f->err = -EMEDIUMTYPE;
		}
	}
	f->fed += len;
	int r = f->decided ? fold_lines(f, data, data + len) : try_decide(f, data, data + len);
	if (r && !f->err)
		f->err = r;
	return r;
}

int fg_fold_end(struct fg_fold *f)
{
	int r = f->err;

	f->eof = true;
	if (r == 0 && !f->decided) {
		r = try_decide(f, "", "");
		if (r == 0 && !f->decided)
			r = decide(f, FG_FOLD_PERF); /* an input that is all one long line */
	}
	if (r == 0 && f->carry.len) {
		/* the last line, without its newline */
		struct fg_buf last = f->carry;

		f->carry = (struct fg_buf)FG_BUF_INIT;
		r = one_line(f, last.data, last.len);
		fg_buf_release(&last);
	}
	f->st.lines += f->lineno - f->blank_lines;
	if (r == 0 && f->fmt == FG_FOLD_PERF && f->has_pending)
		r = resolve_pending(f, false);
	if (r == 0 && f->fmt == FG_FOLD_PERF && f->in_sample)
		r = end_sample(f);
	if (f->fmt == FG_FOLD_BPFTRACE && f->in_entry) {
		logf_(f, "%s:%llu: the input ends inside a map entry; its stack is lost", f->name,
		      (unsigned long long)f->lineno);
		f->st.bad_lines++;
		f->in_entry = false;
	}
	if (r && !f->err)
		f->err = r;
	return r;
}

int fg_fold_read(struct fg_fold *f, int fd, const char *name)
{
	char *buf = fg_xmalloc(READ_SIZE);
	size_t have = 0;
	ssize_t n;
	int r = fg_fold_begin(f, name);

	/*
	 * The first bytes that say whether the input is text in one piece, so
	 * that nothing of a binary input is folded; then each read as it comes
	 */
	for (;;) {
		do
			n = read(fd, buf + have, READ_SIZE - have);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have >= DETECT_BYTES || f->fed) {
			r = fg_fold_feed(f, buf, have);
			have = 0;
			if (r)
				break;
		}
	}
	if (n < 0) {
		r = -errno;
		logf_(f, "cannot read '%s': %s", name, strerror(-r));
		f->err = r;
	} else if (r == 0 && have) {
		r = fg_fold_feed(f, buf, have);
	}
	free(buf);
	if (r == 0)
		r = fg_fold_end(f);
	return r;
}

int fg_fold_read_mem(struct fg_fold *f, const char *data, size_t len, const char *name)
{
	int r = fg_fold_begin(f, name);

	if (r == 0)
		r = fg_fold_feed(f, data, len);
	if (r == 0)
		r = fg_fold_end(f);
	return r;
}

/* --- output --- */

int fg_fold_write(struct fg_fold *f, FILE *out)
{
	size_t n = fg_hash_count(f->map);
	struct fg_hash_entry **v = fg_hash_sorted(f->map);
	struct fg_hash_entry *first = n ? fg_hash_at(f->map, 0) : NULL;
	char num[112];
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		const struct fg_count *c = f->counts[v[i] - first];
		int k = 1;

		num[0] = ' ';
		if (f->st.columns == 2) {
			k += fg_count_format(&c[0], num + k, sizeof(num) - (size_t)k);
			num[k++] = ' ';
			k += fg_count_format(&c[1], num + k, sizeof(num) - (size_t)k);
		} else {
			k += fg_count_format(&c[0], num + k, sizeof(num) - (size_t)k);
		}
		num[k++] = '\n';
		if (fwrite(v[i]->key, 1, v[i]->len, out) != v[i]->len ||
		    fwrite(num, 1, (size_t)k, out) != (size_t)k) {
			err = errno ? errno : EIO;
			break;
		}
	}
	free(v);
	return err ? -err : ferror(out) ? -EIO : 0;
}

/* --- the object --- */

struct fg_fold *fg_fold_new(const struct fg_fold_opts *opts, fg_log_fn log, void *ctx)
{
	struct fg_fold *f = fg_xcalloc(1, sizeof(*f));

	f->o = *opts;
	if (f->o.include_tid)
		f->o.include_pid = true;
	if (f->o.inline_context)
		f->o.inline_frames = true;
	f->log = log;
	f->log_ctx = ctx;
	f->map = fg_hash_new(1024);
	f->line_first = SIZE_MAX;
	f->max_line = FG_FOLD_MAX_LINE;
	if (opts->event_filter) {
		f->event_len = strlen(opts->event_filter);
		f->event = fg_xstrdup(opts->event_filter);
		/* "cycles" matches cycles:u and cycles:k; "cycles:u" only itself */
		f->event_exact = fg_ps_event_base_len(f->event, f->event_len) != f->event_len;
		f->st.event = f->event;
	}
	return f;
}

void fg_fold_free(struct fg_fold *f)
{
	if (!f)
		return;
	fg_hash_free(f->map);
	for (size_t i = 0; f->inl_files && i < fg_hash_count(f->inl_files); i++)
		inl_free(fg_hash_at(f->inl_files, i)->val.p);
	fg_hash_free(f->inl_files);
	fg_hash_free(f->fcache[0]);
	fg_hash_free(f->fcache[1]);
	fg_buf_release(&f->fcache_names);
	free(f->psmemo);
	free(f->fparse[0]);
	free(f->fparse[1]);
	free(f->counts);
	fg_buf_release(&f->pending);
	fg_buf_release(&f->rust);
	free(f->event);
	free(f->frames);
	fg_buf_release(&f->pname);
	fg_buf_release(&f->names);
	fg_buf_release(&f->key);
	fg_buf_release(&f->carry);
	scache_clear(f);
	fg_buf_release(&f->skey);
	fg_buf_release(&f->stext);
	fg_buf_release(&f->hline);
	free(f->raw);
	free(f->hframes);
	free(f->hnames);
	free(f);
}

void fg_fold_set_line_hook(struct fg_fold *f, fg_fold_line_fn fn, void *ctx)
{
	f->hook = fn;
	f->hook_ctx = ctx;
}

void fg_fold_set_hooks(struct fg_fold *f, const struct fg_fold_hooks *hooks)
{
	f->hooks = *hooks;
}

void fg_fold_clear(struct fg_fold *f)
{
	scache_clear(f); /* it holds the table's numbers */
	fg_hash_free(f->map);
	f->map = fg_hash_new(1024);
	free(f->counts);
	f->counts = NULL;
	f->counts_alloc = 0;
}

size_t fg_fold_count(const struct fg_fold *f)
{
	return fg_hash_count(f->map);
}

const struct fg_fold_stats *fg_fold_stats(const struct fg_fold *f)
{
	return &f->st;
}

static const char *const input_names[] = {"auto", "perf", "folded", "bpftrace"};

const char *fg_fold_input_name(enum fg_fold_input in)
{
	return (unsigned)in < FG_ARRAY_SIZE(input_names) ? input_names[in] : "?";
}

int fg_fold_input_parse(const char *name)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(input_names); i++)
		if (strcmp(name, input_names[i]) == 0)
			return (int)i;
	return -1;
}
