#!/usr/bin/env bats
# fg-fold --inline opens the files perf script text names, and more by name
# (debug files, dwz supplementary files, split DWARF): only regular files are
# opened, never blocking on a FIFO; separate debug files are still found; a
# file truncated while it is read is no crash.  Frames are placed by any name
# perf prints for their function.
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
	g++ -g -O2 -o "$d/inlcc" "$DATA/fg-fold/inline.cc"
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

# cc_frames FORM: one sample per offset of each fixture::twice<T>, named by FORM:
# mangled, demangled (perf's default), params (perf -v, with the return type), args-cut
cc_frames() {
	local prog=$BATS_FILE_TMPDIR/inlcc sym name off
	for sym in $(nm "$prog" | awk '$3 ~ /5twice/ { print $3 }'); do
		case $1 in
		mangled) name=$sym ;;
		demangled) name=$(c++filt <<<"$sym" | sed -E 's/^[a-z]+ //; s/\(.*//') ;;
		params) name=$(c++filt <<<"$sym") ;;
		args-cut) name=$(c++filt <<<"$sym" | sed 's/(.*//') ;;
		esac
		for off in 0 4 8 12 16 20 24; do
			printf 'cc 10/10 [000] 1.0: 1 cycles:\n\t    55d0c0de%04x %s+0x%x (%s)\n\n' \
				$((0x1000 + off)) "$name" "$off" "$prog"
		done
	done
}

@test "fg-fold --inline places a C++ frame by any name perf prints for its function" {
	requires nm c++filt
	cc_frames mangled >"$BATS_TEST_TMPDIR/mangled.txt"
	fg -0 --separate-stderr fg-fold --inline "$BATS_TEST_TMPDIR/mangled.txt"
	local want=$output
	[ -z "$stderr" ]
	# the member function inlined into each instance, named as addr2line -C names them
	[[ $want == *"int fixture::twice<int>;fixture::Counter<int>::count_[i] "* ]]
	[[ $want == *"long fixture::twice<long>;fixture::Counter<long>::count_[i] "* ]]
	local form
	for form in demangled params args-cut; do
		cc_frames $form >"$BATS_TEST_TMPDIR/$form.txt"
		grep -q "twice<int>" "$BATS_TEST_TMPDIR/$form.txt"
		fg -0 --separate-stderr fg-fold --inline "$BATS_TEST_TMPDIR/$form.txt"
		[ "$output" = "$want" ]
		[ -z "$stderr" ]
	done
}

# samples PROG N OFF...: N copies of samples at main+OFF... of PROG, as perf script prints them
samples() {
	local prog=$1 n=$2 off i
	shift 2
	for ((i = 0; i < n; i++)); do
		for off in "$@"; do
			printf 'inl 10/10 [000] 1.0: 1 cycles:\n\t    55d0c0de%04x main+0x%x (%s)\n\n' \
				$((0x1000 + off)) "$off" "$prog"
		done
	done
}

# wait_open PID FILE: until process PID holds FILE open or mapped (at most 30 s)
wait_open() {
	local i fd
	for ((i = 0; i < 300; i++)); do
		for fd in /proc/"$1"/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" = "$2" ] && return 0
		done
		grep -qF " $2" "/proc/$1/maps" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "fg-fold did not open $2" >&2
	return 1
}

# fold_while CHANGE: fg-fold --inline reads samples of a copy of the fixture from a FIFO;
# once it has opened the file, CHANGE (a command, given the file) changes it, then more
# samples come.  The output must be what the file gives untouched.
fold_while() {
	local d=$BATS_TEST_TMPDIR pid status=0
	cp "$BATS_FILE_TMPDIR/inl" "$d/prog"
	# fg-fold looks at the first 64 KiB to tell the input's format: more than that first
	samples "$d/prog" 1000 4 >"$d/first.txt"
	[ "$(wc -c <"$d/first.txt")" -gt 65536 ]
	samples "$d/prog" 1 $(seq 0 4 60) >"$d/then.txt"
	cat "$d/first.txt" "$d/then.txt" >"$d/all.txt"
	fg -0 --separate-stderr fg-fold --inline "$d/all.txt"
	local want=$output
	[[ $want == *"_[i]"* ]]
	mkfifo "$d/in"
	fg-fold --inline "$d/in" >"$d/out" 2>"$d/err" 3>&- &
	pid=$!
	exec 8>"$d/in"
	cat "$d/first.txt" >&8
	if ! wait_open "$pid" "$d/prog"; then
		exec 8>&-
		wait "$pid"
		return 1
	fi
	"$@" "$d/prog"
	cat "$d/then.txt" >&8
	exec 8>&-
	wait "$pid" || status=$?
	echo "# fg-fold exited with status $status" >&3
	cat "$d/err" >&2
	[ "$status" -eq 0 ]
	[ ! -s "$d/err" ]
	# what it needed was read when it opened the file
	[ "$(cat "$d/out")" = "$want" ]
}

cut_to_nothing() {
	truncate -s 0 "$1"
}

# the same inode rewritten with other bytes (cp truncates it, then writes)
rewrite() {
	head -c 100000 /dev/urandom >"$BATS_TEST_TMPDIR/garbage"
	cp "$BATS_TEST_TMPDIR/garbage" "$1"
}

@test "fg-fold --inline: a file truncated while fg-fold reads it is no crash" {
	# a mapping of the file would raise SIGBUS at the next look-up
	fold_while cut_to_nothing
}

@test "fg-fold --inline: a file rewritten while fg-fold reads it is no crash" {
	fold_while rewrite
}
