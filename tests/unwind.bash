# Helpers of the unwinding suites (tests/unwind.bats, tests/fg-sym-unwind.bats,
# tests/agreement-dwarf.bats): what fg-sym's text says of its stacks.

# whole_stacks FILE [COMM]: "WHOLE TOTAL GONE" for the samples of COMM (all of
# them when empty) in fg-sym's perf-script text.  A stack is whole when its last
# frame is _start or a thread's start (clone3, clone) and no frame of it is
# [unknown], but for the vDSO's: it names its entry points only, and with the
# kvm-clock clock source (these guests') clock_gettime runs a function of its
# own (vread_pvclock) that no symbol table on the machine names.  GONE: the
# stacks not whole taken while the kernel replaced or tore down the process'
# address space (in bprm_execve or do_exit: no user stack of its own to
# unwind); TOTAL leaves them out.
whole_stacks() {
	awk -v comm="${2:-}" "$WHOLE_AWK"'
		{ total++; if (whole()) w++; else if (gone()) { total--; g++ } }
		END { print w + 0, total + 0, g + 0 }' "$1"
}

# the awk functions of whole_stacks and not_whole, over one stack in $0
WHOLE_AWK='BEGIN { RS = "" }
	comm != "" && $1 != comm { next }
	function whole(	n, l, s) {
		n = split($0, l, "\n")
		s = $0
		gsub(/ \[unknown\] \(\[vdso\]\)/, "", s)
		return l[n] ~ / (_start|clone3|__clone3|clone|__clone)\+0x[0-9a-f]+ \(/ && s !~ /\[unknown\]/
	}
	function gone() { return $0 ~ / (bprm_execve|do_exit)\+0x[0-9a-f]+ \(\[kernel\.kallsyms\]\)/ }'

# at_least_whole PCT FILE [COMM]: at least PCT% of the stacks are whole (and there are some),
# those taken during an exec or an exit left out (at most 10% of them)
at_least_whole() {
	local w t g
	read -r w t g < <(whole_stacks "$2" "${3:-}")
	echo "# whole stacks of ${3:-all}: $w of $t ($g more during an exec or exit)" >&3
	[ "$t" -gt 0 ] && awk -v w="$w" -v t="$t" -v g="$g" -v p="$1" \
		'BEGIN { exit !(100 * w >= p * t && 10 * g <= t + g) }'
}

# not_whole FILE [COMM]: the stacks that are not whole, for a failure's message
not_whole() {
	awk -v comm="${2:-}" "$WHOLE_AWK"'
		!whole() { print $0 "\n" }' "$1"
}

# every_mode FILE: a stack of each mode of the unwinding fixture (tests/unwind/fixture.c) in FILE
every_mode() {
	local f
	for f in rec_a slow_cmp fixlib_work lib_callback on_usr1 mode_plt realigned drap_spin \
		worker mode_vdso; do
		grep -q " $f+" "$1" || {
			echo "no stack through $f" >&2
			return 1
		}
	done
}

# reach_start NAME COMM: at least 99% of COMM's samples in $BATS_TEST_TMPDIR/NAME.out
# (fg-sym's text of NAME.fgr) end at _start: those unwound in BPF (--call-graph cfi) in
# their in-kernel frames (fg-sym --unwinder none), the others in fg-sym's unwinding of
# their snapshot.  Left out, and counted (at most 5%): samples taken during the exec (no
# user address space, or the registers of the image being replaced), and snapshots full
# to their last byte that end early (a stack deeper than the snapshot: python3 starting
# up).
reach_start() {
	local d=$BATS_TEST_TMPDIR
	fg-sym --unwinder none "$d/$1.fgr" >"$d/$1.kernel" 2>/dev/null
	fgr-dump "$d/$1.fgr" | sed -n 's/^sample .* comm=\(.*\) weight=.* flags=\(0x[0-9a-f]*\) .* size=\([0-9]*\)$/\1 \2 \3/p
		s/^sample .* comm=\(.*\) weight=.* flags=\(0x[0-9a-f]*\) .*/\1 \2 0/p' >"$d/$1.flags"
	python3 - "$d/$1.out" "$d/$1.kernel" "$d/$1.flags" "$2" 2>&3 <<-'EOF'
		import re, sys
		snap = open(sys.argv[1]).read().split("\n\n")
		kern = open(sys.argv[2]).read().split("\n\n")
		meta = [l.rsplit(" ", 2) for l in open(sys.argv[3]).read().splitlines()]
		assert len(meta) == len(snap) - 1 == len(kern) - 1, (len(meta), len(snap), len(kern))
		sizes = [int(m[2]) for m in meta]
		full = max(sizes)
		at_start = re.compile(r" _start\+0x[0-9a-f]+ \([^)]*\)$")
		n = w = inbpf = exec_ = deep = 0
		for s, k, (comm, f, size) in zip(snap, kern, meta):
		    f, size = int(f, 16), int(size)
		    if comm != sys.argv[4]:
		        continue
		    if f & 0x1000:  # FG_SAMPLE_F_USTACK_CFI: the walk's own frames
		        inbpf += 1
		        s = k
		    elif f & 0x10 or re.search(r" execve\+0x[0-9a-f]+ \([^)]*\)$", s):
		        exec_ += 1  # FG_SAMPLE_F_KERNEL_THREAD: mid-exec, no mm of its own
		        continue
		    elif size and size == full and not at_start.search(s):
		        deep += 1
		        continue
		    n += 1
		    if at_start.search(s):
		        w += 1
		    elif n - w <= 3:
		        print(s, file=sys.stderr)
		print("# %d of %d %s stacks end at _start (%d unwound in BPF); left out: %d taken "
		      "during the exec, %d snapshots of %d bytes that ended first"
		      % (w, n, sys.argv[4], inbpf, exec_, deep, full), file=sys.stderr)
		sys.exit(0 if n >= 100 and 100 * w >= 99 * n and 20 * (exec_ + deep) <= n else 1)
	EOF
}

# oracle_text LIBDW OURS: LIBDW's text (fg-sym --unwinder libdw) where each stack that libdwfl
# ended in ld.so's lazy-binding trampoline (_dl_runtime_resolve_xsavec and its kin) and that
# OURS (the tables' text of the same samples, in the same order) goes on from, frame for frame,
# is OURS' stack; those replaced are counted on fd 3.  libdwfl cannot leave the trampoline when
# the leaf is _dl_fixup before it saved rbx: the trampoline's CFA is rbx plus 32, and elfutils'
# x86-64 default rules (backends/x86_64_cfi.c, 0.188) make DWARF register 0 (rax) same-value where
# they mean 3 (rbx), so rbx without a rule in the leaf's row is undefined to libdwfl.
oracle_text() {
	awk -v ours="$2" 'BEGIN { RS = ""; ORS = "\n\n" }
		{
			if ((getline o <ours) <= 0)
				o = ""
			n = split($0, l, "\n")
			if (o != $0 && l[n] ~ / _dl_runtime_resolve_[a-z]+\+0x[0-9a-f]+ \(/ &&
			    substr(o, 1, length($0) + 1) == $0 "\n") {
				print o
				k++
			} else
				print
		}
		END { if (k) printf "# %d stacks libdwfl ended in _dl_runtime_resolve, the tables went on\n", k + 0 | "cat >&3" }' "$1"
}
