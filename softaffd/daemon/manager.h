/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_MANAGER_H
#define SOFTAFF_MANAGER_H

/*
 * The manager: which processes are managed under which rule, their
 * masks and ratios, and the cgroups whose preference softaffd sets.
 * Its state is its own (struct mgr, manager-internal.h): the daemon
 * drives it through these functions.
 */

#include <stdbool.h>
#include <stdint.h>

#include "affinity.h"
#include "config.h"
#include "container.h"
#include "cpuset.h"
#include "procconn.h"
#include "rulectl.h"
#include "util.h"

struct mgr;

/* Where a rule's wait fraction comes from. */
enum wait_source {
	WAIT_THREADS, /* its threads' task/TID/schedstat */
	WAIT_CGROUP,  /* its cgroups' cpu.pressure and cpu.stat */
	WAIT_SYSTEM,  /* /proc/pressure/cpu: hardly anyone waited (calm) */
};

/*
 * What a rule's tasks did over one sample interval.  runtime, delay:
 * over interval_ns, from source; wait_base, what the delay compares
 * with (struct rulectl_sample).  The locality figures (threads,
 * share outside, spills, returns) always come from a walk of the
 * threads, which for cgroup rules is rarer: they cover locality_ns.
 */
struct rule_figures {
	uint64_t runtime_ns, delay_ns, wait_base_ns, outside_ns, spills, returns;
	uint64_t interval_ns, locality_ns;
	unsigned int processes, threads;
	enum wait_source source;
	bool exact; /* the soft counters counted (kernel.sched_schedstats=1) */
	bool valid;
	/*
	 * The system's CPU pressure said tasks hardly waited: the threads
	 * were not read, the locality figures are the last walk's.
	 */
	bool calm;
};

/* The control law's sample of f; the load of the CPUs is the daemon's. */
static inline struct rulectl_sample rule_sample(const struct rule_figures *f)
{
	return (struct rulectl_sample){.runtime_ns = f->runtime_ns,
				       .delay_ns = f->delay_ns,
				       .wait_base_ns = f->wait_base_ns,
				       .outside_ns = f->outside_ns,
				       .interval_ns = f->interval_ns,
				       .calm = f->calm};
}

/* What mgr_sample gives back of one rule. */
struct rule_sampled {
	/* Sampled now: fig is new, the law may decide on it. */
	bool sampled;
	/*
	 * A trigger, or new work in a cgroup of it, woke it since the last
	 * sample while its plan said asleep (mgr_rule_plan).
	 */
	bool woken;
	struct rule_figures fig;
};

/*
 * FULL reads and evaluates every process and checks every thread of the
 * managed ones (at start, reload, re-adoption): that finds masks set by
 * hand.  NEW reads only threads not met before, and evaluates only
 * processes the match cache does not know by start time and comm: the
 * periodic rescan without a connector, and after lost events; NEW_ATTRS
 * also re-reads the attributes that change without an event (a cgroup
 * move, a rewritten command line), every few rescans.  With a working
 * connector, events carry exec, comm, uid, fork and exit, so the
 * periodic walk only has to find what they did not: LIGHT evaluates
 * just the pids it does not know yet, ATTRS also re-reads those
 * attributes.  The ATTRS kinds re-read of a known process only the
 * attributes its last evaluation read, and evaluate it again only if
 * they changed (struct attr_digest).
 */
enum mgr_scan_kind { SCAN_FULL, SCAN_NEW, SCAN_NEW_ATTRS, SCAN_ATTRS,
		     SCAN_LIGHT, SCAN_KINDS };

struct mgr_counters {
	uint64_t scans, events, events_lost;
	uint64_t written, unchanged, gone, eperm, einval, empty, rt, errors;
	uint64_t restored, foreign, hand;
	uint64_t ratio_written, cg_written;
	uint64_t evals, cached, regex_skipped;
	uint64_t sampled_threads; /* thread reads of the samples */
};

/*
 * What the manager asks of whoever runs it, handed down at mgr_new so
 * that it includes nothing of theirs.  Each may be NULL.
 *   tick     every few dozen items of a long batch (the watchdog);
 *   watch    a cgroup's cpu.pressure trigger fd to be polled for
 *            EPOLLPRI (mgr_on_pressure); 0 or -errno (then the rule
 *            reads its counters every interval instead);
 *   unwatch  that fd is about to be closed: out of the poll set first,
 *            so that a number reused by the next open is never taken
 *            for it.
 */
struct mgr_hooks {
	void (*tick)(void *userdata);
	int (*watch)(void *userdata, int fd);
	void (*unwatch)(void *userdata, int fd);
	void *userdata;
};

/*
 * A manager for cfg, which must outlive it or the next reload; hooks
 * may be NULL.  NULL: ENOMEM.
 */
struct mgr *mgr_new(const struct roots *roots, const struct config *cfg,
		    enum aff_mode mode, const struct mgr_hooks *hooks);
void mgr_free(struct mgr *m);
/* The tick hook alone, for tests (mgr_hooks.tick). */
void mgr_set_tick(struct mgr *m, void (*tick)(void *userdata),
		  void *userdata);

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
/* A scan of this kind is in progress. */
bool mgr_scan_busy_with(const struct mgr *m, enum mgr_scan_kind kind);
void mgr_scan_abort(struct mgr *m);
/* When the last scan ended (now_ms()). */
uint64_t mgr_last_scan_ms(const struct mgr *m);
/* The time the last finished scan of kind took, its slices summed (ns). */
uint64_t mgr_scan_work_ns(const struct mgr *m, enum mgr_scan_kind kind);

/*
 * Proc connector events only mark pids dirty (exit and forks of
 * unmanaged parents are plain bookkeeping and done at once);
 * mgr_flush() evaluates each dirty pid once, however many events it
 * got, in the order they were first marked (dirtyq.h), until
 * deadline_ms.  Returns true when the dirty queue is empty.
 */
void mgr_on_event(struct mgr *m, const struct pc_event *e);
void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid);
void mgr_on_exec(struct mgr *m, int pid);
void mgr_on_change(struct mgr *m, int pid); /* comm */
void mgr_on_uid(struct mgr *m, int pid);
void mgr_on_exit(struct mgr *m, int pid, int tgid);
/* The connector dropped events (its socket overflowed). */
void mgr_on_events_lost(struct mgr *m);
bool mgr_flush(struct mgr *m, uint64_t deadline_ms);
/* Processes marked dirty and not evaluated yet. */
size_t mgr_dirty_count(const struct mgr *m);

/*
 * Switch to a new config in one step.  With the same rules in the same
 * order (config_rules_equal) it only takes cfg and returns 1: the dirty
 * queue, the match cache and a scan in progress go on.  Otherwise every
 * managed process (and cgroup) is matched again against cfg where it
 * stands, from what the manager knows of it, reading only what the new
 * rules need beyond that: one whose preference stays (mask, threads,
 * ratio) is not touched, one whose preference changes gets the new one
 * written over ours (no restore in between), and only one that matches
 * nothing any more is restored; threads set by hand stay as they are.
 * Per-rule softness survives for the rules cfg keeps.  Returns 0; the
 * processes that were not managed are left to a scan (mgr_recheck).
 * Starts and stops no scan.  -ENOMEM: nothing changed.  cfg must
 * outlive the manager or the next reload.
 */
int mgr_reload(struct mgr *m, const struct config *cfg);
/*
 * A full scan, which checks every managed thread (finds masks set by
 * hand) and evaluates every process, unless one is in progress: then
 * it goes on and returns 1, and the caller is to call again once it is
 * over (a restart at every reload or SIGUSR1 would let none end).  0: a
 * scan started; -errno: /proc cannot be read now.
 */
int mgr_recheck(struct mgr *m);
/*
 * SIGUSR1: forget which masks were set by hand, so that every managed
 * process is adopted afresh at its next apply (mgr_recheck's scan).
 * Starts no scan.  Returns how many processes had hand-set threads.
 */
size_t mgr_forget_hand(struct mgr *m);
/*
 * Reset everything we set back to inherit (if still ours), and the
 * masks that children of managed processes inherited from them.
 */
void mgr_restore_all(struct mgr *m);
/* Report rate-limited log lines whose window has ended. */
void mgr_flush_logs(struct mgr *m, uint64_t now_ms);

/*
 * Gather: per rule, what its tasks did since the last call, into
 * ret[rule] (one per rule of the configuration), as each rule's plan
 * asks (mgr_rule_plan).  A rule that acts on cgroups takes its run and
 * wait time from the cgroups' cpu.stat and cpu.pressure (two reads per
 * cgroup), and walks its threads (task/TID/schedstat and stat, sched
 * for the soft counters) for locality only while it is softer than its
 * hardest and every MGR_SAMPLE_OTHERS_MS; without cpu.pressure it walks
 * them every time, like every other rule.  The walks of all rules
 * together read a bounded sample of threads each time, and none while
 * /proc/pressure/cpu shows that tasks hardly wait for a CPU, for the
 * rules at their hardest (a calm interval: manager-figures.c).  Adaptive rules
 * are sampled each time, except asleep ones; the others (whose figures
 * only --status shows) every MGR_SAMPLE_OTHERS_MS, which keeps an idle
 * daemon idle.  exact: kernel.sched_schedstats is on, so the soft
 * counters count; otherwise a thread's runtime over the interval counts
 * as outside when the CPU it was last on is (an estimate, which needs
 * no privilege: turning schedstats on needs CAP_SYS_ADMIN).
 */
void mgr_sample(struct mgr *m, uint64_t now_ms, bool exact,
		struct rule_sampled *ret);
/*
 * How rule r is to be sampled from now on: the daemon's controller
 * decides it (rulectl_plan) whenever what it depends on changes.  A
 * new or reloaded rule starts with the plan of a hardest rule, awake.
 */
void mgr_rule_plan(struct mgr *m, unsigned int r, struct rulectl_plan plan);
/* The ratio in force for rule r, and whether it acts on cgroups. */
struct ratio mgr_rule_ratio(const struct mgr *m, unsigned int r);
bool mgr_rule_cg_mode(const struct mgr *m, unsigned int r);
/*
 * Put ratio in force for rule: its cgroups' cpuset.cpus.preferred.ratio
 * now, its processes' soft_affinity_ratio from the dirty queue
 * (mgr_flush).  Returns the cgroup writes plus the processes queued.
 */
unsigned int mgr_set_rule_ratio(struct mgr *m, unsigned int rule,
				struct ratio ratio);
/*
 * A restarted daemon resumes each adaptive rule's softness (L7): called
 * before the first scan, it has the scan count the ratios the rules'
 * processes (or cgroups) have of their own and write none, until the
 * daemon sets each rule's ratio (mgr_set_rule_ratio) from what was
 * found: mgr_rule_found, false once the rule's ratio was set.
 */
void mgr_resume_start(struct mgr *m);
bool mgr_rule_found(const struct mgr *m, unsigned int r,
		    struct ratio_tally *ret);
/*
 * The CPUs rule r's tasks may be placed on (L5): the union of the
 * cpuset.cpus.effective of its processes' cgroups (AllowedCPUs=, a
 * container's cpuset), read now.  Not their own sched_setaffinity
 * masks (manager-room.c says why).  False: not known (no process
 * evaluated yet, too many cgroups, no cpuset controller): every CPU.
 */
bool mgr_rule_allowed(struct mgr *m, unsigned int r, struct cpuset *ret);
/*
 * Does a ratio set for rule r take effect: its cgroups', or on a kernel
 * with <proc>/PID/soft_affinity_ratio its processes'?  (L8)
 */
bool mgr_rule_ratio_applies(const struct mgr *m, unsigned int r);
/* Every cgroup of rule has a working trigger (the daemon may let it sleep). */
bool mgr_rule_triggers_armed(const struct mgr *m, unsigned int rule);
/*
 * New cgroups of adaptive rules come with a cpu.pressure trigger, which
 * the watch hook puts in the poll set; where there is none, or watch
 * refuses it, those rules read the cgroup's counters every interval
 * instead; said once.  The trigger fd fired; gone: with EPOLLERR or EPOLLHUP, its cgroup was
 * removed (the cgroup is forgotten, which closes fd).  False: fd is no
 * trigger of ours.
 */
bool mgr_on_pressure(struct mgr *m, int fd, bool gone);

/* Managed processes, and how many of them have hand-set threads. */
size_t mgr_processes(const struct mgr *m);
size_t mgr_hand_processes(const struct mgr *m);
/* Managed processes of rule r. */
unsigned int mgr_rule_processes(const struct mgr *m, unsigned int r);
const struct mgr_counters *mgr_counters(const struct mgr *m);
/* Node sets of rules with managed processes; returns how many. */
unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max);
/*
 * Every managed process as a triple (rule, pid, has hand-set threads),
 * sorted by rule then pid, for the status.  Count or -ENOMEM.
 */
int mgr_status_pids(const struct mgr *m, int **ret);
/*
 * A number that changes whenever what mgr_status_pids() would list
 * changes (a process managed, dropped, hand-set or not, a reload): the
 * daemon sorts the list again only then.
 */
uint64_t mgr_status_gen(const struct mgr *m);
/* Containers a rule left alone: container_list_left().  Count or -errno. */
int mgr_containers_left(const struct mgr *m, struct container_left **ret);

#endif
