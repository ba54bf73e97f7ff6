/*
 * record.h - `profil record`: runs a command under the agent and writes
 * its profile (cli/record/).
 */
#ifndef PROFIL_CLI_RECORD_H
#define PROFIL_CLI_RECORD_H

/* argv[0] is "record"; returns the exit status for profil. */
int cmd_record(int argc, char **argv);

#endif
