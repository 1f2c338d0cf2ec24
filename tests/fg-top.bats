#!/usr/bin/env bats
# fg-top: driven in a real terminal (tmux: send-keys, capture-pane) on fixed inputs,
# checked against fg-fold's numbers; its batch output; bad input; and live, for real,
# behind fg-sample | fg-sym (root, BPF).
bats_require_minimum_version 1.5.0
load helpers

data=$TOP/tests/data/fg-top

setup() {
	requires tmux
	cd "$BATS_TEST_TMPDIR"
	# a tmux server of the test's own, with no user configuration
	SOCK=fg-top-$$-$BATS_TEST_NUMBER
	cat >tmux.conf <<-'EOF'
		set -g default-terminal tmux-256color
		set -g remain-on-exit on
		set -g status off
	EOF
}

teardown() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	if [ -n "${LIVE_PID:-}" ]; then
		kill "$LIVE_PID" 2>/dev/null || true
	fi
}

t() { tmux -L "$SOCK" "$@"; }

# start COLS ROWS COMMAND: run COMMAND (a shell line) in a new terminal of that size; its
# exit status goes to ./status (tmux 3.3 may leave a finished pane's process unreaped)
start() {
	local cols=$1 rows=$2
	shift 2
	rm -f status
	t -f tmux.conf new-session -d -s top -x "$cols" -y "$rows" \
		"cd '$PWD' && { $*; }; echo \$? >status.new && mv status.new status"
}

screen() { t capture-pane -p -t top; }

# wait_screen REGEX [SECONDS]: until the screen matches (extended regex) and is drawn to its
# last row (fg-top's status line), else fail showing it
wait_screen() {
	local end=$((SECONDS + ${2:-10}))
	while ((SECONDS <= end)); do
		screen >screen.txt
		grep -qE -- "$1" screen.txt && [ -n "$(tail -n 1 screen.txt | tr -d ' ')" ] && return 0
		sleep 0.1
	done
	echo "the screen never showed /$1/:" >&2
	cat screen.txt >&2
	return 1
}

# quit: q, then the exit status of the command in the terminal
quit() {
	t send-keys -t top q
	local i
	for i in $(seq 100); do
		[ -s status ] && break
		sleep 0.1
	done
	[ -s status ] || { screen >&2; echo "still running" >&2; }
	cat status 2>/dev/null
}

# fg-fold's numbers for FILE: "SELF TOTAL KIND NAME" for every function, as fg-top
# computes them (self: the leaf's share; total: each stack once per function)
fold_numbers() {
	fg-fold --all "$1" | awk '
		function kind(f) { return f ~ /_\[k\]$/ ? "[k]" : f ~ /_\[j\]$/ ? "[j]" : f ~ /_\[i\]$/ ? "[i]" : "[.]" }
		function bare(f) { sub(/_\[[kji]\]$/, "", f); return f }
		{
			n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1)
			k = split(stack, fr, ";"); all += n
			self[fr[k]] += n
			delete seen
			for (i = 2; i <= k; i++) if (!(fr[i] in seen)) { seen[fr[i]] = 1; tot[fr[i]] += n }
		}
		END {
			for (f in tot)
				printf "%.1f%% %.1f%% %s %s\n", 100 * self[f] / all, 100 * tot[f] / all, kind(f), bare(f)
		}' | LC_ALL=C sort
}

@test "the top view's first lines and percentages are fg-fold's numbers" {
	fold_numbers "$data/capture.txt" >expected
	start 100 30 fg-top "$data/capture.txt"
	wait_screen '201 samples of cpu-clock'
	# the ten first rows: self total kind name
	sed -n '4,13p' screen.txt | awk '{ print $1, $2, $3, $4 }' >shown
	cat shown >&3
	[ "$(wc -l <shown)" -eq 10 ]
	# each is fg-fold's, and they come by self share
	LC_ALL=C sort shown | LC_ALL=C comm -23 - expected >missing
	[ ! -s missing ] || { cat missing >&2; false; }
	awk '{ gsub("%", "") } NR > 1 && $1 > prev { exit 1 } { prev = $1 }' shown
	[ "$(quit)" = 0 ]
}

@test "the top view sorts by total with s, and lists the processes" {
	fold_numbers "$data/capture.txt" | sort -t' ' -k2,2gr | head -n 1 >first
	start 100 30 fg-top "$data/capture.txt"
	wait_screen '201 samples'
	t send-keys -t top s
	wait_screen '\*Total'
	[ "$(sed -n 4p screen.txt | awk '{ print $1, $2, $3, $4 }')" = "$(cat first)" ]
	t send-keys -t top 2
	wait_screen 'Share +Process'
	grep -qE '^ +[0-9.]+% +split7030$' screen.txt
	grep -qE '^ +[0-9.]+% +syscalls$' screen.txt
	[ "$(quit)" = 0 ]
}

@test "the flame graph: move, zoom into a frame, search, with the matched share" {
	start 80 20 fg-top "$data/flame.folded"
	wait_screen '4 folded stacks'
	t send-keys -t top 3
	wait_screen '^all +total 100.0%'
	# down to app, main, then its widest child: hot
	t send-keys -t top j j j
	wait_screen '^hot \[\.\] +total 70\.0% +self 0\.0%'
	t send-keys -t top Enter
	wait_screen '70.0% of zoom|100.0% of zoom'
	# zoomed: hot spans the width, its children in proportion (spin 60, work 10 of 70)
	row=$(grep -n '^hot *$' screen.txt | head -n 1 | cut -d: -f1)
	[ "$(sed -n "$((row + 1))p" screen.txt | grep -o 'spin *' | wc -c)" -ge 68 ]
	t send-keys -t top / s p i n Enter
	wait_screen 'Matched: 80\.0% \(85\.7% of zoom\)'
	# k goes up, towards the root
	t send-keys -t top k
	wait_screen '^main \[\.\] +total 100\.0%'
	# Esc zooms out to hot's parent
	t send-keys -t top Escape
	wait_screen 'Matched: 80\.0% \(80\.0% of zoom\)'
	t send-keys -t top BSpace BSpace BSpace
	wait_screen 'Matched: 80\.0% +/spin'
	[ "$(quit)" = 0 ]
}

@test "a bad regular expression is said, and the last search stays" {
	start 80 20 fg-top "$data/flame.folded"
	wait_screen '4 folded stacks'
	t send-keys -t top / '(' Enter
	wait_screen 'bad expression'
	t send-keys -t top / c o l d Enter
	wait_screen 'Matched: 30\.0%'
	[ "$(quit)" = 0 ]
}

@test "a terminal resized to 40 columns: lines fit, names are cut, numbers stay whole" {
	start 100 24 fg-top "$data/capture.txt"
	wait_screen '201 samples'
	t resize-window -t top -x 40 -y 20
	wait_screen '^.{0,40}$' 5
	sleep 1.2
	screen >screen.txt
	cat screen.txt >&3
	awk 'length($0) > 40 { exit 1 }' screen.txt
	grep -qE '^ +[0-9.]+% +[0-9.]+% +\[[.kji]\] +__libc_start_call\.\.$' screen.txt
	t send-keys -t top 3
	wait_screen '^all +total 100\.0%'
	awk 'length($0) > 40 { exit 1 }' screen.txt
	[ "$(quit)" = 0 ]
}

@test "a resize storm while input flows: the terminal's signals reach the drawing thread only" {
	start 100 30 "perf-stream -r 20000 -d 30 -n 3000 2>/dev/null | fg-top"
	wait_screen 'samples/s'
	top=$(pgrep -P "$(t display -p -t top '#{pane_pid}')" -x fg-top)
	# ncurses' SIGWINCH handler (and SIGTSTP's, and ours for SIGINT and SIGTERM) ran on
	# whichever thread the kernel chose, the reader's too, beside doupdate() on the
	# drawing thread: a crash in 2 of 4 storms.  The reader blocks them all.
	local task blk n=0
	for task in /proc/"$top"/task/*; do
		[ "${task##*/}" = "$top" ] && continue
		blk=$(awk '$1 == "SigBlk:" { print $2 }' "$task/status")
		echo "# reader ${task##*/}: SigBlk $blk" >&3
		for sig in 2 15 20 28; do
			((0x$blk >> (sig - 1) & 1))
		done
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
	# two seconds of sizes changing as fast as the terminal can say so, each with a
	# SIGWINCH of its own, and as many more sent: fg-top draws on
	python3 - "$(t display -p -t top '#{pane_tty}')" "$top" >storm.out <<-'EOF'
		import fcntl, os, random, signal, struct, sys, termios, time
		fd, pid = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY), int(sys.argv[2])
		end, n = time.monotonic() + 2, 0
		while time.monotonic() < end:
		    size = struct.pack("HHHH", random.randint(0, 60), random.randint(0, 250), 0, 0)
		    fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
		    os.kill(pid, signal.SIGWINCH)
		    n += 1
		# the terminal's own size again
		fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
		os.kill(pid, signal.SIGWINCH)
		print(n)
	EOF
	echo "# $(cat storm.out) resizes" >&3
	kill -0 "$top"
	wait_screen 'samples/s'
	[ "$(quit)" = 0 ]
}

@test "q quits at once, however much the pipe holds that is still to fold" {
	# an endless stream of 200,000 distinct functions of one process, over and over: the
	# pipe is full whenever fg-top reads it.  Quitting waited for the reader to fold what
	# it had read, more than 20 s when that crawled.  (Under ASan, most of the time left
	# is LeakSanitizer's look at the heap at the exit.)
	start 100 30 "awk 'BEGIN { for (i = 0; ; i++) printf \"p;f%07d 1\\n\", i % 200000 }' | fg-top"
	wait_screen 'samples/s'
	sleep 4
	local begin=$EPOCHREALTIME i
	t send-keys -t top q
	for i in $(seq 200); do
		[ -s status ] && break
		sleep 0.05
	done
	local took=$(awk -v b="$begin" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.2f", e - b }')
	echo "# quit took $took s" >&3
	[ "$(cat status)" = 0 ]
	awk -v t="$took" 'BEGIN { exit !(t < 2) }'
}

@test "escape sequences in names show as text and never reach the terminal" {
	start 100 20 "LANG=C.UTF-8 LC_ALL=C.UTF-8 fg-top '$data/hostile.txt'"
	wait_screen '4 samples'
		grep -qF '\x1b]0:pwned\x07' screen.txt
	grep -qF 'csi_\u{9b}31m_red\x1b[2J' screen.txt
	grep -qF 'héllo_日本' screen.txt
	t send-keys -t top 2
	wait_screen 'Process'
	grep -qF '\x1b[2J\x1b]0:pwned_too\x07' screen.txt
	t send-keys -t top 3 j j
	wait_screen 'total'
	# the title is not set, the screen was not cleared
	[ "$(t display -p -t top '#{pane_title}')" != pwned ]
	[ "$(t display -p -t top '#{pane_title}')" != "pwned too" ]
	[ "$(quit)" = 0 ]
}

@test "outside UTF-8 (LANG=C), bytes above 0x7f show as \\xNN" {
	start 100 20 "LANG=C LC_ALL=C fg-top '$data/hostile.txt'"
	wait_screen '4 samples'
	grep -qF 'h\xc3\xa9llo_\xe6\x97\xa5\xe6\x9c\xac' screen.txt
	grep -qF 'csi_\xc2\x9b31m_red\x1b[2J' screen.txt
	[ "$(quit)" = 0 ]
}

@test "bad lines are counted on the screen, and named with their line numbers at the end" {
	start 100 20 "fg-top '$data/bad.txt' 2>err"
	wait_screen ', 8 bad lines'
	st=$(quit)
	[ "$st" = 0 ] || { echo "status $st" >&2; cat err >&2; false; }
	fg-fold "$data/bad.txt" 2>fold.err >/dev/null
	diff <(sed 's/^fg-fold:/fg-top:/' fold.err) err
}

@test "q exits 0; input that cannot be read is an error after q" {
	start 80 20 "fg-top '$data/flame.folded'"
	wait_screen '4 folded stacks'
	[ "$(quit)" = 0 ]
	t kill-server
	rm -f status
	printf 'a;b 1 2\n' >diff.folded
	start 80 20 "fg-top diff.folded 2>err"
	wait_screen 'INPUT FAILED'
	[ "$(quit)" = 1 ]
	grep -q "diff.folded: a differential profile" err
}

@test "a slow terminal costs frames, not samples" {
	start 200 60 "perf-stream -r 10000 -d 5 -n 300 2>stream.err | fg-top -m accumulate"
	wait_screen 'samples/s'
	top=$(pgrep -P "$(t display -p -t top '#{pane_pid}')" -x fg-top)
	# the flame graph (a whole new screen), then the terminal stops reading for two
	# seconds: fg-top's drawing blocks in write(2) on the terminal
	t send-keys -t top 3
	server=$(t display -p -t top '#{pid}')
	kill -STOP "$server"
	blocked=
	for i in $(seq 20); do
		grep -qx wait_woken /proc/"$top"/task/*/wchan && blocked=yes
		sleep 0.1
	done
	kill -CONT "$server"
	[ "$blocked" = yes ]
	wait_screen 'input ended' 15
	# every sample was read, and the stream never waited for the reader as long as the
	# terminal stopped (a full pipe would have held it for the two seconds)
	cat stream.err >&3
	grep -q '50000 samples of cpu-clock' screen.txt
	grep -q 'perf-stream: 50000 samples' stream.err
	awk '{ w = $(NF - 1) + 0 } END { exit !(w < 1.0) }' stream.err
	[ "$(quit)" = 0 ]
}

@test "batch: every function's numbers are fg-fold's, on every input of the corpus" {
	for f in "$data/capture.txt" "$TOP"/tests/data/collapse-perf/input/*.txt "$TOP"/tests/data/fg-fold/*.txt; do
		case $f in *srcline*) continue ;; esac
		fold_numbers "$f" >expected
		fg-top -b "$f" 2>/dev/null | awk 'NR > 2 && /^$/ { exit } NR > 2 { print $1, $2, $3, substr($0, index($0, $4)) }' |
			LC_ALL=C sort >shown
		diff expected shown || { echo "differs: $f" >&2; false; }
	done
}

@test "batch reads folded stacks and stops on what fg-fold refuses" {
	fg -0 --separate-stderr fg-top -b "$data/flame.folded"
	[ "${lines[0]}" = "# 4 folded stacks, 8 frames" ]
	[[ $output == *" 80.0%   80.0%  [.]  spin"* ]]
	[[ $output == *"100.0%  app"* ]]
	printf 'FGSTACK1\0\0\0' >bin
	fg -1 --separate-stderr fg-top -b bin
	assert_stderr_contains "fg-top: bin: binary input, not text"
	fg -1 --separate-stderr fg-top -b /nonexistent
	assert_stderr_contains "fg-top: cannot open '/nonexistent'"
}

@test "usage errors exit 2 with the usage" {
	for args in "-m sideways x" "-n 0 x" "-n 3601 x" "--input svg x" "a b" "--bogus x" "--event-filter= x" \
		"--every 1 x"; do
		# shellcheck disable=SC2086
		fg -2 --separate-stderr fg-top $args
		assert_stderr_contains "usage: fg-top"
		[ -z "$output" ]
	done
	fg -2 --separate-stderr fg-top -m sideways x
	assert_stderr_contains "fg-top: unknown mode 'sideways'"
	# the options fg-fold has too: the same words
	fg -2 --separate-stderr fg-top --input svg x
	[[ $stderr == "fg-top: unknown input format 'svg' (perf, folded or bpftrace)"* ]]
	fg -2 --separate-stderr fg-top --event-filter= x
	[[ $stderr == "fg-top: invalid event name ''"* ]]
}

@test "-h prints usage to stdout and exits 0; -V prints the version" {
	fg -0 --separate-stderr fg-top -h
	[[ ${lines[0]} == "usage: fg-top "* ]]
	[ -z "$stderr" ]
	fg -0 --separate-stderr fg-top -V
	[[ $output =~ ^fg-top\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "--help lists every option the man page documents, and no other" {
	[ "$(man_options fg-top | sort -u | wc -l)" -gt 10 ]
	diff <(man_options fg-top | sort -u) <(help_options fg-top | sort -u)
}

@test "--help's usage lines and the man page's synopsis name the same options in order" {
	diff <(man_options fg-top SYNOPSIS) <(help_options fg-top USAGE)
}

@test "live, for real: fg-sample | fg-sym | fg-top shows hot at 70% within 3 seconds" {
	requires root btf perf_event
	start 100 30 "fg-sample -F 999 -- '$WORKLOADS/split7030' 5 2>sample.err | fg-sym 2>sym.err | fg-top"
	begin=$SECONDS
	hot=
	while ((SECONDS - begin <= 3)); do
		screen >screen.txt
		hot=$(awk '$4 == "hot" { sub("%", "", $2); print $2 }' screen.txt)
		[ -n "$hot" ] && awk -v h="$hot" 'BEGIN { exit !(h >= 65 && h <= 75) }' && break
		sleep 0.2
	done
	cat screen.txt >&3
	echo "# hot: $hot% after $((SECONDS - begin)) s" >&3
	awk -v h="$hot" 'BEGIN { exit !(h >= 65 && h <= 75) }'
	[ "$(quit)" = 0 ]
}
