# A Python program for tests/python.bats: main() calls hot() and cold() 70/30,
# forever, and Worker.run (a method, for qualified names) does the same in a
# thread of its own when started with --threads.  Prints "ready" once its
# stacks are in place.
import sys
import threading


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
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


def main():
    if "--threads" in sys.argv:
        threading.Thread(target=Worker().run, name="worker", daemon=True).start()
    print("ready", flush=True)
    while True:
        hot()
        cold()


main()
