// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-rule figures from threads' schedstat and sched, bounded samples,
 * and the softness plan.  The cgroups' figures: unit-softness-cgroup.c.
 */
#include "daemon-internal.h"
#include "unit.h"

void test_mgr_sample(void)
{
	const struct rule_figures *f;
	struct config *c;

	fake_fixture();
	mktask(500, 500, "w", 10, 0, "0-3", "\n");
	mktask(500, 501, "w", 10, 0, "0-3", "\n");
	put_sched(500, 500, "1000000000 0 5\n", "0.0");
	put_sched(500, 501, "1000000000 0 5\n", "0.0");
	c = mgr_setup("rules = ( { name = \"w\"; comm = \"w\"; cpus = \"2-3\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1);
	tsample(1000, true); /* baselines */
	f = &tsoft[0].last;
	CHECK(f->threads == 2 && f->runtime_ns == 0);
	/* One second: each ran 0.6 s and waited 0.2 s; 0.3 s outside. */
	put_sched(500, 500, "1600000000 200000000 9\n", "300.0");
	put_sched(500, 501, "1600000000 200000000 9\n", "300.0");
	tsample(2000, true);
	CHECK(f->valid && f->processes == 1 && f->threads == 2);
	CHECK(f->interval_ns == 1000000000ULL);
	CHECK(f->runtime_ns == 1200000000ULL && f->delay_ns == 400000000ULL);
	CHECK(f->outside_ns == 600000000ULL);
	/* Without schedstats: the CPU last run on (the fixture's 0, not in
	 * 2-3) makes the whole interval's runtime count as outside. */
	put_sched(500, 500, "2000000000 200000000 9\n", "0.0");
	put_sched(500, 501, "1600000000 300000000 9\n", "0.0");
	tsample(3000, false);
	CHECK(f->runtime_ns == 400000000ULL && f->delay_ns == 100000000ULL);
	CHECK(f->outside_ns == 400000000ULL);
	/* A new thread starts with a baseline, not with its whole runtime. */
	mktask(500, 502, "w", 10, 0, "0-3", "\n");
	put_sched(500, 502, "5000000000 0 1\n", "0.0");
	tsample(4000, false);
	CHECK(f->threads == 3 && f->runtime_ns == 0);
	mgr_teardown(c, NULL);

	/* A fixed rule is sampled every 10 s only: an idle daemon stays idle. */
	fake_fixture();
	mktask(600, 600, "x", 10, 0, "0-3", "\n");
	put_sched(600, 600, "1000000000 0 5\n", "0.0");
	c = mgr_setup("rules = ( { name = \"x\"; comm = \"x\"; cpus = \"2-3\"; softness = \"20:1\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	f = &tsoft[0].last;
	tsample(1000, true);
	put_sched(600, 600, "3000000000 0 5\n", "0.0");
	tsample(2000, true);
	CHECK(!f->valid && f->runtime_ns == 0);
	tsample(11000, true);
	CHECK(f->valid && f->interval_ns == 10000000000ULL &&
	      f->runtime_ns == 2000000000ULL);
	mgr_teardown(c, NULL);
}

/* Every task of pid's first n threads has run ms more, in total. */
static void run_all(int pid, int n, unsigned int ms)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%llu 0 1\n",
		 (unsigned long long)ms * 1000000ULL);
	for (int t = 0; t < n; t++)
		put_sched(pid, pid + t, buf, "0.0");
}

/*
 * A rule over 200 processes samples 64 a time, a window that moves on
 * by a quarter, so all of them are met within a few intervals; what
 * the sample saw is scaled to the whole rule.  A process of 600
 * threads: 256 of them a time, scaled to 600.
 */
void test_mgr_sample_bounded(void)
{
	const struct rule_figures *f, *g;
	struct pidnode *n, *next;
	bool all = true;
	struct config *c;
	double want;

	fake_fixture();
	for (int p = 3000; p < 3200; p++) {
		mktask(p, p, "s", (unsigned)p, 0, "0-3", "\n");
		run_all(p, 1, 0);
	}
	for (int t = 0; t < 600; t++)
		mktask(5000, 5000 + t, "t", 9, 0, "0-3", "\n");
	run_all(5000, 600, 0);
	c = mgr_setup("rules = ( { name = \"s\"; comm = \"s\"; cpus = \"2-3\"; },"
		      " { name = \"t\"; comm = \"t\"; cpus = \"2-3\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 201);
	f = &tsoft[0].last;
	g = &tsoft[1].last;
	for (int i = 1; i <= 12; i++) {
		/* Each process and thread ran 100 ms more each second. */
		for (int p = 3000; p < 3200; p++)
			run_all(p, 1, 100 * (unsigned)i);
		run_all(5000, 600, 100 * (unsigned)i);
		tsample(1000 * (uint64_t)i, true);
		CHECK(f->processes == 64 && f->threads == 64);
		CHECK(g->processes == 1 && g->threads == 256);
		if (i == 1)
			continue;
		/* 48 of the 64 had a baseline: 200 x 100 ms, scaled. */
		want = 200 * 100e6;
		CHECK(f->runtime_ns > want * 0.99 && f->runtime_ns < want * 1.01);
		want = 600 * 100e6;
		CHECK(g->runtime_ns > want * 0.99 && g->runtime_ns < want * 1.01);
	}
	pidtable_for_each (&mgr->procs, n, next)
		all &= as_managed(n)->sampled_ms != 0;
	CHECK(all);
	mgr_teardown(c, NULL);
}

/*
 * F3: a rule's softness is the daemon's controller's alone.  Its plan
 * is a pure function of it: sampled every interval while adaptive and
 * awake, walked each time while softer than its hardest; the manager's
 * rules start with a hardest, awake rule's.  A reload keeps the
 * softness of the rules it keeps (config_rule_map), by name and
 * definition, wherever they move to, and starts the others over.
 */
void test_softness_plan(void)
{
	static const struct {
		enum soft_kind kind;
		unsigned int rung;
		bool asleep, every, soft;
	} t[] = {
		{SOFT_ADAPTIVE, 0, false, true, false},
		{SOFT_ADAPTIVE, 2, false, true, true},
		{SOFT_ADAPTIVE, 0, true, false, false},
		{SOFT_FIXED, 0, false, false, false},
		{SOFT_FIXED, 1, false, false, false},
	};
	struct rule_softness *soft, *soft2;
	struct config *c1, *c2;
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct rule r = {.softness = {.kind = t[i].kind}};
		struct rulectl_state s = {.rung = t[i].rung};
		struct rulectl_plan p = rulectl_plan(&r, &s, t[i].asleep);

		CHECK(p.every == t[i].every && p.soft == t[i].soft);
	}
	fake_fixture();
	c1 = mgr_setup("rules = ( { name = \"a\"; comm = \"a\"; cpus = \"0\"; },"
		       " { name = \"b\"; comm = \"b\"; cpus = \"1\"; } );");
	c2 = load("rules = ( { name = \"c\"; comm = \"c\"; cpus = \"0\"; },"
		  " { name = \"b\"; comm = \"b\"; cpus = \"1\"; },"
		  " { name = \"a\"; comm = \"a\"; cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(c1 && c2);
	if (!c1 || !c2) {
		mgr_teardown(c1, c2);
		return;
	}
	CHECK(mgr->rules[0].plan.every && !mgr->rules[0].plan.soft);
	soft = softness_rules_new(NULL, NULL, c1);
	CHECK(soft && !soft[0].ctl.rung && !soft[1].asleep);
	if (!soft) {
		mgr_teardown(c1, c2);
		return;
	}
	soft[0].ctl.rung = 3;
	soft[1].ctl.rung = 2;
	soft[1].asleep = true;
	snprintf(soft[1].why, sizeof(soft[1].why), "b's");
	soft2 = softness_rules_new(c1, soft, c2);
	/* b kept (now second), a changed its CPUs: over. */
	CHECK(soft2 && soft2[1].ctl.rung == 2 && soft2[1].asleep &&
	      !strcmp(soft2[1].why, "b's"));
	CHECK(soft2 && !soft2[0].ctl.rung && !soft2[2].ctl.rung &&
	      !soft2[2].why[0]);
	free(soft);
	free(soft2);
	mgr_teardown(c1, c2);
}
