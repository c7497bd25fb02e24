/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_MANAGER_INTERNAL_H
#define SOFTAFF_MANAGER_INTERNAL_H

/*
 * The manager's own state and what its files share; only they (and the
 * unit tests) include this.  One way through for every process:
 *
 *   event or scan -> dirty queue -> snapshot (procsnap.c, through one fd
 *   on <proc>/PID) -> decision (rules.c; affinity.c's aff_decide*: pure;
 *   container.c: a container's annotations win) -> the target of the
 *   write (struct mgr_target) -> writes -> report (counters, log).
 *
 * Its files, bottom to top: each calls only those listed before it,
 * never one after (tools/layers; tools/callgraph counts):
 *
 *   manager-state.c    the tables, identity, per-rule bookkeeping, logs
 *   procsnap.c         gather one process: the snapshot
 *   manager-report.c   count and log what a write came to
 *   manager-threads.c  a process's threads: capped walks, hand-set ones
 *   manager-cgroup.c   rules that act on cgroups, their PSI triggers
 *   manager-apply.c    the process level and the ratio; restore
 *   manager-figures.c  per-rule figures: samples of threads and cgroups
 *   manager-eval.c     decide one process's rule, hand it to the writes
 *   manager-scan.c     the sliced walk of <proc>
 *   manager-events.c   connector events into the dirty queue, its flush
 *   manager-reload.c   a new configuration over the managed processes
 *   manager.c          the facade: lifetime, stop, a rule's ratio
 *
 * The pid tables are pidtable.c, the dirty queue dirtyq.c, the
 * per-thread ownership owned.c, the sliced /proc walk scanner.c.
 */

#include <limits.h>

#include "affinity.h"
#include "cgpref.h"
#include "cgstat.h"
#include "dirtyq.h"
#include "manager.h"
#include "owned.h"
#include "pidtable.h"
#include "procfs.h"
#include "rulelog.h"
#include "rules.h"
#include "scanner.h"
#include "setpool.h"

/* Rules without adaptive softness: figures for --status every 10 s. */
#define MGR_SAMPLE_OTHERS_MS 10000
/* Thread reads of one sample interval, all rules (manager-figures.c). */
#define MGR_SAMPLE_BUDGET 1024

/*
 * The attributes that change without an event (command line, cgroup)
 * as far as the last evaluation of a process read them: which ones
 * (NEED_CMDLINE, NEED_CGROUP bits) and a digest of what they said.  A
 * rescan that re-reads attributes reads only those, and evaluates the
 * process again only when the digest differs: the evaluation reads
 * attributes lazily, so one that did not read the command line decided
 * without it, and a new command line cannot change its outcome.
 */
struct attr_digest {
	uint64_t sum;
	unsigned int read;
};


/*
 * One process we manage, keyed by pid + start time (pids get reused).
 * comm is what it had when last evaluated: with the start time it is
 * the key of the match cache.
 */
struct managed {
	struct pidnode node;
	uint64_t starttime; /* 0: booked at its fork event, not read yet */
	int parent;	    /* ... the process it was forked from */
	char comm[64];
	unsigned int rule; /* index into the current config */
	unsigned int flags;
	uint32_t seen; /* scan generation that last saw it */
	struct attr_digest attrs;
	struct ratio ratio_ours; /* soft_affinity_ratio we wrote, {0, 0} none */
	/*
	 * threads = "all": the process level (soft_affinity_list) as it
	 * read before we took it (M_PROC_OURS), which restore writes back,
	 * and what we wrote there (NULL: nothing known).  Both are held in
	 * m->sets, a reference each: a set by value is 1 KiB, and there are
	 * tens of thousands of processes but a handful of distinct sets.
	 */
	struct cpureq_ref proc_orig;
	const struct cpuset *proc_ours;
	struct owned own; /* threads = "all": only the hand-set ones */
	struct twalk *walk; /* a thread walk in progress, NULL: none */
	/* Each thread's accounting at the last sample, by tid. */
	struct tsample *ts;
	unsigned int nts;
	uint64_t sampled_ms; /* when ts was read, 0: never */
	int ts_cursor;	     /* the first tid sampled, of a capped sample */
};

/*
 * A walk of a process's threads, capped at MGR_WALK_CAP threads per
 * evaluation: the rest waits in the dirty queue (D_THREADS), so that a
 * process with 10,000 threads delays no one.  The tids are those read
 * when it started, sorted; threads made since need nothing (threads =
 * "all": the process level covers them) or come with their own clone
 * event (threads = "main").
 */
#define MGR_WALK_CAP 256
struct twalk {
	int *tids;
	unsigned int n, next;
	bool all;   /* WALK_ALL (else WALK_NEW) */
	bool adopt; /* the first walk: claims AFF_ADOPT */
	bool retake; /* ... of a re-adoption (exec, SIGUSR1) */
};

struct tsample {
	int tid;
	struct task_sched v;
};

enum {
	M_IGNORED = 1 << 0, /* EPERM: no longer managed */
	M_WARNED_EMPTY = 1 << 1,
	M_WARNED_ERROR = 1 << 2,
	M_LOGGED = 1 << 3,  /* first apply was logged at info */
	M_ADOPTED = 1 << 4, /* first pass done: later masks are claimed */
	M_HAND_LOGGED = 1 << 5,
	M_CGROUP = 1 << 6,	   /* its rule acts on its cgroup, not on it */
	M_RATIO_FOREIGN = 1 << 7,  /* someone else set its ratio: left alone */
	M_PROC_OURS = 1 << 8, /* we took its process level: proc_orig saved */
	M_PROC_HAND = 1 << 9, /* ... and someone changed it since: theirs */
};

/* Listed as hand-managed: a thread's request or the process's is theirs. */
static inline bool managed_hand(const struct managed *e)
{
	return e->own.nhand || (e->flags & M_PROC_HAND);
}

/*
 * All the manager keeps per rule: its bookkeeping, not its softness,
 * which the daemon decides (and keeps) and hands down as a ratio
 * (mgr_set_rule_ratio) and a plan (mgr_rule_plan).  A reload that keeps
 * a rule keeps its ratio, plan and sampling; its count, logs and
 * warnings start over.
 */
/*
 * The cgroups a rule's processes were in when evaluated, whose
 * cpuset.cpus.effective is where its tasks may go (L5, manager-room.c).
 * A path longer than MGR_ROOM_PATH, or more than MGR_ROOM_CGROUPS of
 * them, makes it unknown (every CPU counts, as before L5) until a
 * reload starts the rule over: a rule of processes in many cgroups,
 * user sessions say, is not what AllowedCPUs= confines.
 */
#define MGR_ROOM_CGROUPS 16
#define MGR_ROOM_PATH 256
struct mgr_room {
	struct {
		char path[MGR_ROOM_PATH];
		/* 1 + the length of the level whose file was read; 0: none */
		unsigned int cut;
	} cg[MGR_ROOM_CGROUPS];
	unsigned int n;
	bool unknown;
};

struct mgr_rule {
	struct ratio ratio; /* in force now */
	/*
	 * It acts on cgroups: a rule that matches on cgroup and unit
	 * alone (threads = "all") is one write to the cgroup's
	 * cpuset.cpus.preferred and .ratio, which every task in it, and
	 * every later one, follows without softaffd chasing threads.
	 */
	bool cg_mode;
	struct rulectl_plan plan; /* how the daemon wants it sampled */
	/*
	 * A trigger fired, or a cgroup of it came with new work, while its
	 * plan sampled it only for --status: sampled at the next interval,
	 * and the daemon told (struct rule_sampled).
	 */
	bool woken;
	bool cg_fallback_logged;
	bool no_psi_logged;	  /* a cgroup of it had no cpu.pressure */
	struct rule_figures walk; /* the last walk of its threads */
	uint64_t walked_ms;	  /* when, 0: never */
	uint64_t sampled_ms;	  /* its last sample, 0: never (a baseline) */
	int sample_cursor;	  /* the first pid of its next thread sample */
	struct mgr_room room; /* where its tasks may go (L5) */
	/*
	 * A starting daemon's adaptive rule (mgr_resume_start): its
	 * processes' own ratios are counted, none written, until the
	 * daemon sets the ratio it resumes at (mgr_set_rule_ratio, L7).
	 */
	bool resuming;
	struct ratio_tally found;
	/* Not kept over a reload: */
	unsigned int nprocs; /* managed processes */
	bool einval_warned;
	struct rule_log log; /* lines about its processes */
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
	/* Interned in m->sets: 1 KiB a set by value, for every cgroup. */
	struct pref_ref orig, ours;
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
	struct attr_digest attrs;
	bool recheck; /* matched under an older configuration: evaluate */
	/*
	 * threads = "main", left its rule: the threads whose reset did not
	 * fit the evaluation's cap (MGR_WALK_CAP), reset from the dirty
	 * queue (D_RESET) a cap at a time; NULL: none.
	 */
	struct twalk *reset;
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
	D_RATIO = 1 << 5,   /* its rule's ratio changed: write it */
	D_RESET = 1 << 6,   /* the rest of its threads' reset (other.reset) */
};

/*
 * What a status read says of the process's ratio request, so that its
 * file need not be read: from the status read until we write the
 * level (then back to SNAP_RATIO_READ).  Its sources name the first
 * level that does not inherit (enum pref_source).
 */
enum snap_ratio {
	SNAP_RATIO_READ,  /* nothing: read soft_affinity_ratio */
	SNAP_RATIO_KNOWN, /* the process's own request is snap.ratio */
	/*
	 * "default": not set (inherit or "none"), or the main thread's
	 * own ratio is "none" and hides the process's.
	 */
	SNAP_RATIO_UNSET,
};

/*
 * The process being evaluated: what was read of it, through one fd.
 * While pfd is open, the reads and writes handed plug (mgr_proc_snap)
 * leave their fds to it, closed with pfd (util.h).
 */
struct snap {
	int pid, pfd;
	struct fd_plug plug;
	struct pstat st;
	struct proc_attrs a;
	/* status, read once: for a user rule and for an adoption */
	struct pstatus status;
	bool have_status;
	enum snap_ratio ratio_hint;
	struct ratio_req ratio;
	/*
	 * The main thread has no mask of its own, as the status read says;
	 * off once we write a thread's own request.
	 */
	bool leader_inherits;
	char exe[PATH_MAX], cmdline[4096], cgroup[4096];
};

/*
 * The process a write acts on: its <proc>/PID directory fd, and the
 * snapshot that this evaluation read through it (NULL: none, as for a
 * restore or a queued ratio; what the write needs it reads).  Passed
 * down explicitly: the writes never look a snapshot up, and change it
 * only through procsnap.c.  plug: where the fds of the files read and
 * written go, the snapshot's while it is open (NULL: closed at once).
 */
struct mgr_proc {
	int pfd;
	struct snap *snap;
	struct fd_plug *plug;
};

static inline struct mgr_proc mgr_proc_snap(struct snap *s)
{
	return (struct mgr_proc){s->pfd, s, &s->plug};
}

static inline struct mgr_proc mgr_proc_fd(int pfd)
{
	return (struct mgr_proc){pfd, NULL, NULL};
}

/* The digest of what a snapshot's evaluation read. */
struct attr_digest mgr_snap_digest(const struct snap *s);
/* The same of a process's attributes read now, through <proc>'s fd. */
int mgr_read_digest(int procfd, int pid, unsigned int read,
		    struct snap *scratch, struct attr_digest *ret);

struct mgr {
	struct roots roots;
	int proc_fd; /* <proc>, for the opens of <proc>/PID; -1: by path */
	const struct config *cfg;
	enum aff_mode aff_mode; /* passed down to every write of a thread */
	bool dry_run;		/* aff_mode_dry(aff_mode) */
	struct pidtable procs;	/* struct managed */
	struct pidtable others; /* struct other */
	struct setpool sets;	/* the sets struct managed refers to */
	struct dirtyq dirty;	/* events not handled yet, oldest first */
	uint32_t gen;
	uint64_t last_scan_ms; /* when the last scan ended */
	uint64_t scan_work_ns; /* the slices of the scan in progress */
	uint64_t scan_work_last_ns[SCAN_KINDS]; /* of the last of each kind */
	struct mgr_rule *rules; /* per rule of cfg */
	struct cg_entry *cgs;	/* cgroups we set */
	size_t ncgs;
	bool have_proc_ratio; /* the kernel has /proc/PID/soft_affinity_ratio */
	bool psi_trigger_logged; /* said once why there are no triggers */
	bool proc_ratio_logged;
	size_t nhand_procs; /* managed processes with hand-set threads */
	/* Cgroups softaff-oci-hook marked: their processes are left alone. */
	struct container_cache ctr;
	uint64_t exec_fresh_ns; /* an exec re-reads marks read before this */
	/* The system's CPU pressure, which wakes the thread samples. */
	struct {
		bool off;	  /* no /proc/pressure/cpu: err says why */
		int err;
		bool logged;	  /* which way it went, said at the start */
		uint64_t some_us; /* "some" total= at the last read */
		uint64_t read_ms; /* when, 0: no baseline */
	} psi;
	unsigned int walk_next; /* the rule whose walk comes first next */
	struct scanner scan; /* the scan in progress, a slice at a time */
	enum mgr_scan_kind scan_kind;
	struct snap *snap;
	int *tids;
	size_t tids_cap;
	struct mgr_hooks hooks; /* tick, watch, unwatch (manager.h) */
	struct mgr_counters cnt;
	/* Bumped when what mgr_status_pids() lists changes. */
	uint64_t status_gen;
};

/* What to do with the threads of a process that stays managed. */
enum walk {
	WALK_ALL,  /* check every thread: finds masks set by hand */
	WALK_NEW,  /* only threads not met before (lost or no events) */
	WALK_NONE, /* leave them to the connector's events */
};

static inline struct managed *as_managed(struct pidnode *n)
{
	return (struct managed *)n; /* node is the first member */
}

/*
 * What a write is for: a rule of one configuration and the manager's
 * bookkeeping of it (the ratio in force, its logs and warnings).  Eval
 * builds it from the configuration in force; reload builds one from the
 * old configuration (to restore) and one from the new (to write), and
 * never swaps m->cfg.  The writes (apply, threads, cgroup, report) take
 * it as an argument and read no rule of a process from m.
 */
struct mgr_target {
	unsigned int rule;    /* index in its configuration */
	const struct rule *r; /* name, cpus, threads, softness */
	struct mgr_rule *mr;  /* ratio, cg_mode, logs, warnings */
};

/* rule of the configuration in force. */
static inline struct mgr_target mgr_target(struct mgr *m, unsigned int rule)
{
	return (struct mgr_target){rule, &m->cfg->rules[rule],
				   &m->rules[rule]};
}

/* manager-state.c */
/*
 * Keep m->nhand_procs right around a change to e's hand-set state:
 * was = managed_hand(e) before it.
 */
void mgr_hand_note(struct mgr *m, const struct managed *e, bool was);
void mgr_walk_free(struct managed *e);
/* A thread walk's tids and itself; *w NULL after. */
void mgr_twalk_free(struct twalk **w);
struct managed *mgr_lookup(const struct mgr *m, int pid);
struct other *mgr_other_lookup(const struct mgr *m, int pid);
struct other *mgr_other_add(struct mgr *m, int pid);
void mgr_other_del(struct mgr *m, int pid);
/* Out of the table and freed, with a reset in progress. */
void mgr_other_remove(struct mgr *m, struct other *o);
/* Forget a reset in progress of o (its tids). */
void mgr_other_reset_free(struct other *o);
/* Manage pid under rule (starttime 0: not read yet, see struct managed). */
struct managed *mgr_insert(struct mgr *m, int pid, uint64_t starttime,
			   const char *comm, unsigned int rule);
/*
 * Is st (just read) e's process?  Takes its start time if e was booked
 * at its fork event and is read for the first time.
 */
bool mgr_same_process(struct mgr *m, struct managed *e, const struct pstat *st);
void mgr_drop(struct mgr *m, struct managed *e);
/* The tick hook, every so many items i of a batch. */
void mgr_tick(struct mgr *m, unsigned long i);
/* The priority of a line about one process of rule: rate-limited. */
int mgr_rule_prio(struct mgr *m, unsigned int rule);
int mgr_target_prio(const struct mgr_target *t);
int mgr_target_warn(const struct mgr_target *t, enum rule_warn kind);
/*
 * Per-rule state for cfg; a rule of the old configuration that map
 * (config_rule_map, nold entries) carries over keeps its own.  NULL:
 * ENOMEM.
 */
struct mgr_rule *mgr_rules_new(const struct config *cfg,
			       const struct mgr_rule *old_rules,
			       const int *map, unsigned int nold);

/* procsnap.c */
/* Open <proc>/PID into m->snap and read its stat.  0 or -errno (gone). */
int mgr_snap_open(struct mgr *m, int pid);
/* The directory and every file read through it, closed together. */
void mgr_snap_close(struct snap *s);
/*
 * The status of the process at pfd: s's, read once, when s is its
 * snapshot (NULL: none, read it).  0 or -errno.
 */
int mgr_read_pstatus(struct snap *s, int pfd, struct pstatus *ret);
/* We wrote a thread's own request: s's hint on the main thread's is off. */
void procsnap_wrote_thread(struct snap *s);
/* Read one more attribute into m->snap (a NEED_* bit); unreadable: NULL. */
void mgr_snap_load(struct mgr *m, unsigned int need);

/* manager-eval.c */
/* The rule m->snap matches, reading attributes as the rules ask; -1: none. */
int mgr_match(struct mgr *m, const struct config *cfg);
/*
 * A fork event of managed parent p: book the child under p's rule
 * without reading it, if p's state tells all.  False: evaluate it.
 */
bool mgr_book_child(struct mgr *m, const struct managed *p, int pid);
/* Decide and act on the process in m->snap (why: D_* bits). */
void mgr_eval(struct mgr *m, unsigned int why, unsigned int inherit,
	      enum walk walk, bool attrs);
/* The same for pid, opened now; a pid that is gone is forgotten. */
void mgr_eval_now(struct mgr *m, int pid, unsigned int why,
		  unsigned int inherit, enum walk walk);

/* manager-report.c */
/*
 * Count and log what a write to e (tid: one thread, 0: the process
 * level) came to.  False: stop, the process is no longer managed.
 */
bool mgr_note_result(struct mgr *m, struct managed *e,
		     const struct mgr_target *t, int tid, enum aff_result res,
		     int err);
/* e's request at tid (0: the process level) is someone else's: say so. */
void mgr_log_hand(struct mgr *m, struct managed *e,
		  const struct mgr_target *t, struct mgr_proc p, int tid);

/* manager-apply.c */
/*
 * The rule's ratio as the process's own soft_affinity_ratio: one write
 * for all its threads, later ones included.  want NULL: restore.
 */
void mgr_apply_ratio(struct mgr *m, struct managed *e,
		     const struct mgr_target *t, struct mgr_proc p,
		     const struct ratio *want);
void mgr_apply_proc(struct mgr *m, struct managed *e,
		    const struct mgr_target *t, struct mgr_proc p,
		    enum walk walk);
struct twalk *mgr_restore_proc(struct mgr *m, struct managed *e,
			       const struct mgr_target *t, struct mgr_proc p,
			       unsigned int cap);
/* e's process directory if it is still e's process, or -1 (e dropped). */
int mgr_open_same(struct mgr *m, struct managed *e);
/* Start over with e: adopt all its threads on the next apply. */
void mgr_readopt_proc(struct mgr *m, struct managed *e);
struct twalk *mgr_unmanage(struct mgr *m, struct managed *e,
			   const struct mgr_target *t, struct mgr_proc p,
			   const char *why, unsigned int cap);
/*
 * The ratio of pid's rule as it is now, if pid is still the managed
 * process it was (D_RATIO, queued by mgr_set_rule_ratio).
 */
void mgr_apply_rule_ratio(struct mgr *m, int pid);
/*
 * The next cap threads of o->reset (D_RESET): true when more are left.
 * o's process must still be o's (its start time).
 */
bool mgr_reset_more(struct mgr *m, struct other *o, unsigned int cap);
/* A child that kept the mask of o->inherit's rule: reset it (if ours). */
void mgr_restore_inherited(struct mgr *m, struct other *o);

/* manager-threads.c */
/*
 * Go on with e's thread walk, at most cap threads; nthreads is how many
 * threads its status counted now (0: not read), 1 sparing the listing
 * of task/.  True when it is complete, false: more to do (e->walk).
 */
bool mgr_walk_threads(struct mgr *m, struct managed *e,
		      const struct mgr_target *t, struct mgr_proc p,
		      enum walk walk, unsigned int cap, bool retake,
		      unsigned int nthreads);
/*
 * threads = "main": every thread's request back to inherit, if ours; at
 * most cap threads, the rest (not hand-set) returned as a walk to go on
 * with (mgr_reset_walk; free tids and it), or NULL: all done.
 */
struct twalk *mgr_restore_threads(struct mgr *m, struct managed *e,
				  const struct mgr_target *t, struct mgr_proc p,
				  unsigned int cap);
/*
 * Go on with w, at most cap threads of pid, resetting those whose
 * request is still target.  True when it is complete.
 */
bool mgr_reset_walk(struct mgr *m, int pid, struct mgr_proc p,
		    const struct cpuset *target, struct twalk *w,
		    unsigned int cap);
/* Undo one thread's request (inherit) if it is still target, ours. */
bool mgr_reset_thread(struct mgr *m, int pid, struct mgr_proc p, int tid,
		      const struct cpuset *target);
/* The same for every thread of pid (a child that kept its parent's). */
void mgr_reset_threads(struct mgr *m, int pid, struct mgr_proc p,
		       const struct cpuset *target);

/* manager-room.c */
/* Cgroup cg (as /proc/PID/cgroup names it) holds a process of room's. */
void mgr_room_note(struct mgr_room *room, const char *cg);
/* Every cgroup of from into to (a reload's processes moving rules). */
void mgr_room_merge(struct mgr_room *to, const struct mgr_room *from);

/* manager-cgroup.c */
/*
 * Act on the cgroup of s, open, for its cgroup-mode rule; false: do
 * threads.  The files go to the snapshot's plug.
 */
bool mgr_cg_eval(struct mgr *m, struct snap *s, const struct mgr_target *t);
/* The same for the cgroup at path; their fds to plug (NULL: closed). */
int mgr_cg_apply(struct mgr *m, const struct mgr_target *t,
		 const char *path, struct fd_plug *plug);
void mgr_cg_restore(struct mgr *m, struct cg_entry *c);
/* Free c: its trigger out of the poll set (unwatch hook), then closed. */
void mgr_cg_entry_free(struct mgr *m, struct cg_entry *c);
/*
 * Forget m->cgs[k]: its cgroup was removed (its trigger reported
 * EPOLLERR, or its files are gone).  Unwatches and closes the trigger;
 * the last entry moves to k.  A cgroup
 * made again at the same path becomes a new entry, with a trigger of its
 * own, when a process of it is next evaluated.
 */
void mgr_cg_forget(struct mgr *m, size_t k);
/*
 * A cpu.pressure trigger of rule fired: sample it every interval again,
 * from a baseline read now (its counters are stale after a sleep).
 */
void mgr_rule_wake(struct mgr *m, unsigned int rule, uint64_t now_ms);

#endif
