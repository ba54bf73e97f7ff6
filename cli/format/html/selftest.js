// selftest.js - with #selftest in the URL the page exercises itself the
// way a user would (zoom by a click on the canvas, search, sort, filter,
// thread selection; the differential colours) and prints what it saw as
// "key=value" lines in <pre id="selftest">, so a headless browser's
// --dump-dom is enough to test it (test/cli/html.t).

function selftestReport(r) {
	const out = $("selftest");
	r.errors = pageErrors.length;
	pageErrors.forEach((e, i) => { r["error" + i] = e.replace(/\s+/g, " "); });
	r.selftest = "done";
	out.textContent = Object.keys(r).map((k) => k + "=" + r[k]).join("\n") + "\n";
	out.hidden = false;
}

// The widest child of v, or 0.
function widest(v) {
	const P = app.P, tot = app.sum.tot;
	let best = 0;
	for (let k = P.kidStart[v]; k < P.kidStart[v + 1]; k++)
		if (!best || tot[P.kids[k]] > tot[best]) best = P.kids[k];
	return best;
}

function mouseAt(box, type) {
	const c = app.flame.canvas, r = c.getBoundingClientRect();
	const d = app.flame.rows.findIndex((row) => row.includes(box));
	const y = r.top + app.flame.rowY(d, app.flame.rows.length) + ROW / 2;
	c.dispatchEvent(new MouseEvent(type, {clientX: r.left + box[0] + box[1] / 2, clientY: y, bubbles: true}));
}
function clickBox(box) { mouseAt(box, "click"); }
function hoverBox(box) { mouseAt(box, "mousemove"); }

function selftest() {
	const P = app.P, r = {}, name = (v) => P.fname[P.frame[v]];
	r.frames = P.nframes;
	r.nodes = P.nnodes;
	r.total = app.sum.total;
	r.root_widest = name(widest(0));
	// the hot path: the widest child while it outweighs its parent's self
	let v = 0;
	while (widest(v) && app.sum.tot[widest(v)] > app.sum.self[v]) v = widest(v);
	r.hot_leaf = name(v);
	r.hot_leaf_share = pct(app.sum.tot[v], app.sum.total);
	const bar = document.querySelector("#bars .bar");
	r.top_bar = bar ? P.fname[+bar.dataset.frame] : "";
	r.top_bar_text = bar ? bar.textContent : "";
	// zoom: click the hot leaf's box, then its parent's
	const box = app.flame.rows.flat().find((b) => b[2] === v);
	if (box) clickBox(box);
	r.zoom = name(app.flame.zoom);
	const top = app.flame.rows[0][0];
	r.zoom_full_width = top[2] === v && top[0] === 0 && Math.abs(top[1] - app.flame.canvas.clientWidth) < 1 ? 1 : 0;
	r.crumbs = $("crumbs").textContent;
	hoverBox(app.flame.rows[0][0]);
	r.tooltip = $("tip").hidden ? "hidden" : $("tip").textContent.replace(/\s+/g, " ");
	clickBox(app.flame.rows[0][0]); // a click on the zoomed frame zooms out one level
	r.zoom_out = app.flame.zoom === P.parent[v] ? 1 : 0;
	app.flame.setZoom(0);
	// search
	$("search").value = r.hot_leaf;
	$("search").dispatchEvent(new Event("input"));
	r.search = $("search-result").textContent;
	const found = app.flame.search(r.hot_leaf);
	r.search_share = found ? (100 * found.share).toFixed(2) : "none";
	r.search_colored = app.flame.color(v) === "#d500f9" ? 1 : 0;
	$("search").value = "";
	$("search").dispatchEvent(new Event("input"));
	// sort by function name (ascending), then by self (descending)
	const ths = document.querySelectorAll("#funcs th");
	const col = (i) => [...document.querySelectorAll("#funcs tbody tr")].map((tr) => tr.children[i].firstChild.textContent);
	ths[4].click();
	const names = col(4);
	r.sort_name_ok = names.every((n, i) => i === 0 || names[i - 1].localeCompare(n) <= 0) ? 1 : 0;
	r.sort_name_first = names[0];
	document.querySelectorAll("#funcs th")[0].click();
	const selfs = col(0).map(Number);
	r.sort_self_ok = selfs.every((n, i) => i === 0 || selfs[i - 1] >= n) ? 1 : 0;
	r.sort_self_first = col(4)[0];
	r.table_info = $("table-info").textContent;
	// filter
	$("filter").value = r.hot_leaf;
	$("filter").dispatchEvent(new Event("input"));
	r.filter_rows = document.querySelectorAll("#funcs tbody tr").length;
	r.filter_first = col(4)[0] || "";
	r.filter_info = $("table-info").textContent;
	$("filter").value = "";
	$("filter").dispatchEvent(new Event("input"));
	// each thread alone: the hottest function of its own
	const st = $("sel-thread");
	for (const o of [...st.options].slice(1)) {
		st.value = o.value;
		st.dispatchEvent(new Event("change"));
		const b = document.querySelector("#bars .bar");
		r["thread_" + o.textContent.replace(/\W+/g, "_")] = b ? P.fname[+b.dataset.frame] : "none";
	}
	st.value = "";
	st.dispatchEvent(new Event("change"));
	// each process alone
	const sp = $("sel-proc");
	for (const o of [...sp.options].slice(1)) {
		sp.value = o.value;
		sp.dispatchEvent(new Event("change"));
		const b = document.querySelector("#bars .bar");
		r["process_" + o.value] = b ? P.fname[+b.dataset.frame] : "none";
	}
	sp.value = "";
	sp.dispatchEvent(new Event("change"));
	// the icicle view: the root's row at the top
	$("icicle").click();
	r.icicle_root_y = app.flame.rowY(0, app.flame.rows.length);
	r.flame_root_y = (app.flame.rows.length - 1) * ROW;
	$("icicle").click();
	r.flame_root_y_after = app.flame.rowY(0, app.flame.rows.length);
	if (P.diff) diffChecks(r);
	r.scripts = document.scripts.length;
	r.injected = document.querySelectorAll("img, svg, iframe, object, embed, b > b, i, inl, t").length;
	r.load_ms = Math.round(performance.now());
	selftestReport(r);
}

// The frames whose self share grew and shrank most, and the colour of
// their widest box.
function diffChecks(r) {
	const P = app.P, s = app.sum, BF = P.raw.BF, BT = P.raw.BT;
	let grew = -1, shrank = -1, dg = 0, ds = 0;
	for (let f = 0; f < P.nframes; f++) {
		const d = s.fself[f] / s.total - (BT ? BF[2 * f] / BT : 0);
		if (d > dg) { dg = d; grew = f; }
		if (d < ds) { ds = d; shrank = f; }
	}
	const hue = (f) => {
		let best = -1;
		for (let v = 1; v < P.nnodes; v++)
			if (P.frame[v] === f && (best < 0 || s.tot[v] > s.tot[best])) best = v;
		const c = best < 0 ? "" : app.flame.color(best);
		return /^hsl\(0,/.test(c) ? "red" : /^hsl\(215,/.test(c) ? "blue" : c || "none";
	};
	r.diff_grew = grew < 0 ? "none" : P.fname[grew];
	r.diff_grew_points = (100 * dg).toFixed(2);
	r.diff_grew_color = grew < 0 ? "none" : hue(grew);
	r.diff_shrank = shrank < 0 ? "none" : P.fname[shrank];
	r.diff_shrank_points = (100 * ds).toFixed(2);
	r.diff_shrank_color = shrank < 0 ? "none" : hue(shrank);
}
