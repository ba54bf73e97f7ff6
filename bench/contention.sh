#!/bin/bash
# bench/contention.sh BUILD_DIR [RUNS] - where the CPU time goes on a busy
# machine.  bench/contention/work.c spends equal CPU time in chatty(),
# which reads its CPU clock every ~0.1 ms, and quiet(), every ~2 ms.  With
# 0, 1 and 2 busy loops per CPU beside it, RUNS runs (default 5) of each:
# `profil record` on timers (the default engine), on perf events
# (PROFIL_ENGINE=perf), and `perf record -e task-clock`, at 1000 Hz.
# Prints a Markdown table of chatty()'s share (true 0.5): mean, and the
# lowest and highest run.  bench/perf-engine.md has the committed one.
set -eu
BUILD=$(cd "${1:?usage: bench/contention.sh BUILD_DIR [RUNS]}" && pwd)
RUNS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/contention-bench.XXXXXX)
LOOPS=()
stop_loops() { [ ${#LOOPS[@]} -gt 0 ] && kill "${LOOPS[@]}" 2>/dev/null; LOOPS=(); }
trap 'stop_loops; rm -rf "$TMP"' EXIT
W=$TMP/work
cc -O2 -g -o "$W" "$HERE/contention/work.c"
PERF=$(command -v perf || true)
NCPU=$(nproc)
share() { # report on stdin: chatty's samples / (chatty's + quiet's)
	awk '$6 == "chatty" {c = $1} $6 == "quiet" {q = $1}
	     END {if (c + q) printf "%.3f\n", c / (c + q); else print "nan"}'
}
perf_share() {
	"$PERF" record -q -e task-clock -F 1000 -o "$TMP/p.data" -- "$W" 1 >/dev/null 2>&1
	"$PERF" report -i "$TMP/p.data" --stdio -n --sort sym 2>/dev/null |
	    awk '$NF == "chatty" {c = $2} $NF == "quiet" {q = $2}
	         END {if (c + q) printf "%.3f\n", c / (c + q); else print "nan"}'
}
RAW=$TMP/raw
: >"$RAW"
for per_cpu in 0 1 2; do
	for _ in $(seq $((per_cpu * NCPU))); do
		sh -c 'while :; do :; done' &
		LOOPS+=($!)
	done
	for r in $(seq "$RUNS"); do
		for e in timer perf; do
			PROFIL_ENGINE=$e "$BUILD/profil" record -F 1000 -o "$TMP/p.pprof" "$W" 1 >/dev/null 2>&1
			echo "$per_cpu profil-$e $("$BUILD/profil" report "$TMP/p.pprof" | share)" >>"$RAW"
		done
		[ -n "$PERF" ] && echo "$per_cpu perf-record $(perf_share)" >>"$RAW"
	done
	stop_loops
	echo "bench/contention.sh: $per_cpu busy loop(s) per CPU done" >&2
done
python3 - "$RAW" <<'PY'
import sys, statistics as S
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("| busy loops per CPU | profiler | chatty() share: mean (lowest–highest), true 0.500 |")
print("|---|---|---|")
for k in ('0', '1', '2'):
    for cfg in ('profil-timer', 'profil-perf', 'perf-record'):
        x = [float(r[2]) for r in rows if r[0] == k and r[1] == cfg and r[2] != 'nan']
        if x:
            print("| %s | %s | %.3f (%.3f–%.3f) |" % (k, cfg, S.mean(x), min(x), max(x)))
PY
