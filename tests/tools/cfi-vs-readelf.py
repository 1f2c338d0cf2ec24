#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cfi-vs-readelf.py READELF_OUT CFI_DUMP_OUT

Compare the rows of lib/cfi (tests/tools/cfi-dump FILE) with those of
`readelf --debug-dump=frames-interp FILE`, row by row: at the address of every
row readelf prints, our row must give the same CFA, rbp and return address;
every row of ours must start where readelf starts one (or where an FDE starts
or ends).  Rows lib/cfi does not hold (signal trampolines, invalid rules) are
counted, not compared.  Prints one summary line; exit 1 on any difference.
"""
import bisect
import re
import sys

FDE = re.compile(r"^[0-9a-f]{8} [0-9a-f]+ [0-9a-f]{8} FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)")
CIE = re.compile(r"^([0-9a-f]{8}) [0-9a-f]+ [0-9a-f]{8} CIE")
ROW = re.compile(r"^([0-9a-f]{16}) (.*)$")
TOKEN = re.compile(r"\S+ \([^)]*\)|\S+")


def readelf_rows(path):
    """[(lo, hi, [(addr, cfa, rbp, ra)], from_cie)] per FDE of .eh_frame and .debug_frame;
    an FDE without instructions (readelf prints no rows) gets its CIE's initial row"""
    fdes = []
    cies = {}
    cols = None
    cur = None
    section = 0
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("Contents of the "):
            section += 1
            cur = None
            continue
        m = CIE.match(line)
        if m:
            cur = []
            cies[(section, int(m.group(1), 16))] = cur
            cols = None
            continue
        m = FDE.match(line)
        if m:
            cur = []
            fdes.append((int(m.group(2), 16), int(m.group(3), 16), cur,
                         (section, int(m.group(1), 16))))
            cols = None
            continue
        if line.startswith("   LOC"):
            cols = line.split()[1:]
            continue
        m = ROW.match(line)
        if m and cur is not None and cols:
            toks = TOKEN.findall(m.group(2))
            vals = dict(zip(cols, toks))
            cur.append((int(m.group(1), 16), vals.get("CFA", "?"), vals.get("rbp", "u"),
                        vals.get("ra", "?")))
    out = []
    for lo, hi, rs, cie in fdes:
        if rs:
            out.append((lo, hi, rs, False))
        elif cies.get(cie):
            _, cfa, rbp, ra = cies[cie][-1]
            out.append((lo, hi, [(lo, cfa, rbp, ra)], True))
        else:
            out.append((lo, hi, [], True))
    return out


def our_rows(path):
    addrs, rows = [], []
    with open(path) as f:
        for line in f:
            a, cfa, rbp, ra = line.split()
            addrs.append(int(a, 16))
            rows.append((cfa, rbp, ra))
    return addrs, rows


def norm_rbp(v):
    # "u": not yet set in this FDE (or undefined); "s": same value; both leave rbp as it is
    return "u" if v in ("u", "s") else v


def main():
    fdes = readelf_rows(sys.argv[1])
    addrs, rows = our_rows(sys.argv[2])
    compared = differ = signal = invalid = lost = norows = 0
    starts = set()
    bounds = set()
    shown = 0
    for lo, hi, rs, from_cie in fdes:
        bounds.add(lo)
        bounds.add(hi)
        norows += from_cie  # readelf prints no rows for an FDE without instructions
        for addr, cfa, rbp, ra in rs:
            starts.add(addr)
            i = bisect.bisect_right(addrs, addr) - 1
            if i < 0:
                mine = ("none", "-", "-")
            else:
                mine = rows[i]
            if mine[0] == "signal":
                signal += 1
                continue
            if mine[0] == "invalid":
                invalid += 1
                continue
            compared += 1
            ok = mine[0] == cfa and mine[2] == ra
            if mine[1] == "lost":
                lost += 1
            elif norm_rbp(mine[1]) != norm_rbp(rbp):
                ok = False
            if not ok:
                differ += 1
                if shown < 20:
                    print("%016x readelf %s %s %s ours %s %s %s" % ((addr, cfa, rbp, ra) + mine))
                    shown += 1
    # rows of ours that readelf does not start (within FDEs it prints rows for)
    extra = 0
    prev = None
    for a, r in zip(addrs, rows):
        # the entry point's row (not CFI: cfi-dump) and the gap after it
        skip = r[0] == "entry" or (prev == "entry" and r[0] == "none")
        prev = r[0]
        if not skip and a not in starts and a not in bounds:
            extra += 1
            if shown < 20:
                print("%016x ours %s %s %s: readelf starts no row here" % ((a,) + r))
                shown += 1
    print("compared %d rows: %d differ, %d rows of ours readelf does not start; "
          "unsupported %d (signal %d, invalid %d); rbp rules not held %d; "
          "FDEs compared with their CIE row %d"
          % (compared, differ, extra, signal + invalid, signal, invalid, lost, norows))
    return 1 if differ or extra else 0


if __name__ == "__main__":
    sys.exit(main())
