#!/bin/sh
# check-install.sh: `make install` into a scratch prefix, then build and run
# a user program using only `pkg-config --cflags --libs profil`.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s install PREFIX="$tmp/usr" >/dev/null
export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig"
cat > "$tmp/user.c" <<'C'
#include <unistd.h>
#include <profil.h>
#include <stdio.h>
int main(void)
{
	static unsigned short buf[2];
	volatile unsigned long x = 0;
	if (profil(buf, sizeof buf, 0, 2) != 0)
		return 1;
	while (buf[0] < 20)
		x++;
	unsigned short *none = 0;
	profil(none, 0, 0, 0);
	printf("user program: %u samples at %u Hz\n", buf[0], profil_hz());
	return 0;
}
C
# shellcheck disable=SC2046
cc -Wall -Werror -o "$tmp/user" "$tmp/user.c" $(pkg-config --cflags --libs profil)
"$tmp/user"
test -f "$tmp/usr/share/man/man3/profil.3"
# no man1 directory unless there is a section 1 page to put in it
if ! ls man/*.1 >/dev/null 2>&1 && [ -e "$tmp/usr/share/man/man1" ]; then
	echo "check-install: an empty man1 directory was installed" >&2
	exit 1
fi
# uninstall removes every file install put there
make -s uninstall PREFIX="$tmp/usr" >/dev/null
left=$(find "$tmp/usr" ! -type d)
if [ -n "$left" ]; then
	echo "check-install: left after make uninstall:" >&2
	echo "$left" >&2
	exit 1
fi
# make help names the targets; make clean leaves no gmon.out behind (in a
# scratch directory with a copy of the Makefile: clean removes build-*)
help=$(make -s help)
if ! echo "$help" | grep -q '^make uninstall'; then
	echo "check-install: make help does not list make uninstall" >&2
	exit 1
fi
mkdir -p "$tmp/clean/examples"
cp Makefile "$tmp/clean/"
touch "$tmp/clean/gmon.out" "$tmp/clean/gmon.out.42" "$tmp/clean/examples/gmon.out"
# nothing from the calling make (MAKEFLAGS could carry an absolute BUILD)
env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL -u BUILD \
    make -s -C "$tmp/clean" BUILD=build clean >/dev/null
left=$(cd "$tmp/clean" && ls gmon.out* examples/gmon.out* 2>/dev/null || true)
if [ -n "$left" ]; then
	echo "check-install: left after make clean: $left" >&2
	exit 1
fi
echo "check-install: installed copy builds and runs a user program via pkg-config; uninstall removes it all; make help, make clean"
