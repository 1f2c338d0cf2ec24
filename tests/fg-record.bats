#!/usr/bin/env bats
# fg-record: the pipeline in one command.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "-h prints the usage matching the man page's synopsis and exits 0" {
	fg fg-record -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: fg-record [-hIV] [-F hz] [-d seconds] [-p pid]... [-C cpu]... [-o file]" ]]
	# every option of the man page is in the usage
	for opt in -F -d -p -C -o -T -I -V --user-only --kernel-only; do
		assert_output_contains " $opt"
		grep -q "^\.It Fl ${opt#-}" "$TOP/man/fg-record.1" ||
			grep -q "^\.It Fl \\\\-${opt#--}" "$TOP/man/fg-record.1" ||
			grep -q "^\.It Fl \\\\-$(sed 's/-/\\\\-/g' <<<"${opt#--}")" "$TOP/man/fg-record.1"
	done
}

@test "an unknown option prints usage and exits 2" {
	fg --separate-stderr fg-record --bogus
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-record: unrecognized option '--bogus'"* ]]
	[ -z "$output" ]
}

@test "an output name of unknown kind is a usage error" {
	fg --separate-stderr fg-record -o profile.png -d 1
	[ "$status" -eq 2 ]
	[[ $stderr == *"cannot tell the output kind from 'profile.png'"* ]]
	[ ! -e profile.png ]
}

@test "a missing option argument is a usage error" {
	fg --separate-stderr fg-record -F
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-record: option '-F' needs an argument"* ]]
}

@test "profiles a command into an SVG flame graph" {
	requires root btf
	fg --separate-stderr fg-record -F 499 -o cpu.svg -- "$WORKLOADS/split7030" 2
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-record: wrote cpu.svg"* ]]
	svg-frames cpu.svg >frames
	grep -qP '^\d+\t\d+\thot$' frames
	grep -qP '^\d+\t\d+\tcold$' frames
	[ -z "$(ls | grep '^cpu.svg.')" ]
}

@test "chooses folded stacks, perf-script text and records by the file name" {
	requires root btf
	fg fg-record -F 499 -o out.folded -- "$WORKLOADS/split7030" 1
	[ "$status" -eq 0 ]
	grep -q ';main;hot;spin [0-9]*$' out.folded
	fg fg-record -F 499 -o out.perf -- "$WORKLOADS/split7030" 1
	[ "$status" -eq 0 ]
	grep -qP '^\t\s*[0-9a-f]+ hot\+0x[0-9a-f]+ \(' out.perf
	fg fg-record -F 499 -o out.fgr -- "$WORKLOADS/split7030" 1
	[ "$status" -eq 0 ]
	fg-sym out.fgr | fg-fold | grep -q ';main;hot;spin '
}

@test "a failing pipeline leaves no output file behind" {
	requires root
	# fg-sample refuses a pid that does not exist
	fg --separate-stderr fg-record -p 999999999 -o nothing.svg
	[ "$status" -ne 0 ]
	[[ $stderr == *"fg-sample: no process with pid 999999999"* ]]
	[ ! -e nothing.svg ]
	# nor its temporary file
	[ -z "$(ls | grep '^nothing')" ]
}

@test "-o follows the tools' rule: a link of ours is written through, another user's refused" {
	requires root btf perf_event
	cd "$BATS_TEST_TMPDIR"
	echo old >real.folded
	ln -s real.folded link.folded
	fg --separate-stderr fg-record -F 99 -o link.folded -- "$WORKLOADS/split7030" 0.3
	[ "$status" -eq 0 ]
	[ -L link.folded ]
	grep -q 'split7030' real.folded
	# a link of another user's: refused, nothing written where it points
	ln -s real.folded theirs.folded
	chown -h nobody theirs.folded
	local sum
	sum=$(md5sum <real.folded)
	fg --separate-stderr fg-record -F 99 -o theirs.folded -- "$WORKLOADS/split7030" 0.1
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-record: cannot write 'theirs.folded': Operation not permitted (it belongs to user $(id -u nobody))"* ]]
	[ -L theirs.folded ]
	[ "$(md5sum <real.folded)" = "$sum" ]
	[ -z "$(ls -A | grep '^link.folded.\|^theirs.folded.')" ]
}
