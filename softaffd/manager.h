/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_MANAGER_H
#define SOFTAFF_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "topology.h"
#include "util.h"

/* What softaffd knows of one thread of a managed process. */
struct mthread {
	int tid;
	bool hand; /* someone else set its mask: left alone */
};

/* Chains of the pid hash tables; first member of what they hold. */
struct pidnode {
	struct pidnode *next;
	int pid;
};

struct pidtable {
	struct pidnode **buckets;
	size_t nbuckets, count;
};

/* One process we manage, keyed by pid + start time (pids get reused). */
struct managed {
	struct pidnode node;
	uint64_t starttime;
	unsigned int rule; /* index into the current config */
	unsigned int flags;
	uint32_t seen;		 /* scan generation that last saw it */
	struct mthread *threads; /* sorted by tid: those we set or left */
	unsigned int nthreads, cap, nhand;
};

enum {
	M_IGNORED = 1 << 0, /* EPERM: no longer managed */
	M_WARNED_EMPTY = 1 << 1,
	M_WARNED_ERROR = 1 << 2,
	M_LOGGED = 1 << 3,  /* first apply was logged at info */
	M_ADOPTED = 1 << 4, /* first pass done: later masks are claimed */
	M_HAND_LOGGED = 1 << 5,
};

/* A process seen that matched no rule: not read again until it changes. */
struct other {
	struct pidnode node;
	uint32_t seen;
};

/*
 * FULL reads and evaluates every process and checks every thread of the
 * managed ones (at start, reload, re-adoption): that finds masks set by
 * hand.  NEW does the same but reads only threads not met before: the
 * periodic rescan without a connector, and after lost events.  With a
 * working connector, events carry exec, comm, uid, fork and exit, so the
 * periodic walk only has to find what they did not: LIGHT evaluates just
 * the pids it does not know yet, ATTRS also re-reads the attributes that
 * change without an event (a cgroup move, a rewritten command line).
 */
enum mgr_scan_kind { SCAN_FULL, SCAN_NEW, SCAN_ATTRS, SCAN_LIGHT };

struct mgr_counters {
	uint64_t scans, events, events_lost;
	uint64_t written, unchanged, gone, eperm, einval, empty, rt, errors;
	uint64_t restored, foreign, ratio_changes, hand;
};

struct mgr {
	struct roots roots;
	const struct config *cfg;
	const struct topology *topo;
	bool dry_run;
	struct pidtable procs;	/* struct managed */
	struct pidtable others; /* struct other */
	size_t count;		/* == procs.count */
	uint32_t gen;
	uint64_t last_scan_ms;	  /* when the last scan ended */
	unsigned int *rule_count; /* managed processes per rule */
	bool *einval_warned;	  /* per rule */
	size_t nhand_procs;	  /* managed processes with hand-set threads */
	/* The scan in progress, walked a slice at a time; dir NULL if none. */
	void *scan_dir;
	enum mgr_scan_kind scan_kind;
	/* Called every few dozen items of any long batch (watchdog). */
	void (*tick)(void *userdata);
	void *tick_userdata;
	struct mgr_counters cnt;
};

int mgr_init(struct mgr *m, const struct roots *roots, const struct config *cfg,
	     const struct topology *topo, bool dry_run);
void mgr_done(struct mgr *m);

/* Full walk of <proc> in one go: match, apply, forget what is gone. */
int mgr_scan(struct mgr *m);
/*
 * The same a slice at a time, so one event loop keeps serving signals
 * and timers: start (abandoning a scan in progress), then step until it
 * returns 1 (done) rather than 0 (more to do after deadline_ms, a
 * now_ms() value) or -errno.
 */
int mgr_scan_start(struct mgr *m, enum mgr_scan_kind kind);
int mgr_scan_step(struct mgr *m, uint64_t deadline_ms);
int mgr_scan_finish(struct mgr *m); /* step until done */
bool mgr_scan_busy(const struct mgr *m);
void mgr_scan_abort(struct mgr *m);
/* (Re)evaluate one process, e.g. after a comm or uid change. */
void mgr_eval_pid(struct mgr *m, int pid);
/* exec: evaluate afresh and re-adopt, hand-set masks included. */
void mgr_on_exec(struct mgr *m, int pid);
/* Proc connector events. */
void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid);
void mgr_on_exit(struct mgr *m, int pid, int tgid);
/*
 * Switch to a new config: processes whose rule is unchanged stay managed;
 * those whose rule changed or vanished are restored first, except threads
 * with hand-set masks, which stay as they are.  Then starts a full scan
 * (mgr_scan_step or mgr_scan_finish completes it).  cfg must outlive the
 * manager or the next reload.
 */
int mgr_reload(struct mgr *m, const struct config *cfg);
/*
 * Forget which masks were set by hand and apply the rules to every
 * managed thread again; starts a full scan.  Returns how many processes
 * had hand-set threads.
 */
size_t mgr_readopt(struct mgr *m);
/* Reset everything we set back to the hard mask (if still ours). */
void mgr_restore_all(struct mgr *m);
/* Node sets of rules with managed processes; returns how many. */
unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max);
struct managed *mgr_lookup(const struct mgr *m, int pid);
/* Append "rule NAME ... pids ..." (and "hand-managed ...") status lines. */
void mgr_status(const struct mgr *m, struct sbuf *b);

#endif
