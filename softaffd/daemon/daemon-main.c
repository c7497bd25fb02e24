// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Start, run and stop the daemon, and its signals.  One sd-event loop
 * serves signals (reload, re-adoption, stop), timers (sampling, rescans,
 * and a wake-up for what the budgets and a lost event's rescan wait
 * for), the cpu.pressure triggers, the proc connector (daemon-conn.c)
 * and two deferred sources that do the sliced work (daemon-work.c): the
 * dirty queue and scans; from READY=1 on it also pings the systemd
 * watchdog.  This file is the hub: it calls the spokes (daemon-*.c),
 * they never call it.
 *
 * Each iteration dispatches one source, by priority (daemon-internal.h):
 *   signals -> timers, triggers -> connector events into the dirty queue
 *   (a slice) -> the dirty queue evaluated (a slice) -> a scan in
 *   progress (a slice)
 * so a SIGTERM waits for at most one slice, whatever the load.  After
 * any of them, the post source (on_post) says which sliced work is due
 * now and when the rest is, and sends READY=1 once the first scan is
 * over: no callback has to remember to.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "caps.h"
#include "daemon-internal.h"
#include "log.h"
#include "notify.h"
#include "privs.h"
#include "status.h"

/*
 * At most 5 reloads (SIGHUP) and 5 re-adoptions (SIGUSR1) a second.
 * Signals come first in the loop and each of these walks every managed
 * process in one callback (some 6 ms for 10,000 on a host), so a script
 * that sent them in a loop would keep events and scans waiting for as
 * long as it ran; five cost a few percent of a second.  Past the limit
 * the signal stays blocked until the second is over, repeats merge in
 * the kernel meanwhile, and the reload that follows reads the latest
 * file.  Five, not one: reloads sent a few a second are each served,
 * even by a starved daemon that gets to them in bunches.
 */
#define SIG_RATELIMIT_USEC  1000000
#define SIG_RATELIMIT_BURST 5

static const int loop_signals[] = {SIGHUP, SIGUSR1, SIGTERM, SIGINT};

static void daemon_sigmask(sigset_t *mask)
{
	sigemptyset(mask);
	for (size_t i = 0; i < ARRAY_SIZE(loop_signals); i++)
		sigaddset(mask, loop_signals[i]);
}

void daemon_block_signals(void)
{
	sigset_t mask;

	daemon_sigmask(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
}

/* The first scan is over: the daemon is ready. */
static void daemon_ready(struct daemon *d)
{
	d->ready = true;
	if (!d->o->once)
		softness_resume(d);
	/* --once leaves the adaptive ratio alone: nobody would adapt it. */
	if (!d->o->once || d->cfg->mode == RATIO_FIXED)
		softness_apply_config(d);
	/* prime the deltas */
	sampler_update(&d->sampler, d->o->roots.proc, softness_wants_delays(d));
	log_info("started: %u rules, %zu processes managed, ratio %s",
		 d->cfg->nrules, mgr_processes(d->mgr),
		 ratio_mode_name(d->cfg->mode));
	if (d->o->once) {
		sd_event_exit(d->event, 0);
		return;
	}
	daemon_publish(d);
	notify_send("READY=1");
	daemon_watchdog_start(d);
}

static int on_signal(sd_event_source *s MAYBE_UNUSED,
		     const struct signalfd_siginfo *si, void *ud)
{
	struct daemon *d = ud;
	size_t n;

	switch (si->ssi_signo) {
	case SIGHUP:
		daemon_reload(d);
		break;
	case SIGUSR1:
		/* A scan in progress goes on (daemon_recheck). */
		n = mgr_forget_hand(d->mgr);
		log_info("re-adopting every managed process (%zu with masks "
			 "set by hand); %s",
			 n, daemon_recheck(d));
		if (d->ratio.paused) {
			sysctl_resume(&d->ratio);
			softness_apply_config(d);
		}
		break;
	default: /* SIGTERM, SIGINT */
		d->signalled = true;
		return sd_event_exit(d->event, 0);
	}
	return 0;
}

/*
 * The periodic timers: the next expiry a whole number of periods after
 * the last one, as a timerfd's interval would (late ones merge, they
 * are not made up).
 */
static int timer_again(struct daemon *d, sd_event_source *s, uint64_t usec,
		       unsigned int ms)
{
	uint64_t period = ms * 1000ULL, now;
	int r = sd_event_now(d->event, CLOCK_MONOTONIC, &now);

	if (r < 0)
		return r;
	usec += period;
	if (usec <= now)
		usec += (now - usec) / period * period + period;
	r = sd_event_source_set_time(s, usec);
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_sample(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;

	softness_sample(d);
	daemon_publish(d);
	return timer_again(d, s, usec, d->cfg->interval_ms);
}

static int on_rescan(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;

	d->rescan_pending = true;
	d->rescan_due = true;
	return timer_again(d, s, usec, d->cfg->rescan_ms);
}

static int set_enabled(sd_event_source *s, bool on)
{
	return sd_event_source_set_enabled(s, on ? SD_EVENT_ON : SD_EVENT_OFF);
}

/*
 * What is due now: turn the sliced work that is due on, the rest off,
 * and set the wake-up for what is due later.  0 or -errno.
 */
static int loop_arm(struct daemon *d)
{
	uint64_t now = now_ms(), due = UINT64_MAX, lost;
	bool dirty = false, scan;
	int r;

	r = conn_window(d, now);
	if (r < 0)
		return r;
	scan = mgr_scan_busy(d->mgr) || d->recheck_due ||
	       (d->rescan_pending && d->rescan_due);
	/* Marked processes: now, or when their share of time renews. */
	if (mgr_dirty_count(d->mgr)) {
		dirty = budget_left(&d->eval_budget, now);
		if (!dirty)
			due = budget_renews(&d->eval_budget);
	}
	/* After lost events, the deferred rescan within a second. */
	if (d->rescan_pending && !scan) {
		lost = mgr_last_scan_ms(d->mgr) + LOST_RESCAN_MS;
		scan = lost <= now;
		if (!scan && lost < due)
			due = lost;
	}
	/* Paused connector events: the end of the budget window. */
	if (d->conn_paused && budget_renews(&d->conn_budget) < due)
		due = budget_renews(&d->conn_budget);
	r = set_enabled(d->dirty_src, dirty);
	if (r >= 0)
		r = set_enabled(d->scan_src, scan);
	if (r >= 0 && due != UINT64_MAX)
		r = sd_event_source_set_time(d->wake_src, due * 1000);
	if (r >= 0)
		r = sd_event_source_set_enabled(
			d->wake_src,
			due == UINT64_MAX ? SD_EVENT_OFF : SD_EVENT_ONESHOT);
	return r;
}

/*
 * After every dispatch of any other source (sd_event_add_post(3)): the
 * first scan's end makes the daemon ready, then what is due now.
 */
static int on_post(sd_event_source *s MAYBE_UNUSED, void *ud)
{
	struct daemon *d = ud;

	if (d->scanned && !d->ready) {
		daemon_ready(d);
		if (d->o->once)
			return 0;
	}
	return loop_arm(d);
}

static int add_signals(struct daemon *d)
{
	for (size_t i = 0; i < ARRAY_SIZE(loop_signals); i++) {
		int sig = loop_signals[i], r;
		bool reload = sig == SIGHUP || sig == SIGUSR1;

		/* --once ignores them: they stay blocked. */
		if (reload && d->o->once)
			continue;
		r = sd_event_add_signal(d->event, &d->sig_src[i], sig,
					on_signal, d);
		if (r >= 0)
			r = loop_source_setup(d->sig_src[i], PRIO_SIGNAL,
					      "signal");
		if (r >= 0 && reload)
			r = sd_event_source_set_ratelimit(d->sig_src[i],
							  SIG_RATELIMIT_USEC,
							  SIG_RATELIMIT_BURST);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_timer(struct daemon *d, sd_event_source **s, unsigned int ms,
		     sd_event_time_handler_t cb, const char *name)
{
	int r = sd_event_add_time_relative(d->event, s, CLOCK_MONOTONIC,
					   ms * 1000ULL, TIMER_ACCURACY_USEC,
					   cb, d);

	return r < 0 ? r : loop_source_setup(*s, PRIO_TIMER, name);
}

static int setup_loop(struct daemon *d)
{
	int r = sd_event_new(&d->event);

	if (r >= 0)
		r = add_signals(d);
	if (r >= 0)
		r = work_add_sources(d);
	if (r >= 0)
		r = sd_event_add_post(d->event, &d->post_src, on_post, d);
	if (r >= 0)
		r = loop_source_setup(d->post_src, PRIO_SIGNAL, "post");
	if (r < 0 || d->o->once)
		return r;
	r = add_timer(d, &d->sample_src, d->cfg->interval_ms, on_sample,
		      "sample");
	if (r >= 0)
		r = add_timer(d, &d->rescan_src, d->cfg->rescan_ms, on_rescan,
			      "rescan");
	return r < 0 ? r : conn_add_source(d);
}

int daemon_start(struct daemon *d, const struct daemon_opts *o,
		 struct config *cfg, struct topology *topo)
{
	enum aff_mode mode;
	int r;

	memset(d, 0, sizeof(*d));
	d->schedstats_orig = -1;
	d->o = o;
	d->cfg = cfg;
	d->topo = topo;
	d->conn_fd = -1;
	daemon_block_signals();
	d->node_util = calloc(topo->nnodes, sizeof(*d->node_util));
	if (!d->node_util) {
		log_err("out of memory");
		return 1;
	}
	mode = o->dry_run ? AFF_MODE_DRY_RUN : AFF_MODE_WRITE;
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
		mode = AFF_MODE_DRY_RUN_NO_KERNEL;
	}
	d->mgr = mgr_new(&o->roots, cfg, mode,
			 &(struct mgr_hooks){.tick = daemon_tick,
					     .watch = daemon_watch_trigger,
					     .unwatch = daemon_unwatch_trigger,
					     .userdata = d});
	d->soft = softness_rules_new(NULL, NULL, cfg);
	if (!d->mgr || !d->soft) {
		log_err("out of memory");
		return 1;
	}
	r = sysctl_init(&d->ratio, &o->roots, o->dry_run, !o->once);
	if (r < 0 && cfg->mode != RATIO_OFF)
		log_warn("cannot read %s/sys/kernel/sched_{allowed,preferred} "
			 "(%s): ratio %s mode disabled",
			 o->roots.proc, strerror(-r),
			 ratio_mode_name(cfg->mode));
	softness_setup(d);
	softness_schedstats_on(d);
	d->eval_budget =
		(struct budget){EVAL_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	/* Subscribe before the scan so nothing slips between the two. */
	if (!o->once)
		conn_open(d);
	/* CAP_NET_ADMIN was for the subscription: from here, the least. */
	d->caps_start = caps_permitted();
	d->caps = d->caps_start;
	daemon_caps_update(d);
	privs_check(d->cfg, &d->o->roots, d->caps, d->o->dry_run);
	r = setup_loop(d);
	if (r < 0) {
		log_err("cannot set up the event loop: %s", strerror(-r));
		return EXIT_RUNTIME;
	}
	/*
	 * A restart resumes the adaptive rules where they were (L7); --once
	 * writes the hardest, as it would exit before the rest is written.
	 */
	if (!o->once)
		mgr_resume_start(d->mgr);
	r = mgr_scan_start(d->mgr, SCAN_FULL);
	if (r < 0) {
		log_err("cannot scan %s: %s", o->roots.proc, strerror(-r));
		return 1;
	}
	log_debug("first scan of %s started", o->roots.proc);
	return 0;
}

int daemon_run(struct daemon *d)
{
	int r = loop_arm(d);

	if (r >= 0)
		r = sd_event_loop(d->event);
	if (r < 0) {
		log_err("event loop: %s", strerror(-r));
		return EXIT_RUNTIME;
	}
	if (d->o->once && d->signalled && !d->ready) {
		log_warn("stopped by a signal before the scan was done");
		return EXIT_SIGNALLED;
	}
	return 0;
}

static void loop_free(struct daemon *d)
{
	for (size_t i = 0; i < d->ntriggers; i++)
		sd_event_source_disable_unref(d->triggers[i]);
	free(d->triggers);
	d->triggers = NULL;
	d->ntriggers = 0;
	for (size_t i = 0; i < ARRAY_SIZE(d->sig_src); i++)
		d->sig_src[i] = sd_event_source_disable_unref(d->sig_src[i]);
	d->sample_src = sd_event_source_disable_unref(d->sample_src);
	d->rescan_src = sd_event_source_disable_unref(d->rescan_src);
	d->wake_src = sd_event_source_disable_unref(d->wake_src);
	d->dirty_src = sd_event_source_disable_unref(d->dirty_src);
	d->scan_src = sd_event_source_disable_unref(d->scan_src);
	d->post_src = sd_event_source_disable_unref(d->post_src);
	conn_close(d);
	d->event = sd_event_unref(d->event);
}

void daemon_stop(struct daemon *d)
{
	/* Also when stopped during the first scan: undo what it did. */
	if (!d->o->once && d->mgr) {
		notify_send("STOPPING=1\nSTATUS=stopping");
		log_info("stopping");
		if (d->cfg->restore_on_exit) {
			mgr_restore_all(d->mgr);
			sysctl_restore(&d->ratio);
		}
		softness_schedstats_restore(d);
		sysctl_done(&d->ratio);
		status_remove(d->o->roots.run);
	}
	/* The manager unwatches its triggers while the loop is there. */
	mgr_free(d->mgr);
	d->mgr = NULL;
	free(d->soft);
	d->soft = NULL;
	loop_free(d);
	sbuf_free(&d->last_status);
	sbuf_free(&d->last_json);
	daemon_status_done(d);
	sampler_done(&d->sampler);
	config_free(d->cfg);
	free(d->node_util);
	topology_free(d->topo);
	d->cfg = NULL;
	d->node_util = NULL;
	d->topo = NULL;
}
