/*
 * asanopt.h - ASAN_OPTIONS as `profil record` passes them on, for the
 * command (cli/record/spawn.c) and every program the agent passes on to
 * (agent/envfix.c).
 *
 * A program built with gcc's -fsanitize=address loads libasan.so, which
 * stops the program at its start ("ASan runtime does not come first in
 * initial library list") when another library was loaded before it, as
 * the agent is, first in LD_PRELOAD.  The check guards against a library
 * ahead of ASan replacing malloc and free; the agent replaces no
 * allocation function, so verify_asan_link_order=0 is added to the
 * options, after the program's own (a test suite's detect_leaks=0 ./t),
 * unless they name that option already (the user's choice stands).
 * Programs built without ASan ignore the variable.
 *
 * Header only, no allocation: envfix.c builds environments in vfork
 * children, in a buffer of the caller's.
 */
#ifndef PROFIL_BASE_ASANOPT_H
#define PROFIL_BASE_ASANOPT_H

#include <stddef.h>
#include <string.h>

#define ASANOPT_KEY "verify_asan_link_order"

/* Whether opts (the variable's value, NULL when unset) needs the key. */
static inline int asanopt_wanted(const char *opts)
{
	return !opts || !strstr(opts, ASANOPT_KEY);
}

/* Bytes of the new value, its NUL included. */
static inline size_t asanopt_size(const char *opts)
{
	return (opts && *opts ? strlen(opts) + 1 : 0) + sizeof ASANOPT_KEY "=0";
}

/* The new value into out, which has asanopt_size(opts) bytes. */
static inline void asanopt_write(const char *opts, char *out)
{
	*out = '\0';
	if (opts && *opts) {
		strcat(out, opts);
		strcat(out, ":");
	}
	strcat(out, ASANOPT_KEY "=0");
}

#endif
