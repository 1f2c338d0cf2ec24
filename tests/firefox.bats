#!/usr/bin/env bats
# fg-svg's flame graphs open in Firefox too (headless, as a screenshot), not
# only in Chromium, which tests/fg-svg.bats drives in depth.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	requires firefox-esr python3
	cd "$BATS_TEST_TMPDIR"
	export HOME=$BATS_TEST_TMPDIR/home
	mkdir -p "$HOME" profile
}

# shot SVG PNG: Firefox's headless screenshot of SVG
shot() {
	timeout 120 firefox-esr --headless --no-remote --profile "$BATS_TEST_TMPDIR/profile" \
		--window-size=1280,800 --screenshot "$BATS_TEST_TMPDIR/$2" "file://$BATS_TEST_TMPDIR/$1" \
		>firefox.log 2>&1
}

@test "Firefox draws an fg-svg flame graph" {
	fg-svg --title Firefox "$DATA/flamegraph/input/perf-java-stacks-01--pid.folded" >g.svg
	shot g.svg g.png
	warm=$("$TOP/tests/browser/png-flame-pixels" g.png)
	echo "# flame-coloured pixels: $warm%" >&3
	# the frames cover a good part of the window in their warm colours
	awk -v w="$warm" 'BEGIN { exit !(w >= 5) }'
}

@test "the check tells a drawn graph from a page without one" {
	# a broken document: Firefox shows its XML error page, with no flame colours
	printf '<svg xmlns="http://www.w3.org/2000/svg"><g><rect></svg>\n' >broken.svg
	shot broken.svg broken.png
	warm=$("$TOP/tests/browser/png-flame-pixels" broken.png)
	echo "# flame-coloured pixels: $warm%" >&3
	awk -v w="$warm" 'BEGIN { exit !(w < 1) }'
}
