#!/usr/bin/env bats
# fg-sample asks each JVM it sampled for its perf map at the end of the run
# (jcmd PID Compiler.perfmap, as the process's own user), so fg-sym names the
# JIT-compiled Java methods: tests/data/java/Split.java spins in Split.spin.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	requires root btf perf_event java javac jcmd
}

teardown() {
	if [ -n "${PID:-}" ]; then
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
		rm -f "/tmp/perf-$PID.map"
	fi
}

# jvm: Split compiled and running; sets PID
jvm() {
	local d=$BATS_TEST_TMPDIR
	javac -d "$d" "$DATA/java/Split.java"
	java -cp "$d" Split >"$d/ready" &
	PID=$!
	wait_until 20 test -s "$d/ready"
}

@test "a JVM sampled writes its perf map at the end: its JIT frames are named" {
	local d=$BATS_TEST_TMPDIR
	jvm
	fg fg-sample -v -F 999 -d 3 -p "$PID" -o "$d/j.fgr"
	[ "$status" -eq 0 ]
	assert_output_contains "jvm: 1 JVMs asked for their perf maps (jcmd Compiler.perfmap): 1 written, 0 failed"
	test -s "/tmp/perf-$PID.map"
	kill "$PID"
	wait "$PID" || true
	fg-sym "$d/j.fgr" 2>/dev/null | fg-fold >"$d/j.fold"
	local all split
	all=$(awk '/^java;/ { n += $NF } END { print n + 0 }' "$d/j.fold")
	split=$(awk '/^java;.*Split\.(spin|hot|cold|main)/ { n += $NF } END { print n + 0 }' "$d/j.fold")
	echo "# $split of $all samples of java's main thread in Split's methods" >&3
	[ "$all" -ge 100 ]
	[ $((100 * split)) -ge $((80 * all)) ]
}

@test "--no-jvm-maps: no jcmd, no perf map" {
	jvm
	fg fg-sample --no-jvm-maps -F 99 -d 1 -p "$PID" -o "$BATS_TEST_TMPDIR/n.fgr"
	[ "$status" -eq 0 ]
	[[ $output != *"jvm:"* ]]
	[ ! -e "/tmp/perf-$PID.map" ]
}
