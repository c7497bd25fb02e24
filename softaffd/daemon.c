// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event loop and its sources: signals (reload, re-adoption, stop),
 * timers (sampling, rescans, the watchdog), the proc connector and the
 * cpu.pressure triggers; start and stop.  What they call is in the
 * other daemon*.c files (daemon.h) and in the manager.
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
#include "daemon-internal.h"
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

/* ---- the proc connector ---- */

static void on_event(const struct pc_event *e, void *ud)
{
	struct daemon *d = ud;

	mgr_on_event(d->mgr, e);
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
			mgr_on_events_lost(d->mgr);
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

	if (!left || !mgr_dirty_count(d->mgr))
		return;
	mgr_flush(d->mgr, start + (left < SLICE_MS ? left : SLICE_MS));
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

void daemon_arm_timers(struct daemon *d)
{
	if (d->sample_fd >= 0)
		timer_arm(d->sample_fd, d->cfg->interval_ms);
	if (d->rescan_fd >= 0)
		timer_arm(d->rescan_fd, d->cfg->rescan_ms);
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
			daemon_reload(d);
		} else if (si.ssi_signo == SIGUSR1 && !d->o->once) {
			/* A scan in progress goes on (daemon_recheck). */
			size_t n = mgr_forget_hand(d->mgr);

			log_info("re-adopting every managed process (%zu with "
				 "masks set by hand); %s",
				 n, daemon_recheck(d));
			if (d->ratio.paused) {
				sysctl_resume(&d->ratio);
				softness_apply_config(d);
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
	r = mgr_scan_start(d->mgr, kind);
	if (r < 0)
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
}

/* The first scan is over: the daemon is ready. */
static void on_ready(struct daemon *d)
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
		d->stop = true;
		return;
	}
	daemon_publish(d);
	notify_send("READY=1");
	/* systemd counts the watchdog from here: ping at once. */
	watchdog_kick(d, true);
}

/* Milliseconds epoll may sleep: 0 with work pending, -1 for no limit. */
static int loop_timeout(struct daemon *d)
{
	uint64_t now = now_ms(), due = UINT64_MAX;

	if (mgr_scan_busy(d->mgr) || d->recheck_due ||
	    (d->rescan_pending && d->rescan_due))
		return 0;
	/* Marked processes: now, or when their share of time renews. */
	if (mgr_dirty_count(d->mgr))
		due = budget_left(&d->eval_budget, now)
			      ? now
			      : budget_renews(&d->eval_budget);
	/* After lost events, the deferred rescan within a second. */
	if (d->rescan_pending &&
	    mgr_last_scan_ms(d->mgr) + LOST_RESCAN_MS < due)
		due = mgr_last_scan_ms(d->mgr) + LOST_RESCAN_MS;
	/* Paused connector events: the end of the budget window. */
	if (d->conn_paused && budget_renews(&d->conn_budget) < due)
		due = budget_renews(&d->conn_budget);
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)(due - now);
}

/* The manager's new cpu.pressure triggers go into the loop's set. */
static int watch_trigger(void *ud, int fd)
{
	struct daemon *d = ud;
	struct epoll_event ev = {.events = EPOLLPRI, .data.fd = fd};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/*
 * A trigger fired, or with EPOLLERR its cgroup was removed: the manager
 * then closes the fd, which takes it out of the set.  False: fd is no
 * trigger.
 */
static bool on_pressure(struct daemon *d, int fd, uint32_t events)
{
	return mgr_on_pressure(d->mgr, fd, events & (EPOLLERR | EPOLLHUP));
}

static void on_timer(struct daemon *d, int fd)
{
	timer_ack(fd);
	if (fd == d->sample_fd) {
		softness_sample(d);
		daemon_publish(d);
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
		if (mgr_scan_busy(d->mgr)) {
			if (mgr_scan_step(d->mgr, now_ms() + SLICE_MS) > 0) {
				log_debug("scan done: %zu processes managed",
					  mgr_processes(d->mgr));
				if (!d->ready)
					on_ready(d);
			}
		} else if (d->recheck_due) {
			d->recheck_due = false;
			log_debug("full scan again: a reload or SIGUSR1 came "
				  "during one");
			daemon_recheck(d);
		} else if (d->rescan_pending &&
			   (d->rescan_due ||
			    now_ms() - mgr_last_scan_ms(d->mgr) >=
				    LOST_RESCAN_MS)) {
			start_rescan(d);
		}
		/* Evaluations and scans may have made cgroups ours. */
		mgr_watch_triggers(d->mgr, watch_trigger, d);
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
	daemon_arm_timers(d);
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
	mgr_set_tick(d->mgr, on_tick, d);
	d->conn_budget = (struct budget){CONN_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	d->eval_budget = (struct budget){EVAL_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	/* Subscribe before the scan so nothing slips between the two. */
	if (!o->once)
		open_connector(d);
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

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
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
	procconn_close(d->conn_fd);
	d->conn_fd = -1;
	mgr_free(d->mgr);
	d->mgr = NULL;
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
