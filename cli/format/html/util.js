// util.js - what the rest of the page's script shares: errors caught
// for the self test, element building (profile text only ever goes in
// as textContent, never as markup), colours, number formats, and the
// profile loaded from the JSON element with the sums every view needs.

const pageErrors = [];
window.addEventListener("error", (e) => pageErrors.push(String(e.message)));
{
	const original = console.error.bind(console);
	console.error = (...args) => { pageErrors.push(args.join(" ")); original(...args); };
}

function $(id) { return document.getElementById(id); }

// el("td", {className: "x"}, "text", child...): attributes are set as
// properties; string children become text nodes.
function el(tag, props, ...kids) {
	const e = document.createElement(tag);
	Object.assign(e, props || {});
	for (const k of kids)
		e.append(typeof k === "string" || typeof k === "number" ? String(k) : k);
	return e;
}

function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + "%" : "0.00%"; }

function hash(s) {
	let h = 2166136261;
	for (let i = 0; i < s.length; i++)
		h = Math.imul(h ^ s.charCodeAt(i), 16777619);
	return h >>> 0;
}

// A module's colour: one of a few soft hues far enough apart to tell
// modules apart, picked by name so a module keeps its colour between
// pages; [unknown] is grey.
const HUES = [24, 200, 48, 140, 350, 265, 175, 8, 225, 80, 310, 36];
function moduleHue(m) { return HUES[hash(m) % HUES.length]; }
function moduleColor(m, light) {
	return m === "[unknown]" ? `hsl(0, 0%, ${light || 72}%)`
		: `hsl(${moduleHue(m)}, 62%, ${light || 64}%)`;
}

// The profile: strings, frames, nodes (parent before child), samples.
function loadProfile() {
	const raw = JSON.parse($("profil-data").textContent);
	const S = raw.S, n = raw.N.length / 2, nf = raw.F.length / 3;
	const P = {
		raw, S, nnodes: n, nframes: nf, diff: raw.diff === 1,
		parent: new Int32Array(n), frame: new Int32Array(n), inl: new Uint8Array(n),
		fname: [], fmodule: [], fmodId: new Int32Array(nf), modules: [],
		threads: raw.T.map((t) => ({pid: t[0], tid: t[1], name: S[t[2]], comm: S[t[3]]})),
		procs: raw.P.map((p) => ({pid: p[0], ppid: p[1], cmd: S[p[2]]})),
		hot: new Set(raw.hot),
	};
	const modIds = new Map();
	for (let f = 0; f < nf; f++) {
		P.fname.push(S[raw.F[3 * f]]);
		const m = S[raw.F[3 * f + 1]];
		P.fmodule.push(m);
		if (!modIds.has(m)) { modIds.set(m, P.modules.length); P.modules.push(m); }
		P.fmodId[f] = modIds.get(m);
	}
	for (let i = 1; i < n; i++) {
		P.parent[i] = raw.N[2 * i];
		P.frame[i] = raw.N[2 * i + 1] >> 1;
		P.inl[i] = raw.N[2 * i + 1] & 1;
	}
	// children lists, in one array (CSR)
	const count = new Int32Array(n + 1);
	for (let i = 1; i < n; i++) count[P.parent[i] + 1]++;
	for (let i = 0; i < n; i++) count[i + 1] += count[i];
	P.kidStart = count.slice();
	P.kids = new Int32Array(Math.max(n - 1, 0));
	const fill = count.slice();
	for (let i = 1; i < n; i++) P.kids[fill[P.parent[i]]++] = i;
	recursion(P);
	return P;
}

// rec[i]: an ancestor of node i has the same frame (its time is already
// in that frame's cum); recm: the same for its module.  One walk, so a
// stack 100000 frames deep costs no more than 100000 nodes.
function recursion(P) {
	const n = P.nnodes;
	P.rec = new Uint8Array(n);
	P.recm = new Uint8Array(n);
	const onF = new Int32Array(P.nframes), onM = new Int32Array(P.modules.length);
	const stack = [0], pos = [P.kidStart[0]];
	while (stack.length) {
		const top = stack.length - 1, v = stack[top];
		if (pos[top] < P.kidStart[v + 1]) {
			const c = P.kids[pos[top]++], f = P.frame[c], m = P.fmodId[f];
			P.rec[c] = onF[f] > 0;
			P.recm[c] = onM[m] > 0;
			onF[f]++; onM[m]++;
			stack.push(c); pos.push(P.kidStart[c]);
		} else {
			if (v) { onF[P.frame[v]]--; onM[P.fmodId[P.frame[v]]]--; }
			stack.pop(); pos.pop();
		}
	}
}

// Sums under a selection of threads (keep(t) says which): per node its
// self and total, per frame and module self and cum.
function summarize(P, keep) {
	const X = P.raw.X, n = P.nnodes;
	const self = new Float64Array(n), tot = new Float64Array(n);
	for (let i = 0; i < X.length; i += 3)
		if (keep(X[i + 1])) self[X[i]] += X[i + 2];
	for (let i = n - 1; i > 0; i--) {
		tot[i] += self[i];
		tot[P.parent[i]] += tot[i];
	}
	tot[0] += self[0];
	const fself = new Float64Array(P.nframes), fcum = new Float64Array(P.nframes);
	const mself = new Float64Array(P.modules.length), mcum = new Float64Array(P.modules.length);
	for (let i = 1; i < n; i++) {
		const f = P.frame[i], m = P.fmodId[f];
		fself[f] += self[i];
		mself[m] += self[i];
		if (!P.rec[i]) fcum[f] += tot[i];
		if (!P.recm[i]) mcum[m] += tot[i];
	}
	return {self, tot, total: tot[0], fself, fcum, mself, mcum};
}
