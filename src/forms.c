/* Placeholder until the multi-range forms land (issue 4). */
#include "internal.h"

#include <errno.h>

int forms_tru64(const struct profil_args *args, size_t n, unsigned int flags) HIDDEN;
int forms_aix(const void *profs) HIDDEN;

int forms_tru64(const struct profil_args *args, size_t n, unsigned int flags)
{
	(void)args, (void)n, (void)flags;
	errno = ENOSYS;
	return -1;
}

int forms_aix(const void *profs)
{
	(void)profs;
	errno = ENOSYS;
	return -1;
}
