/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_STATUS_H
#define SOFTAFF_STATUS_H

#include <stdbool.h>

#include "config.h"
#include "manager.h"
#include "procfs.h"
#include "topology.h"
#include "util.h"

#define STATUS_FILE "status"
#define STATUS_JSON_FILE "status.json"
/* Status lists at most this many pids per rule; counts stay exact. */
#define STATUS_MAX_PIDS 1000

/*
 * A rule's softness as the status shows it: the ratio in force and
 * whether it acts on cgroups (the manager's), why and on which figures
 * (the daemon's controller).
 */
struct status_softness {
	struct ratio ratio;
	bool cg_mode;
	const char *why; /* "": not sampled yet */
	const struct rule_figures *last;
};

/* One rule as the status shows it. */
struct status_rule {
	unsigned int processes;
	const struct status_softness *soft; /* NULL: no softness to show */
};

/* Everything /run/softaffd/status shows, gathered by the daemon. */
struct status_snapshot {
	int pid;
	const struct config *cfg;
	bool dry_run;
	bool have_ratio;
	struct ratio ratio;
	const char *ratio_note; /* e.g. "paused: changed by hand", or NULL */
	uint64_t ratio_changes;
	bool connector;
	const struct topology *topo;
	const double *node_util;
	const struct status_rule *rules; /* per rule of cfg */
	const int *pids; /* mgr_status_pids() triples, by rule then pid */
	unsigned int npids;
	/*
	 * No pid lists (status_format): what is left is cheap to make, and
	 * with mgr_status_gen() tells whether anything changed.
	 */
	bool omit_pids;
	size_t processes, hand_processes;
	const struct mgr_counters *cnt;
	/* Containers a rule left alone: container_list_left() */
	const struct container_left *containers;
	unsigned int ncontainers;
};

/* Pure: the triples of rule r are pids[lo * 3] up to pids[hi * 3]. */
void status_rule_span(const struct status_snapshot *s, unsigned int r,
		      unsigned int *ret_lo, unsigned int *ret_hi);
/* Pure: the status text (without its "updated" line). */
void status_format(const struct status_snapshot *s, struct sbuf *b);
/* Pure: the same as one JSON object (softaffd --status --json). */
void status_format_json(const struct status_snapshot *s, struct sbuf *b);
/*
 * The figures both show: the wait fraction as the control law sees it,
 * where it comes from, and the share of run time outside, in percent.
 */
double status_wait_pct(const struct rule_figures *f);
const char *status_wait_source(const struct rule_figures *f);
double status_outside_pct(const struct rule_figures *f);
/* Spills or returns (n) per minute, over the walk's interval. */
double status_per_min(const struct rule_figures *f, uint64_t n);
/* Figures worth showing: a valid sample of an interval with threads. */
bool status_has_figures(const struct rule_figures *f);
/*
 * Why spills and returns cannot be shown: the kernel counts them (and
 * soft_outside_runtime) only with schedstats on, and only CAP_SYS_ADMIN
 * may turn that on, which the daemon never has.  Reading them needs
 * nothing (/proc/PID/sched is world-readable, with no ptrace check).
 */
#define STATUS_NEEDS_SCHEDSTATS "needs kernel.sched_schedstats=1"
/* What status says of a container's process that a rule would match. */
#define STATUS_CONTAINER_SAYS "set by the container's annotations"
/* Pure: the one-line STATUS= for systemd. */
void status_line(const struct status_snapshot *s, char *buf, size_t size);

/*
 * Atomically replace <run>/status with text plus an "updated" line, but
 * only if text differs from *last (which then takes a copy of it).
 * 1 if written, 0 if unchanged, or -errno.
 */
int status_write(const char *run_dir, const struct sbuf *text,
		 struct sbuf *last);
/* The JSON file: the same, without the "updated" line. */
int status_write_json(const char *run_dir, const struct sbuf *text,
		      struct sbuf *last);
/* Remove it on a clean exit, so --status can tell "not running". */
void status_remove(const char *run_dir);
/* softaffd --status: copy the file to stdout.  Exit code. */
int status_show(const char *run_dir);
int status_show_json(const char *run_dir);

#endif
