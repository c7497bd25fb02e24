// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A managed process's threads.  threads = "all": the process level
 * (manager-apply.c) decides for every thread without a request of its
 * own; a thread with one is hand-set, left alone, logged and listed.
 * threads = "main": the rule's mask on the main thread, the others
 * reset.  A walk of a process's threads is capped per evaluation
 * (MGR_WALK_CAP) and goes on in later flushes, so that a process with
 * 10,000 threads delays no one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "log.h"
#include "manager-internal.h"

/*
 * threads = "main": apply the rule to one thread.  Returns false to
 * stop visiting further threads of the process.
 */
static bool apply_one(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p, int tid)
{
	struct mthread *th = owned_find(&e->own, tid);
	enum aff_claim claim;
	enum aff_result res;
	int err;

	if (th && th->hand)
		return true;
	/* A dry run never takes a mask, so it has none to lose either. */
	claim = m->dry_run || !(e->flags & M_ADOPTED) ? AFF_ADOPT
		: th				      ? AFF_OURS
						      : AFF_NEW;
	bool was = managed_hand(e);

	res = aff_apply_thread(p.plug, p.pfd, tid, &t->r->cpus, claim,
			       m->aff_mode, &err);
	procsnap_wrote_thread(p.snap);
	if (res == AFF_WRITTEN || res == AFF_UNCHANGED)
		owned_remember(&e->own, tid, false);
	else if (res == AFF_FOREIGN)
		owned_remember(&e->own, tid, true);
	mgr_hand_note(m, e, was);
	if (res == AFF_FOREIGN) {
		mgr_log_hand(m, e, t, p, tid);
		return true;
	}
	return mgr_note_result(m, e, t, tid, res, err);
}

bool mgr_reset_thread(struct mgr *m, int pid, struct mgr_proc p, int tid,
		      const struct cpuset *target)
{
	enum aff_result res;
	int err;

	res = aff_restore_thread(p.plug, p.pfd, tid, target, m->aff_mode,
				 &err);
	procsnap_wrote_thread(p.snap);
	if (res == AFF_WRITTEN) {
		m->cnt.restored++;
		log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
			"%sreset soft affinity of %d/%d to inherit",
			m->dry_run ? "dry-run: would " : "", pid, tid);
	} else if (res == AFF_FOREIGN) {
		m->cnt.foreign++;
		log_debug("%d/%d: soft affinity changed by someone else, left "
			  "alone",
			  pid, tid);
	} else if (res == AFF_EPERM) {
		return false;
	}
	return true;
}

static bool restore_one(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p, int tid)
{
	struct mthread *th = owned_find(&e->own, tid);

	if (th && th->hand)
		return true;
	return mgr_reset_thread(m, e->node.pid, p, tid, &t->r->cpus);
}

/*
 * threads = "main": the other threads get no mask from us; one they
 * inherited from the main thread (the kernel copies it on clone) is
 * reset, unless someone set it by hand.
 */
static bool unset_other(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p, int tid)
{
	if (owned_find(&e->own, tid))
		return true; /* already met: reset then, or hand-set */
	if (!mgr_reset_thread(m, e->node.pid, p, tid,
			      &t->r->cpus))
		return false;
	/* Remembered as ours-and-reset: not looked at again. */
	owned_remember(&e->own, tid, false);
	return true;
}

/*
 * threads = "all": the process level decides for every thread without
 * a request of its own.  A thread with one is hand-set: left alone,
 * logged and listed.  Re-adoption (exec, SIGUSR1: retake) takes such
 * requests back, to inherit, as it takes back the process level.  One
 * that asks for exactly the rule's CPUs when the process is adopted is
 * a leftover of ours (an older softaffd, or the main thread of a
 * threads = "main" rule it was forked from): it goes back to inherit
 * too, so that restoring the process level is enough.
 */
static bool check_thread(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p, int tid,
			 bool adopt, bool retake)
{
	const struct cpuset *target = &t->r->cpus;
	struct mthread *th = owned_find(&e->own, tid);
	const struct snap *s = p.snap;
	struct cpureq req;
	bool was;
	int r;

	if (th && th->hand)
		return true;
	/*
	 * The main thread's status, read for this evaluation, says the
	 * process or the cgroup decides its mask: it has none of its own.
	 */
	if (tid == e->node.pid && s && s->leader_inherits)
		return true;
	/* Without the feature (a dry run): it reads as inheriting, below. */
	r = aff_read_soft_mode(p.plug, p.pfd, tid, m->aff_mode, &req);
	if (r < 0) {
		if (aff_classify(r) == AFF_GONE)
			m->cnt.gone++;
		else
			mgr_note_result(m, e, t, tid, aff_classify(r), r);
		return true;
	}
	if (req.state == REQ_INHERIT)
		return true;
	if (adopt && (retake || (req.state == REQ_SET &&
				 cpuset_equal(&req.cpus, target)))) {
		const struct cpureq inherit = {.state = REQ_INHERIT};
		int err = 0;
		enum aff_result res =
			m->dry_run ? AFF_WRITTEN
				   : aff_write_soft(p.plug, p.pfd, tid, &inherit,
						  &err);

		procsnap_wrote_thread(p.snap);
		if (res == AFF_WRITTEN) {
			m->cnt.written++;
			log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
				"%sreset soft affinity of %d/%d to inherit: "
				"the process's applies",
				m->dry_run ? "dry-run: would " : "",
				e->node.pid, tid);
			return true;
		}
		return mgr_note_result(m, e, t, tid, res, err);
	}
	if (m->dry_run)
		return true; /* took nothing, so nothing was taken back */
	was = managed_hand(e);
	owned_remember(&e->own, tid, true);
	mgr_hand_note(m, e, was);
	mgr_log_hand(m, e, t, p, tid);
	return true;
}

/* Visit one thread as the rule's threads mode asks. */
static bool visit_one(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p, int tid,
		      const struct twalk *w)
{
	if (t->r->threads == THREADS_ALL)
		return check_thread(m, e, t, p, tid, w->adopt, w->retake);
	if (tid == e->node.pid)
		return apply_one(m, e, t, p, tid);
	return unset_other(m, e, t, p, tid);
}

/* A walk of the threads task/ lists now, sorted; NULL: none to do. */
static struct twalk *walk_list(struct mgr *m, int pfd)
{
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	struct twalk *w;

	if (n < 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->tids = malloc(((size_t)n ? (size_t)n : 1) * sizeof(int));
	if (!w->tids) {
		free(w);
		return NULL;
	}
	memcpy(w->tids, m->tids, (size_t)n * sizeof(int));
	qsort(w->tids, (size_t)n, sizeof(int), cmp_int);
	w->n = (unsigned int)n;
	return w;
}

/*
 * Go on with e's thread walk (WALK_ALL: every thread, WALK_NEW: those
 * not met before), at most cap threads of it.  Starts one if none is in
 * progress; one that is, of new threads only, starts over when all are
 * asked for.  The walk also forgets the threads it did not meet: they
 * have exited.  True when the walk is complete (or cannot be done);
 * false: more to do (e->walk).
 */
bool mgr_walk_threads(struct mgr *m, struct managed *e,
		 const struct mgr_target *t, struct mgr_proc p,
		      enum walk walk, unsigned int cap, bool retake,
		      unsigned int nthreads)
{
	int leader = e->node.pid;
	struct twalk *w, one;
	unsigned int visited = 0;
	bool was;

	if (e->walk && walk == WALK_ALL && !e->walk->all)
		mgr_walk_free(e);
	w = e->walk;
	if (!w) {
		if (nthreads == 1) {
			/*
			 * Its status counts one thread, the leader: all
			 * an exec leaves.  task/ is not listed, no walk
			 * allocated, and cap is at least one.
			 */
			one = (struct twalk){.tids = &leader, .n = 1};
			w = &one;
		} else {
			w = walk_list(m, p.pfd);
			if (!w)
				return true;
			e->walk = w;
		}
		w->all = walk == WALK_ALL;
		w->adopt = !(e->flags & M_ADOPTED);
		w->retake = w->adopt && retake;
	}
	while (w->next < w->n) {
		int tid = w->tids[w->next];

		if (visited >= cap)
			return false;
		w->next++;
		if (!w->all && owned_find(&e->own, tid))
			continue;
		visited++;
		if (!visit_one(m, e, t, p, tid, w)) {
			mgr_walk_free(e);
			return true; /* EPERM: no longer managed */
		}
		mgr_tick(m, visited);
	}
	was = managed_hand(e);
	owned_prune(&e->own, w->tids, w->n);
	mgr_hand_note(m, e, was);
	mgr_walk_free(e);
	return true;
}

struct twalk *mgr_restore_threads(struct mgr *m, struct managed *e,
				  const struct mgr_target *t, struct mgr_proc p,
				  unsigned int cap)
{
	int n = procfs_read_tids(p.pfd, &m->tids, &m->tids_cap), i;
	struct twalk *rest = NULL;

	for (i = 0; i < n && (unsigned int)i < cap; i++) {
		if (!restore_one(m, e, t, p, m->tids[i]))
			return NULL;
		mgr_tick(m, (unsigned long)i);
	}
	if (i < n) {
		rest = calloc(1, sizeof(*rest));
		if (rest)
			rest->tids = malloc((size_t)(n - i) * sizeof(int));
	}
	if (rest && rest->tids) {
		/* Hand-set ones are known only here: left out of the rest. */
		for (; i < n; i++) {
			struct mthread *th = owned_find(&e->own, m->tids[i]);

			if (!th || !th->hand)
				rest->tids[rest->n++] = m->tids[i];
		}
		return rest;
	}
	/* No memory to put the rest off: do it now. */
	if (rest)
		free(rest);
	for (; i < n; i++) {
		if (!restore_one(m, e, t, p, m->tids[i]))
			break;
		mgr_tick(m, (unsigned long)i);
	}
	return NULL;
}

bool mgr_reset_walk(struct mgr *m, int pid, struct mgr_proc p,
		    const struct cpuset *target, struct twalk *w,
		    unsigned int cap)
{
	for (unsigned int k = 0; k < cap && w->next < w->n; k++) {
		if (!mgr_reset_thread(m, pid, p, w->tids[w->next++], target))
			return true;
		mgr_tick(m, k);
	}
	return w->next >= w->n;
}

void mgr_reset_threads(struct mgr *m, int pid, struct mgr_proc p,
		       const struct cpuset *target)
{
	int n = procfs_read_tids(p.pfd, &m->tids, &m->tids_cap);

	for (int i = 0; i < n; i++)
		if (!mgr_reset_thread(m, pid, p, m->tids[i], target))
			break;
}
