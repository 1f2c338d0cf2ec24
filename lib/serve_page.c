// SPDX-License-Identifier: BSD-2-Clause
/* fg-serve's page: controls over the flame graph of lib/svg.c.  See include/fg/serve_page.h. */
#include <stdio.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/serve_page.h"
#include "fg/svg.h"

/* @NAME@ are filled in by fg_serve_page() */
static const char page[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>@TITLE@</title>\n"
    "<style>\n"
    "html, body { margin: 0; height: 100%; font: 13px Verdana, sans-serif; }\n"
    "#bar { display: flex; flex-wrap: wrap; gap: 14px; align-items: center; padding: 6px 8px;\n"
    "\tbackground: #eee; border-bottom: 1px solid #ccc; height: 26px; }\n"
    "#graphs { position: absolute; top: 39px; left: 0; right: 0; bottom: 0; }\n"
    "#graphs iframe { position: absolute; top: 0; left: 0; width: 100%; height: 100%; border: 0; "
    "}\n"
    "#graphs iframe.back { visibility: hidden; }\n"
    "#state { color: #555; }\n"
    "</style></head>\n"
    "<body>\n"
    "<div id=\"bar\">\n"
    "<b>@TITLE@</b>\n"
    "<button id=\"pause\" type=\"button\">Pause</button>\n"
    "<label>View <select id=\"view\">\n"
    "<option value=\"whole\">the whole run</option>\n"
    "<option value=\"window\">the last @WINDOW@ s</option>\n"
    "<option value=\"diff\">the last @WINDOW@ s against the @WINDOW@ s before</option>\n"
    "</select></label>\n"
    "<label><input type=\"checkbox\" id=\"inverted\"> Invert</label>\n"
    "<label>Colours <select id=\"colors\">@OPTIONS@</select></label>\n"
    "<label>Search <input id=\"search\" type=\"search\" placeholder=\"regular expression\" "
    "size=\"18\"></label>\n"
    "<span>Save: <a id=\"get-svg\" href=\"#\">SVG</a> <a id=\"get-folded\" href=\"#\">folded</a>\n"
    "<a id=\"get-pprof\" href=\"#\">pprof</a></span>\n"
    "<span id=\"state\"></span>\n"
    "</div>\n"
    "<div id=\"graphs\"><iframe id=\"g0\" title=\"flame graph\"></iframe><iframe id=\"g1\" "
    "class=\"back\" title=\"flame graph\"></iframe></div>\n"
    "<script>\n"
    "(function () {\n"
    "\t'use strict';\n"
    "\tvar interval = @INTERVAL@, palette = '@PALETTE@';\n"
    "\tvar $ = function (id) { return document.getElementById(id); };\n"
    "\tvar token = new URLSearchParams(location.search).get('token');\n"
    "\tvar frames = [$('g0'), $('g1')], shown = 0, timer = 0, paused = false, gen = 0, drawn = 0;\n"
    "\n"
    "\tfunction query(extra) {\n"
    "\t\tvar p = new URLSearchParams(), k;\n"
    "\t\tp.set('view', $('view').value);\n"
    "\t\tif ($('inverted').checked)\n"
    "\t\t\tp.set('inverted', '1');\n"
    "\t\tp.set('colors', $('colors').value);\n"
    "\t\tif (token)\n"
    "\t\t\tp.set('token', token);\n"
    "\t\tfor (k in extra)\n"
    "\t\t\tp.set(k, extra[k]);\n"
    "\t\treturn p.toString();\n"
    "\t}\n"
    "\tfunction links() {\n"
    "\t\t$('get-svg').href = 'flame.svg?' + query({download: 1});\n"
    "\t\t$('get-folded').href = 'profile.folded?' + query({download: 1});\n"
    "\t\t$('get-pprof').href = 'profile.pb.gz?' + query({download: 1});\n"
    "\t}\n"
    "\tfunction graph(i) {\n"
    "\t\ttry {\n"
    "\t\t\treturn frames[i].contentWindow.fgsvg || null;\n"
    "\t\t} catch (e) {\n"
    "\t\t\treturn null;\n"
    "\t\t}\n"
    "\t}\n"
    "\tfunction state() {\n"
    "\t\tfetch('status?' + query({})).then(function (r) { return r.json(); }).then(function (s) {\n"
    "\t\t\t$('state').textContent = s.samples + ' samples, ' + s.seconds + ' s' +\n"
    "\t\t\t\t(s.ended ? ', the input ended' : '') + (paused ? ', paused' : '');\n"
    "\t\t}).catch(function () {});\n"
    "\t}\n"
    "\tfunction schedule() {\n"
    "\t\tclearTimeout(timer);\n"
    "\t\tif (!paused)\n"
    "\t\t\ttimer = setTimeout(load, interval * 1000);\n"
    "\t}\n"
    "\t// draw the next graph behind the one shown, then swap: the zoom and the search carry over\n"
    "\tfunction load() {\n"
    "\t\tvar old = graph(shown), next = 1 - shown, f = frames[next], path = null, my = ++gen;\n"
    "\t\tif (old && old.zoomed())\n"
    "\t\t\tpath = old.path(old.zoomed());\n"
    "\t\tf.onload = function () {\n"
    "\t\t\tvar g = graph(next), z;\n"
    "\t\t\tif (my !== gen)\n"
    "\t\t\t\treturn;\n"
    "\t\t\tif (g && path && (z = g.at(path)) > 0)\n"
    "\t\t\t\tg.zoom(z);\n"
    "\t\t\tif (g && $('search').value)\n"
    "\t\t\t\tg.search($('search').value);\n"
    "\t\t\tf.classList.remove('back');\n"
    "\t\t\tframes[shown].classList.add('back');\n"
    "\t\t\tshown = next;\n"
    "\t\t\tdrawn++;\n"
    "\t\t\tstate();\n"
    "\t\t\tschedule();\n"
    "\t\t};\n"
    "\t\tf.src = 'flame.svg?' + query({});\n"
    "\t}\n"
    "\t$('pause').onclick = function () {\n"
    "\t\tpaused = !paused;\n"
    "\t\tthis.textContent = paused ? 'Resume' : 'Pause';\n"
    "\t\tif (paused)\n"
    "\t\t\tclearTimeout(timer);\n"
    "\t\telse\n"
    "\t\t\tload();\n"
    "\t\tstate();\n"
    "\t};\n"
    "\t['view', 'inverted', 'colors'].forEach(function (id) {\n"
    "\t\t$(id).onchange = function () {\n"
    "\t\t\tlinks();\n"
    "\t\t\tload();\n"
    "\t\t};\n"
    "\t});\n"
    "\t$('search').oninput = function () {\n"
    "\t\tvar g = graph(shown);\n"
    "\t\tif (g)\n"
    "\t\t\tg.search(this.value);\n"
    "\t};\n"
    "\t$('colors').value = palette;\n"
    "\twindow.fgserve = {\n"
    "\t\tgraph: function () { return graph(shown); },\n"
    "\t\tframe: function () { return frames[shown]; },\n"
    "\t\tpaused: function () { return paused; },\n"
    "\t\tloads: function () { return gen; },\n"
    "\t\tdrawn: function () { return drawn; },\n"
    "\t};\n"
    "\tlinks();\n"
    "\tload();\n"
    "})();\n"
    "</script>\n"
    "</body></html>\n";

char *fg_serve_page(const char *title, double interval, unsigned window, enum fg_palette palette,
		    size_t *len)
{
	struct fg_buf b = FG_BUF_INIT;
	const char *p = page, *at;

	if (!title)
		title = "fg-serve";
	while ((at = strchr(p, '@')) != NULL) {
		const char *end = strchr(at + 1, '@');
		size_t n = end ? (size_t)(end - at - 1) : 0;

		fg_buf_add(&b, p, (size_t)(at - p));
		p = end ? end + 1 : at + 1;
		if (n == 5 && memcmp(at + 1, "TITLE", 5) == 0) {
			fg_svg_escape(&b, title, strlen(title), 0);
		} else if (n == 6 && memcmp(at + 1, "WINDOW", 6) == 0) {
			fg_buf_addf(&b, "%u", window);
		} else if (n == 8 && memcmp(at + 1, "INTERVAL", 8) == 0) {
			fg_buf_addf(&b, "%g", interval);
		} else if (n == 7 && memcmp(at + 1, "PALETTE", 7) == 0) {
			fg_buf_addstr(&b, fg_palette_name(palette));
		} else if (n == 7 && memcmp(at + 1, "OPTIONS", 7) == 0) {
			for (int i = 0; i <= FG_PAL_ORANGE; i++)
				fg_buf_addf(&b, "<option>%s</option>",
					    fg_palette_name((enum fg_palette)i));
		} else {
			fg_buf_addch(&b, '@');
			p = at + 1;
		}
	}
	fg_buf_addstr(&b, p);
	*len = b.len;
	return b.data;
}
