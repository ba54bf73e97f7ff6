// flame.js - the flame graph (and icicle view) on a canvas: each call
// path one box, as wide as its samples, children on their parent in
// order of width.  Click zooms into a box (its ancestors become the
// crumbs above), search colours matching boxes and sums their share,
// hover shows the full name.  With a baseline (diff) each box is red
// when its share of all samples grew, blue when it shrank.

// MAX_ROWS: a canvas is at most 32767 pixels high; deeper frames are
// reached by zooming.
const ROW = 18, MIN_W = 0.4, MAX_ROWS = 1000;

class Flame {
	constructor(P, canvas, tip) {
		this.P = P; this.canvas = canvas; this.tip = tip;
		this.zoom = 0; this.icicle = false; this.re = null;
		this.onzoom = null;
		canvas.addEventListener("click", (e) => this.click(e));
		canvas.addEventListener("mousemove", (e) => this.hover(e));
		canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
	}

	setData(sum) { this.sum = sum; this.draw(); }

	// The share of the root's samples whose path has a matching frame
	// (a match below a match is not counted twice).
	search(text) {
		this.re = null;
		if (text) {
			try { this.re = new RegExp(text, "i"); }
			catch (e) { this.re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
		}
		this.draw();
		if (!this.re) return null;
		const P = this.P, tot = this.sum.tot, match = this.matches();
		let share = 0, frames = 0;
		const stack = [0];
		while (stack.length) {
			const v = stack.pop();
			for (let k = P.kidStart[v]; k < P.kidStart[v + 1]; k++) {
				const c = P.kids[k];
				if (!tot[c]) continue;
				if (match[P.frame[c]]) { share += tot[c]; frames++; } else stack.push(c);
			}
		}
		return {frames, samples: share, share: this.sum.total ? share / this.sum.total : 0};
	}

	matches() {
		if (!this.re) return null;
		if (!this.matchCache || this.matchCache.re !== this.re) {
			const m = new Uint8Array(this.P.nframes);
			for (let f = 0; f < this.P.nframes; f++) m[f] = this.re.test(this.P.fname[f]);
			this.matchCache = {re: this.re, m};
		}
		return this.matchCache.m;
	}

	setZoom(v) {
		this.zoom = v;
		this.draw();
		this.scrollToRoot();
		if (this.onzoom) this.onzoom(v);
	}

	// Boxes of the zoomed subtree: rows[d] = [[x, w, node], ...] in px.
	layout(width) {
		const P = this.P, tot = this.sum.tot, rows = [];
		const scale = tot[this.zoom] ? width / tot[this.zoom] : 0;
		const stack = [[this.zoom, 0, 0]];
		this.clipped = false;
		while (stack.length) {
			const [v, x, d] = stack.pop();
			const w = tot[v] * scale;
			(rows[d] = rows[d] || []).push([x, w, v]);
			if (d + 1 >= MAX_ROWS) {
				this.clipped = this.clipped || P.kidStart[v + 1] > P.kidStart[v];
				continue;
			}
			const kids = [];
			for (let k = P.kidStart[v]; k < P.kidStart[v + 1]; k++)
				if (tot[P.kids[k]] * scale >= MIN_W) kids.push(P.kids[k]);
			kids.sort((a, b) => tot[b] - tot[a] || P.fname[P.frame[a]].localeCompare(P.fname[P.frame[b]]));
			let cx = x;
			for (const c of kids) { stack.push([c, cx, d + 1]); cx += tot[c] * scale; }
		}
		for (const r of rows) r.sort((a, b) => a[0] - b[0]);
		return rows;
	}

	color(v) {
		const P = this.P, f = P.frame[v];
		if (v === 0) return "#cfd8dc";
		const m = this.matches();
		if (m && m[f]) return "#d500f9";
		if (P.diff) return this.diffColor(v);
		// lightness varies by function, so neighbours of one module differ
		const l = 58 + hash(P.fname[f]) % 16;
		return P.inl[v] ? `hsl(${moduleHue(P.fmodule[f])}, 40%, ${l + 8}%)` : moduleColor(P.fmodule[f], l);
	}

	// Growth of node v's share: new share minus baseline share.
	delta(v) {
		const B = this.P.raw.B, BT = this.P.raw.BT;
		return (this.sum.total ? this.sum.tot[v] / this.sum.total : 0) - (BT ? B[v] / BT : 0);
	}

	diffColor(v) {
		const d = this.delta(v), a = Math.min(1, Math.abs(d) / (this.maxDelta || 1));
		const l = Math.round(96 - 46 * a);
		return d > 0 ? `hsl(0, 85%, ${l}%)` : d < 0 ? `hsl(215, 85%, ${l}%)` : "hsl(0, 0%, 92%)";
	}

	draw() {
		if (!this.sum) return;
		const c = this.canvas, dpr = window.devicePixelRatio || 1;
		const width = Math.max(200, c.parentElement.clientWidth);
		const rows = this.layout(width);
		if (this.P.diff) {
			this.maxDelta = 0;
			for (const r of rows) for (const b of r) this.maxDelta = Math.max(this.maxDelta, Math.abs(this.delta(b[2])));
		}
		const height = Math.max(rows.length, 1) * ROW;
		c.width = width * dpr; c.height = height * dpr;
		c.style.width = width + "px"; c.style.height = height + "px";
		const g = c.getContext("2d");
		g.scale(dpr, dpr);
		g.font = "12px system-ui, sans-serif";
		g.textBaseline = "middle";
		const cw = g.measureText("m").width * 0.8;
		this.rows = rows;
		for (let d = 0; d < rows.length; d++) {
			const y = this.rowY(d, rows.length);
			for (const [x, w, v] of rows[d]) {
				g.fillStyle = this.color(v);
				g.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
				if (w < 24) continue;
				const name = this.label(v), fit = Math.floor((w - 6) / cw);
				const dark = this.P.diff && Math.abs(this.delta(v)) > 0.6 * (this.maxDelta || 1);
				g.fillStyle = dark ? "#fff" : "#111";
				g.fillText(name.length <= fit ? name : name.slice(0, Math.max(fit - 1, 1)) + "\u2026", x + 3, y + ROW / 2);
			}
		}
	}

	// A graph taller than its box scrolls: keep the root (and the zoomed
	// frame) in view, at the bottom of a flame graph, the top of an icicle.
	scrollToRoot() {
		const wrap = this.canvas.parentElement;
		wrap.scrollTop = this.icicle ? 0 : wrap.scrollHeight;
	}

	label(v) {
		if (v === 0) return this.P.diff ? "all samples (new)" : "all samples";
		return this.P.fname[this.P.frame[v]];
	}

	rowY(d, n) { return this.icicle ? d * ROW : (n - 1 - d) * ROW; }

	// The box under the mouse: [x, w, node] or null.
	at(e) {
		if (!this.rows) return null;
		const r = this.canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
		const n = this.rows.length, row = Math.floor(y / ROW), d = this.icicle ? row : n - 1 - row;
		const boxes = this.rows[d];
		if (!boxes) return null;
		let lo = 0, hi = boxes.length - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1, b = boxes[mid];
			if (x < b[0]) hi = mid - 1; else if (x >= b[0] + b[1]) lo = mid + 1; else return b;
		}
		return null;
	}

	click(e) {
		const b = this.at(e);
		if (!b) return;
		this.setZoom(b[2] === this.zoom && b[2] !== 0 ? this.P.parent[b[2]] : b[2]);
	}

	hover(e) {
		const b = this.at(e), tip = this.tip;
		if (!b) { tip.hidden = true; return; }
		const v = b[2], P = this.P, f = P.frame[v], t = this.sum.tot[v];
		tip.textContent = "";
		tip.append(el("b", {}, this.label(v)));
		if (v) tip.append(el("div", {}, "module: " + P.fmodule[f] + (P.inl[v] ? " (inlined)" : "")));
		tip.append(el("div", {}, `${t} samples, ${pct(t, this.sum.total)} of all` +
			(this.zoom ? `, ${pct(t, this.sum.tot[this.zoom])} of the zoomed frame` : "")));
		if (P.diff)
			tip.append(el("div", {}, `baseline ${pct(P.raw.B[v], P.raw.BT)} \u2192 new ${pct(t, this.sum.total)} ` +
				`(${this.delta(v) >= 0 ? "+" : ""}${(100 * this.delta(v)).toFixed(2)} points)`));
		tip.style.left = Math.max(0, Math.min(e.clientX + 12, window.innerWidth - 340)) + "px";
		tip.style.top = (e.clientY + 16) + "px";
		tip.hidden = false;
	}
}
