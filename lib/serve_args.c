// SPDX-License-Identifier: BSD-2-Clause
/* fg-serve's command line, checked.  See include/fg/serve_args.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "fg/foldopts.h"
#include "fg/serve_args.h"
#include "fg/util.h"

void fg_serve_args_init(struct fg_serve_args *a)
{
	char why[8];

	*a = (struct fg_serve_args){
	    .fold = {.annotate_kernel = true, .annotate_jit = true},
	    .interval = 2,
	    .window = 10,
	    .palette = FG_PAL_HOT,
	    .minwidth = 0.5,
	};
	fg_serve_args_listen(a, "127.0.0.1:8080", why, sizeof(why));
}

static bool v4_loopback(const struct in_addr *in)
{
	return (ntohl(in->s_addr) >> 24) == 127;
}

/* ADDR (no brackets) and PORT into a->addr; false when ADDR is not a numeric address */
static bool set_addr(struct fg_serve_args *a, const char *host, uint16_t port)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&a->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a->addr;

	memset(&a->addr, 0, sizeof(a->addr));
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		a->addrlen = sizeof(*v4);
		a->loopback = v4_loopback(&v4->sin_addr);
		return true;
	}
	memset(&a->addr, 0, sizeof(a->addr));
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		a->addrlen = sizeof(*v6);
		a->loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) ||
			      (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr) &&
			       v4_loopback((const struct in_addr *)&v6->sin6_addr.s6_addr[12]));
		return true;
	}
	return false;
}

int fg_serve_args_listen(struct fg_serve_args *a, const char *arg, char *why, size_t len)
{
	char host[sizeof(a->host)];
	const char *colon = strrchr(arg, ':'), *hs = arg, *portp;
	size_t hl;
	uint64_t port;

	if (!colon) { /* PORT alone */
		hs = "127.0.0.1";
		hl = strlen(hs);
		portp = arg;
	} else {
		hl = (size_t)(colon - arg);
		portp = colon + 1;
		if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']') {
			hs++;
			hl -= 2;
		} else if (memchr(arg, ':', hl)) {
			return fg_refuse(why, len,
					 "invalid address '%s' (an IPv6 one goes in brackets: "
					 "[::1]:8080)",
					 arg);
		}
	}
	if (fg_parse_u64(portp, 0, 65535, &port) != 0 || !*portp)
		return fg_refuse(why, len, "invalid port in '%s' (0 to 65535)", arg);
	if (hl == 0 || hl >= sizeof(host))
		return fg_refuse(why, len, "invalid address '%s' (ADDR:PORT)", arg);
	memcpy(host, hs, hl);
	host[hl] = '\0';
	if (!set_addr(a, host, (uint16_t)port))
		return fg_refuse(why, len, "invalid address '%s' (a numeric address or localhost)",
				 arg);
	memcpy(a->host, host, hl + 1);
	a->port = (uint16_t)port;
	return 0;
}

int fg_serve_arg(struct fg_serve_args *a, int c, const char *arg, char *why, size_t len)
{
	uint64_t u;
	int p;

	switch (c) {
	case 'l':
		return fg_serve_args_listen(a, arg, why, len);
	case 'i':
		if (fg_parse_double(arg, 0.2, 3600, &a->interval) != 0)
			return fg_refuse(why, len, "invalid interval '%s' (0.2 to 3600 seconds)",
					 arg);
		return 0;
	case 'w':
		if (fg_parse_u64(arg, 1, 3600, &u) != 0)
			return fg_refuse(why, len, "invalid window '%s' (1 to 3600 seconds)", arg);
		a->window = (unsigned)u;
		return 0;
	case FG_SERVE_ARG_PUBLIC:
		a->public_ok = true;
		return 0;
	case FG_SERVE_ARG_TOKEN:
		a->token = arg;
		return 0;
	case FG_SERVE_ARG_TITLE:
		a->title = arg;
		return 0;
	case FG_SERVE_ARG_COLORS:
		if ((p = fg_palette_parse(arg)) < 0)
			return fg_refuse(why, len, "invalid palette '%s'", arg);
		a->palette = (enum fg_palette)p;
		return 0;
	case FG_SERVE_ARG_MINWIDTH: {
		char num[64];
		size_t n = strlen(arg);
		bool pct = n && arg[n - 1] == '%';

		if (n - pct >= sizeof(num) ||
		    (memcpy(num, arg, n - pct), num[n - pct] = '\0',
		     fg_parse_double(num, 0, pct ? 100 : 1200, &a->minwidth) != 0))
			return fg_refuse(why, len, "invalid minimum width '%s' (pixels, or N%%)",
					 arg);
		a->minwidth_pct = pct;
		return 0;
	}
	case FG_FOLD_OPT_EVERY:
		return -ENOENT;
	default:
		return fg_fold_opt_why(c, arg, &a->fold, NULL, why, len);
	}
}

static bool url_safe(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("-_.~", *s)))
			return false;
	return true;
}

int fg_serve_args_check(struct fg_serve_args *a, const char *env_token, char *why, size_t len)
{
	if (!a->loopback && !a->public_ok)
		return fg_refuse(why, len,
				 "'%s' is not a loopback address: the page shows the function and "
				 "process names of everything sampled; give --public to serve it "
				 "there",
				 a->host);
	if (!a->token && env_token && *env_token)
		a->token = env_token;
	if (a->token &&
	    (!*a->token || strlen(a->token) > FG_SERVE_TOKEN_MAX || !url_safe(a->token)))
		return fg_refuse(why, len, "%s",
				 "invalid token (1 to 256 letters, digits, '-', '_', '.' or '~')");
	return 0;
}
