/*
 * modules.c - the module log: which code was mapped where, and when.
 *
 * A pc means nothing without the object it was in.  The record process
 * cannot read /proc/PID/maps of a process that has exited, nor see a
 * library that was dlclose'd before it looked, so the agent writes every
 * load and unload of an executable segment into the ring file's module
 * log as it happens: at start (every object dl_iterate_phdr lists,
 * including the vDSO), and after each dlopen and dlclose (interposed).
 * Each event bumps the log's generation, which every sample carries.
 *
 * All of this runs outside signal context under `mu`; dlopen and dlclose
 * are not async-signal-safe, so neither is anything here.
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/base/ring.h"
#include "../src/unwind/unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct seg {
	uint64_t base, start, end;
	int seen;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct ring_file *log_rf; /* mu */
static struct seg *segs;         /* mu: segments logged as loaded */
static size_t nsegs, capsegs;    /* mu */
static char exe_path[4096];      /* set once by modules_init() */

static const char *object_path(const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return exe_path;
	if (strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0)
		return "[vdso]";
	return name;
}

/* Appends one event to the log and publishes it; mu held. */
static void log_event(int event, const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
                      const struct seg *s)
{
	struct ring_file *rf = log_rf;
	const char *path = info ? object_path(info) : "";
	size_t plen = strlen(path);
	size_t size = (sizeof(struct ring_module) + plen + 1 + 7) & ~(size_t)7;
	uint64_t len = atomic_load_explicit(&rf->modlog_len, memory_order_relaxed);
	if (len + size > rf->modlog_size)
		return; /* full: samples in it stay unnamed (module+offset) */
	struct ring_module *m = (struct ring_module *)((char *)rf + rf->modlog_offset + len);
	uint32_t gen = atomic_load_explicit(&rf->modgen, memory_order_relaxed) + 1;
	memset(m, 0, size);
	m->size = (uint32_t)size;
	m->event = (uint16_t)event;
	m->gen = gen;
	m->base = s->base;
	m->start = s->start;
	m->end = s->end;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	m->time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (info && ph) {
		m->file_offset = ph->p_offset;
		m->build_id_len = (uint16_t)object_build_id(info, m->build_id, sizeof m->build_id);
	}
	m->path_len = (uint32_t)plen;
	memcpy(m->path, path, plen + 1);
	atomic_store_explicit(&rf->modlog_len, len + size, memory_order_release);
	atomic_store_explicit(&rf->modgen, gen, memory_order_release);
}

static struct seg *find_seg(uint64_t base, uint64_t start)
{
	for (size_t i = 0; i < nsegs; i++)
		if (segs[i].base == base && segs[i].start == start)
			return &segs[i];
	return NULL;
}

static int visit(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size, (void)unused;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		struct seg s = {info->dlpi_addr, info->dlpi_addr + ph->p_vaddr,
		                info->dlpi_addr + ph->p_vaddr + ph->p_memsz, 1};
		struct seg *old = find_seg(s.base, s.start);
		if (old) {
			old->seen = 1;
			continue;
		}
		if (nsegs == capsegs) {
			size_t cap = capsegs ? capsegs * 2 : 64;
			struct seg *n = realloc(segs, cap * sizeof *n);
			if (!n)
				return 1;
			segs = n, capsegs = cap;
		}
		segs[nsegs++] = s;
		log_event(RING_MODULE_LOAD, info, ph, &s);
	}
	return 0;
}

/* mu held: log what appeared and what disappeared since the last scan. */
static void rescan_locked(void)
{
	if (!log_rf)
		return;
	for (size_t i = 0; i < nsegs; i++)
		segs[i].seen = 0;
	dl_iterate_phdr(visit, NULL);
	for (size_t i = nsegs; i-- > 0;) {
		if (segs[i].seen)
			continue;
		log_event(RING_MODULE_UNLOAD, NULL, NULL, &segs[i]);
		segs[i] = segs[--nsegs];
	}
	unwind_refresh(); /* the stack walk's tables follow the same loads */
}

void modules_init(struct ring_file *rf)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[n > 0 ? n : 0] = '\0';
	pthread_mutex_lock(&mu);
	log_rf = rf;
	rescan_locked();
	pthread_mutex_unlock(&mu);
}

void modules_rescan(void)
{
	pthread_mutex_lock(&mu);
	rescan_locked();
	pthread_mutex_unlock(&mu);
}

/* In a forked child (one thread, so mu is free or was held by a thread
 * that no longer exists: start it afresh). */
void modules_reset(struct ring_file *rf)
{
	pthread_mutex_init(&mu, NULL);
	unwind_after_fork();
	nsegs = 0;
	log_rf = rf;
	rescan_locked();
}

/*
 * dlopen is not interposed: glibc resolves a bare name against the
 * RUNPATH of dlopen's caller, which a wrapper would change.  Loads are
 * found by modules_poll() every sweep (100 ms) and at every dlclose;
 * a sample taken in a library before its load was logged carries an
 * older generation, and the reader then takes the next load that covers
 * its pc (cli/record/).  dlclose is interposed: the library's unload must
 * be logged, and its load too if it was never seen.
 */
__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*_Atomic real)(void *);
	int (*fn)(void *) = atomic_load(&real);
	if (!fn) {
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		atomic_store(&real, fn);
	}
	modules_rescan();
	int rc = fn ? fn(handle) : -1;
	modules_rescan();
	return rc;
}

/* dl_iterate_phdr's load and unload counters, as of the last scan. */
static unsigned long long seen_adds, seen_subs;

static int counters(struct dl_phdr_info *info, size_t size, void *out)
{
	unsigned long long *c = out;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counters are the same in every entry */
}

void modules_poll(void)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(counters, c);
	if (c[0] == seen_adds && c[1] == seen_subs && c[0] != 0)
		return;
	seen_adds = c[0], seen_subs = c[1];
	modules_rescan();
}
