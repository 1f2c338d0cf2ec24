# Helpers of the Python suites (tests/python.bats, tests/pyframes.bats): the
# Pythons on the machine -- Debian's /usr/bin/python3 (3.11, the interpreter in
# the executable) and pyenv's 3.8 to 3.13 (libpython3.X.so) -- and
# tests/data/python/hotcold.py started under one of them.

PROG=$DATA/python/hotcold.py
PYENV=${PYENV_ROOT:-$HOME/.pyenv}/versions

# python_bin 3.X: the python3.X of pyenv's newest 3.X.*, or of Debian's for "debian"
python_bin() {
	local v p=
	if [ "$1" = debian ]; then
		[ -x /usr/bin/python3 ] && readlink -f /usr/bin/python3
		return
	fi
	for v in $(compgen -G "$PYENV/$1.*" | sort -V); do
		[ -x "$v/bin/python$1" ] && p=$v/bin/python$1
	done
	[ -n "$p" ] && echo "$p"
}

# python_headers 3.X|debian: the directory of Python.h for that interpreter
python_headers() {
	if [ "$1" = debian ]; then
		local m
		m=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
		echo "/usr/include/python$m"
	else
		echo "$(dirname "$(dirname "$(python_bin "$1")")")/include/python$1"
	fi
}

# start 3.X|debian [ARGS]: hotcold.py under that Python, in the background; sets PID, PY
start() {
	local which=$1
	shift
	PY=$(python_bin "$which") || true
	[ -n "$PY" ] || skip "no python $which here"
	"$PY" "$PROG" "$@" >"$BATS_TEST_TMPDIR/ready" &
	PID=$!
	wait_until 10 test -s "$BATS_TEST_TMPDIR/ready"
}

teardown() {
	if [ -n "${PID:-}" ]; then
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
}
