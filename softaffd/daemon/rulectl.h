/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_RULECTL_H
#define SOFTAFF_RULECTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "control.h"

/*
 * The per-rule softness controller (softness = "adaptive").  Pure: the
 * daemon gathers a sample per rule and applies the ratio it returns.
 * The law and its defence are in softaffd(8), CONTROL LAW.
 */
struct rulectl_params {
	struct ratio ladder[CTL_MAX_RUNGS]; /* [0] hardest .. softest */
	unsigned int nrungs;
	double soften_wait;  /* wait fraction that asks for softening */
	double harden_wait;  /* below it, the rule's tasks do not wait */
	double unused_outside; /* below this share outside, softness is unused */
	double min_idle;     /* CPUs: idle capacity worth spilling to */
	unsigned int soften_step; /* rungs per softening */
	unsigned int harden_hold; /* calm samples per rung of hardening */
	uint64_t min_runtime_ns;  /* less work than this: nothing to judge */
};

struct rulectl_state {
	unsigned int rung;
	unsigned int calm; /* consecutive samples that ask for harder */
};

/*
 * What one interval showed about one rule's tasks.  runtime_ns is CPU
 * time, over all CPUs; delay_ns is its threads' time runnable but not
 * running, or for a rule read from its cgroups their cpu.pressure
 * "some", which the kernel counts per CPU (cgstat.h).  The wait
 * fraction is delay_ns / (delay_ns + wait_base_ns).
 */
struct rulectl_sample {
	uint64_t runtime_ns, delay_ns;
	uint64_t outside_ns;	       /* of runtime_ns, outside preferred */
	uint64_t interval_ns;
	/*
	 * The online CPUs the rule may use outside its preferred ones (on
	 * nodes with CPUs: memory-only nodes have none), and how busy they
	 * were, in CPUs, all tasks together.
	 */
	unsigned int outside_cpus;
	double outside_busy;
	/*
	 * Their spare capacity: per CPU, the idle share less the tasks
	 * queued on it on average (/proc/schedstat), summed.  wait_known
	 * is false without /proc/schedstat.
	 */
	bool wait_known;
	double outside_spare;
	/* The same for the preferred CPUs: is there room at home? */
	unsigned int home_cpus;
	double home_busy;
	/*
	 * What delay_ns compares with: for threads runtime_ns (0 means
	 * that too), for cgroups the sum of their cgdelta.base_ns.
	 */
	uint64_t wait_base_ns;
	/*
	 * The system's CPU pressure said nobody waited for a CPU: a calm
	 * sample, whatever else it holds.
	 */
	bool calm;
};

enum rulectl_action { RULECTL_HOLD, RULECTL_SOFTEN, RULECTL_HARDEN };

void rulectl_params_default(const struct config *c, struct rulectl_params *p);
/* Pure: the rung after this sample, and why (reason). */
enum rulectl_action rulectl_step(const struct rulectl_params *p,
				 struct rulectl_state *s,
				 const struct rulectl_sample *in, char *reason,
				 size_t reason_size);
static inline struct ratio rulectl_ratio(const struct rulectl_params *p,
					 const struct rulectl_state *s)
{
	return p->ladder[s->rung];
}
/*
 * Pure: may the rule sleep until its cpu.pressure trigger fires?  Yes
 * when it is at its hardest and its tasks did not wait enough to
 * soften: no sample would change anything until they do.
 */
bool rulectl_may_sleep(const struct rulectl_params *p,
		       const struct rulectl_state *s,
		       const struct rulectl_sample *in);
/*
 * How a rule wants to be sampled, which the controller decides and the
 * manager's sampler follows (mgr_rule_plan).  every: at each interval,
 * for the law (an adaptive rule awake); otherwise only for --status,
 * every MGR_SAMPLE_OTHERS_MS, until a trigger wakes it.  soft: softer
 * than its hardest, so the law hardens on its share of time outside:
 * its threads are walked each time, and a calm system does not spare
 * the walk (at the hardest it can only soften, on its tasks' wait).
 */
struct rulectl_plan {
	bool every;
	bool soft;
};
/* Pure: the plan of rule r in state s, asleep or not. */
struct rulectl_plan rulectl_plan(const struct rule *r,
				 const struct rulectl_state *s, bool asleep);
/* Derived figures of a sample, for the law and for --status. */
double rulectl_wait(const struct rulectl_sample *in);
double rulectl_outside(const struct rulectl_sample *in);
/*
 * The CPUs the rule's tasks ask for at home beyond what home has: what
 * others run there plus the rule's run and wait time (all of it, as if
 * none had spilled), less the preferred CPUs.  Negative: home would
 * hold them all.  For a rule read from its cgroups the wait is one
 * CPU's stall (cgstat.h), so this is a lower bound.
 */
double rulectl_queued_home(const struct rulectl_sample *in);

/*
 * What the CPUs are like for a rule (per CPU, ncpus entries): busy is the
 * utilization 0..1, wait the tasks queued on average; valid and
 * wait_valid say which values are fresh.
 */
struct rulectl_cpus {
	const struct cpuset *all;   /* online CPUs of nodes that have CPUs */
	const double *busy, *wait;
	const struct cpuset *valid, *wait_valid;
};
/*
 * Pure: the room of rule pref at home and outside into in (its
 * outside_*, home_*, wait_known).  allowed: the CPUs its tasks may be
 * placed on (its cgroups' cpuset.cpus.effective: mgr_rule_allowed),
 * NULL or empty: unknown, every CPU.  A CPU its tasks cannot reach is no room: a rule
 * confined there would soften towards it and, still waiting, never
 * harden (L5).
 */
void rulectl_room(const struct rulectl_cpus *c, const struct cpuset *pref,
		  const struct cpuset *allowed, struct rulectl_sample *in);

/*
 * The ratios a rule's processes had of their own when a starting daemon
 * met them, and how many had each (L7); distinct ratios past
 * RULECTL_TALLY are not counted.
 */
#define RULECTL_TALLY 8
struct ratio_tally {
	struct ratio r[RULECTL_TALLY];
	unsigned int n[RULECTL_TALLY];
	unsigned int kinds;
};
void ratio_tally_add(struct ratio_tally *t, struct ratio r);
/*
 * Pure: the rung a restarted daemon resumes a rule at, so that a restart
 * (a package upgrade) does not harden every adaptive rule: the rung of
 * the ratio most of its processes had, among those on the ladder (a
 * tie: the harder); without one, the hardest, as a new rule starts.
 * A ratio someone else set that happens to be a rung is taken for ours:
 * the law moves the rule from there within a few samples.
 */
unsigned int rulectl_resume(const struct rulectl_params *p,
			    const struct ratio_tally *t);

#endif
