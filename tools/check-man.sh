#!/bin/sh
# check-man.sh PAGE...: every man page must be lint-clean (mandoc -Tlint
# when available, else groff's warnings).
set -eu
status=0
for page in "$@"; do
	if command -v mandoc >/dev/null 2>&1; then
		out=$(mandoc -Tlint -Wwarning "$page" 2>&1 || true)
	else
		out=$(groff -man -ww -z "$page" 2>&1 || true)
	fi
	if [ -n "$out" ]; then
		echo "$out" >&2
		status=1
	fi
done
[ $status -eq 0 ] && echo "check-man: $# pages lint-clean"
exit $status
