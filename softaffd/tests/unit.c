// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests.  Everything runs against fixture /proc and /sys trees in a
 * temporary directory; writes to soft_affinity go through an injected
 * function that can fail on demand.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "affinity.h"
#include "cgstat.h"
#include "config.h"
#include "container.h"
#include "control.h"
#include "cpuset.h"
#include "explain.h"
#include "log.h"
#include "manager.h"
#include "notify.h"
#include "procconn.h"
#include "procfs.h"
#include "rulectl.h"
#include "rulelog.h"
#include "rules.h"
#include "sampler.h"
#include "caps.h"
#include "owned.h"
#include "status.h"
#include "sysctl.h"
#include "topology.h"
#include "util.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "test.h"

static char tmp[PATH_MAX];
static char proc[PATH_MAX];
static char sys[PATH_MAX];

static void mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

static void put(const char *path, const char *content)
{
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	f = fopen(path, "w");
	if (!f) {
		printf("# cannot write %s\n", path);
		exit(1);
	}
	fputs(content, f);
	fclose(f);
}

static const char *get(const char *path)
{
	static char buf[4096];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	return buf;
}

static int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s;
	(void)f;
	(void)w;
	return remove(p);
}

static void fixture_reset(void)
{
	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	mkdirs(proc);
	mkdirs(sys);
}

/* A stat line with the fields the daemon reads; the rest are zero. */
/* The ppid the next mktask() writes (0: 1). */
static int fixture_ppid;

static void stat_line(char *buf, size_t size, int pid, const char *comm,
		      unsigned long flags, unsigned long long start,
		      unsigned int policy)
{
	size_t off = (size_t)snprintf(buf, size, "%d (%s) S", pid, comm);

	for (int f = 4; f <= 52; f++) {
		unsigned long long v = 0;

		if (f == 4)
			v = fixture_ppid ? (unsigned long long)fixture_ppid : 1;
		else if (f == 9)
			v = flags;
		else if (f == 22)
			v = start;
		else if (f == 41)
			v = policy;
		off += (size_t)snprintf(buf + off, size - off, " %llu", v);
	}
	snprintf(buf + off, size - off, "\n");
}

/*
 * What a fresh task's status shows of soft affinity (ABI v4): no level
 * asks for anything, the sysctls' ratio applies.
 */
#define STATUS_PREFERRED                                              \
	"Cpus_preferred:\tf\nCpus_preferred_list:\t0-3\n"             \
	"Cpus_preferred_source:\tnone\nCpus_preferred_ratio:\t100:1\n" \
	"Cpus_preferred_ratio_source:\tdefault\n"

/*
 * Add a task; the leader (tid == pid) also gets the process files.
 * soft is the thread's own request, task/TID/soft_affinity_list, as
 * the kernel reads it: "\n" (inherit, as threads start), "none\n" or
 * a list; NULL: no such file (a kernel without soft affinity).
 */
static void mktask(int pid, int tid, const char *comm, unsigned long long start,
		   unsigned int policy, const char *hard, const char *soft)
{
	char path[PATH_MAX], buf[1024];

	stat_line(buf, sizeof(buf), tid, comm, 0, start, policy);
	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc, pid, tid);
	put(path, buf);
	snprintf(buf, sizeof(buf),
		 "Name:\t%s\nUid:\t1000\t1000\t1000\t1000\n"
		 "Cpus_allowed:\tf\nCpus_allowed_list:\t%s\n" STATUS_PREFERRED,
		 comm, hard);
	snprintf(path, sizeof(path), "%s/%d/task/%d/status", proc, pid, tid);
	put(path, buf);
	if (soft) {
		snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list",
			 proc, pid, tid);
		put(path, soft);
		snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_ratio",
			 proc, pid, tid);
		put(path, "\n");
	}
	/* The process level inherits, mask and ratio, as processes start. */
	if (soft && pid == tid) {
		snprintf(path, sizeof(path), "%s/%d/soft_affinity_list", proc,
			 pid);
		put(path, "\n");
		snprintf(path, sizeof(path), "%s/%d/soft_affinity_ratio", proc,
			 pid);
		put(path, "\n");
	}
	if (pid == tid) {
		stat_line(buf, sizeof(buf), pid, comm, 0, start, policy);
		snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
		put(path, buf);
		snprintf(path, sizeof(path), "%s/%d/status", proc, pid);
		snprintf(buf, sizeof(buf),
			 "Name:\t%s\nUid:\t1000\t1000\t1000\t1000\n"
			 "Cpus_allowed_list:\t%s\n" STATUS_PREFERRED,
			 comm, hard);
		put(path, buf);
		snprintf(path, sizeof(path), "%s/%d/cmdline", proc, pid);
		put(path, comm);
		snprintf(path, sizeof(path), "%s/%d/cgroup", proc, pid);
		put(path, "0::/system.slice/test.service\n");
	}
}

static const char *soft_of(int pid, int tid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list", proc,
		 pid, tid);
	return get(path);
}

/* ---- write seam ---- */

static int fake_err;	/* next writes fail with this */
static int fake_writes; /* attempted writes */
static const char *fake_fail_on; /* writes to paths with this fail EINVAL */

static int fake_write(int dfd, const char *path, const char *data, size_t len)
{
	FILE *f;
	int fd;

	fake_writes++;
	if (fake_err)
		return fake_err;
	if (fake_fail_on && strstr(path, fake_fail_on))
		return -EINVAL;
	/* As the kernel keeps and reads it: inherit is an empty line. */
	if (len == 8 && !memcmp(data, "inherit\n", 8))
		data = "\n", len = 1;
	/* procfs ignores the offset; a plain file must be truncated. */
	fd = openat(dfd, path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r+");
	if (!f) {
		close(fd);
		return -errno;
	}
	if (ftruncate(fileno(f), 0) < 0 || fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return 0;
}

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
	r = aff_apply_thread(pfd, tid, target, claim, dry_run, err);
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
	r = aff_restore_thread(pfd, tid, target, dry_run, err);
	close(pfd);
	return r;
}

/* An empty fixture tree, writes through the fake seam that succeeds. */
static void fake_fixture(void)
{
	fixture_reset();
	aff_write = fake_write;
	fake_err = 0;
	fake_writes = 0;
	fake_fail_on = NULL;
}

/* ---- tests ---- */

static void test_cpuset_list(void)
{
	struct cpuset s;
	char buf[CPUSET_LIST_BUFSZ];

	CHECK(cpuset_parse_list("0-3,8\n", &s) == 0);
	CHECK(cpuset_count(&s) == 5);
	CHECK(cpuset_format_list(&s, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "0-3,8");
	CHECK(cpuset_parse_list("", &s) == 0 && cpuset_empty(&s));
	CHECK(cpuset_parse_list("\n", &s) == 0 && cpuset_empty(&s));
	CHECK(cpuset_parse_list("5", &s) == 0 && cpuset_test(&s, 5));
	CHECK(cpuset_parse_list("3-1", &s) == -EINVAL);
	CHECK(cpuset_parse_list("1,", &s) == -EINVAL);
	CHECK(cpuset_parse_list(",1", &s) == -EINVAL);
	CHECK(cpuset_parse_list("a", &s) == -EINVAL);
	CHECK(cpuset_parse_list("1-", &s) == -EINVAL);
	CHECK(cpuset_parse_list("0-1023", &s) == 0 && cpuset_count(&s) == 1024);
	CHECK(cpuset_parse_list("1024", &s) == -ERANGE);
	CHECK(cpuset_parse_list("99999999999999999999", &s) == -ERANGE);
	CHECK(cpuset_parse_list("0,2,4-5,63-65", &s) == 0);
	cpuset_format_list(&s, buf, sizeof(buf));
	CHECK_STR(buf, "0,2,4-5,63-65");
	cpuset_zero(&s);
	cpuset_format_list(&s, buf, sizeof(buf));
	CHECK_STR(buf, "");
	/* Too small a buffer is an error, not a truncated list. */
	cpuset_parse_list("0-3,8", &s);
	CHECK(cpuset_format_list(&s, buf, 3) == -ENOSPC);
}

static void test_cpuset_mask(void)
{
	struct cpuset s, l;
	char buf[CPUSET_LIST_BUFSZ];

	CHECK(cpuset_parse_mask("f\n", &s) == 0);
	cpuset_parse_list("0-3", &l);
	CHECK(cpuset_equal(&s, &l));
	CHECK(cpuset_parse_mask("00000000,0000000f", &s) == 0);
	CHECK(cpuset_equal(&s, &l));
	CHECK(cpuset_parse_mask("1,00000100", &s) == 0);
	cpuset_parse_list("8,32", &l);
	CHECK(cpuset_equal(&s, &l));
	cpuset_format_mask(&s, buf, sizeof(buf));
	CHECK_STR(buf, "1,00000100");
	cpuset_parse_list("0-3", &l);
	cpuset_format_mask(&l, buf, sizeof(buf));
	CHECK_STR(buf, "f");
	cpuset_zero(&l);
	cpuset_format_mask(&l, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	CHECK(cpuset_parse_mask("", &s) == -EINVAL);
	CHECK(cpuset_parse_mask("g", &s) == -EINVAL);
	CHECK(cpuset_parse_mask("1,", &s) == -EINVAL);
	CHECK(cpuset_parse_mask(",1", &s) == -EINVAL);
	CHECK(cpuset_parse_mask("123456789", &s) == -EINVAL);
	/* 40 groups = 1280 bits: fine while the high ones are zero. */
	{
		char big[512] = "";

		for (int i = 0; i < 39; i++)
			strcat(big, "00000000,");
		strcat(big, "00000003");
		CHECK(cpuset_parse_mask(big, &s) == 0 && cpuset_count(&s) == 2);
		big[0] = '1';
		CHECK(cpuset_parse_mask(big, &s) == -ERANGE);
	}
	/* Round trip through both forms. */
	cpuset_parse_list("1,7-9,31-33,100,1023", &l);
	cpuset_format_mask(&l, buf, sizeof(buf));
	CHECK(cpuset_parse_mask(buf, &s) == 0 && cpuset_equal(&s, &l));
}

static void test_stat_parser(void)
{
	struct pstat st;
	char line[1024];

	stat_line(line, sizeof(line), 42, "bash", 0x400100, 12345, 0);
	CHECK(procfs_parse_stat(line, &st) == 0);
	CHECK(st.pid == 42 && st.starttime == 12345 && st.ppid == 1);
	CHECK(st.flags == 0x400100 && st.policy == 0 && st.state == 'S');
	CHECK_STR(st.comm, "bash");

	/* The hostile names: parse from the last ')'. */
	stat_line(line, sizeof(line), 7, "foo) Z ", 0, 99, 1);
	CHECK(procfs_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, "foo) Z ");
	CHECK(st.starttime == 99 && st.policy == 1);
	stat_line(line, sizeof(line), 7, "a (b) c", 0, 5, 0);
	CHECK(procfs_parse_stat(line, &st) == 0 && st.starttime == 5);
	CHECK_STR(st.comm, "a (b) c");
	stat_line(line, sizeof(line), 7, "new\nline", 0, 6, 0);
	CHECK(procfs_parse_stat(line, &st) == 0 && st.starttime == 6);
	CHECK_STR(st.comm, "new\nline");
	stat_line(line, sizeof(line), 7, "))))", 0, 8, 0);
	CHECK(procfs_parse_stat(line, &st) == 0 && st.starttime == 8);
	stat_line(line, sizeof(line), 7, "", 0, 9, 0);
	CHECK(procfs_parse_stat(line, &st) == 0 && st.starttime == 9);

	/* A kernel thread. */
	stat_line(line, sizeof(line), 2, "kthreadd", PF_KTHREAD_BIT, 1, 0);
	CHECK(procfs_parse_stat(line, &st) == 0 && (st.flags & PF_KTHREAD_BIT));

	/* Broken lines. */
	CHECK(procfs_parse_stat("", &st) == -EINVAL);
	CHECK(procfs_parse_stat("42 (x", &st) == -EINVAL);
	CHECK(procfs_parse_stat("42 (x) S 1 2 3", &st) == -EINVAL);
	CHECK(procfs_parse_stat("x (y) S 1 2 3", &st) == -EINVAL);
	CHECK(procfs_parse_stat("0 (y) S 1", &st) == -EINVAL);
	CHECK(procfs_parse_stat("42 (x)", &st) == -EINVAL);
	CHECK(procfs_parse_stat("42 (x) S 1 a", &st) == -EINVAL);
	/* Negative fields such as tty_pgrp = -1 are fine. */
	CHECK(procfs_parse_stat("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 "
				"0 20 0 1 0 3 0 0\n",
				&st) == 0 &&
	      st.starttime == 3);
}

static void test_status_parser(void)
{
	struct cpuset hard, l;
	uid_t uid = 0;
	char cg[256];

	CHECK(procfs_parse_status("Name:\tx\nUid:\t1000\t0\t0\t0\n"
				  "Cpus_allowed:\tff\n"
				  "Cpus_allowed_list:\t0-7\n",
				  &hard, &uid) == 0);
	cpuset_parse_list("0-7", &l);
	CHECK(cpuset_equal(&hard, &l) && uid == 1000);
	/* A comm that looks like a key is escaped in status, on its line. */
	CHECK(procfs_parse_status("Name:\tCpus_allowed_list: 9\n"
				  "Uid:\t5\t0\t0\t0\n"
				  "Cpus_allowed_list:\t1\n",
				  &hard, &uid) == 0);
	CHECK(cpuset_test(&hard, 1) && cpuset_count(&hard) == 1 && uid == 5);
	CHECK(procfs_parse_status("Name:\tx\n", &hard, NULL) == -EINVAL);
	CHECK(procfs_parse_status("Uid:\tx\n", NULL, &uid) == -EINVAL);

	CHECK(procfs_parse_cgroup("1:name=systemd:/foo\n0::/a/b.service\n", cg,
				  sizeof(cg)) == 0);
	CHECK_STR(cg, "/a/b.service");
	CHECK(procfs_parse_cgroup("1:cpu:/x\n", cg, sizeof(cg)) == -EINVAL);

	char cmd[] = "a\0b c\0d\0\0";
	procfs_flatten_cmdline(cmd, sizeof(cmd) - 1);
	CHECK_STR(cmd, "a b c d");

	char esc[64];
	CHECK_STR(procfs_escape("a\nb", esc, sizeof(esc)), "a\\x0ab");
}

static struct topology topo;

static struct config *load(const char *text, char *err, size_t errlen)
{
	struct config *c = NULL;

	if (config_load_string(text, "t.conf", &topo, &c, err, errlen) < 0)
		return NULL;
	return c;
}

/* Write a file of the fake /sys root, e.g. "/devices/system/cpu/online". */
static void put_sys(const char *rel, const char *content)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", sys, rel);
	put(path, content);
}

static void test_topology(void)
{
	struct topology t;
	struct cpuset s, n;

	fixture_reset();
	put_sys("/devices/system/node/node1/cpulist", "2-3\n");
	put_sys("/devices/system/node/node0/cpulist", "0-1\n");
	put_sys("/devices/system/node/possible", "0-1\n");
	CHECK(topology_load(sys, &t) == 0);
	CHECK(t.nnodes == 2 && t.ids[0] == 0 && t.ids[1] == 1);
	CHECK(cpuset_count(&t.all) == 4);
	CHECK(topology_node_index(&t, 1) == 1);
	CHECK(topology_node_index(&t, 7) == -1);
	cpuset_parse_list("1-2", &s);
	topology_nodes_of(&t, &s, &n);
	CHECK(cpuset_count(&n) == 2);

	/*
	 * Node 1's CPUs offline: cpulist is empty, the cpuN links remain.
	 * Rules naming node 1 or CPUs 2-3 stay valid (a restart during CPU
	 * hotplug must not fail); CPUs that were never present do not.
	 */
	put_sys("/devices/system/node/node1/cpulist", "\n");
	put_sys("/devices/system/node/node1/cpu2/online", "0\n");
	put_sys("/devices/system/node/node1/cpu3/online", "0\n");
	CHECK(topology_load(sys, &t) == 0);
	CHECK(cpuset_count(&t.all) == 2 && cpuset_count(&t.present) == 4);
	CHECK(cpuset_count(&t.node_cpus[1]) == 0 &&
	      cpuset_count(&t.node_present[1]) == 2);
	{
		struct topology saved = topo;
		char err[256];
		struct config *c;

		topo = t;
		c = load("rules = ( { name = \"a\"; comm = \"x\"; cpus = \"2-3\"; },"
			 " { name = \"b\"; comm = \"y\"; nodes = [ 1 ]; } );\n",
			 err, sizeof(err));
		CHECK(c != NULL);
		if (c) {
			cpuset_parse_list("2-3", &s);
			CHECK(cpuset_equal(&c->rules[1].cpus, &s));
			config_free(c);
		}
		c = load("rules = ( { comm = \"x\"; cpus = \"4-5\"; } );\n", err,
			 sizeof(err));
		CHECK(c == NULL);
		CHECK_STR(err, "t.conf:1: empty target: none of CPUs \"4-5\" exists");
		topo = saved;
	}

	/* No node directory: one node from cpu/online. */
	fixture_reset();
	put_sys("/devices/system/cpu/online", "0-5\n");
	CHECK(topology_load(sys, &t) == 0 && t.nnodes == 1 &&
	      cpuset_count(&t.node_cpus[0]) == 6);
	fixture_reset();
	CHECK(topology_load(sys, &t) == -ENOENT);
}

static void two_node_topo(void)
{
	memset(&topo, 0, sizeof(topo));
	topo.nnodes = 2;
	topo.ids[0] = 0;
	topo.ids[1] = 1;
	cpuset_parse_list("0-1", &topo.node_cpus[0]);
	cpuset_parse_list("2-3", &topo.node_cpus[1]);
	cpuset_parse_list("0-3", &topo.all);
	topo.node_present[0] = topo.node_cpus[0];
	topo.node_present[1] = topo.node_cpus[1];
	topo.present = topo.all;
}

static void test_rules(void)
{
	char err[512];
	struct config *c = load(
		"rules = (\n"
		" { name = \"exact\"; comm = \"nginx\"; cpus = \"0\"; },\n"
		" { name = \"glob\"; comm = \"db-*\"; user = 1000; nodes = [1]; },\n"
		" { name = \"exe\"; exe = \"/usr/*/java\"; cpus = \"1\"; },\n"
		" { name = \"re\"; cmdline = \"^python3? .*serve\"; cpus = \"2\"; },\n"
		" { name = \"cg\"; cgroup = \"/system.slice/a.service/\"; cpus = \"3\"; },\n"
		" { name = \"all\"; comm = \"*\"; user = \"root\"; cpus = \"0-3\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {0};

	CHECK(c != NULL);
	if (!c) {
		printf("# %s\n", err);
		return;
	}
	a.comm = "nginx";
	CHECK(rules_match(c, &a) == 0);
	a.comm = "nginx2";
	CHECK(rules_match(c, &a) == -1);
	a.comm = "db-main";
	CHECK(rules_match(c, &a) == -1); /* needs uid too */
	a.has_uid = true;
	a.uid = 1000;
	CHECK(rules_match(c, &a) == 1);
	a.uid = 1001;
	CHECK(rules_match(c, &a) == -1);
	a.comm = "x";
	a.exe = "/usr/lib/jvm/bin/java";
	CHECK(rules_match(c, &a) == 2);
	a.exe = "/usr/bin/javac";
	CHECK(rules_match(c, &a) == -1);
	a.cmdline = "python3 -m http.server";
	CHECK(rules_match(c, &a) == 3);
	a.cmdline = "/usr/bin/python3 serve";
	CHECK(rules_match(c, &a) == -1);
	a.cgroup = "/system.slice/a.service";
	CHECK(rules_match(c, &a) == 4);
	a.cgroup = "/system.slice/a.service/sub";
	CHECK(rules_match(c, &a) == 4);
	a.cgroup = "/system.slice/a.servicex";
	CHECK(rules_match(c, &a) == -1);
	a.uid = 0;
	CHECK(rules_match(c, &a) == 5); /* first match wins over later */
	a.comm = "nginx";
	CHECK(rules_match(c, &a) == 0);
	/* Unreadable attributes never match. */
	memset(&a, 0, sizeof(a));
	CHECK(rules_match(c, &a) == -1);
	CHECK(cgroup_has_prefix("/a", "/"));
	CHECK(!cgroup_has_prefix("/ab", "/a"));
	config_free(c);
}

static void test_unit_key(void)
{
	static const struct {
		const char *cgroup, *unit; /* NULL: in no unit */
	} cases[] = {
		{"/system.slice/postgresql@14-main.service",
		 "postgresql@14-main.service"},
		{"/system.slice/x.service/worker/a", "x.service"},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/"
		 "v.scope",
		 "user@1000.service"},
		{"/user.slice/user-1000.slice/session-2.scope",
		 "session-2.scope"},
		{"/init.scope", "init.scope"},
		{"/a.slice/b-c.slice/run-u7.service", "run-u7.service"},
		{"/system.slice", NULL},
		{"/", NULL},
		{"", NULL},
		/* Not a unit under the slices: made by hand, no unit. */
		{"/system.slice/mygroup/x.service", NULL},
		{"/.service", NULL},
	};
	char unit[64], err[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r = rules_unit_of(cases[i].cgroup, unit, sizeof(unit));

		if (cases[i].unit) {
			CHECK(r == 0);
			CHECK_STR(r == 0 ? unit : NULL, cases[i].unit);
		} else {
			CHECK(r == -ENOENT);
		}
	}
	CHECK(rules_unit_of("/s.slice/a-very-long-name-that-does-not-fit-"
			    "in-64-bytes-at-all-really.service",
			    unit, sizeof(unit)) == -ENAMETOOLONG);

	struct config *c = load(
		"rules = (\n"
		" { name = \"pg\"; unit = \"postgresql@*.service\"; cpus = \"0\"; },\n"
		" { name = \"both\"; cgroup = \"/system.slice\"; unit = \"x.service\";"
		" cpus = \"1\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	a.cgroup = "/system.slice/postgresql@14-main.service";
	CHECK(rules_match(c, &a) == 0);
	/* The comm a process gives itself does not matter. */
	a.comm = "postgres";
	CHECK(rules_match(c, &a) == 0);
	a.cgroup = "/system.slice/postgresql.service";
	CHECK(rules_match(c, &a) == -1);
	a.cgroup = "/system.slice/x.service/sub";
	CHECK(rules_match(c, &a) == 1);
	/* Both keys must match: the unit, but under another slice. */
	a.cgroup = "/user.slice/x.service";
	CHECK(rules_match(c, &a) == -1);
	CHECK((c->rules[0].needs & ~NEED_CGROUP) == 0);
	/* The cgroup a cgroup-and-unit rule writes: the deeper one. */
	CHECK(rules_cgroup_target(&c->rules[0],
				  "/system.slice/postgresql@1.service/sub",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/postgresql@1.service");
	CHECK(rules_cgroup_target(&c->rules[1], "/system.slice/x.service/a",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/x.service");
	free(c->rules[1].cgroup);
	c->rules[1].cgroup = strdup("/system.slice/x.service/a/");
	CHECK(rules_cgroup_target(&c->rules[1], "/system.slice/x.service/a/b",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/x.service/a");
	CHECK(rules_cgroup_target(&c->rules[0], "/system.slice", unit,
				  sizeof(unit)) == -ENOENT);
	/* --explain's reasons. */
	a.cgroup = "/user.slice/x.service";
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "unit x.service does not match \"postgresql@*.service\"");
	CHECK(!rules_explain(&c->rules[1], &a, err, sizeof(err)));
	CHECK_STR(err, "cgroup /user.slice/x.service is not under "
		       "/system.slice/x.service/a/");
	a.cgroup = "/system.slice/postgresql@2.service";
	CHECK(rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "every key matches");
	config_free(c);
	c = load("rules = ( { name = \"c\"; comm = \"db*\"; user = 7; cpus = \"0\"; } );",
		 err, sizeof(err));
	if (!c)
		return;
	a.comm = "postgres";
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "comm \"postgres\" does not match \"db*\"");
	a.comm = "db1";
	a.has_uid = true;
	a.uid = 0;
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "uid 0 is not 7 (user 7)");
	config_free(c);
}

static void test_config_errors(void)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{"interval_ms = 1000;\nfoo = 1;\n",
		 "t.conf:2: unknown key 'foo'"},
		{"interval_ms = \"1s\";\n",
		 "t.conf:1: 'interval_ms' must be an integer"},
		{"rules = ( { comm = \"x\"; nodes = [ 5 ]; } );\n",
		 "t.conf:1: node 5 does not exist"},
		{"rules = ( { comm = \"x\";\n nodes = [ ]; } );\n",
		 "t.conf:2: empty target: 'nodes' lists no node"},
		{"rules = ( { comm = \"x\"; } );\n",
		 "t.conf:1: empty target: rule 'rule-1' has neither 'nodes' "
		 "nor 'cpus'"},
		{"rules = ( { comm = \"x\"; cpus = \"\"; } );\n",
		 "t.conf:1: empty target: 'cpus' is empty"},
		{"rules = (\n{ cmdline = \"(\"; cpus = \"0\"; } );\n",
		 NULL /* regerror text varies */},
		{"rules = (\n{ name = \"a\"; comm = \"x\"; cpus = \"0\"; },\n"
		 "{ name = \"a\"; comm = \"y\"; cpus = \"0\"; } );\n",
		 "t.conf:3: duplicate rule name 'a' (first at line 2)"},
		{"rules = ( { comm = ; } );\n",
		 NULL /* libconfig syntax error */},
		{"ratio = { mode = \"fixed\"; softest = \"5:4\"; };\n",
		 "t.conf:1: unknown key 'softest' in fixed ratio"},
		{"ratio = { softest = \"100:1\"; hardest = \"5:4\"; };\n",
		 "t.conf:1: softest ratio 100:1 is harder than hardest 5:4"},
		{"ratio = { hardest = \"1:2\"; };\n",
		 "t.conf:1: 'hardest': allowed must not be below preferred"},
		{"ratio = { mode = \"fixed\"; allowed = 0; };\n",
		 "t.conf:1: 'allowed' = 0 is out of range 1..10000"},
		{"rules = ( { user = \"no-such-user-xyz\"; cpus = \"0\"; } );\n",
		 "t.conf:1: unknown user 'no-such-user-xyz'"},
		{"rules = ( { cpus = \"0\"; } );\n",
		 "t.conf:1: rule 'rule-1' has no match key (comm, exe, "
		 "cmdline, user, cgroup or unit)"},
		{"rules = ( { comm = \"x\"; cpus = \"9-12\"; } );\n",
		 "t.conf:1: empty target: none of CPUs \"9-12\" exists"},
		{"rules = ( { cmdline = \"a+++++++++++++++\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		{"rules = ( { cmdline = \"((a{1,99}){1,99})\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		/* Found by fuzz_config: a huge bound overflowed the estimate. */
		{"rules = ( { cmdline = \"a{99999999999999999999,}\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		{"rules = ( { cmdline = \"(a)\\\\1\"; cpus = \"0\"; } );\n",
		 "t.conf:1: bad regex in 'cmdline': back-references are not "
		 "supported"},
		{"rules = ( { comm = \"x\"; cpus = \"0\"; nodes = [0]; } );\n",
		 "t.conf:1: rule 'rule-1' has both 'nodes' and 'cpus'"},
	};
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct config *c = load(cases[i].text, err, sizeof(err));

		CHECK(c == NULL);
		if (c)
			printf("# case %zu loaded\n", i);
		config_free(c);
		if (cases[i].err)
			CHECK_STR(err, cases[i].err);
		else
			CHECK(!strncmp(err, "t.conf:", 7));
	}

	/* Limits: pattern length and rule count. */
	{
		char text[1024], pat[CONFIG_MAX_PATTERN + 2];
		struct config *c;

		memset(pat, 'a', sizeof(pat) - 1);
		pat[sizeof(pat) - 1] = '\0';
		snprintf(text, sizeof(text),
			 "rules = ( { comm = \"%s\"; cpus = \"0\"; } );", pat);
		c = load(text, err, sizeof(err));
		CHECK(!c);
		CHECK_STR(err, "t.conf:1: 'comm' is longer than 256 bytes");
		config_free(c);
	}
	{
		struct sbuf b = {0};
		struct config *c;

		sbuf_printf(&b, "rules = (\n");
		for (int i = 0; i <= CONFIG_MAX_RULES; i++)
			sbuf_printf(&b, "%s{ comm = \"c%d\"; cpus = \"0\"; }\n",
				    i ? "," : "", i);
		sbuf_printf(&b, ");\n");
		c = load(b.buf, err, sizeof(err));
		CHECK(!c);
		CHECK_STR(err, "t.conf:258: too many rules (at most 256)");
		config_free(c);
		sbuf_free(&b);
	}
}

static void test_config_ok(void)
{
	char err[512];
	struct config *c = load(
		"interval_ms = 500; restore_on_exit = false;\n"
		"ratio = { mode = \"fixed\"; allowed = 20; preferred = 3; };\n"
		"rules = ( { name = \"n\"; comm = \"x\"; nodes = [ 1, 0 ]; "
		"threads = \"main\"; } );\n",
		err, sizeof(err));
	struct cpuset all;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->interval_ms == 500 && !c->restore_on_exit);
	CHECK(c->mode == RATIO_FIXED && c->fixed.allowed == 20 &&
	      c->fixed.preferred == 3);
	cpuset_parse_list("0-3", &all);
	CHECK(cpuset_equal(&c->rules[0].cpus, &all));
	CHECK(c->rules[0].threads == THREADS_MAIN);
	CHECK(cpuset_count(&c->rules[0].node_idx) == 2);
	config_free(c);

	/* Defaults. */
	c = load("", err, sizeof(err));
	CHECK(c && c->mode == RATIO_OFF && c->restore_on_exit &&
	      c->nrules == 0 && c->hardest.allowed == 100 &&
	      c->softest.allowed == 5 && c->softest.preferred == 4);
	config_free(c);
}

static void test_affinity(void)
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

	/* RT thread: skipped before the kernel has to say EINVAL. */
	mktask(103, 103, "rt", 1, 1, "0-3", "\n");
	CHECK(apply_t(103, 103, &target, AFF_ADOPT, false,
			       &err) == AFF_RT);
	CHECK(fake_writes == 0);

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
	aff_write = write_file_at;
}

static struct mgr mgr;

static struct config *mgr_setup_dry(const char *text, bool dry_run)
{
	struct roots r;
	char err[512];
	struct config *c;

	c = load(text, err, sizeof(err));
	if (!c) {
		printf("# %s\n", err);
		return NULL;
	}
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s/run", tmp);
	mgr_init(&mgr, &r, c, &topo, dry_run);
	return c;
}

static struct config *mgr_setup(const char *text)
{
	return mgr_setup_dry(text, false);
}

static void test_manager_scan(void)
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
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(mgr.count == 2); /* 200 and 400; not 300, not the kthread */
	CHECK_STR(soft_of(200, 200), "0-1\n");
	CHECK_STR(soft_of(200, 201), "0-1\n");
	CHECK_STR(soft_of(200, 202), "\n");
	CHECK_STR(soft_of(300, 300), "\n");
	CHECK(mgr.cnt.written == 2 && mgr.cnt.rt == 1 && mgr.cnt.empty == 1);

	/* A rescan writes nothing new; the empty warning is not repeated. */
	unsigned long warns = log_counts[LOG_WARNING];
	fake_writes = 0;
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(fake_writes == 0);
	CHECK(log_counts[LOG_WARNING] == warns);

	/* A new thread via the connector path. */
	mktask(200, 203, "app one", 10, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 200, 203, 200);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(200, 203), "0-1\n");

	/* A forked child of a managed process is evaluated ... */
	mktask(210, 210, "app one", 20, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 200, 210, 210);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr_lookup(&mgr, 210) != NULL);
	CHECK_STR(soft_of(210, 210), "0-1\n");
	/* ... a child of an unmanaged one is not (same attrs, no match). */
	mktask(310, 310, "other", 21, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 300, 310, 310);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr_lookup(&mgr, 310) == NULL);

	/* exec into something else: unmanaged and restored. */
	mktask(210, 210, "bash", 20, 0, "0-3", NULL);
	mgr_eval_pid(&mgr, 210);
	CHECK(mgr_lookup(&mgr, 210) == NULL);
	CHECK_STR(soft_of(210, 210), "\n");

	/* A new thread of a pid that was reused behind our back: no write. */
	mktask(210, 210, "app one", 30, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 200, 210, 210);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr_lookup(&mgr, 210) != NULL);
	mktask(210, 210, "app one", 31, 0, "0-3", "\n"); /* reused */
	mktask(210, 211, "app one", 31, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 210, 211, 210);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(210, 211), "\n");
	CHECK(mgr_lookup(&mgr, 210) == NULL);
	{
		char rm[PATH_MAX + 16];

		snprintf(rm, sizeof(rm), "rm -rf %s/210", proc);
		CHECK(system(rm) == 0);
	}

	/* Exit of a non-leader thread keeps the process, leader drops it. */
	mgr_on_exit(&mgr, 201, 200);
	CHECK(mgr_lookup(&mgr, 200) != NULL);
	mgr_on_exit(&mgr, 200, 200);
	CHECK(mgr_lookup(&mgr, 200) == NULL);

	/* pid reuse: same pid, new start time -> a new process. */
	mgr_scan(&mgr);
	struct managed *e = mgr_lookup(&mgr, 200);
	CHECK(e && e->starttime == 10);
	mktask(200, 200, "app two", 77, 0, "0-3", "\n");
	mgr_eval_pid(&mgr, 200);
	e = mgr_lookup(&mgr, 200);
	CHECK(e && e->starttime == 77);

	/* Processes that vanished are forgotten by the next scan. */
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/400", proc);
	CHECK(system(cmd) == 0);
	mgr_scan(&mgr);
	CHECK(mgr_lookup(&mgr, 400) == NULL);
	CHECK(mgr.count == 1);

	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

static void test_manager_errors(void)
{
	struct config *c;
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
	mgr_scan(&mgr);
	CHECK(mgr.cnt.einval == 6);
	CHECK(log_counts[LOG_WARNING] == warns + 1);
	CHECK(mgr.count == 5);

	/* EPERM: warned once per process, then it is left alone. */
	fake_err = -EPERM;
	fake_writes = 0;
	warns = log_counts[LOG_WARNING];
	mgr_scan(&mgr);
	CHECK(log_counts[LOG_WARNING] == warns + 5);
	CHECK(fake_writes == 5); /* stops at the first thread of 500 */
	fake_writes = 0;
	mgr_scan(&mgr);
	CHECK(fake_writes == 0);
	CHECK(log_counts[LOG_WARNING] == warns + 5);

	/* Gone mid-operation: silent. */
	fake_err = -ESRCH;
	mgr_done(&mgr);
	mgr_setup("rules = ( { name = \"jobs\"; comm = \"job\"; "
		  "cpus = \"1\"; } );");
	warns = log_counts[LOG_WARNING];
	mgr_scan(&mgr);
	CHECK(log_counts[LOG_WARNING] == warns);
	CHECK(mgr.cnt.gone == 6);
	fake_err = 0;
	mgr_done(&mgr);
	config_free((struct config *)mgr.cfg);
	config_free(c);
	aff_write = write_file_at;
}

/*
 * Anyone can start processes whose hard affinity excludes a rule's
 * CPUs: one warning each, but at most LOG_RL_BURST per rule and
 * window, then one saying how many were suppressed.
 */
static void test_manager_warn_limit(void)
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
	CHECK(mgr_scan(&mgr) == 0 && mgr.cnt.empty == 30);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST);
	CHECK(log_counts[LOG_DEBUG] >= debugs + 30 - LOG_RL_BURST);
	/* Once per process still: a rescan adds none. */
	mgr_scan(&mgr);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST);
	mgr_flush_logs(&mgr, now_ms() + LOG_RL_WINDOW_MS);
	CHECK(log_counts[LOG_WARNING] == warns + LOG_RL_BURST + 1);
	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

static void test_manager_reload(void)
{
	struct config *c1, *c2, *c3;
	char err[512];

	fake_fixture();
	mktask(600, 600, "keep", 1, 0, "0-3", "\n");
	mktask(601, 601, "change", 1, 0, "0-3", "\n");
	mktask(602, 602, "gone", 1, 0, "0-3", "\n");
	mktask(603, 603, "foreign", 1, 0, "0-3", "\n");
	c1 = mgr_setup(
		"rules = (\n"
		"{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; },\n"
		"{ name = \"change\"; comm = \"change\"; cpus = \"0\"; },\n"
		"{ name = \"gone\"; comm = \"gone\"; cpus = \"0\"; },\n"
		"{ name = \"foreign\"; comm = \"foreign\"; cpus = \"0\"; }\n"
		");");
	if (!c1)
		return;
	mgr_scan(&mgr);
	CHECK(mgr.count == 4);
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
	CHECK(mgr_reload(&mgr, c2) == 0 && mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(600, 600), "0\n");   /* untouched */
	CHECK_STR(soft_of(601, 601), "1\n");   /* re-applied */
	CHECK_STR(soft_of(602, 602), "\n"); /* restored */
	CHECK_STR(soft_of(603, 603), "2-3\n"); /* foreign: left alone */
	CHECK(mgr_lookup(&mgr, 600)->rule == 1);
	CHECK(mgr.rule_count[0] == 1 && mgr.rule_count[1] == 1);
	CHECK(fake_writes == 3); /* 601 reset + 601 apply + 602 reset */
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
	config_free(c1);
	CHECK(mgr_scan_start(&mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(&mgr, 0) == 0);
	mgr_on_change(&mgr, 601);
	size_t others = mgr.others.count;
	fake_writes = 0;
	CHECK(mgr_reload(&mgr, c3) == 1 && mgr.cfg == c3);
	CHECK(mgr_scan_busy(&mgr) && mgr.scan_kind == SCAN_FULL);
	CHECK(dirtyq_count(&mgr.dirty) == 1 && mgr.others.count == others);
	CHECK(mgr_lookup(&mgr, 600)->rule == 1 && mgr.rule_count[0] == 1);
	config_free(c2);
	CHECK(mgr_scan_finish(&mgr) == 0 && mgr_flush(&mgr, UINT64_MAX));
	CHECK(fake_writes == 0 && mgr.count == 2);

	/* Shutdown with restore_on_exit. */
	mgr_restore_all(&mgr);
	CHECK_STR(soft_of(600, 600), "\n");
	CHECK_STR(soft_of(601, 601), "\n");
	mgr_done(&mgr);
	config_free(c3);
	aff_write = write_file_at;
}

/* The status text of the manager's state, as the daemon formats it. */
static void mgr_status(const struct mgr *m, struct sbuf *b)
{
	double *util = calloc(m->topo->nnodes + 1, sizeof(*util));
	struct status_snapshot s = {
		.cfg = m->cfg,
		.topo = m->topo,
		.node_util = util,
		.rule_count = m->rule_count,
		.processes = m->count,
		.hand_processes = m->nhand_procs,
		.cnt = &m->cnt,
	};
	int *pids = NULL;
	int n = mgr_status_pids(m, &pids);

	s.pids = pids;
	s.npids = n > 0 ? (unsigned int)n : 0;
	status_format(&s, b);
	free(pids);
	free(util);
}

static void test_manager_many(void)
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
	mgr_scan(&mgr);
	CHECK(mgr.count == 1000);
	CHECK(mgr.procs.nbuckets >= 512);
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/1* %s/2[0-8]*", proc, proc);
	CHECK(system(cmd) == 0);
	mgr_scan(&mgr);
	CHECK(mgr.count == 50);
	CHECK(mgr.procs.nbuckets == 256);
	struct sbuf b = {0};
	mgr_status(&mgr, &b);
	CHECK(b.buf && strstr(b.buf, "processes 50 pids 2901 2903"));
	sbuf_free(&b);
	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

static void test_aff_decide(void)
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

static void set_soft(int pid, int tid, const char *mask)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list", proc,
		 pid, tid);
	put(path, mask);
}

static void rm_task(int pid, int tid)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d/task/%d", proc, pid, tid);
	CHECK(system(cmd) == 0);
}

static void test_manager_hand(void)
{
	struct config *c1, *c2, *c3;
	unsigned long infos;
	char err[512];

	fake_fixture();
	mktask(700, 700, "app", 1, 0, "0-3", "\n");
	mktask(700, 701, "app", 1, 0, "0-3", "\n");
	mktask(710, 710, "app", 2, 0, "0-3", "\n");
	c1 = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		       "cpus = \"0\"; } );");
	if (!c1)
		return;
	/* Adoption takes any mask, also one set before we came. */
	set_soft(710, 710, "2-3\n");
	CHECK(mgr_scan(&mgr) == 0);
	CHECK_STR(soft_of(700, 700), "0\n");
	CHECK_STR(soft_of(700, 701), "0\n");
	CHECK_STR(soft_of(710, 710), "0\n");
	CHECK(mgr.nhand_procs == 0);

	/* Set by hand later: left alone by scans, logged once at info. */
	set_soft(700, 701, "2-3\n");
	set_soft(710, 710, "none\n"); /* opted out by hand */
	infos = log_counts[LOG_INFO];
	fake_writes = 0;
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(fake_writes == 0);
	CHECK_STR(soft_of(700, 701), "2-3\n");
	CHECK_STR(soft_of(710, 710), "none\n");
	CHECK(log_counts[LOG_INFO] == infos + 2);
	CHECK(mgr.nhand_procs == 2 && mgr.cnt.hand == 2);
	{
		struct sbuf b = {0};

		mgr_status(&mgr, &b);
		CHECK(b.buf && strstr(b.buf, "rule app cpus 0 processes 2 "
					     "pids 700 710\n"
					     "hand-managed rule app processes "
					     "2 pids 700 710\n"));
		sbuf_free(&b);
	}

	/* New threads: inherit, where they start, is taken; hand-set not. */
	mktask(700, 702, "app", 1, 0, "0-3", "\n");
	mgr_on_fork(&mgr, 700, 702, 700);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(700, 702), "0\n");
	mktask(700, 703, "app", 1, 0, "0-3", "2-3\n"); /* from 701 */
	mgr_on_fork(&mgr, 700, 703, 700);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(700, 703), "2-3\n");
	/* A thread exit is forgotten, hand-set or not. */
	rm_task(700, 703);
	mgr_on_exit(&mgr, 703, 700);
	CHECK(mgr_lookup(&mgr, 700)->own.nthreads == 3);

	/* A reload that changes the rule keeps the hand-set masks ... */
	c2 = load("rules = ( { name = \"app\"; comm = \"app\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(mgr_reload(&mgr, c2) == 0 && mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(700, 700), "1\n");
	CHECK_STR(soft_of(700, 702), "1\n");
	CHECK_STR(soft_of(700, 701), "2-3\n");
	CHECK_STR(soft_of(710, 710), "none\n");
	CHECK(mgr.count == 2 && mgr.nhand_procs == 2);
	config_free(c1);

	/* ... and stop restores only what we set. */
	mgr_restore_all(&mgr);
	CHECK_STR(soft_of(700, 700), "\n");
	CHECK_STR(soft_of(700, 702), "\n");
	CHECK_STR(soft_of(700, 701), "2-3\n");
	mgr_scan(&mgr);

	/* exec: only the leader is left, and it is adopted afresh. */
	rm_task(700, 701);
	rm_task(700, 702);
	set_soft(700, 700, "3\n");
	mgr_on_exec(&mgr, 700);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(700, 700), "1\n");
	CHECK(mgr_lookup(&mgr, 700)->own.nhand == 0 && mgr.nhand_procs == 1);

	/* SIGUSR1: re-adopt everything. */
	CHECK(mgr_readopt(&mgr) == 1);
	CHECK(mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(710, 710), "1\n");
	CHECK(mgr.nhand_procs == 0);

	/* A removed rule lets hand-managed processes go as they are. */
	set_soft(710, 710, "3\n");
	mgr_scan(&mgr);
	c3 = load("rules = ( { name = \"other\"; comm = \"zzz\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(mgr_reload(&mgr, c3) == 0 && mgr_scan_finish(&mgr) == 0);
	CHECK(mgr.count == 0 && mgr.nhand_procs == 0);
	CHECK_STR(soft_of(710, 710), "3\n");
	CHECK_STR(soft_of(700, 700), "\n");
	config_free(c2);
	mgr_done(&mgr);

	/* A dry run writes nothing, so it must not see hand-set masks. */
	c2 = mgr_setup_dry("rules = ( { name = \"app\"; comm = \"app\"; "
			   "cpus = \"0\"; } );",
			   true);
	fake_writes = 0;
	CHECK(c2 && mgr_scan(&mgr) == 0 && mgr_scan(&mgr) == 0);
	CHECK(mgr.count == 2 && mgr.nhand_procs == 0);
	CHECK(fake_writes == 0);
	mgr_done(&mgr);
	config_free(c2);
	config_free(c3);
	aff_write = write_file_at;
}

static unsigned int ticks;

static void count_tick(void *ud)
{
	(void)ud;
	ticks++;
}

static void test_manager_slices(void)
{
	struct config *c, *c2;
	uint64_t scans;
	char err[512];
	int steps = 0, r;

	fake_fixture();
	for (int p = 800; p < 1100; p++)
		mktask(p, p, p % 3 ? "rest" : "app", (unsigned)p, 0, "0-3",
		       "\n");
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0\"; } );");
	if (!c)
		return;
	mgr.tick = count_tick;
	ticks = 0;
	/* A deadline already past: one pid per step, then back to the loop. */
	CHECK(mgr_scan_start(&mgr, SCAN_FULL) == 0);
	while ((r = mgr_scan_step(&mgr, 0)) == 0)
		steps++;
	CHECK(r == 1 && !mgr_scan_busy(&mgr));
	CHECK(steps >= 299);
	CHECK(mgr.count == 100 && mgr.others.count == 200);
	CHECK(ticks == 0); /* one pid per step: never 64 in a row */
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(ticks >= 4); /* 300 pids in one go */

	/*
	 * LIGHT trusts what it knows: a comm change without an event is
	 * not read, a new pid is; ATTRS re-reads and finds the change.
	 */
	mktask(802, 802, "app", 802, 0, "0-3", "\n");
	mktask(1200, 1200, "app", 1200, 0, "0-3", "\n");
	CHECK(mgr_scan_start(&mgr, SCAN_LIGHT) == 0 &&
	      mgr_scan_finish(&mgr) == 0);
	CHECK(mgr_lookup(&mgr, 802) == NULL);
	CHECK_STR(soft_of(1200, 1200), "0\n");
	CHECK(mgr_scan_start(&mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(802, 802), "0\n");
	/* ATTRS and LIGHT leave the threads of known processes alone. */
	mktask(802, 1250, "app", 802, 0, "0-3", "\n");
	CHECK(mgr_scan_start(&mgr, SCAN_ATTRS) == 0 &&
	      mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(802, 1250), "\n");
	/* NEW reads only the threads not met before. */
	fake_writes = 0;
	CHECK(mgr_scan_start(&mgr, SCAN_NEW) == 0 &&
	      mgr_scan_finish(&mgr) == 0);
	CHECK_STR(soft_of(802, 1250), "0\n");
	CHECK(fake_writes == 1);
	/* Exits are noticed by every kind; children of others are known. */
	mgr_on_fork(&mgr, 803, 1300, 1300);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr.count == 102 && mgr.others.count == 200);
	rm_task(1200, 1200);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/1200", proc);
		CHECK(system(cmd) == 0);
	}
	CHECK(mgr_scan_start(&mgr, SCAN_LIGHT) == 0 &&
	      mgr_scan_finish(&mgr) == 0);
	CHECK(mgr_lookup(&mgr, 1200) == NULL && mgr.count == 101);
	CHECK(mgr.others.count == 199); /* 1300 never showed up */

	/* Many threads: all remembered, in order. */
	for (int t = 1400; t < 1440; t++)
		mktask(1400, t, "app", 1400, 0, "0-3", "\n");
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(mgr_lookup(&mgr, 1400) && mgr_lookup(&mgr, 1400)->own.nthreads == 40);
	CHECK(mgr_lookup(&mgr, 1400)->own.threads[39].tid == 1439);
	CHECK_STR(soft_of(1400, 1421), "0\n");
	rm_task(1400, 1421);
	mgr_on_exit(&mgr, 1421, 1400);
	CHECK(mgr_lookup(&mgr, 1400)->own.nthreads == 39);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/1400", proc);
		CHECK(system(cmd) == 0);
	}

	/* A reload that changes a rule in the middle of a scan starts over. */
	c2 = load("rules = ( { name = \"app\"; comm = \"app\"; "
		  "cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(c2 && mgr_scan_start(&mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(&mgr, 0) == 0);
	scans = mgr.cnt.scans;
	CHECK(mgr_reload(&mgr, c2) == 0 && mgr_scan_busy(&mgr));
	CHECK(mgr.cnt.scans == scans + 1);
	config_free(c);
	CHECK(mgr_scan_finish(&mgr) == 0 && mgr.count == 101);
	/* One that keeps the rules lets it go on. */
	c = load("rules = ( { name = \"app\"; comm = \"app\"; "
		 "cpus = \"1\"; } );",
		 err, sizeof(err));
	CHECK(c && mgr_scan_start(&mgr, SCAN_FULL) == 0);
	CHECK(mgr_scan_step(&mgr, 0) == 0);
	scans = mgr.cnt.scans;
	CHECK(mgr_reload(&mgr, c) == 1 && mgr_scan_busy(&mgr));
	CHECK(mgr.cnt.scans == scans);
	config_free(c2);
	CHECK(mgr_scan_finish(&mgr) == 0 && mgr.count == 101);
	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

static void test_sampler(void)
{
	struct sampler *s = calloc(1, sizeof(*s));
	double util[2];

	CHECK(sampler_feed(s, "cpu  0 0 0 0 0 0 0 0 0 0\n"
			      "cpu0 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu1 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu2 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu3 100 0 0 100 0 0 0 0 0 0\n"
			      "intr 1 2 3\n") == 0);
	CHECK(cpuset_empty(&s->valid));
	CHECK(sampler_feed(s, "cpu0 190 0 0 110 0 0 0 0 0 0\n"
			      "cpu1 170 0 10 120 0 0 0 0 0 0\n"
			      "cpu2 110 0 0 180 10 0 0 0 0 0\n"
			      "cpu3 100 0 0 200 0 0 0 0 0 0\n") == 0);
	CHECK(s->util[0] > 0.899 && s->util[0] < 0.901);
	CHECK(s->util[1] > 0.799 && s->util[1] < 0.801);
	CHECK(s->util[2] > 0.099 && s->util[2] < 0.101);
	CHECK(s->util[3] == 0.0);
	two_node_topo();
	sampler_node_util(s, &topo, util);
	CHECK(util[0] > 0.849 && util[0] < 0.851);
	CHECK(util[1] > 0.049 && util[1] < 0.051);
	/* Counters going backwards (hotplug): no value this round. */
	CHECK(sampler_feed(s, "cpu0 10 0 0 10 0 0 0 0 0 0\n") == 0);
	CHECK(cpuset_empty(&s->valid));
	CHECK(sampler_feed(s, "garbage\n") == -EINVAL);
	CHECK(sampler_feed(s, "cpu0 1 2\n") == -EINVAL);

	/* Tasks queued per CPU: run_delay over wall time (ns). */
	CHECK(sampler_feed_delay(s, "version 15\ntimestamp 4295\n"
				    "cpu0 0 0 10 2 8 4 1000 500000000 9\n"
				    "domain0 3 1 2 3 4 5 6 7 8 9 10\n"
				    "cpu1 0 0 10 2 8 4 1000 0 9\n",
				 1000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "version 15\n"
				    "cpu0 0 0 10 2 8 4 1000 2500000000 9\n"
				    "cpu1 0 0 10 2 8 4 1000 100000000 9\n",
				 2000000000) == 0);
	CHECK(cpuset_test(&s->wait_valid, 0) && cpuset_test(&s->wait_valid, 1));
	CHECK(s->wait[0] > 1.999 && s->wait[0] < 2.001);
	CHECK(s->wait[1] > 0.099 && s->wait[1] < 0.101);
	/* Backwards (hotplug), then a line cut short: nothing known. */
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000 5 9\n",
				 3000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000\n",
				 4000000000) == -EINVAL);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000 9 9\n",
				 5000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	free(s);
}

/* Drive the controller with one utilization pair per sample. */
struct run {
	unsigned int soften, harden, flips;
	struct ratio last;
};

static struct run drive(const struct ctl_params *p, struct ctl_state *s,
			double u0, double u1, int samples, uint64_t *now)
{
	struct cpuset g;
	double util[2] = {u0, u1};
	struct ctl_input in = {util, 2, &g, 1, 0};
	struct run r = {0, 0, 0, {0, 0}};
	enum ctl_action prev = CTL_HOLD;
	char reason[160];

	cpuset_zero(&g);
	cpuset_set(&g, 0); /* managed work prefers node 0 */
	for (int i = 0; i < samples; i++) {
		enum ctl_action a;

		*now += 1000;
		in.now_ms = *now;
		a = ctl_step(p, s, &in, reason, sizeof(reason));
		if (a == CTL_SOFTEN)
			r.soften++;
		if (a == CTL_HARDEN)
			r.harden++;
		if (a != CTL_HOLD && prev != CTL_HOLD && a != prev)
			r.flips++;
		if (a != CTL_HOLD)
			prev = a;
	}
	r.last = ctl_ratio(s);
	return r;
}

static void test_control(void)
{
	struct ctl_params p = {{5, 4}, {100, 1}, 85, 50, 3, 5000};
	struct ctl_state s;
	struct run r;
	uint64_t now = 0;

	ctl_init(&s, &p);
	CHECK(s.ladder[0].allowed == 100 && s.ladder[0].preferred == 1);
	CHECK(s.ladder[s.nrungs - 1].allowed == 5 &&
	      s.ladder[s.nrungs - 1].preferred == 4);
	for (unsigned int i = 1; i < s.nrungs; i++)
		CHECK((unsigned long long)s.ladder[i].allowed *
			      s.ladder[i - 1].preferred <
		      (unsigned long long)s.ladder[i - 1].allowed *
			      s.ladder[i].preferred);

	/* Imbalance: node 0 full, node 1 idle -> soften, rate limited. */
	r = drive(&p, &s, 0.95, 0.10, 3, &now);
	CHECK(r.soften == 1); /* only after hold = 3 samples */
	r = drive(&p, &s, 0.95, 0.10, 4, &now);
	CHECK(r.soften == 0); /* min_change_ms = 5 s not yet over */
	r = drive(&p, &s, 0.95, 0.10, 2, &now);
	CHECK(r.soften == 1); /* 5 s after the first step */
	r = drive(&p, &s, 0.95, 0.10, 200, &now);
	CHECK(r.last.allowed == 5 && r.last.preferred == 4);
	CHECK(r.flips == 0);
	/* Stays at the bound. */
	r = drive(&p, &s, 0.95, 0.10, 20, &now);
	CHECK(r.soften == 0 && r.last.allowed == 5);

	/* Deadband: moderately loaded, nothing moves. */
	r = drive(&p, &s, 0.70, 0.60, 100, &now);
	CHECK(r.soften == 0 && r.harden == 0);

	/* Balance with every node busy -> harden back to 100:1. */
	r = drive(&p, &s, 0.95, 0.92, 200, &now);
	CHECK(r.harden >= 1 && r.soften == 0);
	CHECK(r.last.allowed == 100 && r.last.preferred == 1);

	/* Light load that fits at home also hardens. */
	ctl_init(&s, &p);
	drive(&p, &s, 0.95, 0.10, 40, &now);
	CHECK(s.rung > 0);
	r = drive(&p, &s, 0.20, 0.10, 200, &now);
	CHECK(r.last.allowed == 100);

	/* Noise around the thresholds: no oscillation. */
	ctl_init(&s, &p);
	{
		unsigned int flips = 0, changes = 0;
		uint64_t seed = 12345;

		for (int i = 0; i < 2000; i++) {
			seed = seed * 6364136223846793005ULL + 1;
			double n = (double)(seed >> 40) / (double)(1 << 24);
			/* Alternate between "just saturated" and "just not". */
			double u0 = (i / 2) % 2 ? 0.86 + 0.05 * n : 0.80;
			double u1 = 0.45 + 0.1 * n;

			r = drive(&p, &s, u0, u1, 1, &now);
			changes += r.soften + r.harden;
			flips += r.flips;
		}
		CHECK(changes == 0); /* never 3 samples in a row */
		CHECK(flips == 0);
	}
	/* A square wave slower than hold: at most one step per 5 s. */
	ctl_init(&s, &p);
	{
		unsigned int changes = 0;

		for (int i = 0; i < 100; i++) {
			r = drive(&p, &s, 0.95, i % 2 ? 0.10 : 0.95, 4, &now);
			changes += r.soften + r.harden;
		}
		CHECK(changes <= 400 * 1000 / 5000);
	}
	/* Two instances, one per node, both busy: harden, never soften. */
	{
		struct cpuset g[2];
		double util[2] = {0.95, 0.95};
		struct ctl_input in = {util, 2, g, 2, 0};
		char reason[160];
		unsigned int soft = 0;

		cpuset_zero(&g[0]);
		cpuset_zero(&g[1]);
		cpuset_set(&g[0], 0);
		cpuset_set(&g[1], 1);
		ctl_init(&s, &p);
		s.rung = s.nrungs - 1;
		for (int i = 0; i < 100; i++) {
			now += 1000;
			in.now_ms = now;
			if (ctl_step(&p, &s, &in, reason, sizeof(reason)) ==
			    CTL_SOFTEN)
				soft++;
		}
		CHECK(soft == 0 && s.rung == 0);
		/* Instance A busy, B idle: A may spill into node 1. */
		util[1] = 0.05;
		for (int i = 0; i < 100; i++) {
			now += 1000;
			in.now_ms = now;
			ctl_step(&p, &s, &in, reason, sizeof(reason));
		}
		CHECK(s.rung == s.nrungs - 1);
	}
	/* No managed work: hold. */
	{
		double util[2] = {1, 0};
		struct ctl_input in = {util, 2, NULL, 0, 0};
		char reason[160];

		CHECK(ctl_step(&p, &s, &in, reason, sizeof(reason)) ==
		      CTL_HOLD);
		CHECK_STR(reason, "no managed work");
	}
	/* softest == hardest: a single rung. */
	{
		struct ctl_params q = p;

		q.softest = q.hardest;
		ctl_init(&s, &q);
		CHECK(s.nrungs == 1);
	}
}

static void test_write_order(void)
{
	/* Every transition between valid ratios keeps a valid midpoint. */
	static const unsigned int v[] = {1, 2, 3, 4, 5, 10, 100, 10000};
	bool ok = true;

	for (size_t a = 0; a < ARRAY_SIZE(v); a++)
		for (size_t b = 0; b <= a; b++)
			for (size_t c = 0; c < ARRAY_SIZE(v); c++)
				for (size_t d = 0; d <= c; d++) {
					struct ratio cur = {v[a], v[b]};
					struct ratio nx = {v[c], v[d]};
					struct ratio mid;

					if (ctl_write_allowed_first(cur, nx))
						mid = (struct ratio){
							nx.allowed,
							cur.preferred};
					else
						mid = (struct ratio){
							cur.allowed,
							nx.preferred};
					if (mid.allowed < mid.preferred)
						ok = false;
				}
	CHECK(ok);
}

static int ev_count;
static struct pc_event ev_last;

static void ev_cb(const struct pc_event *e, void *ud)
{
	(void)ud;
	ev_count++;
	ev_last = *e;
}

static void test_procconn_parse(void)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		struct proc_event ev;
	} __attribute__((packed)) m;

	memset(&m, 0, sizeof(m));
	m.nl.nlmsg_len = sizeof(m);
	m.nl.nlmsg_type = NLMSG_DONE;
	m.cn.id.idx = CN_IDX_PROC;
	m.cn.id.val = CN_VAL_PROC;
	m.cn.len = sizeof(m.ev);
	m.ev.what = PROC_EVENT_FORK;
	m.ev.event_data.fork.parent_pid = 10;
	m.ev.event_data.fork.parent_tgid = 10;
	m.ev.event_data.fork.child_pid = 11;
	m.ev.event_data.fork.child_tgid = 10;
	ev_count = 0;
	CHECK(procconn_parse(&m, sizeof(m), ev_cb, NULL) == 1);
	CHECK(ev_last.kind == PC_FORK && ev_last.pid == 11 &&
	      ev_last.tgid == 10 && ev_last.parent_tgid == 10);
	m.ev.what = PROC_EVENT_EXIT;
	m.ev.event_data.exit.process_pid = 12;
	m.ev.event_data.exit.process_tgid = 12;
	CHECK(procconn_parse(&m, sizeof(m), ev_cb, NULL) == 1);
	CHECK(ev_last.kind == PC_EXIT && ev_last.pid == 12);
	/* Truncated payload and foreign connector ids are ignored. */
	m.cn.len = 4;
	CHECK(procconn_parse(&m, sizeof(m), ev_cb, NULL) == 0);
	m.cn.len = sizeof(m.ev);
	m.cn.id.idx = 7;
	CHECK(procconn_parse(&m, sizeof(m), ev_cb, NULL) == 0);
	CHECK(procconn_parse(&m, 3, ev_cb, NULL) == 0);

	/*
	 * Found by fuzz_proc: a second header that claims more than is left
	 * used to wrap the remaining length and read past the buffer.
	 */
	{
		uint32_t *raw = calloc(1, 40);
		unsigned char *b = (unsigned char *)raw;

		b[0] = 17;  /* nlmsg_len of message 1 */
		b[20] = 17; /* message 2, at NLMSG_ALIGN(17) */
		CHECK(procconn_parse(raw, 37, ev_cb, NULL) == 0);
		free(raw);
	}
	/* Events name the kernel's PIDs: not those of a fixture tree. */
	CHECK(!procconn_names_root(tmp));
	CHECK(procconn_names_root("/proc"));
}

static void test_util(void)
{
	uint64_t v;
	char path[PATH_MAX];

	CHECK(parse_u64("123", &v) == 0 && v == 123);
	CHECK(parse_u64("", &v) == -EINVAL);
	CHECK(parse_u64("1x", &v) == -EINVAL);
	CHECK(parse_u64("99999999999999999999999", &v) == -ERANGE);
	fixture_reset();
	snprintf(path, sizeof(path), "%s/run/status", tmp);
	mkdirs(strcat(strcpy(path, tmp), "/run"));
	strcat(path, "/status");
	CHECK(write_file_atomic(path, "hello\n", 6) == 0);
	CHECK_STR(get(path), "hello\n");
	strcat(path, ".tmp");
	CHECK(access(path, F_OK) < 0);
}

static void test_notify(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char name[64], buf[64], pid[32];
	socklen_t len;
	ssize_t n;
	int fd;

	/* The watchdog period, for this process only. */
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "200000", 1);
	CHECK(notify_watchdog_usec() == 200000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	CHECK(notify_watchdog_usec() == 200000);
	setenv("WATCHDOG_PID", "1", 1);
	CHECK(notify_watchdog_usec() == 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "x", 1);
	CHECK(notify_watchdog_usec() == 0);
	unsetenv("WATCHDOG_USEC");
	CHECK(notify_watchdog_usec() == 0);

	/* Not under systemd: nothing to do, no error. */
	unsetenv("NOTIFY_SOCKET");
	CHECK(notify_send("READY=1") == 0);
	setenv("NOTIFY_SOCKET", "relative", 1);
	CHECK(notify_send("READY=1") < 0);
	/* An abstract socket, "@name". */
	snprintf(name, sizeof(name), "@softaffd-unit-%d", (int)getpid());
	memcpy(sa.sun_path, name, strlen(name));
	sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			  strlen(name));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, len) == 0);
	setenv("NOTIFY_SOCKET", name, 1);
	CHECK(notify_sendf("STATUS=%d processes", 3) == 0);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n == 18);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "STATUS=3 processes");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
}

/* ---- issue #14: bounded work, least privilege, the ratio actuator ---- */

static void test_rules_lazy(void)
{
	char err[512], cmd[4096];
	struct config *c = load(
		"rules = (\n"
		" { name = \"a\"; comm = \"a*\"; cmdline = \"x\"; cpus = \"0\"; },\n"
		" { name = \"u\"; user = 7; cmdline = \"y\"; cpus = \"1\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {.loaded = NEED_COMM, .comm = "b",
			       .regex_budget = RULES_REGEX_BUDGET};
	unsigned int at = 0, need = 0;
	struct sbuf b = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	/* comm rules out rule a without its command line; u needs the uid. */
	CHECK(rules_match_from(c, &a, 0, &at, &need) == RULES_NEED &&
	      at == 1 && need == NEED_UID);
	a.loaded |= NEED_UID;
	a.has_uid = true;
	a.uid = 8;
	/* ... and uid 8 rules out u: the command line is never asked for. */
	CHECK(rules_match_from(c, &a, at, &at, &need) == RULES_NONE);
	a.uid = 7;
	CHECK(rules_match_from(c, &a, 1, &at, &need) == RULES_NEED &&
	      need == NEED_CMDLINE);
	config_free(c);

	/* The total regex work per process is bounded: 256 worst rules. */
	sbuf_printf(&b, "rules = (\n");
	for (int i = 0; i < CONFIG_MAX_RULES; i++)
		sbuf_printf(&b, "%s{ name = \"r%d\"; cmdline = "
			    "\".{1,250}x{1,250}\"; cpus = \"0\"; }\n",
			    i ? "," : "", i);
	sbuf_printf(&b, ");\n");
	c = load(b.buf, err, sizeof(err));
	sbuf_free(&b);
	CHECK(c != NULL);
	if (!c)
		return;
	memset(cmd, 'a', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	a = (struct proc_attrs){.loaded = NEED_COMM | NEED_CMDLINE,
				.comm = "a", .cmdline = cmd,
				.regex_budget = RULES_REGEX_BUDGET};
	uint64_t t0 = now_ms();
	CHECK(rules_match_from(c, &a, 0, &at, &need) == RULES_NONE);
	printf("# 256 worst-case regexes on 4 KiB: %llu ms, %u skipped\n",
	       (unsigned long long)(now_ms() - t0), a.regex_skipped);
	CHECK(a.regex_skipped >= CONFIG_MAX_RULES - 2);
	/* A short command line fits them all. */
	a = (struct proc_attrs){.loaded = NEED_COMM | NEED_CMDLINE,
				.comm = "a", .cmdline = "ax",
				.regex_budget = RULES_REGEX_BUDGET};
	CHECK(rules_match_from(c, &a, 0, &at, &need) == 0 &&
	      !a.regex_skipped);
	config_free(c);
}

static void test_ratelimit(void)
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

static void test_budget(void)
{
	struct budget b = {100, 1000, 0, 0};

	CHECK(budget_left(&b, 5000) == 100 && b.start_ms == 5000);
	budget_charge(&b, 60);
	CHECK(budget_left(&b, 5500) == 40);
	budget_charge(&b, 60);
	CHECK(budget_left(&b, 5999) == 0 && budget_renews(&b) == 6000);
	CHECK(budget_left(&b, 6000) == 100);
}

static void test_owned(void)
{
	struct owned o = {0};
	int tids[] = {10, 12};

	CHECK(owned_remember(&o, 12, false) == 0);
	CHECK(owned_remember(&o, 10, true) == 1);
	CHECK(owned_remember(&o, 11, true) == 0);
	CHECK(o.nthreads == 3 && o.threads[0].tid == 10 && o.nhand == 2);
	CHECK(owned_forget(&o, 11) == 0 && o.nhand == 1);
	CHECK(owned_remember(&o, 10, false) == -1 && !o.nhand);
	CHECK(owned_remember(&o, 11, true) == 1);
	CHECK(owned_prune(&o, tids, 2) == -1 && o.nthreads == 2);
	CHECK(owned_remember(&o, 12, true) == 1);
	owned_keep_hand(&o);
	CHECK(o.nthreads == 1 && o.threads[0].tid == 12);
	CHECK(owned_clear(&o) == -1 && !o.threads);
}

static void test_dirtyq(void)
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
static void test_dirtyq_no_starvation(void)
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

static void test_manager_dirty(void)
{
	struct config *c;
	uint64_t evals;

	fake_fixture();
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; } );");
	if (!c)
		return;
	for (int tid = 900; tid <= 901; tid++)
		mktask(900, tid, "app", 90, 0, "0-3", "\n");
	mktask(920, 920, "rest", 92, 0, "0-3", "\n");
	CHECK(mgr_scan(&mgr) == 0);
	CHECK_STR(soft_of(900, 901), "0-1\n");

	/* A comm-flip storm: a thousand events, one evaluation. */
	mktask(920, 920, "app", 92, 0, "0-3", "\n");
	evals = mgr.cnt.evals;
	for (int i = 0; i < 1000; i++)
		mgr_on_change(&mgr, 920);
	CHECK(dirtyq_count(&mgr.dirty) == 1);
	CHECK(mgr_flush(&mgr, UINT64_MAX));
	CHECK(mgr.cnt.evals == evals + 1 && mgr_lookup(&mgr, 920));
	/* Same process, same comm: the match cache answers. */
	evals = mgr.cnt.evals;
	mgr_on_change(&mgr, 920);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr.cnt.evals == evals && mgr.cnt.cached > 0);
	/* A uid change does not trust the cache either. */
	mgr_on_uid(&mgr, 920);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr.cnt.evals == ++evals);
	/* An exec always evaluates afresh. */
	mgr_on_exec(&mgr, 920);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr.cnt.evals == evals + 1);
	/* An exit drops a pending evaluation. */
	mgr_on_change(&mgr, 920);
	mgr_on_exit(&mgr, 920, 920);
	CHECK(dirtyq_count(&mgr.dirty) == 0 && !mgr_lookup(&mgr, 920));
	/* A deadline already past: one pid per flush. */
	mgr_on_change(&mgr, 900);
	mgr_on_exec(&mgr, 920);
	CHECK(!mgr_flush(&mgr, 0) && dirtyq_count(&mgr.dirty) == 1);
	CHECK(mgr_flush(&mgr, 0));
	/*
	 * Oldest first: a pid drained and marked again (a rename loop)
	 * goes to the back, behind those that waited before it.
	 */
	for (int p = 955; p >= 950; p--) {
		mktask(p, p, "app", (unsigned)p, 0, "0-3", "\n");
		mgr_on_exec(&mgr, p);
	}
	for (int i = 0; i < 6; i++) {
		CHECK(mgr_flush(&mgr, 0) == false);
		CHECK(mgr_lookup(&mgr, 955 - i));
		CHECK(i == 5 || !mgr_lookup(&mgr, 954 - i));
		mgr_on_change(&mgr, 955);
	}
	CHECK(dirtyq_count(&mgr.dirty) == 1 && mgr.dirty.head->node.pid == 955);
	CHECK(mgr_flush(&mgr, UINT64_MAX));

	/*
	 * A child forked from a managed process that matches nothing has
	 * the parent's mask: reset on stop, unless someone changed it.
	 */
	mktask(930, 930, "other", 93, 0, "0-3", "0-1\n");
	mktask(930, 931, "other", 93, 0, "0-3", "3\n");
	mgr_on_fork(&mgr, 900, 930, 930);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(!mgr_lookup(&mgr, 930));
	/* One found by a scan (events missed): its ppid tells. */
	fixture_ppid = 900;
	mktask(940, 940, "other", 94, 0, "0-3", "0-1\n");
	fixture_ppid = 0;
	CHECK(mgr_scan(&mgr) == 0);
	mgr_restore_all(&mgr);
	CHECK_STR(soft_of(900, 900), "\n");
	CHECK_STR(soft_of(930, 930), "\n");
	CHECK_STR(soft_of(930, 931), "3\n");
	CHECK_STR(soft_of(940, 940), "\n");
	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

/* threads = "main": the other threads lose what they inherited. */
static void test_threads_main(void)
{
	struct config *c;
	static const char *const soft[] = {"0-3\n", "0-1\n", "3\n"};

	fake_fixture();
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; threads = \"main\"; } );");
	if (!c)
		return;
	for (int t = 0; t < 3; t++)
		mktask(950, 950 + t, "app", 95, 0, "0-3", soft[t]);
	CHECK(mgr_scan(&mgr) == 0);
	CHECK_STR(soft_of(950, 950), "0-1\n");
	CHECK_STR(soft_of(950, 951), "\n");
	CHECK_STR(soft_of(950, 952), "3\n");
	/* A thread started later inherits the main thread's mask: reset. */
	mktask(950, 953, "app", 95, 0, "0-3", "0-1\n");
	mgr_on_fork(&mgr, 950, 953, 950);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK_STR(soft_of(950, 953), "\n");
	mgr_done(&mgr);
	config_free(c);
	aff_write = write_file_at;
}

static void put_ratio(const char *a, const char *p)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_allowed", proc);
	put(path, a);
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_preferred", proc);
	put(path, p);
}

static const char *ratio_now(void)
{
	static char out[64];
	struct roots r;
	struct ratio v;

	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	if (sysctl_read_ratio(&r, &v) < 0)
		return "?";
	snprintf(out, sizeof(out), "%u:%u", v.allowed, v.preferred);
	return out;
}

static void test_sysctl(void)
{
	struct sysctl_ratio s;
	struct roots r;
	char path[PATH_MAX];

	fixture_reset();
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.run, sizeof(r.run), "%s/run-sysctl", tmp);
	snprintf(path, sizeof(path), "%s/%s", r.run, SYSCTL_ORIG_FILE);
	CHECK(sysctl_init(&s, &r, false, true) == -ENOENT && !s.have);
	put_ratio("100\n", "1\n");

	/* The original is saved; a change is ours to restore. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK_STR(get(path), "100:1\n");
	CHECK(sysctl_set(&s, (struct ratio){50, 1}, "test") == 0);
	CHECK_STR(ratio_now(), "50:1");
	/* kill -9 here: the next daemon restores 100:1, not 50:1. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(s.orig.allowed == 100 && s.cur.allowed == 50 && s.owned);
	CHECK(sysctl_set(&s, (struct ratio){5, 4}, "test") == 0);
	CHECK_STR(ratio_now(), "5:4");
	sysctl_restore(&s);
	CHECK_STR(ratio_now(), "100:1");
	sysctl_done(&s);
	CHECK(get(path) == NULL);

	/* sysctl -w by an admin: paused, left alone on stop. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(sysctl_set(&s, (struct ratio){50, 1}, "test") == 0);
	CHECK(!sysctl_check(&s));
	put_ratio("7\n", "1\n");
	CHECK(sysctl_check(&s) && s.paused);
	CHECK(sysctl_set(&s, (struct ratio){20, 1}, "test") == -EBUSY);
	CHECK_STR(ratio_now(), "7:1");
	/* SIGUSR1 or reload: changes resume from the admin's value. */
	sysctl_resume(&s);
	CHECK(!s.paused && s.cur.allowed == 7);
	CHECK(sysctl_set(&s, (struct ratio){20, 1}, "test") == 0);
	CHECK_STR(ratio_now(), "20:1");
	put_ratio("9\n", "1\n");
	sysctl_restore(&s);
	CHECK_STR(ratio_now(), "9:1");
	sysctl_done(&s);

	/* Dry run and --once save nothing; a dry run writes nothing. */
	CHECK(sysctl_init(&s, &r, true, true) == 0);
	CHECK(get(path) == NULL);
	CHECK(sysctl_set(&s, (struct ratio){3, 1}, "test") == 0);
	CHECK_STR(ratio_now(), "9:1");
	CHECK(sysctl_init(&s, &r, false, false) == 0 && get(path) == NULL);
}

static void test_status_format(void)
{
	char err[512], line[256], path[PATH_MAX], run[PATH_MAX];
	struct config *c = load(
		"ratio = { mode = \"adaptive\"; };\n"
		"rules = ( { name = \"a\"; comm = \"a\"; cpus = \"0\"; },\n"
		"          { name = \"b\"; comm = \"b\"; nodes = [1]; } );\n",
		err, sizeof(err));
	int pids[] = {0, 5, 0, 0, 7, 1, 1, 9, 0};
	unsigned int count[] = {2, 1};
	double util[2] = {0.5, 0.25};
	struct mgr_counters cnt = {.written = 3};
	struct status_snapshot s = {
		.pid = 42, .cfg = c, .have_ratio = true, .ratio = {50, 1},
		.connector = true, .topo = &topo, .node_util = util,
		.rule_count = count, .pids = pids, .npids = 3,
		.processes = 3, .hand_processes = 1, .cnt = &cnt,
	};
	struct sbuf b = {0}, last = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	status_format(&s, &b);
	CHECK(b.buf && !strncmp(b.buf, "pid 42\n", 7));
	CHECK(b.buf && strstr(b.buf, "\nratio 50:1\n"));
	CHECK(b.buf && strstr(b.buf, "\nnode 1 cpus 2-3 util 25.0%\n"));
	CHECK(b.buf && strstr(b.buf, "\nrule a cpus 0 processes 2 pids 5 7\n"
				     "rule b cpus 2-3 processes 1 pids 9\n"
				     "hand-managed rule a processes 1 pids 7\n"));
	CHECK(b.buf && strstr(b.buf, " written=3 "));
	CHECK(b.buf && !strstr(b.buf, "softness "));
	{
		struct rule_state rs[2] = {
			{.ratio = {20, 1},
			 .why = "soften: tasks wait 50% while 2.0 CPUs idle outside",
			 .last = {.runtime_ns = 3000000000ULL,
				  .delay_ns = 1000000000ULL,
				  .outside_ns = 750000000ULL, .spills = 4,
				  .returns = 2, .interval_ns = 1000000000ULL,
				  .locality_ns = 1000000000ULL, .threads = 4,
				  .exact = true, .valid = true}},
			{.ratio = {100, 1}, .cg_mode = true},
		};
		struct sbuf b2 = {0};

		s.rs = rs;
		status_format(&s, &b2);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness a 20:1 adaptive via process "
				       "threads 4 wait 25.0% (schedstat) outside "
				       "25.0% spills/min 240 returns/min 120: soften: "
				       "tasks wait 50% while 2.0 CPUs idle "
				       "outside\n"));
		struct sbuf j = {0};

		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "{\"name\":\"a\",\"cpus\":\"0\",\"processes\":2,"
				      "\"pids\":[5,7],\"softness\":\"adaptive\","
				      "\"ratio\":\"20:1\",\"via\":\"process\","
				      "\"why\":\"soften: tasks wait 50% while 2.0 "
				      "CPUs idle outside\",\"threads\":4,"
				      "\"wait_pct\":25.0,\"wait_source\":"
				      "\"schedstat\",\"outside_pct\":25.0,"
				      "\"outside_estimated\":false,"
				      "\"spills_per_min\":240,"
				      "\"returns_per_min\":120}"));
		CHECK(j.buf && !strncmp(j.buf, "{\"pid\":42,", 10));
		CHECK(j.buf && strstr(j.buf, "\"threads\":null"));
		sbuf_free(&j);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness b 100:1 adaptive via cgroup "
				       "threads - wait - outside - spills/min - "
				       "returns/min -: not sampled yet\n"));
		sbuf_free(&b2);
		/*
		 * A cgroup rule's wait from cpu.pressure, as the law sees
		 * it: its stall of a second (per CPU) against one CPU's
		 * second, not the 3 s of CPU time.  Schedstats off: the
		 * share outside is an estimate, spills and returns are
		 * not known (not 0).
		 */
		rs[1].last = rs[0].last;
		rs[1].last.source = WAIT_CGROUP;
		rs[1].last.wait_base_ns = 1000000000ULL;
		rs[1].last.exact = false;
		memset(&b2, 0, sizeof(b2));
		status_format(&s, &b2);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness b 100:1 adaptive via cgroup "
				       "threads 4 wait 50.0% (cpu.pressure) "
				       "outside ~25.0% spills/min n/a returns/min "
				       "n/a (needs kernel.sched_schedstats=1): "));
		sbuf_free(&b2);
		memset(&j, 0, sizeof(j));
		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "\"wait_source\":\"cpu.pressure\","
				      "\"outside_pct\":25.0,"
				      "\"outside_estimated\":true,"
				      "\"spills_per_min\":null,"
				      "\"returns_per_min\":null,\"spills_note\":"
				      "\"n/a (needs kernel.sched_schedstats=1)\"}"));
		sbuf_free(&j);
		s.rs = NULL;
	}
	{
		/* Containers where a rule left a process alone. */
		const struct container_left k[] = {
			{1, "abc", "/machine.slice/libpod-abc.scope"},
			{0, "d", "/m/caf\xc3 x"},
		};
		struct sbuf t = {0}, j = {0};

		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf, "],\"containers\":[]}\n"));
		sbuf_free(&j);
		memset(&j, 0, sizeof(j));
		s.containers = k;
		s.ncontainers = 2;
		status_format(&s, &t);
		CHECK(t.buf && strstr(t.buf,
				      "\ncontainer rule b id abc cgroup "
				      "/machine.slice/libpod-abc.scope: set by "
				      "the container's annotations\n"
				      "container rule a id d cgroup "
				      "/m/caf\\xc3 x: set by the container's "
				      "annotations\ncounters "));
		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "],\"containers\":[{\"rule\":\"b\","
				      "\"id\":\"abc\",\"cgroup\":"
				      "\"/machine.slice/libpod-abc.scope\","
				      "\"preference\":\"set by the container's "
				      "annotations\"},{\"rule\":\"a\",\"id\":"
				      "\"d\",\"cgroup\":\"/m/caf\\\\xc3 x\","
				      "\"preference\":\"set by the container's "
				      "annotations\"}]}\n"));
		sbuf_free(&t);
		sbuf_free(&j);
		s.containers = NULL;
		s.ncontainers = 0;
	}
	status_line(&s, line, sizeof(line));
	CHECK_STR(line, "STATUS=3 processes (1 hand-managed) under 2 rules, "
			"ratio 50:1 (adaptive)");
	s.ratio_note = "paused: changed by hand";
	status_line(&s, line, sizeof(line));
	CHECK(strstr(line, "ratio 50:1 (adaptive, paused: changed by hand)"));

	/* Written only when the text changes. */
	snprintf(run, sizeof(run), "%s/run-status", tmp);
	snprintf(path, sizeof(path), "%s/status", run);
	CHECK(status_write(run, &b, &last) == 1);
	CHECK(get(path) && strstr(get(path), "\nupdated "));
	CHECK(status_write(run, &b, &last) == 0);
	sbuf_printf(&b, "x\n");
	CHECK(status_write(run, &b, &last) == 1);
	sbuf_free(&b);
	sbuf_free(&last);
	config_free(c);
}

static void test_config_files(void)
{
	char path[PATH_MAX], inc[PATH_MAX], err[512];
	struct config *c = NULL;

	fixture_reset();
	snprintf(path, sizeof(path), "%s/f.conf", tmp);
	put(path, "rules = ( { comm = \"x\"; cpus = \"0\"; } );\n");
	chmod(path, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	config_free(c);
	c = NULL;
	/* Writable by group or others: refused, naming the file. */
	chmod(path, 0664);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "f.conf: writable by group or others (mode 0664)"));
	chmod(path, 0602);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	/* An included file too. */
	chmod(path, 0644);
	snprintf(inc, sizeof(inc), "%s/inc.conf", tmp);
	put(inc, "rules = ( { comm = \"x\"; cpus = \"0\"; } );\n");
	chmod(inc, 0666);
	put(path, "@include \"inc.conf\"\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "inc.conf: writable by group or others"));
	chmod(inc, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	config_free(c);
	c = NULL;
	/* A FIFO is refused at once, not read (which would block). */
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "f.conf: not a regular file"));
	unlink(path);
	/* Owned by someone else (only root can make such a file here). */
	if (geteuid() == 0) {
		put(path, "rules = ( );\n");
		chmod(path, 0644);
		CHECK(chown(path, 65534, 65534) == 0);
		CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
		CHECK(strstr(err, "f.conf: owned by uid 65534, not root"));
	}
	CHECK(caps_needed(c ? c : &(struct config){0}) == CAPS_NICE);
	{
		struct config *e = load("rules = ( { exe = \"/bin/x\"; cpus = "
					"\"0\"; } );", err, sizeof(err));
		char names[64];

		CHECK(e && caps_needed(e) == (CAPS_NICE | CAPS_PTRACE));
		CHECK_STR(caps_names(CAPS_NICE | CAPS_PTRACE, names,
				     sizeof(names)),
			  "CAP_SYS_NICE CAP_SYS_PTRACE");
		config_free(e);
	}
}

static void test_config_dropins(void)
{
	char path[PATH_MAX], dir[PATH_MAX], f[PATH_MAX], err[512];
	struct config *c = NULL;

	fixture_reset();
	snprintf(path, sizeof(path), "%s/d.conf", tmp);
	CHECK(config_dropin_dir(path, dir, sizeof(dir)) == 0);
	snprintf(f, sizeof(f), "%s/d.d", tmp);
	CHECK_STR(dir, f);
	CHECK(config_dropin_dir("/etc/x", f, sizeof(f)) == 0);
	CHECK_STR(f, "/etc/x.d");
	CHECK(config_dropin_dir("/etc/softaffd.conf", f, 8) == -ENAMETOOLONG);
	put(path, "rules = ( { name = \"m\"; comm = \"m\"; cpus = \"0\"; } );\n");
	chmod(path, 0644);
	/* No directory: no drop-ins. */
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	CHECK(c && c->nrules == 1 && c->nfiles == 1);
	config_free(c);
	c = NULL;
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(f, sizeof(f), "%s/b.conf", dir);
	put(f, "rules = ( { name = \"b\"; comm = \"b\"; cpus = \"1\"; } );\n");
	chmod(f, 0644);
	snprintf(f, sizeof(f), "%s/a.conf", dir);
	put(f, "rules = ( { name = \"a\"; comm = \"a\"; cpus = \"1\"; } );\n");
	chmod(f, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	CHECK(c && c->nrules == 3 && c->nfiles == 3);
	if (c && c->nrules == 3) {
		CHECK_STR(c->rules[1].name, "a");
		CHECK_STR(c->rules[1].file, f);
		CHECK_STR(c->rules[2].name, "b");
	}
	config_free(c);
	c = NULL;
	/* A drop-in others can write is refused like the main file. */
	chmod(f, 0664);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "a.conf: writable by group or others"));
	chmod(f, 0644);
	/* So is a directory where others could add one. */
	chmod(dir, 0777);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "d.d: writable by group or others (mode 0777)"));
	chmod(dir, 0755);
	/* The same name in two files names both places. */
	put(f, "rules = ( { name = \"b\"; comm = \"a\"; cpus = \"1\"; } );\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "b.conf:1: duplicate rule name 'b' (first at "));
	CHECK(strstr(err, "a.conf:1)"));
	CHECK(c == NULL);
	unlink(f);
	snprintf(f, sizeof(f), "%s/b.conf", dir);
	unlink(f);
	rmdir(dir);
	/* A file where the directory should be is an error, not ignored. */
	put(dir, "x\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) < 0);
	unlink(dir);
}

static void test_ratio_decide(void)
{
#define SET(a, p) {REQ_SET, a, p}
#define INHERIT {REQ_INHERIT, 0, 0}
	static const struct {
		struct pref_ratio cur; /* the process's own request */
		struct ratio ours, want; /* want {0, 0}: restore */
		enum aff_result res;
	} cases[] = {
		/* First apply: inherit, or anything, is taken over. */
		{INHERIT, {0, 0}, {20, 1}, AFF_WRITTEN},
		{SET(7, 1), {0, 0}, {20, 1}, AFF_WRITTEN},
		{{REQ_NONE, 0, 0}, {0, 0}, {20, 1}, AFF_WRITTEN},
		{SET(20, 1), {0, 0}, {20, 1}, AFF_UNCHANGED},
		/* Ours still there: the controller moves it. */
		{SET(20, 1), {20, 1}, {5, 4}, AFF_WRITTEN},
		/* Changed after us: someone else's. */
		{SET(7, 1), {20, 1}, {5, 4}, AFF_FOREIGN},
		{SET(7, 1), {20, 1}, {7, 1}, AFF_UNCHANGED},
		/* Reset to inherit or none by hand after us: also theirs. */
		{INHERIT, {20, 1}, {5, 4}, AFF_FOREIGN},
		{{REQ_NONE, 0, 0}, {20, 1}, {5, 4}, AFF_FOREIGN},
		/* Restore: only ours goes back to inherit. */
		{SET(20, 1), {20, 1}, {0, 0}, AFF_WRITTEN},
		{SET(7, 1), {20, 1}, {0, 0}, AFF_FOREIGN},
		{{REQ_NONE, 0, 0}, {20, 1}, {0, 0}, AFF_FOREIGN},
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

static void put_proc(const char *rel, const char *content)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", proc, rel);
	put(path, content);
}

static const char *get_at(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	return get(path);
}

static void test_softness_actuator(void)
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
	CHECK(mgr.have_proc_ratio);
	CHECK(mgr_scan(&mgr) == 0);
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "20:1\n");
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "10000:1\n");
	/* Adaptive starts hard, at the sysctls' default, as its own. */
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "100:1\n");
	CHECK_STR(soft_of(500, 500), "0\n");
	/* A rescan writes nothing that is already in place. */
	fake_writes = 0;
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(fake_writes == 0);
	/* The controller softens rule a: one write, for its process. */
	CHECK(mgr_set_rule_ratio(&mgr, 2, (struct ratio){5, 4}) == 1);
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "5:4\n");
	/* Someone sets 500's ratio by hand: left alone from then on. */
	put_proc("/500/soft_affinity_ratio", "7:1\n");
	CHECK(mgr_set_rule_ratio(&mgr, 0, (struct ratio){30, 1}) == 0);
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "7:1\n");
	/* A refused write changes nothing and is counted. */
	fake_err = -EINVAL;
	CHECK(mgr_set_rule_ratio(&mgr, 2, (struct ratio){3, 2}) == 0);
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "5:4\n");
	fake_err = 0;
	/* Stop: ours go back to inherit, the hand-set one stays. */
	mgr_restore_all(&mgr);
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "\n");
	CHECK_STR(get_at(proc, "/700/soft_affinity_ratio"), "\n");
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "7:1\n");
	mgr_done(&mgr);
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
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(mgr.count == 1 && mgr.ncgs == 1);
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	CHECK_STR(get_at(sys, rel), "2-3\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	CHECK_STR(get_at(sys, rel), "5:4\n");
	CHECK_STR(soft_of(800, 800), "\n");
	CHECK_STR(soft_of(800, 801), "\n");
	CHECK(mgr_set_rule_ratio(&mgr, 0, (struct ratio){20, 1}) == 1);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	/* A mask the kernel refuses: the ratio goes back, nothing changed. */
	put_sys(rel, "none\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	put_sys(rel, "\n");
	mgr.cgs[0].written = false;
	fake_fail_on = "cpuset.cpus.preferred";
	mgr_set_rule_ratio(&mgr, 0, (struct ratio){20, 1});
	fake_fail_on = NULL;
	CHECK_STR(get_at(sys, rel), "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred.ratio", cg);
	CHECK_STR(get_at(sys, rel), "none\n");
	CHECK(mgr_set_rule_ratio(&mgr, 0, (struct ratio){20, 1}) == 1);
	CHECK_STR(get_at(sys, rel), "20:1\n");
	/* Stop: the cgroup gets back what it had. */
	mgr_restore_all(&mgr);
	CHECK_STR(get_at(sys, rel), "\n");
	snprintf(rel, sizeof(rel), "%scpuset.cpus.preferred", cg);
	CHECK_STR(get_at(sys, rel), "\n");
	mgr_done(&mgr);
	config_free(c);

	/* No cpuset files there: the threads, as before. */
	fake_fixture();
	mktask(900, 900, "svc", 10, 0, "0-3", "\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 1 ]; } );");
	if (!c)
		return;
	CHECK(!mgr.have_proc_ratio);
	CHECK(mgr_scan(&mgr) == 0);
	CHECK(mgr.ncgs == 0);
	CHECK_STR(soft_of(900, 900), "2-3\n");
	mgr_done(&mgr);
	config_free(c);
}

static void test_rulectl(void)
{
	/* Samples of one second on a 2 x 2 machine: 2 CPUs outside. */
	const uint64_t S = 1000000000ULL, MS = 1000000ULL;
	static const struct {
		const char *what;
		unsigned int rung; /* before */
		uint64_t run_ms, delay_ms, outside_ms;
		double outside_busy;
		unsigned int outside_cpus;
		enum rulectl_action act;
		unsigned int rung_after;
		double home_idle; /* of 2 preferred CPUs; 0: home full */
		bool wait_known;
		double outside_spare; /* per CPU its idle less its queue */
	} cases[] = {
		{"a ping-pong pair on its node: no waiting, stays hard",
		 0, 900, 5, 0, 0.0, 2, RULECTL_HOLD, 0, 0.0, false, 0},
		{"a pair waiting on wakeups (15%) with its home half idle: hard",
		 0, 900, 160, 0, 0.0, 2, RULECTL_HOLD, 0, 1.0, false, 0},
		{"... the same with its home full: that is contention",
		 0, 900, 160, 0, 0.0, 2, RULECTL_SOFTEN, 3, 0.2, false, 0},
		{"a lone busy instance, 4 threads on 2 CPUs, node 1 idle",
		 0, 2000, 2000, 0, 0.05, 2, RULECTL_SOFTEN, 3, 0.0, false, 0},
		{"... softened again: jumps, never past the softest",
		 6, 2000, 1500, 300, 0.3, 2, RULECTL_SOFTEN, 8, 0.0, false, 0},
		{"... at the softest, still waiting: holds",
		 8, 3000, 600, 1000, 1.0, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"... spread: no waiting, but it runs outside: holds",
		 8, 3900, 40, 1900, 1.9, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"waiting, but nothing idle outside: no softening",
		 0, 2000, 2000, 0, 1.9, 2, RULECTL_HOLD, 0, 0.0, false, 0},
		{"softened, a second instance takes the outside: harder",
		 8, 1800, 400, 200, 2.0, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"softened, idle and unused: calm, one rung per hold",
		 5, 900, 5, 10, 0.1, 2, RULECTL_HOLD, 5, 0.0, false, 0},
		{"too little work to judge: holds (a calm sample)",
		 5, 5, 1, 0, 0.0, 2, RULECTL_HOLD, 5, 0.0, false, 0},
		{"no CPU outside at all (one node, or memory-only others)",
		 0, 2000, 2000, 0, 0.0, 0, RULECTL_HOLD, 0, 0.0, false, 0},
		{"two busy instances: node 1 idles at times, but its tasks queue",
		 0, 2000, 2000, 0, 1.2, 2, RULECTL_HOLD, 0, 0.0, true, 0.0},
		{"... the same without /proc/schedstat: idle time is all it sees",
		 0, 2000, 2000, 0, 1.2, 2, RULECTL_SOFTEN, 3, 0.0, false, 0.0},
		{"... node 1 as idle and nobody queues there: soften",
		 0, 2000, 2000, 0, 0.05, 2, RULECTL_SOFTEN, 3, 0.0, true, 1.85},
		{"... a pair waits on wakeups outside (0.4 tasks): soften",
		 0, 2000, 2000, 0, 1.0, 2, RULECTL_SOFTEN, 3, 0.0, true, 0.6},
		{"three tasks pinned to one CPU outside, the other idle: soften",
		 0, 2000, 2000, 0, 1.0, 2, RULECTL_SOFTEN, 3, 0.0, true, 1.0},
		{"a lone instance spread over both nodes queues there itself: "
		 "holds (whose queue it is is not known)",
		 8, 3000, 1000, 1500, 1.6, 2, RULECTL_HOLD, 8, 0.0, true, 0.0},
	};
	struct rulectl_params p;
	struct rulectl_state st;
	struct config *c;
	char err[512], why[160];

	c = load("", err, sizeof(err));
	if (!c)
		return;
	rulectl_params_default(c, &p);
	CHECK(p.nrungs >= 4);
	CHECK(p.ladder[0].allowed == 100 && p.ladder[0].preferred == 1);
	CHECK(p.ladder[p.nrungs - 1].allowed == 5 &&
	      p.ladder[p.nrungs - 1].preferred == 4);
	CHECK(p.nrungs == 9);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rulectl_sample in = {
			.runtime_ns = cases[i].run_ms * MS,
			.delay_ns = cases[i].delay_ms * MS,
			.outside_ns = cases[i].outside_ms * MS,
			.interval_ns = S,
			.outside_cpus = cases[i].outside_cpus,
			.outside_busy = cases[i].outside_busy,
			.home_cpus = 2,
			.home_busy = 2.0 - cases[i].home_idle,
			.wait_known = cases[i].wait_known,
			.outside_spare = cases[i].outside_spare,
		};
		enum rulectl_action a;

		st = (struct rulectl_state){cases[i].rung, 0};
		a = rulectl_step(&p, &st, &in, why, sizeof(why));
		if (a != cases[i].act || st.rung != cases[i].rung_after)
			printf("# %s: action %d rung %u (%s)\n", cases[i].what,
			       a, st.rung, why);
		CHECK(a == cases[i].act);
		CHECK(st.rung == cases[i].rung_after);
	}

	/* Hardening is slow: harden_hold calm samples per rung. */
	struct rulectl_sample calm = {900 * MS, 5 * MS, 0, S, 2, 0.2, false, 0, 2, 2.0, 0};
	struct rulectl_sample busy = {1800 * MS, 400 * MS, 200 * MS, S, 2, 2.0, false, 0, 2, 2.0, 0};
	unsigned int samples = 0;

	st = (struct rulectl_state){p.nrungs - 1, 0};
	while (st.rung > 0 && samples < 1000) {
		rulectl_step(&p, &st, &calm, why, sizeof(why));
		samples++;
	}
	CHECK(samples == (p.nrungs - 1) * p.harden_hold);
	CHECK(strstr(why, "no need"));
	/* One sample that asks for softer starts the count over. */
	st = (struct rulectl_state){4, 0};
	for (unsigned int k = 0; k + 1 < p.harden_hold; k++)
		rulectl_step(&p, &st, &busy, why, sizeof(why));
	CHECK(st.rung == 4 && strstr(why, "no room outside"));
	rulectl_step(&p, &st, &(struct rulectl_sample){900 * MS, 50 * MS, 300 * MS, S, 2, 1.0, false, 0, 2, 2.0, 0},
		     why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 4 && strstr(why, "hold: tasks wait 5%"));
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, &busy, why, sizeof(why));
	CHECK(st.rung == 3);
	/* Softening is quick: 100:1 to 5:4 in three samples. */
	struct rulectl_sample queue = {2000 * MS, 2000 * MS, 0, S, 2, 0.0, false, 0, 2, 2.0, 0};

	st = (struct rulectl_state){0, 0};
	for (int k = 0; k < 3; k++)
		rulectl_step(&p, &st, &queue, why, sizeof(why));
	CHECK(st.rung == p.nrungs - 1);
	CHECK(rulectl_wait(&queue) == 0.5);
	/*
	 * Idle samples are calm: a rule that works one sample in three
	 * (unused softness, or idle) hardens a rung per harden_hold
	 * samples, as one always idle does.  They used to start the count
	 * over, so such a rule stayed soft.
	 */
	struct rulectl_sample idle = {5 * MS, 1 * MS, 0, S, 2, 0.0, false, 2.0, 2, 2.0, 0};

	st = (struct rulectl_state){4, 0};
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, k % 3 ? &idle : &calm, why, sizeof(why));
	CHECK(st.rung == 3 && st.calm == 0);
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, &idle, why, sizeof(why));
	CHECK(st.rung == 2 && strstr(why, "idle: too little work"));
	/* Still a sample that asks for softer starts the count over. */
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	rulectl_step(&p, &st, &queue, why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 5);
	/* Nothing measured yet (no interval) is not calm. */
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	idle.interval_ns = 0;
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 5);
	CHECK(rulectl_outside(&busy) > 0.11 && rulectl_outside(&busy) < 0.12);
	config_free(c);
}

static void put_sched(int pid, int tid, const char *schedstat,
		      const char *outside_ms)
{
	char rel[128], buf[512];

	snprintf(rel, sizeof(rel), "/%d/task/%d/schedstat", pid, tid);
	put_proc(rel, schedstat);
	snprintf(buf, sizeof(buf),
		 "x (%d, #threads: 1)\n---\n"
		 "nr_migrations_soft_spill                     :                    1\n"
		 "soft_outside_runtime                         :          %s\n",
		 tid, outside_ms);
	snprintf(rel, sizeof(rel), "/%d/task/%d/sched", pid, tid);
	put_proc(rel, buf);
}

static void test_mgr_sample(void)
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
	CHECK(mgr_scan(&mgr) == 0 && mgr.count == 1);
	mgr_sample(&mgr, 1000, true); /* baselines */
	f = &mgr.rs[0].last;
	CHECK(f->threads == 2 && f->runtime_ns == 0);
	/* One second: each ran 0.6 s and waited 0.2 s; 0.3 s outside. */
	put_sched(500, 500, "1600000000 200000000 9\n", "300.0");
	put_sched(500, 501, "1600000000 200000000 9\n", "300.0");
	mgr_sample(&mgr, 2000, true);
	CHECK(f->valid && f->processes == 1 && f->threads == 2);
	CHECK(f->interval_ns == 1000000000ULL);
	CHECK(f->runtime_ns == 1200000000ULL && f->delay_ns == 400000000ULL);
	CHECK(f->outside_ns == 600000000ULL);
	/* Without schedstats: the CPU last run on (the fixture's 0, not in
	 * 2-3) makes the whole interval's runtime count as outside. */
	put_sched(500, 500, "2000000000 200000000 9\n", "0.0");
	put_sched(500, 501, "1600000000 300000000 9\n", "0.0");
	mgr_sample(&mgr, 3000, false);
	CHECK(f->runtime_ns == 400000000ULL && f->delay_ns == 100000000ULL);
	CHECK(f->outside_ns == 400000000ULL);
	/* A new thread starts with a baseline, not with its whole runtime. */
	mktask(500, 502, "w", 10, 0, "0-3", "\n");
	put_sched(500, 502, "5000000000 0 1\n", "0.0");
	mgr_sample(&mgr, 4000, false);
	CHECK(f->threads == 3 && f->runtime_ns == 0);
	mgr_done(&mgr);
	config_free(c);

	/* A fixed rule is sampled every 10 s only: an idle daemon stays idle. */
	fake_fixture();
	mktask(600, 600, "x", 10, 0, "0-3", "\n");
	put_sched(600, 600, "1000000000 0 5\n", "0.0");
	c = mgr_setup("rules = ( { name = \"x\"; comm = \"x\"; cpus = \"2-3\"; softness = \"20:1\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0);
	f = &mgr.rs[0].last;
	mgr_sample(&mgr, 1000, true);
	put_sched(600, 600, "3000000000 0 5\n", "0.0");
	mgr_sample(&mgr, 2000, true);
	CHECK(!f->valid && f->runtime_ns == 0);
	mgr_sample(&mgr, 11000, true);
	CHECK(f->valid && f->interval_ns == 10000000000ULL &&
	      f->runtime_ns == 2000000000ULL);
	mgr_done(&mgr);
	config_free(c);
}

static void test_cgstat(void)
{
	static const struct {
		const char *buf;
		int ret;
		uint64_t some;
	} pressure[] = {
		{"some avg10=1.23 avg60=0.40 avg300=0.08 total=2291847\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		 0, 2291847},
		/* The root's file of older kernels: no full line. */
		{"some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", 0, 5},
		{"full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n", -EBADMSG, 0},
		{"some avg10=0.00 avg60=0.00 avg300=0.00\nfull total=9\n",
		 -EBADMSG, 0},
		{"some avg10=0.00 total=-1\n", -EBADMSG, 0},
		{"some avg10=0.00 total=99999999999999999999999\n", -EBADMSG, 0},
		{"", -EBADMSG, 0},
	};
	static const struct {
		const char *buf;
		int ret;
		uint64_t usage;
	} stat[] = {
		{"usage_usec 81632\nuser_usec 60000\nsystem_usec 21632\n", 0,
		 81632},
		{"nr_periods 0\nusage_usec 12\n", 0, 12},
		{"user_usec 60000\n", -EBADMSG, 0},
		{"usage_usec \n", -EBADMSG, 0},
	};
	struct cgstat a = {100, 50}, b = {400, 60};
	struct cgdelta d;
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(pressure); i++) {
		v = 0;
		CHECK(cgstat_parse_pressure(pressure[i].buf, &v) ==
		      pressure[i].ret);
		CHECK(pressure[i].ret || v == pressure[i].some);
	}
	for (size_t i = 0; i < ARRAY_SIZE(stat); i++) {
		v = 0;
		CHECK(cgstat_parse_cpu_stat(stat[i].buf, &v) == stat[i].ret);
		CHECK(stat[i].ret || v == stat[i].usage);
	}
	/* Under a CPU's worth in the interval: the wait compares with it. */
	CHECK(cgstat_delta(&a, &b, 1000000, &d) && d.run_ns == 300000 &&
	      d.wait_ns == 10000 && d.base_ns == 300000);
	/* More: PSI's stall is per CPU, so it compares with one CPU's. */
	CHECK(cgstat_delta(&a, &b, 100000, &d) && d.run_ns == 300000 &&
	      d.base_ns == 100000);
	/* A cgroup made again under the same name: a new baseline. */
	CHECK(!cgstat_delta(&b, &a, 1000000, &d));
}

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

	snprintf(buf, sizeof(buf),
		 "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		 (unsigned long long)some_us);
	put_cg("cpu.pressure", buf);
	snprintf(buf, sizeof(buf), "usage_usec %llu\nuser_usec 0\n",
		 (unsigned long long)usage_us);
	put_cg("cpu.stat", buf);
}

/*
 * A unit rule takes its wait from the cgroup's cpu.pressure and cpu.stat,
 * not from its threads; it walks them for locality only while soft and
 * every 10 s; without cpu.pressure, its threads again.
 */
/*
 * A fresh fixture with pid 900 in test.service, whose cgroup has no
 * preference yet, and a fixed-softness unit rule (20:1, node 1) for it.
 */
static struct config *mgr_setup_fixed_unit_rule(void)
{
	fake_fixture();
	mktask(900, 900, "svc", 10, 0, "0-3", "\n");
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	return mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
			 "nodes = [ 1 ]; softness = \"20:1\"; } );");
}

static void test_mgr_sample_cgroup(void)
{
	const struct rule_figures *f;
	struct rule_state *rs;
	struct config *c;
	char path[PATH_MAX];

	fake_fixture();
	mktask(800, 800, "svc", 10, 0, "0-3", "\n");
	mktask(800, 801, "svc", 10, 0, "0-3", "\n");
	put_sched(800, 800, "1000000000 0 5\n", "0.0");
	put_sched(800, 801, "1000000000 0 5\n", "0.0");
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(1000000, 1000);
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 1 ]; } );");
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr.count == 1 && mgr.ncgs == 1);
	rs = &mgr.rs[0];
	f = &rs->last;
	/* An adaptive rule's cgroup gets a trigger (here a plain file). */
	CHECK(mgr.cgs[0].psi_fd >= 0 && !mgr.cgs[0].psi_watched);
	CHECK(!mgr_rule_triggers_armed(&mgr, 0));
	put_cgstat(1000000, 1000); /* the trigger's write went into the file */
	mgr_sample(&mgr, 1000, true); /* baselines */
	CHECK(rs->sampled_now && !f->valid && f->source == WAIT_CGROUP);
	CHECK(f->threads == 2);
	/* 0.75 s run, 0.25 s someone waited; the threads claim much more. */
	put_cgstat(1750000, 251000);
	put_sched(800, 800, "1900000000 900000000 9\n", "0.0");
	mgr_sample(&mgr, 2000, true);
	CHECK(f->valid && f->source == WAIT_CGROUP);
	CHECK(f->runtime_ns == 750000000ULL && f->delay_ns == 250000000ULL);
	/* Hardest: no walk since the first, whose figures stay. */
	CHECK(rs->walked_ms == 1000 && f->threads == 2 && f->outside_ns == 0);
	put_cgstat(2250000, 251000);
	mgr_sample(&mgr, 2500, true);
	CHECK(f->valid && f->delay_ns == 0 && rs->walked_ms == 1000);
	/* Soft: walked every time; its share outside (all of it: the
	 * fixture's CPU 0 is not in node 1) scales the cgroup's time. */
	rs->ctl.rung = 3;
	put_cgstat(3250000, 251000);
	put_sched(800, 800, "2900000000 900000000 9\n", "0.0");
	mgr_sample(&mgr, 3000, false);
	CHECK(rs->walked_ms == 3000 && f->locality_ns == 2000000000ULL);
	CHECK(f->runtime_ns == 1000000000ULL && f->delay_ns == 0);
	CHECK(f->outside_ns == f->runtime_ns && !f->exact);
	/* Back at the hardest: the next walk 10 s after the last. */
	rs->ctl.rung = 0;
	mgr_sample(&mgr, 4000, true);
	CHECK(rs->walked_ms == 3000);
	mgr_sample(&mgr, 13000, true);
	CHECK(rs->walked_ms == 13000);
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
	mgr.cgs[0].psi_watched = true;
	CHECK(mgr_rule_triggers_armed(&mgr, 0));
	rs->asleep = true;
	mgr_sample(&mgr, 14000, true);
	CHECK(!rs->sampled_now);
	put_cgstat(5000000, 900000);
	mgr_rule_wake(&mgr, 0, 14500);
	CHECK(!rs->asleep && rs->sampled_ms == 14500);
	put_cgstat(5400000, 1000000);
	mgr_sample(&mgr, 15500, true);
	/* The delta is from the wake-up's fresh baseline, not the stale one. */
	CHECK(rs->sampled_now && f->valid && f->runtime_ns == 400000000ULL &&
	      f->delay_ns == 100000000ULL);
	/*
	 * A cgroup seen for the first time (a new scope of the unit glob)
	 * has only a baseline: the figures do not cover it, and the rule
	 * must not fall asleep on them (the daemon checks valid).
	 */
	mgr.cgs[0].have_prev = false;
	mgr_sample(&mgr, 15600, true);
	CHECK(rs->sampled_now && !f->valid && mgr.cgs[0].have_prev);
	put_cgstat(5500000, 1000000);
	mgr_sample(&mgr, 15700, true);
	CHECK(f->valid && f->runtime_ns == 100000000ULL);
	/* No cpu.pressure (no PSI): the threads' schedstat, said once. */
	snprintf(path, sizeof(path),
		 "%s/fs/cgroup/system.slice/test.service/cpu.pressure", sys);
	CHECK(unlink(path) == 0);
	put_sched(800, 800, "2900000000 950000000 9\n", "0.0");
	mgr_sample(&mgr, 16500, true);
	CHECK(f->source == WAIT_THREADS && rs->no_psi_logged);
	CHECK(!mgr.cgs[0].have_prev); /* its next read is a baseline */
	CHECK(rs->walked_ms == 16500 && f->delay_ns == 50000000ULL);
	mgr_done(&mgr);
	config_free(c);

	/* A fixed rule's cgroup gets no trigger: nobody uses its wait. */
	c = mgr_setup_fixed_unit_rule();
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1);
	CHECK(mgr.cgs[0].psi_fd < 0);
	mgr_done(&mgr);
	config_free(c);
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
	struct rule_state *rs = &mgr.rs[0];

	u->usage_us += u->cpus * 1000000ULL;
	u->some_us += stall_us;
	u->now_ms += 1000;
	put_cgstat(u->usage_us, u->some_us);
	mgr_sample(&mgr, u->now_ms, true);
	u->in = rule_sample(&rs->last);
	u->in.home_cpus = u->in.outside_cpus = u->cpus;
	u->in.home_busy = u->cpus;
	u->in.outside_busy = 0;
	u->in.wait_known = true;
	u->in.outside_spare = u->cpus;
	rs->ctl.rung = rung;
	return rulectl_step(p, &rs->ctl, &u->in, u->why, sizeof(u->why));
}

static void test_cgroup_wait_size(void)
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

	fake_fixture();
	mktask(800, 800, "svc", 10, 0, "0-3", "\n");
	put_sched(800, 800, "1000000000 0 5\n", "0.0");
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 0 ]; } );");
	if (!c)
		return;
	rulectl_params_default(c, &p);
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1);
	f = &mgr.rs[0].last;
	ctl = &mgr.rs[0].ctl;
	put_cgstat(0, 0);
	mgr_sample(&mgr, u.now_ms, true); /* the baseline */
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
	mgr_done(&mgr);
	config_free(c);
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
static void test_mgr_cgroup_recreated(void)
{
	struct config *c;
	uint64_t id;

	fake_fixture();
	mktask(800, 800, "svc", 10, 0, "0-3", "\n");
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"test.service\"; "
		      "nodes = [ 1 ]; } );");
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1);
	id = cg_ino("");
	CHECK(id && mgr.cgs[0].id == id);
	CHECK(mgr.cgs[0].psi_fd >= 0 &&
	      fd_ino(mgr.cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	mgr.cgs[0].psi_watched = true; /* as the daemon's epoll_ctl does */

	/*
	 * Restarted before the old trigger's EPOLLERR was handled: the new
	 * process's evaluation finds another cgroup at the path.
	 */
	restart_service(800, 810, 20);
	CHECK(mgr_scan(&mgr) == 0 && mgr.count == 1 && mgr.ncgs == 1);
	CHECK(cg_ino("") != id && mgr.cgs[0].id == cg_ino(""));
	CHECK(!mgr.cgs[0].foreign && !mgr.cgs[0].have_prev);
	CHECK(mgr.cgs[0].psi_fd >= 0 && !mgr.cgs[0].psi_watched);
	CHECK(fd_ino(mgr.cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "100:1\n");
	/* Settled: a rescan opens nothing more, writes nothing more. */
	id = mgr.cgs[0].id;
	fake_writes = 0;
	{
		int fd = mgr.cgs[0].psi_fd;

		CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1);
		CHECK(mgr.cgs[0].psi_fd == fd && fake_writes == 0);
	}

	/* Stopped: the sample forgets the cgroup, once; nothing retries. */
	{
		char cmd[2 * PATH_MAX + 64];

		snprintf(cmd, sizeof(cmd),
			 "rm -rf %s/810 %s/fs/cgroup/system.slice/test.service",
			 proc, sys);
		CHECK(system(cmd) == 0);
	}
	CHECK(mgr_scan(&mgr) == 0 && mgr.count == 0);
	mgr_sample(&mgr, 1000, true);
	CHECK(mgr.ncgs == 0);
	mgr_set_rule_ratio(&mgr, 0, (struct ratio){5, 4});
	CHECK(mgr.ncgs == 0);

	/*
	 * Started again: a new entry and trigger.  Its trigger's EPOLLERR
	 * (the daemon's on_pressure) forgets it; the next start is new too.
	 */
	put_cg("cpuset.cpus.preferred", "\n");
	put_cg("cpuset.cpus.preferred.ratio", "\n");
	put_cgstat(0, 0);
	mktask(820, 820, "svc", 30, 0, "0-3", "\n");
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1 && mgr.cgs[0].psi_fd >= 0);
	CHECK(fd_ino(mgr.cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "5:4\n");
	mgr_cg_forget(&mgr, 0);
	CHECK(mgr.ncgs == 0);
	restart_service(820, 830, 40);
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1 && mgr.cgs[0].psi_fd >= 0);
	CHECK(mgr.cgs[0].id == cg_ino("") && !mgr.cgs[0].foreign);
	CHECK(fd_ino(mgr.cgs[0].psi_fd) == cg_ino("cpu.pressure"));
	mgr_done(&mgr);
	config_free(c);

	/* A fixed rule (no trigger): the new cgroup is not "foreign". */
	c = mgr_setup_fixed_unit_rule();
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1 && mgr.cgs[0].psi_fd < 0);
	restart_service(900, 910, 20);
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1 && !mgr.cgs[0].foreign);
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred"), "2-3\n");
	CHECK_STR(get_at(sys, "/fs/cgroup/system.slice/test.service/"
			      "cpuset.cpus.preferred.ratio"), "20:1\n");
	mgr_done(&mgr);
	config_free(c);
}

/* ---- containers: the mark softaff-oci-hook puts on their cgroups ---- */

static char xattr_skip[PATH_MAX + 96];

static bool xattr_ok(const char *dir)
{
	int r = lsetxattr(dir, "user.softaffd-unit", "1", 1, 0);

	if (r == 0)
		lremovexattr(dir, "user.softaffd-unit");
	return r == 0;
}

/*
 * The fixture's file system must take user xattrs (tmpfs before Linux
 * 6.6 does not; run-check.sh offers its build directory then, see
 * main()).  Otherwise the test says SKIP, and why.
 */
static bool need_xattrs(void)
{
	if (xattr_ok(sys))
		return true;
	snprintf(xattr_skip, sizeof(xattr_skip),
		 "the file system of %s refuses user xattrs (%s)", tmp,
		 strerror(errno));
	t_skip = xattr_skip;
	return false;
}

static void mk_cg(const char *cg)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, cg);
	mkdirs(path);
}

/* What softaff-oci-hook does to a container's cgroup. */
static void mark_cg(const char *cg, const char *id)
{
	char path[PATH_MAX];

	mk_cg(cg);
	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, cg);
	CHECK(lsetxattr(path, CONTAINER_XATTR, id, strlen(id), 0) == 0);
}

/* Put the process pid (made by mktask) into cgroup cg. */
static void move_to(int pid, const char *cg)
{
	char rel[64], buf[PATH_MAX];

	snprintf(rel, sizeof(rel), "/%d/cgroup", pid);
	snprintf(buf, sizeof(buf), "0::%s\n", cg);
	put_proc(rel, buf);
}

static void test_container_cache(void)
{
	const char *abc = "/machine.slice/libpod-abc.scope";
	const char *inner = "/machine.slice/libpod-abc.scope/inner";
	const uint64_t S = 1000000000ULL, T0 = 1000 * S;
	struct container_cache cc = {0};
	struct container_left *left;
	struct container_mark mk;
	char cg[64], path[PATH_MAX];
	int n;

	fixture_reset();
	if (!need_xattrs())
		return;
	mark_cg(abc, "abc");
	mk_cg(inner);
	mk_cg("/system.slice/x.service");
	/* The nearest marked cgroup; one read per level, then remembered. */
	CHECK(container_find(&cc, sys, inner, T0, 0, &mk));
	CHECK_STR(mk.id, "abc");
	CHECK(mk.cglen == strlen(abc) && cc.reads == 2);
	for (int i = 0; i < 100; i++)
		CHECK(container_find(&cc, sys, inner, T0 + (uint64_t)i, 0,
				     &mk));
	CHECK(container_find(&cc, sys, abc, T0, 0, &mk) && cc.reads == 2);
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0, 0, &mk));
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0, 0, &mk));
	/* x.service and system.slice; the root is never read. */
	CHECK(cc.reads == 4);
	CHECK(!container_find(&cc, sys, "/", T0, 0, &mk) && cc.reads == 4);

	/*
	 * Marked after it was read: the old answer holds for the TTL, but
	 * not for a caller that wants one read after T0 (an exec since).
	 */
	mark_cg("/system.slice/x.service", "late");
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0 + S, 0,
			      &mk));
	CHECK(container_find(&cc, sys, "/system.slice/x.service", T0 + S,
			     T0 + 1, &mk));
	CHECK_STR(mk.id, "late");
	CHECK(cc.reads == 5);
	CHECK(container_find(&cc, sys, "/system.slice/x.service", T0 + S, 0,
			     &mk) && cc.reads == 5);
	CHECK(container_find(&cc, sys, abc,
			     T0 + CONTAINER_TTL_MS * 1000000ULL, 0, &mk));
	CHECK(cc.reads == 6);

	/* For --status: once per container and rule. */
	CHECK(container_note_left(&cc, inner, strlen(abc), 3));
	CHECK(!container_note_left(&cc, abc, strlen(abc), 3));
	CHECK(container_note_left(&cc, abc, strlen(abc), 0));
	CHECK(!container_note_left(&cc, "/system.slice", 13, 1));
	n = container_list_left(&cc, &left);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(left[0].rule == 0 && left[1].rule == 3);
		CHECK_STR(left[1].id, "abc");
		CHECK_STR(left[1].cgroup, abc);
	}
	free(left);

	/*
	 * The sweep drops stale answers; a container with rules noted is
	 * read again, and stays while its cgroup does.
	 */
	container_sweep(&cc, sys, T0 + 30 * S);
	CHECK(cc.n == 1 && cc.reads == 7);
	CHECK(container_list_left(&cc, &left) == 2);
	free(left);
	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, abc);
	CHECK(nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0);
	container_sweep(&cc, sys, T0 + 60 * S);
	CHECK(cc.n == 0 && container_list_left(&cc, &left) == 0);
	free(left);

	/* An id is shown escaped. */
	mark_cg("/h.scope", "a b\n\x1b[2J");
	CHECK(container_find(&cc, sys, "/h.scope", T0, 0, &mk));
	CHECK_STR(mk.id, "a b\\x0a\\x1b[2J");

	/* Bounded: past the limit answers are read, not kept ... */
	for (int i = 0; i < CONTAINER_CACHE_MAX + 100; i++) {
		snprintf(cg, sizeof(cg), "/n/c%d", i);
		CHECK(!container_find(&cc, sys, cg, T0 + 100 * S, 0, &mk));
	}
	CHECK(cc.n == CONTAINER_CACHE_MAX);
	/* ... and stale ones make room. */
	CHECK(!container_find(&cc, sys, "/n/late", T0 + 200 * S, 0, &mk));
	CHECK(cc.n == 2);
	container_cache_free(&cc);
}

/* softaffd --explain pid, as text. */
static char *explain_text(const struct config *c, int pid)
{
	struct roots r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s/run", tmp);
	if (!f)
		return NULL;
	CHECK(explain_pid(c, &r, pid, f) == 0);
	fclose(f);
	return buf;
}

#define APP_RULE                                                          \
	"rules = ( { name = \"app\"; comm = \"app\"; cpus = \"0\"; "   \
	"softness = \"20:1\"; } );"

static void test_manager_container(void)
{
	const char *abc = "/machine.slice/libpod-abc.scope";
	const char *pref = "/fs/cgroup/machine.slice/libpod-abc.scope/"
			   "cpuset.cpus.preferred";
	const char *def = "/fs/cgroup/machine.slice/libpod-def.scope/"
			  "cpuset.cpus.preferred";
	struct container_left *left;
	unsigned long reads;
	char rel[PATH_MAX], *ex;
	struct config *c;
	int n;

	fake_fixture();
	if (!need_xattrs())
		return;
	/* 20 processes of a container that a comm rule matches; one outside. */
	put_proc("/self/soft_affinity_ratio", "\n");
	mark_cg(abc, "abc");
	for (int pid = 500; pid < 520; pid++) {
		mktask(pid, pid, "app", 10, 0, "0-3", "\n");
		move_to(pid, abc);
		snprintf(rel, sizeof(rel), "/%d/soft_affinity_ratio", pid);
		put_proc(rel, "\n");
	}
	mktask(600, 600, "app", 11, 0, "0-3", "\n");
	put_proc("/600/soft_affinity_ratio", "\n");
	c = mgr_setup(APP_RULE);
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0);
	CHECK_STR(soft_of(600, 600), "0\n");
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "20:1\n");
	/* Inside: neither mask nor ratio, and not managed. */
	CHECK_STR(soft_of(500, 500), "\n");
	CHECK_STR(soft_of(519, 519), "\n");
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "\n");
	CHECK(mgr.count == 1 && !mgr_lookup(&mgr, 500));
	/* One read of the mark for its 20 processes, two for test.service. */
	CHECK(mgr.ctr.reads == 3);
	n = container_list_left(&mgr.ctr, &left);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(left[0].rule == 0);
		CHECK_STR(left[0].id, "abc");
		CHECK_STR(left[0].cgroup, abc);
	}
	free(left);
	/* Twenty execs in one turn: the mark is read again once. */
	reads = mgr.ctr.reads;
	for (int pid = 500; pid < 520; pid++)
		mgr_on_exec(&mgr, pid);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(mgr.ctr.reads == reads + 1 && mgr.count == 1);
	/* Rescans and a stop write nothing inside. */
	fake_writes = 0;
	CHECK(mgr_scan(&mgr) == 0 && fake_writes == 0);
	/* --explain: what applies (status), what each level asks for. */
	ex = explain_text(c, 600);
	CHECK(ex && strstr(ex, "\napplied now: preferred CPUs 0-3 (source "
			       "none), ratio 100:1 (source default)\n"
			       "requested: process CPUs inherit ratio 20:1; "
			       "thread 600 CPUs 0 ratio inherit (the first ") &&
	      strstr(ex, "\nits cgroup /system.slice/test.service has no "
			 "cpuset.cpus.preferred"));
	free(ex);
	mgr_restore_all(&mgr);
	CHECK_STR(soft_of(510, 510), "\n");
	CHECK_STR(get_at(proc, "/510/soft_affinity_ratio"), "\n");
	CHECK_STR(soft_of(600, 600), "\n");
	/* --explain says so, with the rule it would otherwise get. */
	ex = explain_text(c, 500);
	CHECK(ex && strstr(ex, "\nits preference is set by the container's "
			       "annotations (container abc, cgroup "
			       "/machine.slice/libpod-abc.scope): softaffd "
			       "leaves it alone; otherwise rule 'app' would "
			       "apply\n"));
	CHECK(ex && !strstr(ex, "rule 'app' wants CPUs"));
	free(ex);
	ex = explain_text(c, 600);
	CHECK(ex && strstr(ex, "\nrule 'app' wants CPUs 0,") &&
	      !strstr(ex, "container"));
	free(ex);
	mgr_done(&mgr);
	config_free(c);

	/*
	 * Met before the hook marked its cgroup (a runtime's init process):
	 * its exec finds the mark, and what we set goes back.
	 */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mk_cg("/machine.slice/libpod-new.scope");
	mktask(800, 800, "app", 10, 0, "0-3", "\n");
	move_to(800, "/machine.slice/libpod-new.scope");
	put_proc("/800/soft_affinity_ratio", "\n");
	c = mgr_setup(APP_RULE);
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr_lookup(&mgr, 800));
	CHECK_STR(soft_of(800, 800), "0\n");
	mark_cg("/machine.slice/libpod-new.scope", "new");
	mgr_on_exec(&mgr, 800);
	mgr_flush(&mgr, UINT64_MAX);
	CHECK(!mgr_lookup(&mgr, 800));
	CHECK_STR(soft_of(800, 800), "\n");
	CHECK_STR(get_at(proc, "/800/soft_affinity_ratio"), "\n");
	mgr_done(&mgr);
	config_free(c);

	/* A unit rule: the container's cgroup is not written, another is. */
	fake_fixture();
	mark_cg(abc, "abc");
	mktask(700, 700, "svc", 10, 0, "0-3", "\n");
	move_to(700, "/machine.slice/libpod-abc.scope/inner");
	mktask(710, 710, "svc", 11, 0, "0-3", "\n");
	move_to(710, "/machine.slice/libpod-def.scope");
	put_sys(pref, "\n");
	put_sys("/fs/cgroup/machine.slice/libpod-abc.scope/"
		"cpuset.cpus.preferred.ratio", "\n");
	put_sys(def, "\n");
	put_sys("/fs/cgroup/machine.slice/libpod-def.scope/"
		"cpuset.cpus.preferred.ratio", "\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"libpod-*.scope\"; "
		      "nodes = [ 1 ]; softness = \"20:1\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(&mgr) == 0 && mgr.ncgs == 1);
	CHECK_STR(get_at(sys, pref), "\n");
	CHECK_STR(soft_of(700, 700), "\n");
	CHECK_STR(get_at(sys, def), "2-3\n");
	/* --explain shows the cgroup level: its request, what it gives. */
	put_sys("/fs/cgroup/machine.slice/libpod-def.scope/"
		"cpuset.cpus.preferred.effective", "2-3\n");
	ex = explain_text(c, 710);
	CHECK(ex && strstr(ex, "\nits cgroup /machine.slice/libpod-def.scope: "
			       "CPUs 2-3 ratio 20:1, its tasks without their "
			       "own get CPUs 2-3 (cpuset.cpus.preferred."
			       "effective)\n"));
	free(ex);
	/*
	 * The hook marks libpod-def.scope too, with the same value: once
	 * the answer is stale (here: forgotten), neither a stop nor a new
	 * softness writes it.
	 */
	mark_cg("/machine.slice/libpod-def.scope", "def");
	container_cache_free(&mgr.ctr);
	fake_writes = 0;
	mgr_restore_all(&mgr);
	CHECK(fake_writes == 0);
	CHECK(mgr_set_rule_ratio(&mgr, 0, (struct ratio){5, 4}) == 0);
	CHECK(fake_writes == 0);
	CHECK_STR(get_at(sys, def), "2-3\n");
	CHECK_STR(get_at(sys, pref), "\n");
	mgr_done(&mgr);
	config_free(c);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/softaffd-unit-XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	/*
	 * The container tests need user xattrs, which tmpfs has only since
	 * Linux 6.6: run-check.sh offers a directory on the build tree's
	 * file system for when TMPDIR's refuses them.
	 */
	t = getenv("UNIT_XATTR_DIR");
	if (t && !xattr_ok(tmp)) {
		rmdir(tmp);
		snprintf(tmp, sizeof(tmp), "%s/softaffd-unit-XXXXXX", t);
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
	}
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	log_init(getenv("UNIT_VERBOSE") ? LOG_DEBUG : -1);
	log_set_journal(0);
	two_node_topo();

	RUN(test_cpuset_list, "cpulist parse/format");
	RUN(test_cpuset_mask, "hex mask parse/format");
	RUN(test_stat_parser, "/proc/PID/stat parser, hostile comm");
	RUN(test_status_parser, "status, cgroup, cmdline parsers");
	RUN(test_topology, "node topology from a fake sys root");
	RUN(test_rules, "rule matching: comm, exe, cmdline, user, cgroup");
	RUN(test_unit_key, "unit key: the unit of a cgroup path, matching");
	RUN(test_config_errors, "config errors carry file:line");
	RUN(test_config_ok, "config values and defaults");
	RUN(test_affinity, "apply/skip/error classification, restore");
	RUN(test_manager_scan, "scan, events, pid reuse, exit");
	RUN(test_manager_errors, "EPERM/EINVAL/ESRCH warn-once policy");
	RUN(test_manager_warn_limit, "per-process warnings: a limit per rule");
	RUN(test_manager_reload,
	    "reload restores changed/removed rules; same rules: go on");
	RUN(test_manager_many, "2000 processes, table grows and shrinks");
	RUN(test_aff_decide, "claims: adopt, new thread, ours; restore");
	RUN(test_manager_hand, "hand-set masks: kept, listed, exec, re-adopt");
	RUN(test_manager_slices, "scans in slices; LIGHT, ATTRS, NEW kinds");
	RUN(test_sampler, "per-CPU and per-node utilization");
	RUN(test_control, "controller: soften, harden, no oscillation");
	RUN(test_write_order, "sysctl write order never invalid");
	RUN(test_procconn_parse, "proc connector: decoding, whose PIDs");
	RUN(test_util, "helpers, atomic status write");
	RUN(test_notify, "sd_notify protocol, watchdog period");
	RUN(test_rules_lazy, "lazy attributes in rule order, regex budget");
	RUN(test_ratelimit, "log rate limit; a rule's, per kind of warning");
	RUN(test_owned, "thread ownership bookkeeping");
	RUN(test_budget, "a share of each second for events and evaluations");
	RUN(test_dirtyq, "dirty queue: first in first out, dedupe, removal");
	RUN(test_dirtyq_no_starvation,
	    "dirty queue: a storm starves no one (ceil(n/k) turns)");
	RUN(test_manager_dirty, "dirty queue, match cache, inherited masks");
	RUN(test_threads_main, "threads = main: other threads get no mask");
	RUN(test_sysctl, "ratio actuator: saved original, sysctl -w pauses");
	RUN(test_status_format, "status as a pure function, written on change");
	RUN(test_config_files, "config file type, owner and mode; caps");
	RUN(test_config_dropins, "drop-ins: order, trust, duplicates");
	RUN(test_rulectl, "per-rule control law as tables");
	RUN(test_mgr_sample, "gather: per-thread schedstat deltas per rule");
	RUN(test_cgstat, "cpu.pressure and cpu.stat parsers, deltas");
	RUN(test_mgr_sample_cgroup,
	    "gather: a cgroup rule's wait from cpu.pressure, fallback");
	RUN(test_cgroup_wait_size,
	    "a unit's wait from cpu.pressure: soften at 1, 16 and 64 CPUs");
	RUN(test_mgr_cgroup_recreated,
	    "a cgroup made again at its path: new preference and trigger");
	RUN(test_ratio_decide, "per-process ratio: decide table, parsers");
	RUN(test_softness_actuator, "softness: procfs ratio, cgroup, fallback");
	RUN(test_container_cache,
	    "containers: marks read once per cgroup level, bounded, swept");
	RUN(test_manager_container,
	    "containers: a marked cgroup's processes and cgroup left alone");

	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return t_failed_checks ? 1 : 0;
}
