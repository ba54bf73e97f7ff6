#!/bin/sh
# check-alloc.sh DENYLIST OBJECT...: fail if an OBJECT references a symbol
# DENYLIST names (the C library's calls that reach the program's
# allocator), unless an "allow SYMBOL OBJECT" line of it lets that object
# keep it.  OBJECT is matched by its last two path components, then by its
# name.  src/base/alloc.c says why.
set -eu
deny=$1
shift
bad=$(for o in "$@"; do
	nm -u "$o" | awk -v o="$o" '{ print o, $NF }'
done | awk -v deny="$deny" '
BEGIN {
	while ((getline l < deny) > 0) {
		if (l ~ /^#/ || l == "") continue
		n = split(l, w, " ")
		if (w[1] == "allow") allowed[w[2] " " w[3]] = 1
		else denied[w[1]] = 1
	}
}
{
	n = split($1, p, "/"); two = p[n - 1] "/" p[n]; one = p[n]
	if (($2 in denied) && !(($2 " " two) in allowed) && !(($2 " " one) in allowed))
		print $1 ": " $2
}')
if [ -n "$bad" ]; then
	echo "check-alloc: objects reference calls that reach the program's allocator ($deny):" >&2
	echo "$bad" | sed 's/^/  /' >&2
	exit 1
fi
echo "check-alloc: $# objects reference none of the program's allocator"
