// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sample of the rules' threads (manager-figures.c): woken by the
 * system's CPU pressure, within one budget for all rules.
 */
#include "unit.h"

#define RULE_W "rules = ( { name = \"w\"; comm = \"w\"; cpus = \"2-3\"; } );"

/* /proc/pressure/cpu with "some" total= some_us. */
static void put_pressure(uint64_t some_us)
{
	put_proc("/pressure/cpu", psi_text(some_us));
}

/* Each of pid's first n threads has run ms in all, waited a tenth. */
static void put_run(int pid, int n, unsigned int ms)
{
	char rel[128], buf[64];

	snprintf(buf, sizeof(buf), "%llu %llu 1\n",
		 (unsigned long long)ms * 1000000ULL,
		 (unsigned long long)ms * 100000ULL);
	for (int t = 0; t < n; t++) {
		snprintf(rel, sizeof(rel), "/%d/task/%d/schedstat", pid,
			 pid + t);
		put_proc(rel, buf);
	}
}

/* Thread reads of one sample at now. */
static uint64_t sample_reads(uint64_t now)
{
	uint64_t before = mgr->cnt.sampled_threads;

	tsample(now, false);
	return mgr->cnt.sampled_threads - before;
}

/*
 * Below the trigger (a tenth of soften_wait, 1%), a rule at its
 * hardest reads no thread and has a calm interval, which the law holds
 * on; above it, or softer than its hardest, the threads are read.
 */
void test_sample_psi_gate(void)
{
	const struct rule_figures *f;
	struct rulectl_params p;
	struct rulectl_sample in;
	struct tsoft *rs;
	struct config *c;
	uint64_t some = 5000000;
	char why[160];

	fake_fixture();
	mktask(500, 500, "w", 10, 0, "0-3", "\n");
	mktask(500, 501, "w", 10, 0, "0-3", "\n");
	put_run(500, 2, 100);
	put_pressure(some);
	c = mgr_setup(RULE_W);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1);
	rs = (&tsoft[0]);
	f = &rs->last;
	rulectl_params_default(c, &p);
	/* The first read of the pressure is a baseline: the threads too. */
	CHECK(sample_reads(1000) == 2 && f->source == WAIT_THREADS);
	/* Nobody waited for a second: no thread read, a calm interval. */
	put_run(500, 2, 700);
	CHECK(sample_reads(2000) == 0);
	CHECK(rs->sampled_now && f->valid && f->calm &&
	      f->source == WAIT_SYSTEM && f->delay_ns == 0 && f->threads == 2);
	in = rule_sample(f);
	CHECK(in.calm && rulectl_wait(&in) == 0);
	CHECK(rulectl_step(&p, &rs->ctl, &in, why, sizeof(why)) ==
		      RULECTL_HOLD &&
	      rs->ctl.rung == 0 && strstr(why, "calm"));
	/* 0.9% of the second: still calm. */
	some += 9000;
	put_pressure(some);
	CHECK(sample_reads(3000) == 0 && f->calm);
	/* Half the second: the threads, and their wait since their last. */
	some += 500000;
	put_pressure(some);
	put_run(500, 2, 1300);
	CHECK(sample_reads(4000) == 2 && !f->calm &&
	      f->source == WAIT_THREADS);
	/* 1.1%: above the trigger. */
	some += 11000;
	put_pressure(some);
	put_run(500, 2, 1400);
	CHECK(sample_reads(5000) == 2 && f->valid && !f->calm &&
	      f->runtime_ns == 200000000ULL && f->delay_ns == 20000000ULL);
	/* Softer than its hardest: whether it hardens needs its threads. */
	rs->ctl.rung = 2;
	CHECK(sample_reads(6000) == 2 && !f->calm);
	/* A calm sample counts towards hardening there. */
	in = (struct rulectl_sample){.interval_ns = 1000000000ULL,
				     .runtime_ns = 1000000000ULL,
				     .outside_ns = 500000000ULL,
				     .outside_cpus = 2, .calm = true};
	rs->ctl.calm = 0;
	CHECK(rulectl_step(&p, &rs->ctl, &in, why, sizeof(why)) ==
		      RULECTL_HOLD &&
	      rs->ctl.calm == 1);
	mgr_teardown(c, NULL);
}

/*
 * Without /proc/pressure/cpu (no PSI; psi=0 fails the read), or with
 * one that cannot be read, every interval reads the threads as before.
 */
void test_sample_no_psi(void)
{
	const struct rule_figures *f;
	struct config *c;

	fake_fixture();
	mktask(500, 500, "w", 10, 0, "0-3", "\n");
	put_run(500, 1, 100);
	c = mgr_setup(RULE_W);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	f = &(&tsoft[0])->last;
	for (uint64_t t = 1000; t <= 3000; t += 1000) {
		CHECK(sample_reads(t) == 1 && !f->calm);
		CHECK(f->source == WAIT_THREADS);
	}
	CHECK(mgr->psi.off && mgr->psi.err == -ENOENT);
	mgr_teardown(c, NULL);

	/* Unreadable, not missing: sampled, and tried again each time. */
	fake_fixture();
	mktask(500, 500, "w", 10, 0, "0-3", "\n");
	put_run(500, 1, 100);
	put_proc("/pressure/cpu/x", "");
	c = mgr_setup(RULE_W);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(sample_reads(1000) == 1 && sample_reads(2000) == 1);
	CHECK(!mgr->psi.off);
	mgr_teardown(c, NULL);
}

/* nrules rules "rNN", per processes of one thread each, from pid 10000. */
static struct config *many_rules(unsigned int nrules, int per)
{
	struct sbuf conf = {0};
	struct config *c;
	char comm[16];

	fake_fixture();
	sbuf_printf(&conf, "rules = (");
	for (unsigned int r = 0; r < nrules; r++) {
		snprintf(comm, sizeof(comm), "r%03u", r);
		sbuf_printf(&conf, "%s{ name = \"%s\"; comm = \"%s\"; "
			    "cpus = \"2-3\"; }", r ? ", " : " ", comm, comm);
		for (int i = 0; i < per; i++) {
			int pid = 10000 + (int)r * 100 + i;

			mktask(pid, pid, comm, (unsigned long long)pid, 0,
			       "0-3", "\n");
			put_run(pid, 1, 0);
		}
	}
	sbuf_printf(&conf, " );");
	c = mgr_setup(conf.buf);
	sbuf_free(&conf);
	return c;
}

/*
 * 50 rules of 40 processes: no interval reads more than the budget for
 * all of them, each rule gets its share every interval, and every
 * process is sampled within a few intervals.  With 100 rules, more than
 * the budget has shares for, the rules take turns: each is sampled at
 * least every other interval.
 */
void test_sample_budget(void)
{
	struct pidnode *n, *next;
	unsigned int all_at = 0;
	uint64_t reads, most = 0;
	struct config *c;

	c = many_rules(50, 40);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 2000);
	for (unsigned int i = 1; i <= 12 && !all_at; i++) {
		bool all = true, each = true;

		reads = sample_reads(1000 * (uint64_t)i);
		most = reads > most ? reads : most;
		for (unsigned int r = 0; r < 50; r++)
			each &= (&tsoft[r])->sampled_now &&
				(&tsoft[r])->last.threads > 0;
		CHECK(each);
		pidtable_for_each (&mgr->procs, n, next)
			all &= as_managed(n)->sampled_ms != 0;
		if (all)
			all_at = i;
	}
	if (most > MGR_SAMPLE_BUDGET || !all_at || all_at > 6)
		printf("# most %llu threads an interval; all sampled by %u\n",
		       (unsigned long long)most, all_at);
	CHECK(most <= MGR_SAMPLE_BUDGET && most >= MGR_SAMPLE_BUDGET * 9 / 10);
	CHECK(all_at && all_at <= 6);
	mgr_teardown(c, NULL);

	c = many_rules(100, 20);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 2000);
	{
		uint64_t last[100] = {0};

		for (unsigned int i = 1; i <= 6; i++) {
			uint64_t now = 1000 * (uint64_t)i;

			CHECK(sample_reads(now) <= MGR_SAMPLE_BUDGET);
			for (unsigned int r = 0; r < 100; r++) {
				if ((&tsoft[r])->sampled_now)
					last[r] = now;
				CHECK(i == 1 || now - last[r] <= 1000);
			}
		}
	}
	mgr_teardown(c, NULL);
}
