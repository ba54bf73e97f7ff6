#!/bin/sh
# check-handler.sh OBJECT ALLOWLIST: fail if OBJECT references an undefined
# symbol that ALLOWLIST does not name.  This is the signal handler's
# async-signal-safety contract (src/engine/sample.c), checked on every build.
set -eu
obj=$1 allow=$2
syms=$(nm -u "$obj") || { echo "check-handler: cannot read $obj" >&2; exit 1; }
bad=$(printf '%s\n' "$syms" | awk 'NF {print $NF}' | while read -r sym; do
	grep -v '^#' "$allow" | grep -qxF "$sym" || echo "$sym"
done)
if [ -n "$bad" ]; then
	echo "check-handler: $obj references symbols outside $allow:" >&2
	echo "$bad" | sed 's/^/  /' >&2
	exit 1
fi
echo "check-handler: $obj references only allowed symbols"
