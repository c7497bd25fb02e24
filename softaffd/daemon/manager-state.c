// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The manager's state, at the bottom of its files: the tables of
 * processes (managed ones, and those that matched no rule), identity
 * (is this still that process?), per-rule bookkeeping, the rate-limited
 * log lines, and what the status is told.  It calls no other manager
 * file; they all call it.  The flow through the manager:
 * manager-internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

/* Call the tick hook every this many items of a batch (threads, pids). */
#define MGR_TICK_EVERY 64

struct managed *mgr_lookup(const struct mgr *m, int pid)
{
	return as_managed(pidtable_lookup(&m->procs, pid));
}

struct other *mgr_other_lookup(const struct mgr *m, int pid)
{
	return (struct other *)pidtable_lookup(&m->others, pid);
}

void mgr_tick(struct mgr *m, unsigned long i)
{
	if (m->hooks.tick && i % MGR_TICK_EVERY == MGR_TICK_EVERY - 1)
		m->hooks.tick(m->hooks.userdata);
}

/* Lines about one process of rule: rate-limited (rulelog.h). */
int mgr_rule_prio(struct mgr *m, unsigned int rule)
{
	return rule_log_info(&m->rules[rule].log, m->cfg->rules[rule].name,
			     now_ms());
}

int mgr_target_prio(const struct mgr_target *t)
{
	return rule_log_info(&t->mr->log, t->r->name, now_ms());
}

int mgr_target_warn(const struct mgr_target *t, enum rule_warn kind)
{
	return rule_log_warn(&t->mr->log, t->r->name, kind, now_ms());
}

void mgr_flush_logs(struct mgr *m, uint64_t now)
{
	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		rule_log_flush(&m->rules[r].log, m->cfg->rules[r].name, now);
}

struct other *mgr_other_add(struct mgr *m, int pid)
{
	struct other *o = mgr_other_lookup(m, pid);

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return NULL; /* it is only a cache */
		o->node.pid = pid;
		pidtable_add(&m->others, &o->node);
	}
	o->seen = m->gen;
	return o;
}

void mgr_twalk_free(struct twalk **w)
{
	if (*w)
		free((*w)->tids);
	free(*w);
	*w = NULL;
}

void mgr_other_reset_free(struct other *o)
{
	mgr_twalk_free(&o->reset);
}

void mgr_other_remove(struct mgr *m, struct other *o)
{
	pidtable_del(&m->others, &o->node);
	mgr_other_reset_free(o);
	free(o);
}

void mgr_other_del(struct mgr *m, int pid)
{
	struct other *o = mgr_other_lookup(m, pid);

	if (o)
		mgr_other_remove(m, o);
}

struct managed *mgr_insert(struct mgr *m, int pid, uint64_t starttime,
			   const char *comm, unsigned int rule)
{
	struct managed *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->node.pid = pid;
	e->starttime = starttime;
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	e->rule = rule;
	e->seen = m->gen;
	pidtable_add(&m->procs, &e->node);
	m->rules[rule].nprocs++;
	m->status_gen++;
	mgr_other_del(m, pid);
	return e;
}

bool mgr_same_process(struct mgr *m, struct managed *e, const struct pstat *st)
{
	if (!e->starttime) {
		/*
		 * Booked at its fork event, read now for the first time.
		 * While the parent it was forked from is managed, the
		 * process at the pid is that child only if it is the
		 * parent's; once the parent is gone, the child is another
		 * process's (reparented) and nothing tells it from a pid
		 * reused after a lost exit event.
		 */
		if (st->ppid != e->parent && mgr_lookup(m, e->parent))
			return false;
		e->starttime = st->starttime;
	}
	return e->starttime == st->starttime;
}

void mgr_hand_note(struct mgr *m, const struct managed *e, bool was)
{
	bool now = managed_hand(e);

	if (now && !was)
		m->nhand_procs++;
	else if (was && !now)
		m->nhand_procs--;
	if (now != was)
		m->status_gen++;
}

void mgr_walk_free(struct managed *e)
{
	mgr_twalk_free(&e->walk);
}

void mgr_drop(struct mgr *m, struct managed *e)
{
	if (managed_hand(e))
		m->nhand_procs--;
	free(e->ts);
	mgr_walk_free(e);
	owned_clear(&e->own);
	setpool_put(&m->sets, e->proc_orig.cpus);
	setpool_put(&m->sets, e->proc_ours);
	pidtable_del(&m->procs, &e->node);
	m->rules[e->rule].nprocs--;
	m->status_gen++;
	free(e);
}

/* The ratio a rule starts with: adaptive ones start hard. */
static struct ratio initial_ratio(const struct config *cfg,
				  const struct rule *r)
{
	return r->softness.kind == SOFT_ADAPTIVE ? cfg->hardest
						 : r->softness.fixed;
}

struct mgr_rule *mgr_rules_new(const struct config *cfg,
			       const struct mgr_rule *old_rules,
			       const int *map, unsigned int nold)
{
	struct mgr_rule *rules = calloc(cfg->nrules ? cfg->nrules : 1,
					sizeof(*rules));

	if (!rules)
		return NULL;
	for (unsigned int i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];
		struct mgr_rule *mr = &rules[i];

		mr->ratio = initial_ratio(cfg, r);
		mr->cg_mode = rule_acts_on_cgroup(r);
		/* As the daemon's controller starts it: hardest, awake. */
		mr->plan = rulectl_plan(r, &(struct rulectl_state){0}, false);
	}
	/* An adaptive ratio does not start over on reload. */
	for (unsigned int j = 0; j < nold; j++) {
		struct mgr_rule *mr;

		if (map[j] < 0)
			continue;
		mr = &rules[map[j]];
		*mr = old_rules[j];
		mr->nprocs = 0; /* counted again by the reload */
		mr->einval_warned = false;
		memset(&mr->log, 0, sizeof(mr->log));
	}
	return rules;
}

void mgr_rule_plan(struct mgr *m, unsigned int r, struct rulectl_plan plan)
{
	if (r < m->cfg->nrules)
		m->rules[r].plan = plan;
}

struct ratio mgr_rule_ratio(const struct mgr *m, unsigned int r)
{
	return m->rules[r].ratio;
}

bool mgr_rule_cg_mode(const struct mgr *m, unsigned int r)
{
	return m->rules[r].cg_mode;
}

bool mgr_rule_ratio_applies(const struct mgr *m, unsigned int r)
{
	return m->rules[r].cg_mode || m->have_proc_ratio;
}

unsigned int mgr_rule_processes(const struct mgr *m, unsigned int r)
{
	return m->rules[r].nprocs;
}

size_t mgr_processes(const struct mgr *m)
{
	return m->procs.count;
}

size_t mgr_hand_processes(const struct mgr *m)
{
	return m->nhand_procs;
}

const struct mgr_counters *mgr_counters(const struct mgr *m)
{
	return &m->cnt;
}

unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < m->cfg->nrules && n < max; i++)
		if (m->rules[i].nprocs)
			ret[n++] = m->cfg->rules[i].node_idx;
	return n;
}

static int cmp_pair(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? cmp_int(&x[0], &y[0]) : cmp_int(&x[1], &y[1]);
}

uint64_t mgr_status_gen(const struct mgr *m)
{
	return m->status_gen;
}

int mgr_status_pids(const struct mgr *m, int **ret)
{
	struct pidnode *n, *next;
	int *p = malloc((m->procs.count ? m->procs.count : 1) * 3 *
			sizeof(*p));
	size_t k = 0;

	if (!p)
		return -ENOMEM;
	pidtable_for_each (&m->procs, n, next) {
		const struct managed *e = as_managed(n);

		p[k * 3] = (int)e->rule;
		p[k * 3 + 1] = n->pid;
		p[k * 3 + 2] = managed_hand(e);
		k++;
	}
	qsort(p, k, 3 * sizeof(*p), cmp_pair);
	*ret = p;
	return (int)k;
}

int mgr_containers_left(const struct mgr *m, struct container_left **ret)
{
	return container_list_left(&m->ctr, ret);
}

/*
 * Open e's process directory for a batch (reload, restore) and check it
 * is still the same process.  The fd, or -1 (then e was dropped).
 */
int mgr_open_same(struct mgr *m, struct managed *e)
{
	struct pstat st;
	int pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, e->node.pid);

	if (pfd >= 0 && procfs_read_stat(NULL, pfd, 0, &st) == 0 &&
	    mgr_same_process(m, e, &st))
		return pfd;
	if (pfd >= 0)
		close(pfd);
	mgr_drop(m, e);
	return -1;
}
