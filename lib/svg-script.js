// fg-svg's flame graph script: hover details, zoom, search, the view in the URL.
// Written for fg (BSD-2-Clause).  No library; runs once, after the frames are parsed.
(function () {
	'use strict';
	var started = performance.now();
	var doc = document, NS = 'http://www.w3.org/2000/svg', XPAD = 10;
	var root = doc.documentElement, fr = doc.getElementById('frames');
	var labels = doc.getElementById('labels'), tip = doc.getElementById('tip');
	var details = doc.getElementById('details'), matchedEl = doc.getElementById('matched');
	var unzoomEl = doc.getElementById('unzoom'), searchEl = doc.getElementById('search');
	var icEl = doc.getElementById('ic');
	var factor = +fr.getAttribute('fg-factor') || 1, fh = +fr.getAttribute('fg-height');
	var fluid = fr.getAttribute('fg-fluid') === '1', diff = fr.getAttribute('fg-diff') === '1';
	var charpx = +fr.getAttribute('fg-charpx');
	var nametype = fr.getAttribute('fg-nametype'), countname = fr.getAttribute('fg-countname');
	var fixedW = +fr.getAttribute('width'), H = +fr.getAttribute('height');
	var gs = fr.getElementsByTagName('g'), n = gs.length;
	var x = new Float64Array(n), w = new Float64Array(n), y = new Float64Array(n);
	var par = new Int32Array(n), kids = new Float64Array(n), hid = new Float64Array(n);
	var names = new Array(n), rects = new Array(n);
	var zoomed = 0, term = '', ic = false, matches = [], marked = [], dimmed = [];

	(function init() {
		var stack = [], d, i, r, y0;
		for (i = 0; i < n; i++) {
			r = gs[i].lastElementChild;
			rects[i] = r;
			gs[i].fgi = i;
			x[i] = +r.getAttribute('x');
			w[i] = +r.getAttribute('width');
			y[i] = +r.getAttribute('y');
			hid[i] = +(gs[i].getAttribute('fg-h') || 0);
			y0 = i ? y[0] : y[i];
			d = Math.round(Math.abs(y[i] - y0) / fh);
			stack[d] = i;
			par[i] = d ? stack[d - 1] : -1;
			if (d)
				kids[par[i]] += w[i];
		}
	})();

	// the name is the title up to " (N samples, ...)"; parsed when first needed
	function name(i) {
		var t, m;
		if (names[i] === undefined) {
			t = title(i);
			m = /^([\s\S]*) \(\d[\d,]* /.exec(t);
			names[i] = m ? m[1] : t;
		}
		return names[i];
	}

	function title(i) {
		return gs[i].firstElementChild.textContent;
	}

	function fmt(v) {
		v = Math.round(v * factor);
		return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}

	// ", 1.23 s" after a count, when the counts are a time (--countname ns, us, ms or s)
	var unitNs = {ns: 1, us: 1e3, ms: 1e6, s: 1e9}[countname] || 0;
	function dur(v) {
		var ns = Math.round(v * factor) * unitNs;
		if (!unitNs)
			return '';
		if (ns >= 1e9)
			return ', ' + (ns / 1e9).toFixed(2) + ' s';
		if (ns >= 1e6)
			return ', ' + (ns / 1e6).toFixed(2) + ' ms';
		return ns >= 1e3 ? ', ' + (ns / 1e3).toFixed(2) + ' us' : ', ' + ns + ' ns';
	}

	function pct(a, b) {
		return (b > 0 ? 100 * a / b : 0).toFixed(2) + '%';
	}

	function width() {
		if (!fluid)
			return fixedW;
		var vw = root.getBoundingClientRect().width || window.innerWidth || fixedW + 2 * XPAD;
		return Math.max(vw - 2 * XPAD, 50);
	}

	function text(parent, s, tx, ty) {
		var t = doc.createElementNS(NS, 'text');
		t.setAttribute('x', tx.toFixed(1));
		t.setAttribute('y', ty);
		t.textContent = s;
		parent.appendChild(t);
		return t;
	}

	function draw() {
		var W = width(), zx = x[zoomed], zw = w[zoomed], ze = zx + zw, scale = W / zw;
		var frag = doc.createDocumentFragment(), i, s, e, chars, nm, p;
		fr.setAttribute('width', W);
		fr.setAttribute('viewBox', zx + ' 0 ' + zw + ' ' + H);
		for (i = 0; i < dimmed.length; i++)
			gs[dimmed[i]].classList.remove('a');
		dimmed = [];
		for (p = par[zoomed]; p >= 0; p = par[p]) {
			gs[p].classList.add('a');
			dimmed.push(p);
		}
		for (i = 0; i < n; i++) {
			s = x[i] > zx ? x[i] : zx;
			e = x[i] + w[i] < ze ? x[i] + w[i] : ze;
			if (e <= s)
				continue;
			chars = Math.floor((e - s) * scale / charpx);
			if (chars < 3)
				continue;
			nm = name(i);
			if (nm.length > chars)
				nm = nm.slice(0, chars - 2) + '..';
			text(frag, nm, XPAD + (s - zx) * scale + 3, y[i] + (fh - 1) / 2 + 3);
		}
		while (labels.firstChild)
			labels.removeChild(labels.firstChild);
		labels.appendChild(frag);
		unzoomEl.classList.toggle('hide', zoomed === 0);
		showMatched();
	}

	function self(i) {
		return Math.max(w[i] - kids[i] - hid[i], 0);
	}

	function describe(i) {
		var lines = [name(i)], z = zoomed;
		lines.push(fmt(w[i]) + ' ' + countname + dur(w[i]) + ', ' + pct(w[i], w[0]) + ' of all' +
			   (z && i !== z && x[i] >= x[z] && x[i] < x[z] + w[z] ?
				    ', ' + pct(w[i], w[z]) + ' of ' + name(z) : ''));
		lines.push('self: ' + fmt(self(i)) + ' ' + countname + dur(self(i)) + ', ' +
			   pct(self(i), w[0]));
		if (hid[i] > 0)
			lines.push('in frames too narrow to draw: ' + fmt(hid[i]) + ' ' + countname +
				   ', ' + pct(hid[i], w[0]));
		if (diff) {
			var m = /; ([-+]?[\d.]+%)\)$/.exec(title(i));
			if (m)
				lines.push('change: ' + m[1]);
		}
		return lines;
	}

	function showTip(i, ev) {
		var lines = describe(i), k, tw, th, cx, cy;
		while (tip.childNodes.length > 1)
			tip.removeChild(tip.lastChild);
		for (k = 0; k < lines.length; k++)
			text(tip, lines[k], 6, 16 + 15 * k);
		tip.classList.remove('hide');
		tw = tip.getBBox().width + 12;
		th = lines.length * 15 + 8;
		tip.firstChild.setAttribute('width', tw);
		tip.firstChild.setAttribute('height', th);
		// beside the pointer, inside the window
		cx = ev.clientX + 14;
		cy = ev.clientY + 14;
		if (cx + tw > window.innerWidth)
			cx = Math.max(ev.clientX - tw - 14, 0);
		if (cy + th > window.innerHeight)
			cy = Math.max(ev.clientY - th - 14, 0);
		tip.setAttribute('transform', 'translate(' + (cx + window.scrollX) + ',' +
				 (cy + window.scrollY) + ')');
		details.textContent = nametype + ' ' + title(i) + (self(i) < w[i] ?
			' self ' + fmt(self(i)) : '');
	}

	function hideTip() {
		tip.classList.add('hide');
		details.textContent = ' ';
	}

	function frameOf(ev) {
		for (var el = ev.target; el && el !== fr; el = el.parentNode)
			if (el.fgi !== undefined)
				return el.fgi;
		return -1;
	}

	function save() {
		var h = [];
		if (zoomed)
			h.push('z=' + zoomed);
		if (term)
			h.push('s=' + encodeURIComponent(term));
		if (ic)
			h.push('i=1');
		var url = h.length ? '#' + h.join('&') : location.href.replace(/#.*$/, '');
		try {
			history.replaceState(null, '', url);
		} catch (err) {
			if (h.length || location.hash)
				location.replace(h.length ? url : '#');
		}
	}

	function zoom(i) {
		zoomed = i > 0 && i < n ? i : 0;
		draw();
		save();
	}

	function showMatched() {
		if (!term) {
			matchedEl.textContent = ' ';
			return;
		}
		// the matched width, each part once: a match inside a match adds nothing
		var zx = x[zoomed], ze = zx + w[zoomed], all = 0, inzoom = 0, i, k, s, e;
		for (k = 0; k < matches.length; k++) {
			i = matches[k];
			all += w[i];
			s = Math.max(x[i], zx);
			e = Math.min(x[i] + w[i], ze);
			if (e > s)
				inzoom += e - s;
		}
		matchedEl.textContent = 'Matched: ' + (100 * all / w[0]).toFixed(1) + '%' +
			(zoomed ? ' (' + (100 * inzoom / w[zoomed]).toFixed(1) + '% of zoom)' : '');
	}

	function search(t) {
		var re = null, i, p, hit = new Uint8Array(n), cov = new Uint8Array(n);
		for (i = 0; i < marked.length; i++)
			gs[marked[i]].classList.remove('m');
		marked = [];
		matches = [];
		term = t || '';
		if (term) {
			try {
				re = new RegExp(term, ic ? 'i' : '');
			} catch (err) {
				term = '';
			}
		}
		// a match inside a match is marked but counted once, with the outer one
		for (i = 0; re && i < n; i++) {
			p = par[i];
			cov[i] = p >= 0 && (cov[p] || hit[p]) ? 1 : 0;
			if (!re.test(name(i)))
				continue;
			hit[i] = 1;
			gs[i].classList.add('m');
			marked.push(i);
			if (!cov[i])
				matches.push(i);
		}
		searchEl.classList.toggle('on', !!term);
		searchEl.textContent = term ? 'Reset Search' : 'Search';
		showMatched();
		save();
	}

	function askSearch() {
		var t = prompt('Enter a search term (regexp allowed, eg: ^ext4_)' +
			       (ic ? ', ignoring case' : '') + '\nPress Ctrl-i to toggle case sensitivity', '');
		if (t !== null && t !== '')
			search(t);
	}

	function toggleCase() {
		ic = !ic;
		icEl.classList.toggle('on', ic);
		if (term)
			search(term);
		else
			save();
	}

	function reset() {
		hideTip();
		search('');
		zoom(0);
	}

	fr.addEventListener('mousemove', function (ev) {
		var i = frameOf(ev);
		if (i >= 0)
			showTip(i, ev);
	});
	fr.addEventListener('mouseleave', hideTip);
	fr.addEventListener('click', function (ev) {
		var i = frameOf(ev);
		if (i < 0)
			return;
		ev.preventDefault();
		zoom(i === zoomed ? par[i] < 0 ? 0 : par[i] : i);
	});
	unzoomEl.addEventListener('click', function () {
		zoom(0);
	});
	searchEl.addEventListener('click', function () {
		if (term)
			search('');
		else
			askSearch();
	});
	icEl.addEventListener('click', toggleCase);
	window.addEventListener('keydown', function (ev) {
		if (ev.key === 'F3' || ((ev.ctrlKey || ev.metaKey) && ev.key === 'f')) {
			ev.preventDefault();
			askSearch();
		} else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'i') {
			ev.preventDefault();
			toggleCase();
		} else if (ev.key === 'Escape') {
			reset();
		}
	});
	var pending = false;
	window.addEventListener('resize', function () {
		if (!fluid || pending)
			return;
		pending = true;
		requestAnimationFrame(function () {
			pending = false;
			draw();
		});
	});

	// the view a link names: #z=FRAME&s=REGEX&i=1
	(function restore() {
		var h = location.hash.replace(/^#/, '').split('&'), k, kv, z = 0, s = '';
		for (k = 0; k < h.length; k++) {
			kv = h[k].split('=');
			if (kv[0] === 'z')
				z = parseInt(kv[1], 10) || 0;
			else if (kv[0] === 's')
				try {
					s = decodeURIComponent(kv.slice(1).join('='));
				} catch (err) {
					s = '';
				}
			else if (kv[0] === 'i')
				ic = kv[1] === '1';
		}
		icEl.classList.toggle('on', ic);
		zoomed = z > 0 && z < n ? z : 0;
		draw();
		if (s)
			search(s);
	})();

	// for tests and the console
	window.fgsvg = {
		zoom: zoom, search: search, reset: reset, frames: n,
		scriptMs: performance.now() - started,
		matched: function () { return matchedEl.textContent; },
		zoomed: function () { return zoomed; },
		// a frame by the names from the root down (fg-serve carries its zoom so)
		path: function (i) {
			var p = [];
			for (; i > 0; i = par[i])
				p.unshift(name(i));
			return p;
		},
		at: function (p) {
			var i = 0, j, k;
			for (k = 0; k < p.length; k++) {
				for (j = i + 1; j < n && par[j] >= i; j++)
					if (par[j] === i && name(j) === p[k])
						break;
				if (j >= n || par[j] !== i)
					return i;
				i = j;
			}
			return i;
		},
		find: function (s) {
			for (var i = 0; i < n; i++)
				if (name(i) === s)
					return i;
			return -1;
		},
	};
})();
