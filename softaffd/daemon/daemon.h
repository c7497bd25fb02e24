/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_DAEMON_H
#define SOFTAFF_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "control.h"
#include "log.h"
#include "manager.h"
#include "rulectl.h"
#include "sampler.h"
#include "sysctl.h"
#include "topology.h"
#include "util.h"

/*
 * Exit codes: 1 = bad configuration or kernel without the feature (the
 * unit does not restart on it), 2 = usage, 3 = --status finds no daemon,
 * 70 = the event loop failed (restart may help), 143 = --once stopped
 * by a signal before it was done.
 */
#define EXIT_RUNTIME 70
#define EXIT_SIGNALLED 143

/*
 * A rule's softness, which the daemon's controller owns and decides
 * (daemon-softness.c); the manager gets what follows from it: the
 * ratio (mgr_set_rule_ratio) and how to sample the rule
 * (mgr_rule_plan).
 */
struct rule_softness {
	struct rulectl_state ctl; /* adaptive rules */
	/*
	 * Asleep: every cgroup of the rule has a PSI trigger, the rule is
	 * at its hardest and its tasks did not wait: it is sampled only
	 * for --status until a trigger fires (struct rule_sampled woken).
	 */
	bool asleep;
	bool sampled_now;	  /* the last mgr_sample sampled it */
	char why[160];		  /* why the softness is what it is */
	struct rule_figures last; /* the last sample, for --status */
};

struct daemon_opts {
	const char *config;
	bool dry_run, once;
	struct roots roots;
};

/*
 * The running daemon: one thread, one sd-event loop (sd-event(3)) over
 * the signals, timers, the proc connector, the cpu.pressure triggers
 * of adaptive cgroup rules (EPOLLPRI) and two deferred sources for the
 * work done in slices (SLICE_MS): the dirty queue and scans.  Sources
 * are served by priority: signals first, then timers and triggers, then
 * a slice each of connector events, of the dirty queue and of a scan;
 * events and the dirty queue also have a share of each second
 * (CONN_BUDGET_MS, EVAL_BUDGET_MS), reloads a rate limit.
 *
 *   daemon.c           the loop and its sources (signals, timers,
 *                      triggers), the watchdog, start and stop
 *   daemon-work.c      the sliced work (the dirty queue, scans) and
 *                      when it is due
 *   daemon-conn.c      the proc connector in the loop: its budget and
 *                      rate limit
 *   daemon-reload.c    SIGHUP: topology, configuration, capabilities
 *   daemon-softness.c  the control laws on the figures: per rule, and
 *                      the global sysctl ratio
 *   daemon-status.c    the status files and STATUS= from a snapshot
 */
struct daemon {
	const struct daemon_opts *o;
	struct config *cfg;
	struct topology *topo;
	struct mgr *mgr;
	struct sampler sampler;
	struct ctl_params ctl_params;
	struct ctl_state ctl;
	struct sysctl_ratio ratio;
	struct rulectl_params rctl;
	struct rule_softness *soft; /* per rule of cfg */
	int schedstats_orig; /* what kernel.sched_schedstats was, -1: untouched */
	double *node_util;
	unsigned int caps_start; /* CAPS_* permitted at start */
	unsigned int caps;	 /* CAPS_* kept */
	bool caps_logged;
	int conn_fd;
	bool conn_paused; /* over the connector's budget */
	struct budget conn_budget, eval_budget;
	uint64_t conn_warned_ms;
	bool ready, signalled;
	bool scanned; /* the first scan is over: READY=1 is due */
	bool rescan_pending, rescan_due, events_lost;
	bool recheck_due; /* a full scan after the one in progress */
	bool warned_status, warned_sample;
	unsigned int rescans;
	uint64_t wd_quarter_ms, wd_last_ms; /* pings from inside long batches */
	char last_notify[256];
	struct sbuf last_status, last_json;
	/* daemon-status.c: the sorted pids and the status without them. */
	int *status_pids;
	unsigned int status_npids;
	uint64_t status_gen;
	struct sbuf last_head;
	sd_event *event;
	sd_event_source *sig_src[4], *conn_src, *sample_src, *rescan_src;
	sd_event_source *wake_src, *dirty_src, *scan_src, *post_src;
	sd_event_source **triggers; /* by fd number */
	size_t ntriggers;
};

/* Block the signals the loop serves (before anything slow). */
void daemon_block_signals(void);
/*
 * Set up with a loaded configuration and topology (both owned by the
 * daemon from here on), subscribe, drop capabilities and start the
 * first scan.  0 or an exit code.
 */
int daemon_start(struct daemon *d, const struct daemon_opts *o,
		 struct config *cfg, struct topology *topo);
/* Run until SIGTERM/SIGINT (or, with --once, the first scan's end). */
int daemon_run(struct daemon *d);
/* Restore what the configuration asks and free everything. */
void daemon_stop(struct daemon *d);

#endif
