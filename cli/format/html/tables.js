// tables.js - the bar chart of the top functions by self time (coloured
// by module), the module breakdown, and the table of all functions:
// sortable by any column, filtered by a substring of the function or
// module, shown a page at a time so 50,000 rows cost one page of DOM.

const PAGE = 100;

function bars(P, sum, box, onpick) {
	const order = [];
	for (let f = 0; f < P.nframes; f++) if (sum.fself[f] > 0) order.push(f);
	order.sort((a, b) => sum.fself[b] - sum.fself[a] || sum.fcum[b] - sum.fcum[a]);
	const top = order.slice(0, 15), max = top.length ? sum.fself[top[0]] : 1;
	box.textContent = "";
	if (!top.length) box.append(el("p", {className: "missing"}, "No samples in this selection."));
	for (const f of top) {
		const bar = el("div", {className: "fill"});
		bar.style.width = (100 * sum.fself[f] / max).toFixed(2) + "%";
		bar.style.background = moduleColor(P.fmodule[f]);
		const row = el("div", {className: "bar", title: P.fname[f] + " (" + P.fmodule[f] + ")"},
			el("span", {className: "bl"}, P.fname[f]), el("span", {className: "bt"}, bar),
			el("span", {className: "bv"}, pct(sum.fself[f], sum.total)));
		row.dataset.frame = f;
		row.addEventListener("click", () => onpick(f));
		box.append(row);
	}
	legend(P, top.map((f) => P.fmodule[f]), box);
}

function legend(P, mods, box) {
	const seen = new Set(), lg = el("p", {className: "legend"});
	for (const m of mods) {
		if (seen.has(m)) continue;
		seen.add(m);
		const sw = el("span", {className: "sw"});
		sw.style.background = moduleColor(m);
		lg.append(sw, m + "  ");
	}
	box.append(lg);
}

function modules(P, sum, box) {
	const order = P.modules.map((m, i) => i).filter((i) => sum.mcum[i] > 0);
	order.sort((a, b) => sum.mself[b] - sum.mself[a] || sum.mcum[b] - sum.mcum[a]);
	const t = el("table", {className: "grid"});
	t.append(el("thead", {}, el("tr", {}, el("th", {}, "self"), el("th", {}, "self%"),
		el("th", {}, "cum%"), el("th", {}, "module"), el("th", {className: "wide"}, "self share"))));
	const body = el("tbody");
	for (const i of order) {
		const fill = el("div", {className: "fill"});
		fill.style.width = pct(sum.mself[i], sum.total);
		fill.style.background = moduleColor(P.modules[i]);
		body.append(el("tr", {}, el("td", {}, sum.mself[i]), el("td", {}, pct(sum.mself[i], sum.total)),
			el("td", {}, pct(sum.mcum[i], sum.total)), el("td", {}, P.modules[i]),
			el("td", {className: "wide"}, el("div", {className: "bt"}, fill))));
	}
	t.append(body);
	box.textContent = "";
	box.append(t);
}

// The table of all functions.  cols: [title, value(f), text(f)].
class FuncTable {
	constructor(P, box, onpick) {
		this.P = P; this.box = box; this.onpick = onpick;
		this.sortCol = 0; this.desc = true; this.filter = ""; this.page = 0;
		const s = () => this.sum, base = P.raw;
		this.cols = [
			["self", (f) => s().fself[f], (f) => s().fself[f]],
			["self%", (f) => s().fself[f], (f) => pct(s().fself[f], s().total)],
			["cum", (f) => s().fcum[f], (f) => s().fcum[f]],
			["cum%", (f) => s().fcum[f], (f) => pct(s().fcum[f], s().total)],
			["function", (f) => P.fname[f], (f) => P.fname[f]],
			["module", (f) => P.fmodule[f], (f) => P.fmodule[f]],
		];
		if (P.diff) {
			const d = (f, k) => (s().total ? [s().fself, s().fcum][k][f] / s().total : 0) -
				(base.BT ? base.BF[2 * f + k] / base.BT : 0);
			const txt = (v) => (v >= 0 ? "+" : "") + (100 * v).toFixed(2);
			this.cols.push(["\u0394self%", (f) => d(f, 0), (f) => txt(d(f, 0))],
				["\u0394cum%", (f) => d(f, 1), (f) => txt(d(f, 1))]);
		}
		this.input = el("input", {type: "search", placeholder: "filter functions and modules", id: "filter"});
		this.input.addEventListener("input", () => { this.filter = this.input.value.toLowerCase(); this.page = 0; this.render(); });
		this.info = el("span", {className: "info", id: "table-info"});
		this.prev = el("button", {type: "button", id: "prev"}, "\u2190 previous");
		this.next = el("button", {type: "button", id: "next"}, "next \u2192");
		this.prev.addEventListener("click", () => { this.page--; this.render(); });
		this.next.addEventListener("click", () => { this.page++; this.render(); });
		this.table = el("table", {className: "grid", id: "funcs"});
		box.append(el("div", {className: "controls"}, this.input, this.prev, this.next, this.info), this.table);
	}

	setData(sum) { this.sum = sum; this.order = null; this.render(); }

	sortBy(col) {
		this.desc = this.sortCol === col ? !this.desc : col < 4 || col > 5;
		this.sortCol = col; this.order = null; this.page = 0;
		this.render();
	}

	rows() {
		if (!this.order) {
			const P = this.P, v = this.cols[this.sortCol][1], dir = this.desc ? -1 : 1, o = [];
			for (let f = 0; f < P.nframes; f++)
				if (this.sum.fcum[f] > 0 || (P.diff && P.raw.BF[2 * f + 1] > 0)) o.push(f);
			o.sort((a, b) => {
				const x = v(a), y = v(b);
				const c = typeof x === "string" ? x.localeCompare(y) : x - y;
				return c ? dir * c : this.sum.fself[b] - this.sum.fself[a] || a - b;
			});
			this.order = o;
		}
		if (!this.filter) return this.order;
		const q = this.filter, P = this.P;
		return this.order.filter((f) => P.fname[f].toLowerCase().includes(q) || P.fmodule[f].toLowerCase().includes(q));
	}

	render() {
		const rows = this.rows(), pages = Math.max(1, Math.ceil(rows.length / PAGE));
		this.page = Math.max(0, Math.min(this.page, pages - 1));
		const from = this.page * PAGE, to = Math.min(rows.length, from + PAGE);
		this.shown = rows.slice(from, to);
		const head = el("tr");
		this.cols.forEach((c, i) => {
			const th = el("th", {className: "sort"}, c[0] + (i === this.sortCol ? (this.desc ? " \u25bc" : " \u25b2") : ""));
			th.addEventListener("click", () => this.sortBy(i));
			head.append(th);
		});
		const body = el("tbody");
		for (const f of this.shown) {
			const tr = el("tr");
			this.cols.forEach((c, i) => {
				const td = el("td", {}, c[2](f));
				if (i === 4) {
					td.className = "fn";
					td.addEventListener("click", () => this.onpick(f));
					if (this.P.hot.has(f)) td.append(" ", el("a", {href: "#src-" + f, className: "srclink"}, "source"));
				}
				tr.append(td);
			});
			body.append(tr);
		}
		this.table.textContent = "";
		this.table.append(el("thead", {}, head), body);
		this.info.textContent = rows.length ? `rows ${from + 1}\u2013${to} of ${rows.length}` : "no function matches";
		this.prev.disabled = this.page === 0;
		this.next.disabled = this.page >= pages - 1;
	}
}
