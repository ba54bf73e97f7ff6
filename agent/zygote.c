/*
 * zygote.c - a process that must stay single-threaded is not sampled:
 * Chromium's zygote (so every Chromium and Electron application).
 *
 * Why: the agent's helper thread (the engine's sweeper) is a second
 * thread, and Chromium's zygote CHECKs at start and before each fork that
 * it has one thread only (sandbox::ThreadHelpers::IsSingleThreaded counts
 * the entries of /proc/self/task; its comment names injected threads,
 * lttng's, as the ones it guards against).  Both zygotes died of that
 * CHECK's int3 and the browser gave up ("GPU process isn't usable.
 * Goodbye.", exit 134).  unshare(CLONE_NEWUSER) and setns(), which refuse
 * a threaded caller, are handled by parking the helper around the call
 * (src/process/credwrap.c); a count of /proc/self/task cannot be.
 *
 * So a process whose arguments hold "--type=zygote" starts no sampling,
 * and the renderers it forks, which inherit no hooks, are not sampled
 * either; the browser, GPU and utility processes are.  It tells the
 * recorder in "<pid>.zygote" (traced.c's note), which names them at the
 * end.  `--no-zygote` (with `--no-sandbox`) makes Chromium start its
 * renderers by exec instead, and then every process is sampled.
 */
#include "agent.h"

#include <string.h>

int agent_is_zygote(const char *args, size_t nargs)
{
	for (size_t at = 0; at < nargs; at += strlen(args + at) + 1)
		if (strcmp(args + at, "--type=zygote") == 0)
			return 1;
	return 0;
}
