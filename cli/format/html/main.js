// main.js - wires the views together: the process and thread selection
// (every view shows the selected samples), search, zoom crumbs, the
// icicle switch, and the page's modes from the URL fragment:
//   #show=flame, #show=source   one section alone (for screenshots)
//   #selftest                   run selftest.js and print its results

const app = {};

function threadKeep() {
	const P = app.P, pid = $("sel-proc").value, tid = $("sel-thread").value;
	const ok = new Uint8Array(P.threads.length);
	P.threads.forEach((t, i) => {
		ok[i] = (pid === "" || t.pid === +pid) && (tid === "" || i === +tid);
	});
	return (i) => ok[i] === 1;
}

function procLabel(pid) {
	const P = app.P, p = P.procs.find((x) => x.pid === pid), t = P.threads.find((x) => x.pid === pid);
	return `${(t && t.comm) || "process"} [${pid}]` + (p && p.cmd ? " " + p.cmd.slice(0, 60) : "");
}

function fillSelections() {
	const P = app.P, sp = $("sel-proc"), st = $("sel-thread");
	sp.append(el("option", {value: ""}, "all"));
	[...new Set(P.threads.map((t) => t.pid))].sort((a, b) => a - b)
		.forEach((pid) => sp.append(el("option", {value: String(pid)}, procLabel(pid))));
	const threads = () => {
		st.textContent = "";
		st.append(el("option", {value: ""}, "all"));
		P.threads.forEach((t, i) => {
			if (sp.value === "" || t.pid === +sp.value)
				st.append(el("option", {value: String(i)}, `${t.name || "thread"} [${t.tid}]`));
		});
	};
	threads();
	sp.addEventListener("change", () => { threads(); refresh(); });
	st.addEventListener("change", refresh);
}

// Recomputes the sums for the selection and redraws every view.
function refresh() {
	const P = app.P;
	app.sum = summarize(P, threadKeep());
	if (app.sum.tot[app.flame.zoom] === 0) app.flame.zoom = 0;
	app.flame.setData(app.sum);
	bars(P, app.sum, $("bars"), pick);
	modules(P, app.sum, $("mods"));
	app.table.setData(app.sum);
	doSearch();
}

function doSearch() {
	const r = app.flame.search($("search").value.trim());
	$("search-result").textContent = r ? `${r.frames} frame${r.frames === 1 ? "" : "s"} match: ` +
		`${pct(r.samples, app.sum.total)} of the samples` : "";
	return r;
}

// A function picked in the chart or the table: search for it exactly.
function pick(f) {
	$("search").value = "^" + app.P.fname[f].replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
	doSearch();
	$("flame").scrollIntoView();
}

function crumbs(v) {
	const P = app.P, box = $("crumbs"), path = [];
	for (let n = v; n; n = P.parent[n]) path.unshift(n);
	box.textContent = "";
	if (!path.length) return;
	const add = (n, text) => {
		const a = el("a", {href: "#flame"}, text);
		a.addEventListener("click", (e) => { e.preventDefault(); app.flame.setZoom(n); });
		box.append(a);
	};
	add(0, "all");
	for (const n of path) { box.append(" \u203a "); add(n, P.fname[P.frame[n]]); }
}

function main() {
	const P = app.P = loadProfile();
	document.body.classList.add("js");
	app.flame = new Flame(P, $("fg"), $("tip"));
	app.flame.onzoom = crumbs;
	app.table = new FuncTable(P, $("table"), pick);
	if (P.diff) {
		$("flame-title").textContent = "Differential flame graph";
		$("legend").textContent = "The new profile's call tree; red: the path's share of all samples " +
			"grew since the baseline, blue: it shrank (the deeper the colour, the larger the change).";
	} else {
		$("legend").textContent = "Width: samples at or below the frame. Colour: the module. " +
			"Click a frame to zoom, click it again to zoom out.";
	}
	fillSelections();
	$("search").addEventListener("input", doSearch);
	$("reset").addEventListener("click", () => app.flame.setZoom(0));
	$("icicle").addEventListener("change", (e) => {
		app.flame.icicle = e.target.checked;
		app.flame.draw();
		app.flame.scrollToRoot();
	});
	let pending = 0;
	window.addEventListener("resize", () => {
		clearTimeout(pending);
		pending = setTimeout(() => app.flame.draw(), 100);
	});
	const hash = location.hash;
	const show = /show=(\w+)/.exec(hash);
	if (show) document.body.classList.add("only-" + show[1]);
	if (/icicle/.test(hash)) { $("icicle").checked = true; app.flame.icicle = true; }
	refresh();
	app.flame.scrollToRoot();
	if (app.flame.clipped)
		$("legend").textContent += ` Stacks deeper than ${MAX_ROWS} frames are cut: click a frame near the top to see below it.`;
	if (/selftest/.test(hash)) selftest();
}

document.addEventListener("DOMContentLoaded", () => {
	try { main(); } catch (e) { pageErrors.push(String(e && e.stack || e)); console.log(e); }
	if (/selftest/.test(location.hash) && !$("selftest").textContent) selftestReport({});
});
