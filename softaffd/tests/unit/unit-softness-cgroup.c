// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-rule figures from cgroups: a unit rule's wait from the cgroup's
 * cpu.stat and cpu.pressure, the wait of a unit on many CPUs, cgroups
 * made again.  The threads' figures are in unit-softness.c.
 */
#include "daemon-internal.h"
#include "unit.h"

static void put_cg(const char *file, const char *content)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "/fs/cgroup/system.slice/test.service/%s",
		 file);
	put_sys(rel, content);
}

static void put_cgstat(uint64_t usage_us, uint64_t some_us)
{
	char buf[256];

	put_cg("cpu.pressure", psi_text(some_us));
	snprintf(buf, sizeof(buf), "usage_usec %llu\nuser_usec 0\n",
		 (unsigned long long)usage_us);
	put_cg("cpu.stat", buf);
}

/*
 * A fresh fixture: pid with nthreads threads in test.service, whose
 * cgroup has no preference yet and the counters given, and the unit rule
 * "nodes = [ node ];" plus more for it.
 */
static struct config *setup_unit(int pid, int nthreads, uint64_t usage_us,
				 uint64_t some_us, int node, const char *more)
{
	char rules[256];

	fake_fixture();
	for (int t = 0; t < nthreads; t++) {
		mktask(pid, pid + t, "svc", 10, 0, "0-3", "\n");
		put_sched(pid, pid + t, "1000000000 0 5\n", "0.0");
	}
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(usage_us, some_us);
	snprintf(rules, sizeof(rules),
		 "rules = ( { name = \"u\"; unit = \"test.service\"; "
		 "nodes = [ %d ]; %s} );", node, more);
	return mgr_setup(rules);
}

/* The same with pid 900 and a fixed-softness rule (20:1, node 1). */
static struct config *mgr_setup_fixed_unit_rule(void)
{
	return setup_unit(900, 1, 0, 0, 1, "softness = \"20:1\"; ");
}

/*
 * A unit rule takes its wait from the cgroup's cpu.pressure and cpu.stat,
 * not from its threads; it walks them for locality only while soft and
 * every 10 s; without cpu.pressure, its threads again.
 */
void test_mgr_sample_cgroup(void)
{
	const struct rule_figures *f;
	struct tsoft *rs;
	struct mgr_rule *mr;
	struct config *c;
	char path[PATH_MAX];

	c = setup_unit(800, 2, 1000000, 1000, 1, "");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1 && mgr->ncgs == 1);
	mr = &mgr->rules[0];
	rs = &tsoft[0];
	f = &rs->last;
	/* An adaptive rule's cgroup gets a trigger (here a plain file). */
	CHECK(mgr->cgs[0].psi_fd >= 0 && !mgr->cgs[0].psi_watched);
	CHECK(!mgr_rule_triggers_armed(mgr, 0));
	put_cgstat(1000000, 1000); /* the trigger's write went into the file */
	tsample(1000, true); /* baselines */
	CHECK(rs->sampled_now && !f->valid && f->source == WAIT_CGROUP);
	CHECK(f->threads == 2);
	/* 0.75 s run, 0.25 s someone waited; the threads claim much more. */
	put_cgstat(1750000, 251000);
	put_sched(800, 800, "1900000000 900000000 9\n", "0.0");
	tsample(2000, true);
	CHECK(f->valid && f->source == WAIT_CGROUP);
	CHECK(f->runtime_ns == 750000000ULL && f->delay_ns == 250000000ULL);
	/* Hardest: no walk since the first, whose figures stay. */
	CHECK(mr->walked_ms == 1000 && f->threads == 2 && f->outside_ns == 0);
	put_cgstat(2250000, 251000);
	tsample(2500, true);
	CHECK(f->valid && f->delay_ns == 0 && mr->walked_ms == 1000);
	/* Soft: walked every time; its share outside (all of it: the
	 * fixture's CPU 0 is not in node 1) scales the cgroup's time. */
	rs->ctl.rung = 3;
	put_cgstat(3250000, 251000);
	put_sched(800, 800, "2900000000 900000000 9\n", "0.0");
	tsample(3000, false);
	CHECK(mr->walked_ms == 3000 && f->locality_ns == 2000000000ULL);
	CHECK(f->runtime_ns == 1000000000ULL && f->delay_ns == 0);
	CHECK(f->outside_ns == f->runtime_ns && !f->exact);
	/* Back at the hardest: the next walk 10 s after the last. */
	rs->ctl.rung = 0;
	tsample(4000, true);
	CHECK(mr->walked_ms == 3000);
	tsample(13000, true);
	CHECK(mr->walked_ms == 13000);
	/* Asleep: sampled only for --status, until a trigger wakes it. */
	CHECK(!rulectl_may_sleep(&(struct rulectl_params){.soften_wait = 0.1},
				 &(struct rulectl_state){1, 0},
				 &(struct rulectl_sample){.runtime_ns = 1}));
	CHECK(rulectl_may_sleep(&(struct rulectl_params){.soften_wait = 0.1},
				&(struct rulectl_state){0, 0},
				&(struct rulectl_sample){.runtime_ns = 95,
							 .delay_ns = 5}));
	CHECK(!rulectl_may_sleep(&(struct rulectl_params){.soften_wait = 0.1},
				 &(struct rulectl_state){0, 0},
				 &(struct rulectl_sample){.runtime_ns = 80,
							  .delay_ns = 20}));
	mgr->cgs[0].psi_watched = true;
	CHECK(mgr_rule_triggers_armed(mgr, 0));
	/*
	 * Awake (sampled every interval): a trigger changes nothing, its
	 * baselines are fresh.
	 */
	mgr_rule_wake(mgr, 0, 13500);
	CHECK(!mr->woken && mr->sampled_ms == 13000);
	rs->asleep = true;
	tsample(14000, true);
	CHECK(!rs->sampled_now);
	put_cgstat(5000000, 900000);
	/*
	 * The daemon's asleep is the daemon's: the manager, which follows
	 * the plan it was given, wakes the rule's sampling, and says so at
	 * the next sample, where the daemon clears asleep (F3).
	 */
	mgr_rule_wake(mgr, 0, 14500);
	CHECK(rs->asleep && mr->woken && mr->sampled_ms == 14500);
	mgr_rule_wake(mgr, 0, 14600); /* once */
	CHECK(mr->sampled_ms == 14500);
	put_cgstat(5400000, 1000000);
	tsample(15500, true);
	CHECK(rs->woken && !rs->asleep && !mr->woken);
	/* The delta is from the wake-up's fresh baseline, not the stale one. */
	CHECK(rs->sampled_now && f->valid && f->runtime_ns == 400000000ULL &&
	      f->delay_ns == 100000000ULL);
	/*
	 * A cgroup seen for the first time (a new scope of the unit glob)
	 * has only a baseline: the figures do not cover it, and the rule
	 * must not fall asleep on them (the daemon checks valid).
	 */
	mgr->cgs[0].have_prev = false;
	tsample(15600, true);
	CHECK(rs->sampled_now && !f->valid && mgr->cgs[0].have_prev);
	put_cgstat(5500000, 1000000);
	tsample(15700, true);
	CHECK(f->valid && f->runtime_ns == 100000000ULL);
	/* No cpu.pressure (no PSI): the threads' schedstat, said once. */
	snprintf(path, sizeof(path),
		 "%s/fs/cgroup/system.slice/test.service/cpu.pressure", sys);
	CHECK(unlink(path) == 0);
	put_sched(800, 800, "2900000000 950000000 9\n", "0.0");
	tsample(16500, true);
	CHECK(f->source == WAIT_THREADS && mr->no_psi_logged);
	CHECK(!mgr->cgs[0].have_prev); /* its next read is a baseline */
	CHECK(mr->walked_ms == 16500 && f->delay_ns == 50000000ULL);
	mgr_teardown(c, NULL);

	/* A fixed rule's cgroup gets no trigger: nobody uses its wait. */
	c = mgr_setup_fixed_unit_rule();
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
	CHECK(mgr->cgs[0].psi_fd < 0);
	mgr_teardown(c, NULL);
}

/*
 * A unit busy on N CPUs of a 2 x N machine, its node full, the other
 * idle, read from its cgroup as the daemon does: the cgroup's counters,
 * mgr_sample, rule_sample, rulectl_step.  PSI counts "some" per CPU
 * (cgstat.h): 2N tasks on N CPUs, one waiting on each, stall for the
 * whole second; N tasks on N CPUs only for wakeup noise (10 ms).
 * The old figure some / (some + usage) was 1/(1 + N) for the queue:
 * 50%, 5.9%, 1.5%, so from 9 CPUs such a unit never softened (10%),
 * and from 33 a soft one that did not yet run outside hardened (3%).
 */
struct cg_unit {
	unsigned int cpus;
	uint64_t usage_us, some_us, now_ms;
	struct rulectl_sample in;
	char why[160];
};

/* One more second of the unit, its tasks stalled stall_us; from rung. */
static enum rulectl_action cg_unit_step(const struct rulectl_params *p,
					struct cg_unit *u, uint64_t stall_us,
					unsigned int rung)
{
	struct tsoft *rs = (&tsoft[0]);

	u->usage_us += u->cpus * 1000000ULL;
	u->some_us += stall_us;
	u->now_ms += 1000;
	put_cgstat(u->usage_us, u->some_us);
	tsample(u->now_ms, true);
	u->in = rule_sample(&rs->last);
	u->in.home_cpus = u->in.outside_cpus = u->cpus;
	u->in.home_busy = u->cpus;
	u->in.outside_busy = 0;
	u->in.wait_known = true;
	u->in.outside_spare = u->cpus;
	rs->ctl.rung = rung;
	return rulectl_step(p, &rs->ctl, &u->in, u->why, sizeof(u->why));
}

void test_cgroup_wait_size(void)
{
	static const unsigned int cpus[] = {1, 16, 64};
	const uint64_t queue = 1000000, noise = 10000; /* us a second */
	struct cg_unit u = {.now_ms = 1000};
	const struct rule_figures *f;
	struct rulectl_state *ctl;
	struct rulectl_params p;
	char line[256] = "";
	struct config *c;
	size_t len = 0;

	c = setup_unit(800, 1, 0, 0, 0, "");
	if (!c)
		return;
	rulectl_params_default(c, &p);
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
	f = &tsoft[0].last;
	ctl = &tsoft[0].ctl;
	put_cgstat(0, 0);
	tsample(u.now_ms, true); /* the baseline */
	for (size_t i = 0; i < ARRAY_SIZE(cpus); i++) {
		enum rulectl_action a;

		u.cpus = cpus[i];
		/* Its tasks queue: it softens, whatever its size. */
		a = cg_unit_step(&p, &u, queue, 0);
		len += (size_t)snprintf(
			line + len, sizeof(line) - len,
			" %u CPUs %.1f%% (was %.1f%%)", u.cpus,
			100 * rulectl_wait(&u.in),
			100.0 * (double)f->delay_ns /
				(double)(f->delay_ns + f->runtime_ns));
		CHECK(f->valid && f->source == WAIT_CGROUP);
		CHECK(f->runtime_ns == u.cpus * 1000000000ULL);
		CHECK(rulectl_wait(&u.in) == 0.5);
		CHECK(a == RULECTL_SOFTEN && ctl->rung == 3);
		/* They do not queue: it stays hard. */
		a = cg_unit_step(&p, &u, noise, 0);
		CHECK(rulectl_wait(&u.in) < 0.01);
		CHECK(a == RULECTL_HOLD && ctl->rung == 0);
		/* Soft, not yet running outside, still queueing: held. */
		for (unsigned int k = 0; k < 2 * p.harden_hold; k++) {
			a = cg_unit_step(&p, &u, queue, 3);
			CHECK(a != RULECTL_HARDEN && ctl->calm == 0);
		}
		/* Soft, queueing no more, nothing outside: one rung harder. */
		for (unsigned int k = 0; k < p.harden_hold; k++)
			a = cg_unit_step(&p, &u, noise, 3);
		CHECK(a == RULECTL_HARDEN && ctl->rung == 2 &&
		      strstr(u.why, "no need"));
	}
	printf("# a unit whose tasks queue, its wait on%s\n", line);
	mgr_teardown(c, NULL);
}

/* The fake service's cgroup: its identity, and its cpu.pressure's. */
static uint64_t cg_ino(const char *file)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path),
		 "%s/fs/cgroup/system.slice/test.service/%s", sys, file);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static uint64_t fd_ino(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/*
 * "systemctl restart test.service": the old process exits, the cgroup is
 * removed and made again at the same path (a new inode: the old one is
 * moved aside first, so the file system cannot hand its number out
 * again), and a new process starts in it.
 */
static void restart_service(int old_pid, int new_pid, unsigned long long start)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd),
		 "rm -rf %s/%d && rm -rf %s/fs/cgroup/system.slice/old && "
		 "mv %s/fs/cgroup/system.slice/test.service "
		 "%s/fs/cgroup/system.slice/old",
		 proc, old_pid, sys, sys, sys);
	CHECK(system(cmd) == 0);
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	if (new_pid)
		mktask(new_pid, new_pid, "svc", start, 0, "0-3", "\n");
}

/*
 * A cgroup removed and made again at the same path is a new cgroup: it
 * gets the rule's preference (what it had is not someone else's
 * write) and a fresh trigger; one that is gone is forgotten once, not
 * retried.
 */
void test_mgr_cgroup_recreated(void)
{
	struct config *c;
	uint64_t id;

	c = setup_unit(800, 1, 0, 0, 1, "");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
	id = cg_ino("");
	CHECK(id && mgr->cgs[0].id == id);
	CHECK(mgr->cgs[0].psi_fd >= 0 &&
	      fd_ino(mgr->cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	mgr->cgs[0].psi_watched = true; /* as the daemon's epoll_ctl does */

	/*
	 * Restarted before the old trigger's EPOLLERR was handled: the new
	 * process's evaluation finds another cgroup at the path.
	 */
	restart_service(800, 810, 20);
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1 && mgr->ncgs == 1);
	CHECK(cg_ino("") != id && mgr->cgs[0].id == cg_ino(""));
	CHECK(!mgr->cgs[0].foreign && !mgr->cgs[0].have_prev);
	CHECK(mgr->cgs[0].psi_fd >= 0 && !mgr->cgs[0].psi_watched);
	CHECK(fd_ino(mgr->cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "100:1\n");
	/* Settled: a rescan opens nothing more, writes nothing more. */
	id = mgr->cgs[0].id;
	fake_writes = 0;
	{
		int fd = mgr->cgs[0].psi_fd;

		CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
		CHECK(mgr->cgs[0].psi_fd == fd && fake_writes == 0);
	}

	/* Stopped: the sample forgets the cgroup, once; nothing retries. */
	{
		char cmd[2 * PATH_MAX + 64];

		snprintf(cmd, sizeof(cmd),
			 "rm -rf %s/810 %s/fs/cgroup/system.slice/test.service",
			 proc, sys);
		CHECK(system(cmd) == 0);
	}
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 0);
	tsample(1000, true);
	CHECK(mgr->ncgs == 0);
	mgr_set_rule_ratio(mgr, 0, (struct ratio){5, 4});
	CHECK(mgr->ncgs == 0);

	/*
	 * Started again: a new entry and trigger.  Its trigger's EPOLLERR
	 * (the daemon's on_pressure) forgets it; the next start is new too.
	 */
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	mktask(820, 820, "svc", 30, 0, "0-3", "\n");
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1 && mgr->cgs[0].psi_fd >= 0);
	CHECK(fd_ino(mgr->cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "5:4\n");
	mgr_cg_forget(mgr, 0);
	CHECK(mgr->ncgs == 0);
	restart_service(820, 830, 40);
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1 && mgr->cgs[0].psi_fd >= 0);
	CHECK(mgr->cgs[0].id == cg_ino("") && !mgr->cgs[0].foreign);
	CHECK(fd_ino(mgr->cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	mgr_teardown(c, NULL);

	/* A fixed rule (no trigger): the new cgroup is not "foreign". */
	c = mgr_setup_fixed_unit_rule();
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1 && mgr->cgs[0].psi_fd < 0);
	restart_service(900, 910, 20);
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1 && !mgr->cgs[0].foreign);
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "20:1\n");
	mgr_teardown(c, NULL);
}

