#!/usr/bin/env bats
# lib/python through its oracle, tests/tools/pystack: the Python stacks of live
# CPython processes, read from their memory, under every Python on the machine --
# Debian's /usr/bin/python3 (3.11, the interpreter in the executable) and pyenv's
# 3.8 to 3.13 (libpython3.X.so, no frame pointers).  A version not installed is
# skipped, which strict mode (CI, with the same versions) makes a failure.
#
# tests/data/python/hotcold.py's main() calls hot() and cold() 70/30 forever
# (Worker.run does the same in a second thread with --threads).
bats_require_minimum_version 1.5.0
load helpers

load python

# the frames of thread TID in pystack's $output, one a line, the file names cut off
frames_of() { # TID
	awk -v tid="$1" '/^thread / { on = ($2 == tid) } on && /^\t/ { sub(/^\t/, ""); print }' \
		<<<"$output"
}

# strip_leaf FRAMES: the frames (innermost first) less hotcold.py's leaves: spin, if there,
# then hot or cold, if there (not between two calls); sets HOTCOLD when hot or cold was
strip_leaf() {
	local s=${1#"py::spin:$PROG"$'\n'}
	HOTCOLD=0
	if [[ $s == "py::hot:$PROG"$'\n'* || $s == "py::cold:$PROG"$'\n'* ]]; then
		HOTCOLD=1
		s=${s#*$'\n'}
	fi
	printf '%s\n' "$s"
}

# check_main_stack FRAMES: the main thread's stack as hotcold.py makes it: its leaves,
# then main, then <module>, every frame of hotcold.py.  Sets HOTCOLD as strip_leaf.
check_main_stack() {
	strip_leaf "$1" >"$BATS_TEST_TMPDIR/rest"
	if [ "$(cat "$BATS_TEST_TMPDIR/rest")" != "py::main:$PROG"$'\n'"py::<module>:$PROG" ]; then
		echo "unexpected main stack:" >&2
		echo "$1" >&2
		return 1
	fi
}

# pystack_main 3.X|debian: pystack on hotcold.py names its main thread's Python stack,
# each of 8 reads; hot or cold shows in most
pystack_main() {
	local which=$1 i seen=0 minor
	start "$which"
	for i in 1 2 3 4 5 6 7 8; do
		fg --separate-stderr pystack "$PID"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		minor=$(head -1 <<<"$output" | awk '{ print $2 }')
		[ "$which" = debian ] || [ "$minor" = "$which" ]
		# one thread, the process's own, named as /proc names it
		[ "$(grep -c '^thread ' <<<"$output")" -eq 1 ]
		grep -q "^thread $PID $(cat "/proc/$PID/comm")\$" <<<"$output"
		check_main_stack "$(frames_of "$PID")"
		seen=$((seen + HOTCOLD))
	done
	[ "$seen" -ge 4 ]
}

# pystack_threads 3.X|debian: two threads, each with its own stack, each a thread of the
# process; the worker's method named by its qualified name from 3.11; each thread's
# state found again through its pthread_getspecific() slot (-t), as BPF is to find it
pystack_threads() {
	local which=$1 tids worker
	start "$which" --threads
	# the worker has started when the process has two threads
	wait_until 10 test "$(ls "/proc/$PID/task" | wc -l)" -eq 2
	fg --separate-stderr pystack -t "$PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(awk '/^thread / && $5 == $7 && $5 != "0x0"' <<<"$output" | wc -l)" -eq 2 ]
	tids=$(awk '/^thread / { print $2 }' <<<"$output" | sort -n)
	[ "$tids" = "$(ls "/proc/$PID/task" | sort -n)" ]
	check_main_stack "$(frames_of "$PID")"
	worker=$(awk '/^thread / { print $2 }' <<<"$output" | grep -vx "$PID")
	# before 3.11 a frame is named by co_name: no class
	local run=py::Worker.run boot=py::Thread._bootstrap
	case $(head -1 <<<"$output" | awk '{ print $2 }') in
	3.8 | 3.9 | 3.10) run=py::run boot=py::_bootstrap ;;
	esac
	strip_leaf "$(frames_of "$worker")" >"$BATS_TEST_TMPDIR/worker"
	[ "$(head -1 "$BATS_TEST_TMPDIR/worker")" = "$run:$PROG" ]
	# the thread's outermost frame is threading's
	tail -1 "$BATS_TEST_TMPDIR/worker" | grep -q "^$boot:.*/threading.py\$"
}

# offsets_match 3.X|debian: lib/python's table is what CPython's own headers say
offsets_match() {
	local which=$1 inc
	[ -n "$(python_bin "$which")" ] || skip "no python $which here"
	requires cc
	inc=$(python_headers "$which")
	[ -f "$inc/Python.h" ] || skip "no headers for python $which (python3-dev)"
	fg cc -std=gnu11 -Wall -Werror -DPy_BUILD_CORE -I"$inc" -I"$inc/internal" \
		-o "$BATS_TEST_TMPDIR/offsets" "$DATA/python/offsets.c"
	[ "$status" -eq 0 ]
	"$BATS_TEST_TMPDIR/offsets" >"$BATS_TEST_TMPDIR/headers"
	local minor
	minor=$(head -1 "$BATS_TEST_TMPDIR/headers" | awk '{ print $2 }')
	[ "$which" = debian ] || [ "$minor" = "$which" ]
	pystack --offsets "$minor" >"$BATS_TEST_TMPDIR/table"
	diff -u "$BATS_TEST_TMPDIR/headers" "$BATS_TEST_TMPDIR/table"
}

@test "the offsets of 3.8 are CPython 3.8's headers'" { offsets_match 3.8; }
@test "the offsets of 3.9 are CPython 3.9's headers'" { offsets_match 3.9; }
@test "the offsets of 3.10 are CPython 3.10's headers'" { offsets_match 3.10; }
@test "the offsets of 3.11 are CPython 3.11's headers'" { offsets_match 3.11; }
@test "the offsets of 3.12 are CPython 3.12's headers'" { offsets_match 3.12; }
@test "the offsets of 3.13 are CPython 3.13's headers'" { offsets_match 3.13; }
@test "the offsets of Debian's python3 are its headers'" { offsets_match debian; }

@test "pystack: main, hot and cold under 3.8" { pystack_main 3.8; }
@test "pystack: main, hot and cold under 3.9" { pystack_main 3.9; }
@test "pystack: main, hot and cold under 3.10" { pystack_main 3.10; }
@test "pystack: main, hot and cold under 3.11" { pystack_main 3.11; }
@test "pystack: main, hot and cold under 3.12" { pystack_main 3.12; }
@test "pystack: main, hot and cold under 3.13" { pystack_main 3.13; }
@test "pystack: main, hot and cold under Debian's python3 (linked into the executable)" {
	pystack_main debian
	[ "$(head -1 <<<"$output" | awk '{ print $3 }')" = "$(readlink -f /usr/bin/python3)" ]
}

@test "pystack: two threads under 3.8" { pystack_threads 3.8; }
@test "pystack: two threads under 3.9" { pystack_threads 3.9; }
@test "pystack: two threads under 3.10" { pystack_threads 3.10; }
@test "pystack: two threads under 3.11" { pystack_threads 3.11; }
@test "pystack: two threads under 3.12" { pystack_threads 3.12; }
@test "pystack: two threads under 3.13" { pystack_threads 3.13; }
@test "pystack: two threads under Debian's python3" { pystack_threads debian; }

@test "pystack -l: each frame's first line" {
	start 3.12
	fg pystack -l "$PID"
	[ "$status" -eq 0 ]
	local line
	line=$(grep -n '^def main' "$PROG" | cut -d: -f1)
	frames_of "$PID" | grep -qx "py::main:$PROG:$line"
	frames_of "$PID" | grep -qx "py::<module>:$PROG:1"
}

@test "pystack: a Python the table does not know (3.7) is reported, not guessed" {
	start 3.7
	fg --separate-stderr pystack "$PID"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "pystack: process $PID: python 3.7 is not supported" ]
}

@test "pystack: a process that is not Python, and one that is gone" {
	sleep 30 &
	PID=$!
	fg --separate-stderr pystack "$PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pystack: process $PID: no python interpreter" ]
	kill "$PID"
	wait "$PID" || true
	fg --separate-stderr pystack "$PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pystack: process $PID: No such process" ]
	PID=
}

@test "pystack: processes exiting while read: no crash, the failure said" {
	local py i k was_read gone=0 ok=0 early=0
	py=$(python_bin 3.12)
	[ -n "$py" ] || skip "no python 3.12 here"
	for i in $(seq 1 12); do
		# a Python that runs some 100 ms of its program, then exits
		"$py" -c 'import sys
def f(n): return f(n - 1) if n else sum(range(200000))
for _ in range(20): f(50)' &
		PID=$!
		# read it until it is gone (refusals before its first read: it is starting)
		was_read=0
		for k in $(seq 1 60); do
			fg --separate-stderr pystack "$PID"
			case $status in
			0) ok=$((ok + 1)) was_read=1 ;;
			1) [[ $stderr == "pystack: process $PID"* ]] || [[ $stderr == "pystack: "*"reads failed"* ]] ||
				{ echo "unexpected: $stderr" >&2; false; }
			   [ $was_read = 1 ] || { early=$((early + 1)); continue; }
			   gone=$((gone + 1))
			   break ;;
			*) false ;;
			esac
		done
		wait "$PID" || true
	done
	PID=
	echo "# $ok reads; $gone processes refused once gone, $early refusals while starting" >&3
	[ "$gone" -gt 0 ]
}

@test "pystack: usage" {
	fg --separate-stderr pystack
	[ "$status" -eq 2 ]
	[[ $stderr == *"usage: pystack [-lt] PID"* ]]
	fg --separate-stderr pystack --offsets 3.14
	[ "$status" -eq 1 ]
	[ "$stderr" = "pystack: python 3.14: not in the table" ]
	fg --separate-stderr pystack 0
	[ "$status" -eq 2 ]
}
