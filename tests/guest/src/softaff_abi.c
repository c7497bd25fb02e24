// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_abi: TAP tests for the soft affinity procfs and sysctl ABI.
 *
 *   /proc/PID/soft_affinity{,_list}            the process-level request
 *                                              (all threads); reads the leader
 *   /proc/PID/task/TID/soft_affinity{,_list}   that thread's own request
 *   /proc/PID/status  Cpus_preferred:, Cpus_preferred_list:,
 *                     Cpus_preferred_source:
 *   /proc/sys/kernel/sched_{preferred,allowed}
 *
 * The model (kernel issue #13): of a thread's own request and its
 * process's, the one written last is in force; a read shows the effective
 * mask, request & hard, or the hard mask when there is no request, when
 * they are disjoint or when the request covers the hard mask (a write of a
 * mask that covers the target's hard mask clears the request at that
 * level).  A request outside the hard mask, of offline CPUs only, or to a
 * SCHED_FIFO/RR task is stored, not refused.  The ratio files and the
 * cgroup files have their own test, 36-preference.t.
 *
 * Runs as root in the guest (CPUs 0-3 at least for most cases).  Every
 * error case checks the errno and that the mask did not change.
 *
 * usage: softaff_abi [--print-self]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PF_NO_SETAFFINITY 0x04000000

static int test_nr;
static int failures;

static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++test_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

static void skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++test_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Read a small file into buf, without the trailing newline; -errno. */
static int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

/* Write len bytes in one write(2); 0 or -errno. */
static int write_buf(const char *path, const char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

static int write_str(const char *path, const char *s)
{
	return write_buf(path, s, strlen(s));
}

/*
 * Parse a kernel hex mask ("f", "00000000,0000000f") into a 64-bit set;
 * NR_CPUS is 64 in the test kernel.  Returns -1 on a parse error.
 */
static int parse_hex(const char *s, uint64_t *mask)
{
	uint64_t m = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		int v;

		if (*s == ',')
			continue;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else
			return -1;
		m = (m << 4) | (uint64_t)v;
	}
	*mask = m;
	return 0;
}

static int parse_list(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	char *end;

	if (!*s) {
		*mask = 0;
		return 0;
	}
	for (;;) {
		unsigned long a, b;

		a = strtoul(s, &end, 10);
		if (end == s)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			b = strtoul(s, &end, 10);
			if (end == s)
				return -1;
			s = end;
		}
		if (a > b || b > 63)
			return -1;
		for (; a <= b; a++)
			m |= 1ULL << a;
		if (!*s)
			break;
		if (*s != ',')
			return -1;
		s++;
	}
	*mask = m;
	return 0;
}

/* /proc/PID/task/TID/FILE for tid > 0, else /proc/PID/FILE */
static const char *soft_path(char *path, size_t len, pid_t pid, pid_t tid,
			     const char *file)
{
	if (tid > 0)
		snprintf(path, len, "/proc/%d/task/%d/%s", pid, tid, file);
	else
		snprintf(path, len, "/proc/%d/%s", pid, file);
	return path;
}

/* The preferred mask of a task, from soft_affinity (tid <= 0: the pid file). */
static int get_soft(pid_t pid, pid_t tid, uint64_t *mask)
{
	char path[96], buf[256];
	int err;

	soft_path(path, sizeof(path), pid, tid, "soft_affinity");
	err = read_str(path, buf, sizeof(buf));
	if (err)
		return err;
	return parse_hex(buf, mask) ? -EBADMSG : 0;
}

static int get_soft_list(pid_t pid, pid_t tid, uint64_t *mask)
{
	char path[96], buf[256];
	int err;

	soft_path(path, sizeof(path), pid, tid, "soft_affinity_list");
	err = read_str(path, buf, sizeof(buf));
	if (err)
		return err;
	return parse_list(buf, mask) ? -EBADMSG : 0;
}

static uint64_t soft_of(pid_t pid, pid_t tid)
{
	uint64_t m;

	if (get_soft(pid, tid, &m))
		return ~0ULL;
	return m;
}

static int set_soft(pid_t pid, pid_t tid, const char *s)
{
	char path[96];

	soft_path(path, sizeof(path), pid, tid, "soft_affinity");
	return write_str(path, s);
}

static int set_soft_list(pid_t pid, pid_t tid, const char *s)
{
	char path[96];

	soft_path(path, sizeof(path), pid, tid, "soft_affinity_list");
	return write_str(path, s);
}

static int set_soft_mask(pid_t pid, pid_t tid, uint64_t m)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llx\n", (unsigned long long)m);
	return set_soft(pid, tid, buf);
}

/* A field of /proc/PID/task/TID/status, e.g. "Cpus_allowed". */
static int status_field(pid_t pid, pid_t tid, const char *field, char *out,
			size_t len)
{
	char path[96], line[512];
	size_t flen = strlen(field);
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) || line[flen] != ':')
			continue;
		snprintf(out, len, "%s", line + flen + 1 + strspn(line + flen + 1, " \t"));
		out[strcspn(out, "\n")] = '\0';
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static uint64_t status_mask(pid_t pid, pid_t tid, const char *field)
{
	char buf[256];
	uint64_t m;

	if (status_field(pid, tid, field, buf, sizeof(buf)) ||
	    parse_hex(buf, &m))
		return ~0ULL;
	return m;
}

static uint64_t hard_of(pid_t tid)
{
	cpu_set_t set;
	uint64_t m = 0;
	int i;

	if (sched_getaffinity(tid, sizeof(set), &set))
		return ~0ULL;
	for (i = 0; i < 64; i++)
		if (CPU_ISSET(i, &set))
			m |= 1ULL << i;
	return m;
}

static int set_hard(pid_t tid, uint64_t m)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < 64; i++)
		if (m & (1ULL << i))
			CPU_SET(i, &set);
	return sched_setaffinity(tid, sizeof(set), &set) ? -errno : 0;
}

/*
 * The effective preferred mask the kernel must show for a request @req
 * (0: none) under the hard mask @hard: their intersection, or the hard
 * mask when there is no request, when they are disjoint or when the
 * request covers the whole hard mask.
 */
static uint64_t eff(uint64_t req, uint64_t hard)
{
	uint64_t m = req & hard;

	return m ? m : hard;
}

/* Cpus_preferred_source of a task: "task", "cgroup", "none" ("?" if absent). */
static const char *source_of(pid_t pid, pid_t tid)
{
	static char buf[4][32];
	static int slot;
	char *out = buf[slot++ % 4];

	if (status_field(pid, tid, "Cpus_preferred_source", out, 32))
		snprintf(out, 32, "?");
	return out;
}

/* soft_affinity_ratio of a thread (tid > 0) or the process: "A:P SOURCE". */
static int get_ratio(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[96];

	soft_path(path, sizeof(path), pid, tid, "soft_affinity_ratio");
	return read_str(path, out, len);
}

static int set_ratio(pid_t pid, pid_t tid, const char *s)
{
	char path[96];

	soft_path(path, sizeof(path), pid, tid, "soft_affinity_ratio");
	return write_str(path, s);
}

static int set_policy(pid_t tid, int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(tid, policy, &sp) ? -errno : 0;
}

static const char *errname(int err)
{
	static char buf[32];

	switch (-err) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ERANGE: return "ERANGE";
	case EOVERFLOW: return "EOVERFLOW";
	}
	snprintf(buf, sizeof(buf), "%d", err);
	return buf;
}

static int nr_cpu_ids;
static uint64_t all_cpus;	/* CPUs 0..nr_cpu_ids-1 */
static pid_t self;

/* ------------------------------------------------------------------ */
/* Threads that wait until told to exit. */

struct parked {
	pthread_t thr;
	pid_t tid;
};

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int park_release;

static void *park_fn(void *arg)
{
	struct parked *p = arg;

	__atomic_store_n(&p->tid, gettid_(), __ATOMIC_RELEASE);
	pthread_mutex_lock(&park_lock);
	while (!park_release)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static int park_start(struct parked *p, int n)
{
	int i;

	park_release = 0;
	for (i = 0; i < n; i++) {
		p[i].tid = 0;
		if (pthread_create(&p[i].thr, NULL, park_fn, &p[i]))
			return -1;
	}
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&p[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
	return 0;
}

static void park_stop(struct parked *p, int n)
{
	int i;

	pthread_mutex_lock(&park_lock);
	park_release = 1;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	for (i = 0; i < n; i++)
		pthread_join(p[i].thr, NULL);
}

/* Reset this thread (or all parked ones) to the default: whole hard mask. */
static void reset_self(void)
{
	set_policy(0, SCHED_OTHER, 0);
	set_hard(0, all_cpus);
	set_soft_mask(self, gettid_(), all_cpus);
}

/* ------------------------------------------------------------------ */

static void test_files_and_defaults(void)
{
	char buf[256], allowed[256], path[96];
	pid_t tid = gettid_();
	uint64_t m;
	int err;

	err = read_str("/proc/self/soft_affinity", buf, sizeof(buf));
	ok(!err, "/proc/self/soft_affinity is readable (%s)", errname(err));
	snprintf(path, sizeof(path), "/proc/self/task/%d/soft_affinity_list", tid);
	err = read_str(path, buf, sizeof(buf));
	ok(!err, "/proc/self/task/TID/soft_affinity_list is readable (%s)",
	   errname(err));

	status_field(self, tid, "Cpus_allowed", allowed, sizeof(allowed));
	err = read_str("/proc/self/soft_affinity", buf, sizeof(buf));
	ok(!err && !strcmp(buf, allowed),
	   "default soft_affinity \"%s\" equals Cpus_allowed \"%s\"", buf,
	   allowed);
	err = status_field(self, tid, "Cpus_preferred", buf, sizeof(buf));
	ok(!err && !strcmp(buf, allowed),
	   "status has Cpus_preferred \"%s\" equal to Cpus_allowed", buf);
	status_field(self, tid, "Cpus_allowed_list", allowed, sizeof(allowed));
	err = status_field(self, tid, "Cpus_preferred_list", buf, sizeof(buf));
	ok(!err && !strcmp(buf, allowed),
	   "status has Cpus_preferred_list \"%s\" equal to Cpus_allowed_list",
	   buf);

	err = get_soft_list(self, tid, &m);
	ok(!err && m == hard_of(0), "default soft_affinity_list is the hard mask");
	ok(!strcmp(source_of(self, tid), "none"),
	   "status has Cpus_preferred_source \"%s\", want \"none\"",
	   source_of(self, tid));
	{
		char st[4096], *a, *b;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", self, tid);
		read_str(path, st, sizeof(st));
		a = strstr(st, "\nCpus_preferred_list:");
		b = strstr(st, "\nCpus_preferred_source:");
		ok(a && b && b > a && !memchr(a + 1, '\n', (size_t)(b - a - 1)),
		   "Cpus_preferred_source: is the line after Cpus_preferred_list:");
	}

	snprintf(path, sizeof(path), "/proc/%d/soft_affinity", self);
	{
		struct stat st;

		ok(!stat(path, &st) && (st.st_mode & 0777) == 0666,
		   "soft_affinity is mode 0666 (%o)", st.st_mode & 0777);
	}
}

static void test_roundtrip(void)
{
	pid_t tid = gettid_();
	char path[96], buf[256], buf2[256];
	uint64_t m;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity", self, tid);

	err = set_soft(self, tid, "3\n");
	read_str(path, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "3"), "write \"3\" reads back \"%s\" (%s)", buf,
	   errname(err));
	ok(get_soft_list(self, tid, &m) == 0 && m == 0x3,
	   "soft_affinity_list shows 0-1");
	ok(status_mask(self, tid, "Cpus_preferred") == 0x3,
	   "Cpus_preferred in status follows");
	ok(!strcmp(source_of(self, tid), "task"),
	   "Cpus_preferred_source: task (%s)", source_of(self, tid));

	/* What is read can be written back as-is. */
	err = write_str(path, buf);
	read_str(path, buf2, sizeof(buf2));
	ok(!err && !strcmp(buf, buf2), "hex read-back \"%s\" writes back (%s)",
	   buf2, errname(err));

	err = set_soft(self, tid, "5");		/* no newline */
	ok(!err && soft_of(self, tid) == 0x5, "write \"5\" without newline");

	err = set_soft_list(self, tid, "0,2-3\n");
	ok(!err && soft_of(self, tid) == 0xd,
	   "list write \"0,2-3\" gives hex d (%llx, %s)",
	   (unsigned long long)soft_of(self, tid), errname(err));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity_list",
		 self, tid);
	read_str(path, buf, sizeof(buf));
	ok(!strcmp(buf, "0,2-3"), "list reads back \"%s\"", buf);
	err = write_str(path, buf);
	ok(!err && soft_of(self, tid) == 0xd, "list read-back writes back");

	err = set_soft_list(self, tid, "1");
	ok(!err && soft_of(self, tid) == 0x2, "list \"1\" is CPU 1, not a mask");
	err = set_soft(self, tid, "1");
	ok(!err && soft_of(self, tid) == 0x1, "hex \"1\" is CPU 0");

	/* Leading zeros. */
	err = set_soft(self, tid, "00000006");
	ok(!err && soft_of(self, tid) == 0x6, "hex with leading zeros (%s)",
	   errname(err));

	/* Whole hard mask: soft affinity off, preferred == Cpus_allowed. */
	err = set_soft_mask(self, tid, all_cpus);
	ok(!err && soft_of(self, tid) == hard_of(0),
	   "writing the whole hard mask turns it off");
	ok(!strcmp(source_of(self, tid), "none"),
	   "... and Cpus_preferred_source is none again (%s)",
	   source_of(self, tid));
	reset_self();
}

static void check_einval(pid_t tid, const char *what, const char *buf,
			 size_t len, bool list)
{
	char path[96];
	uint64_t before = soft_of(self, tid), after;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity%s", self,
		 tid, list ? "_list" : "");
	err = write_buf(path, buf, len);
	after = soft_of(self, tid);
	ok(err == -EINVAL && before == after,
	   "%s: %s, mask unchanged (%llx -> %llx)", what, errname(err),
	   (unsigned long long)before, (unsigned long long)after);
}

static void test_errors(void)
{
	pid_t tid = gettid_();
	char buf[64], *big;
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);

	set_soft(self, tid, "6");	/* a non-default mask to keep */

	check_einval(tid, "empty mask \"0\"", "0\n", 2, false);
	check_einval(tid, "only a newline", "\n", 1, false);
	check_einval(tid, "a 0-byte write", "", 0, false);
	check_einval(tid, "a 0-byte write to the list file", "", 0, true);
	check_einval(tid, "empty list", "\n", 1, true);
	check_einval(tid, "garbage \"zz\"", "zz\n", 3, false);
	check_einval(tid, "garbage list \"a-b\"", "a-b\n", 4, true);
	check_einval(tid, "list \"1-0\"", "1-0\n", 4, true);
	check_einval(tid, "hex with a list \"0-1\"", "0-1\n", 4, false);

	snprintf(buf, sizeof(buf), "%llx\n", 1ULL << nr_cpu_ids);
	check_einval(tid, "hex CPU == nr_cpu_ids", buf, strlen(buf), false);
	snprintf(buf, sizeof(buf), "%d\n", nr_cpu_ids);
	check_einval(tid, "list CPU == nr_cpu_ids", buf, strlen(buf), true);
	snprintf(buf, sizeof(buf), "1,%d\n", nr_cpu_ids + 10);
	check_einval(tid, "list with a CPU > nr_cpu_ids", buf, strlen(buf), true);
	check_einval(tid, "hex wider than NR_CPUS",
		     "1,00000000,00000000,00000001\n", 29, false);

	big = malloc(pagesz + 2);
	memset(big, '0', pagesz + 1);
	big[pagesz] = '1';
	big[pagesz + 1] = '\0';
	check_einval(tid, "write larger than a page", big, pagesz + 1, false);
	/* A list that would be valid but for its length. */
	memset(big, ',', pagesz + 1);
	big[pagesz] = '1';
	check_einval(tid, "list larger than a page", big, pagesz + 1, true);
	free(big);

	reset_self();
}

/*
 * Accepted since #13: a request outside the hard mask is stored; the
 * thread falls back to its hard mask and gets the request when the hard
 * mask grows again.
 */
static void test_outside_hard(void)
{
	pid_t tid = gettid_();
	uint64_t m;
	int err;

	if (set_hard(0, 0x3)) {
		skip("sched_setaffinity failed", "outside the hard mask");
		return;
	}
	err = set_soft(self, tid, "4\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x3,
	   "hard 0-1, request CPU 2 (disjoint): accepted (%s), reads the hard mask (%llx)",
	   errname(err), (unsigned long long)m);
	ok(!strcmp(source_of(self, tid), "task"),
	   "... Cpus_preferred_source: task (%s)", source_of(self, tid));
	set_hard(0, all_cpus);
	m = soft_of(self, tid);
	ok(m == 0x4, "hard mask 0-3 again: the stored request 2 is in effect (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x3);
	err = set_soft(self, tid, "6\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x2,
	   "hard 0-1, request 1-2 (partly outside): accepted (%s), reads 1 (%llx)",
	   errname(err), (unsigned long long)m);
	err = set_soft_list(self, tid, "1-3\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x2, "list 1-3 under hard 0-1: accepted (%s), reads 1 (%llx)",
	   errname(err), (unsigned long long)m);
	set_hard(0, 0xe);
	m = soft_of(self, tid);
	ok(m == 0xe, "hard 1-3: the request 1-3 covers it, reads 1-3 (%llx)",
	   (unsigned long long)m);
	set_hard(0, all_cpus);
	m = soft_of(self, tid);
	ok(m == 0xe, "hard 0-3: request 1-3 in effect (%llx)",
	   (unsigned long long)m);
	ok(status_mask(self, tid, "Cpus_preferred") == 0xe,
	   "Cpus_preferred agrees");
	reset_self();
}

/* A kernel thread bound with kthread_bind(): PF_NO_SETAFFINITY. */
static void test_kthread(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && (de = readdir(d))) {
		char path[300], buf[1024], *p;
		unsigned long flags = 0;
		int i;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_str(path, buf, sizeof(buf)))
			continue;
		/* Fields after the last ')': state ppid pgrp session tty tpgid flags */
		p = strrchr(buf, ')');
		if (!p)
			continue;
		p++;
		for (i = 0; i < 6 && p; i++)
			p = strchr(p + 1, ' ');
		if (!p)
			continue;
		flags = strtoul(p + 1, NULL, 10);
		if ((flags & 0x00200000 /* PF_KTHREAD */) &&
		    (flags & PF_NO_SETAFFINITY)) {
			found = atoi(de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	if (!found) {
		skip("no PF_NO_SETAFFINITY kthread found", "kthread EINVAL");
		return;
	}

	{
		char allowed[256], path[64];
		uint64_t before = soft_of(found, 0), after;
		int err;

		status_field(found, found, "Cpus_allowed", allowed,
			     sizeof(allowed));
		snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity",
			 found, found);
		err = write_str(path, allowed);
		after = soft_of(found, 0);
		ok(err == -EINVAL && before == after,
		   "PF_NO_SETAFFINITY kthread %d: %s, mask unchanged", found,
		   errname(err));
	}
}

static void test_policies(void)
{
	pid_t tid = gettid_();
	uint64_t m;
	int err;

	set_soft(self, tid, "2");

	err = set_policy(0, SCHED_FIFO, 1);
	if (err) {
		skip("cannot switch to SCHED_FIFO", "SCHED_FIFO cases");
		return;
	}
	ok(soft_of(self, tid) == 0x2, "mask kept after switching to SCHED_FIFO");
	/* Stored while real-time, unused until fair-class again (#13). */
	err = set_soft(self, tid, "1\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x1, "write while SCHED_FIFO: accepted (%s), stored (%llx)",
	   errname(err), (unsigned long long)m);
	err = set_soft_list(self, tid, "3\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x8, "list write while SCHED_FIFO: accepted (%s), stored (%llx)",
	   errname(err), (unsigned long long)m);
	check_einval(tid, "empty mask while SCHED_FIFO", "0\n", 2, false);
	set_policy(0, SCHED_RR, 1);
	err = set_soft(self, tid, "2\n");
	m = soft_of(self, tid);
	ok(!err && m == 0x2, "write while SCHED_RR: accepted (%s), stored (%llx)",
	   errname(err), (unsigned long long)m);
	set_policy(0, SCHED_OTHER, 0);
	m = soft_of(self, tid);
	ok(m == 0x2, "the request made while SCHED_RR is in effect under SCHED_OTHER (%llx)",
	   (unsigned long long)m);
	ok(status_mask(self, tid, "Cpus_preferred") == 0x2,
	   "Cpus_preferred kept across SCHED_FIFO/RR");
	err = set_soft(self, tid, "1");
	ok(!err && soft_of(self, tid) == 0x1, "writable under SCHED_OTHER");

	err = set_policy(0, SCHED_BATCH, 0);
	err = err ? err : set_soft(self, tid, "4");
	ok(!err && soft_of(self, tid) == 0x4, "SCHED_BATCH accepts a mask (%s)",
	   errname(err));
	err = set_policy(0, SCHED_IDLE, 0);
	err = err ? err : set_soft(self, tid, "8");
	ok(!err && soft_of(self, tid) == 0x8, "SCHED_IDLE accepts a mask (%s)",
	   errname(err));
	reset_self();
}

/* ESRCH: a file kept open after its thread exited. */
static void test_esrch(void)
{
	struct parked p[1];
	char path[96];
	ssize_t n = -1;
	int fd;

	if (park_start(p, 1)) {
		ok(false, "start a thread");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity", self,
		 p[0].tid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	park_stop(p, 1);
	/*
	 * pthread_join() returns when the kernel clears the tid in
	 * mm_release(), before the thread is reaped: wait for its directory
	 * to go away.
	 */
	snprintf(path, sizeof(path), "/proc/%d/task/%d", self, p[0].tid);
	for (int i = 0; i < 500 && access(path, F_OK) == 0; i++)
		usleep(10000);
	if (fd >= 0) {
		errno = 0;
		n = write(fd, "1\n", 2);
	}
	ok(fd >= 0 && n < 0 && errno == ESRCH,
	   "write to an exited thread through an open fd: %s",
	   n < 0 ? errname(-errno) : "succeeded");
	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------------ */
/* Permissions: run in a child that drops to nobody. */

static void test_perm(void)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	int pfd[2], status;
	char res[512];
	ssize_t n;
	pid_t pid;
	uint64_t root_before = soft_of(1, 0), self_before = soft_of(self, 0);

	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		char path[96];
		int e1, e2, e3, e4, e5, e6, e7;
		uint64_t m = 0;

		close(pfd[0]);
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
		    setresuid(uid, uid, uid))
			_exit(3);
		/* Against root's tasks: pid 1 and our parent. */
		e1 = set_soft(1, 0, "1\n");
		snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity",
			 getppid(), getppid());
		e2 = write_str(path, "1\n");
		e3 = set_soft_list(getppid(), 0, "0\n");
		/* Reading is allowed. */
		e4 = get_soft(1, 0, &m);
		/* Own task and process. */
		e5 = set_soft(getpid(), gettid_(), "2\n");
		e6 = set_soft(getpid(), 0, "3\n");
		e7 = set_ratio(getppid(), 0, "5:4\n");
		dprintf(pfd[1], "%d %d %d %d %d %d %llx %llx %d\n", e1, e2, e3, e4,
			e5, e6, (unsigned long long)soft_of(getpid(), 0),
			(unsigned long long)m, e7);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], res, sizeof(res) - 1);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (n <= 0) {
		ok(false, "unprivileged child reported results (status %d)",
		   status);
		return;
	}
	res[n] = '\0';
	{
		int e1, e2, e3, e4, e5, e6, e7;
		unsigned long long own, m;
		char ratio[64];

		if (sscanf(res, "%d %d %d %d %d %d %llx %llx %d", &e1, &e2, &e3,
			   &e4, &e5, &e6, &own, &m, &e7) != 9) {
			ok(false, "unprivileged child output \"%s\"", res);
			return;
		}
		ok(e1 == -EPERM, "nobody writing pid 1: %s", errname(e1));
		ok(e2 == -EPERM, "nobody writing a root thread: %s",
		   errname(e2));
		ok(e3 == -EPERM, "nobody writing a root process list: %s",
		   errname(e3));
		ok(soft_of(1, 0) == root_before && soft_of(self, 0) == self_before,
		   "root's masks unchanged");
		ok(e4 == 0 && m == root_before,
		   "nobody can read root's mask (%s)", errname(e4));
		ok(e5 == 0, "nobody writing its own thread: %s", errname(e5));
		ok(e6 == 0 && own == 0x3, "nobody writing its own process: %s",
		   errname(e6));
		get_ratio(self, 0, ratio, sizeof(ratio));
		ok(e7 == -EPERM && !strstr(ratio, "task"),
		   "nobody writing a root process's soft_affinity_ratio: %s (\"%s\")",
		   errname(e7), ratio);
	}
}

/* ------------------------------------------------------------------ */

#define NTHREADS 16

static bool all_threads_are(struct parked *p, int n, uint64_t m, pid_t skip_tid)
{
	int i;

	for (i = 0; i < n; i++) {
		if (p[i].tid == skip_tid)
			continue;
		if (soft_of(self, p[i].tid) != m)
			return false;
	}
	return true;
}

static void test_process_vs_thread(void)
{
	struct parked p[NTHREADS];
	pid_t me = gettid_();
	uint64_t m;
	int err;

	if (park_start(p, NTHREADS)) {
		ok(false, "start %d threads", NTHREADS);
		return;
	}

	err = set_soft(self, p[5].tid, "4\n");
	ok(!err && soft_of(self, p[5].tid) == 0x4,
	   "task/TID write sets that thread");
	ok(all_threads_are(p, NTHREADS, all_cpus, p[5].tid) &&
	   soft_of(self, me) == all_cpus,
	   "... and no other thread");
	ok(soft_of(self, 0) == all_cpus, "/proc/PID shows the leader's mask");

	err = set_soft(self, 0, "3\n");
	ok(!err && all_threads_are(p, NTHREADS, 0x3, 0) &&
	   soft_of(self, me) == 0x3,
	   "/proc/PID write sets all %d threads (%s)", NTHREADS + 1,
	   errname(err));
	ok(soft_of(self, 0) == 0x3, "/proc/PID reads it back");

	err = set_soft_list(self, 0, "2-3\n");
	ok(!err && all_threads_are(p, NTHREADS, 0xc, 0) &&
	   soft_of(self, me) == 0xc, "/proc/PID/soft_affinity_list sets all");

	/* Leader vs a thread: /proc/PID reads the leader. */
	set_soft(self, me, "1");
	set_soft(self, p[0].tid, "2");
	ok(soft_of(self, 0) == 0x1 && get_soft_list(self, 0, &m) == 0 &&
	   m == 0x1, "/proc/PID{,_list} read the leader, not thread 0");
	ok(all_threads_are(p, NTHREADS, 0xc, p[0].tid) &&
	   soft_of(self, p[0].tid) == 0x2,
	   "a thread's own write, made after the process's, wins for that thread only");

	/* Last written wins: the process request overrides earlier thread writes. */
	err = set_soft(self, 0, "3\n");
	ok(!err && all_threads_are(p, NTHREADS, 0x3, 0) &&
	   soft_of(self, me) == 0x3,
	   "a process write overrides the threads' earlier own writes (%s)",
	   errname(err));
	ok(!strcmp(source_of(self, p[0].tid), "task") &&
	   !strcmp(source_of(self, me), "task"),
	   "Cpus_preferred_source: task (%s, %s)", source_of(self, p[0].tid),
	   source_of(self, me));

	/* A thread clears its own request: the hard mask, not the process's. */
	err = set_soft_mask(self, p[1].tid, all_cpus);
	ok(!err && soft_of(self, p[1].tid) == all_cpus &&
	   !strcmp(source_of(self, p[1].tid), "none") &&
	   all_threads_are(p, NTHREADS, 0x3, p[1].tid),
	   "a thread writing its whole hard mask after the process write: that thread has none (%llx, %s), the others keep 0-1",
	   (unsigned long long)soft_of(self, p[1].tid),
	   source_of(self, p[1].tid));

	/* The process clears its request, written after a thread's own. */
	set_soft(self, p[2].tid, "2");
	err = set_soft_mask(self, 0, all_cpus);
	ok(!err && all_threads_are(p, NTHREADS, all_cpus, 0) &&
	   soft_of(self, me) == all_cpus &&
	   !strcmp(source_of(self, p[2].tid), "none"),
	   "a process write of the whole hard mask clears every thread, also one that wrote its own before (%llx, %s)",
	   (unsigned long long)soft_of(self, p[2].tid),
	   source_of(self, p[2].tid));

	/* One thread's hard mask excludes the request: stored, it falls back. */
	set_soft(self, 0, "3");
	set_hard(p[9].tid, 0xc);	/* its preferred mask falls back to c */
	err = set_soft(self, 0, "1\n");
	ok(!err, "process write with one thread's hard mask disjoint: accepted (%s)",
	   errname(err));
	ok(all_threads_are(p, NTHREADS, 0x1, p[9].tid) &&
	   soft_of(self, me) == 0x1 && soft_of(self, p[9].tid) == 0xc,
	   "... every thread prefers 0, the disjoint one its hard mask (%llx)",
	   (unsigned long long)soft_of(self, p[9].tid));
	set_hard(p[9].tid, all_cpus);
	ok(soft_of(self, p[9].tid) == 0x1,
	   "the disjoint thread gets the process request on re-expand (%llx)",
	   (unsigned long long)soft_of(self, p[9].tid));

	/* One SCHED_FIFO thread: stored for it too. */
	if (set_policy(p[12].tid, SCHED_FIFO, 1) == 0) {
		err = set_soft(self, 0, "4\n");
		ok(!err && all_threads_are(p, NTHREADS, 0x4, 0) &&
		   soft_of(self, me) == 0x4,
		   "process write with one SCHED_FIFO thread: accepted (%s), every thread has it",
		   errname(err));
		set_policy(p[12].tid, SCHED_OTHER, 0);
		ok(soft_of(self, p[12].tid) == 0x4,
		   "the FIFO thread back to SCHED_OTHER keeps it");
	} else {
		skip("SCHED_FIFO not available", "process write, one FIFO thread");
	}

	park_stop(p, NTHREADS);
	reset_self();
}

/* Threads created while /proc/PID/soft_affinity is written must not escape. */
static volatile int spawn_stop;
static int spawned;

static void *short_fn(void *arg)
{
	(void)arg;
	usleep(2000);
	return NULL;
}

static void *spawner_fn(void *arg)
{
	pthread_attr_t attr;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	while (!spawn_stop) {
		pthread_t t;

		if (pthread_create(&t, &attr, short_fn, NULL) == 0)
			__atomic_add_fetch(&spawned, 1, __ATOMIC_RELAXED);
		else
			usleep(1000);
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

static void test_threads_during_write(void)
{
	static const uint64_t masks[] = { 0x1, 0x2, 0x6, 0x3, 0xc, 0x9 };
	pthread_t sp[3];
	int round, bad = 0, checked = 0, errs = 0;
	char path[64];

	spawn_stop = 0;
	spawned = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&sp[i], NULL, spawner_fn, NULL);

	for (round = 0; round < 60; round++) {
		uint64_t m = masks[round % 6];
		struct dirent *de;
		DIR *d;

		if (set_soft_mask(self, 0, m)) {
			errs++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task", self);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			uint64_t got;

			if (tid <= 0 || get_soft(self, tid, &got))
				continue;	/* exited meanwhile */
			checked++;
			if (got != m) {
				if (bad < 5)
					diag("round %d: thread %d has %llx, wrote %llx",
					     round, tid, (unsigned long long)got,
					     (unsigned long long)m);
				bad++;
			}
		}
		if (d)
			closedir(d);
	}
	spawn_stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(sp[i], NULL);
	usleep(20000);
	diag("%d threads created during 60 whole-process writes, %d checks",
	     spawned, checked);
	ok(errs == 0 && bad == 0 && spawned > 0,
	   "no thread created during a process write escapes (%d bad, %d write errors)",
	   bad, errs);
	reset_self();
	set_soft_mask(self, 0, all_cpus);
}

/* ------------------------------------------------------------------ */

static void test_fork_exec(void)
{
	int pfd[2], status;
	char buf[64];
	ssize_t n;
	pid_t pid;

	set_soft(self, gettid_(), "2\n");
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		dprintf(pfd[1], "%llx\n",
			(unsigned long long)soft_of(getpid(), gettid_()));
		/* exec: the new image reads its own mask */
		dup2(pfd[1], 1);
		execl("/bin/cat", "cat", "/proc/self/soft_affinity", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	/* Collect everything the child and cat wrote. */
	while (n > 0 && (size_t)n < sizeof(buf) - 1) {
		ssize_t k = read(pfd[0], buf + n, sizeof(buf) - 1 - (size_t)n);

		if (k <= 0)
			break;
		n += k;
		buf[n] = '\0';
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	{
		unsigned long long a = 0, b = 0;

		sscanf(buf, "%llx %llx", &a, &b);
		ok(a == 0x2, "fork: the child inherits the mask (%llx)", a);
		ok(b == 0x2 && WIFEXITED(status) && !WEXITSTATUS(status),
		   "exec: the mask persists (%llx)", b);
	}
	reset_self();
}

static void test_hard_changes(void)
{
	pid_t tid = gettid_();
	uint64_t m;

	set_soft(self, tid, "3\n");	/* prefer 0-1 */

	set_hard(0, 0xe);		/* taskset 1-3: shrink */
	m = soft_of(self, tid);
	ok(m == 0x2, "hard 1-3: preferred becomes 1 (%llx)",
	   (unsigned long long)m);
	ok(status_mask(self, tid, "Cpus_preferred") == 0x2,
	   "Cpus_preferred agrees");

	set_hard(0, 0xc);		/* disjoint */
	m = soft_of(self, tid);
	ok(m == 0xc, "hard 2-3 (disjoint): preferred is the hard mask (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x8);
	m = soft_of(self, tid);
	ok(m == 0x8, "hard 3: preferred is the hard mask (%llx)",
	   (unsigned long long)m);

	set_hard(0, all_cpus);		/* expand again */
	m = soft_of(self, tid);
	ok(m == 0x3, "hard mask expanded: the request 0-1 is back (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x7);
	set_soft(self, tid, "2");
	set_hard(0, 0x5);
	m = soft_of(self, tid);
	ok(m == 0x5, "request 1, hard 0,2: falls back to 0,2 (%llx)",
	   (unsigned long long)m);
	set_hard(0, 0x6);
	m = soft_of(self, tid);
	ok(m == 0x2, "hard 1-2: request 1 in effect again (%llx)",
	   (unsigned long long)m);

	/* Writing the whole hard mask is "off": it then follows the hard mask. */
	set_hard(0, 0x7);
	set_soft(self, tid, "7");
	set_hard(0, all_cpus);
	m = soft_of(self, tid);
	ok(m == all_cpus, "written == hard 0-2, then hard all: preferred all (%llx)",
	   (unsigned long long)m);
	reset_self();
}

static bool cpuset_enabled_here;

/* cpuset reacts to hotplug from a work item: give it a moment. */
static uint64_t wait_soft(pid_t pid, uint64_t want)
{
	uint64_t m = soft_of(pid, pid);
	int i;

	for (i = 0; i < 100 && m != want; i++) {
		usleep(20000);
		m = soft_of(pid, pid);
	}
	return m;
}

static int setup_cpuset_cgroup(const char *cg)
{
	char buf[256];

	if (read_str("/sys/fs/cgroup/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "cpuset"))
		return -ENOENT;
	if (read_str("/sys/fs/cgroup/cgroup.subtree_control", buf, sizeof(buf)) ||
	    !strstr(buf, "cpuset")) {
		int err = write_str("/sys/fs/cgroup/cgroup.subtree_control",
				    "+cpuset");

		if (err)
			return err;
		cpuset_enabled_here = true;
	}
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	snprintf(buf, sizeof(buf), "%s/cpuset.cpus", cg);
	return write_str(buf, "0-3");
}

static void test_cgroup(void)
{
	const char *cg = "/sys/fs/cgroup/softaff-abi";
	const char *online2 = "/sys/devices/system/cpu/cpu2/online";
	char path[128], buf[32];
	int pfd[2], err;
	pid_t pid;
	uint64_t m;

	err = setup_cpuset_cgroup(cg);
	if (err) {
		skip(errname(err), "cgroup v2 cpuset.cpus cases");
		return;
	}
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) < 0)	/* until the parent closes */
			_exit(1);
		_exit(0);
	}
	close(pfd[0]);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", pid);
	err = write_str(path, buf);
	ok(!err, "child moved into a cpuset cgroup (%s)", errname(err));
	err = set_soft(pid, pid, "3\n");
	ok(!err && soft_of(pid, pid) == 0x3, "child prefers 0-1");

	snprintf(path, sizeof(path), "%s/cpuset.cpus", cg);
	write_str(path, "1-3");
	m = soft_of(pid, pid);
	ok(m == 0x2 && hard_of(pid) == 0xe,
	   "cpuset.cpus 1-3: preferred 1 (%llx)", (unsigned long long)m);
	write_str(path, "2-3");
	m = soft_of(pid, pid);
	ok(m == 0xc && hard_of(pid) == 0xc,
	   "cpuset.cpus 2-3: preferred falls back to 2-3 (%llx)",
	   (unsigned long long)m);
	write_str(path, "0-3");
	m = soft_of(pid, pid);
	ok(m == 0x3 && hard_of(pid) == 0xf,
	   "cpuset.cpus 0-3 again: preferred 0-1 restored (%llx)",
	   (unsigned long long)m);

	/*
	 * Hotplug under a cpuset: the cpuset takes the offline CPU out of
	 * the hard mask and puts it back, and the preference follows.
	 */
	if (!access(online2, W_OK) && !set_soft(pid, pid, "4\n")) {
		if (!write_str(online2, "0")) {
			m = wait_soft(pid, 0xb);
			ok(m == 0xb && status_mask(pid, pid, "Cpus_allowed") == 0xb,
			   "cpuset task, CPU 2 offline: hard and preferred 0-1,3 (%llx)",
			   (unsigned long long)m);
			write_str(online2, "1");
			m = wait_soft(pid, 0x4);
			ok(m == 0x4 && status_mask(pid, pid, "Cpus_allowed") == 0xf,
			   "cpuset task, CPU 2 online: preferred 2 restored (%llx)",
			   (unsigned long long)m);
		} else {
			skip("cannot offline CPU 2", "hotplug under a cpuset");
		}
	} else {
		skip("CPU 2 hotplug not available", "hotplug under a cpuset");
	}

	close(pfd[1]);
	waitpid(pid, NULL, 0);
	rmdir(cg);
	if (cpuset_enabled_here)
		write_str("/sys/fs/cgroup/cgroup.subtree_control", "-cpuset");
}

static void test_hotplug(void)
{
	const char *online = "/sys/devices/system/cpu/cpu2/online";
	pid_t tid = gettid_();
	uint64_t m, h, want = 0x4;
	int err;

	if (access(online, W_OK)) {
		skip("cpu2 cannot be offlined", "CPU hotplug cases");
		return;
	}
	set_hard(0, all_cpus);
	err = set_soft(self, tid, "4\n");	/* prefer CPU 2 */
	ok(!err, "prefer CPU 2 (%s)", errname(err));

	err = write_str(online, "0");
	if (err) {
		skip(errname(err), "offlining CPU 2");
		reset_self();
		return;
	}
	m = soft_of(self, tid);
	h = status_mask(self, tid, "Cpus_allowed");
	ok(m == eff(0x4, h),
	   "CPU 2 offline: preferred %llx is request 2 & hard %llx, or the hard mask",
	   (unsigned long long)m, (unsigned long long)h);
	/* Accepted since #13: a request of offline CPUs only is stored. */
	set_soft(self, tid, "1\n");
	err = set_soft(self, tid, "4\n");
	h = status_mask(self, tid, "Cpus_allowed");
	m = soft_of(self, tid);
	ok(!err && m == eff(0x4, h),
	   "only the offline CPU 2: accepted (%s), reads %llx under hard %llx",
	   errname(err), (unsigned long long)m, (unsigned long long)h);
	err = write_str(online, "1");
	ok(!err, "CPU 2 back online (%s)", errname(err));
	m = wait_soft(tid, want);
	ok(m == want, "CPU 2 online: preferred %llx again (%llx)",
	   (unsigned long long)want, (unsigned long long)m);
	reset_self();
}

/* soft_affinity_ratio: formats, default, exact errnos (semantics: 36-preference.t). */
static void check_ratio_einval(pid_t tid, const char *in, size_t len)
{
	char path[96], before[64], after[64];
	int err;

	get_ratio(self, tid, before, sizeof(before));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity_ratio",
		 self, tid);
	err = write_buf(path, in, len);
	get_ratio(self, tid, after, sizeof(after));
	ok(err == -EINVAL && !strcmp(before, after),
	   "ratio \"%.*s\" (%zu bytes): %s, stays \"%s\"", (int)(len > 40 ? 40 : len),
	   in, len, errname(err), after);
}

static void test_ratio(void)
{
	static const char *const bad[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
		"5:4:3", "-1:1", "5 4", "5/4", "defaults", "Default", "0x5:1",
		"4294967301:1", "\n", "",
	};
	char buf[64], want[64], big[64];
	pid_t tid = gettid_();
	long a = 0, p = 0;
	int err;
	size_t i;

	read_str("/proc/sys/kernel/sched_allowed", buf, sizeof(buf));
	a = atol(buf);
	read_str("/proc/sys/kernel/sched_preferred", buf, sizeof(buf));
	p = atol(buf);
	snprintf(want, sizeof(want), "%ld:%ld default", a, p);
	err = get_ratio(self, 0, buf, sizeof(buf));
	ok(!err && !strcmp(buf, want),
	   "/proc/PID/soft_affinity_ratio reads \"%s\", want \"%s\" (%s)", buf,
	   want, errname(err));
	err = get_ratio(self, tid, buf, sizeof(buf));
	ok(!err && !strcmp(buf, want),
	   "task/TID/soft_affinity_ratio reads \"%s\" (%s)", buf, errname(err));
	{
		struct stat st;
		char path[96];

		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio", self);
		ok(!stat(path, &st) && (st.st_mode & 0777) == 0666,
		   "soft_affinity_ratio is mode 0666 (%o)", st.st_mode & 0777);
	}

	err = set_ratio(self, tid, "5:4\n");
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "5:4 task"), "write \"5:4\" reads \"%s\" (%s)",
	   buf, errname(err));
	err = set_ratio(self, tid, "10000:10000");
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "10000:10000 task"),
	   "\"10000:10000\" without newline reads \"%s\" (%s)", buf,
	   errname(err));
	err = set_ratio(self, tid, "1:1\n");
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "1:1 task"), "\"1:1\" reads \"%s\" (%s)", buf,
	   errname(err));
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		check_ratio_einval(tid, bad[i], strlen(bad[i]));
	memset(big, ' ', sizeof(big));
	memcpy(big, "5:4", 3);
	big[32] = '\n';
	check_ratio_einval(tid, big, 33);	/* "5:4" and blanks, 33 bytes */
	ok(soft_of(self, tid) == hard_of(0),
	   "ratio writes leave the mask alone (%llx)",
	   (unsigned long long)soft_of(self, tid));

	err = set_ratio(self, tid, "default\n");
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!err && !strcmp(buf, want), "\"default\" reads \"%s\" again (%s)",
	   buf, errname(err));
	err = set_ratio(self, tid, "default");
	ok(!err, "\"default\" without newline (%s)", errname(err));

	/* The default follows the sysctls. */
	if (!write_str("/proc/sys/kernel/sched_allowed", "50")) {
		get_ratio(self, tid, buf, sizeof(buf));
		snprintf(want, sizeof(want), "50:%ld default", p);
		ok(!strcmp(buf, want), "sched_allowed 50: reads \"%s\"", buf);
		snprintf(buf, sizeof(buf), "%ld", a);
		write_str("/proc/sys/kernel/sched_allowed", buf);
	}

	/* A mask write leaves the ratio alone. */
	set_ratio(self, tid, "7:2");
	set_soft(self, tid, "3");
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!strcmp(buf, "7:2 task") && soft_of(self, tid) == 0x3,
	   "a mask write leaves the ratio alone (\"%s\")", buf);
	set_soft_mask(self, tid, all_cpus);
	get_ratio(self, tid, buf, sizeof(buf));
	ok(!strcmp(buf, "7:2 task"),
	   "clearing the mask leaves the ratio alone (\"%s\")", buf);
	set_ratio(self, tid, "default");
	reset_self();
}

static void test_sysctl(void)
{
	static const char *bad[] = { "0", "10001", "-1", "abc", "4294967297", "" };
	const char *names[] = { "/proc/sys/kernel/sched_preferred",
				"/proc/sys/kernel/sched_allowed" };
	const char *defaults[] = { "1", "100" };
	char buf[64];
	int i, j, err;

	for (i = 0; i < 2; i++) {
		err = read_str(names[i], buf, sizeof(buf));
		ok(!err && !strcmp(buf, defaults[i]), "%s defaults to %s (%s)",
		   names[i], defaults[i], err ? errname(err) : buf);

		for (j = 0; j < 6; j++) {
			char before[64], after[64];

			read_str(names[i], before, sizeof(before));
			err = write_str(names[i], bad[j]);
			read_str(names[i], after, sizeof(after));
			if (!*bad[j]) {
				/* an empty write is a no-op for every sysctl */
				ok(!strcmp(before, after),
				   "%s: empty write changes nothing", names[i]);
				continue;
			}
			ok(err == -EINVAL && !strcmp(before, after),
			   "%s: \"%s\" -> %s, value stays %s", names[i],
			   bad[j], errname(err), after);
		}
		err = write_str(names[i], "10000");
		read_str(names[i], buf, sizeof(buf));
		ok(!err && !strcmp(buf, "10000"), "%s accepts 10000", names[i]);
		err = write_str(names[i], "1");
		read_str(names[i], buf, sizeof(buf));
		ok(!err && !strcmp(buf, "1"), "%s accepts 1", names[i]);
		write_str(names[i], defaults[i]);
	}
}

int main(int argc, char **argv)
{
	char buf[64];

	if (argc > 1 && !strcmp(argv[1], "--print-self")) {
		read_str("/proc/self/soft_affinity", buf, sizeof(buf));
		printf("%s\n", buf);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	self = getpid();

	if (access("/proc/self/soft_affinity", F_OK)) {
		printf("1..1\nnot ok 1 - /proc/self/soft_affinity exists (%s)\n",
		       strerror(errno));
		return 1;
	}
	if (read_str("/sys/devices/system/cpu/possible", buf, sizeof(buf)) == 0) {
		uint64_t m;

		if (parse_list(buf, &m) == 0)
			nr_cpu_ids = 64 - __builtin_clzll(m);
	}
	all_cpus = nr_cpu_ids >= 64 ? ~0ULL : (1ULL << nr_cpu_ids) - 1;
	diag("nr_cpu_ids %d, hard mask %llx", nr_cpu_ids,
	     (unsigned long long)hard_of(0));
	if (nr_cpu_ids < 4 || hard_of(0) != all_cpus) {
		printf("ok 1 # SKIP needs CPUs 0-3 in the hard mask\n1..1\n");
		return 0;
	}

	test_files_and_defaults();
	test_roundtrip();
	test_errors();
	test_outside_hard();
	test_kthread();
	test_policies();
	test_esrch();
	test_perm();
	test_process_vs_thread();
	test_threads_during_write();
	test_fork_exec();
	test_hard_changes();
	test_cgroup();
	test_hotplug();
	test_ratio();
	test_sysctl();

	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
