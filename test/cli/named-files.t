# named-files.t - a profile names files (modules, sources) that reports
# open; a hostile or stale profile can name a FIFO, and opening one for
# reading waits for a writer for ever.  The report must not hang: such a
# file is treated as unreadable.  Found reviewing what fuzz/fuzz-pprof.c
# runs (the gmon writer reads each module's ELF headers).

# gmon_module_is_fifo: the executable replaced by a FIFO after recording
$ cp $REC/rec-prog ./prog && profil record -o f.pprof ./prog inline 30 >/dev/null && rm prog && mkfifo prog && timeout 20 profil report --format gmon -o g.out f.pprof; echo "status $?"
stdout /^status 0$/

# annotate_module_is_fifo: disassembly (no source in the way: the module's
# file is what it reads) with the module a FIFO
$ cp $REC/rec-prog ./prog && profil record -o f.pprof ./prog inline 30 >/dev/null && rm prog && mkfifo prog && timeout 20 profil report --annotate outer_hot f.pprof; echo "status $?"
stdout /^status [01]$/
