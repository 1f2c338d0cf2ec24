// SPDX-License-Identifier: BSD-2-Clause
/*
 * perf-stream [-r RATE] [-d SECONDS] [-n STACKS] [-c CPUS] [-s SEED] [-b EVERY] [-w BYTES]
 *
 * A synthetic live profile for fg-top's benchmark and tests: `perf script`
 * text as fg-sym writes it (fg-sym(1), DESCRIPTION), RATE samples a second
 * (default 64000: 999 Hz on 64 CPUs) for SECONDS (default 10; 0: forever),
 * paced in 10 ms steps and flushed at each step as fg-sym flushes when its
 * input pauses.  RATE 0 writes as fast as it can (for measuring a reader's
 * cost per byte).  Writes are of BYTES at most (default 65536: fg-sym's
 * standard output buffer), as fg-sym's are.
 *
 * The samples come from STACKS distinct call chains (default 2000) of 16
 * processes, 4 to 40 frames deep (about 20 on average), a third of them
 * through the kernel, some through JIT code (/tmp/perf-PID.map) and perf's
 * Java inlining ("a->b"); the chains' popularity falls off as 1/rank, and
 * the leaf's address varies within the function (64 offsets), as real
 * samples do.  -b EVERY writes a malformed line every EVERY samples.
 *
 * At the end it prints on standard error how many samples it wrote, whether
 * it kept the rate, and the longest time a write waited for the reader.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fg/diag.h"
#include "fg/util.h"

#define NPROC 16
#define MAXDEPTH 40

struct frame {
	uint64_t addr;
	char name[128];
	const char *module;
};

struct chain {
	int proc;
	int depth;
	struct frame f[MAXDEPTH];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static const char *const comms[NPROC] = {
    "postgres", "nginx",     "java",	    "node",	  "redis-server", "python3",
    "envoy",	"mysqld",    "kworker/3:1", "containerd", "my app",	  "etcd",
    "haproxy",	"memcached", "grpc server", "swapper",
};

static const char *const kfuncs[] = {
    "entry_SYSCALL_64_after_hwframe",
    "do_syscall_64",
    "__x64_sys_read",
    "ksys_read",
    "vfs_read",
    "tcp_recvmsg",
    "__schedule",
    "schedule",
    "native_safe_halt",
    "do_idle",
    "cpu_startup_entry",
    "irq_exit_rcu",
    "__do_softirq",
    "net_rx_action",
    "ext4_file_read_iter",
    "copy_user_enhanced_fast_string",
    "filemap_read",
    "handle_mm_fault",
    "exc_page_fault",
    "asm_exc_page_fault",
};

static const char *const libfuncs[] = {
    "__libc_start_call_main",
    "__libc_start_main_impl",
    "start_thread",
    "clone3",
    "malloc",
    "_int_malloc",
    "memcpy",
    "__memmove_avx_unaligned_erms",
    "pthread_mutex_lock",
    "__read",
    "epoll_wait",
    "std::vector<int, std::allocator<int> >::_M_realloc_insert(int const&)",
    "std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data const&)",
};

static void make_chain(struct chain *c, int i)
{
	int depth = 4 + (int)(rnd() % 37);
	int kdepth = rnd() % 3 == 0 ? 2 + (int)(rnd() % 8) : 0;
	bool jit = rnd() % 8 == 0;
	char mod[64];
	static char mods[NPROC][64];

	c->proc = (int)(rnd() % NPROC);
	snprintf(mod, sizeof(mod), "/usr/bin/%s", comms[c->proc]);
	strcpy(mods[c->proc], mod);
	if (kdepth > depth - 2)
		kdepth = depth - 2;
	c->depth = depth;
	/* leaf first, as perf script lists frames */
	for (int d = 0; d < depth; d++) {
		struct frame *f = &c->f[d];

		if (d < kdepth) {
			f->addr = 0xffffffff81000000ull + (rnd() % 0x800000);
			snprintf(f->name, sizeof(f->name), "%s",
				 kfuncs[rnd() % FG_ARRAY_SIZE(kfuncs)]);
			f->module = "[kernel.kallsyms]";
		} else if (jit && d < kdepth + 3) {
			f->addr = 0x7f1234000000ull + (rnd() % 0x100000);
			if (rnd() % 2)
				snprintf(f->name, sizeof(f->name),
					 "LazyCompile:*handler%d app.js:%d", (int)(rnd() % 50),
					 (int)(rnd() % 900));
			else
				snprintf(f->name, sizeof(f->name),
					 "Ljava/util/HashMap;::get->Ljava/util/HashMap;::hash%d",
					 (int)(rnd() % 20));
			f->module = "/tmp/perf-4242.map";
		} else if (d >= depth - 2 || rnd() % 5 == 0) {
			f->addr = 0x7f0000000000ull + (rnd() % 0x200000);
			snprintf(f->name, sizeof(f->name), "%s",
				 libfuncs[rnd() % FG_ARRAY_SIZE(libfuncs)]);
			f->module = "/usr/lib/x86_64-linux-gnu/libc.so.6";
		} else {
			f->addr = 0x55d0c0000000ull + (rnd() % 0x400000);
			snprintf(f->name, sizeof(f->name), "fn_%d_%d", (int)(rnd() % 300), i % 7);
			f->module = mods[c->proc];
		}
	}
}

static const char usage_text[] =
    "usage: perf-stream [-r RATE] [-d SECONDS] [-n STACKS] [-c CPUS] [-s SEED] [-b EVERY]\n"
    "                   [-w BYTES]\n";

static uint64_t num(const char *s, uint64_t max)
{
	uint64_t v;

	if (fg_parse_u64(s, 0, max, &v) != 0) {
		fputs(usage_text, stderr);
		exit(FG_EXIT_USAGE);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t rate = 64000, secs = 10, nstacks = 2000, ncpus = 64, seed = 1, bad_every = 0;
	uint64_t wsize = 65536;
	static char outbuf[1 << 24];
	int c;

	fg_set_progname(argv[0]);
	while ((c = getopt(argc, argv, "b:c:d:hn:r:s:w:")) != -1) {
		switch (c) {
		case 'b':
			bad_every = num(optarg, UINT32_MAX);
			break;
		case 'c':
			ncpus = num(optarg, 4096);
			break;
		case 'd':
			secs = num(optarg, 1000000);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'n':
			nstacks = num(optarg, 1000000);
			break;
		case 'r':
			rate = num(optarg, 100000000);
			break;
		case 's':
			seed = num(optarg, UINT64_MAX);
			break;
		case 'w':
			wsize = num(optarg, sizeof(outbuf));
			break;
		default:
			fputs(usage_text, stderr);
			return FG_EXIT_USAGE;
		}
	}
	if (nstacks == 0 || ncpus == 0 || wsize == 0) {
		fputs(usage_text, stderr);
		return FG_EXIT_USAGE;
	}
	rng_state = seed * 0x9e3779b97f4a7c15ull | 1;
	struct chain *chains = fg_xcalloc(nstacks, sizeof(*chains));
	double *cdf = fg_xcalloc(nstacks, sizeof(*cdf)), sum = 0;

	for (uint64_t i = 0; i < nstacks; i++) {
		make_chain(&chains[i], (int)i);
		sum += 1.0 / (double)(i + 1);
		cdf[i] = sum;
	}
	setvbuf(stdout, outbuf, _IOFBF, (size_t)wsize);

	double t0 = now(), ts = 1000.0, longest_wait = 0;
	uint64_t written = 0, step = rate ? (rate + 99) / 100 : 4096;
	bool late = false;

	for (uint64_t tick = 0;; tick++) {
		double target = t0 + (double)tick / 100.0;

		if (secs &&
		    (rate ? (double)tick >= (double)secs * 100 : now() - t0 >= (double)secs))
			break;
		if (rate) {
			double d = target - now();

			if (d > 0) {
				struct timespec req = {(time_t)d,
						       (long)((d - (double)(time_t)d) * 1e9)};
				nanosleep(&req, NULL);
			} else if (d < -0.1) {
				late = true;
			}
		}
		uint64_t n = rate ? (rate * (tick + 1)) / 100 - (rate * tick) / 100 : step;
		for (uint64_t k = 0; k < n; k++) {
			double u = (double)(rnd() >> 11) / 9007199254740992.0 * sum;
			size_t lo = 0, hi = nstacks - 1;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			const struct chain *ch = &chains[lo];
			unsigned cpu = (unsigned)(rnd() % ncpus);
			unsigned pid = 1000 + (unsigned)ch->proc * 7;

			ts += 1.0 / (double)(rate ? rate : 64000);
			printf("%s %u/%u [%03u] %.6f:   1001001 cpu-clock:\n", comms[ch->proc], pid,
			       pid + (unsigned)(lo % 4), cpu, ts);
			for (int d = 0; d < ch->depth; d++) {
				const struct frame *f = &ch->f[d];
				uint64_t off = d == 0 ? (rnd() % 64) * 4 : 0;

				printf("\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", f->addr + off,
				       f->name, 0x10 + off, f->module);
			}
			putchar('\n');
			written++;
			if (bad_every && written % bad_every == 0)
				printf("this line is no part of a sample\n\n");
		}
		double w0 = now();
		if (fflush(stdout) != 0)
			break;
		if (now() - w0 > longest_wait)
			longest_wait = now() - w0;
	}
	free(chains);
	free(cdf);
	fprintf(stderr,
		"perf-stream: %" PRIu64 " samples in %.2f s%s; longest wait to write %.3f s\n",
		written, now() - t0, late ? " (fell behind the rate)" : "", longest_wait);
	return fg_close_stdout();
}
