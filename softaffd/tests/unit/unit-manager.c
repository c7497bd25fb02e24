// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The manager: scans, events, pid reuse, error policy, reload, many
 * processes.
 */
#include "unit.h"

void test_manager_scan(void)
{
	struct config *c;

	fake_fixture();
	mktask(200, 200, "app one", 10, 0, "0-3", "\n");
	mktask(200, 201, "app one", 10, 0, "0-3", "\n");
	mktask(200, 202, "app one", 10, 1, "0-3", "\n"); /* RT */
	mktask(300, 300, "other", 11, 0, "0-3", "\n");
	mktask(400, 400, "app (x)", 12, 0, "2-3", "\n"); /* empty */
	/* A kernel thread named like a match. */
	{
		char path[PATH_MAX], buf[1024];

		stat_line(buf, sizeof(buf), 2, "app kthread", PF_KTHREAD_BIT, 1,
			  0);
		snprintf(path, sizeof(path), "%s/2/stat", proc);
		put(path, buf);
	}
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app*\"; "
		      "nodes = [ 0 ]; } );");
	if (!c)
		return;
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_processes(mgr) == 2); /* 200 and 400; not 300, not the kthread */
	/* threads = "all": one write at the process level, RT thread too. */
	CHECK_STR(psoft_of(200), "0-1\n");
	CHECK_STR(soft_of(200, 200), "\n");
	CHECK_STR(soft_of(200, 201), "\n");
	CHECK_STR(soft_of(200, 202), "\n");
	CHECK_STR(psoft_of(300), "\n");
	CHECK_STR(psoft_of(400), "\n");
	CHECK(mgr->cnt.written == 1 && mgr->cnt.rt == 0 && mgr->cnt.empty == 1);
	CHECK(fake_writes == 1);

	/* A rescan writes nothing new; the empty warning is not repeated. */
	unsigned long warns = log_counts[LOG_WARNING];
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(fake_writes == 0);
	CHECK(log_counts[LOG_WARNING] == warns);

	/* A new thread: the kernel gives it the process level; no work. */
	mktask(200, 203, "app one", 10, 0, "0-3", "\n");
	mgr_on_fork(mgr, 200, 203, 200);
	CHECK(mgr_dirty_count(mgr) == 0);
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(soft_of(200, 203), "\n");
	CHECK(fake_writes == 0);

	/*
	 * A forked child of a managed process is booked under its rule at
	 * the event, nothing read ...
	 */
	fixture_ppid = 200;
	mktask(210, 210, "app one", 20, 0, "0-3", "\n");
	set_psoft(210, "0-1\n"); /* fork copied its parent's request */
	mgr_on_fork(mgr, 200, 210, 210);
	CHECK(mgr_lookup(mgr, 210) != NULL && mgr_dirty_count(mgr) == 0);
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(psoft_of(210), "0-1\n");
	CHECK(fake_writes == 0);
	/* ... a child of an unmanaged one is not (same attrs, no match). */
	mktask(310, 310, "other", 21, 0, "0-3", "\n");
	mgr_on_fork(mgr, 300, 310, 310);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr_lookup(mgr, 310) == NULL);

	/* exec into something else: unmanaged and restored (to inherit,
	 * what its parent had before us). */
	mktask(210, 210, "bash", 20, 0, "0-3", NULL);
	fixture_ppid = 0;
	mgr_eval_pid(mgr, 210);
	CHECK(mgr_lookup(mgr, 210) == NULL);
	CHECK_STR(psoft_of(210), "\n");

	/* A new thread of a pid that was reused behind our back: no write. */
	mktask(210, 210, "app one", 30, 0, "0-3", "\n");
	mgr_on_fork(mgr, 200, 210, 210);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr_lookup(mgr, 210) != NULL);
	mktask(210, 210, "app one", 31, 0, "0-3", "\n"); /* reused */
	mktask(210, 211, "app one", 31, 0, "0-3", "\n");
	fake_writes = 0;
	mgr_on_fork(mgr, 210, 211, 210);
	CHECK(mgr_dirty_count(mgr) == 0); /* threads = "all": nothing to do */
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(soft_of(210, 211), "\n");
	CHECK(fake_writes == 0);
	mgr_eval_pid(mgr, 210); /* the next look sees a new process */
	CHECK(mgr_lookup(mgr, 210) && mgr_lookup(mgr, 210)->starttime == 31);
	mgr_on_exit(mgr, 210, 210);
	{
		char rm[PATH_MAX + 16];

		snprintf(rm, sizeof(rm), "rm -rf %s/210", proc);
		CHECK(system(rm) == 0);
	}

	/* Exit of a non-leader thread keeps the process, leader drops it. */
	mgr_on_exit(mgr, 201, 200);
	CHECK(mgr_lookup(mgr, 200) != NULL);
	mgr_on_exit(mgr, 200, 200);
	CHECK(mgr_lookup(mgr, 200) == NULL);

	/* pid reuse: same pid, new start time -> a new process. */
	mgr_scan(mgr);
	struct managed *e = mgr_lookup(mgr, 200);
	CHECK(e && e->starttime == 10);
	mktask(200, 200, "app two", 77, 0, "0-3", "\n");
	mgr_eval_pid(mgr, 200);
	e = mgr_lookup(mgr, 200);
	CHECK(e && e->starttime == 77);

	/* Processes that vanished are forgotten by the next scan. */
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/400", proc);
	CHECK(system(cmd) == 0);
	mgr_scan(mgr);
	CHECK(mgr_lookup(mgr, 400) == NULL);
	CHECK(mgr_processes(mgr) == 1);

	mgr_teardown(c, NULL);
}

void test_manager_errors(void)
{
	struct config *c, *c2;
	unsigned long warns;

	fake_fixture();
	for (int p = 500; p < 505; p++)
		mktask(p, p, "job", 1, 0, "0-3", "\n");
	mktask(500, 501, "job", 1, 0, "0-3", "\n");
	c = mgr_setup("rules = ( { name = \"jobs\"; comm = \"job\"; "
		      "cpus = \"1\"; } );");
	if (!c)
		return;

	/* EINVAL: warned once for the whole rule, still managed. */
	fake_err = -EINVAL;
	warns = log_counts[LOG_WARNING];
	mgr_scan(mgr);
	CHECK(mgr->cnt.einval == 5); /* one write per process */
	CHECK(log_counts[LOG_WARNING] == warns + 1);
	CHECK(mgr_processes(mgr) == 5);

	/* EPERM: warned once per process, then it is left alone. */
	fake_err = -EPERM;
	fake_writes = 0;
	warns = log_counts[LOG_WARNING];
	mgr_scan(mgr);
	CHECK(log_counts[LOG_WARNING] == warns + 5);
	CHECK(fake_writes == 5); /* stops at the first thread of 500 */
	fake_writes = 0;
	mgr_scan(mgr);
	CHECK(fake_writes == 0);
	CHECK(log_counts[LOG_WARNING] == warns + 5);

	/* Gone mid-operation: silent. */
	fake_err = -ESRCH;
	mgr_free(mgr);
	mgr = NULL;
	c2 = mgr_setup("rules = ( { name = \"jobs\"; comm = \"job\"; "
		       "cpus = \"1\"; } );");
	warns = log_counts[LOG_WARNING];
	mgr_scan(mgr);
	CHECK(log_counts[LOG_WARNING] == warns);
	CHECK(mgr->cnt.gone == 5);
	fake_err = 0;
	mgr_teardown(c2, c);
}

/*
 * Anyone can start processes whose hard affinity excludes a rule's
 * CPUs: one warning each, but at most LOG_RL_BURST per rule and
 * window, then one saying how many were suppressed.
 */
void test_manager_warn_limit(void)
{
	unsigned long warns, debugs;
	struct config *c;

	fake_fixture();
	for (int p = 510; p < 540; p++)
		mktask(p, p, "job", 1, 0, "2-3", "\n");
	c = mgr_setup("rules = ( { name = \"jobs\"; comm = \"job\"; "
		      "cpus = \"1\"; } );");
	if (!c)
		return;
	warns = log_counts[LOG_WARNING];
	debugs = log_counts[LOG_DEBUG];
	CHECK(mgr_scan(mgr) == 0 && mgr->cnt.empty == 30);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST);
	CHECK(log_counts[LOG_DEBUG] >= debugs + 30 - LOG_RL_BURST);
	/* Once per process still: a rescan adds none. */
	mgr_scan(mgr);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST);
	mgr_flush_logs(mgr, now_ms() + LOG_RL_WINDOW_MS);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST + 1);
	mgr_teardown(c, NULL);
}

void test_manager_reload(void)
{
	struct config *c1, *c2, *c3;
	char err[512];

	fake_fixture();
	mkprocs(600, (const char *[]){"keep", "change", "gone", "foreign",
				      NULL});
	c1 = mgr_setup(
		"rules = (\n"
		"{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; },\n"
		"{ name = \"change\"; comm = \"change\"; cpus = \"0\"; },\n"
		"{ name = \"gone\"; comm = \"gone\"; cpus = \"0\"; },\n"
		"{ name = \"foreign\"; comm = \"foreign\"; cpus = \"0\"; }\n"
		");");
	if (!c1)
		return;
	mgr_scan(mgr);
	CHECK(mgr_processes(mgr) == 4);
	/* Someone else changes 603 after us. */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/603/task/603/soft_affinity_list",
		 proc);
	put(path, "2-3\n");

	c2 = load("rules = (\n"
		  "{ name = \"change\"; comm = \"change\"; cpus = \"1\"; },\n"
		  "{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c2 != NULL);
	fake_writes = 0;
	CHECK(mgr_reload(mgr, c2) == 0 && mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(600), "0\n");   /* untouched */
	CHECK_STR(psoft_of(601), "1\n");   /* re-applied */
	CHECK_STR(psoft_of(602), "\n"); /* restored */
	CHECK_STR(soft_of(603, 603), "2-3\n"); /* foreign: left alone */
	CHECK_STR(psoft_of(603), "\n"); /* its process level restored */
	CHECK(mgr_lookup(mgr, 600)->rule == 1);
	CHECK(mgr->rules[0].nprocs == 1 && mgr->rules[1].nprocs == 1);
	/*
	 * 601 written over ours (no reset first), 602 reset, and 603's
	 * process level reset (its thread's own request stays).
	 */
	CHECK(fake_writes == 3);
	config_free(c1);

	/*
	 * The same rules again: the scan in progress, the events queued
	 * and the match cache go on; starting the scan over at every
	 * reload, a reload loop never let the first one end.
	 */
	c3 = load("rules = (\n"
		  "{ name = \"change\"; comm = \"change\"; cpus = \"1\"; },\n"
		  "{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; }\n"
		  ");",
		  err, sizeof(err));
	c1 = load("rules = (\n"
		  "{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; },\n"
		  "{ name = \"change\"; comm = \"change\"; cpus = \"1\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c3 && c1 && config_rules_equal(c2, c3));
	/* In another order, other rules: the first that matches wins. */
	CHECK(!config_rules_equal(c2, c1));
	/*
	 * The rule map of a reload, pure: each rule to the same rule in
	 * the new configuration by name and keys, wherever it stands.
	 */
	{
		struct config *c4 = load(
			"rules = (\n"
			"{ name = \"new\"; comm = \"new\"; cpus = \"2\"; },\n"
			"{ name = \"change\"; comm = \"change\"; cpus = \"3\"; },\n"
			"{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; }\n"
			");",
			err, sizeof(err));
		int map[2];

		CHECK(c4 != NULL);
		if (c4) {
			config_rule_map(c1, c4, map);
			CHECK(map[0] == 2 && map[1] == -1);
			config_rule_map(c1, c3, map);
			CHECK(map[0] == 1 && map[1] == 0);
			config_free(c4);
		}
	}
	config_free(c1);
	CHECK(mgr_scan_start(mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(mgr, 0) == 0);
	mgr_on_change(mgr, 601);
	size_t others = mgr->others.count;
	fake_writes = 0;
	CHECK(mgr_reload(mgr, c3) == 1 && mgr->cfg == c3);
	CHECK(mgr_scan_busy_with(mgr, SCAN_FULL));
	CHECK(dirtyq_count(&mgr->dirty) == 1 && mgr->others.count == others);
	CHECK(mgr_lookup(mgr, 600)->rule == 1 && mgr->rules[0].nprocs == 1);
	config_free(c2);
	CHECK(mgr_scan_finish(mgr) == 0 && mgr_flush(mgr, UINT64_MAX));
	CHECK(fake_writes == 0 && mgr_processes(mgr) == 2);

	/* Shutdown with restore_on_exit. */
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(600), "\n");
	CHECK_STR(psoft_of(601), "\n");
	mgr_teardown(c3, NULL);
}

void test_manager_many(void)
{
	struct config *c;

	/* Enough processes to exercise growing and shrinking the table. */
	fake_fixture();
	for (int p = 1000; p < 3000; p++)
		mktask(p, p, p % 2 ? "odd" : "even", (unsigned)p, 0, "0-3",
		       "\n");
	c = mgr_setup("rules = ( { comm = \"odd\"; cpus = \"0\"; } );");
	if (!c)
		return;
	mgr_scan(mgr);
	CHECK(mgr_processes(mgr) == 1000);
	CHECK(mgr->procs.nbuckets >= 512);
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/1* %s/2[0-8]*", proc, proc);
	CHECK(system(cmd) == 0);
	mgr_scan(mgr);
	CHECK(mgr_processes(mgr) == 50);
	CHECK(mgr->procs.nbuckets == 256);
	struct sbuf b = {0};
	mgr_status(mgr, &b);
	CHECK(b.buf && strstr(b.buf, "processes 50 pids 2901 2903"));
	sbuf_free(&b);
	mgr_teardown(c, NULL);
}

/*
 * A fork of a managed process (threads = "all") is a table insert at
 * the event: the child is booked under its parent's rule, nothing read.
 * The first look at it takes its start time if it is its parent's
 * child, and forgets it for a new process if not (a pid reused after a
 * lost exit).  A parent that waits in the dirty queue lends nothing.
 */
void test_manager_fork_booked(void)
{
	struct managed *e;
	struct config *c;
	int writes;

	c = mgr_setup_app(700, 70);
	if (!c)
		return;
	/* No /proc/710 at all: a read would have forgotten it. */
	writes = fake_writes;
	mgr_on_fork(mgr, 700, 710, 710);
	e = mgr_lookup(mgr, 710);
	CHECK(e && !e->starttime && e->parent == 700 && e->rule == 0);
	CHECK(e && (e->flags & M_ADOPTED) && (e->flags & M_PROC_OURS));
	CHECK(mgr_dirty_count(mgr) == 0 && fake_writes == writes);
	CHECK(mgr_rule_processes(mgr, 0) == 2);
	fixture_ppid = 700;
	mktask(710, 710, "app", 71, 0, "0-3", "\n");
	set_psoft(710, "0-1\n");
	fixture_ppid = 0;
	mgr_eval_pid(mgr, 710);
	e = mgr_lookup(mgr, 710);
	CHECK(e && e->starttime == 71 && fake_writes == writes);

	/* Another process at the pid: forgotten, evaluated afresh. */
	mgr_on_fork(mgr, 700, 720, 720);
	mktask(720, 720, "app", 72, 0, "0-3", "\n");
	mgr_eval_pid(mgr, 720);
	e = mgr_lookup(mgr, 720);
	CHECK(e && e->starttime == 72 && !e->parent);
	CHECK_STR(psoft_of(720), "0-1\n");

	/* A parent whose rename waits: its child waits behind it. */
	mgr_on_change(mgr, 700);
	mgr_on_fork(mgr, 700, 730, 730);
	CHECK(!mgr_lookup(mgr, 730) && mgr_dirty_count(mgr) == 2);
	mgr_on_exit(mgr, 730, 730);
	mgr_flush(mgr, UINT64_MAX);
	mgr_teardown(c, NULL);
}

/*
 * An exec leaves one thread: when the status counts one, only the
 * leader's own request is checked, task/ is not listed.  A zombie
 * leader's count is of the other threads: they are listed.
 */
void test_manager_exec_one_thread(void)
{
	static const char *const state[] = {"S (sleeping)", "Z (zombie)"};
	struct config *c;
	char buf[512];

	for (int z = 0; z < 2; z++) {
		fake_fixture();
		mktask(800, 800, "app", 80, 0, "0-3", "\n");
		/* Not listed if the count is believed: no such thread. */
		mktask(800, 801, "app", 80, 0, "0-3", "3\n");
		snprintf(buf, sizeof(buf),
			 "Name:\tapp\nState:\t%s\nUid:\t0\t0\t0\t0\n"
			 "Threads:\t1\nCpus_allowed_list:\t0-3\n",
			 state[z]);
		put_proc("/800/status", buf);
		c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
			      "cpus = \"0-1\"; } );");
		if (!c)
			return;
		mgr_on_exec(mgr, 800);
		CHECK(mgr_flush(mgr, UINT64_MAX));
		CHECK(mgr_lookup(mgr, 800) &&
		      (mgr_lookup(mgr, 800)->flags & M_ADOPTED));
		CHECK_STR(psoft_of(800), "0-1\n");
		CHECK(mgr_hand_processes(mgr) == (size_t)z);
		mgr_teardown(c, NULL);
	}
}

/*
 * The attribute rescans re-read of a known process only the command
 * line and cgroup its rule was decided on, and evaluate it again only
 * if they changed.
 */
void test_manager_attrs(void)
{
	static const char *const comms[] = {"app", "rest", "rest", NULL};
	struct config *c;
	uint64_t evals;

	fake_fixture();
	mkprocs(900, comms);
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"1\"; }, { name = \"web\"; cmdline = \"^web\"; "
		      "cpus = \"0\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_processes(mgr) == 1 && mgr->others.count == 2);
	CHECK_STR(psoft_of(900), "1\n");
	/* Nothing changed: nobody is evaluated again. */
	evals = mgr->cnt.evals;
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr->cnt.evals == evals);
	/* A rewritten command line that decides: only that process. */
	put_proc("/901/cmdline", "web\0-x");
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr->cnt.evals == evals + 1);
	CHECK_STR(psoft_of(901), "0\n");
	/* One its rule did not read (comm decided first): not read. */
	put_proc("/900/cmdline", "web");
	evals = mgr->cnt.evals;
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr->cnt.evals == evals);
	CHECK_STR(psoft_of(900), "1\n");
	/* LIGHT reads none; NEW_ATTRS does, as ATTRS. */
	put_proc("/902/cmdline", "web");
	CHECK(mgr_scan_start(mgr, SCAN_LIGHT) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(902), "\n");
	CHECK(mgr_scan_start(mgr, SCAN_NEW_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK_STR(psoft_of(902), "0\n");
	CHECK(mgr->cnt.evals == evals + 1);
	/* Gone: forgotten, as by every kind of scan. */
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/901", proc);
		CHECK(system(cmd) == 0);
	}
	CHECK(mgr_scan_start(mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(mgr) == 0);
	CHECK(mgr_lookup(mgr, 901) == NULL && mgr_processes(mgr) == 2);
	mgr_teardown(c, NULL);
}
