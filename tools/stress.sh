#!/bin/sh
# stress.sh BUILD SECONDS - `make stress`: for SECONDS, at the same time,
#   - the library's stress mix (test-safety-stress.c, safety_stress_mix:
#     callers that start, stop and reconfigure from several threads,
#     thread storms, fork/vfork/exec storms, dlopen/dlclose storms, buffers
#     unmapped while published, signals sent to the process);
#   - `profil record` of short-lived processes, in a loop: a shell that
#     runs /bin/true 200 times, a command that exits 3, one killed by
#     SIGTERM; each must pass its status through and leave a profile that
#     `profil report` reads back.
# Prints the operations done and the anomalies; exits non-zero unless
# there were none.
set -u
build=$1 seconds=$2
profil=$build/profil
tmp=$(mktemp -d /tmp/profil-stress.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# a hang is an anomaly, not a stuck CI: killed two minutes after its time
PROFIL_STRESS=$seconds timeout -k 10 $((seconds + 120)) \
	"$build/test/run-tests" --one safety_stress_mix >"$tmp/mix.out" 2>&1 &
mix=$!

end=$(( $(date +%s) + seconds ))
runs=0 anomalies=0
anomaly() {
	echo "anomaly: $*" >&2
	anomalies=$((anomalies + 1))
}
while [ "$(date +%s)" -lt "$end" ]; do
	# the status is taken right after profil record: nothing may run between
	case $((runs % 3)) in
	0) want=0
	   "$profil" record -o "$tmp/p.pprof" sh -c 'for i in $(seq 200); do /bin/true; done' \
	       2>"$tmp/err" ;;
	1) want=3
	   "$profil" record -o "$tmp/p.pprof" sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3' \
	       2>"$tmp/err" ;;
	*) want=143
	   "$profil" record -o "$tmp/p.pprof" sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; kill -TERM $$' \
	       2>"$tmp/err" ;;
	esac
	rc=$?
	runs=$((runs + 1))
	[ $rc -eq $want ] || anomaly "record run $runs: status $rc, want $want: $(tail -1 "$tmp/err")"
	grep -q ' 0 lost ->' "$tmp/err" || anomaly "record run $runs: $(tail -1 "$tmp/err")"
	"$profil" report "$tmp/p.pprof" >"$tmp/report" 2>"$tmp/rerr" ||
		anomaly "report of run $runs: $(cat "$tmp/rerr")"
	rm -f "$tmp/p.pprof"
done

wait $mix
mixrc=$?
cat "$tmp/mix.out"
[ $mixrc -eq 124 ] && anomaly "safety_stress_mix hung: killed after $((seconds + 120)) s"
[ $mixrc -eq 0 ] || anomaly "safety_stress_mix exited with status $mixrc$( [ $mixrc -gt 128 ] && echo " (killed by signal $((mixrc - 128)))")"
mixops=$(sed -n 's/.* \([0-9][0-9]*\) operations, .*/\1/p' "$tmp/mix.out")
mixops=${mixops:-0}
echo "profil record: $runs runs of short-lived processes"
echo "stress: $((mixops + runs)) operations in $seconds s, anomalies: $anomalies"
[ $anomalies -eq 0 ]
