bats_require_minimum_version 1.5.0
load helpers

# fg-fold: the collapse-perf corpus as golden files (every input x every option),
# fg-sym's own form, the other input formats, options, bad input and exit statuses.

corpus=$DATA/collapse-perf
fixtures=$DATA/fg-fold

setup_file() {
	# the --inline tests' program: position-independent, fixed-address, no DWARF
	gcc -g -O2 -o "$BATS_FILE_TMPDIR/inl" "$DATA/fg-fold/inline.c"
	gcc -g -O2 -no-pie -fno-pie -o "$BATS_FILE_TMPDIR/inl-fixed" "$DATA/fg-fold/inline.c"
	gcc -O2 -o "$BATS_FILE_TMPDIR/inl-nodwarf" "$DATA/fg-fold/inline.c"
}

# stackcollapse-perf.pl drops a final sample that no blank line follows (FlameGraph
# issue 230); inferno folds it, and so does fg-fold (go-stacks, versioned-vmlinux and
# single-line-stacks need it).  Four inputs whose expected files come from the perl
# script end that way: for them the expected file is compared with the folding of the
# samples the perl script folded (the input up to its last blank line), and a test
# below checks that the final sample is folded too.
perl_dropped_last=" perf-dd-stacks-01 perf-iperf-stacks-pidtid-01 perf-java-stacks-01 perf-mirageos-stacks-01 "

teardown() {
	# the full-disk test's tmpfs, whatever happened in it
	if mountpoint -q "$BATS_TEST_TMPDIR/small" 2>/dev/null; then
		umount "$BATS_TEST_TMPDIR/small"
	fi
}

# up to and including the last blank line
upto_last_blank() {
	awk '{ l[NR] = $0; if ($0 == "") last = NR } END { for (i = 1; i <= last; i++) print l[i] }' "$1"
}

# fold_to OUT ARGS...: fg-fold ARGS > OUT, the output's bytes untouched
fold_to() {
	local out=$1
	shift
	fg-fold "$@" >"$out"
}

golden() { # NAME [--OPTION]
	local name=$1 opt=${2:-} in=$corpus/input/$1.txt
	if [[ $perl_dropped_last == *" $name "* ]]; then
		upto_last_blank "$in" >"$BATS_TEST_TMPDIR/in.txt"
		in=$BATS_TEST_TMPDIR/in.txt
	fi
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" $opt "$in"
	assert_golden "$corpus/expected/$name$opt.folded"
}

@test "golden: cpp-stacks-std-function (default)" {
	golden cpp-stacks-std-function 
}

@test "golden: go-stacks (default)" {
	golden go-stacks 
}

@test "golden: no-events (default)" {
	golden no-events 
}

@test "golden: perf-cycles-instructions-01 (default)" {
	golden perf-cycles-instructions-01 
}

@test "golden: perf-cycles-instructions-01 --addrs" {
	golden perf-cycles-instructions-01 --addrs
}

@test "golden: perf-cycles-instructions-01 --all" {
	golden perf-cycles-instructions-01 --all
}

@test "golden: perf-cycles-instructions-01 --jit" {
	golden perf-cycles-instructions-01 --jit
}

@test "golden: perf-cycles-instructions-01 --kernel" {
	golden perf-cycles-instructions-01 --kernel
}

@test "golden: perf-cycles-instructions-01 --pid" {
	golden perf-cycles-instructions-01 --pid
}

@test "golden: perf-cycles-instructions-01 --tid" {
	golden perf-cycles-instructions-01 --tid
}

@test "golden: perf-dd-stacks-01 (default)" {
	golden perf-dd-stacks-01 
}

@test "golden: perf-dd-stacks-01 --addrs" {
	golden perf-dd-stacks-01 --addrs
}

@test "golden: perf-dd-stacks-01 --all" {
	golden perf-dd-stacks-01 --all
}

@test "golden: perf-dd-stacks-01 --jit" {
	golden perf-dd-stacks-01 --jit
}

@test "golden: perf-dd-stacks-01 --kernel" {
	golden perf-dd-stacks-01 --kernel
}

@test "golden: perf-dd-stacks-01 --pid" {
	golden perf-dd-stacks-01 --pid
}

@test "golden: perf-dd-stacks-01 --tid" {
	golden perf-dd-stacks-01 --tid
}

@test "golden: perf-funcab-cmd-01 (default)" {
	golden perf-funcab-cmd-01 
}

@test "golden: perf-funcab-cmd-01 --addrs" {
	golden perf-funcab-cmd-01 --addrs
}

@test "golden: perf-funcab-cmd-01 --all" {
	golden perf-funcab-cmd-01 --all
}

@test "golden: perf-funcab-cmd-01 --jit" {
	golden perf-funcab-cmd-01 --jit
}

@test "golden: perf-funcab-cmd-01 --kernel" {
	golden perf-funcab-cmd-01 --kernel
}

@test "golden: perf-funcab-cmd-01 --pid" {
	golden perf-funcab-cmd-01 --pid
}

@test "golden: perf-funcab-cmd-01 --tid" {
	golden perf-funcab-cmd-01 --tid
}

@test "golden: perf-funcab-pid-01 (default)" {
	golden perf-funcab-pid-01 
}

@test "golden: perf-funcab-pid-01 --addrs" {
	golden perf-funcab-pid-01 --addrs
}

@test "golden: perf-funcab-pid-01 --all" {
	golden perf-funcab-pid-01 --all
}

@test "golden: perf-funcab-pid-01 --jit" {
	golden perf-funcab-pid-01 --jit
}

@test "golden: perf-funcab-pid-01 --kernel" {
	golden perf-funcab-pid-01 --kernel
}

@test "golden: perf-funcab-pid-01 --pid" {
	golden perf-funcab-pid-01 --pid
}

@test "golden: perf-funcab-pid-01 --tid" {
	golden perf-funcab-pid-01 --tid
}

@test "golden: perf-iperf-stacks-pidtid-01 (default)" {
	golden perf-iperf-stacks-pidtid-01 
}

@test "golden: perf-iperf-stacks-pidtid-01 --addrs" {
	golden perf-iperf-stacks-pidtid-01 --addrs
}

@test "golden: perf-iperf-stacks-pidtid-01 --all" {
	golden perf-iperf-stacks-pidtid-01 --all
}

@test "golden: perf-iperf-stacks-pidtid-01 --jit" {
	golden perf-iperf-stacks-pidtid-01 --jit
}

@test "golden: perf-iperf-stacks-pidtid-01 --kernel" {
	golden perf-iperf-stacks-pidtid-01 --kernel
}

@test "golden: perf-iperf-stacks-pidtid-01 --pid" {
	golden perf-iperf-stacks-pidtid-01 --pid
}

@test "golden: perf-iperf-stacks-pidtid-01 --tid" {
	golden perf-iperf-stacks-pidtid-01 --tid
}

@test "golden: perf-java-faults-01 (default)" {
	golden perf-java-faults-01 
}

@test "golden: perf-java-faults-01 --addrs" {
	golden perf-java-faults-01 --addrs
}

@test "golden: perf-java-faults-01 --all" {
	golden perf-java-faults-01 --all
}

@test "golden: perf-java-faults-01 --jit" {
	golden perf-java-faults-01 --jit
}

@test "golden: perf-java-faults-01 --kernel" {
	golden perf-java-faults-01 --kernel
}

@test "golden: perf-java-faults-01 --pid" {
	golden perf-java-faults-01 --pid
}

@test "golden: perf-java-faults-01 --tid" {
	golden perf-java-faults-01 --tid
}

@test "golden: perf-java-stacks-01 (default)" {
	golden perf-java-stacks-01 
}

@test "golden: perf-java-stacks-01 --addrs" {
	golden perf-java-stacks-01 --addrs
}

@test "golden: perf-java-stacks-01 --all" {
	golden perf-java-stacks-01 --all
}

@test "golden: perf-java-stacks-01 --jit" {
	golden perf-java-stacks-01 --jit
}

@test "golden: perf-java-stacks-01 --kernel" {
	golden perf-java-stacks-01 --kernel
}

@test "golden: perf-java-stacks-01 --pid" {
	golden perf-java-stacks-01 --pid
}

@test "golden: perf-java-stacks-01 --tid" {
	golden perf-java-stacks-01 --tid
}

@test "golden: perf-js-stacks-01 (default)" {
	golden perf-js-stacks-01 
}

@test "golden: perf-js-stacks-01 --addrs" {
	golden perf-js-stacks-01 --addrs
}

@test "golden: perf-js-stacks-01 --all" {
	golden perf-js-stacks-01 --all
}

@test "golden: perf-js-stacks-01 --jit" {
	golden perf-js-stacks-01 --jit
}

@test "golden: perf-js-stacks-01 --kernel" {
	golden perf-js-stacks-01 --kernel
}

@test "golden: perf-js-stacks-01 --pid" {
	golden perf-js-stacks-01 --pid
}

@test "golden: perf-js-stacks-01 --tid" {
	golden perf-js-stacks-01 --tid
}

@test "golden: perf-mirageos-stacks-01 (default)" {
	golden perf-mirageos-stacks-01 
}

@test "golden: perf-mirageos-stacks-01 --addrs" {
	golden perf-mirageos-stacks-01 --addrs
}

@test "golden: perf-mirageos-stacks-01 --all" {
	golden perf-mirageos-stacks-01 --all
}

@test "golden: perf-mirageos-stacks-01 --jit" {
	golden perf-mirageos-stacks-01 --jit
}

@test "golden: perf-mirageos-stacks-01 --kernel" {
	golden perf-mirageos-stacks-01 --kernel
}

@test "golden: perf-mirageos-stacks-01 --pid" {
	golden perf-mirageos-stacks-01 --pid
}

@test "golden: perf-mirageos-stacks-01 --tid" {
	golden perf-mirageos-stacks-01 --tid
}

@test "golden: single-line-stacks (default)" {
	golden single-line-stacks 
}

@test "golden: versioned-vmlinux --kernel" {
	golden versioned-vmlinux --kernel
}

@test "perl-dropped inputs: the final sample, with no blank line after it, is folded" {
	for name in $perl_dropped_last; do
		upto_last_blank "$corpus/input/$name.txt" >"$BATS_TEST_TMPDIR/head.txt"
		fg -0 fold_to "$BATS_TEST_TMPDIR/all" "$corpus/input/$name.txt"
		fg -0 fold_to "$BATS_TEST_TMPDIR/head" "$BATS_TEST_TMPDIR/head.txt"
		# one sample more, so the totals differ by its weight
		total() { awk '{ s += $NF } END { print s }' "$1"; }
		[ "$(total "$BATS_TEST_TMPDIR/all")" -gt "$(total "$BATS_TEST_TMPDIR/head")" ]
		# and a blank line at the end changes nothing
		{ cat "$corpus/input/$name.txt"; echo; } >"$BATS_TEST_TMPDIR/closed.txt"
		fg -0 fold_to "$BATS_TEST_TMPDIR/closed" "$BATS_TEST_TMPDIR/closed.txt"
		cmp "$BATS_TEST_TMPDIR/all" "$BATS_TEST_TMPDIR/closed"
	done
}

@test "standard input and a file fold the same" {
	fg -0 fold_to "$BATS_TEST_TMPDIR/a" "$corpus/input/perf-java-faults-01.txt"
	fg -0 fold_to "$BATS_TEST_TMPDIR/b" <"$corpus/input/perf-java-faults-01.txt"
	fg -0 fold_to "$BATS_TEST_TMPDIR/c" - <"$corpus/input/perf-java-faults-01.txt"
	cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/c"
}

@test "fg-sym's form: perf script text with [unknown], kernel and perf-map JIT frames" {
	for opt in "" --all --tid --addrs; do
		fg -0 fold_to "$BATS_TEST_TMPDIR/out" $opt "$fixtures/fg-sym.txt"
		assert_golden "$fixtures/fg-sym$opt.folded"
	done
}

@test "process and module names with spaces (FlameGraph issues 57 and 262)" {
	fg -0 --separate-stderr fg-fold "$fixtures/fg-sym.txt"
	[[ $output == *"my_app;[libx (old).so];main;[unknown] 10101010"* ]]
	printf 'V8 WorkerThread 24636/25607 [000] 94564.109216: 5 cycles:\n\t  4005d0 run (/opt/my dir/lib.so)\n\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold --pid <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "V8_WorkerThread-24636;run 5" ]
	[ -z "$stderr" ]
}

@test "a module's path with parentheses, paired or lone: x)y, a(b, App (x86) (issue 27)" {
	for opt in "" --addrs; do
		fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" $opt "$fixtures/paren-paths.txt"
		assert_golden "$fixtures/paren-paths$opt.folded"
		[ -z "$stderr" ]
	done
	# bpftrace's "func+OFF (MODULE)" frames
	printf '@[\n    spin+40 (/tmp/x)y/burn)\n    main+77 (/opt/App (x86)/burn)\n]: 3\n' \
		>"$BATS_TEST_TMPDIR/bt"
	fg -0 --separate-stderr fg-fold --input bpftrace "$BATS_TEST_TMPDIR/bt"
	[ "$output" = "main;spin 3" ]
}

@test "tracepoint payloads after the event name (FlameGraph issues 164 and 188)" {
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$fixtures/tracepoint.txt"
	assert_golden "$fixtures/tracepoint.folded"
	assert_stderr_contains "folded only 'mm_pagevec_free' events (the first seen); skipped 2 samples"
	fg -0 --separate-stderr fg-fold --event-filter sched:sched_switch "$fixtures/tracepoint.txt"
	[ "$output" = "perf;schedule;__schedule 1" ]
}

@test "--event-filter: the first event by default, announced; any event on request" {
	in=$corpus/input/perf-cycles-instructions-01.txt
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/first" "$in"
	assert_stderr_contains "folded only 'instructions' events (the first seen)"
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/cycles" --event-filter cycles "$in"
	assert_stderr_contains "folded only 'cycles' events; skipped"
	! cmp -s "$BATS_TEST_TMPDIR/first" "$BATS_TEST_TMPDIR/cycles"
	# an event that no sample has: nothing to fold, and that is an error
	fg -1 --separate-stderr fg-fold --event-filter no-such-event "$in"
	[ -z "$output" ]
	assert_stderr_contains "no stacks in"
}

@test "--event-filter: modifiers are the same event unless asked for" {
	printf 'a 1 1.0: 2 cycles:u:\n\t1 f (m)\n\na 1 1.1: 3 cycles:k:\n\t1 f (m)\n\n' >"$BATS_TEST_TMPDIR/in"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/in"
	[ "$output" = "a;f 5" ]
	fg -0 --separate-stderr fg-fold --event-filter cycles:k "$BATS_TEST_TMPDIR/in"
	[ "$output" = "a;f 3" ]
}

@test "--samples counts samples instead of summing periods" {
	fg -0 --separate-stderr fg-fold --samples "$fixtures/fg-sym.txt"
	[[ $output == *"native_safe_halt 2"* ]]
	fg -0 --separate-stderr fg-fold "$fixtures/fg-sym.txt"
	[[ $output == *"native_safe_halt 20202020"* ]]
}

@test "--srcline: source positions from perf script -F+srcline" {
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" --srcline "$fixtures/srcline.txt"
	assert_golden "$fixtures/srcline--srcline.folded"
	# without --srcline the position lines are known and ignored, not reported
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$fixtures/srcline.txt"
	assert_golden "$fixtures/srcline.folded"
	[ -z "$stderr" ]
}

@test "--skip-after drops the callers of the deepest matching frame" {
	fg -0 --separate-stderr fg-fold --skip-after main "$fixtures/fg-sym.txt"
	[[ $output == *"myapp;main;compute;do_idle;native_safe_halt 20202020"* ]]
	[[ $output != *"__libc_start_main"* ]]
	fg -0 --separate-stderr fg-fold --skip-after compute --skip-after main "$fixtures/fg-sym.txt"
	[[ $output == *"myapp;compute;do_idle;native_safe_halt 20202020"* ]]
}

@test "--only-pid and --only-comm keep the samples of some processes" {
	fg -0 --separate-stderr fg-fold --only-pid 77 "$fixtures/fg-sym.txt"
	[ "$output" = "my_app;[libx (old).so];main;[unknown] 10101010" ]
	fg -0 --separate-stderr fg-fold --only-pid 1,4242 "$fixtures/fg-sym.txt"
	[ "${#lines[@]}" -eq 2 ]
	fg -0 --separate-stderr fg-fold --only-comm "my app" "$fixtures/fg-sym.txt"
	[ "$output" = "my_app;[libx (old).so];main;[unknown] 10101010" ]
	fg -1 --separate-stderr fg-fold --only-comm nobody "$fixtures/fg-sym.txt"
	[ -z "$output" ]
	assert_stderr_contains "no stacks in 21 lines of input (see above)"
}

@test "folded input is merged and re-sorted: cat a b | fg-fold adds profiles" {
	printf 'b;c 2\na;b 3\n' >"$BATS_TEST_TMPDIR/a"
	printf 'a;b 4\nz 1\n' >"$BATS_TEST_TMPDIR/b"
	cat "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'a;b 7\nb;c 2\nz 1' ]
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	[ "$output" = $'a;b 7\nb;c 2\nz 1' ]
	# a perf capture folded twice is twice its folding
	fg -0 fold_to "$BATS_TEST_TMPDIR/once" "$corpus/input/perf-java-faults-01.txt"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/once" "$BATS_TEST_TMPDIR/once"
	[ "$output" = "$(awk '{ $NF = 2 * $NF; print }' "$BATS_TEST_TMPDIR/once")" ]
}

@test "folded input: two count columns (differential) are kept and summed" {
	printf 'a;b 3 4\nc 1 0\na;b 1 1\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'a;b 4 5\nc 1 0' ]
	printf 'a;b 3 4\n' >"$BATS_TEST_TMPDIR/two"
	printf 'a;b 3\n' >"$BATS_TEST_TMPDIR/one"
	fg -1 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/two" "$BATS_TEST_TMPDIR/one"
	assert_stderr_contains "cannot merge a one-column profile with a two-column one"
}

@test "bpftrace map output: @[kstack, ustack, comm], @[ustack], @[comm]" {
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$fixtures/bpftrace.txt"
	assert_golden "$fixtures/bpftrace.folded"
	# no indentation or separator leaks into frame names
	run grep -E '(^|;)[ ,]|[ ,](;|$)' "$BATS_TEST_TMPDIR/out"
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
}

@test "--input forces the format" {
	printf 'a;b 3\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold --input folded <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "a;b 3" ]
	printf 'a;b 3\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -1 --separate-stderr fg-fold --input perf <"$BATS_TEST_TMPDIR/stdin"
	[ -z "$output" ]
	assert_stderr_contains "<stdin>:1: line outside a sample skipped: 'a;b 3'"
	assert_stderr_contains "no stacks in 1 line of input (see above)"
	fg -2 --separate-stderr fg-fold --input xml
	assert_stderr_contains "unknown input format 'xml'"
}

@test "bad line: reported with file and line, skipped, the rest folded, exit 0" {
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$corpus/input/weird-stack-line.txt"
	[ "$stderr" = "fg-fold: $corpus/input/weird-stack-line.txt:5: unrecognized line skipped: '\\t          THIS_IS_A_WEIRD_LINE'
fg-fold: skipped 1 unrecognized line" ]
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = $'inline-counter 250000\ninline-counter;main 250000' ]
}

@test "blank lines after a header do not end the sample" {
	fg -0 --separate-stderr fg-fold "$corpus/input/empty-line.txt"
	[ "$output" = "inline-counter;main 500000" ]
	[ -z "$stderr" ]
}

@test "bad lines: many are counted, the first ten shown" {
	{ echo 'a 1 1.0: 1 cycles:'; for i in $(seq 30); do echo "garbage $i"; done; printf '\t1 f (m)\n\n'; } >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "a;f 1" ]
	[ "$(grep -c 'unrecognized line skipped' <<<"$stderr")" -eq 10 ]
	assert_stderr_contains "skipped 30 unrecognized lines"
}

@test "a count that would overflow leaves out its one sample, not the profile" {
	# folded: the line that would pass 2^64-1 is left out, the others kept
	printf 'a 18446744073709551615\nb 2\na 1\nb 3\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'a 18446744073709551615\nb 5' ]
	assert_stderr_contains "<stdin>:3: the count of a stack would pass 2^64-1; left out"
	assert_stderr_contains "left out 1 sample or line whose count would pass 2^64-1"
	# perf: a forged weight of 2^64-1 (issue 17) and more samples of the same stack
	{
		printf 'app 1 1.0: 5 cycles:\n\t1 f (m)\n\n'
		printf 'injected 4242/4242 [000] 1.000000: 18446744073709551615 cycles:\n\t1 FORGED (x)\n\n'
		printf 'injected 4242/4242 [000] 1.000001: 7 cycles:\n\t1 FORGED (x)\n\n'
		printf 'app 1 1.1: 6 cycles:\n\t1 f (m)\n\n'
	} >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'app;f 11\ninjected;FORGED 18446744073709551615' ]
	assert_stderr_contains "<stdin>:7: the count of a stack would pass 2^64-1; left out"
	# a period or a count past 64 bits: that sample or line is left out
	printf 'a 1 1.0: 18446744073709551616 cycles:\n\t1 f (m)\n\na 1 1.0: 3 cycles:\n\t1 g (m)\n\n' \
		>"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "a;g 3" ]
	assert_stderr_contains "<stdin>:1: the period does not fit in 64 bits; sample left out"
	printf 'a 99999999999999999999999\nb 1\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "b 1" ]
	assert_stderr_contains "<stdin>:1: a count does not fit in 64 bits; line left out"
}

@test "binary input (fg-sample records) is refused: run fg-sym first" {
	printf 'FGSTACK1\001\000\000\000\030\000\000\000' >"$BATS_TEST_TMPDIR/run.fgr"
	fg -1 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/run.fgr"
	assert_stderr_contains "binary input"
	assert_stderr_contains "fg-sym"
	[ -z "$output" ]
}

@test "an unreadable file: message, exit 1, the other inputs still folded" {
	fg -1 --separate-stderr fg-fold /nonexistent/x "$fixtures/fg-sym.txt"
	[ "${lines[0]}" = "my_app;[libx (old).so];main;[unknown] 10101010" ]
	[ "$stderr" = "fg-fold: cannot open '/nonexistent/x': No such file or directory" ]
	fg -1 --separate-stderr fg-fold "$fixtures"
	[ "$stderr" = "fg-fold: cannot read '$fixtures': Is a directory" ]
}

@test "a failed write (/dev/full) exits 1 with a message" {
	fg -1 --separate-stderr fold_to /dev/full "$corpus/input/perf-java-stacks-01.txt"
	assert_stderr_contains "fg-fold: write error: No space left on device"
}

@test "no input, an empty input: no output, exit 0" {
	fg -0 --separate-stderr fg-fold </dev/null
	[ -z "$output" ] && [ -z "$stderr" ]
	fg -0 --separate-stderr fg-fold "$corpus/input/no-events.txt"
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "an unknown option prints usage to stderr and exits 2" {
	fg -2 --separate-stderr fg-fold --bogus
	[[ $stderr == "fg-fold: unrecognized option '--bogus'"* ]]
	assert_stderr_contains "usage: fg-fold"
	[ -z "$output" ]
}

@test "bad option values exit 2" {
	fg -2 --separate-stderr fg-fold --only-pid abc
	assert_stderr_contains "fg-fold: invalid pid 'abc'"
	fg -2 --separate-stderr fg-fold --event-filter ''
	assert_stderr_contains "fg-fold: invalid event name ''"
	fg -2 --separate-stderr fg-fold --skip-after
	assert_stderr_contains "usage: fg-fold"
}

@test "-h prints usage to stdout and exits 0; -V prints the version" {
	fg -0 --separate-stderr fg-fold -h
	[[ ${lines[0]} == "usage: fg-fold "* ]]
	[ -z "$stderr" ]
	fg -0 --separate-stderr fg-fold --help
	[[ ${lines[0]} == "usage: fg-fold "* ]]
	fg -0 --separate-stderr fg-fold -V
	[[ $output =~ ^fg-fold\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "-o FILE writes there" {
	fg -0 --separate-stderr fg-fold -o "$BATS_TEST_TMPDIR/out" "$fixtures/fg-sym.txt"
	[ -z "$output" ]
	assert_golden "$fixtures/fg-sym.folded"
	fg -1 --separate-stderr fg-fold -o /nonexistent/dir/out "$fixtures/fg-sym.txt"
	assert_stderr_contains "cannot open '/nonexistent/dir/out'"
}

@test "--help lists every option the man page documents, and no other" {
	man=$TOP/man/fg-fold.1
	from_man=$(grep -oE 'Fl -?[a-zA-Z][-a-zA-Z]*' "$man" | awk '{ print "-" $2 }' | sort -u)
	from_help=$(fg-fold --help | grep -oE '(^| |\[)--?[a-zA-Z][-a-zA-Z]*([] ,|]|$)' |
		sed -E 's/^[ []//; s/[] ,|]$//' | sort -u)
	[ "$(wc -l <<<"$from_man")" -gt 15 ]
	diff <(echo "$from_man") <(echo "$from_help")
}

@test "--help's usage lines and the man page's synopsis name the same options in order" {
	man=$TOP/man/fg-fold.1
	syn_man=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$man" | grep -oE 'Fl -?[a-zA-Z][-a-zA-Z]*' |
		awk '{ print "-" $2 }')
	syn_help=$(fg-fold --help | sed -n '1,/^$/p' | grep -oE '(^| |\[)--?[a-zA-Z][-a-zA-Z]*([] ,|]|$)' |
		sed -E 's/^[ []//; s/[] ,|]$//')
	diff <(echo "$syn_man") <(echo "$syn_help")
}

@test "folding 200 copies of a capture uses no more memory than one copy" {
	in=$corpus/input/perf-java-stacks-01.txt
	rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
	for i in $(seq 200); do cat "$in"; echo; done >"$BATS_TEST_TMPDIR/big.txt"
	one=$(rss fg-fold "$in")
	many=$(rss fg-fold "$BATS_TEST_TMPDIR/big.txt")
	echo "rss one=$one KB many=$many KB" >&3
	[ "$many" -lt $((one + 4096)) ]
}

# what addr2line -i -f -s -C says at PROG's main+OFF, as fg-fold folds it: outermost
# first, the inlined functions marked _[i]; with CONTEXT, each with its file:line
# addr2line_stacks PROG CONTEXT OFF...: for each main+OFF of PROG, the stack addr2line -i
# gives, outermost first, inlined frames marked _[i] (with CONTEXT=1, as file:line), a line each
addr2line_stacks() {
	local prog=$1 ctx=$2 main off addrs=()
	shift 2
	main=$(nm "$prog" | awk '$3 == "main" { print $1 }')
	for off in "$@"; do
		addrs+=("$(printf '0x%x' $((0x$main + off)))")
	done
	# -a: each address' frames come after a line of the address itself
	addr2line -a -i -f -s -C -e "$prog" "${addrs[@]}" |
		awk -v ctx="$ctx" '
			function out(	s, i) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i] "_[i]"; print s }
			/^0x[0-9a-f]+$/ { if (n) out(); n = 0; next }
			{ fn = $0; getline; f[++n] = ctx ? fn ":" $0 : fn }
			END { if (n) out() }'
}

@test "--inline and --context un-inline frames as addr2line does (position-independent program)" {
	requires addr2line nm
	local prog=$BATS_FILE_TMPDIR/inl inlined offs
	offs=$(seq 0 2 60)
	# a sample a place, its process oOFF: a made-up load address, the frame found by main+OFF
	for off in $offs; do
		printf 'o%02d 10/10 [000] 1.0: 1 cycles:\n\t    55d0c0de%04x main+0x%x (%s)\n\n' \
			"$off" $((0x1000 + off)) "$off" "$prog"
	done >"$BATS_TEST_TMPDIR/in.txt"
	# what addr2line says of each, under the name of its process
	paste -d';' <(printf 'o%02d\n' $offs) <(addr2line_stacks "$prog" 0 $offs) |
		sed 's/$/ 1/' | LC_ALL=C sort >"$BATS_TEST_TMPDIR/want"
	paste -d';' <(printf 'o%02d\n' $offs) <(addr2line_stacks "$prog" 1 $offs) |
		sed 's/$/ 1/' | LC_ALL=C sort >"$BATS_TEST_TMPDIR/want-context"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -eq 31 ]
	fg -0 --separate-stderr fg-fold --inline "$BATS_TEST_TMPDIR/in.txt"
	[ -z "$stderr" ]
	diff -u "$BATS_TEST_TMPDIR/want" <(printf '%s\n' "$output")
	fg -0 --separate-stderr fg-fold --context "$BATS_TEST_TMPDIR/in.txt"
	[ -z "$stderr" ]
	diff -u "$BATS_TEST_TMPDIR/want-context" <(printf '%s\n' "$output")
	# the program really has inlined code at some of those places
	inlined=$(grep -c '_\[i\]' <<<"$output")
	[ "$inlined" -gt 3 ]
}

@test "--inline finds a frame without a symbol by its address in a fixed-address program" {
	requires addr2line nm
	prog=$BATS_FILE_TMPDIR/inl-fixed
	main=$(nm "$prog" | awk '$3 == "main" { print $1 }')
	for off in 0 20 30; do
		printf 'inl 10/10 [000] 1.0: 1 cycles:\n\t    %x [unknown] (%s)\n\n' \
			$((0x$main + off)) "$prog" >"$BATS_TEST_TMPDIR/in.txt"
		fg -0 --separate-stderr fg-fold --inline "$BATS_TEST_TMPDIR/in.txt"
		[ "$output" = "inl;$(addr2line_stacks "$prog" 0 "$off") 1" ]
	done
}

@test "--inline: files without DWARF or unreadable are left alone, said once per file" {
	for i in 1 2 3; do
		printf 'a 1 1.0: 1 cycles:\n\t10 main+0x10 (%s)\n\t20 f+0x1 (/nonexistent/lib.so)\n\t30 k ([kernel.kallsyms])\n\n' \
			"$BATS_FILE_TMPDIR/inl-nodwarf"
	done >"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fg-fold --inline "$BATS_TEST_TMPDIR/in.txt"
	[ "$output" = "a;k;f;main 3" ]
	[ "$(grep -c 'inl-nodwarf: no DWARF line information' <<<"$stderr")" -eq 1 ]
	[ "$(grep -c "/nonexistent/lib.so: cannot read it as ELF" <<<"$stderr")" -eq 1 ]
	assert_stderr_contains "--inline: 6 frames left as they were"
}

@test "CRLF line ends fold as LF ones" {
	sed 's/$/\r/' "$fixtures/fg-sym.txt" >"$BATS_TEST_TMPDIR/crlf.txt"
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/crlf.txt"
	assert_golden "$fixtures/fg-sym.folded"
	[ -z "$stderr" ]
}

@test "samples without frames (perf script without -g or ip) fold to their process" {
	printf 'a 1 1.0: 3 cycles:\nb 2 1.1: 4 cycles:\na 1 1.2: 5 cycles:\n' >"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/in.txt"
	[ "$output" = $'a 8\nb 4' ]
	[ -z "$stderr" ]
}

@test "a long input line (past the reader's buffer) is one frame" {
	name=$(head -c 3000000 /dev/zero | tr '\0' x)
	printf 'a 1 1.0: 1 cycles:\n\t10 %s (m)\n\n' "$name" >"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/in.txt"
	[ "$(wc -c <"$BATS_TEST_TMPDIR/out")" -eq $((2 + 3000000 + 3)) ]
}

@test "folded input is told from perf text whatever its first line's length" {
	# a 3000-frame stack: the first line is past 64 KiB (which fooled the detection)
	awk 'BEGIN { s = "root"; for (i = 0; i < 3000; i++) s = s ";a_function_with_a_name_" i; print s " 5"; print "c;d 2" }' \
		>"$BATS_TEST_TMPDIR/deep.folded"
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/deep.folded" | wc -c)" -gt 65536 ]
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/deep.folded"
	[ -z "$stderr" ]
	LC_ALL=C sort "$BATS_TEST_TMPDIR/deep.folded" | cmp - "$BATS_TEST_TMPDIR/out"
	# the same through a pipe
	fg -0 --separate-stderr fold_to "$BATS_TEST_TMPDIR/out2" <"$BATS_TEST_TMPDIR/deep.folded"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/out2"
}

@test "fractional counts are folded input, summed exactly" {
	printf 'a;b 5\nc;d 2.5\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'a;b 5\nc;d 2.5' ]
	[ -z "$stderr" ]
	printf 'c;d 0.1\nc;d 0.2\nx 1.\nc;d 0.70\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = $'c;d 1\nx 1' ]
	# two columns, fractional
	printf 'a 0.5 1\na 0.25 1.5\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ "$output" = "a 0.75 2.5" ]
}

@test "input that yields no stack is an error that says why" {
	printf 'hello world\nthis is no profile\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -1 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ -z "$output" ]
	assert_stderr_contains "<stdin>:1: line outside a sample skipped: 'hello world'"
	assert_stderr_contains "fg-fold: no stacks in 2 lines of input (see above)"
	# side-band records and nothing else
	printf 's 1 0.1: PERF_RECORD_COMM exec: s:1/1\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -1 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	assert_stderr_contains "no stacks in 1 line of input: only side-band records"
	# comments and blank lines alone are an empty input
	printf '# perf script --header\n\n#\n' >"$BATS_TEST_TMPDIR/stdin"
	fg -0 --separate-stderr fg-fold <"$BATS_TEST_TMPDIR/stdin"
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "a line past the limit (64 MiB) is skipped with its line number; memory stays bounded" {
	requires /usr/bin/time
	# (make check-arm64: 64 MiB through qemu-user take minutes; the natives run it)
	[ -z "${FG_UNDER_QEMU:-}" ] || skip "64 MiB under qemu-user"
	# N MB without a newline, then a stack: the line is named, the stack folded
	long_rss() { # MB
		{ head -c "$1"000000 /dev/zero | tr '\0' a; printf '\na;b 3\n'; } |
			/usr/bin/time -f %M fg-fold 2>"$BATS_TEST_TMPDIR/err" >"$BATS_TEST_TMPDIR/out"
		tail -n 1 "$BATS_TEST_TMPDIR/err"
	}
	rss100=$(long_rss 100)
	rss200=$(long_rss 200)
	echo "# rss: $rss100 KB for a 100 MB line, $rss200 KB for a 200 MB one" >&3
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "a;b 3" ]
	grep -q "<stdin>:1: line of 67108864 bytes or more skipped (the limit)" "$BATS_TEST_TMPDIR/err"
	grep -q "skipped 1 line of 67108864 bytes or more; 0 samples left out" "$BATS_TEST_TMPDIR/err"
	# bounded by the limit, not by the line: twice the line, (about) the same memory,
	# and less than the line itself (even under AddressSanitizer)
	[ "$rss200" -lt $((rss100 + 16384)) ]
	[ "$rss200" -lt 195000 ]
	# in a perf sample: that sample is left out, the others folded
	{
		printf 'a 1 1.0: 2 cycles:\n\t1 f (m)\n\n'
		printf 'b 1 1.0: 3 cycles:\n\t1 '
		head -c 70000000 /dev/zero | tr '\0' x
		printf ' (m)\n\t2 g (m)\n\n'
	} >"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/in.txt"
	[ "$output" = "a;f 2" ]
	assert_stderr_contains "in.txt:5: line of 67108864 bytes or more skipped"
	assert_stderr_contains "1 sample left out"
}

@test "-o FILE on a full disk: no partial file, an existing file kept" {
	requires root
	mnt=$BATS_TEST_TMPDIR/small
	mkdir "$mnt"
	mount -t tmpfs -o size=12k tmpfs "$mnt" || skip "cannot mount a tmpfs"
	awk 'BEGIN { for (i = 0; i < 2000; i++) print "stack;frame_" i " " i }' >"$BATS_TEST_TMPDIR/big.folded"
	echo "old;profile 1" >"$mnt/out.folded"
	run -1 --separate-stderr fg-fold -o "$mnt/out.folded" "$BATS_TEST_TMPDIR/big.folded"
	ls -la "$mnt" >&3
	[[ $stderr == *"fg-fold: cannot write '$mnt/out.folded': No space left on device"* ]]
	[ "$(cat "$mnt/out.folded")" = "old;profile 1" ]
	[ "$(ls -A "$mnt")" = "out.folded" ] # no temporary file left
	rm "$mnt/out.folded"
	run -1 --separate-stderr fg-fold -o "$mnt/new.folded" "$BATS_TEST_TMPDIR/big.folded"
	[ -z "$(ls -A "$mnt")" ]
	umount "$mnt"
}

@test "-o FILE replaces the file only when all is written; a device is written in place" {
	echo "old 1" >"$BATS_TEST_TMPDIR/out"
	chmod 640 "$BATS_TEST_TMPDIR/out"
	fg -0 --separate-stderr fg-fold -o "$BATS_TEST_TMPDIR/out" "$fixtures/fg-sym.txt"
	assert_golden "$fixtures/fg-sym.folded"
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/out")" = 640 ]
	[ "$(ls -A "$BATS_TEST_TMPDIR" | grep -c '^\.out\.')" -eq 0 ]
	# nothing folded: the old file stays
	printf 'garbage\n' >"$BATS_TEST_TMPDIR/bad.txt"
	fg -1 --separate-stderr fg-fold -o "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/bad.txt"
	assert_golden "$fixtures/fg-sym.folded"
	fg -0 --separate-stderr fg-fold -o /dev/null "$fixtures/fg-sym.txt"
	[ -c /dev/null ]
	fg -0 --separate-stderr fg-fold -o /dev/stdout "$fixtures/fg-sym.txt"
	[ "$output" = "$(cat "$fixtures/fg-sym.folded")" ]
}

@test "Rust names that perf left half-demangled are decoded, as inferno does" {
	printf 'r 1 1.0: 1 cycles:\n\t10 gc::gc::GcBox$LT$T$GT$::new::_$u7b$$u7b$closure$u7d$$u7d$::ha2ed0674a1c3dc9f+0x1 (/b/r)\n\t20 _$LT$std..fs..ReadDir$u20$as$u20$core..iter..Iterator$GT$::next::hc14f1750ca79129b (/b/r)\n\t30 main (/b/r)\n\n' \
		>"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/in.txt"
	[ "$output" = "r;main;<std::fs::ReadDir as core::iter::Iterator>::next;gc::gc::GcBox<T>::new::_{{closure}} 1" ]
	# the golden files hold no such name: they are unchanged (the golden tests above)
	! grep -rqE '::h[0-9a-f]{16}' "$corpus/input"
}

@test "a Rust lifetime's quote, \$u27\$, is kept; the raw name's quotes are dropped before decoding" {
	printf 'r 1 1.0: 1 cycles:\n\t10 _$LT$core..str..Split$LT$$u27$a$C$$u20$P$GT$$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::h0123456789abcdef+0x10 (/b/r)\n\t20 _$LT$x..\x27Y\x27$u27$b$GT$::f::h0123456789abcdef (/b/r)\n\t30 main (/b/r)\n\n' \
		>"$BATS_TEST_TMPDIR/in.txt"
	fg -0 --separate-stderr fg-fold "$BATS_TEST_TMPDIR/in.txt"
	[ "$output" = "r;main;<x::Y'b>::f;<core::str::Split<'a, P> as core::iter::traits::iterator::Iterator>::next 1" ]
}
