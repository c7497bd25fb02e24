// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The per-rule softness controller.  Pure: no I/O, the sample comes in.
 *
 * A rule's tasks are worth softening only when they wait for a CPU at
 * a full home while CPUs they may use sit idle elsewhere with nobody
 * queued on them; they are worth hardening when the CPUs elsewhere are
 * needed by others, or when the softness goes unused (no waiting,
 * hardly any time outside).  Softening jumps several rungs at once,
 * hardening takes one rung after
 * harden_hold calm samples: a wrong softening costs some locality for a
 * few seconds, a wrong hardening leaves a CPU idle while work queues.
 * The full argument is in softaffd(8), CONTROL LAW.
 */
#include <stdio.h>
#include <string.h>

#include "rulectl.h"

void rulectl_params_default(const struct config *c, struct rulectl_params *p)
{
	struct ctl_params cp = {.softest = c->softest, .hardest = c->hardest};
	struct ctl_state cs;

	/* The global controller's ladder: the same rungs, the same ends. */
	ctl_init(&cs, &cp);
	memcpy(p->ladder, cs.ladder, sizeof(p->ladder));
	p->nrungs = cs.nrungs;
	/*
	 * A task that waits a tenth of its time is losing real throughput;
	 * 3% is the scheduler's ordinary latency noise under TCG and on a
	 * busy host, and the gap between the two keeps the law from
	 * flapping at the edge.
	 */
	p->soften_wait = 0.10;
	p->harden_wait = 0.03;
	p->unused_outside = 0.05;
	/* Half a CPU: less idle time than that is fragments between ticks. */
	p->min_idle = 0.5;
	/* 100:1 to 5:4 in three samples; back in 5 s a rung (about 40 s). */
	p->soften_step = 3;
	p->harden_hold = 5;
	/* 10 ms of work per interval: below, the figures are noise. */
	p->min_runtime_ns = 10000000;
}

double rulectl_wait(const struct rulectl_sample *in)
{
	uint64_t all = in->delay_ns +
		       (in->wait_base_ns ? in->wait_base_ns : in->runtime_ns);

	return all ? (double)in->delay_ns / (double)all : 0;
}

double rulectl_queued_home(const struct rulectl_sample *in)
{
	uint64_t at_home = in->runtime_ns > in->outside_ns
				   ? in->runtime_ns - in->outside_ns
				   : 0;
	double iv = (double)in->interval_ns, own, others;

	if (!in->interval_ns)
		return 0;
	own = (double)(in->runtime_ns + in->delay_ns) / iv;
	others = in->home_busy - (double)at_home / iv;
	return (others > 0 ? others : 0) + own - in->home_cpus;
}

double rulectl_outside(const struct rulectl_sample *in)
{
	return in->runtime_ns ? (double)in->outside_ns / (double)in->runtime_ns
			      : 0;
}

/* A sample that asks for harder: one rung per harden_hold in a row. */
static enum rulectl_action count_calm(const struct rulectl_params *p,
				      struct rulectl_state *s)
{
	if (s->rung == 0) {
		s->calm = 0;
		return RULECTL_HOLD; /* hardest already; reason says why */
	}
	if (++s->calm < p->harden_hold)
		return RULECTL_HOLD;
	s->calm = 0;
	s->rung--;
	return RULECTL_HARDEN;
}

enum rulectl_action rulectl_step(const struct rulectl_params *p,
				 struct rulectl_state *s,
				 const struct rulectl_sample *in, char *reason,
				 size_t reason_size)
{
	double w = rulectl_wait(in), u = rulectl_outside(in);
	double own_out, idle_out, others_out, free_out, home_idle;
	double spare_out, queued_home;
	bool harden = false;

	if (!in->interval_ns) {
		s->calm = 0;
		snprintf(reason, reason_size, "idle: nothing measured yet");
		return RULECTL_HOLD;
	}
	if (in->calm) {
		snprintf(reason, reason_size,
			 "calm: no task waits for a CPU (/proc/pressure/cpu)");
		return count_calm(p, s);
	}
	/*
	 * Softness is unused while the tasks hardly run: a calm sample, or
	 * a rule that works in bursts would never see harden_hold calm
	 * samples in a row, and stay soft.
	 */
	if (in->runtime_ns + in->delay_ns < p->min_runtime_ns) {
		snprintf(reason, reason_size, "idle: too little work to judge");
		return count_calm(p, s);
	}
	own_out = (double)in->outside_ns / (double)in->interval_ns;
	idle_out = in->outside_cpus - in->outside_busy;
	if (idle_out < 0)
		idle_out = 0;
	/* What others run outside; the rule's own spill is not a rival. */
	others_out = in->outside_busy - own_out;
	if (others_out < 0)
		others_out = 0;
	free_out = in->outside_cpus - others_out;
	/*
	 * A CPU that idles part of the interval while tasks queue on it is
	 * contended, not spare: two busy instances, one per node, each see
	 * the other's node idle now and then, and must not trade places.
	 * Spare is counted per CPU, so that a queue of pinned tasks on one
	 * CPU does not hide an idle one beside it.  It only gates
	 * softening: whose tasks queue there is not known (a spread rule's
	 * own count, and its own wait from cpu.pressure is a lower bound),
	 * and a lone instance that spread must not harden on its own queue.
	 */
	spare_out = in->wait_known ? in->outside_spare : idle_out;

	/*
	 * Waiting while a preferred CPU idles is wakeup latency, not a lack
	 * of CPUs: a ping-pong pair under a slow hypervisor waits a tenth
	 * of its time with half its node idle.  Only a full home counts.
	 */
	home_idle = in->home_cpus - in->home_busy;
	/*
	 * Nor is a home busy with the rule's own wakeups full: what its
	 * tasks would run if nothing else ran at home, beyond the CPUs
	 * others leave them there, is what an outside CPU can take.  A
	 * pair of tasks never asks for more than two CPUs, so a pair on a
	 * node of two that nobody else uses stays home by construction,
	 * however much a slow host makes it wait on its wakeups (one
	 * sample of a TCG guest read a 14% wait, home over 1.5 CPUs busy).
	 */
	queued_home = rulectl_queued_home(in);
	if (w >= p->soften_wait && spare_out >= p->min_idle &&
	    home_idle < p->min_idle) {
		s->calm = 0;
		if (queued_home < p->min_idle) {
			snprintf(reason, reason_size,
				 "hold: tasks wait %.0f%%, but they ask for "
				 "%.1f CPUs more than home has (want %.1f)",
				 w * 100, queued_home > 0 ? queued_home : 0,
				 p->min_idle);
			return RULECTL_HOLD;
		}
		if (s->rung + 1 >= p->nrungs) {
			snprintf(reason, reason_size,
				 "softest: tasks wait %.0f%%, %.1f CPUs idle "
				 "outside",
				 w * 100, spare_out);
			return RULECTL_HOLD;
		}
		s->rung += p->soften_step;
		if (s->rung >= p->nrungs)
			s->rung = p->nrungs - 1;
		snprintf(reason, reason_size,
			 "soften: tasks wait %.0f%% while %.1f CPUs idle "
			 "outside",
			 w * 100, spare_out);
		return RULECTL_SOFTEN;
	}
	if (!in->outside_cpus || free_out < p->min_idle) {
		harden = true;
		snprintf(reason, reason_size,
			 "no room outside: others use %.1f of %u CPUs there",
			 others_out, in->outside_cpus);
	} else if (w < p->harden_wait && u < p->unused_outside) {
		harden = true;
		snprintf(reason, reason_size,
			 "no need: tasks wait %.0f%%, run %.0f%% outside",
			 w * 100, u * 100);
	}
	if (!harden) {
		s->calm = 0;
		snprintf(reason, reason_size,
			 "hold: tasks wait %.0f%%, run %.0f%% outside, %.1f "
			 "CPUs idle at home",
			 w * 100, u * 100, home_idle > 0 ? home_idle : 0);
		return RULECTL_HOLD;
	}
	return count_calm(p, s);
}

bool rulectl_may_sleep(const struct rulectl_params *p,
		       const struct rulectl_state *s,
		       const struct rulectl_sample *in)
{
	return s->rung == 0 && rulectl_wait(in) < p->soften_wait;
}

struct rulectl_plan rulectl_plan(const struct rule *r,
				 const struct rulectl_state *s, bool asleep)
{
	bool adaptive = r->softness.kind == SOFT_ADAPTIVE;

	return (struct rulectl_plan){.every = adaptive && !asleep,
				     .soft = adaptive && s->rung > 0};
}

void rulectl_room(const struct rulectl_cpus *c, const struct cpuset *pref,
		  const struct cpuset *allowed, struct rulectl_sample *in)
{
	bool limited = allowed && !cpuset_empty(allowed);
	int cpu;

	in->outside_cpus = in->home_cpus = 0;
	in->outside_busy = in->home_busy = 0;
	in->outside_spare = 0;
	/* No /proc/schedstat (CONFIG_SCHEDSTATS off): waiting unknown. */
	in->wait_known = !cpuset_empty(c->wait_valid);
	/* The CPUs with a value, not all CPUSET_MAX ids, which is 8192. */
	for_each_cpu (cpu, c->valid) {
		double idle;

		if (!cpuset_test(c->all, (unsigned int)cpu) ||
		    (limited && !cpuset_test(allowed, (unsigned int)cpu)))
			continue;
		if (cpuset_test(pref, cpu)) {
			in->home_cpus++;
			in->home_busy += c->busy[cpu];
		} else {
			in->outside_cpus++;
			in->outside_busy += c->busy[cpu];
			idle = 1.0 - c->busy[cpu];
			if (cpuset_test(c->wait_valid, cpu))
				idle -= c->wait[cpu];
			in->outside_spare += idle > 0 ? idle : 0;
		}
	}
}

void ratio_tally_add(struct ratio_tally *t, struct ratio r)
{
	for (unsigned int i = 0; i < t->kinds; i++)
		if (ratio_equal(t->r[i], r)) {
			t->n[i]++;
			return;
		}
	if (t->kinds < RULECTL_TALLY) {
		t->r[t->kinds] = r;
		t->n[t->kinds++] = 1;
	}
}

unsigned int rulectl_resume(const struct rulectl_params *p,
			    const struct ratio_tally *t)
{
	unsigned int best = 0, most = 0;

	/* From the hardest: a later rung wins only with more processes. */
	for (unsigned int rung = 0; rung < p->nrungs; rung++)
		for (unsigned int i = 0; i < t->kinds; i++)
			if (ratio_equal(t->r[i], p->ladder[rung]) &&
			    t->n[i] > most) {
				most = t->n[i];
				best = rung;
			}
	return best;
}
