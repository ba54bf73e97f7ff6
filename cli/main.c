/*
 * main.c - the profil command: dispatches to its subcommands.
 *
 *   profil record [options] CMD [ARGS...]   cli/record/
 *   profil report [options] [FILE]          cli/report/
 */
#include <stdio.h>
#include <string.h>

#include "record/record.h"
#include "report/report.h"

#ifndef PROFIL_VERSION
#define PROFIL_VERSION "unknown"
#endif

/* Until `profil record` is linked in, a weak stand-in says so. */
__attribute__((weak)) int cmd_record(int argc, char **argv)
{
	(void)argc, (void)argv;
	fputs("profil: record is not available in this build\n", stderr);
	return 1;
}

static void usage(FILE *f)
{
	fputs("usage: profil record [-F HZ] [-o FILE] [--no-children] [--] CMD [ARGS...]\n"
	      "       profil report [options] [FILE]\n"
	      "       profil --help | --version\n"
	      "Profiles an unmodified program (record) and prints reports from the\n"
	      "profile it wrote (report).  `profil report --help` lists report's\n"
	      "options; see profil(1).\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("profil %s\n", PROFIL_VERSION);
		return 0;
	}
	fprintf(stderr, "profil: unknown command '%s' (commands: record, report; see profil --help)\n",
	        cmd);
	return 2;
}
