#!/bin/bash
# bench/perf-engine.sh BUILD_DIR [RUNS] - issue 13's figures: libprofil's
# perf-events engine against its timer engine and `perf record -e
# task-clock -F HZ`, at 1000, 4000 and 10000 Hz, on bench/perf-engine/
# work.c (a quarter of the CPU in hot()).  Per configuration, RUNS runs
# (default 10), interleaved so load from elsewhere hits all alike:
#   real/s    real (unweighted) samples per CPU second of the workload
#   share     hot()'s share: mean and standard deviation over the runs
#   overhead  the workload's own CPU seconds / those of the unprofiled run
#             (medians); for perf record the perf tool's CPU is added too
# Prints a Markdown table (bench/perf-engine.md has the committed one).
set -eu
BUILD=$(cd "${1:?usage: bench/perf-engine.sh BUILD_DIR [RUNS]}" && pwd)
RUNS=${2:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
# (not /tmp/perf-*: perf report takes such paths for JIT symbol maps)
TMP=$(mktemp -d /tmp/pe-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
W=$TMP/work
cc -std=gnu11 -D_GNU_SOURCE -I"$HERE/../include" -O2 -g -rdynamic -o "$W" \
    "$HERE/perf-engine/work.c" -L"$BUILD" -Wl,-rpath,"$BUILD" -lprofil -ldl
PERF=$(command -v perf || true)
RAW=$TMP/raw
: >"$RAW"
kv() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# perf record: samples of hot and in all, CPU of the workload and of perf.
perf_run() {
	local hz=$1 out
	out=$( { /usr/bin/time -f "tcpu=%U+%S" "$PERF" record -q -e task-clock -F "$hz" \
	    -o "$TMP/p.data" -- "$W" none; } 2>&1 >"$TMP/w.out")
	local cpu tcpu
	cpu=$(kv cpu <"$TMP/w.out")
	tcpu=$(echo "$out" | kv tcpu | bc -l)
	"$PERF" report -i "$TMP/p.data" --stdio -n --sort sym 2>/dev/null >"$TMP/rep"
	local total hot
	total=$("$PERF" script -i "$TMP/p.data" -F ip 2>/dev/null | wc -l)
	hot=$(awk '$NF == "hot" {print $2}' "$TMP/rep" | head -1)
	echo "cfg=perf-record hz=$hz cpu=$cpu total=$tcpu signals=$total hot=$(echo "${hot:-0}/$total" | bc -l)"
}

for r in $(seq "$RUNS"); do
	for hz in 1000 4000 10000; do
		echo "cfg=none hz=$hz $("$W" none)" >>"$RAW"
		echo "cfg=perf-events hz=$hz $(PROFIL_ENGINE=perf "$W" profil $hz)" >>"$RAW"
		echo "cfg=timers hz=$hz $(PROFIL_ENGINE=timer "$W" profil $hz)" >>"$RAW"
		[ -n "$PERF" ] && perf_run $hz >>"$RAW"
	done
	echo "bench/perf-engine.sh: run $r of $RUNS" >&2
done
[ -n "${PERF_ENGINE_RAW:-}" ] && cp "$RAW" "$PERF_ENGINE_RAW"
python3 - "$RAW" <<'PY'
import sys, statistics as S
rows = [dict(kv.split('=', 1) for kv in l.split()) for l in open(sys.argv[1]) if l.strip()]
def med(x): return S.median(x) if x else float('nan')
print("| Hz | engine | real samples / CPU s | hot() share (mean ± sd, true 0.25) | overhead (CPU, median) |")
print("|---|---|---|---|---|")
for hz in ('1000', '4000', '10000'):
    base = med([float(r['cpu']) for r in rows if r['cfg'] == 'none' and r['hz'] == hz])
    for cfg in ('perf-events', 'timers', 'perf-record'):
        rs = [r for r in rows if r['cfg'] == cfg and r['hz'] == hz]
        if not rs: continue
        real = med([float(r['signals']) / float(r['cpu']) for r in rs])
        sh = [float(r['hot']) for r in rs]
        sd = S.stdev(sh) if len(sh) > 1 else 0.0
        ov = med([float(r['cpu']) for r in rs]) / base
        extra = ''
        if cfg == 'perf-record':
            extra = ' (with perf itself: %.3f)' % (med([float(r['total']) for r in rs]) / base)
        print("| %s | %s | %.0f | %.4f ± %.4f | %.3f%s |" % (hz, cfg, real, S.mean(sh), sd, ov, extra))
PY
