#!/usr/bin/env bats
# fg agrees with perf: the same workload profiled by `perf record -g | perf
# script | fg-fold` and by `fg-sample | fg-sym | fg-fold` gives the same leaf
# functions above 2%, each share within 3 points.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	requires root btf perf_event perf
	cd "$BATS_TEST_TMPDIR"
}

# leaf shares of the samples of COMM in a folded file: "leaf percent" lines, sorted
leaf_shares() {
	awk -v comm="$2" '
		{ n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1) }
		index(stack, comm ";") != 1 { next }
		{ k = split(stack, f, ";"); leaf[f[k]] += n; total += n }
		END { for (l in leaf) printf "%s %.1f\n", l, 100 * leaf[l] / total }' "$1" | sort
}

# compare: one run of each profiler on the workload; 0 when every leaf above 2% in either
# profile is in both, within 3 points
compare() {
	# --buildid-mmap: while another program (an fg-sample of an earlier test,
	# or its side-band events) asks for build-ids in mmap events, this kernel
	# marks every mmap event so, and perf 6.1's perf script, reading device
	# numbers as a build-id's size, aborts; asking for them itself gives perf
	# the layout it reads (found by tests/fg-events.bats)
	# (-B: Debian's perf 6.1 can crash collecting build-ids on this kernel;
	# --no-bpf-event: and reading the BPF programs another test loads meanwhile)
	perf record --buildid-mmap -B --no-bpf-event -q -g -F 999 -o perf.data -- "$WORKLOADS/leaves" 4 2>perf.err
	perf script -i perf.data 2>/dev/null | fg-fold >perf.folded
	fg-sample -F 999 -- "$WORKLOADS/leaves" 4 2>sample.err | fg-sym | fg-fold >fg.folded
	leaf_shares perf.folded leaves >perf.leaves
	leaf_shares fg.folded leaves >fg.leaves
	join -a1 -a2 -e 0 -o 0,1.2,2.2 perf.leaves fg.leaves >both
	sed "s/^/# perf, fg: /" both >&3
	awk '($2 > 2 || $3 > 2) { d = $2 - $3; if (d < 0) d = -d; if (d > 3 || $2 == 0 || $3 == 0) { print "# disagree: " $0; bad = 1 } }
		END { exit bad }' both >&3
}

@test "leaf shares agree with perf's within 3 points" {
	# Two runs of a 4 s workload on a shared 2-vCPU guest: a profiler's shares can be off
	# by more than sampling noise in one of them (perf's leaf_a 45.1% against 40% of the
	# work, once in CI, fg's 40.8%), so a disagreement is measured once more, both
	# profilers again; the second must agree
	compare || compare
	# and the test is not vacuous: the workload's five leaves are there
	[ "$(awk '$2 > 2' both | grep -c '^leaf_')" -eq 5 ]
}
