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

/* ---- the watchdog ---- */

/*
 * The loop pings between callbacks (sd_event_set_watchdog(3)): each
 * iteration once a quarter of the period has passed, and an idle loop
 * wakes for it.  A long batch inside one callback (a reload over many
 * thousand processes, the restore on stop) calls this hook of the
 * manager's: ping once a quarter has passed since the iteration began
 * or since the last ping from here.
 */
void daemon_tick(void *ud)
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
void daemon_watchdog_start(struct daemon *d)
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

/* ---- the cpu.pressure triggers ---- */

/*
 * A trigger fired, or with EPOLLERR its cgroup was removed: the manager
 * then forgets the cgroup, which unwatches and closes the fd.  A source
 * whose fd the manager does not know goes too (it would fire for ever).
 */
static int on_pressure(sd_event_source *s MAYBE_UNUSED, int fd,
		       uint32_t revents, void *ud)
{
	struct daemon *d = ud;
	bool gone = revents & (EPOLLERR | EPOLLHUP);

	if (!mgr_on_pressure(d->mgr, fd, gone))
		daemon_unwatch_trigger(d, fd);
	return 0;
}

/*
 * The manager's watch hook: a new cpu.pressure trigger into the loop.
 * The sources are kept by fd number for the unwatch hook, which the
 * manager calls before it closes the fd: a number in use here is never
 * another's.
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
	if (d->triggers[fd])
		return -EBUSY; /* watched and not unwatched: a bug */
	r = sd_event_add_io(d->event, &d->triggers[fd], fd, EPOLLPRI,
			    on_pressure, d);
	if (r >= 0)
		r = loop_source_setup(d->triggers[fd], PRIO_TIMER,
				      "cpu.pressure");
	if (r < 0)
		d->triggers[fd] = sd_event_source_unref(d->triggers[fd]);
	return r;
}

/* The manager's unwatch hook: fd is about to be closed. */
void daemon_unwatch_trigger(void *ud, int fd)
{
	struct daemon *d = ud;

	if (fd >= 0 && (size_t)fd < d->ntriggers)
		d->triggers[fd] =
			sd_event_source_disable_unref(d->triggers[fd]);
}

/* ---- signals and timers ---- */

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
