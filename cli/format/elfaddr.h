/*
 * elfaddr.h - from a process address to the address the module's file
 * uses (its symbol table's, gprof's and objdump's), through the file's
 * loadable segments: for a PIE or a library that is the offset from its
 * load base, for a non-PIE executable the address itself.
 */
#ifndef PROFIL_CLI_ELFADDR_H
#define PROFIL_CLI_ELFADDR_H

#include <stdint.h>

#include "../model/profile.h"

/* 0 with *bias set so that file address = process address - *bias, or -1
 * when the file cannot be read as ELF (then the caller may fall back on
 * address - start + file_offset). */
int elf_bias(const struct prof_mapping *m, uint64_t *bias);

#endif
