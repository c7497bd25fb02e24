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
 * Count and log what a write to e (tid: one thread, 0: the process
 * level) came to.  False: stop, the process is no longer managed.
 */
bool mgr_note_result(struct mgr *m, struct managed *e, int tid,
		     enum aff_result res, int err)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	char comm[128], cpus[CPUSET_LIST_BUFSZ], who[64];

	procfs_escape(e->comm, comm, sizeof(comm));
	if (tid)
		snprintf(who, sizeof(who), "%d/%d", e->node.pid, tid);
	else
		snprintf(who, sizeof(who), "%d", e->node.pid);
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		cpuset_format_list(rule_target(m, e->rule), cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED)
				? mgr_rule_prio(m, e->rule)
				: LOG_DEBUG,
			"%sset soft affinity of %s (%s) to %s (rule '%s')",
			m->dry_run ? "dry-run: would " : "", who, comm, cpus,
			rule->name);
		e->flags |= M_LOGGED;
		break;
	case AFF_UNCHANGED:
		m->cnt.unchanged++;
		break;
	case AFF_FOREIGN:
		break;
	case AFF_GONE:
		m->cnt.gone++;
		break;
	case AFF_RT:
		m->cnt.rt++;
		break;
	case AFF_EMPTY:
		m->cnt.empty++;
		if (!(e->flags & M_WARNED_EMPTY)) {
			cpuset_format_list(rule_target(m, e->rule), cpus,
					   sizeof(cpus));
			log_msg(mgr_warn_prio(m, e->rule, RULE_WARN_EMPTY),
				"pid %d (%s): hard affinity excludes all of "
				"%s (rule '%s'), skipped",
				e->node.pid, comm, cpus, rule->name);
			e->flags |= M_WARNED_EMPTY;
		}
		break;
	case AFF_EPERM:
		m->cnt.eperm++;
		log_msg(mgr_warn_prio(m, e->rule, RULE_WARN_EPERM),
			"pid %d (%s): not permitted to set soft affinity "
			"(%s), no longer managing it",
			e->node.pid, comm, strerror(-err));
		e->flags |= M_IGNORED;
		return false;
	case AFF_EINVAL:
		m->cnt.einval++;
		if (!m->rules[e->rule].einval_warned) {
			cpuset_format_list(rule_target(m, e->rule), cpus,
					   sizeof(cpus));
			log_warn("rule '%s': kernel rejected soft affinity %s "
				 "for %s (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, who, comm);
			m->rules[e->rule].einval_warned = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_msg(mgr_warn_prio(m, e->rule, RULE_WARN_ERROR),
				"%s: soft affinity: %s", who, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

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
static const struct ratio_req *ratio_known(struct mgr *m, int pfd,
					   const struct ratio *ours,
					   const struct ratio *want)
{
	static const struct ratio_req unset = {REQ_INHERIT, {0, 0}};
	const struct snap *s = mgr_snap_of(m, pfd);

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
static void apply_ratio(struct mgr *m, struct managed *e, int pfd,
			const struct ratio *want)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	struct snap *s = mgr_snap_of(m, pfd);
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
	if (!want && !e->ratio_ours.allowed)
		return;
	res = aff_apply_ratio(pfd, ratio_known(m, pfd, &e->ratio_ours, want),
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
			log_msg(mgr_rule_prio(m, e->rule),
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
			log_msg(mgr_warn_prio(m, e->rule, RULE_WARN_ERROR),
				"pid %d: soft_affinity_ratio: %s", e->node.pid,
				strerror(-err));
		e->flags |= M_WARNED_ERROR;
		break;
	}
}

/* The process's parent, if we manage it under a rule with target. */
static struct managed *managed_parent(struct mgr *m, const struct managed *e,
				      const struct cpuset *target)
{
	struct managed *p;

	if (m->snap->pid != e->node.pid || m->snap->pfd < 0)
		return NULL;
	p = mgr_lookup(m, m->snap->st.ppid);
	if (!p || p == e || !(p->flags & M_PROC_OURS) ||
	    !cpuset_equal(&p->proc_ours, target))
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
static bool apply_process(struct mgr *m, struct managed *e, int pfd,
			  unsigned int *ret_threads)
{
	const struct cpuset *target = rule_target(m, e->rule);
	struct cpureq cur, orig,
		want = {.state = REQ_SET, .cpus = *target};
	bool adopt = !(e->flags & M_ADOPTED) || !(e->flags & M_PROC_OURS);
	bool ours;
	struct pstatus ps;
	enum aff_result res = AFF_UNCHANGED;
	int err = 0, r;

	if (e->flags & M_PROC_HAND)
		return true;
	r = aff_read_soft(pfd, 0, &cur);
	if (r == -ENOENT && aff_missing_is_off) {
		cur = (struct cpureq){.state = REQ_INHERIT};
		r = 0;
	}
	if (r < 0)
		return mgr_note_result(m, e, 0, aff_classify(r), r);
	ours = cur.state == REQ_SET && cpuset_equal(&cur.cpus, target);
	if (!adopt) {
		bool was = managed_hand(e);

		if (ours) {
			e->proc_ours = *target;
			return mgr_note_result(m, e, 0, AFF_UNCHANGED, 0);
		}
		if (cur.state == REQ_SET &&
		    cpuset_equal(&cur.cpus, &e->proc_ours)) {
			/* Still ours, of a rule whose CPUs changed. */
			res = m->dry_run ? AFF_WRITTEN
					 : aff_write_soft(pfd, 0, &want, &err);
			if (res == AFF_WRITTEN && !m->dry_run)
				e->proc_ours = *target;
			return mgr_note_result(m, e, 0, res, err);
		}
		e->flags |= M_PROC_HAND;
		mgr_hand_note(m, e, was);
		e->flags &= ~(unsigned int)M_HAND_LOGGED;
		mgr_log_hand(m, e, pfd, 0);
		return true;
	}
	/* The hard mask of the main thread: a whole process pinned away. */
	r = mgr_read_pstatus(m, pfd, &ps);
	if (r < 0)
		return mgr_note_result(m, e, 0, aff_classify(r), r);
	/* A zombie leader does not count, the threads left do. */
	*ret_threads = ps.state != 'Z' ? ps.threads : 0;
	if (!cpuset_intersects(target, &ps.hard))
		return mgr_note_result(m, e, 0, AFF_EMPTY, 0);
	orig = cur;
	if (ours) {
		struct managed *p = managed_parent(m, e, target);

		orig = p ? p->proc_orig : (struct cpureq){.state = REQ_INHERIT};
	}
	if (!ours) {
		res = AFF_WRITTEN;
		if (!m->dry_run)
			res = aff_write_soft(pfd, 0, &want, &err);
	}
	if (!m->dry_run && (res == AFF_WRITTEN || res == AFF_UNCHANGED)) {
		/* Taken again after an exec or SIGUSR1: the first orig stays. */
		if (!(e->flags & M_PROC_OURS))
			e->proc_orig = orig;
		e->proc_ours = *target;
		e->flags |= M_PROC_OURS;
	}
	return mgr_note_result(m, e, 0, res, err);
}

void mgr_apply_proc(struct mgr *m, struct managed *e, int pfd,
		    enum walk walk)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
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
		if (all && !apply_process(m, e, pfd, &nthreads)) {
			mgr_walk_free(e);
			return;
		}
		apply_ratio(m, e, pfd, &m->rules[e->rule].st.ratio);
		if (e->flags & M_IGNORED)
			return;
	}
	if (!mgr_walk_threads(m, e, pfd, walk, MGR_WALK_CAP, retake,
			      nthreads)) {
		/* The rest in a later flush, behind those waiting now. */
		if (dirtyq_mark(&m->dirty, e->node.pid, D_THREADS, 0) < 0)
			mgr_walk_threads(m, e, pfd, walk, UINT_MAX, retake, 0);
		else
			return;
	}
	if (!(e->flags & M_IGNORED))
		e->flags |= M_ADOPTED;
}

/* threads = "all": give the process level back what it had before us. */
static void restore_process(struct mgr *m, struct managed *e, int pfd)
{
	const struct cpuset *target = &e->proc_ours;
	struct cpureq cur;
	enum aff_result res;
	char buf[CPUSET_LIST_BUFSZ];
	int err;

	if (!(e->flags & M_PROC_OURS) || (e->flags & M_PROC_HAND))
		return;
	if (aff_read_soft(pfd, 0, &cur) < 0)
		return;
	if (!(cur.state == REQ_SET && cpuset_equal(&cur.cpus, target))) {
		m->cnt.foreign++;
		log_debug("%d: soft affinity of the process changed by someone "
			  "else, left alone",
			  e->node.pid);
		return;
	}
	res = m->dry_run ? AFF_WRITTEN
			 : aff_write_soft(pfd, 0, &e->proc_orig, &err);
	if (res != AFF_WRITTEN)
		return;
	if (!m->dry_run)
		e->flags &= ~(unsigned int)M_PROC_OURS; /* let go */
	m->cnt.restored++;
	if (cpureq_format(&e->proc_orig, true, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "?");
	log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
		"%sreset soft affinity of %d to %s", m->dry_run ? "dry-run: would " : "",
		e->node.pid, e->proc_orig.state == REQ_INHERIT ? "inherit" : buf);
}

void mgr_restore_proc(struct mgr *m, struct managed *e, int pfd)
{
	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	mgr_walk_free(e);
	restore_process(m, e, pfd);
	if (m->cfg->rules[e->rule].threads == THREADS_MAIN)
		mgr_restore_threads(m, e, pfd);
	apply_ratio(m, e, pfd, NULL);
}

/*
 * Open e's process directory for a batch (reload, restore) and check it
 * is still the same process.  The fd, or -1 (then e was dropped).
 */
int mgr_open_same(struct mgr *m, struct managed *e)
{
	struct pstat st;
	int pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, e->node.pid);

	if (pfd >= 0 && procfs_read_stat(pfd, 0, &st) == 0 &&
	    mgr_same_process(m, e, &st))
		return pfd;
	if (pfd >= 0)
		close(pfd);
	mgr_drop(m, e);
	return -1;
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

void mgr_unmanage(struct mgr *m, struct managed *e, int pfd,
		  const char *why)
{
	char comm[128];

	log_msg(mgr_rule_prio(m, e->rule), "pid %d (%s) leaves rule '%s' (%s)",
		e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
		m->cfg->rules[e->rule].name, why);
	if (pfd >= 0)
		mgr_restore_proc(m, e, pfd);
	mgr_drop(m, e);
}

size_t mgr_readopt(struct mgr *m)
{
	size_t had = mgr_forget_hand(m);

	mgr_scan_start(m, SCAN_FULL);
	return had;
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
	target = rule_target(m, o->inherit - 1);
	pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, o->node.pid);
	if (pfd < 0)
		return;
	if (procfs_read_stat(pfd, 0, &st) < 0 || st.starttime != o->starttime)
		goto out;
	/* threads = "all": the process level, which fork copies. */
	if (m->cfg->rules[o->inherit - 1].threads == THREADS_ALL) {
		struct cpureq cur;
		int err;

		if (aff_read_soft(pfd, 0, &cur) == 0 && cur.state == REQ_SET &&
		    cpuset_equal(&cur.cpus, target) &&
		    (m->dry_run ||
		     aff_write_soft(pfd, 0, &(struct cpureq){.state = REQ_INHERIT},
				    &err) == AFF_WRITTEN))
			m->cnt.restored++;
	}
	mgr_reset_threads(m, o->node.pid, pfd, target);
out:
	close(pfd);
}

void mgr_restore_all(struct mgr *m)
{
	struct pidnode *n, *next;
	unsigned long i = 0;

	mgr_scan_abort(m);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		int pfd = mgr_open_same(m, e);

		if (pfd >= 0) {
			mgr_restore_proc(m, e, pfd);
			close(pfd);
		}
		mgr_tick(m, i++);
	}
	pidtable_for_each (&m->others, n, next) {
		mgr_restore_inherited(m, (struct other *)n);
		mgr_tick(m, i++);
	}
	for (size_t k = 0; k < m->ncgs; k++)
		mgr_cg_restore(m, &m->cgs[k]);
}

unsigned int mgr_set_rule_ratio(struct mgr *m, unsigned int rule,
				struct ratio ratio)
{
	uint64_t before = m->cnt.ratio_written + m->cnt.cg_written;
	struct pidnode *n, *next;
	unsigned long i = 0;

	m->rules[rule].st.ratio = ratio;
	for (size_t k = 0; k < m->ncgs; k++)
		if (m->cgs[k].rule == rule)
			mgr_cg_apply(m, rule, m->cgs[k].path);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		int pfd;

		if (e->rule != rule || (e->flags & (M_CGROUP | M_IGNORED)))
			continue;
		pfd = mgr_open_same(m, e);
		if (pfd < 0)
			continue;
		apply_ratio(m, e, pfd, &ratio);
		close(pfd);
		mgr_tick(m, i++);
	}
	return (unsigned int)(m->cnt.ratio_written + m->cnt.cg_written -
			      before);
}

