/*
 * librecaudit.so: an rtld auditor (LD_AUDIT) that prints, for each name
 * the loader searches, the object on whose behalf it searches (the
 * loader glibc was told: a dlopen's caller).  A wrapper of dlopen that
 * made the call from its own object would show there.
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

unsigned int la_version(unsigned int version)
{
	return version;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	*cookie = (uintptr_t)map;
	return 0;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	const struct link_map *loader = (const struct link_map *)*cookie;
	const char *who = loader && loader->l_name && *loader->l_name ? loader->l_name : "(program)";
	if (flag == LA_SER_ORIG && strstr(name, "librecplug"))
		fprintf(stderr, "audit: %s searched for %s\n", name, who);
	return (char *)name;
}
