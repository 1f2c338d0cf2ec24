#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""dwarf-agree.py PERF_TEXT FG_TEXT COMM: do perf's and fg's dwarf-mode profiles agree?

PERF_TEXT is `perf script --no-inline` of a `perf record --call-graph dwarf`
capture, FG_TEXT fg-sym's text of a `fg-sample --call-graph dwarf` capture of
the same workload.  Both are normalised, folded by fg-fold --samples (on PATH), and the
samples of COMM (the first frame of a folded stack) compared:

  - the depth distributions: the largest gap between the two cumulative
    shares of stacks of each depth (the Kolmogorov-Smirnov distance) is at
    most 5 points;
  - the share of each of fg's ten largest stacks is perf's within 3 points;
  - no stack above 1% of fg's samples is missing from perf's.

Normalised, so that only unwinding can make a difference:
  - kernel frames are left out: the two take kernel stacks their own ways;
  - perf ends a stack whose unwinding was cut short (the snapshot too small)
    with a frame at address ffffffffffffffff, [unknown]: left out;
  - a function with several names (aliases at one address, which perf and
    fg's symbol tables may pick differently: __GI___qsort_r and qsort_r) is
    given the name fg gave the same start address of the same file, found as
    ADDRESS - OFFSET (perf prints callers one byte back, fg at the return
    address: the start is the same);
  - fg names a signal trampoline __restore_rt at its address; perf looks it
    up one byte back, before the symbol, and calls it [unknown].

Prints the comparison; exit status 0 when they agree, 1 when not.
"""
import collections
import re
import subprocess
import sys

FRAME = re.compile(r"^(\s+)([0-9a-f]+) (.*)\+0x([0-9a-f]+) \((.*)\)$")
PERF_CUT = re.compile(r"^\s+ffffffffffffffff \[unknown\] \(\[unknown\]\)$")
KS_MAX, SHARE_MAX, MISSING_MIN = 5.0, 3.0, 1.0


def frames(path):
    with open(path, errors="replace") as f:
        for line in f:
            yield line.rstrip("\n")


def names_of(path):
    """(module, start) -> name, from fg's text"""
    canon = {}
    for line in frames(path):
        m = FRAME.match(line)
        if m:
            canon.setdefault((m[5], int(m[2], 16) - int(m[4], 16)), m[3])
    return canon


def normalise(path, canon, out):
    with open(out, "w") as w:
        for line in frames(path):
            if line.endswith("([kernel.kallsyms])") or PERF_CUT.match(line):
                continue
            m = FRAME.match(line)
            if m:
                module, start = m[5], int(m[2], 16) - int(m[4], 16)
                name = canon.get((module, start), m[3])
                if name == "__restore_rt":
                    line = f"{m[1]}{m[2]} [unknown] ({module})"
                else:
                    line = f"{m[1]}{m[2]} {name}+0x{m[4]} ({module})"
            w.write(line + "\n")


def folded(path, comm):
    """stack -> share (%) of the samples of comm, and depth -> share (%)"""
    text = subprocess.run(["fg-fold", "--samples", path], check=True, capture_output=True, text=True).stdout
    stacks = collections.Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack.split(";", 1)[0] == comm:
            stacks[stack] += int(count)
    total = sum(stacks.values())
    if not total:
        sys.exit(f"dwarf-agree: no samples of {comm} in {path}")
    depths = collections.Counter()
    for s, n in stacks.items():
        depths[s.count(";")] += n
    return ({s: 100 * n / total for s, n in stacks.items()},
            {d: 100 * n / total for d, n in depths.items()}, total)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: dwarf-agree.py PERF_TEXT FG_TEXT COMM")
    perf_text, fg_text, comm = sys.argv[1:]
    canon = names_of(fg_text)
    normalise(perf_text, canon, perf_text + ".norm")
    normalise(fg_text, canon, fg_text + ".norm")
    p, pd, pn = folded(perf_text + ".norm", comm)
    f, fd, fn = folded(fg_text + ".norm", comm)
    ok = True

    cp = cf = ks = 0.0
    ks_at = 0
    for d in range(max(max(pd), max(fd)) + 1):
        cp += pd.get(d, 0)
        cf += fd.get(d, 0)
        if abs(cp - cf) > ks:
            ks, ks_at = abs(cp - cf), d
    mean_p = sum(d * s for d, s in pd.items()) / 100
    mean_f = sum(d * s for d, s in fd.items()) / 100
    print(f"{comm}: {fn} samples of fg, {pn} of perf; mean depth fg {mean_f:.2f}, "
          f"perf {mean_p:.2f}; depth distributions {ks:.1f} points apart at most "
          f"(depth {ks_at}; at most {KS_MAX:.0f})")
    if ks > KS_MAX:
        ok = False
        print("DISAGREE: the depth distributions")

    print("fg's ten largest stacks: fg %, perf %")
    for s, share in sorted(f.items(), key=lambda kv: -kv[1])[:10]:
        bad = abs(share - p.get(s, 0)) > SHARE_MAX
        ok &= not bad
        print(f"{'DISAGREE ' if bad else ''}{share:6.2f} {p.get(s, 0):6.2f}  {s[:160]}")
    for s, share in sorted(f.items(), key=lambda kv: -kv[1]):
        if share > MISSING_MIN and s not in p:
            ok = False
            print(f"DISAGREE: above {MISSING_MIN:.0f}% in fg's, not in perf's: {share:.2f} {s[:160]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
