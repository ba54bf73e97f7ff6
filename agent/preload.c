/*
 * preload.c - LD_PRELOAD's list of objects, as the dynamic loader reads
 * it: items separated by colons or spaces (an item cannot hold either:
 * cli/record/spawnenv.c gives the agent a path without them).  What it
 * names, and the list written again with the agent first or without it
 * (envfix.c).  Called from exec paths, vfork children included: string
 * functions only, into the caller's buffer.
 */
#include "agent.h"

#include <string.h>

int preload_lists(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ": ");
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

/* Whether the item of len bytes at p is name (NULL: none). */
static int is_item(const char *p, size_t len, const char *name)
{
	return name && len == strlen(name) && strncmp(p, name, len) == 0;
}

void preload_append_others(char *s, const char *list, const char *name1, const char *name2)
{
	for (const char *p = list ? list : ""; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !is_item(p, len, name1) && !is_item(p, len, name2)) {
			if (*s)
				strcat(s, ":");
			strncat(s, p, len);
		}
		p += len;
		if (*p)
			p++;
	}
}

void preload_write(char *s, const char *first, const char *list, const char *other_name)
{
	*s = '\0';
	if (first)
		strcpy(s, first);
	preload_append_others(s, list, other_name, first);
}
