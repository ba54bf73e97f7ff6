/*
 * notes.c - what agents had to say, said once on our stderr.
 *
 * An agent that cannot do its work in a process (no room for its ring
 * file on a full file system, no descriptor left, a sandbox) says so
 * (agent/agent.c agent_say()).  On the program's stderr that line went
 * where the program sends its errors: a file it chose, a test's expected
 * output, a build log, one line for every compiler run of a build.  So
 * the agent tells us on the rings' socket (ringserve.c, "PROFIL-SAY"),
 * and we say each text once, when the command has ended, with the pid of
 * the first process that said it and how many others did.  An agent that
 * cannot reach us (no descriptor left, a network namespace of its own)
 * still writes on its stderr.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct texts kept; more are counted, not kept (an agent's texts are
 * a few fixed sentences and an errno's description). */
#define NOTES_MAX 32

struct agent_note {
	char *text;
	uint32_t first_pid;
	size_t count;
};

/* text as we may print it: bytes from another process, control bytes
 * (a terminal's escapes) shown as '?'. */
static char *printable(const char *text)
{
	char *p = prof_xstrdup(text);
	for (char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return p;
}

void notes_add(struct images *set, uint32_t pid, const char *raw)
{
	char *text = printable(raw);
	for (size_t i = 0; i < set->nnotes; i++)
		if (strcmp(set->notes[i].text, text) == 0) {
			set->notes[i].count++;
			free(text);
			return;
		}
	if (set->nnotes == NOTES_MAX) {
		set->notes_dropped++;
		free(text);
		return;
	}
	set->notes = prof_xrealloc(set->notes, set->nnotes + 1, sizeof *set->notes);
	set->notes[set->nnotes++] = (struct agent_note){text, pid, 1};
}

void notes_print(struct images *set)
{
	ringserve_drain(set); /* the last processes' */
	for (size_t i = 0; i < set->nnotes; i++) {
		const struct agent_note *n = &set->notes[i];
		if (n->count == 1)
			fprintf(stderr, "profil agent (pid %u): %s\n", n->first_pid, n->text);
		else
			fprintf(stderr, "profil agent (pid %u and %zu other process%s): %s\n",
			        n->first_pid, n->count - 1, n->count == 2 ? "" : "es", n->text);
	}
	if (set->notes_dropped)
		fprintf(stderr, "profil agent: %zu more messages of other kinds\n",
		        set->notes_dropped);
	notes_free(set);
}

void notes_free(struct images *set)
{
	for (size_t i = 0; i < set->nnotes; i++)
		free(set->notes[i].text);
	free(set->notes);
	set->notes = NULL;
	set->nnotes = set->notes_dropped = 0;
}
