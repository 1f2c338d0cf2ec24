/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-serve's command line: each option's value checked as getopt_long()
 * hands it out, then the options together.  The tool keeps the option
 * table, the usage text and what touches the system (the socket, the
 * input).  A refusal is -EINVAL with the reason in `why`, which the tool
 * prints before its usage, exit status 2.
 *
 *	struct fg_serve_args a;
 *	fg_serve_args_init(&a);
 *	while ((c = getopt_long(argc, argv, FG_SERVE_SHORTOPTS, longopts, NULL)) != -1)
 *		if (fg_serve_arg(&a, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_serve_args_check(&a, why, sizeof(why)) < 0) usage_error(why);
 *
 * -l takes ADDR:PORT, [ADDR]:PORT for IPv6, or PORT alone (on 127.0.0.1);
 * ADDR is a numeric address or "localhost", PORT 0 to 65535 (0: any free
 * port).  An address that is not loopback (127.0.0.0/8, ::1) is refused
 * unless --public is given: the page shows the function and process names of
 * everything sampled.
 */
#ifndef FG_SERVE_ARGS_H
#define FG_SERVE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fg/fold.h"
#include "fg/palette.h"

#define FG_SERVE_TOKEN_MAX 256

struct fg_serve_args {
	struct fg_fold_opts fold;     /* --pid, --tid, --event-filter, --samples, --input */
	struct sockaddr_storage addr; /* -l, resolved */
	socklen_t addrlen;
	char host[64];		 /* as given (without brackets), for messages and the Host check */
	uint16_t port;		 /* 0: any free port */
	bool loopback;		 /* the address is a loopback one */
	bool public_ok;		 /* --public */
	const char *token;	 /* --token, or FG_SERVE_TOKEN from the environment; NULL: none */
	double interval;	 /* -i: the page redraws every so many seconds (default 2) */
	unsigned window;	 /* -w: the last window, in seconds (default 10) */
	const char *title;	 /* --title; NULL: "fg-serve" */
	enum fg_palette palette; /* --colors: the page's first palette */
	double minwidth;	 /* --minwidth: frames narrower are left out (default 0.5) */
	bool minwidth_pct;	 /* ... per cent of the total, else pixels of a 1200-pixel graph */
	const char *input;	 /* FILE; NULL: standard input */
};

#define FG_SERVE_SHORTOPTS "hVl:i:w:"

enum {
	FG_SERVE_ARG_PUBLIC = 256,
	FG_SERVE_ARG_TOKEN,
	FG_SERVE_ARG_TITLE,
	FG_SERVE_ARG_COLORS,
	FG_SERVE_ARG_MINWIDTH,
};

/* The defaults: 127.0.0.1:8080, -i 2, -w 10, the hot palette, --minwidth 0.5, fg-top's folding. */
void fg_serve_args_init(struct fg_serve_args *a);
/*
 * Option `c` with its argument into *a: -l, -i, -w, FG_SERVE_ARG_* and
 * fg_fold_opt's FG_FOLD_OPT_* (not --every).  0, or -EINVAL with the
 * reason in why; -ENOENT for a `c` this module does not take.
 */
int fg_serve_arg(struct fg_serve_args *a, int c, const char *arg, char *why, size_t len);
/*
 * The options together: a non-loopback address needs --public; a token
 * (--token or `env_token`, the environment's) is 1 to FG_SERVE_TOKEN_MAX
 * URL-safe characters (letters, digits, - _ . ~).  0, or -EINVAL with the
 * reason in why.
 */
int fg_serve_args_check(struct fg_serve_args *a, const char *env_token, char *why, size_t len);
/* Parse ADDR:PORT as -l does into *a.  0, or -EINVAL with the reason in why. */
int fg_serve_args_listen(struct fg_serve_args *a, const char *arg, char *why, size_t len);

#endif
