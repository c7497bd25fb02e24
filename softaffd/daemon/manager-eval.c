// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Evaluation: gather what the rules ask of one process (its snapshot,
 * procsnap.c), decide which rule it falls under, and
 * hand it to the writes (manager-apply.c) or to its cgroup
 * (manager-cgroup.c).  The match cache spares a process whose start
 * time and comm did not change the reading and matching.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

/* ---- decide: which rule, reading attributes as the rules ask ---- */

int mgr_match(struct mgr *m, const struct config *cfg)
{
	struct snap *s = m->snap;
	unsigned int at = 0, need = 0;
	int r;

	while ((r = rules_match_from(cfg, &s->a, at, &at, &need)) ==
	       RULES_NEED)
		mgr_snap_load(m, need);
	if (s->a.regex_skipped) {
		char comm[128];

		m->cnt.regex_skipped += s->a.regex_skipped;
		log_debug("pid %d (%s): %u cmdline rules skipped: the regex "
			  "work for one process is bounded",
			  s->pid, procfs_escape(s->st.comm, comm, sizeof(comm)),
			  s->a.regex_skipped);
	}
	m->cnt.evals++;
	return r;
}

/*
 * The one check before a rule that matched m->snap is applied: is the
 * process in a container whose annotations set its preference
 * (container.h)?  Then the container's owner stated it, and a task-level
 * write by us would silently override its cgroup's value: the rule
 * leaves it alone.  An exec re-reads marks read before this flush: the
 * hook marks the cgroup after the runtime's init process entered it
 * (which a scan may have met), before the container's first exec.
 */
static bool left_to_container(struct mgr *m, unsigned int why,
			      unsigned int rule)
{
	struct snap *s = m->snap;
	struct container_mark mk;
	char comm[128];

	if (!(s->a.loaded & NEED_CGROUP))
		mgr_snap_load(m, NEED_CGROUP);
	if (!s->a.cgroup ||
	    !container_find(&m->ctr, m->roots.sys, s->a.cgroup, monotonic_ns(),
			    why & D_EXEC ? m->exec_fresh_ns : 0, &mk))
		return false;
	log_msg(container_note_left(&m->ctr, s->a.cgroup, mk.cglen, rule)
			? LOG_INFO
			: LOG_DEBUG,
		"pid %d (%s): its preference is set by the container's "
		"annotations (container %s, cgroup %.*s): rule '%s' leaves it "
		"alone",
		s->pid, procfs_escape(s->st.comm, comm, sizeof(comm)), mk.id,
		(int)mk.cglen, s->a.cgroup, m->cfg->rules[rule].name);
	return true;
}

/*
 * The rest of a capped reset of pid's threads (mgr_unmanage), from the
 * dirty queue behind what waits now (D_RESET); done at once when it
 * cannot be queued.
 */
static void reset_later(struct mgr *m, int pid, struct twalk *rest)
{
	struct other *o = mgr_other_lookup(m, pid);

	if (o) {
		mgr_other_reset_free(o);
		o->reset = rest;
		if (dirtyq_mark(&m->dirty, pid, D_RESET, 0) == 0)
			return;
		while (mgr_reset_more(m, o, UINT_MAX))
			;
		return;
	}
	mgr_twalk_free(&rest);
}

/* s matched no rule: cache that, with the rule whose mask it may carry. */
static void other_set(struct mgr *m, const struct snap *s,
		      unsigned int inherit)
{
	struct other *o = mgr_other_add(m, s->pid);

	if (!o)
		return;
	o->starttime = s->st.starttime;
	snprintf(o->comm, sizeof(o->comm), "%s", s->st.comm);
	o->attrs = mgr_snap_digest(s);
	o->recheck = false;
	if (inherit)
		o->inherit = inherit;
}

/*
 * The match cache: the same process with the same comm, no exec since,
 * is not read and matched again.  True when it answered (and the
 * process was dealt with).
 */
static bool cached(struct mgr *m, struct managed *e, enum walk walk)
{
	struct snap *s = m->snap;
	struct other *o = mgr_other_lookup(m, s->pid);

	if (e && !strcmp(e->comm, s->st.comm)) {
		struct mgr_target t = mgr_target(m, e->rule);

		m->cnt.cached++;
		/*
		 * A rename to the same name (6.1 reports every PR_SET_NAME)
		 * changes nothing: no thread walk.  A walk in progress goes
		 * on; masks set by hand are found by full scans (reload,
		 * SIGUSR1) and exec.
		 */
		mgr_apply_proc(m, e, &t, mgr_proc_snap(s),
			       walk == WALK_ALL ? WALK_NONE : walk);
		return true;
	}
	if (!e && o && !o->recheck && o->starttime == s->st.starttime &&
	    !strcmp(o->comm, s->st.comm)) {
		m->cnt.cached++;
		o->seen = m->gen;
		return true;
	}
	return false;
}

/*
 * A child that a managed process (threads = "all") forked, and that has
 * not exec'd: it has its parent's comm, exe, command line, uid and
 * cgroup, so its parent's rule, and fork copied its parent's process
 * level and ratio, which are ours: nothing to read or write.  What the
 * parent had before us is what the child restores to.  (A child put in
 * another cgroup by clone3(CLONE_INTO_CGROUP) is re-matched by the next
 * rescan that re-reads attributes, as a process moved later is.)  Does
 * p lend its state so?  Not while a walk of its threads is unfinished:
 * what it has is not known yet.
 */
static bool lends_to_child(const struct mgr *m, const struct managed *p)
{
	return m->cfg->rules[p->rule].threads == THREADS_ALL &&
	       !(p->flags & (M_IGNORED | M_CGROUP | M_PROC_HAND)) &&
	       (p->flags & M_ADOPTED) && (p->flags & M_PROC_OURS) && !p->walk;
}

/* Manage pid, a child of p, as p is managed (starttime 0: not read). */
static struct managed *insert_child(struct mgr *m, const struct managed *p,
				    int pid, uint64_t starttime,
				    const char *comm)
{
	struct managed *e = mgr_insert(m, pid, starttime, comm, p->rule);

	if (!e)
		return NULL;
	e->flags = M_ADOPTED | M_LOGGED | M_PROC_OURS |
		   (p->flags & M_RATIO_FOREIGN);
	e->parent = p->node.pid;
	e->attrs = p->attrs; /* fork copied them */
	e->proc_orig = (struct cpureq_ref){p->proc_orig.state,
					   setpool_ref(p->proc_orig.cpus)};
	e->proc_ours = setpool_ref(p->proc_ours);
	e->ratio_ours = p->ratio_ours;
	m->cnt.cached++;
	log_debug("pid %d: forked from %d, rule '%s' as its parent's", pid,
		  p->node.pid, m->cfg->rules[p->rule].name);
	return e;
}

/*
 * At the fork event: the child of p is booked under p's rule there and
 * then, a table insert; its start time is read when something first
 * opens it (mgr_same_process()).  A fork storm of a managed server
 * costs no read of /proc.  Not while p waits in the dirty queue: a
 * rename or an exec of it, which the child shares, is not evaluated
 * yet; then the child is queued behind it and read.  False: it is to
 * be evaluated.
 */
bool mgr_book_child(struct mgr *m, const struct managed *p, int pid)
{
	struct managed *old = mgr_lookup(m, pid);

	if (!lends_to_child(m, p) || dirtyq_find(&m->dirty, p->node.pid))
		return false;
	/* What is known of that pid was of a process whose exit was lost. */
	if (old)
		mgr_drop(m, old);
	dirtyq_remove(&m->dirty, pid);
	return insert_child(m, p, pid, 0, p->comm) != NULL;
}

/*
 * The same when the child was queued instead (its parent was not done
 * yet): read, it must still be the parent's child with its parent's
 * comm.  True when it took the child.
 */
static bool forked_like_parent(struct mgr *m, unsigned int why,
			       unsigned int inherit)
{
	struct snap *s = m->snap;
	struct managed *p;

	if (why != (D_EVAL | D_FORKED) || !inherit)
		return false;
	p = mgr_lookup(m, s->st.ppid);
	if (!p || p->rule != inherit - 1 || strcmp(p->comm, s->st.comm) ||
	    !lends_to_child(m, p))
		return false;
	return insert_child(m, p, s->pid, s->st.starttime, s->st.comm) != NULL;
}

/*
 * The whole way for the process in m->snap: decide which rule, then act.
 * why: D_* bits; attrs: re-read attributes even if the cache says the
 * process is known (cgroup and cmdline change without an event).
 */
void mgr_eval(struct mgr *m, unsigned int why, unsigned int inherit,
	      enum walk walk, bool attrs)
{
	struct snap *s = m->snap;
	struct managed *e = mgr_lookup(m, s->pid);
	struct mgr_target t;
	char comm[128];
	bool ctr;
	int rule;

	if (e && !mgr_same_process(m, e, &s->st)) {
		/*
		 * The pid was reused; the old process is gone.  The new
		 * one comes with its own exec event or the next scan; a
		 * thread event of the old one says nothing about it.
		 */
		mgr_drop(m, e);
		e = NULL;
		if (why == D_THREADS)
			return;
	}
	/* Kernel threads never get soft affinity (the kernel says EINVAL). */
	if (s->st.flags & PF_KTHREAD_BIT) {
		other_set(m, s, 0);
		return;
	}
	if (e)
		e->seen = m->gen;
	if (e && (e->flags & M_IGNORED) && !(why & D_EXEC))
		return;
	if (!attrs && !(why & (D_EXEC | D_UID)) && cached(m, e, walk))
		return;
	if (!e && forked_like_parent(m, why, inherit))
		return;
	rule = mgr_match(m, m->cfg);
	ctr = rule >= 0 && left_to_container(m, why, (unsigned int)rule);
	if (e && !ctr && (why & D_EXEC) && rule == (int)e->rule)
		mgr_readopt_proc(m, e); /* only the leader survives an exec */
	if (rule < 0 || ctr) {
		struct twalk *rest = NULL;

		if (e) {
			t = mgr_target(m, e->rule);
			inherit = e->rule + 1;
			/*
			 * Its owner can make it leave by a rename: a cap on
			 * the threads reset now, the rest from the queue.
			 */
			rest = mgr_unmanage(m, e, &t, mgr_proc_snap(s),
					    ctr ? "its container's annotations "
						  "set its preference"
						: "no longer matches",
					    MGR_WALK_CAP);
		}
		other_set(m, s, inherit);
		if (rest)
			reset_later(m, s->pid, rest);
		return;
	}
	if (e && e->rule != (unsigned int)rule) {
		t = mgr_target(m, e->rule);
		mgr_unmanage(m, e, &t, mgr_proc_snap(s), "matches another rule now",
			     UINT_MAX);
		e = NULL;
	}
	if (!e) {
		e = mgr_insert(m, s->pid, s->st.starttime, s->st.comm,
			       (unsigned int)rule);
		if (!e) {
			log_err("out of memory tracking pid %d", s->pid);
			return;
		}
		/* Children of managed processes: fork storms stay quiet. */
		log_msg(why & D_FORKED ? LOG_DEBUG
				       : mgr_rule_prio(m, (unsigned int)rule),
			"pid %d (%s) matches rule '%s'", s->pid,
			procfs_escape(s->st.comm, comm, sizeof(comm)),
			m->cfg->rules[rule].name);
	}
	snprintf(e->comm, sizeof(e->comm), "%s", s->st.comm);
	e->attrs = mgr_snap_digest(s);
	t = mgr_target(m, (unsigned int)rule);
	/* Its cgroup, read for the container check: its rule's room (L5). */
	mgr_room_note(&t.mr->room, s->a.cgroup);
	if (mgr_cg_eval(m, s, &t))
		e->flags |= M_CGROUP;
	else
		e->flags &= ~(unsigned int)M_CGROUP;
	mgr_apply_proc(m, e, &t, mgr_proc_snap(s), walk);
}

/* A pid that cannot be read any more: forget it. */
static void forget_pid(struct mgr *m, int pid)
{
	struct managed *e = mgr_lookup(m, pid);

	if (e)
		mgr_drop(m, e);
	mgr_other_del(m, pid);
}

void mgr_eval_now(struct mgr *m, int pid, unsigned int why,
		  unsigned int inherit, enum walk walk)
{
	if (mgr_snap_open(m, pid) < 0) {
		forget_pid(m, pid);
		return;
	}
	mgr_eval(m, why, inherit, walk, false);
	mgr_snap_close(m->snap);
}
