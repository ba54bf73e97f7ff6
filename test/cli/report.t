# report.t - `profil report` on fixture profiles with known contents
# (test/cli/mkprofile.c says what each holds).  Format: test/test-cli.c.

# The flat profile: exact counts, shares and seconds
$ profil report basic.pprof
stdout /^# basic.pprof: 1000 samples, 10.000 CPU seconds, 100 Hz, 2 processes, 3 threads, 3 lost$/
stdout /^ +self +self% +cum +cum% +seconds +function +module$/
row / hot / 1 == 610
row / hot / 2 == 61
row / hot / 3 == 710
row / hot / 5 == 6.1
row / main / 3 == 1000
row / sqrt / 7 == 0
stdout / sqrt +libm\.so\.6$/
stdout-lines 7

# Rows sorted by self: the hottest first; --top keeps that many
$ profil report --top 2 basic.pprof
stdout-lines 4
row /^ +[0-9]/ 6 == 0
stdout /^ +610 .* hot /
!stdout / inl /

# The default file is profil.pprof
$ cp basic.pprof profil.pprof && profil report --top 1
stdout /^# profil.pprof: 1000 samples/

$ profil report --by module basic.pprof
row / prog$/ 1 == 910
row / libm\.so\.6$/ 1 == 90
stdout-lines 4

$ profil report --by thread basic.pprof
row /worker \[101\]/ 1 == 290
row /^ +700 .*prog \[100\] +prog \[100\]$/ 2 == 70
stdout /child \[200\] +child \[200\]/

$ profil report --by process basic.pprof
row /prog \[100\]/ 1 == 990
row /child \[200\]/ 1 == 10

$ profil report --by command --format csv basic.pprof
stdout /^self,self_percent,cum,cum_percent,seconds,command,processes.$/
stdout /^990,99\.00,990,99\.00,9\.900000,prog,1.$/
stdout /^10,1\.00,10,1\.00,0\.100000,child,1.$/

# Filters
$ profil report --pid 200 basic.pprof
stdout /^# basic.pprof: 10 samples, 0.100 CPU seconds, 100 Hz, 1 process, 1 thread, 3 lost$/
row / hot / 1 == 10
!stdout / warm /

$ profil report --comm prog basic.pprof
stdout /^# basic.pprof: 990 samples/

$ profil report --pid 999 basic.pprof
exit 1
stderr /^profil report: no samples of pid 999 in basic.pprof$/

# Source lines, with the chain an inlined function sits in
$ profil report --lines basic.pprof
row /prog\.c:12 +hot$/ 1 == 610
row /prog\.c:32 +inl \(inlined into hot, line 13\)$/ 1 == 100
row /prog\.c:22 +warm$/ 3 == 290

# Unsymbolized frames are module+offset, never dropped
$ profil report unsym.pprof
row / tool\+0x1234 +tool$/ 1 == 30
row / \[unknown\]\+0xdead / 1 == 10

# Annotated source: samples and % in the gutter
$ profil report --annotate hot basic.pprof
stdout /^# hot \(prog\.c\): 710 samples, 71\.00% of 1000$/
stdout /^ +610 +61\.00% +12 \| \/\* line 12 \*\/$/
stdout /^ +100 +10\.00% +13 \| \/\* line 13 \*\/$/
stdout /^ +11 \| /

# No source: says so, and shows the disassembly with counts
$ profil report --annotate hot_spot self.pprof
stderr /cannot read the source of hot_spot \(\/nonexistent\/hot\.c: No such file or directory\); showing its disassembly/
stdout /<hot_spot>:$/
row /^ +900 +90\.00% +[0-9a-f]+:/ 1 == 900

# No source file known at all: said so in those words (the message once
# read "no file name in the profile: No such file or directory")
$ profil report --annotate hot_spot nofile.pprof
stderr /^profil report: no source file for hot_spot in the profile; showing its disassembly$/
row /^ +900 +90\.00% +[0-9a-f]+:/ 1 == 900

$ profil report --annotate no_such_function basic.pprof
exit 1
stderr /^profil report: no function 'no_such_function' in basic.pprof$/
stdout-lines 0

# Call graph
$ profil report --callers hot basic.pprof
row / main$/ 1 == 710

$ profil report --callees main basic.pprof
row / hot$/ 1 == 710
row / warm$/ 1 == 290

$ profil report --tree --threshold 9.5 basic.pprof
stdout /^ +1000 100\.00%  main$/
stdout /^ +710 +71\.00%    hot$/
stdout /^ +100 +10\.00%      inl$/
!stdout /sqrt/

# Formats: csv (RFC 4180), folded stacks, pprof round trip
$ profil report --format csv basic.pprof
stdout /^self,self_percent,cum,cum_percent,seconds,function,module.$/
stdout /^610,61\.00,710,71\.00,6\.100000,hot,prog.$/
stdout-lines 6

$ profil report --format folded basic.pprof
stdout /^main;hot 610$/
stdout /^main;hot;inl 100$/
stdout /^main;warm;sqrt 90$/
stdout-lines 4

$ profil report --format pprof -o copy.pprof basic.pprof && profil report copy.pprof --lines | sed 's/copy/basic/' > a && profil report basic.pprof --lines > b && cmp a b
file copy.pprof /./

# Every field of the model comes back from the file exactly
$ "$MKPROFILE" --roundtrip .
stderr-lines 0

$ profil report --format pprof basic.pprof | gzip -dc | wc -c
row /./ 1 > 100

# gmon.out for the executable, read by GNU gprof with that (PIE) binary
$ profil report --format gmon self.pprof && gprof -p -b "$MKPROFILE" gmon.out
needs gprof
row / hot_spot$/ 1 >= 89.9
row / hot_spot$/ 1 <= 90.1
row / main$/ 1 == 10

$ profil report --format gmon -o g.out --module mkprofile self.pprof && gprof -p -b "$MKPROFILE" g.out
needs gprof
stdout / hot_spot$/

$ profil report --format gmon --module nosuch -o g.out self.pprof
exit 1
stderr /^profil report: no module 'nosuch' in the profile$/
nofile g.out

# Piped, names are written whole (for scripts), but one long name
# (clang's C++ names run to 900 characters) no longer pads every row that
# wide: it overruns its own column only
$ profil report longname.pprof | awk 'NR > 2 { print (length($0) > 150 ? "wide " : "narrow ") $NF }'
stdout /^wide tool$/
stdout /^narrow tool$/
stdout-lines 2

# "-" reads the profile from standard input, gzipped (as profiles are
# written, and as a Go server's /debug/pprof/profile sends them) or not;
# a file named "-" is ./-
$ gzip -dc basic.pprof | profil report --top 1 - && profil report --top 1 - < basic.pprof
stdout /^# -: 1000 samples, 10.000 CPU seconds, 100 Hz/
row / hot / 1 == 610
stdout-lines 6
