// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The work the loop does in slices: the dirty queue, evaluated within
 * its budget, and scans (the first, periodic rescans, a rescan after
 * lost events, full scans again after a reload or SIGUSR1), and the
 * full scan a reload or SIGUSR1 asks for.  Which of it is due now, and
 * when the rest is, is daemon-main.c's post source.
 */
#include <string.h>

#include "daemon-internal.h"

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
			d->scanned = true; /* READY=1 from on_post */
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
	return 0;
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
	return 0;
}

/* The wake-up: a budget window is over, or a lost event's rescan due. */
static int on_wake(sd_event_source *s MAYBE_UNUSED, uint64_t usec MAYBE_UNUSED,
		   void *ud MAYBE_UNUSED)
{
	return 0; /* on_post arms what is due */
}

static int add_defer(struct daemon *d, sd_event_source **s,
		     sd_event_handler_t cb, int64_t prio, const char *name)
{
	int r = sd_event_add_defer(d->event, s, cb, d);

	if (r >= 0)
		r = loop_source_setup(*s, prio, name);
	/* Off until on_post finds work for it. */
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

/*
 * A reload (whether it changed the rules or not) and SIGUSR1 check every
 * managed thread and evaluate every process: that is how masks set by
 * hand since are found, and how processes that the new rules match and
 * the old ones did not are picked up.  But a full scan in progress (the
 * first one, or an earlier reload's) is not started over: in a reload
 * loop none would ever end, and READY=1 waits for the first.  What that
 * scan has passed already gets its check from one more full scan right
 * after it.  Returns what the log line says.
 */
const char *daemon_recheck(struct daemon *d)
{
	int r = mgr_recheck(d->mgr);

	if (r == 1) {
		d->recheck_due = true;
		return "the full scan in progress goes on, one more after it";
	}
	if (r < 0) {
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
		return "no full scan";
	}
	return "checking every process";
}
