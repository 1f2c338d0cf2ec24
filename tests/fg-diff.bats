#!/usr/bin/env bats
# fg-diff: two folded profiles into one differential profile, as difffolded.pl
bats_require_minimum_version 1.5.0
load helpers

D=$DATA/diff-folded

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

@test "fg-diff -h prints the usage; -V the version" {
	fg fg-diff -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: fg-diff [-ns] [-o file] before after" ]]
	for opt in -n -s -o -h -V; do
		grep -qF ".It Fl ${opt#-}" "$TOP/man/fg-diff.1"
	done
	grep -q '^\.Op Fl ns$' "$TOP/man/fg-diff.1"
	fg fg-diff -V
	[[ $output == "fg-diff "* ]]
}

@test "fg-diff: usage errors exit 2" {
	fg -2 --separate-stderr fg-diff "$D/inferno/before.txt"
	[[ $stderr == "fg-diff: two profiles to compare: BEFORE AFTER"* ]]
	fg -2 --separate-stderr fg-diff a b c
	[[ $stderr == "fg-diff: too many operands"* ]]
	fg -2 --separate-stderr fg-diff -x a b
	[[ $stderr == *"invalid option"* ]]
	fg -2 --separate-stderr fg-diff - -
	[[ $stderr == "fg-diff: only one of the two profiles can be standard input"* ]]
	[ -z "$output" ]
}

@test "difffolded.pl's output on real profiles, with no option, -n, -s and -ns" {
	local label opt
	for label in dd-kernel java-addrs; do
		for opt in "" n s ns; do
			fg-diff ${opt:+-$opt} "$D/input/$label-1.folded" "$D/input/$label-2.folded" >out
			assert_golden "$D/expected/$label${opt:+-$opt}.folded"
		done
	done
}

@test "inferno's cases: default, normalize, strip-hex, fractional counts" {
	local i=$D/inferno
	fg-diff "$i/before.txt" "$i/after.txt" >out
	LC_ALL=C sort "$i/results/default.txt" | assert_golden /dev/stdin
	fg-diff -n "$i/before.txt" "$i/after.txt" >out
	LC_ALL=C sort "$i/results/normalize.txt" | assert_golden /dev/stdin
	fg-diff -s "$i/before.txt" "$i/after.txt" >out
	LC_ALL=C sort "$i/results/strip_hex.txt" | assert_golden /dev/stdin
	fg-diff --normalize --strip-hex -o out2 "$i/before.txt" "$i/after.txt"
	fg-diff -ns "$i/before.txt" "$i/after.txt" | cmp - out2
	fg-diff "$i/before_fractionals.txt" "$i/after.txt" >out
	LC_ALL=C sort "$i/results/fractionals.txt" | assert_golden /dev/stdin
}

@test "a malformed line is named with its file and line, skipped, and exits 1; the rest is written" {
	local inf=$D/inferno
	fg -1 --separate-stderr fg-diff "$inf/bad_before.txt" "$inf/after.txt"
	[[ $stderr == *"fg-diff: $inf/bad_before.txt:3: line without a count skipped: 'dd;[unknown];read;system_call_[k];__fdget_pos_[k]'"* ]]
	[[ $stderr == *"fg-diff: skipped 1 malformed line"* ]]
	[ "${#lines[@]}" -eq 9 ]
	[[ $output == *"dd;[unknown];read;system_call_[k];__fdget_pos_[k] 0 15"* ]]
	printf 'a;b 1\n\na;c 99999999999999999999999\n' >huge
	fg -1 --separate-stderr fg-diff huge huge
	[[ $stderr == *"huge:3: count too large skipped"* ]]
	[ "$output" = "a;b 1 1" ]
}

@test "a stack keeps its spaces; counts of one stack add up; a missing file or a failed write exits 1" {
	printf 'a b;c  5\na b;c  2\nx;y 1.5\n' >before
	printf 'a b;c  1\n' >after
	fg fg-diff before - <after
	[ "$status" -eq 0 ]
	[ "$output" = $'a b;c  7 1\nx;y 1 0' ]
	fg -1 --separate-stderr fg-diff before missing
	[[ $stderr == "fg-diff: cannot open 'missing': No such file or directory" ]]
	fg -1 --separate-stderr fg-diff before before -o /dev/full
	[[ $stderr == *"write error"* ]]
}

@test "fg-diff | fg-svg: a differential flame graph" {
	fg-diff "$D/inferno/before.txt" "$D/inferno/after.txt" | fg-svg >diff.svg
	# grown frames red, shrunk ones blue
	grep -Eq 'fill="#ff[0-9a-e][0-9a-f]{3}"' diff.svg
	grep -Eq 'fill="#[0-9a-e][0-9a-f]{3}ff"' diff.svg
}

@test "fg-record keeps the folded stacks beside the SVG; two runs compare with fg-diff" {
	requires root btf perf_event
	fg --separate-stderr fg-record -F 499 -o before.svg -- "$WORKLOADS/leaves" 0.5
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-record: wrote before.svg and before.folded"* ]]
	fg-record -F 499 -o after.svg -- "$WORKLOADS/split7030" 0.5 2>/dev/null
	# the folded stacks are what the SVG was drawn from
	[ -s before.folded ] && [ -s after.folded ]
	total=$(awk '{ t += $NF } END { print t }' before.folded)
	grep -q "all.*($total samples, 100%)" before.svg ||
		grep -q "($total samples, 100%)" before.svg
	fg fg-diff -n before.folded after.folded
	[ "$status" -eq 0 ]
	[[ $output == *"leaf_a"* && $output == *"spin"* ]]
	# no temporary file left
	[ "$(ls -A | grep -c '\.folded\.\|\.svg\.')" -eq 0 ]
}
