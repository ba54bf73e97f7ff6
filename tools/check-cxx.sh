#!/bin/sh
# check-cxx.sh INCLUDEDIR LIBDIR: <profil.h> works in C++ before and after
# <unistd.h> (which declares profil() too, noexcept in C++), with g++ and
# clang++ when installed; each program is linked and run against LIBDIR.
set -eu
inc=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
body='
int main()
{
	static unsigned short buf[4];
	unsigned short *none = 0;
	if (profil(buf, sizeof buf, 0, 2) != 0 || profil(none, 0, 0, 0) != 0)
		return 1;
	struct profil_stats st;
	return profil_get_stats(&st) == 0 && profil_hz() > 0 ? 0 : 1;
}'
printf '#include <profil.h>\n#include <unistd.h>\n%s\n' "$body" > "$tmp/profil-first.cc"
printf '#include <unistd.h>\n#include <profil.h>\n%s\n' "$body" > "$tmp/unistd-first.cc"
printf '#include <sys/profil.h>\n#include <unistd.h>\n#include <profil.h>\n%s\n' "$body" > "$tmp/sys-profil.cc"
printf '#include <profil.h>\n#include <profil_aix.h>\n#include <unistd.h>\n%s\n' "$body" > "$tmp/aix.cc"
tested="" missing=""
for cxx in g++ clang++; do
	if ! command -v "$cxx" >/dev/null 2>&1; then
		missing="$missing $cxx"
		continue
	fi
	for src in "$tmp"/*.cc; do
		"$cxx" -std=c++11 -Wall -Wextra -Werror -I"$inc" -o "$tmp/prog" "$src" \
		    -L"$lib" -Wl,-rpath,"$lib" -lprofil
		"$tmp/prog"
	done
	tested="$tested $cxx"
done
[ -n "$tested" ] || { echo "check-cxx: no C++ compiler (g++, clang++) found" >&2; exit 1; }
echo "check-cxx: <profil.h> before and after <unistd.h> builds and runs with$tested"
[ -z "$missing" ] || echo "check-cxx: not tested, not installed:$missing"
