// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bounded work: log rate limits, time budgets, thread ownership, the
 * dirty queue, and resets put off to it.
 */
#include "unit.h"
#include "daemon-internal.h"

void test_ratelimit(void)
{
	struct log_ratelimit rl = {0};
	struct rule_log l = {0};
	unsigned long infos, warns;
	int ok = 0;

	for (int i = 0; i < 100; i++)
		ok += log_ratelimit(&rl, 5000, LOG_INFO, "x");
	CHECK(ok == LOG_RL_BURST && rl.suppressed == 100 - LOG_RL_BURST);
	infos = log_counts[LOG_INFO];
	log_ratelimit_flush(&rl, 5000 + LOG_RL_WINDOW_MS / 2, LOG_INFO, "x");
	CHECK(log_counts[LOG_INFO] == infos && rl.suppressed);
	/* The window over: one line says how many were dropped. */
	CHECK(log_ratelimit(&rl, 5000 + LOG_RL_WINDOW_MS, LOG_INFO, "x"));
	CHECK(log_counts[LOG_INFO] == infos + 1 && !rl.suppressed);

	/*
	 * A rule's warnings about single processes: each kind has a limit
	 * of its own, apart from the info lines', so a flood of one kind
	 * silences no other.  Past it, the debug log.
	 */
	ok = 0;
	for (int i = 0; i < 30; i++)
		ok += rule_log_warn(&l, "r", RULE_WARN_EMPTY, 5000) ==
		      LOG_WARNING;
	CHECK(ok == LOG_RL_BURST);
	CHECK(rule_log_warn(&l, "r", RULE_WARN_EMPTY, 5000) == LOG_DEBUG);
	CHECK(rule_log_warn(&l, "r", RULE_WARN_EPERM, 5000) == LOG_WARNING);
	CHECK(rule_log_warn(&l, "r", RULE_WARN_CGROUP, 5000) == LOG_WARNING);
	CHECK(rule_log_info(&l, "r", 5000) == LOG_INFO);
	/* Then one warning says how many of the kind were suppressed. */
	warns = log_counts[LOG_WARNING];
	infos = log_counts[LOG_INFO];
	rule_log_flush(&l, "r", 5000 + LOG_RL_WINDOW_MS - 1);
	CHECK(log_counts[LOG_WARNING] == warns);
	rule_log_flush(&l, "r", 5000 + LOG_RL_WINDOW_MS);
	CHECK(log_counts[LOG_WARNING] == warns + 1 &&
	      log_counts[LOG_INFO] == infos);
	CHECK(!l.warn[RULE_WARN_EMPTY].suppressed);
	CHECK(rule_log_warn(&l, "r", RULE_WARN_EMPTY,
			    5000 + LOG_RL_WINDOW_MS) == LOG_WARNING);
	CHECK(log_counts[LOG_WARNING] == warns + 1);
}

void test_budget(void)
{
	struct budget b = {100, 1000, 0, 0};

	CHECK(budget_left(&b, 5000) == 100 && b.start_ms == 5000);
	budget_charge_since(&b, monotonic_ns() - 60000000);
	CHECK(budget_left(&b, 5500) == 39 || budget_left(&b, 5500) == 40);
	/* Slices shorter than a ms add up: 40 of 0.9 ms leave 3 ms at most. */
	for (int i = 0; i < 40; i++)
		budget_charge_since(&b, monotonic_ns() - 900000);
	CHECK(budget_left(&b, 5600) <= 3);
	budget_charge_since(&b, monotonic_ns() - 5000000);
	CHECK(budget_left(&b, 5999) == 0 && budget_renews(&b) == 6000);
	CHECK(budget_left(&b, 6000) == 100);
}

/* Connector-mode walks: every 6 periods, or 2000 times their time. */
void test_walk_gap(void)
{
	CHECK(walk_gap_ms(10000, 0) == 60000);
	CHECK(walk_gap_ms(10000, 9000000) == 60000); /* 9 ms: 18 s */
	CHECK(walk_gap_ms(10000, 50000000) == 100000);
	CHECK(walk_gap_ms(500, 80500000) == 161000);
}

void test_owned(void)
{
	struct owned o = {0};
	int tids[] = {10, 12};

	owned_remember(&o, 12, false);
	owned_remember(&o, 10, true);
	CHECK(o.nhand == 1);
	owned_remember(&o, 11, true);
	CHECK(o.nthreads == 3 && o.threads[0].tid == 10 && o.nhand == 2);
	owned_remember(&o, 11, true); /* again: no change */
	CHECK(o.nhand == 2);
	owned_forget(&o, 11);
	CHECK(o.nhand == 1);
	owned_remember(&o, 10, false);
	CHECK(!o.nhand);
	owned_remember(&o, 11, true);
	CHECK(o.nhand == 1);
	owned_prune(&o, tids, 2);
	CHECK(o.nthreads == 2 && !o.nhand);
	owned_remember(&o, 12, true);
	owned_keep_hand(&o);
	CHECK(o.nthreads == 1 && o.threads[0].tid == 12 && o.nhand == 1);
	owned_clear(&o);
	CHECK(!o.threads && !o.nhand);
}

void test_dirtyq(void)
{
	int want[] = {50, 30, 20, 10}, got[8], n = 0;
	unsigned int why[8];
	struct dirtyq q;
	struct dirty d;

	CHECK(dirtyq_init(&q) == 0);
	/* First in, first out; marked again, a pid keeps its place. */
	for (int pid = 50; pid > 0; pid -= 10)
		CHECK(dirtyq_mark(&q, pid, 1, 0) == 0);
	CHECK(dirtyq_mark(&q, 50, 2, 7) == 0 && dirtyq_mark(&q, 30, 4, 0) == 0);
	CHECK(dirtyq_mark(&q, 50, 0, 0) == 0);
	CHECK(dirtyq_count(&q) == 5);
	/* An exit takes it out wherever it waits. */
	dirtyq_remove(&q, 40);
	dirtyq_remove(&q, 99);
	CHECK(dirtyq_count(&q) == 4 && !dirtyq_find(&q, 40));
	while (n < 8 && dirtyq_pop(&q, &d)) {
		why[n] = d.why;
		got[n++] = d.node.pid;
		if (d.node.pid == 50)
			CHECK(d.inherit == 7);
	}
	CHECK(n == 4 && !memcmp(got, want, sizeof(want)));
	CHECK(why[0] == 3 && why[1] == 5 && why[2] == 1);
	CHECK(!dirtyq_count(&q) && !q.head && !q.tail);

	/* Out of the front and the back; the links stay whole. */
	for (int pid = 1; pid <= 3; pid++)
		dirtyq_mark(&q, pid, 1, 0);
	dirtyq_remove(&q, 1);
	dirtyq_remove(&q, 3);
	dirtyq_mark(&q, 4, 1, 0);
	CHECK(dirtyq_pop(&q, &d) && d.node.pid == 2);
	CHECK(dirtyq_pop(&q, &d) && d.node.pid == 4);
	CHECK(!dirtyq_pop(&q, &d) && !q.head && !q.tail);

	/* A storm's worth, dropped at once (a reload), then reused. */
	for (int pid = 1; pid <= 3000; pid++)
		dirtyq_mark(&q, pid, 1, 0);
	CHECK(q.table.nbuckets > 256);
	dirtyq_clear(&q);
	CHECK(!dirtyq_count(&q) && !q.head && q.table.nbuckets == 256);
	dirtyq_mark(&q, 7, 1, 0);
	CHECK(dirtyq_pop(&q, &d) && d.node.pid == 7 && !dirtyq_count(&q));
	dirtyq_mark(&q, 8, 1, 0);
	dirtyq_done(&q);
}

/*
 * No starvation: a drain of k pids per turn (the budget) while marks
 * keep coming faster, new pids at the back and pids that wait already.
 * Every pid waiting at the start of a turn, among n, is drained within
 * ceil(n / k) turns.  (The hash-bucket order this replaced met the
 * storm's low buckets first every turn.)
 */
void test_dirtyq_no_starvation(void)
{
	enum { PIDS = 512, K = 7, TURNS = 600 };
	static int due[PIDS]; /* the last turn it may be drained in */
	unsigned int seed = 1;
	size_t longest = 0;
	int late = 0, drained = 0;
	struct dirtyq q;
	struct dirty d;

	CHECK(dirtyq_init(&q) == 0);
	for (int p = 0; p < PIDS; p++)
		due[p] = -1;
	for (int p = 1; p < 100; p++)
		dirtyq_mark(&q, p, 1, 0);
	for (int t = 0; t < TURNS; t++) {
		size_t n = dirtyq_count(&q);
		int by = t + (int)((n + K - 1) / K) - 1;

		if (n > longest)
			longest = n;
		for (struct dirty *e = q.head; e; e = e->next)
			if (due[e->node.pid] < 0 || due[e->node.pid] > by)
				due[e->node.pid] = by;
		for (int i = 0; i < K && dirtyq_pop(&q, &d); i++) {
			late += due[d.node.pid] < t;
			due[d.node.pid] = -1;
			drained++;
		}
		/* Three marks for every drain: the storm outpaces it. */
		for (int i = 0; i < 3 * K; i++) {
			int pid;

			seed = seed * 1103515245u + 12345u;
			pid = 1 + (int)((seed >> 16) % (PIDS - 1));
			dirtyq_mark(&q, pid, 1, 0);
		}
	}
	/* Still waiting past its turn counts as late too. */
	for (int p = 0; p < PIDS; p++)
		late += due[p] >= 0 && due[p] < TURNS - 1;
	CHECK(late == 0);
	CHECK(drained == K * TURNS && longest > 40 * K);
	dirtyq_done(&q);
}

/*
 * F7: threads = "main", a process with more threads than one evaluation
 * visits (MGR_WALK_CAP) leaves its rule (its owner renames it): the
 * threads are reset a cap at a time from the dirty queue, not all in
 * the evaluation of the rename.
 */
void test_threads_main_leave_capped(void)
{
	const int n = MGR_WALK_CAP + 44;
	struct config *c;
	int left;

	fake_fixture();
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; threads = \"main\"; } );");
	if (!c)
		return;
	for (int t = 0; t < n; t++)
		mktask(2000, 2000 + t, "app", 20, 0, "0-3", "\n");
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1);
	mgr_flush(mgr, UINT64_MAX);
	CHECK_STR(soft_of(2000, 2000), "0-1\n");
	/* Every thread carries the rule's mask (as if inherited). */
	for (int t = 1; t < n; t++)
		mktask(2000, 2000 + t, "app", 20, 0, "0-3", "0-1\n");
	mktask(2000, 2000, "other", 20, 0, "0-3", NULL);
	mgr_on_change(mgr, 2000);
	/* The rename's evaluation: a cap of threads reset, the rest queued. */
	mgr_flush(mgr, 0);
	CHECK(!mgr_lookup(mgr, 2000));
	left = 0;
	for (int t = 0; t < n; t++)
		left += !strcmp(soft_of(2000, 2000 + t), "0-1\n");
	CHECK(left == n - MGR_WALK_CAP && mgr_dirty_count(mgr) == 1);
	/* The rest, from the queue. */
	CHECK(mgr_flush(mgr, UINT64_MAX));
	left = 0;
	for (int t = 0; t < n; t++)
		left += !strcmp(soft_of(2000, 2000 + t), "0-1\n");
	CHECK(left == 0);
	mgr_teardown(c, NULL);
}

/* Interned sets: one copy per distinct set, freed with its last user. */
void test_setpool(void)
{
	struct setpool p = {0};
	const struct cpuset *a, *b, *c, *many[100];
	struct cpureq_ref ref = {REQ_INHERIT, NULL};
	struct cpureq q;
	struct cpuset s;

	cpuset_parse_list("0-3", &s);
	a = setpool_get(&p, &s);
	b = setpool_get(&p, &s);
	CHECK(a && a == b && a != &s && p.count == 1);
	CHECK(setpool_ref(a) == a && setpool_ref(NULL) == NULL);
	cpuset_parse_list("4", &s);
	c = setpool_get(&p, &s);
	CHECK(c && c != a && p.count == 2);
	setpool_put(&p, a);
	setpool_put(&p, a);
	CHECK(p.count == 2 && cpuset_count(a) == 4); /* one reference left */
	setpool_put(&p, a);
	CHECK(p.count == 1);
	setpool_put(&p, NULL);

	/* assign: the same set keeps its reference, another moves it. */
	CHECK(setpool_assign(&p, &c, &s) == 0 && p.count == 1);
	cpuset_parse_list("5", &s);
	CHECK(setpool_assign(&p, &c, &s) == 0 && p.count == 1 &&
	      cpuset_test(c, 5));
	CHECK(setpool_assign(&p, &c, NULL) == 0 && !c && p.count == 0);

	/* A request: its CPUs interned only while it is set. */
	cpuset_parse_list("0-1", &s);
	q = (struct cpureq){.state = REQ_SET, .cpus = s};
	CHECK(setpool_req_set(&p, &ref, &q) == 0 && ref.cpus &&
	      p.count == 1);
	q = cpureq_of_ref(&ref);
	CHECK(q.state == REQ_SET && cpuset_equal(&q.cpus, &s));
	q = (struct cpureq){.state = REQ_NONE};
	CHECK(setpool_req_set(&p, &ref, &q) == 0 && !ref.cpus &&
	      ref.state == REQ_NONE && p.count == 0);

	/* Past the first buckets: every set still found, once. */
	for (unsigned int i = 0; i < 100; i++) {
		cpuset_zero(&s);
		cpuset_set(&s, i);
		many[i] = setpool_get(&p, &s);
	}
	CHECK(p.count == 100 && p.nbuckets >= 100);
	for (unsigned int i = 0; i < 100; i++) {
		cpuset_zero(&s);
		cpuset_set(&s, i);
		CHECK(setpool_get(&p, &s) == many[i]);
		setpool_put(&p, many[i]);
	}
	CHECK(p.count == 100);
	setpool_done(&p);
	CHECK(p.count == 0 && !p.buckets);
}
