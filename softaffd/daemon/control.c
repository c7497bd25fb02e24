// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The adaptive ratio controller.  Pure: no I/O, time comes in the input.
 *
 * The ratio allowed:preferred moves along a ladder of fixed rungs between
 * the configured hardest (default 100:1) and softest (default 5:4) values,
 * one rung per change.  Per sample, with U(x) the mean utilization of
 * node set x, P_i the preferred nodes of rule i and O_i the other nodes:
 *
 *   soften  if some rule has U(P_i) >= saturated and U(O_i) <= idle:
 *           its nodes are full while capacity sits idle next door.
 *   harden  if every node is >= saturated (spilling only adds remote
 *           traffic), or if for every rule the whole load of P_i and O_i
 *           would fit below `idle` on P_i alone (locality is free).
 *   hold    otherwise (the deadband).
 *
 * The soften and harden regions are disjoint and separated by the gap
 * between `idle` and `saturated`, so the state right after a change does
 * not immediately ask for the opposite change.  A direction must persist
 * for `hold` consecutive samples, and changes are at least
 * `min_change_ms` apart.
 */
#include <stdio.h>

#include "control.h"

void ctl_params_from_config(const struct config *c, struct ctl_params *ret)
{
	ret->softest = c->softest;
	ret->hardest = c->hardest;
	ret->saturated_pct = c->saturated_pct;
	ret->idle_pct = c->idle_pct;
	ret->hold = c->hold;
	ret->min_change_ms = c->min_change_ms;
}

void ctl_init(struct ctl_state *s, const struct ctl_params *p)
{
	/*
	 * Rungs roughly halve the ratio each step: a coarse ladder keeps the
	 * controller from creeping, and 5:4 and 100:1 are the two points
	 * the RFC measured.
	 */
	static const struct ratio rungs[] = {
		{5000, 1}, {2000, 1}, {1000, 1}, {500, 1}, {200, 1},
		{100, 1},  {50, 1},   {20, 1},	 {10, 1},  {5, 1},
		{3, 1},	   {2, 1},    {3, 2},	 {5, 4},   {1, 1},
	};
	unsigned int n = 0;

	s->ladder[n++] = p->hardest;
	for (unsigned int i = 0; i < sizeof(rungs) / sizeof(rungs[0]); i++)
		if (ratio_cmp(rungs[i], p->hardest) < 0 &&
		    ratio_cmp(rungs[i], p->softest) > 0 && n < CTL_MAX_RUNGS - 1)
			s->ladder[n++] = rungs[i];
	if (ratio_cmp(p->softest, p->hardest) < 0)
		s->ladder[n++] = p->softest;
	s->nrungs = n;
	s->rung = 0;
	s->soften_streak = s->harden_streak = 0;
	s->last_change_ms = 0;
	s->changed = false;
}

static double mean_util(const struct ctl_input *in, const struct cpuset *set,
			bool inside, unsigned int *ret_n)
{
	double sum = 0;
	unsigned int n = 0;

	for (unsigned int i = 0; i < in->nnodes; i++) {
		if (cpuset_test(set, i) != inside)
			continue;
		sum += in->node_util[i];
		n++;
	}
	*ret_n = n;
	return n ? sum / n : 0;
}

enum ctl_action ctl_step(const struct ctl_params *p, struct ctl_state *s,
			 const struct ctl_input *in, char *reason,
			 size_t reason_size)
{
	double sat = p->saturated_pct / 100.0, idle = p->idle_pct / 100.0;
	double min_util = 1.0;
	bool soften = false, all_fit = true;
	enum ctl_action want = CTL_HOLD;
	unsigned int *streak;

	snprintf(reason, reason_size, "in deadband");
	if (!in->ngroups || !in->nnodes) {
		s->soften_streak = s->harden_streak = 0;
		snprintf(reason, reason_size, "no managed work");
		return CTL_HOLD;
	}
	for (unsigned int i = 0; i < in->nnodes; i++)
		if (in->node_util[i] < min_util)
			min_util = in->node_util[i];

	for (unsigned int g = 0; g < in->ngroups; g++) {
		unsigned int np, no;
		double up = mean_util(in, &in->groups[g], true, &np);
		double uo = mean_util(in, &in->groups[g], false, &no);

		if (!np)
			continue;
		if (no && up >= sat && uo <= idle && !soften) {
			soften = true;
			snprintf(reason, reason_size,
				 "preferred nodes at %.0f%% while others at "
				 "%.0f%%",
				 up * 100, uo * 100);
		}
		if ((up * np + uo * no) / np >= idle)
			all_fit = false;
	}
	if (soften) {
		want = CTL_SOFTEN;
	} else if (min_util >= sat) {
		want = CTL_HARDEN;
		snprintf(reason, reason_size, "all nodes busy (>= %.0f%%)",
			 min_util * 100);
	} else if (all_fit) {
		want = CTL_HARDEN;
		snprintf(reason, reason_size,
			 "managed load fits its preferred nodes");
	}

	if (want == CTL_HOLD) {
		s->soften_streak = s->harden_streak = 0;
		return CTL_HOLD;
	}
	if (want == CTL_SOFTEN) {
		s->harden_streak = 0;
		streak = &s->soften_streak;
	} else {
		s->soften_streak = 0;
		streak = &s->harden_streak;
	}
	if (*streak < p->hold)
		(*streak)++;
	if (*streak < p->hold)
		return CTL_HOLD;
	if (want == CTL_SOFTEN && s->rung + 1 >= s->nrungs)
		return CTL_HOLD; /* already softest */
	if (want == CTL_HARDEN && s->rung == 0)
		return CTL_HOLD; /* already hardest */
	if (s->changed && in->now_ms - s->last_change_ms < p->min_change_ms)
		return CTL_HOLD;
	s->rung = want == CTL_SOFTEN ? s->rung + 1 : s->rung - 1;
	*streak = 0;
	s->last_change_ms = in->now_ms;
	s->changed = true;
	return want;
}

bool ctl_write_allowed_first(struct ratio cur, struct ratio next)
{
	/*
	 * Writing allowed first leaves (next.allowed, cur.preferred); that
	 * is valid when next.allowed >= cur.preferred.  Otherwise preferred
	 * first leaves (cur.allowed, next.preferred), valid because then
	 * next.preferred <= next.allowed < cur.preferred <= cur.allowed.
	 */
	return next.allowed >= cur.preferred;
}
