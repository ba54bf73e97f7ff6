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

one() {
	PROFIL_TEST_TOOL=valgrind valgrind -q --error-exitcode=99 --leak-check=full \
	    --errors-for-leak-kinds=definite "$runner" --one "$1" >/dev/null 2>"$build/vg-$1.log"
	echo $? >"$out/$1"
}

jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for t in "$@"; do
	one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait
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
