#!/bin/sh
# check-layout.sh OBJDIR ORDER: fail if an object of src/<part>/ uses a
# symbol defined in a part after its own in ORDER (a call up the layering,
# which is what makes a cycle between parts).  Also fails on an object in
# no listed part, on a file outside src/engine/ that includes its
# internal headers, and prints the part graph with counts.
set -eu
objdir=$1 order=$2
# Includes first: a file of src/<part>/ includes "<other>/x.h" only for an
# earlier part (headers are the parts' interfaces; the same order applies).
grep -n '^#include "[a-z]*/' src/*/*.[ch] | awk -v order="$order" '
BEGIN { while ((getline l < order) > 0) if (l !~ /^#/ && l != "" && l !~ /^allow /) rank[l] = ++n }
{ split($0, f, "/"); inc = $0; sub(/^[^"]*"/, "", inc); split(inc, h, "/")
  if (h[1] != f[2] && rank[h[1]] > rank[f[2]]) { print "check-layout: " $0 " includes a later part"; bad = 1 } }
END { exit bad }'
# A part's own header stays its own: engine_int.h (and the engine's
# headers that include it) is for src/engine/ alone; the other parts and
# the agent use engine.h and perf_engine.h.  (bench/ compiles engine
# files whole, with their includes.)
own=$(grep -ln '^#include ".*engine/\(engine_int\|sampling\|registry\|perf_trap\)\.h"' \
	src/*/*.[ch] agent/*.[ch] cli/*/*.[ch] test/*.[ch] 2>/dev/null | grep -v '^src/engine/' || true)
if [ -n "$own" ]; then
	echo "$own" | sed 's/^/check-layout: includes an engine-internal header: /'
	exit 1
fi
for o in "$objdir"/*/*.o; do
	part=$(basename "$(dirname "$o")")
	nm "$o" | awk -v p="$part" -v f="${o#$objdir/}" \
		'$1 == "U" { print "U", p, f, $2; next }
		 NF == 3 && $2 ~ /^[A-TV-Z]$/ { print "D", p, f, $3 }'
done | awk -v order="$order" '
BEGIN {
	while ((getline l < order) > 0) {
		if (l ~ /^#/ || l == "") continue
		n = split(l, w, " ")
		if (w[1] == "allow") { allow[w[2]] = 1; continue }
		rank[w[1]] = ++nparts
	}
}
$1 == "D" { def[$4] = $2; deffile[$4] = $3; next }
{ use[++nu] = $2 " " $3 " " $4 }
END {
	bad = 0
	for (i = 1; i <= nu; i++) {
		split(use[i], u, " ")
		if (!(u[1] in rank)) { print "check-layout: " u[2] ": part " u[1] " not in the order"; bad = 1; continue }
		if (!(u[3] in def) || def[u[3]] == u[1]) continue
		d = def[u[3]]
		if (u[3] in allow) { abi[u[1] " -> " d " " u[3]] = 1; continue }
		edges[u[1] " -> " d]++
		if (rank[d] > rank[u[1]]) {
			print "check-layout: " u[2] " (" u[1] ") uses " u[3] " of " deffile[u[3]] " (" d ", a later part)"
			bad = 1
		}
	}
	for (e in edges) printf "  %s (%d symbols)\n", e, edges[e] | "sort"
	close("sort")
	for (e in abi) print "  (ABI call, allowed: " e ")" | "sort"
	close("sort")
	if (bad) exit 1
	print "check-layout: every part uses only itself and the parts before it"
}'
