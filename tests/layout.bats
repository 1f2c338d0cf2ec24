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

# FILE:LINE NAME LINES for each function of lib/ and cmd/: from the line that
# opens it at column 0 to its closing } at column 0
function_lengths() {
	awk '
		FNR == 1 { head = 0; start = 0 }
		/^[A-Za-z_].*\(/ && !start { head = FNR; line = $0 }
		/^\{$/ && head && !start { start = head }
		/^\}$/ && start {
			name = line; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
			print FILENAME ":" start, name, FNR - start + 1
			head = 0; start = 0
		}' "$TOP"/lib/*.c "$TOP"/cmd/*.c
}

# Issue 30: a main reads as named steps, and no function runs on for pages.
# The one exception: lib/cfi.c's cfa_interpret, the switch over the DW_CFA_ opcodes.
@test "every main is 60 lines at most, every other function 120" {
	local long
	function_lengths >"$BATS_TEST_TMPDIR/lengths"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/lengths")" -gt 100 ]
	long=$(awk '
		$1 ~ /\/lib\/cfi\.c:/ && $2 == "cfa_interpret" { next }
		($2 == "main" && $3 > 60) || $3 > 120' "$BATS_TEST_TMPDIR/lengths")
	[ -z "$long" ] || { echo "# too long (lines):" >&3; echo "$long" | sed 's/^/# /' >&3; false; }
}
