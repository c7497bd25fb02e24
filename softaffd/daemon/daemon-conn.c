// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The proc connector in the loop: the subscription, its io source, and
 * what bounds the cost of its events: a share of each second's time
 * (CONN_BUDGET_MS), past which the source is off until the second ends,
 * and a rate limit on its dispatches.  The events go to the manager's
 * dirty queue (mgr_on_event); what is lost meanwhile, a rescan finds.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon-internal.h"
#include "procconn.h"

#define CONN_WARN_EVERY_MS 60000
/*
 * At most 100 dispatches of the connector's source in 100 ms, as an
 * outer bound beside its budget.  The budget is measured inside the
 * callback, in whole milliseconds, so it does not see what each wake-up
 * costs around it (epoll_wait(), the loop's bookkeeping: microseconds),
 * and events that come one at a time, as a fork-heavy build makes
 * them, wake the loop once each.  Past the limit the source waits for
 * the rest of the 100 ms and its next dispatches read what came
 * meanwhile, 256 at a time: a wait that the socket's 4 MiB buffer
 * (procconn.c, a few thousand events) covers at tens of thousands of
 * events a second, and what overflows is rescanned (ENOBUFS), as when
 * the budget is spent.
 */
#define CONN_RATELIMIT_USEC  (100 * 1000)
#define CONN_RATELIMIT_BURST 100

static void on_event(const struct pc_event *e, void *ud)
{
	struct daemon *d = ud;

	mgr_on_event(d->mgr, e);
}

/*
 * Out of the epoll set entirely while paused (SD_EVENT_OFF is an
 * EPOLL_CTL_DEL): an overflowed netlink socket reports EPOLLERR whatever
 * events it is watched for.
 */
static int conn_watch(struct daemon *d, bool on)
{
	int r;

	if (on == !d->conn_paused)
		return 0;
	r = sd_event_source_set_enabled(d->conn_src,
					on ? SD_EVENT_ON : SD_EVENT_OFF);
	if (r < 0)
		return r;
	d->conn_paused = !on;
	return 0;
}

int conn_window(struct daemon *d, uint64_t now)
{
	if (d->conn_paused && d->conn_src && budget_left(&d->conn_budget, now))
		return conn_watch(d, true);
	return 0;
}

void conn_close(struct daemon *d)
{
	/* The source first: its EPOLL_CTL_DEL needs the fd still open. */
	d->conn_src = sd_event_source_disable_unref(d->conn_src);
	procconn_close(d->conn_fd);
	d->conn_fd = -1;
	d->conn_paused = false;
}

static int on_conn(sd_event_source *s MAYBE_UNUSED, int fd MAYBE_UNUSED,
		   uint32_t revents MAYBE_UNUSED, void *ud)
{
	struct daemon *d = ud;
	uint64_t start_ns = monotonic_ns(), start = start_ns / 1000000;
	uint64_t left = budget_left(&d->conn_budget, start);
	uint64_t end = start + (left < SLICE_MS ? left : SLICE_MS);
	int r;

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
		r = conn_watch(d, false);
		/* Whatever is dropped meanwhile, a rescan finds. */
		d->rescan_pending = true;
		d->events_lost = true;
		return r;
	}
	/* Bounded, so a fork storm cannot starve signals and timers. */
	for (int i = 0; i < EVENTS_PER_DISPATCH && now_ms() < end; i++) {
		r = procconn_read(d->conn_fd, on_event, d);
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
			conn_close(d);
			break;
		}
	}
	budget_charge_since(&d->conn_budget, start_ns);
	return 0;
}

int conn_add_source(struct daemon *d)
{
	int r;

	if (d->conn_fd < 0)
		return 0;
	r = sd_event_add_io(d->event, &d->conn_src, d->conn_fd, EPOLLIN,
			    on_conn, d);
	if (r >= 0)
		r = loop_source_setup(d->conn_src, PRIO_EVENTS,
				      "proc-connector");
	if (r >= 0)
		r = sd_event_source_set_ratelimit(
			d->conn_src, CONN_RATELIMIT_USEC, CONN_RATELIMIT_BURST);
	return r;
}

void conn_open(struct daemon *d)
{
	d->conn_budget =
		(struct budget){CONN_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
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
