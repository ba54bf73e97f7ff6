# errors.t - every error is one line on stderr naming the problem, a
# non-zero exit, and no partial output; hostile files never crash or hang
# the reader.  Format: test/test-cli.c.

$ profil report nosuch.pprof
exit 1
stderr /^profil report: cannot open nosuch.pprof: No such file or directory$/
stderr-lines 1

$ profil report random.bin
exit 1
stderr /^profil report: random.bin: not a pprof profile/
stderr-lines 1

$ profil report notgzip.txt
exit 1
stderr /^profil report: notgzip.txt: not a pprof profile/
stderr-lines 1

$ profil report empty.pprof
exit 1
stderr /^profil report: empty.pprof: empty file$/

$ profil report truncated.pprof
exit 1
stderr /^profil report: truncated.pprof: truncated gzip data$/
stderr-lines 1

$ profil report gzjunk.gz
exit 1
stderr /^profil report: gzjunk.gz: (not a pprof profile|corrupt pprof profile)/
stderr-lines 1

$ profil report hugevarint.pprof
exit 1
stderr /^profil report: hugevarint.pprof: not a pprof profile \(malformed protobuf at byte [0-9]+\)$/

$ PROFIL_MAX_INPUT=1048576 profil report bomb.gz
exit 1
stderr /^profil report: bomb.gz: decompresses to more than 1 MiB; refusing it$/

$ profil report badindex.pprof
exit 1
stderr /^profil report: badindex.pprof: corrupt pprof profile: string index out of range$/

$ profil report badloc.pprof
exit 1
stderr /^profil report: badloc.pprof: corrupt pprof profile: reference to location 7, which is not in the file$/

# The message cut off anywhere: a clean error (or, cut between two
# fields, a smaller profile), never a crash
$ for n in $(seq 1 7 915); do gzip -dc basic.pprof | head -c $n > cut.pb; profil report cut.pb >/dev/null 2>err; s=$?; [ $s = 0 ] || { [ $s = 1 ] && [ $(wc -l < err) = 1 ]; } || { echo "cut at $n: status $s"; cat err; }; done
stdout-lines 0

# The gzip stream cut anywhere: an error (a case of its own, so that
# make valgrind-unit runs the two loops on two CPUs)
$ for n in $(seq 1 7 915); do [ $n -lt $(wc -c < basic.pprof) ] || continue; head -c $n basic.pprof > cut.gz; profil report cut.gz >/dev/null 2>err; s=$?; [ $s = 1 ] && [ $(wc -l < err) = 1 ] || { echo "gzip cut at $n: status $s"; cat err; }; done
stdout-lines 0

# A stack 100000 frames deep: no recursion runs out of stack
$ profil report deep.pprof && profil report --tree --threshold 0 deep.pprof | wc -l && profil report --callers recurse deep.pprof && profil report --format folded deep.pprof | wc -c
row / recurse / 1 == 7
row / recurse / 3 == 7
row /^100002$/ 1 == 100002
row / recurse$/ 1 == 7
row /^800002$/ 1 == 800002

# Output that cannot be written: no partial file, the old one untouched
$ profil report -o /nonexistent/dir/out.txt basic.pprof
exit 1
stderr /^profil report: cannot write \/nonexistent\/dir\/out.txt: No such file or directory$/

$ echo old > out.csv && profil report --format csv -o out.csv --annotate nope basic.pprof
exit 1
file out.csv /^old$/

$ profil report --format pprof -o /dev/full basic.pprof
exit 1
stderr /^profil: cannot write \/dev\/full: No space left on device$/

$ profil report -o /dev/full basic.pprof
exit 1
stderr /No space left on device/

# Bad command lines
$ profil report --by nothing basic.pprof
exit 2
stderr /^profil report: --by takes function, module, thread, process or command, not 'nothing'/

$ profil report --format xml basic.pprof
exit 2
stderr /--format takes text, csv, pprof, gmon, folded or html, not 'xml'/

$ profil report --top -3 basic.pprof
exit 2
stderr /--top takes a positive number, not '-3'/

$ profil report --frobnicate basic.pprof
exit 2
stderr /^profil report: unknown option or missing argument: '--frobnicate'/

$ profil report a.pprof b.pprof
exit 2
stderr /more than one input file: 'b.pprof'/

$ profil frobnicate
exit 2
stderr /^profil: unknown command 'frobnicate'/

$ profil --version
stdout /^profil [0-9]+\.[0-9]+\.[0-9]+$/

$ profil --help
stdout /^usage: profil record/

# record: an output that cannot be written is said before the command
# runs, not after it (a long run was lost that way)
$ profil record -o /nonexistent/dir/out.pprof sh -c 'echo ran'
exit 2
stderr /^profil record: cannot write \/nonexistent\/dir\/out.pprof: No such file or directory$/
stderr-lines 1
!stdout /ran/

$ mkdir -p outdir && profil record -o outdir sh -c 'echo ran'
exit 2
stderr /^profil record: cannot write outdir: Is a directory$/
!stdout /ran/

# A sound profile of something other than CPU time (Go's heap profile)
# is refused, naming what it counts: read as CPU time it was nonsense
$ profil report heap.pprof
exit 1
stderr /^profil report: heap.pprof: not a CPU profile \(its samples are alloc_objects\/count, alloc_space\/bytes\)$/
stderr-lines 1

# ... and what it names from the file stays one line: a sample type named
# "\n" (found by fuzz-pprof) is shown as '?'
$ printf '\012\004\010\001\000\260\355]\377\177\000\0002\0002\001\012' > nl.pprof && profil report nl.pprof
exit 1
stderr /^profil report: nl.pprof: not a CPU profile \(its samples are \?\/\)$/
stderr-lines 1

# record: when no directory takes the rings, each place tried is named
# with why (it said only "No such file or directory", of $TMPDIR).  Not
# under valgrind, which needs a writable TMPDIR itself
$ unshare -rm sh -c 'for d in /dev/shm /tmp; do mount --bind $d $d && mount -o remount,ro,bind $d || exit 9; done; TMPDIR=/nonexistent exec profil record -o /dev/null sh -c "echo ran"'
needs unshare
needs no valgrind
exit 2
stderr /^profil record: cannot make a directory for samples in \/dev\/shm: Read-only file system; \/nonexistent: No such file or directory; \/tmp: Read-only file system$/
stderr-lines 1
!stdout /ran/

# record: a program of another ELF class or machine than the agent's is
# refused before it runs, saying why: its loader printed "cannot be
# preloaded (wrong ELF class: ELFCLASS64): ignored" on the program's
# stderr, ran it unprofiled, and record blamed a removed LD_PRELOAD
$ objcopy -O elf32-i386 $REC/rec-prog x32 && chmod +x x32 && profil record -o x.pprof ./x32 threads 10
needs objcopy
exit 2
stderr /^profil record: \.\/x32 is a 32-bit i386 program: the profiling agent is built for 64-bit x86-64 programs, so it cannot be profiled$/
stderr-lines 1
nofile x.pprof

$ cp $REC/rec-prog xa && printf '\267\000' | dd of=xa bs=1 seek=18 conv=notrunc 2>/dev/null && profil record -o x.pprof ./xa threads 10
exit 2
stderr /^profil record: \.\/xa is a program for AArch64: the profiling agent is built for 64-bit x86-64 programs, so it cannot be profiled$/
stderr-lines 1
nofile x.pprof

# report -: what is not a profile on standard input is named "-"
$ echo junk | profil report -
exit 1
stderr /^profil report: -: not a pprof profile/
stderr-lines 1

# record: a directory, or an empty name, as the command: said as a shell
# says it, before anything runs ("Permission denied"; ": No such file or
# directory")
$ profil record -o x.pprof /tmp
exit 126
stderr /^profil record: \/tmp: Is a directory$/
stderr-lines 1
nofile x.pprof

$ profil record -o x.pprof ''
exit 127
stderr /^profil record: the command's name is empty$/
stderr-lines 1
nofile x.pprof

# record: a program linked against another C library (musl: its loader
# cannot relocate the glibc agent and stopped the program with status
# 127, "Error relocating ...: symbol not found", before it ran) is
# refused up front; here rec-prog with its PT_INTERP rewritten
$ cp $REC/rec-prog xm && perl -pi -e 's{/lib64/ld-linux-x86-64\.so\.2\0}{/lib/ld-musl-x86_64.so.1\0\0\0\0}' xm && profil record -o x.pprof ./xm threads 10
needs perl
exit 2
stderr /^profil record: \.\/xm runs on the dynamic loader \/lib\/ld-musl-x86_64\.so\.1, not the GNU C library's ld-linux-x86-64\.so\.2 that the profiling agent is built for, so it cannot be profiled$/
stderr-lines 1
nofile x.pprof

# A writer that exits before its output is committed (prof_oom() in the
# middle of a profile streamed to its file, cli/format/pprof_write.c)
# leaves no temporary file beside the target: out.c removes it at exit
$ "$MKPROFILE" --exit-writing half.pprof; echo "status $?"; ls -a | grep -c '^half\.pprof' || :
stdout /^status 1$/
stdout /^0$/
nofile half.pprof
