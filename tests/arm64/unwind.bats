#!/usr/bin/env bats
# arm64 stacks without an arm64 machine (make check-arm64): the unwinding
# fixtures of make ARCH=arm64, built by gcc and clang at -O2 without frame
# pointers, run under qemu-aarch64 and take their own snapshots from SIGPROF
# (tests/unwind/snap.c: the interrupted registers from the ucontext and a
# copy of the stack); tests/tools/fgr-snap writes them as an fg-record stream
# (abi 2, arm64's registers) and this machine's fg-sym unwinds and names them,
# with its tables and with libdwfl, which must agree frame for frame
# (tests/tools/arm64-agree.py says where libdwfl cannot be the reference).
# FG_ARM64_BUILD is the arm64 build (tests/run sets it), FG_BUILD this
# machine's.  Not the threads mode: qemu-user 7.2 hangs creating a thread on
# this kernel.
bats_require_minimum_version 1.5.0
load ../helpers

# (helpers take the suite's folder's parent for the top: one level deeper here)
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
ARM=${FG_ARM64_BUILD:-$TOP/build/arm64}

setup() {
	requires qemu-aarch64-static python3 readelf
	[ -x "$ARM/unwind/fixture-gcc-pie" ] || skip "no arm64 build in $ARM (make ARCH=arm64)"
	cd "$BATS_TEST_TMPDIR"
}

# snap FIXTURE: run it under qemu-aarch64 with snapshots every 5 ms of CPU (each costs qemu more
# than a native one), into FIXTURE.fgr
snap() {
	FG_SNAP_OUT=$PWD/$1.snap FG_SNAP_US=5000 timeout -s KILL 120 \
		qemu-aarch64-static -L /usr/aarch64-linux-gnu "$ARM/unwind/fixture-$1" 100 \
		recurse qsort lib signal plt realign vdso >/dev/null
	fgr-snap --comm "fixture-$1" "$1.snap" >"$1.fgr"
}

# agree FIXTURE: its capture unwound by the tables and by libdwfl agree, every stack reaches
# _start (but at qemu's signal trampoline), and every mode is there
agree() {
	local f
	snap "$1"
	fgr-dump "$1.fgr" | grep -q ' abi=2 '
	fg-sym "$1.fgr" >"$1.out" 2>"$1.err"
	sed 's/^/# /' "$1.err" >&3
	fg-sym -q --unwinder libdw "$1.fgr" >"$1.libdw"
	fg python3 "$TOP/tests/tools/arm64-agree.py" "$1.out" "$1.libdw"
	printf '# %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ]
	for f in rec_a slow_cmp fixlib_work lib_callback on_usr1 mode_plt realigned main; do
		grep -q " $f+" "$1.out" || {
			echo "no stack through $f" >&2
			return 1
		}
	done
	# the named frames are this capture's arm64 files, named on this machine
	[[ $1 == *-static ]] || grep -q "(/.*aarch64-linux-gnu/libc.so.6)\$" "$1.out"
}

@test "arm64 snapshots: the gcc fixtures unwind to _start, as libdwfl unwinds them" {
	agree gcc-pie
	agree gcc-nopie
	agree gcc-static
}

@test "arm64 snapshots: the clang fixtures unwind to _start, as libdwfl unwinds them" {
	agree clang-pie
	agree clang-nopie
	agree clang-static
}

@test "arm64 snapshots: unwound with the frame-pointer IPs only, each stack is its leaf" {
	snap gcc-pie
	fg --separate-stderr fg-sym --unwinder none gcc-pie.fgr
	[ "$status" -eq 0 ]
	[[ $stderr == *" stack snapshots not unwound (--unwinder none)"* ]]
	# one frame a sample: the leaf the snapshot's pc names
	[ "$(grep -c ' main+' <<<"$output")" -eq 0 ]
}
