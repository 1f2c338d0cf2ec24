#!/usr/bin/env bats
# fg's dwarf mode agrees with perf's: the same workload profiled by
# `perf record --call-graph dwarf,8192 | perf script` and by `fg-sample
# --call-graph dwarf | fg-sym`, both folded by fg-fold: the depth
# distributions agree, the share of each of fg's ten largest stacks is
# perf's within 3 points, and no stack above 1% of fg's is missing from
# perf's (tests/tools/dwarf-agree.py, which says what it normalises).
# Workloads: a pure-Python recursion in Debian's /usr/bin/python3 (no frame
# pointers), and the unwinding fixture, a C program built without frame
# pointers that calls into libc (qsort's callbacks, a signal handler, the
# vdso, threads).
bats_require_minimum_version 1.5.0
load helpers

AGREE=$TOP/tests/tools/dwarf-agree.py

setup() {
	requires root btf perf_event perf python3
	cd "$BATS_TEST_TMPDIR"
}

# agree COMM COMMAND...: profile COMMAND with both at once (fg-sample runs perf record,
# which runs COMMAND: the same run, the same phases of it, sampled by each), then compare
# the samples of COMM.  While fg-sample runs, the kernel marks some of perf's MMAP2 records
# as carrying a build-id they do not carry, and perf script then aborts ("assertion failed
# at util/build-id.c"): tests/tools/perf-mmap2-fix.py clears the mark first.
agree() {
	local comm=$1
	shift
	# (-B: Debian's perf 6.1 can crash collecting build-ids on this kernel)
	fg-sample -F 999 --call-graph dwarf --no-python -o fg.fgr -- \
		perf record -q -B --no-bpf-event --call-graph dwarf,8192 -F 999 -o perf.data -- "$@" \
		>/dev/null 2>sample.err
	echo "# perf.data: $(python3 "$TOP/tests/tools/perf-mmap2-fix.py" perf.data) MMAP2 records fixed" >&3
	# --no-inline: one frame a return address, as fg-sym writes them
	perf script --no-inline -i perf.data >perf.txt 2>perf-script.err
	fg-sym fg.fgr >fg.txt 2>sym.err
	sed 's/^/# /' sym.err >&3
	fg python3 "$AGREE" perf.txt fg.txt "$comm"
	printf '# %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ]
}

# in_both REGEX: a folded stack of both profiles matches REGEX (the test is not vacuous)
in_both() {
	fg-fold perf.txt | grep -qE "$1"
	fg-fold fg.txt | grep -qE "$1"
}

# under_main FILE COMM: the share (%) of COMM's samples outside its threads (whose stacks
# start in clone3) that have main among their callers, in a text of agree's (normalised)
under_main() {
	fg-fold --samples "$1" | awk -v c="$2" '{
			n = $NF
			s = substr($0, 1, length($0) - length(n) - 1)
			split(s, f, ";")
			if (f[1] != c || f[2] ~ /^(__)?clone3?$/)
				next
			t += n
			if (s ~ /;main(;|$)/)
				m += n
		}
		END { printf "%.1f\n", t ? 100 * m / t : 0 }'
}

@test "dwarf mode: a pure-Python recursion in Debian's python3, as perf sees it" {
	[ -x /usr/bin/python3 ]
	printf 'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)\nf(36)\n' >fib.py
	agree python3 /usr/bin/python3 fib.py
	# the interpreter's C stack from _start to the evaluation loop, in both
	in_both '^python3;_start;.*;Py_RunMain;.*;_PyEval_EvalFrameDefault '
	[[ ${lines[0]} =~ mean\ depth\ fg\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 10 ]
}

@test "dwarf mode: a C program without frame pointers calling into libc, as perf sees it" {
	agree fixture-gcc-pie "$FG_BUILD/unwind/fixture-gcc-pie" 250
	# qsort's callback under libc, the signal handler, a thread, the vdso, in both
	in_both ';run_mode;[^;]*qsort_r;msort_with_tmp[^;]*;.*slow_cmp;spin '
	in_both ';raise_it;[^;]*raise;__pthread_kill_implementation;[^;]*;on_usr1;spin '
	in_both '^fixture-gcc-pie;clone3;start_thread;worker;'
	in_both ';mode_vdso;[^;]*clock_gettime[^;]*;__vdso_clock_gettime '
	# main under (nearly) every sample of the main thread, in both
	local f p
	f=$(under_main fg.txt.norm fixture-gcc-pie)
	p=$(under_main perf.txt.norm fixture-gcc-pie)
	echo "# samples of the main thread under main: fg $f%, perf $p%" >&3
	awk -v f="$f" -v p="$p" 'BEGIN { exit !(f >= 99 && f - p <= 3 && p - f <= 3) }'
}
