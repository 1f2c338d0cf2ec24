#!/usr/bin/env bats
# fg-sample --call-graph cfi: user stacks unwound in the BPF program with the
# tables lib/cfi builds, loaded into maps as processes map files (root, BPF).
# The unwinding fixtures (built by gcc and clang without frame pointers) and
# Debian's python3 reach _start; with --cfi-check every sample carries both
# the in-kernel unwind and a snapshot, which fg-sym unwinds: the two agree
# frame for frame.  Samples whose tables are not loaded yet (a process just
# started, a dlopen) fall back to a snapshot and are whole too; limits and
# a corrupt .eh_frame are counted.  JIT code (anonymous memory) is walked by
# its frame pointers.
bats_require_minimum_version 1.5.0
load helpers
load unwind

U=$FG_BUILD/unwind

setup() {
	requires root btf perf_event
}

# capture NAME COMMAND...: fg-sample --call-graph cfi (plus $CFI_OPTS) of COMMAND into
# NAME.fgr, its summary in NAME.sample, fg-sym's text in NAME.out
capture() {
	local d=$BATS_TEST_TMPDIR name=$1
	shift
	# shellcheck disable=SC2086 # CFI_OPTS: words
	local rc=0
	fg-sample -v -F 999 --call-graph cfi ${CFI_OPTS:-} -o "$d/$name.fgr" -- "$@" \
		2>"$d/$name.sample" >/dev/null || rc=$?
	sed 's/^/# /' "$d/$name.sample" >&3
	[ "$rc" -eq 0 ] || { echo "# fg-sample: exit $rc" >&3; return 1; }
	fg-sym -v "$d/$name.fgr" >"$d/$name.out" 2>"$d/$name.err" || rc=$?
	[ "$rc" -eq 0 ] || { sed 's/^/# fg-sym: /' "$d/$name.err" >&3; return 1; }
}

# unwound NAME PCT MIN BUILT: at least MIN of NAME's user stacks were unwound in the
# kernel, and at least PCT% of them all; with BUILT 1, of the samples that did not fall
# back while a table of theirs was still being built
unwound() {
	local f=$BATS_TEST_TMPDIR/$1.sample building=0 line
	line=$(grep 'cfi: [0-9]* user stacks unwound in BPF' "$f")
	[[ $line =~ cfi:\ ([0-9]+)\ user\ stacks.*\;\ ([0-9]+)\ samples\ fell\ back ]]
	local walks=${BASH_REMATCH[1]} fell=${BASH_REMATCH[2]}
	if [ "$4" = 1 ]; then
		line=$(grep "cfi: the program's fallbacks: " "$f")
		[[ $line =~ fallbacks:\ ([0-9]+)\ a\ file\ without\ its\ table\ yet,\ ([0-9]+)\ a\ table\ being ]]
		building=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
	fi
	echo "# $1: $walks unwound in BPF, $fell fell back ($building while a table was built)" >&3
	[ "$walks" -ge "$3" ] && [ $((100 * walks)) -ge $(($2 * (walks + fell - building))) ]
}

# in_bpf NAME PCT: at least PCT% of NAME's user stacks were unwound in the kernel
in_bpf() { unwound "$1" "$2" 1 0; }

# in_bpf_built NAME PCT MIN: as in_bpf, of the samples that did not fall back while a table
# of theirs was still being built, and at least MIN walks: a table refused at the start is
# built again while the program runs, for as long as a busy machine makes it take
in_bpf_built() { unwound "$1" "$2" "$3" 1; }

# agree NAME [COMM...]: with --cfi-check, each sample unwound in BPF names the same frames
# as its snapshot unwound by fg-sym (fg-sym --unwinder none prints the in-kernel frames),
# or the snapshot ended first (its frames the walk's first ones) in at most 2% of them;
# the samples of the COMMs are left out
agree() {
	local d=$BATS_TEST_TMPDIR
	fg-sym --unwinder none "$d/$1.fgr" >"$d/$1.kernel" 2>/dev/null
	fgr-dump "$d/$1.fgr" | sed -n 's/^sample .* comm=\(.*\) weight=.* flags=\(0x[0-9a-f]*\) .*/\1 \2/p' >"$d/$1.flags"
	python3 - "$d/$1.out" "$d/$1.kernel" "$d/$1.flags" "${@:2}" <<-'EOF'
		import sys
		snap = open(sys.argv[1]).read().split("\n\n")
		kern = open(sys.argv[2]).read().split("\n\n")
		comms, flags = zip(*(l.rsplit(" ", 1) for l in open(sys.argv[3]).read().splitlines()))
		flags = [int(x, 16) for x in flags]
		assert len(flags) == len(snap) - 1 == len(kern) - 1, (len(flags), len(snap), len(kern))
		# fg-sample itself, sampled as it starts the command: under ASan its frames
		# are large, and an 8 KiB snapshot can end before main's callers
		skip = {"fg-sample", *sys.argv[4:]}
		n = bad = short = 0
		for s, k, f, c in zip(snap, kern, flags, comms):
		    if not f & 0x1000:  # FG_SAMPLE_F_USTACK_CFI
		        continue
		    if c in skip:
		        continue
		    n += 1
		    # a stack deeper than the snapshot's bytes (python3 starting up): the
		    # snapshot's frames are the walk's first ones, and it ends there
		    sl, kl = s.split("\n"), k.split("\n")
		    if len(sl) < len(kl) and kl[:len(sl)] == sl:
		        short += 1
		        continue
		    if s != k:
		        bad += 1
		        if bad <= 3:
		            print("snapshot:\n%s\nin BPF:\n%s\n" % (s, k), file=sys.stderr)
		print("# %d samples unwound both ways, %d differ, %d snapshots ended first" % (n, bad, short))
		sys.exit(1 if bad or n < 100 or 50 * short > n else 0)
	EOF
}

# live FIXTURE: whole stacks, every mode, mostly unwound in BPF, and the same as the snapshots'
live() {
	local d=$BATS_TEST_TMPDIR comm=fixture-$1
	comm=${comm:0:15}
	CFI_OPTS=--cfi-check capture "$1" "$U/fixture-$1" 100
	at_least_whole 99 "$d/$1.out" "$comm" || {
		not_whole "$d/$1.out" "$comm" | head -60 >&2
		return 1
	}
	every_mode "$d/$1.out"
	in_bpf "$1" 60
	agree "$1" >&3
}

@test "fg-sample --call-graph cfi: the gcc fixtures' stacks are whole and agree with their snapshots" {
	live gcc-pie
	live gcc-nopie
	live gcc-static
}

@test "fg-sample --call-graph cfi: the clang fixtures' stacks are whole and agree with their snapshots" {
	live clang-pie
	live clang-nopie
	live clang-static
}

@test "fg-sample --call-graph cfi: Debian's python3 reaches _start, unwound in BPF" {
	local d=$BATS_TEST_TMPDIR py=/usr/bin/python3
	[ -x "$py" ]
	# the eval loop's native frames (--no-python; tests/pyframes.bats has Python's)
	CFI_OPTS="--cfi-check --no-python" capture py "$py" -c 'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
f(33)'
	reach_start py python3
	grep -q ' _PyEval_EvalFrameDefault+' "$d/py.out"
	grep -q ' Py_RunMain+' "$d/py.out"
	in_bpf py 50
	agree py >&3
	# without --cfi-check, a sample unwound in BPF is a few hundred bytes
	CFI_OPTS=--no-python capture py2 "$py" -c 'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
f(33)'
	grep -q 'cfi: .* tables in BPF maps' "$d/py2.sample"
	in_bpf py2 50
}

@test "fg-sample --call-graph cfi: tables kept between runs are read back, walks agree with them; --no-cache keeps none" {
	local d=$BATS_TEST_TMPDIR py=/usr/bin/python3 prog='def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
f(31)'
	export XDG_CACHE_HOME=$d/xdg
	CFI_OPTS="--no-python" capture first "$py" -c "$prog"
	grep -E 'cfi: tables kept between runs: 0 read, [1-9][0-9]* not there \([1-9][0-9]* written\), 0 refused' "$d/first.sample"
	# private: the directories 0700, the tables 0600, all root's
	[ "$(stat -c %a "$d/xdg/fg" "$d/xdg/fg/cfi" | sort -u)" = 700 ]
	[ "$(stat -c '%a %u' "$d"/xdg/fg/cfi/*.cfi | sort -u)" = "600 0" ]
	# the next run reads them, and its walks in BPF agree with the snapshots' unwinding
	CFI_OPTS="--cfi-check --no-python" capture second "$py" -c "$prog"
	grep -E 'cfi: tables kept between runs: [1-9][0-9]* read, 0 not there \(0 written\), 0 refused' "$d/second.sample"
	reach_start second python3
	in_bpf second 50
	agree second >&3
	# a table file cut short: refused, named, built again and written again
	local f=$(ls -S "$d"/xdg/fg/cfi/*.cfi | head -1)
	truncate -s 100 "$f"
	CFI_OPTS="--no-python" capture third "$py" -c "${prog/f(31)/f(33)}"
	grep -E 'kept between runs: [1-9][0-9]* read, 0 not there \(1 written\), 1 refused and built again' "$d/third.sample"
	grep -F "the first table file refused: '$(basename "$f")', wrong from byte 100" "$d/third.sample"
	[ "$(stat -c %s "$f")" -gt 100 ]
	in_bpf_built third 90 50
	# another build of fg-sample (here a copy: another inode) builds its own tables
	cp "$(command -v fg-sample)" "$d/fg-sample-other"
	"$d/fg-sample-other" -v -F 999 --no-python -o "$d/other.fgr" -- "$py" -c "$prog" 2>"$d/other.sample" >/dev/null
	grep -E 'cfi: tables kept between runs: 0 read, [1-9][0-9]* not there' "$d/other.sample"
	# --no-cache: none read, none written, nothing said
	rm -rf "$d/xdg"
	CFI_OPTS="--no-python --no-cache" capture fourth "$py" -c "$prog"
	! grep 'kept between runs' "$d/fourth.sample"
	[ ! -e "$d/xdg/fg/cfi" ]
}

@test "fg-sample --call-graph cfi: tables are not kept in a directory another user owns, and it says so" {
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/home/.cache"
	chown -R 65534:65534 "$d/home"
	# a home reached through sudo -E: not written to, nor read from; the run goes on
	HOME=$d/home XDG_CACHE_HOME= fg --separate-stderr fg-sample -F 999 -o "$d/out.fgr" -- "$U/fixture-gcc-pie" 20
	[ "$status" -eq 0 ]
	[[ $stderr == *"not keeping unwind tables in '$d/home/.cache/fg/cfi': '$d/home' belongs to user 65534, not to you or root (--no-cache silences this)"* ]]
	[ ! -e "$d/home/.cache/fg" ]
	fg-sym "$d/out.fgr" | grep -q ' main+'
}

@test "fg-sample --call-graph cfi: rbp 0 at a return address in a gap of a table is the outermost frame, in both walks" {
	local d=$BATS_TEST_TMPDIR fx line
	# the fixture's gap mode: gap_call has no CFI and calls with rbp 0 (ld.so's _start's way)
	for fx in gcc-pie clang-static; do
		CFI_OPTS=--cfi-check capture gap "$U/fixture-$fx" 300 gap
		fg-sym --unwinder none "$d/gap.fgr" >"$d/gap.kernel" 2>/dev/null
		# the stacks through gap_call end there, in the kernel's walk and in the snapshots'
		for f in gap.kernel gap.out; do
			read -r n last < <(awk 'BEGIN { RS = "" } / gap_call\+/ { n++; k = split($0, l, "\n")
				if (l[k] ~ / gap_call\+0x[0-9a-f]+ \(/) m++ } END { print n + 0, m + 0 }' "$d/$f")
			echo "# $fx $f: $n stacks through gap_call, $last end there" >&3
			[ "$n" -ge 100 ] && [ "$last" -eq "$n" ]
		done
		# and are counted whole, not "ended early": by the program and by fg-sym
		line=$(grep 'cfi: [0-9]* user stacks unwound in BPF' "$d/gap.sample")
		[[ $line =~ cfi:\ ([0-9]+)\ user\ stacks.*\ ([0-9]+)\ whole ]]
		[ $((100 * BASH_REMATCH[2])) -ge $((95 * BASH_REMATCH[1])) ]
		line=$(grep 'stacks unwound: ' "$d/gap.err")
		[[ $line =~ ([0-9]+)\ stacks\ unwound:\ ([0-9]+)\ whole ]]
		[ $((100 * BASH_REMATCH[2])) -ge $((95 * BASH_REMATCH[1])) ]
		agree gap >&3
	done
}

@test "fg-sample --call-graph cfi: JIT code is walked by its frame pointers in BPF, named from its perf map" {
	local d=$BATS_TEST_TMPDIR pid
	# the workload's JIT code is anonymous memory ("//anon" in the mmap events), without
	# a table: the walk takes its frames by frame pointers, then goes on by CFI
	CFI_OPTS=--cfi-check capture jit "$WORKLOADS/jit" 2
	pid=$(fgr-dump "$d/jit.fgr" | sed -n 's/^sample .* pid=\([0-9]*\) .* comm=jit .*/\1/p' | head -n 1)
	in_bpf jit 90
	grep -Eq 'frames on average \([1-9][0-9]* frames in all through frame pointers' "$d/jit.sample"
	reach_start jit jit
	grep -q ' jit_loop+0x[0-9a-f]* (/tmp/perf-[0-9]*\.map)$' "$d/jit.kernel"
	grep -q ' jit_outer+0x[0-9a-f]* (/tmp/perf-[0-9]*\.map)$' "$d/jit.kernel"
	grep -q ' run_jit+0x' "$d/jit.kernel"
	agree jit >&3
	rm -f "/tmp/perf-$pid.map"
}

# dlshort DIR: DIR/dlshort LIB, which opens LIB and runs its fixlib_work (calling back
# into the program) for 60 ms
dlshort() {
	local d=$1
	cat >"$d/dl.c" <<-'EOF'
		#include <dlfcn.h>
		#include <stdio.h>
		#include <time.h>
		static unsigned long cb(unsigned long x) { return x * 3 + 1; }
		int main(int argc, char **argv)
		{
			void *h = dlopen(argv[1], RTLD_NOW);
			unsigned long (*work)(unsigned long, unsigned long (*)(unsigned long));
			struct timespec t0, t;
			unsigned long s = 0;

			if (!h || !(work = (unsigned long (*)(unsigned long, unsigned long (*)(unsigned long)))dlsym(h, "fixlib_work")))
				return 1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				s += work(1000, cb);
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 60);
			return (int)(s & 1) * 0;
		}
	EOF
	gcc -O2 -fomit-frame-pointer -o "$d/dlshort" "$d/dl.c" -ldl
}

@test "fg-sample --call-graph cfi: processes that dlopen a library and exit in 100 ms are whole, through the fallback" {
	local d=$BATS_TEST_TMPDIR
	dlshort "$d"
	capture dl sh -c "for i in 1 2 3 4 5 6 7 8; do '$d/dlshort' '$U/libfixlib-gcc.so' || exit 1; done"
	grep -q 'lost 0' "$d/dl.sample"
	grep -q 'samples fell back to a snapshot' "$d/dl.sample"
	# (a short process spends more of its time starting and ending: exec, ld.so)
	at_least_whole 97 "$d/dl.out" dlshort || {
		not_whole "$d/dl.out" dlshort | head -40 >&2
		return 1
	}
	# the library's frames, under main, through the fallback and in BPF alike
	[ "$(grep -c ' fixlib_work+' "$d/dl.out")" -ge 50 ]
}

@test "fg-sample --call-graph cfi: a new process' first fallback wakes fg-sample, which reads its mappings then" {
	local d=$BATS_TEST_TMPDIR
	# each dlshort's first walks need two mappings the program has not got (the library
	# it opened, libc's start) and fall back; the sample asks for the process' mappings,
	# read from /proc at once rather than at the next 20 ms turn (counted under -v)
	dlshort "$d"
	capture ask sh -c "for i in 1 2 3 4 5 6 7 8; do '$d/dlshort' '$U/libfixlib-gcc.so' || exit 1; done"
	grep -q 'lost 0' "$d/ask.sample"
	[[ $(cat "$d/ask.sample") =~ \ ([0-9]+)\ processes\ loaded\ at\ their\ first\ sample\ \(([0-9]+)\ asked\ for\ by\ the\ program ]]
	# (a process' first sample can come after the records of its start, and once the first
	# has had the library's table built, the walk finds it through the kernel's list of
	# mappings: on a busy machine 2 of 8 asked, 4 or more on a quiet one; the first asks)
	echo "# processes asked for by the program: ${BASH_REMATCH[2]} of 8" >&3
	[ "${BASH_REMATCH[2]}" -ge 1 ]
	[ "${BASH_REMATCH[1]}" -ge "${BASH_REMATCH[2]}" ]
	at_least_whole 97 "$d/ask.out" dlshort || {
		not_whole "$d/ask.out" dlshort | head -40 >&2
		return 1
	}
}

@test "fg-sample --call-graph cfi: system-wide, a process running before the start gets its tables at its first samples" {
	local d=$BATS_TEST_TMPDIR wl n cfi fell
	"$U/fixture-gcc-nopie" 2000 >/dev/null &
	wl=$!
	wait_until 5 grep -q fixture "/proc/$wl/comm"
	# (8 s: with the other lane busy, hundreds of new processes are asked for before it, and
	# a read of one's /proc/PID/maps may wait long for its memory map's lock; under ASan,
	# with 547 asked before it, its table came 2.3 s in, and a 4 s run walked 43%)
	fg-sample -v -F 999 -d 8 -o "$d/run.fgr" 2>"$d/run.sample" || {
		kill "$wl"
		return 1
	}
	kill "$wl"
	wait "$wl" || true
	sed 's/^/# /' "$d/run.sample" | grep -E 'side-band|user stacks unwound' >&3
	# not loaded at the start: asked for at its first samples, its later ones walked in BPF
	[[ $(cat "$d/run.sample") =~ \ ([1-9][0-9]*)\ processes\ loaded\ at\ their\ first\ sample ]]
	fgr-dump "$d/run.fgr" | grep "^sample .* pid=$wl " >"$d/wl.samples"
	n=$(wc -l <"$d/wl.samples")
	cfi=$(python3 -c 'import re, sys
print(sum(1 for l in open(sys.argv[1]) if int(re.search(r" flags=(0x[0-9a-f]+)", l).group(1), 16) & 0x1000))' "$d/wl.samples")
	fell=$(python3 -c 'import re, sys
print(sum(1 for l in open(sys.argv[1]) if int(re.search(r" flags=(0x[0-9a-f]+)", l).group(1), 16) & 0x2000))' "$d/wl.samples")
	echo "# the workload's samples: $n, walked in BPF $cfi, fell back $fell" >&3
	[ "$n" -gt 100 ]
	# (the first ones wait for the tables of the processes asked for before it, on a busy machine)
	[ "$cfi" -ge $((n / 2)) ]
	# and every one is whole: the first ones through their snapshots
	fg-sym "$d/run.fgr" >"$d/run.out" 2>/dev/null
	at_least_whole 97 "$d/run.out" fixture-gcc-nop || {
		not_whole "$d/run.out" fixture-gcc-nop | head -40 >&2
		return 1
	}
}

@test "fg-sample --call-graph cfi: processes started one after another get their tables within tens of ms, kept from the one before" {
	local d=$BATS_TEST_TMPDIR
	# six python3 processes of 150 ms each, one after the other: each maps the files the
	# one before mapped, whose tables stay loaded after it ends; a process' samples fall back
	# only until its records reach the tables' thread (a tick of 20 ms), not for its life.
	# 0.3 s between them, so that one's exit reaches the tables' thread before the next
	# one's first samples ask for its tables (under ASan the ask once came first: the
	# tables were shared with the process still alive to the thread, none "kept")
	capture seq sh -c 'for i in 1 2 3 4 5 6; do python3 -c "import time
t = time.time()
while time.time() - t < 0.15: pass" || exit 1; sleep 0.3; done'
	grep -q 'lost 0' "$d/seq.sample"
	grep -Eq 'mappings shared one \([1-9][0-9]* kept since its last process\)' "$d/seq.sample"
	# the thread's counts: every record taken, none left out; every table loaded was freed
	grep -Eq 'cfi: [1-9][0-9]* side-band records to the tables.* thread in [1-9][0-9]* batches .*; 0 left out' "$d/seq.sample"
	[[ $(grep 'tables loaded' "$d/seq.sample") =~ \ ([0-9]+)\ tables\ loaded,\ ([0-9]+)\ freed ]]
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
	# the share of each python3's samples that fell back: after the first, 35% at most in
	# the median (3 to 13% here; 36 to 99%, median 59%, when the tables were freed with
	# each process and the records came every 100 ms)
	fgr-dump "$d/seq.fgr" | python3 -c '
import re, sys
n, fell = {}, {}
for line in sys.stdin:
    if line.startswith("sample") and " comm=python3 " in line:
        pid = int(re.search(r" pid=(\d+)", line).group(1))
        flags = int(re.search(r" flags=0x([0-9a-f]+)", line).group(1), 16)
        n[pid] = n.get(pid, 0) + 1
        fell[pid] = fell.get(pid, 0) + bool(flags & 0x2000)  # FG_SAMPLE_F_CFI_FALLBACK
shares = [100 * fell[p] // n[p] for p in sorted(n)]
print("# python3 samples that fell back, process by process: %s%%" % "%, ".join(map(str, shares)))
later = sorted(shares[1:])
sys.exit(0 if len(shares) == 6 and later[len(later) // 2] <= 35 else 1)' >&3
}

@test "fg-sample --call-graph cfi: a new process whose files have tables walks before its mappings arrive, and agrees" {
	local d=$BATS_TEST_TMPDIR
	# twelve processes of 30 ms, one after the other, mapping the same files: each one's
	# first samples come before its mappings reach the program, which finds them in the
	# kernel's list and the files' tables by their inode (the executable's own code from
	# its address space's start_code, without a lookup); --cfi-check: those walks name the
	# same frames as the snapshots
	CFI_OPTS=--cfi-check capture vma sh -c "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do '$U/fixture-gcc-pie' 30 || exit 1; done"
	grep -q 'lost 0' "$d/vma.sample"
	grep -Eq 'cfi: the program.s fallbacks: .*; [1-9][0-9]* mappings looked up in the kernel.s list, [1-9][0-9]* found with their table, [1-9][0-9]* executables. code found from their address space;' "$d/vma.sample"
	agree vma >&3
}

@test "fg-sample --call-graph cfi: a file rewritten in place is walked with its new table, not the one kept" {
	local d=$BATS_TEST_TMPDIR
	# x runs gcc's fixture under the name old (a hard link: the same inode), exits, and
	# its table is kept for the next process; then x is rewritten in place with clang's
	# fixture (same device and inode, other code) and runs twelve times.  Tables are
	# keyed by the inode's change time too, so x's walks in BPF use clang's rows: the
	# same frames as x's snapshots, which fg-sym unwinds with the file as it now is
	cp "$U/fixture-gcc-pie" "$d/x"
	cp "$U"/libfixlib-*.so "$d/"
	ln "$d/x" "$d/old"
	CFI_OPTS=--cfi-check capture rw sh -c "'$d/old' 50 && cat '$U/fixture-clang-pie' >'$d/x' &&
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do '$d/x' 30 || exit 1; done"
	[ "$(stat -c %i "$d/x")" = "$(stat -c %i "$d/old")" ]
	grep -q 'lost 0' "$d/rw.sample"
	agree rw old >&3
}

# swap_layout A B: the swap fixtures A and B (tests/unwind/swap.S) are what the tests below
# take them for: the same code at the same addresses, and tables that differ in one row only,
# swap_hot's frame over its loop (CFA rsp+40 in A, rsp+72 in B)
swap_layout() {
	local d=$BATS_TEST_TMPDIR a=$1 b=$2 hot size text want
	hot=$(nm -S "$a" | awk '$4 == "swap_hot" { print $1, $2 }')
	[ -n "$hot" ] && [ "$hot" = "$(nm -S "$b" | awk '$4 == "swap_hot" { print $1, $2 }')" ] || {
		echo "swap_hot is not at the same address in $a and $b" >&2
		return 1
	}
	read -r hot size <<<"$hot"
	# their code differs only in swap_hot (the size of its frame, the stores zeroing it)
	objcopy -O binary -j .text "$a" "$d/a.text"
	objcopy -O binary -j .text "$b" "$d/b.text"
	text=$(objdump -h "$a" | awk '$2 == ".text" { print $4 }')
	cmp -l "$d/a.text" "$d/b.text" | awk -v text=$((0x$text)) -v hot=$((0x$hot)) -v size=$((0x$size)) '
		{ at = text + $1 - 1; n++ }
		at < hot || at >= hot + size { printf "%s and %s differ at %x\n", a, b, at; bad = 1 }
		END { exit bad || !n }' a="$a" b="$b" >&2 || {
		echo "$a and $b are not the same code but for swap_hot's frame" >&2
		return 1
	}
	want=$(printf '< %016x rsp+40 u c-8\n> %016x rsp+72 u c-8' $((0x$hot + 4)) $((0x$hot + 4)))
	[ "$(diff <(cfi-dump "$a") <(cfi-dump "$b") | grep '^[<>]')" = "$want" ] || {
		echo "the rows of $a and $b differ elsewhere than swap_hot's frame:" >&2
		diff <(cfi-dump "$a") <(cfi-dump "$b") >&2
		return 1
	}
}

# swap_agree NAME PROCS[/WALKED] MIN COMM...: with --cfi-check, every sample of the COMMs
# unwound in BPF names the frames of its snapshot, and ends at _start when in the swap code
# (elsewhere, in ld.so opening a library, both may end early alike); they ran as PROCS
# processes, each (or WALKED of them at least) with MIN such samples at least (each had its
# table in the maps for most of its life)
swap_agree() {
	local d=$BATS_TEST_TMPDIR
	fg-sym --unwinder none "$d/$1.fgr" >"$d/$1.kernel" 2>/dev/null
	fgr-dump "$d/$1.fgr" | grep '^sample ' >"$d/$1.samples"
	python3 - "$d/$1.out" "$d/$1.kernel" "$d/$1.samples" "${@:2}" <<-'EOF'
		import re, sys
		snap = open(sys.argv[1]).read().split("\n\n")
		kern = open(sys.argv[2]).read().split("\n\n")
		recs = open(sys.argv[3]).read().splitlines()
		procs, want = (int(x) for x in (sys.argv[4] + "/" + sys.argv[4]).split("/")[:2])
		least, comms = int(sys.argv[5]), sys.argv[6:]
		assert len(recs) == len(snap) - 1 == len(kern) - 1, (len(recs), len(snap), len(kern))
		walked, bad, cut = {}, 0, 0
		for s, k, r in zip(snap, kern, recs):
		    comm = re.search(r" comm=(\S+)", r).group(1)
		    if comm not in comms:
		        continue
		    pid = "%s/%s" % (comm, re.search(r" pid=(\d+)", r).group(1))
		    walked.setdefault(pid, 0)
		    if not int(re.search(r" flags=0x([0-9a-f]+)", r).group(1), 16) & 0x1000:
		        continue  # not FG_SAMPLE_F_USTACK_CFI: fell back (a table not loaded yet)
		    walked[pid] += 1
		    if s != k:
		        bad += 1
		        if bad <= 3:
		            print("snapshot:\n%s\nin BPF:\n%s\n" % (s, k), file=sys.stderr)
		    elif re.search(r" swap_(hot|mid)\+", (k.split("\n") + [""])[1]) and \
		            not re.search(r" _start\+0x[0-9a-f]+ \(", k.rsplit("\n", 1)[-1]):
		        cut += 1
		        if cut <= 3:
		            print("not whole:\n%s\n" % k, file=sys.stderr)
		print("# unwound in BPF, by process: %s; %d differ from their snapshot, %d not whole" %
		      (", ".join("%s %d" % w for w in sorted(walked.items())), bad, cut))
		sys.exit(1 if bad or cut or len(walked) != procs or
		         sum(n >= least for n in walked.values()) < want else 0)
	EOF
}

@test "fg-sample --call-graph cfi: two files with other rules at the same pcs, walked in turn on one CPU, each by its own rows" {
	local d=$BATS_TEST_TMPDIR
	# swap-a and swap-b at once on one CPU: each walk follows the other's often, and finds
	# the other file's row for its pc kept (in the last walk's rows, in the cache); taken,
	# it reads a return address of 0 and ends (tests/unwind/swap.S)
	swap_layout "$U/swap-a" "$U/swap-b"
	CFI_OPTS=--cfi-check capture two "$U/swap-run" 300 "$U/swap-a,$U/swap-b"
	grep -q 'lost 0' "$d/two.sample"
	# (about 100 samples each on a busy machine: a stack of a process' start not whole is 1%)
	at_least_whole 97 "$d/two.out" swap-a
	at_least_whole 97 "$d/two.out" swap-b
	swap_agree two 2 30 swap-a swap-b >&3
}

@test "fg-sample --call-graph cfi: a slot freed and given to another file's table: the rows kept from the first are not taken" {
	local d=$BATS_TEST_TMPDIR a=$U/swap-a b=$U/swap-b c=$BATS_TEST_TMPDIR/swap-c
	# three slots (--cfi-max-files 3): swap-run's and the vdso's, loaded while swap-run runs,
	# and one for the fixtures: swap-a's table is loaded in it, kept after swap-a ends, and
	# freed for c's, which falls back until the slot is free (after the next sync of the
	# maps: c's process is read again then); then swap-b's is loaded in the same slot, at
	# the same pcs as swap-a's rows that the CPU keeps.  And again, twice each: every swap-a
	# and swap-b walks in BPF.  (When swap-run was not sampled, the fixtures have two slots,
	# and swap-b waits for swap-a's instead)
	swap_layout "$a" "$b"
	cp "$a" "$c"
	CFI_OPTS="--cfi-check --cfi-max-files 3" capture reuse "$U/swap-run" 200 "$a" "$c" "$b" "$c" \
		"$a" "$c" "$b"
	grep -q 'lost 0' "$d/reuse.sample"
	grep -q 'over the tables at once, 3 (raise with --cfi-max-files)' "$d/reuse.sample"
	grep -Eq '[1-9][0-9]* processes read again for those tables, once another was freed' \
		"$d/reuse.sample"
	[ "$(grep -c '^swap-[ab] ' "$d/reuse.out")" -ge 100 ]
	at_least_whole 97 "$d/reuse.out" swap-a
	at_least_whole 97 "$d/reuse.out" swap-b
	# (the processes walked in BPF, each with the one slot in turn: three of the four at
	# least, since on a busy machine the last one may end before its turn came.  A process
	# waiting for the slot is read again as soon as a table is freed or kept)
	swap_agree reuse 4/3 20 swap-a swap-b >&3
}

@test "fg-sample --call-graph cfi: a process that execs another file at the same pcs is walked by the new file's rows" {
	local d=$BATS_TEST_TMPDIR a=$U/swap-a b=$U/swap-b
	# one process: swap-b, which execs swap-a, which execs swap-b...  From the exec until
	# fg-sample has loaded the new mappings, those in the maps are the old file's, at the
	# same addresses: stale, and not used (the kernel's list of the process' mappings and
	# the tables by inode are, or the samples fall back)
	swap_layout "$a" "$b"
	CFI_OPTS=--cfi-check capture exec "$b" 150 "$a" 150 "$b" 150 "$a" 150 "$b" 150 "$a" 150
	grep -q 'lost 0' "$d/exec.sample"
	grep -Eq '; [1-9][0-9]* walks of a process that had mapped code over its mappings loaded' \
		"$d/exec.sample"
	at_least_whole 97 "$d/exec.out" swap-a
	at_least_whole 97 "$d/exec.out" swap-b
	swap_agree exec 2 100 swap-a swap-b >&3
}

@test "fg-sample --call-graph cfi: a library closed and another opened at its address is walked by the new one's rows" {
	local d=$BATS_TEST_TMPDIR
	# one process opens libswap-a.so, spins in it, closes it, opens libswap-b.so at the same
	# address (swap-dl checks), and so on: its mappings in the maps are stale from the
	# moment the kernel maps the new library there until fg-sample has loaded those of its
	# record, and are not used meanwhile
	swap_layout "$U/libswap-a.so" "$U/libswap-b.so"
	CFI_OPTS=--cfi-check capture dl "$U/swap-dl" 150 6 "$U/libswap-a.so" "$U/libswap-b.so"
	grep -q 'lost 0' "$d/dl.sample"
	grep -Eq '; [1-9][0-9]* walks of a process that had mapped code over its mappings loaded' \
		"$d/dl.sample"
	[ "$(grep -c ' swap_hot+0x[0-9a-f]* (.*/libswap-a.so)' "$d/dl.out")" -ge 50 ]
	[ "$(grep -c ' swap_hot+0x[0-9a-f]* (.*/libswap-b.so)' "$d/dl.out")" -ge 50 ]
	at_least_whole 97 "$d/dl.out" swap-dl
	swap_agree dl 1 200 swap-dl >&3
}

@test "fg-sample --call-graph cfi: limits hit are counted, named with their option, and the samples fall back" {
	local d=$BATS_TEST_TMPDIR
	# (short runs, about 160 samples: one stack of the process' start not whole is 0.6%)
	CFI_OPTS="--cfi-max-files 1" capture lim "$U/fixture-gcc-pie" 20
	grep -q 'over the tables at once, 1 (raise with --cfi-max-files)' "$d/lim.sample"
	at_least_whole 97 "$d/lim.out" fixture-gcc-pie
	CFI_OPTS="--cfi-max-rows 100" capture rows "$U/fixture-gcc-pie" 20
	grep -q 'over the rows of one table, 100 (raise with --cfi-max-rows)' "$d/rows.sample"
	CFI_OPTS="--cfi-max-mib 1" capture mib "$U/fixture-gcc-pie" 20
	at_least_whole 97 "$d/mib.out" fixture-gcc-pie
}

@test "fg-sample --call-graph cfi: a mapped file with a corrupt .eh_frame is counted, and sampling goes on" {
	local d=$BATS_TEST_TMPDIR
	cp "$U/libfixlib-gcc.so" "$d/libbad.so"
	# .eh_frame overwritten with bytes that look like entries of huge lengths
	python3 - "$d/libbad.so" <<-'EOF'
		import struct, subprocess, sys
		out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
		for line in out.splitlines():
		    f = line.replace("[ ", "[").split()
		    if len(f) > 5 and f[1] == ".eh_frame":
		        off, size = int(f[4], 16), int(f[5], 16)
		data = bytearray(open(sys.argv[1], "rb").read())
		for i in range(off, off + size - 8, 8):
		    data[i:i + 8] = struct.pack("<II", 0xfffffff0 - i, 0x7fffffff)
		open(sys.argv[1], "wb").write(data)
	EOF
	cat >"$d/maps.c" <<-'EOF'
		#include <fcntl.h>
		#include <sys/mman.h>
		#include <time.h>
		#include <unistd.h>
		int main(int argc, char **argv)
		{
			int fd = open(argv[1], O_RDONLY);
			void *p = mmap(0, 65536, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			struct timespec t0, t;
			volatile unsigned long x = 0;

			if (fd < 0 || p == MAP_FAILED)
				return 1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				for (int i = 0; i < 100000; i++)
					x += i;
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
			return 0;
		}
	EOF
	gcc -O2 -o "$d/mapbad" "$d/maps.c"
	capture bad "$d/mapbad" "$d/libbad.so"
	grep -q 'lost 0' "$d/bad.sample"
	grep -Eq 'cfi: [0-9]+ CIEs and FDEs skipped: corrupt or unsupported' "$d/bad.sample"
	at_least_whole 99 "$d/bad.out" mapbad
	in_bpf bad 50
}

@test "fg-sample --call-graph cfi: its options' bad values are usage errors" {
	local out=$BATS_TEST_TMPDIR/out.fgr
	fg -2 --separate-stderr fg-sample --call-graph fp --cfi-check -d 1 -o "$out"
	[[ $stderr == "fg-sample: --cfi-check needs --call-graph cfi"* ]]
	fg -2 --separate-stderr fg-sample --cfi-check --off-cpu -d 1 -o "$out"
	[[ $stderr == "fg-sample: --cfi-check needs --call-graph cfi"* ]]
	fg -2 --separate-stderr fg-sample --call-graph cfi --cfi-max-rows 1 -d 1 -o "$out"
	[[ $stderr == "fg-sample: invalid limit '1' (2 to 16777216 rows)"* ]]
	fg -2 --separate-stderr fg-sample --call-graph cfi --cfi-max-mib x -d 1 -o "$out"
	[[ $stderr == "fg-sample: invalid limit 'x' (1 to 65536 MiB of tables)"* ]]
	fg -2 --separate-stderr fg-sample --call-graph cfi,0 -d 1 -o "$out"
	[[ $stderr == "fg-sample: invalid stack dump size '0' (1 to 65528 bytes)"* ]]
	fg -2 --separate-stderr fg-sample --call-graph cfi --kernel-only -d 1 -o "$out"
	[[ $stderr == "fg-sample: --call-graph cfi and --kernel-only exclude each other"* ]]
	[[ $stderr == *"usage: fg-sample "* ]]
	[ ! -e "$out" ]
	# the help names them
	fg --separate-stderr fg-sample -h
	[[ $output == *"--call-graph fp | dwarf[,bytes] | cfi[,bytes]"* && $output == *"--cfi-max-procs"* ]]
}
