// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writes: a rule's mask on each thread of a managed process (or
 * "inherit" back, to restore), and its ratio as the process's
 * soft_affinity_ratio.  affinity.c reads, decides and writes one file;
 * this is the policy around it: which threads, what to log, when a
 * process stops being managed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "log.h"
#include "manager-internal.h"

static void log_hand(struct mgr *m, struct managed *e, int pfd, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	char comm[128], cpus[CPUSET_LIST_BUFSZ], now[CPUSET_LIST_BUFSZ];
	struct cpureq soft;
	int prio = e->flags & M_HAND_LOGGED ? LOG_DEBUG
					    : mgr_rule_prio(m, e->rule);

	m->cnt.hand++;
	if (aff_read_soft(pfd, tid, &soft) < 0 ||
	    cpureq_format(&soft, true, now, sizeof(now)) < 0)
		snprintf(now, sizeof(now), "?");
	cpuset_format_list(rule_target(m, e->rule), cpus, sizeof(cpus));
	log_msg(prio,
		"pid %d (%s): soft affinity of thread %d set by hand to %s "
		"(rule '%s' wants %s); leaving %s alone until it execs",
		e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)), tid,
		now, rule->name, cpus,
		e->flags & M_HAND_LOGGED ? "that thread" : "such threads");
	e->flags |= M_HAND_LOGGED;
}

/*
 * Apply the rule to one thread.  Returns false to stop visiting further
 * threads of the process.
 */
static bool apply_one(struct mgr *m, struct managed *e, int pfd, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	struct mthread *t = owned_find(&e->own, tid);
	char comm[128], cpus[CPUSET_LIST_BUFSZ];
	enum aff_claim claim;
	enum aff_result res;
	int err;

	if (t && t->hand)
		return true;
	/* A dry run never takes a mask, so it has none to lose either. */
	claim = m->dry_run || !(e->flags & M_ADOPTED) ? AFF_ADOPT
		: t				      ? AFF_OURS
						      : AFF_NEW;
	res = aff_apply_thread(pfd, tid, rule_target(m, e->rule), claim,
			       m->dry_run, &err);
	procfs_escape(e->comm, comm, sizeof(comm));
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		m->nhand_procs += owned_remember(&e->own, tid, false);
		cpuset_format_list(rule_target(m, e->rule), cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED)
				? mgr_rule_prio(m, e->rule)
				: LOG_DEBUG,
			"%sset soft affinity of %d/%d (%s) to %s (rule '%s')",
			m->dry_run ? "dry-run: would " : "", e->node.pid, tid,
			comm, cpus, rule->name);
		e->flags |= M_LOGGED;
		break;
	case AFF_UNCHANGED:
		m->cnt.unchanged++;
		m->nhand_procs += owned_remember(&e->own, tid, false);
		break;
	case AFF_FOREIGN:
		m->nhand_procs += owned_remember(&e->own, tid, true);
		log_hand(m, e, pfd, tid);
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
				 "for %d/%d (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, e->node.pid, tid, comm);
			m->rules[e->rule].einval_warned = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_msg(mgr_warn_prio(m, e->rule, RULE_WARN_ERROR),
				"pid %d thread %d: soft affinity: %s",
				e->node.pid, tid, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

/* Undo one thread's request (inherit) if it is still target, ours. */
static bool reset_one(struct mgr *m, int pid, int pfd, int tid,
		      const struct cpuset *target)
{
	enum aff_result res;
	int err;

	res = aff_restore_thread(pfd, tid, target, m->dry_run, &err);
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

static bool restore_one(struct mgr *m, struct managed *e, int pfd, int tid)
{
	struct mthread *t = owned_find(&e->own, tid);

	if (t && t->hand)
		return true;
	return reset_one(m, e->node.pid, pfd, tid, rule_target(m, e->rule));
}

/*
 * threads = "main": the other threads get no mask from us; one they
 * inherited from the main thread (the kernel copies it on clone) is
 * reset, unless someone set it by hand.
 */
static bool unset_other(struct mgr *m, struct managed *e, int pfd, int tid)
{
	if (owned_find(&e->own, tid))
		return true; /* already met: reset then, or hand-set */
	if (!reset_one(m, e->node.pid, pfd, tid, rule_target(m, e->rule)))
		return false;
	/* Remembered as ours-and-reset: not looked at again. */
	m->nhand_procs += owned_remember(&e->own, tid, false);
	return true;
}

typedef bool (*thread_fn)(struct mgr *, struct managed *, int, int);

/*
 * Visit the threads of e (with WALK_NEW only those not met before),
 * calling fn on the main thread and others_fn on the rest.  The visit
 * also forgets the threads it did not meet: they have exited.
 */
static void visit_threads(struct mgr *m, struct managed *e, int pfd,
			  enum walk walk, thread_fn fn, thread_fn others_fn)
{
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		int tid = m->tids[i];
		thread_fn f = tid == e->node.pid ? fn : others_fn;

		if (walk == WALK_NEW && owned_find(&e->own, tid))
			continue;
		if (!f(m, e, pfd, tid))
			return;
		mgr_tick(m, (unsigned long)i);
	}
	qsort(m->tids, (size_t)n, sizeof(*m->tids), cmp_int);
	m->nhand_procs += owned_prune(&e->own, m->tids, (size_t)n);
}

/*
 * The rule's ratio as the process's own soft_affinity_ratio: one write
 * for all its threads, later ones included.  want NULL: restore.
 */
static void apply_ratio(struct mgr *m, struct managed *e, int pfd,
			const struct ratio *want)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
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
	res = aff_apply_ratio(pfd, &e->ratio_ours, want, m->dry_run, &err);
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

void mgr_apply_proc(struct mgr *m, struct managed *e, int pfd,
		    enum walk walk)
{
	const struct rule *rule = &m->cfg->rules[e->rule];

	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	if (!(e->flags & M_ADOPTED))
		walk = WALK_ALL;
	if (walk == WALK_NONE)
		return;
	visit_threads(m, e, pfd, walk, apply_one,
		      rule->threads == THREADS_MAIN ? unset_other : apply_one);
	if (!(e->flags & M_IGNORED) && walk == WALK_ALL)
		apply_ratio(m, e, pfd, &m->rules[e->rule].st.ratio);
	e->flags |= M_ADOPTED;
}

void mgr_restore_proc(struct mgr *m, struct managed *e, int pfd)
{
	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	visit_threads(m, e, pfd, WALK_ALL, restore_one, restore_one);
	apply_ratio(m, e, pfd, NULL);
}

/*
 * Open e's process directory for a batch (reload, restore) and check it
 * is still the same process.  The fd, or -1 (then e was dropped).
 */
int mgr_open_same(struct mgr *m, struct managed *e)
{
	struct pstat st;
	int pfd = procfs_open_pid(m->roots.proc, e->node.pid);

	if (pfd >= 0 && procfs_read_stat(pfd, 0, &st) == 0 &&
	    st.starttime == e->starttime)
		return pfd;
	if (pfd >= 0)
		close(pfd);
	mgr_drop(m, e);
	return -1;
}

/* Start over with e: adopt all its threads on the next apply. */
void mgr_readopt_proc(struct mgr *m, struct managed *e)
{
	m->nhand_procs += owned_clear(&e->own);
	e->ratio_ours = (struct ratio){0, 0};
	e->flags &= ~(unsigned int)(M_ADOPTED | M_HAND_LOGGED | M_IGNORED |
				    M_WARNED_EMPTY | M_WARNED_ERROR |
				    M_RATIO_FOREIGN);
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
	size_t had = m->nhand_procs;
	struct pidnode *n, *next;

	pidtable_for_each (&m->procs, n, next)
		mgr_readopt_proc(m, as_managed(n));
	mgr_scan_start(m, SCAN_FULL);
	return had;
}

/* A child that kept the mask of its managed parent's rule: reset it. */
static void restore_inherited(struct mgr *m, struct other *o)
{
	const struct cpuset *target;
	struct pstat st;
	int n, pfd;

	if (!o->inherit || o->inherit > m->cfg->nrules)
		return;
	target = rule_target(m, o->inherit - 1);
	pfd = procfs_open_pid(m->roots.proc, o->node.pid);
	if (pfd < 0)
		return;
	if (procfs_read_stat(pfd, 0, &st) < 0 ||
	    (o->starttime && st.starttime != o->starttime))
		goto out;
	n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	for (int i = 0; i < n; i++)
		if (!reset_one(m, o->node.pid, pfd, m->tids[i], target))
			break;
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
		restore_inherited(m, (struct other *)n);
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

