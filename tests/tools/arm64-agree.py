#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""arm64-agree.py TABLE_TEXT LIBDW_TEXT: do fg-sym's tables and libdwfl unwind the
same arm64 snapshots frame for frame?

Both texts are fg-sym's (perf-script text) of one capture, with --unwinder
table and --unwinder libdw.  Stack by stack, in order, the frames must be the
same, but in two places where libdwfl cannot be the reference, each counted:

  - qemu-user's signal trampoline is anonymous code without CFI, whose caller
    no unwinder can find: both stacks are compared up to that frame (module
    "[unknown]") and no further;
  - a leaf in a PLT stub (.plt has no CFI on arm64): the return address is
    still in x30.  libdwfl takes it, then walks on by the frame pointer and
    loses the caller's frames; fg-sym's tables go on from x30's caller by its
    CFI.  There the first two frames must agree and fg-sym's stack must reach
    _start.

Every other stack of fg-sym's must reach _start.  Prints the counts; exit
status 0 when all holds, 1 when not.
"""
import re
import subprocess
import sys

FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
plt_ranges = {}


def stacks(path):
    with open(path, errors="replace") as f:
        text = f.read()
    out = []
    for block in text.split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if lines:
            out.append((lines[0], [FRAME.match(l).groups() for l in lines[1:]]))
    return out


def in_plt(addr, module):
    if module not in plt_ranges:
        ranges = []
        try:
            secs = subprocess.run(["readelf", "-SW", module], capture_output=True, text=True).stdout
        except OSError:
            secs = ""
        for line in secs.splitlines():
            f = line.split("]", 1)[-1].split()
            if len(f) >= 5 and f[0] in (".plt", ".iplt"):
                ranges.append((int(f[2], 16), int(f[2], 16) + int(f[4], 16)))
        plt_ranges[module] = ranges
    return any(lo <= int(addr, 16) < hi for lo, hi in plt_ranges[module])


def cut(frames):
    for i, fr in enumerate(frames):
        if fr[2] == "[unknown]":
            return frames[: i + 1], True
    return frames, False


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: arm64-agree.py TABLE_TEXT LIBDW_TEXT")
    table, libdw = stacks(sys.argv[1]), stacks(sys.argv[2])
    if len(table) != len(libdw) or not table:
        print(f"DISAGREE: {len(table)} stacks with the tables, {len(libdw)} with libdwfl")
        return 1
    same = trampoline = plt = bad = not_whole = 0
    for (head, t), (head2, d) in zip(table, libdw):
        if head != head2:
            print(f"DISAGREE: samples out of order: {head} / {head2}")
            return 1
        t, cut_t = cut(t)
        d, _ = cut(d)
        if t == d:
            same += 1
            trampoline += cut_t
        elif len(t) > 1 and t[:2] == d[:2] and in_plt(t[0][0], t[0][2]):
            plt += 1
        else:
            bad += 1
            if bad <= 3:
                print("DISAGREE:", head)
                for a, b in zip(t + [("", "", "")] * len(d), d + [("", "", "")] * len(t)):
                    if not a[0] and not b[0]:
                        break
                    print(f"  {'  ' if a == b else '!='} {a[1]:40.40} {b[1]}")
        if not cut_t and not t[-1][1].startswith("_start+"):
            not_whole += 1
    print(f"{len(table)} stacks: {same} the same frame for frame ({trampoline} of them up to "
          f"qemu's signal trampoline), {plt} from a PLT stub where libdwfl stops short, "
          f"{bad} different; {not_whole} of fg-sym's not reaching _start")
    return 0 if bad == 0 and not_whole == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
