// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of softaff(1)'s pure helpers (pref.c), under ASan + UBSan.
 * The command itself is tested end to end by softaff-check.sh.
 */
#include <errno.h>
#include <string.h>

#include "pref.h"

#include "test.h"

static void test_ratio(void)
{
	static const char *const bad[] = {
		"",     "0:1",	 "1:0",	  "10001:1", "5",    "5:",   ":5",
		"a:b",	"5:4x",	 "-1:1",  "5 :4",    "+5:4", "5:4:3", "Default",
		"default x", "99999999999999999999999:1",
		"1111111111111111111111111111111111:1",
	};
	struct pref_ratio r = {7, 7};
	char buf[32];

	CHECK(pref_parse_ratio("5:4", &r) == 0);
	CHECK(r.allowed == 5 && r.preferred == 4);
	CHECK(pref_parse_ratio(" 10000:1\n", &r) == 0);
	CHECK(r.allowed == 10000 && r.preferred == 1);
	/* The kernel takes allowed < preferred: so do we. */
	CHECK(pref_parse_ratio("1:10000", &r) == 0);
	CHECK(pref_parse_ratio("default\n", &r) == 0);
	CHECK(r.allowed == 0 && r.preferred == 0);
	CHECK_STR(pref_format_ratio(&r, buf, sizeof(buf)), "default");
	r = (struct pref_ratio){20, 1};
	CHECK_STR(pref_format_ratio(&r, buf, sizeof(buf)), "20:1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct pref_ratio){7, 7};
		if (pref_parse_ratio(bad[i], &r) != -EINVAL)
			printf("# taken: '%s'\n", bad[i]);
		CHECK(pref_parse_ratio(bad[i], &r) == -EINVAL);
		CHECK(r.allowed == 7 && r.preferred == 7); /* untouched */
	}
}

static void test_status(void)
{
	struct pref_task t;

	CHECK(pref_parse_status("Name:\tx\nTgid:\t42\nPid:\t43\n"
				"Cpus_allowed_list:\t0-3\n"
				"Cpus_preferred:\t3\n"
				"Cpus_preferred_list:\t0-1\n"
				"Cpus_preferred_source:\tcgroup\n",
				&t) == 0);
	CHECK(t.tgid == 42);
	CHECK(cpuset_count(&t.cpus) == 2 && cpuset_test(&t.cpus, 1));
	CHECK_STR(t.source, "cgroup");
	/* A kernel without the series has no such lines. */
	CHECK(pref_parse_status("Tgid:\t1\nCpus_allowed_list:\t0-3\n", &t) ==
	      -ENOTSUP);
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\tzz\n"
				"Cpus_preferred_source:\ttask\n",
				&t) == -EINVAL);
	CHECK(pref_parse_status("Tgid:\tx\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\ttask\n",
				&t) == -EINVAL);
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\t\n",
				&t) == -EINVAL);
}

static void test_ratio_file(void)
{
	struct pref_task t;

	CHECK(pref_parse_ratio_file("5:4 task\n", &t) == 0);
	CHECK(t.ratio.allowed == 5 && t.ratio.preferred == 4);
	CHECK_STR(t.ratio_source, "task");
	CHECK(pref_parse_ratio_file("100:1 default\n", &t) == 0);
	CHECK_STR(t.ratio_source, "default");
	CHECK(pref_parse_ratio_file("default default\n", &t) == -EINVAL);
	CHECK(pref_parse_ratio_file("5:4\n", &t) == -EINVAL);
	CHECK(pref_parse_ratio_file("5:4 \n", &t) == -EINVAL);
	CHECK(pref_parse_ratio_file("", &t) == -EINVAL);
}

static void test_cgroup_cpus(void)
{
	struct cpuset s;
	bool has = true;

	CHECK(pref_parse_cgroup_cpus("\n", &s, &has) == 0 && !has);
	CHECK(pref_parse_cgroup_cpus("2-3\n", &s, &has) == 0 && has);
	CHECK(cpuset_count(&s) == 2);
	CHECK(pref_parse_cgroup_cpus("x\n", &s, &has) == -EINVAL);
}

static void test_nodes(void)
{
	struct topology t = {0};
	struct cpuset s;
	int node = -1;

	/* Node 0: CPUs 0-1 online; node 2: CPU 2 online, 3 offline. */
	t.nnodes = 2;
	t.ids[0] = 0;
	t.ids[1] = 2;
	cpuset_set(&t.node_present[0], 0);
	cpuset_set(&t.node_present[0], 1);
	cpuset_set(&t.node_present[1], 2);
	cpuset_set(&t.node_present[1], 3);
	CHECK(pref_nodes_cpus(&t, "2", &s, &node) == 0);
	CHECK(cpuset_count(&s) == 2 && cpuset_test(&s, 3));
	CHECK(pref_nodes_cpus(&t, "0,2", &s, &node) == 0);
	CHECK(cpuset_count(&s) == 4);
	CHECK(pref_nodes_cpus(&t, "0-2", &s, &node) == -ENOENT && node == 1);
	CHECK(pref_nodes_cpus(&t, "", &s, &node) == -EINVAL);
	CHECK(pref_nodes_cpus(&t, "x", &s, &node) == -EINVAL);
}

static void test_cgroup_dir(void)
{
	char dir[256], name[256];

	CHECK(pref_cgroup_dir("/sys", "app", dir, sizeof(dir), name,
			      sizeof(name)) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup/app");
	CHECK_STR(name, "/app");
	CHECK(pref_cgroup_dir("/sys", "/system.slice/x.service/", dir,
			      sizeof(dir), name, sizeof(name)) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup/system.slice/x.service");
	CHECK_STR(name, "/system.slice/x.service");
	CHECK(pref_cgroup_dir("/sys", "/sys/fs/cgroup/a/b", dir, sizeof(dir),
			      name, sizeof(name)) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup/a/b");
	CHECK_STR(name, "/a/b");
	/* Only a whole component of the mount is the mount. */
	CHECK(pref_cgroup_dir("/sys", "/sys/fs/cgroupx", dir, sizeof(dir),
			      name, sizeof(name)) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup/sys/fs/cgroupx");
	CHECK(pref_cgroup_dir("/sys", "/", dir, sizeof(dir), name,
			      sizeof(name)) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup");
	CHECK_STR(name, "/");
	CHECK(pref_cgroup_dir("/sys", "a/../../etc", dir, sizeof(dir), name,
			      sizeof(name)) == -EINVAL);
	CHECK(pref_cgroup_dir("/sys", "..", dir, sizeof(dir), name,
			      sizeof(name)) == -EINVAL);
	CHECK(pref_cgroup_dir("/sys", "a..b", dir, sizeof(dir), name,
			      sizeof(name)) == 0);
	CHECK(pref_cgroup_dir("/sys", "", dir, sizeof(dir), name,
			      sizeof(name)) == -EINVAL);
	CHECK(pref_cgroup_dir("/sys", "a/very/long/path", dir, 20, name,
			      sizeof(name)) == -ENAMETOOLONG);
}

int main(void)
{
	RUN(test_ratio, "softaff: ratio A:P and default, bad ones untouched");
	RUN(test_status, "softaff: Cpus_preferred_* and Tgid from status");
	RUN(test_ratio_file, "softaff: soft_affinity_ratio 'A:P SOURCE'");
	RUN(test_cgroup_cpus, "softaff: cpuset.cpus.preferred, empty = none");
	RUN(test_nodes, "softaff: nodes -> present CPUs, unknown node named");
	RUN(test_cgroup_dir, "softaff: cgroup PATH forms, '..' refused");
	return t_failed_checks ? 1 : 0;
}
