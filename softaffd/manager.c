// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Evaluation and policy: which processes are managed under which rule,
 * and what deserves a log line.  One way through for every process:
 *
 *   event or scan -> dirty queue -> snapshot (procfs, through one fd on
 *   <proc>/PID) -> decision (rules.c, affinity.c's aff_decide: pure;
 *   container.c: a container's annotations win) -> writes (affinity.c)
 *   -> log and counters.
 *
 * The pid tables are pidtable.c, the dirty queue dirtyq.c, the
 * per-thread ownership owned.c, the sliced /proc walk scanner.c.
 *
 * Ownership of masks: the first pass over a process (at start, when it
 * appears, after exec) adopts every thread.  From then on a thread is
 * "ours" while its own request (task/TID/soft_affinity_list, which reads
 * exactly what was written) is the mask we set; one that someone else
 * changed is hand-managed and left alone, until the process execs or
 * the admin asks for re-adoption (mgr_readopt).  Restoring only touches
 * our masks, and writes "inherit": the process's or the cgroup's
 * preference applies again, as before us.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "log.h"
#include "manager.h"

/*
 * Processes sampled per rule and interval.  Waiting and the share
 * outside are ratios, which a sample of the rule's processes estimates
 * as well as all of them; a rule over thousands of processes must not
 * cost thousands of reads a second.  The same processes are met first
 * each time while the table does not change, so their baselines hold.
 */
#define MGR_SAMPLE_PROCS 64
/* Rules without adaptive softness: figures for --status every 10 s. */
#define MGR_SAMPLE_OTHERS_MS 10000
/*
 * The cpu.pressure trigger of an adaptive cgroup rule: wake the daemon
 * when the cgroup's "some" grew by 100 ms within 2 s.  2 s: without
 * CAP_SYS_RESOURCE, which the daemon does not have, the kernel takes
 * only multiples of 2 s (they ride on PSI's own 2 s averaging, with no
 * real-time poll thread).  100 ms, 5% of the window: a cgroup that
 * keeps a CPU's worth busy softens from 11% (some / (some + wall) =
 * 10%, cgstat.h), so the trigger fires at under half of that.  One that
 * runs less can reach 10% with less stall; an asleep rule is still
 * judged every 10 s (MGR_SAMPLE_OTHERS_MS).
 */
#define MGR_PSI_WINDOW_US 2000000
#define MGR_PSI_THRESHOLD_US 100000

/* Call the tick hook every this many items of a batch (threads, pids). */
#define MGR_TICK_EVERY 64

static struct managed *as_managed(struct pidnode *n)
{
	return (struct managed *)n; /* node is the first member */
}

/* Closing the trigger's fd also takes it out of the daemon's epoll set. */
static void cg_entry_free(struct cg_entry *c)
{
	if (c->psi_fd >= 0)
		close(c->psi_fd);
	c->psi_fd = -EBADF;
	free(c->path);
	c->path = NULL;
}

struct managed *mgr_lookup(const struct mgr *m, int pid)
{
	return as_managed(pidtable_lookup(&m->procs, pid));
}

static struct other *other_lookup(const struct mgr *m, int pid)
{
	return (struct other *)pidtable_lookup(&m->others, pid);
}

static void tick(struct mgr *m, unsigned long i)
{
	if (m->tick && i % MGR_TICK_EVERY == MGR_TICK_EVERY - 1)
		m->tick(m->tick_userdata);
}

static const struct cpuset *target_of(const struct mgr *m, unsigned int rule)
{
	return &m->cfg->rules[rule].cpus;
}

/* Lines about one process of rule: rate-limited (rulelog.h). */
static int rule_prio(struct mgr *m, unsigned int rule)
{
	return rule_log_info(&m->rule_log[rule], m->cfg->rules[rule].name,
			     now_ms());
}

static int warn_prio(struct mgr *m, unsigned int rule, enum rule_warn kind)
{
	return rule_log_warn(&m->rule_log[rule], m->cfg->rules[rule].name, kind,
			     now_ms());
}

void mgr_flush_logs(struct mgr *m, uint64_t now)
{
	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		rule_log_flush(&m->rule_log[r], m->cfg->rules[r].name, now);
}

/* ---- processes that matched no rule ---- */

static struct other *other_add(struct mgr *m, int pid)
{
	struct other *o = other_lookup(m, pid);

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return NULL; /* it is only a cache */
		o->node.pid = pid;
		pidtable_add(&m->others, &o->node);
	}
	o->seen = m->gen;
	return o;
}

static void other_set(struct mgr *m, const struct snap *s,
		      unsigned int inherit)
{
	struct other *o = other_add(m, s->pid);

	if (!o)
		return;
	o->starttime = s->st.starttime;
	snprintf(o->comm, sizeof(o->comm), "%s", s->st.comm);
	if (inherit)
		o->inherit = inherit;
}

static void other_del(struct mgr *m, int pid)
{
	struct pidnode *n = pidtable_lookup(&m->others, pid);

	if (n) {
		pidtable_del(&m->others, n);
		free(n);
	}
}

/* ---- managed processes ---- */

static struct managed *insert(struct mgr *m, const struct snap *s,
			      unsigned int rule)
{
	struct managed *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->node.pid = s->pid;
	e->starttime = s->st.starttime;
	snprintf(e->comm, sizeof(e->comm), "%s", s->st.comm);
	e->rule = rule;
	e->seen = m->gen;
	pidtable_add(&m->procs, &e->node);
	m->count = m->procs.count;
	m->rule_count[rule]++;
	other_del(m, s->pid);
	return e;
}

static void forget_threads(struct mgr *m, struct managed *e)
{
	m->nhand_procs += owned_clear(&e->own);
}

static void drop(struct mgr *m, struct managed *e)
{
	free(e->ts);
	pidtable_del(&m->procs, &e->node);
	m->count = m->procs.count;
	m->rule_count[e->rule]--;
	forget_threads(m, e);
	free(e);
}

/* Per-rule state for @cfg, zeroed; all or nothing is allocated. */
static int alloc_rule_arrays(const struct config *cfg, unsigned int **ret_count,
			     bool **ret_warned, struct rule_log **ret_rl)
{
	size_t n = cfg->nrules ? cfg->nrules : 1;
	unsigned int *rc = calloc(n, sizeof(*rc));
	bool *ew = calloc(n, sizeof(*ew));
	struct rule_log *rl = calloc(n, sizeof(*rl));

	if (!rc || !ew || !rl) {
		free(rc);
		free(ew);
		free(rl);
		return -ENOMEM;
	}
	*ret_count = rc;
	*ret_warned = ew;
	*ret_rl = rl;
	return 0;
}

/* The ratio a rule starts with: adaptive ones start hard. */
static struct ratio initial_ratio(const struct config *cfg,
				  const struct rule *r)
{
	return r->softness.kind == SOFT_ADAPTIVE ? cfg->hardest
						 : r->softness.fixed;
}

/*
 * Per-rule state for cfg; a rule that is unchanged from the old config
 * keeps its state (an adaptive ratio does not start over on reload).
 */
static struct rule_state *rule_states_new(const struct config *cfg,
					  const struct config *old,
					  const struct rule_state *old_rs)
{
	struct rule_state *rs = calloc(cfg->nrules ? cfg->nrules : 1,
				       sizeof(*rs));

	if (!rs)
		return NULL;
	for (unsigned int i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];

		rs[i].ratio = initial_ratio(cfg, r);
		rs[i].cg_mode = rule_acts_on_cgroup(r);
		for (unsigned int j = 0; old && j < old->nrules; j++)
			if (rule_equal(r, &old->rules[j]))
				rs[i] = old_rs[j];
	}
	return rs;
}

int mgr_init(struct mgr *m, const struct roots *roots, const struct config *cfg,
	     const struct topology *topo, bool dry_run)
{
	char path[PATH_MAX];

	memset(m, 0, sizeof(*m));
	m->roots = *roots;
	m->cfg = cfg;
	m->topo = topo;
	m->dry_run = dry_run;
	m->snap = calloc(1, sizeof(*m->snap));
	if (!m->snap)
		return -ENOMEM;
	m->snap->pfd = -1;
	if (pidtable_init(&m->procs) || pidtable_init(&m->others) ||
	    dirtyq_init(&m->dirty))
		return -ENOMEM;
	m->rs = rule_states_new(cfg, NULL, NULL);
	if (!m->rs)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/self/soft_affinity_ratio", roots->proc);
	m->have_proc_ratio = access(path, F_OK) == 0;
	return alloc_rule_arrays(cfg, &m->rule_count, &m->einval_warned,
				 &m->rule_log);
}

void mgr_done(struct mgr *m)
{
	struct pidnode *n, *next;

	mgr_scan_abort(m);
	if (m->procs.buckets)
		pidtable_for_each (&m->procs, n, next)
			drop(m, as_managed(n));
	pidtable_clear(&m->others);
	pidtable_done(&m->procs);
	pidtable_done(&m->others);
	dirtyq_done(&m->dirty);
	free(m->rule_count);
	free(m->einval_warned);
	free(m->rule_log);
	free(m->rs);
	for (size_t i = 0; i < m->ncgs; i++)
		cg_entry_free(&m->cgs[i]);
	free(m->cgs);
	container_cache_free(&m->ctr);
	m->rs = NULL;
	m->cgs = NULL;
	m->ncgs = 0;
	free(m->snap);
	free(m->tids);
	m->rule_count = NULL;
	m->einval_warned = NULL;
	m->rule_log = NULL;
	m->snap = NULL;
	m->tids = NULL;
}

/* ---- gather: the snapshot of one process ---- */

static void snap_close(struct snap *s)
{
	if (s->pfd >= 0)
		close(s->pfd);
	s->pfd = -1;
}

/* Open <proc>/PID and read its stat.  0 or -errno (gone). */
static int snap_open(struct mgr *m, int pid)
{
	struct snap *s = m->snap;
	int r;

	snap_close(s);
	s->pid = pid;
	s->pfd = procfs_open_pid(m->roots.proc, pid);
	if (s->pfd < 0)
		return s->pfd;
	r = procfs_read_stat(s->pfd, 0, &s->st);
	if (r < 0) {
		snap_close(s);
		return r;
	}
	memset(&s->a, 0, sizeof(s->a));
	s->a.loaded = NEED_COMM;
	s->a.comm = s->st.comm;
	s->a.regex_budget = RULES_REGEX_BUDGET;
	return 0;
}

/* Read one more attribute (a NEED_* bit); unreadable stays NULL. */
static void snap_load(struct snap *s, unsigned int need)
{
	struct proc_attrs *a = &s->a;

	a->loaded |= need;
	switch (need) {
	case NEED_EXE:
		if (procfs_read_exe(s->pfd, s->exe, sizeof(s->exe)) == 0)
			a->exe = s->exe;
		break;
	case NEED_CMDLINE:
		if (procfs_read_cmdline(s->pfd, s->cmdline,
					sizeof(s->cmdline)) == 0)
			a->cmdline = s->cmdline;
		break;
	case NEED_CGROUP:
		if (procfs_read_cgroup(s->pfd, s->cgroup, sizeof(s->cgroup)) ==
		    0)
			a->cgroup = s->cgroup;
		break;
	case NEED_UID:
		if (procfs_read_status(s->pfd, 0, NULL, &a->uid) == 0)
			a->has_uid = true;
		break;
	}
}

/* ---- decide: which rule, reading attributes as the rules ask ---- */

static int match(struct mgr *m)
{
	struct snap *s = m->snap;
	unsigned int at = 0, need = 0;
	int r;

	while ((r = rules_match_from(m->cfg, &s->a, at, &at, &need)) ==
	       RULES_NEED)
		snap_load(s, need);
	if (s->a.regex_skipped) {
		char comm[128];

		m->cnt.regex_skipped += s->a.regex_skipped;
		log_debug("pid %d (%s): %u cmdline rules skipped: the regex "
			  "work for one process is bounded",
			  s->pid, procfs_escape(s->st.comm, comm, sizeof(comm)),
			  s->a.regex_skipped);
	}
	m->cnt.evals++;
	return r;
}

/*
 * The one check before a rule that matched m->snap is applied: is the
 * process in a container whose annotations set its preference
 * (container.h)?  Then the container's owner stated it, and a task-level
 * write by us would silently override its cgroup's value: the rule
 * leaves it alone.  An exec re-reads marks read before this flush: the
 * hook marks the cgroup after the runtime's init process entered it
 * (which a scan may have met), before the container's first exec.
 */
static bool left_to_container(struct mgr *m, unsigned int why,
			      unsigned int rule)
{
	struct snap *s = m->snap;
	struct container_mark mk;
	char comm[128];

	if (!(s->a.loaded & NEED_CGROUP))
		snap_load(s, NEED_CGROUP);
	if (!s->a.cgroup ||
	    !container_find(&m->ctr, m->roots.sys, s->a.cgroup, monotonic_ns(),
			    why & D_EXEC ? m->exec_fresh_ns : 0, &mk))
		return false;
	log_msg(container_note_left(&m->ctr, s->a.cgroup, mk.cglen, rule)
			? LOG_INFO
			: LOG_DEBUG,
		"pid %d (%s): its preference is set by the container's "
		"annotations (container %s, cgroup %.*s): rule '%s' leaves it "
		"alone",
		s->pid, procfs_escape(s->st.comm, comm, sizeof(comm)), mk.id,
		(int)mk.cglen, s->a.cgroup, m->cfg->rules[rule].name);
	return true;
}

/* ---- act: the threads of one process ---- */

static void log_hand(struct mgr *m, struct managed *e, int pfd, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	char comm[128], cpus[CPUSET_LIST_BUFSZ], now[CPUSET_LIST_BUFSZ];
	struct cpureq soft;
	int prio = e->flags & M_HAND_LOGGED ? LOG_DEBUG : rule_prio(m, e->rule);

	m->cnt.hand++;
	if (aff_read_soft(pfd, tid, &soft) < 0 ||
	    cpureq_format(&soft, true, now, sizeof(now)) < 0)
		snprintf(now, sizeof(now), "?");
	cpuset_format_list(target_of(m, e->rule), cpus, sizeof(cpus));
	log_msg(prio,
		"pid %d (%s): soft affinity of thread %d set by hand to %s "
		"(rule '%s' wants %s); leaving %s alone until it execs",
		e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)), tid,
		now, rule->name, cpus,
		e->flags & M_HAND_LOGGED ? "that thread" : "such threads");
	e->flags |= M_HAND_LOGGED;
}

/*
 * Apply the rule to one thread.  Returns false to stop visiting further
 * threads of the process.
 */
static bool apply_one(struct mgr *m, struct managed *e, int pfd, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	struct mthread *t = owned_find(&e->own, tid);
	char comm[128], cpus[CPUSET_LIST_BUFSZ];
	enum aff_claim claim;
	enum aff_result res;
	int err;

	if (t && t->hand)
		return true;
	/* A dry run never takes a mask, so it has none to lose either. */
	claim = m->dry_run || !(e->flags & M_ADOPTED) ? AFF_ADOPT
		: t				      ? AFF_OURS
						      : AFF_NEW;
	res = aff_apply_thread(pfd, tid, target_of(m, e->rule), claim,
			       m->dry_run, &err);
	procfs_escape(e->comm, comm, sizeof(comm));
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		m->nhand_procs += owned_remember(&e->own, tid, false);
		cpuset_format_list(target_of(m, e->rule), cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED)
				? rule_prio(m, e->rule)
				: LOG_DEBUG,
			"%sset soft affinity of %d/%d (%s) to %s (rule '%s')",
			m->dry_run ? "dry-run: would " : "", e->node.pid, tid,
			comm, cpus, rule->name);
		e->flags |= M_LOGGED;
		break;
	case AFF_UNCHANGED:
		m->cnt.unchanged++;
		m->nhand_procs += owned_remember(&e->own, tid, false);
		break;
	case AFF_FOREIGN:
		m->nhand_procs += owned_remember(&e->own, tid, true);
		log_hand(m, e, pfd, tid);
		break;
	case AFF_GONE:
		m->cnt.gone++;
		break;
	case AFF_RT:
		m->cnt.rt++;
		break;
	case AFF_EMPTY:
		m->cnt.empty++;
		if (!(e->flags & M_WARNED_EMPTY)) {
			cpuset_format_list(target_of(m, e->rule), cpus,
					   sizeof(cpus));
			log_msg(warn_prio(m, e->rule, RULE_WARN_EMPTY),
				"pid %d (%s): hard affinity excludes all of "
				"%s (rule '%s'), skipped",
				e->node.pid, comm, cpus, rule->name);
			e->flags |= M_WARNED_EMPTY;
		}
		break;
	case AFF_EPERM:
		m->cnt.eperm++;
		log_msg(warn_prio(m, e->rule, RULE_WARN_EPERM),
			"pid %d (%s): not permitted to set soft affinity "
			"(%s), no longer managing it",
			e->node.pid, comm, strerror(-err));
		e->flags |= M_IGNORED;
		return false;
	case AFF_EINVAL:
		m->cnt.einval++;
		if (!m->einval_warned[e->rule]) {
			cpuset_format_list(target_of(m, e->rule), cpus,
					   sizeof(cpus));
			log_warn("rule '%s': kernel rejected soft affinity %s "
				 "for %d/%d (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, e->node.pid, tid, comm);
			m->einval_warned[e->rule] = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_msg(warn_prio(m, e->rule, RULE_WARN_ERROR),
				"pid %d thread %d: soft affinity: %s",
				e->node.pid, tid, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

/* Undo one thread's request (inherit) if it is still target, ours. */
static bool reset_one(struct mgr *m, int pid, int pfd, int tid,
		      const struct cpuset *target)
{
	enum aff_result res;
	int err;

	res = aff_restore_thread(pfd, tid, target, m->dry_run, &err);
	if (res == AFF_WRITTEN) {
		m->cnt.restored++;
		log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
			"%sreset soft affinity of %d/%d to inherit",
			m->dry_run ? "dry-run: would " : "", pid, tid);
	} else if (res == AFF_FOREIGN) {
		m->cnt.foreign++;
		log_debug("%d/%d: soft affinity changed by someone else, left "
			  "alone",
			  pid, tid);
	} else if (res == AFF_EPERM) {
		return false;
	}
	return true;
}

static bool restore_one(struct mgr *m, struct managed *e, int pfd, int tid)
{
	struct mthread *t = owned_find(&e->own, tid);

	if (t && t->hand)
		return true;
	return reset_one(m, e->node.pid, pfd, tid, target_of(m, e->rule));
}

/*
 * threads = "main": the other threads get no mask from us; one they
 * inherited from the main thread (the kernel copies it on clone) is
 * reset, unless someone set it by hand.
 */
static bool unset_other(struct mgr *m, struct managed *e, int pfd, int tid)
{
	if (owned_find(&e->own, tid))
		return true; /* already met: reset then, or hand-set */
	if (!reset_one(m, e->node.pid, pfd, tid, target_of(m, e->rule)))
		return false;
	/* Remembered as ours-and-reset: not looked at again. */
	m->nhand_procs += owned_remember(&e->own, tid, false);
	return true;
}

/* What to do with the threads of a process that stays managed. */
enum walk {
	WALK_ALL,  /* check every thread: finds masks set by hand */
	WALK_NEW,  /* only threads not met before (lost or no events) */
	WALK_NONE, /* leave them to the connector's events */
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

typedef bool (*thread_fn)(struct mgr *, struct managed *, int, int);

/*
 * Visit the threads of e (with WALK_NEW only those not met before),
 * calling fn on the main thread and others_fn on the rest.  The visit
 * also forgets the threads it did not meet: they have exited.
 */
static void visit_threads(struct mgr *m, struct managed *e, int pfd,
			  enum walk walk, thread_fn fn, thread_fn others_fn)
{
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		int tid = m->tids[i];
		thread_fn f = tid == e->node.pid ? fn : others_fn;

		if (walk == WALK_NEW && owned_find(&e->own, tid))
			continue;
		if (!f(m, e, pfd, tid))
			return;
		tick(m, (unsigned long)i);
	}
	qsort(m->tids, (size_t)n, sizeof(*m->tids), cmp_int);
	m->nhand_procs += owned_prune(&e->own, m->tids, (size_t)n);
}

/*
 * The rule's ratio as the process's own soft_affinity_ratio: one write
 * for all its threads, later ones included.  want NULL: restore.
 */
static void apply_ratio(struct mgr *m, struct managed *e, int pfd,
			const struct ratio *want)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	enum aff_result res;
	char comm[128];
	int err;

	if (!m->have_proc_ratio) {
		/* An older kernel is supported: a notice, not a warning. */
		if (want && !m->proc_ratio_logged)
			log_msg(LOG_NOTICE,
				"this kernel has no %s/PID/soft_affinity_ratio: "
				 "rules' softness is not applied, the "
				 "sysctls' ratio is in force for them",
				 m->roots.proc);
		m->proc_ratio_logged = true;
		return;
	}
	if (e->flags & (M_RATIO_FOREIGN | M_IGNORED))
		return;
	if (!want && !e->ratio_ours.allowed)
		return;
	res = aff_apply_ratio(pfd, &e->ratio_ours, want, m->dry_run, &err);
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.ratio_written++;
		if (want)
			log_debug("%sset soft_affinity_ratio of %d to %u:%u "
				  "(rule '%s')",
				  m->dry_run ? "dry-run: would " : "",
				  e->node.pid, want->allowed, want->preferred,
				  rule->name);
		/* fall through */
	case AFF_UNCHANGED:
		if (!m->dry_run)
			e->ratio_ours = want ? *want : (struct ratio){0, 0};
		break;
	case AFF_FOREIGN:
		m->cnt.foreign++;
		if (want) {
			log_msg(rule_prio(m, e->rule),
				"pid %d (%s): soft_affinity_ratio set by hand; "
				"leaving it alone until it execs (rule '%s')",
				e->node.pid,
				procfs_escape(e->comm, comm, sizeof(comm)),
				rule->name);
			e->flags |= M_RATIO_FOREIGN;
		}
		break;
	case AFF_GONE:
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR))
			log_msg(warn_prio(m, e->rule, RULE_WARN_ERROR),
				"pid %d: soft_affinity_ratio: %s", e->node.pid,
				strerror(-err));
		e->flags |= M_WARNED_ERROR;
		break;
	}
}

static void apply_proc(struct mgr *m, struct managed *e, int pfd,
		       enum walk walk)
{
	const struct rule *rule = &m->cfg->rules[e->rule];

	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	if (!(e->flags & M_ADOPTED))
		walk = WALK_ALL;
	if (walk == WALK_NONE)
		return;
	visit_threads(m, e, pfd, walk, apply_one,
		      rule->threads == THREADS_MAIN ? unset_other : apply_one);
	if (!(e->flags & M_IGNORED) && walk == WALK_ALL)
		apply_ratio(m, e, pfd, &m->rs[e->rule].ratio);
	e->flags |= M_ADOPTED;
}

static void restore_proc(struct mgr *m, struct managed *e, int pfd)
{
	if (e->flags & (M_IGNORED | M_CGROUP))
		return;
	visit_threads(m, e, pfd, WALK_ALL, restore_one, restore_one);
	apply_ratio(m, e, pfd, NULL);
}

/*
 * Open e's process directory for a batch (reload, restore) and check it
 * is still the same process.  The fd, or -1 (then e was dropped).
 */
static int open_same(struct mgr *m, struct managed *e)
{
	struct pstat st;
	int pfd = procfs_open_pid(m->roots.proc, e->node.pid);

	if (pfd >= 0 && procfs_read_stat(pfd, 0, &st) == 0 &&
	    st.starttime == e->starttime)
		return pfd;
	if (pfd >= 0)
		close(pfd);
	drop(m, e);
	return -1;
}

/* ---- act: cgroups ---- */

/* Is the cgroup at path a container's, or inside one?  Then it is theirs. */
static bool cg_in_container(struct mgr *m, const char *path)
{
	struct container_mark mk;

	return container_find(&m->ctr, m->roots.sys, path, monotonic_ns(), 0,
			      &mk);
}

static struct cg_entry *cg_find(struct mgr *m, const char *path)
{
	for (size_t i = 0; i < m->ncgs; i++)
		if (!strcmp(m->cgs[i].path, path))
			return &m->cgs[i];
	return NULL;
}

/*
 * Fill c for the cgroup at its path, as it is now: identity id, the
 * preference orig it had before us.  Only adaptive rules use the wait
 * signal, so only they get a trigger; the daemon puts it in its epoll
 * set (and falls back to reading the counters each interval when it
 * cannot).
 */
static void cg_init(struct mgr *m, struct cg_entry *c, unsigned int rule,
		    uint64_t id, const struct pref_req *orig)
{
	c->id = id;
	c->rule = rule;
	c->orig = *orig;
	c->written = c->foreign = c->have_prev = c->psi_watched = false;
	c->psi_fd = -ENOENT;
	if (m->cfg->rules[rule].softness.kind == SOFT_ADAPTIVE)
		c->psi_fd = cgstat_trigger_open(m->roots.sys, c->path,
						MGR_PSI_THRESHOLD_US,
						MGR_PSI_WINDOW_US);
}

static struct cg_entry *cg_add(struct mgr *m, const char *path,
			       unsigned int rule, uint64_t id,
			       const struct pref_req *orig)
{
	struct cg_entry *grown = realloc(m->cgs, (m->ncgs + 1) * sizeof(*grown));
	struct cg_entry *c;

	if (!grown)
		return NULL;
	m->cgs = grown;
	c = &m->cgs[m->ncgs];
	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	if (!c->path)
		return NULL;
	cg_init(m, c, rule, id, orig);
	m->ncgs++;
	return c;
}

/*
 * The cgroup at c's path is another one than c was made for: the old one
 * was removed and a new one made under the same name (a restarted
 * service), before its trigger's EPOLLERR was handled or without a
 * trigger at all.  Nothing of the old one holds: what it had before us
 * and what we wrote (else the new one's own value would look foreign),
 * its counters, its trigger.
 */
static void cg_renew(struct mgr *m, struct cg_entry *c, uint64_t id,
		     const struct pref_req *cur)
{
	log_debug("cgroup %s: made again (id %llu, was %llu): starting over",
		  c->path, (unsigned long long)id, (unsigned long long)c->id);
	if (c->psi_fd >= 0)
		close(c->psi_fd);
	cg_init(m, c, c->rule, id, cur);
}

void mgr_cg_forget(struct mgr *m, size_t k)
{
	if (k >= m->ncgs)
		return;
	log_debug("cgroup %s: gone", m->cgs[k].path);
	cg_entry_free(&m->cgs[k]);
	m->cgs[k] = m->cgs[--m->ncgs];
}

/*
 * Write want into cgroup c, ratio first: a preference without a ratio
 * of its own is the rule's mask at the wrong softness, a ratio without a
 * mask does nothing.  If the mask is refused, the ratio goes back to
 * what it was, so a failed apply changes nothing.  0 or -errno.
 */
static int cg_write(struct mgr *m, const char *path, const struct pref_req *cur,
		    const struct pref_req *want)
{
	const char *sys = m->roots.sys;
	bool ratio_changed = !pref_ratio_equal(&cur->ratio, &want->ratio);
	int r = 0;

	if (ratio_changed)
		r = cgpref_write_ratio(sys, path, &want->ratio);
	if (r < 0)
		return r;
	if (!cpureq_equal(&cur->cpus, &want->cpus))
		r = cgpref_write_mask(sys, path, &want->cpus);
	if (r < 0 && ratio_changed)
		cgpref_write_ratio(sys, path, &cur->ratio);
	return r;
}

/*
 * Put rule's preference on the cgroup at path.  -ENOENT when it has no
 * cpuset.cpus.preferred (then the caller falls back to the threads).
 */
static int cg_apply(struct mgr *m, unsigned int rule, const char *path)
{
	const struct rule *ru = &m->cfg->rules[rule];
	struct cg_entry *c = cg_find(m, path);
	const struct ratio *ratio = &m->rs[rule].ratio;
	struct pref_req cur, want = {
		.cpus = {REQ_SET, ru->cpus},
		.ratio = {REQ_SET, ratio->allowed, ratio->preferred},
	};
	char cpus[CPUSET_LIST_BUFSZ];
	uint64_t id;
	int r;

	if (cg_in_container(m, path)) {
		if (c && !c->foreign)
			log_info("cgroup %s: a container's annotations set its "
				 "preference; leaving it alone (rule '%s')",
				 path, ru->name);
		if (c)
			c->foreign = true;
		return 0;
	}
	r = cgstat_id(m->roots.sys, path, &id);
	if (r == 0)
		r = cgpref_read(m->roots.sys, path, &cur);
	if (r < 0)
		return r;
	if (!c) {
		c = cg_add(m, path, rule, id, &cur);
		if (!c)
			return -ENOMEM;
	} else if (c->id != id) {
		cg_renew(m, c, id, &cur);
	}
	if (c->foreign || pref_req_equal(&cur, &want))
		goto done;
	if (c->written && !pref_req_equal(&cur, &c->ours)) {
		log_msg(warn_prio(m, rule, RULE_WARN_CGROUP),
			"cgroup %s: cpuset.cpus.preferred or its ratio was "
			"changed by someone else; leaving it alone (rule '%s')",
			path, ru->name);
		c->foreign = true;
		goto done;
	}
	cpuset_format_list(&ru->cpus, cpus, sizeof(cpus));
	if (m->dry_run) {
		log_info("dry-run: would set cgroup %s preferred %s ratio "
			 "%u:%u (rule '%s')",
			 path, cpus, ratio->allowed, ratio->preferred,
			 ru->name);
		goto done;
	}
	r = cg_write(m, path, &cur, &want);
	if (r < 0)
		return r;
	m->cnt.cg_written++;
	log_msg(c->written ? LOG_DEBUG : LOG_INFO,
		"cgroup %s: preferred %s, ratio %u:%u (rule '%s')", path, cpus,
		ratio->allowed, ratio->preferred, ru->name);
done:
	c->rule = rule;
	if (!c->foreign && !m->dry_run) {
		c->ours = want;
		c->written = true;
	}
	return 0;
}

/* Put back what the cgroup had before us, if it still has our value. */
static void cg_restore(struct mgr *m, struct cg_entry *c)
{
	struct pref_req cur;

	if (!c->written || c->foreign || m->dry_run ||
	    cg_in_container(m, c->path) ||
	    cgpref_read(m->roots.sys, c->path, &cur) < 0 ||
	    !pref_req_equal(&cur, &c->ours))
		return;
	if (cg_write(m, c->path, &cur, &c->orig) == 0) {
		m->cnt.restored++;
		log_debug("cgroup %s: preference restored", c->path);
	}
}

/* Act on the cgroup of s for its cgroup-mode rule; false: do threads. */
static bool cg_eval(struct mgr *m, const struct snap *s, unsigned int rule)
{
	struct rule_state *rs = &m->rs[rule];
	char path[sizeof(s->cgroup)] = "?";
	int r;

	if (!rs->cg_mode || !s->a.cgroup)
		return false;
	r = rules_cgroup_target(&m->cfg->rules[rule], s->a.cgroup, path,
				sizeof(path));
	if (r == 0)
		r = cg_apply(m, rule, path);
	if (r == 0)
		return true;
	if (!rs->cg_fallback_logged)
		log_warn("rule '%s': cannot set the preference of cgroup %s "
			 "(%s%s); setting each process's threads instead",
			 m->cfg->rules[rule].name, path, strerror(-r),
			 r == -ENOENT ? ": no cpuset.cpus.preferred there, "
					"the cpuset controller is not enabled "
					"for it (AllowedCPUs= on the unit does)"
				      : "");
	rs->cg_fallback_logged = true;
	return false;
}

/* Start over with e: adopt all its threads on the next apply. */
static void readopt(struct mgr *m, struct managed *e)
{
	forget_threads(m, e);
	e->ratio_ours = (struct ratio){0, 0};
	e->flags &= ~(unsigned int)(M_ADOPTED | M_HAND_LOGGED | M_IGNORED |
				    M_WARNED_EMPTY | M_WARNED_ERROR |
				    M_RATIO_FOREIGN);
}

static void unmanage(struct mgr *m, struct managed *e, int pfd,
		     const char *why)
{
	char comm[128];

	log_msg(rule_prio(m, e->rule), "pid %d (%s) leaves rule '%s' (%s)",
		e->node.pid, procfs_escape(e->comm, comm, sizeof(comm)),
		m->cfg->rules[e->rule].name, why);
	if (pfd >= 0)
		restore_proc(m, e, pfd);
	drop(m, e);
}

/*
 * The whole way for the process in m->snap: decide which rule, then act.
 * why: D_* bits; attrs: re-read attributes even if the cache says the
 * process is known (cgroup and cmdline change without an event).
 */
static void eval(struct mgr *m, unsigned int why, unsigned int inherit,
		 enum walk walk, bool attrs)
{
	struct snap *s = m->snap;
	struct managed *e = mgr_lookup(m, s->pid);
	struct other *o;
	char comm[128];
	bool ctr;
	int rule;

	if (e && e->starttime != s->st.starttime) {
		/*
		 * The pid was reused; the old process is gone.  The new
		 * one comes with its own exec event or the next scan; a
		 * thread event of the old one says nothing about it.
		 */
		drop(m, e);
		e = NULL;
		if (why == D_THREADS)
			return;
	}
	/* Kernel threads never get soft affinity (the kernel says EINVAL). */
	if (s->st.flags & PF_KTHREAD_BIT) {
		other_set(m, s, 0);
		return;
	}
	if (e)
		e->seen = m->gen;
	if (e && (e->flags & M_IGNORED) && !(why & D_EXEC))
		return;
	/* The match cache: same process, same comm, no exec since. */
	if (!attrs && !(why & (D_EXEC | D_UID))) {
		o = other_lookup(m, s->pid);
		if (e && !strcmp(e->comm, s->st.comm)) {
			m->cnt.cached++;
			apply_proc(m, e, s->pfd, walk);
			return;
		}
		if (!e && o && o->starttime == s->st.starttime &&
		    !strcmp(o->comm, s->st.comm)) {
			m->cnt.cached++;
			o->seen = m->gen;
			return;
		}
	}
	rule = match(m);
	ctr = rule >= 0 && left_to_container(m, why, (unsigned int)rule);
	if (e && !ctr && (why & D_EXEC) && rule == (int)e->rule)
		readopt(m, e); /* only the leader survives an exec */
	if (rule < 0 || ctr) {
		if (e) {
			inherit = e->rule + 1;
			unmanage(m, e, s->pfd,
				 ctr ? "its container's annotations set its "
				       "preference"
				     : "no longer matches");
		}
		other_set(m, s, inherit);
		return;
	}
	if (e && e->rule != (unsigned int)rule) {
		unmanage(m, e, s->pfd, "matches another rule now");
		e = NULL;
	}
	if (!e) {
		e = insert(m, s, (unsigned int)rule);
		if (!e) {
			log_err("out of memory tracking pid %d", s->pid);
			return;
		}
		/* Children of managed processes: fork storms stay quiet. */
		log_msg(why & D_FORKED ? LOG_DEBUG : rule_prio(m, (unsigned)rule),
			"pid %d (%s) matches rule '%s'", s->pid,
			procfs_escape(s->st.comm, comm, sizeof(comm)),
			m->cfg->rules[rule].name);
	}
	snprintf(e->comm, sizeof(e->comm), "%s", s->st.comm);
	if (cg_eval(m, s, (unsigned int)rule))
		e->flags |= M_CGROUP;
	else
		e->flags &= ~(unsigned int)M_CGROUP;
	apply_proc(m, e, s->pfd, walk);
}

/* A pid that cannot be read any more: forget it. */
static void forget_pid(struct mgr *m, int pid)
{
	struct managed *e = mgr_lookup(m, pid);

	if (e)
		drop(m, e);
	other_del(m, pid);
}

static void eval_now(struct mgr *m, int pid, unsigned int why,
		     unsigned int inherit, enum walk walk, bool attrs)
{
	if (snap_open(m, pid) < 0) {
		forget_pid(m, pid);
		return;
	}
	eval(m, why, inherit, walk, attrs);
	snap_close(m->snap);
}

void mgr_eval_pid(struct mgr *m, int pid)
{
	eval_now(m, pid, D_EVAL, 0, WALK_ALL, false);
}

/* ---- events: into the dirty queue ---- */

static void mark(struct mgr *m, int pid, unsigned int why,
		 unsigned int inherit)
{
	if (dirtyq_mark(&m->dirty, pid, why, inherit) < 0) {
		/* No memory for the queue: do it now instead. */
		m->exec_fresh_ns = monotonic_ns();
		eval_now(m, pid, why, inherit, WALK_NEW, false);
	}
}

void mgr_on_exec(struct mgr *m, int pid)
{
	mark(m, pid, D_EXEC, 0);
}

void mgr_on_change(struct mgr *m, int pid)
{
	mark(m, pid, D_EVAL, 0);
}

void mgr_on_uid(struct mgr *m, int pid)
{
	mark(m, pid, D_EVAL | D_UID, 0);
}

void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid)
{
	struct managed *e;

	if (child_pid != child_tgid) {
		/* A new thread: look at it if its process is managed. */
		e = mgr_lookup(m, child_tgid);
		if (e && !(e->flags & M_IGNORED))
			mark(m, child_tgid, D_THREADS, 0);
		return;
	}
	/*
	 * A forked child has its parent's comm, exe, cmdline, uid and
	 * cgroup, so it can only match if the parent did.  Skipping the
	 * rest keeps fork storms cheap; exec and comm events re-evaluate.
	 */
	e = mgr_lookup(m, parent_tgid);
	if (e) {
		mark(m, child_tgid, D_EVAL | D_FORKED, e->rule + 1);
	} else if (other_lookup(m, parent_tgid)) {
		struct other *p = other_lookup(m, parent_tgid);
		unsigned int inherit = p->inherit;
		struct other *o = other_add(m, child_tgid);

		if (o) {
			*o = (struct other){.node = o->node, .seen = m->gen};
			snprintf(o->comm, sizeof(o->comm), "%s", p->comm);
			o->inherit = inherit;
		}
	}
}

void mgr_on_exit(struct mgr *m, int pid, int tgid)
{
	struct managed *e = mgr_lookup(m, tgid);

	if (pid != tgid) {
		if (e)
			m->nhand_procs += owned_forget(&e->own, pid);
		return;
	}
	if (e)
		drop(m, e);
	other_del(m, tgid);
	dirtyq_remove(&m->dirty, tgid);
}

bool mgr_flush(struct mgr *m, uint64_t deadline_ms)
{
	struct dirty d;

	/* Every exec evaluated here happened before this. */
	m->exec_fresh_ns = monotonic_ns();
	while (dirtyq_pop(&m->dirty, &d)) {
		/* New threads only: the rest of the process is known. */
		eval_now(m, d.node.pid, d.why, d.inherit,
			 d.why & (D_EVAL | D_EXEC | D_UID) ? WALK_ALL : WALK_NEW,
			 false);
		if (now_ms() >= deadline_ms)
			break;
	}
	return !dirtyq_count(&m->dirty);
}

/* ---- scans ---- */

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
	m->gen++;
	m->cnt.scans++;
	return 0;
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
	struct managed *e = mgr_lookup(m, pid);
	struct other *o = other_lookup(m, pid);

	if (m->scan_kind == SCAN_LIGHT) {
		/* Known: the connector tells us when it changes. */
		if (e) {
			e->seen = m->gen;
			return;
		}
		if (o && o->starttime) {
			o->seen = m->gen;
			return;
		}
	}
	if (snap_open(m, pid) < 0)
		return;
	/* A scan finds children that inherited a managed parent's mask. */
	e = mgr_lookup(m, m->snap->st.ppid);
	eval(m, D_EVAL, e ? e->rule + 1 : 0, walk, attrs);
	snap_close(m->snap);
}

/* Forget what the walk did not see: those processes have exited. */
static void scan_end(struct mgr *m)
{
	struct pidnode *n, *next;

	pidtable_for_each (&m->procs, n, next)
		if (as_managed(n)->seen != m->gen)
			drop(m, as_managed(n));
	pidtable_for_each (&m->others, n, next) {
		if (((struct other *)n)->seen != m->gen) {
			pidtable_del(&m->others, n);
			free(n);
		}
	}
	pidtable_shrink(&m->procs);
	pidtable_shrink(&m->others);
	container_sweep(&m->ctr, m->roots.sys, monotonic_ns());
	m->last_scan_ms = now_ms();
}

int mgr_scan_step(struct mgr *m, uint64_t deadline_ms)
{
	unsigned long i = 0;
	int pid;

	if (!scanner_busy(&m->scan))
		return 1;
	while (scanner_next(&m->scan, &pid)) {
		scan_pid(m, pid);
		tick(m, i++);
		/* now_ms() is a vDSO call: cheap enough for every pid. */
		if (now_ms() >= deadline_ms)
			return 0;
	}
	scan_end(m);
	return 1;
}

int mgr_scan_finish(struct mgr *m)
{
	int r;

	while ((r = mgr_scan_step(m, UINT64_MAX)) == 0)
		;
	return r < 0 ? r : 0;
}

int mgr_scan(struct mgr *m)
{
	int r = mgr_scan_start(m, SCAN_FULL);

	return r < 0 ? r : mgr_scan_finish(m);
}

/* ---- reload, re-adoption, restore ---- */

static int rule_by_name(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].name, name))
			return (int)i;
	return -1;
}

/*
 * After a reload, a process with hand-set threads whose rule changed
 * keeps them: find its rule under the new config, or let it go without
 * touching those threads.
 */
static void rematch_hand(struct mgr *m, struct managed *e)
{
	int rule = -1;

	if (snap_open(m, e->node.pid) == 0 &&
	    m->snap->st.starttime == e->starttime)
		rule = match(m);
	snap_close(m->snap);
	if (rule < 0) {
		drop(m, e);
		return;
	}
	e->rule = (unsigned int)rule;
	m->rule_count[rule]++;
}

int mgr_reload(struct mgr *m, const struct config *cfg)
{
	unsigned int *old_count = m->rule_count;
	bool *old_warned = m->einval_warned;
	struct rule_log *old_rl = m->rule_log;
	struct pidnode *n, *next;
	struct managed *keep = NULL;
	struct rule_log *rl;
	unsigned long i = 0;
	unsigned int *rc;
	bool *ew;

	struct rule_state *rs;
	size_t ncg = 0;

	if (config_rules_equal(m->cfg, cfg)) {
		/* What was decided under these rules stands. */
		m->cfg = cfg;
		return 1;
	}
	if (alloc_rule_arrays(cfg, &rc, &ew, &rl))
		return -ENOMEM;
	rs = rule_states_new(cfg, m->cfg, m->rs);
	if (!rs) {
		free(rc);
		free(ew);
		free(rl);
		return -ENOMEM;
	}
	mgr_scan_abort(m);
	/* Cgroups of changed or removed rules get back what they had. */
	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		int nr = rule_by_name(cfg, m->cfg->rules[c->rule].name);

		if (nr >= 0 && rule_equal(&m->cfg->rules[c->rule],
					  &cfg->rules[nr])) {
			c->rule = (unsigned int)nr;
			m->cgs[ncg++] = *c;
			continue;
		}
		cg_restore(m, c);
		cg_entry_free(c);
	}
	m->ncgs = ncg;
	/* Events queued under the old rules are covered by the full scan. */
	dirtyq_clear(&m->dirty);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		const struct rule *old = &m->cfg->rules[e->rule];
		int nr = rule_by_name(cfg, old->name);
		int pfd;

		tick(m, i++);
		if (nr >= 0 && rule_equal(old, &cfg->rules[nr])) {
			/* Unchanged rule: keep it, under its new index. */
			old_count[e->rule]--;
			e->rule = (unsigned int)nr;
			rc[nr]++;
			continue;
		}
		pfd = open_same(m, e);
		if (pfd < 0)
			continue;
		if (!e->own.nhand) {
			unmanage(m, e, pfd,
				 nr < 0 ? "rule removed" : "rule changed");
			close(pfd);
			continue;
		}
		/* Ours back to inherit; the hand-set ones stay. */
		log_info("pid %d leaves rule '%s' (%s); threads set by hand "
			 "keep their masks",
			 e->node.pid, old->name,
			 nr < 0 ? "rule removed" : "rule changed");
		restore_proc(m, e, pfd);
		close(pfd);
		owned_keep_hand(&e->own);
		/* Off the table until the new config is in place. */
		old_count[e->rule]--;
		pidtable_del(&m->procs, &e->node);
		e->node.next = keep ? &keep->node : NULL;
		keep = e;
	}
	free(old_count);
	free(old_warned);
	free(old_rl);
	free(m->rs);
	m->rs = rs;
	m->rule_count = rc;
	m->einval_warned = ew;
	m->rule_log = rl;
	m->cfg = cfg;
	while (keep) {
		struct managed *e = keep;

		keep = as_managed(e->node.next);
		pidtable_add(&m->procs, &e->node);
		m->count = m->procs.count;
		rematch_hand(m, e);
	}
	m->count = m->procs.count;
	/* The rules changed: what matched nothing may match now. */
	pidtable_clear(&m->others);
	container_forget_left(&m->ctr);
	/* If /proc cannot be opened now, the next rescan tries again. */
	mgr_scan_start(m, SCAN_FULL);
	return 0;
}

size_t mgr_readopt(struct mgr *m)
{
	size_t had = m->nhand_procs;
	struct pidnode *n, *next;

	pidtable_for_each (&m->procs, n, next)
		readopt(m, as_managed(n));
	mgr_scan_start(m, SCAN_FULL);
	return had;
}

/* A child that kept the mask of its managed parent's rule: reset it. */
static void restore_inherited(struct mgr *m, struct other *o)
{
	const struct cpuset *target;
	struct pstat st;
	int n, pfd;

	if (!o->inherit || o->inherit > m->cfg->nrules)
		return;
	target = target_of(m, o->inherit - 1);
	pfd = procfs_open_pid(m->roots.proc, o->node.pid);
	if (pfd < 0)
		return;
	if (procfs_read_stat(pfd, 0, &st) < 0 ||
	    (o->starttime && st.starttime != o->starttime))
		goto out;
	n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	for (int i = 0; i < n; i++)
		if (!reset_one(m, o->node.pid, pfd, m->tids[i], target))
			break;
out:
	close(pfd);
}

void mgr_restore_all(struct mgr *m)
{
	struct pidnode *n, *next;
	unsigned long i = 0;

	mgr_scan_abort(m);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		int pfd = open_same(m, e);

		if (pfd >= 0) {
			restore_proc(m, e, pfd);
			close(pfd);
		}
		tick(m, i++);
	}
	pidtable_for_each (&m->others, n, next) {
		restore_inherited(m, (struct other *)n);
		tick(m, i++);
	}
	for (size_t k = 0; k < m->ncgs; k++)
		cg_restore(m, &m->cgs[k]);
}

static int cmp_tsample(const void *a, const void *b)
{
	return cmp_int(&((const struct tsample *)a)->tid,
		       &((const struct tsample *)b)->tid);
}

/* Add e's threads' progress since its last sample to f. */
static void sample_proc(struct mgr *m, struct managed *e, int pfd,
			struct rule_figures *f, bool exact)
{
	const struct cpuset *pref = target_of(m, e->rule);
	int n = procfs_read_tids(pfd, &m->tids, &m->tids_cap);
	struct tsample *now;
	unsigned int k = 0;

	if (n <= 0)
		return;
	now = calloc((size_t)n, sizeof(*now));
	if (!now)
		return;
	qsort(m->tids, (size_t)n, sizeof(*m->tids), cmp_int);
	for (int i = 0; i < n; i++) {
		struct tsample key = {.tid = m->tids[i]}, *old;
		struct task_sched *v = &now[k].v;

		struct pstat st;

		if (procfs_read_task_sched(pfd, m->tids[i], exact, v) < 0)
			continue;
		now[k].tid = m->tids[i];
		old = e->ts ? bsearch(&key, e->ts, e->nts, sizeof(*e->ts),
				      cmp_tsample)
			    : NULL;
		/* A thread's first sample is its baseline, not its delta. */
		if (old && v->runtime_ns >= old->v.runtime_ns &&
		    v->delay_ns >= old->v.delay_ns) {
			uint64_t ran = v->runtime_ns - old->v.runtime_ns;

			f->runtime_ns += ran;
			f->delay_ns += v->delay_ns - old->v.delay_ns;
			uint64_t out = v->outside_ns - old->v.outside_ns;

			/* Not more than it ran: schedstats may just have
			 * been turned on, over a baseline without them. */
			if (exact && v->outside_ns >= old->v.outside_ns)
				f->outside_ns += out < ran ? out : ran;
			else if (!exact && ran &&
				 procfs_read_stat(pfd, m->tids[i], &st) == 0 &&
				 st.processor >= 0 && st.processor < CPUSET_MAX &&
				 !cpuset_test(pref, (unsigned int)st.processor))
				f->outside_ns += ran;
			/* 32-bit kernel counters: wrap as u32. */
			f->spills += (uint32_t)(v->spills - old->v.spills);
			f->returns += (uint32_t)(v->returns - old->v.returns);
		}
		k++;
		tick(m, (unsigned long)i);
	}
	free(e->ts);
	e->ts = now;
	e->nts = k;
	f->processes++;
	f->threads += k;
}

/*
 * Add the run and wait time of rule's cgroups since the last call to f.
 * False when a cgroup of it has no cpu.pressure: then its threads tell
 * (said once per rule).  f stays invalid while every cgroup is only
 * taking its baseline.  Cgroups that are gone are forgotten.
 */
static bool sample_cgroups(struct mgr *m, unsigned int rule,
			   struct rule_figures *f)
{
	struct rule_state *rs = &m->rs[rule];
	bool any = false, delta = false, nopsi = false, fresh = false;

	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];
		struct cgstat now;
		struct cgdelta d;
		int r;

		if (c->rule != rule)
			continue;
		r = cgstat_read(m->roots.sys, c->path, &now);
		if (r == -ESRCH) {
			/* The unit stopped: its cgroup is gone. */
			mgr_cg_forget(m, k--);
			continue;
		}
		if (r < 0) {
			if (!rs->no_psi_logged)
				log_info("rule '%s': cannot read %s/fs/cgroup%s/"
					 "cpu.pressure (%s%s); its wait fraction "
					 "comes from its threads' schedstat",
					 m->cfg->rules[rule].name, m->roots.sys,
					 c->path, strerror(-r),
					 r == -ENOENT ? ": a kernel without "
							"CONFIG_PSI, psi=0, or "
							"cgroup.pressure 0"
						      : "");
			rs->no_psi_logged = true;
			/* On, to forget the rule's other cgroups that are gone. */
			nopsi = true;
			/* The next delta must span one interval, not two. */
			c->have_prev = false;
			continue;
		}
		any = true;
		fresh |= !c->have_prev; /* new: its first read is a baseline */
		if (c->have_prev &&
		    cgstat_delta(&c->prev, &now, f->interval_ns, &d)) {
			f->runtime_ns += d.run_ns;
			f->delay_ns += d.wait_ns;
			f->wait_base_ns += d.base_ns;
			delta = true;
		}
		c->prev = now;
		c->have_prev = true;
	}
	if (!any || nopsi)
		return false;
	f->valid = f->valid && delta && !fresh;
	return true;
}

/*
 * Pure: does rule need its threads walked now?  For the wait fraction
 * when its cgroups cannot give it; for locality while it is soft (the
 * law hardens on the share outside), else only for --status.  At the
 * hardest rung the law does not use the share outside: it can only
 * soften, which depends on the wait and the room.
 */
static bool walk_due(const struct rule_state *rs, uint64_t now)
{
	return rs->last.source == WAIT_THREADS || rs->ctl.rung > 0 ||
	       !rs->walked_ms || now - rs->walked_ms >= MGR_SAMPLE_OTHERS_MS;
}

/* Is rule sampled this time? */
static bool sample_due(const struct mgr *m, unsigned int r, uint64_t now)
{
	const struct rule_state *rs = &m->rs[r];
	bool every = m->cfg->rules[r].softness.kind == SOFT_ADAPTIVE &&
		     !rs->asleep;

	return every || !rs->sampled_ms ||
	       now - rs->sampled_ms >= MGR_SAMPLE_OTHERS_MS;
}

void mgr_sample(struct mgr *m, uint64_t now, bool exact)
{
	unsigned int nr = m->cfg->nrules ? m->cfg->nrules : 1;
	struct rule_figures *walk = calloc(nr, sizeof(*walk));
	bool *walking = calloc(nr, sizeof(*walking));
	struct pidnode *n, *next;

	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		m->rs[r].sampled_now = false; /* no decision on old figures */
	if (!walk || !walking)
		goto out;
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct rule_state *rs = &m->rs[r];

		rs->sampled_now = sample_due(m, r, now);
		if (!rs->sampled_now)
			continue;
		rs->last = (struct rule_figures){
			.interval_ns = rs->sampled_ms
					       ? (now - rs->sampled_ms) * 1000000ULL
					       : 0,
			.exact = exact,
			.valid = rs->sampled_ms != 0};
		rs->sampled_ms = now;
		if (rs->cg_mode && sample_cgroups(m, r, &rs->last))
			rs->last.source = WAIT_CGROUP;
		walking[r] = walk_due(rs, now);
		if (!walking[r])
			continue;
		walk[r] = (struct rule_figures){
			.interval_ns = rs->walked_ms
					       ? (now - rs->walked_ms) * 1000000ULL
					       : 0,
			.valid = rs->walked_ms != 0};
		rs->walked_ms = now;
	}
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		struct rule_figures *f = &walk[e->rule];
		int pfd;

		if (!walking[e->rule] || (e->flags & M_IGNORED) ||
		    f->processes >= MGR_SAMPLE_PROCS)
			continue;
		pfd = open_same(m, e);
		if (pfd < 0)
			continue;
		sample_proc(m, e, pfd, f, exact);
		close(pfd);
	}
	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		struct rule_state *rs = &m->rs[r];
		struct rule_figures *f = &rs->last;
		const struct rule_figures *w = &rs->walk;

		if (!rs->sampled_now)
			continue;
		if (walking[r])
			rs->walk = walk[r];
		if (f->source == WAIT_THREADS) {
			f->runtime_ns = w->runtime_ns;
			f->delay_ns = w->delay_ns;
			f->wait_base_ns = w->runtime_ns;
			f->outside_ns = w->outside_ns;
		} else if (w->runtime_ns) {
			/* The threads' share outside, of the cgroups' time. */
			f->outside_ns = (uint64_t)((double)f->runtime_ns *
						   (double)w->outside_ns /
						   (double)w->runtime_ns);
		}
		f->processes = w->processes;
		f->threads = w->threads;
		f->spills = w->spills;
		f->returns = w->returns;
		f->locality_ns = w->interval_ns;
	}
out:
	free(walk);
	free(walking);
}

void mgr_rule_wake(struct mgr *m, unsigned int rule, uint64_t now)
{
	struct rule_state *rs;

	if (rule >= m->cfg->nrules || !m->rs[rule].asleep)
		return;
	rs = &m->rs[rule];
	rs->asleep = false;
	for (size_t k = 0; k < m->ncgs; k++) {
		struct cg_entry *c = &m->cgs[k];

		if (c->rule == rule)
			c->have_prev =
				cgstat_read(m->roots.sys, c->path, &c->prev) == 0;
	}
	rs->sampled_ms = now;
}

bool mgr_rule_triggers_armed(const struct mgr *m, unsigned int rule)
{
	bool any = false;

	for (size_t k = 0; k < m->ncgs; k++) {
		if (m->cgs[k].rule != rule)
			continue;
		if (!m->cgs[k].psi_watched)
			return false;
		any = true;
	}
	return any;
}

unsigned int mgr_set_rule_ratio(struct mgr *m, unsigned int rule,
				struct ratio ratio)
{
	uint64_t before = m->cnt.ratio_written + m->cnt.cg_written;
	struct pidnode *n, *next;
	unsigned long i = 0;

	m->rs[rule].ratio = ratio;
	for (size_t k = 0; k < m->ncgs; k++)
		if (m->cgs[k].rule == rule)
			cg_apply(m, rule, m->cgs[k].path);
	pidtable_for_each (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		int pfd;

		if (e->rule != rule || (e->flags & (M_CGROUP | M_IGNORED)))
			continue;
		pfd = open_same(m, e);
		if (pfd < 0)
			continue;
		apply_ratio(m, e, pfd, &ratio);
		close(pfd);
		tick(m, i++);
	}
	return (unsigned int)(m->cnt.ratio_written + m->cnt.cg_written -
			      before);
}

unsigned int mgr_active_groups(const struct mgr *m, struct cpuset *ret,
			       unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < m->cfg->nrules && n < max; i++)
		if (m->rule_count[i])
			ret[n++] = m->cfg->rules[i].node_idx;
	return n;
}

static int cmp_pair(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? cmp_int(&x[0], &y[0]) : cmp_int(&x[1], &y[1]);
}

int mgr_status_pids(const struct mgr *m, int **ret)
{
	struct pidnode *n, *next;
	int *p = malloc((m->procs.count ? m->procs.count : 1) * 3 *
			sizeof(*p));
	size_t k = 0;

	if (!p)
		return -ENOMEM;
	pidtable_for_each (&m->procs, n, next) {
		const struct managed *e = as_managed(n);

		p[k * 3] = (int)e->rule;
		p[k * 3 + 1] = n->pid;
		p[k * 3 + 2] = e->own.nhand > 0;
		k++;
	}
	qsort(p, k, 3 * sizeof(*p), cmp_pair);
	*ret = p;
	return (int)k;
}
