// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * L5: a rule's room outside counts the CPUs its processes' cgroups may
 * use (cpuset.cpus.effective: AllowedCPUs=, a container's cpuset), read
 * at each step, not its tasks' own pins (manager-room.c says why).
 */
#include "unit.h"

#include "daemon-internal.h"

/* Process pid (made by mktask) in cgroup cg, which exists. */
static void in_cgroup(int pid, const char *cg)
{
	char rel[64], buf[PATH_MAX];

	snprintf(rel, sizeof(rel), "/%d/cgroup", pid);
	snprintf(buf, sizeof(buf), "0::%s\n", cg);
	put_proc(rel, buf);
	snprintf(buf, sizeof(buf), "%s/fs/cgroup%s", sys, cg);
	mkdirs(buf);
}

static void put_effective(const char *cg, const char *cpus)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "/fs/cgroup%s/cpuset.cpus.effective",
		 strcmp(cg, "/") ? cg : "");
	put_sys(rel, cpus);
}

/* The daemon's room for rule r: node 0 (CPUs 0-1) busy, node 1 idle. */
static void room_of(struct config *c, unsigned int r,
		    struct rulectl_sample *in)
{
	static struct daemon d;

	d.cfg = c;
	d.topo = &topo;
	d.mgr = mgr;
	cpuset_parse_list("0-3", &d.sampler.valid);
	cpuset_parse_list("0-3", &d.sampler.wait_valid);
	if (sampler_reserve(&d.sampler, 4) < 0)
		abort();
	d.sampler.util[0] = d.sampler.util[1] = 1.0;
	d.sampler.wait[0] = d.sampler.wait[1] = 1.0;
	softness_room(&d, r, in);
}

void test_rule_room(void)
{
	char path[PATH_MAX], err[512];
	struct rulectl_sample in;
	struct cpuset allowed;
	struct mgr_room many = {0};
	struct config *c, *c2;

	fake_fixture();
	put_effective("/", "0-3\n");
	/*
	 * 71-softaffd-softness's hogs: pinned to node 0 by taskset, in a
	 * cgroup without a cpuset of its own.  A unit with AllowedCPUs=0-1.
	 */
	mktask(700, 700, "hog", 70, 0, "0-1", "\n");
	in_cgroup(700, "/user.slice/user-0.slice/session-1.scope");
	mktask(800, 800, "db", 80, 0, "0-1", "\n");
	in_cgroup(800, "/system.slice/db.service");
	put_effective("/system.slice/db.service", "0-1\n");
	c = mgr_setup("rules = ( { name = \"hog\"; comm = \"hog\"; "
		      "nodes = [ 0 ]; },\n"
		      "          { name = \"db\"; comm = \"db\"; "
		      "nodes = [ 0 ]; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 2);
	/* The pinned hogs may be placed anywhere their cgroup allows ... */
	CHECK(mgr_rule_allowed(mgr, 0, &allowed) &&
	      cpuset_count(&allowed) == 4);
	room_of(c, 0, &in);
	CHECK(in.home_cpus == 2 && in.outside_cpus == 2 &&
	      in.outside_spare == 2.0);
	/* ... the unit only on node 0: no room on the idle node 1. */
	CHECK(mgr_rule_allowed(mgr, 1, &allowed) &&
	      cpuset_count(&allowed) == 2 && cpuset_test(&allowed, 0) &&
	      cpuset_test(&allowed, 1));
	room_of(c, 1, &in);
	CHECK(in.home_cpus == 2 && in.outside_cpus == 0 &&
	      in.outside_spare == 0);

	/*
	 * A reload that changes the rule: where its processes are goes
	 * with them (nothing is read for a comm rule's rematch).
	 */
	c2 = load("rules = ( { name = \"hog\"; comm = \"hog\"; "
		  "nodes = [ 0 ]; },\n"
		  "          { name = \"db\"; comm = \"db\"; nodes = [ 0 ]; "
		  "softness = \"20:1\"; } );",
		  err, sizeof(err));
	CHECK(c2 && mgr_reload(mgr, c2) == 0);
	if (!c2) {
		mgr_teardown(c, NULL);
		return;
	}
	CHECK(mgr_rule_allowed(mgr, 1, &allowed) &&
	      cpuset_count(&allowed) == 2);
	CHECK(mgr_rule_allowed(mgr, 0, &allowed) &&
	      cpuset_count(&allowed) == 4);

	/* Read at each step: AllowedCPUs= widened, node 1 is room. */
	put_effective("/system.slice/db.service", "0-3\n");
	room_of(c2, 1, &in);
	CHECK(in.outside_cpus == 2);
	/* The cpuset controller turned off for the unit: its slice's. */
	snprintf(path, sizeof(path), "%s/fs/cgroup/system.slice/db.service/"
		 "cpuset.cpus.effective", sys);
	unlink(path);
	put_effective("/system.slice", "0-1\n");
	CHECK(mgr_rule_allowed(mgr, 1, &allowed) &&
	      cpuset_count(&allowed) == 2);
	/* The unit stops, its cgroup goes: nothing known of where. */
	snprintf(path, sizeof(path), "%s/fs/cgroup/system.slice/db.service",
		 sys);
	CHECK(rmdir(path) == 0);
	CHECK(!mgr_rule_allowed(mgr, 1, &allowed) &&
	      mgr->rules[1].room.n == 0);
	room_of(c2, 1, &in);
	CHECK(in.outside_cpus == 2);
	/* No cpuset controller anywhere: every CPU, as before L5. */
	snprintf(path, sizeof(path), "%s/fs/cgroup/cpuset.cpus.effective",
		 sys);
	unlink(path);
	CHECK(!mgr_rule_allowed(mgr, 0, &allowed));

	/* A rule of processes in many cgroups is not confined by one. */
	for (int i = 0; i <= MGR_ROOM_CGROUPS; i++) {
		snprintf(path, sizeof(path), "/user.slice/s-%d.scope", i);
		mgr_room_note(&many, path);
		mgr_room_note(&many, path);
		CHECK(many.unknown == (i == MGR_ROOM_CGROUPS));
	}
	CHECK(many.n == MGR_ROOM_CGROUPS);
	mgr_teardown(c, c2);
}
