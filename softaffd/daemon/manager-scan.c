// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The walk of <proc>, a slice at a time (scanner.c reads the
 * directory): each pid evaluated as its kind asks (enum mgr_scan_kind),
 * and at the end what the walk did not meet forgotten.
 */
#include <stdlib.h>

#include "manager-internal.h"

bool mgr_scan_busy(const struct mgr *m)
{
	return scanner_busy(&m->scan);
}

void mgr_scan_abort(struct mgr *m)
{
	scanner_abort(&m->scan);
}

int mgr_scan_start(struct mgr *m, enum mgr_scan_kind kind)
{
	int r = scanner_start(&m->scan, m->roots.proc);

	if (r < 0)
		return r;
	m->scan_kind = kind;
	m->scan_work_ns = 0;
	m->gen++;
	m->cnt.scans++;
	return 0;
}

/*
 * Do the attributes that change without an event still say what the
 * last evaluation of a known process read?  Only those it read are
 * read again (a command line and a cgroup, 3 system calls each).
 */
static bool attrs_same(struct mgr *m, int pid, const struct attr_digest *was)
{
	struct attr_digest now;

	if (!was->read)
		return true;
	if (mgr_read_digest(scanner_dirfd(&m->scan), pid, was->read, m->snap,
			    &now) < 0)
		return false; /* gone, or unreadable: the full way says */
	return now.sum == was->sum;
}

/* One /proc entry of the scan in progress. */
static void scan_pid(struct mgr *m, int pid)
{
	enum walk walk = m->scan_kind == SCAN_FULL ? WALK_ALL
			 : m->scan_kind == SCAN_NEW || m->scan_kind == SCAN_NEW_ATTRS
				 ? WALK_NEW
				 : WALK_NONE;
	bool attrs = m->scan_kind == SCAN_FULL || m->scan_kind == SCAN_ATTRS ||
		     m->scan_kind == SCAN_NEW_ATTRS;
	bool light = m->scan_kind == SCAN_LIGHT;
	struct managed *e = mgr_lookup(m, pid);
	struct other *o = mgr_other_lookup(m, pid);
	const struct attr_digest *known = e			  ? &e->attrs
					  : o && o->starttime ? &o->attrs
							      : NULL;

	/* A re-read that finds nothing new is the rescan without it. */
	if (attrs && m->scan_kind != SCAN_FULL && known &&
	    attrs_same(m, pid, known)) {
		attrs = false;
		light = m->scan_kind == SCAN_ATTRS;
	}
	if (light && known) {
		/* Known: the connector tells us when it changes. */
		if (e)
			e->seen = m->gen;
		else
			o->seen = m->gen;
		return;
	}
	if (mgr_snap_open(m, pid) < 0)
		return;
	/* A scan finds children that inherited a managed parent's mask. */
	e = mgr_lookup(m, m->snap->st.ppid);
	mgr_eval(m, D_EVAL, e ? e->rule + 1 : 0, walk, attrs);
	mgr_snap_close(m->snap);
}

/* Forget what the walk did not see: those processes have exited. */
static void scan_end(struct mgr *m)
{
	struct pidnode *n, *next;

	pidtable_for_each (&m->procs, n, next)
		if (as_managed(n)->seen != m->gen)
			mgr_drop(m, as_managed(n));
	pidtable_for_each (&m->others, n, next) {
		if (((struct other *)n)->seen != m->gen)
			mgr_other_remove(m, (struct other *)n);
	}
	pidtable_shrink(&m->procs);
	pidtable_shrink(&m->others);
	container_sweep(&m->ctr, m->roots.sys, monotonic_ns());
	m->last_scan_ms = now_ms();
}

/* A step of the scan, its time counted (mgr_scan_work_ns()). */
static int scan_step(struct mgr *m, uint64_t deadline_ms)
{
	unsigned long i = 0;
	int pid;

	while (scanner_next(&m->scan, &pid)) {
		scan_pid(m, pid);
		mgr_tick(m, i++);
		/* now_ms() is a vDSO call: cheap enough for every pid. */
		if (now_ms() >= deadline_ms)
			return 0;
	}
	scan_end(m);
	return 1;
}

int mgr_scan_step(struct mgr *m, uint64_t deadline_ms)
{
	uint64_t start = monotonic_ns();
	int r;

	if (!scanner_busy(&m->scan))
		return 1;
	r = scan_step(m, deadline_ms);
	m->scan_work_ns += monotonic_ns() - start;
	if (r)
		m->scan_work_last_ns[m->scan_kind] = m->scan_work_ns;
	return r;
}

int mgr_scan_finish(struct mgr *m)
{
	int r;

	while ((r = mgr_scan_step(m, UINT64_MAX)) == 0)
		;
	return r < 0 ? r : 0;
}

bool mgr_scan_busy_with(const struct mgr *m, enum mgr_scan_kind kind)
{
	return scanner_busy(&m->scan) && m->scan_kind == kind;
}

uint64_t mgr_last_scan_ms(const struct mgr *m)
{
	return m->last_scan_ms;
}

uint64_t mgr_scan_work_ns(const struct mgr *m, enum mgr_scan_kind kind)
{
	return m->scan_work_last_ns[kind];
}
