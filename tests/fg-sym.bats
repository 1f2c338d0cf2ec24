#!/usr/bin/env bats
# fg-sym: naming frames from record streams.  ELF fixtures are built here from
# tests/fixtures/sym/*.c; record streams are written with fgr-make from text.
bats_require_minimum_version 1.5.0
load helpers

F=$FIXTURES/sym
BASE=0x555555554000

setup_file() {
	local d=$BATS_FILE_TMPDIR
	local cflags="-g -O1 -fno-omit-frame-pointer"
	gcc $cflags -fPIE -pie -rdynamic "$F/prog.c" -o "$d/pie"
	gcc $cflags -fno-pie -no-pie "$F/prog.c" -o "$d/nopie"
	# a text segment whose address differs from its file offset: the load bias matters
	gcc $cflags -fPIE -pie -Wl,-Ttext-segment=0x200000 "$F/prog.c" -o "$d/pie-moved"
	# only .dynsym left
	strip --strip-all "$d/pie" -o "$d/pie-stripped"
	# separate debug information, found through .gnu_debuglink
	objcopy --only-keep-debug "$d/pie" "$d/pie-dl.debug"
	strip --strip-all "$d/pie" -o "$d/pie-dl"
	(cd "$d" && objcopy --add-gnu-debuglink=pie-dl.debug pie-dl)
	# ... and through the build-id tree, under a --symfs root
	mkdir -p "$d/symfs/bin"
	local id
	id=$(readelf -n "$d/pie" | awk '/Build ID/ { print $3 }')
	mkdir -p "$d/symfs/usr/lib/debug/.build-id/${id:0:2}"
	cp "$d/pie-dl.debug" "$d/symfs/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	cp "$d/pie-stripped" "$d/symfs/bin/fixture"
	# no build-id: the debuglink's CRC decides
	gcc $cflags -fPIE -pie -Wl,--build-id=none "$F/prog.c" -o "$d/nobid"
	mkdir -p "$d/crc"
	objcopy --only-keep-debug "$d/nobid" "$d/crc/nobid.debug"
	strip --strip-all "$d/nobid" -o "$d/crc/nobid"
	(cd "$d/crc" && objcopy --add-gnu-debuglink=nobid.debug nobid)
	g++ $cflags -fPIE -pie "$F/templ.cc" -o "$d/templ"
	gcc $cflags -fPIC -shared "$F/lib.c" -o "$d/libfixture.so"
}

# dev_of FILE: "MAJOR MINOR" of the device holding FILE
dev_of() {
	local dev
	dev=$(stat -c %d "$1")
	echo $(((dev >> 8 & 0xfff) | (dev >> 32 & ~0xfff))) $(((dev & 0xff) | (dev >> 12 & ~0xff)))
}

# mapping PID BASE FILE [PATH [extra...]]: the mapping line of FILE's executable segment
mapping() {
	local pid=$1 base=$2 file=$3 path=${4:-$3} vaddr off size dev
	read -r off vaddr size < <(readelf -lW "$file" | awk '$1 == "LOAD" && /E 0x/ { print $2, $3, $5 }')
	dev=($(dev_of "$file"))
	local start=$((base + (vaddr & ~0xfff)))
	local end=$((start + ((size + (vaddr & 0xfff) + 0xfff) & ~0xfff)))
	shift 4 2>/dev/null || shift $#
	printf 'mapping pid=%d start=%x end=%x pgoff=%x maj=%d min=%d ino=%d %s path=%s\n' \
		"$pid" "$start" "$end" $((off & ~0xfff)) "${dev[0]}" "${dev[1]}" \
		"$(stat -c %i "$file")" "$*" "$path"
}

# ip BASE FILE SYMBOL OFFSET: the address of SYMBOL+OFFSET once FILE is mapped at BASE
ip() {
	local a
	a=$(nm "$2" | awk -v s="$3" '$3 == s { print $1; exit }')
	[ -n "$a" ] || { echo "no symbol $3 in $2" >&2; return 1; }
	printf '%x' $(($1 + 0x$a + $4))
}

# sym_made ARGS...: fgr-make < $BATS_TEST_TMPDIR/in.txt | fg-sym ARGS, output in $output/$stderr
sym_made() {
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym -v "$@" "$BATS_TEST_TMPDIR/in.fgr"
}

@test "fg-sym -h prints the usage on stdout and exits 0" {
	fg --separate-stderr fg-sym -h
	[ "$status" -eq 0 ]
	[[ $output == "usage: fg-sym "* ]]
	[ -z "$stderr" ]
}

@test "fg-sym -V prints the version" {
	fg fg-sym -V
	[ "$status" -eq 0 ]
	[[ $output == "fg-sym "[0-9]* ]]
}

@test "fg-sym: an unknown option prints the usage on stderr and exits 2" {
	fg --separate-stderr fg-sym --bogus
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == *"unrecognized option"* ]]
	[[ $stderr == *"usage: fg-sym"* ]]
}

@test "fg-sym: --help lists every option the man page documents, and no other" {
	local man=$TOP/man/fg-sym.1 from_man from_help
	from_man=$(grep -oE 'Fl \\?-?[a-zA-Z][-a-zA-Z\\]*' "$man" | sed 's/\\//g' | awk '{ print "-" $2 }' | sort -u)
	from_help=$(fg-sym --help | grep -oE '(^| |\[)--?[a-zA-Z][-a-zA-Z]*([] ,|]|$)' |
		sed -E 's/^[ []//; s/[] ,|]$//' | sort -u)
	[ "$(wc -l <<<"$from_man")" -gt 12 ]
	diff <(echo "$from_man") <(echo "$from_help")
}

@test "fg-sym: two operands are a usage error" {
	fg --separate-stderr fg-sym a b
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-sym: too many operands"* ]]
}

@test "fg-sym: a missing input file" {
	fg --separate-stderr fg-sym /nonexistent/run.fgr
	[ "$status" -eq 1 ]
	[ "$stderr" = "fg-sym: cannot open '/nonexistent/run.fgr': No such file or directory" ]
}

@test "fg-sym: PIE executable, perf script format" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "sample pid=42 tid=43 cpu=1 time=1234567891000 comm=fixture u=$(ip $BASE "$d/pie" fixture_static 4),$(ip $BASE "$d/pie" fixture_leaf 9),$(ip $BASE "$d/pie" fixture_middle 0x10)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	local a
	a=$(nm "$d/pie" | awk '$3 == "fixture_static" { print $1 }')
	printf 'fixture    42/43    [001]  1234.567891:          1 cpu-clock: \n' >"$BATS_TEST_TMPDIR/want"
	printf '\t%16x fixture_static+0x4 (%s)\n' $((0x$a + 4)) "$d/pie" >>"$BATS_TEST_TMPDIR/want"
	diff -u "$BATS_TEST_TMPDIR/want" <(head -n 2 <<<"$output")
	[[ ${lines[2]} == *" fixture_leaf+0x9 ($d/pie)" ]]
	[[ ${lines[3]} == *" fixture_middle+0x10 ($d/pie)" ]]
	[ "${#lines[@]}" -eq 4 ]
	[[ $stderr == *"1 samples, 3 frames named, 0 unnamed"* ]]
}

@test "fg-sym: non-PIE executable" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 0 "$d/nopie"
		echo "sample pid=42 u=$(ip 0 "$d/nopie" fixture_leaf 2),$(ip 0 "$d/nopie" main 5)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x2 ($d/nopie)" ]]
	[[ ${lines[2]} == *" main+0x5 ($d/nopie)" ]]
}

@test "fg-sym: load bias from the program headers (segment address != file offset)" {
	local d=$BATS_FILE_TMPDIR base=0x7f1234500000
	# the file's addresses start at 0x200000; mapped at base - 0x200000 + ...
	{
		mapping 42 $((base - 0x200000)) "$d/pie-moved"
		echo "sample pid=42 u=$(ip $((base - 0x200000)) "$d/pie-moved" fixture_middle 3)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	local a
	a=$(nm "$d/pie-moved" | awk '$3 == "fixture_middle" { print $1 }')
	[ "${lines[1]}" = "$(printf '\t%16x fixture_middle+0x3 (%s)' $((0x$a + 3)) "$d/pie-moved")" ]
}

@test "fg-sym: a shared library at a non-zero base" {
	local d=$BATS_FILE_TMPDIR base=0x7f0000200000
	{
		mapping 42 $base "$d/libfixture.so"
		echo "sample pid=42 u=$(ip $base "$d/libfixture.so" fixture_lib_func 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" fixture_lib_func+0x1 ($d/libfixture.so)" ]]
}

@test "fg-sym: a stripped file is named from .dynsym; what is not there stays [unknown] with its module" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie-stripped"
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_leaf 1),$(ip $BASE "$d/pie" fixture_static 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie-stripped)" ]]
	[[ ${lines[2]} == *" [unknown] ($d/pie-stripped)" ]]
	[[ $stderr == *"1 frames named, 1 unnamed (1 no symbols,"* ]]
}

@test "fg-sym: a frame seen again is named and counted again; a new mapping at its address renames it" {
	local d=$BATS_FILE_TMPDIR v s
	v=$(ip $BASE "$d/pie" fixture_leaf 1)
	s=$(ip $BASE "$d/pie" fixture_static 1)
	# what the address is in templ, named by a run that never saw pie there
	{
		mapping 43 $BASE "$d/templ"
		echo "sample pid=43 u=$v"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	local in_templ=${lines[1]}
	[[ $in_templ == *"($d/templ)" ]]
	{
		mapping 42 $BASE "$d/pie"
		mapping 45 $BASE "$d/pie"
		for i in 1 2; do
			echo "sample pid=42 time=$((1000 + i)) u=$v"
			echo "sample pid=45 time=$((1000 + i)) u=$v"
		done
		mapping 42 $BASE "$d/templ" "$d/templ" time=2000
		for i in 1 2; do
			echo "sample pid=42 time=$((2000 + i)) u=$v"
			echo "sample pid=45 time=$((2000 + i)) u=$v"
		done
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[ "${lines[3]}" = "${lines[1]}" ]
	[ "${lines[5]}" = "${lines[1]}" ]
	[ "${lines[7]}" = "${lines[1]}" ]
	[ "${lines[9]}" = "$in_templ" ]
	[ "${lines[11]}" = "${lines[1]}" ]
	[ "${lines[13]}" = "$in_templ" ]
	[ "${lines[15]}" = "${lines[1]}" ]
	# unnamed frames are counted each time too
	{
		mapping 44 $BASE "$d/pie-stripped"
		for i in 1 2 3; do
			echo "sample pid=44 u=$s,$v"
		done
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" [unknown] ($d/pie-stripped)" ]]
	[ "${lines[4]}" = "${lines[1]}" ]
	[ "${lines[7]}" = "${lines[1]}" ]
	[[ $stderr == *" 3 samples, 3 frames named, 3 unnamed (3 no symbols,"* ]]
}

@test "fg-sym: separate debug information through .gnu_debuglink" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie-dl"
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_static 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" fixture_static+0x1 ($d/pie-dl)" ]]
}

@test "fg-sym: a debuglink file with the wrong checksum is not used" {
	local d=$BATS_TEST_TMPDIR
	cp "$BATS_FILE_TMPDIR/pie-dl" "$d/pie-dl"
	# another build's debug file under the same name
	gcc -g -O0 -fPIE -pie "$F/prog.c" -o "$d/other"
	objcopy --only-keep-debug "$d/other" "$d/pie-dl.debug"
	# the build-ids differ: make the fixture's build-id check fail too
	{
		mapping 42 $BASE "$d/pie-dl"
		echo "sample pid=42 u=$(ip $BASE "$BATS_FILE_TMPDIR/pie" fixture_static 1)"
	} >"$d/in.txt"
	sym_made
	[[ ${lines[1]} == *" [unknown] ($d/pie-dl)" ]]
}

@test "fg-sym: without build-ids, a debuglink file is used only when its CRC matches" {
	local d=$BATS_TEST_TMPDIR
	cp "$BATS_FILE_TMPDIR/crc/nobid" "$BATS_FILE_TMPDIR/crc/nobid.debug" "$d/"
	{
		mapping 42 $BASE "$d/nobid"
		echo "sample pid=42 u=$(ip $BASE "$BATS_FILE_TMPDIR/nobid" fixture_static 1)"
	} >"$d/in.txt"
	sym_made
	[[ ${lines[1]} == *" fixture_static+0x1 ($d/nobid)" ]]
	# the same name, other contents
	printf 'x' >>"$d/nobid.debug"
	sym_made
	[[ ${lines[1]} == *" [unknown] ($d/nobid)" ]]
}

@test "fg-sym: debug information from the build-id tree under --symfs" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/symfs/bin/fixture" /bin/fixture
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_static 2)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --symfs "$d/symfs"
	[[ ${lines[1]} == *" fixture_static+0x2 (/bin/fixture)" ]]
	# without --symfs, /bin/fixture is not that file
	sym_made
	[[ ${lines[1]} == *" [unknown] (/bin/fixture)" ]]
	[[ $stderr == *"1 no file"* ]]
}

@test "fg-sym: C++ names demangled, template arguments kept; --no-demangle keeps them raw" {
	local d=$BATS_FILE_TMPDIR
	local twice
	twice=$(nm "$d/templ" | awk '$3 ~ /twiceIi/ { print $3; exit }')
	{
		mapping 42 $BASE "$d/templ"
		echo "sample pid=42 u=$(ip $BASE "$d/templ" _ZN7fixture6WidgetIlE3runEl 1),$(ip $BASE "$d/templ" "$twice" 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" fixture::Widget<long>::run+0x1 ($d/templ)" ]]
	[[ ${lines[2]} == *" fixture::twice<int>+0x1 ($d/templ)" ]]
	sym_made --no-demangle
	[[ ${lines[1]} == *" _ZN7fixture6WidgetIlE3runEl+0x1 ($d/templ)" ]]
}

@test "fg-sym: a file whose inode is not the mapped one is not used" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie" | sed 's/ ino=[0-9]* / ino=1 /'
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" [unknown] ($d/pie)" ]]
	[[ $stderr == *"0 frames named, 1 unnamed ("*", 1 file changed,"* ]]
}

@test "fg-sym: a recorded build-id the file cannot match means the file changed, even with no build-id at all" {
	local d=$BATS_FILE_TMPDIR id
	id=$(readelf -n "$d/pie" | awk '/Build ID/ { print $3 }')
	# the capture was of pie; the file at that path now has no build-id (another build)
	cp "$d/nobid" "$BATS_TEST_TMPDIR/app"
	{
		mapping 42 $BASE "$d/pie" "$BATS_TEST_TMPDIR/app" | sed "s/ ino=[0-9]* / ino=0 buildid=$id /"
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_leaf 1),$(ip $BASE "$d/pie" main 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($BATS_TEST_TMPDIR/app)" ]]
	[[ ${lines[2]} == *" [unknown] ($BATS_TEST_TMPDIR/app)" ]]
	[[ $stderr == *"0 frames named, 2 unnamed ("*", 2 file changed,"* ]]
	# a --symfs copy is checked by build-id too
	mkdir -p "$BATS_TEST_TMPDIR/symfs$BATS_TEST_TMPDIR"
	cp "$d/nobid" "$BATS_TEST_TMPDIR/symfs$BATS_TEST_TMPDIR/app"
	sym_made --proc-root "$BATS_TEST_TMPDIR" --symfs "$BATS_TEST_TMPDIR/symfs"
	[[ $stderr == *"2 file changed,"* ]]
	# the right build-id names it
	cp "$d/pie" "$BATS_TEST_TMPDIR/app"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($BATS_TEST_TMPDIR/app)" ]]
}

@test "fg-sym: a mapping with neither inode nor build-id opens no file" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie" | sed 's/ ino=[0-9]* / ino=0 /'
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	# (LeakSanitizer cannot run under ptrace)
	ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 fg --separate-stderr strace -f -e trace=open,openat -o "$BATS_TEST_TMPDIR/trace" \
		fg-sym -v --proc-root "$BATS_TEST_TMPDIR" --symfs "$d" "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($d/pie)" ]]
	[[ $stderr == *"0 frames named, 1 unnamed ("*", 1 no file identity)"* ]]
	! grep -q "\"$d/pie\"" "$BATS_TEST_TMPDIR/trace"
	! grep -q "\"$d$d/pie\"" "$BATS_TEST_TMPDIR/trace"
}

@test "fg-sym: a build-id in the mapping decides which file it is" {
	local d=$BATS_FILE_TMPDIR id
	id=$(readelf -n "$d/pie" | awk '/Build ID/ { print $3 }')
	{
		mapping 42 $BASE "$d/pie" | sed "s/ ino=[0-9]* / ino=0 buildid=$id /"
		echo "sample pid=42 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		mapping 43 $BASE "$d/pie" | sed "s/ ino=[0-9]* / ino=0 buildid=00112233445566778899aabbccddeeff00112233 /"
		echo "sample pid=43 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[[ ${lines[3]} == *" [unknown] ($d/pie)" ]]
}

@test "fg-sym: kernel frames from --kallsyms, modules in brackets, kernel before user" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "sample pid=42 k=ffffffff81000105,ffffffffc0a00010 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		echo "sample pid=0 comm=swapper k=ffffffff81000305,ffffffff00000000"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --kallsyms "$F/kallsyms"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\tffffffff81000105 helper+0x5 ([kernel.kallsyms])')" ]
	[ "${lines[2]}" = "$(printf '\tffffffffc0a00010 nft_do_chain+0x10 ([nf_tables])')" ]
	[[ ${lines[3]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[[ ${lines[4]} == "swapper     0/0     [000] "* ]]
	[ "${lines[5]}" = "$(printf '\tffffffff81000305 last_text+0x5 ([kernel.kallsyms])')" ]
	[ "${lines[6]}" = "$(printf '\tffffffff00000000 [unknown] ([kernel.kallsyms])')" ]
}

@test "fg-sym: hidden kernel addresses give one warning and [unknown] kernel frames" {
	printf 'sample pid=1 k=ffffffff81000105,ffffffff81000205\nsample pid=1 k=ffffffff81000105\n' \
		>"$BATS_TEST_TMPDIR/in.txt"
	sym_made --kallsyms "$F/kallsyms-hidden"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\tffffffff81000105 [unknown] ([kernel.kallsyms])')" ]
	[ "$(grep -c 'kptr_restrict' <<<"$stderr")" -eq 1 ]
	[[ $stderr == *"3 unnamed (3 no symbols,"* ]]
}

@test "fg-sym: a malformed --kallsyms names its line" {
	printf 'sample pid=1 k=ffffffff81000105\n' >"$BATS_TEST_TMPDIR/in.txt"
	printf 'ffffffff81000000 T _stext\nthis is not kallsyms\n' >"$BATS_TEST_TMPDIR/ks"
	sym_made --kallsyms "$BATS_TEST_TMPDIR/ks"
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-sym: '$BATS_TEST_TMPDIR/ks': malformed line 2; kernel frames stay unnamed"* ]]
}

@test "fg-sym: BPF code is named by the stream's ksym records, the last one at an address winning" {
	# a BPF program at an address kallsyms gives to a module (one read later, the program
	# gone, the module's code there would be no better: the stream knows what ran there)
	cat >"$BATS_TEST_TMPDIR/in.txt" <<-'EOF'
		ksym addr=ffffffffc0a00000 len=0x100 name=bpf_prog_0123456789abcdef_fg_sample
		sample pid=1 k=ffffffffc0a00010,ffffffff81000105
		sample pid=1 k=ffffffffc0a00100
		ksym addr=ffffffffc0a00000 len=0x10 time=5 gone=1 name=bpf_prog_0123456789abcdef_fg_sample
		sample pid=1 time=6 k=ffffffffc0a00010
		ksym addr=ffffffffc0a00008 len=0x40 time=7 name=bpf_prog_fedcba9876543210_other
		sample pid=1 time=8 k=ffffffffc0a00010
	EOF
	sym_made --kallsyms "$F/kallsyms"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\tffffffffc0a00010 bpf_prog_0123456789abcdef_fg_sample+0x10 ([bpf])')" ]
	[ "${lines[2]}" = "$(printf '\tffffffff81000105 helper+0x5 ([kernel.kallsyms])')" ]
	# past its end: kallsyms
	[ "${lines[4]}" = "$(printf '\tffffffffc0a00100 nft_other+0xc0 ([nf_tables])')" ]
	# unloaded: the last code known there keeps its name; another loaded over it, the new one
	[ "${lines[6]}" = "$(printf '\tffffffffc0a00010 bpf_prog_0123456789abcdef_fg_sample+0x10 ([bpf])')" ]
	[ "${lines[8]}" = "$(printf '\tffffffffc0a00010 bpf_prog_fedcba9876543210_other+0x8 ([bpf])')" ]
	[[ $stderr == *"fg-sym: 3 kernel frames in BPF code named by the stream's ksym records"* ]]
	# a record of no bytes of code: refused, named by its offset, what came before written
	printf 'sample pid=1 k=ffffffff81000105\nksym addr=ffffffffc0a00000 len=0 name=x\n' \
		>"$BATS_TEST_TMPDIR/in.txt"
	sym_made --kallsyms "$F/kallsyms"
	[ "$status" -eq 1 ]
	[[ ${lines[1]} == *" helper+0x5 ([kernel.kallsyms])" ]]
	[[ $stderr == *"in.fgr': bad ksym record at byte "*"address range 0xffffffffc0a00000 of 0 bytes"* ]]
}

@test "fg-sym: mappings from --proc-root when the stream has none" {
	local d=$BATS_FILE_TMPDIR p=$BATS_TEST_TMPDIR/proc
	mkdir -p "$p/77"
	mapping 77 $BASE "$d/pie" | awk '{
		split($3, s, "="); split($4, e, "="); split($5, o, "=");
		split($6, ma, "="); split($7, mi, "="); split($8, i, "="); split($NF, pa, "=");
		printf "%s-%s r-xp %s %02x:%02x %s    %s\n", s[2], e[2], o[2], ma[2], mi[2], i[2], pa[2] }' \
		>"$p/77/maps"
	echo "sample pid=77 u=$(ip $BASE "$d/pie" fixture_leaf 1)" >"$BATS_TEST_TMPDIR/in.txt"
	echo "sample pid=78 u=$(ip $BASE "$d/pie" fixture_leaf 1)" >>"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$p"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	# pid 78 is in neither the stream nor the proc root: gone
	[[ ${lines[3]} == *" [unknown] ([unknown])" ]]
	[[ $stderr == *"1 process gone"* ]]
}

@test "fg-sym: an address outside every mapping" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "sample pid=42 u=1000"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[ "${lines[1]}" = "$(printf '\t            1000 [unknown] ([unknown])')" ]
	[[ $stderr == *"1 no mapping"* ]]
}

@test "fg-sym: JIT frames from perf-PID.map, module /tmp/perf-PID.map" {
	local s=$BATS_TEST_TMPDIR/symfs
	mkdir -p "$s/tmp"
	printf '7f0000001000 20 jit_outer\n7f0000001100 b LazyCompile:*run app.js:1\n' >"$s/tmp/perf-4242.map"
	{
		echo "mapping pid=4242 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
		echo "sample pid=4242 u=7f0000001104,7f0000001010"
		echo "mapping pid=4243 start=7f0000001000 end=7f0000002000 prot=rwx path=//anon"
		echo "sample pid=4243 u=7f0000001104"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --symfs "$s" --proc-root "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf '\t    7f0000001104 LazyCompile:*run app.js:1+0x4 (/tmp/perf-4242.map)')" ]
	[ "${lines[2]}" = "$(printf '\t    7f0000001010 jit_outer+0x10 (/tmp/perf-4242.map)')" ]
	[ "${lines[4]}" = "$(printf '\t    7f0000001104 [unknown] (//anon)')" ]
	[[ $stderr == *"1 no JIT map"* ]]
}

@test "fg-sym: samples before an exec are named from the program before it" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "comm pid=42 time=2000 exec=1 comm=templ"
		mapping 42 $BASE "$d/templ" "$d/templ" time=2001
		echo "sample pid=42 time=1500 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		echo "sample pid=42 time=2500 u=$(ip $BASE "$d/templ" main 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[[ ${lines[3]} == *" main+0x1 ($d/templ)" ]]
}

@test "fg-sym: a forked child inherits its parent's mappings; an exited pid's new process starts afresh" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "fork pid=50 ppid=42"
		echo "sample pid=50 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		echo "exit pid=50"
		echo "sample pid=50 u=$(ip $BASE "$d/pie" fixture_leaf 2)"
		mapping 50 $BASE "$d/templ"
		echo "sample pid=50 u=$(ip $BASE "$d/templ" main 1)"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	# a sample after the exit record is still named (it may travel late)
	[[ ${lines[3]} == *" fixture_leaf+0x2 ($d/pie)" ]]
	[[ ${lines[5]} == *" main+0x1 ($d/templ)" ]]
}

@test "fg-sym: the vdso is named from this kernel's vdso image" {
	[ -z "${FG_UNDER_QEMU:-}" ] || skip "this kernel's vDSO is x86-64's, and qemu-user gives arm64 programs none"
	local base
	base=$(awk '/\[vdso\]/ { split($1, a, "-"); print a[1] }' /proc/self/maps)
	{
		echo "mapping pid=42 start=7fff00000000 end=7fff00002000 path=[vdso]"
		echo "sample pid=42 u=7fff00000000"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ ${lines[1]} == *" ([vdso])" ]]
	# some function of the vdso, or its first bytes, which belong to no function
	[[ $stderr == *"1 samples"* ]]
	# an address at a real function of the vdso
	local off
	off=$(fgr-vdso-sym __vdso_clock_gettime)
	printf 'mapping pid=42 start=7fff00000000 end=7fff00002000 path=[vdso]\nsample pid=42 u=%x\n' \
		$((0x7fff00000000 + off + 1)) >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ ${lines[1]} == *" __vdso_clock_gettime+0x1 ([vdso])" ]]
}

# the vDSO's image names the functions it exports; its own (with kvm-clock, clock_gettime's
# vread_pvclock) are in its debug file, looked for by its build-id and where the kernel's
# `make vdso_install` and a kernel debug package put it (under --symfs here)
@test "fg-sym: the vdso's own functions are named from its debug file, in each of its places" {
	[ -z "${FG_UNDER_QEMU:-}" ] || skip "this kernel's vDSO is x86-64's, and qemu-user gives arm64 programs none"
	requires python3 objcopy readelf
	local own clk id rel=$(uname -r) sf=$BATS_TEST_TMPDIR/symfs place
	own=$(vdso_debug_file "$BATS_TEST_TMPDIR/vdso.debug")
	clk=$(fgr-vdso-sym __vdso_clock_gettime)
	id=$(fgr-vdso-sym --build-id)
	printf 'mapping pid=42 start=7fff00000000 end=7fff00002000 path=[vdso]\nsample pid=42 u=%x\nsample pid=42 u=%x\n' \
		$((0x7fff00000000 + 0x$own + 2)) $((0x7fff00000000 + clk + 1)) >"$BATS_TEST_TMPDIR/in.txt"
	# another kernel's: the same but for its build-id
	cp "$BATS_TEST_TMPDIR/vdso.debug" "$BATS_TEST_TMPDIR/other"
	printf 'other kernel' | dd of="$BATS_TEST_TMPDIR/other" bs=1 conv=notrunc status=none \
		seek=$(($(grep -obUaP '\x03\x00\x00\x00GNU\x00' "$BATS_TEST_TMPDIR/other" | head -n 1 | cut -d: -f1) + 8))
	readelf -sW "$BATS_TEST_TMPDIR/other" | grep -q ' vdso_own$'
	[ "$(readelf -n "$BATS_TEST_TMPDIR/other" | awk '/Build ID/ { print $3 }')" != "$id" ]
	# without it: unnamed, counted
	sym_made --proc-root "$BATS_TEST_TMPDIR" --symfs "$sf"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ([vdso])" ]]
	[[ ${lines[3]} == *" __vdso_clock_gettime+0x1 ([vdso])" ]]
	[[ $stderr == *" 1 unnamed (1 no symbols,"* ]]
	for place in "usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" \
		"lib/modules/$rel/vdso/vdso64.so" "usr/lib/debug/lib/modules/$rel/vdso/vdso64.so"; do
		rm -rf "$sf"
		mkdir -p "$(dirname "$sf/$place")"
		cp "$BATS_TEST_TMPDIR/vdso.debug" "$sf/$place"
		sym_made --proc-root "$BATS_TEST_TMPDIR" --symfs "$sf"
		echo "# $place: ${lines[1]}" >&3
		[ "$status" -eq 0 ]
		[[ ${lines[1]} == *" vdso_own+0x2 ([vdso])" ]]
		# an exported function keeps its own name, not its weak alias'
		[[ ${lines[3]} == *" __vdso_clock_gettime+0x1 ([vdso])" ]]
		[[ $stderr == *" 2 frames named, 0 unnamed "* ]]
		# another file there (another kernel's vDSO) is not taken for it
		cp "$BATS_TEST_TMPDIR/other" "$sf/$place"
		sym_made --proc-root "$BATS_TEST_TMPDIR" --symfs "$sf"
		[[ ${lines[1]} == *" [unknown] ([vdso])" ]]
		[[ $stderr == *" 1 unnamed (1 no symbols,"* ]]
	done
}

@test "fg-sym: a FIFO named by a mapping is not opened for reading and does not block" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	{
		echo "mapping pid=42 start=555555554000 end=555555556000 path=$BATS_TEST_TMPDIR/fifo"
		echo "sample pid=42 u=555555554100"
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr timeout 20 fg-sym -v --proc-root "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($BATS_TEST_TMPDIR/fifo)" ]]
	[[ $stderr == *"1 no file"* ]]
}

@test "fg-sym: a stream cut inside a record: what came before is written, an incomplete capture, exit 0" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "sample pid=42 time=5000000000 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		echo "sample pid=42 time=6500000000 u=$(ip $BASE "$d/pie" fixture_leaf 2)"
		echo "nosummary"
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/full.fgr"
	local size
	size=$(stat -c %s "$BATS_TEST_TMPDIR/full.fgr")
	head -c $((size - 4)) "$BATS_TEST_TMPDIR/full.fgr" >"$BATS_TEST_TMPDIR/cut.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/cut.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[ "${#lines[@]}" -eq 2 ]
	[[ $stderr == *"fg-sym: '$BATS_TEST_TMPDIR/cut.fgr': incomplete capture: truncated sample record at byte $((size - 72)), without the summary record that ends a run (fg-sample was killed, or its output could not be written); named what it holds: 2 records, 1 samples over 0.00 s (from 5.000000 to 5.000000)"* ]]
	# the same through a pipe (read(), not mapped)
	fg --separate-stderr sh -c 'cat "$1" | fg-sym' sh "$BATS_TEST_TMPDIR/cut.fgr"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ $stderr == *"fg-sym: '<stdin>': incomplete capture: truncated sample record at byte $((size - 72)), without the summary record"* ]]
}

@test "fg-sym: a stream without its summary record: an incomplete capture, what is known of it, exit 0" {
	local d=$BATS_FILE_TMPDIR
	{
		mapping 42 $BASE "$d/pie"
		echo "sample pid=42 time=5000000000 u=$(ip $BASE "$d/pie" fixture_leaf 1)"
		echo "lost count=3"
		echo "sample pid=42 time=6500000000 u=$(ip $BASE "$d/pie" fixture_leaf 2)"
		echo "nosummary"
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/cut.fgr"
	fg --separate-stderr fg-sym "$BATS_TEST_TMPDIR/cut.fgr"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_leaf+0x1 ($d/pie)" ]]
	[[ ${lines[3]} == *" fixture_leaf+0x2 ($d/pie)" ]]
	[[ $stderr == *"fg-sym: '$BATS_TEST_TMPDIR/cut.fgr': incomplete capture: the stream ends at byte $(stat -c %s "$BATS_TEST_TMPDIR/cut.fgr"), without the summary record that ends a run"*"named what it holds: 4 records, 2 samples over 1.50 s (from 5.000000 to 6.500000)"* ]]
	[[ $stderr == *"fg-sym: the sampler lost 3 samples (its ring buffer was full)"* ]]
	# with its summary: no warning
	sed -i '/nosummary/d' "$BATS_TEST_TMPDIR/in.txt"
	sym_made
	[ "$status" -eq 0 ]
	[[ $stderr != *"incomplete"* ]]
}

@test "fg-sym: not a record stream" {
	echo "hello, this is text" >"$BATS_TEST_TMPDIR/text"
	fg --separate-stderr fg-sym <"$BATS_TEST_TMPDIR/text"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "fg-sym: '<stdin>': "* ]]
}

@test "fg-sym: an empty input is an error, not an empty profile" {
	fg --separate-stderr fg-sym </dev/null
	[ "$status" -eq 1 ]
	[[ $stderr == "fg-sym: '<stdin>': "* ]]
}

@test "fg-sym: a write error exits 1" {
	echo "sample pid=1 u=1000" >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	fg --separate-stderr fg-sym --proc-root "$BATS_TEST_TMPDIR" -o /dev/full "$BATS_TEST_TMPDIR/in.fgr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"fg-sym: write error: No space left on device"* ]]
}

@test "fg-sym: lost samples are reported; -q keeps standard error quiet" {
	printf 'sample pid=1 u=1000\nlost count=7\n' >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ $stderr == *"fg-sym: the sampler lost 7 samples (its ring buffer was full)"* ]]
	sym_made --proc-root "$BATS_TEST_TMPDIR" -q
	[ -z "$stderr" ]
}

@test "fg-sym --inline and --srcline: inlined functions and source lines from DWARF" {
	local d=$BATS_FILE_TMPDIR addr
	# the call of fixture_leaf inside fixture_inlined, inlined into fixture_middle
	addr=$(objdump -d --no-show-raw-insn "$d/pie" |
		awk '/<fixture_middle>:/ { f = 1 } f && /call.*<fixture_leaf>/ { sub(":", "", $1); print $1; exit }')
	[ -n "$addr" ]
	local ret
	ret=$(objdump -d --no-show-raw-insn "$d/pie" | awk -v a="$addr" '
		found { sub(":", "", $1); print $1; exit } $1 == a":" { found = 1 }')
	{
		mapping 42 $BASE "$d/pie"
		printf 'sample pid=42 u=%x,%x\n' $(($BASE + 0x$(nm "$d/pie" | awk '$3 == "fixture_leaf" { print $1 }'))) $(($BASE + 0x$ret))
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --inline
	[ "$status" -eq 0 ]
	[[ ${lines[2]} == *" fixture_inlined (inlined)" ]]
	[[ ${lines[3]} == *" fixture_middle+0x"*" ($d/pie)" ]]
	sym_made --srcline
	[[ ${lines[2]} == "  prog.c:"[0-9]* ]]
	[[ ${lines[3]} == *" fixture_middle+0x"*" ($d/pie)" ]]
	[[ ${lines[4]} == "  prog.c:"[0-9]* ]]
	sym_made --inline --srcline
	[[ ${lines[3]} == *" fixture_inlined (inlined)" ]]
	[[ ${lines[4]} == "  prog.c:"[0-9]* ]]
}

@test "fg-sym: memory grows with files and symbols, not with samples" {
	local d=$BATS_FILE_TMPDIR small big
	local line
	line="sample pid=42 k=ffffffff81000105 u=$(ip $BASE "$d/pie" fixture_leaf 1),$(ip $BASE "$d/pie" main 2)"
	{
		mapping 42 $BASE "$d/pie"
		for i in $(seq 1000); do echo "$line"; done
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/1k.fgr"
	# the same sample 100 and 400 times as often
	for i in $(seq 100); do tail -n 1000 "$BATS_TEST_TMPDIR/in.txt"; done >"$BATS_TEST_TMPDIR/more.txt"
	cat "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/more.txt" "$BATS_TEST_TMPDIR/more.txt" \
		"$BATS_TEST_TMPDIR/more.txt" "$BATS_TEST_TMPDIR/more.txt" | fgr-make >"$BATS_TEST_TMPDIR/400k.fgr"
	# through a pipe, read(): what the naming keeps.  fg-sym's heap is in huge pages
	# (fg/bigmem.h), so that where the heap starts (randomized) against a 2 MiB boundary
	# moves its peak by up to one such page either way: 4 MiB for 400,000 samples more
	# still catches 10 bytes kept a sample
	small=$(/usr/bin/time -f %M sh -c 'cat "$1" | exec fg-sym -q --kallsyms "$2"' \
		sh "$BATS_TEST_TMPDIR/1k.fgr" "$F/kallsyms" 2>&1 >/dev/null)
	big=$(/usr/bin/time -f %M sh -c 'cat "$1" | exec fg-sym -q --kallsyms "$2"' \
		sh "$BATS_TEST_TMPDIR/400k.fgr" "$F/kallsyms" 2>&1 >/dev/null)
	echo "# peak RSS, read(): $small KiB for 1000 samples, $big KiB for 401000" >&3
	[ "$big" -lt $((small + 4096)) ]
	# a file is mapped: the pages it has read are let go every 8 MiB, whatever its size
	for i in 1 2 3; do cat "$BATS_TEST_TMPDIR/more.txt"; done >>"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/300k.fgr"
	small=$(/usr/bin/time -f %M fg-sym -q --kallsyms "$F/kallsyms" "$BATS_TEST_TMPDIR/1k.fgr" 2>&1 >/dev/null)
	big=$(/usr/bin/time -f %M fg-sym -q --kallsyms "$F/kallsyms" "$BATS_TEST_TMPDIR/300k.fgr" 2>&1 >/dev/null)
	echo "# peak RSS, mapped: $small KiB for 1000 samples, $big KiB for $(stat -c %s "$BATS_TEST_TMPDIR/300k.fgr") bytes" >&3
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/300k.fgr")" -gt $((24 << 20)) ]
	[ "$big" -lt $((small + 2048 + 2048 + 8192 + 1024)) ]
}

# a capture truncated while fg-sym has it mapped: fg-sym is held by its output (a pipe no one
# reads: at most 64 KiB buffered and 64 KiB in the pipe, a few hundred samples of the 20,000),
# the file is cut to 512 KiB (about 5,900 samples), then its output read
@test "fg-sym: a capture truncated under fg-sym: the samples before it, the byte where it shrank, exit 1" {
	local d=$BATS_FILE_TMPDIR t=$BATS_TEST_TMPDIR
	local u
	u="$(ip $BASE "$d/pie" fixture_leaf 1),$(ip $BASE "$d/pie" fixture_middle 2),$(ip $BASE "$d/pie" main 3)"
	{
		mapping 42 $BASE "$d/pie"
		awk -v u="$u" 'BEGIN { for (i = 0; i < 20000; i++) printf "sample pid=42 time=%d u=%s\n", 5000000000 + i * 1000000, u }'
	} >"$t/in.txt"
	fgr-make "$t/in.txt" >"$t/in.fgr"
	[ "$(stat -c %s "$t/in.fgr")" -gt $((3 * 524288)) ]
	{
		local rc=0
		fg-sym "$t/in.fgr" 2>"$t/err" || rc=$?
		echo $rc >"$t/status"
	} | {
		head -c 1 >"$t/out"
		truncate -s 524288 "$t/in.fgr"
		cat >>"$t/out"
	}
	echo "# $(tail -n 2 "$t/err")" >&3
	[ "$(cat "$t/status")" -eq 1 ]
	local at
	at=$(sed -n "s/^fg-sym: '.*in.fgr': the file shrank while being read (truncated under this reader) at byte \([0-9]*\)$/\1/p" "$t/err")
	[ "$at" -ge 524288 ] && [ "$at" -lt $((524288 + 88)) ]
	# every sample wholly before the cut, each whole
	local n
	n=$(grep -c 'cpu-clock:' "$t/out")
	[ "$n" -gt 5000 ] && [ "$n" -lt 6000 ]
	[ "$(grep -c 'fixture_leaf+0x1' "$t/out")" -eq "$n" ]
	[ "$(grep -c '^$' "$t/out")" -eq "$n" ]
	[[ $(cat "$t/err") == *"fg-sym: $n samples, "* ]]
}

@test "fg-sym: pseudo files (procfs, sysfs) named by a mapping are not read" {
	local f sysf=
	for f in /sys/kernel/kexec_loaded /sys/kernel/uevent_seqnum /sys/kernel/profiling; do
		[ -f "$f" ] && { sysf=$f; break; }
	done
	[ -n "$sysf" ]
	{
		echo "mapping pid=42 start=555555554000 end=555555556000 path=/proc/version"
		echo "sample pid=42 u=555555554100"
		echo "mapping pid=43 start=555555554000 end=555555556000 path=$sysf"
		echo "sample pid=43 u=555555554100"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] (/proc/version)" ]]
	[[ ${lines[3]} == *" [unknown] ($sysf)" ]]
	[[ $stderr == *"2 no file"* ]]
}

@test "fg-sym: newlines, tabs and escapes in comm, path and symbol never break the perf-script framing" {
	local d=$BATS_TEST_TMPDIR forge
	forge='\n\ninjected 4242/4242 [000] 1.000000: 99999999 cpu-clock:\n\tffff FORGED+0x0 (x)\n'
	# a symbol whose name holds the forged sample, in a file whose path holds it too
	mkdir -p "$d/$(printf 'dir\n\ninjected 4242')"
	local file
	file="$d/$(printf "dir\n\ninjected 4242/4242 [000] 1.0: 99999999 cpu-clock:\n\tffff FORGED+0x0 (x)\n")"
	objcopy --redefine-sym "fixture_leaf=$(printf 'leaf\n\ninjected 4242/4242 [000] 1.000000: 99999999 cpu-clock:\n\tffff FORGED+0x0 (x)\x1b[2J\x7f\xff')" \
		"$BATS_FILE_TMPDIR/pie" "$file"
	local esc=${file//$'\n'/'\x0a'}
	esc=${esc//$'\t'/'\x09'}
	{
		mapping 42 $BASE "$file" "${esc}"
		echo "sample pid=42 comm=\\n\\ninj\\t1/1\\x1b[1m u=$(ip $BASE "$BATS_FILE_TMPDIR/pie" fixture_leaf 1)"
		echo "sample pid=42 comm=x\\x201/1\\x201:\\x2099999 u=$(ip $BASE "$BATS_FILE_TMPDIR/pie" fixture_leaf 1)"
	} >"$d/in.txt"
	sym_made --proc-root "$d"
	[ "$status" -eq 0 ]
	# two samples: a header, one frame and a blank line each
	# two samples: a header, one frame and a blank line each
	fg-sym --proc-root "$d" "$d/in.fgr" 2>/dev/null >"$d/out"
	[ "$(wc -l <"$d/out")" -eq 6 ]
	[ "${lines[0]}" = '\x0a\x0ainj\x091/1\x1b[1m    42/42    [000]     0.000000:          1 cpu-clock: ' ]
	[ "${lines[1]}" = "$(printf '\t%16x ' 0x$(ip 0 "$BATS_FILE_TMPDIR/pie" fixture_leaf 1))"'leaf\x0a\x0ainjected 4242/4242 [000] 1.000000: 99999999 cpu-clock:\x0a\x09ffff FORGED+0x0 (x)\x1b[2J\x7f\xff+0x1 ('"$esc"')' ]
	# a comm that reads as "PID/TID TIME: WEIGHT EVENT:" cannot pass for them
	[ "${lines[2]}" = 'x\x201/1\x201:\x2099999    42/42    [000]     0.000000:          1 cpu-clock: ' ]
	# no control character but the tab that starts each frame line, and the newlines
	! printf '%s' "$output" | tr -d '\n\t' | LC_ALL=C grep -q '[[:cntrl:]]'
	# folded: one stack of the program per comm, each of weight 1, nothing injected
	fg-sym --proc-root "$d" "$d/in.fgr" 2>/dev/null | fg-fold >"$d/folded"
	[ "$(wc -l <"$d/folded")" -eq 2 ]
	! grep -q ' 99999' "$d/folded"
	! grep -q '^injected' "$d/folded"
	awk '{ if ($NF != 1) exit 1 }' "$d/folded"
}

@test "fg-sym: a backslash is doubled, so that an escape cannot be forged" {
	echo 'sample pid=1 comm=a\\x0ab u=1000' >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[ "${lines[0]}" = 'a\\x0ab     1/1     [000]     0.000000:          1 cpu-clock: ' ]
}

@test "fg-sym: losses are counted by kind, and a count never wraps" {
	{
		echo "sample pid=1 u=1000"
		echo "lost count=7 reason=1"
		echo "lost count=0xffffffffffffffff reason=1"
		echo "lost count=2 reason=2"
		echo "lost count=0 cpu=1 reason=3"
		echo "lost count=5 reason=77"
	} >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[ "$status" -eq 0 ]
	[[ $stderr == *"fg-sym: the sampler lost at least 18446744073709551615 samples (its ring buffer was full), 2 mapping, comm or task events (its perf buffer overflowed), 5 things for reasons this fg-sym does not know"* ]]
	[[ $stderr == *"fg-sym: 1 CPU went offline during the run: its samples stopped there"* ]]
	# events lost alone are not samples lost
	printf 'sample pid=1 u=1000\nlost count=4 reason=2\n' >"$BATS_TEST_TMPDIR/in.txt"
	sym_made --proc-root "$BATS_TEST_TMPDIR"
	[[ $stderr == *"fg-sym: the sampler lost 4 mapping, comm or task events (its perf buffer overflowed)"* ]]
	[[ $stderr != *" samples ("* ]]
}

# hdr_sample PID TID CPU COMM WEIGHT: a sample line on stdout, the header fg-sym is to write
# for it on descriptor 3; the time ($ns) moves on
hdr_sample() {
	ns=$((ns + 1234567))
	echo "sample pid=$1 tid=$2 cpu=$3 time=$ns weight=$5 comm=$4"
	printf '%s %5d/%-5d [%03d] %5d.%06d: %10d cpu-clock: \n\n' "$4" "$1" "$2" "$3" \
		$((ns / 1000000000)) $((ns % 1000000000 / 1000)) "$5" >&3
}

@test "fg-sym: each sample's header is its own, many threads taking turns on CPUs" {
	local d=$BATS_TEST_TMPDIR r t c k pid comm w ns=1000000000
	{
		# 20 threads of 3 processes on 4 CPUs, more than the headers fg-sym remembers:
		# two samples in a row of each thread on each CPU in turn; half the threads
		# renamed halfway, a weight other than 1 now and then
		for ((r = 0; r < 10; r++)); do
			for ((t = 0; t < 20; t++)); do
				for ((c = 0; c < 4; c++)); do
					for ((k = 0; k < 2; k++)); do
						comm=th$t w=1
						((r >= 5 && t % 2)) && comm=re$t
						((k && (t + c) % 7 == 0)) && w=$((t + 2))
						hdr_sample $((100 + t % 3)) $((2000 + t)) $(((c + r) % 4)) \
							"$comm" "$w"
					done
				done
			done
		done
		# one thread on 17 CPUs, 17 threads on one CPU, a tid on one CPU in 17
		# processes: each one after the other, two of them meet in a slot
		for ((k = 0; k < 17; k++)); do
			hdr_sample 300 3000 "$k" hop 1
		done
		for ((k = 0; k < 17; k++)); do
			hdr_sample 400 $((4000 + k)) 1 many 1
		done
		for ((k = 0; k < 17; k++)); do
			hdr_sample $((500 + k)) 5000 2 reused 1
		done
	} >"$d/in.txt" 3>"$d/want"
	fgr-make "$d/in.txt" >"$d/in.fgr"
	fg-sym -q --proc-root "$d" "$d/in.fgr" >"$d/out"
	diff -u "$d/want" "$d/out"
}
