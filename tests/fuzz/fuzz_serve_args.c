// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz what fg-serve parses of its command line and puts in its page: -l's
 * ADDR:PORT, the token, and the --title the page carries.  The input is the
 * -l argument, a NUL, the token, a NUL, the title.  Any bytes are accepted
 * or refused with a reason, without crashing; an accepted address is a whole
 * IPv4 or IPv6 socket address with the port given; a non-loopback one is
 * refused without --public; an accepted token is URL-safe; and no title adds
 * markup to the page (it has as many '<' as with an empty title).
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/serve_args.h"
#include "fg/serve_page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count_lt(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '<';
	return k;
}

static void check_page(const char *title)
{
	static size_t base;
	size_t len, blen;
	char *page;

	if (!base) {
		page = fg_serve_page("", 2, 10, FG_PAL_HOT, &blen);
		base = count_lt(page, blen);
		free(page);
	}
	page = fg_serve_page(title, 2, 10, FG_PAL_HOT, &len);
	if (count_lt(page, len) != base || strlen(page) != len)
		abort();
	free(page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 3), why[256];
	struct fg_serve_args a;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = text[size + 2] = '\0';
	const char *listen = text, *token = listen + strlen(listen) + 1;
	if (token > text + size)
		token = text + size + 1;
	const char *title = token + strlen(token) + 1;
	if (title > text + size + 1)
		title = text + size + 2;

	fg_serve_args_init(&a);
	if (fg_serve_arg(&a, 'l', listen, why, sizeof(why)) == 0) {
		const struct sockaddr_in *v4 = (const struct sockaddr_in *)&a.addr;
		if (a.addr.ss_family == AF_INET	   ? a.addrlen != sizeof(struct sockaddr_in)
		    : a.addr.ss_family == AF_INET6 ? a.addrlen != sizeof(struct sockaddr_in6)
						   : 1)
			abort();
		if (ntohs(v4->sin_port) != a.port || !memchr(a.host, '\0', sizeof(a.host)))
			abort();
		if (!a.loopback && fg_serve_args_check(&a, NULL, why, sizeof(why)) == 0)
			abort();
	} else if (!why[0]) {
		abort();
	}
	fg_serve_args_init(&a);
	a.token = token;
	if (fg_serve_args_check(&a, NULL, why, sizeof(why)) == 0) {
		size_t n = strlen(a.token);
		if (!n || n > FG_SERVE_TOKEN_MAX ||
		    strspn(a.token, "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789-_.~") != n)
			abort();
	}
	check_page(title);
	free(text);
	return 0;
}
