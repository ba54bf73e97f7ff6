# pprof-go.t - a third-party reader agrees with us: Go's pprof reads our
# file and finds the same totals and the same hottest function.
# Format: test/test-cli.c.

$ HOME=$PWD go tool pprof -top basic.pprof
needs go
stdout /of 10(s|000ms) total/
stdout /^ +(6\.10s|6100ms) 61\.00% 61\.00% +(7\.10s|7100ms) 71\.00% +hot$/
stdout /^ +(2s|2000ms) 20\.00% .* warm$/

$ HOME=$PWD go tool pprof -sample_index=samples -top basic.pprof
needs go
stdout /^ +610 61\.00% 61\.00% +710 71\.00% +hot$/

$ HOME=$PWD go tool pprof -raw basic.pprof
needs go
stdout /^PeriodType: cpu nanoseconds$/
stdout /^Period: 10000000$/
stdout /^ +600 +6000000000: [0-9]+ [0-9]+ $/
stdout /pid:\[100\]/
stdout /thread:\[worker\]/
stdout /abc123/

# The same figures from our report, for the record
$ profil report --top 1 basic.pprof
row / hot / 1 == 610

# A profile of many gzip members: the writer starts one every 256 KiB of
# encoding (cli/format/pprof_write.c), and big.pprof's 50,000 functions
# are some 6 MB of it.  Every member must be read, by Go's reader and by
# ours: the last function written is in the last member.
$ $MKPROFILE --big . && gunzip -c big.pprof | wc -c
row /^[0-9]+$/ 1 > 2097152

$ $MKPROFILE --big . && HOME=$PWD go tool pprof -sample_index=samples -top -focus=step_49999 big.pprof
needs go
stdout /Total samples = 349989/
stdout /^ +2 .* work::Kernel::step_49999$/

$ $MKPROFILE --big . && profil report --format csv big.pprof
stdout /^2,0\.00,2,0\.00,0\.002000,"work::Kernel<float, 44>::step_49999\(int\)",libmodule9\.so/
stdout-lines 50202
