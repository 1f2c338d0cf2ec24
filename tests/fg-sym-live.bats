#!/usr/bin/env bats
# fg-sym on live processes: real /proc, real captures from fg-sample, JIT
# maps written by a running program.  Runs as root in CI.
bats_require_minimum_version 1.5.0
load helpers

# samples NAME: stack blocks of $output whose header starts with NAME, one a line ('|' for newlines)
blocks() {
	awk -v c="$1" 'BEGIN { RS = "" } index($0, c " ") == 1 { gsub("\n", "|"); print }' <<<"$output"
}

# base_of PID FILE: the start of the mapping of FILE at offset 0 in PID
base_of() {
	awk -v f="$2" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps"
}

teardown() {
	[ -z "${sampler:-}" ] || { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; } || true
}

symaddr() { # FILE SYMBOL
	nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }'
}

@test "fg-sym live: without mapping records, /proc/PID/maps names a running process" {
	requires root
	"$WORKLOADS/recurse" 30 &
	local pid=$! exe=$WORKLOADS/recurse
	wait_until 20 grep -q -- "$exe" "/proc/$pid/maps"
	local base
	base=$(base_of $pid "$exe")
	printf 'sample pid=%d comm=recurse u=%x,%x\n' $pid \
		$((0x$base + 0x$(symaddr "$exe" spin_leaf) + 2)) $((0x$base + 0x$(symaddr "$exe" main) + 4)) \
		>"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	kill $pid
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" spin_leaf+0x2 ($exe)" ]]
	[[ ${lines[2]} == *" main+0x4 ($exe)" ]]
}

@test "fg-sym live: a deleted binary is read through /proc/PID/map_files" {
	requires root
	local exe=$BATS_TEST_TMPDIR/recurse-copy
	cp "$WORKLOADS/recurse" "$exe"
	"$exe" 30 &
	local pid=$!
	wait_until 20 grep -q -- "$exe" "/proc/$pid/maps"
	local base leaf
	base=$(base_of $pid "$exe")
	leaf=$(symaddr "$exe" spin_leaf)
	rm "$exe"
	# and another file now at the same path, which must not be used
	printf 'not the binary\n' >"$exe"
	printf 'sample pid=%d u=%x\n' $pid $((0x$base + 0x$leaf + 1)) >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	kill $pid
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" spin_leaf+0x1 ($exe)" ]]
}

@test "fg-sym live: JIT frames from the perf map a running program writes" {
	requires root
	"$WORKLOADS/jit" 30 &
	local pid=$!
	wait_until 20 grep -q -- jit_loop "/tmp/perf-$pid.map"
	local loop
	loop=$(awk '$3 == "jit_loop" { print $1 }' "/tmp/perf-$pid.map")
	printf 'sample pid=%d u=%x\n' $pid $((0x$loop + 4)) >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	kill $pid
	wait $pid || true
	rm -f "/tmp/perf-$pid.map"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\t%16x jit_loop+0x4 (/tmp/perf-%d.map)' $((0x$loop + 4)) $pid)" ]
}

@test "fg-sym live: a perf map that grows is read again" {
	requires root
	sleep 30 &
	local pid=$! map=/tmp/perf-$!.map
	printf '7f0000001000 10 first\n' >"$map"
	{
		printf 'sample pid=%d u=7f0000001004\n' $pid
	} >"$BATS_TEST_TMPDIR/a.txt"
	printf 'sample pid=%d u=7f0000002004\n' $pid >"$BATS_TEST_TMPDIR/b.txt"
	fgr-make "$BATS_TEST_TMPDIR/a.txt" >"$BATS_TEST_TMPDIR/a.fgr"
	# the second sample only once the first is named and the map has grown
	fgr-make "$BATS_TEST_TMPDIR/b.txt" >"$BATS_TEST_TMPDIR/b.fgr"
	local hs # the stream header's size (its header_size field), to send b's record alone
	hs=$(od -An -tu4 -j12 -N4 "$BATS_TEST_TMPDIR/b.fgr" | tr -d ' ')
	tail -c +$((hs + 1)) "$BATS_TEST_TMPDIR/b.fgr" >"$BATS_TEST_TMPDIR/b.rec"
	{
		cat "$BATS_TEST_TMPDIR/a.fgr"
		wait_until 20 grep -q -- "first+0x4" "$BATS_TEST_TMPDIR/out"
		printf '7f0000002000 10 second\n' >>"$map"
		sleep 0.2 # past fg-sym's re-read interval (50 ms)
		cat "$BATS_TEST_TMPDIR/b.rec"
	} | fg-sym >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err"
	kill $pid
	rm -f "$map"
	grep -q "first+0x4 (/tmp/perf-$pid.map)" "$BATS_TEST_TMPDIR/out"
	grep -q "second+0x4 (/tmp/perf-$pid.map)" "$BATS_TEST_TMPDIR/out"
}

@test "fg-sym live: output is flushed while the input pauses" {
	requires root
	printf 'sample pid=1 comm=first u=1000\n' >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	# the writer keeps the pipe open until the sample shows up on the other side
	{
		cat "$BATS_TEST_TMPDIR/in.fgr"
		wait_until 20 grep -q -- "^first " "$BATS_TEST_TMPDIR/out" || echo timeout >"$BATS_TEST_TMPDIR/timeout"
	} | fg-sym --proc-root "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/out" 2>/dev/null
	[ ! -e "$BATS_TEST_TMPDIR/timeout" ]
}

@test "fg-sym live: 40 processes of 60 ms each, named after they are gone (>= 95% of their samples)" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -F 499 -o "$BATS_TEST_TMPDIR/run.fgr" -- "$WORKLOADS/shortlived" 40 60
	[ "$status" -eq 0 ]
	# every process has exited: the capture is named from its records and the files on disk
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/run.fgr"
	[ "$status" -eq 0 ]
	local all named
	# the parent and its 40 children (which exec its own path) share the comm
	all=$(blocks shortlived | wc -l)
	named=$(blocks shortlived | grep -vc '\[unknown\]' || true)
	echo "# samples of the 41 processes: $all, fully named: $named" >&3
	[ "$all" -ge 200 ]
	[ $((named * 100)) -ge $((all * 95)) ]
	# and most of them are in the work the children do, named from their file
	local work
	work=$(blocks shortlived | grep -cE 'child_(spin|work)\+0x[0-9a-f]+ \([^)]*/shortlived\)' || true)
	echo "# in child_spin or child_work: $work" >&3
	[ $((work * 2)) -ge "$all" ]
}

@test "fg-sym live: fg-sample | fg-sym names a running workload as it runs" {
	requires root btf perf_event
	"$WORKLOADS/recurse" 20 &
	local pid=$!
	wait_until 20 grep -q -- recurse "/proc/$pid/maps"
	fg --separate-stderr bash -c "fg-sample -F 199 -d 2 -p $pid | fg-sym"
	kill $pid
	[ "$status" -eq 0 ]
	[[ $output == *" spin_leaf+0x"*"(${WORKLOADS}/recurse)"* ]]
	[[ $output == *" recurse+0x"*"(${WORKLOADS}/recurse)"* ]]
}

@test "fg-sym live: JIT frames of a captured JIT-like program" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -F 499 -o "$BATS_TEST_TMPDIR/jit.fgr" -- "$WORKLOADS/jit" 2
	[ "$status" -eq 0 ]
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/jit.fgr"
	[ "$status" -eq 0 ]
	local pid
	pid=$(sed -n 's/^jit *\([0-9]*\)\/.*/\1/p' <<<"$output" | head -n 1)
	rm -f "/tmp/perf-$pid.map"
	[[ $output == *" jit_loop+0x"*"(/tmp/perf-"*".map)"* ]]
	[[ $output == *" run_jit+0x"*"(${WORKLOADS}/jit)"* ]]
}

@test "fg-sym live: a JIT map another user wrote for a process is ignored" {
	requires root
	sleep 30 &
	local pid=$! map=/tmp/perf-$!.map
	printf '7f0000001000 10 forged\n' >"$map"
	chown nobody "$map"
	printf 'sample pid=%d u=7f0000001004\n' $pid >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	kill $pid
	rm -f "$map"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} != *forged* ]]
	[[ $stderr == *"fg-sym: ignoring '/proc/$pid/root/tmp/perf-$pid.map': it belongs to user $(id -u nobody), not to user 0 who runs process $pid"* ]]
}

@test "fg-sym live: the JIT map of a process in another pid namespace, under its pid there" {
	requires root unshare
	rm -f /tmp/perf-1.map
	unshare --pid --fork "$WORKLOADS/jit" 30 &
	local outer=$! pid= i
	for ((i = 0; i < 200; i++)); do
		pid=$(pgrep -P $outer) && break
		sleep 0.1
	done
	[ -n "$pid" ]
	# inside its namespace it is pid 1, and wrote /tmp/perf-1.map
	wait_until 20 grep -q -- jit_loop /tmp/perf-1.map
	local loop
	loop=$(awk '$3 == "jit_loop" { print $1 }' /tmp/perf-1.map)
	printf 'sample pid=%d u=%x\n' "$pid" $((0x$loop + 2)) >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	# a namespace's init ignores signals it has no handler for, but SIGKILL
	kill -KILL "$pid" 2>/dev/null || true
	wait $outer || true
	rm -f /tmp/perf-1.map
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\t%16x jit_loop+0x2 (/tmp/perf-%d.map)' $((0x$loop + 2)) "$pid")" ]
}

# poison CACHE: rename "schedule" to "schedulX" in a kernel symbol cache
poison() {
	python3 -c '
import sys
p = sys.argv[1]
b = open(p, "rb").read()
assert b"\0schedule\0" in b
open(p, "wb").write(b.replace(b"\0schedule\0", b"\0schedulX\0", 1))' "$1"
}

# a kernel symbol of neither the kernel nor a module ("\t[bpf]"): fg-sample's own program,
# loaded for its run (not another's, such as the small programs libbpf loads a moment to
# probe the kernel's features, gone before fg-sym reads kallsyms)
text_outside() {
	awk -F'\t' 'NF == 2 { split($1, f, " ")
		if (f[2] ~ /^[tT]$/ && f[3] ~ /_fg_sample$/) { print f[1]; exit } }' /proc/kallsyms
}

@test "fg-sym live: kernel symbols from a cache per boot; what it leaves out from kallsyms" {
	requires root
	local cache=$BATS_TEST_TMPDIR/xdg/fg/kallsyms sched tramp i
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	sched=$(awk '$3 == "schedule" { print $1; exit }' /proc/kallsyms)
	# a BPF program: not the kernel's nor a module's, so not cached; fg-sample's, loaded
	# meanwhile
	fg-sample -d 60 -o /dev/null 2>/dev/null &
	sampler=$!
	for ((i = 0; i < 200; i++)); do
		tramp=$(text_outside) && [ -n "$tramp" ] && break
		sleep 0.1
	done
	[ -n "$sched" ] && [ -n "$tramp" ]
	echo "sample pid=1 k=$(printf '%x,%x' $((0x$sched + 4)) $((0x$tramp + 8)))" >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	local want_tramp=${lines[2]}
	[[ $want_tramp == *"+0x8 (["*"])" ]]
	# made for this user alone
	[ "$(stat -c %a "$cache")" = 600 ]
	# the next run reads the cache (a name changed in it shows) ...
	poison "$cache"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedulX+0x4 ([kernel.kallsyms])" ]]
	# ... and kallsyms for the trampoline, which it does not hold; that read renews the cache
	[ "${lines[2]}" = "$want_tramp" ]
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	# --no-cache neither reads nor writes it
	poison "$cache"
	cp "$cache" "$BATS_TEST_TMPDIR/poisoned"
	fg --separate-stderr fg-sym --no-cache "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	cmp "$cache" "$BATS_TEST_TMPDIR/poisoned"
	# a cache others may write is not used, and says so with -v
	chmod 666 "$cache"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	[[ $stderr == *"kernel symbol cache '$cache' not used: not a file of this user's alone"* ]]
	# a cache of another boot is replaced
	cp "$BATS_TEST_TMPDIR/poisoned" "$cache"
	chmod 600 "$cache"
	printf 'ffffffff' | dd of="$cache" bs=1 seek=8 conv=notrunc status=none
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	run cmp -s "$cache" "$BATS_TEST_TMPDIR/poisoned"
	[ "$status" -ne 0 ]
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
	# --kallsyms FILE has nothing to do with the cache
	poison "$cache"
	awk '$3 == "schedule"' /proc/kallsyms >"$BATS_TEST_TMPDIR/ks"
	fg --separate-stderr fg-sym --kallsyms "$BATS_TEST_TMPDIR/ks" "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[1]} == *" schedule+0x4 ([kernel.kallsyms])" ]]
}

@test "fg-sample: the BPF code loaded, and loaded or unloaded during the run, is in the stream as kallsyms names it" {
	requires root btf
	local d=$BATS_TEST_TMPDIR i
	fg-sample -v -o "$d/out.fgr" 2>"$d/err" &
	local sampler=$!
	# its own programs, as kallsyms names them while they are loaded (with other
	# fg-samples', when a suite runs beside this one): all those seen while it runs
	for ((i = 0; i < 300; i++)); do
		has_link "$sampler" && break
		sleep 0.1
	done
	bpf_syms() {
		awk -F'\t' 'NF == 2 && $2 == "[bpf]" { split($1, f, " "); print f[1], f[3] }' \
			/proc/kallsyms
	}
	bpf_syms >"$d/kallsyms.all"
	# another fg-sample, its programs loaded and unloaded during the run
	fg-sample -d 0.3 -o /dev/null 2>/dev/null
	bpf_syms >>"$d/kallsyms.all"
	kill -INT "$sampler"
	wait "$sampler"
	sort -u "$d/kallsyms.all" >"$d/kallsyms.bpf"
	sed 's/^/# /' "$d/err" >&3
	fgr-dump "$d/out.fgr" | awk '$1 == "ksym"' >"$d/ksym"
	# at the start: the sampler's own program, at the address and by the name kallsyms had
	awk '$3 == "time=0" && $NF ~ /_fg_sample$/ { print substr($4, 6), substr($NF, 6) }' \
		"$d/ksym" | sort >"$d/start"
	[ -s "$d/start" ]
	[ -n "$(comm -12 "$d/start" "$d/kallsyms.bpf")" ]
	# during the run: the other's, loaded, then gone
	grep -Eq '^ksym @[0-9]+ time=[1-9][0-9]* addr=[0-9a-f]+ len=[0-9]+ name=bpf_prog_[0-9a-f]{16}_fg_sample$' "$d/ksym"
	grep -Eq '^ksym @[0-9]+ time=[1-9][0-9]* addr=[0-9a-f]+ len=[0-9]+ gone name=bpf_prog_[0-9a-f]{16}_fg_sample$' "$d/ksym"
	grep -Eq 'BPF code: [1-9][0-9]* functions of [1-9][0-9]* programs named in the stream at the start \(0 programs not read\), [1-9][0-9]* loaded or unloaded since' "$d/err"
}
