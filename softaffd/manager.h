/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_MANAGER_H
#define SOFTAFF_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "topology.h"
#include "util.h"

/* One process we manage, keyed by pid + start time (pids get reused). */
struct managed {
	struct managed *next;
	int pid;
	uint64_t starttime;
	unsigned int rule; /* index into the current config */
	struct cpuset target;
	unsigned int flags;
	uint32_t seen; /* scan generation that last saw it */
};

enum {
	M_IGNORED = 1 << 0, /* EPERM: no longer managed */
	M_WARNED_EMPTY = 1 << 1,
	M_WARNED_ERROR = 1 << 2,
	M_LOGGED = 1 << 3, /* first apply was logged at info */
};

struct mgr_counters {
	uint64_t scans, events, events_lost;
	uint64_t written, unchanged, gone, eperm, einval, empty, rt, errors;
	uint64_t restored, foreign, ratio_changes;
};

struct mgr {
	struct roots roots;
	const struct config *cfg;
	const struct topology *topo;
	bool dry_run;
	struct managed **buckets;
	size_t nbuckets, count;
	uint32_t gen;
	uint64_t last_scan_ms;
	unsigned int *rule_count; /* managed processes per rule */
	bool *einval_warned;	  /* per rule */
	struct mgr_counters cnt;
};

int mgr_init(struct mgr *m, const struct roots *roots, const struct config *cfg,
	     const struct topology *topo, bool dry_run);
void mgr_done(struct mgr *m);

/* Full walk of <proc>: match, apply, forget processes that are gone. */
int mgr_scan(struct mgr *m);
/* (Re)evaluate one process, e.g. after exec or comm change. */
void mgr_eval_pid(struct mgr *m, int pid);
/* Proc connector events. */
void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid);
void mgr_on_exit(struct mgr *m, int pid, int tgid);
/*
 * Switch to a new config: processes whose rule is unchanged stay managed;
 * those whose rule changed or vanished are restored first.  Then rescans.
 * cfg must outlive the manager or the next reload.
 */
int mgr_reload(struct mgr *m, const struct config *cfg);
/* Reset everything we set back to the hard mask (if still ours). */
void mgr_restore_all(struct mgr *m);
/* Node sets of rules with managed processes; returns how many. */
unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max);
struct managed *mgr_lookup(const struct mgr *m, int pid);
/* Append "rule NAME pids ..." lines for the status file. */
void mgr_status(const struct mgr *m, struct sbuf *b);

#endif
