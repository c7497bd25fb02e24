// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writes.  threads = "all": the rule's mask as the process's own
 * request (/proc/PID/soft_affinity_list), one write that every thread,
 * present and future, and every forked child inherits; what it read
 * before is kept and written back on restore.  The threads are read only
 * to find those with a request of their own (hand-set: the thread level
 * comes first, and is left alone).  threads = "main": the mask on the
 * main thread, the others reset.  And the rule's ratio as the process's
 * soft_affinity_ratio.  affinity.c reads, decides and writes one file;
 * this is the policy around it: which level, what to log, when a
 * process stops being managed.  The threads, their walks and the
 * hand-set ones are manager-threads.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "log.h"
#include "manager-internal.h"

/*
 * The process's own ratio request as the status of this evaluation
 * tells it (manager-eval.c's snap_learn()), or NULL: read the file.
 * Unset (inherit or "none") decides one thing without the value: a
 * first write of want, none of ours before, is due whichever it is.
 * The one case the status cannot tell apart, the main thread's own
 * ratio "none" hiding a process ratio that is want already, gets a
 * write that changes nothing instead of a read; in every other the
 * decision is the one the read would give.
 */
static const struct ratio_req *ratio_known(const struct snap *s,
					   const struct ratio *ours,
					   const struct ratio *want)
{
	static const struct ratio_req unset = {REQ_INHERIT, {0, 0}};

	if (!s || s->ratio_hint == SNAP_RATIO_READ)
		return NULL;
	if (s->ratio_hint == SNAP_RATIO_KNOWN)
		return &s->ratio;
	return want && !ours->allowed ? &unset : NULL;
}

/*
 * The rule's ratio as the process's own soft_affinity_ratio: one write
 * for all its threads, later ones included.  want NULL: restore.
 */
/*
 * A starting daemon's rule (L7): the ratio the process has of its own
 * counts for the rung its rule resumes at, read only if the status of
 * this evaluation did not tell it.
 */
static void resume_note(struct mgr_rule *mr, struct mgr_proc p)
{
	const struct snap *s = p.snap;
	struct ratio_req cur;

	if (s && s->ratio_hint == SNAP_RATIO_KNOWN)
		cur = s->ratio;
	else if ((s && s->ratio_hint == SNAP_RATIO_UNSET) ||
		 aff_read_ratio(p.plug, p.pfd, &cur) < 0)
		return;
	if (cur.state == REQ_SET)
		ratio_tally_add(&mr->found, cur.value);
}

void mgr_apply_ratio(struct mgr *m, struct managed *e,
		     const struct mgr_target *t, struct mgr_proc p,
		     const struct ratio *want)
{
	const struct rule *rule = t->r;
	struct snap *s = p.snap;
	enum aff_result res;
	char comm[128];
	int err;

	if (!m->have_proc_ratio) {
		/* An older kernel is supported: a notice, not a warning. */
		if (want && !m->proc_ratio_logged)
			log_msg(LOG_NOTICE,
				"this kernel has no %s/PID/soft_affinity_ratio: "
				 "rules' softness is not applied, the "
				 "sysctls' ratio is in force for them",
				 m->roots.proc);
		m->proc_ratio_logged = true;
		return;
	}
	if (e->flags & (M_RATIO_FOREIGN | M_IGNORED))
		return;
	if (want && t->mr->resuming) {
		resume_note(t->mr, p);
		return;
	}
	if (!want && !e->ratio_ours.allowed)
		return;
	res = aff_apply_ratio(p.plug, p.pfd,
			      ratio_known(p.snap, &e->ratio_ours, want),
			      &e->ratio_ours, want, m->dry_run, &err);
	/* Written (or tried): what the status said of it is past. */
	if (s && res != AFF_UNCHANGED && res != AFF_FOREIGN)
		s->ratio_hint = SNAP_RATIO_READ;
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.ratio_written++;
		if (want)
			log_debug("%sset soft_affinity_ratio of %d to %u:%u "
				  "(rule '%s')",
				  m->dry_run ? "dry-run: would " : "",
				  e->node.pid, want->allowed, want->preferred,
				  rule->name);
		/* fall through */
	case AFF_UNCHANGED:
		if (!m->dry_run)
			e->ratio_ours = want ? *want : (struct ratio){0, 0};
		break;
	case AFF_FOREIGN:
		m->cnt.foreign++;
		if (want) {
			log_msg(mgr_target_prio(t),
				"pid %d (%s): soft_affinity_ratio set by hand; "
				"leaving it alone until it execs (rule '%s')",
				e->node.pid,
				procfs_escape(e->comm, comm, sizeof(comm)),
				rule->name);
			e->flags |= M_RATIO_FOREIGN;
		}
		break;
	case AFF_GONE:
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR))
			log_msg(mgr_target_warn(t, RULE_WARN_ERROR),
				"pid %d: soft_affinity_ratio: %s", e->node.pid,
				strerror(-err));
		e->flags |= M_WARNED_ERROR;
		break;
	}
}

/*
 * The process's parent, as its snapshot s read it (none: not known), if
 * we manage it under a rule with target.
 */
static struct managed *managed_parent(struct mgr *m, const struct managed *e,
				      const struct snap *s,
				      const struct cpuset *target)
{
	struct managed *p;

	if (!s || s->pid != e->node.pid || s->pfd < 0)
		return NULL;
	p = mgr_lookup(m, s->st.ppid);
	if (!p || p == e || !(p->flags & M_PROC_OURS) || !p->proc_ours ||
	    !cpuset_equal(p->proc_ours, target))
		return NULL;
	return p;
}

/*
 * threads = "all": the rule's CPUs as the process's own request, one
 * write.  Adopting it (first pass, exec, SIGUSR1) takes whatever is
 * there, and keeps what was there for restore: exactly as read, except
 * the rule's own CPUs, which are ours already (a child inherits its
 * managed parent's request on fork): for those, what the parent had
 * before us, or inherit.  Later a request other than ours is someone
 * else's: left alone, logged, listed as hand-managed.  An adoption
 * reads the status, and *ret_threads is how many threads it counts
 * (0: not known), for the walk that follows.
 */
static bool apply_process(struct mgr *m, struct managed *e,
			  const struct mgr_target *t, struct mgr_proc p,
			  unsigned int *ret_threads)
{
	const struct cpuset *target = &t->r->cpus;
	struct cpureq cur, orig = {.state = REQ_INHERIT},
			   want = {.state = REQ_SET, .cpus = *target};
	bool adopt = !(e->flags & M_ADOPTED) || !(e->flags & M_PROC_OURS);
	struct pstatus ps;
	enum aff_result res = AFF_UNCHANGED;
	enum aff_proc_action act;
	struct managed *parent;
	bool was;
	int err = 0, r;

	if (e->flags & M_PROC_HAND)
		return true;
	r = aff_read_soft_mode(p.plug, p.pfd, 0, m->aff_mode, &cur);
	if (r < 0)
		return mgr_note_result(m, e, t, 0, aff_classify(r), r);
	if (adopt) {
		/* The hard mask of the main thread: a whole process pinned away. */
		r = mgr_read_pstatus(p.snap, p.pfd, &ps);
		if (r < 0)
			return mgr_note_result(m, e, t, 0, aff_classify(r), r);
		/* A zombie leader does not count, the threads left do. */
		*ret_threads = ps.state != 'Z' ? ps.threads : 0;
	}
	/*
	 * proc_ours is only compared with what the level reads: a set that
	 * cannot be interned (no memory) leaves the old one, and the next
	 * evaluation sees the level as ours or as someone else's.
	 */
	act = aff_decide_process(adopt, &cur, adopt ? &ps.hard : NULL, target,
				 e->proc_ours);
	switch (act) {
	case AFF_PROC_KEEP:
		(void)setpool_assign(&m->sets, &e->proc_ours, target);
		return mgr_note_result(m, e, t, 0, AFF_UNCHANGED, 0);
	case AFF_PROC_RETARGET:
		res = m->dry_run ? AFF_WRITTEN
				 : aff_write_soft(p.plug, p.pfd, 0, &want, &err);
		if (res == AFF_WRITTEN && !m->dry_run)
			(void)setpool_assign(&m->sets, &e->proc_ours, target);
		return mgr_note_result(m, e, t, 0, res, err);
	case AFF_PROC_HAND:
		was = managed_hand(e);
		e->flags |= M_PROC_HAND;
		mgr_hand_note(m, e, was);
		e->flags &= ~(unsigned int)M_HAND_LOGGED;
		mgr_log_hand(m, e, t, p, 0);
		return true;
	case AFF_PROC_EMPTY:
		return mgr_note_result(m, e, t, 0, AFF_EMPTY, 0);
	case AFF_PROC_TAKE:
		/* The rule's CPUs are a managed parent's, copied by fork. */
		parent = managed_parent(m, e, p.snap, target);
		if (parent)
			orig = cpureq_of_ref(&parent->proc_orig);
		break;
	case AFF_PROC_ADOPT:
		orig = cur;
		break;
	}
	/*
	 * Taken again after an exec or SIGUSR1: the first orig stays.  Kept
	 * before the write: a level taken without it could not be restored.
	 */
	if (!m->dry_run && !(e->flags & M_PROC_OURS)) {
		r = setpool_req_set(&m->sets, &e->proc_orig, &orig);
		if (r < 0)
			return mgr_note_result(m, e, t, 0, aff_classify(r), r);
	}
	if (act == AFF_PROC_ADOPT) {
		res = AFF_WRITTEN;
		if (!m->dry_run)
			res = aff_write_soft(p.plug, p.pfd, 0, &want, &err);
	}
	if (!m->dry_run && (res == AFF_WRITTEN || res == AFF_UNCHANGED)) {
		(void)setpool_assign(&m->sets, &e->proc_ours, target);
		e->flags |= M_PROC_OURS;
	}
	return mgr_note_result(m, e, t, 0, res, err);
}

void mgr_apply_proc(struct mgr *m, struct managed *e,
		    const struct mgr_target *t, struct mgr_proc p, enum walk walk)
{
	const struct rule *rule = t->r;
	bool all = rule->threads == THREADS_ALL;
	/* Adopted again (exec, SIGUSR1): its process level was ours. */
	bool retake = !(e->flags & M_ADOPTED) && (e->flags & M_PROC_OURS);
	unsigned int nthreads = 0;

	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	if (!(e->flags & M_ADOPTED))
		walk = WALK_ALL;
	/* New threads inherit the process level: nothing to chase. */
	if (all && walk == WALK_NEW)
		walk = WALK_NONE;
	if (walk == WALK_NONE && !e->walk)
		return;
	if (walk == WALK_ALL && (!e->walk || !e->walk->all)) {
		/* A walk starts: the process level and the ratio first. */
		if (all && !apply_process(m, e, t, p, &nthreads)) {
			mgr_walk_free(e);
			return;
		}
		mgr_apply_ratio(m, e, t, p, &t->mr->ratio);
		if (e->flags & M_IGNORED)
			return;
	}
	if (!mgr_walk_threads(m, e, t, p, walk, MGR_WALK_CAP, retake,
			      nthreads)) {
		/* The rest in a later flush, behind those waiting now. */
		if (dirtyq_mark(&m->dirty, e->node.pid, D_THREADS, 0) < 0)
			mgr_walk_threads(m, e, t, p, walk, UINT_MAX, retake,
					 0);
		else
			return;
	}
	if (!(e->flags & M_IGNORED))
		e->flags |= M_ADOPTED;
}

/* threads = "all": give the process level back what it had before us. */
static void restore_process(struct mgr *m, struct managed *e,
			    struct mgr_proc p)
{
	const struct cpuset *target = e->proc_ours;
	struct cpureq cur, orig = cpureq_of_ref(&e->proc_orig);
	enum aff_result res;
	char buf[CPUSET_LIST_BUFSZ];
	int err;

	if (!(e->flags & M_PROC_OURS) || (e->flags & M_PROC_HAND))
		return;
	if (aff_read_soft(p.plug, p.pfd, 0, &cur) < 0)
		return;
	if (!target ||
	    !(cur.state == REQ_SET && cpuset_equal(&cur.cpus, target))) {
		m->cnt.foreign++;
		log_debug("%d: soft affinity of the process changed by someone "
			  "else, left alone",
			  e->node.pid);
		return;
	}
	res = m->dry_run ? AFF_WRITTEN
			 : aff_write_soft(p.plug, p.pfd, 0, &orig, &err);
	if (res != AFF_WRITTEN)
		return;
	if (!m->dry_run)
		e->flags &= ~(unsigned int)M_PROC_OURS; /* let go */
	m->cnt.restored++;
	if (cpureq_format(&orig, true, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "?");
	log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
		"%sreset soft affinity of %d to %s", m->dry_run ? "dry-run: would " : "",
		e->node.pid, e->proc_orig.state == REQ_INHERIT ? "inherit" : buf);
}

void mgr_apply_rule_ratio(struct mgr *m, int pid)
{
	struct managed *e = mgr_lookup(m, pid);
	struct mgr_target t;
	int pfd;

	if (!e || (e->flags & (M_CGROUP | M_IGNORED)))
		return;
	t = mgr_target(m, e->rule);
	pfd = mgr_open_same(m, e);
	if (pfd < 0)
		return;
	mgr_apply_ratio(m, e, &t, mgr_proc_fd(pfd), &t.mr->ratio);
	close(pfd);
}

struct twalk *mgr_restore_proc(struct mgr *m, struct managed *e,
			       const struct mgr_target *t, struct mgr_proc p,
			       unsigned int cap)
{
	struct twalk *rest = NULL;

	if (e->flags & (M_IGNORED | M_CGROUP))
		return NULL;
	mgr_walk_free(e);
	restore_process(m, e, p);
	if (t->r->threads == THREADS_MAIN)
		rest = mgr_restore_threads(m, e, t, p, cap);
	mgr_apply_ratio(m, e, t, p, NULL);
	return rest;
}

/* Start over with e: adopt all its threads on the next apply. */
void mgr_readopt_proc(struct mgr *m, struct managed *e)
{
	bool was = managed_hand(e);

	owned_clear(&e->own);
	mgr_walk_free(e);
	e->ratio_ours = (struct ratio){0, 0};
	/* M_PROC_OURS stays: proc_orig is what it had before us. */
	e->flags &= ~(unsigned int)(M_ADOPTED | M_HAND_LOGGED | M_IGNORED |
				    M_WARNED_EMPTY | M_WARNED_ERROR |
				    M_RATIO_FOREIGN | M_PROC_HAND);
	mgr_hand_note(m, e, was);
}

struct twalk *mgr_unmanage(struct mgr *m, struct managed *e,
			   const struct mgr_target *t, struct mgr_proc p,
			   const char *why, unsigned int cap)
{
	struct twalk *rest = NULL;
	char comm[128];

	log_msg(mgr_target_prio(t), "pid %d (%s) leaves rule '%s' (%s)",
		e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
		t->r->name, why);
	if (p.pfd >= 0)
		rest = mgr_restore_proc(m, e, t, p, cap);
	mgr_drop(m, e);
	return rest;
}


bool mgr_reset_more(struct mgr *m, struct other *o, unsigned int cap)
{
	struct pstat st;
	bool done = true;
	int pfd;

	if (!o->reset || !o->inherit || o->inherit > m->cfg->nrules)
		goto out;
	pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, o->node.pid);
	if (pfd < 0)
		goto out;
	if (procfs_read_stat(NULL, pfd, 0, &st) == 0 && o->starttime &&
	    st.starttime == o->starttime)
		done = mgr_reset_walk(m, o->node.pid, mgr_proc_fd(pfd),
				      &m->cfg->rules[o->inherit - 1].cpus,
				      o->reset, cap);
	close(pfd);
out:
	if (done)
		mgr_other_reset_free(o);
	return !done;
}

void mgr_restore_inherited(struct mgr *m, struct other *o)
{
	const struct cpuset *target;
	struct pstat st;
	int pfd;

	/*
	 * F8: one booked at a fork event was never read (starttime 0): after
	 * a lost exit event its pid may be a stranger's, which nothing here
	 * tells apart.  Left alone; a scan reads it first.
	 */
	if (!o->inherit || o->inherit > m->cfg->nrules || !o->starttime)
		return;
	target = &m->cfg->rules[o->inherit - 1].cpus;
	pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, o->node.pid);
	if (pfd < 0)
		return;
	if (procfs_read_stat(NULL, pfd, 0, &st) < 0 ||
	    st.starttime != o->starttime)
		goto out;
	/* threads = "all": the process level, which fork copies. */
	if (m->cfg->rules[o->inherit - 1].threads == THREADS_ALL) {
		struct cpureq cur;
		int err;

		if (aff_read_soft(NULL, pfd, 0, &cur) == 0 &&
		    cur.state == REQ_SET && cpuset_equal(&cur.cpus, target) &&
		    (m->dry_run ||
		     aff_write_soft(NULL, pfd, 0,
				    &(struct cpureq){.state = REQ_INHERIT},
				    &err) == AFF_WRITTEN))
			m->cnt.restored++;
	}
	mgr_reset_threads(m, o->node.pid, mgr_proc_fd(pfd), target);
out:
	close(pfd);
}
