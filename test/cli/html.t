# html.t - `profil report --format html` and `--diff`.  Format: test/test-cli.c.
# The browser cases open the page in headless Chromium through
# $REC/../html-check (test/cli/html-check.sh), which prints what the
# page's own self test (#selftest, cli/format/html/selftest.js) saw;
# screenshots go to BUILD/test/artifacts/.

# One file, nothing loaded from anywhere, the header rendered as HTML
$ profil report --format html -o r.html basic.pprof && grep -c -E '(src|href)="(https?:)?//' r.html
stdout /^0$/
exit 1
file r.html /<title>profil: prog --fast<\/title>/
file r.html /<dt>samples<\/dt><dd>1000<\/dd>/
file r.html /<dt>threads<\/dt><dd>3<\/dd>/
file r.html /<b>0\.30%<\/b> samples lost/
file r.html /<li class="note">a comment, kept<\/li>/
file r.html /<canvas id="fg">/

# With scripts blocked: the top functions as a table, and the source
# with samples per line and the inlined call under its line
$ profil report --format html basic.pprof > r.html && sed -n '/<noscript>/,/<\/noscript>/p' r.html
stdout /^<tr><td>610<\/td><td>61\.00%<\/td><td>710<\/td><td>71\.00%<\/td><td>hot<\/td><td>prog<\/td><\/tr>$/
file r.html /<td class="c" style="--h:1\.000">610<\/td><td class="p">61\.00%<\/td><td class="n">12<\/td><td class="t"><code>\/\* line 12 \*\/<\/code><\/td>/
file r.html /<div class="inl">inlined: 100 samples in inl \(prog\.c:32\)<\/div>/

# A missing source file is said plainly; the disassembly is shown instead
$ profil report --format html -o s.html self.pprof
file s.html /Source not available: \/nonexistent\/hot\.c: No such file or directory/
file s.html /<span class="hot" style="--h:[0-9.]+">/

# A source that is a FIFO is not opened (it would hang the report)
$ rm prog.c && mkfifo prog.c && timeout 20 profil report --format html -o f.html basic.pprof
file f.html /Source not available: prog\.c: Invalid argument/

# Hostile names, paths, command line and source: text, never markup
$ profil report --format html -o i.html inject.pprof 2>/dev/null && grep -o -i '<script' i.html | wc -l && grep -o -i '</script' i.html | wc -l && grep -c -E '<(img|svg|t>|b>bold|b>engine|i>lib|inl>)' i.html
exit 1
stdout-lines 3
stdout /^2$/
stdout /^0$/
!stdout /^[13-9]/
file i.html /&lt;script&gt;alert\(6\)&lt;\/script&gt;/
file i.html /"\\u003c\/script\\u003e\\u003cscript\\u003ealert\(5\)\\u003c\/script\\u003e"/
file i.html /"line\\u2028sep\\u2029para"/
file i.html /<title>profil: prog &lt;img src=x onerror=alert\(1\)&gt; &quot;&amp;amp;&quot;/

$ profil report --format html -o i.html inject.pprof 2>/dev/null && ! grep -q "$(printf '\342\200\250')" i.html && ! grep -q "$(printf '\342\200\251')" i.html && echo clean
stdout /^clean$/

$ profil report --format html -o i.html inject.pprof 2>/dev/null && $REC/../html-check i.html selftest
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^console_errors=0$/
stdout /^scripts=2$/
stdout /^injected=0$/
stdout /^top_bar=&lt;\/script&gt;&lt;script&gt;alert\(5\)&lt;\/script&gt;$/

# A real recording: the hot functions lead the flame graph and the
# chart; zoom, search, sort, filter and the thread selection work
$ profil record -o t.pprof $REC/rec-prog threads 30 2>/dev/null && profil report --format html -o t.html t.pprof && $REC/../html-check t.html selftest && $REC/../html-check --shot rec-flame t.html show=flame && $REC/../html-check --shot rec-source t.html show=source
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^console_errors=0$/
stdout /^hot_leaf=(lib_hot|main_hot)$/
stdout /^top_bar=(lib_hot|main_hot)$/
stdout /^zoom=(lib_hot|main_hot)$/
stdout /^zoom_full_width=1$/
stdout /^zoom_out=1$/
stdout /^search=[0-9]+ frames? match: [0-9.]+% of the samples$/
stdout /^search_colored=1$/
stdout /^sort_name_ok=1$/
stdout /^sort_self_ok=1$/
stdout /^sort_self_first=(lib_hot|main_hot)$/
stdout /^filter_rows=1$/
stdout /^filter_first=(lib_hot|main_hot)$/
stdout /^thread_rec_prog_[0-9]+_=main_hot$/
stdout /^thread_rec_prog_[0-9]+_=lib_hot$/
stdout /^tooltip=(lib_hot|main_hot)module: (librec\.so|rec-prog)[0-9]+ samples, [0-9.]+% of all, 100\.00% of the zoomed frame$/
stdout /^icicle_root_y=0$/
stdout /^screenshot=.*rec-flame\.png$/
stdout /^screenshot=.*rec-source\.png$/

# The process selection: a forked child and its parent
$ profil record -o f.pprof $REC/rec-prog fork 30 2>/dev/null && profil report --format html -o f.html f.pprof && $REC/../html-check f.html selftest
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^process_[0-9]+=main_hot$/
stdout /^process_[0-9]+=child_hot$/

# --diff: main_hot made three times slower; text, then the page.  Its
# share goes from 50% to 75% (+25 points).  On timers each observation
# weighs about rate / tick = 4 samples, so n samples are n/4 draws: 120
# units (about 1200 and 2400 samples, 300 and 600 draws) give the
# difference a standard deviation of sqrt(.25/300 + .1875/600) = 3.4
# points, and the 10-point bounds lie 4.4 of them from +25.  With 30 units
# (2.3 deviations: the derivation had counted samples as draws) the CI of
# 2026-11-27 saw +9.40; with 10 units it failed once.  At 120 units the
# CI of 2026-11-28 saw +9.35 again, from 59.6/40.1 on the equal side: the
# two threads' equal work had not cost equal CPU time (one vCPU slower),
# so test/rec/rec.h now burns CPU time, not work
$ profil record -o a.pprof $REC/rec-prog threads 120 2>/dev/null && profil record -o b.pprof $REC/rec-prog slower 120 2>/dev/null && profil report --diff a.pprof b.pprof
stdout /^# diff: a\.pprof \([0-9]+ samples\) -> b\.pprof \([0-9]+ samples\)/
row / main_hot / 1 > 10
row / lib_hot / 1 < -10
stdout /^ +\+[0-9.]+ +\+[0-9.]+ .* main_hot +rec-prog$/

# The page: only the sign of main_hot's change, at 60 units (deviation
# 4.8 points, so +25 is 5.2 of them from 0; it was 10 units, 2.4)
$ profil record -o a.pprof $REC/rec-prog threads 60 2>/dev/null && profil record -o b.pprof $REC/rec-prog slower 60 2>/dev/null && profil report --diff a.pprof --format html -o d.html b.pprof && $REC/../html-check d.html selftest && $REC/../html-check --shot diff-flame --size 1280,420 d.html show=flame
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^console_errors=0$/
stdout /^diff_grew=main_hot$/
stdout /^diff_grew_color=red$/
stdout /^diff_shrank=lib_hot$/
stdout /^diff_shrank_color=blue$/
file d.html /differential: <code>a\.pprof<\/code>/

$ profil report --diff basic.pprof --format csv basic.pprof
exit 2
stderr /--diff writes text or html only/

# 50,000 functions: a page of a few MB, made quickly, that the browser
# opens and sorts (the times are printed, not asserted tightly)
$ $MKPROFILE --big . && s=$(date +%s%N) && profil report --format html -o big.html big.pprof && echo "gen_ms $(( ($(date +%s%N) - s) / 1000000 ))" && echo "bytes $(wc -c < big.html)" && $REC/../html-check big.html selftest
needs chromium
row /^bytes / 2 < 5000000
row /^gen_ms / 2 < 60000
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^frames=50201$/
stdout /^table_info=rows 1–100 of 50201$/

# A program we did not write (python3, its interpreter stripped): the
# README's screenshots come from here (docs/img/)
$ profil record -o p.pprof python3 $REC/../busy.py >/dev/null 2>&1 && profil report --format html -o p.html p.pprof 2>/dev/null && $REC/../html-check p.html selftest && $REC/../html-check --shot python-flame --size 1280,820 p.html show=flame && $REC/../html-check --shot python-source --size 1280,1000 p.html show=source
needs chromium
needs python3
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^console_errors=0$/
stdout /^sort_self_ok=1$/
stdout /^screenshot=.*python-flame\.png$/
stdout /^screenshot=.*python-source\.png$/

# examples/demo.c, a program with its source at hand: the source view
# with samples per line (docs/img/source.png) and a libc function
# whose source is not installed (its disassembly instead).  The division
# line of integrate() and its loop line share the samples about 55/45
# (the pc a sample finds after the slow divide decides which, skid the
# program does not control; under load the loop line came out on top
# once), so the division line must be hot (heat >= 0.5), not the hottest.
# The page's top bar is the function the report puts first: integrate
# (about 46%) as a rule, but hash_bytes (about 29%) ran on the slower
# vCPU once in CI and took 39.96% to integrate's 39.79% (the shares are
# of CPU time, and equal work is not equal CPU time on this VM)
$ profil record -o d.pprof $REC/../../examples/demo >/dev/null 2>&1 && profil report --format html -o d.html d.pprof 2>/dev/null && $REC/../html-check d.html selftest >s.txt && cat s.txt && $REC/../html-check --shot demo-source --size 1280,1000 d.html show=source && $REC/../html-check --shot demo-flame --size 1280,700 d.html show=flame && t=$(profil report --format csv --top 1 d.pprof | sed -n '2p' | cut -d, -f6) && grep -qx "top_bar=$t" s.txt && echo "top bar: the report's first, $t"
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^top bar: the report's first, (integrate|hash_bytes)$/
stdout /^screenshot=.*demo-source\.png$/
file d.html /<td class="c" style="--h:(1\.000|0\.[5-9][0-9]*)">[0-9]+<\/td><td class="p">[0-9.]+%<\/td><td class="n">[0-9]+<\/td><td class="t"><code>.*sum \+= 4\.0/

# A stack 100000 frames deep: drawn to 1000 rows (a canvas has a
# height limit), the rest reached by zooming; no error
$ profil report --format html -o deep.html deep.pprof 2>/dev/null && $REC/../html-check deep.html selftest
needs chromium
stdout /^selftest=done$/
stdout /^errors=0$/
stdout /^nodes=100001$/
