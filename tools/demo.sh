#!/bin/sh
# demo.sh BUILD - what `make demo` shows after building everything:
#   1. `profil record` on programs nobody here wrote: python3 running the
#      bundled examples/busy.py (a thread, a subprocess, hashing in
#      libcrypto), and xz compressing a generated file;
#   2. the library used directly: examples/demo.c calls profil() itself.
# Profiles are written under BUILD/demo/; open them with `profil report`
# or `go tool pprof`.
set -eu
build=${1:-build}
profil="$build/profil"
out="$build/demo"
mkdir -p "$out"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

# python3: the system's interpreter when there is one (a pyenv shim is a
# shell script that runs several programs before python; it works too,
# but makes a noisier first demo).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
if command -v "$py" >/dev/null 2>&1; then
	run "$profil" record -o "$out/python.pprof" "$py" examples/busy.py
	run "$profil" report --top 12 "$out/python.pprof"
	run "$profil" report --by module "$out/python.pprof"
	run "$profil" report --by process "$out/python.pprof"
else
	echo "demo: no python3 here; skipping the python3 part"
fi

if command -v xz >/dev/null 2>&1; then
	# about 6 MB of text that compresses, but not trivially: a few seconds
	[ -s "$out/input.txt" ] || seq 1 200000 | awk '{ print $1, $1 * 7919 % 1000003, "x" }' \
		> "$out/input.txt"
	say "$profil record -o $out/xz.pprof sh -c 'xz -2 -T1 -c $out/input.txt > /dev/null'"
	"$profil" record -o "$out/xz.pprof" sh -c "xz -2 -T1 -c '$out/input.txt' > /dev/null"
	run "$profil" report --top 8 "$out/xz.pprof"
else
	echo "demo: no xz here; skipping the xz part"
fi

run "$build/examples/demo"
