/*
 * unwind_build.c - the module table the handler unwinds with (unwind.h),
 * kept in step with the objects loaded, outside signal context.
 *
 * unwind_refresh() lists the loaded objects (dl_iterate_phdr), builds rows
 * for the ones not seen before (unwind_table.c), and publishes a new
 * table of module pointers sorted by address.  Retirement reuses the
 * engine's handshake: the handler loads unwind_published only between its
 * profil_inflight increment and decrement (sample.c), so once the new
 * pointer is stored (sequentially consistent) and engine_drain() has seen
 * profil_inflight at zero, no handler holds the old table or a module only
 * it named; both are freed then.  Modules still loaded are shared by the
 * old and the new table and stay.
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

const struct uw_table *_Atomic unwind_published;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* Under mu: every module of the published table, and the name of each
 * (an object unloaded and another loaded at the same place between two
 * refreshes must not inherit its rows). */
static struct known {
	struct uw_module *m;
	char *name;
} *known;
static size_t nknown, capknown;
static _Atomic int on; /* unwind_start() was called: threads note their stacks */
static int oom;        /* under mu: a module could not be built this scan */
static int added;      /* under mu: a module was built this scan */
static size_t hint;    /* under mu: known[] after the last found (visit()) */

static uintptr_t eh_frame_hdr(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size, (void)unused;
	uintptr_t hdr = eh_frame_hdr(info);
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	/* from the one after the last found: the loader lists objects in the
	 * same order at every refresh (new ones last), and known[] keeps it,
	 * so a refresh costs the objects' number, not its square */
	for (size_t k = 0; k < nknown; k++) {
		size_t i = (hint + k) % nknown;
		struct uw_module *m = known[i].m;
		if (m->base == info->dlpi_addr && m->phdr == info->dlpi_phdr &&
		    m->eh_frame_hdr == hdr && strcmp(known[i].name, name) == 0) {
			m->seen = 1;
			hint = i + 1;
			return 0;
		}
	}
	if (nknown == capknown) {
		/* 63 to start: with the allocator's header, a block of its 1 KiB
		 * class (64 took one of 2 KiB) */
		size_t cap = capknown ? capknown * 2 : 63;
		struct known *k = mem_realloc(known, cap * sizeof *k);
		if (!k)
			return oom = 1;
		known = k, capknown = cap;
	}
	struct uw_module *m = uw_cache_load(info, hdr);
	if (!m && (m = uw_module_build(info, hdr)) != NULL)
		uw_cache_store(info, hdr, m);
	char *copy = mem_strdup(name);
	if (!m || !copy) {
		uw_module_free(m), mem_free(copy);
		oom |= !m && info->dlpi_phnum > 0 && errno == ENOMEM;
		return 0;
	}
	m->base = info->dlpi_addr, m->phdr = info->dlpi_phdr, m->eh_frame_hdr = hdr;
	m->seen = 1;
	known[nknown].m = m, known[nknown].name = copy;
	nknown++;
	added = 1;
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct uw_module *x = *(const struct uw_module *const *)a;
	const struct uw_module *y = *(const struct uw_module *const *)b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The table of the modules seen, sorted; an overlap (which the loader
 * never makes) keeps the first. */
static struct uw_table *table_of_seen(void)
{
	struct uw_table *t = mem_alloc(sizeof *t + (nknown ? nknown : 1) * sizeof t->mods[0]);
	if (!t)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < nknown; i++)
		if (known[i].m->seen)
			t->mods[n++] = known[i].m;
	sort_inplace(t->mods, n, sizeof t->mods[0], by_lo);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || t->mods[i]->lo >= t->mods[k - 1]->hi)
			t->mods[k++] = t->mods[i];
	t->nmods = k;
	return t;
}

/* mu held.  Builds, publishes, retires. */
static int refresh_locked(void)
{
	for (size_t i = 0; i < nknown; i++)
		known[i].m->seen = 0;
	oom = added = 0;
	dl_iterate_phdr(visit, NULL);
	int gone = 0;
	for (size_t i = 0; i < nknown; i++)
		gone |= !known[i].m->seen;
	if (!added && !gone && atomic_load(&unwind_published))
		return oom ? (errno = ENOMEM, -1) : 0; /* nothing to publish */
	struct uw_table *t = table_of_seen();
	if (!t) {
		for (size_t i = 0; i < nknown; i++)
			known[i].m->seen = 1; /* keep everything: the old table names it */
		errno = ENOMEM;
		return -1;
	}
	const struct uw_table *old = atomic_exchange(&unwind_published, t);
	inflight_drain();
	mem_free((void *)old);
	size_t k = 0;
	for (size_t i = 0; i < nknown; i++) {
		if (known[i].m->seen) {
			known[k++] = known[i];
		} else {
			uw_module_free(known[i].m);
			mem_free(known[i].name);
		}
	}
	nknown = k;
	return oom ? (errno = ENOMEM, -1) : 0;
}

int unwind_start(const char *cache_dir)
{
	pthread_mutex_lock(&mu);
	uw_cache_dir(cache_dir);
	atomic_store(&on, 1);
	int rc = refresh_locked();
	pthread_mutex_unlock(&mu);
	unwind_note_stack();
	return rc;
}

int unwind_refresh(void)
{
	if (!atomic_load(&on))
		return 0;
	pthread_mutex_lock(&mu);
	int rc = refresh_locked();
	pthread_mutex_unlock(&mu);
	return rc;
}

static void set_stack(uintptr_t lo, uintptr_t hi)
{
	/* hi last: the handler treats hi == 0 as unknown */
	unwind_stack.hi = 0;
	atomic_signal_fence(memory_order_seq_cst);
	unwind_stack.lo = lo;
	atomic_signal_fence(memory_order_seq_cst);
	unwind_stack.hi = hi;
}

/* The stack pointer at process start (ld.so's): every frame of the main
 * thread lies below it, in the same mapping. */
extern void *__libc_stack_end;

void unwind_note_stack(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	if (!atomic_load_explicit(&on, memory_order_relaxed))
		return;
	if (gettid() == getpid()) {
		/* The main thread: pthread_getattr_np() would read
		 * /proc/self/maps (0.1-0.2 ms a process).  The top: the end of
		 * the page holding the initial stack pointer; the bottom: as far
		 * as the stack may grow. */
		struct rlimit rl;
		uintptr_t hi = ((uintptr_t)__libc_stack_end | 4095) + 1;
		uintptr_t max = (uintptr_t)1 << 30;
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < max)
			max = rl.rlim_cur;
		set_stack(hi > max ? hi - max : 0, hi);
		return;
	}
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0)
		set_stack((uintptr_t)addr, (uintptr_t)addr + size);
	pthread_attr_destroy(&a);
}

void unwind_after_fork(void)
{
	pthread_mutex_init(&mu, NULL);
}
