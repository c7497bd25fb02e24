// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of managed processes and everything that changes it: scans,
 * connector events, reloads and shutdown.  Decisions about *which* rule
 * live in rules.c and about *how* to write in affinity.c; this file only
 * ties them together and decides what deserves a log line.
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

static size_t bucket_of(const struct mgr *m, int pid)
{
	return ((unsigned int)pid * 2654435761u) & (m->nbuckets - 1);
}

struct managed *mgr_lookup(const struct mgr *m, int pid)
{
	struct managed *e;

	for (e = m->buckets[bucket_of(m, pid)]; e; e = e->next)
		if (e->pid == pid)
			return e;
	return NULL;
}

static void rehash(struct mgr *m, size_t nb)
{
	struct managed **nbk = calloc(nb, sizeof(*nbk));
	size_t ob = m->nbuckets;
	struct managed **obk = m->buckets;

	if (!nbk)
		return; /* keep the old, longer chains */
	m->buckets = nbk;
	m->nbuckets = nb;
	for (size_t i = 0; i < ob; i++) {
		struct managed *e = obk[i], *next;

		for (; e; e = next) {
			size_t b = bucket_of(m, e->pid);

			next = e->next;
			e->next = nbk[b];
			nbk[b] = e;
		}
	}
	free(obk);
}

static struct managed *insert(struct mgr *m, int pid, uint64_t starttime,
			      unsigned int rule)
{
	struct managed *e = calloc(1, sizeof(*e));
	size_t b;

	if (!e)
		return NULL;
	if (m->count + 1 > m->nbuckets * 2)
		rehash(m, m->nbuckets * 2);
	e->pid = pid;
	e->starttime = starttime;
	e->rule = rule;
	e->target = m->cfg->rules[rule].cpus;
	e->seen = m->gen;
	b = bucket_of(m, pid);
	e->next = m->buckets[b];
	m->buckets[b] = e;
	m->count++;
	m->rule_count[rule]++;
	return e;
}

static void drop(struct mgr *m, struct managed *e)
{
	struct managed **pp = &m->buckets[bucket_of(m, e->pid)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	m->rule_count[e->rule]--;
	m->count--;
	free(e);
}

/* Not from drop(): callers may be walking the buckets. */
static void maybe_shrink(struct mgr *m)
{
	size_t nb = m->nbuckets;

	while (nb > MGR_MIN_BUCKETS && m->count < nb / 8)
		nb /= 2;
	if (nb != m->nbuckets)
		rehash(m, nb);
}

/* Per-rule counters for @cfg, zeroed; both or neither are allocated. */
static int alloc_rule_arrays(const struct config *cfg,
			     unsigned int **ret_count, bool **ret_warned)
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
	m->nbuckets = MGR_MIN_BUCKETS;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets)
		return -ENOMEM;
	return alloc_rule_arrays(cfg, &m->rule_count, &m->einval_warned);
}

void mgr_done(struct mgr *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct managed *e = m->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(m->buckets);
	free(m->rule_count);
	free(m->einval_warned);
	m->buckets = NULL;
	m->rule_count = NULL;
	m->einval_warned = NULL;
}

/* Visit the threads of pid (just pid itself when only_main). */
static int for_each_tid(struct mgr *m, int pid, bool only_main,
			bool (*fn)(struct mgr *, struct managed *, int),
			struct managed *e)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (only_main) {
		fn(m, e, pid);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%d/task", m->roots.proc, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (parse_u64(de->d_name, &tid) < 0 || tid > INT32_MAX)
			continue;
		if (!fn(m, e, (int)tid))
			break;
	}
	closedir(d);
	return 0;
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

/* Returns false to stop visiting further threads. */
static bool apply_one(struct mgr *m, struct managed *e, int tid)
{
	const struct rule *rule = &m->cfg->rules[e->rule];
	char comm[128], cpus[CPUSET_LIST_BUFSZ];
	enum aff_result res;
	int err;

	res = aff_apply_thread(m->roots.proc, e->pid, tid, &e->target,
			       m->dry_run, &err);
	switch (res) {
	case AFF_WRITTEN:
		m->cnt.written++;
		cpuset_format_list(&e->target, cpus, sizeof(cpus));
		log_msg(m->dry_run || !(e->flags & M_LOGGED) ? LOG_INFO
							     : LOG_DEBUG,
			"%sset soft affinity of %d/%d (%s) to %s (rule '%s')",
			m->dry_run ? "dry-run: would " : "", e->pid, tid,
			comm_of(m, e->pid, comm, sizeof(comm)), cpus,
			rule->name);
		e->flags |= M_LOGGED;
		break;
	case AFF_UNCHANGED:
		m->cnt.unchanged++;
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
			cpuset_format_list(&e->target, cpus, sizeof(cpus));
			log_warn("pid %d (%s): hard affinity excludes all of "
				 "%s (rule '%s'), skipped",
				 e->pid, comm_of(m, e->pid, comm, sizeof(comm)),
				 cpus, rule->name);
			e->flags |= M_WARNED_EMPTY;
		}
		break;
	case AFF_EPERM:
		m->cnt.eperm++;
		log_warn("pid %d (%s): not permitted to set soft affinity "
			 "(%s), no longer managing it",
			 e->pid, comm_of(m, e->pid, comm, sizeof(comm)),
			 strerror(-err));
		e->flags |= M_IGNORED;
		return false;
	case AFF_EINVAL:
		m->cnt.einval++;
		if (!m->einval_warned[e->rule]) {
			cpuset_format_list(&e->target, cpus, sizeof(cpus));
			log_warn("rule '%s': kernel rejected soft affinity %s "
				 "for %d/%d (%s); further rejections for this "
				 "rule are not logged",
				 rule->name, cpus, e->pid, tid,
				 comm_of(m, e->pid, comm, sizeof(comm)));
			m->einval_warned[e->rule] = true;
		}
		break;
	default:
		m->cnt.errors++;
		if (!(e->flags & M_WARNED_ERROR)) {
			log_warn("pid %d thread %d: soft affinity: %s", e->pid,
				 tid, strerror(-err));
			e->flags |= M_WARNED_ERROR;
		}
		break;
	}
	return true;
}

static bool restore_one(struct mgr *m, struct managed *e, int tid)
{
	enum aff_result res;
	int err;

	res = aff_restore_thread(m->roots.proc, e->pid, tid, &e->target,
				 m->dry_run, &err);
	if (res == AFF_WRITTEN) {
		m->cnt.restored++;
		log_msg(m->dry_run ? LOG_INFO : LOG_DEBUG,
			"%sreset soft affinity of %d/%d to its hard mask",
			m->dry_run ? "dry-run: would " : "", e->pid, tid);
	} else if (res == AFF_FOREIGN) {
		m->cnt.foreign++;
		log_debug("%d/%d: soft affinity changed by someone else, left "
			  "alone",
			  e->pid, tid);
	} else if (res == AFF_EPERM) {
		return false;
	}
	return true;
}

/*
 * Is e still the process it was?  A missed exit event plus a reused pid
 * would otherwise make us act on a stranger.  Drops e if not.
 */
static bool still_same(struct mgr *m, struct managed *e)
{
	struct pstat st;

	if (procfs_read_stat(m->roots.proc, e->pid, 0, &st) == 0 &&
	    st.starttime == e->starttime)
		return true;
	drop(m, e);
	return false;
}

static void apply_proc(struct mgr *m, struct managed *e)
{
	const struct rule *rule = &m->cfg->rules[e->rule];

	if (e->flags & M_IGNORED)
		return;
	for_each_tid(m, e->pid, rule->threads == THREADS_MAIN, apply_one, e);
}

static void restore_proc(struct mgr *m, struct managed *e)
{
	if (e->flags & M_IGNORED)
		return;
	for_each_tid(m, e->pid, false, restore_one, e);
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

	log_info("pid %d (%s) leaves rule '%s' (%s)", e->pid,
		 comm_of(m, e->pid, comm, sizeof(comm)),
		 m->cfg->rules[e->rule].name, why);
	restore_proc(m, e);
	drop(m, e);
}

static void eval(struct mgr *m, int pid, const struct pstat *st, bool forked)
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
	if (st->flags & PF_KTHREAD_BIT)
		return;
	if (e)
		e->seen = m->gen;
	if (e && (e->flags & M_IGNORED))
		return;
	read_attrs(m, pid, st, &a);
	rule = rules_match(m->cfg, &a);
	if (rule < 0) {
		if (e)
			unmanage(m, e, "no longer matches");
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
	apply_proc(m, e);
}

static void eval_pid(struct mgr *m, int pid, bool forked)
{
	struct managed *e;
	struct pstat st;

	if (procfs_read_stat(m->roots.proc, pid, 0, &st) < 0) {
		e = mgr_lookup(m, pid);
		if (e)
			drop(m, e);
		return;
	}
	eval(m, pid, &st, forked);
}

void mgr_eval_pid(struct mgr *m, int pid)
{
	eval_pid(m, pid, false);
}

int mgr_scan(struct mgr *m)
{
	struct dirent *de;
	DIR *d;

	m->last_scan_ms = now_ms();
	d = opendir(m->roots.proc);
	if (!d)
		return -errno;
	m->gen++;
	m->cnt.scans++;
	while ((de = readdir(d))) {
		struct pstat st;
		uint64_t pid;

		if (parse_u64(de->d_name, &pid) < 0 || pid > INT32_MAX)
			continue;
		if (procfs_read_stat(m->roots.proc, (int)pid, 0, &st) < 0)
			continue;
		eval(m, (int)pid, &st, false);
	}
	closedir(d);

	/* Forget what the walk did not see: those processes have exited. */
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct managed *e = m->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			if (e->seen != m->gen)
				drop(m, e);
		}
	}
	maybe_shrink(m);
	return 0;
}

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
}

void mgr_on_exit(struct mgr *m, int pid, int tgid)
{
	struct managed *e;

	if (pid != tgid)
		return;
	e = mgr_lookup(m, tgid);
	if (e)
		drop(m, e);
}

static int rule_by_name(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].name, name))
			return (int)i;
	return -1;
}

int mgr_reload(struct mgr *m, const struct config *cfg)
{
	unsigned int *old_count = m->rule_count;
	bool *old_warned = m->einval_warned;
	unsigned int *rc;
	bool *ew;

	if (alloc_rule_arrays(cfg, &rc, &ew))
		return -ENOMEM;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct managed *e = m->buckets[i], *next;

		for (; e; e = next) {
			const struct rule *old = &m->cfg->rules[e->rule];
			int nr = rule_by_name(cfg, old->name);

			next = e->next;
			if (nr >= 0 && rule_equal(old, &cfg->rules[nr])) {
				/* Unchanged rule: keep it, under its new index.
				 */
				old_count[e->rule]--;
				e->rule = (unsigned int)nr;
				rc[nr]++;
				continue;
			}
			unmanage(m, e,
				 nr < 0 ? "rule removed" : "rule changed");
		}
	}
	free(old_count);
	free(old_warned);
	m->rule_count = rc;
	m->einval_warned = ew;
	m->cfg = cfg;
	return mgr_scan(m);
}

void mgr_restore_all(struct mgr *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct managed *e = m->buckets[i];

		for (; e; e = e->next)
			restore_proc(m, e);
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

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void mgr_status(const struct mgr *m, struct sbuf *b)
{
	int *pids = malloc(MGR_STATUS_MAX_PIDS * sizeof(*pids));
	char cpus[CPUSET_LIST_BUFSZ];

	for (unsigned int r = 0; r < m->cfg->nrules; r++) {
		const struct rule *rule = &m->cfg->rules[r];
		unsigned int n = 0;

		cpuset_format_list(&rule->cpus, cpus, sizeof(cpus));
		sbuf_printf(b, "rule %s cpus %s processes %u pids", rule->name,
			    cpus, m->rule_count[r]);
		for (size_t i = 0; pids && i < m->nbuckets; i++)
			for (struct managed *e = m->buckets[i]; e; e = e->next)
				if (e->rule == r && n < MGR_STATUS_MAX_PIDS)
					pids[n++] = e->pid;
		if (pids)
			qsort(pids, n, sizeof(*pids), cmp_int);
		for (unsigned int i = 0; i < n; i++)
			sbuf_printf(b, " %d", pids[i]);
		if (m->rule_count[r] > n)
			sbuf_printf(b, " ...");
		sbuf_printf(b, "\n");
	}
	free(pids);
}
