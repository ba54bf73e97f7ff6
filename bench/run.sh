#!/bin/bash
# bench/run.sh BUILD_DIR - `make bench`: profil side by side with glibc's
# profil(), gprofng, gperftools and perf; writes bench/results.md and the
# plots bench/*.png (issue 14).
#
# Every measure runs its configurations interleaved (A B C A B C ...), so a
# burst of load from elsewhere on the machine hits all of them alike, and
# reports the median and the spread (min-max) over the repetitions.  Raw
# lines go to $RAW (one key=value line per run); bench/analyze.py turns
# them into the tables.  Environment:
#   BENCH_QUICK=1   a ~3-minute subset (fewer repetitions, sizes, rates)
#   BENCH_OUT       where results.md and the plots go (default bench/)
#   BENCH_RAW       keep the raw files in this directory (default: a
#                   temporary one, removed at the end)
#   BENCH_ONLY      the sections to run (default: agreement overhead
#                   totals attribution costs), for working on one;
#                   "agreement" alone replaces just section 1 (with its
#                   goal) in an existing results.md, saying so at its top
set -eu

BUILD=${1:?usage: bench/run.sh BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${BENCH_OUT:-$HERE}
QUICK=${BENCH_QUICK:-0}
BIN=$BUILD/bench
PROFIL=$BUILD/profil
LIBPROFIL=$BUILD/libprofil.so.1
WORK=$BIN/work
CPUOF=$BIN/cpuof
T0=$(date +%s)

if [ -n "${BENCH_RAW:-}" ]; then
	RAW=$BENCH_RAW
	mkdir -p "$RAW"
else
	RAW=$(mktemp -d /tmp/profil-bench.XXXXXX)
	trap 'rm -rf "$RAW"' EXIT
fi
TMP=$RAW/tmp
mkdir -p "$TMP"
NOTES=$RAW/notes.txt
: >"$NOTES"
note() { echo "$*" >>"$NOTES"; echo "bench: $*" >&2; }
log() { echo "bench [$(($(date +%s) - T0)) s] $*" >&2; }

# ---------------------------------------------------------------------------
# Peers: found, or installed with apt-get when we are root.  A peer that
# is missing is skipped with a note in the results, never silently.
# ---------------------------------------------------------------------------
apt_install()
{
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >"$TMP/apt.log" 2>&1
}

GPERF=""
for d in /usr/lib/x86_64-linux-gnu/libprofiler.so.0 /usr/lib64/libprofiler.so.0 \
         /usr/local/lib/libprofiler.so.0; do
	[ -f "$d" ] && GPERF=$d && break
done
if [ -z "$GPERF" ] && apt_install libgoogle-perftools-dev; then
	GPERF=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
	[ -f "$GPERF" ] || GPERF=""
fi
[ -n "$GPERF" ] || note "gperftools: skipped, libprofiler.so.0 not found and not installable (apt-get install libgoogle-perftools-dev)"

HAVE_GPROFNG=0
if command -v gprofng >/dev/null 2>&1 || apt_install binutils; then
	command -v gprofng >/dev/null 2>&1 && HAVE_GPROFNG=1
fi
[ "$HAVE_GPROFNG" = 1 ] || note "gprofng: skipped, not found (binutils >= 2.39 has it)"

# perf: installed by the distribution's linux-perf; refused by
# perf_event_paranoid > 1 for non-root users, or by seccomp in containers.
HAVE_PERF=0
if command -v perf >/dev/null 2>&1; then
	if perf record -q -e task-clock -c 1000000 -o "$TMP/probe.data" -- "$WORK" burn 1 20 \
	   >/dev/null 2>"$TMP/perf-probe.err"; then
		HAVE_PERF=1
	else
		note "perf: skipped, a trial 'perf record -e task-clock' was refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?)): $(head -c 200 "$TMP/perf-probe.err" | tr '\n' ' ')"
	fi
else
	note "perf: skipped, not installed (Debian: linux-perf)"
fi

HAVE_GNUPLOT=0
if command -v gnuplot >/dev/null 2>&1 || apt_install gnuplot-nox; then
	command -v gnuplot >/dev/null 2>&1 && HAVE_GNUPLOT=1
fi
[ "$HAVE_GNUPLOT" = 1 ] || note "plots: skipped, gnuplot not found and not installable as non-root (apt-get install gnuplot-nox)"

# ---------------------------------------------------------------------------
# Sizes.  The full run is sized for < 20 minutes on 2 loaded cores.
# ---------------------------------------------------------------------------
if [ "$QUICK" = 1 ]; then
	REPS=1 BURN_UNITS=3000 XZ_BYTES=1000000 SORT_LINES=300000 SPIN_S=0.5
	AG_PY_RUNS=1 AG_PYCPU_ROUNDS=1 AG_XZ_BYTES=1000000 AG_SORT_LINES=300000 AG_REC_UNITS=40 AG_REPS=1
	RATES="1000" TOTAL_THREADS="1 4 32" TOTAL_RATES="1000" SHORT_N=500
	SCATTER_RUNS=2 OV_WORKLOADS="synthetic xz shloop pipeline"
else
	# Overhead: every workload at 100, 1000 and 4000 Hz (RATES), 3
	# repetitions: about 4 of the run's 12 minutes.
	REPS=3 BURN_UNITS=4000 XZ_BYTES=2000000 SORT_LINES=600000 SPIN_S=1
	# Agreement: about 9 CPU s per program, so that ours, with about 250
	# distinct observations per CPU second (the kernel tick), resolves a
	# 50% share to +-3 points (3 sigma: 2,250 observations; 3 s gave
	# +-5 to 9); every program 3 times under each profiler, so that
	# perf's scatter against itself is measured too.
	AG_PY_RUNS=9 AG_PYCPU_ROUNDS=15 AG_XZ_BYTES=18000000 AG_SORT_LINES=6000000 AG_REC_UNITS=900 AG_REPS=3
	RATES="100 1000 4000" TOTAL_THREADS="1 2 4 8 32" TOTAL_RATES="100 1000" SHORT_N=5000
	SCATTER_RUNS=10 OV_WORKLOADS="synthetic python xz threads shloop pipeline"
fi

# Inputs: generated, no network (xz's is random, so its cost is too).
gen_inputs()
{
	head -c $(($2 * 3 / 4)) /dev/urandom | base64 >"$TMP/xz$1.in"
	awk -v n="$3" 'BEGIN { srand(1); for (i = 0; i < n; i++)
		printf "%d %s\n", int(rand() * 1e9), "lorem ipsum dolor" }' >"$TMP/sort$1.in"
}
gen_inputs "" "$XZ_BYTES" "$SORT_LINES"
gen_inputs -ag "$AG_XZ_BYTES" "$AG_SORT_LINES"
# The interpreter itself, not a pyenv shim (a shell script) in front of it.
PY=$(python3 -c "import sys; print(sys.executable)")
BUSY=$(cd "$HERE/.." && pwd)/examples/busy.py
PYCPU=$HERE/pycpu.py
RECPROG=$BUILD/test/rec/rec-prog

# workload_cmd NAME: the command line of a workload, one word per line.
workload_cmd()
{
	case $1 in
	synthetic) printf '%s\n' "$WORK" burn 1 "$BURN_UNITS" ;;
	threads) printf '%s\n' "$WORK" burn 16 $((BURN_UNITS / 16)) ;;
	python) printf '%s\n' "$PY" "$BUSY" ;;
	xz) printf '%s\n' xz -2 -T1 -c -k "$TMP/xz.in" ;;
	# A script of many tiny commands: what each process costs to follow.
	shloop) printf '%s\n' sh -c 'for i in $(seq 300); do /bin/true; done' ;;
	# Processes that block and wake at every pipe buffer: what each
	# context switch costs (src/engine/switchwatch.h).
	pipeline) printf '%s\n' sh -c 'yes | head -c 200000000 | wc -c >/dev/null' ;;
	# The agreement runs: longer (see AG_* above).
	ag-python) printf '%s\n' sh -c 'for i in $(seq $2); do "$0" "$1" >/dev/null; done' "$PY" "$BUSY" "$AG_PY_RUNS" ;;
	# One thread, no child: what it does does not depend on scheduling.
	ag-pycpu) printf '%s\n' "$PY" "$PYCPU" "$AG_PYCPU_ROUNDS" ;;
	ag-xz) printf '%s\n' xz -2 -T1 -c -k "$TMP/xz-ag.in" ;;
	ag-sort) printf '%s\n' env LC_ALL=C sort -S 400M --parallel=1 "$TMP/sort-ag.in" -o "$TMP/sort.out" ;;
	ag-rec-threads) printf '%s\n' "$RECPROG" threads "$AG_REC_UNITS" ;;
	esac
}

# run_profiled CONFIG OUTPREFIX CMD...: runs CMD under the profiler CONFIG,
# e.g. profil-1000, profil1-1000 (--max-depth 1), perf-1000, gperf-1000,
# gperfpt-1000 (per-thread timers), gprofng-1000, none.  Two cpuof's: the
# outer measures everything, the inner (inside the profiler's command) the
# workload alone.  Leaves OUTPREFIX.outer, .inner, .stdout, .stderr and
# the profiler's file.
run_profiled()
{
	cfg=$1 pre=$2
	shift 2
	prof=${cfg%-*} hz=${cfg##*-}
	inner=("$CPUOF" "$pre.inner")
	case $prof in
	none) cmd=("${inner[@]}" "$@") ;;
	profil) cmd=("$PROFIL" record -v -F "$hz" -o "$pre.pprof" -- "${inner[@]}" "$@") ;;
	profil1) cmd=("$PROFIL" record -v -F "$hz" --max-depth 1 -o "$pre.pprof" -- "${inner[@]}" "$@") ;;
	perf) cmd=(perf record -q -e task-clock -c $((1000000000 / hz)) -o "$pre.data" -- "${inner[@]}" "$@") ;;
	# With frame-pointer call chains: for a sample taken in the kernel the
	# chain goes on, after PERF_CONTEXT_USER, with the user-mode ip at
	# kernel entry, the pc our timers and events charge (see agreement).
	perfg) cmd=(perf record -q -e task-clock -g -c $((1000000000 / hz)) -o "$pre.data" -- "${inner[@]}" "$@") ;;
	gperf) cmd=("${inner[@]}" env LD_PRELOAD="$GPERF" CPUPROFILE="$pre.gprof" CPUPROFILE_FREQUENCY="$hz" "$@") ;;
	gperfpt) cmd=("${inner[@]}" env LD_PRELOAD="$GPERF" CPUPROFILE="$pre.gprof" CPUPROFILE_FREQUENCY="$hz" CPUPROFILE_PER_THREAD_TIMERS=1 "$@") ;;
	gprofng)
		# gprofng takes an interval in ms; its floor on Linux is 0.5 ms.
		ms=$(awk -v hz="$hz" 'BEGIN { ms = 1000 / hz; if (ms < 0.5) ms = 0.5; print ms }')
		rm -rf "$pre.er"
		cmd=(gprofng collect app -o "$pre.er" -p "$ms" "${inner[@]}" "$@") ;;
	*) echo "run_profiled: unknown config $cfg" >&2; return 1 ;;
	esac
	"$CPUOF" "$pre.outer" "${cmd[@]}" >"$pre.stdout" 2>"$pre.stderr" </dev/null || {
		echo "bench: $cfg failed on $*: $(tail -3 "$pre.stderr" | tr '\n' ' ')" >&2
		return 1
	}
}

# peer_available CONFIG: 0 when the profiler of CONFIG can run here.
peer_available()
{
	case ${1%-*} in
	perf|perfg) [ "$HAVE_PERF" = 1 ] ;;
	gperf|gperfpt) [ -n "$GPERF" ] ;;
	gprofng) [ "$HAVE_GPROFNG" = 1 ] ;;
	*) return 0 ;;
	esac
}

# emit FILE key=value...: appends one raw line.
emit() { f=$1; shift; echo "$*" >>"$RAW/$f"; }
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | head -1; }

# samples_of CONFIG PREFIX: the profiler's sample count (weighted, as it
# reports CPU time) and, for fairness, "name count" lines in PREFIX.funcs.
samples_of()
{
	cfg=$1 pre=$2
	case ${cfg%-*} in
	profil|profil1)
		"$PROFIL" report --format csv "$pre.pprof" >"$pre.csv" 2>/dev/null || { echo 0; return; }
		awk -F, 'NR > 1 { print $6, $1 }' "$pre.csv" >"$pre.funcs"
		awk -F, 'NR > 1 { s += $1 } END { print s + 0 }' "$pre.csv" ;;
	perf)
		perf report -i "$pre.data" --stdio -n --sort sym 2>/dev/null |
			awk '/^#/ || NF < 4 { next } { print $NF, $2 }' >"$pre.funcs"
		perf script -i "$pre.data" -F ip 2>/dev/null | wc -l ;;
	gperf|gperfpt)
		python3 "$HERE/analyze.py" gperf "$pre.gprof" "$WORK" >"$pre.funcs" 2>/dev/null || true
		awk '$1 == "TOTAL" { print $2 }' "$pre.funcs" | grep . || echo 0 ;;
	gprofng)
		# gprofng reports CPU seconds, not samples: converted at its rate.
		gprofng display text -functions "$pre.er" 2>/dev/null |
			awk '$NF != "<Total>" && $1 ~ /^[0-9.]+$/ { print $NF, $1 }' >"$pre.funcs"
		gprofng display text -functions "$pre.er" 2>/dev/null |
			awk -v hz="${cfg##*-}" '$NF == "<Total>" { printf "%d\n", $1 * (hz > 2000 ? 2000 : hz) + 0.5; f = 1 }
			                       END { if (!f) print 0 }' ;;
	esac
}

# ---------------------------------------------------------------------------
# 1. Agreement with perf on real programs.
# ---------------------------------------------------------------------------
bench_agreement()
{
	[ "$HAVE_PERF" = 1 ] || { note "agreement: skipped, perf cannot run here"; return 0; }
	# AG_REPS rounds, each running every program under profil and then
	# under perf, so that a change in the machine's load hits both alike.
	# perf with call chains (perfg): analyze.py charges each sample taken
	# in the kernel to the first user-space frame of its chain, the pc the
	# thread returns to, which is where profil's samples land; and also
	# shows perf's user samples alone, renormalised (kernel dropped).
	# perf script's output, with the mmap events (to turn an unnamed
	# address into the module's own address), is what analyze.py reads.
	for rep in $(seq 1 "$AG_REPS"); do
		for w in python pycpu xz sort rec-threads; do
			log "agreement: rep $rep/$AG_REPS, $w"
			mapfile -t c < <(workload_cmd "ag-$w")
			p=$RAW/agree-$w-$rep
			run_profiled profil-1000 "$p-profil" "${c[@]}" || continue
			run_profiled perfg-1000 "$p-perf" "${c[@]}" || continue
			"$PROFIL" report --format csv --top 1000000 "$p-profil.pprof" >"$p-profil.csv" 2>/dev/null
			"$PROFIL" report --format csv --lines "$p-profil.pprof" >"$p-profil.lines.csv" 2>/dev/null
			perf script -i "$p-perf.data" -F pid,tid,ip,sym,dso --show-mmap-events --show-task-events \
				>"$p-perf.script" 2>"$p-perf.script.err"
			emit agreement.txt "workload=$w rep=$rep profil=$p-profil perf=$p-perf" \
				"pprof_bytes=$(stat -c %s "$p-profil.pprof")" \
				"profil_cpu=$(kv "$p-profil.inner" cpu) profil_sys=$(kv "$p-profil.inner" sys)" \
				"perf_cpu=$(kv "$p-perf.inner" cpu) perf_sys=$(kv "$p-perf.inner" sys)"
		done
	done
}

# ---------------------------------------------------------------------------
# 2. Overhead: wall and CPU with and without profiling, interleaved.
# ---------------------------------------------------------------------------
bench_overhead()
{
	# Instructions (user and kernel) of the workload, counted by cpuof:
	# unlike CPU time they do not depend on what else the machine runs,
	# so they show a profiler's cost on a loaded machine.
	export CPUOF_INSN=$HAVE_PERF
	for rep in $(seq 1 "$REPS"); do
		for w in $OV_WORKLOADS; do
			log "overhead: rep $rep/$REPS, $w"
			mapfile -t c < <(workload_cmd "$w")
			rates=$RATES
			cfgs=""
			for hz in $rates; do
				for p in profil profil1 perf gperf gprofng; do
					peer_available "$p-$hz" && cfgs="$cfgs $p-$hz"
				done
			done
			for cfg in none $cfgs; do
				pre=$TMP/ov
				rm -rf "$pre".*
				run_profiled "$cfg" "$pre" "${c[@]}" || {
					emit overhead.txt "workload=$w config=$cfg rep=$rep failed=1"
					continue
				}
				own="" own_run=""
				case $cfg in profil*)
					own=$(sed -n 's/.*own CPU \([0-9.]*\) s.*/\1/p' "$pre.stderr")
					own_run=$(sed -n 's/.*own CPU.* \([0-9.]*\) s while it ran.*/\1/p' "$pre.stderr") ;;
				esac
				insn=""
				[ -n "$(kv "$pre.inner" insn_u)" ] &&
					insn="insn_u=$(kv "$pre.inner" insn_u) insn_k=$(kv "$pre.inner" insn_k)"
				emit overhead.txt "workload=$w config=$cfg rep=$rep" \
					"wall=$(kv "$pre.outer" wall) cpu=$(kv "$pre.outer" cpu)" \
					"inner_cpu=$(kv "$pre.inner" cpu) inner_wall=$(kv "$pre.inner" wall) own=${own:-}" \
					"own_run=${own_run:-} $insn"
			done
		done
	done
	CPUOF_INSN=0
}

# ---------------------------------------------------------------------------
# 3. Totals and fairness: N threads spinning; 4. short-lived threads.
# ---------------------------------------------------------------------------
TOTAL_PEERS="profil perf gperf gperfpt gprofng"
bench_totals()
{
	for n in $TOTAL_THREADS; do
		for hz in $TOTAL_RATES; do
			log "totals: $n threads at $hz Hz"
			for p in $TOTAL_PEERS; do
				cfg=$p-$hz
				peer_available "$cfg" || continue
				pre=$TMP/tot
				rm -rf "$pre".*
				if ! run_profiled "$cfg" "$pre" "$WORK" spin "$n" "$SPIN_S"; then
					emit totals.txt "threads=$n hz=$hz peer=$p failed=1"
					continue
				fi
				s=$(samples_of "$cfg" "$pre")
				tc=$(tr ' ' '\n' <"$pre.stdout" | grep '^tcpu' | tr '\n' ' ')
				fn=$(awk '$1 ~ /^spin_[0-7]$/ { printf "%s=%s ", $1, $2 }' "$pre.funcs" 2>/dev/null)
				emit totals.txt "threads=$n hz=$hz peer=$p samples=$s cpu=$(kv "$pre.stdout" cpu) $tc $fn"
			done
		done
	done
	log "short-lived threads: $SHORT_N x 2 ms"
	for p in $TOTAL_PEERS; do
		cfg=$p-1000
		peer_available "$cfg" || continue
		pre=$TMP/short
		rm -rf "$pre".*
		if ! run_profiled "$cfg" "$pre" "$WORK" short "$SHORT_N" 2; then
			emit short.txt "peer=$p failed=1"
			continue
		fi
		emit short.txt "peer=$p hz=1000 threads=$SHORT_N samples=$(samples_of "$cfg" "$pre") cpu=$(kv "$pre.stdout" cpu)"
	done
}

# ---------------------------------------------------------------------------
# 5. Attribution and 7. resolution: known shares 25/25/10/40, 10 runs at
# 1000 and 4000 Hz; real observations per CPU second.
# ---------------------------------------------------------------------------
bench_attribution()
{
	for run in $(seq 1 "$SCATTER_RUNS"); do
		log "attribution: run $run/$SCATTER_RUNS"
		for cfg in profil-1000 profil-4000 perf-1000 perf-4000; do
			peer_available "$cfg" || continue
			pre=$TMP/attr
			rm -rf "$pre".*
			run_profiled "$cfg" "$pre" "$WORK" attr $((BURN_UNITS / 2)) || continue
			s=$(samples_of "$cfg" "$pre")
			fn=$(awk '$1 ~ /^share_[a-d]$/ { printf "%s=%s ", $1, $2 }' "$pre.funcs" 2>/dev/null)
			eng=$(sed -n 's/.*engine \([a-z-]*\),.*/\1/p' "$pre.stderr" | head -1)
			emit attribution.txt "config=$cfg run=$run samples=$s cpu=$(kv "$pre.stdout" cpu) engine=${eng:-} $fn"
		done
	done
	# Real observations (signals handled) per CPU second: the library's
	# own count, through bench/threads (our engine credits a signal with
	# every expiry it stands for, so samples can exceed observations).
	for hz in 1000 4000; do
		line=$(PROFIL_HZ=$hz LD_PRELOAD="$LIBPROFIL" "$BIN/threads" 1 1 2>/dev/null || true)
		emit resolution.txt "peer=profil hz=$hz $line"
	done
}

# ---------------------------------------------------------------------------
# 8. Costs: handler, start/stop, sweeper, file size; and issue 2's library
# table (glibc's profil() against ours, the library forms).
# ---------------------------------------------------------------------------
bench_costs()
{
	log "costs"
	"$BIN/unwind" >"$RAW/unwind.txt" 2>&1 || note "costs: bench/unwind failed: $(tail -1 "$RAW/unwind.txt")"
	"$BIN/lookup" >"$RAW/lookup.txt" 2>&1 || note "costs: bench/lookup failed"
	for rep in 1 2 3; do
		for n in 1 100 1000; do
			emit startstop.txt "threads=$n $(LD_PRELOAD="$LIBPROFIL" "$WORK" startstop "$n")"
			emit startstop.txt "threads=$n $("$WORK" startstop "$n")"
		done
	done
	# Fixed cost: instructions (CPU time where they are not counted) of
	# a run too short to be sampled (1 unit, ~0.2 ms), under profil
	# record with and without stacks: what the agent spends starting
	# (with stacks: building the unwind tables).
	if [ "$HAVE_PERF" = 1 ]; then
		export CPUOF_INSN=1
		for rep in 1 2 3; do
			for cfg in none profil-1000 profil1-1000; do
				rm -f "$TMP/fixed".*
				run_profiled "$cfg" "$TMP/fixed" "$WORK" burn 1 1 || continue
				emit fixed.txt "config=$cfg insn_u=$(kv "$TMP/fixed.inner" insn_u) insn_k=$(kv "$TMP/fixed.inner" insn_k)" \
					"cpu=$(kv "$TMP/fixed.inner" cpu)"
			done
		done
		CPUOF_INSN=0
	fi
	# The record process's own CPU: a fixed part per run (the agent's
	# set-up, symbolizing each module a sample touches) and a part per CPU
	# second of the command (reading the rings); two lengths of the same
	# workload, interleaved, separate them.
	for rep in 1 2 3; do
		for units in "$BURN_UNITS" $((BURN_UNITS * 8)); do
			"$PROFIL" record -v -o "$TMP/rc.pprof" -- "$WORK" burn 1 "$units" \
				>/dev/null 2>"$TMP/rc.err" || continue
			emit recordcost.txt "units=$units $(sed -n 's/.*own CPU \([0-9.]*\) s (\([0-9.]*\)% of.*/own=\1 pct=\2/p' "$TMP/rc.err")"
		done
	done
	for rep in 1 2 3; do
		emit idle.txt "config=none $("$WORK" idle 1000 2)"
		emit idle.txt "config=library $(LD_PRELOAD="$LIBPROFIL" "$WORK" idle 1000 2)"
		"$PROFIL" record -o "$TMP/idle.pprof" -- "$WORK" idle 1000 2 >"$TMP/idle.out" 2>/dev/null
		emit idle.txt "config=profil-record $(cat "$TMP/idle.out")"
	done
	log "library totals (bench/threads, issue 2)"
	BENCH_SECONDS=1 sh "$HERE/threads.sh" "$BUILD" >"$RAW/threads.txt" 2>&1 ||
		note "threads: bench/threads.sh reported a failure (see its table)"
}

log "peers: perf=$HAVE_PERF gperftools=${GPERF:-none} gprofng=$HAVE_GPROFNG gnuplot=$HAVE_GNUPLOT quick=$QUICK"
for section in ${BENCH_ONLY:-agreement overhead totals attribution costs}; do
	"bench_$section"
done
ELAPSED=$(($(date +%s) - T0))
log "analysing"
BENCH_BUILD=$BUILD python3 "$HERE/analyze.py" report "$RAW" "$OUT" "$QUICK" "$ELAPSED" "$HAVE_GNUPLOT"
log "done: $OUT/results.md"
