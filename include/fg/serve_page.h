/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-serve's page: a bar of controls (pause, the view: the whole run, the
 * last window, or the last window against the one before; invert; the
 * palette; a search; the downloads) over the flame graph fg-svg's engine
 * draws, in a frame, so the graph keeps fg-svg's own script (zoom, search,
 * tooltips).  Every `interval` seconds the next graph is loaded behind the
 * one shown, given the same zoom (by the path of frame names) and search,
 * then shown.  The page names no frame: the graphs carry them, escaped.
 */
#ifndef FG_SERVE_PAGE_H
#define FG_SERVE_PAGE_H

#include <stddef.h>

#include "fg/palette.h"

/* The page (malloc'd, *len bytes); `title` is escaped (NULL: "fg-serve"). */
char *fg_serve_page(const char *title, double interval, unsigned window, enum fg_palette palette,
		    size_t *len);

#endif
