# Makes tests/data/python/lines-3.X.txt, the line tables test_pyline.c decodes:
#   for p in /root/.pyenv/versions/3.{8,9,10,11,12,13}*/bin/python3 /usr/bin/python3.11; do
#       $p tests/data/python/mklines.py > tests/data/python/lines-$($p -c \
#           'import sys; print("%d.%d%s" % (sys.version_info[:2] + ("-debian" if sys.prefix == "/usr" else "",)))').txt
#   done
# (the pyenv builds of 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0 and
# Debian's python3.11 3.11.2).  Each code object of SOURCE, compiled by the
# interpreter running this, is written as
#   code QUALNAME FIRSTLINENO TABLE-IN-HEX
#   lines OFFSET:LINE ...
# with the line of every instruction's byte offset as the interpreter's own
# library gives it (co_lines() from 3.10, dis.findlinestarts() before; -1:
# no line), two offsets past the end included.
import dis
import sys

SOURCE = '''
import os


def straight(a, b):
    x = a + b
    y = x * 2
    return y


def loop(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        else:
            total -= 1
    while total > 100:
        total //= 2
    return total


def far(a):
    b = a + 1
''' + '\n' * 300 + '''
    c = b + 2
''' + '\n' * 40000 + '''
    d = (c +
         a +
         b)
    return d


class Packer:
    def pack(self, data):
        out = []
        for chunk in data:
            out.append(bytes(chunk)
                       + b"x")
        try:
            os.stat("/nonexistent")
        except OSError as e:
            out.append(str(e).encode())
        finally:
            out.append(b"")
        return [c for c in out if c] + list(map(lambda z: z * 2, out))


def long_body(x):
''' + ''.join('    x = x + %d * (x - %d) // (%d + x * x)\n' % (i, i, i + 1) for i in range(120)) + '''
    return x


async def coro(q):
    async with q:
        await q.get()
    return [v async for v in q]


def gen(n):
    for i in range(n):
        yield i
        yield from range(i)
'''


def walk(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, 'co_code'):
            yield from walk(c)


def lines(code):
    n = len(code.co_code) + 4
    at = {}
    if sys.version_info >= (3, 10):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                at[off] = -1 if line is None else line
        return [(off, at.get(off, -1)) for off in range(0, n, 2)]
    starts = list(dis.findlinestarts(code))
    out = []
    for off in range(0, n, 2):
        line = code.co_firstlineno
        for s, ln in starts:
            if s <= off:
                line = ln
        out.append((off, line))
    return out


def main():
    top = compile(SOURCE, '/srv/app/mod.py', 'exec')
    print('# Python %s' % sys.version.split()[0])
    for code in walk(top):
        table = code.co_linetable if sys.version_info >= (3, 10) else code.co_lnotab
        name = getattr(code, 'co_qualname', code.co_name)
        print('code %s %d %s' % (name.replace(' ', '_'), code.co_firstlineno, table.hex() or '-'))
        print('lines ' + ' '.join('%d:%d' % p for p in lines(code)))


main()
