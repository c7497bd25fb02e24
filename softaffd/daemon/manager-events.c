// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proc connector events: each marks its pid dirty (dirtyq.c), with why;
 * exits and the forks of unmanaged parents are plain bookkeeping, done
 * at once.  mgr_flush() evaluates the queue oldest first, each pid once
 * however many events it got.
 */
#include <stdlib.h>
#include <string.h>

#include "manager-internal.h"

static void mark(struct mgr *m, int pid, unsigned int why,
		 unsigned int inherit)
{
	if (dirtyq_mark(&m->dirty, pid, why, inherit) < 0) {
		/* No memory for the queue: do it now instead. */
		m->exec_fresh_ns = monotonic_ns();
		mgr_eval_now(m, pid, why, inherit, WALK_NEW);
	}
}

void mgr_on_exec(struct mgr *m, int pid)
{
	mark(m, pid, D_EXEC, 0);
}

void mgr_on_change(struct mgr *m, int pid)
{
	mark(m, pid, D_EVAL, 0);
}

void mgr_on_uid(struct mgr *m, int pid)
{
	mark(m, pid, D_EVAL | D_UID, 0);
}

void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid)
{
	struct managed *e;

	if (child_pid != child_tgid) {
		/*
		 * A new thread: with threads = "all" the process level the
		 * kernel gave it is the rule's already; with "main" it has
		 * the main thread's request, to reset.
		 */
		e = mgr_lookup(m, child_tgid);
		if (e && !(e->flags & (M_IGNORED | M_CGROUP)) &&
		    m->cfg->rules[e->rule].threads == THREADS_MAIN)
			mark(m, child_tgid, D_THREADS, 0);
		return;
	}
	/*
	 * A forked child has its parent's comm, exe, cmdline, uid and
	 * cgroup, so it can only match if the parent did.  Skipping the
	 * rest keeps fork storms cheap; exec and comm events re-evaluate.
	 */
	e = mgr_lookup(m, parent_tgid);
	if (e) {
		if (!mgr_book_child(m, e, child_tgid))
			mark(m, child_tgid, D_EVAL | D_FORKED, e->rule + 1);
	} else if (mgr_other_lookup(m, parent_tgid)) {
		struct other *p = mgr_other_lookup(m, parent_tgid);
		unsigned int inherit = p->inherit;
		struct other *o = mgr_other_add(m, child_tgid);

		if (o) {
			mgr_other_reset_free(o);
			*o = (struct other){.node = o->node, .seen = m->gen};
			snprintf(o->comm, sizeof(o->comm), "%s", p->comm);
			o->inherit = inherit;
		}
	}
}

void mgr_on_exit(struct mgr *m, int pid, int tgid)
{
	struct managed *e = mgr_lookup(m, tgid);

	if (pid != tgid) {
		if (e) {
			bool was = managed_hand(e);

			owned_forget(&e->own, pid);
			mgr_hand_note(m, e, was);
		}
		return;
	}
	if (e)
		mgr_drop(m, e);
	mgr_other_del(m, tgid);
	dirtyq_remove(&m->dirty, tgid);
}

static void reset_more(struct mgr *m, int pid)
{
	struct other *o = mgr_other_lookup(m, pid);

	if (o && mgr_reset_more(m, o, MGR_WALK_CAP) &&
	    dirtyq_mark(&m->dirty, pid, D_RESET, 0) < 0)
		while (mgr_reset_more(m, o, UINT_MAX))
			;
}

bool mgr_flush(struct mgr *m, uint64_t deadline_ms)
{
	struct dirty d;

	/* Every exec evaluated here happened before this. */
	m->exec_fresh_ns = monotonic_ns();
	while (dirtyq_pop(&m->dirty, &d)) {
		/* New threads only: the rest of the process is known. */
		if (d.why & ~(unsigned int)(D_RATIO | D_RESET))
			mgr_eval_now(m, d.node.pid,
				     d.why & ~(unsigned int)(D_RATIO | D_RESET),
				     d.inherit,
				     d.why & (D_EVAL | D_EXEC | D_UID) ? WALK_ALL
									: WALK_NEW);
		/* Its rule's new ratio, if it is still under one. */
		if (d.why & D_RATIO)
			mgr_apply_rule_ratio(m, d.node.pid);
		/* The rest of its threads' reset, a cap at a time. */
		if (d.why & D_RESET)
			reset_more(m, d.node.pid);
		if (now_ms() >= deadline_ms)
			break;
	}
	return !dirtyq_count(&m->dirty);
}

void mgr_on_events_lost(struct mgr *m)
{
	m->cnt.events_lost++;
}

size_t mgr_dirty_count(const struct mgr *m)
{
	return dirtyq_count(&m->dirty);
}

void mgr_on_event(struct mgr *m, const struct pc_event *e)
{
	m->cnt.events++;
	switch (e->kind) {
	case PC_FORK:
		mgr_on_fork(m, e->parent_tgid, e->pid, e->tgid);
		break;
	case PC_EXEC:
		mgr_on_exec(m, e->tgid);
		break;
	case PC_COMM:
		/* A non-leader's comm is only that thread's. */
		if (e->pid == e->tgid)
			mgr_on_change(m, e->tgid);
		break;
	case PC_UID:
		mgr_on_uid(m, e->tgid);
		break;
	case PC_EXIT:
		mgr_on_exit(m, e->pid, e->tgid);
		break;
	default:
		break;
	}
}
