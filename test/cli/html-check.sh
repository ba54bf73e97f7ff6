#!/bin/sh
# html-check [--shot NAME] [--size WxH] PAGE.html [FRAGMENT]
#
# Opens the page in headless Chromium (Debian's chromium; no driver, no
# download) and prints what its self test wrote (<pre id="selftest">,
# "key=value" lines; the page runs it when FRAGMENT has "selftest"),
# then console_errors=N: the messages Chromium logged as errors or
# uncaught exceptions.  --shot NAME saves a screenshot as
# artifacts/NAME.png next to this script (BUILD/test/artifacts/) instead.
# Exits 77 without a browser (the cases say "needs chromium").
set -eu
shot= size=1280,900
while [ $# -gt 0 ]; do
	case $1 in
	--shot) shot=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	*) break ;;
	esac
done
page=$1 frag=${2:-}
browser=
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[ -n "$browser" ] || { echo "html-check: no chromium" >&2; exit 77; }
case $page in /*) ;; *) page=$(pwd)/$page ;; esac
url="file://$page${frag:+#$frag}"
profile=$(mktemp -d /tmp/html-check.XXXXXX)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: the sandbox refuses to run as root; the page is ours.
set -- --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--user-data-dir="$profile" --window-size="$size" --virtual-time-budget=15000 \
	--enable-logging=stderr --v=0
# Headless Chromium now and then never exits (with or without our page,
# seen once in many CI runs): a run is killed after 60 s and tried once
# more, saying so; a second hang fails.
browse() {
	for try in 1 2; do
		timeout -k 5 60 "$browser" "$@" && return 0
		rc=$?
		[ $rc -eq 124 ] || [ $rc -eq 137 ] || return $rc
		echo "html-check: chromium did not exit within 60 s (try $try)" >&2
	done
	return 124
}
if [ -n "$shot" ]; then
	dir=$(cd "$(dirname "$0")" && pwd)/artifacts
	mkdir -p "$dir"
	browse "$@" --screenshot="$dir/$shot.png" "$url" >/dev/null 2>"$profile/log" || true
	[ -s "$dir/$shot.png" ] || { cat "$profile/log" >&2; exit 1; }
	echo "screenshot=$dir/$shot.png"
	exit 0
fi
browse "$@" --dump-dom "$url" >"$profile/dom" 2>"$profile/log" || true
sed -n '/^<pre id="selftest">/,/^<\/pre>/p' "$profile/dom" | sed 's/^<pre id="selftest">//; /^<\/pre>/d'
# console messages: "CONSOLE(...)" lines at ERROR level, "Uncaught" anywhere
n=$(grep -c -E 'Uncaught|:ERROR:CONSOLE|"Error' "$profile/log" || true)
echo "console_errors=$n"
[ "$n" = 0 ] || grep -E 'Uncaught|:ERROR:CONSOLE|"Error' "$profile/log" >&2
