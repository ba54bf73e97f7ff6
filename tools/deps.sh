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
# the profil command's pprof files are gzipped: zlib reads them,
# libdeflate writes them (cli/format/pprof_write.c says why)
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
[ -f /usr/include/libdeflate.h ] || need="$need libdeflate-dev"
# the command links elfutils statically when it can (Makefile's
# PROFIL_LIBS): libdw.a needs bzip2's archive too
[ -f /usr/include/bzlib.h ] || need="$need libbz2-dev"
# optional PACKAGE COMMAND WHAT: installs PACKAGE when COMMAND is missing
# (as root, with apt-get), else says how; without it WHAT is skipped,
# saying so
updated=""
optional() {
	command -v "$2" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing $1 (optional)"
		# a fresh machine may have no package lists yet: fetched once,
		# then the install is tried again
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 ||
		{ [ -z "$updated" ] && updated=1 && apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1; } ||
			echo "deps: could not install $1; $3 will be skipped" >&2
	else
		echo "deps: optional $1 missing ($3 will be skipped);" \
		     "to add it:  sudo apt-get install -y $1" >&2
	fi
}
# a test reads our pprof files with Go's pprof
optional golang-go go "the go pprof test"
# the HTML report's tests open pages in headless Chromium
optional chromium chromium "the HTML page tests"
# one test profiles a program in a bubblewrap sandbox (what Flatpak runs)
optional bubblewrap bwrap "the bwrap test"
# programs the agent must stay out of: one linked against musl, a 32-bit
# one (built -m32 -nostdlib against the i386 C library)
optional musl-tools musl-gcc "the musl program test"
optional libc6-i386 /lib/ld-linux.so.2 "the 32-bit program test"
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
