// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A new configuration over the managed processes: those whose rule
 * stays keep it (under its new index), the others are restored, except
 * threads set by hand; cgroups likewise.  The full scan that follows
 * matches everything against the new rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

static int rule_by_name(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].name, name))
			return (int)i;
	return -1;
}

/* Rule old_rule of m->cfg as it is in cfg (index), or -1: changed or gone. */
static int same_rule(const struct mgr *m, unsigned int old_rule,
		     const struct config *cfg)
{
	const struct rule *old = &m->cfg->rules[old_rule];
	int nr = rule_by_name(cfg, old->name);

	return nr >= 0 && rule_equal(old, &cfg->rules[nr]) ? nr : -1;
}

/*
 * After a reload, a process with hand-set threads whose rule changed
 * keeps them: find its rule under the new config, or let it go without
 * touching those threads.
 */
static void rematch_hand(struct mgr *m, struct managed *e)
{
	int rule = -1;

	if (mgr_snap_open(m, e->node.pid) == 0 &&
	    m->snap->st.starttime == e->starttime)
		rule = mgr_match(m);
	mgr_snap_close(m->snap);
	if (rule < 0) {
		mgr_drop(m, e);
		return;
	}
	e->rule = (unsigned int)rule;
	m->rules[rule].nprocs++;
}

/* Cgroups of changed or removed rules get back what they had. */
static void reload_cgroups(struct mgr *m, const struct config *cfg)
{
	size_t ncg = 0;

	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		int nr = same_rule(m, c->rule, cfg);

		if (nr >= 0) {
			c->rule = (unsigned int)nr;
			m->cgs[ncg++] = *c;
			continue;
		}
		mgr_cg_restore(m, c);
		mgr_cg_entry_free(c);
	}
	m->ncgs = ncg;
}

/*
 * Processes under a rule that cfg changes or removes leave it, restored;
 * those with hand-set threads come back as a list (kept off the table),
 * to be matched again under cfg.  Counts go to rules, cfg's per-rule
 * state.
 */
static struct managed *reload_procs(struct mgr *m, const struct config *cfg,
				    struct mgr_rule *rules)
{
	struct managed *keep = NULL;
	struct pidnode *n, *next;
	unsigned long i = 0;

	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		const char *old = m->cfg->rules[e->rule].name, *why;
		int nr = same_rule(m, e->rule, cfg);
		int pfd;

		mgr_tick(m, i++);
		if (nr >= 0) {
			/* Unchanged rule: keep it, under its new index. */
			m->rules[e->rule].nprocs--;
			e->rule = (unsigned int)nr;
			rules[nr].nprocs++;
			continue;
		}
		why = rule_by_name(cfg, old) < 0 ? "rule removed"
						 : "rule changed";
		pfd = mgr_open_same(m, e);
		if (pfd < 0)
			continue;
		if (!e->own.nhand) {
			mgr_unmanage(m, e, pfd, why);
			close(pfd);
			continue;
		}
		/* Ours back to inherit; the hand-set ones stay. */
		log_info("pid %d leaves rule '%s' (%s); threads set by hand "
			 "keep their masks",
			 e->node.pid, old, why);
		mgr_restore_proc(m, e, pfd);
		close(pfd);
		owned_keep_hand(&e->own);
		/* Off the table until the new config is in place. */
		m->rules[e->rule].nprocs--;
		pidtable_del(&m->procs, &e->node);
		e->node.next = keep ? &keep->node : NULL;
		keep = e;
	}
	return keep;
}

int mgr_reload(struct mgr *m, const struct config *cfg)
{
	struct managed *keep;
	struct mgr_rule *rules;

	if (config_rules_equal(m->cfg, cfg)) {
		/* What was decided under these rules stands. */
		m->cfg = cfg;
		return 1;
	}
	rules = mgr_rules_new(cfg, m->cfg, m->rules);
	if (!rules)
		return -ENOMEM;
	mgr_scan_abort(m);
	reload_cgroups(m, cfg);
	/* Events queued under the old rules are covered by the full scan. */
	dirtyq_clear(&m->dirty);
	keep = reload_procs(m, cfg, rules);
	free(m->rules);
	m->rules = rules;
	m->cfg = cfg;
	while (keep) {
		struct managed *e = keep;

		keep = as_managed(e->node.next);
		pidtable_add(&m->procs, &e->node);
		rematch_hand(m, e);
	}
	/* The rules changed: what matched nothing may match now. */
	pidtable_clear(&m->others);
	container_forget_left(&m->ctr);
	/* If /proc cannot be opened now, the next rescan tries again. */
	mgr_scan_start(m, SCAN_FULL);
	return 0;
}
