# gmon.t - `profil report --format gmon` on real recordings, read by GNU
# gprof with the recorded file: a PIE, a non-PIE executable (absolute
# addresses) and a shared library (--module).  Format: test/test-cli.c.

# Only the executable's functions: the second thread's lib_hot
# (librec.so) stays out.  Not "one row": a sample or two of start-up CPU
# after the agent started profiling can land in _start or _init (seen
# in `make check`: 2 of 197 samples in the non-PIE's _init, 98.98%), so
# the runs are long enough (about 600 samples) for a few such samples
# to stay under 1%.
$ profil record -o t.pprof $REC/rec-prog threads 90 2>/dev/null && profil report --format gmon t.pprof && gprof -p -b $REC/rec-prog gmon.out > g && cat g && ! grep -q lib_hot g
needs gprof
row / main_hot$/ 1 >= 99

$ profil record -o t.pprof $REC/rec-prog-nopie threads 90 2>/dev/null && profil report --format gmon -o n.out t.pprof && gprof -p -b $REC/rec-prog-nopie n.out
needs gprof
row / main_hot$/ 1 >= 99

$ profil record -o t.pprof $REC/rec-prog threads 30 2>/dev/null && profil report --format gmon --module librec.so -o l.out t.pprof && gprof -p -b $REC/librec.so l.out
needs gprof
row / lib_hot$/ 1 >= 99

# The seconds gprof prints are the profile's: samples x period
$ profil record -o t.pprof $REC/rec-prog threads 30 2>/dev/null && profil report --format csv --top 2 t.pprof | grep main_hot | cut -d, -f5 > ours && profil report --format gmon t.pprof && gprof -p -b $REC/rec-prog gmon.out | awk '/main_hot$/ { print $3 }' > theirs && awk 'NR == FNR { a = $1; next } { d = a - $1; if (d < 0) d = -d; print (d < 0.011 ? "agree" : "differ " a " " $1) }' ours theirs
needs gprof
stdout /^agree$/

# A JIT's code (named by /tmp/perf-PID.map) has no binary for gprof:
# refused in one line, nothing written (a 63-byte gmon.out before)
$ profil record -o j.pprof $REC/rec-jit 20 >out; m=$(profil report --by module j.pprof | grep -o 'perf-[0-9]*\.map' | head -1); profil report --format gmon --module $m -o j.out j.pprof; echo "status $?"; test -e j.out || echo "no file"; p=$(sed -n 's/^pid //p' out); rm -f /tmp/perf-$p.map
stdout /^status 1$/
stdout /^no file$/
stderr /^profil report: perf-[0-9]+\.map names code a JIT made at run time: no binary holds it for gprof to read a gmon.out with$/
