#!/usr/bin/env python3
"""window-stream: a deterministic stream of perf script text, as fg-sym --header
writes it, for fg-ch's tests and benchmark: samples on a wall clock, to be cut into
windows.  (tests/tools/perf-stream, fg-top's, writes samples of no particular time,
paced for a reader's throughput; this one gives the exact samples of each window, a
stream cut anywhere into pieces, and hostile frame names.)

  window-stream.py [--start EPOCH] [--seconds N] [--hz HZ] [--seed S] [--comm NAME]
                 [--hostile] [--samples A:B] [--pace]

Samples HZ a second for N seconds from EPOCH (wall clock, tied to the samples'
monotonic clock by fg-sym's "# reference time:" header), each a stack drawn from a
small vocabulary that SEED chooses.  --hostile names frames as an attacker would:
quotes, backslashes, tabs, SQL, shell, control characters, a 4 KiB name.
--samples A:B prints only the samples A (counted from 0) to B-1, with the same
header: a stream cut in two pieces.  --pace prints each sample no sooner than its
time after the start of the run (a live pipeline), flushing each.
"""
import argparse
import random
import sys
import time

HOSTILE = [
    "it's", "back\\slash", "tab\there", 'dq"uote', "'); DROP TABLE samples; --",
    "$(reboot)", "`id`", "%s%n", "semi:colon", "\\t\\n", "\x01\x7f", "caf\u00e9 \u2603",
    "<script>x</script>", "a" * 4096, "end\\", "{x:UInt64}", "\\'", "ends with space ",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, default=1700000000)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--hz", type=int, default=99)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--comm", default="app")
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--samples", default=None)
    ap.add_argument("--pace", action="store_true")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    names = HOSTILE if a.hostile else [f"fn_{a.seed}_{i}" for i in range(40)]
    stacks = []
    for _ in range(25):
        depth = rnd.randint(2, 6)
        stacks.append(["main"] + [rnd.choice(names) for _ in range(depth)])
    n = a.seconds * a.hz
    lo, hi = 0, n
    if a.samples:
        lo, hi = (int(x) for x in a.samples.split(":"))
    mono0 = 1000
    out = sys.stdout.buffer
    out.write(b"# ========\n# clockid: monotonic (1)\n")
    out.write(("# reference time: %s.000000 = %d.000000 (TOD) = %d.000000000 (monotonic)\n"
               % (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(a.start)), a.start, mono0))
              .encode())
    out.write(b"# ========\n#\n")
    t0 = time.monotonic()
    for i in range(n):
        st = stacks[rnd.randrange(len(stacks))]
        if not lo <= i < hi:
            continue
        t = mono0 * 10**9 + i * 10**9 // a.hz
        rec = ["%s 4242/4242 [000] %d.%09d: 1 cpu-clock:" % (a.comm, t // 10**9, t % 10**9)]
        for k, f in enumerate(reversed(st)):
            rec.append("\t%x %s+0x0 (/usr/bin/%s)" % (0x401000 + 16 * k, f, a.comm))
        out.write(("\n".join(rec) + "\n\n").encode())
        if a.pace:
            wait = t0 + (i - lo + 1) / a.hz - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            out.flush()
    out.flush()


if __name__ == "__main__":
    main()
