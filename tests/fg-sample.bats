#!/usr/bin/env bats
# fg-sample: options, refusals, and real sampling runs (as root, with BPF).
bats_require_minimum_version 1.5.0
load helpers

setup() {
	OUT=$BATS_TEST_TMPDIR/run.fgr
	DUMP=$BATS_TEST_TMPDIR/run.txt
}

# the CPU-offline test puts CPU 1 back online, whatever happened
teardown() {
	local cpu=/sys/devices/system/cpu/cpu1/online
	if [ -w "$cpu" ] && [ "$(cat "$cpu")" = 0 ]; then
		echo 1 >"$cpu"
	fi
	# (workloads a test started, killed even when it failed)
	[ -z "${KILL_AT_END:-}" ] || kill $KILL_AT_END 2>/dev/null || true
}

# dump FILE: the stream as text into $DUMP; fails on a bad stream
dump() {
	fgr-dump "${1:-$OUT}" >"$DUMP"
}

# samples of comm NAME in $DUMP
count_comm() {
	grep -c "^sample .* comm=$1 " "$DUMP" || true
}

# --- usage ---

@test "fg-sample -h prints the usage on stdout" {
	fg --separate-stderr fg-sample -h
	[ "$status" -eq 0 ]
	[[ $output == "usage: fg-sample "* ]]
	[[ $output == *"--user-only"* && $output == *"-- command"* ]]
	[ -z "$stderr" ]
}

@test "fg-sample -V prints the version" {
	fg fg-sample -V
	[ "$status" -eq 0 ]
	[[ $output == "fg-sample "[0-9]* ]]
}

@test "fg-sample: an unknown option is a usage error" {
	fg -2 --separate-stderr fg-sample --bogus
	[ -z "$output" ]
	[[ $stderr == *"unrecognized option"* ]]
	[[ $stderr == *"usage: fg-sample"* ]]
}

@test "fg-sample: bad numbers are usage errors naming the value" {
	fg -2 --separate-stderr fg-sample -F 0
	[[ $stderr == "fg-sample: invalid frequency '0'"* ]]
	fg -2 --separate-stderr fg-sample -F abc
	[[ $stderr == "fg-sample: invalid frequency 'abc'"* ]]
	fg -2 --separate-stderr fg-sample -d -1
	[[ $stderr == "fg-sample: invalid duration '-1'"* ]]
	fg -2 --separate-stderr fg-sample -p x
	[[ $stderr == "fg-sample: invalid pid 'x'"* ]]
	fg -2 --separate-stderr fg-sample -C 1-0
	[[ $stderr == "fg-sample: invalid CPU list '1-0'"* ]]
	fg -2 --separate-stderr fg-sample --max-depth 0
	[[ $stderr == "fg-sample: invalid stack depth '0'"* ]]
	fg -2 --separate-stderr fg-sample --max-depth 128
	[[ $stderr == "fg-sample: invalid stack depth '128'"* ]]
}

@test "fg-sample: a buffer size that is not a power of two is a usage error" {
	fg -2 --separate-stderr fg-sample -m 3
	[[ $stderr == "fg-sample: invalid buffer size '3' (pages, a power of two)"* ]]
}

@test "fg-sample: a ring buffer smaller than a fallback's snapshot is a usage error naming the call graph" {
	requires root btf
	fg -2 --separate-stderr fg-sample -m 1 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: invalid buffer size '1': with --call-graph cfi,8192 (the default) a sample takes up to "*" KiB, more than the ring buffer's 4 KiB (a fallback's snapshot; --call-graph fp takes none)"* ]]
	fg -2 --separate-stderr fg-sample --call-graph dwarf -m 1 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: invalid buffer size '1': with --call-graph dwarf,8192 a sample takes up to "*" KiB, more than the ring buffer's 4 KiB"* ]]
	[ ! -s "$OUT" ]
}

@test "fg-sample: a ring buffer over 1 GiB is a usage error" {
	requires root btf
	fg -2 --separate-stderr fg-sample -m 1048576 -C 0 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: invalid buffer size '1048576': the ring buffer would take 4096 MiB (pages x CPUs sampled), 1 GiB at most"* ]]
	[ ! -s "$OUT" ]
}

@test "fg-sample: conflicting options are usage errors" {
	fg -2 --separate-stderr fg-sample --user-only --kernel-only
	[[ $stderr == "fg-sample: --user-only and --kernel-only exclude each other"* ]]
	fg -2 --separate-stderr fg-sample -p 1 -- true
	[[ $stderr == "fg-sample: a command and -p/-t exclude each other"* ]]
}

@test "fg-sample: a pid that does not exist is a usage error" {
	fg -2 --separate-stderr fg-sample -p 2147483647 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: no process with pid 2147483647"* ]]
	fg -2 --separate-stderr fg-sample -t 2147483647 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: no thread with tid 2147483647"* ]]
}

@test "fg-sample: a CPU that is not online is a usage error" {
	fg -2 --separate-stderr fg-sample -C 4095 -d 1 -o "$OUT"
	[[ $stderr == "fg-sample: CPU 4095 is not online"* ]]
}

# --- refusals ---

@test "fg-sample refuses to write records to a terminal" {
	requires script
	run script -qec "fg-sample -d 1" /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"fg-sample: refusing to write binary records to a terminal"* ]]
}

@test "fg-sample as an unprivileged user: one line naming what is missing" {
	requires root setpriv
	# a copy where nobody can reach it, whatever the permissions of the checkout
	local dir
	dir=$(mktemp -d /tmp/fg-sample-nobody.XXXXXX)
	chmod 755 "$dir"
	cp "$FG_BUILD/fg-sample" "$dir/"
	fg --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$dir/fg-sample" -d 1 -o /dev/null
	rm -rf "$dir"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "fg-sample: permission denied: run as root, or with the capabilities CAP_BPF and CAP_PERFMON (missing: CAP_BPF, CAP_PERFMON)" ]]
}

@test "fg-sample: no BTF is refused with its own message" {
	requires root
	FG_SAMPLE_BTF=/nonexistent/vmlinux fg --separate-stderr fg-sample -d 1 -o "$OUT"
	[ "$status" -eq 1 ]
	[ "$stderr" = "fg-sample: the kernel has no BTF ('/nonexistent/vmlinux' is missing): it needs CONFIG_DEBUG_INFO_BTF=y" ]
}

# Docker's default seccomp profile makes perf_event_open() and bpf() fail with EPERM even for
# root; deny-syscall installs such a filter.  The refusal is one line with the cause and what to
# do, standard output stays empty and the command is never started.
@test "fg-sample: perf_event_open denied by a seccomp filter is refused in one line" {
	requires root btf perf_event
	fg --separate-stderr deny-syscall perf_event_open fg-sample -d 1 -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "fg-sample: cannot open perf events on CPU "*": Operation not permitted: perf_event_open() is denied although fg-sample has the privileges"* ]]
	[[ $stderr == *"kernel.perf_event_paranoid"* ]]
	[[ $stderr == *"a seccomp filter (a container's default profile) or a security module forbids it; run fg-sample outside the container, or allow bpf and perf_event_open (docker run --security-opt seccomp=unconfined)"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	# another errno, and -o: a file already there is left as it was
	echo keep >"$OUT"
	fg --separate-stderr deny-syscall -e 38 perf_event_open fg-sample -d 1 -o "$OUT"
	[ "$status" -eq 1 ]
	[ "$(cat "$OUT")" = keep ]
	[[ $stderr == "fg-sample: cannot open perf events on CPU "*": Function not implemented: the kernel lacks CONFIG_PERF_EVENTS, or a seccomp filter (as in a container) hides the call; run fg-sample outside the container, or allow perf_event_open" ]]
}

@test "fg-sample: bpf() denied by a seccomp filter is refused in one line" {
	requires root btf perf_event
	fg --separate-stderr deny-syscall bpf fg-sample -d 1 -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "fg-sample: cannot load the BPF program: Operation not permitted: bpf() is denied although fg-sample has the privileges: a seccomp filter (a container's default profile) or a security module forbids it; run fg-sample outside the container, or allow bpf and perf_event_open (docker run --security-opt seccomp=unconfined)" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	echo keep >"$OUT"
	fg --separate-stderr deny-syscall -e 38 bpf fg-sample -d 1 -o "$OUT"
	[ "$status" -eq 1 ]
	[ "$(cat "$OUT")" = keep ]
	[ "$stderr" = "fg-sample: cannot load the BPF program: Function not implemented: the kernel lacks CONFIG_BPF_SYSCALL, or a seccomp filter (as in a container) hides the call; run fg-sample outside the container, or allow bpf" ]
}

@test "deny-syscall: the named call fails with the errno given, others work" {
	# the dynamic loader's openat() fails: EACCES, "Permission denied"
	fg -127 --separate-stderr deny-syscall -e 13 openat cat /dev/null
	[[ $stderr == *"Permission denied"* ]]
	fg deny-syscall perf_event_open,bpf true
	[ "$status" -eq 0 ]
	fg --separate-stderr deny-syscall nosuchcall true
	[ "$status" -eq 125 ]
	[ "$stderr" = "deny-syscall: unknown system call 'nosuchcall'" ]
}

@test "fg-sample: an output file that cannot be opened is named, status 1" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -d 1 -o /nonexistent/dir/run.fgr -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 1 ]
	[ "$stderr" = "fg-sample: cannot open '/nonexistent/dir/run.fgr': No such file or directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "fg-sample: a write error is reported with status 1" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -d 0.5 -o /dev/full
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-sample: write error: No space left on device"* ]]
}

# --- real runs ---

@test "fg-sample writes a valid stream: header, mappings, samples, summary last" {
	requires root btf perf_event
	$WORKLOADS/split7030 3 &
	local wl=$!
	fg --separate-stderr fg-sample -d 1.5 -o "$OUT"
	wait $wl
	[ "$status" -eq 0 ]
	dump
	head -n 1 "$DUMP" | grep -q '^header version=1 .* clock=monotonic freq=99 '
	tail -n 1 "$DUMP" | grep -q '^summary '
	grep -q '^mapping .* path=/' "$DUMP"
	[ "$(count_comm split7030)" -gt 10 ]
	# the summary on stderr agrees with the stream
	local n
	n=$(grep -c '^sample ' "$DUMP")
	[[ $stderr == "fg-sample: $n samples in "* ]]
	tail -n 1 "$DUMP" | grep -q " samples=$n "
	# samples are in time order
	grep '^sample ' "$DUMP" | sed 's/.* time=\([0-9]*\) .*/\1/' | sort -nc
}

@test "fg-sample: samples taken while it stops are not reported as out of time order" {
	requires root btf perf_event
	# (the loop's last write once went up to the end of time, and the samples
	# read after it, as the programs were detached, counted as late)
	# (the workloads outlast the ten runs, however slow the build: killed after them)
	local i
	$WORKLOADS/split7030 60 >/dev/null &
	KILL_AT_END=$!
	$WORKLOADS/split7030 60 >/dev/null &
	KILL_AT_END="$KILL_AT_END $!"
	for i in $(seq 10); do
		fg --separate-stderr fg-sample -F 999 -d 0.2 -o "$OUT"
		[ "$status" -eq 0 ]
		[[ $stderr != *"time order"* ]]
	done
}

@test "fg-sample: user stacks are walked through the workload's frames" {
	requires root btf perf_event python3
	fg --separate-stderr fg-sample --call-graph fp -F 499 -o "$OUT" -- $WORKLOADS/split7030 3
	[ "$status" -eq 0 ]
	dump
	# resolve the user IPs of split7030 with nm through its mapping: most samples
	# name spin with hot or cold above it, hot about 70% of them
	nm "$WORKLOADS/split7030" >"$BATS_TEST_TMPDIR/nm"
	run python3 - "$DUMP" "$BATS_TEST_TMPDIR/nm" <<-'EOF'
		import sys, re
		syms = []
		for line in open(sys.argv[2]):
		    f = line.split()
		    if len(f) == 3 and f[1] in 'Tt':
		        syms.append((int(f[0], 16), f[2]))
		syms.sort()
		def name(off):
		    best = None
		    for a, n in syms:
		        if a <= off: best = n
		    return best
		maps = []
		total = walked = hot = cold = nofp = 0
		for line in open(sys.argv[1]):
		    if line.startswith('mapping') and line.rstrip().endswith('/split7030'):
		        m = dict(kv.split('=', 1) for kv in line.split()[2:])
		        maps.append((int(m['start'], 16), int(m['end'], 16), int(m['pgoff'], 16)))
		    if line.startswith('sample') and ' comm=split7030 ' in line:
		        total += 1
		        # the chain ends in libc, which keeps no frame pointer: flag 0x40, not cut (0x4)
		        flags = int(re.search(r' flags=(0x[0-9a-f]+)', line).group(1), 16)
		        nofp += (flags & 0x40) != 0 and (flags & 0x4) == 0
		        names = []
		        for u in re.findall(r' u:([0-9a-f]+)', line):
		            ip = int(u, 16)
		            for s, e, off in maps:
		                if s <= ip < e:
		                    names.append(name(ip - s + off))
		        if len(names) >= 3 and names[0] == 'spin' and names[1] in ('hot', 'cold') and names[2] == 'main':
		            walked += 1
		            hot += names[1] == 'hot'
		            cold += names[1] == 'cold'
		print(total, walked, hot, cold, nofp)
		ok = total >= 20 and walked >= 0.9 * total and 0.55 <= hot / max(walked, 1) <= 0.85
		ok = ok and nofp >= 0.9 * total
		sys.exit(0 if ok else 1)
	EOF
	echo "# samples, walked spin<-hot|cold<-main, hot, cold, ended in libc: $output" >&3
	[ "$status" -eq 0 ]
}

@test "fg-sample: the sample count matches rate x CPU seconds within 15%" {
	requires root btf perf_event /usr/bin/time
	# two busy processes; their CPU time (not the wall time: the machine is shared)
	# times the rate is what the samples must add up to
	fg --separate-stderr fg-sample -F 199 -o "$OUT" -- /usr/bin/time -f '%U %S' \
		-o "$BATS_TEST_TMPDIR/cpu" sh -c "$WORKLOADS/split7030 4 & $WORKLOADS/split7030 4; wait"
	[ "$status" -eq 0 ]
	dump
	local n cpu
	n=$(count_comm split7030)
	cpu=$(awk '{ print $1 + $2 }' "$BATS_TEST_TMPDIR/cpu")
	echo "# $n samples for $cpu CPU seconds at 199 Hz" >&3
	awk -v n="$n" -v cpu="$cpu" 'BEGIN { e = 199 * cpu; exit !(e > 100 && n >= 0.85 * e && n <= 1.15 * e) }'
}

@test "fg-sample -p keeps other processes out" {
	requires root btf perf_event
	$WORKLOADS/split7030 4 &
	local a=$!
	$WORKLOADS/recurse 4 &
	local b=$!
	fg --separate-stderr fg-sample -p "$a" -d 1.5 -o "$OUT"
	kill "$a" "$b" 2>/dev/null || true
	wait "$a" "$b" 2>/dev/null || true
	[ "$status" -eq 0 ]
	dump
	[ "$(grep -c '^sample ' "$DUMP")" -gt 5 ]
	[ -z "$(grep '^sample ' "$DUMP" | grep -v " pid=$a ")" ]
	[ -z "$(grep '^mapping ' "$DUMP" | grep -v " pid=$a ")" ]
	# filtered, and (the default call graph, cfi) samples may carry snapshots
	head -n 1 "$DUMP" | grep -q ' flags=0x14 '
}

# /proc/PID/maps says " (deleted)" after a file unlinked since it was mapped: the mapping is
# recorded under the file's own name, and fg-sym reads the file through /proc/PID/map_files
@test "fg-sample -p: a binary deleted before the run is recorded under its name, and named" {
	requires root btf perf_event
	local exe=$BATS_TEST_TMPDIR/split-deleted
	cp "$WORKLOADS/split7030" "$exe"
	"$exe" 4 &
	local pid=$!
	while ! grep -q "$exe" "/proc/$pid/maps" 2>/dev/null; do sleep 0.05; done
	rm "$exe"
	grep -q "$exe (deleted)" "/proc/$pid/maps"
	fg --separate-stderr fg-sample -p "$pid" -d 1 -o "$OUT"
	[ "$status" -eq 0 ]
	fg --separate-stderr fg-sym "$OUT"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ "$status" -eq 0 ]
	dump
	grep -q "^mapping .* path=$exe\$" "$DUMP"
	[ -z "$(grep '(deleted)' "$DUMP")" ]
	[[ $output == *" hot+0x"*"($exe)"* ]]
}

@test "fg-sample -t samples one thread" {
	requires root btf perf_event
	$WORKLOADS/split7030 4 &
	local a=$!
	fg --separate-stderr fg-sample -t "$a" -d 1 -o "$OUT"
	kill "$a" 2>/dev/null || true
	wait "$a" 2>/dev/null || true
	[ "$status" -eq 0 ]
	dump
	[ "$(grep -c '^sample ' "$DUMP")" -gt 5 ]
	[ -z "$(grep '^sample ' "$DUMP" | grep -v " tid=$a ")" ]
}

@test "fg-sample: samples lost to a full buffer are counted, never silent" {
	requires root btf perf_event
	# a one-page buffer cannot hold 100 ms of 4000 samples a second (400 samples, 40 KiB or more)
	fg --separate-stderr fg-sample --call-graph fp -F 4000 -m 1 -o "$OUT" -- $WORKLOADS/recurse 1 40
	[ "$status" -eq 0 ]
	dump
	local lost
	lost=$(tail -n 1 "$DUMP" | sed 's/.* lost=\([0-9]*\) .*/\1/')
	echo "# lost $lost" >&3
	[ "$lost" -gt 0 ]
	[[ $stderr == *", lost $lost;"* ]]
	[[ $stderr == *"fg-sample: $lost samples lost: the ring buffer of "*" KiB was full; raise -m above 1 (pages per CPU) to keep them"* ]]
	# and as lost records (reason 1) adding up to the same number
	[ "$(awk '/^lost .* reason=1$/ { split($4, c, "="); n += c[2] } END { print n + 0 }' "$DUMP")" -eq "$lost" ]
}

@test "fg-sample: the default ring buffer, smaller at low rates, holds the deepest stacks" {
	requires root btf perf_event
	# 4 pages a CPU up to 100 Hz, 8 up to 200 Hz: 127-frame stacks (1 KiB a sample) lose nothing
	local hz
	for hz in 100 200; do
		fg --separate-stderr fg-sample -F $hz -o "$OUT" -- $WORKLOADS/recurse 1.5 200
		[ "$status" -eq 0 ]
		[[ $stderr == *", lost 0;"* ]]
		[[ $stderr != *"samples lost"* ]]
		dump
		[ "$(tail -n 1 "$DUMP" | sed 's/.* lost=\([0-9]*\) .*/\1/')" -eq 0 ]
		# the stacks were the deepest there are: cut at 127 frames
		[ "$(grep -c '^sample .* user=127 ' "$DUMP")" -gt 5 ]
	done
}

@test "fg-sample -v shows every count, the counters of each CPU; -vv libbpf's debug messages" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -v -d 0.5 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-sample: CPU 0: samples "*" lost "*" ustack-cut "* ]]
	[[ $stderr == *"; kernel stacks failed "*"; user stacks failed "*" mappings"$'\n'* ]]
	[[ $stderr == *"fg-sample: cfi: "*" tables in BPF maps, "* ]]
	[[ $stderr != *"libbpf: "* ]]
	fg --separate-stderr fg-sample -vv --call-graph fp -d 0.2 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr == *"libbpf: "* ]]
}

@test "fg-sample keeps the kernel's types it relocates against; a bad file kept is replaced; --no-cache keeps none" {
	requires root btf perf_event
	local d=$BATS_TEST_TMPDIR
	export XDG_CACHE_HOME=$d/xdg
	# the first run: the kernel's whole BTF, and the part used kept (0600, root's)
	fg --separate-stderr fg-sample -vv --call-graph fp -d 0.2 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr == *"loading kernel BTF"* ]]
	[[ $stderr == *"kernel types for the BPF program: the kernel's, its part used kept for the next runs"* ]]
	local f=("$d"/xdg/fg/btf/*.btf)
	[ "${#f[@]}" -eq 1 ] && [ "$(stat -c '%a %u' "${f[0]}")" = "600 0" ]
	[ "$(stat -c %s "${f[0]}")" -lt 200000 ]
	# the next: those kept, and not the kernel's; samples as before
	fg --separate-stderr fg-sample -vv --call-graph fp -F 499 -o "$OUT" -- $WORKLOADS/split7030 1
	[ "$status" -eq 0 ]
	[[ $stderr != *"loading kernel BTF"* ]]
	[[ $stderr == *"kernel types for the BPF program: kept from an earlier run, file '$(basename "${f[0]}")'"* ]]
	dump
	[ "$(count_comm split7030)" -gt 100 ]
	# a file that is not BTF: the load goes on with the kernel's, and the file is made again
	head -c 4096 /dev/urandom >"${f[0]}"
	fg --separate-stderr fg-sample -v -d 0.2 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr == *"kernel types for the BPF program: the kernel's, its part used kept for the next runs"*"; the file kept before did not do: removed"* ]]
	fg --separate-stderr fg-sample -vv -d 0.2 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr != *"loading kernel BTF"* ]]
	# --no-cache: neither read nor written
	rm -rf "$d/xdg"
	fg --separate-stderr fg-sample -vv --no-cache -d 0.2 -o "$OUT"
	[ "$status" -eq 0 ]
	[[ $stderr == *"loading kernel BTF"* ]]
	[[ $stderr == *"kernel types for the BPF program: the kernel's, not kept (--no-cache)"* ]]
	[ ! -e "$d/xdg/fg/btf" ]
}

@test "fg-sample says in one line what it took: samples, lost, the share of whole stacks" {
	requires root btf perf_event
	"$WORKLOADS/split7030" 30 &
	local wl=$!
	fg --separate-stderr fg-sample -d 0.2 -o /dev/null
	[ "$status" -eq 0 ]
	printf '# %s\n' "${stderr_lines[@]}" >&3
	# (a second line only where something went wrong: on a busy machine, records late)
	[ "${#stderr_lines[@]}" -le 2 ]
	[[ ${stderr_lines[0]} =~ ^fg-sample:\ [0-9]+\ samples\ in\ [0-9.]+\ s\ \(.*\),\ lost\ 0\;\ ([0-9]+)\ of\ ([0-9]+)\ user\ stacks\ whole\ \([0-9.]+%\)$ ]]
	# with frame pointers, the chains not cut short (a chain that ends at code built without
	# them, as the C library's start below main on Debian, looks like a whole one); of the
	# samples of one process (no kernel thread), each has a user stack
	fg --separate-stderr fg-sample --call-graph fp -p "$wl" -d 0.5 -o "$OUT"
	kill "$wl"
	wait "$wl" || true
	[[ ${stderr_lines[0]} =~ \ ([0-9]+)\ user\ stacks\ by\ frame\ pointers,\ ([0-9]+)\ cut\ short$ ]]
	[ "${BASH_REMATCH[1]}" -eq "$(fgr-dump "$OUT" | grep -c '^sample ')" ]
	[ "${BASH_REMATCH[2]}" -eq 0 ]
}

@test "fg-sample -C samples only the CPUs named" {
	requires root btf perf_event
	$WORKLOADS/split7030 3 &
	local a=$!
	$WORKLOADS/split7030 3 &
	local b=$!
	fg --separate-stderr fg-sample -C 0 -d 1 -o "$OUT"
	wait "$a" "$b"
	[ "$status" -eq 0 ]
	dump
	head -n 1 "$DUMP" | grep -q ' ncpus=1 '
	[ "$(grep -c '^sample ' "$DUMP")" -gt 5 ]
	[ -z "$(grep '^sample ' "$DUMP" | grep -v ' cpu=0 ')" ]
}

@test "fg-sample -p stops when its targets are gone" {
	requires root btf perf_event
	$WORKLOADS/split7030 1 &
	local a=$!
	SECONDS=0
	fg --separate-stderr fg-sample -p "$a" -o "$OUT"
	wait "$a" || true
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 20 ]
	dump
	tail -n 1 "$DUMP" | grep -q '^summary '
}

@test "fg-sample -p counts a zombie target as gone" {
	requires root btf perf_event
	# the sleep becomes fg-sample's own child, which fg-sample never reaps
	SECONDS=0
	run bash -c 'sleep 1 & exec fg-sample -p $! -o "$0"' "$OUT"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 15 ]
	dump
	tail -n 1 "$DUMP" | grep -q '^summary '
}

@test "fg-sample -- COMMAND samples it and its children, stops when it exits" {
	requires root btf perf_event
	SECONDS=0
	fg --separate-stderr fg-sample -o "$OUT" -- sh -c "$WORKLOADS/split7030 1.5; exit 3"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 20 ]
	[[ $stderr == *"fg-sample: command exited with status 3"* ]]
	dump
	[ "$(count_comm split7030)" -gt 5 ]
	# only the command's processes: sh, then split7030, a child of sh
	[ -z "$(grep '^sample ' "$DUMP" | grep -v -e ' comm=split7030 ' -e ' comm=sh ' -e ' comm=fg-sample ')" ]
	tail -n 1 "$DUMP" | grep -q ' command_status=768 flags=0x1$'
	grep -q '^comm .* exec=1 comm=split7030$' "$DUMP"
	grep -q '^fork ' "$DUMP"
	grep -q '^exit ' "$DUMP"
}

@test "fg-sample -- COMMAND that cannot run: status 1 and why" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -o "$OUT" -- /nonexistent/command
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-sample: cannot run '/nonexistent/command': No such file or directory"* ]]
}

@test "fg-sample names processes that start and exit during the run" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -o "$OUT" -- $WORKLOADS/shortlived 10 60
	[ "$status" -eq 0 ]
	dump
	# each child (an exec of the workload's own path): an exec, mappings of its binary
	# from the kernel, an exit
	[ "$(grep -c '^comm .* exec=1 comm=shortlived$' "$DUMP")" -ge 10 ]
	[ "$(grep -c '^mapping .* flags=0x[23] .*path=.*/shortlived$' "$DUMP")" -ge 10 ]
	[ "$(grep -c '^exit ' "$DUMP")" -ge 10 ]
	# after its exec, a mapping of a child comes before that child's samples in user
	# mode (flag 0x20; a sample in the kernel during the exec may come before)
	awk '/^comm .* exec=1 comm=shortlived$/ { split($4, p, "="); execd[p[2]] = 1 }
	     /^mapping .*\/shortlived$/ { split($4, p, "="); seen[p[2]] = 1 }
	     /^sample .* comm=shortlived / && $9 ~ /^flags=0x[0-9a-f]*[2367abef][0-9a-f]$/ {
		split($5, p, "="); if (!(p[2] in execd)) next; n++; if (!(p[2] in seen)) bad++ }
	     END { exit !(n > 0 && bad == 0) }' "$DUMP"
}

@test "fg-sample --kernel-only and --user-only take one kind of stack" {
	requires root btf perf_event
	fg --separate-stderr fg-sample --kernel-only -o "$OUT" -- $WORKLOADS/syscalls 1
	[ "$status" -eq 0 ]
	dump
	[ -z "$(grep '^sample ' "$DUMP" | grep -v ' user=0')" ]
	grep -q '^sample .* kernel=[1-9]' "$DUMP"
	head -n 1 "$DUMP" | grep -q ' flags=0x6 '
	fg --separate-stderr fg-sample --user-only -o "$OUT" -- $WORKLOADS/syscalls 1
	[ "$status" -eq 0 ]
	dump
	[ -z "$(grep '^sample ' "$DUMP" | grep -v ' kernel=0 ')" ]
	grep -q '^sample .* user=[1-9]' "$DUMP"
}

@test "fg-sample leaves the idle task out unless -I" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -d 1 -o "$OUT"
	[ "$status" -eq 0 ]
	dump
	[ -z "$(grep '^sample .* pid=0 ' "$DUMP")" ]
	fg --separate-stderr fg-sample -I -d 1 -o "$OUT"
	[ "$status" -eq 0 ]
	dump
	head -n 1 "$DUMP" | grep -q ' flags=0x18 '
}

@test "fg-sample stops cleanly on SIGINT and SIGTERM with a readable stream" {
	requires root btf perf_event
	local sig pid
	for sig in INT TERM; do
		fg-sample -o "$OUT" 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		wait_until 20 has_samples "$OUT"
		kill -"$sig" "$pid"
		local rc=0
		wait "$pid" || rc=$?
		[ "$rc" -eq 0 ]
		dump
		tail -n 1 "$DUMP" | grep -q '^summary '
		grep -q '^fg-sample: [0-9]* samples in ' "$BATS_TEST_TMPDIR/err"
	done
}

@test "fg-sample stops quietly when the reader of its pipe goes away" {
	requires root btf perf_event
	SECONDS=0
	run bash -c 'fg-sample -d 30 2>"$0" | head -c 300 >/dev/null; echo "${PIPESTATUS[0]}"' \
		"$BATS_TEST_TMPDIR/err"
	[ "$output" = 0 ]
	[ "$SECONDS" -lt 15 ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "fg-sample: a stream cut short is refused with the byte offset" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -d 0.5 -o "$OUT"
	[ "$status" -eq 0 ]
	local size
	size=$(stat -c %s "$OUT")
	head -c $((size - 20)) "$OUT" >"$BATS_TEST_TMPDIR/cut.fgr"
	fg --separate-stderr fgr-dump "$BATS_TEST_TMPDIR/cut.fgr"
	[ "$status" -eq 1 ]
	[[ $stderr == "fgr-dump: '$BATS_TEST_TMPDIR/cut.fgr': truncated summary record at byte $((size - 96))" ]]
}

@test "fg-sample: a CPU that goes offline is reported and recorded as a loss" {
	requires root btf perf_event
	local cpu=/sys/devices/system/cpu/cpu1/online
	[ -w "$cpu" ] || skip "test requires a CPU 1 that can be taken offline"
	[ "$(cat "$cpu")" = 1 ]
	# the command is held until sampling runs: the CPU goes offline while
	# fg-sample samples, however long its start took on a loaded machine
	fg-sample -C 0,1 -o "$OUT" -- sh -c "sleep 0.5; echo 0 >$cpu; sleep 1; echo 1 >$cpu; sleep 0.5" \
		2>"$BATS_TEST_TMPDIR/err"
	cat "$BATS_TEST_TMPDIR/err" >&2
	grep -q '^fg-sample: CPU 1 went offline: its samples stopped$' "$BATS_TEST_TMPDIR/err"
	dump
	grep -q '^lost .*cpu=1 .*reason=' "$DUMP"
}
