// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A new configuration over the managed processes and cgroups, in one
 * step (mgr_reload): every managed process is matched again against the
 * new rules where it stands, from what the manager knows of it (its
 * comm; the process is opened only when a rule needs more).  One whose
 * preference stays the same (mask, threads, ratio) is not touched; one
 * whose preference changes gets the new one written over ours; only one
 * that matches nothing any more is restored.  So a process that both
 * configurations manage never goes without a preference in between.
 * Processes that were not managed are the scan's: the daemon keeps a
 * full scan in progress and schedules one more after it (mgr_recheck),
 * as for SIGUSR1's re-adoption (mgr_forget_hand).
 *
 * The work is bounded by the managed processes: one pass over them, in
 * memory for those the new rules decide by comm, and the writes of those
 * whose preference changed (no more than the restores the reload used
 * to do before re-applying them later); the watchdog's tick runs every
 * few dozen processes, and a long thread walk goes on from the dirty
 * queue (mgr_apply_proc).  Unsliced, so nothing is ever half-switched.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

/* A cgroup entry no process claimed under the new rules (yet). */
#define CG_UNCLAIMED UINT_MAX

/* Both configurations and their per-rule state, while a reload runs. */
struct reload {
	const struct config *old_cfg, *cfg;
	struct mgr_rule *old_rules, *rules;
	int *map; /* old rule -> the same rule in cfg, or -1 (config_rule_map) */
	/* [old * new rules]: old's room went into new's (move()) */
	unsigned char *roomed;
	unsigned int kept, written, restored, gone;
};

static int rule_by_name(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].name, name))
			return (int)i;
	return -1;
}

/*
 * A rule of cfg with old_rule's mask, the same rule first: what a child
 * queued as carrying old_rule's mask carries under cfg.  -1: none.
 */
static int rule_with_mask(const struct reload *rl, unsigned int old_rule)
{
	int nr = rl->map[old_rule];

	for (unsigned int i = 0; nr < 0 && i < rl->cfg->nrules; i++)
		if (cpuset_equal(&rl->cfg->rules[i].cpus,
				 &rl->old_cfg->rules[old_rule].cpus))
			nr = (int)i;
	return nr;
}

/*
 * The target of a write (manager-internal.h): rule of the old
 * configuration, for what is restored; of the new one, for what is
 * written.  m->cfg stays the old configuration until the end.
 */
static struct mgr_target old_target(const struct reload *rl,
				    unsigned int rule)
{
	return (struct mgr_target){rule, &rl->old_cfg->rules[rule],
				   &rl->old_rules[rule]};
}

static struct mgr_target new_target(const struct reload *rl, unsigned int rule)
{
	return (struct mgr_target){rule, &rl->cfg->rules[rule],
				   &rl->rules[rule]};
}

/*
 * e (old index) goes under rule nr of the new configuration, and the
 * cgroups of its old rule's processes into nr's room, once per pair of
 * rules (a superset: the side of more room, as before L5).
 */
static void move(struct reload *rl, struct managed *e, unsigned int nr)
{
	unsigned char *done = rl->roomed ? &rl->roomed[e->rule *
							rl->cfg->nrules + nr]
					 : NULL;

	if (done && !*done) {
		mgr_room_merge(&rl->rules[nr].room,
			       &rl->old_rules[e->rule].room);
		*done = 1;
	}
	rl->old_rules[e->rule].nprocs--;
	e->rule = nr;
	rl->rules[nr].nprocs++;
}

/*
 * The rule of the new configuration cfg e's process falls under.
 * From what is known first: the comm it had when last evaluated (a
 * change since is an event of its own, queued).  Only when a rule needs
 * more is the process opened into m->snap (its stat read again, which
 * also tells it is still the same process) and the rest read as the
 * rules ask.  A rule index, RULES_NONE, or -ESRCH: the process is gone.
 */
static int rematch(struct mgr *m, const struct config *cfg,
		   struct managed *e)
{
	struct proc_attrs a = {.loaded = NEED_COMM,
			       .comm = e->comm,
			       .regex_budget = RULES_REGEX_BUDGET};
	unsigned int at = 0, need = 0;
	int r = rules_match_from(cfg, &a, 0, &at, &need);

	if (r != RULES_NEED) {
		m->cnt.cached++;
		return r;
	}
	if (mgr_snap_open(m, e->node.pid) < 0 ||
	    !mgr_same_process(m, e, &m->snap->st))
		return -ESRCH;
	return mgr_match(m, cfg);
}

/* Does rule nr (new) ask of e's process what its rule (old) asked? */
static bool same_preference(const struct reload *rl, const struct managed *e,
			    unsigned int nr)
{
	const struct rule *o = &rl->old_cfg->rules[e->rule];
	const struct rule *n = &rl->cfg->rules[nr];

	if ((e->flags & M_CGROUP) && rl->rules[nr].cg_mode)
		/* The same rule: its cgroup and that entry stay as they are. */
		return rl->map[e->rule] == (int)nr &&
		       ratio_equal(rl->old_rules[e->rule].ratio,
				   rl->rules[nr].ratio);
	if ((e->flags & M_CGROUP) || rl->rules[nr].cg_mode)
		return false;
	return cpuset_equal(&o->cpus, &n->cpus) && o->threads == n->threads &&
	       ratio_equal(rl->old_rules[e->rule].ratio,
			   rl->rules[nr].ratio);
}

/*
 * e's process (open at pfd) takes rule nr's preference, written over
 * ours thread by thread: no restore in between.  Hand-set threads stay
 * as they are.  A new mask is adopted afresh (every thread not set by
 * hand takes it); a new ratio alone checks the masks as ours.
 */
static void retarget(struct mgr *m, struct reload *rl, struct managed *e,
		     struct mgr_proc p, unsigned int nr)
{
	struct mgr_target ot = old_target(rl, e->rule), nt = new_target(rl, nr);
	const struct rule *o = ot.r, *n = nt.r;
	bool was_cg = e->flags & M_CGROUP;
	char comm[128];

	if (!was_cg && o->threads != n->threads) {
		/*
		 * Another level carries the mask (the process's, or each
		 * thread's): ours at the old one goes first, and the apply
		 * right after sets the new one.
		 */
		mgr_restore_proc(m, e, &ot, p, UINT_MAX);
		owned_keep_hand(&e->own);
	}
	mgr_walk_free(e); /* a walk in progress was for the old rule */
	if (was_cg || !cpuset_equal(&o->cpus, &n->cpus) ||
	    o->threads != n->threads)
		e->flags &= ~(unsigned int)M_ADOPTED;
	e->flags &= ~(unsigned int)M_CGROUP;
	log_debug("pid %d (%s): rule '%s' -> '%s', a new preference",
		  e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
		  o->name, n->name);
	move(rl, e, nr);
	mgr_apply_proc(m, e, &nt, p, WALK_ALL);
	rl->written++;
}

/*
 * Rule nr acts on cgroups: the cgroup of e's process (m->snap, open)
 * takes its preference; the threads of a process that had masks of ours
 * are reset after that, so they follow the cgroup's new value at once.
 * False: the cgroup cannot take it (the threads then do).
 */
static bool to_cgroup(struct mgr *m, struct reload *rl, struct managed *e,
		      unsigned int nr)
{
	struct mgr_target ot = old_target(rl, e->rule), nt = new_target(rl, nr);

	if (m->snap->pfd < 0 || !mgr_cg_eval(m, m->snap, &nt))
		return false;
	if (!(e->flags & M_CGROUP)) {
		mgr_restore_proc(m, e, &ot, mgr_proc_snap(m->snap), UINT_MAX);
		owned_keep_hand(&e->own);
		e->flags &= ~(unsigned int)M_ADOPTED;
		e->flags |= M_CGROUP;
	}
	move(rl, e, nr);
	rl->written++;
	return true;
}

/*
 * One managed process under the new rules.  m->cfg and m->rules are
 * the old ones throughout: e's rule is an old index until move().
 */
static void reload_proc(struct mgr *m, struct reload *rl, struct managed *e)
{
	struct mgr_target ot;
	struct mgr_proc p;
	bool opened;
	int nr;

	mgr_snap_close(m->snap);
	nr = rematch(m, rl->cfg, e);
	if (nr == -ESRCH) {
		rl->gone++;
		mgr_drop(m, e);
		return;
	}
	opened = m->snap->pfd >= 0;
	if (nr >= 0 && ((e->flags & M_IGNORED) ||
			same_preference(rl, e, (unsigned int)nr))) {
		/* Nothing to write: the next evaluation takes it as it is. */
		move(rl, e, (unsigned int)nr);
		rl->kept++;
		return;
	}
	if (nr >= 0 && rl->rules[nr].cg_mode && opened &&
	    to_cgroup(m, rl, e, (unsigned int)nr))
		return;
	/* The snapshot rematch() read, or a bare fd: nothing read yet. */
	p = opened ? mgr_proc_snap(m->snap) : mgr_proc_fd(mgr_open_same(m, e));
	if (p.pfd < 0) {
		rl->gone++;
		return;
	}
	if (nr >= 0) {
		retarget(m, rl, e, p, (unsigned int)nr);
	} else {
		rl->restored++;
		ot = old_target(rl, e->rule);
		mgr_unmanage(m, e, &ot, p,
			     rule_by_name(rl->cfg, rl->old_cfg->rules[e->rule]
							   .name) < 0
				     ? "rule removed; matches no rule now"
				     : "matches no rule now",
			     UINT_MAX);
	}
	if (!opened)
		close(p.pfd);
}

/*
 * The cgroups after the processes: one a process claimed (mgr_cg_apply
 * gave it its new rule) keeps it; one whose rule is unchanged keeps that;
 * the others get back what they had, now that the threads of their
 * processes have their new masks.
 */
static void reload_cgroups(struct mgr *m, const struct reload *rl,
			   const unsigned int *old_rule, size_t nold)
{
	size_t ncg = 0;

	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		int nr = k < nold && c->rule == CG_UNCLAIMED
				 ? rl->map[old_rule[k]]
				 : (int)c->rule;

		if (nr >= 0) {
			c->rule = (unsigned int)nr;
			m->cgs[ncg++] = *c;
			continue;
		}
		mgr_cg_restore(m, c);
		mgr_cg_entry_free(m, c);
	}
	m->ncgs = ncg;
}

/*
 * The processes that matched no rule: what matched nothing may match now,
 * so each is evaluated again by the next scan (recheck).  Those that
 * carry a managed parent's mask (inherit) stay known, so that a stop
 * still resets it: under the rule of cfg with the same CPUs; a mask no
 * rule of cfg has any more is reset now, while m is on the old side.
 */
static void reload_others(struct mgr *m, const struct reload *rl)
{
	struct pidnode *n, *next;
	unsigned long i = 0;

	pidtable_for_each (&m->others, n, next) {
		struct other *o = (struct other *)n;
		int nr = o->inherit && o->inherit <= rl->old_cfg->nrules
				 ? rule_with_mask(rl, o->inherit - 1)
				 : -1;

		if (o->inherit && nr < 0)
			mgr_restore_inherited(m, o);
		if (nr < 0) {
			mgr_other_remove(m, o);
			continue;
		}
		o->inherit = (unsigned int)nr + 1;
		o->recheck = true;
		mgr_tick(m, i++);
	}
}

/* Queued forks carry their parent's mask: under its index in cfg now. */
static void reload_dirty(struct mgr *m, const struct reload *rl)
{
	for (struct dirty *d = m->dirty.head; d; d = d->next) {
		int nr = d->inherit && d->inherit <= rl->old_cfg->nrules
				 ? rule_with_mask(rl, d->inherit - 1)
				 : -1;

		d->inherit = nr >= 0 ? (unsigned int)nr + 1 : 0;
	}
}

int mgr_reload(struct mgr *m, const struct config *cfg)
{
	struct reload rl = {.old_cfg = m->cfg, .cfg = cfg,
			    .old_rules = m->rules};
	struct pidnode *n, *next;
	unsigned int *old_rule;
	size_t nold = m->ncgs;
	unsigned long i = 0;

	if (config_rules_equal(m->cfg, cfg)) {
		/* What was decided under these rules stands. */
		m->cfg = cfg;
		return 1;
	}
	rl.map = calloc(m->cfg->nrules ? m->cfg->nrules : 1, sizeof(*rl.map));
	old_rule = calloc(nold ? nold : 1, sizeof(*old_rule));
	if (rl.map) {
		config_rule_map(m->cfg, cfg, rl.map);
		rl.rules = mgr_rules_new(cfg, m->rules, rl.map, m->cfg->nrules);
	}
	if (!rl.map || !rl.rules || !old_rule) {
		free(rl.map);
		free(rl.rules);
		free(old_rule);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nold; k++) {
		old_rule[k] = m->cgs[k].rule;
		m->cgs[k].rule = CG_UNCLAIMED;
	}
	/* Without it, a changed rule's room is unknown until evaluations. */
	rl.roomed = calloc((size_t)m->cfg->nrules * cfg->nrules + 1, 1);
	/* m stays on the old side but for the moments it writes. */
	pidtable_for_each (&m->procs, n, next) {
		reload_proc(m, &rl, as_managed(n));
		mgr_snap_close(m->snap);
		mgr_tick(m, i++);
	}
	reload_cgroups(m, &rl, old_rule, nold);
	free(old_rule);
	reload_dirty(m, &rl);
	reload_others(m, &rl);
	free(rl.roomed);
	free(rl.map);
	free(m->rules);
	m->cfg = cfg;
	m->rules = rl.rules;
	m->status_gen++; /* rules renumbered */
	/* The notes of which rule left which container alone: by index. */
	container_forget_left(&m->ctr);
	log_info("reload: %u managed processes keep their preference, %u "
		 "take a new one, %u matched no rule and were restored, %u "
		 "were gone",
		 rl.kept, rl.written, rl.restored, rl.gone);
	return 0;
}
