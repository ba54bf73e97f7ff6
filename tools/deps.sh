#!/bin/sh
# deps.sh: make sure the tools the build and tests use are present.
# As root on Debian/Ubuntu, installs what is missing with apt-get; otherwise
# stops with the exact command to run.  The library itself needs only libc.
set -eu
need=""
command -v cc >/dev/null 2>&1 || need="$need gcc"
command -v make >/dev/null 2>&1 || need="$need make"
command -v gprof >/dev/null 2>&1 || need="$need binutils"   # gmon.out tests
command -v mandoc >/dev/null 2>&1 || need="$need mandoc"    # man page lint
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
# the profil command's symbolizer: elfutils' libdw/libdwfl, libiberty's
# demanglers (C++ and Rust); its tests build a C++ library, strip binaries, and read
# libc's separate debuginfo under /usr/lib/debug
[ -f /usr/include/elfutils/libdwfl.h ] || need="$need libdw-dev"
[ -f /usr/include/libiberty/demangle.h ] || need="$need libiberty-dev" # C++ and Rust names
command -v g++ >/dev/null 2>&1 || need="$need g++"
command -v objcopy >/dev/null 2>&1 || need="$need binutils"
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s libc6-dbg >/dev/null 2>&1; then
	need="$need libc6-dbg"
fi
# the profil command's pprof files are gzipped: zlib
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
# optional: a test reads our pprof files with Go's pprof; without go it
# is skipped, saying so
if ! command -v go >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing golang-go (optional)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null 2>&1 ||
			echo "deps: could not install golang-go; the go pprof test will be skipped" >&2
	else
		echo "deps: optional golang-go missing (the go pprof test will be skipped);" \
		     "to add it:  sudo apt-get install -y golang-go" >&2
	fi
fi
# optional: the HTML report's tests open pages in headless Chromium;
# without it they are skipped, saying so
if ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing chromium (optional)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 ||
			echo "deps: could not install chromium; the HTML page tests will be skipped" >&2
	else
		echo "deps: optional chromium missing (the HTML page tests will be skipped);" \
		     "to add it:  sudo apt-get install -y chromium" >&2
	fi
fi
# optional: one test profiles a program in a bubblewrap sandbox (what
# Flatpak runs); without bwrap it is skipped, saying so
if ! command -v bwrap >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing bubblewrap (optional)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 ||
			echo "deps: could not install bubblewrap; the bwrap test will be skipped" >&2
	else
		echo "deps: optional bubblewrap missing (the bwrap test will be skipped);" \
		     "to add it:  sudo apt-get install -y bubblewrap" >&2
	fi
fi
[ -n "$need" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq $need >/dev/null
else
	echo "deps: missing$need; run:  sudo apt-get install -y$need" >&2
	exit 1
fi
