# ring-scribbled.t - a profiled process can write anything into its ring
# file ($PROFIL_RECORD_DIR/*.ring, mapped read-write) at any time; `profil
# record` must survive it, drop that file with one warning, and still pass
# the command's status and output through.  Found by fuzz/fuzz-ring.c.
# The header's layout: data_size at byte 24, modlog_offset at 32,
# modlog_size at 40 (src/base/ring.h).

# ring_layout_rewritten: data_size set to 2^30 after the reader checked
# the header (it read past its mapping)
$ profil record -o s.pprof sh -c 'sleep 0.2; for f in "$PROFIL_RECORD_DIR"/*.ring; do printf "\000\000\000\100\000\000\000\000" | dd of="$f" bs=1 seek=24 conv=notrunc 2>/dev/null; done; sleep 0.2; echo scribbled'; echo "status $?"; profil report s.pprof >/dev/null; echo "report $?"
stdout /^scribbled$/
stdout /^status 0$/
stdout /^report [01]$/

# ring_modlog_moved: the module log's offset and size rewritten
$ profil record -o s.pprof sh -c 'sleep 0.2; for f in "$PROFIL_RECORD_DIR"/*.ring; do printf "\000\000\020\000\000\000\000\000\000\000\000\100\000\000\000\000" | dd of="$f" bs=1 seek=32 conv=notrunc 2>/dev/null; done; sleep 0.2; echo scribbled'; echo "status $?"
stdout /^scribbled$/
stdout /^status 0$/

# ring_records_garbage: the record area filled with random bytes
$ profil record -o s.pprof sh -c 'sleep 0.2; for f in "$PROFIL_RECORD_DIR"/*.ring; do dd if=/dev/urandom of="$f" bs=4096 seek=1 count=4 conv=notrunc 2>/dev/null; done; sleep 0.2; echo scribbled'; echo "status $?"
stdout /^scribbled$/
stdout /^status 0$/

# ring_truncated: the file shrunk under the reader's mapping (SIGBUS in
# `profil record`, which died of it).  If the cut comes before the reader
# has read the header, no process was profiled and there is no profile to
# write: status 1 and a line saying so, never 135.  After
# the cut the shell burns CPU, so a sample reserves ring space past the
# end (its write faults in the shell, which recovers) and the reader must
# touch it: without that the reader might never read past the cut.
$ profil record -o s.pprof sh -c 'sleep 0.2; for f in "$PROFIL_RECORD_DIR"/*.ring; do truncate -s 4096 "$f"; done; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 0.2; echo truncated'; echo "status $?"
stdout /^truncated$/
stdout /^status [01]$/
stderr /ignoring .*truncated while being read/

# ring_tail_misaligned: tail set to 5, so the next record would be read
# at a misaligned address (found by fuzz-ring under UBSan).  The shell's
# ring is not read again, but the samples of its first loop, read before,
# are its profile: status 0, and the report has the shell in it.  (Once
# the whole profile was dropped with the ring, and record said the agent
# had not started in sh: cli_ring_scribbled_3 failed so in CI.)  The
# shell then idles a second before the scribble: the recorder naps up to
# 100 ms between reads when little comes in, and read nothing during the
# 70 ms loop once in CI ("the 0 samples read before are kept").
$ profil record -o s.pprof sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 1; for f in "$PROFIL_RECORD_DIR"/*.ring; do printf "\005\000\000\000\000\000\000\000" | dd of="$f" bs=1 seek=80 conv=notrunc 2>/dev/null; done; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo scribbled'; echo "status $?"; profil report --by process s.pprof
stdout /^scribbled$/
stdout /^status 0$/
stdout /^ +[1-9][0-9]* .* sh \[[0-9]+\]$/
stderr /ignoring the rest of .*: ring tail misaligned \(the [0-9]+ samples read before are kept\)/

# ring_lost_huge: the header's lost count (byte 88) set to 2^56 (found by
# fuzz-ring under UBSan: the periods it stands for overflowed in
# cli/record/reaped.c, and `profil record` wrote a profile of
# 9223372036950 samples that `profil report` refused, "sample counts
# overflow 64 bits").  The sums now saturate: the profile reads back
$ profil record -o s.pprof sh -c 'sleep 0.2; for f in "$PROFIL_RECORD_DIR"/*.ring; do printf "\000\000\000\000\000\000\000\001" | dd of="$f" bs=1 seek=88 conv=notrunc 2>/dev/null; done; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo scribbled'; echo "status $?"; profil report s.pprof >/dev/null; echo "report $?"
stdout /^scribbled$/
stdout /^status 0$/
stdout /^report 0$/

# ring_head_misaligned: head moved 2 bytes on (no multiple of 8) while the
# ring is young (read through its descriptor, cli/record/ringread.c): the
# reader took the header of the record at the old head from a buffer
# that ended 2 bytes into it (found by fuzz-ring under ASan, which `make
# sanitize` runs this under; fuzz/corpus/ring/regress-young-head-
# misaligned).  Whole words only are read now.  Every ring but the
# scribbler's own
$ printf 'import glob, os, struct\nfor f in glob.glob(os.environ["PROFIL_RECORD_DIR"] + "/*.ring"):\n    if not os.path.basename(f).startswith("%%d." %% os.getpid()):\n        fd = os.open(f, os.O_RDWR); h = struct.unpack("<Q", os.pread(fd, 8, 72))[0]; os.pwrite(fd, struct.pack("<Q", h + 2), 72); os.close(fd)\n' > bump.py && profil record -o s.pprof sh -c 'sleep 0.2; python3 bump.py; sleep 0.3; echo scribbled'; echo "status $?"
needs python3
stdout /^scribbled$/
stdout /^status 0$/
