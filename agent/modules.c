/*
 * modules.c - the module log: which code was mapped where, and when.
 *
 * A pc means nothing without the object it was in.  The record process
 * cannot read /proc/PID/maps of a process that has exited, nor see a
 * library that was dlclose'd before it looked, so the agent writes every
 * load and unload of an executable segment into the ring file's module
 * log as it happens: at start (every object dl_iterate_phdr lists,
 * including the vDSO), after each dlopen it can follow (dlopen.c) and
 * each dlclose (interposed), and at the helper's polls (modpoll.c).
 * Each event bumps the log's generation, which every sample carries.
 *
 * All of this runs outside signal context under `mu`; dlopen and dlclose
 * are not async-signal-safe, so neither is anything here.
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/base/ring.h"
#include "../src/unwind/unwind.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

struct seg {
	uint64_t base, start, end;
	int seen;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* Held around every dl_iterate_phdr of ours (rescans, polls, the unwind
 * tables' refresh) and by a fork's prepare handler: see Forks below.
 * Lock order: mu, then iter_mu. */
static pthread_mutex_t iter_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ring_file *log_rf; /* mu */
static struct seg *segs;         /* mu: segments logged as loaded */
static size_t nsegs, capsegs;    /* mu */
static const char *exe_path = ""; /* kept (base_keep()), set once by modules_init() */
static int exiting;              /* mu: exit() is logging the last loads */

/* aliases logged (modules_log_alias()), by start; mu */
#define ALIASES_MAX 64
static uint64_t alias_starts[ALIASES_MAX];
static size_t naliases;

static const char *object_path(const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return exe_path;
	if (strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0)
		return "[vdso]";
	return name;
}

/* mu: the log's bytes below room_to have their pages (agent_ring_room()
 * asked for them), so the events of a start, each a hundred bytes or so
 * into the same page, ask once, not each (a system call each). */
static uint64_t room_to;
/* mu: the time of the scan under way (rescan_locked()), 0 outside one;
 * its events share one clock read. */
static int64_t scan_ns;

static void log_to(struct ring_file *rf)
{
	log_rf = rf;
	room_to = 0;
}

static int log_room(struct ring_file *rf, uint64_t at, uint64_t size)
{
	if (at + size <= room_to)
		return 1;
	if (!agent_ring_room(rf, at, size))
		return 0;
	room_to = (at + size + 4095) & ~(uint64_t)4095;
	return 1;
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
	if (len + size > rf->modlog_size || !log_room(rf, rf->modlog_offset + len, size))
		return; /* full, or its file system is: samples in it stay unnamed (module+offset) */
	struct ring_module *m = (struct ring_module *)((char *)rf + rf->modlog_offset + len);
	uint32_t gen = atomic_load_explicit(&rf->modgen, memory_order_relaxed) + 1;
	memset(m, 0, size);
	m->size = (uint32_t)size;
	m->event = (uint16_t)event;
	m->gen = gen;
	m->base = s->base;
	m->start = s->start;
	m->end = s->end;
	/* not the vDSO's: fmt.c */
	m->time_ns = scan_ns ? scan_ns : base_clock_ns(CLOCK_REALTIME);
	if (info && ph) {
		m->file_offset = ph->p_offset;
		m->build_id_len = (uint16_t)object_build_id(info, m->build_id, sizeof m->build_id);
	}
	m->path_len = (uint32_t)plen;
	memcpy(m->path, path, plen + 1);
	atomic_store_explicit(&rf->modlog_len, len + size, memory_order_release);
	atomic_store_explicit(&rf->modgen, gen, memory_order_release);
}

/* The segment at (base, start), looked for from the one after the last
 * found: dl_iterate_phdr() lists objects in the same order scan after
 * scan (new ones at the end), so each is found at its first try, and a
 * scan costs the number of segments, not its square (a program that
 * dlopen()s 2,000 libraries rescanned 2,000 x 2,000 at each: 2.6 CPU s
 * of the agent's). */
static size_t seg_hint;

static struct seg *find_seg(uint64_t base, uint64_t start)
{
	for (size_t k = 0; k < nsegs; k++) {
		size_t i = (seg_hint + k) % nsegs;
		if (segs[i].base == base && segs[i].start == start) {
			seg_hint = i + 1;
			return &segs[i];
		}
	}
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
			/* 31 to start: with the allocator's 16-byte header, a
			 * block of its 1 KiB class (64 was 2 KiB and took a 4 KiB
			 * block: a page more written at every start) */
			size_t cap = capsegs ? capsegs * 2 : 31;
			struct seg *n = mem_realloc(segs, cap * sizeof *n);
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
	pthread_mutex_lock(&iter_mu);
	for (size_t i = 0; i < nsegs; i++)
		segs[i].seen = 0;
	scan_ns = base_clock_ns(CLOCK_REALTIME);
	dl_iterate_phdr(visit, NULL);
	for (size_t i = nsegs; i-- > 0;) {
		if (segs[i].seen)
			continue;
		log_event(RING_MODULE_UNLOAD, NULL, NULL, &segs[i]);
		/* the rest kept in the loader's order, for find_seg() */
		memmove(&segs[i], &segs[i + 1], (--nsegs - i) * sizeof *segs);
	}
	scan_ns = 0;
	if (!exiting) /* no sample needs them any more */
		unwind_refresh(); /* the stack walk's tables follow the same loads */
	pthread_mutex_unlock(&iter_mu);
}

/*
 * Forks.  glibc (2.36) does not reset the lock dl_iterate_phdr takes in
 * a forked child: a child forked while another thread was inside
 * dl_iterate_phdr finds it held for ever, and its first call never
 * returns.  Our helper thread calls it every sweep (modules_poll()) and
 * at each rescan, and the child's fork hook rescanned: a child forked at
 * that moment hung in our hook (CPython's test_fork_at_exit, once in CI).
 * So every call of ours holds iter_mu, which the prepare handler takes,
 * and the child's hook copies the parent's log instead of calling it.
 * iter_mu also covers each rescan whole, so the log and segs[] the child
 * inherits agree.  A thread of the program's own inside dl_iterate_phdr
 * at a fork still leaves the child's lock held (glibc's hazard: such a
 * child's dlopen hangs too); the prepare handler waits for iter_mu at
 * most FORK_WAIT_S, so a helper stuck that way in such a child slows its
 * forks but never stops them.
 */
#define FORK_WAIT_S 1
static int fork_took_iter;

static void fork_prepare(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FORK_WAIT_S;
	fork_took_iter = pthread_mutex_timedlock(&iter_mu, &until) == 0;
}

static void fork_parent(void)
{
	if (fork_took_iter)
		pthread_mutex_unlock(&iter_mu);
}

/* One thread, ours: locks held by threads that no longer exist, or by
 * this one before the fork, start afresh. */
static void fork_child(void)
{
	pthread_mutex_init(&mu, NULL);
	pthread_mutex_init(&iter_mu, NULL);
}

/* exe_path from the first object listed, the main program. */
static int find_exe_path(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	size_t room;
	char *at = base_keep_open(&room);
	if (!at)
		return 1;
	if (room < 2) { /* no room for a name: none */
		base_keep_close(0);
		return 1;
	}
	maps_program_file(info, at, room < PATH_MAX ? room : PATH_MAX);
	const char *kept = base_keep_close(at[0] ? strlen(at) + 1 : 0);
	if (kept)
		exe_path = kept;
	return 1;
}

void modules_init(struct ring_file *rf)
{
	modules_iterate(find_exe_path, NULL);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pthread_mutex_lock(&mu);
	log_to(rf);
	rescan_locked();
	pthread_mutex_unlock(&mu);
}

void modules_rescan(void)
{
	pthread_mutex_lock(&mu);
	rescan_locked();
	pthread_mutex_unlock(&mu);
}

/* The parent's log as it was at the fork, for modules_adopt(): the
 * parent may log more into it while its child is deferred (agent/defer.c).
 * A child forked by a deferred one keeps its parent's note. */
static const struct ring_file *fork_log;
static uint64_t fork_log_len;
static uint32_t fork_log_gen;

/* In a forked child (one thread): no dl_iterate_phdr here (Forks above).
 * The locks are made afresh here too: this runs from the engine's child
 * handler, which glibc may call before or after our own fork_child(). */
uint32_t modules_forked(void)
{
	fork_child();
	unwind_after_fork();
	if (log_rf) {
		fork_log = log_rf;
		fork_log_len = atomic_load_explicit(&log_rf->modlog_len, memory_order_acquire);
		fork_log_gen = atomic_load_explicit(&log_rf->modgen, memory_order_acquire);
	}
	log_to(NULL); /* not the parent's to write (a dlclose here) */
	return fork_log_gen;
}

uint64_t modules_forked_len(void)
{
	return fork_log ? fork_log_len : 0;
}

void modules_adopt(struct ring_file *rf, int may_wait)
{
	if (may_wait)
		pthread_mutex_lock(&mu);
	else if (pthread_mutex_trylock(&mu) != 0)
		return;
	log_to(rf);
	if (fork_log && fork_log_len <= fork_log->modlog_size && fork_log_len <= rf->modlog_size &&
	    agent_ring_room(rf, rf->modlog_offset, fork_log_len)) {
		memcpy((char *)rf + rf->modlog_offset, (const char *)fork_log + fork_log->modlog_offset,
		       fork_log_len);
		atomic_store_explicit(&rf->modlog_len, fork_log_len, memory_order_release);
		atomic_store_explicit(&rf->modgen, fork_log_gen, memory_order_release);
	} else if (may_wait) {
		nsegs = 0;
		rescan_locked();
	}
	pthread_mutex_unlock(&mu);
}

void modules_stop(void)
{
	pthread_mutex_lock(&mu);
	log_to(NULL);
	pthread_mutex_unlock(&mu);
}

/* In a forked child that is not profiled: its loads are not the parent's
 * to log (a dlclose there wrote into the parent's log). */
void modules_detach(void)
{
	fork_child();
	log_to(NULL);
}

/* dl_iterate_phdr(cb, arg) under iter_mu (Forks above). */
int modules_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	pthread_mutex_lock(&iter_mu);
	int rc = dl_iterate_phdr(cb, arg);
	pthread_mutex_unlock(&iter_mu);
	return rc;
}

/* exit(): the last rescan (modpoll.c), which leaves the unwind tables
 * as they are. */
void modules_rescan_exiting(void)
{
	pthread_mutex_lock(&mu);
	exiting = 1;
	rescan_locked();
	pthread_mutex_unlock(&mu);
}

/* Whether [start, end) meets a segment the loader mapped, or is an alias
 * logged before; mu held. */
static int overlaps_known(uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < nsegs; i++)
		if (segs[i].start < end && start < segs[i].end)
			return 1;
	for (size_t i = 0; i < naliases; i++)
		if (alias_starts[i] == start)
			return 1;
	return 0;
}

struct alias_match {
	const struct maps_code *a;
	int logged;
};

static int log_alias(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct alias_match *m = arg;
	(void)size;
	int match = aliases_match(info, object_path(info), m->a);
	if (match <= 0)
		return match < 0; /* its own segment: stop; another file: go on */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		ElfW(Phdr) at = *ph; /* the object's, at the alias's offset */
		at.p_offset = m->a->offset;
		struct seg s = {info->dlpi_addr, m->a->start, m->a->end, 1};
		log_event(RING_MODULE_LOAD, info, &at, &s);
		m->logged = 1;
		return 1;
	}
	return 0;
}

void modules_log_alias(const struct maps_code *a)
{
	pthread_mutex_lock(&mu);
	if (log_rf && naliases < ALIASES_MAX && !overlaps_known(a->start, a->end)) {
		struct alias_match m = {a, 0};
		modules_iterate(log_alias, &m);
		if (m.logged)
			alias_starts[naliases++] = a->start;
	}
	pthread_mutex_unlock(&mu);
}
