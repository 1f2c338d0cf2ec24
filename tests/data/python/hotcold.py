# A Python program for tests/python.bats and tests/pyframes.bats: main() calls
# hot() and cold() 70/30 (the work each does), forever, and Worker.run (a
# method, for qualified names) does the same in a thread of its own when
# started with --threads.  Prints "ready" once its stacks are in place.
# Other workloads, by the first argument, each forever too:
#   zlib       Packer.pack compresses with zlib: native frames under a method
#   asyncio    coroutines: a task runs crunch(), which main awaits
#   callback   C calls back into Python: libc's qsort compares through cmp()
#   lines      lineloop(), whose work is all on one line (fg-sym --py-lines)
#   exit N     hot() and cold() for N seconds, then exit
import sys
import threading


def spin(n):
    # the same work each step: x stays a one-digit int (a growing sum would make
    # hot's later steps dearer than cold's, and the split more than 70/30)
    x = 0
    for i in range(n):
        x = (x + i * i) & 0xFFFF
    return x


def hot():
    return spin(7000)


def cold():
    return spin(3000)


class Worker:
    def run(self):
        while True:
            hot()
            cold()


class Packer:
    def __init__(self):
        import os

        self.data = os.urandom(1 << 16) + bytes(1 << 16)

    def pack(self):
        import zlib

        return zlib.compress(self.data, 9)


async def crunch():
    import asyncio

    spin(5000)
    await asyncio.sleep(0)


async def amain():
    import asyncio

    print("ready", flush=True)
    while True:
        await asyncio.create_task(crunch())


def cmp(a, b):
    spin(50)
    return (a[0] > b[0]) - (a[0] < b[0])


def callback():
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                           ctypes.POINTER(ctypes.c_int))
    libc.qsort.restype = None
    compare = CMP(cmp)
    print("ready", flush=True)
    while True:
        arr = (ctypes.c_int * 64)(*range(64, 0, -1))
        libc.qsort(arr, 64, ctypes.sizeof(ctypes.c_int), compare)


def lineloop(n):
    x = 0
    for i in range(n): x = (x + i * i) & 0xFFFF  # noqa: E701 -- lineloop's line
    return x


def other(mode):
    if mode == "zlib":
        p = Packer()
        print("ready", flush=True)
        while True:
            p.pack()
    if mode == "asyncio":
        import asyncio

        asyncio.run(amain())
    if mode == "callback":
        callback()
    if mode == "lines":
        print("ready", flush=True)
        while True:
            lineloop(100000)  # lineloop's call


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode in ("zlib", "asyncio", "callback", "lines"):
        other(mode)
    end = None
    if mode == "exit":
        import time

        end = time.monotonic() + float(sys.argv[2])
    if "--threads" in sys.argv:
        threading.Thread(target=Worker().run, name="worker", daemon=True).start()
    print("ready", flush=True)
    while end is None or time.monotonic() < end:
        hot()
        cold()


main()
