/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_MANAGER_H
#define SOFTAFF_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "cgpref.h"
#include "cgstat.h"
#include "config.h"
#include "container.h"
#include "dirtyq.h"
#include "log.h"
#include "owned.h"
#include "pidtable.h"
#include "procfs.h"
#include "rulectl.h"
#include "rulelog.h"
#include "rules.h"
#include "scanner.h"
#include "topology.h"
#include "util.h"

/*
 * One process we manage, keyed by pid + start time (pids get reused).
 * comm is what it had when last evaluated: with the start time it is
 * the key of the match cache.
 */
struct managed {
	struct pidnode node;
	uint64_t starttime;
	char comm[64];
	unsigned int rule; /* index into the current config */
	unsigned int flags;
	uint32_t seen; /* scan generation that last saw it */
	struct ratio ratio_ours; /* soft_affinity_ratio we wrote, {0, 0} none */
	struct owned own;
	/* Each thread's accounting at the last sample, by tid. */
	struct tsample *ts;
	unsigned int nts;
};

struct tsample {
	int tid;
	struct task_sched v;
};

/* Where a rule's wait fraction comes from. */
enum wait_source {
	WAIT_THREADS, /* its threads' task/TID/schedstat */
	WAIT_CGROUP,  /* its cgroups' cpu.pressure and cpu.stat */
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
};

/* The control law's sample of f; the load of the CPUs is the daemon's. */
static inline struct rulectl_sample rule_sample(const struct rule_figures *f)
{
	return (struct rulectl_sample){.runtime_ns = f->runtime_ns,
				       .delay_ns = f->delay_ns,
				       .wait_base_ns = f->wait_base_ns,
				       .outside_ns = f->outside_ns,
				       .interval_ns = f->interval_ns};
}

enum {
	M_IGNORED = 1 << 0, /* EPERM: no longer managed */
	M_WARNED_EMPTY = 1 << 1,
	M_WARNED_ERROR = 1 << 2,
	M_LOGGED = 1 << 3,  /* first apply was logged at info */
	M_ADOPTED = 1 << 4, /* first pass done: later masks are claimed */
	M_HAND_LOGGED = 1 << 5,
	M_CGROUP = 1 << 6,	   /* its rule acts on its cgroup, not on it */
	M_RATIO_FOREIGN = 1 << 7,  /* someone else set its ratio: left alone */
};

/*
 * Per rule: the softness in force, and whether it acts on cgroups.  A
 * rule that matches on cgroup and unit alone (threads = "all") is one
 * write to the cgroup's cpuset.cpus.preferred and .ratio: every task in
 * it, and every later one, follows without softaffd chasing threads.
 */
struct rule_state {
	struct ratio ratio; /* in force now */
	bool cg_mode;
	bool cg_fallback_logged;
	bool no_psi_logged; /* a cgroup of it had no cpu.pressure */
	/*
	 * Asleep: every cgroup of the rule has a PSI trigger, the rule is
	 * at its hardest and its tasks did not wait: it is sampled only
	 * for --status until a trigger fires (mgr_rule_wake).
	 */
	bool asleep;
	bool sampled_now;	  /* mgr_sample took a sample of it this time */
	struct rule_figures walk; /* the last walk of its threads */
	uint64_t walked_ms;	  /* when, 0: never */
	struct rulectl_state ctl; /* adaptive rules */
	char why[160];		  /* why the softness is what it is */
	struct rule_figures last; /* the last sample, for --status */
	uint64_t sampled_ms;	  /* when, 0: never (the next is a baseline) */
};

/*
 * A cgroup whose preference softaffd set: what it had before (restored
 * on stop and when the rule goes), and what we wrote, so that a value
 * someone else writes later is left alone (foreign).
 */
struct cg_entry {
	char *path;
	uint64_t id; /* cgstat_id(): a new one is a new cgroup at path */
	unsigned int rule;
	struct pref_req orig, ours;
	bool written, foreign;
	struct cgstat prev; /* at the last sample, if have_prev */
	bool have_prev;
	/* The cpu.pressure trigger of an adaptive rule, or -errno: none. */
	int psi_fd;
	bool psi_watched; /* in the daemon's epoll set */
};

/*
 * A process that matched no rule: not evaluated again while its start
 * time and comm stay the same and it does not exec.  inherit is 1 + the
 * rule of the managed parent it was forked from, whose mask it may
 * carry (0: none); such masks are reset on stop.
 */
struct other {
	struct pidnode node;
	uint64_t starttime; /* 0: not read yet (a fork seen by event) */
	char comm[64];
	unsigned int inherit;
	uint32_t seen;
};

/*
 * Why a pid is in the dirty queue (struct dirty's why, bits; its
 * inherit is as in struct other, for D_FORKED).
 */
enum {
	D_EVAL = 1 << 0,    /* comm or uid changed, or a new process */
	D_EXEC = 1 << 1,    /* it exec'd: evaluate afresh, re-adopt */
	D_FORKED = 1 << 2,  /* a child of a managed process: quiet logs */
	D_THREADS = 1 << 3, /* a managed process has new threads */
	D_UID = 1 << 4,	    /* its uid changed: the match cache misses */
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
 * attributes.
 */
enum mgr_scan_kind { SCAN_FULL, SCAN_NEW, SCAN_NEW_ATTRS, SCAN_ATTRS,
		     SCAN_LIGHT };

struct mgr_counters {
	uint64_t scans, events, events_lost;
	uint64_t written, unchanged, gone, eperm, einval, empty, rt, errors;
	uint64_t restored, foreign, ratio_changes, hand;
	uint64_t ratio_written, cg_written;
	uint64_t evals, cached, regex_skipped;
};

/* The process being evaluated: what was read of it, through one fd. */
struct snap {
	int pid, pfd;
	struct pstat st;
	struct proc_attrs a;
	char exe[PATH_MAX], cmdline[4096], cgroup[4096];
};

struct mgr {
	struct roots roots;
	const struct config *cfg;
	const struct topology *topo;
	bool dry_run;
	struct pidtable procs;	/* struct managed */
	struct pidtable others; /* struct other */
	struct dirtyq dirty;	/* events not handled yet, oldest first */
	size_t count;		/* == procs.count */
	uint32_t gen;
	uint64_t last_scan_ms;	  /* when the last scan ended */
	unsigned int *rule_count; /* managed processes per rule */
	bool *einval_warned;	  /* per rule */
	struct rule_log *rule_log;     /* per rule: lines about processes */
	struct rule_state *rs;	       /* per rule */
	struct cg_entry *cgs;	       /* cgroups we set */
	size_t ncgs;
	bool have_proc_ratio; /* the kernel has /proc/PID/soft_affinity_ratio */
	bool psi_trigger_logged; /* said once why there are no triggers */
	bool proc_ratio_logged;
	size_t nhand_procs; /* managed processes with hand-set threads */
	/* Cgroups softaff-oci-hook marked: their processes are left alone. */
	struct container_cache ctr;
	uint64_t exec_fresh_ns; /* an exec re-reads marks read before this */
	struct scanner scan; /* the scan in progress, a slice at a time */
	enum mgr_scan_kind scan_kind;
	struct snap *snap;
	int *tids;
	size_t tids_cap;
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

/*
 * Proc connector events only mark pids dirty (exit and forks of
 * unmanaged parents are plain bookkeeping and done at once);
 * mgr_flush() evaluates each dirty pid once, however many events it
 * got, in the order they were first marked (dirtyq.h), until
 * deadline_ms.  Returns true when the dirty queue is empty.
 */
void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid);
void mgr_on_exec(struct mgr *m, int pid);
void mgr_on_change(struct mgr *m, int pid); /* comm */
void mgr_on_uid(struct mgr *m, int pid);
void mgr_on_exit(struct mgr *m, int pid, int tgid);
bool mgr_flush(struct mgr *m, uint64_t deadline_ms);
/* Evaluate one process now (tests, and a comm or uid change). */
void mgr_eval_pid(struct mgr *m, int pid);
/*
 * Switch to a new config: processes whose rule is unchanged stay managed;
 * those whose rule changed or vanished are restored first, except threads
 * with hand-set masks, which stay as they are.  Then starts a full scan
 * (mgr_scan_step or mgr_scan_finish completes it) and returns 0.  With
 * the same rules in the same order (config_rules_equal) it only takes
 * cfg and returns 1: the dirty queue, the match cache and a scan in
 * progress go on, and whether to check every thread again is the
 * caller's choice.  cfg must outlive the manager or the next reload.
 */
int mgr_reload(struct mgr *m, const struct config *cfg);
/*
 * Forget which masks were set by hand and apply the rules to every
 * managed thread again; starts a full scan.  Returns how many processes
 * had hand-set threads.
 */
size_t mgr_readopt(struct mgr *m);
/*
 * Reset everything we set back to inherit (if still ours), and the
 * masks that children of managed processes inherited from them.
 */
void mgr_restore_all(struct mgr *m);
/* Report rate-limited log lines whose window has ended. */
void mgr_flush_logs(struct mgr *m, uint64_t now_ms);
/* Node sets of rules with managed processes; returns how many. */
unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max);
struct managed *mgr_lookup(const struct mgr *m, int pid);
/*
 * Gather: per rule, what its tasks did since the last call into
 * m->rs[].last.  A rule that acts on cgroups takes its run and wait
 * time from the cgroups' cpu.stat and cpu.pressure (two reads per
 * cgroup), and walks its threads (task/TID/schedstat and stat, sched
 * for the soft counters) for locality only while it is softer than its
 * hardest and every MGR_SAMPLE_OTHERS_MS; without cpu.pressure it walks
 * them every time, like every other rule.  Adaptive rules are sampled
 * each time, except asleep ones; the others (whose figures only
 * --status shows) every MGR_SAMPLE_OTHERS_MS, which keeps an idle
 * daemon idle.  exact: kernel.sched_schedstats is on, so the soft
 * counters count; otherwise a thread's runtime over the interval counts
 * as outside when the CPU it was last on is (an estimate, which needs
 * no privilege: turning schedstats on needs CAP_SYS_ADMIN).
 */
void mgr_sample(struct mgr *m, uint64_t now_ms, bool exact);
/*
 * Put ratio in force for rule: its processes' soft_affinity_ratio, or
 * its cgroups' cpuset.cpus.preferred.ratio.  Returns how many writes.
 */
unsigned int mgr_set_rule_ratio(struct mgr *m, unsigned int rule,
				struct ratio ratio);
/*
 * A cpu.pressure trigger of rule fired: sample it every interval again,
 * from a baseline read now (its counters are stale after a sleep).
 */
void mgr_rule_wake(struct mgr *m, unsigned int rule, uint64_t now_ms);
/*
 * Forget m->cgs[k]: its cgroup was removed (its trigger reported
 * EPOLLERR, or its files are gone).  Closes the trigger, which takes it
 * out of the daemon's epoll set; the last entry moves to k.  A cgroup
 * made again at the same path becomes a new entry, with a trigger of its
 * own, when a process of it is next evaluated.
 */
void mgr_cg_forget(struct mgr *m, size_t k);
/* Every cgroup of rule has a working trigger (the daemon may let it sleep). */
bool mgr_rule_triggers_armed(const struct mgr *m, unsigned int rule);
/*
 * Every managed process as a triple (rule, pid, has hand-set threads),
 * sorted by rule then pid, for the status.  Count or -ENOMEM.
 */
int mgr_status_pids(const struct mgr *m, int **ret);

#endif
