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
 * The sample of the rules' threads is bounded: at most MGR_SAMPLE_BUDGET
 * threads per interval for all rules together, which take turns for it
 * (sample_walks()), at most MGR_SAMPLE_PROCS processes of one rule and
 * MGR_SAMPLE_PROC_THREADS threads of one process.  Waiting and the share
 * outside are ratios, which a sample estimates; the run time, the time
 * outside (the rule's own spill, which the control law keeps apart from
 * its rivals'), spills and returns are scaled to the whole rule.  A
 * rule's sample is a window over its processes in pid order (over a
 * process's threads in tid order) that moves on by a quarter each
 * interval, at least one process, so every process is sampled over
 * successive intervals, and three quarters of each sample have a
 * baseline from the one before: only those count, over exactly one
 * interval.  A window holds two processes at least (each takes at most
 * half the rule's share), so that one of them always has a baseline.
 */
#define MGR_SAMPLE_PROCS 64
#define MGR_SAMPLE_PROC_THREADS 256
/*
 * The least share of the budget a rule's walk takes: enough for two
 * processes, a baseline and a delta.  When more rules are due than the
 * budget has such shares for (MGR_SAMPLE_BUDGET / MGR_SAMPLE_MIN_SHARE,
 * 64), the rest wait for the next interval, first in turn then.
 */
#define MGR_SAMPLE_MIN_SHARE 16

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
 * prev_ms (the rule's last sample; else this is a baseline), reading at
 * most cap of them.  Returns the number of threads it tried to read;
 * *counted: e added a delta.
 */
static unsigned int sample_proc(struct mgr *m, struct managed *e, int pfd,
				struct rule_figures *f, bool exact,
				uint64_t now_ms, uint64_t prev_ms,
				unsigned int cap, bool *counted)
{
	const struct cpuset *pref = &m->cfg->rules[e->rule].cpus;
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	bool fresh = prev_ms && e->sampled_ms == prev_ms;
	struct rule_figures d = {0};
	struct tsample *now;
	size_t take, from;
	unsigned int k = 0, deltas = 0;

	*counted = false;
	if (n <= 0)
		return 0;
	take = (size_t)n < cap ? (size_t)n : cap;
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
				 procfs_read_stat(NULL, pfd, tid, &st) == 0 &&
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
	m->cnt.sampled_threads += take;
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
	return (unsigned int)take;
}

/*
 * Sample rule's processes v[0..n) (sorted by pid): a window from its
 * cursor of at most share threads, then scaled to all n processes.
 * Returns the number of threads read.
 */
static unsigned int sample_rule(struct mgr *m, unsigned int rule,
				struct managed **v, size_t n,
				struct rule_figures *f, bool exact,
				uint64_t now, uint64_t prev, unsigned int share)
{
	struct mgr_rule *mr = &m->rules[rule];
	unsigned int threads = 0, counted = 0, taken = 0;
	unsigned int pcap = n > 1 ? share / 2 : share;
	size_t from, j;
	int *pids = malloc((n ? n : 1) * sizeof(*pids));

	if (!pids)
		return 0;
	if (pcap > MGR_SAMPLE_PROC_THREADS)
		pcap = MGR_SAMPLE_PROC_THREADS;
	if (!pcap)
		pcap = 1;
	for (j = 0; j < n; j++)
		pids[j] = v[j]->node.pid;
	from = window_start(pids, n, mr->sample_cursor);
	for (j = 0; j < n && taken < MGR_SAMPLE_PROCS && threads < share;
	     j++) {
		struct managed *e = v[(from + j) % n];
		unsigned int cap = share - threads < pcap ? share - threads
							  : pcap;
		bool c;
		int pfd;

		pfd = mgr_open_same(m, e);
		if (pfd < 0)
			continue; /* gone, and dropped */
		threads += sample_proc(m, e, pfd, f, exact, now, prev, cap, &c);
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
	return threads;
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
 * Pure: does rule need its threads walked now, its wait coming from
 * source?  For the wait fraction when its cgroups cannot give it; for
 * locality while it is soft (the law hardens on the share outside),
 * else only for --status.  At the hardest rung the law does not use the
 * share outside: it can only soften, which depends on the wait and the
 * room.
 */
static bool walk_due(const struct mgr_rule *mr, enum wait_source source,
		     uint64_t now)
{
	return source == WAIT_THREADS || mr->plan.soft || !mr->walked_ms ||
	       now - mr->walked_ms >= MGR_SAMPLE_OTHERS_MS;
}

/* Is rule sampled this time: as its plan says, or woken. */
static bool sample_due(const struct mgr_rule *mr, uint64_t now)
{
	return mr->plan.every || mr->woken || !mr->sampled_ms ||
	       now - mr->sampled_ms >= MGR_SAMPLE_OTHERS_MS;
}

/*
 * The system's CPU pressure wakes the thread samples.  A rule at its
 * hardest can only soften, and only on its tasks' wait; while the
 * system's tasks hardly wait for a CPU (below the trigger), its tasks
 * do not wait enough to soften, a sample of its threads cannot change
 * its softness, and is not taken.  The interval counts as calm for it:
 * its wait taken as zero, on which, as on any wait below soften_wait,
 * the law holds a rule at its hardest.  A softer rule is sampled all
 * the same: whether it hardens depends on the share of its time outside
 * its preferred CPUs, which the pressure does not tell, and hardening
 * one that uses its softness with room to spare would only queue its
 * tasks at home until it softened again.
 *
 * The trigger is a tenth of the lowest wait that softens a rule
 * (soften_wait: the adaptive rules share rulectl's parameters).  It is
 * not exact.  The system's "some" is not the wall time in which any
 * task waits: kernel/sched/psi.c averages the CPUs' own, each weighted
 * by how long it was busy.  A rule whose tasks fill the h preferred
 * CPUs it waits on, one waiting at a time on each, out of B busy ones,
 * shows there as about (h / B) w / (1 - w): at w = soften_wait, 10%,
 * that is 1.1% when the rule's CPUs are a tenth of the busy ones, so a
 * rule that could soften passes the trigger from h / B = 0.09 on: a
 * node's rule of 8 nodes on a machine busy everywhere, any rule while
 * less of the machine is busy.  A rule on fewer CPUs of a busy machine,
 * or with several tasks queueing on each, can wait 10% below it; it
 * softens once the pressure reaches the trigger.
 */
static double psi_trigger(const struct mgr *m)
{
	struct rulectl_params p;

	rulectl_params_default(m->cfg, &p);
	return p.soften_wait / 10;
}

/*
 * The share of the time since the last call in which some task waited
 * for a CPU (<proc>/pressure/cpu, "some" total=), or -1: not known (no
 * PSI, a first read).  Without PSI (not built in; psi=0, where the read
 * fails with EOPNOTSUPP) it is not read again.
 */
static double psi_share(struct mgr *m, uint64_t now)
{
	char path[PATH_MAX], buf[256];
	uint64_t some;
	double share = -1;
	ssize_t n;

	if (m->psi.off)
		return -1;
	snprintf(path, sizeof(path), "%s/pressure/cpu", m->roots.proc);
	n = read_file(path, buf, sizeof(buf));
	if (n == -ENOENT || n == -EOPNOTSUPP) {
		m->psi.off = true;
		m->psi.err = (int)n;
		return -1;
	}
	if (n < 0 || cgstat_parse_pressure(buf, &some) < 0) {
		m->psi.read_ms = 0;
		return -1;
	}
	if (m->psi.read_ms && now > m->psi.read_ms && some >= m->psi.some_us)
		share = (double)(some - m->psi.some_us) /
			((double)(now - m->psi.read_ms) * 1000);
	m->psi.some_us = some;
	m->psi.read_ms = now;
	return share;
}

/* Is the system calm enough this interval to skip the thread samples? */
static bool psi_calm(struct mgr *m, uint64_t now)
{
	double share = psi_share(m, now), trigger = psi_trigger(m);

	if (!m->psi.logged) {
		if (m->psi.off)
			log_info("no %s/pressure/cpu (%s): the threads of "
				 "every rule are sampled each interval, %d at "
				 "most",
				 m->roots.proc, strerror(-m->psi.err),
				 MGR_SAMPLE_BUDGET);
		else
			log_info("threads are sampled only while tasks wait "
				 "for a CPU %.1f%% of the time or more "
				 "(%s/pressure/cpu), %d at most each interval",
				 trigger * 100, m->roots.proc,
				 MGR_SAMPLE_BUDGET);
		m->psi.logged = true;
	}
	return share >= 0 && share < trigger;
}

/* What becomes of a rule this interval. */
enum plan {
	P_NONE,	  /* not due */
	P_FIGURES, /* sampled, its threads not walked */
	P_WALK,	  /* sampled, its threads walked */
	P_LATER,  /* its walk waits for the next interval's budget */
	P_CALM,	  /* the pressure says calm: no walk, a calm interval */
};

static int cmp_managed(const void *a, const void *b)
{
	const struct managed *x = *(struct managed *const *)a;
	const struct managed *y = *(struct managed *const *)b;

	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return cmp_int(&x->node.pid, &y->node.pid);
}

/*
 * The walks of the rules planned P_WALK, within MGR_SAMPLE_BUDGET
 * threads.  The rules take turns from m->walk_next, each a share of
 * what is left (left / rules left, at least MGR_SAMPLE_MIN_SHARE), so
 * that one that needs less leaves the rest to the others, and which one
 * gets the rest goes round.  Rules left without a share are P_LATER,
 * and first in turn next time.  False: out of memory, nothing walked.
 */
static bool sample_walks(struct mgr *m, enum plan *plan,
			 struct rule_figures *walk, bool exact, uint64_t now)
{
	unsigned int nr = m->cfg->nrules, left = MGR_SAMPLE_BUDGET;
	unsigned int due = 0, later = nr;
	struct pidnode *n, *next;
	struct managed **v;
	size_t nv = 0, *at;

	for (unsigned int r = 0; r < nr; r++)
		due += plan[r] == P_WALK;
	if (!due)
		return true;
	/* The processes of the rules walked now, by rule and pid. */
	pidtable_for_each (&m->procs, n, next)
		nv += plan[as_managed(n)->rule] == P_WALK &&
		      !(as_managed(n)->flags & M_IGNORED);
	v = malloc((nv ? nv : 1) * sizeof(*v));
	at = calloc(nr + 1, sizeof(*at));
	if (!v || !at) {
		free(v);
		free(at);
		return false;
	}
	nv = 0;
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);

		if (plan[e->rule] == P_WALK && !(e->flags & M_IGNORED))
			v[nv++] = e;
	}
	qsort(v, nv, sizeof(*v), cmp_managed);
	/* Rule r's processes are v[at[r]..at[r + 1]). */
	for (size_t i = 0, r = 0; r <= nr; r++) {
		while (i < nv && v[i]->rule < r)
			i++;
		at[r] = i;
	}
	for (unsigned int k = 0; k < nr; k++) {
		unsigned int r = (m->walk_next + k) % nr, share;
		struct mgr_rule *mr = &m->rules[r];

		if (plan[r] != P_WALK)
			continue;
		if (left < MGR_SAMPLE_MIN_SHARE) {
			plan[r] = P_LATER;
			if (later == nr)
				later = r;
			continue;
		}
		share = left / due > MGR_SAMPLE_MIN_SHARE
				? left / due
				: MGR_SAMPLE_MIN_SHARE;
		walk[r] = (struct rule_figures){
			.interval_ns = mr->walked_ms
					       ? (now - mr->walked_ms) * 1000000
					       : 0,
			.valid = mr->walked_ms != 0};
		/* mgr_open_same() may drop a process, not free v. */
		share = sample_rule(m, r, v + at[r], at[r + 1] - at[r],
				    &walk[r], exact, now, mr->walked_ms, share);
		left -= share < left ? share : left;
		mr->walked_ms = now;
		due--;
	}
	m->walk_next = later < nr ? later : (m->walk_next + 1) % nr;
	free(v);
	free(at);
	return true;
}

/*
 * A rule's figures of this interval, f, from what its walk saw, w: its
 * last, if it was not walked now.
 */
static void figures_finish(struct rule_figures *f, const struct rule_figures *w)
{
	if (f->source == WAIT_THREADS) {
		f->runtime_ns = w->runtime_ns;
		f->delay_ns = w->delay_ns;
		f->wait_base_ns = w->runtime_ns;
		f->outside_ns = w->outside_ns;
	} else if (f->source == WAIT_SYSTEM) {
		/* Hardly anyone waited; the locality is the last walk's. */
		f->runtime_ns = w->runtime_ns;
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

void mgr_sample(struct mgr *m, uint64_t now, bool exact,
		struct rule_sampled *ret)
{
	unsigned int nr = m->cfg->nrules ? m->cfg->nrules : 1;
	struct rule_figures *fig = calloc(nr, sizeof(*fig));
	struct rule_figures *walk = calloc(nr, sizeof(*walk));
	enum plan *plan = calloc(nr, sizeof(*plan));
	bool calm = psi_calm(m, now);

	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		/* No decision on old figures. */
		ret[r] = (struct rule_sampled){0};
	if (!fig || !walk || !plan)
		goto out;
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct mgr_rule *mr = &m->rules[r];
		struct rule_figures *f = &fig[r];

		if (!sample_due(mr, now))
			continue;
		*f = (struct rule_figures){
			.interval_ns = mr->sampled_ms ? (now - mr->sampled_ms) *
								1000000
						      : 0,
			.exact = exact,
			.valid = mr->sampled_ms != 0};
		if (mr->cg_mode && sample_cgroups(m, r, f))
			f->source = WAIT_CGROUP;
		if (calm && f->source == WAIT_THREADS && !mr->plan.soft)
			plan[r] = P_CALM;
		else if (walk_due(mr, f->source, now))
			plan[r] = P_WALK;
		else
			plan[r] = P_FIGURES;
	}
	if (!sample_walks(m, plan, walk, exact, now))
		goto out;
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct mgr_rule *mr = &m->rules[r];
		struct rule_figures *f = &fig[r];

		if (plan[r] == P_NONE ||
		    (plan[r] == P_LATER && f->source == WAIT_THREADS))
			continue; /* the last decision stands */
		if (plan[r] == P_WALK)
			mr->walk = walk[r];
		if (plan[r] == P_CALM) {
			f->source = WAIT_SYSTEM;
			f->calm = true;
		}
		figures_finish(f, &mr->walk);
		ret[r] = (struct rule_sampled){
			.sampled = true, .woken = mr->woken, .fig = *f};
		mr->woken = false;
		mr->sampled_ms = now;
	}
out:
	free(fig);
	free(walk);
	free(plan);
}
