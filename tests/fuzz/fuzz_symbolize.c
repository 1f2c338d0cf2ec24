// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the naming engine's bookkeeping: any sequence of mappings (overlapping,
 * splitting, replacing), execs, forks, exits, creds and samples, for a few
 * pids (more than the fuzzing build keeps: processes are forgotten too).
 * Files are never found (their paths do not exist), so this exercises the
 * address spaces, the caches and the writer, not the file system.  Samples
 * may carry a user stack snapshot (registers and stack bytes from the
 * input), unwound through anonymous memory (frame pointers), the vdso's
 * table and mappings of no file.  Samples may carry Python frames too, named
 * by pycode records of the input or not; kernel frames may be in BPF code
 * that ksym records name, replace and unload.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t take(const uint8_t **p, const uint8_t *end, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes && *p < end; i++)
		v = v << 8 | *(*p)++;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct fg_sym_opts o = {
	    .kallsyms = "/nonexistent/kallsyms",
	    .proc_root = "/nonexistent/proc",
	};
	const uint8_t *p = data, *end = data + size;
	struct fg_symbolizer *s;
	uint64_t ips[16], regs[24], py[8];
	uint8_t stack[512];
	uint64_t t = 0, written = 0, pywritten = 0;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size && data[0] & 1)
		o.unwinder = FG_SYM_UNWIND_NONE;
	s = fg_symbolizer_new(&o);
	while (p < end) {
		unsigned op = (unsigned)take(&p, end, 1);
		uint32_t pid = (uint32_t)take(&p, end, 1) % 8 + 100;

		t += take(&p, end, 1);
		switch (op % 8) {
		case 0: {
			static const char *paths[] = {
			    "/nonexistent/a", "/nonexistent/b", "//anon", "[vdso]",
			    "[heap]",	      "[vsyscall]",	"x"};
			char id[20];
			struct fg_sym_mapping m = {
			    .pid = pid,
			    .time_ns = t,
			    .start = take(&p, end, 2) << 12,
			    .pgoff = take(&p, end, 1) << 12,
			    .inode = take(&p, end, 1),
			    .path = paths[take(&p, end, 1) % 7],
			    .exec = true,
			};
			m.end = m.start + ((take(&p, end, 1) + 1) << 12);
			if (op & 0x80) {
				memset(id, (int)op, sizeof(id));
				m.build_id = (const uint8_t *)id;
				m.build_id_len = sizeof(id);
			}
			fg_symbolizer_mapping(s, &m);
			break;
		}
		case 1:
			fg_symbolizer_exec(s, pid, t);
			break;
		case 2:
			fg_symbolizer_fork(s, pid, (uint32_t)take(&p, end, 1) % 8 + 100);
			break;
		case 3:
			fg_symbolizer_exit(s, pid);
			break;
		case 4:
			fg_symbolizer_creds(s, pid, (uint32_t)take(&p, end, 2), 0);
			break;
		case 5: {
			/* a code object's name: one of a few addresses, a name from the input */
			struct {
				struct fg_rec_pycode c;
				char text[24];
			} r = {.c = {.pid = pid, .code = take(&p, end, 1) % 8 << 4, .time_ns = t}};
			struct fg_rec rec = {.type = FG_REC_PYCODE, .pycode = &r.c};
			size_t n = take(&p, end, 1) % 8;

			for (size_t i = 0; i < n; i++)
				r.text[i] = (char)(take(&p, end, 1) | 0x20);
			rec.py_name = r.text;
			rec.py_file = r.text + n;
			fg_symbolizer_record(s, devnull, &rec);
			break;
		}
		case 6: {
			/* BPF code named (or unloaded) among the kernel frames' addresses */
			struct {
				struct fg_rec_ksym k;
				char text[8];
			} r = {.k = {.addr = 0xffffffff81000000ull | take(&p, end, 2),
				     .len = (uint32_t)take(&p, end, 2) + 1,
				     .time_ns = t,
				     .flags = op & 0x80 ? FG_KSYM_F_GONE : 0}};
			struct fg_rec rec = {.type = FG_REC_KSYM, .ksym = &r.k};
			size_t n = take(&p, end, 1) % 7 + 1;

			for (size_t i = 0; i < n; i++)
				r.text[i] = (char)(take(&p, end, 1) | 0x20);
			rec.ksym_name = r.text;
			fg_symbolizer_record(s, devnull, &rec);
			break;
		}
		default: {
			size_t nk = take(&p, end, 1) % 4, nu = take(&p, end, 1) % 12;
			struct fg_sym_sample smp = {
			    .comm = "fuzz",
			    .pid = pid,
			    .tid = pid,
			    .time_ns = t,
			    .weight = 1,
			    .kips = ips,
			    .nkips = nk,
			    .uips = ips + nk,
			    .nuips = nu,
			};
			for (size_t i = 0; i < nk + nu; i++)
				ips[i] = i < nk ? 0xffffffff81000000ull | take(&p, end, 2)
						: take(&p, end, 3) << 4;
			if (op & 0x10) {
				/* Python frames: a few code objects, runs ended by FG_PY_ENTRY */
				smp.npy = take(&p, end, 1) % 8;
				for (size_t i = 0; i < smp.npy; i++)
					py[i] = take(&p, end, 1) % 8 << 4 |
						(take(&p, end, 1) & 1 ? FG_PY_ENTRY : 0);
				smp.pyframes = py;
				pywritten += smp.npy;
			}
			struct fg_rec_ustack u = {.abi = 1};
			struct fg_sym_stats before, after;
			if (op & 0x40) {
				/* a snapshot: ip, sp and bp (perf_regs 8, 7, 6), or some other mask
				 */
				u.regs_mask = op & 0x20 ? take(&p, end, 3) : 0x1c0;
				u.nr_regs = (uint32_t)__builtin_popcountll(u.regs_mask);
				for (uint32_t i = 0; i < u.nr_regs; i++)
					regs[i] = take(&p, end, 1) << 4 | 0x7ffc0000ull;
				if (u.regs_mask == 0x1c0)
					regs[2] = take(&p, end, 3) << 4; /* ip */
				u.sp = 0x7ffc0000;
				u.size = (uint32_t)(take(&p, end, 1) * 2) & ~7u;
				for (uint32_t i = 0; i < u.size; i += 8) {
					uint64_t w = take(&p, end, 1) & 1
							 ? take(&p, end, 3) << 4
							 : 0x7ffc0000 | take(&p, end, 1) << 3;
					memcpy(stack + i, &w, 8);
				}
				smp.ustack = &u;
				smp.ustack_regs = regs;
				smp.ustack_data = stack;
			}
			fg_symbolizer_stats(s, &before);
			fg_symbolizer_write(s, devnull, &smp);
			fg_symbolizer_stats(s, &after);
			/* an unwound snapshot's frames take the place of the user IPs */
			written += nk + (after.unwind.stacks > before.unwind.stacks
					     ? after.unwind.frames - before.unwind.frames
					     : nu);
			break;
		}
		}
	}
	struct fg_sym_stats st;
	fg_symbolizer_stats(s, &st);
	uint64_t frames = st.named;
	for (int i = 0; i < FG_UNNAMED_COUNT; i++)
		frames += st.unnamed[i];
	/* every frame is counted once, named or unnamed for some reason */
	if (frames != written)
		abort();
	/* every Python frame is written once (no debuginfod: none held back) */
	if (st.py.frames != pywritten || st.py.unnamed > st.py.frames)
		abort();
	fg_symbolizer_free(s);
	return 0;
}
