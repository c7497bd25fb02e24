// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writes: a thread's mask and a process's ratio, claims and
 * restores; the ratio actuators of rules on processes and on cgroups.
 */
#include "unit.h"

/* aff_apply_thread() and aff_restore_thread() on the fixture's pid. */
static enum aff_result apply_t(int pid, int tid, const struct cpuset *target,
			       enum aff_claim claim, bool dry_run, int *err)
{
	int pfd = procfs_open_pid(proc, pid);
	enum aff_result r;

	if (pfd < 0) {
		*err = pfd;
		return aff_classify(pfd);
	}
	r = aff_apply_thread(NULL, pfd, tid, target, claim,
			     dry_run ? AFF_MODE_DRY_RUN : AFF_MODE_WRITE, err);
	close(pfd);
	return r;
}

static enum aff_result restore_t(int pid, int tid, const struct cpuset *target,
				 bool dry_run, int *err)
{
	int pfd = procfs_open_pid(proc, pid);
	enum aff_result r;

	if (pfd < 0) {
		*err = pfd;
		return aff_classify(pfd);
	}
	r = aff_restore_thread(NULL, pfd, tid, target,
			       dry_run ? AFF_MODE_DRY_RUN : AFF_MODE_WRITE, err);
	close(pfd);
	return r;
}

void test_affinity(void)
{
	struct cpuset target;
	int err;

	fake_fixture();
	cpuset_parse_list("0-1", &target);

	/* Plain apply, then the same again is skipped without a write. */
	mktask(100, 100, "worker", 1, 0, "0-3", "\n");
	CHECK(apply_t(100, 100, &target, AFF_ADOPT, false,
			       &err) == AFF_WRITTEN);
	CHECK_STR(soft_of(100, 100), "0-1\n");
	CHECK(fake_writes == 1);
	CHECK(apply_t(100, 100, &target, AFF_ADOPT, false,
			       &err) == AFF_UNCHANGED);
	CHECK(fake_writes == 1);

	/*
	 * Target is written as it is: the kernel applies its part within
	 * the hard mask, and reads back exactly what was written.
	 */
	mktask(101, 101, "w", 1, 0, "1-3", "\n");
	CHECK(apply_t(101, 101, &target, AFF_ADOPT, false,
			       &err) == AFF_WRITTEN);
	CHECK_STR(soft_of(101, 101), "0-1\n");

	/* Empty intersection: no write. */
	mktask(102, 102, "w", 1, 0, "2-3", "\n");
	fake_writes = 0;
	CHECK(apply_t(102, 102, &target, AFF_ADOPT, false,
			       &err) == AFF_EMPTY);
	CHECK(fake_writes == 0);

	/*
	 * L2: an RT thread takes a request like any other: the kernel keeps
	 * it and applies it once the thread is back in a fair class.
	 */
	mktask(103, 103, "rt", 1, 1, "0-3", "\n");
	CHECK(apply_t(103, 103, &target, AFF_ADOPT, false,
			       &err) == AFF_WRITTEN);
	CHECK(fake_writes == 1);
	CHECK_STR(soft_of(103, 103), "0-1\n");
	fake_writes = 0;

	/* Dry run decides but does not write. */
	mktask(104, 104, "w", 1, 0, "0-3", "\n");
	CHECK(apply_t(104, 104, &target, AFF_ADOPT, true,
			       &err) == AFF_WRITTEN);
	CHECK(fake_writes == 0);
	CHECK_STR(soft_of(104, 104), "\n");

	/* Error classes from the write seam. */
	fake_err = -EPERM;
	CHECK(apply_t(104, 104, &target, AFF_ADOPT, false,
			       &err) == AFF_EPERM &&
	      err == -EPERM);
	fake_err = -EINVAL;
	CHECK(apply_t(104, 104, &target, AFF_ADOPT, false,
			       &err) == AFF_EINVAL);
	fake_err = -ESRCH;
	CHECK(apply_t(104, 104, &target, AFF_ADOPT, false,
			       &err) == AFF_GONE);
	fake_err = -EIO;
	CHECK(apply_t(104, 104, &target, AFF_ADOPT, false,
			       &err) == AFF_ERROR &&
	      err == -EIO);
	fake_err = 0;
	/* A thread that vanished: gone, silently. */
	CHECK(apply_t(104, 999, &target, AFF_ADOPT, false,
			       &err) == AFF_GONE);
	CHECK(aff_classify(-ENOENT) == AFF_GONE);
	CHECK(aff_classify(-EACCES) == AFF_EPERM);

	/* Restore: ours is reset to inherit ... */
	CHECK(restore_t(100, 100, &target, false, &err) ==
	      AFF_WRITTEN);
	CHECK_STR(soft_of(100, 100), "\n");
	CHECK(restore_t(100, 100, &target, false, &err) ==
	      AFF_UNCHANGED);
	/* ... and a mask someone else set after us is left alone. */
	mktask(105, 105, "w", 1, 0, "0-3", "3\n");
	CHECK(restore_t(105, 105, &target, false, &err) ==
	      AFF_FOREIGN);
	CHECK_STR(soft_of(105, 105), "3\n");

	/* Feature probe. */
	CHECK(aff_probe(proc) == -ENOENT);
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/self/soft_affinity", proc);
		put(path, "f\n");
		CHECK(aff_probe(proc) == 0);
	}
	kfile_write = write_file_plug;
}

void test_aff_decide(void)
{
	/* Rule target 0-1 throughout; req is the thread's own file. */
	static const struct {
		const char *hard, *req;
		enum aff_claim claim;
		enum aff_result want;
	} cases[] = {
		/* Inherit, where threads start: every claim but ours. */
		{"0-3", "\n", AFF_ADOPT, AFF_WRITTEN},
		{"0-3", "\n", AFF_NEW, AFF_WRITTEN},
		/* ... on a thread we set, someone undid ours. */
		{"0-3", "\n", AFF_OURS, AFF_FOREIGN},
		/* Another request, none too: only adoption overwrites it. */
		{"0-3", "3\n", AFF_ADOPT, AFF_WRITTEN},
		{"0-3", "3\n", AFF_NEW, AFF_FOREIGN},
		{"0-3", "3\n", AFF_OURS, AFF_FOREIGN},
		{"0-3", "none\n", AFF_NEW, AFF_FOREIGN},
		{"0-3", "none\n", AFF_OURS, AFF_FOREIGN},
		/* Written as is, whole hard mask or not: exact from then on. */
		{"0-3", "0-3\n", AFF_OURS, AFF_FOREIGN},
		{"0-3", "0-1\n", AFF_OURS, AFF_UNCHANGED},
		{"0-3", "0-1\n", AFF_NEW, AFF_UNCHANGED},
		{"1", "0-1\n", AFF_OURS, AFF_UNCHANGED},
		{"1-3", "1\n", AFF_OURS, AFF_FOREIGN},
		/* The hard mask excludes the target: nothing to write. */
		{"2-3", "\n", AFF_ADOPT, AFF_EMPTY},
		{"2-3", "0-1\n", AFF_OURS, AFF_EMPTY},
	};
	struct cpuset hard, target;
	struct cpureq req;

	cpuset_parse_list("0-1", &target);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cpuset_parse_list(cases[i].hard, &hard);
		CHECK(cpureq_parse_list(cases[i].req, &req) == 0);
		if (aff_decide(&hard, &req, &target, cases[i].claim) !=
		    cases[i].want) {
			printf("# case %zu: hard %s req %s\n", i,
			       cases[i].hard, cases[i].req);
			CHECK(0);
		}
	}
	/* The process level (threads = "all"): aff_decide_process. */
	{
		static const struct {
			bool adopt;
			const char *req, *hard, *ours;
			enum aff_proc_action want;
		} p[] = {
			/* Later passes: ours stays, theirs is theirs. */
			{false, "0-1\n", NULL, "0-1", AFF_PROC_KEEP},
			{false, "\n", NULL, "0-1", AFF_PROC_HAND},
			{false, "3\n", NULL, "0-1", AFF_PROC_HAND},
			{false, "none\n", NULL, "0-1", AFF_PROC_HAND},
			/* ... the rule's CPUs changed from 2-3: still ours. */
			{false, "2-3\n", NULL, "2-3", AFF_PROC_RETARGET},
			{false, "0-1\n", NULL, "2-3", AFF_PROC_KEEP},
			/* Adoption takes whatever is there. */
			{true, "\n", "0-3", "", AFF_PROC_ADOPT},
			{true, "3\n", "0-3", "", AFF_PROC_ADOPT},
			{true, "none\n", "0-3", "", AFF_PROC_ADOPT},
			/* ... a forked child with its parent's: taken as is. */
			{true, "0-1\n", "0-3", "", AFF_PROC_TAKE},
			/* ... pinned away by its hard mask: nothing. */
			{true, "\n", "2-3", "", AFF_PROC_EMPTY},
			{true, "0-1\n", "2-3", "", AFF_PROC_EMPTY},
			{true, "\n", "1", "", AFF_PROC_ADOPT},
		};
		struct cpuset ours;

		for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
			CHECK(cpureq_parse_list(p[i].req, &req) == 0);
			cpuset_zero(&ours);
			if (p[i].ours[0])
				cpuset_parse_list(p[i].ours, &ours);
			if (p[i].hard)
				cpuset_parse_list(p[i].hard, &hard);
			if (aff_decide_process(p[i].adopt, &req,
					       p[i].hard ? &hard : NULL,
					       &target, &ours) != p[i].want) {
				printf("# process case %zu: req %s\n", i,
				       p[i].req);
				CHECK(0);
			}
		}
	}
	/* Restore: ours -> inherit, inherit -> nothing, theirs -> leave. */
	cpureq_parse_list("0-1\n", &req);
	CHECK(aff_decide_restore(&req, &target) == AFF_WRITTEN);
	cpureq_parse_list("\n", &req);
	CHECK(aff_decide_restore(&req, &target) == AFF_UNCHANGED);
	cpureq_parse_list("2\n", &req);
	CHECK(aff_decide_restore(&req, &target) == AFF_FOREIGN);
	cpureq_parse_list("none\n", &req);
	CHECK(aff_decide_restore(&req, &target) == AFF_FOREIGN);
	/* The words, as the kernel reads and takes them. */
	CHECK(cpureq_parse_list("inherit\n", &req) == 0 &&
	      req.state == REQ_INHERIT);
	CHECK(cpureq_parse_list(" none \n", &req) == 0 &&
	      req.state == REQ_NONE);
	CHECK(cpureq_parse_list("nonex\n", &req) == -EINVAL);
	CHECK(cpureq_parse_list("0-1 none\n", &req) == -EINVAL);
}

void test_ratio_decide(void)
{
#define SET(a, p) {REQ_SET, {a, p}}
#define INHERIT {REQ_INHERIT, {0, 0}}
	static const struct {
		struct ratio_req cur; /* the process's own request */
		struct ratio ours, want; /* want {0, 0}: restore */
		enum aff_result res;
	} cases[] = {
		/* First apply: inherit, or anything, is taken over. */
		{INHERIT, {0, 0}, {20, 1}, AFF_WRITTEN},
		{SET(7, 1), {0, 0}, {20, 1}, AFF_WRITTEN},
		{{REQ_NONE, {0, 0}}, {0, 0}, {20, 1}, AFF_WRITTEN},
		{SET(20, 1), {0, 0}, {20, 1}, AFF_UNCHANGED},
		/* Ours still there: the controller moves it. */
		{SET(20, 1), {20, 1}, {5, 4}, AFF_WRITTEN},
		/* Changed after us: someone else's. */
		{SET(7, 1), {20, 1}, {5, 4}, AFF_FOREIGN},
		{SET(7, 1), {20, 1}, {7, 1}, AFF_UNCHANGED},
		/* Reset to inherit or none by hand after us: also theirs. */
		{INHERIT, {20, 1}, {5, 4}, AFF_FOREIGN},
		{{REQ_NONE, {0, 0}}, {20, 1}, {5, 4}, AFF_FOREIGN},
		/* Restore: only ours goes back to inherit. */
		{SET(20, 1), {20, 1}, {0, 0}, AFF_WRITTEN},
		{SET(7, 1), {20, 1}, {0, 0}, AFF_FOREIGN},
		{{REQ_NONE, {0, 0}}, {20, 1}, {0, 0}, AFF_FOREIGN},
		{INHERIT, {20, 1}, {0, 0}, AFF_UNCHANGED},
	};
#undef SET
#undef INHERIT

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct ratio *want =
			cases[i].want.allowed ? &cases[i].want : NULL;
		enum aff_result res = aff_decide_ratio(&cases[i].cur,
						       &cases[i].ours, want);

		if (res != cases[i].res)
			printf("# case %zu: %s\n", i, aff_result_name(res));
		CHECK(res == cases[i].res);
	}

	/* The scheduler's accounting of one thread. */
	struct task_sched ts = {0};

	CHECK(procfs_parse_schedstat("123456789 5000 17\n", &ts) == 0 &&
	      ts.runtime_ns == 123456789 && ts.delay_ns == 5000);
	CHECK(procfs_parse_schedstat("x\n", &ts) == -EINVAL);
	CHECK(procfs_parse_sched(
		      "yes (1234, #threads: 1)\n"
		      "-------------------------------------------------------\n"
		      "se.exec_start                                :         12345.678901\n"
		      "nr_migrations_soft_spill                     :                    3\n"
		      "nr_migrations_soft_return                    :                    2\n"
		      "soft_outside_runtime                         :          1234.5678\n"
		      "stats.nr_wakeups_soft_spill                  :                   10\n"
		      "nr_wakeups_soft_return                       :                    9\n",
		      &ts) == 0);
	CHECK(ts.spills == 13 && ts.returns == 11);
	CHECK(ts.outside_ns == 1234567800ULL);
	CHECK(procfs_parse_sched("se.exec_start : 1.0\n", &ts) == -EINVAL);
}

void test_softness_actuator(void)
{
	const char *cg = "/fs/cgroup/system.slice/test.service/";
	char rel[PATH_MAX];
	struct config *c;

	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(500, 500, "fixed", 10, 0, "0-3", "\n");
	put_proc("/500/soft_affinity_ratio", "\n");
	mktask(600, 600, "strict", 11, 0, "0-3", "\n");
	put_proc("/600/soft_affinity_ratio", "\n");
	mktask(700, 700, "adapt", 12, 0, "0-3", "\n");
	put_proc("/700/soft_affinity_ratio", "\n");
	c = mgr_setup("rules = (\n"
		      " { name = \"f\"; comm = \"fixed\"; cpus = \"0\"; softness = \"20:1\"; },\n"
		      " { name = \"s\"; comm = \"strict\"; cpus = \"0\"; softness = \"strict\"; },\n"
		      " { name = \"a\"; comm = \"adapt\"; cpus = \"0\"; }\n"
		      ");");
	if (!c)
		return;
	CHECK(mgr->have_proc_ratio && mgr_rule_ratio_applies(mgr, 2));
	/* L8: without the file a process rule's softness takes no effect. */
	mgr->have_proc_ratio = false;
	CHECK(!mgr_rule_ratio_applies(mgr, 2));
	mgr->have_proc_ratio = true;
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "20:1\n");
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "10000:1\n");
	/* Adaptive starts hard, at the sysctls' default, as its own. */
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "100:1\n");
	CHECK_STR(psoft_of(500), "0\n");
	/* A rescan writes nothing that is already in place. */
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(fake_writes == 0);
	/*
	 * The controller softens rule a: its process queued (F7: a rule's
	 * processes are written a slice at a time, not in the call), then
	 * one write, for it.
	 */
	fake_writes = 0;
	CHECK(mgr_set_rule_ratio(mgr, 2, (struct ratio){5, 4}) == 1);
	CHECK(fake_writes == 0 && mgr_dirty_count(mgr) == 1);
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "100:1\n");
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK(fake_writes == 1);
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "5:4\n");
	/* Someone sets 500's ratio by hand: left alone from then on. */
	put_proc("/500/soft_affinity_ratio", "7:1\n");
	fake_writes = 0;
	mgr_set_rule_ratio(mgr, 0, (struct ratio){30, 1});
	CHECK(mgr_flush(mgr, UINT64_MAX) && fake_writes == 0);
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "7:1\n");
	/* A refused write changes nothing and is counted. */
	fake_err = -EINVAL;
	mgr_set_rule_ratio(mgr, 2, (struct ratio){3, 2});
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "5:4\n");
	fake_err = 0;
	/* Stop: ours go back to inherit, the hand-set one stays. */
	mgr_restore_all(mgr);
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "\n");
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "\n");
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "7:1\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);

	/* A unit rule: one write to the unit's cgroup, no thread touched. */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(800, 800, "svc", 10, 0, "0-3", "\n");
	mktask(800, 801, "svc", 10, 0, "0-3", "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	put_sys(rel, "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	put_sys(rel, "\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.serv*\"; "
		      "nodes = [ 1 ]; softness = \"5:4\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_processes(mgr) == 1 && mgr->ncgs == 1);
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	CHECK_STR(get_at(sys, rel), "2-3\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	CHECK_STR(get_at(sys, rel), "5:4\n");
	CHECK_STR(soft_of(800, 800), "\n");
	CHECK_STR(soft_of(800, 801), "\n");
	CHECK(mgr_set_rule_ratio(mgr, 0, (struct ratio){20, 1}) == 1);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	/* A mask the kernel refuses: the ratio goes back, nothing changed. */
	put_sys(rel, "none\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	put_sys(rel, "\n");
	mgr->cgs[0].written = false;
	fake_fail_on = "cpuset.cpus.preferred";
	mgr_set_rule_ratio(mgr, 0, (struct ratio){20, 1});
	fake_fail_on = NULL;
	CHECK_STR(get_at(sys, rel), "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	CHECK_STR(get_at(sys, rel), "none\n");
	CHECK(mgr_set_rule_ratio(mgr, 0, (struct ratio){20, 1}) == 1);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	/* Stop: the cgroup gets back what it had. */
	mgr_restore_all(mgr);
	CHECK_STR(get_at(sys, rel), "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	CHECK_STR(get_at(sys, rel), "\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);

	/* No cpuset files there: the process level, as for other rules. */
	fake_fixture();
	mktask(900, 900, "svc", 10, 0, "0-3", "\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 1 ]; } );");
	if (!c)
		return;
	CHECK(!mgr->have_proc_ratio);
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr->ncgs == 0);
	CHECK_STR(psoft_of(900), "2-3\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);
}

/*
 * F11: a dry run on a kernel without the feature reads a missing
 * soft_affinity_list as inheriting.  That is the mode of one manager,
 * handed to it at mgr_new, not a switch of the whole process: a second
 * manager in the same process, writing, still sees the file missing.
 */
void test_aff_mode(void)
{
	struct cpuset target;
	struct roots r;
	struct mgr *real;
	struct config *c;
	int err = 0;

	fake_fixture();
	cpuset_parse_list("0-1", &target);
	/* No soft_affinity_list, process or thread: a stock kernel. */
	mktask(100, 100, "app", 1, 0, "0-3", NULL);
	CHECK(apply_t(100, 100, &target, AFF_ADOPT, false, &err) == AFF_GONE &&
	      err == -ENOENT);
	{
		int pfd = procfs_open_pid(proc, 100);

		CHECK(aff_apply_thread(NULL, pfd, 100, &target, AFF_ADOPT,
				       AFF_MODE_DRY_RUN_NO_KERNEL,
				       &err) == AFF_WRITTEN);
		CHECK(aff_apply_thread(NULL, pfd, 100, &target, AFF_ADOPT,
				       AFF_MODE_DRY_RUN, &err) == AFF_GONE);
		close(pfd);
	}
	CHECK(fake_writes == 0);

	c = mgr_setup_dry("rules = ( { name = \"app\"; comm = \"app\"; "
			  "cpus = \"0-1\"; } );",
			  false);
	if (!c)
		return;
	mgr_free(mgr);
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s/run", tmp);
	mgr = mgr_new(&r, c, AFF_MODE_DRY_RUN_NO_KERNEL, NULL);
	real = mgr_new(&r, c, AFF_MODE_WRITE, NULL);
	CHECK(mgr && real);
	if (mgr && real) {
		/* Would write the process level; there is none to write. */
		CHECK(mgr_scan(mgr) == 0 && mgr_counters(mgr)->written == 1 &&
		      !mgr_counters(mgr)->gone);
		CHECK(mgr_scan(real) == 0 && !mgr_counters(real)->written &&
		      mgr_counters(real)->gone);
	}
	CHECK(fake_writes == 0);
	mgr_free(real);
	mgr_teardown(c, NULL);
}
