bats_require_minimum_version 1.5.0
load helpers

CORPUS=$DATA/flamegraph

teardown() {
	# the small tmpfs of the full-disk test, whatever happened
	if mountpoint -q "$BATS_TEST_TMPDIR/small" 2>/dev/null; then
		cd / && umount "$BATS_TEST_TMPDIR/small"
	fi
}

# svg_ok FILE: well-formed XML, valid UTF-8, one <script>, no network reference
svg_ok() {
	python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: invalid UTF-8 raises
root = ET.fromstring(raw)
tags = [el.tag.rsplit("}", 1)[-1] for el in root.iter()]
assert tags.count("script") <= 1, "more than one script element"
for el in root.iter():
    for k, v in el.attrib.items():
        if k.endswith("href"):
            assert not v.strip().lower().startswith("javascript:"), v
        assert not k.lower().startswith("on"), "event attribute " + k
assert not re.search(rb"(src|href)=\"https?:", raw), "network reference"
assert b"<!DOCTYPE" not in raw, "a DOCTYPE with a URL"
PY
}

# frames FILE [--inverted]: the frame table (tests/tools/svg-frames)
frames() {
	svg-frames "$@"
}

# corpus_case LABEL: fg-svg with LABEL.args draws flamegraph.pl's frames
corpus_case() {
	local label=$1 prefix=${1%%-*} args=() inv=() in
	in=$(echo "$CORPUS"/input/perf-"$prefix"-*)
	mapfile -t args < <(grep -v '^$' "$CORPUS/expected/$label.args")
	grep -qx -- --inverted "$CORPUS/expected/$label.args" && inv=(--inverted)
	fg fg-svg "${args[@]}" "$in"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/g.svg"
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	frames "${inv[@]}" "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	assert_golden "$CORPUS/expected/$label.frames"
}

svg() { # ARGS... < input: fg-svg into $BATS_TEST_TMPDIR/g.svg, status in $status
	run --separate-stderr fg-svg "$@"
	echo "# fg-svg $* -> $status" >&3
	[[ $status -lt 128 ]]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/g.svg"
}

@test "corpus: cycles-diff (differential)" { corpus_case cycles-diff; }
@test "corpus: funcab-countname (--countname)" { corpus_case funcab-countname; }
@test "corpus: iperf-default" { corpus_case iperf-default; }
@test "corpus: iperf-inverted (--inverted)" { corpus_case iperf-inverted; }
@test "corpus: iperf-reverse (--reverse)" { corpus_case iperf-reverse; }
@test "corpus: java-minwidth (--minwidth 3)" { corpus_case java-minwidth; }
@test "corpus: vertx-flamechart (--flamechart)" { corpus_case vertx-flamechart; }

@test "every corpus case has a test" {
	local n
	n=$(ls "$CORPUS"/expected/*.args | wc -l)
	[ "$(grep -c '^@test "corpus: ' "$BATS_TEST_FILENAME")" -eq "$n" ]
}

@test "svg-frames reads a flamegraph.pl-style SVG: entities, CDATA, DOCTYPE, links" {
	cat >"$BATS_TEST_TMPDIR/pl.svg" <<'SVG'
<?xml version="1.0" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg version="1.1" width="1200" height="86" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<script type="text/ecmascript"><![CDATA[ if (a < b && c) { x = "<g><title>no (1 s)</title><rect x='1' y='1'/></g>"; } ]]></script>
<!-- <g><title>comment (9 samples, 1%)</title><rect x="0" y="0"/></g> -->
<text id="title" x="600.00" y="24" >Flame Graph</text>
<g id="frames">
<g >
<title>all (1,234 samples, 100%)</title><rect x="10.0" y="53.0" width="1180.0" height="15.0" fill="rgb(1,2,3)" rx="2" ry="2" />
<text  x="13.00" y="63.5" >all</text>
</g>
<a xlink:href="x.html"><g >
<title>a&lt;b&gt; &amp;c &quot;q&quot; &#39;s&#x27; &#233; (1,000 samples, 81.04%)</title><rect x="10.0" y="37.0" width="956.3" height="15.0" fill="rgb(1,2,3)" rx="2" ry="2" />
</g></a>
<g >
<title>f (3 samples, x) (234 samples, 18.96%)</title><rect x="966.3" y="37.0" width="223.7" height="15.0" fill="rgb(1,2,3)" rx="2" ry="2" />
</g>
<g >
<title><![CDATA[cd<]]>ata (0.5 ms)</title><rect x="966.3" y="21.0" width="0.5" height="15.0" fill="rgb(1,2,3)" rx="2" ry="2" />
</g>
<g><title>no count here</title><rect x="0" y="0"/></g>
</g>
</svg>
SVG
	fg --separate-stderr svg-frames "$BATS_TEST_TMPDIR/pl.svg"
	[ "$status" -eq 0 ]
	printf '0\t1234\tall\n1\t1000\ta<b> &c "q" '"'s'"' \xc3\xa9\n1\t234\tf (3 samples, x)\n2\t0.5\tcd<ata\n' >"$BATS_TEST_TMPDIR/exp"
	diff -u "$BATS_TEST_TMPDIR/exp" - <<<"$output"
	fg --separate-stderr svg-frames --inverted "$BATS_TEST_TMPDIR/pl.svg"
	[ "$(cut -f1,3 <<<"$output" | tr '\t\n' ': ')" = "0:cd<ata 1:a<b> &c \"q\" 's' é 1:f (3 samples, x) 2:all " ]
	# not well-formed: an error, status 1
	printf '<svg><g><title>x (1 s)</title><rect x="1" y="2"/></g>' >"$BATS_TEST_TMPDIR/bad.svg"
	fg -1 --separate-stderr svg-frames "$BATS_TEST_TMPDIR/bad.svg"
	[[ $stderr == "svg-frames: '$BATS_TEST_TMPDIR/bad.svg': not well-formed XML at byte 53: elements left open at the end" ]]
	printf '<svg><g><title>x &nbsp; (1 s)</title><rect x="1" y="2"/></g></svg>' >"$BATS_TEST_TMPDIR/bad.svg"
	fg -1 --separate-stderr svg-frames "$BATS_TEST_TMPDIR/bad.svg"
	[[ $stderr == *"an undefined entity" ]]
}

@test "-h prints usage to stdout and exits 0" {
	fg --separate-stderr fg-svg -h
	[ "$status" -eq 0 ]
	[[ $output == "usage: fg-svg "* ]]
	[ -z "$stderr" ]
	fg --separate-stderr fg-svg --help
	[ "$status" -eq 0 ]
}

@test "-V prints the version" {
	fg fg-svg -V
	[ "$status" -eq 0 ]
	[[ $output == "fg-svg "[0-9]* ]]
}

@test "an unknown option prints usage to stderr and exits 2" {
	fg -2 --separate-stderr fg-svg --bogus </dev/null
	[ -z "$output" ]
	[[ $stderr == *"unrecognized option"* ]]
	[[ $stderr == *"usage: fg-svg"* ]]
}

@test "invalid option values are usage errors" {
	local bad
	for bad in "--colors=rainbow" "--minwidth=x" "--minwidth=-1" "--width=abc" "--width=10.5" \
		"--height=0" "--fontsize=big" "--bgcolors=pink" "--encoding=a\"b" "--factor=0" \
		"--total=-3"; do
		fg -2 --separate-stderr fg-svg "$bad" </dev/null
		[[ $stderr == "fg-svg: invalid "* ]]
		[ -z "$output" ]
	done
}

@test "--help and the man page list the same options" {
	local opt
	fg fg-svg --help
	for opt in $(grep -o '^\.It Fl \(-\)\?[a-zA-Z]*' "$TOP/man/fg-svg.1" | sed 's/^\.It Fl /-/'); do
		[[ $output == *" $opt"* ]] || { echo "not in --help: $opt"; return 1; }
	done
	for opt in $(printf '%s\n' "$output" | grep -o '^  \(-., \)\?--[a-z]*' | grep -o -- '--[a-z]*'); do
		grep -q "^\.It Fl \\${opt#-}" "$TOP/man/fg-svg.1" || grep -q "Fl \\${opt#-}" "$TOP/man/fg-svg.1" ||
			{ echo "not in the man page: $opt"; return 1; }
	done
}

@test "the embedded script is lib/svg-script.js" {
	cp "$TOP/lib/svg_script.c" "$BATS_TEST_TMPDIR/before.c"
	local tmp="$BATS_TEST_TMPDIR/top"
	mkdir -p "$tmp/lib" "$tmp/scripts"
	cp "$TOP/lib/svg-script.js" "$tmp/lib/"
	cp "$TOP/scripts/gen-svg-script" "$tmp/scripts/"
	"$tmp/scripts/gen-svg-script"
	diff -u "$TOP/lib/svg_script.c" "$tmp/lib/svg_script.c"
}

@test "input: the count is the last field, and may be fractional" {
	printf 'a;b 1.5\na;c 2.\na;b\t0.5\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	frames "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	printf '0\t4\tall\n1\t4\ta\n2\t2\tb\n2\t2\tc\n' | diff -u - "$BATS_TEST_TMPDIR/out"
}

@test "input: several files merge, and - is standard input" {
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/1"
	printf 'a;b 2\nx 1\n' >"$BATS_TEST_TMPDIR/2"
	printf 'a;c 4\n' >"$BATS_TEST_TMPDIR/in"
	svg "$BATS_TEST_TMPDIR/1" - "$BATS_TEST_TMPDIR/2" <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	frames "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	printf '0\t8\tall\n1\t7\ta\n1\t1\tx\n2\t3\tb\n2\t4\tc\n' | diff -u - "$BATS_TEST_TMPDIR/out"
}

@test "input: two counts draw the second and colour the change" {
	printf 'a;more 1 9\na;less 9 1\na;same 5 5\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	grep -q '<title>more (9 samples, 60.00%; +53.33%)</title>.*fill="#ff0000"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q '<title>less (1 samples, 6.67%; -53.33%)</title>.*fill="#0000ff"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q '<title>same (5 samples, 33.33%; 0.00%)</title>.*fill="#ffffff"' "$BATS_TEST_TMPDIR/g.svg"
	printf 'a;more 1 9\na;less 9 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --negate <"$BATS_TEST_TMPDIR/in"
	grep -q '<title>more (9 samples, 90.00%; -80.00%)</title>.*fill="#0000ff"' "$BATS_TEST_TMPDIR/g.svg"
}

@test "bad input: lines without a count are skipped and counted" {
	printf 'a;b 1\nno count here\n\na;c x\na;c 2\n' >"$BATS_TEST_TMPDIR/in"
	svg "$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	[[ $stderr == "fg-svg: ignored 3 lines with invalid format (the first: '$BATS_TEST_TMPDIR/in' line 2)" ]]
	frames "$BATS_TEST_TMPDIR/g.svg" | head -1 | grep -qx "0	3	all"
}

@test "bad input: empty input gives a valid SVG saying so, status 2" {
	svg </dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "fg-svg: no stack counts found" ]]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'nothing to show' "$BATS_TEST_TMPDIR/g.svg"
	printf 'garbage\na;b 0\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 2 ]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
}

@test "bad input: an unreadable file is an error, status 1" {
	fg -1 --separate-stderr fg-svg "$BATS_TEST_TMPDIR/missing"
	[ "$stderr" = "fg-svg: cannot read '$BATS_TEST_TMPDIR/missing': No such file or directory" ]
	[ -z "$output" ]
	fg -1 --separate-stderr fg-svg "$BATS_TEST_TMPDIR"
	[ "$stderr" = "fg-svg: cannot read '$BATS_TEST_TMPDIR': Is a directory" ]
}

@test "a failed write is an error, status 1" {
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/in"
	fg -1 --separate-stderr bash -c 'fg-svg "$1" >/dev/full' - "$BATS_TEST_TMPDIR/in"
	[[ $stderr == "fg-svg: write error: No space left on device" ]]
}

@test "-o FILE writes the graph whole, as an ordinary file" {
	mkdir "$BATS_TEST_TMPDIR/d"
	cd "$BATS_TEST_TMPDIR/d"
	printf 'a;b 1\n' >in
	umask 027
	fg --separate-stderr fg-svg -o g.svg in
	[ "$status" -eq 0 ]
	[ -z "$output" ] && [ -z "$stderr" ]
	svg_ok g.svg
	[ "$(stat -c %a g.svg)" = 640 ]
	[ "$(ls -A)" = "$(printf 'g.svg\nin')" ]
	fg-svg in | cmp - g.svg
	# what is not a regular file is written in place
	fg --separate-stderr fg-svg --output /dev/stdout in
	[ "$status" -eq 0 ]
	[[ $output == "<?xml"*"</svg>" ]]
	[ -L /dev/stdout ]
	# nothing to draw: status 2, and the file is left alone
	fg -2 --separate-stderr fg-svg -o g.svg /dev/null
	[ "$stderr" = "fg-svg: no stack counts found" ]
	fg-svg in | cmp - g.svg
	fg -1 --separate-stderr fg-svg -o "$BATS_TEST_TMPDIR/no/such/g.svg" in
	[[ $stderr == "fg-svg: cannot write '$BATS_TEST_TMPDIR/no/such/g.svg': No such file or directory" ]]
}

@test "a full disk leaves no partial file: -o keeps the old graph, --cp the old palette.map" {
	requires root
	local d=$BATS_TEST_TMPDIR/small
	mkdir "$d"
	mount -t tmpfs -o size=12k tmpfs "$d"
	# the java case draws a 200 KB SVG
	printf 'old graph\n' >"$d/g.svg"
	fg --separate-stderr fg-svg -o "$d/g.svg" "$CORPUS/input/perf-java-stacks-01--pid.folded"
	[ "$status" -eq 1 ]
	[ "$stderr" = "fg-svg: cannot write '$d/g.svg': No space left on device" ]
	[ "$(cat "$d/g.svg")" = "old graph" ]
	[ "$(ls -A "$d")" = g.svg ]
	rm "$d/g.svg"
	fg --separate-stderr fg-svg -o "$d/g.svg" "$CORPUS/input/perf-java-stacks-01--pid.folded"
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$d")" ]
	# palette.map: the disk full before it is written
	printf 'a->rgb(1,2,3)\n' >"$d/palette.map"
	head -c 8192 /dev/zero >"$d/filler" || true
	printf 'a;%s 1\n' $(seq 2000) >"$BATS_TEST_TMPDIR/in"
	cd "$d"
	fg --separate-stderr fg-svg --cp -o "$BATS_TEST_TMPDIR/g.svg" "$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 1 ]
	[ "$stderr" = "fg-svg: cannot write 'palette.map': No space left on device" ]
	[ "$(cat palette.map)" = "a->rgb(1,2,3)" ]
	[ "$(ls -A)" = "$(printf 'filler\npalette.map')" ]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
}

@test "safety: hostile names come out as text" {
	local names=('<script>alert(1)</script>' 'a&b&amp' "quo\"te's" ']]>x' '</script><script>x()</script>'
		'javascript:alert(1)' '<![CDATA[x]]>' '<!--c-->' '&#x3c' "<g onload='x()'>")
	: >"$BATS_TEST_TMPDIR/in"
	local n
	for n in "${names[@]}"; do
		printf 'root;%s 1\n' "$n" >>"$BATS_TEST_TMPDIR/in"
	done
	svg --title '</text><script>t()</script>' --subtitle ']]>' --nametype '"<x>' \
		--countname "</title>" --notes 'a -- b <c>' "$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 | sort >"$BATS_TEST_TMPDIR/out"
	{ printf '%s\n' all root "${names[@]}"; } | sort | diff -u - "$BATS_TEST_TMPDIR/out"
	# the one script is ours, and no name reaches it
	[ "$(grep -c '<script' "$BATS_TEST_TMPDIR/g.svg")" -eq 1 ]
	! grep -q 'alert' <(sed -n '/<script/,/<\/script>/p' "$BATS_TEST_TMPDIR/g.svg")
	grep -q '<!-- NOTES: a -_ b &lt;c&gt; -->' "$BATS_TEST_TMPDIR/g.svg"
}

@test "safety: invalid UTF-8 and control characters are replaced" {
	printf 'ok\xc3\xa9;bad\xff\xfe;over\xc0\xaf;sur\xed\xa0\x80;ctl\x01\x1b;nc\xef\xbf\xbe 1\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 >"$BATS_TEST_TMPDIR/out"
	printf 'all\nok\xc3\xa9\nbad\xef\xbf\xbd\xef\xbf\xbd\nover\xef\xbf\xbd\xef\xbf\xbd\n' >"$BATS_TEST_TMPDIR/exp"
	printf 'sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\nctl\xef\xbf\xbd\xef\xbf\xbd\n' >>"$BATS_TEST_TMPDIR/exp"
	printf 'nc\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n' >>"$BATS_TEST_TMPDIR/exp"
	diff -u "$BATS_TEST_TMPDIR/exp" "$BATS_TEST_TMPDIR/out"
}

@test "annotations are stripped from names; -- and - are grey separators" {
	printf 'a_[k];b_[j];--;c_[w] 1\na;-;d_[i] 1\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 | tr '\n' ' ' >"$BATS_TEST_TMPDIR/out"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "all a a - b d -- c " ]
	grep -q '<title>-- (1 samples, 50.00%)</title>.*fill="#a0a0a0"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q '<title>- (1 samples, 50.00%)</title>.*fill="#c8c8c8"' "$BATS_TEST_TMPDIR/g.svg"
}

@test "--colors: annotations choose the java hues" {
	printf 'a_[k];java/Foo:.bar_[j];inl_[i];x::y;sys 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --colors java <"$BATS_TEST_TMPDIR/in"
	local g
	g=$(grep -o '<title>[^<]*</title><rect[^>]*' "$BATS_TEST_TMPDIR/g.svg")
	# kernel orange (blue 0), JIT green, inlined aqua, C++ yellow, system red
	[[ $(grep '<title>a ' <<<"$g") =~ fill=\"#[0-9a-f]{4}00\" ]]
	python3 - "$BATS_TEST_TMPDIR/g.svg" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
def rgb(name):
    m = re.search(r"<title>" + re.escape(name) + r" \(.*?fill=\"#(..)(..)(..)\"", s)
    return tuple(int(x, 16) for x in m.groups())
r, g, b = rgb("java/Foo:.bar"); assert g > r and g > b, (r, g, b)       # green
r, g, b = rgb("inl"); assert g > r and b > r and g == b, (r, g, b)       # aqua
r, g, b = rgb("x::y"); assert r == g and b < r, (r, g, b)               # yellow
r, g, b = rgb("sys"); assert r > g and g == b, (r, g, b)                # red
r, g, b = rgb("a"); assert b == 0 and r > g, (r, g, b)                  # orange
PY
}

@test "--colors: every palette draws; chain colours wakers" {
	local p
	for p in hot mem io wakeup chain java js perl red green blue aqua yellow purple orange; do
		printf 'a;b;--;w 1\nc 1\n' >"$BATS_TEST_TMPDIR/in"
		svg --colors "$p" <"$BATS_TEST_TMPDIR/in"
		[ "$status" -eq 0 ]
		svg_ok "$BATS_TEST_TMPDIR/g.svg"
	done
	printf 'a;w;--;w 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --colors chain <"$BATS_TEST_TMPDIR/in"
	# the same name is blue before the separator and aqua (a waker) after it
	[ "$(grep -o '<title>w ([^<]*</title><rect[^>]*fill="#[0-9a-f]*"' "$BATS_TEST_TMPDIR/g.svg" |
		grep -o '#[0-9a-f]*' | sort -u | wc -l)" -eq 2 ]
}

@test "a name has the same colour in every graph by default; --deterministic too" {
	local mode
	for mode in "" --hash --deterministic; do
		printf 'x;main 5\ny 1\n' >"$BATS_TEST_TMPDIR/in"
		svg $mode <"$BATS_TEST_TMPDIR/in"
		grep -o '<title>main [^<]*</title><rect[^>]*' "$BATS_TEST_TMPDIR/g.svg" | grep -o 'fill="[^"]*"' >"$BATS_TEST_TMPDIR/c1"
		printf 'zz;qq;main 1\n' >"$BATS_TEST_TMPDIR/in"
		svg $mode <"$BATS_TEST_TMPDIR/in"
		grep -o '<title>main [^<]*</title><rect[^>]*' "$BATS_TEST_TMPDIR/g.svg" | grep -o 'fill="[^"]*"' >"$BATS_TEST_TMPDIR/c2"
		diff "$BATS_TEST_TMPDIR/c1" "$BATS_TEST_TMPDIR/c2"
	done
	# flamegraph.pl's --hash colour of "main" in the hot palette: rgb(247,83,46)
	grep -q 'fill="#f7532e"' <(printf 'main 1\n' | fg-svg --hash)
	printf 'main 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --random <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
}

@test "--cp keeps colours in ./palette.map" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --cp <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	grep -qx 'a->rgb([0-9]*,[0-9]*,[0-9]*)' palette.map
	grep -qx 'b->rgb([0-9]*,[0-9]*,[0-9]*)' palette.map
	printf 'b->rgb(1,2,3)\nop->x->rgb(4,5,6)\nnot a colour\n' >palette.map
	printf 'b 1\nop->x 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --cp <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	[[ $stderr == *"ignored 1 lines of 'palette.map'"* ]]
	grep -q '<title>b (.*fill="#010203"' g.svg
	grep -q '<title>op-&gt;x (.*fill="#040506"' g.svg
	grep -qx 'b->rgb(1,2,3)' palette.map
}

@test "--minwidth prunes by pixels or percent and keeps the weight on the parent" {
	printf 'a;big 97\na;s1 1\na;s2 2\n' >"$BATS_TEST_TMPDIR/in"
	svg --minwidth 5% "$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 | tr '\n' ' ' | grep -qx 'all a big '
	grep -q '<g fg-h="3"><title>a (100 samples' "$BATS_TEST_TMPDIR/g.svg"
	# 1 sample is 11.8 px of 1180: 12 px prunes it, 11 px keeps it
	svg --minwidth 12 "$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 | tr '\n' ' ' | grep -qx 'all a big s2 '
	svg --minwidth 11 "$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f3 | tr '\n' ' ' | grep -qx 'all a big s1 s2 '
}

@test "titles: --title, --subtitle, icicle and flame chart defaults" {
	printf 'a 1\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	grep -q '>Flame Graph</text>' "$BATS_TEST_TMPDIR/g.svg"
	printf 'a 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --inverted <"$BATS_TEST_TMPDIR/in"
	grep -q '>Icicle Graph</text>' "$BATS_TEST_TMPDIR/g.svg"
	printf 'a 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --flamechart <"$BATS_TEST_TMPDIR/in"
	grep -q '>Flame Chart</text>' "$BATS_TEST_TMPDIR/g.svg"
	printf 'a 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --title 'My <Graph>' --subtitle 'sub & title' <"$BATS_TEST_TMPDIR/in"
	grep -q '>My &lt;Graph&gt;</text>' "$BATS_TEST_TMPDIR/g.svg"
	grep -q '>sub &amp; title</text>' "$BATS_TEST_TMPDIR/g.svg"
}

@test "layout options: --width, --height, --fonttype, --fontsize, --fontwidth, --encoding, --bgcolors" {
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --width 800 --height 20 --fonttype Mono --fontsize 10 --fontwidth 0.5 \
		--encoding ISO-8859-1 --bgcolors '#123456' <"$BATS_TEST_TMPDIR/in"
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	head -1 "$BATS_TEST_TMPDIR/g.svg" | grep -q 'encoding="ISO-8859-1"'
	grep -q '<svg version="1.1" width="800"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'id="frames" x="10" y="0" width="780"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'height="19" fill=' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'font-family="Mono" font-size="10"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'fg-charpx="5"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'stop-color="#123456"' "$BATS_TEST_TMPDIR/g.svg"
	# without --width the drawing fills the window
	printf 'a 1\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	grep -q '<svg version="1.1" width="100%"' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'fg-fluid="1"' "$BATS_TEST_TMPDIR/g.svg"
}

@test "--total, --factor, --countname, --nametype" {
	printf 'a 25\n' >"$BATS_TEST_TMPDIR/in"
	svg --total 100 --factor 1000 --countname bytes --nametype 'Thing:' <"$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	printf '0\t100000\tall\n1\t25000\ta\n' | diff -u - "$BATS_TEST_TMPDIR/out"
	grep -q '<title>a (25,000 bytes, 25.00%)</title>' "$BATS_TEST_TMPDIR/g.svg"
	grep -q 'fg-nametype="Thing:"' "$BATS_TEST_TMPDIR/g.svg"
	# a total below the real one is ignored, with a warning when it matters
	printf 'a 25\n' >"$BATS_TEST_TMPDIR/in"
	svg --total 10 <"$BATS_TEST_TMPDIR/in"
	[[ $stderr == "fg-svg: --total 10 is less than the actual total 25, so ignored" ]]
	frames "$BATS_TEST_TMPDIR/g.svg" | head -1 | grep -qx '0	25	all'
}

@test "--nameattr sets titles, links and attributes per name" {
	printf 'a\ttitle=A <title>\thref=doc/a.html?a=1&b=2\tclass=x"y\n' >"$BATS_TEST_TMPDIR/attrs"
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --nameattr "$BATS_TEST_TMPDIR/attrs" <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	svg_ok "$BATS_TEST_TMPDIR/g.svg"
	grep -q '<a xlink:href="doc/a.html?a=1&amp;b=2" target="_top"><g class="x&quot;y"><title>A &lt;title&gt;</title>' "$BATS_TEST_TMPDIR/g.svg"
	printf 'no tab here\n' >"$BATS_TEST_TMPDIR/attrs"
	run --separate-stderr fg-svg --nameattr "$BATS_TEST_TMPDIR/attrs" </dev/null
	[ "$status" -eq 1 ]
	[[ $stderr == "fg-svg: '$BATS_TEST_TMPDIR/attrs' line 1: expected NAME<TAB>key=value<TAB>..." ]]
}

@test "--base re-roots stacks at a function and counts what it leaves out" {
	printf 'x;main;work;f 3\ny;main;g 1\nz;other 2\n' >"$BATS_TEST_TMPDIR/in"
	svg --base main <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	[[ $stderr == "fg-svg: left out 1 lines (2 samples) without a --base frame" ]]
	frames "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	printf '0\t4\tall\n1\t4\tmain\n2\t1\tg\n2\t3\twork\n3\t3\tf\n' | diff -u - "$BATS_TEST_TMPDIR/out"
}

@test "--reverse merges from the leaves, differential too" {
	printf 'a;b;leaf 1 2\nc;leaf 3 4\n' >"$BATS_TEST_TMPDIR/in"
	svg --reverse <"$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" >"$BATS_TEST_TMPDIR/out"
	printf '0\t6\tall\n1\t6\tleaf\n2\t2\tb\n2\t4\tc\n3\t2\ta\n' | diff -u - "$BATS_TEST_TMPDIR/out"
}

@test "--flamechart keeps the input order and merges only neighbours" {
	printf 'b 1\na 1\na 1\nb 1\n' >"$BATS_TEST_TMPDIR/in"
	svg --flamechart <"$BATS_TEST_TMPDIR/in"
	frames "$BATS_TEST_TMPDIR/g.svg" | cut -f2,3 | tr '\t\n' ': ' | grep -qx '4:all 1:b 2:a 1:b '
}

@test "memory follows the distinct stacks, not the input: 10 times the lines, the same RSS" {
	requires /usr/bin/time
	rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
	# 700 distinct stacks with their counts, repeated 60 and 600 times (4 and 40 MB)
	awk 'BEGIN { srand(7); for (i = 0; i < 700; i++) { s = "proc"
		for (d = int(rand() * 25) + 5; d > 0; d--) s = s ";func_" int(rand() * 300)
		line[i] = s " " int(rand() * 50) + 1 }
		for (r = 0; r < 600; r++) for (i = 0; i < 700; i++) print line[i] }' >"$BATS_TEST_TMPDIR/big"
	head -n 42000 "$BATS_TEST_TMPDIR/big" >"$BATS_TEST_TMPDIR/small"
	local small big chart
	small=$(rss fg-svg "$BATS_TEST_TMPDIR/small")
	big=$(rss fg-svg "$BATS_TEST_TMPDIR/big")
	echo "# RSS: 4 MB in $small KB, 40 MB in $big KB" >&3
	[ "$big" -lt $((small + 4096)) ]
	# standard input too, and a flame chart whose neighbours repeat
	big=$(rss fg-svg <"$BATS_TEST_TMPDIR/big")
	[ "$big" -lt $((small + 4096)) ]
	sort "$BATS_TEST_TMPDIR/big" >"$BATS_TEST_TMPDIR/runs"
	chart=$(rss fg-svg --flamechart "$BATS_TEST_TMPDIR/runs")
	echo "# RSS: --flamechart, 700 runs of 600 lines, $chart KB" >&3
	[ "$chart" -lt $((small + 4096)) ]
	# and the graph is what the lines add up to
	fg-svg "$BATS_TEST_TMPDIR/big" | svg-frames /dev/stdin | head -n 1 >"$BATS_TEST_TMPDIR/out"
	awk '{ t += $NF } END { printf "0\t%d\tall\n", t }' "$BATS_TEST_TMPDIR/big" |
		diff - "$BATS_TEST_TMPDIR/out"
}

@test "an SVG past what browsers open draws a warning with its size and what draws less" {
	# 200,000 frames deep: 32 MB, and --minwidth cannot help
	awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%sf%d", i ? ";" : "", i; print " 1" }' \
		>"$BATS_TEST_TMPDIR/deep"
	fg --separate-stderr fg-svg -o "$BATS_TEST_TMPDIR/g.svg" "$BATS_TEST_TMPDIR/deep"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/g.svg")" -gt 30000000 ]
	[ "$stderr" = "fg-svg: the SVG is 32 MB (200001 frames): browsers take about a second a MB to open one, and seem to hang past 30 MB; its deepest stack has 200000 frames, which --minwidth cannot prune; --base FUNC cuts the frames below FUNC" ]
	# 100,000 narrow stacks: too many frames with --minwidth 0, a small graph by default
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "r;a%d;b%d;c%d 1\n", i, i, i }' \
		>"$BATS_TEST_TMPDIR/wide"
	fg --separate-stderr fg-svg --minwidth 0 -o "$BATS_TEST_TMPDIR/g.svg" "$BATS_TEST_TMPDIR/wide"
	[ "$status" -eq 0 ]
	[[ $stderr =~ ^"fg-svg: the SVG is "3[0-9]" MB (300002 frames): browsers take about a second a MB to open one, and seem to hang past 30 MB; a larger --minwidth (now 0) draws fewer frames"$ ]]
	fg --separate-stderr fg-svg -o "$BATS_TEST_TMPDIR/g.svg" "$BATS_TEST_TMPDIR/wide"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/g.svg")" -lt 100000 ]
}

@test "the hidden weight, self time and script hooks are in the SVG" {
	printf 'a;b 1\n' >"$BATS_TEST_TMPDIR/in"
	svg <"$BATS_TEST_TMPDIR/in"
	grep -q 'window.fgsvg' "$BATS_TEST_TMPDIR/g.svg"
	grep -q "self: " "$BATS_TEST_TMPDIR/g.svg"
	grep -q "too narrow to draw" "$BATS_TEST_TMPDIR/g.svg"
}

@test "browser: headless Chromium zooms, searches, keeps the view in the URL, resets" {
	requires chromium
	local expected
	svg "$CORPUS/input/perf-iperf-stacks-pidtid-01--all.folded"
	[ "$status" -eq 0 ]
	# the share of samples with a frame matching ^tcp_, counted once per stack
	expected=$(awk '{ n = $NF; t += n; s = $0; sub(/[ \t][0-9.]+$/, "", s);
		k = split(s, f, ";"); hit = 0
		for (i = 1; i <= k; i++) { g = f[i]; sub(/_\[[kwij]\]$/, "", g); if (g ~ /^tcp_/) hit = 1 }
		if (hit) m += n } END { printf "%.1f", 100 * m / t }' \
		"$CORPUS/input/perf-iperf-stacks-pidtid-01--all.folded")
	run python3 "$TOP/tests/browser/svg-check" "$BATS_TEST_TMPDIR/g.svg" tcp_sendmsg '^tcp_' \
		"$expected" "$BATS_TEST_TMPDIR/screenshot.png"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ -s "$BATS_TEST_TMPDIR/screenshot.png" ]
}

@test "browser: an icicle graph with hostile names zooms, tells hidden weight, follows the window" {
	requires chromium
	printf 'r;<b>"&x;x 3\nr;<b>"&x;tiny 0.01\nr;</script>;y 1\nr;q 4\n' >"$BATS_TEST_TMPDIR/in"
	svg --inverted --minwidth 1% <"$BATS_TEST_TMPDIR/in"
	grep -q '<g fg-h="0.0[01][0-9]*"><title>&lt;b&gt;"&amp;x (3 samples' "$BATS_TEST_TMPDIR/g.svg"
	run python3 "$TOP/tests/browser/svg-check" "$BATS_TEST_TMPDIR/g.svg" '<b>"&x' 'script' \
		12.5 "$BATS_TEST_TMPDIR/screenshot.png"
	printf '%s\n' "$output" | grep -q 'the tooltip tells the weight --minwidth hid'
	printf '%s\n' "$output" | grep -q 'a narrower window narrows the graph' 
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

@test "counts past 2^64-1 leave their line out, as fg-fold does: one count, a stack's sum, a differential line" {
	printf 'a 18446744073709551615\nb 2\na 1\nb 3\n' >"$BATS_TEST_TMPDIR/in"
	fg -0 --separate-stderr fg-svg "$BATS_TEST_TMPDIR/in"
	assert_stderr_contains "fg-svg: $BATS_TEST_TMPDIR/in:3: the count of a stack would pass 2^64-1; left out"
	assert_stderr_contains "fg-svg: left out 1 line whose count would pass 2^64-1"
	[[ $output == *"<title>a (18,446,744,073,709,551,61"* ]]
	# the before count of a differential line too; fractions are whole parts past 2^64-1
	printf 'a 18446744073709551616 1\nb 18446744073709551616.5\nc 1 2\nc 0.5\n' >"$BATS_TEST_TMPDIR/in"
	fg -0 --separate-stderr fg-svg "$BATS_TEST_TMPDIR/in"
	assert_stderr_contains "fg-svg: $BATS_TEST_TMPDIR/in:1: a count does not fit in 64 bits; line left out"
	assert_stderr_contains "fg-svg: left out 2 lines whose count would pass 2^64-1"
	[[ $output == *"<title>c ("* ]]
	[[ $output != *"<title>a ("* && $output != *"<title>b ("* ]]
}
