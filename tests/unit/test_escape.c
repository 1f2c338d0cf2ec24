// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/escape.c: names others chose, made safe for line-based text. */
#include <stdlib.h>

#include "fg/escape.h"
#include "unit.h"

static char *esc(const char *s, size_t len, unsigned flags)
{
	static struct fg_buf b;

	fg_buf_reset(&b);
	fg_buf_add_escaped(&b, s, len, flags);
	fg_buf_addch(&b, '\0');
	return b.data;
}

#define ESC(lit, flags) esc(lit, sizeof(lit) - 1, flags)

TEST(plain_text_is_kept)
{
	CHECK_STR(ESC("main", 0), "main");
	CHECK_STR(ESC("std::vector<int>::push_back", 0), "std::vector<int>::push_back");
	CHECK_STR(ESC("/usr/lib/x86_64-linux-gnu/libc.so.6", 0),
		  "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK_STR(ESC("Web Content", FG_ESC_COMM), "Web Content");
	CHECK_STR(ESC("kworker/0:1H", FG_ESC_COMM), "kworker/0:1H");
	CHECK(fg_escape_clean("main", 4, 0));
	CHECK(fg_escape_clean("", 0, 0));
}

TEST(control_characters_become_hex)
{
	CHECK_STR(ESC("a\nb", 0), "a\\x0ab");
	CHECK_STR(ESC("\t\r\x1b[31m", 0), "\\x09\\x0d\\x1b[31m");
	CHECK_STR(ESC("x\x7fy", 0), "x\\x7fy");
	CHECK_STR(ESC("\x01\x1f", 0), "\\x01\\x1f");
	CHECK_STR(esc("a\0b", 3, 0), "a\\x00b");
	CHECK(!fg_escape_clean("a\nb", 3, 0));
}

TEST(backslash_is_doubled)
{
	CHECK_STR(ESC("a\\x0ab", 0), "a\\\\x0ab");
	CHECK(!fg_escape_clean("\\", 1, 0));
}

TEST(utf8_is_kept_and_invalid_bytes_escaped)
{
	CHECK_STR(ESC("caf\xc3\xa9", 0), "caf\xc3\xa9");
	CHECK_STR(ESC("\xe2\x82\xac \xf0\x9f\x94\xa5", 0), "\xe2\x82\xac \xf0\x9f\x94\xa5");
	/* a stray continuation byte, a lone lead byte, a cut-short sequence */
	CHECK_STR(ESC("a\x80z", 0), "a\\x80z");
	CHECK_STR(ESC("a\xc3", 0), "a\\xc3");
	CHECK_STR(ESC("\xe2\x82z", 0), "\\xe2\\x82z");
	/* overlong '/', a surrogate, above U+10FFFF, 0xff */
	CHECK_STR(ESC("\xc0\xaf", 0), "\\xc0\\xaf");
	CHECK_STR(ESC("\xed\xa0\x80", 0), "\\xed\\xa0\\x80");
	CHECK_STR(ESC("\xf4\x90\x80\x80", 0), "\\xf4\\x90\\x80\\x80");
	CHECK_STR(ESC("\xff", 0), "\\xff");
	/* C1 controls (0x9b is CSI) as UTF-8: escaped too */
	CHECK_STR(ESC("\xc2\x9b"
		      "2J",
		      0),
		  "\\xc2\\x9b2J");
	CHECK_STR(ESC("\xc2\xa0", 0), "\xc2\xa0");
}

TEST(comm_words_never_start_with_a_digit)
{
	/* the forged header "1/1 1: 99999 e:" can no longer be read as PID, time and weight */
	CHECK_STR(ESC("x 1/1 1: 9999 e", FG_ESC_COMM), "x\\x201/1\\x201:\\x209999 e");
	CHECK_STR(ESC(" 12", FG_ESC_COMM), "\\x2012");
	CHECK_STR(ESC("Chrome 2", FG_ESC_COMM), "Chrome\\x202");
	CHECK_STR(ESC("x 1/1", 0), "x 1/1");
}

TEST(fixed_buffer_is_cut_at_a_boundary)
{
	char buf[16];

	CHECK_STR(fg_escape("short", buf, sizeof(buf)), "short");
	CHECK_STR(fg_escape("a\nb", buf, sizeof(buf)), "a\\x0ab");
	CHECK_STR(fg_escape("0123456789abcdefghij", buf, sizeof(buf)), "0123456789ab...");
	/* never half an escape */
	CHECK_STR(fg_escape("0123456789\n\n\n\n", buf, sizeof(buf)), "0123456789...");
	/* never half a UTF-8 sequence */
	CHECK_STR(fg_escape("0123456789a\xe2\x82\xacxy", buf, sizeof(buf)), "0123456789a...");
}

int main(void)
{
	RUN(plain_text_is_kept);
	RUN(control_characters_become_hex);
	RUN(backslash_is_doubled);
	RUN(utf8_is_kept_and_invalid_bytes_escaped);
	RUN(comm_words_never_start_with_a_digit);
	RUN(fixed_buffer_is_cut_at_a_boundary);
	return unit_done();
}
