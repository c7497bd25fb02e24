// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The manager's facade, at the top of its files: its lifetime, and what
 * the daemon asks of all of it at once (stop: restore everything; a
 * rule's new ratio; SIGUSR1's re-adoption; a full scan again).  Nothing
 * in the manager calls it.  How an event travels through the manager:
 * manager-internal.h; its state and tables: manager-state.c.
 *
 * Ownership of masks: the first pass over a process (at start, when it
 * appears, after exec) adopts it.  threads = "all": its process level
 * (/proc/PID/soft_affinity_list, which every thread shares) is taken,
 * what it read kept for restore, and it stays ours while it reads what
 * we wrote; a thread's own request, which comes first, is the thread's
 * (hand-set).  threads = "main": the main thread's own request, ours
 * while it reads the mask we set.  A request someone else changes after
 * us is hand-managed and left alone, until the process execs or the
 * admin asks for re-adoption (SIGUSR1).  Restoring only touches what is
 * still ours: the process level gets back what it had, a thread
 * "inherit".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

void mgr_set_tick(struct mgr *m, void (*tick)(void *userdata),
		  void *userdata)
{
	m->hooks.tick = tick;
	m->hooks.userdata = userdata;
}

struct mgr *mgr_new(const struct roots *roots, const struct config *cfg,
		    enum aff_mode mode, const struct mgr_hooks *hooks)
{
	struct mgr *m = calloc(1, sizeof(*m));
	char path[PATH_MAX];

	if (!m)
		return NULL;
	m->proc_fd = -1;
	m->roots = *roots;
	m->cfg = cfg;
	m->aff_mode = mode;
	m->dry_run = aff_mode_dry(mode);
	if (hooks)
		m->hooks = *hooks;
	m->snap = calloc(1, sizeof(*m->snap));
	/* Before any way out: mgr_free closes an open snapshot's fd. */
	if (m->snap)
		m->snap->pfd = -1;
	m->rules = mgr_rules_new(cfg, NULL, NULL, 0);
	if (!m->snap || !m->rules || pidtable_init(&m->procs) ||
	    pidtable_init(&m->others) || dirtyq_init(&m->dirty)) {
		mgr_free(m);
		return NULL;
	}
	/*
	 * Every evaluation opens <proc>/PID: through this, a lookup of one
	 * name.  Without it (an error), by the whole path as before.
	 */
	m->proc_fd = open(roots->proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/self/soft_affinity_ratio",
		 roots->proc);
	m->have_proc_ratio = access(path, F_OK) == 0;
	return m;
}

void mgr_free(struct mgr *m)
{
	struct pidnode *n, *next;

	if (!m)
		return;
	mgr_scan_abort(m);
	if (m->snap)
		mgr_snap_close(m->snap);
	if (m->procs.buckets)
		pidtable_for_each (&m->procs, n, next)
			mgr_drop(m, as_managed(n));
	if (m->others.buckets)
		pidtable_for_each (&m->others, n, next)
			mgr_other_remove(m, (struct other *)n);
	pidtable_done(&m->procs);
	pidtable_done(&m->others);
	dirtyq_done(&m->dirty);
	for (size_t i = 0; i < m->ncgs; i++)
		mgr_cg_entry_free(m, &m->cgs[i]);
	setpool_done(&m->sets); /* after all that holds its sets */
	free(m->cgs);
	container_cache_free(&m->ctr);
	free(m->rules);
	free(m->snap);
	free(m->tids);
	if (m->proc_fd >= 0)
		close(m->proc_fd);
	free(m);
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
			struct mgr_target t = mgr_target(m, e->rule);

			mgr_restore_proc(m, e, &t, mgr_proc_fd(pfd), UINT_MAX);
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

/*
 * The cgroups of the rule (a few) are written now; its processes (any
 * number: each an open and a write) go through the dirty queue
 * (D_RATIO), a slice at a time within the evaluations' budget, as a
 * walk's rest does, so that a soften or harden step of a rule with
 * 10,000 processes does not hold the loop for a second.
 */
unsigned int mgr_set_rule_ratio(struct mgr *m, unsigned int rule,
				struct ratio ratio)
{
	struct mgr_target t = mgr_target(m, rule);
	uint64_t before = m->cnt.cg_written;
	struct pidnode *n, *next;
	unsigned int queued = 0;

	t.mr->ratio = ratio;
	t.mr->resuming = false; /* what the processes had is past (L7) */
	for (size_t k = 0; k < m->ncgs; k++)
		if (m->cgs[k].rule == rule)
			mgr_cg_apply(m, &t, m->cgs[k].path, NULL);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);

		if (e->rule != rule || (e->flags & (M_CGROUP | M_IGNORED)))
			continue;
		/* No memory for the queue: write it now. */
		if (dirtyq_mark(&m->dirty, n->pid, D_RATIO, 0) < 0)
			mgr_apply_rule_ratio(m, n->pid);
		else
			queued++;
	}
	return (unsigned int)(m->cnt.cg_written - before) + queued;
}

size_t mgr_forget_hand(struct mgr *m)
{
	size_t had = m->nhand_procs;
	struct pidnode *n, *next;

	pidtable_for_each (&m->procs, n, next)
		mgr_readopt_proc(m, as_managed(n));
	return had;
}

int mgr_recheck(struct mgr *m)
{
	int r;

	if (mgr_scan_busy_with(m, SCAN_FULL))
		return 1;
	r = mgr_scan_start(m, SCAN_FULL);
	return r < 0 ? r : 0;
}

void mgr_resume_start(struct mgr *m)
{
	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		if (m->cfg->rules[r].softness.kind == SOFT_ADAPTIVE)
			m->rules[r].resuming = true;
}

bool mgr_rule_found(const struct mgr *m, unsigned int r,
		    struct ratio_tally *ret)
{
	*ret = m->rules[r].found;
	return m->rules[r].resuming;
}
