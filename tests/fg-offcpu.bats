#!/usr/bin/env bats
# Off-CPU time through the pipeline: fg-sample --off-cpu and --wall (as root,
# with BPF, for real), fg-sym's offcpu-time samples, fg-fold --wall and
# --state, fg-svg's off-CPU graphs.  The truths: a 70/30 split of waits and
# their total against what the workload measured, offcputime on the same
# run, a process gone before fg-sym, a half-sleeping workload's wall-clock
# split.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	OUT=$BATS_TEST_TMPDIR/run.fgr
}

# sum FOLDED REGEX: the counts of the folded lines whose stack (without its count) matches REGEX
sum() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) t += n } END { printf "%.0f\n", t }' "$1"
}

# not_seen: the waits fg-sample's summary ($stderr) says it did not see begin or end
not_seen() {
	local n=0
	[[ $stderr =~ ([0-9]+)\ waits\ not\ recorded:\ the\ switch ]] && n=${BASH_REMATCH[1]}
	[[ $stderr =~ ([0-9]+)\ waits\ lost:\ the\ kernel\ did\ not ]] && n=$((n + BASH_REMATCH[1]))
	echo "$n"
}

# within A B PCT: A is within PCT percent of B
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && 100 * d / b <= p) }'
}

# --- down the pipeline: fg-sym, fg-fold, fg-svg (no root needed) ---

# a stream of a CPU sample, a wait asleep (S) and one preempted still open at the end (R+)
waits_stream() {
	fgr-make >"$BATS_TEST_TMPDIR/w.fgr" <<-'EOF'
		sample pid=42 comm=w time=5000000000 weight=1 u=1111
		sample pid=42 comm=w time=5070000000 weight=70000000 flags=0x10600 k=ffffffff81000000 u=2222
		sample pid=42 tid=43 comm=w time=5090000000 weight=3000 flags=0x90e00 u=3333
		lost count=4 reason=5
		lost count=2 reason=6
	EOF
	# the kernel's symbols, from a file: the same names on any host
	printf 'ffffffff81000000 T __schedule\nffffffff81001000 T _etext\n' >"$BATS_TEST_TMPDIR/ks"
}

@test "fg-sym prints waits as perf prints offcpu-time: the ns in the period, the state after the event" {
	waits_stream
	fg --separate-stderr fg-sym -v --kallsyms "$BATS_TEST_TMPDIR/ks" "$BATS_TEST_TMPDIR/w.fgr"
	[ "$status" -eq 0 ]
	[[ $output == *"w    42/42    [000]     5.000000:          1 cpu-clock: "$'\n'* ]]
	[[ $output == *"w    42/42    [000]     5.070000:   70000000 offcpu-time: prev_state=S"$'\n'* ]]
	[[ $output == *"w    42/43    [000]     5.090000:       3000 offcpu-time: prev_state=R+ open=1"$'\n'* ]]
	# what was not recorded is said, by kind, and so are the open waits
	assert_stderr_contains "the sampler lost 4 waits (their ring buffer was full), 2 waits it did not follow (no memory to keep them)"
	assert_stderr_contains "1 of 2 waits were still going on when the run ended: written with their time so far (open=1)"
}

@test "fg-fold --wall folds waits with CPU samples, each ending in [off-cpu]; --state keeps waits by state" {
	waits_stream
	fg-sym --kallsyms "$BATS_TEST_TMPDIR/ks" "$BATS_TEST_TMPDIR/w.fgr" >"$BATS_TEST_TMPDIR/w.perf" 2>/dev/null
	fg fg-fold --wall "$BATS_TEST_TMPDIR/w.perf"
	[ "$status" -eq 0 ]
	[ "$output" = $'w;[unknown] 1\nw;[unknown];[off-cpu] 3000\nw;[unknown];__schedule;[off-cpu] 70000000' ]
	# without --wall, the first event alone
	fg --separate-stderr fg-fold "$BATS_TEST_TMPDIR/w.perf"
	[ "$output" = "w;[unknown] 1" ]
	assert_stderr_contains "folded only 'cpu-clock' events (the first seen); skipped 2 samples"
	fg fg-fold --state S "$BATS_TEST_TMPDIR/w.perf"
	[ "$output" = "w;[unknown];__schedule 70000000" ]
	fg fg-fold --event-filter offcpu-time --state R+ --state D "$BATS_TEST_TMPDIR/w.perf"
	[ "$output" = "w;[unknown] 3000" ]
	fg --separate-stderr fg-fold --state Q "$BATS_TEST_TMPDIR/w.perf"
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-fold: invalid task state 'Q' (R, R+, S, D, T, t, X, Z, P or I)"$'\n'"usage: "* ]]
}

@test "fg-svg: --colors io gives the off-CPU title, --countname ns the times, [off-cpu] its own colour" {
	printf 'main;rest;[off-cpu] 1500000000\nmain;compute;burn 2500000\n' >"$BATS_TEST_TMPDIR/w.folded"
	fg fg-svg --colors io --countname ns "$BATS_TEST_TMPDIR/w.folded"
	[ "$status" -eq 0 ]
	assert_output_contains '>Off-CPU Time Flame Graph</text>'
	assert_output_contains '<title>all (1,502,500,000 ns, 100%, 1.50 s)</title>'
	assert_output_contains '<title>burn (2,500,000 ns, 0.17%, 2.50 ms)</title>'
	fg fg-svg --colors io --inverted --countname us "$BATS_TEST_TMPDIR/w.folded"
	assert_output_contains '>Off-CPU Time Icicle Graph</text>'
	assert_output_contains '<title>burn (2,500,000 us, 0.17%, 2.50 s)</title>'
	# a title given is kept; other count names get no time
	fg fg-svg --colors io --title waits "$BATS_TEST_TMPDIR/w.folded"
	assert_output_contains '>waits</text>'
	[[ $output != *"Off-CPU"* && $output != *", 1.50 s)"* ]]
	# the hot palette's reds and yellows, and the off-CPU blue for [off-cpu]: r == g < b
	fg fg-svg "$BATS_TEST_TMPDIR/w.folded"
	run python3 -c '
import re, sys
svg = sys.stdin.read()
for name, fill in re.findall(r"<title>([^ <]+) \([^<]*</title><rect [^>]*fill=\"#([0-9a-f]{6})\"", svg):
    r, g, b = (int(fill[i:i + 2], 16) for i in (0, 2, 4))
    blue = r == g and b > r + 40
    if blue != (name == "[off-cpu]"):
        sys.exit(name + " #" + fill)
' <<<"$output"
	[ "$status" -eq 0 ]
}

@test "fg-sample: the off-CPU options are checked, each refusal a usage error" {
	fg --separate-stderr fg-sample --off-cpu --min-block 500 --max-block 100 -o /dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sample: --min-block 500 is above --max-block 100"$'\n'"usage: "* ]]
	fg --separate-stderr fg-sample --wall --call-graph dwarf -o /dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sample: --call-graph dwarf and --wall exclude each other: waits carry frame-pointer stacks only"$'\n'* ]]
	fg --separate-stderr fg-sample --off-cpu --min-block 1ms -o /dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sample: invalid --min-block '1ms' (microseconds)"$'\n'* ]]
	# the waits are kept in each thread's own storage: there is no table to size
	fg --separate-stderr fg-sample --off-cpu --max-waiting 16 -o /dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sample: unrecognized option '--max-waiting'"$'\n'* ]]
	fg --separate-stderr fg-sample -h
	[[ $output == *"[--off-cpu | --wall] [--min-block us] [--max-block us]"* ]]
}

# --- for real: fg-sample --off-cpu, as root ---

# offcpu7030 under fg-sample --off-cpu OPTIONS: $OUT, the workload's measures in
# $BATS_TEST_TMPDIR/measured; $ROUNDS, its arguments (default 100 rounds of 7 and 3 ms)
run_7030() {
	fg --separate-stderr fg-sample -v --off-cpu "$@" -o "$OUT" -- \
		sh -c "exec $WORKLOADS/offcpu7030 ${ROUNDS:-100 7 3} >'$BATS_TEST_TMPDIR/measured'"
	[ "$status" -eq 0 ]
	echo "# $stderr" >&3
}

@test "--off-cpu: each wait as long as the workload measured it, 70/30, their total within 5%" {
	requires root btf
	# sleeps long enough that the time to wake (tens of microseconds, more under load) does
	# not move the split the workload itself measures
	ROUNDS="20 70 30" run_7030
	# named although the process is gone: from the mappings recorded with the waits
	fg-sym "$OUT" >"$BATS_TEST_TMPDIR/run.perf" 2>"$BATS_TEST_TMPDIR/sym.err"
	fg-fold "$BATS_TEST_TMPDIR/run.perf" >"$BATS_TEST_TMPDIR/run.folded"
	fg-fold --samples "$BATS_TEST_TMPDIR/run.perf" >"$BATS_TEST_TMPDIR/run.count"
	local long short mlong mshort nl ns_ nn
	local rl='^offcpu7030;.*;main;wait_long;.*;__x64_sys_clock_nanosleep;.*;__schedule$'
	local rs='^offcpu7030;.*;main;wait_short;.*;__x64_sys_clock_nanosleep;.*;__schedule$'
	long=$(sum "$BATS_TEST_TMPDIR/run.folded" "$rl")
	short=$(sum "$BATS_TEST_TMPDIR/run.folded" "$rs")
	nl=$(sum "$BATS_TEST_TMPDIR/run.count" "$rl")
	ns_=$(sum "$BATS_TEST_TMPDIR/run.count" "$rs")
	mlong=$(awk '/^wait_long/ { print $2 }' "$BATS_TEST_TMPDIR/measured")
	mshort=$(awk '/^wait_short/ { print $2 }' "$BATS_TEST_TMPDIR/measured")
	nn=$(not_seen)
	echo "# fg: wait_long $long ns in $nl waits, wait_short $short ns in $ns_; measured (20 each): $mlong, $mshort; not seen $nn" >&3
	# one record a wait: 20 of each, but for those said not seen
	[ $((nl + ns_ + nn)) -ge 40 ]
	[ "$nl" -ge 19 ]
	[ "$ns_" -ge 19 ]
	# each wait as long as the workload measured it, within 5%; per wait, as a
	# wait whose end the kernel did not report (counted above) is one of 40.  On a
	# busy guest the workload's own clock also counts the time it waited for a CPU
	# between its return from the kernel and its clock_gettime (a few ms at worst)
	within $((long / nl)) $((mlong / 20)) 5
	within $((short / ns_)) $((mshort / 20)) 5
	# so the waits split 70/30, within 2 points
	awk -v l="$((long / nl))" -v s="$((short / ns_))" 'BEGIN { p = 100 * l / (l + s); print "# wait_long " p "%"; exit !(p >= 68 && p <= 72) }' >&3
	# and in all, within 5% of what the workload measured of the waits recorded
	within $((long + short)) $((mlong / 20 * nl + mshort / 20 * ns_)) 5
	# the kernel stack starts at __schedule: not in the BPF program or the tracepoint
	! grep -q 'bpf_trace_run\|bpf_prog_' "$BATS_TEST_TMPDIR/run.perf"
}

@test "--off-cpu: a process that waited and exited before fg-sym ran has its waits named" {
	requires root btf
	run_7030
	! kill -0 "$(grep -m1 -o 'pid=[0-9]* ' <(fgr-dump "$OUT" | grep 'comm=offcpu7030') | cut -d= -f2)" 2>/dev/null
	fg --separate-stderr fg-sym -v "$OUT"
	[ "$status" -eq 0 ]
	assert_output_contains 'offcpu-time: prev_state=S'
	assert_output_contains ' wait_long+0x'
	assert_output_contains ' wait_short+0x'
	assert_output_contains ' main+0x'
	assert_output_contains ' do_nanosleep+0x'
	[[ $stderr == *", 0 process gone, "* ]]
}

@test "--off-cpu: a wait still going on at the end is written with its time so far, flagged open" {
	requires root btf
	fg --separate-stderr fg-sample -v --off-cpu -d 1 -o "$OUT" -- sleep 3
	[ "$status" -eq 0 ]
	[[ $stderr =~ 1\ of\ them\ still\ going\ on\ at\ the\ end\ \(([0-9.]+)\ s\ so\ far ]]
	awk -v s="${BASH_REMATCH[1]}" 'BEGIN { exit !(s > 0.8 && s < 1.5) }'
	fg --separate-stderr fg-sym -v "$OUT"
	[[ $output =~ sleep\ +[0-9/]+\ +\[[0-9]+\]\ +[0-9.]+:\ +([0-9]+)\ offcpu-time:\ prev_state=S\ open=1 ]]
	[ "${BASH_REMATCH[1]}" -gt 800000000 ] && [ "${BASH_REMATCH[1]}" -lt 1500000000 ]
	assert_output_contains ' do_nanosleep+0x'
	# (sleep may wait before its long sleep too, as it starts)
	[[ $stderr =~ fg-sym:\ 1\ of\ [0-9]+\ waits\ were\ still\ going\ on\ when\ the\ run\ ended ]]
}

@test "--off-cpu: --min-block and --max-block leave out the waits outside them, counted" {
	requires root btf
	local n ns
	# 40 rounds of 20 ms and 1 ms, limits at 10 ms: a sleep never ends early, but under load
	# a woken thread may wait long for a CPU, so a short sleep can make a long wait
	ROUNDS="40 20 1" run_7030 --min-block 10000
	fg-sym "$OUT" 2>/dev/null >"$BATS_TEST_TMPDIR/long.perf"
	# every wait written is 10 ms or more; the long sleeps are all there
	awk '/offcpu-time:/ && $5 < 10000000 { bad++ } END { exit bad > 0 }' "$BATS_TEST_TMPDIR/long.perf"
	fg-fold "$BATS_TEST_TMPDIR/long.perf" >"$BATS_TEST_TMPDIR/long.folded"
	# 20 ms each, but for those not seen to end (counted)
	ns=$(not_seen)
	[ "$(sum "$BATS_TEST_TMPDIR/long.folded" ';wait_long;')" -gt $(((40 - ns) * 20000000)) ]
	# each short sleep is either left out and counted, or written as a long wait (or its
	# start was not seen, and counted)
	n=$(grep -A12 'offcpu-time' "$BATS_TEST_TMPDIR/long.perf" | grep -c ' wait_short+' || true)
	ns=$(not_seen)
	[[ $stderr =~ left\ out:\ ([0-9]+)\ shorter\ than\ --min-block ]]
	echo "# left out ${BASH_REMATCH[1]}, short sleeps written $n, not seen to begin or end $ns" >&3
	[ $((BASH_REMATCH[1] + n + ns)) -ge 40 ] && [ "$n" -le 4 ]
	ROUNDS="40 20 1" run_7030 --max-block 10000
	fg-sym "$OUT" 2>/dev/null >"$BATS_TEST_TMPDIR/short.perf"
	awk '/offcpu-time:/ && $5 > 10000000 { bad++ } END { exit bad > 0 }' "$BATS_TEST_TMPDIR/short.perf"
	fg-fold "$BATS_TEST_TMPDIR/short.perf" >"$BATS_TEST_TMPDIR/short.folded"
	# no sleep of wait_long: no wait asleep (S) in its do_nanosleep.  A busy machine may take
	# the CPU from the thread while it is runnable: preempted in wait_long's own code (R+), or
	# as its sleep ends, when schedule() finds need_resched() set and calls __schedule()
	# again (R, not preempted: its stack is the sleep's, through do_nanosleep)
	fg-fold --state S "$BATS_TEST_TMPDIR/short.perf" >"$BATS_TEST_TMPDIR/short-S.folded"
	[ "$(sum "$BATS_TEST_TMPDIR/short-S.folded" ';wait_long;(.*;)?do_nanosleep;schedule;')" -eq 0 ]
	[ "$(sum "$BATS_TEST_TMPDIR/short.folded" ';wait_short;')" -gt 36000000 ]
	# each of the 80 sleeps is either a short wait written, or left out and counted
	n=$(grep -A12 'offcpu-time' "$BATS_TEST_TMPDIR/short.perf" | grep -c ' wait_short+' || true)
	ns=$(not_seen)
	[[ $stderr =~ ,\ ([0-9]+)\ longer\ than\ --max-block ]]
	echo "# left out ${BASH_REMATCH[1]}, short sleeps written $n, not seen to begin or end $ns" >&3
	[ $((BASH_REMATCH[1] + n + ns)) -ge 80 ] && [ "$n" -ge 36 ]
}

# offcpu_pair: fg-sample --off-cpu and offcputime -p on the same run of offcpu7030, into
# $OUT and oc.txt
offcpu_pair() {
	local gate=$BATS_TEST_TMPDIR/gate fs oc wl
	rm -f "$gate"
	mkfifo "$gate"
	$WORKLOADS/offcpu7030 -g 60 7 3 <"$gate" >"$BATS_TEST_TMPDIR/measured" 3>&- &
	wl=$!
	exec 4>"$gate"
	# only this shell holds the gate open: the workload ends when it closes it
	fg-sample --off-cpu -p "$wl" -o "$OUT" 2>"$BATS_TEST_TMPDIR/sample.err" 3>&- 4>&- &
	fs=$!
	offcputime -p "$wl" >"$BATS_TEST_TMPDIR/oc.txt" 2>"$BATS_TEST_TMPDIR/oc.err" 3>&- 4>&- &
	oc=$!
	# both attached, then the workload goes; offcputime prints while it still lives
	wait_until 10 has_link "$fs"
	wait_until 10 has_link "$oc"
	echo go >&4
	wait_until 10 grep -q wait_short "$BATS_TEST_TMPDIR/measured"
	kill -INT "$oc"
	wait "$oc"
	exec 4>&-
	wait "$wl"
	wait "$fs"
}

# oc_ns FN: offcputime's nanoseconds under FN (a block of frames, "- comm (pid)", then the
# microseconds)
oc_ns() {
	awk -v fn="$1" '/^$/ { if (hit) t += last; hit = 0; next } $1 == fn { hit = 1 } { last = $1 } END { if (hit) t += last; print t * 1000 }' "$BATS_TEST_TMPDIR/oc.txt"
}

@test "--off-cpu beside offcputime -p PID on the same run: the matching stacks' totals agree within 5%" {
	requires root btf offcputime
	offcpu_pair
	# offcputime (bcc) once printed no stack of wait_short at all in a CI run, beside the
	# other lane, wait_long's right: a run where it names none of a function's waits is
	# shown and taken again, once; fg's totals are checked against a run where it has both
	if [ "$(oc_ns wait_long)" = 0 ] || [ "$(oc_ns wait_short)" = 0 ]; then
		echo "# offcputime named no wait of a function; its output, then a second run:" >&3
		sed 's/^/# /' "$BATS_TEST_TMPDIR/oc.txt" "$BATS_TEST_TMPDIR/oc.err" >&3
		offcpu_pair
	fi
	fg-sym "$OUT" 2>/dev/null | fg-fold >"$BATS_TEST_TMPDIR/fg.folded"
	local f o
	for fn in wait_long wait_short; do
		f=$(sum "$BATS_TEST_TMPDIR/fg.folded" ";$fn;")
		o=$(oc_ns "$fn")
		echo "# $fn: fg $f ns, offcputime $o ns" >&3
		within "$f" "$o" 5
	done
}

@test "--wall: a half-computing, half-sleeping workload is half CPU, half off-CPU, within 3 points" {
	requires root btf chrt
	# first in first out: nothing preempts its compute half, so its measures are its halves
	fg --separate-stderr fg-sample -v --wall -F 999 -o "$OUT" -- chrt -f 1 $WORKLOADS/halfsleep 20 50
	[ "$status" -eq 0 ]
	fg-sym "$OUT" 2>/dev/null | fg-fold --wall >"$BATS_TEST_TMPDIR/wall.folded"
	local cpu off ns
	ns=$(not_seen)
	cpu=$(sum "$BATS_TEST_TMPDIR/wall.folded" '^halfsleep;.*[^]]$')
	off=$(sum "$BATS_TEST_TMPDIR/wall.folded" '^halfsleep;.*;\[off-cpu\]$')
	echo "# CPU $cpu ns, off-CPU $off ns" >&3
	awk -v c="$cpu" -v o="$off" 'BEGIN { p = 100 * c / (c + o); print "# CPU " p "%"; exit !(p >= 47 && p <= 53) }' >&3
	# the CPU samples under compute, the waits under rest
	[ "$(sum "$BATS_TEST_TMPDIR/wall.folded" ';compute;')" -gt $((cpu * 9 / 10)) ]
	[ "$(sum "$BATS_TEST_TMPDIR/wall.folded" ';rest;.*\[off-cpu\]$')" -gt $((off * 9 / 10)) ]
	# each CPU sample weighs the period of 999 Hz in nanoseconds, and says so
	fgr-dump "$OUT" >"$BATS_TEST_TMPDIR/dump"
	# the 20 sleeps are waits, but for those fg-sample said it did not see begin or end
	run python3 - "$BATS_TEST_TMPDIR/dump" $((20 - ns)) <<-'EOF'
		import re, sys
		cpu = waits = 0
		for line in open(sys.argv[1]):
		    if not line.startswith('sample '):
		        continue
		    flags = int(re.search(r' flags=(0x[0-9a-f]+)', line).group(1), 16)
		    weight = int(re.search(r' weight=(\d+)', line).group(1))
		    assert flags & 0x200, line
		    if flags & 0x400:
		        waits += 1
		    else:
		        cpu += 1
		        assert weight == 1001001, line
		print(cpu, waits)
		sys.exit(0 if cpu > 500 and waits >= int(sys.argv[2]) else 1)
	EOF
	echo "# CPU samples, waits: $output" >&3
	[ "$status" -eq 0 ]
}

# --- fg-record --off-cpu and --wall ---

@test "fg-record: --off-cpu and --wall exclude each other, and their options are in the man page" {
	fg --separate-stderr fg-record --off-cpu --wall -o x.svg
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-record: --off-cpu and --wall exclude each other"$'\n'"usage: "* ]]
	fg fg-record -h
	for opt in off-cpu wall min-block max-block; do
		assert_output_contains "--$opt"
		grep -q "^\.It Fl \\\\-$(sed 's/-/\\\\-/g' <<<"$opt")" "$TOP/man/fg-record.1"
	done
}

@test "fg-record --off-cpu: an off-CPU flame graph of the waits, in nanoseconds, named after the command" {
	requires root btf
	cd "$BATS_TEST_TMPDIR"
	fg --separate-stderr fg-record --off-cpu -o waits.svg -- "$WORKLOADS/offcpu7030" 10 35 15
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-record: wrote waits.svg and waits.folded"* ]]
	grep -q '>Off-CPU Time: .*offcpu7030 10 35 15</text>' waits.svg
	grep -q '<title>wait_long ([0-9,]* ns, [0-9.]*%, [0-9.]* ms)</title>' waits.svg
	local long short
	long=$(sum waits.folded ';main;wait_long;')
	short=$(sum waits.folded ';main;wait_short;')
	# 10 rounds only: the split's bounds are fg-sample's test's, widened
	awk -v l="$long" -v s="$short" 'BEGIN { p = 100 * l / (l + s); print "# wait_long " p "%"; exit !(p >= 65 && p <= 75) }' >&3
}

@test "fg-record --wall: CPU samples and waits in one graph, the waits ending in [off-cpu]" {
	requires root btf
	cd "$BATS_TEST_TMPDIR"
	fg --separate-stderr fg-record --wall -F 199 -o wall.folded -- "$WORKLOADS/halfsleep" 4 50
	[ "$status" -eq 0 ]
	grep -q '^halfsleep;.*;main;compute;burn [0-9]*$' wall.folded
	grep -q '^halfsleep;.*;main;rest;.*;\[off-cpu\] [0-9]*$' wall.folded
	# the CPU samples weigh 1e9 / 199 ns each
	[ $(($(sum wall.folded ';compute;burn$') % 5025125)) -eq 0 ]
}
