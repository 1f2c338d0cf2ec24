# Shared helpers for fg's bats suites.  Every suite starts with
#	bats_require_minimum_version 1.5.0
#	load helpers
#
# FG_BUILD names the build directory whose tools are tested (tests/run sets it;
# default: build/).  FG_TEST_STRICT=1 (set in CI) makes `skip` a failure, so a
# test that cannot run where it should is never silently passed over.
# FG_TEST_QUICK=1 (make test, the quick tier) skips the tests that need live BPF:
# those that say `requires btf` or `requires perf_event`.

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
FG_BUILD=${FG_BUILD:-$TOP/build}
PATH=$FG_BUILD:$FG_BUILD/tests/tools:$TOP/scripts/bin:$PATH
WORKLOADS=$FG_BUILD/workloads
DATA=$TOP/tests/data
FIXTURES=$TOP/tests/fixtures
# python3 is Debian's (the dependency), not a version manager's shim that PATH may put
# first: pyenv's runs a shell script and costs 0.4-0.7 s a start, more than most tests
if [ -n "${BATS_RUN_TMPDIR:-}" ] && [ -x /usr/bin/python3 ] &&
	[ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir -p "$BATS_RUN_TMPDIR/python"
	ln -sfn /usr/bin/python3 "$BATS_RUN_TMPDIR/python/python3"
	PATH=$BATS_RUN_TMPDIR/python:$PATH
fi
export PATH FG_BUILD TOP DATA FIXTURES WORKLOADS
# fg-sym's kernel symbol cache: the run's own, not the home directory's
export XDG_CACHE_HOME=${BATS_RUN_TMPDIR:-/tmp}/xdg-cache
# no debuginfod server but those a test starts itself (tests/fg-sym-debuginfod.bats)
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH

# sanitizer failures must not look like ordinary exit statuses
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=199:abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=198}

if [ "${FG_TEST_STRICT:-0}" = 1 ]; then
	skip() {
		echo "strict mode: this test would be skipped: $*" >&2
		return 1
	}
fi

# fg [-N] [--separate-stderr] CMD ARGS...: `run` that shows the command and
# its status, and fails on a crash or a sanitizer report whatever was expected.
fg() {
	local runopts=()
	while [[ $# -gt 0 && $1 == -* && $1 != -- ]]; do
		runopts+=("$1")
		shift
	done
	[[ ${1:-} == -- ]] && shift
	run "${runopts[@]}" "$@"
	echo "# $* -> status $status" >&3
	if [[ $status -gt 128 || $status -eq 198 || $status -eq 199 ]]; then
		echo "crashed or sanitizer error (status $status): $*" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
}

# assert_golden EXPECTED [ACTUAL]: ACTUAL (default $BATS_TEST_TMPDIR/out) equals EXPECTED
assert_golden() {
	diff -u "$1" "${2:-$BATS_TEST_TMPDIR/out}"
}

assert_output_contains() {
	if [[ $output != *"$1"* ]]; then
		echo "expected output to contain: $1" >&2
		echo "output was: $output" >&2
		return 1
	fi
}

assert_stderr_contains() {
	if [[ ${stderr-} != *"$1"* ]]; then
		echo "expected stderr to contain: $1" >&2
		echo "stderr was: ${stderr-}" >&2
		return 1
	fi
}

# requires root|btf|perf_event|bpf|chromium|perf|CMD...: skip (fail when strict)
# unless the host can run the test
requires() {
	local r
	for r in "$@"; do
		case $r in
		root) [ "$(id -u)" -eq 0 ] || skip "test requires root" ;;
		btf | perf_event) [ "${FG_TEST_QUICK:-0}" = 0 ] || skip "quick tier: live BPF (make check)" ;;&
		chromium | firefox-esr) [ "${FG_TEST_QUICK:-0}" = 0 ] || skip "quick tier: a browser (make check)" ;;&
		btf) [ -r /sys/kernel/btf/vmlinux ] || skip "test requires kernel BTF" ;;
		perf_event) [ -e /proc/sys/kernel/perf_event_paranoid ] || skip "test requires perf events" ;;
		*) command -v "$r" >/dev/null 2>&1 || skip "test requires $r" ;;
		esac
	done
}

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (status 0), or until
# SECONDS have passed (status 1, saying what it waited for) -- never a fixed sleep
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		if ((SECONDS >= end)); then
			echo "timed out waiting for: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# has_samples FILE [N]: the capture FILE (fg-sample's, maybe still being written) holds at
# least N sample records (default 1)
has_samples() {
	[ "$(fgr-dump "$1" 2>/dev/null | grep -c '^sample ')" -ge "${2:-1}" ]
}

# the options TOOL --help names (up to a line "Keys:" or the end; USAGE: in its usage lines,
# up to the first empty line), one a line, in order
help_options() { # TOOL [USAGE]
	if [ -n "${2:-}" ]; then
		"$1" --help | sed -n '1,/^$/p'
	else
		"$1" --help | sed '/^Keys:/,$d'
	fi | grep -oE '(^| |\[)--?[a-zA-Z][-a-zA-Z]*([] ,|]|$)' | sed -E 's/^[ []//; s/[] ,|]$//'
}

# the options man/TOOL.1 names with Fl, one a line, in order (SYNOPSIS: the synopsis only)
man_options() { # TOOL [SYNOPSIS]
	local man=$TOP/man/$1.1
	if [ -n "${2:-}" ]; then
		sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$man"
	else
		cat "$man"
	fi | grep -oE 'Fl -?[a-zA-Z][-a-zA-Z]*' | awk '{ print "-" $2 }'
}

# has_link PID: the process holds a BPF link: its program is attached
has_link() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'bpf_link'
}

# vdso_unnamed [TEXT]: frames of the vDSO no symbol names in fg-sym's text (default
# $output).  With the kvm-clock clock source (these guests') clock_gettime runs a function
# of its own, vread_pvclock, that the vDSO's symbol table leaves out; fg-sym counts such a
# frame under "no symbols", and any live capture may have one.
vdso_unnamed() {
	grep -c "\[unknown\] (\[vdso\])\$" <<<"${1-$output}" || true
}

# vdso_debug_file OUT: a debug file of this kernel's vDSO made from its image, as a
# kernel debug package has it: a .symtab that names the functions it exports (the weak
# aliases weak) and one of its own, vdso_own, at the first byte of its .text that no
# exported function covers (with kvm-clock: vread_pvclock); and a .debug_info, empty (a
# debuginfod server serves a file as debuginfo by its .debug_ sections; fg-sym reads no
# DWARF of the vDSO).  Prints vdso_own's offset.
vdso_debug_file() {
	local img=$1.img args=() line
	fgr-vdso-sym --dump >"$img" || return 1
	mapfile -t args < <(python3 - "$img" <<-'PY'
		import subprocess, sys
		img = sys.argv[1]
		secs = subprocess.run(["readelf", "-SW", img], capture_output=True, text=True).stdout
		text = next(l.split("]", 1)[1].split() for l in secs.splitlines() if " .text " in l)
		start, size = int(text[2], 16), int(text[4], 16)
		syms = subprocess.run(["readelf", "--dyn-syms", "-W", img], capture_output=True, text=True).stdout
		funcs = []
		for l in syms.splitlines():
		    f = l.split()
		    if len(f) == 8 and f[3] == "FUNC" and f[6] != "UND":
		        funcs.append((int(f[1], 16), int(f[2]), f[4], f[7].split("@")[0]))
		gap, moved = start, True
		while moved:
		    moved = False
		    for a, z, _, _ in funcs:
		        if a <= gap < a + z:
		            gap, moved = a + z, True
		if gap >= start + size:
		    sys.exit("no byte of .text is left unnamed by the vDSO's .dynsym")
		print("%x" % gap)
		for a, _, bind, name in funcs:
		    print("--add-symbol")
		    print("%s=.text:0x%x,function,%s" % (name, a - start, "weak" if bind == "WEAK" else "global"))
		print("--add-symbol")
		print("vdso_own=.text:0x%x,function,local" % (gap - start))
	PY
	) || return 1
	[ ${#args[@]} -gt 3 ] || return 1
	: >"$1.empty"
	objcopy "${args[@]:1}" --add-section .debug_info="$1.empty" "$img" "$1" || return 1
	rm -f "$1.empty"
	echo "${args[0]}"
}

# bomb DEPTH: a C++ name of ten bytes a level nesting a<X, X> DEPTH levels deep by
# substitution (S1_, S3_, ... in base 36): its demangled length doubles with each level
bomb() {
	local b36=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ s=_Z1fI1aIiiE k id
	for ((k = 1; k <= $1; k++)); do
		id=$((2 * k - 1))
		((id < 36)) && id=${b36:id:1} || id=${b36:id/36:1}${b36:id%36:1}
		s+="1aIS${id}_S${id}_E"
	done
	echo "${s}EvT_"
}
