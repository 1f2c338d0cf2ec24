#!/usr/bin/env bats
# make install / make uninstall with DESTDIR and PREFIX.
bats_require_minimum_version 1.5.0
load helpers

@test "make install puts tools, wrapper and man pages under DESTDIR/PREFIX; uninstall removes them" {
	dest=$BATS_TEST_TMPDIR/root
	run make -C "$TOP" --no-print-directory OUT="$FG_BUILD" FG_NO_DEPS=1 install DESTDIR="$dest" PREFIX=/opt/fg
	[ "$status" -eq 0 ]
	for t in "$TOP"/cmd/*.c; do
		t=$(basename "$t" .c)
		[ -x "$dest/opt/fg/bin/$t" ]
		[ -f "$dest/opt/fg/share/man/man1/$t.1" ]
	done
	[ -x "$dest/opt/fg/bin/fg-record" ]
	[ -f "$dest/opt/fg/share/man/man1/fg-record.1" ]
	# fg-ch finds its schema installed, beside its bin directory
	[ -f "$dest/opt/fg/share/fg/ch/schema.sql" ]
	fg "$dest/opt/fg/bin/fg-ch" --url http://127.0.0.1:1 init
	[ "$status" -eq 1 ]
	[[ $output == *"cannot create database fg at http://127.0.0.1:1"* ]]
	run make -C "$TOP" --no-print-directory OUT="$FG_BUILD" FG_NO_DEPS=1 uninstall DESTDIR="$dest" PREFIX=/opt/fg
	[ "$status" -eq 0 ]
	[ -z "$(find "$dest" -type f)" ]
}

@test "a plain make builds everything, after a build has left its dependency files too" {
	# (the first rule of an included .d file would otherwise become the goal)
	ls "$FG_BUILD"/cmd/*.d >/dev/null
	run make -C "$TOP" --no-print-directory -pn OUT="$FG_BUILD" FG_NO_DEPS=1
	[ "$status" -eq 0 ]
	[[ $output == *$'\n.DEFAULT_GOAL := all\n'* ]]
}

@test "every man page has a tool or a format, and every tool a man page" {
	for t in "$TOP"/cmd/*.c "$TOP"/scripts/bin/*; do
		t=$(basename "$t" .c)
		[ -f "$TOP/man/$t.1" ] || { echo "no man page for $t" >&2; false; }
	done
}
