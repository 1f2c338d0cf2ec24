// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-serve: a pipeline's sink that serves the flame graph, live, to a
 * browser.  See fg-serve(1).  The input is folded in a thread of its own
 * (lib/serve.c); libmicrohttpd answers in threads of its own
 * (lib/serve_http.c); this thread waits for SIGINT or SIGTERM.
 */
#include <fcntl.h>
#include <pthread.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/foldopts.h"
#include "fg/serve.h"
#include "fg/serve_args.h"
#include "fg/serve_http.h"

static const char usage_text[] =
    "usage: fg-serve [-l ADDR:PORT] [--public] [--token TOKEN] [-i SECONDS] [-w SECONDS]\n"
    "                [--title TEXT] [--colors PALETTE] [--minwidth N[%]] [--pid | --tid]\n"
    "                [--event-filter EVENT] [--samples] [--input perf|folded|bpftrace] [FILE]\n"
    "       fg-serve -h | -V\n"
    "\n"
    "Serve the flame graph of perf script text (fg-sym's or perf's), folded stacks or\n"
    "bpftrace maps over HTTP, live, as they come from standard input or FILE.\n"
    "\n"
    "  -l, --listen ADDR:PORT  where to listen (default 127.0.0.1:8080; [ADDR]:PORT for IPv6;\n"
    "                          port 0: any free one)\n"
    "  --public                allow an address that is not loopback (the page shows every\n"
    "                          function and process name sampled)\n"
    "  --token TOKEN           require ?token=TOKEN (also from FG_SERVE_TOKEN)\n"
    "  -i, --interval SECONDS  the page redraws every SECONDS (default 2)\n"
    "  -w, --window SECONDS    the last window's length (default 10)\n"
    "  --title TEXT            the page's title (default \"fg-serve\")\n"
    "  --colors PALETTE        the first palette: hot (default), java, io, ...\n"
    "  --minwidth N[%]         leave out frames narrower than N pixels (of 1200), or N%\n"
    "                          of the total (default 0.5)\n"
    "  --pid                   processes as comm-PID\n"
    "  --tid                   processes as comm-PID/TID\n"
    "  --event-filter EVENT    show only samples of EVENT (default: the first event seen)\n"
    "  --samples               count samples instead of summing event periods\n"
    "  --input FORMAT          read perf, folded or bpftrace input (default: detect)\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n";

static const struct option longopts[] = {
    {"colors", required_argument, NULL, FG_SERVE_ARG_COLORS},
    {"event-filter", required_argument, NULL, FG_FOLD_OPT_EVENT_FILTER},
    {"help", no_argument, NULL, 'h'},
    {"input", required_argument, NULL, FG_FOLD_OPT_INPUT},
    {"interval", required_argument, NULL, 'i'},
    {"listen", required_argument, NULL, 'l'},
    {"minwidth", required_argument, NULL, FG_SERVE_ARG_MINWIDTH},
    {"pid", no_argument, NULL, FG_FOLD_OPT_PID},
    {"public", no_argument, NULL, FG_SERVE_ARG_PUBLIC},
    {"samples", no_argument, NULL, FG_FOLD_OPT_SAMPLES},
    {"tid", no_argument, NULL, FG_FOLD_OPT_TID},
    {"title", required_argument, NULL, FG_SERVE_ARG_TITLE},
    {"token", required_argument, NULL, FG_SERVE_ARG_TOKEN},
    {"version", no_argument, NULL, 'V'},
    {"window", required_argument, NULL, 'w'},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
	struct fg_serve_args a;
	char why[256], url[400];
	int c, fd = STDIN_FILENO, sfd, sig;
	uint16_t port;
	sigset_t sigs;

	fg_set_progname(argv[0]);
	fg_serve_args_init(&a);
	while ((c = getopt_long(argc, argv, FG_SERVE_SHORTOPTS, longopts, NULL)) != -1) {
		fg_help_or_version(c, usage_text);
		fg_usage_check(fg_serve_arg(&a, c, optarg, why, sizeof(why)), usage_text, why);
	}
	if (argc - optind > 1 ||
	    fg_serve_args_check(&a, getenv("FG_SERVE_TOKEN"), why, sizeof(why)) < 0)
		fg_usage_error(usage_text, "%s", argc - optind > 1 ? "too many operands" : why);
	if (optind < argc && (fd = open(argv[optind], O_RDONLY | O_CLOEXEC)) < 0)
		fg_die("cannot open '%s'", argv[optind]);
	if (fd == STDIN_FILENO && isatty(fd))
		fg_usage_error(usage_text, "%s", "no input: standard input is a terminal");
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* the threads started below inherit it */
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = fg_serve_http_listen(&a, &port)) < 0)
		fg_diex("cannot listen on %s:%u: %s", a.host, a.port, strerror(-sfd));
	fg_serve_http_url(&a, port, url, sizeof(url));
	struct fg_serve_opts so = {
	    a.fold, a.window,	a.title,       optind < argc ? argv[optind] : "<stdin>",
	    url,    a.minwidth, a.minwidth_pct};
	struct fg_serve *s = fg_serve_new(&so);
	struct fg_serve_http *h = fg_serve_http_start(s, &a, sfd, port);
	if (!h || fg_serve_start(s, fd) < 0)
		fg_diex("cannot start serving on %s", url);
	fg_warnx("serving %s", url);
	sigwait(&sigs, &sig);
	fg_serve_stop(s);
	fg_serve_http_stop(h);
	fg_serve_report(s);
	fg_serve_free(s);
	return 0;
}
