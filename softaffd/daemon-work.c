// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The work the loop does in slices: the dirty queue, evaluated within
 * its budget, and scans (the first, periodic rescans, a rescan after
 * lost events, full scans again after a reload or SIGUSR1); and, after
 * every callback, which of it is due now (two deferred sources) and
 * when the rest is (one timer).
 */
#include <string.h>

#include "daemon-internal.h"

/* After lost connector events, rescan at most this often. */
#define LOST_RESCAN_MS 1000

uint64_t walk_gap_ms(unsigned int rescan_ms, uint64_t work_ns)
{
	uint64_t gap = (uint64_t)ATTRS_EVERY * rescan_ms;
	uint64_t duty = work_ns / 1000 * WALK_DUTY / 1000;

	return gap > duty ? gap : duty;
}

/*
 * With a working connector, which reports every fork, exec, rename,
 * uid change and exit, and says when it lost some, the periodic walk
 * is a safety net (the kernel drops an event silently when it cannot
 * allocate it) and the reader of what changes without an event: every
 * ATTRS_EVERY-th period or rarer (WALK_DUTY), re-reading of each
 * process only the attributes its rule was decided on.  Lost events or
 * no connector at all need the full walk, every period.
 */
static void start_rescan(struct daemon *d)
{
	bool attrs = d->cfg->needs & (NEED_CGROUP | NEED_CMDLINE);
	bool trust = d->conn_fd >= 0 && !d->events_lost;
	enum mgr_scan_kind kind;
	uint64_t gap;
	int r;

	d->rescan_pending = d->rescan_due = d->events_lost = false;
	if (trust) {
		kind = attrs ? SCAN_ATTRS : SCAN_LIGHT;
		gap = walk_gap_ms(d->cfg->rescan_ms,
				  mgr_scan_work_ns(d->mgr, kind));
		/* A timer tick early (it fires each rescan_ms) is in time. */
		if (now_ms() + d->cfg->rescan_ms / 2 <
		    mgr_last_scan_ms(d->mgr) + gap)
			return;
	} else {
		kind = attrs && ++d->rescans % ATTRS_EVERY == 0 ? SCAN_NEW_ATTRS
								: SCAN_NEW;
	}
	r = mgr_scan_start(d->mgr, kind);
	if (r < 0)
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
}

/* A slice of the scan in progress, or the one that is due. */
static int on_scan(sd_event_source *s MAYBE_UNUSED, void *ud)
{
	struct daemon *d = ud;

	if (mgr_scan_busy(d->mgr)) {
		if (mgr_scan_step(d->mgr, now_ms() + SLICE_MS) > 0) {
			log_debug("scan done: %zu processes managed",
				  mgr_processes(d->mgr));
			if (!d->ready)
				daemon_ready(d);
		}
	} else if (d->recheck_due) {
		d->recheck_due = false;
		log_debug("full scan again: a reload or SIGUSR1 came during "
			  "one");
		daemon_recheck(d);
	} else if (d->rescan_pending &&
		   (d->rescan_due ||
		    now_ms() - mgr_last_scan_ms(d->mgr) >= LOST_RESCAN_MS)) {
		start_rescan(d);
	}
	return loop_arm(d);
}

/*
 * A slice of the dirty queue, within its share of time.  Each marked
 * process is evaluated once, however many events it got meanwhile.
 */
static int on_dirty(sd_event_source *s MAYBE_UNUSED, void *ud)
{
	struct daemon *d = ud;
	uint64_t start_ns = monotonic_ns(), start = start_ns / 1000000;
	uint64_t left = budget_left(&d->eval_budget, start);

	if (left && mgr_dirty_count(d->mgr)) {
		mgr_flush(d->mgr, start + (left < SLICE_MS ? left : SLICE_MS));
		budget_charge_since(&d->eval_budget, start_ns);
	}
	return loop_arm(d);
}

static int set_enabled(sd_event_source *s, bool on)
{
	return sd_event_source_set_enabled(s, on ? SD_EVENT_ON : SD_EVENT_OFF);
}

int loop_arm(struct daemon *d)
{
	uint64_t now = now_ms(), due = UINT64_MAX, lost;
	bool dirty = false, scan;
	int r;

	/* Evaluations and scans may have made cgroups ours. */
	mgr_watch_triggers(d->mgr, daemon_watch_trigger, d);
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

/* The wake-up: a budget window is over, or a lost event's rescan due. */
static int on_wake(sd_event_source *s MAYBE_UNUSED, uint64_t usec MAYBE_UNUSED,
		   void *ud)
{
	return loop_arm(ud);
}

static int add_defer(struct daemon *d, sd_event_source **s,
		     sd_event_handler_t cb, int64_t prio, const char *name)
{
	int r = sd_event_add_defer(d->event, s, cb, d);

	if (r >= 0)
		r = loop_source_setup(*s, prio, name);
	/* Off until loop_arm() finds work for it. */
	return r < 0 ? r : sd_event_source_set_enabled(*s, SD_EVENT_OFF);
}

int work_add_sources(struct daemon *d)
{
	int r = add_defer(d, &d->dirty_src, on_dirty, PRIO_DIRTY,
			  "dirty-queue");

	if (r >= 0)
		r = add_defer(d, &d->scan_src, on_scan, PRIO_SCAN, "scan");
	if (r >= 0)
		r = sd_event_add_time(d->event, &d->wake_src, CLOCK_MONOTONIC,
				      0, TIMER_ACCURACY_USEC, on_wake, d);
	if (r >= 0)
		r = loop_source_setup(d->wake_src, PRIO_TIMER, "wake");
	return r < 0 ? r
		     : sd_event_source_set_enabled(d->wake_src, SD_EVENT_OFF);
}
