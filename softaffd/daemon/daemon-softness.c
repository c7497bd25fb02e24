// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Softness: each sample interval, the figures go to the control laws
 * and what they decide is put in force.  Per rule, rulectl.c on the
 * rule's own figures (the manager gathers them) and the load of the
 * CPUs outside its preferred ones (the sampler's); for the sysctls'
 * global ratio, control.c on the load of the nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-internal.h"

struct rule_softness *softness_rules_new(const struct config *old,
					 const struct rule_softness *olds,
					 const struct config *cfg)
{
	struct rule_softness *soft =
		calloc(cfg->nrules ? cfg->nrules : 1, sizeof(*soft));
	int map[CONFIG_MAX_RULES];

	if (!soft || !old)
		return soft;
	/* An adaptive rule's softness does not start over on reload. */
	config_rule_map(old, cfg, map);
	for (unsigned int i = 0; i < old->nrules; i++)
		if (map[i] >= 0)
			soft[map[i]] = olds[i];
	return soft;
}

void softness_setup(struct daemon *d)
{
	struct ratio cur = d->ratio.cur;

	ctl_params_from_config(d->cfg, &d->ctl_params);
	ctl_init(&d->ctl, &d->ctl_params);
	rulectl_params_default(d->cfg, &d->rctl);
	for (unsigned int i = 0; i < d->ctl.nrungs; i++)
		if (ratio_equal(d->ctl.ladder[i], cur))
			d->ctl.rung = i;
}

void softness_apply_config(struct daemon *d)
{
	if (!d->ratio.have)
		return;
	if (d->cfg->mode == RATIO_FIXED)
		sysctl_set(&d->ratio, d->cfg->fixed,
			   "fixed ratio from configuration");
	else if (d->cfg->mode == RATIO_ADAPTIVE)
		sysctl_set(&d->ratio, ctl_ratio(&d->ctl), "adaptive start");
}

void softness_room(const struct daemon *d, unsigned int r,
		   struct rulectl_sample *in)
{
	const struct rulectl_cpus cpus = {
		.all = &d->topo->all,
		.busy = d->sampler.util,
		.wait = d->sampler.wait,
		.valid = &d->sampler.valid,
		.wait_valid = &d->sampler.wait_valid,
	};
	struct cpuset allowed;

	rulectl_room(&cpus, &d->cfg->rules[r].cpus,
		     mgr_rule_allowed(d->mgr, r, &allowed) ? &allowed : NULL,
		     in);
}

/*
 * The soft counters (soft_outside_runtime, spills, returns) count only
 * with kernel.sched_schedstats=1.  Adaptive rules use them for the share
 * of time outside when they count; otherwise the manager estimates it.
 * Turning them on needs CAP_SYS_ADMIN, which the unit does not grant, so
 * this succeeds only for a daemon run by hand (and then puts back the
 * value it found on stop); under the unit an admin enables them with
 * sysctl.d for exact figures.
 */
static bool schedstats_enabled(const struct daemon *d)
{
	char path[PATH_MAX], buf[16];

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats",
		 d->o->roots.proc);
	return read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '1';
}

void softness_schedstats_on(struct daemon *d)
{
	char path[PATH_MAX], buf[16];
	bool adaptive = false;
	int r;

	d->schedstats_orig = -1;
	for (unsigned int r2 = 0; r2 < d->cfg->nrules; r2++)
		adaptive |= d->cfg->rules[r2].softness.kind == SOFT_ADAPTIVE;
	if (!adaptive || d->o->dry_run || d->o->once)
		return;
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats",
		 d->o->roots.proc);
	if (read_file(path, buf, sizeof(buf)) < 0 || buf[0] != '0')
		return;
	r = write_file(path, "1\n", 2);
	if (r < 0) {
		log_info("kernel.sched_schedstats is off (%s to turn it on): "
			 "adaptive rules estimate their time outside from the "
			 "CPU each thread was last on; sysctl "
			 "kernel.sched_schedstats=1 gives exact figures",
			 strerror(-r));
		return;
	}
	d->schedstats_orig = 0;
	log_info("turned on kernel.sched_schedstats for the soft affinity "
		 "counters of adaptive rules; off again on stop");
}

void softness_schedstats_restore(struct daemon *d)
{
	char path[PATH_MAX];

	if (d->schedstats_orig != 0)
		return;
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats",
		 d->o->roots.proc);
	write_file(path, "0\n", 2);
	d->schedstats_orig = -1;
}

/*
 * Rule r on what mgr_sample gave back of it: the control law decides
 * (rulectl_step, pure), and a new ratio is put in force.
 */
static void rule_step(struct daemon *d, unsigned int r,
		      const struct rule_sampled *out)
{
	const struct rule *rule = &d->cfg->rules[r];
	struct rule_softness *rs = &d->soft[r];
	const struct rule_figures *f = &rs->last;
	struct ratio before = mgr_rule_ratio(d->mgr, r), after;
	struct rulectl_sample in;
	enum rulectl_action a;

	/* A trigger or new work woke it: the sample decides anew. */
	if (out->woken)
		rs->asleep = false;
	rs->sampled_now = out->sampled;
	if (out->sampled)
		rs->last = out->fig;
	if (rule->softness.kind != SOFT_ADAPTIVE) {
		snprintf(rs->why, sizeof(rs->why), "%s in the rule",
			 softness_name(rule->softness.kind));
		return;
	}
	if (!mgr_rule_processes(d->mgr, r)) {
		snprintf(rs->why, sizeof(rs->why), "no processes");
		return;
	}
	/* Asleep, or not due: the last decision stands. */
	if (!rs->sampled_now)
		return;
	in = rule_sample(f);
	softness_room(d, r, &in);
	a = rulectl_step(&d->rctl, &rs->ctl, &in, rs->why, sizeof(rs->why));
	/* Only on figures that cover every cgroup of the rule. */
	rs->asleep = f->valid && mgr_rule_triggers_armed(d->mgr, r) &&
		     rulectl_may_sleep(&d->rctl, &rs->ctl, &in);
	if (rs->asleep)
		snprintf(rs->why, sizeof(rs->why),
			 "asleep: hardest, tasks wait %.0f%%; a "
			 "cpu.pressure trigger wakes it",
			 rulectl_wait(&in) * 100);
	if (a == RULECTL_HOLD)
		return;
	after = rulectl_ratio(&d->rctl, &rs->ctl);
	/*
	 * A process rule on a kernel without soft_affinity_ratio: decided,
	 * but nothing takes it (said once at the first write); the log and
	 * the status must not claim it is.
	 */
	if (!mgr_rule_ratio_applies(d->mgr, r)) {
		log_debug("rule '%s': softness %u:%u -> %u:%u (%s), "
			  "not applied: no soft_affinity_ratio",
			  rule->name, before.allowed, before.preferred,
			  after.allowed, after.preferred, rs->why);
		snprintf(rs->why + strlen(rs->why),
			 sizeof(rs->why) - strlen(rs->why),
			 "; not applied: the kernel has no "
			 "soft_affinity_ratio");
	} else {
		log_info("rule '%s': softness %u:%u -> %u:%u (%s)", rule->name,
			 before.allowed, before.preferred, after.allowed,
			 after.preferred, rs->why);
	}
	mgr_set_rule_ratio(d->mgr, r, after);
}

/*
 * Per rule: sample (the manager gathers, as each rule's plan asks), step
 * (the control law decides), set the ratio (the manager acts), and plan
 * the next samples from the rung and sleep just decided (pure).  The
 * softness is the daemon's alone; the manager keeps the ratio and the
 * plan it was given.
 */
static void rules_step(struct daemon *d, uint64_t now)
{
	unsigned int nr = d->cfg->nrules;
	struct rule_sampled *out = calloc(nr ? nr : 1, sizeof(*out));

	if (!out)
		return; /* the last decisions stand */
	mgr_sample(d->mgr, now, schedstats_enabled(d), out);
	for (unsigned int r = 0; r < nr; r++) {
		rule_step(d, r, &out[r]);
		mgr_rule_plan(d->mgr, r,
			      rulectl_plan(&d->cfg->rules[r], &d->soft[r].ctl,
					   d->soft[r].asleep));
	}
	free(out);
}

void softness_resume(struct daemon *d)
{
	for (unsigned int r = 0; r < d->cfg->nrules; r++) {
		struct rule_softness *rs = &d->soft[r];
		struct ratio_tally found;
		struct ratio ratio;

		if (!mgr_rule_found(d->mgr, r, &found))
			continue;
		rs->ctl = (struct rulectl_state){
			.rung = rulectl_resume(&d->rctl, &found)};
		ratio = rulectl_ratio(&d->rctl, &rs->ctl);
		if (rs->ctl.rung) {
			log_info("rule '%s': resumes at softness %u:%u, the "
				 "ratio most of its processes had",
				 d->cfg->rules[r].name, ratio.allowed,
				 ratio.preferred);
			snprintf(rs->why, sizeof(rs->why),
				 "resumed: the ratio its processes had");
		}
		mgr_set_rule_ratio(d->mgr, r, ratio);
		mgr_rule_plan(d->mgr, r,
			      rulectl_plan(&d->cfg->rules[r], &rs->ctl,
					   rs->asleep));
	}
}

/* Only adaptive rules judge by the CPUs' run queues (softness_room). */
bool softness_wants_delays(const struct daemon *d)
{
	for (unsigned int r = 0; r < d->cfg->nrules; r++)
		if (d->cfg->rules[r].softness.kind == SOFT_ADAPTIVE)
			return true;
	return false;
}

void softness_sample(struct daemon *d)
{
	struct cpuset *groups;
	struct ctl_input in;
	enum ctl_action a;
	char reason[160];
	int r;

	mgr_flush_logs(d->mgr, now_ms());
	r = sampler_update(&d->sampler, d->o->roots.proc,
			   softness_wants_delays(d));
	if (r < 0) {
		if (!d->warned_sample)
			log_warn("cannot sample %s/stat: %s", d->o->roots.proc,
				 strerror(-r));
		d->warned_sample = true;
		return;
	}
	sampler_node_util(&d->sampler, d->topo, d->node_util);
	rules_step(d, now_ms());
	/* An admin's sysctl -w pauses the fixed ratio too. */
	if (d->cfg->mode == RATIO_OFF || sysctl_check(&d->ratio) ||
	    d->cfg->mode != RATIO_ADAPTIVE)
		return;
	/*
	 * A set per rule, 1 KiB each (CPUSET_MAX): on the heap, as many as
	 * there are rules, not CONFIG_MAX_RULES on the stack.  Without
	 * memory the ratio holds until the next sample.
	 */
	groups = calloc(d->cfg->nrules ? d->cfg->nrules : 1, sizeof(*groups));
	if (!groups)
		return;
	in.node_util = d->node_util;
	in.nnodes = d->topo->nnodes;
	in.groups = groups;
	in.ngroups = mgr_active_groups(d->mgr, groups, d->cfg->nrules);
	in.now_ms = now_ms();
	a = ctl_step(&d->ctl_params, &d->ctl, &in, reason, sizeof(reason));
	free(groups);
	if (a != CTL_HOLD) {
		char why[200];

		snprintf(why, sizeof(why), "%s: %s",
			 a == CTL_SOFTEN ? "soften" : "harden", reason);
		sysctl_set(&d->ratio, ctl_ratio(&d->ctl), why);
	}
}
