#!/bin/sh
# check-small-data.sh AGENT: fail if the agent's small writable variables
# (.data and .bss, the large arrays being in .lbss: src/base/base.h
# LARGE_STATIC) span more than MAX_BYTES.  Each page of them a process
# writes is a page fault at its start and a copy-on-write fault after
# each fork, in child and parent; spread among the large arrays they took
# about twenty pages, and a forked child that execs paid 8 faults more.
# A large array added without LARGE_STATIC fails here.  Built by a
# compiler that cannot make .lbss (LARGE_STATIC is empty), nothing to check.
set -eu
so=$1
MAX_BYTES=16384
sections=$(readelf -W -S "$so") || { echo "check-small-data: cannot read $so" >&2; exit 1; }
if ! printf '%s\n' "$sections" | grep -q ' \.lbss '; then
	echo "check-small-data: $so has no .lbss (LARGE_STATIC off for this compiler): skipped"
	exit 0
fi
# [Nr] Name Type Address Off Size ...: the span from .data's start to .bss's end
span=$(printf '%s\n' "$sections" | sed 's/^ *\[ *[0-9]*\]//' | awk '
	$1 == ".data" { lo = strtonum_hex($3) }
	$1 == ".bss"  { hi = strtonum_hex($3) + strtonum_hex($5) }
	function strtonum_hex(s,  i, c, v) {
		v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
		return v
	}
	END { if (lo && hi > lo) print hi - lo; else print -1 }')
if [ "$span" -lt 0 ]; then
	echo "check-small-data: $so: no .data or .bss found" >&2
	exit 1
fi
if [ "$span" -gt "$MAX_BYTES" ]; then
	echo "check-small-data: $so: .data and .bss span $span bytes, more than $MAX_BYTES;" >&2
	echo "  mark large static arrays LARGE_STATIC (src/base/base.h); the largest in .bss:" >&2
	lbss=$(printf '%s\n' "$sections" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".lbss" { print $3 }')
	nm -S --size-sort "$so" | awk -v lbss="$lbss" '$3 ~ /^[bB]$/ && $1 < sprintf("%016s", lbss)' |
		tail -5 | sed 's/^/  /' >&2
	exit 1
fi
echo "check-small-data: $so: .data and .bss span $span bytes (at most $MAX_BYTES)"
