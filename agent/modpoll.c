/*
 * modpoll.c - when the module log (modules.c) is brought up to date: at
 * each dlclose (interposed), at each sweep of the helper thread when the
 * loader's counters moved, and at exit().
 *
 * Loads are found by modules_poll(): after a dlopen() whose caller a
 * wrapper cannot change (dlopen.c), every sweep (100 ms) for the others
 * (glibc resolves a name along its caller's paths, and the C library's
 * own loads, NSS and iconv modules, call no symbol of ours), and at
 * every dlclose; a sample taken in a library before its load was logged
 * carries an older generation, and the reader then takes the next load
 * that covers its pc (cli/record/).  dlclose is interposed: the
 * library's unload must be logged, and its load too if it was never
 * seen.
 *
 * Outside signal context; every dl_iterate_phdr() here goes through
 * modules_iterate(), under the lock a fork's prepare handler takes
 * (modules.c, "Forks").
 */
#include "agent.h"
#include "../src/engine/engine.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static void *_Atomic real;
	int (*fn)(void *) = (int (*)(void *))agent_next(&real, "dlclose");
	agent_defer_end(); /* a forked child's ring file: its unload is logged */
	lazy_helper_now(); /* a deferred helper: this is a safe point */
	modules_rescan();
	int rc = fn ? fn(handle) : -1;
	modules_rescan();
	return rc;
}

/* dl_iterate_phdr's load and unload counters, as of the last poll. */
static _Atomic unsigned long long seen_adds, seen_subs;

static int counters(struct dl_phdr_info *info, size_t size, void *out)
{
	unsigned long long *c = out;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counters are the same in every entry */
}

/* Whether loads or unloads happened since the last poll; 1 if unknown. */
static int loads_changed(unsigned long long c[2])
{
	modules_iterate(counters, c);
	return c[0] != atomic_load(&seen_adds) || c[1] != atomic_load(&seen_subs) || c[0] == 0;
}

void modules_poll(void)
{
	unsigned long long c[2] = {0, 0};
	if (!loads_changed(c))
		return;
	atomic_store(&seen_adds, c[0]);
	atomic_store(&seen_subs, c[1]);
	modules_rescan();
}

/*
 * exit(): the loads since the helper's last poll are logged, or a
 * process that ends before its first sweep (100 ms) leaves the samples
 * of the libraries it dlopen'ed at [unknown]: a Python script that
 * imported hashlib had half of its samples there (libcrypto).  glibc's
 * _dl_fini calls destructors with the loader's lock released.  Not at
 * _exit(): in a child forked while a thread of the program's was inside
 * the loader, that lock is held for ever (modules.c, "Forks"), and
 * glibc's own exit would hang there too, but _exit must not.
 */
__attribute__((destructor)) static void modules_at_exit(void)
{
	unsigned long long c[2] = {0, 0};
	if (agent_running() && loads_changed(c))
		modules_rescan_exiting();
}
