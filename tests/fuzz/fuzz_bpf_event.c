// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the reading of the BPF program's events (fg-sample's side): any bytes
 * give a sample whose IPs, registers and stack lie inside the event, or are
 * refused; never both a sample and a refused snapshot of the same event.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/bpf_event.h"
#include "fg/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* every byte handed out is read, so the sanitizers see any read out of bounds */
static volatile uint64_t sink;

static void inside(const uint8_t *event, size_t size, const void *p, size_t len)
{
	const uint8_t *b = p;

	if (b < event || b + len > event + size)
		abort();
	for (size_t i = 0; i < len; i++)
		sink += b[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of its own size at an odd address: events lie 4-byte aligned or worse */
	uint8_t *copy = fg_xmalloc(size + 1);
	uint8_t *ev = copy + 1;
	struct fg_rec_sample s;
	struct fg_rec_ustack u;
	const void *ips, *regs, *stack;
	int rs, ru;

	memcpy(ev, data, size);
	rs = fg_bpf_event_sample(ev, size, &s, &ips);
	ru = fg_bpf_event_ustack(ev, size, &u, &regs, &stack);
	if (rs == 0) {
		if (s.nr_kernel > MAX_STACK_DEPTH || s.nr_user > MAX_STACK_DEPTH ||
		    s.comm[sizeof(s.comm) - 1] != '\0')
			abort();
		inside(ev, size, ips, 8 * ((size_t)s.nr_kernel + s.nr_user));
		/* a snapshot exactly when the flag says so */
		if (ru != ((s.flags & FG_SAMPLE_F_USTACK_SNAPSHOT) ? 0 : -ENOENT))
			abort();
	} else if (rs != -EINVAL || ru != -EINVAL) {
		abort();
	}
	if (ru == 0) {
		if (u.nr_regs != FG_USTACK_NR_REGS || u.size % 8 || u.size > FG_USTACK_SNAPSHOT_MAX)
			abort();
		inside(ev, size, regs, 8 * (size_t)u.nr_regs);
		inside(ev, size, stack, u.size);
	}
	free(copy);
	return 0;
}
