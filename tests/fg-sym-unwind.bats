#!/usr/bin/env bats
# fg-sym unwinding stack snapshots (fg-sample --call-graph dwarf): crafted
# snapshots (tests/tools/fgr-make's regs= and stack=) for each way a stack
# ends, JIT code walked by frame pointers, the vdso's identity; then real
# captures of the unwinding fixtures and of Debian's python3 through
# fg-sample --call-graph dwarf | fg-sym (root, BPF), the tables and the
# libdwfl oracle agreeing frame for frame.
bats_require_minimum_version 1.5.0
load helpers
load unwind
load sym-fixture

U=$FG_BUILD/unwind

# make: the stream described in $BATS_TEST_TMPDIR/in.txt
make_stream() {
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
}

# sym_stream ARGS...: fg-sym on in.txt's stream, nothing of this machine's /proc; output and stderr apart
sym_stream() {
	make_stream
	fg --separate-stderr fg-sym -v --kallsyms /dev/null --proc-root "$BATS_TEST_TMPDIR/noproc" "$@" \
		"$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
}

# ended REASON: the summary says one stack ended early, for REASON
ended() {
	[[ $stderr == *"1 stacks unwound: 0 whole, 1 ended early ("*"1 $1"* ]]
}

# JIT code at 7f0000001000: three functions, each with a frame pointer, named by a perf map
jit_chain() {
	local s=$BATS_TEST_TMPDIR/symfs
	mkdir -p "$s/tmp"
	printf '7f0000001000 100 jit_leaf\n7f0000001100 100 jit_mid\n7f0000001200 100 jit_outer\n' \
		>"$s/tmp/perf-4242.map"
	echo "mapping pid=4242 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
	# rbp -> [saved rbp, return address]: jit_leaf <- jit_mid <- jit_outer, whose rbp is 0
	echo "sample pid=4242 u=7f0000001010 regs=ip:7f0000001010,sp:7ffc0000,bp:7ffc0010$1" \
		"stack=0,0,7ffc0020,7f0000001120,0,7f0000001230${2:-}"
}

@test "fg-sym: --unwinder takes table, libdw or none" {
	fg -2 --separate-stderr fg-sym --unwinder fast /dev/null
	[ "${stderr_lines[0]}" = "fg-sym: invalid unwinder 'fast' (table, libdw or none)" ]
	[[ ${stderr_lines[1]} == "usage: fg-sym "* ]]
	[ -z "$output" ]
	fg -2 --separate-stderr fg-sym --unwinder
	[[ $stderr == *"requires an argument"* ]]
}

@test "fg-sym: JIT code without CFI is walked by its frame pointers, and named from its perf map" {
	jit_chain >"$BATS_TEST_TMPDIR/in.txt"
	sym_stream --symfs "$BATS_TEST_TMPDIR/symfs"
	[ "${lines[1]}" = "$(printf '\t    7f0000001010 jit_leaf+0x10 (/tmp/perf-4242.map)')" ]
	[ "${lines[2]}" = "$(printf '\t    7f0000001120 jit_mid+0x20 (/tmp/perf-4242.map)')" ]
	[ "${lines[3]}" = "$(printf '\t    7f0000001230 jit_outer+0x30 (/tmp/perf-4242.map)')" ]
	[ "${#lines[@]}" -eq 4 ]
	# a frame pointer of zero is the outermost frame
	[[ $stderr == *"1 stacks unwound: 1 whole, 0 ended early ("*"); 3 frames, 2 through frame pointers,"* ]]
	# the oracle has no CFI for JIT code: it names the leaf, and says why it stops
	sym_stream --symfs "$BATS_TEST_TMPDIR/symfs" --unwinder libdw
	[ "${#lines[@]}" -ge 2 ]
	[ "${lines[1]}" = "$(printf '\t    7f0000001010 jit_leaf+0x10 (/tmp/perf-4242.map)')" ]
}

@test "fg-sym: the unwound frames replace the frame-pointer ones; --unwinder none keeps those" {
	# the frame-pointer walk of the sampler found a bogus caller; the snapshot says otherwise
	jit_chain >"$BATS_TEST_TMPDIR/in.txt"
	sed -i 's/ u=7f0000001010 / u=7f0000001010,7f00000010ff /' "$BATS_TEST_TMPDIR/in.txt"
	sym_stream --symfs "$BATS_TEST_TMPDIR/symfs"
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[2]} == *" jit_mid+0x20 "* ]]
	sym_stream --symfs "$BATS_TEST_TMPDIR/symfs" --unwinder none
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[2]} == *" jit_leaf+0xff "* ]]
	[[ $stderr == *"fg-sym: 1 stack snapshots not unwound (--unwinder none): their frame-pointer frames are written"* ]]
	[[ $stderr != *"stacks unwound"* ]]
}

@test "fg-sym: registers of another kind are not unwound: the frame-pointer frames, counted" {
	jit_chain " abi=2" >"$BATS_TEST_TMPDIR/in.txt"
	sym_stream --symfs "$BATS_TEST_TMPDIR/symfs"
	[ "${#lines[@]}" -eq 2 ]
	[[ $stderr == *"fg-sym: 1 stack snapshots not unwound: registers of another kind, or without rip or rsp; their frame-pointer frames are written"* ]]
	# nor without a stack pointer
	echo "mapping pid=4242 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon" >"$BATS_TEST_TMPDIR/in.txt"
	echo "sample pid=4242 u=7f0000001010 regs=ip:7f0000001010,bp:7ffc0010 stack=0" >>"$BATS_TEST_TMPDIR/in.txt"
	sym_stream
	[[ $stderr == *"1 stack snapshots not unwound"* ]]
}

@test "fg-sym: each way a stack ends early is counted by its reason" {
	local d=$BATS_TEST_TMPDIR
	# the frame pointer leads out of the snapshot, upward: too small
	jit_chain "" "" | sed 's/stack=.*/stack=0,0,7ffc0100,7f0000001120/' >"$d/in.txt"
	sym_stream --symfs "$d/symfs"
	ended "snapshot too small"
	# ... and below it: unreadable
	jit_chain | sed 's/stack=.*/stack=0,0,7ff00000,7f0000001120/' >"$d/in.txt"
	sym_stream --symfs "$d/symfs"
	ended "unreadable"
	# nothing of the stack could be copied
	jit_chain | sed 's/ stack=.*//' >"$d/in.txt"
	sym_stream --symfs "$d/symfs"
	ended "unreadable"
	[ "${#lines[@]}" -eq 2 ]
	# a frame pointer pointing at itself: the stack pointer does not move up
	jit_chain | sed 's/stack=.*/stack=0,0,7ffc0010,7f0000001120/' >"$d/in.txt"
	sym_stream --symfs "$d/symfs"
	ended "loop"
	# a return address in no mapping
	jit_chain | sed 's/stack=.*/stack=0,0,7ffc0020,5000,0,0/' >"$d/in.txt"
	sym_stream --symfs "$d/symfs"
	ended "no mapping"
	[ "${lines[2]}" = "$(printf '\t            5000 [unknown] ([unknown])')" ]
	# a file that is not there: no file
	{
		echo "mapping pid=7 start=400000 end=500000 ino=12345 maj=8 min=1 path=/nonexistent/app"
		echo "sample pid=7 u=400123 regs=ip:400123,sp:7ffc0000,bp:0 stack=0,0"
	} >"$d/in.txt"
	sym_stream
	ended "no file"
	# the legacy vsyscall page: no unwind information
	{
		echo "mapping pid=7 start=ffffffffff600000 end=ffffffffff601000 path=[vsyscall]"
		echo "sample pid=7 u=ffffffffff600400 regs=ip:ffffffffff600400,sp:7ffc0000,bp:0 stack=0,0"
	} >"$d/in.txt"
	sym_stream
	ended "no unwind information"
}

# ld.so's _start has no CFI: at the instruction the kernel starts a process at (sampled in
# its first page fault, say) there is no return address (rbp is 0 from the exec); one instruction
# on there is no unwind information again (lib/cfi: entry_rule)
@test "fg-sym: a sample at ld.so's entry point, which has no CFI, is the outermost frame" {
	local ld entry
	ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
	entry=$((0x$(readelf -hW "$ld" | awk '/Entry point address/ { sub(/^0x/, "", $4); print $4 }')))
	[ "$entry" -gt 0 ]
	# (no FDE covers it, so lib/cfi makes it a row: else this tests nothing)
	cfi-dump "$ld" | grep -q "^$(printf '%016x' $entry) entry - -\$"
	for at in 0 3; do
		{
			mapping 7 $BASE "$ld"
			printf 'sample pid=7 u=%x regs=ip:%x,sp:7ffc0000,bp:0 stack=1,7ffc0100,0\n' \
				$((BASE + entry + at)) $((BASE + entry + at))
		} >"$BATS_TEST_TMPDIR/in.txt"
		sym_stream
		echo "# +$at: ${lines[1]}; ${stderr_lines[1]}" >&3
		if [ $at -eq 0 ]; then
			[[ $stderr == *"1 stacks unwound: 1 whole, 0 ended early ("* ]]
		else
			ended "no unwind information"
		fi
		[ "${#lines[@]}" -eq 2 ]
	done
}

@test "fg-sym: a stack of more than 1024 frames ends at 1024, too deep" {
	local d=$BATS_TEST_TMPDIR i stack="" sp=$((0x7ffc0000)) w
	# 1100 frames of JIT code, 16 bytes each: [saved rbp, return address]
	for ((i = 0; i < 1100; i++)); do
		printf -v w '%x,7f0000001120,' $((sp + 16 * i + 16)) # (no subshell a frame)
		stack+=$w
	done
	{
		echo "mapping pid=4242 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
		echo "sample pid=4242 u=7f0000001010 regs=ip:7f0000001010,sp:7ffc0000,bp:7ffc0000 stack=${stack%,}"
	} >"$d/in.txt"
	sym_stream
	ended "too deep"
	[ "${#lines[@]}" -eq 1025 ]
}

@test "fg-sym: the vdso is unwound with this kernel's image, and only when the recorded one is it" {
	local d=$BATS_TEST_TMPDIR off id
	off=$(fgr-vdso-sym __vdso_clock_gettime)
	id=$(fgr-vdso-sym --build-id)
	# at the function's first instruction: the return address is at rsp, into JIT code
	mk() {
		echo "mapping pid=42 start=7fff00000000 end=7fff00002000 $1 path=[vdso]"
		echo "mapping pid=42 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
		printf 'sample pid=42 u=%x regs=ip:%x,sp:7ffc0000,bp:0 stack=7f0000001010\n' \
			$((0x7fff00000000 + off)) $((0x7fff00000000 + off))
	}
	mk "buildid=$id" >"$d/in.txt"
	sym_stream
	[[ ${lines[1]} == *" __vdso_clock_gettime+0x0 ([vdso])" ]]
	[ "${lines[2]}" = "$(printf '\t    7f0000001010 [unknown] (//anon)')" ]
	[[ $stderr == *"1 stacks unwound: 1 whole,"*"2 frames, 0 through frame pointers"* ]]
	# a vdso recorded under another kernel: neither named nor unwound with this one
	mk "buildid=0102030405060708090a0b0c0d0e0f1011121314" >"$d/in.txt"
	sym_stream
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} == *" [unknown] ([vdso])" ]]
	[[ $stderr == *"1 file changed"* ]]
	ended "no file"
}

# two programs, $d/a with alpha() and $d/b with beta(), and a one-frame snapshot at alpha()'s
# first instruction as $d/a maps at BASE: SNAP (the sample line's end)
two_programs() {
	local d=$BATS_TEST_TMPDIR pc
	printf '__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\nint main(int c, char **v) { (void)v; return alpha(c); }\n' >"$d/a.c"
	printf 'static volatile int k;\n__attribute__((noinline)) int beta(int x) { k = x; return x * k - 7; }\nint main(int c, char **v) { (void)v; return beta(c) + beta(c + 1); }\n' >"$d/b.c"
	gcc -O2 "$d/a.c" -o "$d/a"
	gcc -O2 "$d/b.c" -o "$d/b"
	pc=$(printf '%x' $((BASE + $(addr_of "$d/a" alpha))))
	# at the first instruction the return address is at rsp: 0, no caller
	SNAP="u=$pc regs=ip:$pc,sp:7ffc0000,bp:0 stack=0"
}

# at TIME FILE: the mapping line of FILE at BASE, made at TIME
at() {
	mapping 42 $BASE "$2" | sed "s/ path=/ time=$1 path=/"
}

@test "fg-sym: an address mapped again to another file, or after exec, is unwound and named in the new one" {
	local d=$BATS_TEST_TMPDIR alpha beta
	two_programs
	# what each file says of that address alone
	{ at 100 "$d/a" && echo "sample pid=42 time=200 $SNAP"; } >"$d/in.txt"
	sym_stream
	alpha=${lines[1]}
	[[ $alpha == *" alpha+0x0 ($d/a)" ]]
	{ at 100 "$d/b" && echo "sample pid=42 time=200 $SNAP"; } >"$d/in.txt"
	sym_stream
	beta=${lines[1]}
	[[ $beta == *" ($d/b)" ]]
	[ "$beta" != "$alpha" ]
	[[ $stderr == *"1 stacks unwound: 0 whole, 1 ended early (0 snapshot too small, 1 no unwind information,"* ]]
	# munmap and mmap of another file at the same address: the frame cached for the first
	# file is not the second's
	{
		at 100 "$d/a"
		echo "sample pid=42 time=200 $SNAP"
		at 300 "$d/b"
		echo "sample pid=42 time=400 $SNAP"
		echo "sample pid=42 time=500 $SNAP"
	} >"$d/in.txt"
	sym_stream
	[ "${lines[1]}" = "$alpha" ]
	[ "${lines[3]}" = "$beta" ]
	[ "${lines[5]}" = "$beta" ]
	# exec: the new program's mapping; a sample taken before the exec (stamped before it,
	# written after) still runs the old program, at the same address
	{
		at 100 "$d/a"
		echo "sample pid=42 time=200 $SNAP"
		echo "comm pid=42 time=300 exec=1 comm=b"
		at 400 "$d/b"
		echo "sample pid=42 time=500 $SNAP"
		echo "sample pid=42 time=250 $SNAP"
		echo "sample pid=42 time=600 $SNAP"
	} >"$d/in.txt"
	sym_stream
	[ "${lines[1]}" = "$alpha" ]
	[ "${lines[3]}" = "$beta" ]
	[ "${lines[5]}" = "$alpha" ]
	[ "${lines[7]}" = "$beta" ]
	# and unwound each with its own file's CFI: alpha's entry has a rule (its caller's
	# return address, 0: no mapping); b has none there
	[[ $stderr == *"4 stacks unwound: 0 whole, 4 ended early (0 snapshot too small, 2 no unwind information,"*" 2 no mapping,"* ]]
}

@test "fg-sym: the same callers again are written and counted as the first time, named or not" {
	local d=$BATS_TEST_TMPDIR pc ra one
	printf '__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\nint main(int c, char **v) { (void)v; int r = alpha(c); return r ^ alpha(r); }\n' >"$d/a.c"
	gcc -O2 "$d/a.c" -o "$d/a"
	pc=$(printf '%x' $((BASE + $(addr_of "$d/a" alpha))))
	# main's first call of alpha returns to the next instruction
	ra=$(objdump -d "$d/a" | awk '/call.*<alpha>/ { getline; sub(":", "", $1); print $1; exit }')
	ra=$(printf '%x' $((BASE + 0x$ra)))
	# named, then (stripped) not: alpha <- main, whose caller's return address is 0
	for f in "$d/a" "$d/stripped"; do
		[ "$f" = "$d/a" ] || strip -o "$f" "$d/a"
		{ mapping 42 $BASE "$f" && echo "sample pid=42 u=$pc regs=ip:$pc,sp:7ffc0000,bp:0 stack=$ra,0"; } >"$d/in.txt"
		sym_stream
		[ "${#lines[@]}" -eq 3 ]
		one=$output
		[[ $stderr == *"1 samples, "* ]]
		if [ "$f" = "$d/a" ]; then
			[[ ${lines[2]} == *" main+0x5 ($f)" ]]
			[[ $stderr == *" 2 frames named, 0 unnamed ("* ]]
		else
			[[ ${lines[2]} == *" [unknown] ($f)" ]]
			[[ $stderr == *" 0 frames named, 2 unnamed (2 no symbols,"* ]]
		fi
		# three times: the same text, counted three times
		sed -n '$p' "$d/in.txt" >>"$d/in.txt"
		sed -n '$p' "$d/in.txt" >>"$d/in.txt"
		sym_stream
		[ "$output" = "$(printf '%s\n\n%s\n\n%s' "$one" "$one" "$one")" ]
		if [ "$f" = "$d/a" ]; then
			[[ $stderr == *"3 samples, 6 frames named, 0 unnamed ("* ]]
		else
			[[ $stderr == *"3 samples, 0 frames named, 6 unnamed (6 no symbols,"* ]]
		fi
	done
}

# --- real captures: fg-sample --call-graph dwarf | fg-sym (root, BPF) ---

# capture NAME COMMAND...: fg-sample --call-graph dwarf at 999 Hz of COMMAND into $d/NAME.fgr,
# then fg-sym's text with the tables ($d/NAME.out) and with libdwfl ($d/NAME.libdw), which must
# be the same for the command's samples.  fg-sample's own, taken as it starts the command, are
# left out of the comparison: caught in ld.so's lazy binding (_dl_runtime_resolve_xsavec, whose
# CFA is in rbx), libdwfl stops there where the tables go on to fg-sample's main
capture() {
	local d=$BATS_TEST_TMPDIR name=$1
	shift
	# native frames only: the eval loop's too (--no-python; tests/pyframes.bats has Python's)
	fg-sample -F 999 --call-graph dwarf --no-python -o "$d/$name.fgr" -- "$@" \
		2>"$d/$name.sample" >/dev/null
	sed 's/^/# /' "$d/$name.sample" >&3
	fg-sym -v "$d/$name.fgr" >"$d/$name.out" 2>"$d/$name.err"
	sed 's/^/# /' "$d/$name.err" >&3
	fg-sym -q --unwinder libdw "$d/$name.fgr" >"$d/$name.libdw"
	# (the command's own samples caught there too: oracle_text)
	not_fg_sample <"$d/$name.libdw" >"$d/$name.libdw.cmd"
	not_fg_sample <"$d/$name.out" >"$d/$name.out.cmd"
	diff -u <(oracle_text "$d/$name.libdw.cmd" "$d/$name.out.cmd") "$d/$name.out.cmd" >&2
}

# not_fg_sample: the stacks of fg-sym's text whose process is not fg-sample
not_fg_sample() {
	awk -v RS= -v ORS='\n\n' '$1 != "fg-sample"'
}

# live FIXTURE: at least 99% of the fixture's stacks whole and named, every mode there
live() {
	local d=$BATS_TEST_TMPDIR
	# the process' name, as the kernel keeps it: 15 bytes
	local comm=fixture-$1
	comm=${comm:0:15}
	capture "$1" "$U/fixture-$1" 100
	at_least_whole 99 "$d/$1.out" "$comm" || {
		not_whole "$d/$1.out" "$comm" | head -60 >&2
		return 1
	}
	every_mode "$d/$1.out"
}

@test "fg-sample --call-graph dwarf | fg-sym: the gcc fixtures' stacks are whole, the oracle agrees" {
	requires root btf perf_event
	live gcc-pie
	live gcc-nopie
	live gcc-static
}

@test "fg-sample --call-graph dwarf | fg-sym: the clang fixtures' stacks are whole, the oracle agrees" {
	requires root btf perf_event
	live clang-pie
	live clang-nopie
	live clang-static
}

@test "fg-sample --call-graph dwarf | fg-sym: Debian's python3 reaches _start under the interpreter" {
	requires root btf perf_event
	local d=$BATS_TEST_TMPDIR py=/usr/bin/python3
	[ -x "$py" ]
	capture py "$py" -c 'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
f(33)'
	# at least 99% of python3's stacks end at _start (its names may be [unknown]: Debian
	# strips its static functions), through the evaluation loop
	reach_start py python3
	grep -q ' _PyEval_EvalFrameDefault+' "$d/py.out"
	grep -q ' Py_RunMain+' "$d/py.out"
	# the frame-pointer frames alone stop at the leaf
	fg-sym -q --unwinder none "$d/py.fgr" >"$d/py.fp"
	[ "$(grep -c ' Py_RunMain+' "$d/py.fp")" -lt "$(grep -c ' Py_RunMain+' "$d/py.out")" ]
}

@test "fg-sample --call-graph dwarf | fg-sym in a pipe, as the samples come" {
	requires root btf perf_event
	local d=$BATS_TEST_TMPDIR
	fg-sample -F 999 --call-graph dwarf -- "$U/fixture-gcc-pie" 100 2>"$d/err" |
		fg-sym -v >"$d/out" 2>"$d/sym.err"
	sed 's/^/# /' "$d/sym.err" >&3
	at_least_whole 99 "$d/out" fixture-gcc-pie
	# kernel frames come first, then the unwound user frames
	grep -q '\[kernel.kallsyms\]' "$d/out"
}
