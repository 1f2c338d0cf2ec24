#!/usr/bin/env bats
# fg-serve: the flame graph live over HTTP, checked with curl, xmllint, go tool pprof and
# headless Chromium, from a generated stream and from a live fg-sample pipeline.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	if [ -n "${GROUP:-}" ]; then
		kill -TERM -- "-$GROUP" 2>/dev/null || true
	fi
}

# generate [STACKS]: write folded lines to the FIFO ./in, 20 times a second until killed,
# after STACKS distinct stacks once (default 0): compute_hot five times as often as idle,
# and a frame that changes every second
generate() {
	mkfifo in
	{
		for ((i = 0; i < ${1:-0}; i++)); do
			printf 'app;main;mod_%d;fn_%d;leaf_%d 1\n' $((i % 50)) "$i" "$i"
		done
		for ((i = 0; ; i++)); do
			printf 'app;main;work;compute_hot 5\napp;main;idle 1\napp;main;phase_%d 1\n' $((i / 20))
			sleep 0.05
		done
	} >in &
	PIDS+=($!)
}

# serve [OPTIONS]: fg-serve on a free port of 127.0.0.1 reading ./in; its address in $URL,
# its port in $PORT
serve() {
	: >serve.err # (a FIFO without a writer holds fg-serve before it writes there)
	fg-serve -l 127.0.0.1:0 "$@" <in 2>serve.err &
	SERVE=$!
	PIDS+=("$SERVE")
	wait_until 20 grep -q '^fg-serve: serving http' serve.err
	PORT=$(grep -o 'http://127.0.0.1:[0-9]*' serve.err | head -1)
	PORT=${PORT##*:}
	URL=http://127.0.0.1:$PORT
}

# stop: SIGTERM; fg-serve exits 0 (under ASan: without a leak or an error)
stop() {
	local st=0
	kill -TERM "$SERVE"
	wait "$SERVE" || st=$?
	sed 's/^/# /' serve.err >&3
	[ "$st" -eq 0 ]
}

get() { # PATH [CURL OPTIONS]: GET with curl, body on stdout, failing on an HTTP error
	local p=$1
	shift
	curl -sSf --max-time 10 "$@" "http://127.0.0.1:$PORT$p"
}

samples() { get /status | sed 's/.*"samples":\([0-9]*\).*/\1/'; }

@test "-h prints usage to stdout and exits 0; -V prints the version" {
	fg -0 --separate-stderr fg-serve -h
	[[ ${lines[0]} == "usage: fg-serve "* ]]
	[ -z "$stderr" ]
	fg -0 --separate-stderr fg-serve -V
	[[ $output =~ ^fg-serve\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "--help lists every option the man page documents, and no other; the synopsis agrees" {
	[ "$(man_options fg-serve | sort -u | wc -l)" -gt 10 ]
	diff <(man_options fg-serve | sort -u) <(help_options fg-serve | sort -u)
	diff <(man_options fg-serve SYNOPSIS) <(help_options fg-serve USAGE)
}

@test "a non-loopback address needs --public; bad options and a port in use say why" {
	fg -2 --separate-stderr fg-serve -l 0.0.0.0:0 </dev/null
	assert_stderr_contains "fg-serve: '0.0.0.0' is not a loopback address: the page shows the function and process names of everything sampled; give --public to serve it there"
	fg -2 --separate-stderr fg-serve -l '[::]:0' </dev/null
	assert_stderr_contains "'::' is not a loopback address"
	fg -2 --separate-stderr fg-serve -l example.org:80 </dev/null
	assert_stderr_contains "invalid address 'example.org:80' (a numeric address or localhost)"
	fg -2 --separate-stderr fg-serve --token 'a b' </dev/null
	assert_stderr_contains "invalid token"
	fg -2 --separate-stderr fg-serve -w 0 </dev/null
	assert_stderr_contains "invalid window '0' (1 to 3600 seconds)"
	printf 'a;b 1\n' >in
	serve
	fg -1 --separate-stderr fg-serve -l "127.0.0.1:$PORT" in
	assert_stderr_contains "fg-serve: cannot listen on 127.0.0.1:$PORT: Address already in use"
	stop
}

@test "a folded stream: the page, the SVG (xmllint), folded text, pprof (go tool pprof), downloads" {
	requires xmllint go
	generate
	serve -i 1 -w 1
	wait_until 10 sh -c "curl -sf 'http://127.0.0.1:$PORT/profile.folded' | grep -q compute_hot"
	get / | grep -q '<iframe id="g0"'
	get /flame.svg >g.svg
	xmllint --noout g.svg
	xmllint --xpath 'count(//*[local-name()="title"][starts-with(., "compute_hot (")])' g.svg | grep -qx 1
	get /profile.folded >all.folded
	grep -Eq '^app;main;work;compute_hot [0-9]+$' all.folded
	get '/profile.pb.gz?download=1' -D headers >p.pb.gz
	grep -qi '^content-disposition: attachment; filename="fg-whole.pb.gz"' headers
	go tool pprof -top p.pb.gz >top.txt 2>&1
	grep -q 'compute_hot' top.txt
	# the last window, inverted, another palette; a bad view is refused
	get '/flame.svg?view=window&inverted=1&colors=java&download=1' -D headers >w.svg
	xmllint --noout w.svg
	grep -qi 'filename="fg-window-icicle.svg"' headers
	grep -q 'the last 1 s' w.svg
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/flame.svg?view=nope")" = 400 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/flame.svg?colors=nope")" = 400 ]
	stop
}

@test "the differential view compares the last whole window with the one before" {
	requires xmllint
	generate
	serve -i 1 -w 1
	get '/flame.svg?view=diff' | grep -q 'needs two whole windows of 1 s'
	# phase_N changes every second: in one window and not in the other
	wait_until 15 sh -c "curl -sf '$URL/profile.folded?view=diff' | grep -Eq '^app;main;phase_[0-9]+ 0 [1-9]'"
	get '/profile.folded?view=diff' >diff.folded
	awk 'NF != 3 || $2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/ { exit 1 }' diff.folded
	grep -q '^app;main;work;compute_hot ' diff.folded
	get '/flame.svg?view=diff' >diff.svg
	xmllint --noout diff.svg
	grep -q 'fg-diff="1"' diff.svg
	stop
}

@test "when the input ends it says so and goes on serving the final profile; SIGTERM ends it" {
	printf 'app;main;f 3\napp;main;g 1\nnot a folded line\n' >in
	serve --input folded
	wait_until 10 grep -q 'the input ended' serve.err
	grep -qx "fg-serve: the input ended after 2 samples; serving the final profile at $URL/ until interrupted" serve.err
	get /status | grep -q '"ended":true'
	get /profile.folded >out
	printf 'app;main;f 3\napp;main;g 1\n' | diff - out
	stop
	grep -q 'fg-serve: skipped 1 unrecognized line' serve.err
	grep -qx 'fg-serve: answered 2 requests, refused 0 (bad method, forbidden, unknown)' serve.err
}

@test "a token is required when set, from --token or FG_SERVE_TOKEN; the page passes it on" {
	generate
	serve --token s3cret-T0k
	grep -q "serving $URL/?token=s3cret-T0k" serve.err
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" = 403 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/status?token=s3cret-T0")" = 403 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/status?token=s3cret-T0kk")" = 403 ]
	get '/status?token=s3cret-T0k' | grep -q samples
	get '/?token=s3cret-T0k' | grep -q "get('token')"
	stop
	rm in
	generate
	FG_SERVE_TOKEN=fromenv serve
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/status")" = 403 ]
	get '/status?token=fromenv' | grep -q samples
	stop
}

@test "on loopback, a Host header naming another host is refused (DNS rebinding)" {
	generate
	serve
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example:80' "$URL")" = 403 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: 127.0.0.1.evil.example' "$URL")" = 403 ]
	get / -H "Host: localhost:$PORT" | grep -q '<iframe'
	get / -H "Host: 127.0.0.1" | grep -q '<iframe'
	stop
}

@test "bad clients are answered or refused within bounds, and the folding goes on" {
	generate 3000
	serve
	wait_until 10 sh -c "[ \"\$(curl -sf '$URL/status' | sed 's/.*\"samples\":\([0-9]*\).*/\1/')\" -ge 3000 ]"
	run "$TOP/tests/tools/serve-abuse" 127.0.0.1 "$PORT"
	printf '%s\n' "$output" | sed 's/^/# /' >&3
	[ "$status" -eq 0 ]
	# and it still serves, its memory that of the stacks
	get /flame.svg | xmllint --noout -
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$SERVE/status")
	echo "# fg-serve's RSS: $rss kB" >&3
	[ "$rss" -lt 400000 ]
	stop
	grep -Eq 'fg-serve: answered [0-9]+ requests, refused ([4-9]|[1-9][0-9]+) ' serve.err
}

@test "hostile frame names are escaped in the SVG and the page" {
	requires xmllint
	printf 'r;</script><script>alert(1)</script>;x 3\nr;<b>"&x\x27q;y 1\nr;\x01\x1b[31m\x7f;z 2\nr;]]>;w 1\n' >in
	serve --title '</title><script>alert(2)</script>'
	wait_until 10 grep -q 'the input ended' serve.err
	get /flame.svg >g.svg
	xmllint --noout g.svg
	[ "$(xmllint --xpath 'count(//*[local-name()="script"])' g.svg)" = 1 ]
	python3 -c 'import sys, xml.etree.ElementTree as E
for t in E.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}title"): print(t.text)' g.svg >titles
	grep -qF '</script><script>alert(1)</script> (3 samples' titles
	grep -qF '<b>"&x'"'"'q (1 samples' titles
	grep -qF ']]> (1 samples' titles
	grep -qF $'\ufffd\ufffd[31m\x7f (2 samples' titles
	! grep -q $'\x1b' g.svg
	get / >page.html
	grep -qF '<title>&lt;/title&gt;&lt;script&gt;alert(2)&lt;/script&gt;</title>' page.html
	[ "$(grep -c '<script>' page.html)" = 1 ]
	stop
}

@test "browser: the page follows a generated stream: frames within 3 s, zoom, search, invert, pause, draws" {
	requires chromium
	generate
	serve -i 1 -w 2
	run python3 "$TOP/tests/browser/serve-check" "$URL" compute_hot '^comp' "$BATS_TEST_TMPDIR/page.png"
	printf '%s\n' "$output" | sed 's/^/# /' >&3
	[ "$status" -eq 0 ]
	warm=$("$TOP/tests/browser/png-flame-pixels" page.png)
	echo "# warm pixels: $warm%" >&3
	awk -v w="$warm" 'BEGIN { exit !(w >= 1) }'
	stop
}

@test "live, for real: fg-sample | fg-sym | fg-serve in the browser shows the workload within 3 s" {
	requires root btf perf_event chromium
	mkfifo in
	fg-sample -F 999 -- "$WORKLOADS/split7030" 8 2>sample.err | fg-sym 2>sym.err >in &
	PIDS+=($!)
	serve -i 1 -w 2
	run python3 "$TOP/tests/browser/serve-check" "$URL" hot 'spin' "$BATS_TEST_TMPDIR/page.png"
	printf '%s\n' "$output" | sed 's/^/# /' >&3
	[ "$status" -eq 0 ]
	get /profile.folded | grep -q '^split7030;.*main;hot;spin '
	stop
}

@test "fg-record --serve runs the whole chain and serves the final profile" {
	requires root btf perf_event
	# in a session of its own, so that the whole chain can be stopped
	setsid fg-record --serve --listen 127.0.0.1:0 -F 499 -- "$WORKLOADS/split7030" 1 2>serve.err &
	GROUP=$!
	wait_until 30 grep -q 'the input ended' serve.err
	URL=$(grep -o 'http://127.0.0.1:[0-9]*' serve.err | head -1)
	curl -sf "$URL/profile.folded" >out
	grep -q '^split7030;.*main;hot;spin ' out
	curl -sf "$URL/flame.svg" | grep -q ">fg-record: .*split7030 1<"
	kill -TERM -- "-$GROUP"
	wait "$GROUP" || true
	GROUP=
	fg -2 --separate-stderr fg-record --serve -o x.svg
	assert_stderr_contains "--serve writes no file: leave out -o"
}
