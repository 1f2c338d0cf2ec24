# Helpers for the fg-sym suites that name frames of ELF fixtures built at test
# time: `load sym-fixture` after `load helpers`.

BASE=0x555555554000

# mapping PID BASE FILE: the mapping line of FILE's executable segment
mapping() {
	local pid=$1 base=$2 file=$3 vaddr off size dev
	read -r off vaddr size < <(readelf -lW "$file" | awk '$1 == "LOAD" && /E 0x/ { print $2, $3, $5 }')
	dev=$(stat -c %d "$file")
	local start=$((base + (vaddr & ~0xfff)))
	local end=$((start + ((size + (vaddr & 0xfff) + 0xfff) & ~0xfff)))
	printf 'mapping pid=%d start=%x end=%x pgoff=%x maj=%d min=%d ino=%d path=%s\n' \
		"$pid" "$start" "$end" $((off & ~0xfff)) $(((dev >> 8 & 0xfff) | (dev >> 32 & ~0xfff))) \
		$(((dev & 0xff) | (dev >> 12 & ~0xff))) "$(stat -c %i "$file")" "$file"
}

# run_sym FILE ADDRS ARGS...: fg-sym ARGS on one sample whose user stack is ADDRS
# (comma-separated file addresses of FILE, mapped at BASE); output in $output/$stderr
run_sym() {
	local file=$1 addrs=$2 ips= a h
	shift 2
	for a in ${addrs//,/ }; do
		printf -v h '%x' $((BASE + a)) # (no subshell: hundreds of addresses for a PLT)
		ips+=${ips:+,}$h
	done
	{
		mapping 42 $BASE "$file"
		echo "sample pid=42 u=$ips"
	} >"$BATS_TEST_TMPDIR/in.txt"
	fgr-make "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/in.fgr"
	# a hang (a blocking open) fails the test instead of stopping the suite
	fg --separate-stderr timeout 60 fg-sym -v --proc-root "$BATS_TEST_TMPDIR" "$@" \
		"$BATS_TEST_TMPDIR/in.fgr"
}

# addr_of FILE SYMBOL [FROM]: SYMBOL's address in FILE, from the symbols of FROM (default FILE)
addr_of() {
	local a
	a=$(nm "${3:-$1}" | awk -v s="$2" '$3 == s { print $1; exit }')
	[ -n "$a" ] || { echo "no symbol $2 in ${3:-$1}" >&2; return 1; }
	echo $((0x$a))
}
