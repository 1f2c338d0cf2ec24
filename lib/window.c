// SPDX-License-Identifier: BSD-2-Clause
/* Time windows of a stream of samples, by the samples' own clock. */
#include "fg/buf.h"
#include "fg/window.h"

bool fg_window_next(struct fg_window *w, bool has_time, uint64_t t, uint64_t *closed_start)
{
	uint64_t i;

	if (!has_time) {
		w->untimed++;
		return false;
	}
	i = (w->have_ref ? t + (uint64_t)w->ref_offset : t) / w->every_ns;
	if (!w->open) {
		w->open = true;
		w->index = i;
		return false;
	}
	if (i < w->index)
		w->late++;
	if (i <= w->index)
		return false;
	*closed_start = fg_window_start(w);
	w->index = i;
	return true;
}

uint64_t fg_window_start(const struct fg_window *w)
{
	return w->index * w->every_ns;
}

void fg_window_path(struct fg_buf *b, const char *dir, uint64_t start_ns, const char *suffix)
{
	fg_buf_addf(b, "%s/%llu", dir, (unsigned long long)(start_ns / 1000000000));
	if (start_ns % 1000000000)
		fg_buf_addf(b, ".%09llu", (unsigned long long)(start_ns % 1000000000));
	fg_buf_addstr(b, suffix);
}
