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
 *              threads that are exiting (an fd kept open across the exit);
 *              valid and invalid ratios to soft_affinity_ratio
 *   setaff     sched_setaffinity() on random target threads
 *   policy     target threads to SCHED_FIFO/RR for a few ms and back to
 *              SCHED_OTHER, BATCH or IDLE
 *   taskset    fork + exec of taskset(1) on random targets
 *   cpuset     cgroup v2 cpuset.cpus edits and moves between two groups,
 *              now and then a partition root (sched domains rebuilt);
 *              their cpuset.cpus.preferred{,.ratio}, valid and invalid
 *              values, each checked as it reads back
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
 *              mask) that only it writes, masks and ratios, per thread and
 *              per process: after every write, accepted or not, each
 *              thread's preferred mask and ratio must be exactly what the
 *              model of issue #13 gives (the last written of its own and
 *              its process's request is in force; the mask shows as
 *              request & hard, or the hard mask).
 *   cgowner    a process of its own moved between two cpuset cgroups
 *              whose cpuset.cpus.preferred{,.ratio} (and their parent's)
 *              only it writes, valid and invalid values, plus process
 *              requests: every thread, later ones included, must follow
 *              its process request, else its cgroup's or the nearest
 *              ancestor's preference (Cpus_preferred_source, the mask
 *              and the ratio).
 *
 * Every errno is checked against the documented ones: EINVAL, ESRCH (and
 * ENOENT at open for a thread that is gone).  A string that can never be a
 * valid mask (empty, CPU >= nr_cpu_ids, garbage) must be refused.
 *
 * usage: softaff_stress [-d SECONDS] [-s SEED] [-c CGROUP_A,CGROUP_B]
 *                       [-P PARENT,P0,P1] [-D softaffd] [-v]
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
	X(ratio_writes_ok) X(ratio_writes_einval)		\
	X(cgpref_writes_ok) X(cgpref_writes_einval)		\
	X(cgown_moves) X(cgown_writes) X(checks_cgroup)		\
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
/* /proc/PID/task/TID/status into @buf (STATUS_MAX bytes) */
static int read_task_status(pid_t pid, pid_t tid, char *buf)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	return read_file(path, buf, STATUS_MAX) < 0 ? -1 : 0;
}

static int read_status(pid_t pid, pid_t tid, struct view *v)
{
	char buf[STATUS_MAX], *p;

	if (read_task_status(pid, tid, buf))
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

static bool make_ratio(uint64_t *s, char *buf, size_t len, unsigned int *a,
		       unsigned int *p);

/* A valid or invalid ratio to a random target thread or process. */
static void write_ratio_target(uint64_t *s, pid_t pid)
{
	char path[96], val[64];
	unsigned int a, p;
	bool valid = make_ratio(s, val, sizeof(val), &a, &p);
	int err;

	if (rndn(s, 3))
		snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity_ratio",
			 pid, random_tid(s, pid));
	else
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio", pid);
	err = write_file(path, val, strlen(val));
	switch (err) {
	case 0:
		count(C_ratio_writes_ok);
		if (!valid)
			violation("ratio \"%s\" to %s accepted", val, path);
		break;
	case -EINVAL:
		count(C_ratio_writes_einval);
		if (valid)
			violation("valid ratio \"%s\" to %s refused", val, path);
		break;
	case -ESRCH:
	case -ENOENT:
		count(C_writes_gone);
		break;
	default:
		violation("ratio \"%s\" to %s: unexpected %s", val, path,
			  strerror(-err));
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
		if (rndn(&s, 5) == 0) {
			write_ratio_target(&s, pid);
			continue;
		}
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
 * milliseconds (writes to it are stored meanwhile, and the scheduler must
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

/* cgroup preference files, their own values: "" / mask, "default" / A:P. */
static int cg_read_pref(const char *dir, uint64_t *m)
{
	char path[256], buf[256];

	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred", dir);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return softaff_parse_cpulist64(buf, m);
}

static int cg_read_ratio(const char *dir, char *out, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.ratio", dir);
	if (read_file(path, out, len) < 0)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/*
 * One random write to @dir's cpuset.cpus.preferred or .ratio, valid or
 * not, with its result checked: a valid value is taken and reads back, an
 * invalid one gets EINVAL and changes nothing, a blank line clears the
 * value and a 0-byte write is taken and changes nothing (kernfs does not
 * pass it on).  Only the caller writes
 * these files of @dir.  What @dir now has goes to *pref / *ra:*rp (ra 0:
 * "default").  Returns 0 or -1 (violation).
 */
/*
 * Write @val to a cgroup preference file and count it; a valid value must be
 * taken and an invalid one refused with EINVAL.  Returns nonzero on a
 * violation; *@err is the write's result.
 */
static int cg_pref_write(const char *path, const char *val, bool valid,
			 int *err)
{
	*err = write_file(path, val, strlen(val));
	count(*err ? C_cgpref_writes_einval : C_cgpref_writes_ok);
	if (valid && *err) {
		violation("%s: valid \"%s\" refused: %s", path, val,
			  strerror(-*err));
		return -1;
	}
	if (!valid && *err != -EINVAL) {
		violation("%s: invalid \"%s\": %s, not EINVAL", path, val,
			  *err ? strerror(-*err) : "accepted");
		return -1;
	}
	return 0;
}

static int cg_pref_edit(uint64_t *s, const char *dir, uint64_t *pref,
			unsigned int *ra, unsigned int *rp)
{
	static const char *const bad[] = {
		"zz", "0-", "1-0", "a-b", "-1", "0,,x", "0-3:x", "99999999999",
	};
	char path[256], val[64], rb[64];
	unsigned int r = rndn(s, 100);
	int err;

	if (r < 55) {
		uint64_t m = 0, got = ~0ULL;
		bool valid = true;

		if (r < 35)
			fmt_list(m = random_cpus(s), val, sizeof(val));
		else if (r < 42)
			snprintf(val, sizeof(val), "%s", rndn(s, 2) ? "\n" : " \n");
		else if (r < 45) {
			/* 0 bytes: kernfs takes it and changes nothing */
			val[0] = '\0';
			m = *pref;
		} else if (r < 48)
			snprintf(val, sizeof(val), "%d", ncpus + (int)rndn(s, 60));
		else
			snprintf(val, sizeof(val), "%s",
				 bad[rndn(s, sizeof(bad) / sizeof(*bad))]);
		valid = r < 45;
		snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred", dir);
		if (cg_pref_write(path, val, valid, &err))
			return -1;
		if (!err)
			*pref = m;
		if (cg_read_pref(dir, &got) || got != *pref) {
			violation("%s: after \"%s\" (%s) reads %llx, want %llx",
				  path, val, err ? strerror(-err) : "taken",
				  (unsigned long long)got,
				  (unsigned long long)*pref);
			*pref = got;
			return -1;
		}
		return 0;
	}
	{
		unsigned int a, p;
		bool valid = make_ratio(s, val, sizeof(val), &a, &p);
		char want[32];

		if (!val[0]) {
			/* 0 bytes: kernfs takes it and changes nothing */
			valid = true;
			a = *ra;
			p = *rp;
		}
		snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.ratio", dir);
		if (cg_pref_write(path, val, valid, &err))
			return -1;
		if (!err) {
			*ra = a;
			*rp = p;
		}
		if (*ra)
			snprintf(want, sizeof(want), "%u:%u", *ra, *rp);
		else
			snprintf(want, sizeof(want), "default");
		if (cg_read_ratio(dir, rb, sizeof(rb)) || strcmp(rb, want)) {
			violation("%s: after \"%s\" (%s) reads \"%s\", want \"%s\"",
				  path, val, err ? strerror(-err) : "taken", rb,
				  want);
			if (sscanf(rb, "%u:%u", ra, rp) != 2)
				*ra = 0;
			return -1;
		}
	}
	return 0;
}

static void *cpuset_editor(void *arg)
{
	uint64_t s = seed * 43 + (uintptr_t)arg;
	char path[256], val[64];
	uint64_t pref[2] = { 0, 0 };
	unsigned int ra[2] = { 0, 0 }, rp[2] = { 0, 0 };

	while (!stop) {
		int g = rndn(&s, 2);
		unsigned int r = rndn(&s, 100);
		int err;

		if (r >= 70) {
			/* The groups' preferences (only we write them). */
			cg_pref_edit(&s, cgroups[g], &pref[g], &ra[g], &rp[g]);
		} else if (r < 4) {
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

/*
 * The model of issue #13: a thread's own request and its process's are kept
 * apart, and the one written last is in force (masks and ratios each on
 * their own).  A thread shows request & hard, or its hard mask when there
 * is no request or they are disjoint.
 */
struct owned {
	pid_t tid;
	uint64_t hard;		/* fixed: root cgroup, no other writer */
	uint64_t req;		/* its own last accepted request (0: none) */
	unsigned long seq;	/* when it was written */
	unsigned int ra, rp;	/* its own ratio (ra 0: none) */
	unsigned long rseq;
};

static pid_t owned_pid;
static uint64_t own_proc_req;		/* the process's request (0: none) */
static unsigned long own_proc_seq, own_seq;
static unsigned int own_proc_ra, own_proc_rp;
static unsigned long own_proc_rseq;

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
 * thread spins on CPUs 0-1, so a whole-process request outside 0-1 is
 * stored for both and shows as 0-1 in the second.
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
		 * top cpuset alone on hotplug, and the root cgroup has no
		 * preference.
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
	uint64_t req = o->seq > own_proc_seq ? o->req : own_proc_req;

	return (req & o->hard) ? req & o->hard : o->hard;
}

static int read_ratio(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[96];

	if (tid)
		snprintf(path, sizeof(path),
			 "/proc/%d/task/%d/soft_affinity_ratio", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio",
			 pid);
	if (read_file(path, out, len) < 0)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* "A:P task" -> a, p; "A:P default" -> a = 0; -1 if neither. */
static int parse_ratio(const char *s, unsigned int *a, unsigned int *p)
{
	char src[16];

	if (sscanf(s, "%u:%u %15s", a, p, src) != 3 || *a < 1 || *a > 10000 ||
	    *p < 1 || *p > 10000)
		return -1;
	if (!strcmp(src, "default")) {
		*a = *p = 0;
		return 0;
	}
	return strcmp(src, "task") ? -1 : 0;
}

/* Compare both views of @o with the model; -1 if it does not match. */
static int owner_verify(struct owned *o, const char *what,
			const struct mask_case *c, int err)
{
	uint64_t locked, want = expected(o);
	unsigned int a, p, wa, wp;
	char ratio[64];
	struct view v;

	count(C_checks_owner);
	if (read_soft_list(owned_pid, o->tid, &locked) ||
	    read_status(owned_pid, o->tid, &v) ||
	    read_ratio(owned_pid, o->tid, ratio, sizeof(ratio))) {
		violation("owned task %d vanished", o->tid);
		return -1;
	}
	if (v.hard != o->hard) {
		violation("owned task %d: hard mask %llx changed to %llx under us",
			  o->tid, (unsigned long long)o->hard,
			  (unsigned long long)v.hard);
		o->hard = v.hard;
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
		o->req = locked;
		o->seq = ++own_seq;
		return -1;
	}
	if (o->rseq > own_proc_rseq) {
		wa = o->ra;
		wp = o->rp;
	} else {
		wa = own_proc_ra;
		wp = own_proc_rp;
	}
	/* sysctl_churn changes the default's numbers: only its source counts. */
	if (parse_ratio(ratio, &a, &p) || a != wa || (wa && p != wp)) {
		violation("owned task %d after %s \"%.*s\" (%s): ratio \"%s\", want %u:%u %s",
			  o->tid, what, (int)c->len, c->buf,
			  err ? strerror(-err) : "accepted", ratio, wa, wp,
			  wa ? "task" : "(default)");
		if (parse_ratio(ratio, &a, &p) == 0) {
			o->ra = a;
			o->rp = p;
			o->rseq = ++own_seq;
		}
		return -1;
	}
	return 0;
}

/* A ratio to write: valid ("A:P", "default") or not; *a 0 for "default". */
static bool make_ratio(uint64_t *s, char *buf, size_t len, unsigned int *a,
		       unsigned int *p)
{
	static const char *const bad[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", "a:b", "",
		"\n", "-1:1", "5:4:3", "default5", "1:1 1", "4294967297:1",
	};
	unsigned int r = rndn(s, 100);

	if (r < 60) {
		*a = 1 + rndn(s, 10000);
		*p = 1 + rndn(s, 10000);
		snprintf(buf, len, "%u:%u%s", *a, *p, rndn(s, 2) ? "\n" : "");
		return true;
	}
	if (r < 75) {
		*a = *p = 0;
		snprintf(buf, len, "default%s", rndn(s, 2) ? "\n" : "");
		return true;
	}
	snprintf(buf, len, "%s", bad[rndn(s, sizeof(bad) / sizeof(*bad))]);
	return false;
}

static void *owner(void *arg)
{
	uint64_t s = seed * 67 + (uintptr_t)arg;
	struct owned o[2];
	pid_t tids[4];
	int i, n = 0;

	if (owned_pid <= 0)
		return NULL;
	memset(o, 0, sizeof(o));
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
	if (owner_verify(&o[0], "start", &(struct mask_case){ 0 }, 0) ||
	    owner_verify(&o[1], "start", &(struct mask_case){ 0 }, 0))
		return NULL;

	while (!stop) {
		struct mask_case c;
		int which = rndn(&s, 3), err;
		bool list = rndn(&s, 2), ratio = rndn(&s, 4) == 0;
		char path[96];

		if (ratio) {
			unsigned int a, p;
			bool valid;

			valid = make_ratio(&s, c.buf, sizeof(c.buf), &a, &p);
			c.len = strlen(c.buf);
			if (which < 2)
				snprintf(path, sizeof(path),
					 "/proc/%d/task/%d/soft_affinity_ratio",
					 owned_pid, o[which].tid);
			else
				snprintf(path, sizeof(path),
					 "/proc/%d/soft_affinity_ratio", owned_pid);
			err = write_file(path, c.buf, c.len);
			count(err ? C_owner_writes_rejected : C_owner_writes_ok);
			if (valid && err)
				violation("owned %s: valid \"%.*s\" refused: %s",
					  path, (int)c.len, c.buf, strerror(-err));
			if (!valid && err != -EINVAL)
				violation("owned %s: invalid \"%.*s\": %s, not EINVAL",
					  path, (int)c.len, c.buf,
					  err ? strerror(-err) : "accepted");
			if (!err && valid) {
				own_seq++;
				if (which < 2) {
					o[which].ra = a;
					o[which].rp = p;
					o[which].rseq = own_seq;
				} else {
					own_proc_ra = a;
					own_proc_rp = p;
					own_proc_rseq = own_seq;
				}
			}
			owner_verify(&o[0], "ratio write", &c, err);
			owner_verify(&o[1], "ratio write", &c, err);
			continue;
		}

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
		/* Since #13 a clean mask is stored, within the hard mask or not. */
		if (c.known && err)
			violation("owned %s: valid \"%.*s\" refused: %s", path,
				  (int)c.len, c.buf, strerror(-err));

		if (!err) {
			uint64_t m = c.mask;

			if (!c.known) {
				/*
				 * An accepted odd spelling: take what the
				 * kernel stored, as the written level shows
				 * it (the leader's hard mask is every CPU,
				 * so it shows a process request as it is).
				 */
				pid_t t = which < 2 ? o[which].tid : owned_pid;

				if (read_soft_list(owned_pid, t, &m) || !m)
					violation("owned %d: \"%.*s\" stored %llx",
						  t, (int)c.len, c.buf,
						  (unsigned long long)m);
			}
			own_seq++;
			if (which < 2) {
				o[which].req = m;
				o[which].seq = own_seq;
			} else {
				own_proc_req = m;
				own_proc_seq = own_seq;
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

/* --- the cgroup owner: preferences that come from cgroups ----------------- */

/*
 * A process of its own ("stress-cgown": a sleeping leader and a churn of
 * short-lived threads) that only this actor moves, between two cgroups
 * P0 and P1 under a parent PARENT whose preference files only this actor
 * writes.  After every step every thread of it must show what the model
 * gives: its process request if it has one (source "task"), else its
 * cgroup's own preference or the parent's (source "cgroup"), else none;
 * the mask is that & its hard mask, or the hard mask; the ratio likewise
 * ("A:P task", "A:P cgroup" or "... default").  The hard mask is the
 * cpuset's and changes with hotplug and partitions: it is read with the
 * preferred mask, and a mismatch must persist over 100 ms to count.
 */
static char *pcg[3];		/* parent, P0, P1 */
static pid_t cgown_pid;

static void *cgown_short(void *arg)
{
	sleep_us((long)(uintptr_t)arg);
	return NULL;
}

static pid_t start_cgown(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		uint64_t s = seed * 89 + 1;
		pthread_attr_t attr;
		pthread_t t;

		prctl(PR_SET_NAME, "stress-cgown");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		for (;;) {
			pthread_create(&t, &attr, cgown_short,
				       (void *)(uintptr_t)(20000 + rndn(&s, 100000)));
			sleep_us(10000 + rndn(&s, 30000));
		}
	}
	return pid;
}

struct cgmodel {
	uint64_t pref[3];		/* own cpuset.cpus.preferred (0: none) */
	unsigned int ra[3], rp[3];	/* own ratio (ra 0: default) */
	int where;			/* 1: P0, 2: P1 */
	uint64_t req;			/* process request (0: none) */
	unsigned int pra, prp;		/* process ratio (pra 0: none) */
};

static int read_source(pid_t pid, pid_t tid, char *out, size_t len)
{
	char buf[STATUS_MAX], *p;

	if (read_task_status(pid, tid, buf))
		return -1;
	p = strstr(buf, "\nCpus_preferred_source:\t");
	if (!p)
		return -1;
	snprintf(out, len, "%s", p + 24);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* 1 if thread @tid matches the model, 0 if not (in *why), -1 if gone. */
static int cgown_match(const struct cgmodel *m, pid_t tid, char *why,
		       size_t len)
{
	uint64_t cg = m->pref[m->where] ? m->pref[m->where] : m->pref[0];
	unsigned int cra = m->ra[m->where] ? m->ra[m->where] : m->ra[0];
	unsigned int crp = m->ra[m->where] ? m->rp[m->where] : m->rp[0];
	const char *wsrc = m->req ? "task" : cg ? "cgroup" : "none";
	uint64_t req = m->req ? m->req : cg, want;
	char src[32], ratio[64], wratio[64], rsrc[16];
	struct view a, b;
	unsigned int ga, gp;

	if (read_status(cgown_pid, tid, &a) ||
	    read_source(cgown_pid, tid, src, sizeof(src)) ||
	    read_ratio(cgown_pid, tid, ratio, sizeof(ratio)) ||
	    read_status(cgown_pid, tid, &b))
		return -1;
	if (a.hard != b.hard || a.pref != b.pref) {
		snprintf(why, len, "hard or preferred mask changed while read");
		return 0;
	}
	want = (req & a.hard) ? req & a.hard : a.hard;
	if (m->pra)
		snprintf(wratio, sizeof(wratio), "%u:%u task", m->pra, m->prp);
	else if (cra)
		snprintf(wratio, sizeof(wratio), "%u:%u cgroup", cra, crp);
	else
		snprintf(wratio, sizeof(wratio), "default");
	if (sscanf(ratio, "%u:%u %15s", &ga, &gp, rsrc) != 3)
		rsrc[0] = '\0';
	if (a.pref != want || strcmp(src, wsrc) ||
	    (m->pra || cra ? strcmp(ratio, wratio) : strcmp(rsrc, "default"))) {
		snprintf(why, len,
			 "preferred %llx source %s ratio \"%s\"; want %llx %s \"%s\" (hard %llx, in P%d)",
			 (unsigned long long)a.pref, src, ratio,
			 (unsigned long long)want, wsrc, wratio,
			 (unsigned long long)a.hard, m->where - 1);
		return 0;
	}
	return 1;
}

static void cgown_verify(const struct cgmodel *m, const char *after)
{
	pid_t tids[MAX_TIDS];
	int n = list_tids(cgown_pid, tids, MAX_TIDS), j, i;

	for (j = 0; j < n && !stop; j++) {
		char why[256];
		int r = 0;

		count(C_checks_cgroup);
		for (i = 0; i < 10; i++) {
			r = cgown_match(m, tids[j], why, sizeof(why));
			if (r)
				break;
			sleep_us(10000);
		}
		if (r == 0)
			violation("cgroup-owned %d/%d after %s: %s", cgown_pid,
				  tids[j], after, why);
		else if (i)
			count(C_transients);
	}
}

static int cgown_move(int where)
{
	char path[256], val[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", pcg[where]);
	snprintf(val, sizeof(val), "%d", cgown_pid);
	return write_file(path, val, strlen(val));
}

static void *cgowner(void *arg)
{
	uint64_t s = seed * 97 + (uintptr_t)arg;
	struct cgmodel m;
	char what[96];

	memset(&m, 0, sizeof(m));
	if (cgown_pid <= 0 || cgown_move(1)) {
		violation("cgroup-owned process not started or not moved to %s",
			  pcg[1]);
		return NULL;
	}
	m.where = 1;
	cgown_verify(&m, "start in P0");
	while (!stop) {
		unsigned int r = rndn(&s, 100);

		if (r < 45) {
			int k = rndn(&s, 3);

			cg_pref_edit(&s, pcg[k], &m.pref[k], &m.ra[k], &m.rp[k]);
			snprintf(what, sizeof(what), "a preference edit of %s",
				 k ? (k == 1 ? "P0" : "P1") : "the parent");
		} else if (r < 65) {
			int to = m.where == 1 ? 2 : 1;
			int err = cgown_move(to);

			if (err) {
				violation("move of the cgroup-owned process to %s: %s",
					  pcg[to], strerror(-err));
				continue;
			}
			count(C_cgown_moves);
			m.where = to;
			snprintf(what, sizeof(what), "a move to P%d", to - 1);
		} else if (r < 80) {
			/* Its process request: CPU 0 and more, or cleared. */
			bool clear = rndn(&s, 3) == 0;
			uint64_t req = clear ? all_mask : 1 | random_cpus(&s);
			char path[64], val[160], src[32];
			struct view before, after;
			int err;

			fmt_list(req, val, sizeof(val));
			snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list",
				 cgown_pid);
			if (read_status(cgown_pid, cgown_pid, &before))
				break;
			err = write_file(path, val, strlen(val));
			count(C_cgown_writes);
			if (err) {
				violation("cgroup-owned: %s \"%s\": %s", path, val,
					  strerror(-err));
				continue;
			}
			if (read_status(cgown_pid, cgown_pid, &after) ||
			    read_source(cgown_pid, cgown_pid, src, sizeof(src)))
				break;
			/* A mask covering the hard mask clears the request. */
			if (clear || strcmp(src, "task")) {
				if (!clear && (before.hard & ~req) &&
				    (after.hard & ~req))
					violation("cgroup-owned: \"%s\" under hard %llx not stored (source %s)",
						  val, (unsigned long long)after.hard,
						  src);
				m.req = 0;
			} else {
				m.req = req;
			}
			snprintf(what, sizeof(what), "process request \"%s\"", val);
		} else if (r < 92) {
			char path[64], val[64];
			unsigned int a, p;
			int err;

			if (!make_ratio(&s, val, sizeof(val), &a, &p))
				snprintf(val, sizeof(val), "default");
			if (!strncmp(val, "default", 7))
				a = p = 0;
			snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio",
				 cgown_pid);
			err = write_file(path, val, strlen(val));
			count(C_cgown_writes);
			if (err) {
				violation("cgroup-owned: %s \"%s\": %s", path, val,
					  strerror(-err));
				continue;
			}
			m.pra = a;
			m.prp = p;
			snprintf(what, sizeof(what), "process ratio \"%.*s\"",
				 (int)strcspn(val, "\n"), val);
		} else {
			sleep_us(rndn(&s, 20000));
			snprintf(what, sizeof(what), "a pause (threads come and go)");
		}
		cgown_verify(&m, what);
	}
	return NULL;
}

/* --- main ---------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: softaff_stress [-d SECONDS] [-s SEED] [-t TARGETS]\n"
		"                      [-c CGROUP_A,CGROUP_B] [-P PARENT,P0,P1] [-D] [-v]\n"
		"  -c  cpuset cgroups to edit (cpus, partitions, preferences) and move targets between\n"
		"  -P  a cpuset cgroup and two children whose preferences and members only the\n"
		"      cgroup owner changes (exact model of cgroup preferences)\n"
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
		{ cgowner, "cgowner", 1 },
	};
	pthread_t threads[32];
	int nthreads = 0;
	double start, last;
	char *c;

	seed = (unsigned long)time(NULL) ^ (unsigned long)getpid();
	while ((opt = getopt(argc, argv, "d:s:t:c:P:Dv")) != -1) {
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
		case 'P':
			pcg[0] = strdup(optarg);
			pcg[1] = strchr(pcg[0], ',');
			if (!pcg[1])
				usage();
			*pcg[1]++ = '\0';
			pcg[2] = strchr(pcg[1], ',');
			if (!pcg[2])
				usage();
			*pcg[2]++ = '\0';
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
	if (pcg[0])
		cgown_pid = start_cgown();
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
		if (actors[i].fn == cgowner && !pcg[0])
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
	if (cgown_pid > 0)
		kill(cgown_pid, SIGKILL);
	while (wait(NULL) > 0)
		;

	say("elapsed %.0f\n", now() - start);
	for (i = 0; i < C_NR; i++)
		say("%s %lu\n", counter_names[i], counters[i]);
	return counters[C_violations] ? 1 : 0;
}
