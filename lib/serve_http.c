// SPDX-License-Identifier: BSD-2-Clause
/* fg-serve's HTTP side.  See include/fg/serve_http.h. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/palette.h"
#include "fg/serve_http.h"
#include "fg/serve_page.h"

struct fg_serve_http {
	struct MHD_Daemon *d;
	struct fg_serve *s;
	const struct fg_serve_args *a;
	uint16_t port;
	char *page;
	size_t page_len;
	uint64_t answered, refused; /* requests: 2xx, and the others (atomic) */
};

int fg_serve_http_listen(const struct fg_serve_args *a, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = socket(a->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->addr, a->addrlen) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

void fg_serve_http_url(const struct fg_serve_args *a, uint16_t port, char *buf, size_t len)
{
	bool v6 = a->addr.ss_family == AF_INET6;

	snprintf(buf, len, "http://%s%s%s:%u/%s%s", v6 ? "[" : "", a->host, v6 ? "]" : "", port,
		 a->token ? "?token=" : "", a->token ? a->token : "");
}

/* --- requests --- */

static enum MHD_Result send_body(struct fg_serve_http *h, struct MHD_Connection *c, unsigned status,
				 char *body, size_t len, const char *type, const char *disposition)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "SAMEORIGIN");
	if (disposition)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
	__atomic_add_fetch(status / 100 == 2 ? &h->answered : &h->refused, 1, __ATOMIC_RELAXED);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result send_text(struct fg_serve_http *h, struct MHD_Connection *c, unsigned status,
				 const char *msg)
{
	return send_body(h, c, status, fg_xstrdup(msg), strlen(msg), "text/plain; charset=utf-8",
			 NULL);
}

/* constant time for equal lengths: a wrong token tells nothing by its timing */
static bool token_ok(const char *want, const char *got)
{
	size_t n = strlen(want), m = got ? strlen(got) : 0;
	unsigned char diff = n != m;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < m ? got[i] : 0);
	return !diff;
}

/* on loopback: the Host a browser sends for this server, not a name rebound to it */
static bool host_ok(const struct fg_serve_args *a, const char *host)
{
	const char *end = host && host[0] == '[' ? strchr(host, ']') : NULL;
	size_t n, hl = strlen(a->host);

	if (!a->loopback || !host)
		return true;
	end = end ? end + 1 : strchr(host, ':');
	n = end ? (size_t)(end - host) : strlen(host);
	if ((n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    (n == 5 && memcmp(host, "[::1]", 5) == 0) ||
	    (n >= 7 && n <= 15 && strncmp(host, "127.", 4) == 0 &&
	     strspn(host, "0123456789.") == n))
		return true;
	if (a->addr.ss_family == AF_INET6)
		return n == hl + 2 && host[0] == '[' && memcmp(host + 1, a->host, hl) == 0;
	return n == hl && memcmp(host, a->host, hl) == 0;
}

/* the view the query names; false (and a reply) when it names none */
static bool query_of(struct MHD_Connection *c, const struct fg_serve_args *a,
		     struct fg_serve_query *q, const char **why)
{
	const char *view = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "view");
	const char *inv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "inverted");
	const char *colors = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "colors");
	int v = view ? fg_serve_view_parse(view) : FG_SERVE_WHOLE;
	int p = colors ? fg_palette_parse(colors) : (int)a->palette;

	q->inverted = inv && strcmp(inv, "1") == 0;
	if (v < 0)
		*why = "unknown view (whole, window or diff)\n";
	else if (p < 0)
		*why = "unknown palette\n";
	else
		return q->view = (enum fg_serve_view)v, q->palette = (enum fg_palette)p, true;
	return false;
}

static enum MHD_Result send_view(struct fg_serve_http *h, struct MHD_Connection *c,
				 enum fg_serve_format format)
{
	static const char *const ext[] = {"svg", "folded", "pb.gz"};
	static const char *const vname[] = {"whole", "window", "diff"};
	struct fg_serve_query q = {.format = format};
	const char *why, *type, *dl;
	char *body, disp[96];
	size_t len;
	int err;

	if (!query_of(c, h->a, &q, &why))
		return send_text(h, c, MHD_HTTP_BAD_REQUEST, why);
	err = fg_serve_render(h->s, &q, &body, &len, &type);
	if (err < 0)
		return send_text(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, strerror(-err));
	dl = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "download");
	snprintf(disp, sizeof(disp), "attachment; filename=\"fg-%s%s.%s\"", vname[q.view],
		 q.inverted && format == FG_SERVE_SVG ? "-icicle" : "", ext[format]);
	return send_body(h, c, MHD_HTTP_OK, body, len, type,
			 dl && strcmp(dl, "1") == 0 ? disp : NULL);
}

static enum MHD_Result send_status(struct fg_serve_http *h, struct MHD_Connection *c)
{
	struct fg_serve_status st;
	struct fg_buf b = FG_BUF_INIT;

	fg_serve_status(h->s, &st);
	fg_buf_addf(&b,
		    "{\"samples\":%llu,\"seconds\":%llu,\"ended\":%s,\"failed\":%s,"
		    "\"renders\":%llu}\n",
		    (unsigned long long)st.samples, (unsigned long long)st.ticks,
		    st.eof ? "true" : "false", st.err ? "true" : "false",
		    (unsigned long long)st.renders);
	return send_body(h, c, MHD_HTTP_OK, b.data, b.len, "application/json", NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct fg_serve_http *h = cls;
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	const char *tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");

	(void)upload;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_text(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	/* the headers: answer once the request is whole, so the connection may be kept */
	if (!*con_cls) {
		*con_cls = h;
		return MHD_YES;
	}
	if (*upload_size)
		return send_text(h, c, MHD_HTTP_CONTENT_TOO_LARGE, "no request body here\n");
	if (!host && strcmp(version, MHD_HTTP_VERSION_1_0) != 0)
		return send_text(h, c, MHD_HTTP_BAD_REQUEST, "HTTP/1.1 needs a Host header\n");
	if (!host_ok(h->a, host))
		return send_text(h, c, MHD_HTTP_FORBIDDEN,
				 "this server answers to its own address\n");
	if (h->a->token && !token_ok(h->a->token, tok))
		return send_text(h, c, MHD_HTTP_FORBIDDEN, "a token is needed: ?token=...\n");
	if (strcmp(url, "/") == 0)
		return send_body(h, c, MHD_HTTP_OK, fg_xstrdup(h->page), h->page_len,
				 "text/html; charset=utf-8", NULL);
	if (strcmp(url, "/flame.svg") == 0)
		return send_view(h, c, FG_SERVE_SVG);
	if (strcmp(url, "/profile.folded") == 0)
		return send_view(h, c, FG_SERVE_FOLDED);
	if (strcmp(url, "/profile.pb.gz") == 0)
		return send_view(h, c, FG_SERVE_PPROF);
	if (strcmp(url, "/status") == 0)
		return send_status(h, c);
	return send_text(h, c, MHD_HTTP_NOT_FOUND, "not found\n");
}

struct fg_serve_http *fg_serve_http_start(struct fg_serve *s, const struct fg_serve_args *a, int fd,
					  uint16_t port)
{
	struct fg_serve_http *h = fg_xcalloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | (a->addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);

	h->s = s;
	h->a = a;
	h->port = port;
	h->page = fg_serve_page(a->title, a->interval, a->window, a->palette, &h->page_len);
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)FG_SERVE_HTTP_MAX_CONN,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)FG_SERVE_HTTP_TIMEOUT,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)FG_SERVE_HTTP_MAX_HEADER, MHD_OPTION_END);
	if (!h->d) {
		close(fd);
		free(h->page);
		free(h);
		return NULL;
	}
	return h;
}

void fg_serve_http_stop(struct fg_serve_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	fg_warnx("answered %llu requests, refused %llu (bad method, forbidden, unknown)",
		 (unsigned long long)h->answered, (unsigned long long)h->refused);
	free(h->page);
	free(h);
}
