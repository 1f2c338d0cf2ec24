// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz what fg-sample reads of -e: the first byte chooses.
 *  0: the rest is an -e argument: parsed, and for a probe named as perf names it;
 *  1: the rest is an ELF file whose functions are looked up by names, demangled
 *     names and globs, and their file offsets found;
 *  2: the rest is an event record: checked, and its name kept as fg-sym keeps it.
 * Any bytes give a result or a refusal, never a crash; what is accepted holds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/elfsyms.h"
#include "fg/events.h"
#include "fg/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void spec(const uint8_t *data, size_t size)
{
	char *arg = strndup((const char *)data, size), why[512];
	struct fg_ev_spec s;

	if (!arg)
		return;
	if (fg_ev_parse(arg, &s, why, sizeof(why)) == 0) {
		if (!s.arg || strcmp(s.arg, arg) != 0)
			abort();
		if (s.kind == FG_EVENT_UPROBE || s.kind == FG_EVENT_URETPROBE) {
			struct fg_buf b = FG_BUF_INIT;

			if (!*s.path || !*s.function)
				abort();
			fg_ev_probe_name(&b, s.path, s.function, s.kind == FG_EVENT_URETPROBE);
			/* every name given is one the stream accepts */
			if (!fg_rec_event_name_ok(b.data, b.len))
				abort();
			fg_buf_release(&b);
		}
		fg_ev_spec_release(&s);
	} else if (!why[0] || s.arg) {
		abort();
	}
	free(arg);
}

static void functions(const uint8_t *data, size_t size)
{
	static const char *const patterns[] = {"*", "ma*", "_Z*", "ns::f*", "[a-m]?*", "main"};
	struct fg_elfsyms *e = fg_elfsyms_open_mem(data, size);

	if (!e)
		return;
	for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]) + 1; p++) {
		const char *pat = p < sizeof(patterns) / sizeof(patterns[0]) ? patterns[p]
				  : e->nsyms				     ? e->syms[0].name
									     : "x";
		struct fg_ev_func *f;
		size_t n;
		int err = fg_ev_find_functions(e, pat, 16, &f, &n);

		if (err && err != -ENOENT && err != -E2BIG)
			abort();
		for (size_t i = 0; i < n && i < 16; i++) {
			uint64_t off;

			if (!fg_elfsyms_lookup(e, f[i].addr))
				abort();
			fg_ev_addr_to_offset(e, f[i].addr, &off);
		}
		free(f);
	}
	fg_elfsyms_free(e);
}

static void record(const uint8_t *data, size_t size)
{
	struct fg_rec_evnames *names = fg_rec_evnames_new();
	uint8_t *copy = malloc(size + 8);
	struct fg_rec rec;
	char why[256];

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (fg_rec_parse(copy, size, &rec, why, sizeof(why)) == 0 && rec.type == FG_REC_EVENT) {
		struct fg_rec_sample s = {.flags = rec.event->id << FG_SAMPLE_EVENT_SHIFT};
		const char *name;

		fg_rec_evnames_add(names, &rec);
		name = fg_rec_evnames_get(names, &s);
		if (strcmp(name, rec.event_name) != 0 || !fg_rec_event_name_ok(name, strlen(name)))
			abort();
	}
	fg_rec_evnames_free(names);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		spec(data + 1, size - 1);
		break;
	case 1:
		functions(data + 1, size - 1);
		break;
	default:
		record(data + 1, size - 1);
	}
	return 0;
}
