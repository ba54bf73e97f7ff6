/*
 * reaped.c - the CPU time of each process that no image of it accounted
 * for: its exit, above all.
 *
 * An image's samples and its agent's credits (start-up, threads' last
 * periods) cover the process's CPU up to the agent's last look; the
 * kernel's work at the exit comes after (18-22% of the CPU of a shell
 * loop of short programs was nowhere in the profile).  A parent that
 * reaps a child learns the child's CPU time, its own and its reaped
 * descendants' (wait4's RUSAGE_BOTH), and its agent writes it into the
 * parent's ring (agent/reap.c, ring.h RING_REAPED); for the command
 * itself we reaped it.  A process's own CPU is then its total less its
 * reaped children's totals, and what exceeds what its images accounted
 * for (samples, credits and lost samples, in periods) is added at a
 * "[process exit]" location on its main thread.  What is left of a
 * period, more or less, is carried from one process to the next, so that
 * many short processes add up to the right total: the credit of one
 * process can land on the next.  Not for a process whose parent
 * did not tell (reaped by waitid(), by the kernel, by a parent not
 * recorded, or in another PID namespace when its children's numbers
 * there match no process's images: pid_here(); such a parent's reaps
 * still count among its children's totals), for a
 * pid that two processes of the recording had, nor for a process whose
 * sampling ended before it did (a tracer, its program taking our
 * signals: another line says so; an exec into a program no agent
 * entered), whose rest is no exit.
 *
 * A forked child that exited before its first sample has no image at all
 * (its agent samples into memory of its own until it needs a ring file:
 * agent/defer.c), only its word in an ancestor's ring (ring.h
 * RING_FORKED): when its parent is a process of the recording and told
 * its total, all of its own time is credited, at "[unsampled]" (what the
 * settling of its exit would have written: account.c) under the fork's
 * callers when its word told them (forked.c), on its pid under
 * its parent's name (a fork copies it); in a PID namespace not ours, on
 * its number there (the words and reaps of such a namespace are keyed
 * by it: forked.c).  Not with --no-children,
 * whose children are not sampled by request; not for a child whose last
 * word was its exec (the program it became had no agent: its time is
 * that program's), nor for a pid no word was said of (a vfork or
 * posix_spawn child that exec'd such a program: the same).
 */
#include "record_int.h"
#include "../model/profile.h"
#include "../../src/base/ring.h"

#include <stdlib.h>
#include <string.h>

struct told {
	uint32_t pid, parent; /* parent: ours */
	uint64_t cpu_ns;
	uint64_t children_ns; /* the totals of the children it reaped */
	uint64_t pidns;       /* pid's namespace, 0: ours (see collect()) */
};

static int by_pid(const void *a, const void *b)
{
	const struct told *x = a, *y = b;
	if (x->pidns != y->pidns)
		return x->pidns < y->pidns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int same_child(const struct told *a, const struct told *b)
{
	return a->pid == b->pid && a->pidns == b->pidns;
}

/* The entry for pid of namespace pidns (0: ours), NULL if none or if pid
 * was told of twice. */
static struct told *find_in(struct told *t, size_t n, uint64_t pidns, uint32_t pid)
{
	struct told key = {pid, 0, 0, 0, pidns};
	struct told *f = bsearch(&key, t, n, sizeof *t, by_pid);
	if (!f || (f > t && same_child(&f[-1], f)) || (f + 1 < t + n && same_child(&f[1], f)))
		return NULL;
	return f;
}

static struct told *find(struct told *t, size_t n, uint32_t pid)
{
	return find_in(t, n, 0, pid);
}

/* The processes of other PID namespaces, by namespace and number there,
 * for the reaps told by those numbers (pid_here()). */
struct nsproc {
	uint64_t pidns;
	uint32_t ns_pid, pid;
};

static int by_ns_then_number(const void *a, const void *b)
{
	const struct nsproc *x = a, *y = b;
	if (x->pidns != y->pidns)
		return x->pidns < y->pidns ? -1 : 1;
	if (x->ns_pid != y->ns_pid)
		return x->ns_pid < y->ns_pid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct nsproc *ns_index(const struct images *set, size_t *n)
{
	struct nsproc *v = prof_xcalloc(set->n ? set->n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct image *c = &set->v[i];
		if (c->ns_pid && c->pidns && image_valid(c))
			v[k++] = (struct nsproc){c->pidns, c->ns_pid, c->pid};
	}
	qsort(v, k, sizeof *v, by_ns_then_number);
	*n = k;
	return v;
}

/* The pid we see of the child that a reaper of another PID namespace told
 * of by that namespace's number: the one process whose images had that
 * number in the reaper's namespace; 0 when none did (a child that had no
 * image, a namespace not told), SEVERAL when two did (the number was
 * reused). */
#define SEVERAL UINT32_MAX

static uint32_t pid_here(const struct nsproc *v, size_t n, const struct image *reaper,
                         uint32_t ns_pid)
{
	struct nsproc key = {reaper->pidns, ns_pid, 0};
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first entry not below key */
		size_t mid = lo + (hi - lo) / 2;
		if (by_ns_then_number(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!reaper->pidns || lo == n || v[lo].pidns != key.pidns || v[lo].ns_pid != ns_pid)
		return 0;
	for (size_t i = lo + 1; i < n && v[i].pidns == key.pidns && v[i].ns_pid == ns_pid; i++)
		if (v[i].pid != v[lo].pid)
			return SEVERAL;
	return v[lo].pid;
}

/* Every reap the images told of, and the command's own, sorted by pid,
 * each with its reaped children's totals summed. */
static struct told *collect(const struct images *set, uint32_t root, uint64_t root_ns,
                            size_t *n)
{
	size_t cap = 1;
	for (size_t i = 0; i < set->n; i++)
		cap += set->v[i].nreaped;
	struct told *t = prof_xcalloc(cap, sizeof *t);
	size_t k = 0, nns;
	struct nsproc *ns = ns_index(set, &nns);
	t[k++] = (struct told){root, 0, root_ns, 0, 0};
	for (size_t i = 0; i < set->n; i++) {
		const struct image *im = &set->v[i];
		if (!image_valid(im))
			continue;
		/* In a PID namespace not ours its children's pids are that
		 * namespace's: each is told by the pid we see; a child with no
		 * image (it ended before its first sample) by its number
		 * there, in that namespace (pidns), for credit_unimaged();
		 * one whose number two processes had as pid 0, no process.
		 * Each still counts among its parent's children (the parent's
		 * own total includes it: a shell of its own namespace had its
		 * child's whole time at its exit, counted twice) */
		for (size_t j = 0; j < im->nreaped; j++) {
			uint32_t pid = im->reaped[j].pid, here = pid;
			if (im->ns_pid)
				here = pid_here(ns, nns, im, pid);
			uint64_t pidns = im->ns_pid && !here && im->pidns ? im->pidns : 0;
			t[k++] = (struct told){pidns ? pid : here == SEVERAL ? 0 : here, im->pid,
			                       im->reaped[j].cpu_ns, 0, pidns};
		}
	}
	free(ns);
	qsort(t, k, sizeof *t, by_pid);
	for (size_t i = 0; i < k; i++) {
		struct told *parent = t[i].parent ? find(t, k, t[i].parent) : NULL;
		if (parent)
			parent->children_ns += t[i].cpu_ns;
	}
	*n = k;
	return t;
}

/* A process: its valid images' indexes, first and last, the periods
 * they accounted for (samples, credits, lost samples), whether one
 * of them stopped sampling before the process ended, and whether the
 * last one was exec'ing when it was last read: no image followed, so
 * the process went on in a program no agent entered (a statically
 * linked one, or one whose LD_PRELOAD was removed), and the rest of its
 * CPU time is that program's (record.c's coverage warning tells). */
struct proc {
	uint32_t pid;
	size_t first, last;
	uint64_t accounted;
	int cut, execed;
	int64_t start_ns; /* its first image's start: images of a pid by exec */
};

/* Sampling ended in the image before the process did: it took our
 * signals (Go's runtime), or its ring broke a rule and was not read
 * again; what followed was never sampled, and is no exit. */
static int cut_short(const struct image *im)
{
	return im->signal < 0 || im->broken;
}

static int by_pid_then_start(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_ns != y->start_ns) /* a scan may find an exec'd one first */
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The processes of set (one entry per image first, merged by pid). */
static struct proc *processes(const struct images *set, size_t *n)
{
	struct proc *v = prof_xcalloc(set->n ? set->n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++)
		if (image_valid(&set->v[i]))
			v[k++] = (struct proc){set->v[i].pid, i, i, set->v[i].weight + set->v[i].lost,
			                       cut_short(&set->v[i]), set->v[i].execing,
			                       set->v[i].start_ns};
	qsort(v, k, sizeof *v, by_pid_then_start);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && v[m - 1].pid == v[i].pid) {
			v[m - 1].last = v[i].first;
			v[m - 1].accounted += v[i].accounted;
			v[m - 1].cut |= v[i].cut;
			v[m - 1].execed = v[i].execed;
		} else {
			v[m++] = v[i];
		}
	}
	*n = m;
	return v;
}

static int pid_vs_proc(const void *key, const void *elem)
{
	uint32_t pid = *(const uint32_t *)key, other = ((const struct proc *)elem)->pid;
	return pid < other ? -1 : pid > other;
}

/* The process of pid among v (one per pid, sorted by pid), NULL if none. */
static const struct proc *proc_of(const struct proc *v, size_t n, uint32_t pid)
{
	return n ? bsearch(&pid, v, n, sizeof *v, pid_vs_proc) : NULL;
}

/* Saturating: the times told and the periods counted come from rings,
 * which the profiled processes may have written anything into (fuzz-ring
 * found a lost count whose periods overflowed). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_ns(uint64_t ns)
{
	return ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)ns;
}

/* What a process's reap told beyond what w periods cover, into *carry;
 * the whole periods that makes, taken out of it. */
static int64_t periods_owed(const struct told *me, uint64_t accounted, int64_t period_ns,
                            int64_t *carry)
{
	int64_t own = sat_add(sat_ns(me->cpu_ns), -sat_ns(me->children_ns)), covered;
	if (accounted > (uint64_t)INT64_MAX ||
	    __builtin_mul_overflow((int64_t)accounted, period_ns, &covered))
		covered = INT64_MAX;
	/* Signed: an image's credits are whole periods, rounded up at
	 * random (account.c), so a short process is as often accounted
	 * a period more than it ran as a fraction less; clipping those
	 * to 0 credited 0.15 ms too much to each child of fork+_exit */
	*carry = sat_add(*carry, sat_add(own, -covered));
	if (*carry < period_ns)
		return 0; /* (a negative carry stays whole) */
	int64_t w = *carry / period_ns;
	*carry -= w * period_ns;
	return w;
}

/* The forked children that never had an image (see above), at
 * [unsampled]: a process that ended before any sample reached it; under
 * the call that forked it when its word told that (ring.h RING_FORKED). */
static void credit_unimaged(struct profile *p, const struct images *set, const struct told *t,
                            size_t nt, const struct proc *v, size_t np, int64_t period_ns,
                            int64_t *carry)
{
	struct forked_words *words = forked_words(set);
	uint64_t *locs = NULL, unsampled = 0;
	size_t cap = 0;
	for (size_t i = 0; i < nt; i++) {
		const struct proc *parent = t[i].parent ? proc_of(v, np, t[i].parent) : NULL;
		const uint64_t *path = NULL;
		size_t npath = 0;
		if (!t[i].pid || !parent || parent->cut ||
		    (!t[i].pidns && proc_of(v, np, t[i].pid)) ||
		    find_in((struct told *)t, nt, t[i].pidns, t[i].pid) != &t[i] ||
		    !forked_ended_unsampled(words, t[i].pidns, t[i].pid, &path, &npath))
			continue; /* not one of ours, or it became a program no
			           * agent entered (then its time is no exit) */
		int64_t w = periods_owed(&t[i], 0, period_ns, carry);
		if (!w)
			continue;
		if (npath + 1 > cap) {
			cap = npath + 1;
			locs = prof_xrealloc(locs, cap, sizeof *locs);
		}
		if (!unsampled)
			unsampled = record_marker_location(p, RING_PC_UNSAMPLED);
		locs[0] = unsampled;
		for (size_t k = 0; k < npath; k++)
			locs[1 + k] = path[k];
		/* on its pid: in a namespace not ours, its number there (the
		 * pid we would see is not known), as its threads' are shown */
		const struct image *im = &set->v[parent->last];
		prof_add_sample(p, locs, 1 + npath, w, t[i].pid, t[i].pid, im->comm, im->comm);
	}
	free(locs);
	forked_words_free(words);
}

void record_credit_exits(struct profile *p, const struct images *set, int64_t period_ns,
                         uint32_t root, uint64_t root_ns, uint64_t root_children_ns,
                         int children)
{
	size_t nt, np;
	struct told *t = collect(set, root, root_ns, &nt);
	struct told *top = find(t, nt, root);
	if (top && top->children_ns < root_children_ns)
		top->children_ns = root_children_ns; /* reaps no agent could tell */
	struct proc *v = processes(set, &np);
	int64_t carry = 0;
	uint64_t loc = 0;
	/* one listing of the directory rather than three lookups a process
	 * (726 system calls on a build) when, as mostly, none was left out */
	int some_left = record_count_left(set->dir) > 0;
	for (size_t i = 0; i < np; i++) {
		const struct told *me = find(t, nt, v[i].pid);
		if (!me || v[i].cut || v[i].execed ||
		    (some_left && record_left_out(set->dir, v[i].pid)))
			continue; /* nobody told us its total, or it was not all sampled */
		int64_t w = periods_owed(me, v[i].accounted, period_ns, &carry);
		if (!w)
			continue;
		if (!loc)
			loc = record_marker_location(p, RING_PC_EXIT);
		/* on its main thread, under its last image's name */
		const struct image *last = &set->v[v[i].last];
		uint32_t main_tid = last->ns_pid ? last->ns_pid : last->pid;
		prof_add_sample(p, &loc, 1, w, last->pid, last->pid, image_thread_name(last, main_tid),
		                last->comm);
	}
	if (children)
		credit_unimaged(p, set, t, nt, v, np, period_ns, &carry);
	free(v);
	free(t);
}
