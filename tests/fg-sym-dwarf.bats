#!/usr/bin/env bats
# fg-sym --inline/--srcline against bad DWARF: truncated, corrupt, over the size
# bound, or pointing at other files (a FIFO as the supplementary or .dwo file).
# The frame is still named from the symbol table, the reason is counted, and
# nothing blocks.  ELF fixtures are built here from tests/fixtures/sym/prog.c.
bats_require_minimum_version 1.5.0
load helpers
load sym-fixture

F=$FIXTURES/sym

setup_file() {
	local d=$BATS_FILE_TMPDIR
	gcc -g -O1 -fno-omit-frame-pointer -fPIE -pie "$F/prog.c" -o "$d/pie"
	objcopy --dump-section .debug_info="$d/info" --dump-section .debug_str="$d/str" "$d/pie"
}

# run_on FILE ARGS...: fg-sym ARGS on a sample in fixture_leaf+1 of FILE
run_on() {
	local file=$1
	shift
	run_sym "$file" $(($(addr_of "$file" fixture_leaf) + 1)) "$@"
}

# assert_named_without_source FILE REASON: the frame is named, without a source line
assert_named_without_source() {
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($1)" ]]
	[ "${#lines[@]}" -eq 2 ]
	assert_stderr_contains "1 named frames without source information"
	assert_stderr_contains "1 $2"
}

@test "fg-sym --srcline: good DWARF gives a source line and counts nothing" {
	run_on "$BATS_FILE_TMPDIR/pie" --srcline
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($BATS_FILE_TMPDIR/pie)" ]]
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	assert_stderr_contains "0 named frames without source information"
}

@test "fg-sym --srcline: DWARF without .debug_aranges (clang) is placed by the units' ranges" {
	local f=$BATS_TEST_TMPDIR/clang
	clang -g -O1 -fno-omit-frame-pointer -fPIE -pie "$F/prog.c" -o "$f"
	[ -z "$(readelf -SW "$f" | grep debug_aranges)" ]
	run_on "$f" --srcline
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($f)" ]]
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	assert_stderr_contains "0 named frames without source information"
}

@test "fg-sym --srcline: a file without DWARF is counted as such" {
	local f=$BATS_TEST_TMPDIR/nodwarf
	strip --strip-debug "$BATS_FILE_TMPDIR/pie" -o "$f"
	run_on "$f" --srcline --inline
	assert_named_without_source "$f" "no DWARF"
}

@test "fg-sym --srcline: truncated .debug_info" {
	local f=$BATS_TEST_TMPDIR/trunc
	head -c $(($(stat -c %s "$BATS_FILE_TMPDIR/info") / 3)) "$BATS_FILE_TMPDIR/info" >"$BATS_TEST_TMPDIR/half"
	objcopy --update-section .debug_info="$BATS_TEST_TMPDIR/half" "$BATS_FILE_TMPDIR/pie" "$f"
	run_on "$f" --srcline --inline
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($f)" ]]
	# libdw may still read the units before the cut; whatever it makes of it, nothing crashes
	[[ $stderr == *"named frames without source information"* ]]
}

@test "fg-sym --srcline: garbage .debug_info is corrupt DWARF" {
	local f=$BATS_TEST_TMPDIR/garbage
	head -c 64 /dev/zero | tr '\0' '\377' >"$BATS_TEST_TMPDIR/ff"
	objcopy --update-section .debug_info="$BATS_TEST_TMPDIR/ff" "$BATS_FILE_TMPDIR/pie" "$f"
	run_on "$f" --srcline
	assert_named_without_source "$f" "corrupt DWARF"
}

@test "fg-sym --srcline: a .debug_str without its final NUL is corrupt DWARF" {
	local f=$BATS_TEST_TMPDIR/nonul
	{ head -c -1 "$BATS_FILE_TMPDIR/str"; printf x; } >"$BATS_TEST_TMPDIR/str"
	objcopy --update-section .debug_str="$BATS_TEST_TMPDIR/str" "$BATS_FILE_TMPDIR/pie" "$f"
	run_on "$f" --srcline
	assert_named_without_source "$f" "corrupt DWARF"
}

@test "fg-sym --srcline: DWARF that would decompress past the bound is not read" {
	local f=$BATS_TEST_TMPDIR/huge off
	objcopy --compress-debug-sections=zlib-gabi "$BATS_FILE_TMPDIR/pie" "$f"
	# the compression header's ch_size (after ch_type, ch_reserved): 1 TiB
	off=$(readelf -SW "$f" | awk '$2 == ".debug_info" { print $5 }')
	[ -n "$off" ]
	printf '\0\0\0\0\0\1\0\0' | dd of="$f" bs=1 seek=$((0x$off + 8)) conv=notrunc status=none
	run_on "$f" --srcline
	assert_named_without_source "$f" "DWARF over the size limit"
}

@test "fg-sym --srcline: a supplementary file that is a FIFO is not opened" {
	local f=$BATS_TEST_TMPDIR/alt
	# .gnu_debugaltlink: a file name, then a build-id no file has
	{ printf 'alt.fifo\0'; printf '\x5a%.0s' $(seq 20); } >"$BATS_TEST_TMPDIR/altlink"
	objcopy --add-section .gnu_debugaltlink="$BATS_TEST_TMPDIR/altlink" "$BATS_FILE_TMPDIR/pie" "$f"
	mkfifo "$BATS_TEST_TMPDIR/alt.fifo"
	run_on "$f" --srcline --inline
	assert_named_without_source "$f" "no supplementary DWARF file"
	# an absolute name too
	{ printf '%s\0' "$BATS_TEST_TMPDIR/alt.fifo"; printf '\x5a%.0s' $(seq 20); } >"$BATS_TEST_TMPDIR/altlink"
	objcopy --add-section .gnu_debugaltlink="$BATS_TEST_TMPDIR/altlink" "$BATS_FILE_TMPDIR/pie" "$f"
	run_on "$f" --srcline
	assert_named_without_source "$f" "no supplementary DWARF file"
}

# altlink FILE NAME ID OUT: FILE with a .gnu_debugaltlink naming NAME, build-id ID (hex)
altlink() {
	{ printf '%s\0' "$2"; printf "$(sed 's/../\\x&/g' <<<"$3")"; } >"$BATS_TEST_TMPDIR/altlink"
	objcopy --add-section .gnu_debugaltlink="$BATS_TEST_TMPDIR/altlink" "$1" "$4"
}

@test "fg-sym --srcline: the supplementary file is found by its name, and checked by build-id" {
	local d=$BATS_TEST_TMPDIR id
	# any ELF file with a build-id stands for a dwz file: this DWARF makes no use of it
	mkdir "$d/dwz"
	objcopy --only-keep-debug "$BATS_FILE_TMPDIR/pie" "$d/dwz/common.debug"
	id=$(readelf -n "$d/dwz/common.debug" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	altlink "$BATS_FILE_TMPDIR/pie" dwz/common.debug "$id" "$d/rel"
	run_on "$d/rel" --srcline
	[ "$status" -eq 0 ]
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	assert_stderr_contains "0 named frames without source information"
	altlink "$BATS_FILE_TMPDIR/pie" "$d/dwz/common.debug" "$id" "$d/abs"
	run_on "$d/abs" --srcline
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	# the same file, but another build-id asked for
	altlink "$BATS_FILE_TMPDIR/pie" dwz/common.debug \
		"${id:0:-2}$(printf '%02x' $(((0x${id: -2} + 1) & 255)))" "$d/wrong"
	run_on "$d/wrong" --srcline
	assert_named_without_source "$d/wrong" "no supplementary DWARF file"
}

@test "fg-sym --srcline: the supplementary file is found by build-id, under --symfs" {
	local d=$BATS_TEST_TMPDIR id
	# another program's debug file stands for the dwz file: a build-id of its own
	gcc -g -O0 "$F/prog.c" -o "$d/other"
	objcopy --only-keep-debug "$d/other" "$d/common.debug"
	id=$(readelf -n "$d/common.debug" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	mkdir -p "$d/symfs/bin"
	altlink "$BATS_FILE_TMPDIR/pie" nowhere/common.debug "$id" "$d/symfs/bin/prog"
	{
		mapping 42 $BASE "$d/symfs/bin/prog" | sed 's|path=.*|path=/bin/prog|'
		echo "sample pid=42 u=$(printf '%x' $((BASE + $(addr_of "$d/symfs/bin/prog" fixture_leaf) + 1)))"
	} >"$d/in.txt"
	fgr-make "$d/in.txt" >"$d/in.fgr"
	fg --separate-stderr fg-sym -v --symfs "$d/symfs" --srcline "$d/in.fgr"
	assert_named_without_source /bin/prog "no supplementary DWARF file"
	mkdir -p "$d/symfs/usr/lib/debug/.build-id/${id:0:2}"
	cp "$d/common.debug" "$d/symfs/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	fg --separate-stderr fg-sym -v --symfs "$d/symfs" --srcline "$d/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 (/bin/prog)" ]]
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	assert_stderr_contains "0 named frames without source information"
}

@test "fg-sym --srcline: split DWARF whose .dwo is a FIFO is not opened" {
	local d=$BATS_TEST_TMPDIR/split
	mkdir "$d"
	(cd "$d" && gcc -g -O1 -fno-omit-frame-pointer -fPIE -pie -gsplit-dwarf "$F/prog.c" -o split)
	local dwo
	dwo=$(ls "$d"/*.dwo)
	[ -n "$dwo" ]
	rm "$dwo"
	mkfifo "$dwo"
	run_on "$d/split" --srcline --inline
	assert_named_without_source "$d/split" "split DWARF"
}
