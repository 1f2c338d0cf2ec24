#!/usr/bin/env bats
# The whole pipeline, for real: fg-sample | fg-sym | fg-fold on workloads with
# known profiles, as root with BPF (CI runs these; they never skip there).
bats_require_minimum_version 1.5.0
load helpers

setup() {
	requires root btf perf_event
	cd "$BATS_TEST_TMPDIR"
}

# profile FOLD_OPTS... -- SAMPLE_ARGS...: records, names and folds into ./folded
profile() {
	local fold=()
	while [[ $1 != -- ]]; do
		fold+=("$1")
		shift
	done
	shift
	fg-sample "$@" >records 2>sample.err || {
		cat sample.err >&2
		return 1
	}
	fg-sym records >perf.txt 2>sym.err || {
		cat sym.err >&2
		return 1
	}
	fg-fold "${fold[@]}" perf.txt >folded 2>fold.err || {
		cat fold.err >&2
		return 1
	}
	echo "# $(wc -l <folded) folded stacks; fg-sample: $(tail -n 3 sample.err | tr '\n' ' ')" >&3
}

# share PATTERN [ROOT]: per cent of the samples whose stack (starting with ROOT;
# default: any) matches the awk regex PATTERN
share() {
	awk -v pat="$1" -v root="${2:-}" '
		{ n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1) }
		root != "" && index(stack, root ";") != 1 { next }
		{ total += n; if (stack ~ pat) hit += n }
		END { printf "%.1f\n", total ? 100 * hit / total : -1 }' folded
}

@test "a 70/30 split comes out 70/30 with its whole main;hot;spin chain" {
	profile -- -F 999 -- "$WORKLOADS/split7030" 4
	hot=$(share ';main;hot;spin$' split7030)
	cold=$(share ';main;cold;spin$' split7030)
	echo "# hot $hot% cold $cold%" >&3
	awk -v h="$hot" 'BEGIN { exit !(h >= 65 && h <= 75) }'
	awk -v h="$hot" -v c="$cold" 'BEGIN { exit !(h + c >= 95) }'
}

@test "a recursive workload shows its recursion" {
	profile -- -F 499 -- "$WORKLOADS/recurse" 2 8
	r='main;recurse;recurse;recurse;recurse;recurse;recurse;recurse;recurse;spin_leaf$'
	deep=$(share "$r" recurse)
	echo "# 8-deep chain: $deep%" >&3
	awk -v d="$deep" 'BEGIN { exit !(d >= 80) }'
}

@test "a syscall-heavy workload shows named kernel frames, annotated with --kernel" {
	profile --kernel -- -F 499 -- "$WORKLOADS/syscalls" 2
	# (libc's read and write keep no frame pointer, so the frame walk goes from
	# them straight to main, skipping do_syscalls, as perf's does)
	kern=$(share ';main;[^;]*;.*_\[k\]' syscalls)
	echo "# kernel frames under main: $kern%" >&3
	awk -v k="$kern" 'BEGIN { exit !(k >= 30) }'
	# the read and write system calls are there by name
	grep -q 'read_\[k\]' folded
	grep -q 'write_\[k\]' folded
	run ! grep -q '\[unknown\]_\[k\]' folded
}

@test "short-lived processes are named after they exit" {
	profile -- -F 999 -- "$WORKLOADS/shortlived" 40 60
	# at least 95% of the samples of the 40 processes have every frame named
	named=$(share '^[^[]*$' shortlived)
	busy=$(share ';main;child_work;child_spin$' shortlived)
	echo "# samples fully named: $named%, in the children's busy loop: $busy%" >&3
	awk -v n="$named" 'BEGIN { exit !(n >= 95) }'
	awk -v b="$busy" 'BEGIN { exit !(b >= 40) }'
}

@test "-p samples only the given process and stops when it exits" {
	"$WORKLOADS/leaves" 3 &
	other=$!
	"$WORKLOADS/split7030" 2 &
	target=$!
	profile --pid -- -F 499 -p "$target"
	wait "$target"
	kill "$other" 2>/dev/null || true
	wait "$other" || true
	grep -q "^split7030-$target;" folded
	run ! grep -qv "^split7030-$target;" folded
}

@test "-- COMMAND runs the command and stops when it exits" {
	start=$(date +%s)
	profile -- -F 99 -- "$WORKLOADS/leaves" 1
	end=$(date +%s)
	(( end - start < 10 ))
	grep -q ';work;leaf_a ' folded
}

@test "a JIT-like program's frames are named from /tmp/perf-PID.map" {
	profile --jit --pid -- -F 999 -- "$WORKLOADS/jit" 2
	pid=$(sed -n 's/^jit-\([0-9]*\);.*/\1/p' folded | head -n 1)
	rm -f "/tmp/perf-$pid.map"
	jit=$(share ';run_jit;jit_outer_\[j\];jit_loop_\[j\]$' "jit-$pid")
	echo "# JIT chain: $jit%" >&3
	awk -v j="$jit" 'BEGIN { exit !(j >= 80) }'
}

@test "the flame graph of a live profile opens in Chromium with the expected frames" {
	requires python3 chromium
	profile -- -F 999 -- "$WORKLOADS/split7030" 2
	# the stacks through main (start-up and exit left out), so that main is 100%
	grep ';main;' folded >main.folded
	fg-svg main.folded >cpu.svg
	svg-frames cpu.svg >frames
	grep -qP '^\d+\t\d+\thot$' frames
	grep -qP '^\d+\t\d+\tcold$' frames
	grep -qP '^\d+\t\d+\tspin$' frames
	# click hot, search main, reload the saved view, Esc, screenshot
	run python3 "$TOP/tests/browser/svg-check" cpu.svg hot '^main$' 100.0 shot.png
	sed 's/^/# /' <<<"$output" >&3
	[ "$status" -eq 0 ]
	[ -s shot.png ]
}
