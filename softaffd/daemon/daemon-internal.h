/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_DAEMON_INTERNAL_H
#define SOFTAFF_DAEMON_INTERNAL_H

/* What the daemon's files (daemon*.c, daemon.h lists them) share. */

#include "daemon.h"

/*
 * Work done per dispatch of a sliced source (connector events, the dirty
 * queue, a slice of a scan) before signals and timers are looked at
 * again.  Small against any watchdog, and a time, not a count: in a
 * CPU-starved guest one event can take long.
 */
#define SLICE_MS 20
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
#define CONN_BUDGET_MS	 100
#define EVAL_BUDGET_MS	 200
#define BUDGET_WINDOW_MS 1000
/* Connector messages read per dispatch, at most (and within SLICE_MS). */
#define EVENTS_PER_DISPATCH 256
/*
 * With a working connector, only every this many rescan periods walks
 * <proc>: it looks for pids nobody told us about and, if a rule matches
 * on them, re-reads the attributes that change without an event
 * (cgroup, command line) where a process's rule was decided on them.
 * Without one, every period walks, and every this many re-reads them.
 */
#define ATTRS_EVERY 6
/*
 * ... and at least this many times as long as the last such walk took
 * after it ended: what the walks cost an idle machine stays below
 * 1/WALK_DUTY of a CPU (0.05%) however many processes it has.  10,000
 * processes tried against command-line rules take ~50 ms: a walk every
 * 100 s instead of every 60.
 */
#define WALK_DUTY 2000
/* After lost connector events, rescan at most this often. */
#define LOST_RESCAN_MS 1000
/* From the end of a walk that took work_ns to the next (connector mode). */
uint64_t walk_gap_ms(unsigned int rescan_ms, uint64_t work_ns);

/*
 * The priorities of the loop's sources.  sd-event dispatches one source
 * per iteration, the pending one of the lowest value, so this is the
 * order of the work: signals, then timers and cpu.pressure triggers,
 * then a slice each of connector events, of the dirty queue and of a
 * scan.  What comes first cannot starve what follows for long: the
 * connector and the dirty queue have their budgets, reloads and
 * re-adoptions a rate limit.
 */
enum {
	PRIO_SIGNAL = SD_EVENT_PRIORITY_IMPORTANT,
	PRIO_TIMER = SD_EVENT_PRIORITY_NORMAL,
	PRIO_EVENTS,
	PRIO_DIRTY,
	PRIO_SCAN,
};

/*
 * Timers to the millisecond, which is what the budgets count in: with
 * sd-event's default accuracy (250 ms) a paused connector could wait a
 * quarter of a second past its window.
 */
#define TIMER_ACCURACY_USEC 1000

/* For the parameters of sd-event callbacks that a handler has no use for. */
#define MAYBE_UNUSED __attribute__((unused))

/* daemon.c */
/* (Re)arm the sample and rescan timers from the configuration. */
void daemon_arm_timers(struct daemon *d);
/* Give a new source its priority and name; its errors end the loop. */
int loop_source_setup(sd_event_source *s, int64_t prio, const char *name);
/* The manager's watch/unwatch hooks: its cpu.pressure triggers. */
int daemon_watch_trigger(void *ud, int fd);
void daemon_unwatch_trigger(void *ud, int fd);
/* The manager's tick hook: a watchdog ping from inside a long batch. */
void daemon_tick(void *ud);
/* From READY=1 on, ping the systemd watchdog if it asks for pings. */
void daemon_watchdog_start(struct daemon *d);

/* daemon-work.c */
/* The deferred sources of the sliced work, and the wake-up timer. */
int work_add_sources(struct daemon *d);
/*
 * A full scan that checks every managed thread (masks set by hand since
 * are found so), unless one is in progress: then one more right after
 * it.  Returns what the log line says.
 */
const char *daemon_recheck(struct daemon *d);

/* daemon-conn.c */
/* Subscribe to the proc connector, or say why the rescans must do. */
void conn_open(struct daemon *d);
/* Put the subscribed connector in the loop. */
int conn_add_source(struct daemon *d);
/* Read events again if they were paused and a new budget window began. */
int conn_window(struct daemon *d, uint64_t now);
/* Out of the loop, and unsubscribe. */
void conn_close(struct daemon *d);

/* daemon-reload.c */
/* SIGHUP: switch to a re-read topology and configuration if both are good. */
void daemon_reload(struct daemon *d);
/* Drop the capabilities the configuration does not need (again on a reload). */
void daemon_caps_update(struct daemon *d);

/* daemon-softness.c */
/*
 * Per rule of cfg, its softness: a rule of old that cfg keeps
 * (config_rule_map) keeps its own, as the manager keeps its ratio and
 * plan; the others start at the hardest, awake.  NULL: ENOMEM.
 */
struct rule_softness *softness_rules_new(const struct config *old,
					 const struct rule_softness *olds,
					 const struct config *cfg);
/* Start the global controller; keep the current rung if the ratio is on it. */
void softness_setup(struct daemon *d);
/* Put the configured global ratio in force (fixed, or adaptive's start). */
void softness_apply_config(struct daemon *d);
/* Does the configuration need /proc/schedstat (sampler_update)? */
bool softness_wants_delays(const struct daemon *d);
/* The sample timer: gather, let the control laws decide, apply. */
void softness_sample(struct daemon *d);
/*
 * The first scan is over: each adaptive rule resumes at the rung of the
 * ratio most of its processes had (mgr_rule_found, rulectl_resume; L7),
 * put in force where it was not.
 */
void softness_resume(struct daemon *d);
/*
 * Rule r's CPUs at home and outside into in, how busy each were (in
 * CPUs) and the spare capacity outside, over the CPUs its tasks may be
 * placed on (mgr_rule_allowed, L5; unknown: every CPU).  Only CPUs of
 * nodes that have CPUs are in topo->all: a memory-only (CXL) node adds
 * neither capacity nor an average.
 */
void softness_room(const struct daemon *d, unsigned int r,
		   struct rulectl_sample *in);
/* Turn kernel.sched_schedstats on for adaptive rules if we may; put it back. */
void softness_schedstats_on(struct daemon *d);
void softness_schedstats_restore(struct daemon *d);

/* daemon-status.c */
/* Write the status files and send STATUS= when it changed. */
void daemon_publish(struct daemon *d);
void daemon_status_done(struct daemon *d);

#endif
