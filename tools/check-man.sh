#!/bin/sh
# check-man.sh PAGE...: every man page must be lint-clean: mandoc -Tlint at
# every level down to STYLE when mandoc is available, else groff's
# warnings.  Two STYLE messages depend on the machine, not on the pages,
# and are left out: a cross-reference to one of the pages given here
# (found once they are installed), and mandoc.db files older than the
# system's pages.
set -eu
status=0
ours=""
for page in "$@"; do
	b=$(basename "$page")
	# the page, and every name its NAME section lists (installed as links)
	for name in ${b%.*} $(sed -n 's/^\.Nm \([A-Za-z0-9_]*\).*/\1/p' "$page"); do
		ours="$ours|Xr $name ${b##*.}"
	done
done
ours=${ours#|}
for page in "$@"; do
	if command -v mandoc >/dev/null 2>&1; then
		out=$(mandoc -Tlint -Wstyle "$page" 2>&1 |
		    grep -v -e 'outdated mandoc.db' |
		    grep -v -E "referenced manual not found: ($ours)( \(|\$)" || true)
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
