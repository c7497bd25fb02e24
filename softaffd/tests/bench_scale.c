// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_scale: what the manager costs at server scale (issue #26's host
 * benchmark), on a fake root made by tests/mkfakescale.py --spare N.
 *
 *   bench_scale DIR [--storm-rate N] [--storm-seconds S]
 *                   [--storm-mode keep|flip|both] [--no-storm] [--events N]
 *
 * The daemon keeps its proc connector shut on a fake /proc (the
 * kernel's events name the host's PIDs), so event costs cannot be
 * measured on the binary: this links the daemon's modules and calls
 * the manager's entry points as daemon.c does, timing them.  It prints
 * "key value" lines on stdout for tests/bench-scale.sh, which makes the
 * table; the manager's own log lines go to stderr, as the daemon's do.
 *
 * Costs are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over a batch
 * of events divided by their number: on a loaded host that leaves out
 * the time the harness waited for a CPU, which wall time would count.
 * Per-event wall times (CLOCK_MONOTONIC) give the spread.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "dirtyq.h"
#include "log.h"
#include "manager.h"
#include "sampler.h"
#include "topology.h"
#include "util.h"

/*
 * The manager before and after issue #26's split, which made struct mgr
 * private (manager-internal.h, mgr_new): the harness builds against
 * both, so that before and after figures come from the same code.  It
 * looks inside only for the dirty queue (queued(), queue_len()).
 */
#if __has_include("manager-internal.h")
#include "manager-internal.h"
#define MGR_PRIVATE 1
#else
#define MGR_PRIVATE 0
#endif

/*
 * daemon.c's figures, which are private to it: the dirty queue gets
 * EVAL_BUDGET_MS of every BUDGET_WINDOW_MS, at most SLICE_MS at a time;
 * the connector's events CONN_BUDGET_MS; a rescan every rescan_ms (the
 * default), with the attributes re-read every ATTRS_EVERY-th.  Keep
 * them in step with daemon.c and config.c.
 */
#define SLICE_MS	 20
#define EVAL_BUDGET_MS	 200
#define CONN_BUDGET_MS	 100
#define BUDGET_WINDOW_MS 1000
#define RESCAN_MS	 10000
#define ATTRS_EVERY	 6
/* The connector reads at most this many messages per loop turn. */
#define EVENTS_PER_TURN 256

/* Short enough that DIR/proc fits struct roots' fields. */
static char dir[PATH_MAX / 8];
static struct roots roots;
static struct topology topo;
static struct config *cfg;
static struct mgr *mgr;
static struct sampler smp; /* large: not on the stack */

/* ---- clocks ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void sleep_until_ns(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL),
			      .tv_nsec = (long)(t % 1000000000ULL)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_scale: %s\n", what);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

/* ---- the manager's insides, in one place to adapt if they move ---- */

static struct rule_state *rule_state(unsigned int r)
{
#if MGR_PRIVATE
	return mgr_rule_state(mgr, r);
#else
	return &mgr->rs[r];
#endif
}

static const struct mgr_counters *counters(void)
{
#if MGR_PRIVATE
	return mgr_counters(mgr);
#else
	return &mgr->cnt;
#endif
}

static void manager_new(void)
{
#if MGR_PRIVATE
	mgr = mgr_new(&roots, cfg, false);
	if (!mgr)
		die("mgr_new failed");
#else
	static struct mgr m;

	if (mgr_init(&m, &roots, cfg, &topo, false) < 0)
		die("mgr_init failed");
	mgr = &m;
#endif
}

static void manager_free(void)
{
#if MGR_PRIVATE
	mgr_free(mgr);
#else
	mgr_done(mgr);
#endif
	mgr = NULL;
}

/* How many processes the manager manages (by its public listing). */
static size_t managed_count(void)
{
	int *pids = NULL;
	int n = mgr_status_pids(mgr, &pids);

	free(pids);
	return n > 0 ? (size_t)n : 0;
}

/* Is pid waiting in the dirty queue? */
/*
 * Queued for a rename: an entry that is only the rest of a capped thread
 * walk (D_THREADS, manager-apply.c) is not a rename waiting.
 */
static bool queued(int pid)
{
	struct dirty *d = dirtyq_find(&mgr->dirty, pid);

	return d && (d->why & ~(unsigned int)D_THREADS);
}

static size_t queue_len(void)
{
	size_t n = 0;

	for (struct dirty *d = mgr->dirty.head; d; d = d->next)
		n += (d->why & ~(unsigned int)D_THREADS) != 0;
	return n;
}

/* Entries that are only the rest of a thread walk. */
static size_t walks_queued(void)
{
	return dirtyq_count(&mgr->dirty) - queue_len();
}

/* ---- the fake root's manifests ---- */

struct proc_ent {
	int pid, threads, rule;
	char kind; /* m(anaged), o(ther), k(thread) */
	char comm[32];
};

struct spare_ent {
	char kind[16], id[32];
	int pid, parent, rule;
};

static struct proc_ent *procs;
static size_t nprocs;
static struct spare_ent *spares;
static size_t nspares;

static void read_manifests(void)
{
	char path[PATH_MAX], line[256], kind[16];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest", dir);
	f = fopen(path, "r");
	if (!f)
		die("no DIR/manifest: make DIR with tests/mkfakescale.py");
	while (fgets(line, sizeof(line), f)) {
		struct proc_ent e = {0};

		if (sscanf(line, "%d %d %15s %d %31s", &e.pid, &e.threads, kind,
			   &e.rule, e.comm) != 5)
			continue;
		e.kind = kind[0];
		if (nprocs == cap) {
			cap = cap ? cap * 2 : 1024;
			procs = realloc(procs, cap * sizeof(*procs));
			if (!procs)
				die("out of memory");
		}
		procs[nprocs++] = e;
	}
	fclose(f);
	cap = 0;
	snprintf(path, sizeof(path), "%s/spare/manifest", dir);
	f = fopen(path, "r");
	if (!f)
		die("no DIR/spare/manifest: make DIR with --spare N");
	while (fgets(line, sizeof(line), f)) {
		struct spare_ent e = {0};

		if (sscanf(line, "%15s %31s %d %d %d", e.kind, e.id, &e.pid,
			   &e.parent, &e.rule) != 5)
			continue;
		if (nspares == cap) {
			cap = cap ? cap * 2 : 1024;
			spares = realloc(spares, cap * sizeof(*spares));
			if (!spares)
				die("out of memory");
		}
		spares[nspares++] = e;
	}
	fclose(f);
}

/*
 * Where a spare process or thread lives while it exists: /proc/PID, or
 * /proc/PARENT/task/TID for a thread.
 */
static void live_path(const struct spare_ent *e, char *buf, size_t size)
{
	if (!strncmp(e->kind, "thread", 6))
		snprintf(buf, size, "%s/%d/task/%d", roots.proc, e->parent,
			 e->pid);
	else
		snprintf(buf, size, "%s/%d", roots.proc, e->pid);
}

/* A fork or exec brings it into /proc (in), its exit takes it out. */
static void spare_move(const struct spare_ent *e, bool in)
{
	char aside[PATH_MAX], live[PATH_MAX];

	snprintf(aside, sizeof(aside), "%s/spare/%s/%s", dir, e->kind, e->id);
	live_path(e, live, sizeof(live));
	if (rename(in ? aside : live, in ? live : aside) < 0) {
		fprintf(stderr, "bench_scale: rename %s: %s\n",
			in ? aside : live, strerror(errno));
		exit(1);
	}
}

/* ---- figures ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n values, sorted in place. */
static uint64_t quantile(uint64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

/*
 * One kind of event: its cost (CPU per event over the batch) and the
 * spread of the wall time of single events.
 */
static void report_events(const char *key, uint64_t cpu, uint64_t *wall,
			  size_t n)
{
	if (!n) {
		printf("%s_n 0\n", key);
		return;
	}
	printf("%s_n %zu\n", key, n);
	printf("%s_cpu_us %.3f\n", key, (double)cpu / 1e3 / (double)n);
	printf("%s_p50_us %.3f\n", key, (double)quantile(wall, n, 0.5) / 1e3);
	printf("%s_p99_us %.3f\n", key, (double)quantile(wall, n, 0.99) / 1e3);
	printf("%s_max_us %.3f\n", key, (double)wall[n - 1] / 1e3);
}

/* ---- scans and samples: what an idle daemon does ---- */

static const char *scan_name(enum mgr_scan_kind k)
{
	switch (k) {
	case SCAN_FULL:
		return "full";
	case SCAN_NEW:
		return "new";
	case SCAN_NEW_ATTRS:
		return "new_attrs";
	case SCAN_ATTRS:
		return "attrs";
	case SCAN_LIGHT:
		return "light";
	}
	return "?";
}

/* CPU ms of one scan of kind (the median of reps). */
static double time_scan(enum mgr_scan_kind kind, int reps)
{
	uint64_t v[8], w[8];

	for (int i = 0; i < reps; i++) {
		uint64_t c0 = cpu_ns(), w0 = mono_ns();

		if (mgr_scan_start(mgr, kind) < 0 || mgr_scan_finish(mgr) < 0)
			die("scan failed");
		v[i] = cpu_ns() - c0;
		w[i] = mono_ns() - w0;
	}
	printf("scan_%s_cpu_ms %.3f\n", scan_name(kind),
	       (double)quantile(v, (size_t)reps, 0.5) / 1e6);
	printf("scan_%s_wall_ms %.3f\n", scan_name(kind),
	       (double)quantile(w, (size_t)reps, 0.5) / 1e6);
	return (double)quantile(v, (size_t)reps, 0.5) / 1e6;
}

static void bench_idle(void)
{
	uint64_t base = now_ms(), v[8];
	double sample, light, attrs, new_, new_attrs;
	bool need_attrs = cfg->needs & (NEED_CGROUP | NEED_CMDLINE);
	/* Attribute rescans among the rescans, as start_rescan() counts. */
	double every = need_attrs ? ATTRS_EVERY : 1e9;

	/* A full scan again with nothing new: a reload's or readopt's. */
	time_scan(SCAN_FULL, 1);
	light = time_scan(SCAN_LIGHT, 3);
	attrs = time_scan(SCAN_ATTRS, 1);
	new_ = time_scan(SCAN_NEW, 3);
	new_attrs = time_scan(SCAN_NEW_ATTRS, 1);

	/*
	 * One sample interval as on_sample() spends it (less the control
	 * law and the status file): /proc/stat and /proc/schedstat, then
	 * every adaptive rule's threads.  The first is a baseline; "now"
	 * steps a second a time, as the sample timer does.
	 */
	sampler_update(&smp, roots.proc);
	mgr_sample(mgr, base, true);
	for (int i = 0; i < 5; i++) {
		uint64_t c0 = cpu_ns();

		sampler_update(&smp, roots.proc);
		mgr_sample(mgr, base + 1000 * (uint64_t)(i + 1), true);
		v[i] = cpu_ns() - c0;
	}
	sample = (double)quantile(v, 5, 0.5) / 1e6;
	printf("sample_cpu_ms %.3f\n", sample);
	{
		unsigned int threads = 0, processes = 0;

		for (unsigned int r = 0; r < cfg->nrules; r++) {
			threads += rule_state(r)->last.threads;
			processes += rule_state(r)->last.processes;
		}
		printf("sample_processes %u\nsample_threads %u\n", processes,
		       threads);
	}
	/*
	 * Per second: a sample, and a tenth of a rescan, of which every
	 * ATTRS_EVERY-th re-reads the attributes.  With the connector the
	 * rescans are LIGHT/ATTRS; on a fake root (no connector) NEW and
	 * NEW_ATTRS, the mode the daemon binary runs in here.
	 */
	printf("idle_conn_ms_per_s %.3f\n",
	       sample + (light * (every - 1) + attrs) / every /
				(RESCAN_MS / 1000.0));
	printf("idle_rescan_ms_per_s %.3f\n",
	       sample + (new_ * (every - 1) + new_attrs) / every /
				(RESCAN_MS / 1000.0));
}

/* ---- events ---- */

static struct spare_ent **spares_of(const char *kind, size_t max, size_t *n)
{
	struct spare_ent **v = xcalloc(nspares, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < nspares && *n < max; i++)
		if (!strcmp(spares[i].kind, kind))
			v[(*n)++] = &spares[i];
	return v;
}

/* A process of kind ('o': other) to be the parent of forks, i-th. */
static int proc_of_kind(char kind, size_t i)
{
	size_t seen = 0;

	for (size_t k = 0; k < nprocs; k++)
		if (procs[k].kind == kind && seen++ == i)
			return procs[k].pid;
	die("no process of the kind asked for");
	return -1;
}

/*
 * An exec: the process forked from an unmanaged parent (that event is
 * fork_other's cost, not timed here), then exec'd into what the spare
 * directory shows.  Timed: the event and the flush that evaluates it.
 */
static void bench_exec(const char *kind, const char *key, size_t max,
		       bool expect_managed)
{
	size_t n, hits, before = managed_count();
	struct spare_ent **v = spares_of(kind, max, &n);
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	int parent = proc_of_kind('o', 0);

	for (size_t i = 0; i < n; i++) {
		spare_move(v[i], true);
		mgr_on_fork(mgr, parent, v[i]->pid, v[i]->pid);
	}
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_exec(mgr, v[i]->pid);
		mgr_flush(mgr, UINT64_MAX);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	hits = managed_count() - before;
	for (size_t i = 0; i < n; i++) {
		mgr_on_exit(mgr, v[i]->pid, v[i]->pid);
		spare_move(v[i], false);
	}
	report_events(key, cpu, wall, n);
	printf("%s_managed %zu\n", key, hits);
	if (hits != (expect_managed ? n : 0))
		fprintf(stderr,
			"bench_scale: %s: %zu of %zu managed, "
			"expected %s\n",
			key, hits, n, expect_managed ? "all" : "none");
	free(wall);
	free(v);
}

/*
 * Forks of unmanaged processes and their exits: bookkeeping only, no
 * /proc entry is read, so none is made.  PIDs from a range nothing in
 * the fake root uses.
 */
static void bench_fork_other(size_t n)
{
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	uint64_t *wall_exit = xcalloc(n, sizeof(*wall_exit));
	int base = 9000000, parents[64];

	/* Looked up beforehand: the search is not the manager's cost. */
	for (size_t i = 0; i < 64; i++)
		parents[i] = proc_of_kind('o', i);
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		int parent = parents[i % 64];
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, parent, base + (int)i, base + (int)i);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("fork_other", cpu, wall, n);

	/* A new thread of an unmanaged process: a lookup. */
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		int parent = parents[i % 64];
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, parent, base + (int)(n + i), parent);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("thread_other", cpu, wall, n);

	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_exit(mgr, base + (int)i, base + (int)i);
		wall_exit[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("exit_other", cpu, wall_exit, n);
	free(wall);
	free(wall_exit);
}

/*
 * Forks that the manager evaluates: a managed process's child (marked,
 * then read and matched in the flush) and a managed process's new
 * thread (its task/ listed, the new thread read and written).
 */
static void bench_fork_managed(const char *kind, const char *key, size_t max)
{
	size_t n;
	struct spare_ent **v = spares_of(kind, max, &n);
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	bool thread = !strncmp(kind, "thread", 6);
	uint64_t written = counters()->written;

	for (size_t i = 0; i < n; i++)
		spare_move(v[i], true);
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, v[i]->parent, v[i]->pid,
			    thread ? v[i]->parent : v[i]->pid);
		mgr_flush(mgr, UINT64_MAX);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	written = counters()->written - written;
	for (size_t i = 0; i < n; i++) {
		mgr_on_exit(mgr, v[i]->pid, thread ? v[i]->parent : v[i]->pid);
		spare_move(v[i], false);
	}
	report_events(key, cpu, wall, n);
	if (thread) {
		/* How many threads the processes had: what task/ lists. */
		double sum = 0;

		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < nprocs; k++)
				if (procs[k].pid == v[i]->parent)
					sum += procs[k].threads;
		printf("%s_parent_threads %.1f\n", key,
		       n ? sum / (double)n : 0);
	}
	/* Each should have been given the rule's mask: one write each. */
	printf("%s_written %llu\n", key, (unsigned long long)written);
	free(wall);
	free(v);
}

/* ---- the rename storm ---- */

/*
 * A storm of comm changes at rate per second for secs seconds, round
 * robin over every process but the kernel threads, run through a copy
 * of daemon_run()'s turn: up to EVENTS_PER_TURN events are read (here:
 * marked with mgr_on_change), then the dirty queue gets a slice as
 * flush_dirty() gives it, within EVAL_BUDGET_MS per BUDGET_WINDOW_MS
 * (struct budget, util.c).  The harness sleeps when the daemon would
 * wait in epoll.  After the storm the queue drains under the same
 * budget.
 *
 * The slice is served one evaluation at a time (mgr_flush with a
 * deadline already past evaluates exactly one), so the time each
 * process is reached is known: its wait is from the event that first
 * marked it while it was not waiting (later marks keep its place) to
 * its evaluation.  So is the work done meanwhile: the wall time of the
 * evaluations between its mark and its own, its own included, which
 * in a FIFO queue is evaluating the processes marked before it.
 *
 * keep: each rename keeps the process's rule (a managed one stays
 * managed: a comm rule's glob still matches); flip: a process managed
 * by a comm rule flips between matching and not, so every other
 * evaluation restores all its threads and the next adopts them again.
 */
struct stormer {
	int pid;
	bool alt;	       /* the renamed stat is in place */
	bool pending;	       /* marked, not evaluated yet */
	uint64_t mark_ns;      /* when first marked */
	uint64_t work_at_mark; /* the storm's evaluation time by then */
	size_t win_at_mark;    /* the budget window it was marked in */
	size_t ahead;	       /* processes waiting when it was marked */
	char *stat[2];	       /* stat text: its own, renamed */
	size_t len[2];
};

struct wait_rec {
	uint64_t wait_ns, work_ns; /* mark to evaluation; work meanwhile */
	size_t windows;		   /* budget windows opened meanwhile */
};

struct window {
	uint64_t start_ms, cpu_ns, wall_ns, used_ms;
	size_t evals;
};

static struct stormer *st;
static size_t nst;

static char *read_whole(const char *path, size_t *len)
{
	char buf[4096];
	ssize_t n = read_file(path, buf, sizeof(buf));
	char *s;

	if (n < 0)
		die("cannot read a stat file");
	s = xcalloc((size_t)n + 1, 1);
	memcpy(s, buf, (size_t)n);
	*len = (size_t)n;
	return s;
}

static void write_stat(struct stormer *s, bool alt)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", roots.proc, s->pid);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 ||
	    write(fd, s->stat[alt], s->len[alt]) != (ssize_t)s->len[alt])
		die("cannot rewrite a stat file");
	close(fd);
	s->alt = alt;
}

static void storm_setup(bool flip)
{
	char path[PATH_MAX];

	st = xcalloc(nprocs, sizeof(*st));
	for (size_t k = 0; k < nprocs; k++) {
		struct proc_ent *p = &procs[k];
		struct stormer *s;
		char *open_, *close_;

		if (p->kind == 'k')
			continue;
		s = &st[nst++];
		s->pid = p->pid;
		snprintf(path, sizeof(path), "%s/%d/stat", roots.proc, p->pid);
		s->stat[0] = read_whole(path, &s->len[0]);
		s->stat[1] = xcalloc(s->len[0] + 1, 1);
		memcpy(s->stat[1], s->stat[0], s->len[0] + 1);
		s->len[1] = s->len[0];
		/* comm is between the first '(' and the last ')'. */
		open_ = strchr(s->stat[1], '(');
		close_ = strrchr(s->stat[1], ')');
		if (!open_ || close_ <= open_ + 1)
			die("a stat file without a comm");
		if (flip && p->kind == 'm' && !strncmp(p->comm, "svc", 3))
			open_[1] = 'x'; /* "svc07-w3" -> "xvc07-w3": no rule */
		else /* the last letter: every glob that matched still does */
			close_[-1] = close_[-1] == '~' ? 'x' : '~';
	}
}

static void storm_teardown(void)
{
	/* Names back as they were, and the manager told, untimed. */
	for (size_t i = 0; i < nst; i++) {
		if (st[i].alt) {
			write_stat(&st[i], false);
			mgr_on_change(mgr, st[i].pid);
		}
		free(st[i].stat[0]);
		free(st[i].stat[1]);
	}
	mgr_flush(mgr, UINT64_MAX);
	free(st);
	st = NULL;
	nst = 0;
}

/* Windows of the budget, as budget_left() opens them. */
static struct window *wins;
static size_t nwins, capwins;

/*
 * The window an event now belongs to: the last one opened, or the next
 * if that one is over (budget_left() opens it on its next call).
 */
static size_t window_now(void)
{
	if (!nwins)
		return 0;
	return now_ms() - wins[nwins - 1].start_ms >= BUDGET_WINDOW_MS
		       ? nwins
		       : nwins - 1;
}

static uint64_t budget_left_tracked(struct budget *b, uint64_t now)
{
	uint64_t start = b->start_ms, left = budget_left(b, now);

	if (b->start_ms != start || !nwins) {
		if (nwins == capwins) {
			capwins = capwins ? capwins * 2 : 64;
			wins = realloc(wins, capwins * sizeof(*wins));
			if (!wins)
				die("out of memory");
		}
		wins[nwins++] = (struct window){.start_ms = b->start_ms};
	}
	return left;
}

static void bench_storm(const char *key, unsigned int rate, unsigned int secs,
			bool flip)
{
	struct budget eb = {EVAL_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	uint64_t total = (uint64_t)rate * secs, k = 0;
	uint64_t period = 1000000000ULL / rate, t0, t_end, lag_max = 0;
	uint64_t mark_cpu = 0, eval_cpu = 0, eval_wall = 0, evals = 0;
	uint64_t work = 0;     /* wall time of all evaluations so far */
	uint64_t eval_max = 0; /* the longest one: how far a slice overruns */
	size_t ahead_max = 0;
	uint64_t drain_cap_ns = 600ULL * 1000000000ULL;
	/*
	 * The processes in the order they were marked, for finding which
	 * one an evaluation took in O(1) when the queue is first in, first
	 * out.  A process is pushed each time it is marked while not
	 * waiting: at most once per event, so no wrap-around.
	 */
	size_t *ring, head = 0, tail = 0, pending = 0, nwait = 0, starved = 0;
	size_t mismatch = 0, unordered = 0, walk_slices = 0;
	struct wait_rec *waits;
	size_t capwait;

	storm_setup(flip);
	ring = xcalloc((size_t)total + 1, sizeof(*ring));
	capwait = (size_t)total + nst;
	waits = xcalloc(capwait, sizeof(*waits));
	nwins = 0;
	t0 = mono_ns();
	for (;;) {
		uint64_t now = mono_ns(), start, left;

		/* The connector: events due by now, a turn's worth. */
		if (k < total && t0 + k * period <= now) {
			uint64_t due = (now - t0) / period + 1, n, c0;

			if (due > total)
				due = total;
			n = due - k;
			if (n > EVENTS_PER_TURN)
				n = EVENTS_PER_TURN;
			/* The kernel renamed them before the events came. */
			for (uint64_t j = 0; j < n; j++) {
				struct stormer *s = &st[(k + j) % nst];

				write_stat(s, !s->alt);
			}
			if (now - (t0 + k * period) > lag_max)
				lag_max = now - (t0 + k * period);
			c0 = cpu_ns();
			for (uint64_t j = 0; j < n; j++) {
				size_t i = (size_t)((k + j) % nst);
				struct stormer *s = &st[i];

				if (!s->pending) {
					s->pending = true;
					s->mark_ns = now;
					s->work_at_mark = work;
					s->win_at_mark = window_now();
					s->ahead = pending++;
					if (s->ahead > ahead_max)
						ahead_max = s->ahead;
					ring[tail++] = i;
				}
				mgr_on_change(mgr, s->pid);
			}
			mark_cpu += cpu_ns() - c0;
			k += n;
		}
		/* The dirty queue: flush_dirty(). */
		start = now_ms();
		left = budget_left_tracked(&eb, start);
		if (left && pending) {
			uint64_t end =
				start + (left < SLICE_MS ? left : SLICE_MS);
			uint64_t c0 = cpu_ns(), w0 = mono_ns(), c1, w1;
			uint64_t t_prev = w0;
			size_t n = 0;

			do {
				uint64_t t;
				size_t i;

				mgr_flush(mgr, 0); /* exactly one */
				t = mono_ns();
				work += t - t_prev;
				if (t - t_prev > eval_max)
					eval_max = t - t_prev;
				t_prev = t;
				n++;
				/* Skip entries done out of order. */
				while (head < tail && !st[ring[head]].pending)
					head++;
				i = head < tail ? ring[head] : 0;
				if (head == tail || queued(st[i].pid)) {
					/*
					 * Not the oldest: find which, in
					 * O(processes), inside the timed
					 * slice.  Only a queue that is not
					 * FIFO comes here ("unordered"), and
					 * then its figures carry this cost.
					 */
					unordered++;
					for (i = 0; i < nst; i++)
						if (st[i].pending &&
						    !queued(st[i].pid))
							break;
					if (i == nst && walks_queued()) {
						/* The rest of a walk. */
						unordered--;
						walk_slices++;
						continue;
					}
					if (i == nst)
						die("an evaluation of nothing");
				} else {
					head++;
				}
				st[i].pending = false;
				pending--;
				waits[nwait++] = (struct wait_rec){
					t - st[i].mark_ns,
					work - st[i].work_at_mark,
					nwins - 1 - st[i].win_at_mark};
			} while (now_ms() < end && pending);
			c1 = cpu_ns();
			w1 = mono_ns();
			budget_charge(&eb, now_ms() - start);
			wins[nwins - 1].cpu_ns += c1 - c0;
			wins[nwins - 1].wall_ns += w1 - w0;
			wins[nwins - 1].evals += n;
			wins[nwins - 1].used_ms = eb.used_ms;
			eval_cpu += c1 - c0;
			eval_wall += w1 - w0;
			evals += n;
		}
		if (queue_len() != pending)
			mismatch++;
		if (k >= total && !pending)
			break;
		now = mono_ns();
		if (now - t0 > (uint64_t)secs * 1000000000ULL + drain_cap_ns) {
			starved = pending;
			break;
		}
		/* loop_timeout(): wait for the next event or budget. */
		{
			uint64_t next = k < total ? t0 + k * period
						  : UINT64_MAX;

			if (pending) {
				if (budget_left_tracked(&eb, now_ms()))
					next = now;
				else if (budget_renews(&eb) * 1000000ULL < next)
					next = budget_renews(&eb) * 1000000ULL;
			}
			if (next > now && next != UINT64_MAX)
				sleep_until_ns(next);
		}
	}
	t_end = mono_ns();

	/*
	 * The promise (softaffd(8)): late by up to a second while the
	 * processes marked before it fit in a second's budget, else by as
	 * many seconds as evaluating them takes.  With W the evaluation
	 * time from its mark to its evaluation, a FIFO queue drained at
	 * its full budget B in every window reaches it in the window it
	 * was marked in or within max(1, ceil(W / B)) windows after: that
	 * is the check, in windows, which a host that is slow to run the
	 * daemon does not change.  In seconds it is the same number, if
	 * each window opens on time; how late they opened is reported
	 * (windows that follow one that used its budget: a backlog was
	 * there, so the next should open as soon as its second began).
	 *
	 * B is 200 ms less 5%: the budget is charged in whole milliseconds
	 * of now_ms() per slice of at most SLICE_MS, which can take up to
	 * a millisecond a slice more than the work (and as much less, on
	 * average as much as it takes); the least work a full window did
	 * is reported.
	 */
	{
		uint64_t *w = xcalloc(nwait, sizeof(*w));
		uint64_t max_cpu = 0, max_wall = 0, late_max = 0, late_sum = 0;
		uint64_t least_work = UINT64_MAX;
		double b_ns = EVAL_BUDGET_MS * 1e6 * (1 - 1.0 / SLICE_MS);
		size_t nfull = 0, over = 0, over_s = 0, nlate = 0;
		double worst = 0, worst_bound = 0, worst_work = 0;
		double secs_run = (double)(t_end - t0) / 1e9;
		bool have_worst = false;

		for (size_t i = 0; i < nwins; i++) {
			nfull += wins[i].used_ms >= EVAL_BUDGET_MS;
			if (wins[i].used_ms >= EVAL_BUDGET_MS &&
			    wins[i].wall_ns < least_work)
				least_work = wins[i].wall_ns;
			if (i && wins[i - 1].used_ms >= EVAL_BUDGET_MS) {
				uint64_t late = wins[i].start_ms -
						wins[i - 1].start_ms -
						BUDGET_WINDOW_MS;

				late_sum += late;
				nlate++;
				if (late > late_max)
					late_max = late;
			}
			if (wins[i].cpu_ns > max_cpu)
				max_cpu = wins[i].cpu_ns;
			if (wins[i].wall_ns > max_wall)
				max_wall = wins[i].wall_ns;
		}
		for (size_t i = 0; i < nwait; i++) {
			double wait = (double)waits[i].wait_ns / 1e9;
			double windows = ceil((double)waits[i].work_ns / b_ns);
			double bound = (windows < 1 ? 1 : windows) *
				       BUDGET_WINDOW_MS / 1e3;

			if ((double)waits[i].windows > bound)
				over++;
			if (wait > bound)
				over_s++;
			if (!have_worst || wait - bound > worst - worst_bound) {
				worst = wait;
				worst_bound = bound;
				worst_work = (double)waits[i].work_ns / 1e6;
				have_worst = true;
			}
			w[i] = waits[i].wait_ns;
		}
		printf("%s_events %llu\n%s_processes %zu\n", key,
		       (unsigned long long)k, key, nst);
		printf("%s_seconds %.3f\n%s_storm_seconds %u\n", key, secs_run,
		       key, secs);
		printf("%s_lag_max_ms %.3f\n", key, (double)lag_max / 1e6);
		printf("%s_evals %llu\n", key, (unsigned long long)evals);
		printf("%s_eval_cpu_ms_per_s %.3f\n", key,
		       (double)eval_cpu / 1e6 / secs_run);
		printf("%s_eval_wall_ms_per_s %.3f\n", key,
		       (double)eval_wall / 1e6 / secs_run);
		printf("%s_eval_cpu_ms_max_window %.3f\n", key,
		       (double)max_cpu / 1e6);
		printf("%s_eval_wall_ms_max_window %.3f\n", key,
		       (double)max_wall / 1e6);
		printf("%s_eval_max_ms %.3f\n", key, (double)eval_max / 1e6);
		printf("%s_eval_cpu_us %.3f\n", key,
		       evals ? (double)eval_cpu / 1e3 / (double)evals : 0);
		printf("%s_mark_cpu_ms_per_s %.3f\n", key,
		       (double)mark_cpu / 1e6 / secs_run);
		printf("%s_windows %zu\n%s_full_windows %zu\n", key, nwins, key,
		       nfull);
		printf("%s_waiting_max %zu\n", key, ahead_max + 1);
		printf("%s_wait_p50_ms %.1f\n", key,
		       (double)quantile(w, nwait, 0.5) / 1e6);
		printf("%s_wait_p99_ms %.1f\n", key,
		       (double)quantile(w, nwait, 0.99) / 1e6);
		printf("%s_wait_max_ms %.1f\n", key,
		       nwait ? (double)w[nwait - 1] / 1e6 : 0);
		printf("%s_worst_wait_s %.3f\n%s_worst_bound_s %.2f\n", key,
		       worst, key, worst_bound);
		printf("%s_worst_work_ms %.1f\n", key, worst_work);
		printf("%s_over_promise %zu\n%s_over_promise_s %zu\n", key,
		       over, key, over_s);
		printf("%s_starved %zu\n", key, starved);
		printf("%s_least_work_full_window_ms %.1f\n", key,
		       nfull ? (double)least_work / 1e6 : 0);
		printf("%s_window_late_mean_ms %.1f\n%s_window_late_max_ms %llu\n",
		       key, nlate ? (double)late_sum / (double)nlate : 0, key,
		       (unsigned long long)late_max);
		/* Sanity: the harness's idea of the queue matched the queue's. */
		printf("%s_queue_mismatch %zu\n%s_unordered %zu\n"
		       "%s_walk_slices %zu\n",
		       key, mismatch, key, unordered, key, walk_slices);
		free(w);
	}
	free(ring);
	free(waits);
	storm_teardown();
}

/* ---- main ---- */

static void print_counters(const char *when)
{
	const struct mgr_counters *c = counters();

	printf("counters_%s evals=%llu cached=%llu written=%llu "
	       "unchanged=%llu ratio_written=%llu restored=%llu errors=%llu\n",
	       when, (unsigned long long)c->evals,
	       (unsigned long long)c->cached, (unsigned long long)c->written,
	       (unsigned long long)c->unchanged,
	       (unsigned long long)c->ratio_written,
	       (unsigned long long)c->restored, (unsigned long long)c->errors);
}

static void print_hwm(void)
{
	char buf[4096];
	const char *v;

	if (read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return;
	v = procfs_status_field(buf, "VmHWM");
	if (v)
		printf("harness_vmhwm_kib %ld\n", strtol(v, NULL, 10));
}

int main(int argc, char **argv)
{
	unsigned int rate = 10000, secs = 10;
	size_t events = 2000;
	bool keep = true, flip = false;
	char path[PATH_MAX], err[512];
	uint64_t c0, w0;

	if (argc < 2) {
		fprintf(stderr,
			"usage: bench_scale DIR [--storm-rate N] "
			"[--storm-seconds S] [--storm-mode keep|flip|both] "
			"[--no-storm] [--events N]\n");
		return 2;
	}
	if (strlen(argv[1]) >= sizeof(dir))
		die("DIR: too long a path");
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--storm-rate"))
			rate = (unsigned int)strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--storm-seconds"))
			secs = (unsigned int)strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--storm-mode")) {
			keep = !strcmp(v, "keep") || !strcmp(v, "both");
			flip = !strcmp(v, "flip") || !strcmp(v, "both");
			if (!keep && !flip)
				die("--storm-mode: keep, flip or both");
			i++;
		} else if (!strcmp(argv[i], "--events"))
			events = strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--no-storm"))
			keep = flip = false;
		else
			die("unknown option");
	}
	if (!rate || !secs)
		die("--storm-rate and --storm-seconds must be > 0");

	/* As main.c starts the daemon: its log level, its roots. */
	log_init(LOG_INFO);
	snprintf(roots.proc, sizeof(roots.proc), "%s/proc", dir);
	snprintf(roots.sys, sizeof(roots.sys), "%s/sys", dir);
	snprintf(roots.run, sizeof(roots.run), "%s/run", dir);
	if (topology_load(roots.sys, &topo) < 0)
		die("cannot read DIR/sys");
	snprintf(path, sizeof(path), "%s/softaffd.conf", dir);
	if (config_load(path, &topo, &cfg, err, sizeof(err)) < 0)
		die(err);
	read_manifests();
	manager_new();
	printf("cpus %u\nnodes %u\nrules %u\nprocesses %zu\n",
	       cpuset_count(&topo.all), topo.nnodes, cfg->nrules, nprocs);
	{
		unsigned long threads = 0;

		for (size_t i = 0; i < nprocs; i++)
			threads += (unsigned long)procs[i].threads;
		printf("threads %lu\n", threads);
	}

	/* The first scan: every process read, every managed thread set. */
	c0 = cpu_ns();
	w0 = mono_ns();
	if (mgr_scan(mgr) < 0)
		die("first scan failed");
	printf("first_scan_cpu_ms %.3f\nfirst_scan_wall_ms %.3f\n",
	       (double)(cpu_ns() - c0) / 1e6, (double)(mono_ns() - w0) / 1e6);
	printf("managed %zu\n", managed_count());
	print_counters("first_scan");
	fflush(stdout);

	bench_idle();
	fflush(stdout);

	bench_exec("exec-managed", "exec_managed", events, true);
	bench_exec("exec-other", "exec_other", events, false);
	bench_fork_other(events * 5);
	bench_fork_managed("fork-managed", "fork_managed", events);
	bench_fork_managed("thread-small", "thread_small", events);
	bench_fork_managed("thread-big", "thread_big", events);
	printf("managed_after_events %zu\n", managed_count());
	fflush(stdout);

	if (keep) {
		bench_storm("storm", rate, secs, false);
		printf("managed_after_storm %zu\n", managed_count());
	}
	if (flip) {
		bench_storm("storm_flip", rate, secs, true);
		printf("managed_after_storm_flip %zu\n", managed_count());
	}
	print_counters("end");
	print_hwm();
	mgr_restore_all(mgr);
	manager_free();
	config_free(cfg);
	sampler_done(&smp);
	return 0;
}
