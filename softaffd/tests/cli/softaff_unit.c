// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of softaff(1)'s pure helpers (pref.c), under ASan + UBSan.
 * The command itself is tested end to end by softaff-check.sh.
 */
#include <errno.h>
#include <string.h>

#include "pref.h"

#define TEST_MAIN
#include "test.h"

static void test_ratio(void)
{
	static const char *const bad[] = {
		"0:1",	 "1:0",	  "10001:1", "5",    "5:",   ":5",  "a:b",
		"5:4x",	 "-1:1",  "5 :4",    "+5:4", "5:4:3", "Default",
		"default x", "none x", "inherit:1", "5:4 task",
		"99999999999999999999999:1",
		"1111111111111111111111111111111111:1",
	};
	struct ratio_req r = {REQ_SET, {7, 7}};
	char buf[32];

	CHECK(ratio_req_parse("5:4", &r) == 0);
	CHECK(r.state == REQ_SET && r.value.allowed == 5 && r.value.preferred == 4);
	CHECK(ratio_req_parse(" 10000:1\n", &r) == 0);
	CHECK(r.value.allowed == 10000 && r.value.preferred == 1);
	/* The kernel takes allowed < preferred: so do we. */
	CHECK(ratio_req_parse("1:10000", &r) == 0);
	/* What the kernel reads for inherit, and the words. */
	CHECK(ratio_req_parse("\n", &r) == 0 && r.state == REQ_INHERIT);
	CHECK(r.value.allowed == 0 && r.value.preferred == 0);
	CHECK_STR(ratio_req_format(&r, buf, sizeof(buf)), "inherit");
	CHECK(ratio_req_parse("inherit\n", &r) == 0 && r.state == REQ_INHERIT);
	/* The old word, still taken from users. */
	CHECK(ratio_req_parse("default\n", &r) == 0 && r.state == REQ_INHERIT);
	CHECK(ratio_req_parse(" none\n", &r) == 0 && r.state == REQ_NONE);
	CHECK_STR(ratio_req_format(&r, buf, sizeof(buf)), "none");
	r = (struct ratio_req){REQ_SET, {20, 1}};
	CHECK_STR(ratio_req_format(&r, buf, sizeof(buf)), "20:1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct ratio_req){REQ_SET, {7, 7}};
		if (ratio_req_parse(bad[i], &r) != -EINVAL)
			printf("# taken: '%s'\n", bad[i]);
		CHECK(ratio_req_parse(bad[i], &r) == -EINVAL);
		CHECK(r.value.allowed == 7 && r.value.preferred == 7); /* untouched */
	}
}

#define STATUS_V4                                                       \
	"Name:\tx\nTgid:\t42\nPid:\t43\n"                                \
	"Cpus_allowed_list:\t0-3\n"                                        \
	"Cpus_preferred:\t3\n"                                             \
	"Cpus_preferred_list:\t0-1\n"                                      \
	"Cpus_preferred_source:\tcgroup\n"                                 \
	"Cpus_preferred_ratio:\t5:4\n"                                     \
	"Cpus_preferred_ratio_source:\tprocess\n"

static void test_status(void)
{
	struct pref_task t;

	CHECK(pref_parse_status(STATUS_V4, &t) == 0);
	CHECK(t.tgid == 42);
	CHECK(cpuset_count(&t.cpus) == 2 && cpuset_test(&t.cpus, 1));
	CHECK_STR(t.source, "cgroup");
	CHECK(t.ratio.state == REQ_SET && t.ratio.value.allowed == 5 &&
	      t.ratio.value.preferred == 4);
	CHECK_STR(t.ratio_source, "process");
	/* A kernel without the series (or before ABI v4) has no such lines. */
	CHECK(pref_parse_status("Tgid:\t1\nCpus_allowed_list:\t0-3\n", &t) ==
	      -ENOTSUP);
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\ttask\n",
				&t) == -ENOTSUP);
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\tzz\n"
				"Cpus_preferred_source:\tthread\n"
				"Cpus_preferred_ratio:\t100:1\n"
				"Cpus_preferred_ratio_source:\tdefault\n",
				&t) == -EINVAL);
	CHECK(pref_parse_status("Tgid:\tx\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\tthread\n"
				"Cpus_preferred_ratio:\t100:1\n"
				"Cpus_preferred_ratio_source:\tdefault\n",
				&t) == -EINVAL);
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\t\n"
				"Cpus_preferred_ratio:\t100:1\n"
				"Cpus_preferred_ratio_source:\tdefault\n",
				&t) == -EINVAL);
	/* The ratio in force is a value, never a word. */
	CHECK(pref_parse_status("Tgid:\t1\nCpus_preferred_list:\t0\n"
				"Cpus_preferred_source:\tthread\n"
				"Cpus_preferred_ratio:\t\n"
				"Cpus_preferred_ratio_source:\tdefault\n",
				&t) == -EINVAL);
}

static void test_requests(void)
{
	struct pref_req q, o;
	char buf[64];

	CHECK(pref_parse_req("\n", "\n", &q) == 0);
	CHECK(q.cpus.state == REQ_INHERIT && q.ratio.state == REQ_INHERIT);
	CHECK(cpureq_format(&q.cpus, true, buf, sizeof(buf)) == 7);
	CHECK_STR(buf, "inherit");
	CHECK(pref_parse_req("none\n", "none\n", &q) == 0);
	CHECK(q.cpus.state == REQ_NONE && q.ratio.state == REQ_NONE);
	CHECK(pref_parse_req("2-3\n", "20:1\n", &q) == 0);
	CHECK(q.cpus.state == REQ_SET && cpuset_count(&q.cpus.cpus) == 2);
	cpureq_format(&q.cpus, false, buf, sizeof(buf));
	CHECK_STR(buf, "c");
	CHECK(pref_parse_req("inherit\n", "5:4", &o) == 0 &&
	      o.cpus.state == REQ_INHERIT && !pref_req_equal(&q, &o));
	CHECK(pref_parse_req("2-3", "20:1", &o) == 0 && pref_req_equal(&q, &o));
	CHECK(pref_parse_req("x\n", "\n", &q) == -EINVAL);
	CHECK(pref_parse_req("\n", "default x\n", &q) == -EINVAL);
}

static void test_nodes(void)
{
	struct topology t;
	struct cpuset s;
	int node = -1;

	/* Node 0: CPUs 0-1 online; node 2: CPU 2 online, 3 offline. */
	CHECK(topology_alloc(&t, 2) == 0);
	if (!t.nnodes)
		return;
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
	topology_done(&t);
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
	RUN(test_ratio, "softaff: ratio A:P, inherit, none; bad ones untouched");
	RUN(test_status, "softaff: Cpus_preferred_* and Tgid from status");
	RUN(test_requests, "softaff: a level's request: inherit, none, value");
	RUN(test_nodes, "softaff: nodes -> present CPUs, unknown node named");
	RUN(test_cgroup_dir, "softaff: cgroup PATH forms, '..' refused");
	return t_failed_checks ? 1 : 0;
}
