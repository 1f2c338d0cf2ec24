#!/usr/bin/env bats
# fg-sym and debuginfod: debug files of stripped binaries fetched by build-id
# from a real server (Debian's debuginfod) over a directory of debug files
# made here, in a network namespace of its own with loopback only (debuginfod
# listens on every address it has: here, 127.0.0.1 and ::1).  The fixture is
# profiled for real (fg-sample), stripped, its debug file only on the server.
bats_require_minimum_version 1.5.0
load helpers

D=$BATS_FILE_TMPDIR
PORT=8002  # a fresh namespace: every port is free
URL=http://127.0.0.1:$PORT

# in_ns CMD...: run CMD in the test's network namespace
in_ns() {
	ip netns exec "$(cat "$D/ns")" "$@"
}

# start_bg PIDFILE CMD...: start CMD in the namespace, in the background; its pid to PIDFILE
start_bg() {
	local pidfile=$1
	shift
	# not through in_ns: $! is then the server itself (ip execs it); no fd 3, which bats waits on
	ip netns exec "$(cat "$D/ns")" "$@" >"$pidfile.log" 2>&1 3>&- &
	echo $! >"$pidfile"
	echo $! >>"$D/pids" # teardown_file kills whatever is left
}

stop_bg() {
	local pid
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# start_server PIDFILE PORT DIR [ID]: debuginfod over DIR, when it serves the fixture's
# debug file (and the file of build-id ID)
start_server() {
	start_bg "$1" debuginfod -F -p "$2" -d "$1.sqlite" -t 0 -g 0 "$3"
	local i id
	for id in "$(cat "$D/buildid")" ${4:-}; do
		for ((i = 0; i < 100; i++)); do
			# a cache of its own each time: libdebuginfod remembers a miss for 10 minutes
			in_ns env DEBUGINFOD_URLS="http://127.0.0.1:$2" DEBUGINFOD_CACHE_PATH="$1.probe$id$i" \
				debuginfod-find debuginfo "$id" >/dev/null 2>&1 && break
			sleep 0.1
		done
		if ((i == 100)); then
			echo "debuginfod did not serve $id within 10 s" >&2
			cat "$1.log" >&2
			return 1
		fi
	done
}

# a listener on 127.0.0.1:PORT that takes connections and never answers
SILENT='import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
s.settimeout(0.5)
held, end = [], time.time() + 60
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass'

# an HTTP server on 127.0.0.1:PORT that serves FILE for every build-id [with a Content-Encoding]
IMPOSTOR='import http.server, sys
body = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        if len(sys.argv) > 3:
            self.send_header("Content-Encoding", sys.argv[3])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()'

# write FILE: SIZE bytes of an ELF file claiming a section for every 64 bytes (e_shnum 0,
# section 0's sh_size: the extended count), gzip-compressed: a few hundred KiB
BOMB='import struct, sys, zlib
size = int(sys.argv[2])
eh = bytearray(64)
eh[0:7] = b"\x7fELF\x02\x01\x01"
struct.pack_into("<HHIQQQIHHHHHH", eh, 16, 3, 62, 1, 0, 0, 64, 0, 64, 0, 0, 64, 0, 0)
sh0 = bytearray(64)
struct.pack_into("<Q", sh0, 32, size // 64 - 2)
z = zlib.compressobj(6, zlib.DEFLATED, 31)
with open(sys.argv[1], "wb") as f:
    f.write(z.compress(bytes(eh + sh0)))
    mib = bytes(1 << 20)
    for _ in range(size >> 20):
        f.write(z.compress(mib))
    f.write(z.flush())'

# wait_port PORT: until something listens on 127.0.0.1:PORT in the namespace
wait_port() {
	local i
	for ((i = 0; i < 100; i++)); do
		in_ns python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
			"$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

setup_file() {
	# under ASan: glibc 2.36's dprintf(3) leaks a buffer when libdebuginfod writes the
	# settings files of a new cache (see tests/unit/test_debugfile.c); that leak alone
	echo "leak:__vdprintf_internal" >"$D/lsan.supp"
	export LSAN_OPTIONS="suppressions=$D/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
	# and its symbolizer, llvm-symbolizer, would ask DEBUGINFOD_URLS' servers too (the silent one)
	local sym
	sym=$(command -v llvm-symbolizer || ls /usr/bin/llvm-symbolizer-* 2>/dev/null | head -n 1)
	if [ -n "$sym" ]; then
		mkdir -p "$D/symbolizer"
		printf '#!/bin/sh\nunset DEBUGINFOD_URLS\nexec %s "$@"\n' "$sym" >"$D/symbolizer/llvm-symbolizer"
		chmod +x "$D/symbolizer/llvm-symbolizer"
		export ASAN_SYMBOLIZER_PATH=$D/symbolizer/llvm-symbolizer
	fi
	[ "$(id -u)" -eq 0 ] || return 0 # each test says why it cannot run
	mkdir -p "$D/bin" "$D/srv" "$D/other"
	# the fixture, as a distribution builds it: with DWARF, then the debug file apart
	gcc -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		-fno-inline "$TOP/tests/workloads/split7030.c" -o "$D/bin/prog"
	objcopy --only-keep-debug "$D/bin/prog" "$D/srv/prog.debug"
	strip --strip-all "$D/bin/prog"
	readelf -n "$D/bin/prog" | awk '/Build ID/ { print $3 }' >"$D/buildid"
	# another program's debug file, for the servers that lie
	gcc -g -O1 -x c - -o "$D/other/prog" <<<'int main(void) { return 0; }'
	objcopy --only-keep-debug "$D/other/prog" "$D/other/prog.debug"
	# the fixture's debug file as Debian's: naming a dwz supplementary file by
	# .gnu_debugaltlink (a path no machine here has, and a build-id); another
	# program's debug file stands for the dwz file (this DWARF makes no use of it)
	mkdir -p "$D/srv-dwz" "$D/srv-nodwz"
	readelf -n "$D/other/prog.debug" | awk '/Build ID/ { print $3 }' >"$D/dwzid"
	{ printf '/usr/lib/debug/.dwz/x86_64-linux-gnu/fg-test.debug\0'
	  printf "$(sed 's/../\\x&/g' "$D/dwzid")"; } >"$D/altlink"
	objcopy --add-section .gnu_debugaltlink="$D/altlink" "$D/srv/prog.debug" "$D/srv-dwz/prog.debug"
	cp "$D/srv-dwz/prog.debug" "$D/srv-nodwz/prog.debug"
	cp "$D/other/prog.debug" "$D/srv-dwz/fg-test.debug"
	# a real profile of the stripped fixture, a fixed amount of work rather than a time: it
	# reads the clock (in the vDSO, whose debug file fg-sym would ask for too) only once;
	# taken again when a sample came in that once all the same
	local try
	for try in 1 2 3 4 5; do
		fg-sample -F 499 -o "$D/run.fgr" -- "$D/bin/prog" 1 1000 2>"$D/sample.err"
		env -u DEBUGINFOD_URLS fg-sym "$D/run.fgr" 2>/dev/null | grep -q '(\[vdso\])$' ||
			break
	done
	ip netns add "fgdbgi-$$"
	echo "fgdbgi-$$" >"$D/ns"
	ip -n "fgdbgi-$$" link set lo up
	start_server "$D/server" $PORT "$D/srv"
}

teardown_file() {
	local pid
	if [ -e "$D/pids" ]; then
		while read -r pid; do
			kill "$pid" 2>/dev/null || true
		done <"$D/pids"
	fi
	[ -e "$D/ns" ] && ip netns del "$(cat "$D/ns")"
	return 0
}

setup() {
	requires root ip debuginfod
	[ -e "$D/ns" ] || {
		echo "setup_file did not finish: $(cat "$D/server.log" 2>/dev/null)" >&2
		return 1
	}
}

# sym_ns ARGS...: fg-sym in the namespace on the profile, the cache in the test's directory.
# A budget of 30 s, not the default 5: a loaded machine (the ASan lane beside the other)
# can take longer than 5 s to fetch, and only the tests that pass their own test the budget.
sym_ns() {
	fg --separate-stderr in_ns env DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache" \
		timeout 60 fg-sym -v --debuginfod-budget 30 "$@" "$D/run.fgr"
}

# prog_frames: the fixture's frames in $output, and how many are unnamed
prog_frames() {
	grep -c " ($D/bin/prog)\$" <<<"$output" || true
}
prog_unnamed() {
	grep -c "\[unknown\] ($D/bin/prog)\$" <<<"$output" || true
}
# other_nosym: the frames in $output of another file, or of the kernel, that no
# symbol names: the vDSO's (helpers.bash: vdso_unnamed), and a BPF program of
# another fg-sample (a suite running beside this one) that was gone from
# kallsyms when fg-sym ran.  Not those in no mapping at all, "([unknown])".
other_nosym() {
	grep '\[unknown\] (' <<<"$output" | grep -v " ($D/bin/prog)\$" |
		grep -vc '(\[unknown\])$' || true
}
# own_frames: the fixture's frames in its own functions (those of split7030.c: the
# C runtime's _start, _init or __do_global_dtors_aux, sampled now and then, have no
# line); lines: how many of them have their source line
own_frames() {
	awk -v p=" ($D/bin/prog)" 'index($0, p) && / (spin|hot|cold|main)\+0x[0-9a-f]+ \(/ { n++ }
		END { print n + 0 }' <<<"$output"
}
lines() {
	awk -v p=" ($D/bin/prog)" 'own && /^  split7030\.c:[0-9]+$/ { n++ }
		{ own = index($0, p) && / (spin|hot|cold|main)\+0x[0-9a-f]+ \(/ }
		END { print n + 0 }' <<<"$output"
}

@test "fg-sym debuginfod: the fixture is stripped, and no local debug file names it" {
	local id
	id=$(cat "$D/buildid")
	[ -z "$(readelf -SW "$D/bin/prog" | grep -E '\.symtab|\.debug_')" ]
	[ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]
	sym_ns --no-debuginfod
	[ "$status" -eq 0 ]
	[ "$(prog_frames)" -ge 30 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	# the summary points at debuginfod, which is off
	sym_ns
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	assert_stderr_contains "frames in files without symbols: install their debug packages, or fetch their debug files with debuginfod (DEBUGINFOD_URLS or --debuginfod URLS)"
}

@test "fg-sym debuginfod: every frame of the stripped fixture is named, from a real server" {
	DEBUGINFOD_URLS=$URL sym_ns
	[ "$status" -eq 0 ]
	local n
	n=$(prog_frames)
	echo "# frames of the fixture: $n" >&3
	[ "$n" -ge 30 ]
	[ "$(prog_unnamed)" -eq 0 ]
	grep -qE "spin\+0x[0-9a-f]+ \($D/bin/prog\)$" <<<"$output"
	grep -qE "hot\+0x[0-9a-f]+ \($D/bin/prog\)$" <<<"$output"
	grep -qE "cold\+0x[0-9a-f]+ \($D/bin/prog\)$" <<<"$output"
	grep -qE "main\+0x[0-9a-f]+ \($D/bin/prog\)$" <<<"$output"
	assert_stderr_contains "debuginfod: 1 debug files fetched, 0 from the cache, 0 not found, 0 timed out"
	assert_stderr_contains "; $n frames named by them"
	# the same with --debuginfod, and nothing from the environment
	sym_ns --debuginfod "$URL"
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
}

@test "fg-sym debuginfod: the second run is served from the cache, and prints the same" {
	DEBUGINFOD_URLS=$URL sym_ns
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/first"
	assert_stderr_contains "1 debug files fetched, 0 from the cache"
	# the cache: the user's alone
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/cache")" = 700 ]
	DEBUGINFOD_URLS=$URL sym_ns
	[ "$status" -eq 0 ]
	assert_stderr_contains "0 debug files fetched, 1 from the cache, 0 not found, 0 timed out"
	printf '%s\n' "$output" | diff -u "$BATS_TEST_TMPDIR/first" -
	# from the cache even with no server at all
	DEBUGINFOD_URLS=http://127.0.0.1:9 sym_ns
	[ "$status" -eq 0 ]
	assert_stderr_contains "1 from the cache"
	[ "$(prog_unnamed)" -eq 0 ]
}

@test "fg-sym debuginfod: --srcline and --inline read the DWARF of the fetched file" {
	DEBUGINFOD_URLS=$URL sym_ns --srcline
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	grep -qE '^  split7030\.c:[0-9]+$' <<<"$output"
	# every frame of the fixture has its line
	[ "$(own_frames)" -gt 0 ]
	[ "$(lines)" -eq "$(own_frames)" ]
	DEBUGINFOD_URLS=$URL sym_ns --inline
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	assert_stderr_contains "1 from the cache"
}

# the vDSO's image names only what it exports; its debug file, by its build-id, names the
# rest (tests/helpers.bash: vdso_debug_file)
@test "fg-sym debuginfod: the vDSO's own functions are named by its debug file, fetched" {
	requires python3 objcopy readelf
	local own clk srv=$BATS_TEST_TMPDIR/srv
	mkdir "$srv"
	own=$(vdso_debug_file "$BATS_TEST_TMPDIR/vdso.debug")
	mv "$BATS_TEST_TMPDIR/vdso.debug" "$srv/"
	cp "$D/srv/prog.debug" "$srv/"
	start_server "$BATS_TEST_TMPDIR/server" 8016 "$srv" "$(fgr-vdso-sym --build-id)"
	clk=$(fgr-vdso-sym __vdso_clock_gettime)
	printf 'mapping pid=42 start=7fff00000000 end=7fff00002000 path=[vdso]\nsample pid=42 u=%x\nsample pid=42 u=%x\n' \
		$((0x7fff00000000 + 0x$own + 2)) $((0x7fff00000000 + clk + 1)) >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr in_ns env DEBUGINFOD_URLS=http://127.0.0.1:8016 \
		DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache" \
		timeout 60 fg-sym -v --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" vdso_own+0x2 ([vdso])" ]]
	[[ ${lines[3]} == *" __vdso_clock_gettime+0x1 ([vdso])" ]]
	assert_stderr_contains " 2 frames named, 0 unnamed "
	assert_stderr_contains "debuginfod: 1 debug files fetched, 0 from the cache, 0 not found, 0 timed out"
	# (both: the names of the file's frames are all its debug file's now)
	assert_stderr_contains "; 2 frames named by them"
	# a server without it: the frame stays unnamed, and that is counted
	fg --separate-stderr in_ns env DEBUGINFOD_URLS="$URL" \
		DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache2" \
		timeout 60 fg-sym -v --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ([vdso])" ]]
	assert_stderr_contains " 1 unnamed (1 no symbols,"
	assert_stderr_contains "debuginfod: 0 debug files fetched, 0 from the cache, 1 not found, 0 timed out"
}

@test "fg-sym debuginfod: with the server stopped, frames stay unnamed and are counted" {
	start_server "$BATS_TEST_TMPDIR/srv2" 8012 "$D/srv"
	stop_bg "$BATS_TEST_TMPDIR/srv2"
	DEBUGINFOD_URLS=http://127.0.0.1:8012 sym_ns
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	assert_stderr_contains "unnamed ($(($(prog_frames) + $(other_nosym))) no symbols,"
	assert_stderr_contains "0 debug files fetched, 0 from the cache, 0 not found, 0 timed out, 1 failed (Connection refused)"
}

@test "fg-sym debuginfod: a server that never answers is bounded by the time budget" {
	start_bg "$BATS_TEST_TMPDIR/silent" python3 -c "$SILENT" 8013
	wait_port 8013
	local t0 t1
	t0=$(date +%s%N)
	DEBUGINFOD_URLS=http://127.0.0.1:8013 sym_ns --debuginfod-budget 1
	t1=$(date +%s%N)
	stop_bg "$BATS_TEST_TMPDIR/silent"
	echo "# fg-sym took $(((t1 - t0) / 1000000)) ms with a budget of 1 s" >&3
	[ "$status" -eq 0 ]
	[ $((t1 - t0)) -ge 1000000000 ]
	[ $((t1 - t0)) -lt 3500000000 ]
	[ "$(prog_frames)" -ge 30 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	# (a frame-pointer walk through libc may also bring back an address in no mapping)
	assert_stderr_contains "unnamed ($(other_nosym) no symbols, 0 no file, 0 process gone, "
	assert_stderr_contains " 0 no JIT map, 0 file changed, 0 no file identity, $(prog_frames) debuginfo timed out)"
	assert_stderr_contains "0 debug files fetched, 0 from the cache, 0 not found, 1 timed out (1.0 of 1.0 s)"
	# libdebuginfod's note of a miss is not left behind: the next run asks again
	[ -z "$(find "$BATS_TEST_TMPDIR/cache" -type f -path '*/debuginfo' 2>/dev/null)" ]
}

@test "fg-sym debuginfod: samples keep flowing while a server stalls" {
	start_bg "$BATS_TEST_TMPDIR/silent" python3 -c "$SILENT" 8014
	wait_port 8014
	# the writer pauses 6 s after the profile; the samples come out after the budget, 1 s
	{
		cat "$D/run.fgr"
		sleep 6
	} | in_ns env DEBUGINFOD_URLS=http://127.0.0.1:8014 \
		DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache" \
		fg-sym --debuginfod-budget 1 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	local pid=$! t0 i got=
	t0=$(date +%s%N)
	for ((i = 0; i < 50; i++)); do
		if grep -q "($D/bin/prog)\$" "$BATS_TEST_TMPDIR/out"; then
			got=$((($(date +%s%N) - t0) / 1000000))
			break
		fi
		sleep 0.1
	done
	wait $pid
	stop_bg "$BATS_TEST_TMPDIR/silent"
	echo "# the first frames of the fixture came out after $got ms" >&3
	[ -n "$got" ]
	[ "$got" -lt 4000 ]
	[ "$(grep -c "($D/bin/prog)\$" "$BATS_TEST_TMPDIR/out")" -ge 30 ]
}

@test "fg-sym debuginfod: a debug file whose build-id is not the one asked for is refused" {
	start_bg "$BATS_TEST_TMPDIR/impostor" python3 -c "$IMPOSTOR" 8015 "$D/other/prog.debug"
	wait_port 8015
	DEBUGINFOD_URLS=http://127.0.0.1:8015 sym_ns
	stop_bg "$BATS_TEST_TMPDIR/impostor"
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	[ -z "$(grep -E ' main\+0x[0-9a-f]+ \('"$D/bin/prog"'\)$' <<<"$output")" ]
	assert_stderr_contains "0 debug files fetched, 0 from the cache, 0 not found, 0 timed out, 1 refused (not the build-id asked for)"
	# and evicted: not kept in the cache, nor read again by the next run
	[ ! -e "$BATS_TEST_TMPDIR/cache/$(cat "$D/buildid")/debuginfo" ]
}

@test "fg-sym debuginfod: a file in the cache with another build-id is refused" {
	local id
	id=$(cat "$D/buildid")
	mkdir -p "$BATS_TEST_TMPDIR/cache/$id"
	chmod 700 "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/cache/$id"
	cp "$D/other/prog.debug" "$BATS_TEST_TMPDIR/cache/$id/debuginfo"
	DEBUGINFOD_URLS=$URL sym_ns
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	assert_stderr_contains "1 refused (not the build-id asked for)"
	# evicted: the next run fetches the right one from the server
	[ ! -e "$BATS_TEST_TMPDIR/cache/$id/debuginfo" ]
	DEBUGINFOD_URLS=$URL sym_ns
	[ "$(prog_unnamed)" -eq 0 ]
	assert_stderr_contains "debuginfod: 1 debug files fetched, 0 from the cache"
}

@test "fg-sym debuginfod: a gzip-encoded reply that decodes past the size bound is refused and evicted" {
	# 256 MiB once decoded, of an ELF file claiming 4 million sections; the bound 16 MiB
	python3 -c "$BOMB" "$BATS_TEST_TMPDIR/bomb.gz" $((256 << 20))
	start_bg "$BATS_TEST_TMPDIR/bomb" python3 -c "$IMPOSTOR" 8019 "$BATS_TEST_TMPDIR/bomb.gz" gzip
	wait_port 8019
	local t0 t1 sent
	sent=$(in_ns curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:8019/buildid/00/debuginfo")
	t0=$(date +%s%N)
	DEBUGINFOD_URLS=http://127.0.0.1:8019 DEBUGINFOD_MAXSIZE=$((16 << 20)) \
		sym_ns --debuginfod-budget 5
	t1=$(date +%s%N)
	stop_bg "$BATS_TEST_TMPDIR/bomb"
	echo "# a reply of $sent bytes; fg-sym took $(((t1 - t0) / 1000000)) ms" >&3
	[ "$sent" -lt $((1 << 20)) ]
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	assert_stderr_contains "0 debug files fetched, 0 from the cache, 0 not found, 0 timed out, 1 refused and evicted (over 16 MiB, or not ELF within bounds)"
	# within the budget, and nothing of it left in the cache
	[ $((t1 - t0)) -lt 8000000000 ]
	[ -z "$(find "$BATS_TEST_TMPDIR/cache" -type f -size +1M)" ]
	# a file of the kind in the cache already (left by an earlier version) is evicted too
	local id
	id=$(cat "$D/buildid")
	mkdir -p "$BATS_TEST_TMPDIR/cache/$id"
	truncate -s 32M "$BATS_TEST_TMPDIR/cache/$id/debuginfo"
	DEBUGINFOD_URLS=http://127.0.0.1:8019 DEBUGINFOD_MAXSIZE=$((16 << 20)) sym_ns
	assert_stderr_contains "1 refused and evicted (over 16 MiB, or not ELF within bounds)"
	[ ! -e "$BATS_TEST_TMPDIR/cache/$id/debuginfo" ]
}

@test "fg-sym debuginfod: the cache directory must be the user's alone, with no symbolic link" {
	mkdir -p "$BATS_TEST_TMPDIR/real"
	chmod 700 "$BATS_TEST_TMPDIR/real"
	ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/link"
	fg --separate-stderr in_ns env DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/link" \
		fg-sym "$D/run.fgr"
	[ "$status" -eq 0 ]
	assert_stderr_contains "debuginfod off: the cache directory '$BATS_TEST_TMPDIR/link' is, or is under, a symbolic link"
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	[ -z "$(ls "$BATS_TEST_TMPDIR/real")" ]
	# a link above the cache is no better
	fg --separate-stderr in_ns env DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/link/c" \
		fg-sym "$D/run.fgr"
	assert_stderr_contains "is, or is under, a symbolic link"
	[ -z "$(ls "$BATS_TEST_TMPDIR/real")" ]
	# another user's directory, or one others may write
	mkdir -m 700 "$BATS_TEST_TMPDIR/theirs"
	chown nobody "$BATS_TEST_TMPDIR/theirs"
	fg --separate-stderr in_ns env DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/theirs" \
		fg-sym "$D/run.fgr"
	assert_stderr_contains "debuginfod off: the cache directory '$BATS_TEST_TMPDIR/theirs' (or one above it) is not this user's alone; set DEBUGINFOD_CACHE_PATH"
	mkdir -m 777 "$BATS_TEST_TMPDIR/open"
	fg --separate-stderr in_ns env DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/open/c" \
		fg-sym "$D/run.fgr"
	assert_stderr_contains "is not this user's alone"
	[ ! -e "$BATS_TEST_TMPDIR/open/c" ]
}

@test "fg-sym debuginfod: as root through sudo, DEBUGINFOD_URLS is not followed unless --debuginfod" {
	SUDO_USER=nobody DEBUGINFOD_URLS=$URL sym_ns
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	assert_stderr_contains "DEBUGINFOD_URLS ignored: it came through sudo; --debuginfod URLS fetches debug files as root"
	[ ! -e "$BATS_TEST_TMPDIR/cache" ]
	SUDO_USER=nobody sym_ns --debuginfod "$URL"
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	# --no-debuginfod wins over the environment, and says nothing of it
	DEBUGINFOD_URLS=$URL sym_ns --no-debuginfod
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq "$(prog_frames)" ]
	[[ $stderr != *debuginfod* ]]
}

@test "fg-sym debuginfod: a bad budget is a usage error" {
	fg --separate-stderr fg-sym --debuginfod-budget 0 "$D/run.fgr"
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sym: invalid debuginfod budget '0' (seconds, up to 3600)"* ]]
	fg --separate-stderr fg-sym --debuginfod-budget soon "$D/run.fgr"
	[ "$status" -eq 2 ]
	fg --separate-stderr fg-sym --debuginfod "" "$D/run.fgr"
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sym: --debuginfod needs the URL of a server"* ]]
	fg fg-sym --help
	[[ $output == *"--debuginfod-budget SECONDS"* ]]
}

# cache_put ID FILE: FILE in the test's cache as the debug file of build-id ID
cache_put() {
	mkdir -p "$BATS_TEST_TMPDIR/cache/$1"
	chmod 700 "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/cache/$1"
	cp "$2" "$BATS_TEST_TMPDIR/cache/$1/debuginfo"
}

# lines: how many frames of the fixture have a source line under them in $output

@test "fg-sym debuginfod: the dwz file a fetched debug file names is fetched with it" {
	local dwz
	dwz=$(cat "$D/dwzid")
	readelf -p .gnu_debugaltlink "$D/srv-dwz/prog.debug" | grep -q fg-test.debug
	[ ! -e "/usr/lib/debug/.build-id/${dwz:0:2}/${dwz:2}.debug" ]
	start_server "$BATS_TEST_TMPDIR/srv" 8022 "$D/srv-dwz" "$dwz"
	DEBUGINFOD_URLS=http://127.0.0.1:8022 sym_ns --srcline
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	# the DWARF was read: every frame of the fixture has its line
	[ "$(own_frames)" -gt 0 ]
	[ "$(lines)" -eq "$(own_frames)" ]
	assert_stderr_contains "debuginfod: 1 debug files fetched, 0 from the cache"
	# beside the debug file in the cache, as debuginfod serves it, and checked by build-id
	cmp "$BATS_TEST_TMPDIR/cache/$dwz/debuginfo" "$D/other/prog.debug"
	# the next run finds both in the cache, even with the server gone
	stop_bg "$BATS_TEST_TMPDIR/srv"
	DEBUGINFOD_URLS=http://127.0.0.1:8022 sym_ns --srcline
	[ "$status" -eq 0 ]
	assert_stderr_contains "0 debug files fetched, 1 from the cache"
	[ "$(own_frames)" -gt 0 ]
	[ "$(lines)" -eq "$(own_frames)" ]
}

@test "fg-sym debuginfod: a dwz file the server lacks leaves the names, without lines, counted" {
	start_server "$BATS_TEST_TMPDIR/srv" 8023 "$D/srv-nodwz"
	DEBUGINFOD_URLS=http://127.0.0.1:8023 sym_ns --srcline
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	[ "$(lines)" -eq 0 ]
	assert_stderr_contains "$(prog_frames) no supplementary DWARF file"
	# asked for once, not again for each frame: the cache holds libdebuginfod's note of the miss
	[ ! -s "$BATS_TEST_TMPDIR/cache/$(cat "$D/dwzid")/debuginfo" ]
}

@test "fg-sym debuginfod: a dwz file in the cache with another build-id is not used" {
	local dwz
	dwz=$(cat "$D/dwzid")
	# the debug file comes from the server, the dwz file is already in the cache, but wrong
	cache_put "$dwz" "$D/srv/prog.debug"
	start_server "$BATS_TEST_TMPDIR/srv" 8024 "$D/srv-dwz" "$dwz"
	DEBUGINFOD_URLS=http://127.0.0.1:8024 sym_ns --srcline
	[ "$status" -eq 0 ]
	[ "$(prog_unnamed)" -eq 0 ]
	[ "$(lines)" -eq 0 ]
	assert_stderr_contains "$(prog_frames) no supplementary DWARF file"
}

@test "fg-sym debuginfod: a debug file in the cache without its dwz file has it fetched" {
	local dwz
	dwz=$(cat "$D/dwzid")
	cache_put "$(cat "$D/buildid")" "$D/srv-dwz/prog.debug"
	start_server "$BATS_TEST_TMPDIR/srv" 8025 "$D/srv-dwz" "$dwz"
	DEBUGINFOD_URLS=http://127.0.0.1:8025 sym_ns --srcline
	[ "$status" -eq 0 ]
	assert_stderr_contains "0 debug files fetched, 1 from the cache"
	[ "$(own_frames)" -gt 0 ]
	[ "$(lines)" -eq "$(own_frames)" ]
	cmp "$BATS_TEST_TMPDIR/cache/$dwz/debuginfo" "$D/other/prog.debug"
}
