#!/usr/bin/env bats
# fg-pprof: pprof profiles from perf script text and folded stacks, read back by
# the real clients (go tool pprof, protoc with pprof's profile.proto), never by
# our own reading of the format.
bats_require_minimum_version 1.5.0
load helpers

PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto
PP=$DATA/fg-pprof

setup() {
	requires go protoc
	[ -r "$PROTO_DIR/profile.proto" ] || skip "test requires golang-github-google-pprof-dev"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# go tool pprof without symbolizing again: the names are the profile's own
pprof() {
	go tool pprof -symbolize=none "$@"
}

# the flat share of each function, "NAME<TAB>PERCENT", as go tool pprof -top prints it
pprof_flat() {
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$@" 2>/dev/null |
		awk -v OFS='\t' 'go && $2 != "0%" { n = $6; for (i = 7; i <= NF; i++) n = n " " $i
			sub(/%$/, "", $2); print n, $2 } /flat%/ { go = 1 }' | LC_ALL=C sort
}

# the same from folded stacks: each leaf's share of the total weight
fold_flat() {
	awk -v OFS='\t' '{ n = $NF; s = $0; sub(/ [0-9.]+$/, "", s); k = split(s, f, ";")
		w[f[k]] += n; t += n } END { for (x in w) printf "%s\t%.2f\n", x, 100 * w[x] / t }' \
		"$1" | LC_ALL=C sort
}

# each value of label KEY and its share, "VALUE<TAB>PERCENT", from go tool pprof -tags
pprof_tag() {
	pprof -tags "$2" 2>/dev/null | awk -v OFS='\t' -v key="$1:" '
		$1 == key { go = 1; next } /^ *$/ { go = 0 }
		go && match($0, /\( *[0-9.]+%\): /) { p = substr($0, RSTART + 1, RLENGTH - 4)
			gsub(/ /, "", p); print substr($0, RSTART + RLENGTH), p }' | LC_ALL=C sort
}

# the share of each root frame of folded stacks ("comm" or "comm-PID")
fold_roots() {
	awk -v OFS='\t' '{ n = $NF; split($0, f, ";"); w[f[1]] += n; t += n }
		END { for (x in w) printf "%s\t%.2f\n", x, 100 * w[x] / t }' "$1" | LC_ALL=C sort
}

# two "NAME<TAB>PERCENT" tables hold the same names, the shares within 0.011 points
same_shares() {
	join -t $'\t' -a1 -a2 -e missing -o 0,1.2,2.2 "$1" "$2" >both
	sed 's/^/# /' both >&3
	awk -F '\t' '$2 == "missing" || $3 == "missing" || $2 - $3 > 0.011 || $3 - $2 > 0.011 {
		print "differ: " $0; bad = 1 } END { exit bad }' both
	[ -s both ]
}

# the values of every sample added up by column, from go tool pprof -raw
raw_totals() {
	pprof -raw "$1" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+( +[0-9]+)*:/ { sub(/:.*/, ""); for (i = 1; i <= NF; i++) t[i] += $i
			if (NF > n) n = NF }
		END { for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? " " : ""), t[i]; print "" }'
}

# pprof's way of printing a time in nanoseconds: "%.2f" and a unit, ".00" left out
@test "fg-pprof -h prints the usage; -V the version" {
	fg fg-pprof -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: fg-pprof "* ]]
	# every option of the usage is in the man page, as mdoc spells it ("Fl \-every")
	for opt in -v -F --every --event-filter --input -o -h -V; do
		assert_output_contains "$opt"
		grep -qF ".It Fl $(sed 's/-/\\-/g' <<<"${opt#-}")" "$TOP/man/fg-pprof.1"
	done
	fg fg-pprof -V
	[ "$status" -eq 0 ]
	[[ $output == "fg-pprof "* ]]
}

@test "fg-pprof: usage errors exit 2" {
	fg -2 --separate-stderr fg-pprof --bogus
	[[ $stderr == *"unrecognized option"* ]]
	fg -2 --separate-stderr fg-pprof -F 0 "$PP/offcpu.txt"
	[[ $stderr == "fg-pprof: invalid frequency '0'"* ]]
	fg -2 --separate-stderr fg-pprof --every 0 -o d "$PP/offcpu.txt"
	[[ $stderr == "fg-pprof: invalid window length '0'"* ]]
	fg -2 --separate-stderr fg-pprof --every 10 "$PP/offcpu.txt"
	[[ $stderr == "fg-pprof: --every needs -o DIR"* ]]
	fg -2 --separate-stderr fg-pprof --input xml "$PP/offcpu.txt"
	[[ $stderr == "fg-pprof: unknown input format 'xml'"* ]]
	[ -z "$output" ]
}

@test "perf's capture: go tool pprof shows fg-fold's leaf shares, its comms and threads, the run's seconds" {
	fg fg-pprof -o perf.pb.gz "$PP/perf-leaves.txt"
	[ "$status" -eq 0 ]
	fg-fold "$PP/perf-leaves.txt" >perf.folded
	pprof_flat perf.pb.gz >pprof.flat
	fold_flat perf.folded >fold.flat
	same_shares fold.flat pprof.flat
	# every function, so the top ten too: the first ten of each in the same order
	[ "$(sort -t $'\t' -k2,2nr -k1,1 fold.flat | head -n 10 | cut -f1)" = \
		"$(sort -t $'\t' -k2,2nr -k1,1 pprof.flat | head -n 10 | cut -f1)" ]
	fold_roots perf.folded >fold.comm
	pprof_tag comm perf.pb.gz >pprof.comm
	same_shares fold.comm pprof.comm
	# perf printed no process ids: no pid label, the thread ids are there
	pprof_tag tid perf.pb.gz >pprof.tid
	[ "$(wc -l <pprof.tid)" -ge 1 ]
	[ -z "$(pprof_tag pid perf.pb.gz)" ]
	# 499 samples a second (perf's header): each sample is 1/499 s, as perf's periods say
	n=$(grep -c ' cpu-clock:ppp: *$' "$PP/perf-leaves.txt")
	# in nanoseconds: pprof's default unit is that of the smallest value shown
	fg pprof -top -unit=ns perf.pb.gz
	assert_output_contains "Total samples = $((n * 2004008))ns"
	[ "$(raw_totals perf.pb.gz)" = "$n $((n * 2004008))" ]
}

@test "fg-sym's capture: the same leaf shares, comm and pid shares as fg-fold, and 1/499 s a sample" {
	fg fg-pprof -o sys.pb.gz "$PP/fgsym-sys.txt"
	[ "$status" -eq 0 ]
	fg-fold "$PP/fgsym-sys.txt" >sys.folded
	pprof_flat sys.pb.gz >pprof.flat
	fold_flat sys.folded >fold.flat
	same_shares fold.flat pprof.flat
	# the unnamed frame: pprof names it after its file, as fg-fold does
	grep -q $'^\\[dash\\]\t' pprof.flat || grep -q '\[dash\]' <(pprof -top -nodefraction=0 sys.pb.gz)
	fold_roots sys.folded >fold.comm
	pprof_tag comm sys.pb.gz >pprof.comm
	same_shares fold.comm pprof.comm
	[ "$(wc -l <pprof.comm)" -eq 3 ]
	fg-fold --pid "$PP/fgsym-sys.txt" | fold_roots /dev/stdin | sed 's/^[^\t]*-//' | LC_ALL=C sort >fold.pid
	pprof_tag pid sys.pb.gz >pprof.pid
	same_shares fold.pid pprof.pid
	n=$(grep -c ' cpu-clock: *$' "$PP/fgsym-sys.txt")
	fg pprof -top -unit=ns sys.pb.gz
	assert_output_contains "Total samples = $((n * 2004008))ns"
	# the wall-clock time of the first sample, from fg-sym's reference time
	assert_output_contains "Time: Nov 30, 2026"
}

@test "protoc decodes every profile strictly with pprof's profile.proto" {
	local f
	for f in perf-leaves fgsym-sys inline offcpu; do
		fg-pprof -F 1000 -o "$f.pb.gz" "$PP/$f.txt" 2>/dev/null
		zcat "$f.pb.gz" >"$f.pb"
		fg --separate-stderr protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" \
			"$PROTO_DIR/profile.proto" <"$f.pb"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		# no field profile.proto does not know (protoc prints those by number)
		! grep -Eq '^ *[0-9]+: ' <<<"$output"
		# string_table[0] is ""; sample types and the period type name strings
		grep -q 'string_table: ""' <<<"$output"
		grep -q 'period: 1000000$' <<<"$output"
	done
}

@test "a location per address, inlined functions as its extra lines, a build-id, an unnamed frame left to pprof" {
	fg fg-pprof -F 1000 -o in.pb.gz "$PP/inline.txt"
	[ "$status" -eq 0 ]
	fg pprof -raw in.pb.gz
	# three Lines in one location, leaf first, as Go's own profiles have them
	[[ $output == *"0x1150 M=1 inner :0 s=0"$'\n'"             middle :0 s=0"$'\n'"             outer :0 s=0"* ]]
	# outer at another address is another location; the unnamed frame has no line
	[[ $output == *"0x1210 M=1 outer :0 s=0"* ]]
	[[ $output =~ 0x1290\ M=1\ *$'\n' ]]
	# the file with the build-id of its PERF_RECORD_MMAP2 line, the whole address
	# space at offset 0 (its addresses are the file's own); not has_functions, so
	# pprof may name the unnamed frame from the file
	[[ $output == *"1: 0x0/0xffffffffffffffff/0x0 /opt/prog 8f2c6a0d1e9b4c7a5f3e2d1c0b9a8f7e6d5c4b3a [IN]"* ]]
	[[ $output == *"2: 0x0/0xffffffffffffffff/0x0 /usr/lib/x86_64-linux-gnu/libc.so.6  [FN]"* ]]
	fg pprof -traces in.pb.gz
	[[ $output == *"inner (inline)"$'\n'*"middle (inline)"$'\n'*"outer"$'\n'*"main"* ]]
	# a function per name: outer once, though at two addresses
	zcat in.pb.gz | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" \
		"$PROTO_DIR/profile.proto" >decoded
	[ "$(grep -c '^function {' decoded)" -eq 5 ]
	[ "$(grep -c '^location {' decoded)" -eq 5 ]
	grep -q 'has_functions: true' decoded
}

@test "off-CPU waits weigh their nanoseconds; other events are skipped and counted" {
	fg --separate-stderr fg-pprof -o off.pb.gz "$PP/offcpu.txt"
	[ "$status" -eq 0 ]
	[[ $stderr == *"skipped 1 samples of other events"* ]]
	fg pprof -raw off.pb.gz
	[[ $output == *"samples/count cpu/nanoseconds[dflt] offcpu/nanoseconds"* ]]
	[ "$(raw_totals off.pb.gz)" = "4 20000000 40000000" ]
	fg pprof -sample_index=offcpu -top off.pb.gz
	assert_output_contains "Total samples = 40ms"
	assert_output_contains "30ms 75.00%  wait_io"
}

@test "folded stacks: locations by name, counts as samples; -F gives them their time" {
	local in=$DATA/flamegraph/input/$(ls "$DATA/flamegraph/input" | grep -v diff | head -n 1)
	fg fg-pprof -o f.pb.gz "$in"
	[ "$status" -eq 0 ]
	fg-fold "$in" >f.folded
	total=$(awk '{ t += $NF } END { print t }' f.folded)
	fg pprof -raw f.pb.gz
	[[ $output == *"samples/count[dflt]"* ]]
	[ "$(raw_totals f.pb.gz)" = "$total" ]
	pprof_flat f.pb.gz >pprof.flat
	fold_flat f.folded >fold.flat
	same_shares fold.flat pprof.flat
	# no addresses: every location holds a name and no mapping
	! grep -q ' M=' <(pprof -raw f.pb.gz | sed -n '/^Locations/,/^Mappings/p')
	fg fg-pprof -F 100 -o f100.pb.gz "$in"
	[ "$(raw_totals f100.pb.gz)" = "$total $((total * 10000000))" ]
}

@test "bpftrace maps, folded by fg-fold's engine, then made a profile" {
	fg fg-pprof -o b.pb.gz "$DATA/fg-fold/bpftrace.txt"
	[ "$status" -eq 0 ]
	total=$(awk '{ t += $NF } END { print t }' "$DATA/fg-fold/bpftrace.folded")
	[ "$(raw_totals b.pb.gz)" = "$total" ]
}

@test "the whole pipeline: go tool pprof counts 1/99 s for each sample fg-sample took" {
	requires root btf perf_event
	fg-sample -F 99 -- "$WORKLOADS/leaves" 1 2>sample.err | fg-sym -q --header |
		fg-pprof -o live.pb.gz
	n=$(sed -n 's/^fg-sample: \([0-9]*\) samples in .*/\1/p' sample.err)
	[ "$n" -gt 0 ]
	[ "$(raw_totals live.pb.gz)" = "$n $((n * 10101010))" ]
	fg pprof -top -unit=ns live.pb.gz
	assert_output_contains "Total samples = $((n * 10101010))ns"
	assert_output_contains "leaf_a"
}

# samples every 10 ms from wall-clock second 1700000000.5 on, for SECS seconds,
# alternating two stacks and two threads; the clock reads 100.0 at that moment
gen_timed() {
	awk -v secs="$1" 'BEGIN {
		print "# event : name = cpu-clock, , { sample_period, sample_freq } = 100, freq = 1"
		print "# reference time: 2023-11-14 22:13:20.500000 = 1700000000.500000 (TOD) = 100.000000000 (monotonic)"
		for (i = 0; i < secs * 100; i++) {
			t = 100 + i / 100
			printf "app 7/%d [000] %.6f:          1 cpu-clock: \n", 7 + i % 2, t
			printf "\t%16x %s+0x4 (/opt/app)\n", i % 2 ? 4096 : 8192, i % 2 ? "even" : "odd"
			printf "\t%16x main+0x10 (/opt/app)\n\n", 12288
		} }'
}

@test "--every: windows by the samples' own time, named by their wall-clock start, adding up to the whole" {
	gen_timed 35 >timed.txt
	fg --separate-stderr fg-pprof -v --every 10 -o win timed.txt
	[ "$status" -eq 0 ]
	# 1700000000.5 .. 1700000035.49: four windows, the first and last partial
	[ "$(ls -A win | tr '\n' ' ')" = "1700000000.pb.gz 1700000010.pb.gz 1700000020.pb.gz 1700000030.pb.gz " ]
	[ "$(raw_totals win/1700000000.pb.gz)" = "950 9500000000" ]
	[ "$(raw_totals win/1700000010.pb.gz)" = "1000 10000000000" ]
	[ "$(raw_totals win/1700000020.pb.gz)" = "1000 10000000000" ]
	[ "$(raw_totals win/1700000030.pb.gz)" = "550 5500000000" ]
	fg-pprof -o whole.pb.gz timed.txt
	[ "$(raw_totals whole.pb.gz)" = "3500 35000000000" ]
	# each window says when it starts and how long it is
	fg pprof -raw win/1700000010.pb.gz
	assert_output_contains "Duration: 10"
	fg pprof -top win/1700000010.pb.gz
	assert_output_contains "Time: Nov 14, 2023 at 10:13pm (UTC)"
	# protoc reads each one
	for f in win/*; do
		zcat "$f" | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" \
			"$PROTO_DIR/profile.proto" >/dev/null
	done
	[[ $stderr == *"wrote 'win/1700000030.pb.gz': 550 samples"* ]]
}

@test "--every: windows are written while the stream goes on, each whole or not at all" {
	mkfifo in.fifo
	gen_timed 35 >timed.txt
	# the first 25 s of samples, then the stream pauses
	fg-pprof --every 10 -o win <in.fifo 2>err &
	pid=$!
	exec 7>in.fifo
	head -n $((2500 * 4)) timed.txt >&7
	for ((i = 0; i < 100; i++)); do
		[ "$(ls win 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	# windows 0 and 10 are complete (a sample of window 20 came); 20 is not
	[ "$(ls -A win | tr '\n' ' ')" = "1700000000.pb.gz 1700000010.pb.gz " ]
	tail -n +$((2500 * 4 + 3)) timed.txt >&7
	exec 7>&-
	wait "$pid"
	[ "$(ls -A win | wc -l)" -eq 4 ]
	# no temporary file left behind
	! ls -A win | grep -v '^17000000[0-3]0\.pb\.gz$'
}

@test "--every: a window waits a little for its late samples; one later than that goes into the next, counted" {
	# a sample of the first window comes right after the second began: it is
	# still the first window's (the stream is in time order only roughly)
	gen_timed 12 | awk '{ print } /^app 7\/7 \[000\] 109\.500000:/ { late = 1 }
		late && /^$/ { printf "app 7/8 [000] 109.490000:          1 cpu-clock: \n\t%16x even+0x4 (/opt/app)\n\n", 4096; late = 0 }' >grace.txt
	fg --separate-stderr fg-pprof --every 10 -o win grace.txt
	[ "$status" -eq 0 ]
	[[ $stderr != *"came after their window"* ]]
	[ "$(raw_totals win/1700000000.pb.gz | cut -d' ' -f1)" = 951 ]
	[ "$(raw_totals win/1700000010.pb.gz | cut -d' ' -f1)" = 250 ]
	# one more than a second late: its window is written; it goes into the next
	{
		gen_timed 12
		printf 'app 7/7 [000] 101.000000:          1 cpu-clock: \n\t%16x odd+0x4 (/opt/app)\n\n' 8192
	} >late.txt
	fg --separate-stderr fg-pprof --every 10 -o win2 late.txt
	[ "$status" -eq 0 ]
	[[ $stderr == *"1 samples came after their window was written"* ]]
	[ "$(raw_totals win2/1700000000.pb.gz | cut -d' ' -f1)" = 950 ]
	[ "$(raw_totals win2/1700000010.pb.gz | cut -d' ' -f1)" = 251 ]
}

@test "--every: memory stays that of one window, however many windows" {
	requires /usr/bin/time
	gen_timed 600 >short.txt
	gen_timed 1200 >long.txt
	# (ASan keeps freed memory in quarantine: not this test's subject)
	export ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0
	/usr/bin/time -f %M fg-pprof --every 10 -o w1 short.txt 2>short.rss
	/usr/bin/time -f %M fg-pprof --every 10 -o w2 long.txt 2>long.rss
	[ "$(ls w1 | wc -l)" -eq 61 ]
	[ "$(ls w2 | wc -l)" -eq 121 ]
	echo "# max RSS: $(cat short.rss) KiB for 61 windows, $(cat long.rss) KiB for 121" >&3
	[ "$(cat long.rss)" -lt $(($(cat short.rss) + 512)) ]
}

@test "--every refuses input without times" {
	fg -1 --separate-stderr fg-pprof --every 10 -o win "$DATA/fg-fold/fg-sym.folded"
	[[ $stderr == *"folded input has no times"* ]]
}

@test "bad input: binary, a differential profile, bad lines, a missing file, each named" {
	printf 'FGSTACK1\0\0\0' >bin
	fg -1 --separate-stderr fg-pprof -o x.pb.gz bin
	[[ $stderr == "fg-pprof: bin: binary input, not text"* ]]
	printf 'a;b 1 2\n' >diff.folded
	fg -1 --separate-stderr fg-pprof -o x.pb.gz diff.folded
	[[ $stderr == "fg-pprof: diff.folded:1: a differential profile"* ]]
	printf 'app 7/7 [000] 1.0: 1 cpu-clock: \n\t1000 f+0x1 (/a)\nnot a frame\n\n' >bad.txt
	fg --separate-stderr fg-pprof -F 100 -o bad.pb.gz bad.txt
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-pprof: bad.txt:3: unrecognized line skipped: 'not a frame'"* ]]
	[[ $stderr == *"skipped 1 unrecognized line"* ]]
	[ "$(raw_totals bad.pb.gz)" = "1 10000000" ]
	fg -1 --separate-stderr fg-pprof -F 100 -o two.pb.gz missing bad.txt
	[[ $stderr == *"fg-pprof: cannot open 'missing': No such file or directory"* ]]
	# what could be read is still written
	[ "$(raw_totals two.pb.gz)" = "1 10000000" ]
	printf 'app 7/7 [000] 1.0: 99999999999999999999 cpu-clock: \n\t1000 f (/a)\n\n' >big.txt
	fg -1 --separate-stderr fg-pprof -o big.pb.gz big.txt
	[[ $stderr == *"big.txt:1: the period does not fit in 64 bits"* ]]
}

@test "a sample without a frame keeps its time under one named [unknown], reported" {
	printf 'a 1/1 [000] 1.0: 1 cpu-clock: \n\na 1/1 [000] 1.1: 1 cpu-clock: \n\t10 f+0x1 (/a)\n\n' >nf.txt
	fg --separate-stderr fg-pprof -F 10 -o nf.pb.gz nf.txt
	[ "$status" -eq 0 ]
	[[ $stderr == *"1 samples had no frame; each got one named '[unknown]'"* ]]
	# go tool pprof counts both (it drops a sample without a location)
	fg pprof -top nf.pb.gz
	assert_output_contains "Total samples = 200ms"
	assert_output_contains "100ms 50.00% 50.00%      100ms 50.00%  [unknown]"
}

@test "a failed write exits 1 with a message, and leaves no file" {
	fg -1 --separate-stderr fg-pprof -o /dev/full "$PP/offcpu.txt"
	[[ $stderr == *"fg-pprof: cannot write '/dev/full'"* ]]
	fg -1 --separate-stderr fg-pprof -o nodir/x.pb.gz "$PP/offcpu.txt"
	[[ $stderr == *"fg-pprof: cannot write 'nodir/x.pb.gz': No such file or directory"* ]]
	fg-pprof "$PP/offcpu.txt" >/dev/full 2>err && false
	grep -q "fg-pprof: " err
	# a write that fails halfway (files of at most 1 KiB) leaves the old file as it was
	echo old >keep.pb.gz
	fg -1 --separate-stderr bash -c "trap '' XFSZ; ulimit -f 1; fg-pprof -o keep.pb.gz $PP/fgsym-sys.txt"
	[[ $stderr == *"fg-pprof: cannot write 'keep.pb.gz': File too large"* ]]
	[ "$(cat keep.pb.gz)" = old ]
	[ "$(ls -A | grep -c keep)" -eq 1 ]
}

@test "fg-pprof refuses to write a profile to a terminal" {
	requires script
	fg script -qec "fg-pprof $PP/offcpu.txt" /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"refusing to write a binary profile to a terminal"* ]]
}

@test "fg-fold --every: the same windows, named alike, whose stacks add up to fg-fold's whole" {
	gen_timed 35 >timed.txt
	fg --separate-stderr fg-fold -v --every 10 -o fwin timed.txt
	[ "$status" -eq 0 ]
	[ "$(ls -A fwin | tr '\n' ' ')" = "1700000000.folded 1700000010.folded 1700000020.folded 1700000030.folded " ]
	[ "$(awk '{ t += $NF } END { print t }' fwin/1700000000.folded)" = 950 ]
	[ "$(awk '{ t += $NF } END { print t }' fwin/1700000030.folded)" = 550 ]
	# every window of fg-pprof holds the samples of fg-fold's window of that name
	fg-pprof --every 10 -o pwin timed.txt
	for f in fwin/*.folded; do
		w=$(basename "$f" .folded)
		[ "$(raw_totals "pwin/$w.pb.gz" | cut -d' ' -f1)" = "$(awk '{ t += $NF } END { print t }' "$f")" ]
	done
	# nothing lost at the edges: the windows, folded together, are the whole
	fg-fold timed.txt >whole.folded
	cat fwin/*.folded | fg-fold | cmp - whole.folded
	[[ $stderr == *"wrote 'fwin/1700000030.folded': 2 stacks"* ]]
}

@test "fg-fold --every: usage errors, and windows of fg-sym's real capture" {
	fg -2 --separate-stderr fg-fold --every 10 timed.txt
	[[ $stderr == "fg-fold: --every needs -o DIR"* ]]
	fg -2 --separate-stderr fg-fold --every 10 --input folded -o w x
	[[ $stderr == "fg-fold: --every reads perf script text, not folded input"* ]]
	fg -2 --separate-stderr fg-fold --every -1 -o w x
	[[ $stderr == "fg-fold: invalid window length '-1'"* ]]
	# 1.07 s of samples from wall-clock 1796049..., in windows of 0.25 s
	fg fg-fold --every 0.25 -o w "$PP/fgsym-sys.txt"
	[ "$status" -eq 0 ]
	[ "$(ls w | wc -l)" -ge 4 ]
	ls w | grep -qE '^[0-9]+\.[0-9]{9}\.folded$'
	cat w/* | fg-fold | cmp - <(fg-fold "$PP/fgsym-sys.txt")
}

@test "fg-sym --header: perf's header comments carry the rate to fg-pprof; fg-fold folds the same" {
	printf 'header freq=250\nsample pid=7 tid=8 time=5000000000 comm=app k=ffffffff81000010\nsample pid=7 tid=8 time=5004000000 comm=app k=ffffffff81000010\n' |
		fgr-make >run.fgr
	fg --separate-stderr fg-sym -q --header --kallsyms /dev/null run.fgr
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "# ========" ]
	[[ $output == *"# event : name = cpu-clock, , type = 1, { sample_period, sample_freq } = 250, "*"freq = 1"* ]]
	# no wall-clock reading in this stream: no reference time
	[[ $output != *"reference time"* ]]
	echo "$output" >with.txt
	fg-sym -q --kallsyms /dev/null run.fgr >without.txt
	# the same samples after the comments, which fg-fold skips
	[ "$(grep -v '^#' with.txt)" = "$(cat without.txt)" ]
	cmp <(fg-fold with.txt) <(fg-fold without.txt)
	# 250 Hz: 4 ms a sample
	fg-pprof -o h.pb.gz with.txt
	[ "$(raw_totals h.pb.gz)" = "2 8000000" ]
}
