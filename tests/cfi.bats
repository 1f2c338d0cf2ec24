#!/usr/bin/env bats
# lib/cfi: the rows of the compact unwind tables against readelf's
# --debug-dump=frames-interp, row by row, and against libdw's CFI, for
# Debian's libc, ld.so and python3, the unwinding fixtures, and .debug_frame
# in a separate debug file.  tests/tools/cfi-dump prints the rows.
bats_require_minimum_version 1.5.0
load helpers

LIBC=/lib/x86_64-linux-gnu/libc.so.6
LDSO=/lib64/ld-linux-x86-64.so.2
PY=$(readlink -f /usr/bin/python3)
CMP=$TOP/tests/tools/cfi-vs-readelf.py

# vs_readelf FILE [DEBUGFILE]: compare our rows with readelf's, keeping the summary in $output
vs_readelf() {
	local d=$BATS_TEST_TMPDIR
	# readelf exits 1 over warnings that have nothing to do with frames
	readelf --debug-dump=frames-interp "$@" >"$d/readelf" 2>/dev/null || true
	[ -s "$d/readelf" ]
	fg cfi-dump "$@"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$d/ours"
	fg python3 "$CMP" "$d/readelf" "$d/ours"
	echo "# $output" >&3
	[ "$status" -eq 0 ]
	[[ $output == *" 0 differ, 0 rows of ours readelf does not start"* ]]
}

@test "libc's rows are readelf's, row by row" {
	requires readelf python3
	vs_readelf "$LIBC"
	# __restore_rt is a signal frame, __longjmp keeps its return address in a register
	[[ $output == *"(signal 1, invalid "* ]]
}

@test "ld.so's rows are readelf's, row by row" {
	requires readelf python3
	vs_readelf "$LDSO"
}

@test "python3's rows are readelf's, row by row" {
	requires readelf python3
	[ -f "$PY" ] || skip "no $PY"
	vs_readelf "$PY"
}

@test "the fixtures' rows are readelf's (PLT expressions, stack realignment)" {
	requires readelf python3
	local f
	for f in gcc-pie gcc-nopie clang-pie clang-nopie gcc-static clang-static; do
		vs_readelf "$FG_BUILD/unwind/fixture-$f"
	done
	# gcc realigns the stack through r10: a CFA read from memory, held as a rule
	fg cfi-dump --libdw "$FG_BUILD/unwind/fixture-gcc-pie"
	[ "$status" -eq 0 ]
	readelf --debug-dump=frames "$FG_BUILD/unwind/fixture-gcc-pie" | grep -q 'DW_CFA_def_cfa_expression (DW_OP_breg6 (rbp): -8; DW_OP_deref)'
}

@test "every row of libc, ld.so and python3 is libdw's at its first and last address" {
	local f
	for f in "$LIBC" "$LDSO" "$PY"; do
		fg cfi-dump --libdw "$f"
		echo "# $f: ${lines[-1]}" >&3
		[ "$status" -eq 0 ]
		[[ ${lines[-1]} == "checked "*" rows: 0 differ, "* ]]
	done
}

@test "the table's figures: rows, rules, bytes; signal and stop rows found" {
	fg cfi-dump --stats "$LIBC"
	[ "$status" -eq 0 ]
	echo "# libc: $(tr '\n' ' ' <<<"$output")" >&3
	[[ $output == *$'\nsignal_rows 1\n'* ]]
	[[ $output == *$'\nbad_entries 0\n'* ]]
	# _start's and clone3's return address is undefined: STOP rows
	grep -q '^stop_rows [1-9]' <<<"$output"
	# the rules are few and shared: far fewer than rows
	local rows rules
	rows=$(awk '$1 == "rows" { print $2 }' <<<"$output")
	rules=$(awk '$1 == "rules" { print $2 }' <<<"$output")
	[ "$rules" -gt 0 ] && [ $((rules * 20)) -lt "$rows" ]
}

@test ".debug_frame from a separate debug file: the rows of a file that has no .eh_frame of its own" {
	requires readelf python3 objcopy
	local d=$BATS_TEST_TMPDIR
	gcc -O2 -fomit-frame-pointer -g -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-o "$d/prog" "$TOP/tests/unwind/fixture.c" "$TOP/tests/unwind/snap.c" \
		"$TOP/tests/unwind/fixlib.c" -pthread
	objcopy --only-keep-debug "$d/prog" "$d/prog.debug"
	strip --strip-debug "$d/prog"
	[ -n "$(readelf -SW "$d/prog.debug" | grep '\.debug_frame')" ]
	[ -z "$(readelf -SW "$d/prog" | grep '\.debug_frame')" ]
	# without the debug file, rec_a has no rows; with it, .debug_frame's
	local a
	a=$(nm "$d/prog" | awk '$3 == "rec_a" { print $1 }')
	fg cfi-dump "$d/prog"
	[ -z "$(awk -v a="$a" '$1 == "0000000000" a || $1 == a' <<<"$output" | grep -v none)" ]
	fg cfi-dump --stats "$d/prog" "$d/prog.debug"
	grep -q '^debug_fdes [1-9]' <<<"$output"
	fg cfi-dump "$d/prog" "$d/prog.debug"
	grep -q "^0*$a rsp+8 u c-8" <<<"$output"
	# row by row: readelf on both files (.eh_frame of the startup code, .debug_frame of ours)
	readelf --debug-dump=frames-interp "$d/prog" "$d/prog.debug" >"$d/readelf" 2>/dev/null || true
	printf '%s\n' "$output" >"$d/ours"
	fg python3 "$CMP" "$d/readelf" "$d/ours"
	echo "# $output" >&3
	[ "$status" -eq 0 ]
	fg cfi-dump --libdw "$d/prog" "$d/prog.debug"
	[ "$status" -eq 0 ]
}

@test "the vdso's table, from the kernel's image in memory" {
	fg cfi-dump --vdso
	echo "# $(grep -c . <<<"$output") rows" >&3
	[ "$status" -eq 0 ]
	grep -q '^[0-9a-f]* rsp+8 u c-8 __vdso_clock_gettime$' <<<"$output"
}

@test "cfi-dump refuses what is not ELF, and a truncated ELF file, with the reason" {
	local d=$BATS_TEST_TMPDIR
	echo "not elf" >"$d/text"
	fg -1 --separate-stderr cfi-dump "$d/text"
	[[ $stderr == "cfi-dump: cannot build the table of '$d/text': Exec format error" ]]
	head -c 200 "$LIBC" >"$d/short"
	fg -1 --separate-stderr cfi-dump "$d/short"
	[[ $stderr == "cfi-dump: cannot build the table of '$d/short': "* ]]
	# a file without any CFI says so: frame pointers are the fallback
	printf '\x7fELF\x02\x01\x01' >"$d/bare"
	head -c 57 /dev/zero >>"$d/bare"
	fg -1 --separate-stderr cfi-dump "$d/bare"
	[[ $stderr == "cfi-dump: cannot build the table of '$d/bare': "* ]]
}

@test "the step function compiles for BPF, and the verifier accepts a 64-frame walk with it" {
	requires clang
	local d=$BATS_TEST_TMPDIR inc
	inc=$(clang -v -E - </dev/null 2>&1 |
		sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
	# shellcheck disable=SC2086
	fg clang -target bpf -O2 -g -I"$TOP/include" $inc -Wall -Werror \
		-c "$TOP/tests/unwind/cfi_step_bpf.c" -o "$d/step.bpf.o"
	[ "$status" -eq 0 ]
	requires root bpftool
	local pin=/sys/fs/bpf/fg-cfi-test-$$
	fg bpftool prog load "$d/step.bpf.o" "$pin" type perf_event
	rm -f "$pin"
	[ "$status" -eq 0 ]
}
