// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event loop and what it calls: signals (reload, re-adoption, stop),
 * timers (sampling and the ratio controller, rescans, the watchdog), the
 * proc connector, the status file and sd_notify.
 *
 * One loop turn, in this order:
 *   signals -> timers -> connector events into the dirty queue (a slice)
 *   -> the dirty queue evaluated (a slice) -> a scan in progress (a slice)
 * so a SIGTERM waits for at most three slices, whatever the load.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "affinity.h"
#include "caps.h"
#include "daemon.h"
#include "log.h"
#include "notify.h"
#include "privs.h"
#include "procconn.h"
#include "status.h"

/*
 * Work done per loop turn and kind (connector events, the dirty queue, a
 * slice of a scan) before signals and timers are served again.  Small
 * against any watchdog, and a time, not a count: in a CPU-starved guest
 * one event can take long.
 */
#define SLICE_MS 20
/*
 * With a working connector, every this many periodic rescans re-reads
 * the attributes that change without an event (cgroup, command line)
 * if a rule matches on them; the others only look for pids nobody told
 * us about.  Without one, the same rhythm for NEW and NEW_ATTRS.
 */
#define ATTRS_EVERY 6
/* After lost connector events, rescan at most this often. */
#define LOST_RESCAN_MS 1000
/*
 * Time the daemon spends per second on connector events and on
 * evaluating the processes they name.  Anyone can make events (a loop
 * of prctl(PR_SET_NAME) makes ~150k a second): past the first budget
 * the daemon stops reading until the second ends, lets the kernel drop
 * what overflows and rescans instead; past the second, marked processes
 * wait (each at most once in the queue, oldest first) for the next
 * second.  So a storm costs it about a third of a CPU, not all of one,
 * and a legitimate event waits only for the processes marked before
 * it: a second while they fit in a second's budget, and as many
 * seconds as they need when a storm from many processes does not.
 */
#define CONN_BUDGET_MS 100
#define EVAL_BUDGET_MS 200
#define BUDGET_WINDOW_MS 1000
#define CONN_WARN_EVERY_MS 60000

/* ---- status ---- */

static void publish(struct daemon *d)
{
	struct status_snapshot s = {
		.pid = (int)getpid(),
		.cfg = d->cfg,
		.dry_run = d->o->dry_run,
		.have_ratio = d->ratio.have,
		.ratio = d->ratio.cur,
		.ratio_note = d->ratio.paused ? "paused: changed by hand"
					      : NULL,
		.connector = d->conn_fd >= 0,
		.topo = d->topo,
		.node_util = d->node_util,
		.rule_count = d->mgr.rule_count,
		.processes = d->mgr.count,
		.hand_processes = d->mgr.nhand_procs,
		.cnt = &d->mgr.cnt,
		.rs = d->mgr.rs,
		.ncgroups = d->mgr.ncgs,
	};
	struct sbuf b = {0};
	char line[sizeof(d->last_notify)];
	struct container_left *ctrs = NULL;
	int *pids = NULL, n, r;

	d->mgr.cnt.ratio_changes = d->ratio.changes;
	n = mgr_status_pids(&d->mgr, &pids);
	s.pids = pids;
	s.npids = n > 0 ? (unsigned int)n : 0;
	n = container_list_left(&d->mgr.ctr, &ctrs);
	s.containers = ctrs;
	s.ncontainers = n > 0 ? (unsigned int)n : 0;
	status_format(&s, &b);
	r = status_write(d->o->roots.run, &b, &d->last_status);
	if (r >= 0) {
		struct sbuf j = {0};

		status_format_json(&s, &j);
		r = status_write_json(d->o->roots.run, &j, &d->last_json);
		sbuf_free(&j);
	}
	if (r < 0 && !d->warned_status) {
		log_warn("cannot write %s/%s: %s", d->o->roots.run,
			 STATUS_FILE, strerror(-r));
		d->warned_status = true;
	}
	sbuf_free(&b);
	free(pids);
	free(ctrs);
	/*
	 * STATUS= for systemd, sent only when it changes: every message
	 * wakes PID 1, and an idle daemon should not do that once a second.
	 */
	status_line(&s, line, sizeof(line));
	if (strcmp(line, d->last_notify)) {
		snprintf(d->last_notify, sizeof(d->last_notify), "%s", line);
		notify_send(line);
	}
}

/* ---- watchdog ---- */

/* Ping if a ping period (a quarter of the watchdog's) has passed, or force. */
static void watchdog_kick(struct daemon *d, bool force)
{
	uint64_t now;

	if (!d->wd_period_ms)
		return;
	now = now_ms();
	if (!force && now - d->wd_last_ms < d->wd_period_ms)
		return;
	d->wd_last_ms = now;
	notify_send("WATCHDOG=1");
}

/* The manager's hook inside long batches (reload, restore). */
static void on_tick(void *ud)
{
	watchdog_kick(ud, false);
}

/* ---- the ratio ---- */

/* Start the controller; keep the current rung if the ratio is on it. */
static void ctl_setup(struct daemon *d)
{
	struct ratio cur = d->ratio.cur;

	ctl_params_from_config(d->cfg, &d->ctl_params);
	ctl_init(&d->ctl, &d->ctl_params);
	rulectl_params_default(d->cfg, &d->rctl);
	for (unsigned int i = 0; i < d->ctl.nrungs; i++)
		if (d->ctl.ladder[i].allowed == cur.allowed &&
		    d->ctl.ladder[i].preferred == cur.preferred)
			d->ctl.rung = i;
}

static void ratio_apply_config(struct daemon *d)
{
	if (!d->ratio.have)
		return;
	if (d->cfg->mode == RATIO_FIXED)
		sysctl_set(&d->ratio, d->cfg->fixed,
			   "fixed ratio from configuration");
	else if (d->cfg->mode == RATIO_ADAPTIVE)
		sysctl_set(&d->ratio, ctl_ratio(&d->ctl), "adaptive start");
}

/*
 * The CPUs rule r may use outside its preferred ones and its preferred
 * ones, how busy each were (in CPUs), and the spare capacity outside.  Only CPUs of nodes that have CPUs are in topo->all:
 * a memory-only (CXL) node adds neither capacity nor an average.
 */
static void outside_load(const struct daemon *d, unsigned int r,
			 struct rulectl_sample *in)
{
	const struct cpuset *pref = &d->cfg->rules[r].cpus;

	in->outside_cpus = in->home_cpus = 0;
	in->outside_busy = in->home_busy = 0;
	in->outside_spare = 0;
	/* No /proc/schedstat (CONFIG_SCHEDSTATS off): waiting unknown. */
	in->wait_known = !cpuset_empty(&d->sampler.wait_valid);
	for (unsigned int cpu = 0; cpu < CPUSET_MAX; cpu++) {
		double idle;

		if (!cpuset_test(&d->topo->all, cpu) ||
		    !cpuset_test(&d->sampler.valid, cpu))
			continue;
		if (cpuset_test(pref, cpu)) {
			in->home_cpus++;
			in->home_busy += d->sampler.util[cpu];
		} else {
			in->outside_cpus++;
			in->outside_busy += d->sampler.util[cpu];
			idle = 1.0 - d->sampler.util[cpu];
			if (cpuset_test(&d->sampler.wait_valid, cpu))
				idle -= d->sampler.wait[cpu];
			in->outside_spare += idle > 0 ? idle : 0;
		}
	}
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

static void schedstats_on(struct daemon *d)
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

static void schedstats_restore(struct daemon *d)
{
	char path[PATH_MAX];

	if (d->schedstats_orig != 0)
		return;
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats",
		 d->o->roots.proc);
	write_file(path, "0\n", 2);
	d->schedstats_orig = -1;
}

/* Per rule: gather, let the control law decide, apply. */
static void rules_step(struct daemon *d, uint64_t now)
{
	mgr_sample(&d->mgr, now, schedstats_enabled(d));
	for (unsigned int r = 0; r < d->cfg->nrules; r++) {
		const struct rule *rule = &d->cfg->rules[r];
		struct rule_state *rs = &d->mgr.rs[r];
		const struct rule_figures *f = &rs->last;
		struct rulectl_sample in = rule_sample(f);
		struct ratio before = rs->ratio, after;
		enum rulectl_action a;

		if (rule->softness.kind != SOFT_ADAPTIVE) {
			snprintf(rs->why, sizeof(rs->why), "%s in the rule",
				 rule->softness.kind == SOFT_STRICT ? "strict"
								    : "fixed");
			continue;
		}
		if (!d->mgr.rule_count[r]) {
			snprintf(rs->why, sizeof(rs->why), "no processes");
			continue;
		}
		/* Asleep, or not due: the last decision stands. */
		if (!rs->sampled_now)
			continue;
		outside_load(d, r, &in);
		a = rulectl_step(&d->rctl, &rs->ctl, &in, rs->why,
				 sizeof(rs->why));
		/* Only on figures that cover every cgroup of the rule. */
		rs->asleep = f->valid && mgr_rule_triggers_armed(&d->mgr, r) &&
			     rulectl_may_sleep(&d->rctl, &rs->ctl, &in);
		if (rs->asleep)
			snprintf(rs->why, sizeof(rs->why),
				 "asleep: hardest, tasks wait %.0f%%; a "
				 "cpu.pressure trigger wakes it",
				 rulectl_wait(&in) * 100);
		if (a == RULECTL_HOLD)
			continue;
		after = rulectl_ratio(&d->rctl, &rs->ctl);
		log_info("rule '%s': softness %u:%u -> %u:%u (%s)", rule->name,
			 before.allowed, before.preferred, after.allowed,
			 after.preferred, rs->why);
		mgr_set_rule_ratio(&d->mgr, r, after);
	}
}

/*
 * New cgroups of adaptive rules come with a cpu.pressure trigger: watch
 * it.  Where there is none, or epoll refuses it, those rules read the
 * cgroup's counters every interval instead; said once.
 */
static void watch_triggers(struct daemon *d)
{
	for (size_t k = 0; k < d->mgr.ncgs; k++) {
		struct cg_entry *c = &d->mgr.cgs[k];
		struct epoll_event ev = {.events = EPOLLPRI,
					 .data.fd = c->psi_fd};
		int r = c->psi_fd;

		/* -ENOENT no PSI there (the sample says so). */
		if (c->psi_watched || c->psi_fd == -ENOENT ||
		    (c->psi_fd < 0 && d->mgr.psi_trigger_logged))
			continue;
		if (c->psi_fd >= 0) {
			if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, c->psi_fd, &ev) == 0) {
				c->psi_watched = true;
				/*
				 * New work for the rule: measure it now,
				 * rather than when its stall first fills a
				 * trigger window (a short job is over by
				 * then).
				 */
				mgr_rule_wake(&d->mgr, c->rule, now_ms());
				continue;
			}
			r = -errno;
			close(c->psi_fd);
			c->psi_fd = r;
		}
		if (!d->mgr.psi_trigger_logged)
			log_info("no cpu.pressure trigger on cgroup %s (%s%s): "
				 "adaptive cgroup rules read cpu.pressure and "
				 "cpu.stat every interval instead of sleeping "
				 "until their tasks wait",
				 c->path, strerror(-r),
				 r == -EOPNOTSUPP ? ": PSI is off at boot"
				 : r == -EINVAL	  ? ": the kernel refuses the "
						    "trigger"
						  : "");
		d->mgr.psi_trigger_logged = true;
	}
}

/* A cpu.pressure trigger fired (or its cgroup went away). */
static bool on_pressure(struct daemon *d, int fd, uint32_t events)
{
	for (size_t k = 0; k < d->mgr.ncgs; k++) {
		struct cg_entry *c = &d->mgr.cgs[k];
		unsigned int rule = c->rule; /* c goes with the cgroup */

		if (!c->psi_watched || c->psi_fd != fd)
			continue;
		if (events & (EPOLLERR | EPOLLHUP)) {
			/*
			 * Removed cgroup: its fd reports this for good.  A
			 * cgroup made again at the path (a restarted
			 * service) is a new entry with a trigger of its
			 * own once its first process is evaluated.
			 */
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
			mgr_cg_forget(&d->mgr, k);
		} else {
			log_debug("cgroup %s: cpu.pressure trigger, rule '%s' "
				  "wakes",
				  c->path, d->cfg->rules[rule].name);
		}
		mgr_rule_wake(&d->mgr, rule, now_ms());
		return true;
	}
	return false;
}

static void on_sample(struct daemon *d)
{
	struct cpuset groups[CONFIG_MAX_RULES];
	struct ctl_input in;
	enum ctl_action a;
	char reason[160];
	int r;

	mgr_flush_logs(&d->mgr, now_ms());
	r = sampler_update(&d->sampler, d->o->roots.proc);
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
	in.node_util = d->node_util;
	in.nnodes = d->topo->nnodes;
	in.groups = groups;
	in.ngroups = mgr_active_groups(&d->mgr, groups, CONFIG_MAX_RULES);
	in.now_ms = now_ms();
	a = ctl_step(&d->ctl_params, &d->ctl, &in, reason, sizeof(reason));
	if (a != CTL_HOLD) {
		char why[200];

		snprintf(why, sizeof(why), "%s: %s",
			 a == CTL_SOFTEN ? "soften" : "harden", reason);
		sysctl_set(&d->ratio, ctl_ratio(&d->ctl), why);
	}
}

/* ---- the proc connector ---- */

static void on_event(const struct pc_event *e, void *ud)
{
	struct daemon *d = ud;

	d->mgr.cnt.events++;
	switch (e->kind) {
	case PC_FORK:
		mgr_on_fork(&d->mgr, e->parent_tgid, e->pid, e->tgid);
		break;
	case PC_EXEC:
		mgr_on_exec(&d->mgr, e->tgid);
		break;
	case PC_COMM:
		/* comm of a non-leader thread changes only that thread's comm. */
		if (e->pid == e->tgid)
			mgr_on_change(&d->mgr, e->tgid);
		break;
	case PC_UID:
		mgr_on_uid(&d->mgr, e->tgid);
		break;
	case PC_EXIT:
		mgr_on_exit(&d->mgr, e->pid, e->tgid);
		break;
	default:
		break;
	}
}

/*
 * Out of the epoll set entirely while paused: an overflowed netlink
 * socket reports EPOLLERR whatever events it is watched for.
 */
static void conn_watch(struct daemon *d, bool on)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = d->conn_fd};

	if (on == !d->conn_paused)
		return;
	epoll_ctl(d->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, d->conn_fd,
		  &ev);
	d->conn_paused = !on;
}

/* A new budget window: read events again if they were paused. */
static void conn_window(struct daemon *d, uint64_t now)
{
	if (d->conn_paused && d->conn_fd >= 0 &&
	    budget_left(&d->conn_budget, now))
		conn_watch(d, true);
}

static void on_conn(struct daemon *d)
{
	uint64_t start = now_ms(), left = budget_left(&d->conn_budget, start);
	uint64_t end = start + (left < SLICE_MS ? left : SLICE_MS);

	if (!left) {
		/* Once a minute at most: a storm can go on for hours. */
		if (!d->conn_warned_ms ||
		    start - d->conn_warned_ms >= CONN_WARN_EVERY_MS) {
			d->conn_warned_ms = start;
			log_warn("proc connector: more events than %d ms a "
				 "second can read; pausing them for the rest "
				 "of the second and rescanning instead",
				 CONN_BUDGET_MS);
		}
		conn_watch(d, false);
		/* Whatever is dropped meanwhile, a rescan finds. */
		d->rescan_pending = true;
		d->events_lost = true;
		return;
	}
	/* Bounded, so a fork storm cannot starve signals and timers. */
	for (int i = 0; i < 256 && now_ms() < end; i++) {
		int r = procconn_read(d->conn_fd, on_event, d);

		if (r == -EAGAIN)
			break;
		if (r == -ENOBUFS) {
			d->mgr.cnt.events_lost++;
			if (!d->events_lost)
				log_info("proc connector overflowed, "
					 "rescanning");
			d->rescan_pending = true;
			d->events_lost = true;
			continue;
		}
		if (r < 0) {
			log_warn("proc connector: %s; using periodic rescan "
				 "only",
				 strerror(-r));
			conn_watch(d, false);
			procconn_close(d->conn_fd);
			d->conn_fd = -1;
			d->conn_paused = false;
			break;
		}
	}
	budget_charge(&d->conn_budget, now_ms() - start);
}

/* The dirty queue, once per turn and within its share of time. */
static void flush_dirty(struct daemon *d)
{
	uint64_t start = now_ms(), left = budget_left(&d->eval_budget, start);

	if (!left || !dirtyq_count(&d->mgr.dirty))
		return;
	mgr_flush(&d->mgr, start + (left < SLICE_MS ? left : SLICE_MS));
	budget_charge(&d->eval_budget, now_ms() - start);
}

/* ---- timers ---- */

static int timer_arm(int fd, uint64_t ms)
{
	struct itimerspec its = {
		.it_interval = {(time_t)(ms / 1000),
				(long)(ms % 1000) * 1000000},
		.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000},
	};

	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void timer_ack(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0)
		return; /* EAGAIN: spurious wakeup */
}

static void arm_timers(struct daemon *d)
{
	if (d->sample_fd >= 0)
		timer_arm(d->sample_fd, d->cfg->interval_ms);
	if (d->rescan_fd >= 0)
		timer_arm(d->rescan_fd, d->cfg->rescan_ms);
}

/* ---- reload ---- */

/*
 * Can ncfg run with the capabilities kept?  A capability dropped
 * earlier cannot come back, and one that root lacked from the start was
 * withheld by the unit's bounding set (softaffd-generator adds
 * CAP_SYS_PTRACE for exe rules): say so, and which rule needs it.  Not
 * for what the old configuration needed already: its start said so,
 * and other changes must still reload.
 */
static bool caps_allow(struct daemon *d, const struct config *ncfg)
{
	unsigned int added = caps_needed(ncfg) & ~caps_needed(d->cfg) &
			     ~d->caps;
	unsigned int lost = added & d->caps_start;
	unsigned int withheld = geteuid() == 0 ? added & ~d->caps_start : 0;
	char names[64];
	const char *rule = "?";

	if (!lost && !withheld)
		return true;
	for (unsigned int i = 0; i < ncfg->nrules; i++)
		if (ncfg->rules[i].needs & NEED_EXE) {
			rule = ncfg->rules[i].name;
			break;
		}
	log_err("%s: rule '%s' matches on 'exe' and needs %s, which %s",
		d->o->config, rule,
		caps_names(lost ? lost : withheld, names, sizeof(names)),
		lost ? "softaffd dropped at start because no rule needed it "
		       "then; restart softaffd (systemctl restart softaffd) to "
		       "use it"
		     : "softaffd.service grants only when a rule needs it at "
		       "\"systemctl daemon-reload\" (softaffd-generator); run "
		       "that, then restart softaffd to use it");
	return false;
}

/* Drop what cfg does not need (again on a reload). */
static void caps_update(struct daemon *d)
{
	unsigned int want = caps_needed(d->cfg) & d->caps;
	char names[64], note[1024];
	int r;

	r = caps_drop(want);
	if (r < 0) {
		log_warn("cannot drop capabilities: %s", strerror(-r));
		return;
	}
	if (want != d->caps || !d->caps_logged) {
		log_info("capabilities kept: %s",
			 caps_names(want, names, sizeof(names)));
		if (want & CAPS_PTRACE &&
		    privs_ptrace_notice(d->cfg, note, sizeof(note)))
			log_notice("%s", note);
	}
	d->caps = want;
	d->caps_logged = true;
}

/*
 * A reload that kept the rules still checks every managed thread: that
 * is how masks set by hand since are found.  But it does not start over
 * a full scan in progress (the first one, or an earlier reload's): in a
 * reload loop none would ever end, and READY=1 waits for the first.
 * What that scan has passed already gets its check from one more full
 * scan right after it.  Returns what the log line says.
 */
static const char *recheck(struct daemon *d)
{
	int r;

	if (mgr_scan_busy(&d->mgr) && d->mgr.scan_kind == SCAN_FULL) {
		d->recheck_due = true;
		return "the full scan in progress goes on";
	}
	r = mgr_scan_start(&d->mgr, SCAN_FULL);
	if (r < 0) {
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
		return "no full scan";
	}
	return "checking every managed thread";
}

/*
 * SIGHUP: re-read the topology (CPUs may have come or gone) and the
 * configuration; switch only if both are good.
 */
static void reload(struct daemon *d)
{
	struct topology *ntopo = calloc(1, sizeof(*ntopo));
	const struct topology *topo = d->topo;
	struct config *ncfg = NULL;
	double *nutil = NULL;
	char err[1024];
	bool same;
	int r;

	/* MONOTONIC_USEC: newer systemd wants it next to RELOADING=1. */
	notify_sendf("RELOADING=1\nMONOTONIC_USEC=%llu\n"
		     "STATUS=reloading configuration",
		     (unsigned long long)now_ms() * 1000);
	log_info("reloading %s", d->o->config);
	if (ntopo) {
		r = topology_load(d->o->roots.sys, ntopo);
		if (r == 0)
			nutil = calloc(ntopo->nnodes, sizeof(*nutil));
		if (r < 0 || !nutil) {
			log_warn("cannot re-read the NUMA topology (%s); using "
				 "the one read at start",
				 strerror(r < 0 ? -r : ENOMEM));
			free(ntopo);
			ntopo = NULL;
		} else {
			topo = ntopo;
		}
	}
	r = config_load(d->o->config, topo, &ncfg, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		log_err("reload failed; still running the old configuration");
		goto out;
	}
	if (!caps_allow(d, ncfg)) {
		log_err("reload failed; still running the old configuration");
		config_free(ncfg);
		goto out;
	}
	r = mgr_reload(&d->mgr, ncfg);
	if (r == -ENOMEM) {
		log_err("reload: out of memory; keeping the old configuration");
		config_free(ncfg);
		goto out;
	}
	same = r == 1;
	/* A changed reload started a full scan of its own. */
	if (!same)
		d->recheck_due = false;
	config_free(d->cfg);
	d->cfg = ncfg;
	if (ntopo) {
		/* Nothing keeps pointers into the old topology past here. */
		if (ntopo->nnodes != d->topo->nnodes ||
		    memcmp(ntopo->node_cpus, d->topo->node_cpus,
			   ntopo->nnodes * sizeof(ntopo->node_cpus[0])))
			log_info("NUMA topology changed: %u nodes",
				 ntopo->nnodes);
		free(d->topo);
		free(d->node_util);
		d->topo = ntopo;
		d->node_util = nutil;
		d->mgr.topo = ntopo;
		ntopo = NULL;
		nutil = NULL;
	}
	caps_update(d);
	privs_check(d->cfg, &d->o->roots, d->caps, d->o->dry_run);
	sysctl_resume(&d->ratio);
	ctl_setup(d);
	ratio_apply_config(d);
	arm_timers(d);
	if (same) {
		const char *scan = recheck(d);

		log_info("configuration reloaded: %u rules, none changed; %s",
			 d->cfg->nrules, scan);
	} else {
		log_info("configuration reloaded: %u rules", d->cfg->nrules);
	}
out:
	free(ntopo);
	free(nutil);
	publish(d);
	/* Before the first scan is over, READY=1 is still to come. */
	if (d->ready)
		notify_send("READY=1");
}

/* ---- signals ---- */

static void daemon_sigmask(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGUSR1);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
}

void daemon_block_signals(void)
{
	sigset_t mask;

	daemon_sigmask(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP && !d->o->once) {
			reload(d);
		} else if (si.ssi_signo == SIGUSR1 && !d->o->once) {
			size_t n = mgr_readopt(&d->mgr);

			log_info("re-adopting every managed process (%zu with "
				 "masks set by hand)",
				 n);
			if (d->ratio.paused) {
				sysctl_resume(&d->ratio);
				ratio_apply_config(d);
			}
		} else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			d->stop = true;
			d->signalled = true;
		}
	}
}

/* ---- scans ---- */

/*
 * Periodic rescans trust a working connector (see ATTRS_EVERY); lost
 * events or no connector at all need the full walk.
 */
static void start_rescan(struct daemon *d)
{
	bool attrs = d->cfg->needs & (NEED_CGROUP | NEED_CMDLINE);
	bool trust = d->conn_fd >= 0 && !d->events_lost;
	enum mgr_scan_kind kind = trust ? SCAN_LIGHT : SCAN_NEW;
	int r;

	if (attrs && ++d->light_scans % ATTRS_EVERY == 0)
		kind = trust ? SCAN_ATTRS : SCAN_NEW_ATTRS;
	d->rescan_pending = d->rescan_due = d->events_lost = false;
	r = mgr_scan_start(&d->mgr, kind);
	if (r < 0)
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
}

/* The first scan is over: the daemon is ready. */
static void on_ready(struct daemon *d)
{
	d->ready = true;
	/* --once leaves the adaptive ratio alone: nobody would adapt it. */
	if (!d->o->once || d->cfg->mode == RATIO_FIXED)
		ratio_apply_config(d);
	sampler_update(&d->sampler, d->o->roots.proc); /* prime the deltas */
	log_info("started: %u rules, %zu processes managed, ratio %s",
		 d->cfg->nrules, d->mgr.count, ratio_mode_name(d->cfg->mode));
	if (d->o->once) {
		d->stop = true;
		return;
	}
	publish(d);
	notify_send("READY=1");
	/* systemd counts the watchdog from here: ping at once. */
	watchdog_kick(d, true);
}

/* Milliseconds epoll may sleep: 0 with work pending, -1 for no limit. */
static int loop_timeout(struct daemon *d)
{
	uint64_t now = now_ms(), due = UINT64_MAX;

	if (mgr_scan_busy(&d->mgr) || d->recheck_due ||
	    (d->rescan_pending && d->rescan_due))
		return 0;
	/* Marked processes: now, or when their share of time renews. */
	if (dirtyq_count(&d->mgr.dirty))
		due = budget_left(&d->eval_budget, now)
			      ? now
			      : budget_renews(&d->eval_budget);
	/* After lost events, the deferred rescan within a second. */
	if (d->rescan_pending && d->mgr.last_scan_ms + LOST_RESCAN_MS < due)
		due = d->mgr.last_scan_ms + LOST_RESCAN_MS;
	/* Paused connector events: the end of the budget window. */
	if (d->conn_paused && budget_renews(&d->conn_budget) < due)
		due = budget_renews(&d->conn_budget);
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)(due - now);
}

static void on_timer(struct daemon *d, int fd)
{
	timer_ack(fd);
	if (fd == d->sample_fd) {
		on_sample(d);
		publish(d);
	} else if (fd == d->rescan_fd) {
		d->rescan_pending = true;
		d->rescan_due = true;
	} else if (fd == d->wd_fd) {
		watchdog_kick(d, true);
	}
}

int daemon_run(struct daemon *d)
{
	while (!d->stop) {
		struct epoll_event evs[8];
		int n = epoll_wait(d->epfd, evs, 8, loop_timeout(d));
		bool conn = false;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll_wait: %s", strerror(errno));
			return EXIT_RUNTIME;
		}
		/* Signals first, whatever else is ready. */
		for (int i = 0; i < n; i++)
			if (evs[i].data.fd == d->sigfd)
				on_signal(d);
		if (d->stop)
			break;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == d->conn_fd)
				conn = true;
			else if (fd != d->sigfd &&
				 !on_pressure(d, fd, evs[i].events))
				on_timer(d, fd);
		}
		if (d->conn_paused)
			conn_window(d, now_ms());
		if (conn && d->conn_fd >= 0)
			on_conn(d);
		/* Each dirty pid once per turn, however many events it got. */
		flush_dirty(d);
		if (mgr_scan_busy(&d->mgr)) {
			if (mgr_scan_step(&d->mgr, now_ms() + SLICE_MS) > 0) {
				log_debug("scan done: %zu processes managed",
					  d->mgr.count);
				if (!d->ready)
					on_ready(d);
			}
		} else if (d->recheck_due) {
			d->recheck_due = false;
			log_debug("full scan again: a reload came during one");
			recheck(d);
		} else if (d->rescan_pending &&
			   (d->rescan_due ||
			    now_ms() - d->mgr.last_scan_ms >= LOST_RESCAN_MS)) {
			start_rescan(d);
		}
		/* Evaluations and scans may have made cgroups ours. */
		watch_triggers(d);
	}
	if (d->o->once && d->signalled && !d->ready) {
		log_warn("stopped by a signal before the scan was done");
		return EXIT_SIGNALLED;
	}
	return 0;
}

/* ---- start and stop ---- */

static int add_fd(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int timer_new(struct daemon *d, int *fd)
{
	*fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	return *fd < 0 ? -errno : add_fd(d->epfd, *fd);
}

static int setup_loop(struct daemon *d)
{
	sigset_t mask;
	int r;

	daemon_sigmask(&mask);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return -errno;
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sigfd < 0)
		return -errno;
	r = add_fd(d->epfd, d->sigfd);
	if (r < 0 || d->o->once)
		return r;
	r = timer_new(d, &d->sample_fd);
	if (!r)
		r = timer_new(d, &d->rescan_fd);
	if (!r && d->conn_fd >= 0)
		r = add_fd(d->epfd, d->conn_fd);
	if (!r && d->wd_period_ms) {
		r = timer_new(d, &d->wd_fd);
		if (!r)
			r = timer_arm(d->wd_fd, d->wd_period_ms);
	}
	if (r < 0)
		return r;
	arm_timers(d);
	return 0;
}

static void open_connector(struct daemon *d)
{
	if (!procconn_names_root(d->o->roots.proc)) {
		log_info("%s is not procfs: the proc connector's events are "
			 "about other processes; new processes are found by "
			 "the periodic rescan only, every %u ms",
			 d->o->roots.proc, d->cfg->rescan_ms);
		return;
	}
	d->conn_fd = procconn_open();
	if (d->conn_fd >= 0) {
		log_info("listening to the proc connector");
		return;
	}
	log_warn("proc connector unavailable (%s%s): new processes are "
		 "found by the periodic rescan only, every %u ms",
		 strerror(-d->conn_fd),
		 d->conn_fd == -EPERM		  ? ", needs CAP_NET_ADMIN"
		 : d->conn_fd == -EPROTONOSUPPORT ? ", kernel without "
						    "CONFIG_PROC_EVENTS"
						  : "",
		 d->cfg->rescan_ms);
}

int daemon_start(struct daemon *d, const struct daemon_opts *o,
		 struct config *cfg, struct topology *topo)
{
	uint64_t wd_usec;
	int r;

	memset(d, 0, sizeof(*d));
	d->schedstats_orig = -1;
	d->o = o;
	d->cfg = cfg;
	d->topo = topo;
	d->conn_fd = d->epfd = d->sigfd = -1;
	d->sample_fd = d->rescan_fd = d->wd_fd = -1;
	daemon_block_signals();
	d->node_util = calloc(topo->nnodes, sizeof(*d->node_util));
	if (!d->node_util) {
		log_err("out of memory");
		return 1;
	}
	r = aff_probe(o->roots.proc);
	if (r < 0) {
		if (!o->dry_run) {
			log_err("this kernel has no scheduler soft affinity: "
				"%s/self/soft_affinity is missing (%s); boot a "
				"kernel with the soft affinity patches",
				o->roots.proc, strerror(-r));
			return 1;
		}
		log_warn("%s/self/soft_affinity is missing: dry run treats "
			 "every thread as inheriting (no request of its own)",
			 o->roots.proc);
		aff_missing_is_off = true;
	}
	if (mgr_init(&d->mgr, &o->roots, cfg, topo, o->dry_run) < 0) {
		log_err("out of memory");
		return 1;
	}
	r = sysctl_init(&d->ratio, &o->roots, o->dry_run, !o->once);
	if (r < 0 && cfg->mode != RATIO_OFF)
		log_warn("cannot read %s/sys/kernel/sched_{allowed,preferred} "
			 "(%s): ratio %s mode disabled",
			 o->roots.proc, strerror(-r),
			 ratio_mode_name(cfg->mode));
	ctl_setup(d);
	schedstats_on(d);
	/*
	 * Ping every quarter of the watchdog period: systemd suggests half,
	 * but a CPU-starved guest can stall the loop for seconds, and a
	 * ping costs nothing.  From a timer in the loop, and from inside
	 * long batches such as a reload over many thousand processes.
	 */
	wd_usec = o->once ? 0 : notify_watchdog_usec();
	if (wd_usec) {
		d->wd_period_ms = wd_usec / 4000 ? wd_usec / 4000 : 1;
		d->wd_last_ms = now_ms();
	}
	d->mgr.tick = on_tick;
	d->mgr.tick_userdata = d;
	d->conn_budget = (struct budget){CONN_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	d->eval_budget = (struct budget){EVAL_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	/* Subscribe before the scan so nothing slips between the two. */
	if (!o->once)
		open_connector(d);
	/* CAP_NET_ADMIN was for the subscription: from here, the least. */
	d->caps_start = caps_permitted();
	d->caps = d->caps_start;
	caps_update(d);
	privs_check(d->cfg, &d->o->roots, d->caps, d->o->dry_run);
	r = setup_loop(d);
	if (r < 0) {
		log_err("cannot set up the event loop: %s", strerror(-r));
		return EXIT_RUNTIME;
	}
	r = mgr_scan_start(&d->mgr, SCAN_FULL);
	if (r < 0) {
		log_err("cannot scan %s: %s", o->roots.proc, strerror(-r));
		return 1;
	}
	log_debug("first scan of %s started", o->roots.proc);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void daemon_stop(struct daemon *d)
{
	/* Also when stopped during the first scan: undo what it did. */
	if (!d->o->once && d->mgr.snap) {
		notify_send("STOPPING=1\nSTATUS=stopping");
		log_info("stopping");
		if (d->cfg->restore_on_exit) {
			mgr_restore_all(&d->mgr);
			sysctl_restore(&d->ratio);
		}
		schedstats_restore(d);
		sysctl_done(&d->ratio);
		status_remove(d->o->roots.run);
	}
	procconn_close(d->conn_fd);
	d->conn_fd = -1;
	if (d->mgr.snap)
		mgr_done(&d->mgr);
	close_fd(&d->wd_fd);
	close_fd(&d->rescan_fd);
	close_fd(&d->sample_fd);
	close_fd(&d->sigfd);
	close_fd(&d->epfd);
	sbuf_free(&d->last_status);
	sbuf_free(&d->last_json);
	sampler_done(&d->sampler);
	config_free(d->cfg);
	free(d->node_util);
	free(d->topo);
	d->cfg = NULL;
	d->node_util = NULL;
	d->topo = NULL;
}
