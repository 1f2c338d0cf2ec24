#!/usr/bin/env bats
# A plain `make` installs nothing: without what the build needs it names the Debian
# packages and stops.  `make deps` installs them on request; `make check` and `make demo`
# call it.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	# stand-ins for the installers, which record any call
	fake=$BATS_TEST_TMPDIR/bin
	mkdir -p "$fake"
	local c
	for c in apt-get apt sudo dpkg; do
		printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$c" "$BATS_TEST_TMPDIR/calls" >"$fake/$c"
		chmod +x "$fake/$c"
	done
}

@test "make without libdw and bpftool names their packages, stops, and changes nothing" {
	requires pkg-config
	# a pkg-config search path with every module of this machine but libdw
	local pc=$BATS_TEST_TMPDIR/pc d out=$BATS_TEST_TMPDIR/out
	mkdir "$pc"
	for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
		[ -d "$d" ] && find "$d" -maxdepth 1 -name '*.pc' -exec cp -n {} "$pc" \;
	done
	[ -f "$pc/libelf.pc" ]
	rm -f "$pc/libdw.pc"
	PATH=$fake:$PATH PKG_CONFIG_LIBDIR=$pc PKG_CONFIG_PATH= fg --separate-stderr \
		make -C "$TOP" --no-print-directory OUT="$out" BPFTOOL=bpftool-not-here
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == "fg: cannot build: missing 'bpftool-not-here' (vmlinux.h, the skeleton), the pkg-config module 'libdw'."* ]]
	[[ $stderr == *"apt-get install bpftool libdw-dev"* ]]
	[[ $stderr == *"'make deps' installs them"* ]]
	[ ! -e "$out" ]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
	# the script alone says the same
	PKG_CONFIG_LIBDIR=$pc PKG_CONFIG_PATH= BPFTOOL=bpftool-not-here fg --separate-stderr "$TOP/scripts/check-deps"
	[ "$status" -eq 1 ]
	[[ $stderr == *"apt-get install bpftool libdw-dev"* ]]
	# with everything there it is silent
	fg --separate-stderr "$TOP/scripts/check-deps"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "make deps installs what is missing, and only then" {
	# a dpkg-query for which libdw-dev alone is not installed
	cat >"$fake/dpkg-query" <<'SH'
#!/bin/sh
for last; do :; done
[ "$last" = libdw-dev ] && exit 1
printf 'install ok installed'
SH
	chmod +x "$fake/dpkg-query"
	# (NO_NPM: the npm packages are not this test's; it would install them into the checkout)
	PATH=$fake:$PATH NO_NPM=1 fg --separate-stderr make -C "$TOP" --no-print-directory deps
	[ "$status" -eq 0 ]
	[[ $stderr == *"install-deps: installing: libdw-dev"* ]]
	grep -qx 'apt-get install -y -qq --no-install-recommends libdw-dev' "$BATS_TEST_TMPDIR/calls"
	# FG_NO_DEPS=1 skips it
	rm "$BATS_TEST_TMPDIR/calls"
	PATH=$fake:$PATH FG_NO_DEPS=1 fg make -C "$TOP" --no-print-directory deps
	[ "$status" -eq 0 ]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
	# make check and make demo install first, as README says; make does not
	run make -C "$TOP" --no-print-directory -n check
	[[ ${lines[0]} == *scripts/install-deps* ]]
	run make -C "$TOP" --no-print-directory -n demo
	[[ ${lines[0]} == *scripts/install-deps* ]]
	run make -C "$TOP" --no-print-directory OUT="$FG_BUILD" -n
	[[ $output != *install-deps* ]]
}
