bats_require_minimum_version 1.5.0
load helpers

# fg-fold reads whatever perf script prints (issue 19): for every option in
# tests/data/fg-fold/perf/options, the stacks and total weight fg-fold folds are
# those of the plain perf script output of the same recording.  The committed
# captures (perf 6.1) are checked without perf; the live test records its own.

captures=$DATA/fg-fold/perf

# the plain capture's folding, made into what capture NAME must fold to; NODSO=1 when
# the capture prints no dso field: a frame without a symbol, named after its module in
# the plain output ([libc.so.6], [[vdso]]), is only [unknown] there
expected() { # DIR RECORD WEIGHT STACKS NODSO
	local base folded
	case $2 in
	g) base=plain ;;
	nog) base=no-call-graph ;;
	lost) base=lost-plain ;;
	esac
	# each plain capture is folded once a way (a test's directory is its own)
	folded=$BATS_TEST_TMPDIR/folded-$base-$3
	if [ ! -e "$folded" ]; then
		if [ "$3" = count ]; then
			fg-fold --samples "$1/$base.txt"
		else
			fg-fold "$1/$base.txt"
		fi >"$folded.tmp" && mv "$folded.tmp" "$folded"
	fi
	awk -v how="$4" -v nodso="$5" '
		{ n = $NF; k = split(substr($0, 1, length($0) - length(n) - 1), f, ";")
		  if (nodso) for (i = 2; i <= k; i++) if (f[i] ~ /^\[.*\]$/) f[i] = "[unknown]"
		  s = f[1]
		  if (how == "leaf") s = f[1] ";" f[k]
		  else if (how == "noroot") { s = f[2]; for (i = 3; i <= k; i++) s = s ";" f[i] }
		  else for (i = 2; i <= k; i++) s = s ";" f[i]
		  sum[s] += n }
		END { for (s in sum) printf "%s %d\n", s, sum[s] }' "$folded" | LC_ALL=C sort
}

# check every capture of DIR; print what differs, fail if anything does
check_captures() { # DIR
	local dir=$1 name rec weight stacks args bad=0 n=0 nodso
	while IFS=$'\t' read -r name rec weight stacks args; do
		[[ -z $name || $name == '#'* ]] && continue
		n=$((n + 1))
		nodso=0
		if [[ $args =~ -F\ ([^ ]+) && ${BASH_REMATCH[1]} != [+-]* && ${BASH_REMATCH[1]} != *dso* ]]; then
			nodso=1
		fi
		expected "$dir" "$rec" "$weight" "$stacks" "$nodso" >"$BATS_TEST_TMPDIR/want"
		if ! fg-fold -v "$dir/$name.txt" >"$BATS_TEST_TMPDIR/got" 2>"$BATS_TEST_TMPDIR/err"; then
			echo "# $name ($args): fg-fold failed: $(cat "$BATS_TEST_TMPDIR/err")" >&3
			bad=1
			continue
		fi
		if ! diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" >"$BATS_TEST_TMPDIR/diff"; then
			echo "# $name ($args): stacks or weights differ" >&3
			sed 's/^/#   /' "$BATS_TEST_TMPDIR/diff" >&3
			bad=1
		fi
		# nothing of what perf prints is taken for a bad line
		if grep -q 'unrecognized\|outside a sample' "$BATS_TEST_TMPDIR/err"; then
			echo "# $name ($args): $(grep -m1 'unrecognized\|outside' "$BATS_TEST_TMPDIR/err")" >&3
			bad=1
		fi
		# the loss records' counts are in the summary
		lost=$(awk '/PERF_RECORD_LOST/ { n += $NF } END { print n + 0 }' "$dir/$name.txt")
		if [ "$lost" -gt 0 ] && ! grep -qE "perf lost $lost events? \\(" "$BATS_TEST_TMPDIR/err"; then
			echo "# $name: no 'perf lost $lost events' in: $(cat "$BATS_TEST_TMPDIR/err")" >&3
			bad=1
		fi
	done <"$captures/options"
	[ "$n" -gt 30 ]
	return $bad
}

@test "perf 6.1 captures of every perf script option fold as the plain output does" {
	check_captures "$captures"
	# and the captures hold what they are about
	grep -q PERF_RECORD_COMM "$captures/task-events.txt"
	grep -q PERF_RECORD_MMAP2 "$captures/mmap-events.txt"
	grep -q PERF_RECORD_SWITCH "$captures/switch-events.txt"
	grep -q PERF_RECORD_LOST "$captures/lost-events.txt"
	grep -q 'insn: ' "$captures/insn.txt"
	grep -q '^|' "$captures/srccode.txt"
	! grep -q 'cpu-clock' "$captures/fields-comm-tid-ip-sym.txt"
}

@test "side-band records: counted by kind with -v, never the first event" {
	fg -0 --separate-stderr fg-fold -v "$captures/all-events.txt"
	assert_stderr_contains "side-band records: "
	# (perf record --buildid-mmap writes every mapping as MMAP2: MMAP may be missing)
	for kind in COMM EXIT MMAP MMAP2 SWITCH; do
		n=$(grep -c "PERF_RECORD_$kind[ :(]" "$captures/all-events.txt") || n=0
		case $kind in MMAP) [ "$n" -gt 0 ] || continue ;; *) [ "$n" -gt 0 ] ;; esac
		assert_stderr_contains "PERF_RECORD_$kind $n"
	done
	assert_stderr_contains "folded 'cpu-clock' events"
	fg -0 --separate-stderr fg-fold "$captures/lost-events.txt"
	lost=$(awk '/PERF_RECORD_LOST/ { n += $NF; r++ } END { print n " events (" r }' \
		"$captures/lost-events.txt")
	assert_stderr_contains "perf lost $lost PERF_RECORD_LOST record"
}

@test "live: perf record and perf script with every option, folded as the plain output" {
	requires root perf
	mkdir "$BATS_TEST_TMPDIR/live"
	"$captures/make-captures" "$WORKLOADS" "$BATS_TEST_TMPDIR/live"
	# the recordings have samples and a call graph
	[ "$(grep -c cpu-clock "$BATS_TEST_TMPDIR/live/plain.txt")" -ge 3 ]
	grep -q 'hot' "$BATS_TEST_TMPDIR/live/plain.txt"
	check_captures "$BATS_TEST_TMPDIR/live"
}
