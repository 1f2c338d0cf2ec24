// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwinding fixture: each mode keeps the CPU busy in a place where
 * unwinding without frame pointers is hard, for MS milliseconds of CPU
 * (argument 1, default 150), one mode after the other (or only those named
 * after it).  Built by gcc and by clang at -O2 -fomit-frame-pointer, PIE,
 * non-PIE and static (Makefile: build/unwind/); tests/unwind/snap.c takes the
 * snapshots when FG_SNAP_OUT is set.
 *
 *	recurse  a recursion 64 calls deep, busy at the bottom
 *	qsort    libc's qsort calling back a slow comparison
 *	lib      a call through a shared library, which calls back
 *	signal   a signal handler busy on the interrupted stack
 *	plt      a hot loop of calls through the PLT
 *	realign  alloca, a VLA and an over-aligned local (stack realignment)
 *	drap     busy inside a realigning prologue, where the CFA is r10 (gcc's DRAP;
 *	         x86-64 only)
 *	threads  two threads busy in their own calls
 *	vdso     clock_gettime() in a loop: the time goes to the kernel's vdso
 *	gap      busy under a function without CFI that zeroed rbp, the x86-64
 *	         ABI's mark of the outermost frame (as ld.so's _start is): its
 *	         stacks end there, whole (only when named)
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixlib.h"

#define DEPTH 64

static volatile unsigned long sink;
static double budget_ms = 150;

#define NOINL __attribute__((noinline))
/* keeps a call from being a tail call (and its frame from disappearing) */
#define KEEP(x) __asm__ volatile("" : "+r"(x))

static double cpu_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINL static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7 + (sink >> 3);
}

/* --- recurse --- */
NOINL static unsigned long rec_b(int n);
NOINL static unsigned long rec_a(int n)
{
	unsigned long r;

	if (n == 0) {
		spin(200000);
		return 1;
	}
	r = rec_b(n - 1);
	KEEP(r);
	return r + 1;
}

NOINL static unsigned long rec_b(int n)
{
	unsigned long r = rec_a(n - 1);

	KEEP(r);
	return r + 2;
}

NOINL static void mode_recurse(void)
{
	unsigned long r = rec_a(DEPTH);

	KEEP(r);
}

/* --- qsort --- */
NOINL static int slow_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	spin(40);
	return (x > y) - (x < y);
}

NOINL static void mode_qsort(void)
{
	static int v[2048];

	for (int i = 0; i < 2048; i++)
		v[i] = (int)((i * 2654435761u) >> 7);
	qsort(v, 2048, sizeof(v[0]), slow_cmp);
}

/* --- lib --- */
NOINL static unsigned long lib_callback(unsigned long n)
{
	spin(n);
	return n;
}

NOINL static void mode_lib(void)
{
	unsigned long r = fixlib_work(100000, lib_callback);

	KEEP(r);
}

/* --- signal --- */
static volatile int in_handler;

static void on_usr1(int sig)
{
	(void)sig;
	in_handler = 1;
	spin(300000);
	in_handler = 0;
}

NOINL static void raise_it(void)
{
	raise(SIGUSR1);
	KEEP(sink);
}

NOINL static void mode_signal(void)
{
	raise_it();
	spin(1000); /* and some time in the interrupted code */
}

/* --- plt --- */
NOINL static void mode_plt(void)
{
	static const char s[] = "unwind";
	unsigned long acc = 0;

	for (int i = 0; i < 200000; i++) {
		acc += fixlib_tiny((unsigned long)i);
		acc += strlen(s + (i & 3));
	}
	sink += acc;
}

/* --- realign --- */
NOINL static void use(volatile char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)i;
}

NOINL static void realigned(int n)
{
	char vla[n];
	_Alignas(64) char aligned[64];
	char *a = alloca((size_t)n * 2);

	use(vla, (size_t)n);
	use(aligned, sizeof(aligned));
	use(a, (size_t)n * 2);
	spin(20000);
	KEEP(a);
}

NOINL static void with_alloca(int n)
{
	char *a = alloca((size_t)n);

	use(a, (size_t)n);
	spin(20000);
	KEEP(a);
}

NOINL static void mode_realign(void)
{
	realigned(100 + (int)(sink & 15));
	with_alloca(200 + (int)(sink & 31));
}

#if defined(__x86_64__)
/*
 * --- drap ---
 * gcc's prologue of a function that realigns its stack keeps the CFA in r10
 * (the "dynamic realign argument pointer") while rsp is aligned down, until
 * rbp is set up: a few instructions, seldom sampled.  drap_spin stays in that
 * window, so that a sample there must take r10 from the interrupted registers.
 */
void drap_spin(unsigned long n);
__asm__(".text\n"
	".p2align 4\n"
	".type drap_spin, @function\n"
	"drap_spin:\n"
	".cfi_startproc\n"
	"	lea 8(%rsp), %r10\n"
	".cfi_def_cfa %r10, 0\n"
	"	and $-64, %rsp\n"
	"	pushq -8(%r10)\n"
	"1:	sub $1, %rdi\n"
	"	jnz 1b\n"
	"	lea -8(%r10), %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size drap_spin, .-drap_spin\n");

NOINL static void mode_drap(void)
{
	drap_spin(200000);
	sink++; /* no tail call: mode_drap stays a frame */
}
#endif

/*
 * --- gap ---
 * gap_call has no CFI (a gap in the file's table) and calls fn with rbp 0, as
 * ld.so's _start calls _dl_start: an unwinder that follows the ABI stops
 * there, at the outermost frame.
 */
void gap_call(void (*fn)(void));
#if defined(__aarch64__)
/* the same on arm64: x29 0, the AAPCS64 mark of the outermost frame record */
__asm__(".text\n"
	".p2align 4\n"
	".type gap_call, %function\n"
	"gap_call:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, #0\n"
	"	blr x0\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size gap_call, .-gap_call\n");
#else
__asm__(".text\n"
	".p2align 4\n"
	".type gap_call, @function\n"
	"gap_call:\n"
	"	push %rbp\n"
	"	xor %ebp, %ebp\n"
	"	call *%rdi\n"
	"	pop %rbp\n"
	"	ret\n"
	".size gap_call, .-gap_call\n");
#endif

NOINL static void gap_body(void)
{
	spin(20000);
	sink++;
}

NOINL static void mode_gap(void)
{
	gap_call(gap_body);
	sink++;
}

/* --- vdso --- */
NOINL static void mode_vdso(void)
{
	struct timespec ts;

	for (int i = 0; i < 2000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
}

/* --- threads --- */
/* snap.c: the snapshots taken of this thread (UINT32_MAX when it takes none) */
unsigned snap_taken_here(void);

NOINL static void *worker(void *arg)
{
	double now = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
	double end = now + *(double *)arg, cap = end + 20 * *(double *)arg;

	/*
	 * On a busy machine SIGPROF (ITIMER_PROF) comes far more seldom than the CPU
	 * time of these threads says it should: when taking snapshots, each thread
	 * goes on until three of its own are taken (at most 20 budgets more)
	 */
	while (now < end || (snap_taken_here() < 3 && now < cap)) {
		spin(20000);
		mode_recurse();
		now = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
	}
	return NULL;
}

NOINL static void mode_threads_run(void)
{
	pthread_t t[2];
	double each = budget_ms; /* each thread a whole mode's budget: enough ticks land in both */

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &each);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static const struct {
	const char *name;
	void (*fn)(void);
	int named; /* run only when named: its stacks do not reach _start */
} modes[] = {
    {"recurse", mode_recurse, 0},     {"qsort", mode_qsort, 0}, {"lib", mode_lib, 0},
    {"signal", mode_signal, 0},	      {"plt", mode_plt, 0},	{"realign", mode_realign, 0},
#if defined(__x86_64__)
    {"drap", mode_drap, 0},
#endif
    {"threads", mode_threads_run, 0}, {"vdso", mode_vdso, 0},	{"gap", mode_gap, 1},
};

NOINL static void run_mode(int i)
{
	double end;

	if (modes[i].fn == mode_threads_run) {
		mode_threads_run();
		return;
	}
	end = cpu_ms(CLOCK_PROCESS_CPUTIME_ID) + budget_ms;
	while (cpu_ms(CLOCK_PROCESS_CPUTIME_ID) < end)
		modes[i].fn();
}

int main(int argc, char **argv)
{
	signal(SIGUSR1, on_usr1);
	if (argc > 1)
		budget_ms = atof(argv[1]);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int want = argc <= 2 && !modes[i].named;

		for (int a = 2; a < argc; a++)
			want |= strcmp(argv[a], modes[i].name) == 0;
		if (want)
			run_mode((int)i);
	}
	printf("%lu\n", sink & 1);
	return 0;
}
