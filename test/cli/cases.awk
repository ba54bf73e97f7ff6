# cases.awk - lists the cases of test/cli/*.t as runner tests: each line
# starting with "$ " opens a case; case n of FILE.t becomes
#   TEST_IMPL(cli_FILE_n) { return cli_case("DIR/FILE.t", n); }
# (run with -v dir=ABSOLUTE_DIR_OF_THE_FILES).
FNR == 1 {
	n = 0
	base = FILENAME
	sub(/.*\//, "", base)
	sub(/\.t$/, "", base)
	name = base
	gsub(/[^a-z0-9_]/, "_", name)
	if (NR == 1)
		print "#include \"runner.h\"\nint cli_case(const char *file, int n);"
}
/^\$ / {
	n++
	printf "TEST_IMPL(cli_%s_%d) { return cli_case(\"%s/%s.t\", %d); }\n", name, n, dir, base, n
}
