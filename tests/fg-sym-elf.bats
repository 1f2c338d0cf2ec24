#!/usr/bin/env bats
# fg-sym: symbol tables beyond .symtab and .dynsym (MiniDebugInfo in
# .gnu_debugdata, made as Fedora makes it) and Rust names (legacy and v0) in
# a real ELF file.  Fixtures are built here from tests/fixtures/sym/*.c.
bats_require_minimum_version 1.5.0
load helpers
load sym-fixture

F=$FIXTURES/sym

# minidebug BINARY XZ OUT: BINARY stripped to .dynsym, with XZ as its .gnu_debugdata
minidebug() {
	strip --strip-all "$1" -o "$3"
	objcopy --add-section .gnu_debugdata="$2" "$3"
}

setup_file() {
	local d=$BATS_FILE_TMPDIR
	gcc -g -O1 -fno-omit-frame-pointer -fPIE -pie "$F/prog.c" -o "$d/pie"
	# Fedora's find-debuginfo: the function symbols .dynsym lacks, from the debug file,
	# in an ELF file without debug sections, xz-compressed into .gnu_debugdata
	objcopy --only-keep-debug "$d/pie" "$d/pie.debug"
	nm -D "$d/pie" --format=posix --defined-only | awk '{ print $1 }' | sort >"$d/dynsyms"
	nm "$d/pie.debug" --format=posix --defined-only |
		awk '$2 == "T" || $2 == "t" || $2 == "D" { print $1 }' | sort >"$d/funcsyms"
	comm -13 "$d/dynsyms" "$d/funcsyms" >"$d/keep"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$d/keep" "$d/pie.debug" "$d/mini"
	xz -k "$d/mini"
	minidebug "$d/pie" "$d/mini.xz" "$d/pie-mini"
	gcc -g -O1 -fno-omit-frame-pointer -fPIE -pie "$F/rust.c" -o "$d/rust"
}

@test "fg-sym names static functions from .gnu_debugdata (MiniDebugInfo)" {
	local f=$BATS_FILE_TMPDIR/pie-mini p=$BATS_FILE_TMPDIR/pie
	# the fixture really is stripped: no .symtab, and fixture_static is not in .dynsym
	[ -z "$(readelf -SW "$f" | grep '\.symtab')" ]
	[ -n "$(readelf -SW "$f" | grep '\.gnu_debugdata')" ]
	[ -z "$(nm -D "$f" | grep fixture_static)" ]
	run_sym "$f" $(($(addr_of "$f" fixture_static "$p") + 4)),$(($(addr_of "$f" fixture_leaf "$p") + 9)),$(($(addr_of "$f" main "$p") + 2))
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" fixture_static+0x4 ($f)" ]]
	[[ ${lines[2]} == *" fixture_leaf+0x9 ($f)" ]]
	[[ ${lines[3]} == *" main+0x2 ($f)" ]]
	assert_stderr_contains "3 frames named, 0 unnamed"
}

@test "fg-sym: without its .gnu_debugdata the same file names nothing there" {
	local f=$BATS_TEST_TMPDIR/stripped p=$BATS_FILE_TMPDIR/pie
	strip --strip-all "$p" -o "$f"
	run_sym "$f" $(($(addr_of "$f" fixture_static "$p") + 4))
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($f)" ]]
}

@test "fg-sym: a corrupt .gnu_debugdata is reported, and the frame left unnamed" {
	local f=$BATS_TEST_TMPDIR/bad p=$BATS_FILE_TMPDIR/pie
	head -c 200 "$BATS_FILE_TMPDIR/mini.xz" >"$BATS_TEST_TMPDIR/cut.xz"
	minidebug "$p" "$BATS_TEST_TMPDIR/cut.xz" "$f"
	run_sym "$f" $(($(addr_of "$f" fixture_static "$p") + 4)) -v
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($f)" ]]
	assert_stderr_contains "cannot read the .gnu_debugdata of '$f': corrupt"
	assert_stderr_contains "1 files with an unreadable .gnu_debugdata (MiniDebugInfo)"
	assert_stderr_contains "1 no symbols"
}

@test "fg-sym: a .gnu_debugdata that decompresses past the bound is not read" {
	local f=$BATS_TEST_TMPDIR/bomb p=$BATS_FILE_TMPDIR/pie
	# 80 MiB of zeros, a few KiB compressed
	head -c 80M /dev/zero | xz -0 >"$BATS_TEST_TMPDIR/bomb.xz"
	minidebug "$p" "$BATS_TEST_TMPDIR/bomb.xz" "$f"
	run_sym "$f" $(($(addr_of "$f" fixture_static "$p") + 4)) -v
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($f)" ]]
	assert_stderr_contains "cannot read the .gnu_debugdata of '$f': over the size limit"
}

@test "fg-sym: a .gnu_debugdata that is not an ELF file is reported" {
	local f=$BATS_TEST_TMPDIR/notelf p=$BATS_FILE_TMPDIR/pie
	echo "not an ELF file" | xz >"$BATS_TEST_TMPDIR/text.xz"
	minidebug "$p" "$BATS_TEST_TMPDIR/text.xz" "$f"
	run_sym "$f" $(($(addr_of "$f" fixture_static "$p") + 4))
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" [unknown] ($f)" ]]
	assert_stderr_contains "1 files with an unreadable .gnu_debugdata"
}

@test "fg-sym demangles Rust legacy and v0 names in an ELF file as libiberty does" {
	local f=$BATS_FILE_TMPDIR/rust
	local -a syms=(
		_ZN7mycrate6worker17hfedcba9876543210E
		'_ZN53_$LT$mycrate..Point$u20$as$u20$core..fmt..Display$GT$3fmt17h0123456789abcdefE'
		_RNvNtCs1234_7mycrate3foo3bar
		_RINvCs1234_7mycrate4workmE
		_RNvMNtCs1234_7mycrate5shapeNtB2_5Point4area
	)
	local -a want=(
		'mycrate::worker'
		'<mycrate::Point as core::fmt::Display>::fmt'
		'mycrate::foo::bar'
		'mycrate::work::<u32>'
		'<mycrate::shape::Point>::area'
	)
	local addrs= s
	for s in "${syms[@]}"; do
		addrs+=${addrs:+,}$(($(addr_of "$f" "$s") + 3))
	done
	run_sym "$f" "$addrs"
	[ "$status" -eq 0 ]
	for i in "${!want[@]}"; do
		[[ ${lines[i + 1]} == *" ${want[i]}+0x3 ($f)" ]]
	done
	run_sym "$f" "$addrs" --no-demangle
	[ "$status" -eq 0 ]
	for i in "${!syms[@]}"; do
		[[ ${lines[i + 1]} == *" ${syms[i]}+0x3 ($f)" ]]
	done
}

# plt_names FILE: fg-sym names each PLT entry of FILE (2 bytes into it) as objdump does
plt_names() {
	local f=$1 d=$BATS_TEST_TMPDIR a n addrs=
	objdump -d -j .plt -j .plt.sec "$f" |
		awk '/^[0-9a-f]+ <.*@plt>:$/ { n = $2; sub(/^</, "", n); sub(/>:$/, "", n); print $1, n }' \
			>"$d/want"
	# (not vacuous)
	[ "$(wc -l <"$d/want")" -ge 4 ]
	while read -r a n; do
		addrs+=${addrs:+,}$((0x$a + 2))
	done <"$d/want"
	run_sym "$f" "$addrs"
	[ "$status" -eq 0 ]
	printf '%s\n' "${lines[@]:1}" | awk '{ sub(/\+0x2$/, "", $2); print $2 }' >"$d/got"
	awk '{ print $2 }' "$d/want" | diff - "$d/got"
}

@test "fg-sym names PLT entries NAME@plt, as objdump does" {
	local d=$BATS_TEST_TMPDIR
	plt_names "$FG_BUILD/unwind/fixture-gcc-pie"
	plt_names "$FG_BUILD/unwind/fixture-clang-nopie"
	# with IBT the calls go through .plt.sec; bound at once, the same
	printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' '#include <string.h>' \
		'int main(int c, char **v) { printf("%zu", strlen(v[0])); puts(getenv("X")); return atoi(v[c - 1]); }' \
		>"$d/calls.c"
	gcc -O1 -fcf-protection=full -Wl,-z,ibtplt "$d/calls.c" -o "$d/ibt"
	[ -n "$(readelf -SW "$d/ibt" | grep '\.plt\.sec')" ]
	plt_names "$d/ibt"
	gcc -O1 -fcf-protection=full -Wl,-z,ibtplt,-z,now "$d/calls.c" -o "$d/now"
	plt_names "$d/now"
	# Debian's libc: IFUNCs (*ABS*+0x...@plt), its .rela.plt not in the PLT's order
	plt_names "$(realpath /lib/x86_64-linux-gnu/libc.so.6)"
	grep -q '^\*ABS\*+0x[0-9a-f]*@plt$' "$d/got"
	plt_names "$(realpath /usr/bin/python3)"
	# the PLT's header is no entry: named by what comes before it, as before
	run_sym "$d/now" $(($(objdump -h "$d/now" | awk '$2 == ".plt" { print "0x" $4 }') + 2))
	[ "$status" -eq 0 ]
	[[ ${lines[1]} != *"@plt"* ]]
	# nor are a static executable's 8-byte IFUNC stubs, which objdump leaves unnamed too
	local s=$FG_BUILD/unwind/fixture-gcc-static
	[ -z "$(objdump -d -j .plt "$s" | grep '@plt>:')" ]
	run_sym "$s" $(($(objdump -h "$s" | awk '$2 == ".plt" { print "0x" $4 }') + 10))
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} != *"@plt"* ]]
}

@test "fg-sym names the code of .init and .fini _init and _fini in a stripped library" {
	local d=$BATS_TEST_TMPDIR init fini
	strip --strip-all "$FG_BUILD/unwind/libfixlib-gcc.so" -o "$d/lib.so"
	[ -z "$(nm "$d/lib.so" 2>/dev/null)" ]
	init=$((0x$(objdump -h "$d/lib.so" | awk '$2 == ".init" { print $4 }')))
	fini=$((0x$(objdump -h "$d/lib.so" | awk '$2 == ".fini" { print $4 }')))
	# (what runs there: a library's constructors, as it is loaded)
	run_sym "$d/lib.so" "$init,$((init + 4)),$((fini + 4))"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == *" _init+0x0 ("*"/lib.so)" ]]
	[[ ${lines[2]} == *" _init+0x4 ("*"/lib.so)" ]]
	[[ ${lines[3]} == *" _fini+0x4 ("*"/lib.so)" ]]
	[[ $stderr == *" 0 unnamed "* ]]
}
