#!/usr/bin/env python3
"""analyze.py - the tables and plots of bench/run.sh (issue 14).

  analyze.py gperf PROFILE BINARY    gperftools' CPU profile: "TOTAL n" and
                                     "function count" for BINARY's functions
  analyze.py report RAW OUT QUICK ELAPSED HAVE_GNUPLOT
                                     bench/results.md and OUT/*.png

Python because python3 is one of the workloads anyway, and the agreement
measure needs dictionaries and a little ELF (readelf) work that awk would
make unreadable.  Standard library only.
"""
import glob
import math
import os
import platform
import re
import statistics
import struct
import subprocess
import sys
import time

CONFIG_HZ = 250  # the kernel tick of this machine: CPU-clock timers expire on it


# ---------------------------------------------------------------------------
# gperftools' legacy CPU profile: 64-bit words, header 0 3 0 period 0, then
# records (count, depth, pc...), a trailer 0 1 0, then /proc/self/maps.
# ---------------------------------------------------------------------------
def gperf(path, binary):
    data = open(path, "rb").read()
    words = len(data) // 8
    w = struct.unpack("<%dQ" % words, data[: words * 8])
    i = 5
    pcs = {}
    total = 0
    while i + 2 <= words:
        count, depth = w[i], w[i + 1]
        if count == 0 and depth == 1 and w[i + 2] == 0:
            i += 3
            break
        if depth >= 1:
            pcs[w[i + 2]] = pcs.get(w[i + 2], 0) + count
        total += count
        i += 2 + depth
    maps = data[i * 8:].decode("latin-1", "replace")
    real = os.path.realpath(binary)
    base = None
    for line in maps.splitlines():
        f = line.split()
        if len(f) >= 6 and os.path.realpath(f[5]) == real and int(f[2], 16) == 0:
            base = int(f[0].split("-")[0], 16)
            break
    print("TOTAL", total)
    if base is None:
        return
    syms = []
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2]))
    syms.sort()
    counts = {}
    for pc, c in pcs.items():
        off = pc - base
        name = None
        for a, n in syms:  # few functions: a linear scan is fine
            if a <= off:
                name = n
            else:
                break
        if name:
            counts[name] = counts.get(name, 0) + c
    for n, c in sorted(counts.items(), key=lambda x: -x[1]):
        print(n, c)


# ---------------------------------------------------------------------------
# Raw lines: key=value pairs.
# ---------------------------------------------------------------------------
def parse_kv(line):
    d = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            d[k] = v
    return d


def load(raw, name):
    p = os.path.join(raw, name)
    if not os.path.exists(p):
        return []
    return [parse_kv(l) for l in open(p) if l.strip()]


def fnum(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs, fmt="%.3f"):
    if not xs:
        return "n/a"
    return (fmt + " [" + fmt + "–" + fmt + "]") % (med(xs), min(xs), max(xs))


# ---------------------------------------------------------------------------
# 1. Agreement with perf.
# ---------------------------------------------------------------------------
def modkey(name):
    """liblzma.so.5 (ours: the name the loader opened) and liblzma.so.5.4.1
    (perf: the real file) are one module."""
    name = os.path.basename(name)
    return re.sub(r"\.so(\.[0-9.]+)?$", ".so", name)


FIND_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/bin", "/bin",
             "/usr/lib/python3.11/lib-dynload"]


def fde_starts(module, extra_dirs):
    """Function starts of a module from its call frame information, as
    profil groups an unnamed address; [] when the file is not found."""
    for d in extra_dirs + FIND_DIRS:
        for cand in glob.glob(os.path.join(d, module)):
            out = subprocess.run(["readelf", "--debug-dump=frames", cand],
                                 capture_output=True, text=True).stdout
            starts = []
            for m in re.finditer(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out):
                starts.append((int(m.group(1), 16), int(m.group(2), 16)))
            starts.sort()
            return starts
    return []


def unnamed_key(mod, addr, extra_dirs):
    """An unnamed function is MODULE+0xADDR on both sides: perf's ADDR is
    the sampled address, ours is not always the FDE's first byte, so both
    are keyed by (module, start of the FDE that holds ADDR) from readelf;
    ADDR itself when the module's file or FDE is not found."""
    mod = os.path.basename(mod)
    if mod not in FDES:
        FDES[mod] = fde_starts(mod, extra_dirs)
    for a, b in FDES[mod]:
        if a <= addr < b:
            addr = a
            break
    return "%s+0x%x" % (modkey(mod), addr)


FDES = {}
UNNAMED = re.compile(r"(.*)\+0x([0-9a-f]+)$")


def fkey(name, extra_dirs):
    m = UNNAMED.match(name)
    return unnamed_key(m.group(1), int(m.group(2), 16), extra_dirs) if m else name


def read_ours(prefix, extra_dirs=()):
    """Total, functions and modules of a profil record run.  Functions come
    from `report --lines`, each line charged to the outermost function of
    its inline chain: perf names the symbol that holds an address, while
    our flat profile names the innermost inlined function."""
    import csv
    funcs, mods = {}, {}
    total = 0
    with open(prefix + ".csv") as f:
        for row in csv.DictReader(f):
            n = int(row["self"])
            total += n
            if n:
                mods[modkey(row["module"])] = mods.get(modkey(row["module"]), 0) + n
    if os.path.exists(prefix + ".lines.csv"):
        with open(prefix + ".lines.csv") as f:
            for row in csv.DictReader(f):
                n = int(row["self"])
                if not n:
                    continue
                outer = re.findall(r"\(inlined into (\S+?),", row["function"])
                name = outer[-1] if outer else row["function"]
                k = fkey(name, list(extra_dirs))
                funcs[k] = funcs.get(k, 0) + n
    return total, funcs, mods


def read_perf(prefix, extra_dirs):
    """perf report --sort dso,sym -n: user-space rows only (kernel rows
    dropped, shares renormalised); unnamed addresses keyed like ours."""
    funcs, mods = {}, {}
    total = kernel = 0
    for line in open(prefix + ".sym"):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"\s*[0-9.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*\S)", line)
        if not m:
            continue
        n, dso, kind, sym = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        if kind == "k" or dso.startswith("[kernel"):
            kernel += n
            continue
        total += n
        mk = modkey(dso)
        mods[mk] = mods.get(mk, 0) + n
        k = unnamed_key(dso, int(sym, 16), extra_dirs) if sym.startswith("0x") else sym
        funcs[k] = funcs.get(k, 0) + n
    return total, kernel, funcs, mods


def is_named(key):
    return not UNNAMED.match(key) and key != "[unknown]"


def compare(ours, ot, perf, pt, keys_filter=None, top=10):
    ks = [k for k in ours if keys_filter is None or keys_filter(k)]
    ks.sort(key=lambda k: -ours[k])
    pk = [k for k in perf if keys_filter is None or keys_filter(k)]
    pk.sort(key=lambda k: -perf[k])
    sel = list(dict.fromkeys(ks[:top] + pk[:top]))
    rows = []
    for k in sel:
        a = 100.0 * ours.get(k, 0) / ot if ot else 0
        b = 100.0 * perf.get(k, 0) / pt if pt else 0
        rows.append((k, a, b, abs(a - b)))
    rows.sort(key=lambda r: -max(r[1], r[2]))
    return rows


def agreement(raw, build, md, plots):
    runs = load(raw, "agreement.txt")
    if not runs:
        md.append("Not measured: perf could not run here (see the notes).\n")
        return {}
    extra = [os.path.join(build, "bench"), os.path.join(build, "test", "rec")]
    summary = {}
    scatter = []
    md.append("| workload | samples: ours / perf `task-clock` user (+kernel) / perf `task-clock:u` | "
              "functions: ours vs perf (max diff, pts) | modules: ours vs perf | functions: ours vs perf `:u` | "
              "functions: perf vs perf `:u` (perf's own scatter) | 3σ sampling noise of ours at the top share |")
    md.append("|---|---|---|---|---|---|---|")
    detail = []
    mx = lambda rows: max((x[3] for x in rows), default=0.0)
    engines = {}
    for r in runs:
        w = r["workload"]
        ot, of, om = read_ours(r["profil"], extra)
        pt, pk, pf, pm = read_perf(r["perf"], extra)
        ut, _, uf, um = read_perf(r["perfu"], extra) if "perfu" in r else (0, 0, {}, {})
        fp, mp = compare(of, ot, pf, pt), compare(om, ot, pm, pt)
        fu = compare(of, ot, uf, ut)
        pp = compare(uf, ut, pf, pt)
        top = max((x[1] for x in fp), default=0) / 100
        # Distinct observations (see 5.): every sample with the perf-events
        # engine, one per kernel tick with CPU-clock timers.
        try:
            eng = re.search(r"engine ([a-z-]+),", open(r["profil"] + ".stderr").read())
        except OSError:
            eng = None
        n_obs = ot if eng and eng.group(1) == "perf-events" else ot / 1000.0 * CONFIG_HZ
        engines[w] = eng.group(1) if eng else "?"
        noise = 300 * math.sqrt(top * (1 - top) / n_obs) if n_obs else 0
        summary[w] = (mx(fp), mx(mp), mx(fu), mx(pp), noise)
        md.append("| %s | %d / %d (+%d) / %d | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            w, ot, pt, pk, ut, mx(fp), mx(mp), mx(fu), mx(pp), noise))
        for k, a, b, d in fp:
            scatter.append((a, b))
        detail.append("\n**%s**: %d samples (ours), %d user + %d kernel (perf `task-clock`), %d (perf `task-clock:u`)\n"
                      % (w, ot, pt, pk, ut))
        detail.append("| function | ours % | perf % (user) | diff | perf `:u` % | diff |")
        detail.append("|---|---|---|---|---|---|")
        for k, a, b, d in fp[:12]:
            b2 = 100.0 * uf.get(k, 0) / ut if ut else 0
            detail.append("| `%s` | %.2f | %.2f | %.2f | %.2f | %.2f |" % (k, a, b, d, b2, abs(a - b2)))
        detail.append("")
        detail.append("| module | ours % | perf % (user) | diff | perf `:u` % | diff |")
        detail.append("|---|---|---|---|---|---|")
        for k, a, b, d in mp[:6]:
            b2 = 100.0 * um.get(k, 0) / ut if ut else 0
            detail.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |" % (k, a, b, d, b2, abs(a - b2)))
    md.append("\nprofil's engine in these runs: %s (perf-events: one hrtimer-driven perf event per "
              "thread, every sample a distinct observation; thread-cputime-timers: CPU-clock timers, "
              "one observation per kernel tick).\n" % ", ".join("%s %s" % kv for kv in engines.items()))
    md.extend(detail)
    plots["agree"] = scatter
    return summary


# ---------------------------------------------------------------------------
# 2. Overhead.
# ---------------------------------------------------------------------------
PEER_LABEL = {
    "none": "unprofiled", "profil": "profil record (stacks)", "profil1": "profil record --max-depth 1",
    "perf": "perf record -e task-clock", "gperf": "gperftools", "gperfpt": "gperftools, per-thread timers",
    "gprofng": "gprofng collect app",
}


def label(cfg):
    p, hz = cfg.rsplit("-", 1)
    extra = " (0.5 ms: its floor)" if p == "gprofng" and int(hz) > 2000 else ""
    return "%s @ %s Hz%s" % (PEER_LABEL.get(p, p), hz, extra)


def overhead(raw, md, plots):
    rows = load(raw, "overhead.txt")
    if not rows:
        md.append("Not measured.\n")
        return {}
    base = {}
    for r in rows:
        if r["config"] == "none" and "failed" not in r:
            base[(r["workload"], r["rep"])] = r
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    configs = list(dict.fromkeys(r["config"] for r in rows if r["config"] != "none"))
    res = {}
    for w in workloads:
        b = [fnum(base[k]["inner_cpu"]) for k in base if k[0] == w]
        res[(w, "__base__")] = b
        bw = [fnum(base[k]["wall"]) for k in base if k[0] == w]
        md.append("\n**%s** — unprofiled: CPU %s s, wall %s s (median [min–max] over %d runs)\n"
                  % (w, spread(b, "%.2f"), spread(bw, "%.2f"), len(b)))
        bi = [fnum(base[k].get("insn_u"), 0) + fnum(base[k].get("insn_k"), 0) for k in base if k[0] == w]
        bi = [x for x in bi if x > 0]
        if bi:
            md.append("Unprofiled instructions (user + kernel): %s × 10⁹.\n" % spread([x / 1e9 for x in bi], "%.4f"))
        md.append("| profiler | workload instructions ratio (user+kernel) | workload CPU ratio | total CPU ratio (profiler included) | wall ratio | profiler's own CPU, % of the workload's |")
        md.append("|---|---|---|---|---|---|")
        for c in configs:
            cr, tr, wr, own, ir = [], [], [], [], []
            failed = 0
            for r in rows:
                if r["workload"] != w or r["config"] != c:
                    continue
                if "failed" in r:
                    failed += 1
                    continue
                bb = base.get((w, r["rep"]))
                if not bb:
                    continue
                ic, oc = fnum(r["inner_cpu"]), fnum(r["cpu"])
                cr.append(ic / fnum(bb["inner_cpu"]))
                tr.append(oc / fnum(bb["cpu"]))
                wr.append(fnum(r["wall"]) / fnum(bb["wall"]))
                own.append(100.0 * (oc - ic) / ic)
                i1 = fnum(r.get("insn_u"), 0) + fnum(r.get("insn_k"), 0)
                i0 = fnum(bb.get("insn_u"), 0) + fnum(bb.get("insn_k"), 0)
                if i1 > 0 and i0 > 0:
                    ir.append(i1 / i0)
            if not cr and not failed:
                continue  # not run on this workload (the synthetic one alone runs every rate)
            res[(w, c)] = (cr, tr, wr, own, ir)
            if not cr:
                md.append("| %s | failed (%d runs) | | | | |" % (label(c), failed))
                continue
            md.append("| %s | %s | %s | %s | %s | %s |" % (label(c), spread(ir, "%.4f"), spread(cr), spread(tr),
                                                           spread(wr), spread(own, "%.2f")))
    plots["overhead"] = res
    return res


# ---------------------------------------------------------------------------
# 3./4. Totals, fairness, short-lived threads.
# ---------------------------------------------------------------------------
def eff_note(peer, hz):
    return ""


def totals(raw, md, plots):
    rows = load(raw, "totals.txt")
    if not rows:
        md.append("Not measured.\n")
        return {}
    threads = sorted({int(r["threads"]) for r in rows})
    keys = list(dict.fromkeys((r["peer"], r["hz"]) for r in rows))
    ratio = {}
    fair = {}
    for r in rows:
        k = (r["peer"], r["hz"], int(r["threads"]))
        if "failed" in r:
            ratio[k] = None
            continue
        s, cpu, hz = fnum(r["samples"], 0), fnum(r["cpu"], 0), float(r["hz"])
        ratio[k] = s / (cpu * hz) if cpu > 0 else None
        n = int(r["threads"])
        per = []
        for i in range(min(n, 8)):
            tc = fnum(r.get("tcpu%d" % i))
            sc = fnum(r.get("spin_%d" % i), 0)
            if tc and tc > 0.02:
                per.append(sc / tc)
        if n in (2, 4, 8) and len(per) == n and min(per) > 0:
            fair[k] = max(per) / min(per)
        elif n in (2, 4, 8):
            fair[k] = None
    md.append("| profiler | " + " | ".join("%d thr" % t for t in threads) + " |")
    md.append("|---|" + "---|" * len(threads))
    for p, hz in keys:
        cells = []
        for t in threads:
            v = ratio.get((p, hz, t), "missing")
            cells.append("failed" if v is None else ("—" if v == "missing" else "%.3f" % v))
        md.append("| %s | %s |" % (label(p + "-" + hz), " | ".join(cells)))
    # CPU outside the spinning threads (process start, a profiler's
    # start-up in the process, exit): the part no thread's timer samples.
    gap = {}
    for r in rows:
        n = int(r["threads"])
        if "failed" in r or n > 8:
            continue
        tc = [fnum(r.get("tcpu%d" % i)) for i in range(n)]
        if all(t is not None for t in tc):
            gap.setdefault(r["peer"], []).append(1000 * (fnum(r["cpu"], 0) - sum(tc)))
    # The same samples against the spinning threads' own CPU: what is lost
    # while threads run, apart from the process's start-up and exit.
    inner = {}
    for r in rows:
        n = int(r["threads"])
        if "failed" in r or n > 8:
            continue
        tc = [fnum(r.get("tcpu%d" % i)) for i in range(n)]
        fs = [fnum(r.get("spin_%d" % i), 0) for i in range(n)]
        if all(t for t in tc):
            inner[(r["peer"], r["hz"], n)] = sum(fs) / (sum(tc) * float(r["hz"]))
    if inner:
        its = sorted({k[2] for k in inner})
        md.append("\nThe spinning functions' samples against the spinning threads' own CPU time "
                  "(`CLOCK_THREAD_CPUTIME_ID` at each thread's end), ≤ 8 threads:\n")
        md.append("| profiler | " + " | ".join("%d thr" % t for t in its) + " |")
        md.append("|---|" + "---|" * len(its))
        for p, hz in keys:
            if any((p, hz, t) in inner for t in its):
                md.append("| %s | %s |" % (label(p + "-" + hz), " | ".join(
                    "%.3f" % inner[(p, hz, t)] if (p, hz, t) in inner else "—" for t in its)))
    plots["totals_inner"] = inner
    plots["gap"] = {p: med(v) for p, v in gap.items()}
    if gap:
        md.append("\nCPU of the process outside the spinning threads (start-up, a preloaded profiler's "
                  "initialisation, exit), ms, median [min–max] over the runs with ≤ 8 threads — what a "
                  "per-thread timer cannot see before it is armed: " + "; ".join(
                      "%s %s" % (PEER_LABEL.get(p, p), spread(v, "%.1f")) for p, v in gap.items()) + ".\n")
    md.append("\nFairness (6.): max/min over threads of samples per CPU second of that thread "
              "(each thread spins in a function of its own; 1.00 = each thread sampled in "
              "proportion to its CPU time; n/a = the profiler gave some thread no sample):\n")
    fts = [t for t in threads if t in (2, 4, 8)]
    md.append("| profiler | " + " | ".join("%d thr" % t for t in fts) + " |")
    md.append("|---|" + "---|" * len(fts))
    for p, hz in keys:
        cells = []
        for t in fts:
            v = fair.get((p, hz, t), "missing")
            cells.append("n/a" if v is None else ("—" if v == "missing" else "%.2f" % v))
        md.append("| %s | %s |" % (label(p + "-" + hz), " | ".join(cells)))
    plots["totals"] = (threads, keys, ratio)
    return ratio, fair


def short(raw, md):
    rows = load(raw, "short.txt")
    out = {}
    if not rows:
        md.append("Not measured.\n")
        return out
    md.append("| profiler | threads | CPU s | samples | samples ÷ (CPU s × rate) |")
    md.append("|---|---|---|---|---|")
    for r in rows:
        if "failed" in r:
            md.append("| %s | | | failed | |" % label(r["peer"] + "-1000"))
            continue
        s, cpu = fnum(r["samples"], 0), fnum(r["cpu"], 0)
        v = s / (cpu * 1000) if cpu else 0
        out[r["peer"]] = v
        md.append("| %s | %s | %.2f | %d | %.3f |" % (label(r["peer"] + "-1000"), r["threads"], cpu, s, v))
    return out


# ---------------------------------------------------------------------------
# 5./7. Attribution, resolution.
# ---------------------------------------------------------------------------
def attribution(raw, md):
    rows = load(raw, "attribution.txt")
    res = load(raw, "resolution.txt")
    obs = {}
    for r in res:
        if fnum(r.get("sig_per_cpu_s")):
            obs[("profil", r["hz"])] = fnum(r["sig_per_cpu_s"])
    if not rows:
        md.append("Not measured.\n")
        return {}
    want = {"share_a": 25, "share_b": 25, "share_c": 10, "share_d": 40}
    cfgs = list(dict.fromkeys(r["config"] for r in rows))
    md.append("| profiler | runs | samples per run | observations per CPU s | largest error, pts (median [min–max]) | 3σ binomial bound, pts | share_d (40%) mean ± sd over runs |")
    md.append("|---|---|---|---|---|---|---|")
    out = {}
    for c in cfgs:
        p, hz = c.rsplit("-", 1)
        errs, ds, ss, ops = [], [], [], []
        for r in rows:
            if r["config"] != c:
                continue
            s = sum(fnum(r.get(k), 0) for k in want)
            if s <= 0:
                continue
            errs.append(max(abs(100.0 * fnum(r.get(k), 0) / s - v) for k, v in want.items()))
            ds.append(100.0 * fnum(r.get("share_d"), 0) / s)
            ss.append(s)
            cpu = fnum(r["cpu"], 0)
            # Distinct observations: perf's samples are all real; a CPU-clock
            # timer's expiries come on the kernel tick, so ours (measured by
            # bench/threads) and gperftools' are at most CONFIG_HZ per CPU s.
            if p == "perf" or r.get("engine") == "perf-events":
                # hrtimer-driven: every sample is an observation of its own
                ops.append(fnum(r["samples"], 0) / cpu if cpu else 0)
            elif p == "profil" and ("profil", hz) in obs:
                ops.append(obs[("profil", hz)])
            else:
                ops.append(min(float(hz), CONFIG_HZ))
        if not errs:
            continue
        n_obs = med(ss) / float(hz) * med(ops)
        bound = 300 * math.sqrt(0.4 * 0.6 / n_obs)
        sd = statistics.stdev(ds) if len(ds) > 1 else 0.0
        out[c] = (med(errs), bound, sd, med(ops))
        md.append("| %s | %d | %d | %.0f | %s | %.2f | %.2f ± %.2f |" % (
            label(c), len(errs), med(ss), med(ops), spread(errs, "%.2f"), bound, statistics.mean(ds), sd))
    return out


# ---------------------------------------------------------------------------
# 8. Costs.
# ---------------------------------------------------------------------------
def costs(raw, md, agree_runs):
    out = {}
    md.append("**Handler, stack walk** (`bench/unwind`, best of 7 trials, this process):\n")
    md.append("```")
    md.append(open(os.path.join(raw, "unwind.txt")).read().strip() if os.path.exists(os.path.join(raw, "unwind.txt")) else "(not run)")
    md.append("```\n")
    md.append("**Handler, histogram lookup** (`bench/lookup`):\n")
    md.append("```")
    md.append(open(os.path.join(raw, "lookup.txt")).read().strip() if os.path.exists(os.path.join(raw, "lookup.txt")) else "(not run)")
    md.append("```\n")
    ss = load(raw, "startstop.txt")
    if ss:
        md.append("**Start/stop latency** of `profil()` with N threads alive (wall µs, median [min–max] of 3):\n")
        md.append("| implementation | threads | start µs | stop µs |")
        md.append("|---|---|---|---|")
        for impl in ("ours", "glibc"):
            for n in ("1", "100", "1000"):
                st = [fnum(r["start_us"]) for r in ss if r.get("impl") == impl and r["threads"] == n]
                sp = [fnum(r["stop_us"]) for r in ss if r.get("impl") == impl and r["threads"] == n]
                if st:
                    md.append("| %s | %s | %s | %s |" % (impl, n, spread(st, "%.0f"), spread(sp, "%.0f")))
                    out[(impl, n)] = (med(st), med(sp))
    fixed = load(raw, "fixed.txt")
    if fixed:
        md.append("\n**Fixed start-up cost**: instructions (user + kernel, counted by `cpuof`) of `work burn 1 1` "
                  "(0.2 ms of work, no sample), median of 3 — what the agent costs once per process:\n")
        md.append("| configuration | instructions | above unprofiled |")
        md.append("|---|---|---|")
        tot = {}
        for c in ("none", "profil1-1000", "profil-1000"):
            v = [fnum(r.get("insn_u"), 0) + fnum(r.get("insn_k"), 0) for r in fixed if r["config"] == c]
            if v:
                tot[c] = med(v)
        for c, v in tot.items():
            md.append("| %s | %.1f M | %s |" % ("unprofiled" if c == "none" else label(c), v / 1e6,
                                               "%.1f M" % ((v - tot["none"]) / 1e6) if "none" in tot and c != "none" else ""))
        if "none" in tot and "profil-1000" in tot:
            out["fixed"] = (tot["profil-1000"] - tot["none"], tot.get("profil1-1000", tot["none"]) - tot["none"])
    idle = load(raw, "idle.txt")
    if idle:
        md.append("\n**Idle cost with 1000 sleeping threads** (CPU of the whole process while they sleep 2 s, % of one CPU, median [min–max] of 3):\n")
        md.append("| configuration | % of a CPU |")
        md.append("|---|---|")
        for c in ("none", "library", "profil-record"):
            v = [100 * fnum(r["idle"]) for r in idle if r["config"] == c and fnum(r.get("idle")) is not None]
            if v:
                out["idle-" + c] = med(v)
                md.append("| %s | %s |" % ({"none": "unprofiled", "library": "LD_PRELOAD=libprofil.so (profil())",
                                              "profil-record": "profil record (agent)"}[c], spread(v, "%.3f")))
    owns = []
    for r in agree_runs:
        try:
            txt = open(r["profil"] + ".stderr").read()
        except OSError:
            continue
        m = re.search(r"own CPU ([0-9.]+) s \(([0-9.]+)% of", txt)
        if m:
            owns.append((r["workload"], float(m.group(1)), float(m.group(2))))
    if owns:
        md.append("\n**`profil record`'s own CPU** (`-v`: `getrusage` of the record process — reading the "
                  "rings every 20 ms, symbolizing with libdwfl, writing the pprof) in the agreement runs:\n")
        md.append("| workload | own CPU s | % of the command's |")
        md.append("|---|---|---|")
        for w, a, b in owns:
            md.append("| %s | %.3f | %.2f |" % (w, a, b))
        out["own"] = owns
    sizes = []
    for r in agree_runs:
        try:
            ot, _, _ = read_ours(r["profil"])
        except OSError:
            continue
        if ot:
            sizes.append((r["workload"], fnum(r["pprof_bytes"]), ot))
    if sizes:
        md.append("\n**Profile file size** (`profil record`'s gzipped pprof, stacks on):\n")
        md.append("| workload | samples | bytes | MB per million samples |")
        md.append("|---|---|---|---|")
        for w, b, s in sizes:
            md.append("| %s | %d | %d | %.2f |" % (w, s, b, b / s))
        out["size"] = med([b / s for _, b, s in sizes])
    return out


# ---------------------------------------------------------------------------
# Plots.
# ---------------------------------------------------------------------------
def gnuplot(script, datafiles, out):
    try:
        for name, text in datafiles.items():
            open(name, "w").write(text)
        r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
        if r.returncode != 0:
            print("analyze: gnuplot: " + r.stderr[-300:], file=sys.stderr)
            return False
        return os.path.exists(out)
    finally:
        for name in datafiles:
            if os.path.exists(name):
                os.remove(name)


def plot_all(plots, outdir, raw):
    made = []
    tmp = os.path.join(raw, "plot")
    os.makedirs(tmp, exist_ok=True)
    if plots.get("totals"):
        threads, keys, ratio = plots["totals"]
        hz_top = max(int(hz) for _, hz in keys)
        series = [(p, hz) for p, hz in keys if int(hz) == hz_top]
        data = {}
        lines = []
        for i, (p, hz) in enumerate(series):
            fn = os.path.join(tmp, "tot%d.dat" % i)
            data[fn] = "".join("%d %f\n" % (t, ratio[(p, hz, t)]) for t in threads
                               if ratio.get((p, hz, t)) is not None)
            lines.append("'%s' using 1:2 with linespoints lw 2 title '%s'" % (fn, label(p + "-" + hz)))
        out = os.path.join(outdir, "totals.png")
        s = ("set terminal png size 800,480 noenhanced; set output '%s'; set logscale x 2; set key outside below;"
             "set xlabel 'busy threads (2 CPUs)'; set ylabel 'samples / (CPU s x rate)'; set yrange [0:1.2];"
             "set grid; set title 'Totals at %d Hz: 1.0 = every CPU second counted';"
             "plot %s\n" % (out, hz_top, ", ".join(lines)))
        if lines and gnuplot(s, data, out):
            made.append("totals.png")
    if plots.get("overhead"):
        res = plots["overhead"]
        workloads = list(dict.fromkeys(w for w, _ in res))
        configs = list(dict.fromkeys(c for _, c in res if c != "__base__"))
        use_insn = any(k[1] != "__base__" and len(v) > 4 and v[4] for k, v in res.items())
        what = ("instructions executed (user + kernel)" if use_insn else "CPU time")
        fn = os.path.join(tmp, "ov.dat")
        text = ""  # no header row: gnuplot would draw it as an empty cluster
        for c in configs:
            text += '"%s"' % label(c).replace(" @ ", "\\n@ ").replace("record ", "").replace(" -e task-clock", "").replace("collect app ", "").replace(" (0.5 ms: its floor)", "*")
            for w in workloads:
                v = res.get((w, c))
                cr = (v[4] if use_insn else v[0]) if v else []
                text += " %f" % ((med(cr) - 1) * 100 if cr else float("nan"))
            text += "\n"
        out = os.path.join(outdir, "overhead.png")
        cols = ", ".join("'%s' using %d:xtic(1) title '%s'" % (fn, i + 2, w) for i, w in enumerate(workloads))
        s = ("set terminal png size 1400,520 noenhanced; set output '%s'; set style data histograms;"
             "set style histogram clustered gap 1; set style fill solid 0.8 border -1; set boxwidth 0.9;"
             "set ylabel 'workload %s, %% over unprofiled (median)'; set grid ytics; set key top left;"
             "set xtics font ',8'; set title 'Overhead: the profiled workload''s own %s';"
             "plot %s\n" % (out, what, what, cols))
        if gnuplot(s, {fn: text}, out):
            made.append("overhead.png")
    if plots.get("agree"):
        fn = os.path.join(tmp, "ag.dat")
        text = "".join("%f %f\n" % (a, b) for a, b in plots["agree"])
        out = os.path.join(outdir, "agreement.png")
        s = ("set terminal png size 560,520 noenhanced; set output '%s'; set xlabel 'profil record, %% of samples';"
             "set ylabel 'perf record -e task-clock, %% of user samples'; set grid; set key top left;"
             "set title 'Top functions, 4 programs';"
             "plot '%s' using 1:2 with points pt 7 title 'function', x with lines title 'equal'\n" % (out, fn))
        if gnuplot(s, {fn: text}, out):
            made.append("agreement.png")
    return made


# ---------------------------------------------------------------------------
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def report(raw, outdir, quick, elapsed, have_gnuplot):
    build = None
    here = os.path.dirname(os.path.abspath(__file__))
    runs = load(raw, "agreement.txt")
    for r in runs:
        build = os.path.dirname(os.path.dirname(r["profil"]))
    build = os.environ.get("BENCH_BUILD", build or "")
    notes = [l.strip() for l in open(os.path.join(raw, "notes.txt"))] if os.path.exists(os.path.join(raw, "notes.txt")) else []
    load1 = sh("cat /proc/loadavg")
    plots = {}
    body = []

    body.append("## 1. Agreement with `perf record -e task-clock`\n")
    body.append("Each program once under `profil record` (1000 Hz, stacks on) and twice under perf at "
                "1000 Hz (`-c 1000000`, the same CPU clock), one run after the other, each about 3 CPU "
                "seconds. Kernel time: perf counts samples taken in the kernel as `[kernel.kallsyms]` rows; "
                "those are dropped and perf's user rows renormalised. Our CPU-clock timers cannot see the "
                "kernel: time spent there is charged to the user pc the thread returns to, so a program's "
                "system calls show up in their libc wrappers (`__GI___libc_write`, `__munmap`), where perf "
                "shows nothing — that is the largest difference below (sort). The second perf run, "
                "`task-clock:u`, drops kernel samples in the kernel itself (on this kernel it does not "
                "charge them to the user pc); the difference between the two perf runs is perf's own "
                "run-to-run scatter. Names: Debian strips its binaries, and perf names an unknown address "
                "per address while profil names it by the function start from the call frame information "
                "(`module+0xSTART`); both sides are keyed by the FDE that holds the address "
                "(`readelf --debug-dump=frames`), so unnamed functions compare one for one. Where debug "
                "info gives inline chains, profil's flat profile names the innermost inlined function and "
                "perf the symbol: ours are taken from `report --lines` and charged to the outermost "
                "function of the chain. The union of both top 10s is compared. Noise: the last column is "
                "3σ of a binomial share at the top function's share over ours' distinct observations "
                "(every sample with the perf-events engine; one per kernel tick, 250 per CPU second, with "
                "CPU-clock timers, which credit each with the expiries it stands for — see 5.).\n")
    ag = agreement(raw, build, body, plots)

    body.append("\n## 2. Overhead\n")
    body.append("Ratios to an unprofiled run of the same repetition (runs interleaved: unprofiled, then every "
                "profiler, then again), median [min–max] over the repetitions. *Workload CPU* is the CPU time "
                "of the workload's processes alone (a `cpuof` wrapper inside the profiler's command line), "
                "*total CPU* adds the profiler's own processes (`cpuof` outside); *own* is their difference: "
                "for `profil record` the record process (reading the rings, symbolizing, writing), for perf "
                "its own process. Workloads: *synthetic* `work burn 1` (one thread, pure arithmetic), "
                "*python* `python3 examples/busy.py` (a thread, a child, libcrypto), *xz* `xz -2 -T1` on "
                "generated base64, *threads* `work burn 16` (16 threads on 2 CPUs). gperftools' timer is "
                "process-wide (`ITIMER_PROF`); gprofng cannot sample faster than every 0.5 ms (2000 Hz), "
                "so its 4000 Hz row is at 2000 Hz.\n")
    ov = overhead(raw, body, plots)

    body.append("\n## 3. Totals: samples ÷ (CPU s × rate)\n")
    body.append("`work spin N`: N threads spin for a fixed wall time, thread i in its own function; CPU s is "
                "the process's own `getrusage`. Each profiler at the rate it was asked for; gprofng reports "
                "CPU seconds, not samples, so its figure is reported CPU ÷ real CPU. gperftools at 1000 Hz "
                "gets at most one sample per kernel tick (250 Hz here) and, with per-thread timers, samples "
                "only threads that call `ProfilerRegisterThread` (ours do).\n")
    tot = totals(raw, body, plots)

    body.append("\n## 4. Short-lived threads\n")
    body.append("`work short %s 2`: that many threads of 2 ms of CPU each, two alive at a time, at 1000 Hz.\n"
                % ("500" if quick == "1" else "5000"))
    sh_ = short(raw, body)

    body.append("\n## 5. Attribution and 7. resolution\n")
    body.append("`work attr`: one thread, four functions with the same loop and 25/25/10/40 of the work, "
                "interleaved in 100 rounds. Largest error: the largest |share − expected| of the four, in "
                "points. Bound: 3σ of a binomial share of 40% over the run's distinct observations: every "
                "sample for perf and for our perf-events engine (hrtimer-driven); for CPU-clock timers "
                "(our thread-cputime-timers engine, gperftools) one per kernel tick at most, 250 per CPU "
                "second here, each credited with the expiries it stands for (for ours the rate measured by "
                "the library's signal count, `bench/threads`). The last column is the run-to-run scatter "
                "of the 40% share.\n")
    at = attribution(raw, body)

    body.append("\n## 8. Costs\n")
    co = costs(raw, body, runs)

    body.append("\n## The library against glibc's profil() and gperftools (issue 2, `bench/threads.sh`)\n")
    body.append("```")
    p = os.path.join(raw, "threads.txt")
    body.append(open(p).read().strip() if os.path.exists(p) else "(not run)")
    body.append("```\n")

    made = plot_all(plots, outdir, raw) if have_gnuplot == "1" else []

    # Goals, met or missed.
    goals = []

    def goal(ok, text):
        goals.append("- **%s** %s" % ("met" if ok else ("MISSED" if ok is False else "not measured"), text))

    if ag:
        worst = max(v[0] for v in ag.values())
        goal(worst <= 3, "issue 10: top-function shares within 3 points of `perf record -e task-clock` "
             "(user samples) — largest difference %.2f points for functions, %.2f for modules (%s); "
             "perf against its own second run: up to %.2f." % (
                 worst, max(v[1] for v in ag.values()),
                 ", ".join("%s %.2f" % (w, v[0]) for w, v in ag.items()),
                 max(v[3] for v in ag.values())))
    else:
        goal(None, "issue 10: agreement with perf.")
    if ov:
        def m(w, c, i=0):
            v = ov.get((w, c))
            return med(v[i]) if v and v[i] else None
        ws = list(dict.fromkeys(w for w, _ in ov))
        d = {w: m(w, "profil-1000") for w in ws}
        d1 = {w: m(w, "profil1-1000") for w in ws}
        own = {w: m(w, "profil-1000", 3) for w in ws}
        # Noise: the spread of the unprofiled runs' CPU (max-min over the
        # median), per workload.  An excess smaller than that is not shown
        # by this run either way.
        noise = {}
        for w in ws:
            b = ov.get((w, "__base__"))
            if b:
                noise[w] = (max(b) - min(b)) / med(b)
        fmt = lambda dd: ", ".join("%s %+.1f%%" % (w, (v - 1) * 100) for w, v in dd.items() if v)
        nz = ", ".join("%s ±%.1f%%" % (w, 50 * v) for w, v in noise.items())

        def ovgoal(limit, text):
            vals = [(w, v) for w, v in d.items() if v]
            worst = max(v for _, v in vals)
            if worst <= 1 + limit:
                goal(True, text)
            elif all(v <= 1 + limit + noise.get(w, 0) / 2 for w, v in vals):
                goals.append("- **not shown** %s — every excess is within the run-to-run noise of the "
                             "unprofiled runs (%s): this loaded machine cannot tell." % (text, nz))
            else:
                goal(False, text + " (noise of the unprofiled runs: %s)" % nz)
        di = {w: m(w, "profil-1000", 4) for w in ws}
        di1 = {w: m(w, "profil1-1000", 4) for w in ws}
        if any(v for v in di.values()):
            fi = lambda dd: ", ".join("%s %+.2f%%" % (w, (v - 1) * 100) for w, v in dd.items() if v)
            wi = max(v for v in di.values() if v)
            goal(wi <= 1.02, "issue 10, by instructions executed (user + kernel, load-independent): the "
                 "command's cost within 2%% at 1000 Hz with stacks: %s." % fi(di))
            goal(wi <= 1.01, "issue 14, by instructions: overhead at the default rate under 1%%: %s." % fi(di))
            goal(wi <= 1.03, "issue 11, by instructions: stacks within 3%% at the default rate: %s "
                 "(`--max-depth 1`: %s)." % (fi(di), fi(di1)))
        if any(v for v in d.values()):
            ovgoal(0.02, "issue 10: the command's CPU within 2%% of unprofiled at 1000 Hz (stacks on): %s." % fmt(d))
            ovgoal(0.01, "issue 14: overhead at the default rate under 1%%: %s." % fmt(d))
            ovgoal(0.03, "issue 11: stacks on by default only if within 3%% at the default rate: %s "
                   "(stacks off, `--max-depth 1`: %s)." % (fmt(d), fmt(d1)))
        if any(v is not None for v in own.values()):
            worst = max(v for v in own.values() if v is not None)
            goal(worst < 1, "issue 10: `profil record`'s own CPU under 1%% of the command's: %s." % ", ".join(
                "%s %.2f%%" % (w, v) for w, v in own.items() if v is not None))
        loweri = []
        for w in ws:
            peers = [m(w, "%s-1000" % p, 4) for p in ("perf", "gperf", "gprofng")]
            peers = [x for x in peers if x]
            if di.get(w) and peers:
                loweri.append((w, di[w], min(peers)))
        if loweri:
            goal(all(a <= b + 0.001 for _, a, b in loweri),
                 "issue 14, by instructions: ours no higher than the lowest peer at 1000 Hz: %s." % ", ".join(
                     "%s ours %+.2f%% / best peer %+.2f%%" % (w, (a - 1) * 100, (b - 1) * 100) for w, a, b in loweri))
        lower = []
        for w in ws:
            peers = [m(w, "%s-1000" % p) for p in ("perf", "gperf", "gprofng")]
            peers = [x for x in peers if x]
            if d.get(w) and peers:
                lower.append((w, d[w], min(peers)))
        if lower:
            goal(all(a <= b + 0.005 for _, a, b in lower),
                 "issue 14: ours no higher than the lowest peer at 1000 Hz (workload CPU, 0.5-point "
                 "tolerance): %s." % ", ".join("%s ours %+.1f%% / best peer %+.1f%%" % (w, (a - 1) * 100, (b - 1) * 100)
                                               for w, a, b in lower))
    if tot:
        ratio = tot[0]
        ours = [(k, v) for k, v in ratio.items() if k[0] == "profil" and v is not None]
        if ours:
            worst = max(ours, key=lambda kv: abs(kv[1] - 1))
            inner = [(k, v) for k, v in plots.get("totals_inner", {}).items() if k[0] == "profil"]
            iw = max(inner, key=lambda kv: abs(kv[1] - 1)) if inner else None
            goal(all(abs(v - 1) <= 0.02 for _, v in ours),
                 "issue 14: totals within 2%% at every thread count, against the process's CPU: worst "
                 "%.3f (%s threads, %s Hz)%s" % (
                     worst[1], worst[0][2], worst[0][1],
                     "; against the spinning threads' own CPU (≤ 8 threads): worst %.3f (%s threads, "
                     "%s Hz). The difference is the CPU the process spends outside the spinning threads "
                     "(%.1f ms median: process start-up, the agent's start-up before it samples, "
                     "exit), which no sample covers; see 3." % (iw[1], iw[0][2], iw[0][1],
                                                                plots.get("gap", {}).get("profil", float("nan")))
                     if iw else "."))
    if "profil" in sh_:
        goal(abs(sh_["profil"] - 1) <= 0.03, "issue 14: short-lived threads within 3%%: %.3f." % sh_["profil"])
    if at:
        goal(all(v[0] <= v[1] for k, v in at.items() if k.startswith("profil")),
             "issue 14: attribution within the binomial bound: %s." % ", ".join(
                 "%s %.2f pts (bound %.2f)" % (k, v[0], v[1]) for k, v in at.items() if k.startswith("profil")))
    if "idle-profil-record" in co or "idle-library" in co:
        worst = max(co.get("idle-profil-record", 0), co.get("idle-library", 0)) - co.get("idle-none", 0)
        goal(worst < 0.5, "issue 14: sweeper idle CPU with 1000 threads under 0.5%% of a CPU: %.3f%% above "
             "unprofiled (library %.3f%%, profil record %.3f%%, unprofiled %.3f%%)." % (
                 worst, co.get("idle-library", float("nan")), co.get("idle-profil-record", float("nan")),
                 co.get("idle-none", float("nan"))))
    goal(elapsed <= 1200 or quick == "1", "issue 14: `make bench` under 20 minutes: %d s%s." % (
        elapsed, " (quick mode)" if quick == "1" else ""))

    head = []
    head.append("# Benchmark results\n")
    head.append("Written by `make bench` (`bench/run.sh`, `bench/analyze.py`)%s on %s.\n" % (
        " with `BENCH_QUICK=1`" if quick == "1" else "", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    head.append("| | |\n|---|---|")
    head.append("| machine | %s, %s CPUs (%s) |" % (platform.machine(), os.cpu_count(),
                                                   sh("sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1")))
    head.append("| kernel | %s, tick (CONFIG_HZ) %d Hz |" % (platform.release(), CONFIG_HZ))
    head.append("| system | %s; glibc %s; gcc %s |" % (sh(". /etc/os-release; echo $PRETTY_NAME"),
                                                      sh("ldd --version | head -1 | awk '{print $NF}'"),
                                                      sh("gcc -dumpversion")))
    head.append("| peers | perf %s; gperftools %s; gprofng %s; python3 %s; xz %s |" % (
        sh("perf --version | awk '{print $3}'"),
        sh("dpkg-query -W -f '${Version}' libgoogle-perftools4 2>/dev/null") or "?",
        sh("gprofng --version 2>/dev/null | head -1 | awk '{print $NF}'"),
        sh("python3 -c 'import platform; print(platform.python_version())'"),
        sh("xz --version | head -1 | awk '{print $NF}'")))
    head.append("| profil | library, command and agent at commit %s (the tree `make bench` ran in) |"
                % sh("git -C %s rev-parse --short HEAD 2>/dev/null" % here))
    head.append("| load | load average at the end: %s; **the machine was shared with other engineers' builds "
                "and tests during the run** — medians of interleaved runs cancel most of it, the spreads show "
                "the rest |" % load1)
    head.append("| duration | %d s |" % elapsed)
    head.append("")
    if notes:
        head.append("Notes from the run:\n")
        head.extend("- " + n for n in notes)
        head.append("")
    head.append("## Goals\n")
    head.extend(goals)
    head.append("")
    head.append("Why the misses (written from the committed full run of 2026-11-23; a rerun may differ — "
                "see the sections below):\n")
    head.extend([
        "- *Agreement*: perf samples the kernel and its kernel rows are dropped; profil's timers cannot "
        "see the kernel and charge its time to the user pc the thread returns to, i.e. system calls to "
        "their libc wrappers (sort: `write`, `read`, `munmap`, `close`). Python and xz differ from perf "
        "about as much as perf differs from its own second run (the workloads move between runs: "
        "python's two threads share the GIL).",
        "- *CPU overhead at 1000 Hz*: at 1000 Hz the agent used its perf-events engine (one hrtimer-driven "
        "event per thread, a signal per sample); its cost shows in CPU time, not in instructions "
        "(+0.6% to +1.8%): time charged for the interrupts and signals on this VM. With CPU-clock timers "
        "(100 and 4000 Hz here) the CPU overhead is within the noise.",
        "- *Overhead under 1% and below the lowest peer, by instructions*: the agent's start-up per process "
        "(more with stacks, and python runs two interpreters) and a user-space signal per sample; perf "
        "samples in the kernel and costs the workload +0.1% to +0.2%.",
        "- *The record process's own CPU*: symbolizing with libdwfl after the run, a fixed cost per module "
        "a sample touches (large for pyenv's libpython, which has full DWARF), set against ~1 s "
        "workloads; plus reading the rings every 20 ms.",
        "- *Totals at 100 Hz*: a few dozen samples per thread on these short runs, and the ~5 ms of "
        "process start-up and exit outside any sampled thread; at 1000 Hz within 0.6%.",
        "- *Short-lived threads*: each 2 ms thread is sampled from the moment its timer or event is armed "
        "in the `pthread_create` wrapper; the arming time of 5,000 threads is not covered (likely; not "
        "separated further).",
        "- *Idle cost with 1,000 threads under `profil record`*: the library with the same threads idles at "
        "the unprofiled level, so the cost is the agent's (its sweeper keeping 1,000 threads' timers or "
        "events and the thread list current); not separated further.",
        ""])
    if made:
        head.append("## Plots\n")
        head.extend("![%s](%s)" % (m_, m_) for m_ in made)
        head.append("")
    elif have_gnuplot != "1":
        head.append("Plots: not drawn, gnuplot is missing (see the notes).\n")

    open(os.path.join(outdir, "results.md"), "w").write("\n".join(head + body) + "\n")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "gperf":
        gperf(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 7 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
