#!/usr/bin/env bats
# README's Layout table names every module of lib/ and include/fg/, and only
# modules that exist: a newcomer reads it to find where a job is done.
bats_require_minimum_version 1.5.0
load helpers

# the backquoted module names of the table "which modules serve which stage"
table_modules() {
	awk '/^Which modules of `lib\/`/, /^## /' "$TOP/README.md" |
		grep -o '`[a-z_]*\(\.h\)\?`' | tr -d '`' | sed 's/\.h$//' | sort -u
}

@test "README's Layout table names every library module" {
	local m missing=()
	table_modules >"$BATS_TEST_TMPDIR/named"
	[ -s "$BATS_TEST_TMPDIR/named" ]
	for m in "$TOP"/lib/*.c "$TOP"/include/fg/*.h; do
		m=$(basename "${m%.*}")
		grep -qx "$m" "$BATS_TEST_TMPDIR/named" || missing+=("$m")
	done
	[ ${#missing[@]} -eq 0 ] || { echo "# not in README's Layout: ${missing[*]}" >&3; false; }
}

@test "every module README's Layout table names exists" {
	local m absent=()
	while read -r m; do
		[ -f "$TOP/lib/$m.c" ] || [ -f "$TOP/include/fg/$m.h" ] || absent+=("$m")
	done < <(table_modules)
	[ ${#absent[@]} -eq 0 ] || { echo "# in README's Layout, not in the tree: ${absent[*]}" >&3; false; }
}
