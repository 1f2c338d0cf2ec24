// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/dwarf.h"
#include "fg/elfsyms.h"
#include "fg/safeio.h"
#include "unit.h"

__attribute__((noinline)) void unit_dwarf_function(void);
__attribute__((noinline)) void unit_dwarf_function(void)
{
	__asm__ volatile("" ::: "memory");
}

/* unit_dwarf_function's address in this program's file */
static uint64_t own_address(void)
{
	int fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	struct fg_elfsyms *e = fd >= 0 ? fg_elfsyms_open_fd(fd) : NULL;
	uint64_t a = 0;

	for (size_t i = 0; e && i < e->nsyms; i++)
		if (strcmp(e->syms[i].name, "unit_dwarf_function") == 0)
			a = e->syms[i].addr;
	fg_elfsyms_free(e);
	if (fd >= 0)
		close(fd);
	return a;
}

/* This test program is built with -g: its own function, file and line. */
TEST(dwarf_names_our_own_function)
{
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	uint64_t a = own_address();
	struct fg_dwarf *d = fg_dwarf_open("/proc/self/exe", "");
	int n;

	char func[256] = "", file[4096] = "";
	unsigned line = 0;

	/* the strings live as long as d: copied, so that a failed CHECK leaks nothing */
	n = a && d ? fg_dwarf_lookup(d, a, locs, FG_DWARF_MAX_INLINE) : 0;
	if (n >= 1) {
		snprintf(func, sizeof(func), "%s", locs[n - 1].func ? locs[n - 1].func : "");
		snprintf(file, sizeof(file), "%s", locs[n - 1].file ? locs[n - 1].file : "");
		line = locs[n - 1].line;
	}
	/* no DWARF about address 0 */
	int none = d ? fg_dwarf_lookup(d, 0, locs, FG_DWARF_MAX_INLINE) : -1;
	fg_dwarf_free(d);
	CHECK(a != 0);
	CHECK(n >= 1);
	CHECK_INT(none, 0);
	CHECK_STR(func, "unit_dwarf_function");
	CHECK(strstr(file, "test_dwarf.c") != NULL);
	CHECK(line > 0);
	fg_dwarf_free(NULL);
}

TEST(dwarf_errors_say_why)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";

	errno = 0;
	CHECK(fg_dwarf_open_mem(text, sizeof(text)) == NULL);
	CHECK_INT(errno, ENOEXEC);
	/*
	 * A device is refused before it is opened, and so is a pseudo file that
	 * calls itself regular (reading it can have effects)
	 */
	static const struct {
		const char *path;
		int err;
	} refused[] = {
	    {"/nonexistent", ENOENT},
	    {"/dev/null", EINVAL},
	    {"/dev/zero", EINVAL},
	    {"/proc/self/status", EINVAL},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		errno = 0;
		CHECK(fg_dwarf_open(refused[i].path, NULL) == NULL);
		CHECK_INT(errno, refused[i].err);
	}
}

/*
 * The file is read, not mapped: cut to nothing after it was opened, it still
 * answers from what was read (a mapping would raise SIGBUS).
 */
TEST(dwarf_survives_its_file_truncated)
{
	struct fg_dwarf_loc before[FG_DWARF_MAX_INLINE], after[FG_DWARF_MAX_INLINE];
	uint64_t a = own_address();
	char *data;
	size_t len;
	int fd, n;

	CHECK(fg_safeio_read_file("/proc/self/exe", 256u << 20, &data, &len) == 0);
	fd = memfd_create("dwarf", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	free(data);
	struct fg_dwarf *d = fg_dwarf_open_fd(fd, NULL, NULL);
	struct fg_dwarf *whole = fg_dwarf_open("/proc/self/exe", "");
	CHECK(d != NULL);
	CHECK(whole != NULL);
	n = fg_dwarf_lookup(whole, a, before, FG_DWARF_MAX_INLINE);
	CHECK(n > 0);
	/* cut before d's first look-up: not answered from what it remembers */
	CHECK(ftruncate(fd, 0) == 0);
	CHECK_INT(fg_dwarf_lookup(d, a, after, FG_DWARF_MAX_INLINE), n);
	CHECK_STR(after[n - 1].func, before[n - 1].func);
	CHECK_INT(after[0].line, before[0].line);
	fg_dwarf_free(d);
	fg_dwarf_free(whole);
	close(fd);
}

static bool same_locs(const struct fg_dwarf_loc *x, int nx, const struct fg_dwarf_loc *y, int ny)
{
	if (nx != ny)
		return false;
	for (int i = 0; i < nx; i++)
		if (x[i].line != y[i].line ||
		    strcmp(x[i].func ? x[i].func : "-", y[i].func ? y[i].func : "-") ||
		    strcmp(x[i].file ? x[i].file : "-", y[i].file ? y[i].file : "-"))
			return false;
	return true;
}

/*
 * Look-ups are remembered: every fourth byte of this program's functions
 * (more addresses than the table holds, so that slots are shared and answers
 * forgotten), asked twice in one
 * order of one fg_dwarf, once in the other order of another, give the same
 * answers; a smaller `max` gives the innermost ones.
 */
TEST(dwarf_lookups_remembered)
{
	struct fg_dwarf_loc x[FG_DWARF_MAX_INLINE], y[FG_DWARF_MAX_INLINE];
	int fd = fg_safeio_open_regular("/proc/self/exe", 0, NULL);
	struct fg_elfsyms *e = fd >= 0 ? fg_elfsyms_open_fd(fd) : NULL;
	struct fg_dwarf *d = fg_dwarf_open("/proc/self/exe", "");
	struct fg_dwarf *other = fg_dwarf_open("/proc/self/exe", "");
	size_t na = 0, bad = 0, inlined = 0;
	uint64_t *addrs;

	CHECK(e != NULL && d != NULL && other != NULL);
	for (size_t i = 0; i < e->nsyms; i++)
		na += (e->syms[i].size + 3) / 4;
	CHECK(na > 4096);
	addrs = malloc(na * sizeof(*addrs));
	na = 0;
	/* every fourth byte of every function */
	for (size_t i = 0; i < e->nsyms; i++)
		for (uint64_t k = 0; k < e->syms[i].size; k += 4)
			addrs[na++] = e->syms[i].addr + k;
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < na; i++)
			fg_dwarf_lookup(d, addrs[i], x, FG_DWARF_MAX_INLINE);
	for (size_t i = na; i-- > 0;) {
		int nx = fg_dwarf_lookup(d, addrs[i], x, FG_DWARF_MAX_INLINE);
		int ny = fg_dwarf_lookup(other, addrs[i], y, FG_DWARF_MAX_INLINE);

		bad += !same_locs(x, nx, y, ny);
		inlined += nx > 1;
		if (nx > 1 && fg_dwarf_lookup(d, addrs[i], y, 1) != 1)
			bad++;
		else if (nx > 1)
			bad += !same_locs(x, 1, y, 1);
	}
	free(addrs);
	fg_dwarf_free(d);
	fg_dwarf_free(other);
	fg_elfsyms_free(e);
	close(fd);
	CHECK_INT(bad, 0);
	CHECK(inlined > 0);
}

/* Prefixes and corrupted copies of a real file with DWARF: errors, never crashes. */
TEST(dwarf_survives_truncation_and_corruption)
{
	struct fg_dwarf_loc locs[FG_DWARF_MAX_INLINE];
	uint64_t a = own_address();
	unsigned seed = 4242;
	char *data;
	size_t len;

	CHECK(fg_safeio_read_file("/proc/self/exe", 256u << 20, &data, &len) == 0);
	for (size_t cut = 0; cut < len; cut += len / 64 + 1) {
		struct fg_dwarf *d = fg_dwarf_open_mem(data, cut);

		if (d)
			fg_dwarf_lookup(d, a, locs, FG_DWARF_MAX_INLINE);
		fg_dwarf_free(d);
	}
	for (int round = 0; round < 64; round++) {
		char *copy = malloc(len);
		int fd;

		memcpy(copy, data, len);
		for (int k = 0; k < 32; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 4) % len] = (char)(seed >> 20);
		}
		fd = memfd_create("dwarf", MFD_CLOEXEC);
		CHECK(fd >= 0);
		CHECK(write(fd, copy, len) == (ssize_t)len);
		struct fg_dwarf *d = fg_dwarf_open_fd(fd, NULL, "/nonexistent");
		if (d) {
			int n = fg_dwarf_lookup(d, a, locs, FG_DWARF_MAX_INLINE);

			for (int i = 0; i < n; i++)
				CHECK(!locs[i].func || strlen(locs[i].func) < 65536);
		}
		fg_dwarf_free(d);
		close(fd);
		free(copy);
	}
	free(data);
}

int main(void)
{
	RUN(dwarf_names_our_own_function);
	RUN(dwarf_errors_say_why);
	RUN(dwarf_survives_its_file_truncated);
	RUN(dwarf_lookups_remembered);
	RUN(dwarf_survives_truncation_and_corruption);
	return unit_done();
}
