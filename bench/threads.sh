#!/bin/sh
# bench/threads.sh BUILD_DIR - issue 2's table: the library's profil()
# against glibc's and gperftools' at 1-8 threads, and the lookup cost.
# bench/run.sh (`make bench`) runs it and quotes it in results.md.
# Environment:
#   BENCH_SECONDS   seconds of spinning per threads run (default 2)
#   GPERFTOOLS_LIB  path of gperftools' libprofiler.so (default: searched)
set -u

BUILD=${1:?usage: sh bench/threads.sh BUILD_DIR}
BIN=$BUILD/bench
status=0

# ---------------------------------------------------------------------------
# threads (issue 2): samples per CPU second of glibc's profil(), ours and,
# when installed, gperftools' CPU profiler, at 1, 2, 4 and 8 threads.
#
# One binary, four runs per thread count: plain (glibc's profil), with our
# library preloaded (its profil() and pthread_create come first) at its
# default rate and at glibc's 100 Hz, and with gperftools preloaded (the program then calls ProfilerStart instead of
# profil, because both would claim SIGPROF and ITIMER_PROF).
# ---------------------------------------------------------------------------

# gperftools' libprofiler.so, or nothing.  ldconfig knows where the
# distribution put it; the fixed paths cover a missing ldconfig.
threads_find_gperftools()
{
	if [ -n "${GPERFTOOLS_LIB:-}" ]; then
		[ -f "$GPERFTOOLS_LIB" ] && echo "$GPERFTOOLS_LIB"
		return 0
	fi
	for d in $( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) |
	           sed -n 's/.*libprofiler\.so\.0 .*=> //p') \
	         /usr/lib/x86_64-linux-gnu/libprofiler.so.0 /usr/lib64/libprofiler.so.0 \
	         /usr/local/lib/libprofiler.so.0 /usr/lib/libprofiler.so.0; do
		if [ -f "$d" ]; then
			echo "$d"
			return 0
		fi
	done
}

# threads_one IMPL N: run once, append the result line (or a failure) to
# $threads_out.  stderr is shown only when the run fails: gperftools
# chats there on every exit.
threads_one()
{
	impl=$1 n=$2
	err=$threads_tmp/err
	case $impl in
	glibc) line=$(env -u LD_PRELOAD "$BIN/threads" "$n" "$threads_secs" 2>"$err") ;;
	ours) line=$(LD_PRELOAD="$threads_ours" "$BIN/threads" "$n" "$threads_secs" 2>"$err") ;;
	ours100)
		line=$(PROFIL_HZ=100 LD_PRELOAD="$threads_ours" "$BIN/threads" "$n" \
		       "$threads_secs" 2>"$err")
		# Same library at glibc's rate: reported under a name of its own.
		line=$(echo "$line" | sed 's/^impl=ours /impl=ours100 /') ;;
	gperftools) line=$(CPUPROFILE_FREQUENCY=1000 LD_PRELOAD="$threads_gperf" \
	                   "$BIN/threads" "$n" "$threads_secs" 2>"$err") ;;
	esac
	rc=$?
	# The preload must have given us the implementation we asked for.
	case "$rc:$line" in
	"0:impl=$impl "*) echo "$line" >>"$threads_out" ;;
	*)
		echo "threads: $impl with $n threads failed (exit $rc, wanted impl=$impl): $line" >&2
		cat "$err" >&2
		echo "impl=$impl threads=$n failed=1" >>"$threads_out"
		status=1
		;;
	esac
}

bench_threads()
{
	threads_secs=${BENCH_SECONDS:-2}
	# Absolute: LD_PRELOAD must not depend on the directory we run in.
	# The soname link is the fallback: `make bench` builds the versioned
	# library and its soname link, not always the libprofil.so link.
	threads_lib=libprofil.so
	[ -f "$BUILD/$threads_lib" ] || threads_lib=libprofil.so.1
	threads_ours=$(cd "$BUILD" 2>/dev/null && pwd)/$threads_lib
	threads_tmp=$(mktemp -d)
	threads_out=$threads_tmp/out
	: >"$threads_out"

	# ours100: our library at glibc's 100 Hz, so that what the rate buys
	# and what the mechanism buys can be told apart.
	impls="glibc ours ours100"
	threads_gperf=$(threads_find_gperftools)
	if [ -n "$threads_gperf" ]; then
		impls="$impls gperftools"
	else
		threads_gperf_note="gperftools: skipped, libprofiler.so.0 not found (Debian: apt-get install libgoogle-perftools-dev, or set GPERFTOOLS_LIB)"
	fi
	if [ ! -x "$BIN/threads" ] || [ ! -f "$BUILD/$threads_lib" ]; then
		echo "threads: $BIN/threads or $BUILD/$threads_lib missing; run 'make BUILD=$BUILD bench'" >&2
		rm -rf "$threads_tmp"
		status=1
		return
	fi

	echo "== threads: samples per CPU second, $threads_secs s of spinning per run =="
	echo "   $(nproc 2>/dev/null || echo '?') CPUs online; threads spin in distinct functions, histogram over the program text"
	[ -n "${threads_gperf_note:-}" ] && echo "   $threads_gperf_note"
	for n in 1 2 4 8; do
		for impl in $impls; do
			threads_one "$impl" "$n"
		done
	done

	awk -v impls="$impls" '
	function v(line, key,   i, kv) {
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == key)
				return kv[2]
		}
		return ""
	}
	{
		impl = v($0, "impl"); n = v($0, "threads")
		key = impl SUBSEP n
		failed[key] = v($0, "failed") != ""
		hz[impl] = hz[impl] != "" ? hz[impl] : v($0, "hz")
		cpu[key] = v($0, "cpu"); smp[key] = v($0, "samples")
		pcs[key] = v($0, "per_cpu_s"); ratio[key] = v($0, "ratio")
		sig[key] = v($0, "sig_per_cpu_s"); spread[key] = v($0, "spread")
	}
	END {
		ni = split(impls, im, " ")
		split("1 2 4 8", ns, " ")
		label["glibc"] = "glibc profil()"
		label["ours"] = "ours (libprofil)"
		label["ours100"] = "ours, PROFIL_HZ=100"
		label["gperftools"] = "gperftools"

		printf "\n%-7s %-19s %5s %7s %8s %10s %6s %10s %6s\n", "threads", "implementation",
		    "Hz", "CPU s", "samples", "smp/CPU s", "ratio", "sig/CPU s", "spread"
		for (j = 1; j <= 4; j++)
			for (i = 1; i <= ni; i++) {
				key = im[i] SUBSEP ns[j]
				if (failed[key]) {
					printf "%-7s %-19s  (failed)\n", ns[j], label[im[i]]
					continue
				}
				printf "%-7s %-19s %5s %7.2f %8d %10.1f %6.3f %10.1f %6s\n", ns[j],
				    label[im[i]], hz[im[i]], cpu[key], smp[key], pcs[key], ratio[key],
				    sig[key], spread[key]
			}

		printf "\nsamples per CPU second (ratio to the nominal rate)\n"
		printf "%-29s", ""
		for (j = 1; j <= 4; j++)
			printf " %15s", ns[j] " thread" (ns[j] > 1 ? "s" : "")
		printf "\n"
		for (i = 1; i <= ni; i++) {
			printf "%-29s", label[im[i]] " @ " hz[im[i]] " Hz"
			for (j = 1; j <= 4; j++) {
				key = im[i] SUBSEP ns[j]
				if (failed[key])
					printf " %15s", "failed"
				else
					printf " %7.1f (%5.3f)", pcs[key], ratio[key]
			}
			printf "\n"
		}

		line = "summary: ours/glibc samples per CPU s:"
		acc = "; accuracy (ratio) ours/glibc:"
		for (j = 1; j <= 4; j++) {
			a = "ours" SUBSEP ns[j]; b = "glibc" SUBSEP ns[j]
			if (failed[a] || failed[b] || pcs[b] + 0 == 0 || ratio[b] + 0 == 0) {
				line = line " " ns[j] "t n/a"
				acc = acc " " ns[j] "t n/a"
				continue
			}
			line = line sprintf(" %st %.1fx", ns[j], pcs[a] / pcs[b])
			acc = acc sprintf(" %st %.2f", ns[j], ratio[a] / ratio[b])
		}
		print "\n" line acc
		if (hz["ours100"] != "") {
			line = "summary: ours at 100 Hz / glibc samples per CPU s:"
			for (j = 1; j <= 4; j++) {
				a = "ours100" SUBSEP ns[j]; b = "glibc" SUBSEP ns[j]
				if (failed[a] || failed[b] || pcs[b] + 0 == 0)
					line = line " " ns[j] "t n/a"
				else
					line = line sprintf(" %st %.2f", ns[j], pcs[a] / pcs[b])
			}
			print line
		}
		print ""
	}' "$threads_out"
	rm -rf "$threads_tmp"
	echo "   ratio = samples / (CPU s x Hz), 1 = every CPU second sampled at the stated rate"
	echo "   sig/CPU s = signals handled per CPU second (ours credits a signal with every timer"
	echo "   expiry it stands for, so it can be below smp/CPU s); spread = max/min per-thread"
	echo "   samples per CPU second, 1 = every thread sampled in proportion to its CPU time"
}

# ---------------------------------------------------------------------------
# lookup (issue 4): ns per sample in the handler's per-sample path with 1,
# 10 and 1,000 ranges.  bench/lookup.c compiles src/engine/sample.c itself; see
# its header for what is and is not timed.
# ---------------------------------------------------------------------------
bench_lookup()
{
	echo "== lookup"
	if ! "$BIN/lookup"; then
		echo "lookup: FAILED" >&2
		status=1
	fi
}

# ---------------------------------------------------------------------------
# unwind (issue 11): the handler's stack walk per sample at depth 10 and
# 100, and the tables' size and build time (bench/unwind.c compiles
# src/unwind*.c itself; docs/unwinding.md has the figures).
# ---------------------------------------------------------------------------
bench_unwind()
{
	echo "== unwind"
	if ! "$BIN/unwind"; then
		echo "unwind: FAILED" >&2
		status=1
	fi
}

bench_threads
# lookup and unwind: run by bench/run.sh itself, which parses them.

exit $status
