/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-serve's HTTP side, on GNU libmicrohttpd: the page (fg/serve_page.h),
 * the views it shows and the downloads, from an fg_serve (fg/serve.h).
 *
 *	GET /                     the page
 *	GET /flame.svg            the flame graph, drawn by fg-svg's engine
 *	GET /profile.folded       the same view as folded stacks
 *	GET /profile.pb.gz        the same view as a gzipped pprof profile
 *	GET /status               {"samples":N,"seconds":N,"ended":false,"renders":N}
 *
 * Views take ?view=whole|window|diff, &inverted=1, &colors=PALETTE and
 * &download=1 (an attachment).  With a token every request needs
 * ?token=TOKEN (compared in constant time), else 403.  On a loopback address
 * a request whose Host header names another host is refused (403), so a web
 * page elsewhere cannot read the profile through DNS rebinding.
 *
 * Bounds: a thread per connection, at most FG_SERVE_HTTP_MAX_CONN at once
 * (more are closed at once by the library); the request line and headers
 * within FG_SERVE_HTTP_MAX_HEADER bytes (else 431 or 413); a connection idle
 * for FG_SERVE_HTTP_TIMEOUT seconds, a slow reader's too, is closed; only
 * GET and HEAD, without a body (else 405, 413).
 */
#ifndef FG_SERVE_HTTP_H
#define FG_SERVE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "fg/serve.h"
#include "fg/serve_args.h"

#define FG_SERVE_HTTP_MAX_CONN 64
#define FG_SERVE_HTTP_MAX_HEADER 16384
#define FG_SERVE_HTTP_TIMEOUT 10

struct fg_serve_http;

/* A socket bound to a->addr and listening; *port is its port.  The descriptor or -errno. */
int fg_serve_http_listen(const struct fg_serve_args *a, uint16_t *port);
/* The page's address, "http://HOST:PORT/" (with ?token=... when there is one), into buf. */
void fg_serve_http_url(const struct fg_serve_args *a, uint16_t port, char *buf, size_t len);
/* Serve on listening socket `fd` (taken).  NULL when the library could not start. */
struct fg_serve_http *fg_serve_http_start(struct fg_serve *s, const struct fg_serve_args *a, int fd,
					  uint16_t port);
/* Stop serving; say on standard error how many requests were answered and refused. */
void fg_serve_http_stop(struct fg_serve_http *h);

#endif
