// SPDX-License-Identifier: BSD-2-Clause
/*
 * Stack snapshots without BPF, linked into the fixture programs (static ones
 * too, where LD_PRELOAD cannot reach): with FG_SNAP_OUT=FILE in the
 * environment, SIGPROF (setitimer ITIMER_PROF, every FG_SNAP_US microseconds
 * of CPU, default 1000) copies the interrupted registers and up to
 * FG_SNAP_SIZE bytes (default 8192) of the stack from the stack pointer up into a
 * preallocated slot, as fg-sample --call-graph dwarf does in the kernel.
 * snap_copy() copies the stack: it stops at the first page that cannot be read
 * (the stack's end) instead of faulting.  At exit the slots and
 * /proc/self/maps go to FILE; tests/tools/fgr-snap turns that into a record
 * stream.  Only async-signal-safe calls in the handler.
 *
 * FILE: "FGSNAP02", u32 nslots, u32 maps_len, u32 data_max, u32 dropped, then the
 * registers' kind (struct snap_file_hdr: abi, nregs, regs_mask, sp_at, pc_at), then
 * maps_len bytes of /proc/self/maps, then nslots struct snap_slot.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "snap.h"

static struct snap_slot *slots;
static unsigned nslots, data_max;
static volatile unsigned next_slot, dropped;
static const char *out_path;
static __thread unsigned taken_here; /* the snapshots of this thread */

/* The snapshots taken of the calling thread so far; UINT32_MAX when none are taken. */
unsigned snap_taken_here(void)
{
	return out_path ? taken_here : UINT32_MAX;
}

static void on_prof(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned i = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
	struct snap_slot *s;
	struct timespec ts;
	int saved = errno_save();

	(void)sig, (void)si;
	if (i >= nslots) {
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		errno_restore(saved);
		return;
	}
	taken_here++;
	s = (struct snap_slot *)((char *)slots + (size_t)i * snap_slot_size(data_max));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	s->pid = (uint32_t)getpid();
	s->tid = (uint32_t)syscall(SYS_gettid);
#if defined(__aarch64__)
	/* arm64 perf_regs order: x0-x30, sp, pc */
	for (int r = 0; r < 31; r++)
		s->regs[r] = (uint64_t)uc->uc_mcontext.regs[r];
	s->regs[31] = (uint64_t)uc->uc_mcontext.sp;
	s->regs[32] = (uint64_t)uc->uc_mcontext.pc;
#else
	const greg_t *g = uc->uc_mcontext.gregs;

	/* x86-64 perf_regs order: ax bx cx dx si di bp sp ip, r8-r15 (SNAP_REGS_MASK) */
	s->regs[0] = (uint64_t)g[REG_RAX];
	s->regs[1] = (uint64_t)g[REG_RBX];
	s->regs[2] = (uint64_t)g[REG_RCX];
	s->regs[3] = (uint64_t)g[REG_RDX];
	s->regs[4] = (uint64_t)g[REG_RSI];
	s->regs[5] = (uint64_t)g[REG_RDI];
	s->regs[6] = (uint64_t)g[REG_RBP];
	s->regs[7] = (uint64_t)g[REG_RSP];
	s->regs[8] = (uint64_t)g[REG_RIP];
	for (int r = 0; r < 8; r++)
		s->regs[9 + r] = (uint64_t)g[REG_R8 + r];
#endif
	s->size = (uint32_t)snap_copy(s->data, s->regs[SNAP_SP_AT], data_max);
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	errno_restore(saved);
}

static void write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			_exit(99);
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

static void snap_finish(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};
	struct snap_file_hdr h;
	static char maps[1 << 20];
	size_t mlen = 0;
	int fd;

	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_IGN);
	fd = open("/proc/self/maps", O_RDONLY);
	if (fd >= 0) {
		ssize_t r;

		while (mlen < sizeof(maps) && (r = read(fd, maps + mlen, sizeof(maps) - mlen)) > 0)
			mlen += (size_t)r;
		close(fd);
	}
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(98);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SNAP_MAGIC, 8);
	h.nslots = next_slot < nslots ? next_slot : nslots;
	h.maps_len = (uint32_t)mlen;
	h.data_max = data_max;
	h.dropped = dropped;
	h.abi = SNAP_ABI;
	h.nregs = SNAP_NREGS;
	h.regs_mask = SNAP_REGS_MASK;
	h.sp_at = SNAP_SP_AT;
	h.pc_at = SNAP_PC_AT;
	write_all(fd, &h, sizeof(h));
	write_all(fd, maps, mlen);
	write_all(fd, slots, (size_t)h.nslots * snap_slot_size(data_max));
	close(fd);
}

__attribute__((constructor)) static void snap_start(void)
{
	struct sigaction sa;
	struct itimerval it;
	const char *v;
	long us = 1000;

	out_path = getenv("FG_SNAP_OUT");
	if (!out_path)
		return;
	data_max = 8192;
	if ((v = getenv("FG_SNAP_SIZE")) != NULL)
		data_max = ((unsigned)atoi(v) + 7) & ~7u;
	if ((v = getenv("FG_SNAP_US")) != NULL)
		us = atol(v);
	nslots = 4096;
	slots = mmap(NULL, (size_t)nslots * snap_slot_size(data_max), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		_exit(97);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	atexit(snap_finish);
	it.it_interval.tv_sec = it.it_value.tv_sec = 0;
	it.it_interval.tv_usec = it.it_value.tv_usec = us;
	setitimer(ITIMER_PROF, &it, NULL);
}
