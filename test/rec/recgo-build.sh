#!/bin/sh
# recgo-build.sh MODE - builds recgo.go (beside this script) in the
# current directory as ./recgo-MODE, with go build -buildmode=MODE (exe,
# pie), stripped as Debian ships Go programs (-ldflags=-s -w), in a
# directory of its own (go builds every .c file of a package's
# directory) with caches of its own: test/cli/record.t.  MODE lib builds
# recgolib.go as ./librecgo.so (c-shared, stripped too) and
# recgolib-main.c, the C program that calls it, as ./recgo-lib.
set -e
mode=$1
here=$(dirname "$0")
src=recgo.go
[ "$mode" = lib ] && src=recgolib.go
mkdir -p "recgo-src-$mode"
cp "$here/$src" "recgo-src-$mode/main.go"
printf 'module recgo\n\ngo 1.18\n' > "recgo-src-$mode/go.mod"
cd "recgo-src-$mode"
if [ "$mode" = lib ]; then
	CGO_ENABLED=1 GOFLAGS= GOCACHE="$PWD/gocache" GOPATH="$PWD/gopath" \
		go build -buildmode=c-shared -ldflags='-s -w' -o ../librecgo.so .
	cd ..
	${CC:-cc} -O2 -o recgo-lib "$here/recgolib-main.c" -L. -lrecgo -Wl,-rpath,"$PWD"
	exit 0
fi
CGO_ENABLED=1 GOFLAGS= GOCACHE="$PWD/gocache" GOPATH="$PWD/gopath" \
	go build -buildmode="$mode" -ldflags='-s -w' -o "../recgo-$mode" .
