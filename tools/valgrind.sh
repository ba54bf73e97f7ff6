#!/bin/sh
# valgrind.sh BUILD TEST... - each test of BUILD/test/run-tests under
# valgrind's memcheck, directly (the runner re-executes /proc/self/exe,
# which under valgrind is valgrind itself), as many at a time as there
# are CPUs (VALGRIND_JOBS): memcheck runs a process's threads one at a
# time, so one test per CPU is what keeps CI's stage short.  Prints a
# line per test in the order given and "valgrind: N passed, N failed,
# N skipped"; the log of each test is BUILD/vg-TEST.log.  Exits non-zero
# when any test failed or memcheck found an error (exit status 99).
set -u
build=$1
shift
runner=$build/test/run-tests
out=$(mktemp -d /tmp/profil-vg.XXXXXX)
trap 'rm -rf "$out"' EXIT

# a pool of VALGRIND_JOBS: a long test (a truncation loop running the
# command a hundred times) does not hold the other CPU idle
jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c '
	PROFIL_TEST_TOOL=valgrind valgrind -q --error-exitcode=99 --leak-check=full \
	    --errors-for-leak-kinds=definite "$1" --one "$2" >/dev/null 2>"$3/vg-$2.log"
	echo $? >"$4/$2"' sh "$runner" {} "$build" "$out"
ok=0 bad=0 skip=0
for t in "$@"; do
	rc=$(cat "$out/$t" 2>/dev/null || echo none)
	case $rc in
	0) echo "ok   $t"; ok=$((ok + 1)) ;;
	77) echo "skip $t"; skip=$((skip + 1)) ;;
	*) echo "FAIL $t (status $rc; see $build/vg-$t.log)"; bad=$((bad + 1)) ;;
	esac
done
echo "valgrind: $ok passed, $bad failed, $skip skipped"
[ $bad -eq 0 ]
