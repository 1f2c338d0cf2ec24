# Helpers of the unwinding suites (tests/unwind.bats, tests/fg-sym-unwind.bats,
# tests/agreement-dwarf.bats): what fg-sym's text says of its stacks.

# whole_stacks FILE [COMM]: "WHOLE TOTAL" for the samples of COMM (all of them
# when empty) in fg-sym's perf-script text.  A stack is whole when its last
# frame is _start or a thread's start (clone3, clone) and no frame of it is
# [unknown].
whole_stacks() {
	awk -v comm="${2:-}" 'BEGIN { RS = "" }
		comm != "" && $1 != comm { next }
		{
			n = split($0, l, "\n")
			total++
			if (l[n] ~ / (_start|clone3|__clone3|clone|__clone)\+0x[0-9a-f]+ \(/ && $0 !~ /\[unknown\]/)
				whole++
		}
		END { print whole + 0, total + 0 }' "$1"
}

# at_least_whole PCT FILE [COMM]: at least PCT% of the stacks are whole (and there are some)
at_least_whole() {
	local w t
	read -r w t < <(whole_stacks "$2" "${3:-}")
	echo "# whole stacks of ${3:-all}: $w of $t" >&3
	[ "$t" -gt 0 ] && awk -v w="$w" -v t="$t" -v p="$1" 'BEGIN { exit !(100 * w >= p * t) }'
}

# not_whole FILE [COMM]: the stacks that are not whole, for a failure's message
not_whole() {
	awk -v comm="${2:-}" 'BEGIN { RS = ""; ORS = "\n\n" }
		comm != "" && $1 != comm { next }
		{ n = split($0, l, "\n") }
		!(l[n] ~ / (_start|clone3|__clone3|clone|__clone)\+0x[0-9a-f]+ \(/ && $0 !~ /\[unknown\]/)' "$1"
}
