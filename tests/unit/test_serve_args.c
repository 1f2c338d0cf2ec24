// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-serve's command line: -l's addresses, loopback or not, the token. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "fg/foldopts.h"
#include "fg/serve_args.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_serve_args a;

	fg_serve_args_init(&a);
	why[0] = '\0';
	if (fg_serve_arg(&a, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	return why;
}

/* -l ARG then the check (with env_token): the reason for a refusal, or "" */
static const char *checked(const char *listen, bool public_ok, const char *token,
			   const char *env_token)
{
	static char why[256];
	struct fg_serve_args a;

	fg_serve_args_init(&a);
	why[0] = '\0';
	if (listen && fg_serve_arg(&a, 'l', listen, why, sizeof(why)) < 0)
		return why;
	if (public_ok)
		fg_serve_arg(&a, FG_SERVE_ARG_PUBLIC, NULL, why, sizeof(why));
	if (token)
		fg_serve_arg(&a, FG_SERVE_ARG_TOKEN, token, why, sizeof(why));
	if (fg_serve_args_check(&a, env_token, why, sizeof(why)) == 0)
		why[0] = '\0';
	return why;
}

TEST(defaults)
{
	struct fg_serve_args a;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&a.addr;
	char why[64];

	fg_serve_args_init(&a);
	CHECK_INT(fg_serve_args_check(&a, NULL, why, sizeof(why)), 0);
	CHECK_STR(a.host, "127.0.0.1");
	CHECK_INT(a.port, 8080);
	CHECK_INT(in->sin_family, AF_INET);
	CHECK_INT(ntohs(in->sin_port), 8080);
	CHECK(a.loopback && !a.public_ok && !a.token);
	CHECK(a.interval == 2 && a.window == 10);
	CHECK_INT(a.palette, FG_PAL_HOT);
	CHECK(a.minwidth == 0.5 && !a.minwidth_pct);
	CHECK_INT(fg_serve_arg(&a, FG_SERVE_ARG_MINWIDTH, "2%", why, sizeof(why)), 0);
	CHECK(a.minwidth == 2 && a.minwidth_pct);
	CHECK_INT(fg_serve_arg(&a, FG_SERVE_ARG_MINWIDTH, "0", why, sizeof(why)), 0);
	CHECK(a.minwidth == 0 && !a.minwidth_pct);
	CHECK(a.fold.annotate_kernel && a.fold.annotate_jit);
}

TEST(addresses)
{
	struct fg_serve_args a;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a.addr;
	char why[128];

	fg_serve_args_init(&a);
	CHECK_INT(fg_serve_arg(&a, 'l', "[::1]:0", why, sizeof(why)), 0);
	CHECK_STR(a.host, "::1");
	CHECK(a.port == 0 && a.loopback && in6->sin6_family == AF_INET6);
	CHECK_INT(fg_serve_arg(&a, 'l', "9000", why, sizeof(why)), 0);
	CHECK(a.port == 9000 && a.loopback);
	CHECK_STR(a.host, "127.0.0.1");
	CHECK_INT(fg_serve_arg(&a, 'l', "localhost:81", why, sizeof(why)), 0);
	CHECK(a.port == 81 && a.loopback);
	CHECK_INT(fg_serve_arg(&a, 'l', "127.8.9.10:1", why, sizeof(why)), 0);
	CHECK(a.loopback);
	CHECK_INT(fg_serve_arg(&a, 'l', "[::ffff:127.0.0.1]:1", why, sizeof(why)), 0);
	CHECK(a.loopback);
	CHECK_INT(fg_serve_arg(&a, 'l', "0.0.0.0:80", why, sizeof(why)), 0);
	CHECK(!a.loopback);
	CHECK_INT(fg_serve_arg(&a, 'l', "[::]:80", why, sizeof(why)), 0);
	CHECK(!a.loopback);
	CHECK_INT(fg_serve_arg(&a, 'l', "192.168.1.2:80", why, sizeof(why)), 0);
	CHECK(!a.loopback);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused('l', "127.0.0.1:65536"),
		  "invalid port in '127.0.0.1:65536' (0 to 65535)");
	CHECK_STR(refused('l', "127.0.0.1:"), "invalid port in '127.0.0.1:' (0 to 65535)");
	CHECK_STR(refused('l', "127.0.0.1:-1"), "invalid port in '127.0.0.1:-1' (0 to 65535)");
	CHECK_STR(refused('l', ":80"), "invalid address ':80' (ADDR:PORT)");
	CHECK_STR(refused('l', "::1:80"),
		  "invalid address '::1:80' (an IPv6 one goes in brackets: [::1]:8080)");
	CHECK_STR(refused('l', "example.org:80"),
		  "invalid address 'example.org:80' (a numeric address or localhost)");
	CHECK_STR(refused('l', "[127.0.0.1:80"),
		  "invalid address '[127.0.0.1:80' (a numeric address or localhost)");
	CHECK_STR(refused('i', "0.1"), "invalid interval '0.1' (0.2 to 3600 seconds)");
	CHECK_STR(refused('i', "x"), "invalid interval 'x' (0.2 to 3600 seconds)");
	CHECK_STR(refused('w', "0"), "invalid window '0' (1 to 3600 seconds)");
	CHECK_STR(refused('w', "1.5"), "invalid window '1.5' (1 to 3600 seconds)");
	CHECK_STR(refused(FG_SERVE_ARG_COLORS, "pink"), "invalid palette 'pink'");
	CHECK_STR(refused(FG_SERVE_ARG_MINWIDTH, "x"), "invalid minimum width 'x' (pixels, or N%)");
	CHECK_STR(refused(FG_SERVE_ARG_MINWIDTH, "%"), "invalid minimum width '%' (pixels, or N%)");
	CHECK_STR(refused(FG_SERVE_ARG_MINWIDTH, "101%"),
		  "invalid minimum width '101%' (pixels, or N%)");
	CHECK_STR(refused(FG_SERVE_ARG_MINWIDTH, "-1"),
		  "invalid minimum width '-1' (pixels, or N%)");
	CHECK_STR(refused(FG_FOLD_OPT_INPUT, "xml"),
		  "unknown input format 'xml' (perf, folded or bpftrace)");
}

TEST(public_and_token)
{
	CHECK_STR(checked("0.0.0.0:8080", false, NULL, NULL),
		  "'0.0.0.0' is not a loopback address: the page shows the function and process "
		  "names of everything sampled; give --public to serve it there");
	CHECK_STR(checked("0.0.0.0:8080", true, NULL, NULL), "");
	CHECK_STR(checked("[::1]:1", false, "abc-DEF_1.2~", NULL), "");
	CHECK_STR(checked(NULL, false, "a b", NULL),
		  "invalid token (1 to 256 letters, digits, '-', '_', '.' or '~')");
	CHECK_STR(checked(NULL, false, "", NULL),
		  "invalid token (1 to 256 letters, digits, '-', '_', '.' or '~')");
	CHECK_STR(checked(NULL, false, NULL, "x&y"),
		  "invalid token (1 to 256 letters, digits, '-', '_', '.' or '~')");

	struct fg_serve_args a;
	char why[128], big[300];

	fg_serve_args_init(&a);
	CHECK_INT(fg_serve_args_check(&a, "fromenv", why, sizeof(why)), 0);
	CHECK_STR(a.token, "fromenv");
	fg_serve_args_init(&a);
	fg_serve_arg(&a, FG_SERVE_ARG_TOKEN, "given", why, sizeof(why));
	CHECK_INT(fg_serve_args_check(&a, "fromenv", why, sizeof(why)), 0);
	CHECK_STR(a.token, "given"); /* the option wins */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_STR(checked(NULL, false, big, NULL),
		  "invalid token (1 to 256 letters, digits, '-', '_', '.' or '~')");
}

int main(void)
{
	RUN(defaults);
	RUN(addresses);
	RUN(bad_values_say_what);
	RUN(public_and_token);
	return unit_done();
}
