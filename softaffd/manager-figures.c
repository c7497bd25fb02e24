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
 * The sample of a rule's threads is bounded: at most MGR_SAMPLE_PROCS
 * processes and about MGR_SAMPLE_THREADS threads per rule and interval,
 * at most MGR_SAMPLE_PROC_THREADS of one process.  Waiting and the
 * share outside are ratios, which a sample estimates; the run time,
 * the time outside (the rule's own spill, which the control law keeps
 * apart from its rivals'), spills and returns are scaled to the whole
 * rule.  The sample is a window over the rule's processes in pid order
 * (over a process's threads in tid order) that moves on by a quarter
 * each interval, so every process is sampled over successive intervals
 * and three quarters of each sample have a baseline from the one
 * before: only those count, over exactly one interval.
 */
#define MGR_SAMPLE_PROCS 64
#define MGR_SAMPLE_THREADS 1024
#define MGR_SAMPLE_PROC_THREADS 256

static int cmp_tsample(const void *a, const void *b)
{
	return cmp_int(&((const struct tsample *)a)->tid,
		       &((const struct tsample *)b)->tid);
}

/* Index of the first of n sorted ints >= key, 0 if none (wrap around). */
static size_t window_start(const int *v, size_t n, int key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? lo : 0;
}

/*
 * Add e's threads' progress since its last sample to f, if that was
 * prev_ms (the rule's last sample; else this is a baseline).  Returns
 * the number of threads read; *counted: e added a delta.
 */
static unsigned int sample_proc(struct mgr *m, struct managed *e, int pfd,
				struct rule_figures *f, bool exact,
				uint64_t now_ms, uint64_t prev_ms,
				bool *counted)
{
	const struct cpuset *pref = rule_target(m, e->rule);
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	bool fresh = prev_ms && e->sampled_ms == prev_ms;
	struct rule_figures d = {0};
	struct tsample *now;
	size_t take, from;
	unsigned int k = 0, deltas = 0;

	*counted = false;
	if (n <= 0)
		return 0;
	take = (size_t)n < MGR_SAMPLE_PROC_THREADS ? (size_t)n
						   : MGR_SAMPLE_PROC_THREADS;
	now = calloc(take, sizeof(*now));
	if (!now)
		return 0;
	qsort(m->tids, (size_t)n, sizeof(*m->tids), cmp_int);
	from = take < (size_t)n ? window_start(m->tids, (size_t)n, e->ts_cursor)
				: 0;
	for (size_t j = 0; j < take; j++) {
		int tid = m->tids[(from + j) % (size_t)n];
		struct tsample key = {.tid = tid}, *old;
		struct task_sched *v = &now[k].v;
		struct pstat st;

		if (procfs_read_task_sched(pfd, tid, exact, v) < 0)
			continue;
		now[k].tid = tid;
		old = fresh && e->ts ? bsearch(&key, e->ts, e->nts,
					       sizeof(*e->ts), cmp_tsample)
				     : NULL;
		/* A thread's first sample is its baseline, not its delta. */
		if (old && v->runtime_ns >= old->v.runtime_ns &&
		    v->delay_ns >= old->v.delay_ns) {
			uint64_t ran = v->runtime_ns - old->v.runtime_ns;
			uint64_t out = v->outside_ns - old->v.outside_ns;

			d.runtime_ns += ran;
			d.delay_ns += v->delay_ns - old->v.delay_ns;
			/* Not more than it ran: schedstats may just have
			 * been turned on, over a baseline without them. */
			if (exact && v->outside_ns >= old->v.outside_ns)
				d.outside_ns += out < ran ? out : ran;
			else if (!exact && ran &&
				 procfs_read_stat(pfd, tid, &st) == 0 &&
				 st.processor >= 0 && st.processor < CPUSET_MAX &&
				 !cpuset_test(pref, (unsigned int)st.processor))
				d.outside_ns += ran;
			/* 32-bit kernel counters: wrap as u32. */
			d.spills += (uint32_t)(v->spills - old->v.spills);
			d.returns += (uint32_t)(v->returns - old->v.returns);
			deltas++;
		}
		k++;
		mgr_tick(m, (unsigned long)j);
	}
	/* The next window of a big process overlaps this one by 3/4. */
	if (take < (size_t)n)
		e->ts_cursor = m->tids[(from + take / 4) % (size_t)n];
	qsort(now, k, sizeof(*now), cmp_tsample);
	free(e->ts);
	e->ts = now;
	e->nts = k;
	e->sampled_ms = now_ms;
	if (deltas) {
		/* Some of a big process's threads stand for all of them. */
		double scale = take < (size_t)n ? (double)n / deltas : 1.0;

		f->runtime_ns += (uint64_t)((double)d.runtime_ns * scale);
		f->delay_ns += (uint64_t)((double)d.delay_ns * scale);
		f->outside_ns += (uint64_t)((double)d.outside_ns * scale);
		f->spills += (uint64_t)((double)d.spills * scale);
		f->returns += (uint64_t)((double)d.returns * scale);
		*counted = true;
	}
	f->processes++;
	f->threads += k;
	return k;
}

static int cmp_managed(const void *a, const void *b)
{
	const struct managed *x = *(struct managed *const *)a;
	const struct managed *y = *(struct managed *const *)b;

	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return cmp_int(&x->node.pid, &y->node.pid);
}

/*
 * Sample rule's processes v[0..n) (sorted by pid): a window from its
 * cursor, within the bounds, then scaled to all n processes.
 */
static void sample_rule(struct mgr *m, unsigned int rule,
			struct managed **v, size_t n, struct rule_figures *f,
			bool exact, uint64_t now, uint64_t prev)
{
	struct mgr_rule *mr = &m->rules[rule];
	unsigned int threads = 0, counted = 0, taken = 0;
	size_t from, j;
	int *pids = malloc((n ? n : 1) * sizeof(*pids));

	if (!pids)
		return;
	for (j = 0; j < n; j++)
		pids[j] = v[j]->node.pid;
	from = window_start(pids, n, mr->sample_cursor);
	for (j = 0; j < n && taken < MGR_SAMPLE_PROCS &&
		    threads < MGR_SAMPLE_THREADS;
	     j++) {
		struct managed *e = v[(from + j) % n];
		bool c;
		int pfd;

		pfd = mgr_open_same(m, e);
		if (pfd < 0)
			continue; /* gone, and dropped */
		threads += sample_proc(m, e, pfd, f, exact, now, prev, &c);
		close(pfd);
		counted += c;
		taken++;
	}
	/*
	 * The next window starts a quarter of this one on; when every
	 * process fitted, it is the same one again.
	 */
	mr->sample_cursor = j < n ? pids[(from + (j / 4 ? j / 4 : 1)) % n] : 0;
	free(pids);
	if (counted && counted < n) {
		double scale = (double)n / counted;

		f->runtime_ns = (uint64_t)((double)f->runtime_ns * scale);
		f->delay_ns = (uint64_t)((double)f->delay_ns * scale);
		f->outside_ns = (uint64_t)((double)f->outside_ns * scale);
		f->spills = (uint64_t)((double)f->spills * scale);
		f->returns = (uint64_t)((double)f->returns * scale);
	}
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
	uint64_t *prev = calloc(nr, sizeof(*prev));
	struct pidnode *n, *next;
	struct managed **v;
	size_t nv = 0;

	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		/* No decision on old figures. */
		m->rules[r].st.sampled_now = false;
	if (!walk || !walking || !prev)
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
		prev[r] = mr->walked_ms;
		mr->walked_ms = now;
	}
	/* The processes of the rules walked now, by rule and pid. */
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);

		if (walking[e->rule] && !(e->flags & M_IGNORED))
			nv++;
	}
	v = malloc((nv ? nv : 1) * sizeof(*v));
	if (!v)
		goto out;
	nv = 0;
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);

		if (walking[e->rule] && !(e->flags & M_IGNORED))
			v[nv++] = e;
	}
	qsort(v, nv, sizeof(*v), cmp_managed);
	for (size_t a = 0, b; a < nv; a = b) {
		unsigned int r = v[a]->rule;

		for (b = a; b < nv && v[b]->rule == r; b++)
			;
		/* mgr_open_same() may drop a process, not free v. */
		sample_rule(m, r, v + a, b - a, &walk[r], exact, now,
			    prev[r]);
	}
	free(v);
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
	free(prev);
}

