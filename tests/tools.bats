#!/usr/bin/env bats
# Every tool behaves alike at its edges: -V names the tool and its version,
# -h prints the usage on standard output, both check that write (a full disk
# is exit 1 with a message, as perf and git do), and an unknown option is a
# usage error (exit 2, the usage on standard error) that names the tool.
bats_require_minimum_version 1.5.0
load helpers

TOOLS="fg-sample fg-sym fg-fold fg-svg fg-pprof fg-diff fg-top"

@test "-V: the tool's name and version, exit 0" {
	local t
	for t in $TOOLS; do
		fg --separate-stderr "$t" -V
		[ "$status" -eq 0 ]
		[[ $output =~ ^$t\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
		[ -z "$stderr" ]
	done
}

@test "-h: the usage on standard output, exit 0" {
	local t
	for t in $TOOLS; do
		fg --separate-stderr "$t" -h
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == "usage: $t "* ]]
		[ -z "$stderr" ]
	done
}

@test "-V and -h on a full disk: exit 1 and the write error, under the tool's name" {
	local t o
	for t in $TOOLS; do
		for o in -V -h; do
			fg --separate-stderr bash -c "$t $o >/dev/full"
			[ "$status" -eq 1 ]
			[[ $stderr == "$t: write error: No space left on device" ]]
		done
	done
}

@test "an unknown option: exit 2, the usage on standard error, the tool named" {
	local t
	for t in $TOOLS; do
		fg --separate-stderr "$t" --no-such-option
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ $stderr == "$t: "* ]]
		grep -q "^usage: $t " <<<"$stderr"
	done
}
