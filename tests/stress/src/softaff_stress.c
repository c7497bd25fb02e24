// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_stress: everything that changes a task's soft or hard affinity,
 * at once, for a bounded time, with invariant checks throughout.
 *
 * Runs as root in the guest.  Target processes (spinning, sleeping and
 * thread-churning) are attacked by:
 *
 *   writers    random valid and invalid masks, hex and list, to
 *              /proc/PID/soft_affinity{,_list} and task/TID/..., including
 *              threads that are exiting (an fd kept open across the exit)
 *   setaff     sched_setaffinity() on random target threads
 *   policy     target threads to SCHED_FIFO/RR for a few ms and back to
 *              SCHED_OTHER, BATCH or IDLE
 *   taskset    fork + exec of taskset(1) on random targets
 *   cpuset     cgroup v2 cpuset.cpus edits and moves between two groups,
 *              now and then a partition root (sched domains rebuilt)
 *   hotplug    CPUs 1..N-1 offline and online (never all of them)
 *   sysctl     sched_preferred / sched_allowed, valid and invalid values
 *   forker     fork, exec(/bin/true), thread storms in the children
 *   softaffd   systemctl reload / restart softaffd (if it is running)
 *
 * and checked by:
 *
 *   checker    for every target thread (and, in a second thread, every
 *              user thread in the system): the preferred mask lies within
 *              the hard mask, and a running thread is on a CPU of its hard
 *              mask.  /proc/PID/status is read without the task's locks,
 *              so a suspect sample must repeat, identical, over 100 ms
 *              before it counts as a violation (transients are counted).
 *   owner      a process of its own (two threads, one with a narrower hard
 *              mask, in the root cgroup where nothing else changes its hard
 *              mask) that only it writes: after every write, accepted or
 *              not, the preferred mask must be exactly what the kernel's
 *              rule gives for the last accepted request.
 *
 * Every errno is checked against the documented ones: EINVAL, ESRCH (and
 * ENOENT at open for a thread that is gone).  A string that can never be a
 * valid mask (empty, CPU >= nr_cpu_ids, garbage) must be refused.
 *
 * usage: softaff_stress [-d SECONDS] [-s SEED] [-c CGROUP_A,CGROUP_B]
 *                       [-D softaffd] [-v]
 * Prints "key value" counters at the end; exit 1 on any violation.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../guest/src/softaff_test.h"

#define MAX_TARGETS	8
#define MAX_TIDS	256
#define STATUS_MAX	4096

static int ncpus;		/* possible CPUs: masks are 0..ncpus-1 */
static uint64_t all_mask;
static volatile int stop;
static double t0;		/* monotonic start, for messages */
static bool verbose;
static unsigned long seed;

/* --- counters ------------------------------------------------------------ */

#define COUNTERS(X)						\
	X(writes_ok) X(writes_einval) X(writes_esrch)		\
	X(writes_gone) X(writes_exiting)			\
	X(owner_writes_ok) X(owner_writes_rejected)		\
	X(setaffinity_ok) X(setaffinity_failed)		\
	X(taskset_execs) X(taskset_failed)			\
	X(cpuset_edits) X(cpuset_edits_failed) X(cpuset_moves)	\
	X(cpuset_partitions) X(policy_changes) X(policy_failed)	\
	X(hotplug_offline) X(hotplug_online) X(hotplug_failed)	\
	X(sysctl_writes_ok) X(sysctl_writes_rejected)		\
	X(forks) X(execs) X(threads_created)			\
	X(softaffd_reloads) X(softaffd_restarts) X(softaffd_failed) \
	X(checks_subset) X(checks_cpu) X(checks_owner)		\
	X(checks_child) X(transients) X(violations)

enum {
#define X(n) C_##n,
	COUNTERS(X)
#undef X
	C_NR
};

static const char *const counter_names[] = {
#define X(n) #n,
	COUNTERS(X)
#undef X
};

static unsigned long counters[C_NR];

static void count(int c)
{
	__atomic_fetch_add(&counters[c], 1, __ATOMIC_RELAXED);
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void violation(const char *fmt, ...)
{
	va_list ap;

	count(C_violations);
	pthread_mutex_lock(&out_lock);
	printf("VIOLATION: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* --- small helpers ----------------------------------------------------- */

static uint64_t rnd(uint64_t *s)	/* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned int rndn(uint64_t *s, unsigned int n)
{
	return n ? (unsigned int)(rnd(s) % n) : 0;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static char *fmt_list(uint64_t m, char *buf, size_t len)
{
	size_t o = 0;
	int i = 0;

	buf[0] = '\0';
	while (i < 64 && o < len) {
		int j;

		if (!(m & (1ULL << i))) {
			i++;
			continue;
		}
		for (j = i; j + 1 < 64 && (m & (1ULL << (j + 1))); j++)
			;
		if (j == i)
			o += snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
		else
			o += snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "",
				      i, j);
		i = j + 1;
	}
	return buf;
}

/* Whole-file read in one read(2): seq_file fills a page per read. */
static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* write(2) of exactly @len bytes to @path: 0 or -errno (-ENOENT at open). */
static int write_file(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;	/* short write: not expected from these files */
	close(fd);
	return err;
}

/* --- task views -------------------------------------------------------- */

struct view {
	char state;
	int cpu;		/* stat field 39, -1 if not read */
	uint64_t hard, pref;
};

/*
 * Sample line (6.1 + series):
 *   State:	R (running)
 *   Cpus_allowed_list:	0-3
 *   Cpus_preferred_list:	0-1
 */
static int read_status(pid_t pid, pid_t tid, struct view *v)
{
	char path[64], buf[STATUS_MAX], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nState:\t");
	if (!p)
		return -1;
	v->state = p[8];
	p = strstr(buf, "\nCpus_allowed_list:\t");
	if (!p || softaff_parse_cpulist64(p + 20, &v->hard))
		return -1;
	p = strstr(buf, "\nCpus_preferred_list:\t");
	if (!p || softaff_parse_cpulist64(p + 22, &v->pref))
		return -1;
	v->cpu = -1;
	return 0;
}

/*
 * Sample: "123 (comm) R 1 ... " -- field 39 (processor) is the 37th field
 * after the ')' that closes comm (which may itself contain ") ").
 */
static int read_stat(pid_t pid, pid_t tid, char *state, int *cpu)
{
	char path[64], buf[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	for (field = 3; field < 39; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*cpu = atoi(p);
	return 0;
}

static int read_soft_list(pid_t pid, pid_t tid, uint64_t *m)
{
	char path[80], buf[256];

	if (tid)
		snprintf(path, sizeof(path),
			 "/proc/%d/task/%d/soft_affinity_list", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list",
			 pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return softaff_parse_cpulist64(buf, m);
}

static int list_tids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (n < max && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			tids[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

/* --- masks to write ------------------------------------------------------ */

struct mask_case {
	char buf[160];
	size_t len;
	bool list;
	bool must_fail;		/* can never be a valid preferred mask */
	bool known;		/* mask below is what a success must store */
	uint64_t mask;
};

static uint64_t random_cpus(uint64_t *s)
{
	uint64_t m;

	do
		m = rnd(s) & all_mask;
	while (!m);
	return m;
}

static void make_case(uint64_t *s, struct mask_case *c, bool list)
{
	static const char *const bad_hex[] = {
		"0", "", "\n", "zz", "0-1", "-1", " ", "1,00000000,00000000,1",
		"ffffffffffffffffffffffffffffffffffff", "0x",
	};
	static const char *const bad_list[] = {
		"", "\n", "a-b", "1-0", "0-", "-1", "0--1", "99999999999",
		"3-1", "1/2", "0-3:0/2", ",", "x",
	};
	static const char *const maybe[] = {
		"all", "0-3:1/2", "N", "0,,1", "  1", "1 ", "0x3", "3\0zz",
		"+1", "01", "0-0", "1,1,1",
	};
	unsigned int r = rndn(s, 100);
	char tmp[128];

	memset(c, 0, sizeof(*c));
	c->list = list;
	if (r < 60) {
		c->mask = random_cpus(s);
		c->known = true;
		if (list)
			fmt_list(c->mask, tmp, sizeof(tmp));
		else
			snprintf(tmp, sizeof(tmp), "%llx",
				 (unsigned long long)c->mask);
		c->len = (size_t)snprintf(c->buf, sizeof(c->buf), "%s%s", tmp,
					  rndn(s, 2) ? "\n" : "");
	} else if (r < 72) {
		/* A CPU >= nr_cpu_ids, alone or with valid ones. */
		unsigned int cpu = ncpus + rndn(s, 64 - ncpus);
		uint64_t m = (1ULL << cpu) | (rndn(s, 2) ? random_cpus(s) : 0);

		if (list)
			fmt_list(m, tmp, sizeof(tmp));
		else
			snprintf(tmp, sizeof(tmp), "%llx",
				 (unsigned long long)m);
		c->len = (size_t)snprintf(c->buf, sizeof(c->buf), "%s\n", tmp);
		c->must_fail = true;
	} else if (r < 88) {
		const char *b = list ? bad_list[rndn(s, sizeof(bad_list) /
						      sizeof(*bad_list))]
				     : bad_hex[rndn(s, sizeof(bad_hex) /
						     sizeof(*bad_hex))];

		c->len = strlen(b);
		memcpy(c->buf, b, c->len);
		c->must_fail = true;
	} else if (r < 94) {
		unsigned int i = rndn(s, sizeof(maybe) / sizeof(*maybe));

		c->len = i == 7 ? 5 : strlen(maybe[i]);
		memcpy(c->buf, maybe[i], c->len);
	} else {
		/* Random bytes, random length (0 included). */
		unsigned int i;

		c->len = rndn(s, 40);
		for (i = 0; i < c->len; i++)
			c->buf[i] = (char)rnd(s);
	}
}

/* --- targets ------------------------------------------------------------- */

struct target {
	pid_t pid;
	char name[16];
};

static struct target targets[MAX_TARGETS];
static int ntargets;

static void *tgt_spin(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	for (;;) {
		double end = now() + 0.002 + rndn(&s, 20) / 1000.0;

		while (now() < end)
			;
		sleep_us(rndn(&s, 3000));
	}
	return NULL;
}

static void *tgt_sleep(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	for (;;)
		sleep_us(100 + rndn(&s, 20000));
	return NULL;
}

static void *tgt_short(void *arg)
{
	sleep_us((long)(uintptr_t)arg);
	return NULL;
}

/* A target process: 2 spinners, 2 sleepers, and a thread churn. */
static void target_main(int idx, const char *name)
{
	uint64_t s = seed * 7919 + idx + 1;
	pthread_attr_t attr;
	pthread_t t;
	int i;

	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < 2; i++) {
		pthread_create(&t, &attr, tgt_spin, (void *)(uintptr_t)rnd(&s));
		pthread_create(&t, &attr, tgt_sleep, (void *)(uintptr_t)rnd(&s));
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		/* Short-lived threads: writers hit them while they exit. */
		pthread_create(&t, &attr, tgt_short,
			       (void *)(uintptr_t)rndn(&s, 5000));
		sleep_us(1000 + rndn(&s, 4000));
	}
}

static void start_targets(int n)
{
	int i;

	for (i = 0; i < n && i < MAX_TARGETS; i++) {
		struct target *t = &targets[ntargets];
		pid_t pid;

		/* The first two match softaffd's sample rules (node 0, 2-3). */
		if (i == 0)
			snprintf(t->name, sizeof(t->name), "softaff-demo0s");
		else if (i == 1)
			snprintf(t->name, sizeof(t->name), "softaff-demo1s");
		else
			snprintf(t->name, sizeof(t->name), "stress-tgt%d", i);
		pid = fork();
		if (pid == 0)
			target_main(i, t->name);
		if (pid < 0) {
			perror("fork");
			continue;
		}
		t->pid = pid;
		ntargets++;
	}
}

static pid_t random_target(uint64_t *s)
{
	return ntargets ? targets[rndn(s, ntargets)].pid : 0;
}

static pid_t random_tid(uint64_t *s, pid_t pid)
{
	pid_t tids[MAX_TIDS];
	int n = list_tids(pid, tids, MAX_TIDS);

	return n ? tids[rndn(s, n)] : pid;
}

/* --- writers ------------------------------------------------------------- */

static void check_write_result(const struct mask_case *c, int err,
			       const char *path)
{
	switch (err) {
	case 0:
		count(C_writes_ok);
		if (c->must_fail)
			violation("write of invalid \"%.*s\" to %s succeeded",
				  (int)c->len, c->buf, path);
		break;
	case -EINVAL:
		count(C_writes_einval);
		break;
	case -ESRCH:
		count(C_writes_esrch);
		break;
	case -ENOENT:
		count(C_writes_gone);
		break;
	default:
		violation("write of \"%.*s\" to %s: unexpected %s",
			  (int)c->len, c->buf, path, strerror(-err));
	}
}

static void *writer(void *arg)
{
	uint64_t s = seed * 31 + (uintptr_t)arg;

	while (!stop) {
		struct mask_case c;
		pid_t pid = random_target(&s), tid = 0;
		unsigned int r = rndn(&s, 100);
		char path[96];
		bool list = rndn(&s, 2);

		if (!pid)
			break;
		make_case(&s, &c, list);
		if (r >= 20)
			tid = random_tid(&s, pid);
		if (tid)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid,
				 tid, list ? "soft_affinity_list" :
					     "soft_affinity");
		else
			snprintf(path, sizeof(path), "/proc/%d/%s", pid,
				 list ? "soft_affinity_list" : "soft_affinity");

		if (r >= 90 && tid && tid != pid) {
			/*
			 * Keep the file open while the thread (likely a
			 * short-lived one) exits: ESRCH, or EINVAL.
			 */
			int fd = open(path, O_WRONLY | O_CLOEXEC);
			ssize_t n;

			if (fd < 0) {
				check_write_result(&c, -errno, path);
				continue;
			}
			sleep_us(rndn(&s, 6000));
			n = write(fd, c.buf, c.len);
			close(fd);
			count(C_writes_exiting);
			check_write_result(&c, n < 0 ? -errno :
					   (size_t)n == c.len ? 0 : -EIO, path);
		} else {
			check_write_result(&c, write_file(path, c.buf, c.len),
					   path);
		}
		if (rndn(&s, 16) == 0)
			sleep_us(rndn(&s, 2000));
	}
	return NULL;
}

/* --- hard mask changers --------------------------------------------------- */

static void *setaff(void *arg)
{
	uint64_t s = seed * 37 + (uintptr_t)arg;

	while (!stop) {
		pid_t pid = random_target(&s);
		pid_t tid = random_tid(&s, pid);
		uint64_t m = random_cpus(&s);
		cpu_set_t set;
		int i;

		CPU_ZERO(&set);
		for (i = 0; i < ncpus; i++)
			if (m & (1ULL << i))
				CPU_SET(i, &set);
		if (sched_setaffinity(tid, sizeof(set), &set) == 0)
			count(C_setaffinity_ok);
		else
			count(C_setaffinity_failed);
		sleep_us(1000 + rndn(&s, 10000));
	}
	return NULL;
}

/*
 * Policy churn: a target thread goes SCHED_FIFO or SCHED_RR for a few
 * milliseconds (writes to it must fail meanwhile, and the scheduler must
 * ignore its mask), then back to SCHED_OTHER, SCHED_BATCH or SCHED_IDLE.
 */
static void *policy_churn(void *arg)
{
	uint64_t s = seed * 71 + (uintptr_t)arg;
	static const int fair[] = { SCHED_OTHER, SCHED_BATCH, SCHED_IDLE };

	while (!stop) {
		pid_t tid = random_tid(&s, random_target(&s));
		struct sched_param rt = { .sched_priority = 1 }, fp = { 0 };

		if (sched_setscheduler(tid, rndn(&s, 2) ? SCHED_FIFO : SCHED_RR,
				       &rt)) {
			count(C_policy_failed);
			sleep_us(5000);
			continue;
		}
		count(C_policy_changes);
		sleep_us(1000 + rndn(&s, 10000));
		if (sched_setscheduler(tid, fair[rndn(&s, 3)], &fp) == 0)
			count(C_policy_changes);
		else
			count(C_policy_failed);	/* the thread exited */
		sleep_us(rndn(&s, 20000));
	}
	return NULL;
}

/* fork + exec @argv with stdout/stderr to /dev/null; its exit status. */
static int run_quiet(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	count(C_forks);
	count(C_execs);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* fork + exec @argv with its output on ours (to diagnose a failure). */
static void run_loud(char *const argv[])
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void *taskset_storm(void *arg)
{
	uint64_t s = seed * 41 + (uintptr_t)arg;

	while (!stop) {
		pid_t pid = random_target(&s);
		char mask[32], spid[16];
		bool all = rndn(&s, 2);
		char *argv[] = { "taskset", all ? "-a" : "-p", all ? "-p" : mask,
				 all ? mask : spid, all ? spid : NULL, NULL };

		snprintf(mask, sizeof(mask), "%llx",
			 (unsigned long long)random_cpus(&s));
		snprintf(spid, sizeof(spid), "%d",
			 all ? pid : random_tid(&s, pid));
		if (run_quiet(argv) == 0)
			count(C_taskset_execs);
		else
			count(C_taskset_failed);
		sleep_us(rndn(&s, 20000));
	}
	return NULL;
}

static char *cgroups[2];

static void *cpuset_editor(void *arg)
{
	uint64_t s = seed * 43 + (uintptr_t)arg;
	char path[256], val[64];

	while (!stop) {
		int g = rndn(&s, 2);
		unsigned int r = rndn(&s, 100);
		int err;

		if (r < 4) {
			/* A partition root rebuilds the sched domains. */
			snprintf(path, sizeof(path), "%s/cpuset.cpus.partition",
				 cgroups[g]);
			snprintf(val, sizeof(val), "%s",
				 rndn(&s, 2) ? "root" : "member");
			err = write_file(path, val, strlen(val));
			count(err ? C_cpuset_edits_failed : C_cpuset_partitions);
		} else if (r < 30) {
			/* Move a target to a group: its threads' hard masks. */
			snprintf(path, sizeof(path), "%s/cgroup.procs",
				 cgroups[g]);
			snprintf(val, sizeof(val), "%d", random_target(&s));
			err = write_file(path, val, strlen(val));
			count(err ? C_cpuset_edits_failed : C_cpuset_moves);
		} else {
			snprintf(path, sizeof(path), "%s/cpuset.cpus",
				 cgroups[g]);
			if (r < 40)
				val[0] = '\0';	/* back to the parent's */
			else if (r < 45)
				snprintf(val, sizeof(val), "%d", ncpus + 3);
			else
				fmt_list(random_cpus(&s), val, sizeof(val));
			err = write_file(path, val[0] ? val : "\n",
					 val[0] ? strlen(val) : 1);
			count(err ? C_cpuset_edits_failed : C_cpuset_edits);
		}
		sleep_us(2000 + rndn(&s, 30000));
	}
	return NULL;
}

static int cpu_online_path(int cpu, char *path, size_t len)
{
	return snprintf(path, len, "/sys/devices/system/cpu/cpu%d/online",
			cpu);
}

static void *hotplug(void *arg)
{
	uint64_t s = seed * 47 + (uintptr_t)arg;
	char path[64], buf[8];

	while (!stop) {
		int cpu = 1 + rndn(&s, ncpus - 1);
		bool online;
		int err;

		cpu_online_path(cpu, path, sizeof(path));
		if (read_file(path, buf, sizeof(buf)) < 0)
			break;	/* no hotplug support */
		online = buf[0] == '1';
		err = write_file(path, online ? "0" : "1", 1);
		if (err)
			count(C_hotplug_failed);
		else
			count(online ? C_hotplug_offline : C_hotplug_online);
		sleep_us(rndn(&s, 200000));
	}
	/* Everything back online. */
	for (int cpu = 1; cpu < ncpus; cpu++) {
		cpu_online_path(cpu, path, sizeof(path));
		if (read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '0' &&
		    write_file(path, "1", 1) == 0)
			count(C_hotplug_online);
	}
	return NULL;
}

static void *sysctl_churn(void *arg)
{
	static const char *const files[] = {
		"/proc/sys/kernel/sched_preferred",
		"/proc/sys/kernel/sched_allowed",
	};
	static const char *const bad[] = {
		"0", "-1", "10001", "4294967297", "abc", "5x", "99999999999999999999",
	};
	uint64_t s = seed * 53 + (uintptr_t)arg;

	while (!stop) {
		const char *f = files[rndn(&s, 2)];
		char val[32], buf[32];
		bool good = rndn(&s, 2);
		long v;
		int err;

		if (good)
			snprintf(val, sizeof(val), "%u\n", 1 + rndn(&s, 10000));
		else
			snprintf(val, sizeof(val), "%s\n",
				 bad[rndn(&s, sizeof(bad) / sizeof(*bad))]);
		err = write_file(f, val, strlen(val));
		if (good && err)
			violation("%s: valid %s refused: %s", f, val,
				  strerror(-err));
		else if (!good && err != -EINVAL)
			violation("%s: invalid %s -> %s", f, val,
				  err ? strerror(-err) : "accepted");
		count(err ? C_sysctl_writes_rejected : C_sysctl_writes_ok);
		if (read_file(f, buf, sizeof(buf)) > 0) {
			v = strtol(buf, NULL, 10);
			if (v < 1 || v > 10000)
				violation("%s reads %ld", f, v);
		}
		sleep_us(rndn(&s, 50000));
	}
	return NULL;
}

/* --- fork / exec / thread storm ------------------------------------------- */

static void *child_thread(void *arg)
{
	(void)arg;
	return NULL;
}

/*
 * In a fresh child: its preferred mask lies within its hard mask (two
 * identical reads in a row, since a cpuset or hotplug change may race).
 */
static int child_self_check(void)
{
	struct view a, b;
	int tries;

	for (tries = 0; tries < 20; tries++) {
		if (read_status(getpid(), gettid_(), &a) ||
		    read_status(getpid(), gettid_(), &b))
			return 0;
		if (a.hard != b.hard || a.pref != b.pref)
			continue;
		return a.pref && !(a.pref & ~a.hard) ? 0 : 1;
	}
	return 0;
}

static void *forker(void *arg)
{
	uint64_t s = seed * 59 + (uintptr_t)arg;
	char path[96], list[64];

	while (!stop) {
		unsigned int r = rndn(&s, 100);
		pid_t pid;
		int status;

		/* Vary our own preferred mask: children inherit it. */
		snprintf(path, sizeof(path),
			 "/proc/self/task/%d/soft_affinity_list", gettid_());
		fmt_list(random_cpus(&s), list, sizeof(list));
		write_file(path, list, strlen(list));

		pid = fork();
		if (pid < 0) {
			sleep_us(10000);
			continue;
		}
		if (pid == 0) {
			if (r < 40) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
			if (r < 80) {
				pthread_t t[4];
				int i, n = 0;

				for (i = 0; i < 4; i++)
					if (!pthread_create(&t[i], NULL,
							    child_thread, NULL))
						n++;
				for (i = 0; i < n; i++)
					pthread_join(t[i], NULL);
				_exit(child_self_check() ? 3 : 64 + n);
			}
			_exit(child_self_check() ? 3 : 0);
		}
		count(C_forks);
		if (r < 40)
			count(C_execs);
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
			int rc = WEXITSTATUS(status);

			if (rc == 127)
				violation("exec of /bin/true failed");
			else if (rc == 3)
				violation("forked child: preferred mask not within its hard mask");
			else if (rc >= 64 && rc <= 68)
				__atomic_fetch_add(&counters[C_threads_created],
						   rc - 64, __ATOMIC_RELAXED);
			if (r >= 40)
				count(C_checks_child);
		}
		if (rndn(&s, 4) == 0)
			sleep_us(rndn(&s, 5000));
	}
	return NULL;
}

/* --- softaffd ------------------------------------------------------------ */

static void *softaffd_churn(void *arg)
{
	uint64_t s = seed * 61 + (uintptr_t)arg;

	while (!stop) {
		bool restart = rndn(&s, 3) == 0;
		char *argv[] = { "systemctl", restart ? "restart" : "reload",
				 "softaffd", NULL };
		int i;

		int rc = run_quiet(argv);

		if (rc == 0) {
			count(restart ? C_softaffd_restarts : C_softaffd_reloads);
		} else {
			/* Say why: the unit's state and its last messages. */
			char *status[] = { "sh", "-c",
				"systemctl show -p ActiveState -p SubState -p Result -p NRestarts softaffd | tr '\\n' ' '; echo; "
				"journalctl -u softaffd -n 6 --no-pager -o short-monotonic | sed 's/^/# softaffd: /'",
				NULL };

			count(C_softaffd_failed);
			say("# systemctl %s softaffd: exit %d at %.0f s\n",
			    argv[1], rc, now() - t0);
			run_loud(status);
		}
		/* 2-6 s, in small steps so that stop is seen quickly */
		for (i = 0; i < 20 + (int)rndn(&s, 40) && !stop; i++)
			sleep_us(100000);
	}
	return NULL;
}

/* --- the checker --------------------------------------------------------- */

/*
 * Does the suspect state persist?  @bad_cpu: check the CPU, else the
 * subset.  A real corruption stays; a sample torn by a concurrent update
 * does not.  Also requires the hard mask not to change meanwhile.
 */
static bool confirm(pid_t pid, pid_t tid, const struct view *first,
		    bool bad_cpu)
{
	int i;

	for (i = 0; i < 10; i++) {
		struct view v;
		char st;
		int cpu;

		sleep_us(10000);
		if (read_status(pid, tid, &v))
			return false;
		if (v.hard != first->hard)
			return false;
		if (!bad_cpu) {
			if (v.pref != first->pref)
				return false;
			continue;
		}
		if (read_stat(pid, tid, &st, &cpu) || st != 'R' ||
		    cpu != first->cpu)
			return false;
	}
	return true;
}

static void check_thread(pid_t pid, pid_t tid)
{
	struct view a, b;
	uint64_t locked;
	char st;
	int cpu;

	if (read_status(pid, tid, &a) || read_stat(pid, tid, &st, &cpu) ||
	    read_status(pid, tid, &b))
		return;	/* gone */

	/* Soft within hard, from the lockless status view. */
	count(C_checks_subset);
	if (a.hard == b.hard && a.pref == b.pref &&
	    (!a.pref || (a.pref & ~a.hard))) {
		if (confirm(pid, tid, &a, false))
			violation("%d/%d: Cpus_preferred_list %llx not within Cpus_allowed_list %llx",
				  pid, tid, (unsigned long long)a.pref,
				  (unsigned long long)a.hard);
		else
			count(C_transients);
	}

	/* Soft within hard, from soft_affinity_list (read under pi_lock). */
	if (read_soft_list(pid, tid, &locked) == 0 &&
	    read_status(pid, tid, &b) == 0 && a.hard == b.hard) {
		count(C_checks_subset);
		if (!locked || (locked & ~a.hard)) {
			if (confirm(pid, tid, &b, false) && b.pref == locked)
				violation("%d/%d: soft_affinity_list %llx not within hard mask %llx",
					  pid, tid, (unsigned long long)locked,
					  (unsigned long long)a.hard);
			else
				count(C_transients);
		}
	}

	/* A running thread is on a CPU of its hard mask. */
	if (st == 'R' && a.state == 'R' && b.state == 'R' &&
	    a.hard == b.hard && cpu >= 0) {
		count(C_checks_cpu);
		if (cpu >= 64 || !(a.hard & (1ULL << cpu))) {
			a.cpu = cpu;
			if (confirm(pid, tid, &a, true))
				violation("%d/%d: running on CPU %d, hard mask %llx",
					  pid, tid, cpu,
					  (unsigned long long)a.hard);
			else
				count(C_transients);
		}
	}
}

/* PF_KTHREAD in stat field 9 (flags): 7 fields after the ')' of comm. */
static bool is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return true;	/* gone: skip */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 9; field++) {
		p = strchr(p + 1, ' ');
	}
	return !p || (strtoul(p + 1, NULL, 10) & 0x00200000);
}

/*
 * Every user task in the system, not only the targets: forked children,
 * taskset and systemctl, softaffd, systemd.  Kernel threads are left out:
 * per-CPU ones are parked, not moved, while their CPU is offline.
 */
static void sweep(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && !stop && (de = readdir(d))) {
		pid_t pid, tids[MAX_TIDS];
		int n, j;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (is_kthread(pid))
			continue;
		n = list_tids(pid, tids, MAX_TIDS);
		for (j = 0; j < n && !stop; j++)
			check_thread(pid, tids[j]);
	}
	if (d)
		closedir(d);
}

static void *checker(void *arg)
{
	bool sweeper = !((uintptr_t)arg & 1);

	while (!stop) {
		int i;

		if (sweeper) {
			sweep();
			sleep_us(10000);
			continue;
		}
		for (i = 0; i < ntargets && !stop; i++) {
			pid_t tids[MAX_TIDS];
			int n = list_tids(targets[i].pid, tids, MAX_TIDS), j;

			for (j = 0; j < n && !stop; j++)
				check_thread(targets[i].pid, tids[j]);
		}
		sleep_us(2000);
	}
	return NULL;
}

/* --- the owner: an exact model of tasks nobody else touches --------------- */

struct owned {
	pid_t tid;
	uint64_t hard;		/* fixed: root cgroup, no other writer */
	uint64_t req;		/* last accepted request, within hard */
	bool req_set;		/* soft affinity on: req != hard */
};

static pid_t owned_pid;

static void *owned_narrow(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	return tgt_spin(arg);
}

/*
 * The owned process: the leader sleeps with the full hard mask, a second
 * thread spins on CPUs 0-1, so a whole-process write of a mask outside 0-1
 * must fail for both threads and change neither.
 */
static pid_t start_owned(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t set;
		pthread_t t;
		int i;

		prctl(PR_SET_NAME, "stress-own");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/*
		 * Into the root cgroup, before the masks are set (attaching
		 * resets them): cpuset leaves the hard masks of tasks in the
		 * top cpuset alone on hotplug.
		 */
		{
			int fd = open("/sys/fs/cgroup/cgroup.procs", O_WRONLY);

			if (fd >= 0) {
				if (write(fd, "0", 1) < 0)
					perror("stress-own: root cgroup");
				close(fd);
			}
		}
		CPU_ZERO(&set);
		for (i = 0; i < ncpus; i++)
			CPU_SET(i, &set);
		sched_setaffinity(0, sizeof(set), &set);
		pthread_create(&t, NULL, owned_narrow, (void *)(uintptr_t)seed);
		for (;;)
			pause();
	}
	return pid;
}

/* The effective mask the kernel must show for @o. */
static uint64_t expected(const struct owned *o)
{
	return o->req_set ? o->req : o->hard;
}

static void owner_accept(struct owned *o, uint64_t m)
{
	o->req = m;
	o->req_set = m != o->hard;
}

/* Compare both views of @o with the model; -1 if it does not match. */
static int owner_verify(struct owned *o, const char *what,
			const struct mask_case *c, int err)
{
	uint64_t locked, want = expected(o);
	struct view v;

	count(C_checks_owner);
	if (read_soft_list(owned_pid, o->tid, &locked) ||
	    read_status(owned_pid, o->tid, &v)) {
		violation("owned task %d vanished", o->tid);
		return -1;
	}
	if (v.hard != o->hard) {
		violation("owned task %d: hard mask %llx changed to %llx under us",
			  o->tid, (unsigned long long)o->hard,
			  (unsigned long long)v.hard);
		o->hard = v.hard;
		o->req_set = false;
		return -1;
	}
	if (locked != want || v.pref != want) {
		violation("owned task %d after %s \"%.*s\" (%s): preferred %llx (status %llx), want %llx",
			  o->tid, what, (int)c->len, c->buf,
			  err ? strerror(-err) : "accepted",
			  (unsigned long long)locked,
			  (unsigned long long)v.pref,
			  (unsigned long long)want);
		/* Resynchronise so one bug is reported once. */
		owner_accept(o, locked);
		return -1;
	}
	return 0;
}

static void *owner(void *arg)
{
	uint64_t s = seed * 67 + (uintptr_t)arg;
	struct owned o[2];
	pid_t tids[4];
	int i, n = 0;

	if (owned_pid <= 0)
		return NULL;
	/* Wait for the second thread and its narrow hard mask. */
	for (i = 0; i < 500; i++) {
		struct view v;

		n = list_tids(owned_pid, tids, 4);
		if (n == 2) {
			pid_t other = tids[0] == owned_pid ? tids[1] : tids[0];

			if (read_status(owned_pid, other, &v) == 0 &&
			    v.hard == 0x3) {
				o[1].tid = other;
				o[1].hard = v.hard;
				break;
			}
		}
		sleep_us(10000);
	}
	if (i == 500) {
		violation("owned process did not start");
		return NULL;
	}
	o[0].tid = owned_pid;
	{
		struct view v;

		if (read_status(owned_pid, owned_pid, &v)) {
			violation("owned process vanished");
			return NULL;
		}
		o[0].hard = v.hard;
	}
	for (i = 0; i < 2; i++)
		o[i].req_set = false;
	if (owner_verify(&o[0], "start", &(struct mask_case){ 0 }, 0) ||
	    owner_verify(&o[1], "start", &(struct mask_case){ 0 }, 0))
		return NULL;

	while (!stop) {
		struct mask_case c;
		int which = rndn(&s, 3), err;
		bool list = rndn(&s, 2);
		uint64_t hard_all;
		char path[96];

		make_case(&s, &c, list);
		if (which < 2)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/%s",
				 owned_pid, o[which].tid,
				 list ? "soft_affinity_list" : "soft_affinity");
		else
			snprintf(path, sizeof(path), "/proc/%d/%s", owned_pid,
				 list ? "soft_affinity_list" : "soft_affinity");
		err = write_file(path, c.buf, c.len);
		count(err ? C_owner_writes_rejected : C_owner_writes_ok);
		if (err && err != -EINVAL)
			violation("owned %s \"%.*s\": unexpected %s", path,
				  (int)c.len, c.buf, strerror(-err));
		if (!err && c.must_fail)
			violation("owned %s: invalid \"%.*s\" accepted", path,
				  (int)c.len, c.buf);

		/*
		 * A known mask within every written thread's hard mask that
		 * holds CPU 0 (never offline) must be accepted; one outside
		 * the hard mask must be refused.
		 */
		hard_all = which < 2 ? o[which].hard : o[0].hard & o[1].hard;
		if (c.known && !(c.mask & ~hard_all) && (c.mask & 1) && err)
			violation("owned %s: valid \"%.*s\" refused: %s", path,
				  (int)c.len, c.buf, strerror(-err));
		if (c.known && (c.mask & ~hard_all) && !err)
			violation("owned %s: \"%.*s\" outside hard mask %llx accepted",
				  path, (int)c.len, c.buf,
				  (unsigned long long)hard_all);

		for (i = 0; i < 2; i++) {
			if (err || (which < 2 && which != i))
				continue;
			if (c.known) {
				owner_accept(&o[i], c.mask);
			} else {
				/* An accepted odd spelling: take what the
				 * kernel stored, it must lie within hard. */
				uint64_t m;

				if (read_soft_list(owned_pid, o[i].tid, &m) ||
				    !m || (m & ~o[i].hard))
					violation("owned %d: \"%.*s\" stored %llx",
						  o[i].tid, (int)c.len, c.buf,
						  (unsigned long long)m);
				owner_accept(&o[i], m);
			}
		}
		owner_verify(&o[0], which < 2 ? "thread write" : "process write",
			     &c, err);
		owner_verify(&o[1], which < 2 ? "thread write" : "process write",
			     &c, err);
		if (rndn(&s, 8) == 0)
			sleep_us(rndn(&s, 3000));
	}
	return NULL;
}

/* --- main ---------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: softaff_stress [-d SECONDS] [-s SEED] [-t TARGETS]\n"
		"                      [-c CGROUP_A,CGROUP_B] [-D] [-v]\n"
		"  -D  also reload and restart softaffd (systemctl)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int duration = 300, ntgt = 4, opt, i;
	bool softaffd = false;
	struct {
		void *(*fn)(void *);
		const char *name;
		int n;
	} actors[] = {
		{ writer, "writer", 3 },
		{ setaff, "setaffinity", 1 },
		{ policy_churn, "policy", 1 },
		{ taskset_storm, "taskset", 1 },
		{ cpuset_editor, "cpuset", 1 },
		{ hotplug, "hotplug", 1 },
		{ sysctl_churn, "sysctl", 1 },
		{ forker, "forker", 2 },
		{ softaffd_churn, "softaffd", 1 },
		{ checker, "checker", 2 },
		{ owner, "owner", 1 },
	};
	pthread_t threads[32];
	int nthreads = 0;
	double start, last;
	char *c;

	seed = (unsigned long)time(NULL) ^ (unsigned long)getpid();
	while ((opt = getopt(argc, argv, "d:s:t:c:Dv")) != -1) {
		switch (opt) {
		case 'd': duration = atoi(optarg); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 't': ntgt = atoi(optarg); break;
		case 'c':
			cgroups[0] = strdup(optarg);
			c = strchr(cgroups[0], ',');
			if (!c)
				usage();
			*c = '\0';
			cgroups[1] = c + 1;
			break;
		case 'D': softaffd = true; break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (!seed)
		seed = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus < 2 || ncpus > 63) {
		fprintf(stderr, "softaff_stress: needs 2..63 CPUs, have %d\n",
			ncpus);
		return 2;
	}
	all_mask = (1ULL << ncpus) - 1;
	signal(SIGPIPE, SIG_IGN);
	say("seed %lu duration %d cpus %d targets %d\n", seed, duration, ncpus,
	    ntgt);

	t0 = now();
	start_targets(ntgt);
	/* Before hotplug starts: its hard masks are all CPUs and 0-1. */
	owned_pid = start_owned();
	if (cgroups[0]) {
		/* Half of the targets in each group to start with. */
		for (i = 0; i < ntargets; i++) {
			char path[256], val[16];

			snprintf(path, sizeof(path), "%s/cgroup.procs",
				 cgroups[i % 2]);
			snprintf(val, sizeof(val), "%d", targets[i].pid);
			if (write_file(path, val, strlen(val)))
				say("# could not move %d to %s\n",
				    targets[i].pid, cgroups[i % 2]);
		}
	}

	for (i = 0; i < (int)(sizeof(actors) / sizeof(*actors)); i++) {
		int j;

		if (actors[i].fn == cpuset_editor && !cgroups[0])
			continue;
		if (actors[i].fn == softaffd_churn && !softaffd)
			continue;
		for (j = 0; j < actors[i].n && nthreads < 32; j++)
			if (pthread_create(&threads[nthreads], NULL,
					   actors[i].fn,
					   (void *)(uintptr_t)(i * 16 + j + 1)) == 0)
				nthreads++;
	}

	start = last = now();
	while (now() - start < duration) {
		sleep_us(200000);
		if (now() - last >= 30) {
			last = now();
			say("# %3.0f s: writes %lu ok %lu einval, hotplug %lu/%lu, cpuset %lu, forks %lu, checks %lu, violations %lu\n",
			    now() - start, counters[C_writes_ok],
			    counters[C_writes_einval],
			    counters[C_hotplug_offline],
			    counters[C_hotplug_online],
			    counters[C_cpuset_edits] + counters[C_cpuset_moves],
			    counters[C_forks],
			    counters[C_checks_subset] + counters[C_checks_cpu] +
			    counters[C_checks_owner],
			    counters[C_violations]);
		}
	}
	stop = 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);

	/* A last full check, with everything quiet, after hotplug is done. */
	for (i = 0; i < ntargets; i++) {
		pid_t tids[MAX_TIDS];
		int n = list_tids(targets[i].pid, tids, MAX_TIDS), j;

		for (j = 0; j < n; j++)
			check_thread(targets[i].pid, tids[j]);
	}
	for (i = 0; i < ntargets; i++)
		kill(targets[i].pid, SIGKILL);
	if (owned_pid > 0)
		kill(owned_pid, SIGKILL);
	while (wait(NULL) > 0)
		;

	say("elapsed %.0f\n", now() - start);
	for (i = 0; i < C_NR; i++)
		say("%s %lu\n", counter_names[i], counters[i]);
	return counters[C_violations] ? 1 : 0;
}
