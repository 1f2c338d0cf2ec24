#!/usr/bin/env bats
# lib/unwind: stack snapshots of the fixtures (tests/unwind/, built by gcc and
# clang without frame pointers) unwound with lib/cfi's tables and by the
# libdwfl oracle, frame for frame; the golden snapshots of tests/data/unwind
# unwound to the same text on any machine.  No root: the fixtures take their
# own snapshots on SIGPROF (tests/unwind/snap.c).
bats_require_minimum_version 1.5.0
load helpers

U=$FG_BUILD/unwind
G=$DATA/unwind

# snap FIXTURE [SIZE]: run a fixture (40 ms of CPU a mode), its snapshots as a record stream in $BATS_TEST_TMPDIR/s.fgr
snap() {
	local d=$BATS_TEST_TMPDIR
	FG_SNAP_OUT=$d/s.snap FG_SNAP_SIZE=${2:-8192} "$U/fixture-$1" 40 >/dev/null
	fgr-snap "$d/s.snap" >"$d/s.fgr"
}

# whole FIXTURE: at least 99% of the stacks whole and named, and the two unwinders agree on every one
whole() {
	snap "$1"
	fg --separate-stderr fgr-unwind --compare --check 99 "$BATS_TEST_TMPDIR/s.fgr"
	printf '# %s: %s\n' "$1" "${stderr_lines[@]}" >&3
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	# every mode shows up (at 250 Hz, 40 ms a mode gives about ten stacks each)
	local f
	for f in rec_a slow_cmp fixlib_work lib_callback on_usr1 mode_plt realigned worker \
		mode_vdso; do
		grep -q " $f+" "$BATS_TEST_TMPDIR/out" || {
			echo "no stack through $f" >&2
			return 1
		}
	done
}

@test "gcc, PIE: the stacks are whole and the oracle agrees" {
	whole gcc-pie
	# frames in the kernel's vdso, unwound with the table of its image
	grep -q '__vdso_clock_gettime+0x[0-9a-f]* (\[vdso\])' "$BATS_TEST_TMPDIR/out"
	# the deep recursion: 64 calls and more in one stack
	[ "$(awk 'BEGIN { RS = "" } { n = gsub(/ rec_[ab]\+/, "") } n > m { m = n } END { print m }' \
		"$BATS_TEST_TMPDIR/out")" -ge 64 ]
}

@test "gcc, non-PIE: the stacks are whole and the oracle agrees" {
	whole gcc-nopie
}

@test "gcc, static: the stacks are whole and the oracle agrees" {
	whole gcc-static
}

@test "clang, PIE: the stacks are whole and the oracle agrees" {
	whole clang-pie
}

@test "clang, non-PIE: the stacks are whole and the oracle agrees" {
	whole clang-nopie
}

@test "clang, static: the stacks are whole and the oracle agrees" {
	whole clang-static
}

@test "threads end at their start, signal handlers go on through the interrupted code" {
	whole gcc-pie
	local o=$BATS_TEST_TMPDIR/out
	# a worker's stack ends in clone3 (the thread's start), the main thread's in _start
	awk 'BEGIN { RS = "" } / worker\+/ && !/ clone3\+[^\n]*\n?$/ { bad++ } END { exit bad }' "$o"
	awk 'BEGIN { RS = "" } / main\+/ && !/ _start\+[^\n]*\n?$/ { bad++ } END { exit bad }' "$o"
	# the handler, the trampoline (no symbol in Debian's libc), then the interrupted raise()
	awk 'BEGIN { RS = "" } / on_usr1\+/ { if ($0 !~ /on_usr1\+[^\n]*\n[^\n]*\[unknown\] \([^)]*libc[^)]*\)\n[^\n]*(pthread_kill|raise)/) bad++; n++ }
		END { exit bad || !n }' "$o"
}

@test "a snapshot too small ends the stacks early, counted by reason" {
	snap gcc-pie 1024
	fg --separate-stderr fgr-unwind -q "$BATS_TEST_TMPDIR/s.fgr"
	echo "# ${stderr_lines[-1]}" >&3
	[ "$status" -eq 0 ]
	[[ ${stderr_lines[-1]} =~ snapshot\ too\ small\ [1-9] ]]
	# the oracle stops at the same places
	fg --separate-stderr fgr-unwind --compare -q "$BATS_TEST_TMPDIR/s.fgr"
	[ "$status" -eq 0 ]
}

# golden NAME: the committed snapshots of a static fixture unwind to the committed text
golden() {
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/symfs"
	xz -dc "$G/fixture-$1.xz" >"$d/symfs/fixture-$1"
	xz -dc "$G/$1.fgr.xz" >"$d/s.fgr"
	# (not through `run`, which would drop the last blank line)
	fgr-unwind --compare --check 100 --symfs "$d/symfs" --proc-root "$d/noproc" "$d/s.fgr" \
		>"$d/out" 2>"$d/err"
	sed 's/^/# /' "$d/err" >&3
	assert_golden "$G/$1.out"
}

@test "golden snapshots of the gcc-built static fixture unwind to the same stacks anywhere" {
	requires xz
	golden gcc-static
}

@test "golden snapshots of the clang-built static fixture unwind to the same stacks anywhere" {
	requires xz
	golden clang-static
}

@test "a golden snapshot whose binary is not the one recorded: no file, counted, no crash" {
	requires xz
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/symfs"
	# the clang binary under the gcc one's name: its build-id differs
	xz -dc "$G/fixture-clang-static.xz" >"$d/symfs/fixture-gcc-static"
	xz -dc "$G/gcc-static.fgr.xz" >"$d/s.fgr"
	fg --separate-stderr fgr-unwind -q --symfs "$d/symfs" --proc-root "$d/noproc" "$d/s.fgr"
	echo "# ${stderr_lines[-1]}" >&3
	[ "$status" -eq 0 ]
	[[ ${stderr_lines[-1]} == *"no unwind information "[1-9]*", complete 0 "* ]]
}

@test "fgr-unwind refuses a corrupt stream with the byte offset" {
	local d=$BATS_TEST_TMPDIR
	snap gcc-pie
	head -c 3000 "$d/s.fgr" >"$d/cut.fgr"
	fg -1 --separate-stderr fgr-unwind -q "$d/cut.fgr"
	[[ $stderr == "fgr-unwind: '$d/cut.fgr': truncated "*" at byte "* ]]
}
