// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of managed processes and everything that changes it: scans,
 * connector events, reloads and shutdown.  Decisions about *which* rule
 * live in rules.c and about *how* to write in affinity.c; this file only
 * ties them together and decides what deserves a log line.
 *
 * Ownership of masks: the first pass over a process (at start, when it
 * appears, after exec) adopts every thread.  From then on a thread is
 * "ours" while it has the mask we set; one that someone else changed is
 * hand-managed and left alone, until the process execs or the admin asks
 * for re-adoption (mgr_readopt).  Restoring only touches our masks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "log.h"
#include "manager.h"
#include "procfs.h"
#include "rules.h"

#define MGR_MIN_BUCKETS 256
/* Status lists at most this many pids per rule; counts stay exact. */
#define MGR_STATUS_MAX_PIDS 1000
/* Call the tick hook every this many items of a batch (threads, pids). */
#define MGR_TICK_EVERY 64

/* ---- pid hash tables ---- */

static size_t bucket_of(const struct pidtable *t, int pid)
{
	return ((unsigned int)pid * 2654435761u) & (t->nbuckets - 1);
}

static int table_init(struct pidtable *t)
{
	t->nbuckets = MGR_MIN_BUCKETS;
	t->count = 0;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

static struct pidnode *table_lookup(const struct pidtable *t, int pid)
{
	struct pidnode *n;

	for (n = t->buckets[bucket_of(t, pid)]; n; n = n->next)
		if (n->pid == pid)
			return n;
	return NULL;
}

static void rehash(struct pidtable *t, size_t nb)
{
	struct pidnode **nbk = calloc(nb, sizeof(*nbk));
	struct pidnode **obk = t->buckets;
	size_t ob = t->nbuckets;

	if (!nbk)
		return; /* keep the old, longer chains */
	t->buckets = nbk;
	t->nbuckets = nb;
	for (size_t i = 0; i < ob; i++) {
		struct pidnode *n = obk[i], *next;

		for (; n; n = next) {
			size_t b = bucket_of(t, n->pid);

			next = n->next;
			n->next = nbk[b];
			nbk[b] = n;
		}
	}
	free(obk);
}

static void table_add(struct pidtable *t, struct pidnode *n)
{
	size_t b;

	if (t->count + 1 > t->nbuckets * 2)
		rehash(t, t->nbuckets * 2);
	b = bucket_of(t, n->pid);
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
}

static void table_del(struct pidtable *t, struct pidnode *n)
{
	struct pidnode **pp = &t->buckets[bucket_of(t, n->pid)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			return;
		}
	}
}

/* Not from table_del(): callers may be walking the buckets. */
static void table_shrink(struct pidtable *t)
{
	size_t nb = t->nbuckets;

	while (nb > MGR_MIN_BUCKETS && t->count < nb / 8)
		nb /= 2;
	if (nb != t->nbuckets)
		rehash(t, nb);
}

#define for_each_node(t, n, next)                     \
	for (size_t _i = 0; _i < (t)->nbuckets; _i++) \
		for (n = (t)->buckets[_i]; n && ((next = n->next), 1); n = next)

static struct managed *as_managed(struct pidnode *n)
{
	return (struct managed *)n; /* node is the first member */
}

struct managed *mgr_lookup(const struct mgr *m, int pid)
{
	return as_managed(table_lookup(&m->procs, pid));
}

static void tick(struct mgr *m, unsigned long i)
{
	if (m->tick && i % MGR_TICK_EVERY == MGR_TICK_EVERY - 1)
		m->tick(m->tick_userdata);
}

/* ---- processes that matched no rule ---- */

static void other_add(struct mgr *m, int pid)
{
	struct other *o = (struct other *)table_lookup(&m->others, pid);

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return; /* it is only a cache */
		o->node.pid = pid;
		table_add(&m->others, &o->node);
	}
	o->seen = m->gen;
}

static void other_del(struct mgr *m, int pid)
{
	struct pidnode *n = table_lookup(&m->others, pid);

	if (n) {
		table_del(&m->others, n);
		free(n);
	}
}

static void others_clear(struct mgr *m)
{
	struct pidnode *n, *next;

	for_each_node (&m->others, n, next)
		free(n);
	memset(m->others.buckets, 0,
	       m->others.nbuckets * sizeof(*m->others.buckets));
	m->others.count = 0;
}

/* ---- managed processes ---- */

static const struct cpuset *target_of(const struct mgr *m,
				      const struct managed *e)
{
	return &m->cfg->rules[e->rule].cpus;
}

static struct managed *insert(struct mgr *m, int pid, uint64_t starttime,
			      unsigned int rule)
{
	struct managed *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->node.pid = pid;
	e->starttime = starttime;
	e->rule = rule;
	e->seen = m->gen;
	table_add(&m->procs, &e->node);
	m->count = m->procs.count;
	m->rule_count[rule]++;
	other_del(m, pid);
	return e;
}

static void forget_threads(struct mgr *m, struct managed *e)
{
	if (e->nhand)
		m->nhand_procs--;
	free(e->threads);
	e->threads = NULL;
	e->nthreads = e->cap = 0;
	e->nhand = 0;
}

static void drop(struct mgr *m, struct managed *e)
{
	table_del(&m->procs, &e->node);
	m->count = m->procs.count;
	m->rule_count[e->rule]--;
	forget_threads(m, e);
	free(e);
}

/* Per-rule counters for @cfg, zeroed; both or neither are allocated. */
static int alloc_rule_arrays(const struct config *cfg, unsigned int **ret_count,
			     bool **ret_warned)
{
	size_t n = cfg->nrules ? cfg->nrules : 1;
	unsigned int *rc = calloc(n, sizeof(*rc));
	bool *ew = calloc(n, sizeof(*ew));

	if (!rc || !ew) {
		free(rc);
		free(ew);
		return -ENOMEM;
	}
	*ret_count = rc;
	*ret_warned = ew;
	return 0;
}

int mgr_init(struct mgr *m, const struct roots *roots, const struct config *cfg,
	     const struct topology *topo, bool dry_run)
{
	memset(m, 0, sizeof(*m));
	m->roots = *roots;
	m->cfg = cfg;
	m->topo = topo;
	m->dry_run = dry_run;
	if (table_init(&m->procs) || table_init(&m->others))
		return -ENOMEM;
	return alloc_rule_arrays(cfg, &m->rule_count, &m->einval_warned);
}

void mgr_done(struct mgr *m)
{
	struct pidnode *n, *next;

	mgr_scan_abort(m);
	if (m->procs.buckets)
		for_each_node (&m->procs, n, next)
			drop(m, as_managed(n));
	if (m->others.buckets)
		others_clear(m);
	free(m->procs.buckets);
	free(m->others.buckets);
	free(m->rule_count);
	free(m->einval_warned);
	m->procs.buckets = NULL;
	m->others.buckets = NULL;
	m->rule_count = NULL;
	m->einval_warned = NULL;
}

/* ---- threads ---- */

static struct mthread *find_thread(const struct managed *e, int tid)
{
	unsigned int lo = 0, hi = e->nthreads;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (e->threads[mid].tid == tid)
			return &e->threads[mid];
		if (e->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void count_hand(struct mgr *m, struct managed *e, int delta)
{
	if (!e->nhand && delta > 0)
		m->nhand_procs++;
	e->nhand = (unsigned int)((int)e->nhand + delta);
	if (!e->nhand && delta < 0)
		m->nhand_procs--;
}

/* Remember tid as ours or hand-set; keeps the array sorted. */
static void remember_thread(struct mgr *m, struct managed *e, int tid,
			    bool hand)
{
	struct mthread *t = find_thread(e, tid), *n;
	unsigned int i;

	if (t) {
		if (t->hand != hand)
			count_hand(m, e, hand ? 1 : -1);
		t->hand = hand;
		return;
	}
	if (e->nthreads == e->cap) {
		unsigned int nc = e->cap ? e->cap * 2 : 4;

		n = realloc(e->threads, nc * sizeof(*n));
		if (!n)
			return; /* then it counts as new next time: no harm */
		e->threads = n;
		e->cap = nc;
	}
	n = e->threads;
	for (i = e->nthreads; i > 0 && n[i - 1].tid > tid; i--)
		n[i] = n[i - 1];
	n[i].tid = tid;
	n[i].hand = hand;
	e->nthreads++;
	if (hand)
		count_hand(m, e, 1);
}

static void forget_thread(struct mgr *m, struct managed *e, int tid)
{
	struct mthread *t = find_thread(e, tid);
	size_t i;

	if (!t)
		return;
	if (t->hand)
		count_hand(m, e, -1);
	i = (size_t)(t - e->threads);
	memmove(t, t + 1, (e->nthreads - i - 1) * sizeof(*t));
	e->nthreads--;
}

/* The tids of pid, in a buffer reused across calls.  Count or -errno. */
static int list_tids(const struct mgr *m, int pid, int **ret)
{
	static int *buf;
	static size_t cap;
	char path[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task", m->roots.proc, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (parse_u64(de->d_name, &tid) < 0 || tid > INT32_MAX)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			int *nb = realloc(buf, nc * sizeof(*nb));

			if (!nb)
				break; /* the rest waits for the next pass */
			buf = nb;
			cap = nc;
		}
		buf[n++] = (int)tid;
	}
	closedir(d);
	*ret = buf;
	return (int)n;
}

static const char *comm_of(const struct mgr *m, int pid, char *buf, size_t size)
{
	struct pstat st;
	char raw[64];

	if (procfs_read_stat(m->roots.proc, pid, 0, &st) < 0)
		return "?";
	snprintf(raw, sizeof(raw), "%s", st.comm);
	return procfs_escape(raw, buf, size);
}

static void log_hand(struct mgr *m, struct managed *e, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	char comm[128], cpus[CPUSET_LIST_BUFSZ], now[CPUSET_LIST_BUFSZ];
	struct cpuset soft;

	m->cnt.hand++;
	if (aff_read_soft(m->roots.proc, e->node.pid, tid, &soft) < 0 ||
	    cpuset_format_list(&soft, now, sizeof(now)) < 0)
		snprintf(now, sizeof(now), "?");
	cpuset_format_list(target_of(m, e), cpus, sizeof(cpus));
	log_msg(e->flags & M_HAND_LOGGED ? LOG_DEBUG : LOG_INFO,
		"pid %d (%s): soft affinity of thread %d set by hand to %s "
		"(rule '%s' wants %s); leaving %s alone until it execs",
		e->node.pid, comm_of(m, e->node.pid, comm, sizeof(comm)), tid,
		now, rule->name, cpus,
		e->flags & M_HAND_LOGGED ? "that thread" : "such threads");
	e->flags |= M_HAND_LOGGED;
}

/*
 * Apply the rule to one thread with what we know of it.  Returns false
 * to stop visiting further threads of the process.
 */
static bool apply_one(struct mgr *m, struct managed *e, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	struct mthread *t = find_thread(e, tid);
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
	res = aff_apply_thread(m->roots.proc, e->node.pid, tid, target_of(m, e),
			       claim, m->dry_run, &err);
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		remember_thread(m, e, tid, false);
		cpuset_format_list(target_of(m, e), cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED) ? LOG_INFO
							     : LOG_DEBUG,
			"%sset soft affinity of %d/%d (%s) to %s (rule '%s')",
			m->dry_run ? "dry-run: would " : "", e->node.pid, tid,
			comm_of(m, e->node.pid, comm, sizeof(comm)), cpus,
			rule->name);
		e->flags |= M_LOGGED;
		break;
	case AFF_UNCHANGED:
		m->cnt.unchanged++;
		remember_thread(m, e, tid, false);
		break;
	case AFF_FOREIGN:
		remember_thread(m, e, tid, true);
		log_hand(m, e, tid);
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
			cpuset_format_list(target_of(m, e), cpus, sizeof(cpus));
			log_warn("pid %d (%s): hard affinity excludes all of "
				 "%s (rule '%s'), skipped",
				 e->node.pid,
				 comm_of(m, e->node.pid, comm, sizeof(comm)),
				 cpus, rule->name);
			e->flags |= M_WARNED_EMPTY;
		}
		break;
	case AFF_EPERM:
		m->cnt.eperm++;
		log_warn("pid %d (%s): not permitted to set soft affinity "
			 "(%s), no longer managing it",
			 e->node.pid,
			 comm_of(m, e->node.pid, comm, sizeof(comm)),
			 strerror(-err));
		e->flags |= M_IGNORED;
		return false;
	case AFF_EINVAL:
		m->cnt.einval++;
		if (!m->einval_warned[e->rule]) {
			cpuset_format_list(target_of(m, e), cpus, sizeof(cpus));
			log_warn("rule '%s': kernel rejected soft affinity %s "
				 "for %d/%d (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, e->node.pid, tid,
				 comm_of(m, e->node.pid, comm, sizeof(comm)));
			m->einval_warned[e->rule] = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_warn("pid %d thread %d: soft affinity: %s",
				 e->node.pid, tid, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

static bool restore_one(struct mgr *m, struct managed *e, int tid)
{
	struct mthread *t = find_thread(e, tid);
	enum aff_result res;
	int err;

	if (t && t->hand)
		return true;
	res = aff_restore_thread(m->roots.proc, e->node.pid, tid,
				 target_of(m, e), m->dry_run, &err);
	if (res == AFF_WRITTEN) {
		m->cnt.restored++;
		log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
			"%sreset soft affinity of %d/%d to its hard mask",
			m->dry_run ? "dry-run: would " : "", e->node.pid, tid);
	} else if (res == AFF_FOREIGN) {
		m->cnt.foreign++;
		log_debug("%d/%d: soft affinity changed by someone else, left "
			  "alone",
			  e->node.pid, tid);
	} else if (res == AFF_EPERM) {
		return false;
	}
	return true;
}

/* What to do with the threads of a process that stays managed. */
enum walk {
	WALK_ALL,  /* check every thread: finds masks set by hand */
	WALK_NEW,  /* only threads not met before (lost or no events) */
	WALK_NONE, /* leave them to the connector's events */
};

/*
 * Visit the threads of e (just the leader when only_main; with WALK_NEW
 * only those not met before).  The visit also forgets the threads it
 * did not meet: they have exited.
 */
static void visit_threads(struct mgr *m, struct managed *e, bool only_main,
			  enum walk walk,
			  bool (*fn)(struct mgr *, struct managed *, int))
{
	unsigned int kept = 0;
	int *tids, n;

	if (only_main) {
		if (walk == WALK_ALL || !find_thread(e, e->node.pid))
			fn(m, e, e->node.pid);
		return;
	}
	n = list_tids(m, e->node.pid, &tids);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		if (walk == WALK_NEW && find_thread(e, tids[i]))
			continue;
		if (!fn(m, e, tids[i]))
			return;
		tick(m, (unsigned long)i);
	}
	/* tids is sorted now: check every remembered thread against it. */
	qsort(tids, (size_t)n, sizeof(*tids), cmp_int);
	for (unsigned int i = 0; i < e->nthreads; i++) {
		int tid = e->threads[i].tid;

		if (bsearch(&tid, tids, (size_t)n, sizeof(*tids), cmp_int))
			e->threads[kept++] = e->threads[i];
		else if (e->threads[i].hand)
			count_hand(m, e, -1);
	}
	e->nthreads = kept;
}

/*
 * Is e still the process it was?  A missed exit event plus a reused pid
 * would otherwise make us act on a stranger.  Drops e if not.
 */
static bool still_same(struct mgr *m, struct managed *e)
{
	struct pstat st;

	if (procfs_read_stat(m->roots.proc, e->node.pid, 0, &st) == 0 &&
	    st.starttime == e->starttime)
		return true;
	drop(m, e);
	return false;
}

static void apply_proc(struct mgr *m, struct managed *e, enum walk walk)
{
	const struct rule *rule = &m->cfg->rules[e->rule];

	if (e->flags & M_IGNORED)
		return;
	if (!(e->flags & M_ADOPTED))
		walk = WALK_ALL;
	if (walk == WALK_NONE)
		return;
	visit_threads(m, e, rule->threads == THREADS_MAIN, walk, apply_one);
	e->flags |= M_ADOPTED;
}

static void restore_proc(struct mgr *m, struct managed *e)
{
	if (e->flags & M_IGNORED)
		return;
	visit_threads(m, e, false, WALK_ALL, restore_one);
}

/* Start over with e: adopt all its threads on the next apply. */
static void readopt(struct mgr *m, struct managed *e)
{
	forget_threads(m, e);
	e->flags &= ~(unsigned int)(M_ADOPTED | M_HAND_LOGGED | M_IGNORED |
				    M_WARNED_EMPTY | M_WARNED_ERROR);
}

/* Gather what the rules need about pid; unreadable stays NULL. */
static void read_attrs(struct mgr *m, int pid, const struct pstat *st,
		       struct proc_attrs *a)
{
	static char exe[PATH_MAX], cmdline[4096], cgroup[4096];
	unsigned int needs = m->cfg->needs;

	memset(a, 0, sizeof(*a));
	a->comm = st->comm;
	if ((needs & NEED_EXE) &&
	    procfs_read_exe(m->roots.proc, pid, exe, sizeof(exe)) == 0)
		a->exe = exe;
	if ((needs & NEED_CMDLINE) &&
	    procfs_read_cmdline(m->roots.proc, pid, cmdline, sizeof(cmdline)) ==
		    0)
		a->cmdline = cmdline;
	if ((needs & NEED_CGROUP) &&
	    procfs_read_cgroup(m->roots.proc, pid, cgroup, sizeof(cgroup)) == 0)
		a->cgroup = cgroup;
	if ((needs & NEED_UID) &&
	    procfs_read_status(m->roots.proc, pid, 0, NULL, &a->uid) == 0)
		a->has_uid = true;
}

static void unmanage(struct mgr *m, struct managed *e, const char *why)
{
	char comm[128];

	log_info("pid %d (%s) leaves rule '%s' (%s)", e->node.pid,
		 comm_of(m, e->node.pid, comm, sizeof(comm)),
		 m->cfg->rules[e->rule].name, why);
	restore_proc(m, e);
	drop(m, e);
}

static void eval(struct mgr *m, int pid, const struct pstat *st, bool forked,
		 enum walk walk)
{
	struct managed *e = mgr_lookup(m, pid);
	struct proc_attrs a;
	char comm[128];
	int rule;

	if (e && e->starttime != st->starttime) {
		/* The pid was reused; the old process is gone. */
		drop(m, e);
		e = NULL;
	}
	/* Kernel threads never get soft affinity (the kernel says EINVAL). */
	if (st->flags & PF_KTHREAD_BIT) {
		other_add(m, pid);
		return;
	}
	if (e)
		e->seen = m->gen;
	if (e && (e->flags & M_IGNORED))
		return;
	read_attrs(m, pid, st, &a);
	rule = rules_match(m->cfg, &a);
	if (rule < 0) {
		if (e)
			unmanage(m, e, "no longer matches");
		other_add(m, pid);
		return;
	}
	if (e && e->rule != (unsigned int)rule) {
		unmanage(m, e, "matches another rule now");
		e = NULL;
	}
	if (!e) {
		e = insert(m, pid, st->starttime, (unsigned int)rule);
		if (!e) {
			log_err("out of memory tracking pid %d", pid);
			return;
		}
		/* Children of managed processes: fork storms stay quiet. */
		log_msg(forked ? LOG_DEBUG : LOG_INFO,
			"pid %d (%s) matches rule '%s'", pid,
			procfs_escape(st->comm, comm, sizeof(comm)),
			m->cfg->rules[rule].name);
	}
	apply_proc(m, e, walk);
}

static void eval_pid(struct mgr *m, int pid, bool forked)
{
	struct managed *e;
	struct pstat st;

	if (procfs_read_stat(m->roots.proc, pid, 0, &st) < 0) {
		e = mgr_lookup(m, pid);
		if (e)
			drop(m, e);
		other_del(m, pid);
		return;
	}
	eval(m, pid, &st, forked, WALK_ALL);
}

void mgr_eval_pid(struct mgr *m, int pid)
{
	eval_pid(m, pid, false);
}

void mgr_on_exec(struct mgr *m, int pid)
{
	struct managed *e = mgr_lookup(m, pid);

	/*
	 * Only the leader survives an exec.  If the new program still
	 * matches the same rule, start over with it; if not, eval()
	 * restores the masks we set, which need that knowledge.
	 */
	if (e) {
		struct pstat st;
		struct proc_attrs a;

		if (procfs_read_stat(m->roots.proc, pid, 0, &st) == 0 &&
		    st.starttime == e->starttime) {
			read_attrs(m, pid, &st, &a);
			if (rules_match(m->cfg, &a) == (int)e->rule)
				readopt(m, e);
		}
	}
	eval_pid(m, pid, false);
}

/* ---- scans ---- */

bool mgr_scan_busy(const struct mgr *m)
{
	return m->scan_dir != NULL;
}

void mgr_scan_abort(struct mgr *m)
{
	if (m->scan_dir)
		closedir(m->scan_dir);
	m->scan_dir = NULL;
}

int mgr_scan_start(struct mgr *m, enum mgr_scan_kind kind)
{
	DIR *d;

	mgr_scan_abort(m);
	d = opendir(m->roots.proc);
	if (!d)
		return -errno;
	m->scan_dir = d;
	m->scan_kind = kind;
	m->gen++;
	m->cnt.scans++;
	return 0;
}

/* One /proc entry of the scan in progress. */
static void scan_pid(struct mgr *m, int pid)
{
	struct pstat st;

	if (m->scan_kind == SCAN_LIGHT) {
		struct managed *e = mgr_lookup(m, pid);
		struct other *o = (struct other *)table_lookup(&m->others, pid);

		/* Known: the connector tells us when it changes. */
		if (e) {
			e->seen = m->gen;
			return;
		}
		if (o) {
			o->seen = m->gen;
			return;
		}
	}
	if (procfs_read_stat(m->roots.proc, pid, 0, &st) < 0)
		return;
	eval(m, pid, &st, false,
	     m->scan_kind == SCAN_FULL	? WALK_ALL
	     : m->scan_kind == SCAN_NEW ? WALK_NEW
					: WALK_NONE);
}

/* Forget what the walk did not see: those processes have exited. */
static void scan_end(struct mgr *m)
{
	struct pidnode *n, *next;

	mgr_scan_abort(m);
	for_each_node (&m->procs, n, next)
		if (as_managed(n)->seen != m->gen)
			drop(m, as_managed(n));
	for_each_node (&m->others, n, next) {
		if (((struct other *)n)->seen != m->gen) {
			table_del(&m->others, n);
			free(n);
		}
	}
	table_shrink(&m->procs);
	table_shrink(&m->others);
	m->last_scan_ms = now_ms();
}

int mgr_scan_step(struct mgr *m, uint64_t deadline_ms)
{
	unsigned long i = 0;
	struct dirent *de;

	if (!m->scan_dir)
		return 1;
	while ((de = readdir(m->scan_dir))) {
		uint64_t pid;

		if (parse_u64(de->d_name, &pid) < 0 || pid > INT32_MAX)
			continue;
		scan_pid(m, (int)pid);
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

/* ---- connector events ---- */

void mgr_on_fork(struct mgr *m, int parent_tgid, int child_pid, int child_tgid)
{
	struct managed *e;

	if (child_pid != child_tgid) {
		/* A new thread: apply to it if its process is managed. */
		e = mgr_lookup(m, child_tgid);
		if (e && !(e->flags & M_IGNORED) &&
		    m->cfg->rules[e->rule].threads == THREADS_ALL &&
		    still_same(m, e))
			apply_one(m, e, child_pid);
		return;
	}
	/*
	 * A forked child has its parent's comm, exe, cmdline, uid and
	 * cgroup, so it can only match if the parent did.  Skipping the
	 * rest keeps fork storms cheap; exec and comm events re-evaluate.
	 */
	if (mgr_lookup(m, parent_tgid))
		eval_pid(m, child_tgid, true);
	else if (table_lookup(&m->others, parent_tgid))
		other_add(m, child_tgid);
}

void mgr_on_exit(struct mgr *m, int pid, int tgid)
{
	struct managed *e = mgr_lookup(m, tgid);

	if (pid != tgid) {
		if (e)
			forget_thread(m, e, pid);
		return;
	}
	if (e)
		drop(m, e);
	other_del(m, tgid);
}

/* ---- reload, re-adoption, restore ---- */

static int rule_by_name(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].name, name))
			return (int)i;
	return -1;
}

/* Forget the threads we set (restored by now), keep the hand-set ones. */
static void keep_hand_threads(struct managed *e)
{
	unsigned int k = 0;

	for (unsigned int t = 0; t < e->nthreads; t++)
		if (e->threads[t].hand)
			e->threads[k++] = e->threads[t];
	e->nthreads = k;
}

/*
 * After a reload, a process with hand-set threads whose rule changed
 * keeps them: find its rule under the new config, or let it go without
 * touching those threads.
 */
static void rematch_hand(struct mgr *m, struct managed *e)
{
	struct proc_attrs a;
	struct pstat st;
	int rule = -1;

	if (procfs_read_stat(m->roots.proc, e->node.pid, 0, &st) == 0 &&
	    st.starttime == e->starttime) {
		read_attrs(m, e->node.pid, &st, &a);
		rule = rules_match(m->cfg, &a);
	}
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
	struct pidnode *n, *next;
	struct managed *keep = NULL;
	unsigned long i = 0;
	unsigned int *rc;
	bool *ew;

	if (alloc_rule_arrays(cfg, &rc, &ew))
		return -ENOMEM;
	mgr_scan_abort(m);
	for_each_node (&m->procs, n, next) {
		struct managed *e = as_managed(n);
		const struct rule *old = &m->cfg->rules[e->rule];
		int nr = rule_by_name(cfg, old->name);

		tick(m, i++);
		if (nr >= 0 && rule_equal(old, &cfg->rules[nr])) {
			/* Unchanged rule: keep it, under its new index. */
			old_count[e->rule]--;
			e->rule = (unsigned int)nr;
			rc[nr]++;
			continue;
		}
		if (!e->nhand) {
			unmanage(m, e,
				 nr < 0 ? "rule removed" : "rule changed");
			continue;
		}
		/* Ours back to the hard mask; the hand-set ones stay. */
		log_info("pid %d leaves rule '%s' (%s); threads set by hand "
			 "keep their masks",
			 e->node.pid, old->name,
			 nr < 0 ? "rule removed" : "rule changed");
		restore_proc(m, e);
		keep_hand_threads(e);
		/* Off the table until the new config is in place. */
		old_count[e->rule]--;
		table_del(&m->procs, &e->node);
		e->node.next = keep ? &keep->node : NULL;
		keep = e;
	}
	free(old_count);
	free(old_warned);
	m->rule_count = rc;
	m->einval_warned = ew;
	m->cfg = cfg;
	while (keep) {
		struct managed *e = keep;

		keep = as_managed(e->node.next);
		table_add(&m->procs, &e->node);
		m->count = m->procs.count;
		rematch_hand(m, e);
	}
	m->count = m->procs.count;
	/* The rules changed: what matched nothing may match now. */
	others_clear(m);
	/* If /proc cannot be opened now, the next rescan tries again. */
	mgr_scan_start(m, SCAN_FULL);
	return 0;
}

size_t mgr_readopt(struct mgr *m)
{
	size_t had = m->nhand_procs;
	struct pidnode *n, *next;

	for_each_node (&m->procs, n, next)
		readopt(m, as_managed(n));
	mgr_scan_start(m, SCAN_FULL);
	return had;
}

void mgr_restore_all(struct mgr *m)
{
	struct pidnode *n, *next;
	unsigned long i = 0;

	mgr_scan_abort(m);
	for_each_node (&m->procs, n, next) {
		restore_proc(m, as_managed(n));
		tick(m, i++);
	}
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

/* " P1 P2 ..." of rule r's processes (only hand-managed ones if hand). */
static void status_pids(const struct mgr *m, struct sbuf *b, int *pids,
			unsigned int r, bool hand, unsigned int total)
{
	struct pidnode *p, *next;
	unsigned int n = 0;

	if (pids)
		for_each_node (&m->procs, p, next) {
			const struct managed *e = as_managed(p);

			if (e->rule == r && (!hand || e->nhand) &&
			    n < MGR_STATUS_MAX_PIDS)
				pids[n++] = p->pid;
		}
	if (pids)
		qsort(pids, n, sizeof(*pids), cmp_int);
	for (unsigned int i = 0; i < n; i++)
		sbuf_printf(b, " %d", pids[i]);
	if (total > n)
		sbuf_printf(b, " ...");
	sbuf_printf(b, "\n");
}

void mgr_status(const struct mgr *m, struct sbuf *b)
{
	int *pids = malloc(MGR_STATUS_MAX_PIDS * sizeof(*pids));
	char cpus[CPUSET_LIST_BUFSZ];

	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		const struct rule *rule = &m->cfg->rules[r];

		cpuset_format_list(&rule->cpus, cpus, sizeof(cpus));
		sbuf_printf(b, "rule %s cpus %s processes %u pids", rule->name,
			    cpus, m->rule_count[r]);
		status_pids(m, b, pids, r, false, m->rule_count[r]);
	}
	/* Own lines, so "rule NAME ... pids" parsers see nothing new. */
	for (unsigned int r = 0; m->nhand_procs && r < m->cfg->nrules; r++) {
		struct pidnode *p, *next;
		unsigned int nh = 0;

		for_each_node (&m->procs, p, next)
			if (as_managed(p)->rule == r && as_managed(p)->nhand)
				nh++;
		if (!nh)
			continue;
		sbuf_printf(b, "hand-managed rule %s processes %u pids",
			    m->cfg->rules[r].name, nh);
		status_pids(m, b, pids, r, true, nh);
	}
	free(pids);
}
