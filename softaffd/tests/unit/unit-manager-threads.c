// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The manager and threads: masks set by hand, sliced scans, the dirty
 * queue and the match cache, threads = "main".
 */
#include "unit.h"

static void set_soft(int pid, int tid, const char *mask)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list", proc,
		 pid, tid);
	put(path, mask);
}

static void rm_task(int pid, int tid)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d/task/%d", proc, pid, tid);
	CHECK(system(cmd) == 0);
}

/*
 * threads = "all": the process level is the daemon's, one write; a
 * thread with a request of its own, or a process level someone else
 * changed, is hand-set: left alone, logged once, listed.
 */
void test_manager_hand(void)
{
	struct config *c1, *c2, *c3;
	unsigned long infos;
	char err[512];

	fake_fixture();
	mktask(700, 700, "app", 1, 0, "0-3", "\n");
	mktask(700, 701, "app", 1, 0, "0-3", "\n");
	mktask(710, 710, "app", 2, 0, "0-3", "\n");
	c1 = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		       "cpus = \"0\"; } );");
	if (!c1)
		return;
	/* A thread's own request from before we came is the thread's. */
	set_soft(710, 710, "2-3\n");
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(fake_writes == 2); /* one per process, not per thread */
	CHECK_STR(psoft_of(700), "0\n");
	CHECK_STR(psoft_of(710), "0\n");
	CHECK_STR(soft_of(700, 700), "\n");
	CHECK_STR(soft_of(700, 701), "\n");
	CHECK_STR(soft_of(710, 710), "2-3\n");
	CHECK(mgr->nhand_procs == 1 && mgr->cnt.hand == 1);

	/* Set by hand later: left alone by scans, logged once at info. */
	set_soft(700, 701, "2-3\n");
	set_psoft(710, "none\n"); /* the process opted out by hand */
	infos = log_counts[LOG_INFO];
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_scan(mgr) == 0);
	CHECK(fake_writes == 0);
	CHECK_STR(soft_of(700, 701), "2-3\n");
	CHECK_STR(psoft_of(710), "none\n");
	CHECK(log_counts[LOG_INFO] == infos + 2);
	CHECK(mgr->nhand_procs == 2 && mgr->cnt.hand == 3);
	{
		struct sbuf b = {0};

		mgr_status(mgr, &b);
		CHECK(b.buf && strstr(b.buf, "rule app cpus 0 processes 2 "
					     "pids 700 710\n"
					     "hand-managed rule app processes "
					     "2 pids 700 710\n"));
		sbuf_free(&b);
	}

	/* New threads cost nothing: the process level covers them. */
	mktask(700, 702, "app", 1, 0, "0-3", "\n");
	mgr_on_fork(mgr, 700, 702, 700);
	mktask(700, 703, "app", 1, 0, "0-3", "2-3\n"); /* from 701 */
	mgr_on_fork(mgr, 700, 703, 700);
	CHECK(mgr_dirty_count(mgr) == 0);
	CHECK_STR(soft_of(700, 702), "\n");
	/* A full walk finds the request 703 inherited: hand-set too. */
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_lookup(mgr, 700)->own.nthreads == 2);
	CHECK_STR(soft_of(700, 703), "2-3\n");
	/* A thread exit is forgotten. */
	rm_task(700, 703);
	mgr_on_exit(mgr, 703, 700);
	CHECK(mgr_lookup(mgr, 700)->own.nthreads == 1);

	/* A reload that changes the rule keeps what was set by hand ... */
	c2 = load("rules = ( { name = \"app\"; comm = \"app\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(mgr_reload(mgr, c2) == 0 && mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(700), "1\n");
	CHECK_STR(soft_of(700, 702), "\n");
	CHECK_STR(soft_of(700, 701), "2-3\n");
	CHECK_STR(psoft_of(710), "none\n");
	CHECK_STR(soft_of(710, 710), "2-3\n");
	CHECK(mgr_processes(mgr) == 2 && mgr->nhand_procs == 2);
	config_free(c1);

	/* ... and stop gives the process level back what it had. */
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(700), "\n");
	CHECK_STR(soft_of(700, 701), "2-3\n");
	CHECK_STR(psoft_of(710), "none\n");
	mgr_scan(mgr);
	CHECK_STR(psoft_of(700), "1\n");

	/* exec: only the leader is left; adopted again, it is taken back. */
	rm_task(700, 701);
	rm_task(700, 702);
	set_soft(700, 700, "3\n");
	set_psoft(700, "2\n");
	mgr_on_exec(mgr, 700);
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(psoft_of(700), "1\n");
	CHECK_STR(soft_of(700, 700), "\n");
	CHECK(mgr_lookup(mgr, 700)->own.nhand == 0 && mgr->nhand_procs == 1);

	/* SIGUSR1: re-adopt everything. */
	CHECK(mgr_readopt(mgr) == 1);
	CHECK(mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(710), "1\n");
	CHECK_STR(soft_of(710, 710), "\n");
	CHECK(mgr->nhand_procs == 0);

	/* A removed rule lets hand-managed processes go as they are. */
	set_soft(710, 710, "3\n");
	mgr_scan(mgr);
	CHECK(mgr->nhand_procs == 1);
	c3 = load("rules = ( { name = \"other\"; comm = \"zzz\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(mgr_reload(mgr, c3) == 0 && mgr_scan_finish(mgr) == 0);
	CHECK(mgr_processes(mgr) == 0 && mgr->nhand_procs == 0);
	CHECK_STR(soft_of(710, 710), "3\n");
	CHECK_STR(psoft_of(710), "\n");
	CHECK_STR(psoft_of(700), "\n");
	config_free(c2);
	mgr_free(mgr);
	mgr = NULL;

	/* A dry run writes nothing, so it must not see hand-set masks. */
	c2 = mgr_setup_dry("rules = ( { name = \"app\"; comm = \"app\"; "
			   "cpus = \"0\"; } );",
			   true);
	fake_writes = 0;
	CHECK(c2 && mgr_scan(mgr) == 0 && mgr_scan(mgr) == 0);
	CHECK(mgr_processes(mgr) == 2 && mgr->nhand_procs == 0);
	CHECK(fake_writes == 0);
	mgr_teardown(c2, c3);
}

static unsigned int ticks;

static void count_tick(void *ud)
{
	(void)ud;
	ticks++;
}

void test_manager_slices(void)
{
	struct config *c, *c2;
	uint64_t scans;
	char err[512];
	int steps = 0, r;

	fake_fixture();
	for (int p = 800; p < 1100; p++)
		mktask(p, p, p % 3 ? "rest" : "app", (unsigned)p, 0, "0-3",
		       "\n");
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0\"; } );");
	if (!c)
		return;
	mgr_set_tick(mgr, count_tick, NULL);
	ticks = 0;
	/* A deadline already past: one pid per step, then back to the loop. */
	CHECK(mgr_scan_start(mgr, SCAN_FULL) == 0);
	while ((r = mgr_scan_step(mgr, 0)) == 0)
		steps++;
	CHECK(r == 1 && !mgr_scan_busy(mgr));
	CHECK(steps >= 299);
	CHECK(mgr_processes(mgr) == 100 && mgr->others.count == 200);
	CHECK(ticks == 0); /* one pid per step: never 64 in a row */
	CHECK(mgr_scan(mgr) == 0);
	CHECK(ticks >= 4); /* 300 pids in one go */

	/*
	 * LIGHT trusts what it knows: a comm change without an event is
	 * not read, a new pid is.  So does ATTRS where the rules were
	 * decided without command line and cgroup (test_manager_attrs);
	 * NEW reads every stat and finds the change.
	 */
	mktask(802, 802, "app", 802, 0, "0-3", "\n");
	mktask(1200, 1200, "app", 1200, 0, "0-3", "\n");
	CHECK(mgr_scan_start(mgr, SCAN_LIGHT) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr_lookup(mgr, 802) == NULL);
	CHECK_STR(psoft_of(1200), "0\n");
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr_lookup(mgr, 802) == NULL);
	CHECK(mgr_scan_start(mgr, SCAN_NEW) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(802), "0\n");
	/* ATTRS and LIGHT leave the threads of known processes alone. */
	mktask(802, 1250, "app", 802, 0, "0-3", "\n");
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK_STR(soft_of(802, 1250), "\n");
	/* NEW: new threads need nothing, the process level has them. */
	fake_writes = 0;
	CHECK(mgr_scan_start(mgr, SCAN_NEW) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK_STR(soft_of(802, 1250), "\n");
	CHECK(fake_writes == 0);
	/* Exits are noticed by every kind; children of others are known. */
	mgr_on_fork(mgr, 803, 1300, 1300);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr_processes(mgr) == 102 && mgr->others.count == 200);
	rm_task(1200, 1200);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/1200", proc);
		CHECK(system(cmd) == 0);
	}
	CHECK(mgr_scan_start(mgr, SCAN_LIGHT) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr_lookup(mgr, 1200) == NULL && mgr_processes(mgr) == 101);
	CHECK(mgr->others.count == 199); /* 1300 never showed up */

	/* Many threads: one write; only hand-set ones are remembered. */
	for (int t = 1400; t < 1440; t++)
		mktask(1400, t, "app", 1400, 0, "0-3", t % 10 ? "\n" : "3\n");
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0 && fake_writes == 1);
	CHECK(mgr_lookup(mgr, 1400) && mgr_lookup(mgr, 1400)->own.nthreads == 4);
	CHECK(mgr_lookup(mgr, 1400)->own.threads[3].tid == 1430);
	CHECK_STR(psoft_of(1400), "0\n");
	CHECK_STR(soft_of(1400, 1421), "\n");
	rm_task(1400, 1420);
	mgr_on_exit(mgr, 1420, 1400);
	CHECK(mgr_lookup(mgr, 1400)->own.nthreads == 3);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/1400", proc);
		CHECK(system(cmd) == 0);
	}

	/*
	 * A reload that changes a rule in the middle of a scan lets it go
	 * on too: the managed processes were matched again by the reload.
	 */
	c2 = load("rules = ( { name = \"app\"; comm = \"app\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(c2 && mgr_scan_start(mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(mgr, 0) == 0);
	scans = mgr->cnt.scans;
	CHECK(mgr_reload(mgr, c2) == 0 && mgr_scan_busy(mgr));
	CHECK(mgr->cnt.scans == scans);
	config_free(c);
	CHECK(mgr_scan_finish(mgr) == 0 && mgr_processes(mgr) == 101);
	/* One that keeps the rules lets it go on. */
	c = load("rules = ( { name = \"app\"; comm = \"app\"; "
		 "cpus = \"1\"; } );",
		 err, sizeof(err));
	CHECK(c && mgr_scan_start(mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(mgr, 0) == 0);
	scans = mgr->cnt.scans;
	CHECK(mgr_reload(mgr, c) == 1 && mgr_scan_busy(mgr));
	CHECK(mgr->cnt.scans == scans);
	config_free(c2);
	CHECK(mgr_scan_finish(mgr) == 0 && mgr_processes(mgr) == 101);
	mgr_teardown(c, NULL);
}

void test_manager_dirty(void)
{
	struct config *c;
	uint64_t evals;

	fake_fixture();
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	for (int tid = 900; tid <= 901; tid++)
		mktask(900, tid, "app", 90, 0, "0-3", "\n");
	mktask(920, 920, "rest", 92, 0, "0-3", "\n");
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(psoft_of(900), "0-1\n");

	/* A comm-flip storm: a thousand events, one evaluation. */
	mktask(920, 920, "app", 92, 0, "0-3", "\n");
	evals = mgr->cnt.evals;
	for (int i = 0; i < 1000; i++)
		mgr_on_change(mgr, 920);
	CHECK(dirtyq_count(&mgr->dirty) == 1);
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK(mgr->cnt.evals == evals + 1 && mgr_lookup(mgr, 920));
	/* Same process, same comm: the match cache answers. */
	evals = mgr->cnt.evals;
	mgr_on_change(mgr, 920);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr->cnt.evals == evals && mgr->cnt.cached > 0);
	/* A uid change does not trust the cache either. */
	mgr_on_uid(mgr, 920);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr->cnt.evals == ++evals);
	/* An exec always evaluates afresh. */
	mgr_on_exec(mgr, 920);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr->cnt.evals == evals + 1);
	/* An exit drops a pending evaluation. */
	mgr_on_change(mgr, 920);
	mgr_on_exit(mgr, 920, 920);
	CHECK(dirtyq_count(&mgr->dirty) == 0 && !mgr_lookup(mgr, 920));
	/* A deadline already past: one pid per flush. */
	mgr_on_change(mgr, 900);
	mgr_on_exec(mgr, 920);
	CHECK(!mgr_flush(mgr, 0) && dirtyq_count(&mgr->dirty) == 1);
	CHECK(mgr_flush(mgr, 0));
	/*
	 * Oldest first: a pid drained and marked again (a rename loop)
	 * goes to the back, behind those that waited before it.
	 */
	for (int p = 955; p >= 950; p--) {
		mktask(p, p, "app", (unsigned)p, 0, "0-3", "\n");
		mgr_on_exec(mgr, p);
	}
	for (int i = 0; i < 6; i++) {
		CHECK(mgr_flush(mgr, 0) == false);
		CHECK(mgr_lookup(mgr, 955 - i));
		CHECK(i == 5 || !mgr_lookup(mgr, 954 - i));
		mgr_on_change(mgr, 955);
	}
	CHECK(dirtyq_count(&mgr->dirty) == 1 && mgr->dirty.head->node.pid == 955);
	CHECK(mgr_flush(mgr, UINT64_MAX));

	/*
	 * A child forked from a managed process has the parent's mask and
	 * rule.  One that renames itself to match nothing gives the mask
	 * back, its own thread's request stays.
	 */
	fixture_ppid = 900;
	mktask(930, 930, "app", 93, 0, "0-3", "\n");
	set_psoft(930, "0-1\n"); /* fork copies the process level */
	mktask(930, 931, "app", 93, 0, "0-3", "3\n");
	mgr_on_fork(mgr, 900, 930, 930);
	CHECK(mgr_lookup(mgr, 930) && mgr_dirty_count(mgr) == 0);
	mktask(930, 930, "other", 93, 0, "0-3", NULL);
	mgr_on_change(mgr, 930);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(!mgr_lookup(mgr, 930));
	CHECK_STR(psoft_of(930), "\n");
	/*
	 * Those that kept it (found by a scan, events missed: their ppid
	 * tells) are reset on stop, unless someone changed it.
	 */
	fixture_ppid = 900;
	mktask(940, 940, "other", 94, 0, "0-3", "\n");
	set_psoft(940, "0-1\n");
	mktask(960, 960, "other", 96, 0, "0-3", "\n");
	set_psoft(960, "2\n"); /* changed by someone: theirs */
	fixture_ppid = 0;
	CHECK(mgr_scan(mgr) == 0);
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(900), "\n");
	CHECK_STR(psoft_of(930), "\n");
	CHECK_STR(soft_of(930, 931), "3\n");
	CHECK_STR(psoft_of(940), "\n");
	CHECK_STR(psoft_of(960), "2\n");
	mgr_teardown(c, NULL);
}

/* threads = "main": the other threads lose what they inherited. */
void test_threads_main(void)
{
	struct config *c;
	static const char *const soft[] = {"0-3\n", "0-1\n", "3\n"};

	fake_fixture();
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; threads = \"main\"; } );");
	if (!c)
		return;
	for (int t = 0; t < 3; t++)
		mktask(950, 950 + t, "app", 95, 0, "0-3", soft[t]);
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(soft_of(950, 950), "0-1\n");
	CHECK_STR(soft_of(950, 951), "\n");
	CHECK_STR(soft_of(950, 952), "3\n");
	/* A thread started later inherits the main thread's mask: reset. */
	mktask(950, 953, "app", 95, 0, "0-3", "0-1\n");
	mgr_on_fork(mgr, 950, 953, 950);
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(soft_of(950, 953), "\n");
	mgr_teardown(c, NULL);
}

/*
 * threads = "all": one write of the process level for any number of
 * threads; restore writes back exactly what was there; a child forked
 * from a managed process is restored to what its parent had.
 */
void test_process_level(void)
{
	struct config *c, *c2;
	struct managed *e;
	uint64_t evals;
	char err[512];

	fake_fixture();
	for (int t = 0; t < 100; t++)
		mktask(1000, 1000 + t, "big", 5, 0, "0-3", "\n");
	set_soft(1000, 1042, "3\n"); /* the program's own, for one thread */
	set_psoft(1000, "2-3\n");    /* the process asked for 2-3 before us */
	c = mgr_setup("rules = ( { name = \"big\"; comm = \"big\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(fake_writes == 1 && mgr->cnt.written == 1);
	CHECK_STR(psoft_of(1000), "0-1\n");
	for (int t = 0; t < 100; t++)
		if (t != 42 && strcmp(soft_of(1000, 1000 + t), "\n"))
			CHECK(!"a thread level was written");
	CHECK_STR(soft_of(1000, 1042), "3\n");
	e = mgr_lookup(mgr, 1000);
	CHECK(e && e->own.nhand == 1 && e->own.nthreads == 1 &&
	      mgr_hand_processes(mgr) == 1);
	CHECK(e && e->proc_orig.state == REQ_SET);
	/* Its original 2-3 and our 0-1, interned: the record holds two refs. */
	CHECK(e && e->proc_orig.cpus && cpuset_count(e->proc_orig.cpus) == 2 &&
	      cpuset_test(e->proc_orig.cpus, 2) && e->proc_ours &&
	      cpuset_test(e->proc_ours, 0) && mgr->sets.count == 2);
	/* Nothing to do again, for new threads neither. */
	fake_writes = 0;
	mktask(1000, 1100, "big", 5, 0, "0-3", "\n");
	mgr_on_fork(mgr, 1000, 1100, 1000);
	CHECK(mgr_dirty_count(mgr) == 0);
	CHECK(mgr_scan(mgr) == 0 && fake_writes == 0);

	/* A forked child inherits ours; its exec elsewhere restores what
	 * its parent had before us, not ours. */
	fixture_ppid = 1000;
	mktask(1200, 1200, "big", 6, 0, "0-3", "\n");
	set_psoft(1200, "0-1\n");
	mgr_on_fork(mgr, 1000, 1200, 1200);
	fake_writes = 0;
	evals = mgr->cnt.evals;
	mgr_flush(mgr, UINT64_MAX);
	/* Its parent's rule, not matched again; nothing written. */
	CHECK(mgr_lookup(mgr, 1200) && fake_writes == 0 &&
	      mgr->cnt.evals == evals);
	CHECK(mgr_lookup(mgr, 1200) &&
	      (mgr_lookup(mgr, 1200)->flags & M_PROC_OURS));
	mktask(1200, 1200, "sh", 6, 0, "0-3", "\n");
	fixture_ppid = 0;
	set_psoft(1200, "0-1\n"); /* kept across execve */
	mgr_on_exec(mgr, 1200);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(!mgr_lookup(mgr, 1200));
	CHECK_STR(psoft_of(1200), "2-3\n");

	/* A rule that changes its CPUs: ours written over, one write. */
	c2 = load("rules = ( { name = \"big\"; comm = \"big\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	fake_writes = 0;
	CHECK(c2 && mgr_reload(mgr, c2) == 0 && mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(1000), "1\n");
	CHECK_STR(soft_of(1000, 1042), "3\n");

	/* Stop: the process level as it was, exactly; the thread's own. */
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(1000), "2-3\n");
	CHECK_STR(soft_of(1000, 1042), "3\n");
	/* "none" before us comes back as "none". */
	set_psoft(1000, "none\n");
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(psoft_of(1000), "1\n");
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(1000), "none\n");
	mgr_teardown(c, c2);
}

/*
 * A walk over a 1000-thread process is capped per evaluation: the rest
 * waits in the dirty queue, behind the others, and the process is
 * adopted only when its walk is complete.
 */
void test_walk_slices(void)
{
	struct config *c;
	struct managed *e;
	int flushes = 0;

	fake_fixture();
	for (int t = 0; t < 1000; t++)
		mktask(2000, 2000 + t, "wide", 7, 0, "0-3", "0-1\n");
	c = mgr_setup("rules = ( { name = \"wide\"; comm = \"wide\"; "
		      "cpus = \"0-1\"; threads = \"main\"; } );");
	if (!c)
		return;
	fake_writes = 0;
	mgr_eval_pid(mgr, 2000);
	e = mgr_lookup(mgr, 2000);
	CHECK(e && e->walk && e->walk->next == MGR_WALK_CAP);
	CHECK(e && !(e->flags & M_ADOPTED));
	CHECK(mgr_dirty_count(mgr) == 1);
	/* The main thread's request is in place; 255 others reset so far. */
	CHECK(fake_writes == MGR_WALK_CAP - 1);
	CHECK_STR(soft_of(2000, 2255), "\n");
	CHECK_STR(soft_of(2000, 2256), "0-1\n");
	/* Another process marked meanwhile is not held up behind it. */
	mktask(3000, 3000, "wide", 8, 0, "0-3", "\n");
	mgr_on_exec(mgr, 3000);
	CHECK(!mgr_flush(mgr, 0) && e->walk && e->walk->next == 2 * MGR_WALK_CAP);
	flushes++;
	CHECK(!mgr_flush(mgr, 0) && mgr_lookup(mgr, 3000));
	flushes++;
	while (!mgr_flush(mgr, 0) && flushes < 100)
		flushes++;
	flushes++;
	CHECK(flushes == 4); /* 256 + 256 + 1 + 256 + 232 */
	CHECK(!e->walk && (e->flags & M_ADOPTED));
	CHECK(fake_writes == 999 + 1); /* and 3000's main thread */
	CHECK_STR(soft_of(2000, 2000), "0-1\n");
	CHECK_STR(soft_of(2000, 2999), "\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);

	/* threads = "all": a hand-set thread at the end is found at last. */
	fake_fixture();
	for (int t = 0; t < 1000; t++)
		mktask(2000, 2000 + t, "wide", 7, 0, "0-3",
		       t == 999 ? "3\n" : "\n");
	c = mgr_setup("rules = ( { name = \"wide\"; comm = \"wide\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	fake_writes = 0;
	mgr_eval_pid(mgr, 2000);
	e = mgr_lookup(mgr, 2000);
	CHECK(e && fake_writes == 1 && e->walk && mgr_hand_processes(mgr) == 0);
	flushes = 0;
	while (!mgr_flush(mgr, 0) && flushes < 100)
		flushes++;
	CHECK(flushes == 2 && !e->walk && mgr_hand_processes(mgr) == 1);
	CHECK(fake_writes == 1);
	/* A rename to the same name walks nothing. */
	mgr_on_change(mgr, 2000);
	CHECK(mgr_flush(mgr, 0) && !e->walk);
	mgr_teardown(c, NULL);
}
