#!/usr/bin/env bats
# fg-sample -e: stacks on page faults, context switches, tracepoints and
# uprobes, checked against what the workloads do (exact counts where the
# workload makes them exact) and against perf.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# sym_text FILE: fg-sym's text of a capture into FILE.txt
sym_text() {
	fg-sym "$1" >"$1.txt" 2>"$1.sym-err"
}

# headers FILE.txt COMM: the sample header lines of comm COMM
headers() {
	grep -E "^$2 +[0-9]+/" "$1" || true
}

# blocks FILE.txt COMM: each sample of COMM as one line, its frames' names joined by ';'
blocks() {
	awk -v comm="$2" '
		/^[^\t]/ && NF { take = ($1 == comm); line = ""; next }
		/^\t/ && take { name = $2; sub(/\+0x[0-9a-f]+$/, "", name); line = line ";" name; next }
		!NF && take && line != "" { print substr(line, 2); line = "" }
		END { if (take && line != "") print substr(line, 2) }' "$1"
}

# --- options and refusals ---

@test "fg-sample -h names -e, -c and --list-events" {
	fg --separate-stderr fg-sample -h
	[ "$status" -eq 0 ]
	[[ $output == *"[-e event]..."* && $output == *"[-F hz | -c n]"* ]]
	[[ $output == *"fg-sample --list-events [pattern]"* ]]
}

@test "fg-sample: an unknown event is a usage error naming it" {
	fg -2 --separate-stderr fg-sample -e page-fault -o x.fgr
	[ "$(head -1 <<<"$stderr")" = "fg-sample: unknown event 'page-fault' (fg-sample --list-events lists them)" ]
	[[ $stderr == *"usage: fg-sample"* ]]
	[ ! -e x.fgr ]
	fg -2 --separate-stderr fg-sample -e 'uretprobe:/bin/true:main+4' -o x.fgr
	[ "$(head -1 <<<"$stderr")" = "fg-sample: invalid event 'uretprobe:/bin/true:main+4': a uretprobe takes no offset" ]
	fg -2 --separate-stderr fg-sample -e 'tracepoint:../x:y' -o x.fgr
	[ "$(head -1 <<<"$stderr")" = "fg-sample: invalid tracepoint 'tracepoint:../x:y' (tracepoint:CATEGORY:NAME)" ]
	fg -2 --separate-stderr fg-sample -e 'page-faults,,cs' -o x.fgr
	[ "$(head -1 <<<"$stderr")" = "fg-sample: invalid event list 'page-faults,,cs': an empty event" ]
	fg -2 --separate-stderr fg-sample -e 'page-faults:u' -o x.fgr
	[[ $(head -1 <<<"$stderr") == "fg-sample: invalid event 'page-faults:u': no modifiers"* ]]
}

@test "fg-sample: -F is for clocks, -c for the other events" {
	fg -2 --separate-stderr fg-sample -e page-faults -F 99 -o x.fgr
	[[ $(head -1 <<<"$stderr") == "fg-sample: -F applies to cpu-clock and task-clock: for the other events, -c n takes a sample every n events" ]]
	fg -2 --separate-stderr fg-sample -c 10 -o x.fgr
	[[ $(head -1 <<<"$stderr") == "fg-sample: -c applies to events other than cpu-clock and task-clock, which -F samples" ]]
	fg -2 --separate-stderr fg-sample -e page-faults -c 0 -o x.fgr
	[[ $(head -1 <<<"$stderr") == "fg-sample: invalid count '0' (a sample every N events)" ]]
	fg -2 --separate-stderr fg-sample --kernel-only -e "uprobe:$WORKLOADS/calls:target" -o x.fgr
	[[ $(head -1 <<<"$stderr") == "fg-sample: --kernel-only and uprobes exclude each other"* ]]
}

@test "fg-sample: a tracepoint that does not exist is refused in one line" {
	requires root btf perf_event
	fg -1 --separate-stderr fg-sample -e syscalls:sys_enter_nothing -o x.fgr -- true
	[ "$stderr" = "fg-sample: no tracepoint 'syscalls:sys_enter_nothing' (in '/sys/kernel/tracing/events')" ]
	fg -1 --separate-stderr fg-sample -e 'tracepoint:nosuch*:*' -o x.fgr -- true
	[ "$stderr" = "fg-sample: no tracepoint matches 'tracepoint:nosuch*:*' (in '/sys/kernel/tracing/events')" ]
	[ ! -e x.fgr ]
}

@test "fg-sample: a function that is not in the file is refused in one line" {
	requires root btf perf_event
	fg -1 --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:nosuch" -o x.fgr -- true
	[ "$stderr" = "fg-sample: event 'uprobe:$WORKLOADS/calls:nosuch': no function 'nosuch' in '$WORKLOADS/calls'" ]
	fg -1 --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:target+4096" -o x.fgr -- true
	[[ $stderr == "fg-sample: event 'uprobe:$WORKLOADS/calls:target+4096': offset 4096 is beyond 'target' ("*" bytes)" ]]
	fg -1 --separate-stderr fg-sample -e "uprobe:/nonexistent/prog:main" -o x.fgr -- true
	[ "$stderr" = "fg-sample: event 'uprobe:/nonexistent/prog:main': no file '/nonexistent/prog'" ]
	fg -1 --separate-stderr fg-sample -e "uprobe:no-such-program-here:main" -o x.fgr -- true
	[ "$stderr" = "fg-sample: event 'uprobe:no-such-program-here:main': no file 'no-such-program-here' in \$PATH or the library directories" ]
	[ ! -e x.fgr ]
}

@test "fg-sample: an event the kernel refuses is named in one line, exit 1" {
	requires root btf perf_event
	# ftrace's own events are in tracefs, but perf (and BPF) may not use them
	local ev
	for ev in ftrace:function ftrace:print; do
		[ -e "/sys/kernel/tracing/events/${ev/://}/id" ] && break
	done
	fg -1 --separate-stderr fg-sample -e "$ev" -o x.fgr -- true
	[[ $stderr == "fg-sample: cannot "*" event '$ev': Invalid argument: the kernel refuses it" ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[ ! -e x.fgr ]
}

@test "fg-sample: the same event twice is refused" {
	requires root btf perf_event
	fg -1 --separate-stderr fg-sample -e faults -e page-faults -o x.fgr -- true
	[ "$stderr" = "fg-sample: event 'page-faults' is given twice (as 'page-faults')" ]
}

# --- --list-events ---

@test "fg-sample --list-events: the software events, the tracepoint categories, the probes" {
	requires root
	fg --separate-stderr fg-sample --list-events
	[ "$status" -eq 0 ]
	grep -qE '^cpu-clock +software: ' <<<"$output"
	grep -qE '^page-faults +software: page faults, minor and major \(or -e faults\)$' <<<"$output"
	grep -qE '^context-switches +software: ' <<<"$output"
	grep -qE '^tracepoint:syscalls:\* +tracepoints: [0-9]+$' <<<"$output"
	grep -qE '^tracepoint:sched:\* +tracepoints: [0-9]+$' <<<"$output"
	grep -qE '^uprobe:PATH:FUNCTION\[\+OFFSET\] ' <<<"$output"
	[ -z "$stderr" ]
}

@test "fg-sample --list-events: a function named by a demangling bomb is listed, cut at 4096 bytes" {
	# a name of 279 bytes that demangles to a gigabyte (see bomb in helpers.bash)
	printf 'void f(void) __asm__("%s");\nvoid f(void) {}\nint main(void) { f(); return 0; }\n' \
		"$(bomb 25)" >"$BATS_TEST_TMPDIR/bomb.c"
	gcc -O1 "$BATS_TEST_TMPDIR/bomb.c" -o "$BATS_TEST_TMPDIR/bomb"
	run --separate-stderr timeout 20 fg-sample --list-events "uprobe:$BATS_TEST_TMPDIR/bomb:f<a<*"
	[ "$status" -eq 0 ]
	[[ $output == "uprobe:$BATS_TEST_TMPDIR/bomb:_Z1fI1aIiiE1aIS1_S1_E"*"[...]"* ]]
	[ "${#output}" -lt 5000 ]
	[ "$stderr" = "fg-sample: 2 demangled names cut at 4096 bytes (ending in '[...]')" ]
}

@test "fg-sample --list-events PATTERN: tracepoints, software events and functions matching it" {
	requires root
	fg --separate-stderr fg-sample --list-events 'syscalls:sys_*_write'
	[ "$status" -eq 0 ]
	[ "$(cut -d' ' -f1 <<<"$output")" = "tracepoint:syscalls:sys_enter_write
tracepoint:syscalls:sys_exit_write" ]
	fg --separate-stderr fg-sample --list-events '*faults'
	[ "$(cut -d' ' -f1 <<<"$output" | sort | tr '\n' ' ')" = "alignment-faults emulation-faults major-faults minor-faults page-faults " ]
	fg --separate-stderr fg-sample --list-events "uprobe:$WORKLOADS/calls:site_*"
	[ "$status" -eq 0 ]
	grep -qE "^uprobe:$WORKLOADS/calls:site_a +function at 0x[0-9a-f]+, [0-9]+ bytes: probe_calls:site_a$" <<<"$output"
	grep -qE "^uprobe:$WORKLOADS/calls:site_b " <<<"$output"
	[ "$(wc -l <<<"$output")" -eq 2 ]
	fg -1 --separate-stderr fg-sample --list-events 'nothing-like-this*'
	[ "$stderr" = "fg-sample: no event matches 'nothing-like-this*'" ]
	[ -z "$output" ]
}

# --- the truth: uprobes ---

@test "uprobe, -c 1: exactly the 10,000 calls, 7,000 and 3,000 by caller" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:target" -c 1 -o up.fgr -- "$WORKLOADS/calls" 10000
	[ "$status" -eq 0 ]
	[[ $stderr == *"samples by event: probe_calls:target 10000 (each event)"* ]]
	sym_text up.fgr
	[ "$(headers up.fgr.txt calls | grep -c ' probe_calls:target: $')" -eq 10000 ]
	blocks up.fgr.txt calls >stacks
	[ "$(grep -c '^target;site_a;main;' stacks)" -eq 7000 ]
	[ "$(grep -c '^target;site_b;main;' stacks)" -eq 3000 ]
	[ "$(wc -l <stacks)" -eq 10000 ]
	# fg-fold selects it by perf's name
	fg-fold --event-filter probe_calls:target up.fgr.txt >folded
	[ "$(awk '{ n += $NF } END { print n }' folded)" -eq 10000 ]
	# the stream names the event
	fgr-dump up.fgr | grep -q "^event @200 id=0 kind=3 config=[0-9]* period=1 freq=0 flags=0x0 name=probe_calls:target$"
}

@test "uretprobe: each return, in its caller" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e "uretprobe:$WORKLOADS/calls:target" -o ret.fgr -- "$WORKLOADS/calls" 1000
	[ "$status" -eq 0 ]
	sym_text ret.fgr
	[ "$(headers ret.fgr.txt calls | grep -c ' probe_calls:target__return: $')" -eq 1000 ]
	blocks ret.fgr.txt calls >stacks
	[ "$(grep -c '^site_a;main;' stacks)" -eq 700 ]
	[ "$(grep -c '^site_b;main;' stacks)" -eq 300 ]
}

@test "uprobe, -c 10: a sample every 10 calls, each weighing 10" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:target" -c 10 -o c10.fgr -- "$WORKLOADS/calls" 10000
	[ "$status" -eq 0 ]
	sym_text c10.fgr
	local n
	n=$(headers c10.fgr.txt calls | grep -c ' 10 probe_calls:target: $')
	# counted on each CPU: a move to another CPU may leave a partial count behind
	[ "$n" -ge 998 ] && [ "$n" -le 1000 ]
	[ "$(headers c10.fgr.txt calls | grep -vc ' 10 probe_calls:target: $')" -eq 0 ]
}

@test "uprobe by a glob: one event for each function, each named" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:site_?" -o glob.fgr -- "$WORKLOADS/calls" 100
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-sample: 'uprobe:$WORKLOADS/calls:site_?': 2 events: probe_calls:site_a, probe_calls:site_b"* ]]
	sym_text glob.fgr
	[ "$(headers glob.fgr.txt calls | grep -c ' probe_calls:site_a: $')" -eq 1 ]
	[ "$(headers glob.fgr.txt calls | grep -c ' probe_calls:site_b: $')" -eq 1 ]
}

@test "uprobe with -p: only that process's calls" {
	requires root btf perf_event
	"$WORKLOADS/calls" 2000000000 &
	local one=$!
	"$WORKLOADS/calls" 2000000000 &
	local two=$!
	sleep 0.2
	fg --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:target" -p "$one" -d 0.3 -o p.fgr
	kill "$one" "$two"
	wait "$one" "$two" || true
	[ "$status" -eq 0 ]
	fgr-dump p.fgr >p.txt
	[ "$(grep -c '^sample ' p.txt)" -gt 100 ]
	[ "$(grep '^sample ' p.txt | grep -vc " pid=$one ")" -eq 0 ]
}

@test "uprobe on a command: its children too" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e "uprobe:$WORKLOADS/calls:target" -o kids.fgr -- sh -c "'$WORKLOADS/calls' 300; '$WORKLOADS/calls' 200"
	[ "$status" -eq 0 ]
	fgr-dump kids.fgr >kids.txt
	[ "$(grep -c '^sample .* comm=calls ' kids.txt)" -eq 500 ]
}

@test "events the ring buffer had no room for are counted: samples and losses add up" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -m 1 -e "uprobe:$WORKLOADS/calls:target" -o lost.fgr -- "$WORKLOADS/calls" 20000
	[ "$status" -eq 0 ]
	[[ $stderr == *"samples lost: the ring buffer of "* ]]
	fgr-dump lost.fgr >lost.txt
	local samples full busy
	samples=$(grep -c '^sample ' lost.txt)
	full=$(awk '/^lost / && / reason=1$/ { sub(/.*count=/, ""); n += $1 } END { print n + 0 }' lost.txt)
	# and those left out as their CPU was in another sample (reason 4), if any
	busy=$(awk '/^lost / && / reason=4$/ { sub(/.*count=/, ""); n += $1 } END { print n + 0 }' lost.txt)
	echo "# samples $samples lost $full, busy $busy" >&3
	[ "$full" -gt 0 ]
	[ $((samples + full + busy)) -eq 20000 ]
}

# --- the truth: page faults ---

@test "page-faults: the function touching fresh pages, the count as perf stat's" {
	requires root btf perf_event perf
	perf stat -x, -e page-faults -o stat.csv -- "$WORKLOADS/faults" 32
	local perf_count
	perf_count=$(awk -F, '$3 == "page-faults" { print $1 }' stat.csv)
	fg --separate-stderr fg-sample -e page-faults -o pf.fgr -- "$WORKLOADS/faults" 32
	[ "$status" -eq 0 ]
	sym_text pf.fgr
	blocks pf.fgr.txt faults >stacks
	local total touch
	total=$(wc -l <stacks)
	touch=$(grep -c '^touch_pages;main;' stacks)
	echo "# perf stat $perf_count, fg $total, in touch_pages $touch" >&3
	[ $((touch * 100)) -ge $((total * 90)) ]
	# 32 MiB of 4 KiB pages, each a fault
	[ "$touch" -ge 8192 ]
	[ $((total * 100)) -ge $((perf_count * 95)) ] && [ $((total * 100)) -le $((perf_count * 105)) ]
}

# leaf stacks and their shares in a folded file, for COMM: "stack percent" lines, sorted
stack_shares() {
	awk -v comm="$2" '
		{ n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1) }
		index(stack, comm ";") != 1 { next }
		{ w[stack] += n; total += n }
		END { for (s in w) printf "%s %.1f\n", s, 100 * w[s] / total }' "$1" | sort
}

@test "page-faults: the stacks' shares agree with perf record's within 3 points" {
	requires root btf perf_event perf
	# --buildid-mmap: while another program (any fg-sample's side-band
	# events) asks for build-ids in mmap events, this kernel marks every mmap
	# event so (PERF_RECORD_MISC_MMAP_BUILD_ID), also those of an event that
	# did not ask; perf 6.1 then takes the device numbers for a build-id's
	# size and perf script overflows its stack.  Asking for them itself gives
	# perf the layout it reads.  (--no-bpf-event: perf 6.1 can abort reading the BPF
	# programs another test loads meanwhile.)
	perf record --buildid-mmap -B --no-bpf-event -q -e page-faults -c 1 -g -o perf.data -- \
		"$WORKLOADS/faults" 64 split 2>perf.err
	perf script -i perf.data >perf.txt
	fg-fold perf.txt >perf.folded
	fg-sample -e page-faults -c 1 -o fg.fgr -- "$WORKLOADS/faults" 64 split 2>sample.err
	fg-sym fg.fgr 2>/dev/null | fg-fold >fg.folded
	stack_shares perf.folded faults >perf.shares
	stack_shares fg.folded faults >fg.shares
	join -a1 -a2 -e 0 -o 0,1.2,2.2 <(sed 's/ \([0-9.]*\)$/\t\1/' perf.shares | sort -t$'\t' -k1,1) \
		<(sed 's/ \([0-9.]*\)$/\t\1/' fg.shares | sort -t$'\t' -k1,1) -t$'\t' >both
	awk -F"\t" '$2 > 1 || $3 > 1' both | sed "s/^/# /" >&3
	# every stack above 2% in either profile is in both, within 3 points
	awk -F'\t' '($2 > 2 || $3 > 2) { d = $2 - $3; if (d < 0) d = -d; if (d > 3 || $2 == 0 || $3 == 0) { print "disagree: " $0; bad = 1 } }
		END { exit bad }' both
	# and the test is not vacuous: the three touching functions are there
	[ "$(awk -F'\t' '$2 > 2' both | grep -c ';touch_')" -eq 3 ]
}

# --- the truth: tracepoints ---

@test "tracepoint:syscalls:sys_enter_write: every call, with its whole stack" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- "$WORKLOADS/writes" 1000
	[ "$status" -eq 0 ]
	sym_text tp.fgr
	[ "$(headers tp.fgr.txt writes | grep -c ' syscalls:sys_enter_write: $')" -eq 1000 ]
	blocks tp.fgr.txt writes >stacks
	[ "$(wc -l <stacks)" -eq 1000 ]
	# the kernel's way in, then the workload's function, its caller and libc's start
	[ "$(grep -cE '(^|;)entry_SYSCALL_64[a-z_]*;writer;main;__libc_start_call_main(;|$)' stacks)" -eq 1000 ]
}

@test "tracepoint with -C: only the events of that CPU" {
	requires root btf perf_event taskset
	fg --separate-stderr fg-sample -C 0 -e syscalls:sys_enter_write -o cpu0.fgr -- taskset -c 1 "$WORKLOADS/writes" 500
	[ "$status" -eq 0 ]
	fgr-dump cpu0.fgr >cpu0.txt
	[ "$(grep -c '^sample .* comm=writes ' cpu0.txt)" -eq 0 ]
	fg --separate-stderr fg-sample -C 1 -e syscalls:sys_enter_write -o cpu1.fgr -- taskset -c 1 "$WORKLOADS/writes" 500
	fgr-dump cpu1.fgr >cpu1.txt
	[ "$(grep -c '^sample .* cpu=1 .* comm=writes ' cpu1.txt)" -eq 500 ]
}

@test "tracepoints' kernel stacks unwound in BPF are bpf_get_stack()'s, frame for frame" {
	requires root btf perf_event dd
	# a write(2) loop, then a context-switch ping-pong and buffered writes to a
	# new file: stacks from system calls, from the scheduler (woken and switched
	# out, in system calls and on interrupts), from the page cache and softirqs.
	# The ping-pong on one CPU: across two idle ones each wakeup is done by the
	# other CPU's interrupt, in its idle task, which a run of one command leaves out
	cat >work.sh <<-EOF
		"$WORKLOADS/writes" 500
		taskset -c 0 "$WORKLOADS/switches" 500
		dd if=/dev/zero of=file bs=4k count=2000 conv=fsync status=none
	EOF
	fg --separate-stderr fg-sample --kernel-unwind check -e tracepoint:syscalls:sys_enter_write \
		-e tracepoint:sched:sched_switch -e tracepoint:sched:sched_wakeup \
		-e tracepoint:filemap:mm_filemap_add_to_page_cache -e tracepoint:irq:softirq_entry \
		-o check.fgr -- sh work.sh
	[ "$status" -eq 0 ]
	line=$(grep 'kernel stacks:' <<<"$stderr")
	echo "# $line" >&3
	echo "# $(grep -- '--kernel-unwind check:' <<<"$stderr")" >&3
	[[ $line =~ ([0-9]+)\ unwound\ with\ the\ kernel\'s\ ORC\ tables.*\),\ ([0-9]+)\ by\ bpf_get_stack ]]
	walked=${BASH_REMATCH[1]} fell=${BASH_REMATCH[2]}
	[ "$walked" -ge 4000 ]
	# the walk gives up rarely: code outside vmlinux on the stack (a BPF trampoline)
	[ "$fell" -le $((walked / 20)) ]
	[[ $stderr == *"--kernel-unwind check: $walked stacks compared with bpf_get_stack()'s, 0 differ"* ]]
	# each event's stacks, deep ones among them
	sym_text check.fgr
	for ev in syscalls:sys_enter_write sched:sched_switch sched:sched_wakeup \
		filemap:mm_filemap_add_to_page_cache; do
		echo "# $ev: $(grep -c " $ev: \$" check.fgr.txt)" >&3
		[ "$(grep -c " $ev: \$" check.fgr.txt)" -ge 10 ]
	done
	grep -q '^	.* filemap_add_folio' check.fgr.txt
	grep -q '^	.* __schedule' check.fgr.txt
}

@test "perf events' kernel stacks unwound in BPF are bpf_get_stack()'s too: clock, faults, switches" {
	requires root btf perf_event
	# a clock's samples stop the kernel anywhere (the registers of an
	# interrupt); faults taken in the kernel and switches (registers made up
	# by perf, as a tracepoint's)
	cat >work.sh <<-EOF
		"$WORKLOADS/syscalls" 2 &
		"$WORKLOADS/faults" 32 split
		"$WORKLOADS/switches" 1000
		wait
	EOF
	fg --separate-stderr fg-sample --kernel-unwind check -F 999 -e cpu-clock -e page-faults \
		-e context-switches -o perf.fgr -- sh work.sh
	[ "$status" -eq 0 ]
	line=$(grep 'kernel stacks:' <<<"$stderr")
	echo "# $line" >&3
	echo "# $(grep -- 'samples by event:' <<<"$stderr")" >&3
	[[ $line =~ ([0-9]+)\ unwound\ with\ the\ kernel\'s\ ORC\ tables.*\),\ ([0-9]+)\ by\ bpf_get_stack ]]
	walked=${BASH_REMATCH[1]} fell=${BASH_REMATCH[2]}
	[ "$walked" -ge 1000 ]
	[ "$fell" -le $((walked / 20)) ]
	[[ $stderr == *"--kernel-unwind check: $walked stacks compared with bpf_get_stack()'s, 0 differ"* ]]
	sym_text perf.fgr
	grep -q '^	.* do_syscall_64' perf.fgr.txt
	grep -q '^	.* asm_exc_page_fault' perf.fgr.txt
}

@test "--kernel-unwind: orc by default once the tables pay, at once when given; helper says nothing of it, a bad one is refused" {
	requires root btf perf_event
	# by default 100 kernel stacks do not pay for copying the tables: all by the helper
	fg --separate-stderr fg-sample -v -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- "$WORKLOADS/writes" 100
	[ "$status" -eq 0 ]
	[[ $stderr == *"kernel stacks: 100 by bpf_get_stack(), the kernel's ORC tables not copied in (fewer than 4096 kernel stacks, which would not pay for them)"* ]]
	[[ $stderr != *"--kernel-unwind check"* ]]
	# 5,000 do: copied at the loop's next turn (it may come during the 5,000), and the
	# stacks after them walked with them; every stack counted one way or the other
	fg --separate-stderr fg-sample -v -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- \
		sh -c '"$1" 5000; sleep 1; "$1" 1000' sh "$WORKLOADS/writes"
	[ "$status" -eq 0 ]
	local re="kernel stacks: ([0-9]+) unwound with the kernel's ORC tables \([0-9]+ entries, [0-9]+ distinct rules, loaded in [0-9]+ ms once ([0-9]+) had been taken by bpf_get_stack\(\)\), 0 by bpf_get_stack\(\) instead"
	[[ $stderr =~ $re ]]
	local walked=${BASH_REMATCH[1]} before=${BASH_REMATCH[2]}
	echo "# $walked walked, $before before the tables" >&3
	[ "$before" -ge 4096 ] && [ "$before" -le 5000 ] && [ "$walked" -ge 1000 ]
	[ $((walked + before)) -eq 6000 ]
	fgr-dump tp.fgr | grep -c '^sample .* comm=writes ' | grep -qx 6000
	# given: copied at the start
	fg --separate-stderr fg-sample -v --kernel-unwind orc -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- "$WORKLOADS/writes" 100
	[ "$status" -eq 0 ]
	[[ $stderr == *"kernel stacks: 100 unwound with the kernel's ORC tables ("*" distinct rules, loaded in "*" ms), 0 by bpf_get_stack() instead"* ]]
	fg --separate-stderr fg-sample -v --kernel-unwind helper -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- "$WORKLOADS/writes" 100
	[ "$status" -eq 0 ]
	[[ $stderr != *"kernel stacks: "* ]]
	fgr-dump tp.fgr | grep -c '^sample .* comm=writes ' | grep -qx 100
	fg -2 --separate-stderr fg-sample --kernel-unwind frames -e tracepoint:syscalls:sys_enter_write -o tp.fgr
	[ "$(head -1 <<<"$stderr")" = "fg-sample: invalid kernel unwinder 'frames' (orc, helper or check)" ]
}

@test "--kernel-unwind: the tables' symbols asked of the kernel, /proc/kallsyms not read" {
	requires root btf perf_event strace
	# (LeakSanitizer cannot run under ptrace)
	ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 fg --separate-stderr strace -f -e trace=open,openat -o trace \
		fg-sample -v --kernel-unwind check -e tracepoint:syscalls:sys_enter_write -o tp.fgr -- "$WORKLOADS/writes" 100
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-sample: kernel symbols: looked up with bpf_kallsyms_lookup_name()"* ]]
	[[ $stderr == *"--kernel-unwind check: 100 stacks compared with bpf_get_stack()'s, 0 differ"* ]]
	! grep -q '"/proc/kallsyms"' trace
}

# --- the truth: context switches ---

@test "context-switches: each sample's stack is the switched-out task's" {
	requires root btf perf_event
	fg --separate-stderr fg-sample -e context-switches -o cs.fgr -- "$WORKLOADS/switches" 2000
	[ "$status" -eq 0 ]
	sym_text cs.fgr
	blocks cs.fgr.txt pinger >ping.stacks
	blocks cs.fgr.txt ponger >pong.stacks
	echo "# pinger $(wc -l <ping.stacks), ponger $(wc -l <pong.stacks)" >&3
	# each thread waits for the other about once a round: not always, as on two
	# CPUs the reply can be there before the read that waits for it
	[ "$(wc -l <ping.stacks)" -ge 1800 ]
	[ "$(wc -l <pong.stacks)" -ge 1800 ]
	# in the scheduler, under its own function and never the other's
	[ "$(grep -c ';pong;' ping.stacks)" -eq 0 ]
	[ "$(grep -c ';ping;' pong.stacks)" -eq 0 ]
	[ "$(grep -c ';ping;run;start_thread$' ping.stacks)" -ge 1800 ]
	[ "$(grep -c ';pong;run;start_thread$' pong.stacks)" -ge 1800 ]
	# but for the last switch of each, in the kernel's exit, its user memory
	# gone, and the few times a loaded machine preempts a thread before or
	# after its loop (in run, start_thread)
	grep -v ';ping;run;start_thread$' ping.stacks | sed 's/^/# other: /' >&3
	[ "$(grep -vc ';ping;run;start_thread$' ping.stacks)" -le 5 ]
	[ "$(grep -vc ';pong;run;start_thread$' pong.stacks)" -le 5 ]
	[ "$(grep -c '^do_task_dead;do_exit;' ping.stacks)" -le 1 ]
	# the switch itself: every stack but those few begins in the scheduler
	[ "$(grep -cE '^_*schedule;' ping.stacks)" -ge $(($(wc -l <ping.stacks) - 5)) ]
	[ "$(headers cs.fgr.txt pinger | grep -vc ' context-switches: $')" -eq 0 ]
}

# --- several events at once ---

@test "several events in one run: each sample carries its own" {
	requires root btf perf_event
	# as perf takes them: a comma-separated list, or -e again
	fg --separate-stderr fg-sample -e page-faults,cpu-clock -e "uprobe:$WORKLOADS/calls:target" -F 999 -o mix.fgr -- "$WORKLOADS/calls" 3000
	[ "$status" -eq 0 ]
	[[ $stderr == *"samples by event: page-faults "*" (each event), cpu-clock "*" (999 Hz), probe_calls:target 3000 (each event)"* ]]
	fgr-dump mix.fgr >mix.txt
	grep -q '^event @[0-9]* id=0 kind=1 config=2 period=1 freq=0 flags=0x0 name=page-faults$' mix.txt
	grep -q '^event @[0-9]* id=1 kind=1 config=0 period=0 freq=999 flags=0x0 name=cpu-clock$' mix.txt
	grep -q '^event @[0-9]* id=2 kind=3 .* name=probe_calls:target$' mix.txt
	sym_text mix.fgr
	[ "$(headers mix.fgr.txt calls | grep -c ' probe_calls:target: $')" -eq 3000 ]
	[ "$(headers mix.fgr.txt calls | grep -c ' page-faults: $')" -gt 10 ]
	# fg-fold folds the first event it sees unless told which
	fg-fold --event-filter page-faults mix.fgr.txt >pf.folded
	fg-fold --event-filter probe_calls:target mix.fgr.txt >up.folded
	[ "$(grep -c ';target ' up.folded)" -eq 2 ]
	! grep -q ';target ' pf.folded
}

# --- fg-record ---

@test "fg-record -e: the flame graph of an event, documented" {
	fg fg-record -h
	assert_output_contains " [-e event]... [-c n] "
	grep -q '^\.It Fl e Ar event' "$TOP/man/fg-record.1"
	grep -q '^\.It Fl c Ar n' "$TOP/man/fg-record.1"
	requires root btf perf_event
	fg --separate-stderr fg-record -e "uprobe:$WORKLOADS/calls:target" -o up.folded -- "$WORKLOADS/calls" 1000
	[ "$status" -eq 0 ]
	[ "$(grep ';site_a;target ' up.folded | awk '{ print $NF }')" -eq 700 ]
	[ "$(grep ';site_b;target ' up.folded | awk '{ print $NF }')" -eq 300 ]
	# -c reaches fg-sample: a sample every 4 faults, each weighing 4.  The
	# count is the CPU's, shared with every other process faulting there, so
	# the number of the workload's samples is a quarter of its faults only
	# within the samples those others take at each switch: 10% of 16 MiB's
	fg --separate-stderr fg-record -e page-faults -c 4 -o pf.perf -- "$WORKLOADS/faults" 16
	[ "$status" -eq 0 ]
	[ "$(headers pf.perf faults | grep -vc ' 4 page-faults: $')" -eq 0 ]
	local n
	n=$(headers pf.perf faults | wc -l)
	echo "# $n samples of 4 faults" >&3
	[ "$n" -ge 920 ] && [ "$n" -le 1130 ]
	# the SVG's widths are events
	fg --separate-stderr fg-record -e "uprobe:$WORKLOADS/calls:target" -o up.svg -- "$WORKLOADS/calls" 100
	[ "$status" -eq 0 ]
	grep -q '<title>target (70 events, 70.00%)' up.svg
}
