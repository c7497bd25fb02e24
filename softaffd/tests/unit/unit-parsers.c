// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parsers and small helpers: CPU lists and masks, /proc files, the
 * topology, the proc connector, sd_notify, cgroup statistics.
 */
#include "unit.h"

void test_cpuset_list(void)
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
	CHECK(cpuset_parse_list("8192", &s) == -ERANGE);
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

void test_cpuset_mask(void)
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
	/* 260 groups = 8320 bits: fine while the high ones are zero. */
	{
		char big[260 * 9 + 1] = "";

		for (int i = 0; i < 259; i++)
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

/*
 * L11: CPU ids up to 8191, the NR_CPUS of distribution kernels; 8192
 * and beyond are still -ERANGE, never truncated.
 */
void test_cpuset_wide(void)
{
	static char buf[CPUSET_LIST_BUFSZ], big[300 * 9];
	struct cpuset s, l;
	struct cpureq q;
	int n;

	CHECK(cpuset_parse_list("4095,8191\n", &s) == 0);
	CHECK(cpuset_count(&s) == 2 && cpuset_test(&s, 4095) &&
	      cpuset_test(&s, 8191) && !cpuset_test(&s, 8192));
	CHECK(cpuset_format_list(&s, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "4095,8191");
	CHECK(cpuset_next(&s, 4096) == 8191 && cpuset_next(&s, 8192) == -1);
	CHECK(cpuset_parse_list("0-8191", &s) == 0 && cpuset_count(&s) == 8192);
	cpuset_format_list(&s, buf, sizeof(buf));
	CHECK_STR(buf, "0-8191");
	CHECK(cpuset_parse_list("8191-8192", &s) == -ERANGE);
	CHECK(cpuset_parse_list("0,8192", &s) == -ERANGE);
	CHECK(cpureq_parse_list("8191\n", &q) == 0 && q.state == REQ_SET &&
	      cpuset_test(&q.cpus, 8191));
	CHECK(cpureq_parse_list("8192\n", &q) == -ERANGE);

	/* The mask: 256 groups of 32 bits, most significant first. */
	cpuset_parse_list("0,4095,8191", &l);
	n = cpuset_format_mask(&l, buf, sizeof(buf));
	CHECK(n == 8 + 255 * 9);
	CHECK(!strncmp(buf, "80000000,00000000", 17));
	CHECK_STR(buf + n - 8, "00000001");
	CHECK(!strncmp(buf + (255 - 127) * 9, "80000000,", 9)); /* 4095 */
	CHECK(cpuset_parse_mask(buf, &s) == 0 && cpuset_equal(&s, &l));
	/* Bit 8192 (a 257th group) is out of range; zero there is not. */
	big[0] = '\0';
	strcat(big, "1");
	for (int i = 0; i < 256; i++)
		strcat(big, ",00000000");
	CHECK(cpuset_parse_mask(big, &s) == -ERANGE);
	big[0] = '0';
	CHECK(cpuset_parse_mask(big, &s) == 0 && cpuset_empty(&s));

	/* The longest list, pairs and gaps ("0-1,3-4,..."), fits the buffer. */
	cpuset_zero(&l);
	for (unsigned int c = 0; c < CPUSET_MAX; c++)
		if (c % 3 != 2)
			cpuset_set(&l, c);
	n = cpuset_format_list(&l, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n < sizeof(buf));
	CHECK(cpuset_parse_list(buf, &s) == 0 && cpuset_equal(&s, &l));
}

void test_stat_parser(void)
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

void test_status_parser(void)
{
	struct pstatus ps;
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
	/* What an adoption takes in one read; a missing count is 0. */
	CHECK(procfs_parse_pstatus("Name:\tx\nState:\tZ (zombie)\n"
				   "Uid:\t7\t0\t0\t0\nThreads:\t12\n"
				   "Cpus_allowed_list:\t2\n",
				   &ps) == 0);
	CHECK(ps.uid == 7 && ps.threads == 12 && ps.state == 'Z' &&
	      cpuset_test(&ps.hard, 2) && cpuset_count(&ps.hard) == 1);
	CHECK(procfs_parse_pstatus("Uid:\t7\nThreads:\tx\n"
				   "Cpus_allowed_list:\t2\n",
				   &ps) == 0 &&
	      ps.threads == 0 && ps.state == 0);
	CHECK(procfs_parse_pstatus("Uid:\t7\n", &ps) == -EINVAL);

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

void test_topology(void)
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
	topology_done(&t);

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
	topology_done(&t);

	/* No node directory: one node from cpu/online. */
	fixture_reset();
	put_sys("/devices/system/cpu/online", "0-5\n");
	CHECK(topology_load(sys, &t) == 0 && t.nnodes == 1 &&
	      cpuset_count(&t.node_cpus[0]) == 6);
	topology_done(&t);

	/*
	 * L11: a large host's CPU ids past 1024, up to 8191; node 7 lists
	 * an offline CPU 8190 by its link only.
	 */
	fixture_reset();
	put_sys("/devices/system/node/node0/cpulist", "0-1\n");
	put_sys("/devices/system/node/node7/cpulist", "1024,4095,8191\n");
	put_sys("/devices/system/node/node7/cpu8190/online", "0\n");
	CHECK(topology_load(sys, &t) == 0 && t.nnodes == 2 && t.ids[1] == 7);
	CHECK(cpuset_count(&t.all) == 5 && cpuset_test(&t.all, 8191));
	CHECK(cpuset_count(&t.present) == 6 && cpuset_test(&t.present, 8190));
	cpuset_parse_list("4095", &s);
	topology_nodes_of(&t, &s, &n);
	CHECK(cpuset_count(&n) == 1 && cpuset_test(&n, 1));
	topology_done(&t);
	/* CPU ids past the limit: an error, not a shorter topology. */
	put_sys("/devices/system/node/node7/cpulist", "8192\n");
	CHECK(topology_load(sys, &t) == -ERANGE);
	fixture_reset();
	CHECK(topology_load(sys, &t) == -ENOENT);
}

static int ev_count;
static struct pc_event ev_last;

static void ev_cb(const struct pc_event *e, void *ud)
{
	(void)ud;
	ev_count++;
	ev_last = *e;
}

void test_procconn_parse(void)
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

void test_util(void)
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

void test_notify(void)
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

void test_cgstat(void)
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
