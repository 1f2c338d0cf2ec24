#!/usr/bin/env bats
# fg-ch: a fleet's profiles in a real ClickHouse server, started on loopback by
# scripts/ch-local with its configuration and data in the file's temporary directory.
bats_require_minimum_version 1.5.0
load helpers

STREAM=$TOP/tests/tools/window-stream.py
T0=1700000000 # the synthetic streams' start: a multiple of every window length used

setup_file() {
	export CHDIR=$BATS_FILE_TMPDIR/ch
	CH_LOCAL_USER=fgtest:s3cret CH_LOCAL_TLS=1 "$TOP/scripts/ch-local" start "$CHDIR" \
		>"$BATS_FILE_TMPDIR/url"
}

teardown_file() {
	"$TOP/scripts/ch-local" stop "$BATS_FILE_TMPDIR/ch"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	# each test its own database, its own spools
	export FG_CH_URL=$(cat "$BATS_FILE_TMPDIR/url")
	DB=t$BATS_TEST_NUMBER
	fg-ch --database "$DB" init 2>/dev/null
}

ch() { fg-ch --database "$DB" "$@"; }

# the samples a folded file holds
samples_of() { awk '{ s += $NF } END { print s + 0 }' "$@"; }

# push STREAM-FILE HOST [OPTIONS...]: push a whole file with windows of 10 s
push_file() {
	local file=$1 host=$2
	shift 2
	ch push --host "$host" --every 10 --spool "spool-$host" "$@" <"$file"
}

@test "--help names every option of the man page, and an unknown one is a usage error" {
	fg fg-ch --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: fg-ch [-hV] [--url URL] [--database NAME] init" ]]
	diff <(help_options fg-ch | sort -u) <(man_options fg-ch | sort -u)
	fg --separate-stderr fg-ch --bogus
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-ch: unrecognized option '--bogus'"* ]]
	fg --separate-stderr fg-ch frobnicate
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-ch: unknown verb 'frobnicate'"* ]]
	fg --separate-stderr fg-ch push --every 0
	[ "$status" -eq 2 ]
	fg --separate-stderr fg-ch push --label novalue
	[ "$status" -eq 2 ]
	fg --separate-stderr fg-ch query --from 1700000000
	[ "$status" -eq 2 ]
	fg --separate-stderr fg-ch query --since 1w
	[ "$status" -eq 2 ]
	fg --separate-stderr fg-ch --database 'x;DROP' init
	[ "$status" -eq 2 ]
}

@test "init is idempotent, makes the schema's tables, and passes the user and password through" {
	fg --separate-stderr ch init
	[ "$status" -eq 0 ]
	[[ $stderr == *"database $DB ready"* ]]
	tables=$(curl -sS "$FG_CH_URL" --data-binary "SELECT name FROM system.tables WHERE database = '$DB' ORDER BY name")
	[ "$tables" = "$(printf '%s\n' samples samples_in samples_mv stacks stacks_in stacks_mv windows)" ]
	# a server that is not there: a clear message, status 1
	fg --separate-stderr fg-ch --url http://127.0.0.1:1 init
	[ "$status" -eq 1 ]
	[[ $stderr == "fg-ch: cannot create database fg at http://127.0.0.1:1: "* ]]
	# the user and password as ClickHouse's HTTP interface takes them; never shown
	local authed=${FG_CH_URL/http:\/\//http://fgtest:s3cret@}
	fg --separate-stderr fg-ch --url "$authed" --database "$DB" init
	[ "$status" -eq 0 ]
	[[ $stderr != *s3cret* ]]
	fg --separate-stderr fg-ch --url "${authed/s3cret/wrong}" --database "$DB" init
	[ "$status" -eq 1 ]
	[[ $stderr == *"Wrong password for user fgtest"* ]]
	[[ $stderr != *wrong* ]]
	# and from ~/.netrc, off the command line (a wrong password there shows it is read)
	printf 'machine 127.0.0.1 login fgtest password wrong\n' >.netrc
	fg --separate-stderr env HOME="$PWD" fg-ch --database "$DB" init
	[ "$status" -eq 1 ]
	[[ $stderr == *"Wrong password for user fgtest"* ]]
	printf 'machine 127.0.0.1 login fgtest password s3cret\n' >.netrc
	fg --separate-stderr env HOME="$PWD" fg-ch --database "$DB" init
	[ "$status" -eq 0 ]
}

@test "TLS: https:// with the server's certificate as curl takes it; one it cannot check is refused" {
	local https
	https=$(cat "$CHDIR/https_url")
	python3 "$STREAM" --start $T0 --seconds 20 --hz 50 >s.perf
	fg-fold s.perf >expected.folded
	# curl's own setting for the authority: the test server's certificate is its own
	export CURL_CA_BUNDLE=$CHDIR/tls/cert.pem
	fg --separate-stderr fg-ch --url "$https" --database "$DB" push --host h --every 10 \
		--spool spool-h <s.perf
	[ "$status" -eq 0 ]
	fg --separate-stderr fg-ch --url "$https" --database "$DB" query --host h
	[ "$status" -eq 0 ]
	diff -u expected.folded <(printf '%s\n' "$output")
	# what went over HTTPS is what plain HTTP reads back
	ch query --host h >plain.folded
	diff -u expected.folded plain.folded
	# a certificate no authority it trusts signed: refused, in one line
	unset CURL_CA_BUNDLE
	fg --separate-stderr env CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
		fg-ch --url "$https" --database "$DB" query --host h
	[ "$status" -eq 1 ]
	[[ $stderr == "fg-ch: "*"SSL certificate problem"* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "two hosts push live pipelines: each host's totals are fg-fold's, the hosts apart" {
	requires root btf
	# host a: the real pipeline, sampling a workload; host b: a paced synthetic stream
	(fg-sample -F 199 -- "$WORKLOADS/split7030" 2 | fg-sym --header | tee a.perf |
		ch push --host a --every 1 --spool spool-a) 2>a.err &
	local a=$!
	(python3 "$STREAM" --start "$(date +%s)" --seconds 2 --hz 200 --pace --seed 7 |
		tee b.perf | ch push --host b --every 1 --spool spool-b) 2>b.err &
	local b=$!
	wait $a
	wait $b
	cat a.err b.err
	fg-fold a.perf >a.folded
	fg-fold b.perf >b.folded
	[ "$(samples_of a.folded)" -gt 100 ]
	grep -q ';main;hot;spin [0-9]*$' a.folded
	ch query --host a >qa.folded
	ch query --host b >qb.folded
	diff -u a.folded qa.folded
	diff -u b.folded qb.folded
	# both hosts together: the sum of the two, as fg-fold adds profiles up
	cat a.folded b.folded | fg-fold >ab.folded
	ch query >qab.folded
	diff -u ab.folded qab.folded
	# the comm of one host's workload is in that host's windows only
	ch query --host b --comm split7030 >none 2>err
	[ ! -s none ]
	grep -q 'no samples match' err
	# folded stacks as fg-svg takes them
	fg-svg qab.folded >ab.svg
	grep -q '<svg' ab.svg
}

@test "the time series and a time range hold exactly their windows" {
	python3 "$STREAM" --start $T0 --seconds 60 --hz 97 >s.perf
	fg-fold --every 10 -o win s.perf
	push_file s.perf h
	# the time series: each window's start and samples, as fg-fold --every cut them
	for f in win/*.folded; do
		printf '%s\t%s\n' "$(basename "$f" .folded)" "$(samples_of "$f")"
	done >expected
	ch query --by-window >series
	diff -u expected series
	[ "$(wc -l <series)" -eq 6 ]
	# [T0+10, T0+40): three windows, the stacks of exactly those three
	ch query --from $((T0 + 10)) --to $((T0 + 40)) --by-window >range
	diff -u <(sed -n '2,4p' expected) range
	cat win/$((T0 + 10)).folded win/$((T0 + 20)).folded win/$((T0 + 30)).folded | fg-fold >range.folded
	ch query --from $((T0 + 10)) --to $((T0 + 40)) >q.folded
	diff -u range.folded q.folded
	# dates as date(1) reads them, UTC
	ch query --from "$(date -u -d @$((T0 + 10)) '+%F %T')" --to "$(date -u -d @$((T0 + 40)) '+%F %T')" >q2.folded
	diff -u range.folded q2.folded
	# --since: windows of the last DURATION, by the server's clock
	now=$(($(date +%s) / 10 * 10))
	python3 "$STREAM" --start $((now - 3 * 3600)) --seconds 20 --hz 50 --seed 3 >old.perf
	push_file old.perf h2
	ch query --host h2 --since 2h --by-window >recent 2>/dev/null
	[ ! -s recent ]
	ch query --host h2 --since 4h --by-window >recent
	[ "$(cut -f2 recent | paste -sd+ | bc)" -eq 1000 ]
	# --top: the leaf functions, most samples first, their share of all
	ch query --top 3 >top
	[ "$(wc -l <top)" -eq 3 ]
	fg-fold s.perf old.perf | awk '{ n = split($1, f, ";"); s[f[n]] += $NF } END { for (k in s) print s[k] "\t" k }' |
		sort -k1,1nr -k2 | head -3 >top.expected
	diff -u top.expected <(cut -f1,3 top)
}

@test "labels and process names select windows" {
	python3 "$STREAM" --start $T0 --seconds 20 --hz 50 --seed 1 --comm web >w.perf
	python3 "$STREAM" --start $T0 --seconds 20 --hz 50 --seed 2 --comm db >d.perf
	push_file w.perf h1 --label env=prod --label tier=front
	push_file d.perf h2 --label env=prod
	fg-fold w.perf >w.folded
	fg-fold d.perf >d.folded
	ch query --label tier=front >q
	diff -u w.folded q
	ch query --label env=prod --label tier=front >q
	diff -u w.folded q
	ch query --label env=prod --comm db >q
	diff -u d.folded q
	ch query --host h1 --host h2 >q
	diff -u <(cat w.folded d.folded | fg-fold) q
	# options after -- go to fg-fold
	ch push --host h3 --every 10 --spool spool-h3 -- --pid <w.perf
	ch query --host h3 >q
	diff -u <(fg-fold --pid w.perf) q
	grep -q '^web-4242;main;' q
	# settings in the URL reach the server
	fg --separate-stderr fg-ch --url "$FG_CH_URL/?max_result_rows=1&result_overflow_mode=throw" --database "$DB" query
	[ "$status" -eq 1 ]
	[[ $stderr == *"Limit for result exceeded"* ]]
}

@test "a push started while the server is down delivers everything once it is up" {
	python3 "$STREAM" --start $T0 --seconds 40 --hz 50 --seed 5 >s.perf
	fg-fold s.perf >s.folded
	"$TOP/scripts/ch-local" stop "$CHDIR"
	mkfifo in
	fg-ch --database "$DB" push --host h --every 10 --spool spool <in 2>err &
	local push=$!
	exec 5>in
	# the first half: the windows wait in the spool, the writer is never held up
	python3 "$STREAM" --start $T0 --seconds 40 --hz 50 --seed 5 --samples 0:1000 >&5
	wait_until 20 grep -q 'spooling in spool' err
	wait_until 20 compgen -G 'spool/queue/*.folded'
	"$TOP/scripts/ch-local" start "$CHDIR"
	python3 "$STREAM" --start $T0 --seconds 40 --hz 50 --seed 5 --samples 1000:2000 | sed 1,5d >&5
	exec 5>&-
	wait $push
	cat err
	grep -q 'is back' err
	grep -q '^fg-ch: 4 windows sent$' err
	ch query --host h >q.folded
	diff -u s.folded q.folded
	[ -z "$(ls spool/queue)" ]
}

first_window_sent() { [ "$(ch query --by-window 2>/dev/null)" = "$T0"$'\t'990 ]; }

@test "a push interrupted mid-window and restarted doubles nothing" {
	python3 "$STREAM" --start $T0 --seconds 30 --hz 99 >s.perf
	fg-fold s.perf >s.folded
	mkfifo in
	fg-ch --database "$DB" push --host h --every 10 --spool spool <in 2>err &
	local push=$!
	exec 5>in
	# samples 0-1499: the first window whole, the second cut at 15.15 s
	python3 "$STREAM" --start $T0 --seconds 30 --hz 99 --samples 0:1500 >&5
	wait_until 20 first_window_sent
	kill -TERM $push
	wait $push || true
	exec 5>&-
	cat err
	# what it had read of the second window was sent when it was interrupted
	ch query --by-window >series
	[ "$(cat series)" = "$(printf '%s\t990\n%s\t510' $T0 $((T0 + 10)))" ]
	# a second run takes the stream from where the first stopped
	python3 "$STREAM" --start $T0 --seconds 30 --hz 99 --samples 1500:2970 >rest.perf
	push_file rest.perf h --spool spool
	ch query --host h >q.folded
	diff -u s.folded q.folded
	ch query --by-window >series
	[ "$(cat series)" = "$(printf '%s\t990\n' $T0 $((T0 + 10)) $((T0 + 20)))" ]
}

@test "a window sent again after a crash is not doubled" {
	python3 "$STREAM" --start $T0 --seconds 30 --hz 99 >s.perf
	fg-fold s.perf >s.folded
	# a server that is not there: the windows stay in the spool
	fg --separate-stderr fg-ch --url http://127.0.0.1:1 --database "$DB" push --host h --every 10 --spool spool <s.perf
	[ "$status" -eq 0 ]
	[[ $stderr == *"3 left in the spool spool"* ]]
	mkdir copy
	cp spool/queue/*.folded copy/
	ch push --host h --every 10 --spool spool </dev/null
	# a crash between the insert and the removal of the spool file: sent again
	cp copy/*.folded spool/queue/
	fg --separate-stderr ch push --host h --every 10 --spool spool </dev/null
	[[ $stderr == *"3 windows sent"* ]]
	[ -z "$(ls spool/queue)" ]
	ch query >q.folded
	diff -u s.folded q.folded
}

@test "hostile frame, process, host and label names round-trip unchanged" {
	local host="h'o\\st \"x\"; DROP TABLE samples" label="k'=v\\a;l"
	python3 "$STREAM" --start $T0 --seconds 20 --hz 99 --hostile --comm "ev'il\\" >h.perf
	fg-fold h.perf >h.folded
	grep -qF 'end\' h.folded
	ch push --host "$host" --every 10 --spool spool --label "$label" <h.perf
	ch query --host "$host" >q.folded
	cmp h.folded q.folded
	ch query --label "$label" --comm "ev'il\\" >q.folded
	cmp h.folded q.folded
	# the leaf functions, hostile as they are
	ch query --top 100 | cut -f3 | LC_ALL=C sort >leaves
	awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); print f[n] }' h.folded | LC_ALL=C sort -u >leaves.expected
	cmp leaves.expected leaves
}

@test "a full spool drops windows, counted and reported; two pushes never share a spool" {
	# hostile names, one of 4 KiB: each window's file is a few blocks, so that 1 MB fills
	# in some 60 windows (fg-ch spends some 40 ms on each)
	python3 "$STREAM" --hostile --start $T0 --seconds 100 --hz 20 >s.perf
	total=$(fg-fold s.perf | samples_of)
	# nothing listens: every window goes to the spool, 1 MB, until it is full
	fg --separate-stderr fg-ch --url http://127.0.0.1:1 --database "$DB" push --host h --every 1 \
		--spool spool --spool-max 1 <s.perf
	[ "$status" -eq 1 ]
	[[ $stderr == *"spool spool full (1 MB): dropped the window at "* ]]
	[[ $stderr =~ dropped\ \(spool\ full\):\ ([0-9]+)\ windows,\ ([0-9]+)\ samples ]]
	dropped_windows=${BASH_REMATCH[1]} dropped=${BASH_REMATCH[2]}
	kept=$(cat spool/queue/*.folded | samples_of)
	[ "$dropped_windows" -gt 0 ]
	[ $((kept + dropped)) -eq "$total" ]
	[ "$(du -sk spool/queue | cut -f1)" -le 1024 ]
	# the lock: a second push on the spool refuses
	exec 9>spool/lock
	flock 9
	fg --separate-stderr ch push --host h --spool spool </dev/null
	[ "$status" -eq 1 ]
	[[ $stderr == "fg-ch: another fg-ch push uses the spool spool" ]]
}

@test "a stack whose text is gone is named as missing, its samples kept" {
	python3 "$STREAM" --start $T0 --seconds 10 --hz 99 >s.perf
	fg-fold s.perf >s.folded
	push_file s.perf h
	curl -sS "$FG_CH_URL/?database=$DB" --data-binary "ALTER TABLE stacks DELETE WHERE stack = '$(head -n 1 s.folded | sed 's/ [0-9]*$//')'"
	gone() { ! ch query | grep -qF "$(head -n 1 s.folded)"; }
	wait_until 20 gone
	ch query >q.folded
	[ "$(samples_of q.folded)" -eq "$(samples_of s.folded)" ]
	grep -qE "^\[stack [0-9]+ missing\] $(head -n 1 s.folded | awk '{ print $NF }')\$" q.folded
	diff <(sed 1d s.folded) <(grep -v '^\[stack' q.folded)
}
