#!/usr/bin/env bats
# fg-fold --inline opens the files perf script text names, and libdwfl would
# open more by name (debug files, dwz supplementary files, split DWARF): only
# regular files are opened, never blocking on a FIFO; separate debug files
# are still found.
bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	local d=$BATS_FILE_TMPDIR
	gcc -g -O2 -o "$d/inl" "$DATA/fg-fold/inline.c"
	# separate debug information through .gnu_debuglink, the binary stripped
	mkdir "$d/dl"
	objcopy --only-keep-debug "$d/inl" "$d/dl/inl.debug"
	strip --strip-all "$d/inl" -o "$d/dl/inl"
	(cd "$d/dl" && objcopy --add-gnu-debuglink=inl.debug inl)
}

# fold PROG OFF: fg-fold --inline on one frame at main+OFF of PROG
fold() {
	printf 'inl 10/10 [000] 1.0: 1 cycles:\n\t    55d0c0de%04x main+0x%x (%s)\n\n' \
		$((0x1000 + $2)) "$2" "$1" >"$BATS_TEST_TMPDIR/in.txt"
	# a hang (a blocking open) fails the test instead of stopping the suite
	fg -0 --separate-stderr timeout 60 fg-fold --inline "$BATS_TEST_TMPDIR/in.txt"
}

@test "fg-fold --inline finds DWARF through .gnu_debuglink, as with the DWARF in the file" {
	local off n=0
	for off in $(seq 0 4 60); do
		fold "$BATS_FILE_TMPDIR/inl" "$off"
		local want=$output
		fold "$BATS_FILE_TMPDIR/dl/inl" "$off"
		[ "$output" = "$want" ]
		[[ $output == *"_[i]"* ]] && n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "fg-fold --inline: a FIFO named as the module is not opened" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	fold "$BATS_TEST_TMPDIR/fifo" 4
	[ "$output" = "inl;main 1" ]
	assert_stderr_contains "fifo: cannot read it as ELF"
}

@test "fg-fold --inline: a debug file that is a FIFO is not opened" {
	local d=$BATS_TEST_TMPDIR
	cp "$BATS_FILE_TMPDIR/dl/inl" "$BATS_FILE_TMPDIR/dl/inl.debug" "$d/"
	rm "$d/inl.debug"
	mkfifo "$d/inl.debug"
	mkdir "$d/.debug"
	mkfifo "$d/.debug/inl.debug"
	fold "$d/inl" 4
	[ "$output" = "inl;main 1" ]
	# stripped, and its symbols are in the debug file it cannot use
	assert_stderr_contains "inl: cannot place the frames in it"
}

@test "fg-fold --inline: a supplementary file or .dwo that is a FIFO is not opened" {
	local d=$BATS_TEST_TMPDIR
	{ printf 'alt.fifo\0'; printf '\x5a%.0s' $(seq 20); } >"$d/altlink"
	objcopy --add-section .gnu_debugaltlink="$d/altlink" "$BATS_FILE_TMPDIR/inl" "$d/alt"
	mkfifo "$d/alt.fifo"
	fold "$d/alt" 4
	[ "$output" = "inl;main 1" ]
	assert_stderr_contains "no DWARF line information"
	(cd "$d" && gcc -g -O2 -gsplit-dwarf "$DATA/fg-fold/inline.c" -o split)
	local dwo
	dwo=$(ls "$d"/*.dwo)
	rm "$dwo"
	mkfifo "$dwo"
	fold "$d/split" 4
	[ "$output" = "inl;main 1" ]
	assert_stderr_contains "no DWARF line information"
}
