#!/usr/bin/env bats
# Unwinding stack snapshots: the fixtures (tests/unwind/, built by gcc and
# clang without frame pointers) take snapshots of themselves on SIGPROF
# (tests/unwind/snap.c, no root, no BPF), tests/tools/fgr-snap makes them a
# record stream as fg-sample --call-graph dwarf writes it, and fg-sym unwinds
# them with lib/cfi's tables and with the libdwfl oracle: the same frames,
# whole stacks.  The golden snapshots of tests/data/unwind unwind to the same
# text on any machine.
bats_require_minimum_version 1.5.0
load helpers
load unwind

U=$FG_BUILD/unwind
G=$DATA/unwind

# snap FIXTURE [SIZE]: run a fixture (80 ms of CPU a mode), its snapshots as a record stream in $BATS_TEST_TMPDIR/s.fgr
snap() {
	local d=$BATS_TEST_TMPDIR
	FG_SNAP_OUT=$d/s.snap FG_SNAP_SIZE=${2:-8192} "$U/fixture-$1" 80 >/dev/null
	fgr-snap "$d/s.snap" >"$d/s.fgr"
}

# sym_snaps ARGS...: fg-sym on the snapshots, no kernel symbols; text in $d/out, summary in $d/err
sym_snaps() {
	local d=$BATS_TEST_TMPDIR
	# (not through `run`, which would drop the last blank line)
	fg-sym -v --kallsyms /dev/null "$@" >"$d/out" 2>"$d/err"
	local rc=$?
	sed 's/^/# /' "$d/err" >&3
	return $rc
}

# both ARGS...: the tables and the oracle give the same text, frame for frame (but where
# libdwfl stops in ld.so's lazy binding: oracle_text)
both() {
	local d=$BATS_TEST_TMPDIR
	sym_snaps --unwinder libdw "$@"
	mv "$d/out" "$d/out.libdw"
	sym_snaps "$@"
	diff -u <(oracle_text "$d/out.libdw" "$d/out") "$d/out"
}

# whole FIXTURE: at least 99% of the stacks whole and named, the two unwinders agree on every one
whole() {
	local d=$BATS_TEST_TMPDIR
	snap "$1"
	both "$d/s.fgr"
	at_least_whole 99 "$d/out" || {
		not_whole "$d/out" >&2
		return 1
	}
	# every mode shows up (at 250 Hz, 80 ms a mode gives about twenty stacks
	# each; realigned shares its mode with with_alloca, about ten)
	every_mode "$d/out"
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
	# the handler, the trampoline (named by its CFI where libc has no symbol for it), then the
	# interrupted raise(), named at its own address
	awk 'BEGIN { RS = "" } / on_usr1\+/ { if ($0 !~ /on_usr1\+[^\n]*\n[^\n]* __restore_rt\+0x0 \([^)]*libc[^)]*\)\n[^\n]*(pthread_kill|raise)/) bad++; n++ }
		END { exit bad || !n }' "$o"
}

@test "a snapshot too small ends the stacks early, counted by reason, and the oracle stops there too" {
	snap gcc-pie 1024
	both "$BATS_TEST_TMPDIR/s.fgr"
	grep -qE ' ended early \([1-9][0-9]* snapshot too small,' "$BATS_TEST_TMPDIR/err"
}

# golden NAME: the committed snapshots of a static fixture unwind to the committed text
golden() {
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/symfs"
	xz -dc "$G/fixture-$1.xz" >"$d/symfs/fixture-$1"
	xz -dc "$G/$1.fgr.xz" >"$d/s.fgr"
	both --symfs "$d/symfs" --proc-root "$d/noproc" "$d/s.fgr"
	assert_golden "$G/$1.out"
	# and every one whole
	grep -qE ' stacks unwound: ([0-9]+) whole, 0 ended early' "$d/err"
	[ "$(whole_stacks "$d/out")" = "$(whole_stacks "$G/$1.out" | awk '{ print $2, $2, 0 }')" ]
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
	sym_snaps --symfs "$d/symfs" --proc-root "$d/noproc" "$d/s.fgr"
	grep -qE ' 0 whole, 44 ended early \(.* 44 no file\)' "$d/err"
	# each stack is its leaf, unnamed
	[ "$(grep -c 'fixture-gcc-static)$' "$d/out")" -eq 44 ]
	[ "$(grep -c '\[unknown\]' "$d/out")" -eq 44 ]
}

@test "fg-sym names what comes before a corrupt snapshot, and says where it broke" {
	local d=$BATS_TEST_TMPDIR at
	snap gcc-pie
	# the third sample's snapshot says it holds 18 registers, where its mask has 17
	at=$(fgr-dump "$d/s.fgr" | awk '/^sample @/ && ++n == 3 { print substr($2, 2); exit }')
	[ -n "$at" ]
	printf '\x12\x00\x00\x00' | dd of="$d/s.fgr" bs=1 seek=$((at + 76)) conv=notrunc 2>/dev/null
	fg -1 --separate-stderr fg-sym --kallsyms /dev/null "$d/s.fgr"
	[[ $stderr == *"fg-sym: '$d/s.fgr': "*" at byte $at"* ]]
	# the two samples before it are written, unwound
	[ "$(grep -c 'cpu-clock:' <<<"$output")" -eq 2 ]
	[ "$(grep -c ' main+' <<<"$output")" -eq 2 ]
}
