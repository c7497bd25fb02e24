// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-rule figures: what a rule's tasks did over each sample interval
 * (run and wait time, the share outside the preferred CPUs, spills and
 * returns), from its threads' schedstat and sched, or for a rule on
 * cgroups from their cpu.stat and cpu.pressure.  Gather only: the
 * control law (rulectl.c) decides on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

/*
 * Processes sampled per rule and interval.  Waiting and the share
 * outside are ratios, which a sample of the rule's processes estimates
 * as well as all of them; a rule over thousands of processes must not
 * cost thousands of reads a second.  The same processes are met first
 * each time while the table does not change, so their baselines hold.
 */
#define MGR_SAMPLE_PROCS 64

static int cmp_tsample(const void *a, const void *b)
{
	return cmp_int(&((const struct tsample *)a)->tid,
		       &((const struct tsample *)b)->tid);
}

/* Add e's threads' progress since its last sample to f. */
static void sample_proc(struct mgr *m, struct managed *e, int pfd,
			struct rule_figures *f, bool exact)
{
	const struct cpuset *pref = rule_target(m, e->rule);
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	struct tsample *now;
	unsigned int k = 0;

	if (n <= 0)
		return;
	now = calloc((size_t)n, sizeof(*now));
	if (!now)
		return;
	qsort(m->tids, (size_t)n, sizeof(*m->tids), cmp_int);
	for (int i = 0; i < n; i++) {
		struct tsample key = {.tid = m->tids[i]}, *old;
		struct task_sched *v = &now[k].v;

		struct pstat st;

		if (procfs_read_task_sched(pfd, m->tids[i], exact, v) < 0)
			continue;
		now[k].tid = m->tids[i];
		old = e->ts ? bsearch(&key, e->ts, e->nts, sizeof(*e->ts),
				      cmp_tsample)
			    : NULL;
		/* A thread's first sample is its baseline, not its delta. */
		if (old && v->runtime_ns >= old->v.runtime_ns &&
		    v->delay_ns >= old->v.delay_ns) {
			uint64_t ran = v->runtime_ns - old->v.runtime_ns;

			f->runtime_ns += ran;
			f->delay_ns += v->delay_ns - old->v.delay_ns;
			uint64_t out = v->outside_ns - old->v.outside_ns;

			/* Not more than it ran: schedstats may just have
			 * been turned on, over a baseline without them. */
			if (exact && v->outside_ns >= old->v.outside_ns)
				f->outside_ns += out < ran ? out : ran;
			else if (!exact && ran &&
				 procfs_read_stat(pfd, m->tids[i], &st) == 0 &&
				 st.processor >= 0 && st.processor < CPUSET_MAX &&
				 !cpuset_test(pref, (unsigned int)st.processor))
				f->outside_ns += ran;
			/* 32-bit kernel counters: wrap as u32. */
			f->spills += (uint32_t)(v->spills - old->v.spills);
			f->returns += (uint32_t)(v->returns - old->v.returns);
		}
		k++;
		mgr_tick(m, (unsigned long)i);
	}
	free(e->ts);
	e->ts = now;
	e->nts = k;
	f->processes++;
	f->threads += k;
}

/*
 * Add the run and wait time of rule's cgroups since the last call to f.
 * False when a cgroup of it has no cpu.pressure: then its threads tell
 * (said once per rule).  f stays invalid while every cgroup is only
 * taking its baseline.  Cgroups that are gone are forgotten.
 */
static bool sample_cgroups(struct mgr *m, unsigned int rule,
			   struct rule_figures *f)
{
	struct mgr_rule *mr = &m->rules[rule];
	bool any = false, delta = false, nopsi = false, fresh = false;

	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		struct cgstat now;
		struct cgdelta d;
		int r;

		if (c->rule != rule)
			continue;
		r = cgstat_read(m->roots.sys, c->path, &now);
		if (r == -ESRCH) {
			/* The unit stopped: its cgroup is gone. */
			mgr_cg_forget(m, k--);
			continue;
		}
		if (r < 0) {
			if (!mr->no_psi_logged)
				log_info("rule '%s': cannot read %s/fs/cgroup%s/"
					 "cpu.pressure (%s%s); its wait fraction "
					 "comes from its threads' schedstat",
					 m->cfg->rules[rule].name, m->roots.sys,
					 c->path, strerror(-r),
					 r == -ENOENT ? ": a kernel without "
							"CONFIG_PSI, psi=0, or "
							"cgroup.pressure 0"
						      : "");
			mr->no_psi_logged = true;
			/* On, to forget the rule's other cgroups that are gone. */
			nopsi = true;
			/* The next delta must span one interval, not two. */
			c->have_prev = false;
			continue;
		}
		any = true;
		fresh |= !c->have_prev; /* new: its first read is a baseline */
		if (c->have_prev &&
		    cgstat_delta(&c->prev, &now, f->interval_ns, &d)) {
			f->runtime_ns += d.run_ns;
			f->delay_ns += d.wait_ns;
			f->wait_base_ns += d.base_ns;
			delta = true;
		}
		c->prev = now;
		c->have_prev = true;
	}
	if (!any || nopsi)
		return false;
	f->valid = f->valid && delta && !fresh;
	return true;
}

/*
 * Pure: does rule need its threads walked now?  For the wait fraction
 * when its cgroups cannot give it; for locality while it is soft (the
 * law hardens on the share outside), else only for --status.  At the
 * hardest rung the law does not use the share outside: it can only
 * soften, which depends on the wait and the room.
 */
static bool walk_due(const struct mgr_rule *mr, uint64_t now)
{
	return mr->st.last.source == WAIT_THREADS || mr->st.ctl.rung > 0 ||
	       !mr->walked_ms || now - mr->walked_ms >= MGR_SAMPLE_OTHERS_MS;
}

/* Is rule sampled this time? */
static bool sample_due(const struct mgr *m, unsigned int r, uint64_t now)
{
	const struct mgr_rule *mr = &m->rules[r];
	bool every = m->cfg->rules[r].softness.kind == SOFT_ADAPTIVE &&
		     !mr->st.asleep;

	return every || !mr->sampled_ms ||
	       now - mr->sampled_ms >= MGR_SAMPLE_OTHERS_MS;
}

void mgr_sample(struct mgr *m, uint64_t now, bool exact)
{
	unsigned int nr = m->cfg->nrules ? m->cfg->nrules : 1;
	struct rule_figures *walk = calloc(nr, sizeof(*walk));
	bool *walking = calloc(nr, sizeof(*walking));
	struct pidnode *n, *next;

	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		/* No decision on old figures. */
		m->rules[r].st.sampled_now = false;
	if (!walk || !walking)
		goto out;
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct mgr_rule *mr = &m->rules[r];
		struct rule_state *rs = &mr->st;

		rs->sampled_now = sample_due(m, r, now);
		if (!rs->sampled_now)
			continue;
		rs->last = (struct rule_figures){
			.interval_ns = mr->sampled_ms
					       ? (now - mr->sampled_ms) * 1000000
					       : 0,
			.exact = exact,
			.valid = mr->sampled_ms != 0};
		mr->sampled_ms = now;
		if (rs->cg_mode && sample_cgroups(m, r, &rs->last))
			rs->last.source = WAIT_CGROUP;
		walking[r] = walk_due(mr, now);
		if (!walking[r])
			continue;
		walk[r] = (struct rule_figures){
			.interval_ns = mr->walked_ms
					       ? (now - mr->walked_ms) * 1000000
					       : 0,
			.valid = mr->walked_ms != 0};
		mr->walked_ms = now;
	}
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		struct rule_figures *f = &walk[e->rule];
		int pfd;

		if (!walking[e->rule] || (e->flags & M_IGNORED) ||
		    f->processes >= MGR_SAMPLE_PROCS)
			continue;
		pfd = mgr_open_same(m, e);
		if (pfd < 0)
			continue;
		sample_proc(m, e, pfd, f, exact);
		close(pfd);
	}
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct mgr_rule *mr = &m->rules[r];
		struct rule_figures *f = &mr->st.last;
		const struct rule_figures *w = &mr->walk;

		if (!mr->st.sampled_now)
			continue;
		if (walking[r])
			mr->walk = walk[r];
		if (f->source == WAIT_THREADS) {
			f->runtime_ns = w->runtime_ns;
			f->delay_ns = w->delay_ns;
			f->wait_base_ns = w->runtime_ns;
			f->outside_ns = w->outside_ns;
		} else if (w->runtime_ns) {
			/* The threads' share outside, of the cgroups' time. */
			f->outside_ns = (uint64_t)((double)f->runtime_ns *
						   (double)w->outside_ns /
						   (double)w->runtime_ns);
		}
		f->processes = w->processes;
		f->threads = w->threads;
		f->spills = w->spills;
		f->returns = w->returns;
		f->locality_ns = w->interval_ns;
	}
out:
	free(walk);
	free(walking);
}

