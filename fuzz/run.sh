#!/bin/sh
# run.sh BUILD SECONDS TARGET... - runs each fuzz target for SECONDS from
# its seed corpus (fuzz/corpus/T, read only) plus what earlier runs found
# (BUILD/corpus/T), and prints one line per target.  A crash, a timeout
# (10 s on one input), more than 2 GiB of memory or one allocation over
# 512 MiB is a failure: the input is saved as BUILD/crash-T-* and the
# run exits non-zero after the other targets ran.
#
# ASan must let the library install its SIGSEGV handler (fault recovery
# for buffers, chained to ASan's for faults that are not ours).
# close_fd_mask=2: the readers' one-line errors ("ignoring FILE: ...")
# are the expected outcome of most inputs; libFuzzer and the sanitizers
# keep reporting on a copy of stderr.
set -u
build=$1 seconds=$2
shift 2
fail=0

# one TARGET: runs it and leaves its one-line outcome in BUILD/fuzz-T.result
fuzz_one() {
	t=$1
	mkdir -p "$build/corpus/$t"
	log=$build/fuzz-$t.log
	# fuzz-forms without LeakSanitizer's exit check: once (CI, 60 s
	# beside another target) LSan's own tracer thread died of SIGSEGV at
	# address 0 in that check, after every input had stopped profiling;
	# not reproduced since.  The forms' leaks are checked by LSan in make
	# sanitize and by memcheck in make valgrind-unit.
	leaks=1
	[ "$t" = forms ] && leaks=0
	ASAN_OPTIONS=allow_user_segv_handler=1:detect_leaks=$leaks \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$build/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 \
	    -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=8192 \
	    -close_fd_mask=2 -print_final_stats=1 \
	    -artifact_prefix="$build/crash-$t-" \
	    "$build/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	units=$(ls "$build/corpus/$t" | wc -l)
	if [ $rc -eq 0 ]; then
		echo "fuzz-$t: ${execs:-?} execs in ${seconds} s, $units inputs found, no crash"
	else
		echo "fuzz-$t: FAILED (exit $rc) after ${execs:-?} execs; see $log"
		grep -m 5 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | sed 's/^/    /'
	fi >"$build/fuzz-$t.result"
	return $rc
}

# Targets are single-threaded: they run in batches of as many as there
# are CPUs (FUZZ_JOBS), so five targets take three of CI's minutes on 2.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for t in "$@"; do
	rm -f "$build/fuzz-$t.result"
	fuzz_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait
for t in "$@"; do
	r=$build/fuzz-$t.result
	if [ ! -s "$r" ]; then
		echo "fuzz-$t: FAILED (no outcome written)"
		fail=1
		continue
	fi
	cat "$r"
	grep -q '^fuzz-[a-z]*: FAILED' "$r" && fail=1
done
exit $fail
