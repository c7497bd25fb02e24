/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CONTROL_H
#define SOFTAFF_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "cpuset.h"

#define CTL_MAX_RUNGS 24

struct ctl_params {
	struct ratio softest, hardest;
	unsigned int saturated_pct, idle_pct;
	unsigned int hold;	    /* consecutive samples before acting */
	unsigned int min_change_ms; /* rate limit between changes */
};

struct ctl_state {
	struct ratio ladder[CTL_MAX_RUNGS]; /* [0] hardest .. softest */
	unsigned int nrungs;
	unsigned int rung;
	unsigned int soften_streak, harden_streak;
	uint64_t last_change_ms;
	bool changed;
};

/*
 * One sample: per-node utilization (0..1) and, for every rule that has
 * managed processes, the set of node indexes it prefers.
 */
struct ctl_input {
	const double *node_util;
	unsigned int nnodes;
	const struct cpuset *groups;
	unsigned int ngroups;
	uint64_t now_ms;
};

enum ctl_action { CTL_HOLD, CTL_SOFTEN, CTL_HARDEN };

void ctl_params_from_config(const struct config *c, struct ctl_params *ret);
/* Build the ladder and start at the hardest rung. */
void ctl_init(struct ctl_state *s, const struct ctl_params *p);
/* Pure: advance the controller by one sample.  reason says why. */
enum ctl_action ctl_step(const struct ctl_params *p, struct ctl_state *s,
			 const struct ctl_input *in, char *reason,
			 size_t reason_size);
static inline struct ratio ctl_ratio(const struct ctl_state *s)
{
	return s->ladder[s->rung];
}

/*
 * Order of the two sysctl writes that moves from cur to next without an
 * intermediate where allowed < preferred: true = sched_allowed first.
 */
bool ctl_write_allowed_first(struct ratio cur, struct ratio next);

#endif
