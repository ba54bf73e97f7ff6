#!/bin/sh
# check-contract.sh [DIR]: the project owns its contract (issue 9).  The
# contract is docs/contract.md, in the repository; the README and the
# installed header cite it; and no file names the specification that once
# lived outside the repository (its file name, or the directory beside
# the repository it was in), so nothing can depend on it at build, test
# or run time.
set -eu
cd "${1:-.}"
status=0
if [ ! -s docs/contract.md ]; then
	echo "check-contract: docs/contract.md is missing or empty" >&2
	status=1
fi
for f in README.md include/profil.h; do
	if ! grep -q 'docs/contract\.md' "$f"; then
		echo "check-contract: $f does not cite docs/contract.md" >&2
		status=1
	fi
done
# the old name, spelt so that this file does not match itself
old='SPEC[.]md'
# the files of the repository (a work tree: those git tracks), or of DIR
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	hits=$(git grep -In -e "$old" -e '[.][.]/shared' -- . || true)
else
	hits=$(grep -rIn -e "$old" -e '[.][.]/shared' --exclude-dir='build*' . || true)
fi
if [ -n "$hits" ]; then
	echo "check-contract: files that refer to a specification outside the repository:" >&2
	echo "$hits" >&2
	status=1
fi
[ $status -eq 0 ] && echo "check-contract: docs/contract.md is the contract; nothing refers outside the repository"
exit $status
