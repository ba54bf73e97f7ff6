#!/bin/sh
# recgo-build.sh MODE - builds recgo.go (beside this script) in the
# current directory as ./recgo-MODE, with go build -buildmode=MODE (exe,
# pie), stripped as Debian ships Go programs (-ldflags=-s -w), in a
# directory of its own (go builds every .c file of a package's
# directory) with caches of its own: test/cli/record.t.
set -e
mode=$1
here=$(dirname "$0")
mkdir -p "recgo-src-$mode"
cp "$here/recgo.go" "recgo-src-$mode/main.go"
printf 'module recgo\n\ngo 1.18\n' > "recgo-src-$mode/go.mod"
cd "recgo-src-$mode"
CGO_ENABLED=1 GOFLAGS= GOCACHE="$PWD/gocache" GOPATH="$PWD/gopath" \
	go build -buildmode="$mode" -ldflags='-s -w' -o "../recgo-$mode" .
