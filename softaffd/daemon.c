// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event loop and its sources, start and stop.  One sd-event loop
 * serves signals (reload, re-adoption, stop), timers (sampling, rescans,
 * and a wake-up for what the budgets and a lost event's rescan wait
 * for), the cpu.pressure triggers, the proc connector (daemon-conn.c)
 * and two deferred sources that do the sliced work: the dirty queue and
 * scans; from READY=1 on it also pings the systemd watchdog.  What they
 * call is in the other daemon*.c files (daemon.h) and in the manager.
 *
 * Each iteration dispatches one source, by priority (daemon-internal.h):
 *   signals -> timers, triggers -> connector events into the dirty queue
 *   (a slice) -> the dirty queue evaluated (a slice) -> a scan in
 *   progress (a slice)
 * so a SIGTERM waits for at most one slice, whatever the load.  Every
 * callback ends in loop_arm(), which says which sliced work is due.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

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

/* ---- the watchdog ---- */

/*
 * The loop pings between callbacks (sd_event_set_watchdog(3)): each
 * iteration once a quarter of the period has passed, and an idle loop
 * wakes for it.  A long batch inside one callback (a reload over many
 * thousand processes, the restore on stop) calls this hook of the
 * manager's: ping once a quarter has passed since the iteration began
 * or since the last ping from here.
 */
static void on_tick(void *ud)
{
	struct daemon *d = ud;
	uint64_t now = now_ms(), last = d->wd_last_ms, usec;

	if (!d->wd_quarter_ms)
		return;
	if (sd_event_now(d->event, CLOCK_MONOTONIC, &usec) >= 0 &&
	    usec / 1000 > last)
		last = usec / 1000;
	if (now - last < d->wd_quarter_ms)
		return;
	d->wd_last_ms = now;
	notify_send("WATCHDOG=1");
}

/* systemd counts the watchdog from READY=1: the first ping goes at once. */
static void watchdog_start(struct daemon *d)
{
	int r = sd_event_set_watchdog(d->event, true);
	uint64_t usec = notify_watchdog_usec();

	if (r < 0)
		log_warn("cannot ping the systemd watchdog: %s", strerror(-r));
	if (r <= 0)
		return;
	d->wd_quarter_ms = usec / 4000 ? usec / 4000 : 1;
	d->wd_last_ms = now_ms();
}

/* The first scan is over: the daemon is ready. */
void daemon_ready(struct daemon *d)
{
	d->ready = true;
	/* --once leaves the adaptive ratio alone: nobody would adapt it. */
	if (!d->o->once || d->cfg->mode == RATIO_FIXED)
		softness_apply_config(d);
	sampler_update(&d->sampler, d->o->roots.proc); /* prime the deltas */
	log_info("started: %u rules, %zu processes managed, ratio %s",
		 d->cfg->nrules, mgr_processes(d->mgr),
		 ratio_mode_name(d->cfg->mode));
	if (d->o->once) {
		sd_event_exit(d->event, 0);
		return;
	}
	daemon_publish(d);
	notify_send("READY=1");
	watchdog_start(d);
}

/* ---- the cpu.pressure triggers ---- */

/*
 * A trigger fired, or with EPOLLERR its cgroup was removed: the manager
 * then forgets the cgroup and closes the fd, and its source goes too.
 * So does one whose fd the manager does not know (it would fire for
 * ever).
 */
static int on_pressure(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct daemon *d = ud;
	bool gone = revents & (EPOLLERR | EPOLLHUP);

	if (!mgr_on_pressure(d->mgr, fd, gone) || gone)
		d->triggers[fd] = sd_event_source_unref(s);
	return loop_arm(d);
}

/*
 * The manager's new cpu.pressure triggers go into the loop.  It closes
 * a trigger's fd when it forgets the cgroup, which takes the fd out of
 * the epoll set but leaves its source: one found on the same fd number
 * is that stale source, dropped before the new one is added (so that
 * its EPOLL_CTL_DEL finds nothing to take out).
 */
int daemon_watch_trigger(void *ud, int fd)
{
	struct daemon *d = ud;
	int r;

	if ((size_t)fd >= d->ntriggers) {
		size_t n = (size_t)fd + 1;
		sd_event_source **t = realloc(d->triggers, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + d->ntriggers, 0, (n - d->ntriggers) * sizeof(*t));
		d->triggers = t;
		d->ntriggers = n;
	}
	d->triggers[fd] = sd_event_source_unref(d->triggers[fd]);
	r = sd_event_add_io(d->event, &d->triggers[fd], fd, EPOLLPRI,
			    on_pressure, d);
	if (r >= 0)
		r = loop_source_setup(d->triggers[fd], PRIO_TIMER,
				      "cpu.pressure");
	if (r < 0)
		d->triggers[fd] = sd_event_source_unref(d->triggers[fd]);
	return r;
}

/* ---- signals and timers ---- */

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
	return loop_arm(d);
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
	int r;

	softness_sample(d);
	daemon_publish(d);
	r = timer_again(d, s, usec, d->cfg->interval_ms);
	return r < 0 ? r : loop_arm(d);
}

static int on_rescan(sd_event_source *s, uint64_t usec, void *ud)
{
	struct daemon *d = ud;
	int r;

	d->rescan_pending = true;
	d->rescan_due = true;
	r = timer_again(d, s, usec, d->cfg->rescan_ms);
	return r < 0 ? r : loop_arm(d);
}

static int timer_set(sd_event_source *s, unsigned int ms)
{
	int r = sd_event_source_set_time_relative(s, ms * 1000ULL);

	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

void daemon_arm_timers(struct daemon *d)
{
	int r = 0;

	if (d->sample_src)
		r = timer_set(d->sample_src, d->cfg->interval_ms);
	if (r >= 0 && d->rescan_src)
		r = timer_set(d->rescan_src, d->cfg->rescan_ms);
	if (r < 0)
		log_warn("cannot arm the timers: %s", strerror(-r));
}

/* ---- start and stop ---- */

int loop_source_setup(sd_event_source *s, int64_t prio, const char *name)
{
	int r = sd_event_source_set_priority(s, prio);

	if (r >= 0)
		r = sd_event_source_set_description(s, name);
	/*
	 * A callback that fails (the loop's own calls, out of memory)
	 * ends the loop, and the daemon with EXIT_RUNTIME: switched off,
	 * its source would leave the daemon deaf to it.
	 */
	if (r >= 0)
		r = sd_event_source_set_exit_on_failure(s, true);
	return r < 0 ? r : 0;
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
	d->mgr = mgr_new(&o->roots, cfg, o->dry_run);
	if (!d->mgr) {
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
	mgr_set_tick(d->mgr, on_tick, d);
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
	/* Before the manager closes the triggers' fds (EPOLL_CTL_DEL). */
	loop_free(d);
	mgr_free(d->mgr);
	d->mgr = NULL;
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
