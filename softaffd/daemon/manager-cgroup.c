// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rules that act on cgroups (rule_acts_on_cgroup): the rule's
 * preference written once to each cgroup its processes are in
 * (cpuset.cpus.preferred and its .ratio), put back on stop, and left
 * alone where someone else changed it or a container's annotations set
 * it.  Adaptive ones get a cpu.pressure trigger per cgroup, which wakes
 * an asleep rule; the daemon's loop watches the fds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager-internal.h"

/*
 * The cpu.pressure trigger of an adaptive cgroup rule: wake the daemon
 * when the cgroup's "some" grew by 100 ms within 2 s.  2 s: without
 * CAP_SYS_RESOURCE, which the daemon does not have, the kernel takes
 * only multiples of 2 s (they ride on PSI's own 2 s averaging, with no
 * real-time poll thread).  100 ms, 5% of the window: a cgroup that
 * keeps a CPU's worth busy softens from 11% (some / (some + wall) =
 * 10%, cgstat.h), so the trigger fires at under half of that.  One that
 * runs less can reach 10% with less stall; an asleep rule is still
 * judged every 10 s (MGR_SAMPLE_OTHERS_MS).
 */
#define MGR_PSI_WINDOW_US 2000000
#define MGR_PSI_THRESHOLD_US 100000

/*
 * The trigger out of the poll set before its fd is closed: closed first,
 * its number could come back with the next open (another trigger, the
 * connector) while the loop still holds a source for it.
 */
static void cg_trigger_close(struct mgr *m, struct cg_entry *c)
{
	if (c->psi_fd < 0)
		return;
	if (c->psi_watched && m->hooks.unwatch)
		m->hooks.unwatch(m->hooks.userdata, c->psi_fd);
	c->psi_watched = false;
	close(c->psi_fd);
	c->psi_fd = -EBADF;
}

void mgr_cg_entry_free(struct mgr *m, struct cg_entry *c)
{
	cg_trigger_close(m, c);
	free(c->path);
	c->path = NULL;
	setpool_put(&m->sets, c->orig.cpus.cpus);
	setpool_put(&m->sets, c->ours.cpus.cpus);
	c->orig.cpus.cpus = c->ours.cpus.cpus = NULL;
}

/*
 * A rule asleep (its plan samples it only for --status) wakes: its
 * cgroups read afresh, the baselines of its sample at the next interval
 * (woken), which tells the daemon.  One sampled every interval has
 * fresh baselines already.
 */
static void rule_wake(struct mgr *m, struct mgr_rule *mr, unsigned int rule,
		      uint64_t now)
{
	if (mr->plan.every || mr->woken)
		return;
	mr->woken = true;
	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];

		if (c->rule == rule)
			c->have_prev = cgstat_read(m->roots.sys, c->path,
						   &c->prev) == 0;
	}
	mr->sampled_ms = now;
}

/*
 * A new trigger into the poll set (the watch hook).  Without one, or
 * when the hook refuses it, the rule reads its cgroups' counters every
 * interval; said once.
 */
static void cg_watch(struct mgr *m, struct cg_entry *c,
		     const struct mgr_target *t)
{
	int r = c->psi_fd;

	/* -ENOENT no PSI there (the sample says so). */
	if (!m->hooks.watch || c->psi_watched || c->psi_fd == -ENOENT ||
	    (c->psi_fd < 0 && m->psi_trigger_logged))
		return;
	if (c->psi_fd >= 0) {
		r = m->hooks.watch(m->hooks.userdata, c->psi_fd);
		if (r == 0) {
			c->psi_watched = true;
			/*
			 * New work for the rule: measure it now, rather
			 * than when its stall first fills a trigger window
			 * (a short job is over by then).
			 */
			rule_wake(m, t->mr, t->rule, now_ms());
			return;
		}
		close(c->psi_fd);
		c->psi_fd = r;
	}
	if (!m->psi_trigger_logged)
		log_info("no cpu.pressure trigger on cgroup %s (%s%s): "
			 "adaptive cgroup rules read cpu.pressure and "
			 "cpu.stat every interval instead of sleeping "
			 "until their tasks wait",
			 c->path, strerror(-r),
			 r == -EOPNOTSUPP ? ": PSI is off at boot"
			 : r == -EINVAL	  ? ": the kernel refuses the "
					    "trigger"
					  : "");
	m->psi_trigger_logged = true;
}

/* Is the cgroup at path a container's, or inside one?  Then it is theirs. */
static bool cg_in_container(struct mgr *m, const char *path)
{
	struct container_mark mk;

	return container_find(&m->ctr, m->roots.sys, path, monotonic_ns(), 0,
			      &mk);
}

static struct cg_entry *cg_find(struct mgr *m, const char *path)
{
	for (size_t i = 0; i < m->ncgs; i++)
		if (!strcmp(m->cgs[i].path, path))
			return &m->cgs[i];
	return NULL;
}

/*
 * Fill c for the cgroup at its path, as it is now: identity id, the
 * preference orig it had before us.  Only adaptive rules use the wait
 * signal, so only they get a trigger; the daemon puts it in its epoll
 * set (and falls back to reading the counters each interval when it
 * cannot).
 */
static void cg_init(struct mgr *m, struct cg_entry *c,
		    const struct mgr_target *t, uint64_t id,
		    const struct pref_req *orig)
{
	c->id = id;
	c->rule = t->rule;
	c->written = c->foreign = c->have_prev = c->psi_watched = false;
	/* Without what it had, it could not be given back: left alone. */
	if (setpool_pref_set(&m->sets, &c->orig, orig) < 0)
		c->foreign = true;
	c->psi_fd = -ENOENT;
	if (t->r->softness.kind == SOFT_ADAPTIVE)
		c->psi_fd = cgstat_trigger_open(m->roots.sys, c->path,
						MGR_PSI_THRESHOLD_US,
						MGR_PSI_WINDOW_US);
}

static struct cg_entry *cg_add(struct mgr *m, const char *path,
			       const struct mgr_target *t, uint64_t id,
			       const struct pref_req *orig)
{
	struct cg_entry *grown = realloc(m->cgs, (m->ncgs + 1) * sizeof(*grown));
	struct cg_entry *c;

	if (!grown)
		return NULL;
	m->cgs = grown;
	c = &m->cgs[m->ncgs];
	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	if (!c->path)
		return NULL;
	cg_init(m, c, t, id, orig);
	m->ncgs++;
	cg_watch(m, c, t);
	return c;
}

/*
 * The cgroup at c's path is another one than c was made for: the old one
 * was removed and a new one made under the same name (a restarted
 * service), before its trigger's EPOLLERR was handled or without a
 * trigger at all.  Nothing of the old one holds: what it had before us
 * and what we wrote (else the new one's own value would look foreign),
 * its counters, its trigger.
 */
static void cg_renew(struct mgr *m, struct cg_entry *c,
		     const struct mgr_target *t, uint64_t id,
		     const struct pref_req *cur)
{
	log_debug("cgroup %s: made again (id %llu, was %llu): starting over",
		  c->path, (unsigned long long)id, (unsigned long long)c->id);
	cg_trigger_close(m, c);
	cg_init(m, c, t, id, cur);
	cg_watch(m, c, t);
}

void mgr_cg_forget(struct mgr *m, size_t k)
{
	if (k >= m->ncgs)
		return;
	log_debug("cgroup %s: gone", m->cgs[k].path);
	mgr_cg_entry_free(m, &m->cgs[k]);
	m->cgs[k] = m->cgs[--m->ncgs];
}

/*
 * Write want into cgroup c, ratio first: a preference without a ratio
 * of its own is the rule's mask at the wrong softness, a ratio without a
 * mask does nothing.  If the mask is refused, the ratio goes back to
 * what it was, so a failed apply changes nothing.  0 or -errno.
 */
static int cg_write(struct mgr *m, struct fd_plug *plug, const char *path,
		    const struct pref_req *cur, const struct pref_req *want)
{
	const char *sys = m->roots.sys;
	bool ratio_changed = !ratio_req_equal(&cur->ratio, &want->ratio);
	int r = 0;

	if (ratio_changed)
		r = cgpref_write_ratio(plug, sys, path, &want->ratio);
	if (r < 0)
		return r;
	if (!cpureq_equal(&cur->cpus, &want->cpus))
		r = cgpref_write_mask(plug, sys, path, &want->cpus);
	if (r < 0 && ratio_changed)
		cgpref_write_ratio(plug, sys, path, &cur->ratio);
	return r;
}

/*
 * Put rule's preference on the cgroup at path.  -ENOENT when it has no
 * cpuset.cpus.preferred (then the caller falls back to the threads).
 */
int mgr_cg_apply(struct mgr *m, const struct mgr_target *t,
		 const char *path, struct fd_plug *plug)
{
	const struct rule *ru = t->r;
	struct cg_entry *c = cg_find(m, path);
	const struct ratio *ratio = &t->mr->ratio;
	struct pref_req cur, want = {
		.cpus = {REQ_SET, ru->cpus},
		.ratio = {REQ_SET, *ratio},
	};
	char cpus[CPUSET_LIST_BUFSZ], rtext[RATIO_BUFSZ];
	uint64_t id;
	int r;

	if (cg_in_container(m, path)) {
		if (c && !c->foreign)
			log_info("cgroup %s: a container's annotations set its "
				 "preference; leaving it alone (rule '%s')",
				 path, ru->name);
		if (c)
			c->foreign = true;
		return 0;
	}
	r = cgstat_id(m->roots.sys, path, &id);
	if (r == 0)
		r = cgpref_read(plug, m->roots.sys, path, &cur);
	if (r < 0)
		return r;
	if (!c) {
		c = cg_add(m, path, t, id, &cur);
		if (!c)
			return -ENOMEM;
	} else if (c->id != id) {
		cg_renew(m, c, t, id, &cur);
	}
	/* Starting (L7): its ratio counts, and stays until the rung is set. */
	if (t->mr->resuming) {
		if (cur.ratio.state == REQ_SET)
			ratio_tally_add(&t->mr->found, cur.ratio.value);
		want.ratio = cur.ratio;
	}
	if (c->foreign || pref_req_equal(&cur, &want))
		goto done;
	if (c->written && !pref_is_ref(&cur, &c->ours)) {
		log_msg(mgr_target_warn(t, RULE_WARN_CGROUP),
			"cgroup %s: cpuset.cpus.preferred or its ratio was "
			"changed by someone else; leaving it alone (rule '%s')",
			path, ru->name);
		c->foreign = true;
		goto done;
	}
	cpuset_format_list(&ru->cpus, cpus, sizeof(cpus));
	ratio_req_format(&want.ratio, rtext, sizeof(rtext));
	if (m->dry_run) {
		log_info("dry-run: would set cgroup %s preferred %s ratio %s "
			 "(rule '%s')",
			 path, cpus, rtext, ru->name);
		goto done;
	}
	r = cg_write(m, plug, path, &cur, &want);
	if (r < 0)
		return r;
	m->cnt.cg_written++;
	log_msg(c->written ? LOG_DEBUG : LOG_INFO,
		"cgroup %s: preferred %s, ratio %s (rule '%s')", path, cpus,
		rtext, ru->name);
done:
	c->rule = t->rule;
	if (!c->foreign && !m->dry_run) {
		/* What we wrote unknown: ours or not, it is left alone. */
		if (setpool_pref_set(&m->sets, &c->ours, &want) < 0)
			c->foreign = true;
		c->written = true;
	}
	return 0;
}

/* Put back what the cgroup had before us, if it still has our value. */
void mgr_cg_restore(struct mgr *m, struct cg_entry *c)
{
	struct pref_req cur, orig;

	if (!c->written || c->foreign || m->dry_run ||
	    cg_in_container(m, c->path) ||
	    cgpref_read(NULL, m->roots.sys, c->path, &cur) < 0 ||
	    !pref_is_ref(&cur, &c->ours))
		return;
	orig = pref_of_ref(&c->orig);
	if (cg_write(m, NULL, c->path, &cur, &orig) == 0) {
		m->cnt.restored++;
		log_debug("cgroup %s: preference restored", c->path);
	}
}

/* Act on the cgroup of s for its cgroup-mode rule; false: do threads. */
bool mgr_cg_eval(struct mgr *m, struct snap *s, const struct mgr_target *t)
{
	struct mgr_rule *mr = t->mr;
	char path[sizeof(s->cgroup)] = "?";
	int r;

	if (!mr->cg_mode || !s->a.cgroup)
		return false;
	r = rules_cgroup_target(t->r, s->a.cgroup, path, sizeof(path));
	if (r == 0)
		r = mgr_cg_apply(m, t, path, &s->plug);
	if (r == 0)
		return true;
	if (!mr->cg_fallback_logged)
		log_warn("rule '%s': cannot set the preference of cgroup %s "
			 "(%s%s); setting each process's own preference instead",
			 t->r->name, path, strerror(-r),
			 r == -ENOENT ? ": no cpuset.cpus.preferred there, "
					"the cpuset controller is not enabled "
					"for it (AllowedCPUs= on the unit does)"
				      : "");
	mr->cg_fallback_logged = true;
	return false;
}

void mgr_rule_wake(struct mgr *m, unsigned int rule, uint64_t now)
{
	if (rule < m->cfg->nrules)
		rule_wake(m, &m->rules[rule], rule, now);
}

bool mgr_rule_triggers_armed(const struct mgr *m, unsigned int rule)
{
	bool any = false;

	for (size_t k = 0; k < m->ncgs; k++) {
		if (m->cgs[k].rule != rule)
			continue;
		if (!m->cgs[k].psi_watched)
			return false;
		any = true;
	}
	return any;
}

bool mgr_on_pressure(struct mgr *m, int fd, bool gone)
{
	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		unsigned int rule = c->rule; /* c goes with the cgroup */

		if (!c->psi_watched || c->psi_fd != fd)
			continue;
		if (gone) {
			/*
			 * Removed cgroup: its fd reports this for good.  A
			 * cgroup made again at the path (a restarted
			 * service) is a new entry with a trigger of its
			 * own once its first process is evaluated.
			 */
			mgr_cg_forget(m, k);
		} else {
			log_debug("cgroup %s: cpu.pressure trigger, rule '%s' "
				  "wakes",
				  c->path, m->cfg->rules[rule].name);
		}
		mgr_rule_wake(m, rule, now_ms());
		return true;
	}
	return false;
}
