// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * L7: a restarted daemon resumes each adaptive rule at the rung of the
 * ratio its processes (or cgroups) had, instead of hardening them all.
 */
#include "unit.h"

#include "daemon-internal.h"

void test_rulectl_resume(void)
{
	struct config *c;
	struct rulectl_params p;
	struct ratio_tally t = {0};
	char err[256];
	unsigned int soft;

	c = load("rules = ( { name = \"a\"; comm = \"a\"; cpus = \"0\"; } );",
		 err, sizeof(err));
	CHECK(c != NULL);
	if (!c)
		return;
	rulectl_params_default(c, &p);
	soft = p.nrungs - 1;
	CHECK(ratio_equal(p.ladder[soft], (struct ratio){5, 4}));
	/* Nothing found: the hardest, as a new rule starts. */
	CHECK(rulectl_resume(&p, &t) == 0);
	ratio_tally_add(&t, (struct ratio){5, 4});
	ratio_tally_add(&t, (struct ratio){5, 4});
	CHECK(t.kinds == 1 && t.n[0] == 2 && rulectl_resume(&p, &t) == soft);
	/* A tie: the harder. */
	ratio_tally_add(&t, (struct ratio){20, 1});
	ratio_tally_add(&t, (struct ratio){20, 1});
	CHECK(ratio_equal(p.ladder[rulectl_resume(&p, &t)],
			  (struct ratio){20, 1}));
	/* More processes at a ratio off the ladder count for nothing. */
	for (int i = 0; i < 5; i++)
		ratio_tally_add(&t, (struct ratio){7, 3});
	CHECK(ratio_equal(p.ladder[rulectl_resume(&p, &t)],
			  (struct ratio){20, 1}));
	ratio_tally_add(&t, (struct ratio){5, 4});
	CHECK(rulectl_resume(&p, &t) == soft);
	/* Past RULECTL_TALLY distinct ratios, new ones are not counted. */
	for (unsigned int i = 0; i < 2 * RULECTL_TALLY; i++)
		ratio_tally_add(&t, (struct ratio){1000 + i, 1});
	CHECK(t.kinds == RULECTL_TALLY);
	config_free(c);
}

/* pid's own ratio as a predecessor left it, as its status shows it. */
static void had_ratio(int pid, const char *ratio)
{
	char rel[64], buf[512];

	snprintf(rel, sizeof(rel), "/%d/soft_affinity_ratio", pid);
	snprintf(buf, sizeof(buf), "%s\n", ratio);
	put_proc(rel, *ratio ? buf : "\n");
	snprintf(buf, sizeof(buf),
		 "Name:\tapp\nState:\tS (sleeping)\n"
		 "Uid:\t1000\t1000\t1000\t1000\nThreads:\t1\n"
		 "Cpus_allowed_list:\t0-3\nCpus_preferred_source:\tnone\n"
		 "Cpus_preferred_ratio:\t%s\n"
		 "Cpus_preferred_ratio_source:\t%s\n",
		 *ratio ? ratio : "100:1", *ratio ? "process" : "default");
	snprintf(rel, sizeof(rel), "/%d/status", pid);
	put_proc(rel, buf);
}

/* The daemon's side: its softness state, and the first scan's end. */
static void resume(struct daemon *d, struct config *c)
{
	d->cfg = c;
	d->mgr = mgr;
	d->soft = softness_rules_new(NULL, NULL, c);
	rulectl_params_default(c, &d->rctl);
	if (d->soft)
		softness_resume(d);
}

void test_resume_rung(void)
{
	const char *cg = "/fs/cgroup/system.slice/test.service/";
	static struct daemon d;
	struct ratio_tally t;
	char rel[PATH_MAX];
	struct config *c;
	int writes;

	/*
	 * Three processes a predecessor softened to 5:4, one started since
	 * (no ratio of its own), under an adaptive rule.  The first scan
	 * counts and writes no ratio: a restart used to write the hardest,
	 * 100:1, over theirs.
	 */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	for (int pid = 900; pid < 904; pid++) {
		mktask(pid, pid, "app", 90, 0, "0-3", "\n");
		had_ratio(pid, pid < 903 ? "5:4" : "");
	}
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	mgr_resume_start(mgr);
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 4);
	CHECK_STR(ratio_of(900), "5:4\n");
	CHECK_STR(ratio_of(903), "\n");
	CHECK(mgr_counters(mgr)->ratio_written == 0);
	CHECK(mgr_rule_found(mgr, 0, &t) && t.kinds == 1 && t.n[0] == 3);
	/* Ready: the rule resumes at 5:4, written only where it was not. */
	writes = fake_writes;
	resume(&d, c);
	CHECK(d.soft && ratio_equal(rulectl_ratio(&d.rctl, &d.soft[0].ctl),
				    (struct ratio){5, 4}));
	CHECK(ratio_equal(mgr_rule_ratio(mgr, 0), (struct ratio){5, 4}));
	CHECK(!mgr_rule_found(mgr, 0, &t));
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK(fake_writes == writes + 1);
	CHECK_STR(ratio_of(900), "5:4\n");
	CHECK_STR(ratio_of(903), "5:4\n");
	/* Ours now: a stop puts them all back. */
	mgr_restore_all(mgr);
	CHECK_STR(ratio_of(900), "\n");
	CHECK_STR(ratio_of(903), "\n");
	free(d.soft);
	mgr_teardown(c, NULL);

	/* Nothing on the ladder: the hardest, written to all, as before. */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(910, 910, "app", 91, 0, "0-3", "\n");
	had_ratio(910, "");
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	mgr_resume_start(mgr);
	CHECK(mgr_scan(mgr) == 0);
	resume(&d, c);
	CHECK(d.soft && d.soft[0].ctl.rung == 0);
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK_STR(ratio_of(910), "100:1\n");
	free(d.soft);
	mgr_teardown(c, NULL);

	/*
	 * A unit rule: the cgroup's ratio counts and stays while the mask
	 * is written; then the rung is resumed, and a softening later is
	 * not taken for someone else's change.
	 */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(800, 800, "svc", 10, 0, "0-3", "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	put_sys(rel, "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	put_sys(rel, "20:1\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 1 ]; } );");
	if (!c)
		return;
	mgr_resume_start(mgr);
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	CHECK_STR(get_at(sys, rel), "2-3\n");
	resume(&d, c);
	CHECK(ratio_equal(mgr_rule_ratio(mgr, 0), (struct ratio){20, 1}));
	CHECK(mgr_set_rule_ratio(mgr, 0, (struct ratio){5, 4}) == 1);
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	CHECK_STR(get_at(sys, rel), "5:4\n");
	CHECK(!mgr->cgs[0].foreign);
	/* Stop: what it had before this daemon. */
	mgr_restore_all(mgr);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	free(d.soft);
	mgr_teardown(c, NULL);
}
