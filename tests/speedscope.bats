#!/usr/bin/env bats
# The speedscope app (the npm package's dist/release, installed by
# scripts/install-deps) imports fg-sym's perf script text, fg-fold's folded
# stacks and fg-pprof's profiles, in headless Chromium: each file is imported
# (no "Unrecognized format"), and the function with the most self time in the
# Sandwich view is fg-fold's, with fg-fold's share.
bats_require_minimum_version 1.5.0
load helpers

SPEEDSCOPE=$TOP/node_modules/speedscope/dist/release
PP=$DATA/fg-pprof

setup() {
	requires chromium python3
	[ -r "$SPEEDSCOPE/index.html" ] ||
		skip "test requires speedscope (scripts/install-deps installs it into node_modules/)"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# the leaf with the most weight in folded stacks, and its share: "NAME PERCENT"
fold_top() {
	awk '{ n = $NF; s = $0; sub(/ [0-9.]+$/, "", s); k = split(s, f, ";"); w[f[k]] += n; t += n }
		END { for (x in w) if (w[x] > best) { best = w[x]; top = x }
			printf "%s %.2f\n", top, 100 * best / t }' "$@"
}

# speedscope's share (two significant digits) is fg-fold's within TOLERANCE points
check_top() { # FILE FOLDED TOLERANCE [TITLE]
	fg "$TOP/tests/browser/speedscope-check" "$SPEEDSCOPE" "$1" ${4:+"$4"}
	echo "$output" | sed 's/^/# /' >&3
	[ "$status" -eq 0 ]
	read -r name share < <(fold_top "$2")
	echo "# fg-fold: $name $share%" >&3
	[[ $output == *"top: $name"* ]]
	got=$(sed -n 's/^self: //p' <<<"$output")
	awk -v a="$got" -v b="$share" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit d > t }'
}

@test "speedscope imports fg-pprof's profile: the top function's self share is fg-fold's" {
	fg-pprof -o sys.pb.gz "$PP/fgsym-sys.txt"
	fg-fold "$PP/fgsym-sys.txt" >sys.folded
	check_top sys.pb.gz sys.folded 0.5
	[[ $output == *"format: Importing as protobuf encoded pprof file"* ]]
}

@test "speedscope imports fg-fold's folded stacks with the same share" {
	fg-fold "$PP/fgsym-sys.txt" >sys.folded
	check_top sys.folded sys.folded 0.5
	[[ $output == *"format: Importing as collapsed stack format"* ]]
}

@test "speedscope imports fg-sym's perf script text, header comments included, a profile a thread" {
	# speedscope weighs a perf sample by the time to the thread's next one,
	# fg-fold counts samples: on a busy machine the two differ by a point or two
	fg-fold --only-pid 16070 "$PP/fgsym-sys.txt" >leaves.folded
	check_top "$PP/fgsym-sys.txt" leaves.folded 3 "pid: 16070"
	[[ $output == *"format: Importing from linux perf script output"* ]]
	[[ $output == *"profile: leaves pid: 16070 tid: 16070 (2/3)"* ]]
}

@test "speedscope imports perf's own perf script --header output" {
	fg-fold "$PP/perf-leaves.txt" >perf.folded
	check_top "$PP/perf-leaves.txt" perf.folded 3
	[[ $output == *"format: Importing from linux perf script output"* ]]
}

@test "speedscope-check fails on a file speedscope cannot import" {
	echo "not a profile" >junk.txt
	fg -1 "$TOP/tests/browser/speedscope-check" "$SPEEDSCOPE" junk.txt
	[[ $output == *"Unrecognized format"* ]]
}
