// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a write came to, counted and logged: the report under the writes
 * of the process level (manager-apply.c) and of the threads
 * (manager-threads.c), and the notice of a request someone else set.
 * It writes nothing and calls no writer.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "affinity.h"
#include "log.h"
#include "manager-internal.h"

/*
 * Count and log what a write to e (tid: one thread, 0: the process
 * level) came to.  False: stop, the process is no longer managed.
 */
bool mgr_note_result(struct mgr *m, struct managed *e,
		     const struct mgr_target *t, int tid, enum aff_result res,
		     int err)
{
	const struct rule *rule = t->r;
	char comm[128], cpus[CPUSET_LIST_BUFSZ], who[64];

	procfs_escape(e->comm, comm, sizeof(comm));
	if (tid)
		snprintf(who, sizeof(who), "%d/%d", e->node.pid, tid);
	else
		snprintf(who, sizeof(who), "%d", e->node.pid);
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		cpuset_format_list(&t->r->cpus, cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED)
				? mgr_target_prio(t)
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
			cpuset_format_list(&t->r->cpus, cpus,
					   sizeof(cpus));
			log_msg(mgr_target_warn(t, RULE_WARN_EMPTY),
				"pid %d (%s): hard affinity excludes all of "
				"%s (rule '%s'), skipped",
				e->node.pid, comm, cpus, rule->name);
			e->flags |= M_WARNED_EMPTY;
		}
		break;
	case AFF_EPERM:
		m->cnt.eperm++;
		log_msg(mgr_target_warn(t, RULE_WARN_EPERM),
			"pid %d (%s): not permitted to set soft affinity "
			"(%s), no longer managing it",
			e->node.pid, comm, strerror(-err));
		e->flags |= M_IGNORED;
		return false;
	case AFF_EINVAL:
		m->cnt.einval++;
		if (!t->mr->einval_warned) {
			cpuset_format_list(&t->r->cpus, cpus,
					   sizeof(cpus));
			log_warn("rule '%s': kernel rejected soft affinity %s "
				 "for %s (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, who, comm);
			t->mr->einval_warned = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_msg(mgr_target_warn(t, RULE_WARN_ERROR),
				"%s: soft affinity: %s", who, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

void mgr_log_hand(struct mgr *m, struct managed *e,
		  const struct mgr_target *t, struct mgr_proc p, int tid)
{
	const struct rule *rule = t->r;
	char comm[128], cpus[CPUSET_LIST_BUFSZ], now[CPUSET_LIST_BUFSZ];
	struct cpureq soft;
	int prio = e->flags & M_HAND_LOGGED ? LOG_DEBUG
					    : mgr_target_prio(t);

	m->cnt.hand++;
	if (aff_read_soft(p.plug, p.pfd, tid, &soft) < 0 ||
	    cpureq_format(&soft, true, now, sizeof(now)) < 0)
		snprintf(now, sizeof(now), "?");
	cpuset_format_list(&t->r->cpus, cpus, sizeof(cpus));
	if (tid)
		log_msg(prio,
			"pid %d (%s): soft affinity of thread %d set by hand "
			"to %s (rule '%s' wants %s); leaving %s alone until "
			"it execs",
			e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
			tid, now, rule->name, cpus,
			e->flags & M_HAND_LOGGED ? "that thread"
						 : "such threads");
	else
		log_msg(prio,
			"pid %d (%s): soft affinity of the process set by hand "
			"to %s (rule '%s' wants %s); leaving it alone until it "
			"execs",
			e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
			now, rule->name, cpus);
	e->flags |= M_HAND_LOGGED;
}
