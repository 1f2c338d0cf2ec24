#!/usr/bin/env bats
# Security: each attack of a local user against root's profile, run as an
# unprivileged user (fgtest, made here when missing) against the tools run
# as root.  Every attack must fail, with the message the user would want.
# Needs root (CI runs as root); the user is left in place for later runs.
bats_require_minimum_version 1.5.0
load helpers

USER_NAME=fgtest

setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	id "$USER_NAME" >/dev/null 2>&1 ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			"$USER_NAME"
	# a tree the user can reach: theirs under user/, root's secrets under root/ (0700)
	S=$(mktemp -d /tmp/fg-security.XXXXXX)
	chmod 755 "$S"
	mkdir -p "$S/user" "$S/root" "$S/build"
	chown "$USER_NAME:" "$S/user"
	chmod 700 "$S/root"
	export S
	local b=$S/build
	# the attacker's program: names itself (argv[1]) and spins in spin() for argv[2] seconds
	cat >"$b/spin.c" <<-'EOF'
		#include <stdlib.h>
		#include <sys/prctl.h>
		#include <time.h>
		__attribute__((noinline)) void spin(void)
		{
			for (volatile unsigned long i = 0; i < 20000000; i++)
				;
		}
		int main(int argc, char **argv)
		{
			time_t end = time(NULL) + (argc > 2 ? atoi(argv[2]) : 2);
			if (argc > 1)
				prctl(PR_SET_NAME, argv[1]);
			while (time(NULL) < end)
				spin();
			return 0;
		}
	EOF
	gcc -O1 -g -fno-omit-frame-pointer -fno-inline "$b/spin.c" -o "$b/spin"
	# the same program under other names and without a build-id: an impostor
	sed 's/spin/impostor/g' "$b/spin.c" >"$b/impostor.c"
	gcc -O1 -fno-omit-frame-pointer -fno-inline -Wl,--build-id=none "$b/impostor.c" -o "$b/impostor"
	# a sleeper for a chroot, linked statically
	printf '#include <unistd.h>\nint main(void) { sleep(30); return 0; }\n' >"$b/sleeper.c"
	gcc -static -O1 "$b/sleeper.c" -o "$b/sleeper"
	# root's secrets: an ELF file with a secret function name, a JIT map of secret names
	printf 'int TOP_SECRET_FUNCTION(void) { return 42; }\nint main(void) { return TOP_SECRET_FUNCTION(); }\n' \
		>"$b/secret.c"
	gcc -O1 "$b/secret.c" -o "$S/root/secret"
	chmod 600 "$S/root/secret"
	printf '7f0000001000 1000 ROOT_SECRET_NAME\n' >"$S/root/secret.map"
	chmod 600 "$S/root/secret.map"
	chmod -R a+rX "$b"
}

teardown_file() {
	[ -n "${S:-}" ] && rm -rf "$S"
	return 0
}

setup() {
	requires root
	PIDS=()
	MAPS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for p in "${MAPS[@]}"; do
		rm -f "$p"
	done
	return 0
}

# as_user CMD...: run CMD as the unprivileged user ("${AS_USER[@]}" CMD & keeps $! the command's pid)
AS_USER=(setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups --)
as_user() {
	"${AS_USER[@]}" "$@"
}

uid_of_user() {
	id -u "$USER_NAME"
}

# free_pid: a pid no process has now
free_pid() {
	local p
	for ((p = 32000; p > 1000; p--)); do
		[ -e "/proc/$p" ] || { echo $p; return; }
	done
	return 1
}

# anon PID: the lines of a mapping of anonymous executable memory of PID and a sample in it
anon() {
	echo "mapping pid=$1 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
	echo "sample pid=$1 u=7f0000001010"
}

# stream TEXT-FILE OUT: fgr-make, written by root
stream() {
	fgr-make "$1" >"$2"
}

@test "forged samples: a user's program whose path, comm and symbol hold a sample header shows as itself, escaped" {
	requires btf perf_event
	local d=$S/user dir file comm
	# the path: a directory and a file whose names hold the forged sample
	dir=$d/$'x\n\ninjected 4242'
	file=$dir/$'4242 [000] 1.000000: 99999999 cpu-clock:\n\tffff FORGED+0x0 (x)\n'
	as_user mkdir -p "$dir"
	# the symbol: spin renamed to the forged text
	objcopy --redefine-sym "spin=spin"$'\n\ninjected 4242/4242 [000] 1.000000: 99999999 cpu-clock:\n\tffff FORGED+0x0 (x)' \
		"$S/build/spin" "$S/build/forged-spin"
	chmod a+r "$S/build/forged-spin"
	as_user cp "$S/build/forged-spin" "$file"
	as_user chmod 755 "$file"
	# the comm: 15 bytes that read as "PID/TID TIME: WEIGHT EVENT:" after two newlines
	comm=$'\n\n1/1 1: 999 e:'
	"${AS_USER[@]}" "$file" "$comm" 5 &
	PIDS+=($!)
	sleep 0.3
	fg-sample -F 499 -d 2 2>"$BATS_TEST_TMPDIR/sample.err" | fg-sym >"$BATS_TEST_TMPDIR/perf" 2>"$BATS_TEST_TMPDIR/sym.err"
	fg-fold <"$BATS_TEST_TMPDIR/perf" >"$BATS_TEST_TMPDIR/folded" 2>"$BATS_TEST_TMPDIR/fold.err"
	local ecomm='\x0a\x0a1/1\x201:\x20999 e:'
	# the program was sampled, and shows as itself: its comm and its symbol escaped
	local n
	n=$(grep -cF "$ecomm " "$BATS_TEST_TMPDIR/perf")
	echo "# $n samples of the attacker's program" >&3
	[ "$n" -gt 20 ]
	grep -qF 'spin\x0a\x0ainjected 4242/4242 [000] 1.000000: 99999999 cpu-clock:\x0a\x09ffff FORGED+0x0 (x)+0x' \
		"$BATS_TEST_TMPDIR/perf"
	# the path: a newline is \x0a, or \\012 where /proc/PID/maps wrote it as \012
	local nl='(\\x0a|\\\\012)'
	local re='\(/.*/x'"$nl$nl"'injected 4242/4242 \[000\] 1\.000000: 99999999 cpu-clock:'"$nl"
	re+='\\x09ffff FORGED\+0x0 \(x\)'"$nl"'\)$'
	grep -qE "$re" "$BATS_TEST_TMPDIR/perf"
	# no control character but the tab that starts each frame line, and the newlines
	! tr -d '\n\t' <"$BATS_TEST_TMPDIR/perf" | LC_ALL=C grep -q '[[:cntrl:]]'
	# nothing injected: no header or frame line begins with the forged text
	! grep -q '^injected' "$BATS_TEST_TMPDIR/perf"
	! grep -q $'^\tffff FORGED' "$BATS_TEST_TMPDIR/perf"
	# folded: the samples add up to what fg-sym wrote, none weighs 99999999
	local samples sum
	samples=$(sed -nE 's/^fg-sym: ([0-9]+) samples,.*/\1/p' "$BATS_TEST_TMPDIR/sym.err")
	sum=$(awk '{ s += $NF } END { print s }' "$BATS_TEST_TMPDIR/folded")
	[ "$sum" -eq "$samples" ]
	! grep -q '^injected' "$BATS_TEST_TMPDIR/folded"
	! grep -q ' 99999999$' "$BATS_TEST_TMPDIR/folded"
	# the program's stacks, under its comm (spaces made _, as stackcollapse-perf.pl does)
	local fcomm=${ecomm// /_}
	grep -F "$fcomm;" "$BATS_TEST_TMPDIR/folded" | grep -qF ';main;spin\x0a\x0ainjected 4242/4242'
	# every sample of it, each of weight 1 (awk -v would read the backslashes)
	C="$fcomm;" awk 'index($0, ENVIRON["C"]) == 1 { s += $NF } END { exit !(s == '"$n"') }' \
		"$BATS_TEST_TMPDIR/folded"
}

@test "a capture another user wrote is refused; with -f, mappings without an identity open nothing" {
	local d=$S/user evil=$S/user/evil.fgr
	{
		echo "mapping pid=4242 start=555555554000 end=555555556000 ino=0 path=$S/root/secret"
		echo "sample pid=4242 u=555555555139"
		echo "mapping pid=4243 start=555555554000 end=555555556000 ino=0 path=/etc/shadow"
		echo "sample pid=4243 u=555555554100"
	} >"$S/build/evil.txt"
	chmod a+r "$S/build/evil.txt"
	as_user sh -c 'fgr-make "$1" >"$2"' sh "$S/build/evil.txt" "$evil"
	[ "$(stat -c %u "$evil")" -eq "$(uid_of_user)" ]
	local want="fg-sym: refusing to read '$evil': it belongs to user $(uid_of_user), not to you or root; a capture someone else wrote can make fg-sym read files they cannot (-f to read it anyway)"
	fg --separate-stderr fg-sym "$evil"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "$want" ]
	# on standard input too
	fg --separate-stderr fg-sym <"$evil"
	[ "$status" -eq 1 ]
	[ "$stderr" = "${want/"'$evil'"/"'<stdin>'"}" ]
	# -f: read, but a mapping with neither inode nor build-id opens no file
	ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 fg --separate-stderr strace -f -e trace=open,openat,stat,newfstatat \
		-o "$BATS_TEST_TMPDIR/trace" fg-sym -v -f --proc-root "$BATS_TEST_TMPDIR" "$evil"
	[ "$status" -eq 0 ]
	[[ $output != *TOP_SECRET* ]]
	[[ ${lines[1]} == *" [unknown] ($S/root/secret)" ]]
	[[ ${lines[3]} == *" [unknown] (/etc/shadow)" ]]
	[[ $stderr == *"0 frames named, 2 unnamed ("*", 2 no file identity)"* ]]
	! grep -q "$S/root/secret\"" "$BATS_TEST_TMPDIR/trace"
	! grep -q '/etc/shadow"' "$BATS_TEST_TMPDIR/trace"
}

@test "JIT map: a symbolic link to a root-only file is not read, for a live process and for one gone" {
	local pid gone
	"${AS_USER[@]}" sleep 30 &
	pid=$!
	PIDS+=($pid)
	as_user ln -s "$S/root/secret.map" "/tmp/perf-$pid.map"
	MAPS+=("/tmp/perf-$pid.map")
	gone=$(free_pid)
	as_user ln -sf "$S/root/secret.map" "/tmp/perf-$gone.map"
	MAPS+=("/tmp/perf-$gone.map")
	{
		echo "creds pid=$pid uid=$(uid_of_user)"
		anon $pid
		echo "creds pid=$gone uid=$(uid_of_user)"
		anon $gone
		echo "exit pid=$gone"
	} >"$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ $output != *ROOT_SECRET* ]]
	[[ ${lines[1]} == *" [unknown] (//anon)" ]]
	[[ ${lines[3]} == *" [unknown] (//anon)" ]]
	[[ $stderr == *"fg-sym: ignoring '/proc/$pid/root/tmp/perf-$pid.map': a symbolic link is on its path"* ]]
	[[ $stderr == *"fg-sym: ignoring '/tmp/perf-$gone.map': a symbolic link is on its path"* ]]
	[[ $stderr == *"2 no JIT map"* ]]
	# the process is the user's, as the map is: only the link stops it
	[ "$(stat -c %u "/proc/$pid")" -eq "$(uid_of_user)" ]
}

@test "JIT map: inside a user-namespace chroot, a linked map or a linked tmp is not followed" {
	requires unshare
	local jail=$S/user/jail pid
	as_user mkdir -p "$jail/tmp"
	as_user cp "$S/build/sleeper" "$jail/sleeper"
	"${AS_USER[@]}" unshare --user --map-root-user --root="$jail" /sleeper &
	pid=$!
	PIDS+=($pid)
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$jail/sleeper" ] && break
		sleep 0.1
	done
	[ "$(readlink "/proc/$pid/exe")" = "$jail/sleeper" ]
	# the map in the jail's /tmp: an absolute link, which root's walk through
	# /proc/PID/root would resolve in its own root
	as_user ln -s "$S/root/secret.map" "$jail/tmp/perf-$pid.map"
	{
		anon $pid
	} >"$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ $output != *ROOT_SECRET* ]]
	[[ $stderr == *"fg-sym: ignoring '/proc/$pid/root/tmp/perf-$pid.map': a symbolic link is on its path"* ]]
	# the jail's tmp itself a link to a directory of root's holding a map under that name
	cp "$S/root/secret.map" "$S/root/perf-$pid.map"
	as_user rm -rf "$jail/tmp"
	as_user ln -s "$S/root" "$jail/tmp"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	rm -f "$S/root/perf-$pid.map"
	[ "$status" -eq 0 ]
	[[ $output != *ROOT_SECRET* ]]
	[[ $stderr == *"fg-sym: ignoring '/proc/$pid/root/tmp/perf-$pid.map': a symbolic link is on its path"* ]]
}

@test "JIT map: one another user wrote is ignored, also once the process is gone; the process's own is used" {
	local uid root_pid gone mine
	uid=$(uid_of_user)
	sleep 30 &
	root_pid=$!
	PIDS+=($root_pid)
	gone=$(free_pid)
	# the user writes maps for root's processes, a live one and one gone
	as_user sh -c 'printf "7f0000001000 1000 FORGED_NAME\n" >"$1"' sh "/tmp/perf-$root_pid.map"
	as_user sh -c 'printf "7f0000001000 1000 FORGED_NAME\n" >"$1"' sh "/tmp/perf-$gone.map"
	MAPS+=("/tmp/perf-$root_pid.map" "/tmp/perf-$gone.map")
	{
		anon $root_pid
		echo "creds pid=$gone uid=0"
		anon $gone
		echo "exit pid=$gone"
	} >"$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ $output != *FORGED_NAME* ]]
	[[ $stderr == *"fg-sym: ignoring '/proc/$root_pid/root/tmp/perf-$root_pid.map': it belongs to user $uid, not to user 0 who runs process $root_pid"* ]]
	[[ $stderr == *"fg-sym: ignoring '/tmp/perf-$gone.map': it belongs to user $uid, not to user 0 who runs process $gone"* ]]
	# without a creds record, only the running user's or root's map is believed
	sed -i '/^creds/d' "$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ $output != *FORGED_NAME* ]]
	[[ $stderr == *"fg-sym: ignoring '/tmp/perf-$gone.map': it belongs to user $uid, and who ran process $gone is not known (no creds record): only your own or root's maps are used then"* ]]
	# the user's own process, gone: its map is its own, and names its frames
	sed -i "s/^mapping pid=$gone /creds pid=$gone uid=$uid\\n&/" "$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[3]} == *" FORGED_NAME+0x10 (/tmp/perf-$gone.map)" ]]
	# ... unless the map has another name too: a hard link may be anyone's file
	as_user ln "/tmp/perf-$gone.map" "/tmp/perf-$gone.link"
	MAPS+=("/tmp/perf-$gone.link")
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/in.fgr"
	[[ ${lines[3]} == *" [unknown] (//anon)" ]]
	[[ $stderr == *"fg-sym: ignoring '/tmp/perf-$gone.map': it has 2 names (hard links), so it may be another user's file"* ]]
}

@test "build-id: a program replaced by an impostor without a build-id names nothing from it" {
	requires btf perf_event
	local app=$S/user/app
	as_user cp "$S/build/spin" "$app"
	fg --separate-stderr fg-sample -F 499 -o "$BATS_TEST_TMPDIR/cap.fgr" -- \
		setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups -- "$app" app 2
	[ "$status" -eq 0 ]
	# the capture names the program while it is the same file
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/cap.fgr"
	[[ $output == *" spin+0x"*"($app)"* ]]
	# the user puts an impostor with other names and no build-id in its place
	as_user sh -c 'rm -f "$1" && cp "$2" "$1"' sh "$app" "$S/build/impostor"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/cap.fgr"
	[ "$status" -eq 0 ]
	[[ $output != *impostor* ]]
	[[ $output != *" spin+0x"* ]]
	[[ $output == *" [unknown] ($app)"* ]]
	[[ $stderr =~ \ ([1-9][0-9]*)\ file\ changed ]]
	# and in place, the same inode
	as_user sh -c 'cat "$2" >"$1"' sh "$app" "$S/build/impostor"
	fg --separate-stderr fg-sym -v "$BATS_TEST_TMPDIR/cap.fgr"
	[[ $output != *impostor* ]]
	[[ $stderr =~ \ ([1-9][0-9]*)\ file\ changed ]]
}

@test "kernel symbol cache: a user's linked ~/.cache/fg is neither written nor read by root" {
	local home=$S/user/home victim=$S/root/victim
	mkdir -p "$victim"
	echo precious >"$victim/kallsyms"
	local ino
	ino=$(stat -c %i "$victim/kallsyms")
	as_user mkdir -p "$home/.cache"
	as_user ln -s "$victim" "$home/.cache/fg"
	printf 'sample pid=1 k=%s\n' "$(awk '$3 == "schedule" { print $1; exit }' /proc/kallsyms)" \
		>"$BATS_TEST_TMPDIR/in.txt"
	stream "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/in.fgr"
	# root with the user's HOME, as sudo -E gives
	HOME=$home XDG_CACHE_HOME= fg --separate-stderr fg-sym --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" schedule+0x0 ([kernel.kallsyms])" ]]
	[[ $stderr == *"fg-sym: not using the kernel symbol cache in '$home/.cache/fg': '$S/user' belongs to user $(uid_of_user), not to you or root"* ]]
	[ "$(cat "$victim/kallsyms")" = precious ]
	[ "$(stat -c %i "$victim/kallsyms")" = "$ino" ]
	[ "$(ls -A "$victim")" = kallsyms ]
	# a link on a path of root's own is not followed either
	mkdir -p "$S/root/cache"
	ln -s "$victim" "$S/root/cache/fg"
	XDG_CACHE_HOME=$S/root/cache fg --separate-stderr fg-sym --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[[ $stderr == *"fg-sym: not using the kernel symbol cache in '$S/root/cache/fg': '$S/root/cache/fg' is a symbolic link"* ]]
	[ "$(cat "$victim/kallsyms")" = precious ]
	# root's own directory: used, 0700, the cache 0600
	rm "$S/root/cache/fg"
	XDG_CACHE_HOME=$S/root/cache fg --separate-stderr fg-sym --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[[ $stderr != *"not using"* ]]
	[ "$(stat -c %a "$S/root/cache/fg")" = 700 ]
	[ "$(stat -c %a "$S/root/cache/fg/kallsyms")" = 600 ]
}

# longest FILE: the length of its longest line
longest() {
	awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$1"
}

@test "demangling bomb: a user's hot function of 279 bytes that demangles to a gigabyte is cut at 4096 bytes by every tool" {
	requires btf perf_event
	local app=$S/user/bomb name t0 ms
	name=$(bomb 25)
	# 279 bytes, 1 GiB demangled (the name doubles each level: 259 bytes at depth 3)
	[ ${#name} -eq 279 ]
	[ "$(bomb 3 | c++filt | wc -c)" -eq 260 ]
	objcopy --redefine-sym "spin=$name" "$S/build/spin" "$S/build/bomb"
	chmod a+r "$S/build/bomb"
	as_user cp "$S/build/bomb" "$app"
	as_user chmod 755 "$app"
	fg --separate-stderr fg-sample -F 499 -o "$BATS_TEST_TMPDIR/cap.fgr" -- \
		"${AS_USER[@]}" "$app" bomb 1
	[ "$status" -eq 0 ]
	# fg-sym: done in well under a second a name, the name cut and counted
	t0=$(date +%s%N)
	run --separate-stderr timeout 20 fg-sym "$BATS_TEST_TMPDIR/cap.fgr" -o "$BATS_TEST_TMPDIR/perf"
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# fg-sym: ${ms} ms, $(stat -c %s "$BATS_TEST_TMPDIR/perf") bytes" >&3
	[ "$status" -eq 0 ]
	[ "$ms" -lt 5000 ]
	[[ $stderr =~ fg-sym:\ [1-9][0-9]*\ demangled\ names?\ cut\ at\ 4096\ bytes\ \(ending\ in\ \'\[\.\.\.\]\'\) ]]
	grep -qF " f<a<int, int>, a<a<int, int>, a<int, int> >, " "$BATS_TEST_TMPDIR/perf"
	grep -qF "[...]+0x" "$BATS_TEST_TMPDIR/perf"
	[ "$(longest "$BATS_TEST_TMPDIR/perf")" -lt 5000 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/perf")" -lt $((4 << 20)) ]
	# fg-fold --inline demangles every symbol of the program to place its frames: the
	# bomb is cut there too (the frame is then named from the DWARF: spin)
	run --separate-stderr timeout 20 fg-fold --inline "$BATS_TEST_TMPDIR/perf"
	[ "$status" -eq 0 ]
	[[ $output == *";main;spin "* ]]
	[[ $stderr =~ fg-fold:\ [1-9][0-9]*\ demangled\ names?\ cut\ at\ 4096\ bytes ]]
	run --separate-stderr timeout 20 fg-fold "$BATS_TEST_TMPDIR/perf" -o "$BATS_TEST_TMPDIR/folded"
	[ "$status" -eq 0 ]
	grep -qF ";main;f<a<int, int>, a<a<int, int>, a<int, int> >, " "$BATS_TEST_TMPDIR/folded"
	[ "$(longest "$BATS_TEST_TMPDIR/folded")" -lt 5000 ]
	# fg-svg and fg-top downstream: bounded too
	run --separate-stderr timeout 20 fg-svg "$BATS_TEST_TMPDIR/folded" -o "$BATS_TEST_TMPDIR/svg"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/svg")" -lt $((4 << 20)) ]
	run --separate-stderr timeout 20 fg-top --batch "$BATS_TEST_TMPDIR/perf"
	[ "$status" -eq 0 ]
	[[ $output == *"f<a<int, int>"* ]]
	[ "${#output}" -lt $((1 << 20)) ]
}

@test "ELF headers: a sparse file claiming millions of sections is refused before libelf reads it" {
	requires btf perf_event
	local bomb=$S/user/bomb.so t=$BATS_TEST_TMPDIR i pid
	cp "$FG_BUILD/tests/tools/elf-sections" "$S/build/elf-sections"
	chmod a+rx "$S/build/elf-sections"
	# 4 million sections claimed the extended way (e_shnum 0, section 0's sh_size), in 512 MiB,
	# 12 KiB on disk: libelf allocates about 200 bytes for each before anyone can check
	"${AS_USER[@]}" "$S/build/elf-sections" "$bomb" 4000000 $((512 << 20)) 10 &
	pid=$!
	PIDS+=($pid)
	for ((i = 0; i < 50; i++)); do
		grep -q "$bomb" "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.1
	done
	[ "$(du -k "$bomb" | cut -f1)" -lt 100 ]
	# root profiles the machine while the user runs in the file's code
	/usr/bin/time -f %M -o "$t/sample.rss" fg-sample -v -d 2 2>"$t/sample.err" |
		/usr/bin/time -f %M -o "$t/sym.rss" fg-sym >"$t/perf" 2>"$t/sym.err"
	local sample_kb sym_kb began
	sample_kb=$(tail -n 1 "$t/sample.rss")
	sym_kb=$(tail -n 1 "$t/sym.rss")
	began=$(sed -nE 's/.*sampling began ([0-9]+) ms after.*/\1/p' "$t/sample.err")
	echo "# fg-sample ${sample_kb} KB, fg-sym ${sym_kb} KB; sampling began ${began} ms after the start" >&3
	# the user's process was sampled in the file
	[ "$(grep -c " ($bomb)\$" "$t/perf")" -gt 10 ]
	# the file was refused, and said so, by both tools
	grep -qE '^fg-sample: cfi: [1-9][0-9]* mapped files refused: their ELF headers claim more sections' \
		"$t/sample.err"
	grep -qE '^fg-sym: [1-9][0-9]* files refused: their ELF headers claim more sections' "$t/sym.err"
	# neither grew by the 800 MB libelf would have taken (unbounded: fg-sample 822 MB, fg-sym 850 MB)
	[ "$sample_kb" -lt 300000 ]
	[ "$sym_kb" -lt 300000 ]
}

# outputs_inputs: in $BATS_TEST_TMPDIR, a capture (in.fgr), its perf text (in.perf)
# and its folded stacks (in.folded), for every tool's -o
outputs_inputs() {
	local t=$BATS_TEST_TMPDIR
	anon 42 >"$t/in.txt"
	stream "$t/in.txt" "$t/in.fgr"
	fg-sym --proc-root "$t" "$t/in.fgr" >"$t/in.perf" 2>/dev/null
	fg-fold "$t/in.perf" >"$t/in.folded"
}

# write_o TOOL OUT: `fg` TOOL -o OUT on the inputs above
write_o() {
	local t=$BATS_TEST_TMPDIR
	case $1 in
	fg-sym) fg --separate-stderr fg-sym --proc-root "$t" -o "$2" "$t/in.fgr" ;;
	fg-fold) fg --separate-stderr fg-fold -o "$2" "$t/in.perf" ;;
	fg-svg) fg --separate-stderr fg-svg -o "$2" "$t/in.folded" ;;
	fg-pprof) fg --separate-stderr fg-pprof -F 99 -o "$2" "$t/in.perf" ;;
	fg-diff) fg --separate-stderr fg-diff -o "$2" "$t/in.folded" "$t/in.folded" ;;
	esac
}

@test "-o onto a user's set-ID file: root's file carries neither the set-ID bits nor the user's, for every tool" {
	local tool out=$S/user/setid want
	outputs_inputs
	umask 022
	for tool in fg-sym fg-fold fg-svg fg-pprof fg-diff; do
		as_user sh -c 'rm -f "$1" && : >"$1" && chmod 06777 "$1"' sh "$out"
		write_o $tool "$out"
		[ "$status" -eq 0 ]
		[ -s "$out" ]
		# root's own file, as a new one would be: 0644 under umask 022, perf text 0600
		want=644
		[ $tool = fg-sym ] && want=600
		[ "$(stat -c %U:%a "$out")" = "root:$want" ]
		! as_user sh -c 'echo x >>"$1"' sh "$out" 2>/dev/null
	done
	rm "$out"
}

@test "-o onto a link or a FIFO another user planted: refused by every tool, nothing written where it points" {
	local tool out=$S/user/out victim=$S/root/precious fifo=$S/user/fifo
	outputs_inputs
	echo precious >"$victim"
	as_user ln -s "$victim" "$out"
	for tool in fg-sym fg-fold fg-svg fg-pprof fg-diff; do
		write_o $tool "$out"
		[ "$status" -eq 1 ]
		[[ $stderr == *"$tool: cannot "*" '$out': Operation not permitted"* ]]
		[ "$(cat "$victim")" = precious ]
		[ -L "$out" ]
	done
	! ls -A "$S/user" | grep -q '^\.out\.'
	# a FIFO: root's output would go to whoever reads it
	as_user mkfifo -m 666 "$fifo"
	fg --separate-stderr timeout 10 fg-sym --proc-root "$BATS_TEST_TMPDIR" -o "$fifo" \
		"$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-sym: cannot open '$fifo': Operation not permitted"* ]]
	fg --separate-stderr timeout 10 fg-svg -o "$fifo" "$BATS_TEST_TMPDIR/in.folded"
	[ "$status" -eq 1 ]
	# root's own link is followed, as a shell's > would: the link stays, its file is written
	ln -s precious "$S/root/link"
	write_o fg-svg "$S/root/link"
	[ "$status" -eq 0 ]
	[ -L "$S/root/link" ]
	grep -q '<svg' "$victim"
	rm -f "$out" "$fifo" "$victim" "$S/root/link"
}

@test "root's capture and perf text are root's alone: fg-sample -o and fg-sym -o write 0600, whatever the umask" {
	requires btf perf_event
	umask 000
	# frame pointers: sampling at once (no tables to build); a workload to sample, since an
	# idle machine gives a second system-wide no sample (idle is left out)
	fg --separate-stderr fg-sample --call-graph fp -F 999 -o "$S/cap.fgr" -- "$WORKLOADS/split7030" 0.5
	[ "$status" -eq 0 ]
	[ "$(stat -c %U:%a "$S/cap.fgr")" = root:600 ]
	! as_user cat "$S/cap.fgr" >/dev/null 2>&1
	fg --separate-stderr fg-sym -o "$S/cap.perf" "$S/cap.fgr"
	[ "$status" -eq 0 ]
	[ "$(stat -c %U:%a "$S/cap.perf")" = root:600 ]
	grep -q cpu-clock "$S/cap.perf"
	! as_user cat "$S/cap.perf" >/dev/null 2>&1
	# a link the user planted under the name is not followed
	as_user ln -s "$S/root/victim-cap" "$S/user/cap.fgr"
	fg --separate-stderr fg-sample -F 99 -d 0.3 -o "$S/user/cap.fgr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-sample: cannot open '$S/user/cap.fgr': Operation not permitted"* ]]
	[ ! -e "$S/root/victim-cap" ]
	rm -f "$S/cap.fgr" "$S/cap.perf" "$S/user/cap.fgr"
}

@test "a capture of root's made readable by mistake: the user's fg-sym will not name it" {
	local cap=$S/cap-readable.fgr mine=$S/user/mine.fgr
	outputs_inputs
	cp "$BATS_TEST_TMPDIR/in.fgr" "$cap"
	chmod 644 "$cap"
	local want="fg-sym: refusing to read '$cap': it belongs to root, not to you; a capture of root's holds kernel addresses and the mappings of processes that are not yours to see (-f to read it anyway)"
	fg --separate-stderr as_user fg-sym --proc-root "$BATS_TEST_TMPDIR" "$cap"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "$want" ]
	# standard input redirected from it: the same
	fg --separate-stderr as_user fg-sym --proc-root "$BATS_TEST_TMPDIR" <"$cap"
	[ "$status" -eq 1 ]
	[ "$stderr" = "${want/"'$cap'"/"'<stdin>'"}" ]
	# the user's own capture is named, and root's through a pipe, which root chose to hand over
	as_user cp "$cap" "$mine"
	fg --separate-stderr as_user fg-sym --proc-root "$BATS_TEST_TMPDIR" "$mine"
	[ "$status" -eq 0 ]
	[[ $output == *"[unknown] (//anon)"* ]]
	fg --separate-stderr sh -c 'f=$1 && shift && cat "$f" | "$@"' sh "$cap" "${AS_USER[@]}" fg-sym --proc-root "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	rm -f "$cap" "$mine"
}

@test "JIT maps: eight of a user's 65 MB maps cost root's fg-sym bounded memory and time, the cut counted" {
	requires /usr/bin/time
	local uid pid t=$BATS_TEST_TMPDIR pids=() rss start
	uid=$(uid_of_user)
	# the most one map may hold, in short lines: five million entries
	awk 'BEGIN { for (i = 0; i < 5000000; i++) printf "%x 1 f\n", 268435456 + i * 16 }' \
		>"$t/big.map"
	for ((pid = 31999; pid > 1000 && ${#pids[@]} < 8; pid--)); do
		[ -e "/proc/$pid" ] || [ -e "/tmp/perf-$pid.map" ] || pids+=($pid)
	done
	: >"$t/in.txt"
	for pid in "${pids[@]}"; do
		cp "$t/big.map" "/tmp/perf-$pid.map"
		chown "$USER_NAME:" "/tmp/perf-$pid.map"
		MAPS+=("/tmp/perf-$pid.map")
		{
			echo "creds pid=$pid uid=$uid"
			echo "mapping pid=$pid start=10000000 end=20000000 prot=rwx path=//anon"
			echo "sample pid=$pid u=10001010"
			echo "exit pid=$pid"
		} >>"$t/in.txt"
	done
	stream "$t/in.txt" "$t/in.fgr"
	start=$SECONDS
	fg --separate-stderr /usr/bin/time -f 'maxrss %M' fg-sym -v "$t/in.fgr"
	[ "$status" -eq 0 ]
	# 4,194,304 entries at the most: a few hundred MB, not gigabytes, and seconds
	rss=$(sed -n 's/^maxrss //p' <<<"$stderr")
	echo "# fg-sym: $rss KiB, $((SECONDS - start)) s" >&3
	[ "$rss" -lt 1200000 ]
	[ $((SECONDS - start)) -lt 40 ]
	# the first map named its frame; the cut said once, and counted
	[[ ${lines[1]} == *" f+0x0 (/tmp/perf-${pids[0]}.map)" ]]
	[[ $stderr == *"fg-sym: '/tmp/perf-${pids[0]}.map' read up to byte "*" only: the JIT maps of the run reached "*" bytes and 4194304 entries in all, the most read (and more are not)"* ]]
	[ "$(grep -c 'read up to byte' <<<"$stderr")" -eq 1 ]
	[[ $stderr == *"fg-sym: 8 JIT maps cut short or not read: the JIT maps of one run are read up to 256 MiB and 4194304 entries in all; name fewer processes at a time (fg-sample -p PID)"* ]]
	[[ $stderr == *"7 no JIT map"* ]]
}

@test "a user's program in a directory named x)y or a(b is named as itself, not as 'main+0x4d ' (issue 27)" {
	requires btf perf_event
	local d=$S/user xy ab
	as_user mkdir -p "$d/x)y" "$d/a(b"
	as_user cp "$S/build/spin" "$d/x)y/burn"
	as_user cp "$S/build/spin" "$d/a(b/burn"
	"${AS_USER[@]}" "$d/x)y/burn" xy 3 &
	xy=$!
	PIDS+=($xy)
	"${AS_USER[@]}" "$d/a(b/burn" ab 3 &
	ab=$!
	PIDS+=($ab)
	sleep 0.2
	fg-sample -F 499 -d 1 -p "$xy" -p "$ab" 2>"$BATS_TEST_TMPDIR/sample.err" |
		fg-sym >"$BATS_TEST_TMPDIR/perf" 2>"$BATS_TEST_TMPDIR/sym.err"
	fg-fold "$BATS_TEST_TMPDIR/perf" >"$BATS_TEST_TMPDIR/folded" 2>"$BATS_TEST_TMPDIR/fold.err"
	# fg-sym wrote the paths as they are
	grep -qF " spin+0x" "$BATS_TEST_TMPDIR/perf"
	grep -qF "($d/x)y/burn)" "$BATS_TEST_TMPDIR/perf"
	grep -qF "($d/a(b/burn)" "$BATS_TEST_TMPDIR/perf"
	# each program's stacks end in main;spin; no offset or module is left in a name
	grep -q '^xy;.*main;spin[; ]' "$BATS_TEST_TMPDIR/folded"
	grep -q '^ab;.*main;spin[; ]' "$BATS_TEST_TMPDIR/folded"
	! grep -qF '+0x' "$BATS_TEST_TMPDIR/folded"
	! grep -qF '/burn' "$BATS_TEST_TMPDIR/folded"
}

@test "perf script -F comm,ip,sym,dso: headers of the comm alone, spaces and numbers in it, all folded (issue 27)" {
	requires perf
	# one program's comm holds numbers; another's reads as a whole header ("PID/TID TIME: PERIOD EVENT:")
	"${AS_USER[@]}" "$S/build/spin" "cxx 12 34" 3 &
	local pid=$! forger
	PIDS+=($pid)
	"${AS_USER[@]}" "$S/build/spin" "1/1 1: 999 e:" 3 &
	forger=$!
	PIDS+=($forger)
	sleep 0.2
	perf record --buildid-mmap --no-bpf-event -B -q -e cpu-clock -F 499 -g -p "$pid,$forger" \
		-o "$BATS_TEST_TMPDIR/perf.data" -- sleep 1 2>/dev/null
	perf script -i "$BATS_TEST_TMPDIR/perf.data" -F comm,ip,sym,dso >"$BATS_TEST_TMPDIR/perf" 2>/dev/null
	fg --separate-stderr fg-fold "$BATS_TEST_TMPDIR/perf"
	[ "$status" -eq 0 ]
	[[ $stderr != *"outside a sample"* ]]
	# every sample of the first, under its whole comm, none weighing 12 or 34
	local n sum
	n=$(grep -c '^cxx 12 34 $' "$BATS_TEST_TMPDIR/perf")
	echo "# $n samples of cxx 12 34" >&3
	[ "$n" -gt 20 ]
	grep -q '^1/1 1: 999 e: $' "$BATS_TEST_TMPDIR/perf"
	sum=$(grep '^cxx_12_34;' <<<"$output" | awk '{ s += $NF } END { print s }')
	[ "$sum" -eq "$n" ]
	[[ $output == *"cxx_12_34;"*"main;spin"* ]]
}
