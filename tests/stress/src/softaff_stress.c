// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_stress: everything that changes a task's soft or hard affinity,
 * at once, for a bounded time, with invariant checks throughout.
 *
 * Runs as root in the guest.  Target processes (spinning, sleeping and
 * thread-churning) are attacked by:
 *
 *   writers    random valid and invalid masks, hex and list, and the
 *              words "inherit" and "none", to /proc/PID/soft_affinity{,_list}
 *              and task/TID/..., including threads that are exiting (an fd
 *              kept open across the exit); valid and invalid ratios to
 *              soft_affinity_ratio
 *   setaff     sched_setaffinity() on random target threads
 *   policy     target threads to SCHED_FIFO/RR for a few ms and back to
 *              SCHED_OTHER, BATCH or IDLE
 *   taskset    fork + exec of taskset(1) on random targets
 *   cpuset     cgroup v2 cpuset.cpus edits and moves between two groups,
 *              now and then a partition root (sched domains rebuilt);
 *              their cpuset.cpus.preferred{,.ratio}, valid and invalid
 *              values, each checked as it reads back
 *   hotplug    CPUs 1..N-1 offline and online (never all of them)
 *   sysctl     sched_preferred / sched_allowed and sched_soft_affinity_ratio,
 *              valid and invalid values
 *   forker     fork, exec(/bin/true), thread storms in the children
 *   softaffd   systemctl reload / restart softaffd (if it is running)
 *
 * and checked by:
 *
 *   checker    for every target thread (and, in a second thread, every
 *              user thread in the system): the preferred mask lies within
 *              the hard mask, a running thread is on a CPU of its hard
 *              mask, and what status says applies (Cpus_preferred_list,
 *              _source, _ratio, _ratio_source) is what the thread's and
 *              its process's requests (soft_affinity_list, _ratio) give
 *              by the fixed precedence thread > process > cgroup.
 *              /proc/PID/status is read without the task's locks, so a
 *              suspect sample must repeat, identical, over 100 ms before
 *              it counts as a violation (transients are counted).
 *   owner      a process of its own (two threads, one with a narrower hard
 *              mask, in the root cgroup where nothing else changes its hard
 *              mask) that only it writes, masks and ratios, per thread and
 *              per process, and reads written back unchanged: after every
 *              write, accepted or not, every request file must read what
 *              was stored (inherit "", "none" or the value as written, a
 *              mask covering the hard mask included), and each thread's
 *              status what the model of ABI v4 gives: the first of its
 *              own request and its process's that is not "inherit"
 *              decides ("none": no preference), masks and ratios each on
 *              their own; the mask shows as request & hard, or the hard
 *              mask, with the deciding level as its source.
 *   cgowner    a process of its own moved between two cpuset cgroups
 *              whose cpuset.cpus.preferred{,.ratio} (and their parent's)
 *              only it writes, valid and invalid values, plus process
 *              requests: every thread, later ones included, must follow
 *              its process request unless that inherits, else its cgroup's
 *              or the nearest ancestor's that does not inherit
 *              (Cpus_preferred_source, the mask and the ratio); each
 *              cgroup's cpuset.cpus.preferred.effective must show that
 *              cgroup's resolved list within its cpuset.cpus.effective.
 *
 * Every errno is checked against the documented ones: EINVAL, ESRCH (and
 * ENOENT at open for a thread that is gone).  A string that can never be a
 * valid mask (no CPU, CPU >= nr_cpu_ids, garbage, the old word "default")
 * must be refused; "inherit", an empty line and "none" must be taken.
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
	X(checks_source) X(checks_roundtrip) X(checks_cgeffective) \
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

/* --- requests ------------------------------------------------------------- */

/*
 * ABI v4: each level (thread, process, cgroup) holds a mask and a ratio,
 * each in one of three states.  A read of a level returns its request: an
 * empty line (inherit), "none", or the value as written.
 */
enum rstate { RS_INHERIT, RS_NONE, RS_SET };

struct mreq {			/* a mask request */
	enum rstate st;
	uint64_t mask;		/* RS_SET: the CPUs, never 0 */
};

struct rreq {			/* a ratio request */
	enum rstate st;
	unsigned int a, p;	/* RS_SET: allowed:preferred, 1..10000 */
};

static bool mreq_eq(const struct mreq *x, const struct mreq *y)
{
	return x->st == y->st && (x->st != RS_SET || x->mask == y->mask);
}

static bool rreq_eq(const struct rreq *x, const struct rreq *y)
{
	return x->st == y->st &&
	       (x->st != RS_SET || (x->a == y->a && x->p == y->p));
}

/* The word of a state that holds no value, or NULL for RS_SET */
static const char *rstate_word(enum rstate st)
{
	return st == RS_INHERIT ? "inherit" : st == RS_NONE ? "none" : NULL;
}

static const char *fmt_mreq(const struct mreq *r, char *buf, size_t len)
{
	if (rstate_word(r->st))
		snprintf(buf, len, "%s", rstate_word(r->st));
	else
		snprintf(buf, len, "%llx", (unsigned long long)r->mask);
	return buf;
}

static const char *fmt_rreq(const struct rreq *r, char *buf, size_t len)
{
	if (rstate_word(r->st))
		snprintf(buf, len, "%s", rstate_word(r->st));
	else
		snprintf(buf, len, "%u:%u", r->a, r->p);
	return buf;
}

/* The kernel's %*pb: groups of 8 hex digits, comma-separated (<= 64 bits). */
static int parse_hex64(const char *s, size_t n, uint64_t *ret)
{
	uint64_t m = 0;
	int digits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i], v;

		if (c == ',')
			continue;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			return -1;
		if (m >> 60)
			return -1;
		m = m << 4 | (uint64_t)v;
		digits++;
	}
	if (!digits)
		return -1;
	*ret = m;
	return 0;
}

/*
 * One line as a level's mask file reads: "\n" (inherit), "none\n", or a
 * CPU list / hex mask with at least one CPU.  -1 if it is anything else.
 */
/*
 * The part every request file shares: one line, and only one; its length
 * in *@n; RS_INHERIT for an empty one, RS_NONE for "none", else RS_SET
 * (a value to parse), or -1.
 */
static int parse_req_word(const char *buf, size_t *n)
{
	*n = strcspn(buf, "\n");
	if (buf[*n] != '\n' || buf[*n + 1])
		return -1;
	if (!*n)
		return RS_INHERIT;
	if (*n == 4 && !strncmp(buf, "none", 4))
		return RS_NONE;
	return RS_SET;
}

static int parse_mreq(const char *buf, bool list, struct mreq *r)
{
	size_t n;
	int st = parse_req_word(buf, &n);

	r->mask = 0;
	if (st < 0)
		return -1;
	r->st = st;
	if (st != RS_SET)
		return 0;
	if (list ? softaff_parse_cpulist64(buf, &r->mask)
		 : parse_hex64(buf, n, &r->mask))
		return -1;
	return r->mask ? 0 : -1;
}

/* The same for a ratio: "\n", "none\n" or "A:P\n" (1..10000 each). */
static int parse_rreq(const char *buf, struct rreq *r)
{
	size_t n;
	int st = parse_req_word(buf, &n);
	char tail;

	r->a = r->p = 0;
	if (st < 0)
		return -1;
	r->st = st;
	if (st != RS_SET)
		return 0;
	if (sscanf(buf, "%u:%u%c", &r->a, &r->p, &tail) != 3 || tail != '\n' ||
	    !isdigit((unsigned char)buf[0]) || r->a < 1 || r->a > 10000 ||
	    r->p < 1 || r->p > 10000)
		return -1;
	return 0;
}

/* What a read(2) gave: 0, -1 if the file is gone, -2 if it is garbled. */
static int read_mreq_file(const char *path, bool list, struct mreq *r)
{
	char buf[256];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return parse_mreq(buf, list, r) ? -2 : 0;
}

/* The mask request of thread @tid, or of process @pid if @tid is 0. */
static int read_mreq(pid_t pid, pid_t tid, bool list, struct mreq *r)
{
	const char *file = list ? "soft_affinity_list" : "soft_affinity";
	char path[80];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid,
			 file);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	return read_mreq_file(path, list, r);
}

/* The ratio request of thread @tid, or of process @pid if @tid is 0. */
static int read_rreq(pid_t pid, pid_t tid, struct rreq *r)
{
	char path[96], buf[64];

	if (tid)
		snprintf(path, sizeof(path),
			 "/proc/%d/task/%d/soft_affinity_ratio", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio",
			 pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return parse_rreq(buf, r) ? -2 : 0;
}

/* --- task views -------------------------------------------------------- */

struct view {
	char state;
	int cpu;		/* stat field 39, -1 if not read */
	uint64_t hard, pref;
	char src[16];		/* Cpus_preferred_source */
	unsigned int ra, rp;	/* Cpus_preferred_ratio */
	char rsrc[16];		/* Cpus_preferred_ratio_source */
};

/* What applies, the same in both views (state and CPU aside)? */
static bool view_eq(const struct view *x, const struct view *y)
{
	/* sysctl_churn moves the default's numbers: not a change here */
	return x->hard == y->hard && x->pref == y->pref &&
	       !strcmp(x->src, y->src) && !strcmp(x->rsrc, y->rsrc) &&
	       (!strcmp(x->rsrc, "default") ||
		(x->ra == y->ra && x->rp == y->rp));
}

/*
 * Sample lines (6.1 + series, ABI v4):
 *   State:	R (running)
 *   Cpus_allowed_list:	0-3
 *   Cpus_preferred_list:	0-1
 *   Cpus_preferred_source:	thread
 *   Cpus_preferred_ratio:	100:1
 *   Cpus_preferred_ratio_source:	default
 */
/* /proc/PID/task/TID/status into @buf (STATUS_MAX bytes) */
static int read_task_status(pid_t pid, pid_t tid, char *buf)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	return read_file(path, buf, STATUS_MAX) < 0 ? -1 : 0;
}

/* The word after "\nKEY:\t" into @out; -1 if there is none. */
static int status_word(const char *buf, const char *key, char *out,
		       size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\n%s:\t", key);
	p = strstr(buf, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	n = strcspn(p, "\n");
	if (!n || n >= len)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* 0, -1 if the task is gone, -2 if its status lacks or garbles a line. */
static int read_status(pid_t pid, pid_t tid, struct view *v)
{
	char buf[STATUS_MAX], w[32], *p;

	if (read_task_status(pid, tid, buf))
		return -1;
	p = strstr(buf, "\nState:\t");
	if (!p)
		return -2;
	v->state = p[8];
	p = strstr(buf, "\nCpus_allowed_list:\t");
	if (!p || softaff_parse_cpulist64(p + 20, &v->hard))
		return -2;
	p = strstr(buf, "\nCpus_preferred_list:\t");
	if (!p || softaff_parse_cpulist64(p + 22, &v->pref))
		return -2;
	if (status_word(buf, "Cpus_preferred_source", v->src, sizeof(v->src)) ||
	    status_word(buf, "Cpus_preferred_ratio_source", v->rsrc,
			sizeof(v->rsrc)) ||
	    status_word(buf, "Cpus_preferred_ratio", w, sizeof(w)) ||
	    sscanf(w, "%u:%u", &v->ra, &v->rp) != 2)
		return -2;
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
	bool known;		/* req below is what a success must store */
	struct mreq req;
};

static uint64_t random_cpus(uint64_t *s)
{
	uint64_t m;

	do
		m = rnd(s) & all_mask;
	while (!m);
	return m;
}

/* A string to write, NULs included: T("...") for a literal. */
struct text {
	const char *s;
	size_t len;
};

#define T(lit) { lit, sizeof(lit) - 1 }

static void set_text(struct mask_case *c, const struct text *t)
{
	c->len = t->len;
	memcpy(c->buf, t->s, c->len);
}

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

static void make_case(uint64_t *s, struct mask_case *c, bool list)
{
	/* Never valid: no CPU, bad syntax, the ratio's old word. */
	static const struct text bad_hex[] = {
		T("0"), T("00"), T("0,0"), T("zz"), T("0-1"), T("-1"),
		T("1,00000000,00000000,1"),
		T("ffffffffffffffffffffffffffffffffffff"), T("0x"),
		T("default"), T("default\n"), T("nonex"), T("inherit none"),
	};
	static const struct text bad_list[] = {
		T("a-b"), T("1-0"), T("0-"), T("-1"), T("0--1"),
		T("99999999999"), T("3-1"), T("1/2"), T("0-3:0/2"), T(","),
		T("x"), T("default"), T("default\n"), T("none,1"),
		T("inherit 0"),
	};
	/*
	 * Valid or not, the ABI does not say: what a success stored is read
	 * back.  A 0-byte write, blanks around a value or a word, odd list
	 * syntax, a NUL.
	 */
	static const struct text maybe[] = {
		T(""), T(" "), T(" none"), T("inherit "), T("NONE"),
		T("Inherit"), T("all"), T("0-3:1/2"), T("N"), T("0,,1"),
		T("  1"), T("1 "), T("0x3"), { "3\0zz", 5 }, T("+1"), T("01"),
		T("0-0"), T("1,1,1"),
	};
	/* The states' words: "" (an empty line), "inherit", "none". */
	static const struct {
		const char *s;
		enum rstate st;
	} words[] = {
		{ "\n", RS_INHERIT }, { "inherit", RS_INHERIT },
		{ "inherit\n", RS_INHERIT }, { "none", RS_NONE },
		{ "none\n", RS_NONE },
	};
	unsigned int r = rndn(s, 100);
	char tmp[128];

	memset(c, 0, sizeof(*c));
	c->list = list;
	if (r < 55) {
		c->req.st = RS_SET;
		c->req.mask = random_cpus(s);
		c->known = true;
		if (list)
			fmt_list(c->req.mask, tmp, sizeof(tmp));
		else
			snprintf(tmp, sizeof(tmp), "%llx",
				 (unsigned long long)c->req.mask);
		c->len = (size_t)snprintf(c->buf, sizeof(c->buf), "%s%s", tmp,
					  rndn(s, 2) ? "\n" : "");
	} else if (r < 64) {
		unsigned int i = rndn(s, NELEM(words));

		c->req.st = words[i].st;
		c->known = true;
		c->len = strlen(words[i].s);
		memcpy(c->buf, words[i].s, c->len);
	} else if (r < 73) {
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
		if (list)
			set_text(c, &bad_list[rndn(s, NELEM(bad_list))]);
		else
			set_text(c, &bad_hex[rndn(s, NELEM(bad_hex))]);
		c->must_fail = true;
	} else if (r < 94) {
		set_text(c, &maybe[rndn(s, NELEM(maybe))]);
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

enum { RC_BAD, RC_OK, RC_MAYBE };

/*
 * A ratio to write into @buf: RC_OK (*r is what a success must store: an
 * "A:P", an empty line or "inherit", "none"), RC_BAD (never valid, "default"
 * included: the word is gone) or RC_MAYBE (the ABI does not say: a 0-byte
 * write, blanks, capitals).
 */
static int make_ratio(uint64_t *s, char *buf, size_t len, struct rreq *r)
{
	static const char *const bad[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", "a:b",
		"-1:1", "5:4:3", "default5", "1:1 1", "4294967297:1", "default",
		"default\n", "none:1", "inherit5", "5:4 none",
	};
	static const char *const maybe[] = {
		"", " ", "NONE", " 5:4", "5:4 ", " inherit",
	};
	static const struct {
		const char *s;
		enum rstate st;
	} words[] = {
		{ "\n", RS_INHERIT }, { "inherit", RS_INHERIT },
		{ "inherit\n", RS_INHERIT }, { "none", RS_NONE },
		{ "none\n", RS_NONE },
	};
	unsigned int n = rndn(s, 100);

	memset(r, 0, sizeof(*r));
	if (n < 55) {
		r->st = RS_SET;
		r->a = 1 + rndn(s, 10000);
		r->p = 1 + rndn(s, 10000);
		snprintf(buf, len, "%u:%u%s", r->a, r->p, rndn(s, 2) ? "\n" : "");
		return RC_OK;
	}
	if (n < 75) {
		unsigned int i = rndn(s, NELEM(words));

		r->st = words[i].st;
		snprintf(buf, len, "%s", words[i].s);
		return RC_OK;
	}
	if (n < 95) {
		snprintf(buf, len, "%s", bad[rndn(s, NELEM(bad))]);
		return RC_BAD;
	}
	snprintf(buf, len, "%s", maybe[rndn(s, NELEM(maybe))]);
	return RC_MAYBE;
}

/* A valid or invalid ratio to a random target thread or process. */
static void write_ratio_target(uint64_t *s, pid_t pid)
{
	char path[96], val[64];
	struct rreq r;
	int kind = make_ratio(s, val, sizeof(val), &r);
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
		if (kind == RC_BAD)
			violation("ratio \"%s\" to %s accepted", val, path);
		break;
	case -EINVAL:
		count(C_ratio_writes_einval);
		if (kind == RC_OK)
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

/*
 * A cgroup's own preference files, read as requests: cpuset.cpus.preferred
 * "" (inherit) / "none" / a CPU list, .ratio "" / "none" / "A:P".  0, -1
 * if unreadable, -2 if garbled.
 */
static int cg_read_pref(const char *dir, struct mreq *r)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred", dir);
	return read_mreq_file(path, true, r);
}

static int cg_read_ratio(const char *dir, struct rreq *r)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.ratio", dir);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return parse_rreq(buf, r) ? -2 : 0;
}

/*
 * Write @val to a cgroup preference file and count it; an RC_OK value must
 * be taken and an RC_BAD one refused with EINVAL, RC_MAYBE either.
 * Returns nonzero on a violation; *@err is the write's result.
 */
static int cg_pref_write(const char *path, const char *val, int kind,
			 int *err)
{
	*err = write_file(path, val, strlen(val));
	count(*err ? C_cgpref_writes_einval : C_cgpref_writes_ok);
	if (kind == RC_OK && *err) {
		violation("%s: valid \"%s\" refused: %s", path, val,
			  strerror(-*err));
		return -1;
	}
	if ((kind == RC_BAD && *err != -EINVAL) ||
	    (kind == RC_MAYBE && *err && *err != -EINVAL)) {
		violation("%s: invalid \"%s\": %s, not EINVAL", path, val,
			  *err ? strerror(-*err) : "accepted");
		return -1;
	}
	return 0;
}

/*
 * One random write to @dir's cpuset.cpus.preferred or .ratio, valid or
 * not, with its result checked: a valid value is taken and reads back as
 * written (a list, "none", or "" for an empty line or "inherit"), an
 * invalid one gets EINVAL and changes nothing, and a 0-byte write is taken
 * and changes nothing (kernfs does not pass it on).  Only the caller
 * writes these files of @dir.  What @dir now has goes to *pref and
 * *ratio.  Returns 0 or -1 (violation).
 */
static int cg_pref_edit(uint64_t *s, const char *dir, struct mreq *pref,
			struct rreq *ratio)
{
	static const char *const bad[] = {
		"zz", "0-", "1-0", "a-b", "-1", "0,,x", "0-3:x", "99999999999",
		"default", "default\n", "none,1", "inherit 0",
	};
	char path[256], val[64], b1[32], b2[32];
	unsigned int r = rndn(s, 100);
	int err, rd;

	if (r < 55) {
		struct mreq m = { RS_SET, 0 }, got;

		if (r < 33) {
			fmt_list(m.mask = random_cpus(s), val, sizeof(val));
		} else if (r < 38) {
			m.st = RS_INHERIT;
			snprintf(val, sizeof(val), "%s", rndn(s, 2) ? "\n" : " \n");
		} else if (r < 41) {
			m.st = RS_INHERIT;
			snprintf(val, sizeof(val), "inherit%s", rndn(s, 2) ? "\n" : "");
		} else if (r < 44) {
			m.st = RS_NONE;
			snprintf(val, sizeof(val), "none%s", rndn(s, 2) ? "\n" : "");
		} else if (r < 46) {
			/* 0 bytes: kernfs takes it and changes nothing */
			val[0] = '\0';
			m = *pref;
		} else if (r < 49) {
			snprintf(val, sizeof(val), "%d", ncpus + (int)rndn(s, 60));
		} else {
			snprintf(val, sizeof(val), "%s", bad[rndn(s, NELEM(bad))]);
		}
		snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred", dir);
		if (cg_pref_write(path, val, r < 46 ? RC_OK : RC_BAD, &err))
			return -1;
		if (!err)
			*pref = m;
		rd = cg_read_pref(dir, &got);
		if (rd || !mreq_eq(&got, pref)) {
			violation("%s: after \"%s\" (%s) reads %s, want %s", path,
				  val, err ? strerror(-err) : "taken",
				  rd ? "garbled or nothing" : fmt_mreq(&got, b1, sizeof(b1)),
				  fmt_mreq(pref, b2, sizeof(b2)));
			if (!rd)
				*pref = got;
			return -1;
		}
		return 0;
	}
	{
		struct rreq want, got;
		int kind = make_ratio(s, val, sizeof(val), &want);

		if (!val[0]) {
			/* 0 bytes: kernfs takes it and changes nothing */
			kind = RC_OK;
			want = *ratio;
		}
		snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.ratio", dir);
		if (cg_pref_write(path, val, kind, &err))
			return -1;
		rd = cg_read_ratio(dir, &got);
		if (!err && kind == RC_MAYBE && !rd)
			want = got;	/* taken: what it stored, read back */
		if (!err)
			*ratio = want;
		if (rd || !rreq_eq(&got, ratio)) {
			violation("%s: after \"%s\" (%s) reads %s, want %s", path,
				  val, err ? strerror(-err) : "taken",
				  rd ? "garbled or nothing" : fmt_rreq(&got, b1, sizeof(b1)),
				  fmt_rreq(ratio, b2, sizeof(b2)));
			if (!rd)
				*ratio = got;
			return -1;
		}
	}
	return 0;
}

static void *cpuset_editor(void *arg)
{
	uint64_t s = seed * 43 + (uintptr_t)arg;
	char path[256], val[64];
	/* New groups inherit both. */
	struct mreq pref[2] = { { RS_INHERIT, 0 }, { RS_INHERIT, 0 } };
	struct rreq ratio[2] = { { RS_INHERIT, 0, 0 }, { RS_INHERIT, 0, 0 } };

	while (!stop) {
		int g = rndn(&s, 2);
		unsigned int r = rndn(&s, 100);
		int err;

		if (r >= 70) {
			/* The groups' preferences (only we write them). */
			cg_pref_edit(&s, cgroups[g], &pref[g], &ratio[g]);
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

/*
 * The ratio's sysctls: sched_preferred and sched_allowed one at a time, and
 * sched_soft_affinity_ratio ("A:P", both at once).
 */
static void *sysctl_churn(void *arg)
{
	static const char *const files[] = {
		"/proc/sys/kernel/sched_preferred",
		"/proc/sys/kernel/sched_allowed",
		"/proc/sys/kernel/sched_soft_affinity_ratio",
	};
	static const char *const bad[] = {
		"0", "-1", "10001", "4294967297", "abc", "5x", "99999999999999999999",
	};
	static const char *const bad_pair[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", "a:b",
		"-1:1", "5:4:3", "4294967297:1", "default",
	};
	uint64_t s = seed * 53 + (uintptr_t)arg;

	while (!stop) {
		unsigned int which = rndn(&s, 3);
		const char *f = files[which];
		char val[32], buf[32];
		bool good = rndn(&s, 2);
		long v;
		int err;

		if (good && which == 2)
			snprintf(val, sizeof(val), "%u:%u\n", 1 + rndn(&s, 10000),
				 1 + rndn(&s, 10000));
		else if (good)
			snprintf(val, sizeof(val), "%u\n", 1 + rndn(&s, 10000));
		else if (which == 2)
			snprintf(val, sizeof(val), "%s\n",
				 bad_pair[rndn(&s, NELEM(bad_pair))]);
		else
			snprintf(val, sizeof(val), "%s\n",
				 bad[rndn(&s, NELEM(bad))]);
		err = write_file(f, val, strlen(val));
		if (good && err)
			violation("%s: valid %s refused: %s", f, val,
				  strerror(-err));
		else if (!good && err != -EINVAL)
			violation("%s: invalid %s -> %s", f, val,
				  err ? strerror(-err) : "accepted");
		count(err ? C_sysctl_writes_rejected : C_sysctl_writes_ok);
		if (read_file(f, buf, sizeof(buf)) > 0) {
			struct rreq r;

			if (which == 2) {
				if (parse_rreq(buf, &r) || r.st != RS_SET)
					violation("%s reads \"%.*s\"", f,
						  (int)strcspn(buf, "\n"), buf);
			} else {
				v = strtol(buf, NULL, 10);
				if (v < 1 || v > 10000)
					violation("%s reads %ld", f, v);
			}
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
		int ra = read_status(getpid(), gettid_(), &a);
		int rb = ra ? ra : read_status(getpid(), gettid_(), &b);

		if (ra == -2 || rb == -2)
			return 1;	/* status garbled */
		if (ra || rb)
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
				violation("forked child: preferred mask not within its hard mask (or its status garbled)");
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

/* A task's files lack or garble a line: a violation, said the first times. */
static void garbled(pid_t pid, pid_t tid, const char *what)
{
	static unsigned long said;

	count(C_violations);
	if (__atomic_fetch_add(&said, 1, __ATOMIC_RELAXED) < 5)
		say("VIOLATION: %d/%d: %s lacks or garbles a soft affinity line\n",
		    pid, tid, what);
}

/* The effective mask of a request @req under hard mask @hard. */
static uint64_t effective(uint64_t req, uint64_t hard)
{
	return (req & hard) ? req & hard : hard;
}

/*
 * What a thread's own request @t and its process's @p decide, by the fixed
 * precedence thread > process: false if both inherit (the cgroup decides),
 * else the source and the effective mask under hard mask @hard ("none" at
 * the deciding level: no preference, the hard mask).
 */
static bool resolve_mask(const struct mreq *t, const struct mreq *p,
			 uint64_t hard, const char **src, uint64_t *eff)
{
	const struct mreq *r = t->st != RS_INHERIT ? t : p;

	if (r->st == RS_INHERIT)
		return false;
	if (r->st == RS_NONE) {
		*src = "none";
		*eff = hard;
		return true;
	}
	*src = r == t ? "thread" : "process";
	*eff = effective(r->mask, hard);
	return true;
}

/* The same for the ratio: "none" is the sysctls' ratio, source "default". */
static bool resolve_ratio(const struct rreq *t, const struct rreq *p,
			  const char **src, const struct rreq **ret)
{
	const struct rreq *r = t->st != RS_INHERIT ? t : p;

	if (r->st == RS_INHERIT)
		return false;
	*src = r->st == RS_NONE ? "default" : r == t ? "thread" : "process";
	*ret = r;
	return true;
}

/* Does status show the ratio of @r (the default's numbers move)? */
static bool ratio_shows(const struct view *v, const struct rreq *r)
{
	return r->st != RS_SET || (v->ra == r->a && v->rp == r->p);
}

/* What applies to a thread and its own and its process's requests. */
struct sample {
	struct view v;
	struct mreq mt, mp;
	struct rreq rt, rp;
};

/* 0, -1 if gone, -2 if a file is garbled, 1 if status changed meanwhile. */
static int read_sample(pid_t pid, pid_t tid, struct sample *x)
{
	struct view b;
	int r;

	if ((r = read_status(pid, tid, &x->v)) ||
	    (r = read_mreq(pid, tid, true, &x->mt)) ||
	    (r = read_mreq(pid, 0, true, &x->mp)) ||
	    (r = read_rreq(pid, tid, &x->rt)) ||
	    (r = read_rreq(pid, 0, &x->rp)) ||
	    (r = read_status(pid, tid, &b)))
		return r;
	return view_eq(&x->v, &b) ? 0 : 1;
}

static bool sample_eq(const struct sample *x, const struct sample *y)
{
	return view_eq(&x->v, &y->v) && mreq_eq(&x->mt, &y->mt) &&
	       mreq_eq(&x->mp, &y->mp) && rreq_eq(&x->rt, &y->rt) &&
	       rreq_eq(&x->rp, &y->rp);
}

/*
 * Does status disagree with the requests?  Where both levels inherit, the
 * cgroup's preference or none applies, which only the cgroup owner's exact
 * model checks further.
 */
static bool sample_mismatch(const struct sample *x, char *why, size_t len)
{
	const struct rreq *r;
	const char *src;
	uint64_t eff;
	char b[4][32];
	bool bad;

	if (resolve_mask(&x->mt, &x->mp, x->v.hard, &src, &eff))
		bad = strcmp(x->v.src, src) || x->v.pref != eff;
	else
		bad = !strcmp(x->v.src, "none") ? x->v.pref != x->v.hard
						: strcmp(x->v.src, "cgroup");
	if (!bad && resolve_ratio(&x->rt, &x->rp, &src, &r))
		bad = strcmp(x->v.rsrc, src) || !ratio_shows(&x->v, r);
	else if (!bad)
		bad = strcmp(x->v.rsrc, "cgroup") && strcmp(x->v.rsrc, "default");
	if (bad)
		snprintf(why, len,
			 "status preferred %llx source %s ratio %u:%u source %s (hard %llx), but requests thread %s process %s, ratios thread %s process %s",
			 (unsigned long long)x->v.pref, x->v.src, x->v.ra,
			 x->v.rp, x->v.rsrc, (unsigned long long)x->v.hard,
			 fmt_mreq(&x->mt, b[0], sizeof(b[0])),
			 fmt_mreq(&x->mp, b[1], sizeof(b[1])),
			 fmt_rreq(&x->rt, b[2], sizeof(b[2])),
			 fmt_rreq(&x->rp, b[3], sizeof(b[3])));
	return bad;
}

/* Does the same sample come back, unchanged, for 100 ms? */
static bool confirm_sample(pid_t pid, pid_t tid, const struct sample *first)
{
	int i;

	for (i = 0; i < 10; i++) {
		struct sample x;

		sleep_us(10000);
		if (read_sample(pid, tid, &x) || !sample_eq(first, &x))
			return false;
	}
	return true;
}

static void check_thread(pid_t pid, pid_t tid)
{
	struct view a, b;
	struct sample x;
	char st, why[512];
	int cpu, r;

	r = read_status(pid, tid, &a);
	if (!r)
		r = read_stat(pid, tid, &st, &cpu);
	if (!r)
		r = read_status(pid, tid, &b);
	if (r == -2)
		garbled(pid, tid, "status");
	if (r)
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

	/*
	 * What status says applies is what the thread's and its process's
	 * requests give (thread > process > cgroup), whatever the hard mask.
	 */
	r = read_sample(pid, tid, &x);
	if (r == -2) {
		garbled(pid, tid, "status or soft_affinity_list/_ratio");
	} else if (r == 0) {
		count(C_checks_source);
		if (sample_mismatch(&x, why, sizeof(why))) {
			if (confirm_sample(pid, tid, &x))
				violation("%d/%d: %s", pid, tid, why);
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
 * The model of ABI v4 (issue #24): a thread's own request and its
 * process's are kept apart, masks and ratios each on their own, and each
 * file reads back what was stored: inherit (""), "none" or the value, a
 * mask covering the hard mask included.  The thread's request decides
 * unless it inherits, then the process's; the owned process is in the root
 * cgroup, which has no preference.  A thread shows request & hard, or its
 * hard mask when they are disjoint, with the deciding level as the source;
 * the hard mask with source "none" when that level says "none" or every
 * level inherits.  The ratio likewise, source "default" (the sysctls).
 */
struct owned {
	pid_t tid;
	uint64_t hard;		/* fixed: root cgroup, no other writer */
	struct mreq req;	/* its own mask request */
	struct rreq ratio;	/* its own ratio request */
};

static pid_t owned_pid;
static struct mreq own_proc_req;	/* the process's mask request */
static struct rreq own_proc_ratio;	/* the process's ratio request */

/*
 * Give the calling thread exactly @set as its hard mask.  In the top
 * cpuset, sched_setaffinity() keeps only the CPUs online at the time
 * (cpuset_cpus_allowed()) and hotplug never widens the mask again, and
 * stress-ng takes CPUs offline from before we start: try again until a
 * call finds every CPU of @set online.
 */
static void set_hard_exactly(const cpu_set_t *set)
{
	cpu_set_t got;

	for (;;) {
		if (sched_setaffinity(0, sizeof(*set), set) == 0 &&
		    sched_getaffinity(0, sizeof(got), &got) == 0 &&
		    CPU_EQUAL(&got, set))
			return;
		sleep_us(10000);
	}
}

static void *owned_narrow(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	set_hard_exactly(&set);
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
		set_hard_exactly(&set);
		pthread_create(&t, NULL, owned_narrow, (void *)(uintptr_t)seed);
		for (;;)
			pause();
	}
	return pid;
}

/* Compare every view of @o with the model; -1 if one does not match. */
static int owner_verify(struct owned *o, const char *what,
			const struct mask_case *c, int err)
{
	struct mreq tl, th, pl;
	struct rreq tr, pr;
	const struct rreq *r = NULL;
	const char *src, *rsrc = "default";
	uint64_t want;
	struct view v;
	char b[10][32];

	count(C_checks_owner);
	if (read_mreq(owned_pid, o->tid, true, &tl) ||
	    read_mreq(owned_pid, o->tid, false, &th) ||
	    read_mreq(owned_pid, 0, true, &pl) ||
	    read_rreq(owned_pid, o->tid, &tr) ||
	    read_rreq(owned_pid, 0, &pr) ||
	    read_status(owned_pid, o->tid, &v)) {
		violation("owned task %d vanished, or a soft affinity file of it is garbled",
			  o->tid);
		return -1;
	}
	if (v.hard != o->hard) {
		violation("owned task %d: hard mask %llx changed to %llx under us",
			  o->tid, (unsigned long long)o->hard,
			  (unsigned long long)v.hard);
		o->hard = v.hard;
		return -1;
	}
	/* The requests, exactly as stored, in both formats. */
	if (!mreq_eq(&tl, &o->req) || !mreq_eq(&th, &o->req) ||
	    !mreq_eq(&pl, &own_proc_req) || !rreq_eq(&tr, &o->ratio) ||
	    !rreq_eq(&pr, &own_proc_ratio)) {
		violation("owned task %d after %s \"%.*s\" (%s): requests read thread %s (hex %s), process %s, ratios thread %s, process %s; want %s, %s, %s, %s",
			  o->tid, what, (int)c->len, c->buf,
			  err ? strerror(-err) : "accepted",
			  fmt_mreq(&tl, b[0], sizeof(b[0])),
			  fmt_mreq(&th, b[1], sizeof(b[1])),
			  fmt_mreq(&pl, b[2], sizeof(b[2])),
			  fmt_rreq(&tr, b[3], sizeof(b[3])),
			  fmt_rreq(&pr, b[4], sizeof(b[4])),
			  fmt_mreq(&o->req, b[5], sizeof(b[5])),
			  fmt_mreq(&own_proc_req, b[6], sizeof(b[6])),
			  fmt_rreq(&o->ratio, b[7], sizeof(b[7])),
			  fmt_rreq(&own_proc_ratio, b[8], sizeof(b[8])));
		/* Resynchronise so one bug is reported once. */
		o->req = tl;
		own_proc_req = pl;
		o->ratio = tr;
		own_proc_ratio = pr;
		return -1;
	}
	/* What applies: thread, then process, then (root cgroup) none. */
	if (!resolve_mask(&o->req, &own_proc_req, o->hard, &src, &want)) {
		src = "none";
		want = o->hard;
	}
	if (v.pref != want || strcmp(v.src, src)) {
		violation("owned task %d after %s \"%.*s\" (%s): status preferred %llx source %s, want %llx %s (thread %s, process %s, hard %llx)",
			  o->tid, what, (int)c->len, c->buf,
			  err ? strerror(-err) : "accepted",
			  (unsigned long long)v.pref, v.src,
			  (unsigned long long)want, src,
			  fmt_mreq(&o->req, b[0], sizeof(b[0])),
			  fmt_mreq(&own_proc_req, b[1], sizeof(b[1])),
			  (unsigned long long)o->hard);
		return -1;
	}
	if (!resolve_ratio(&o->ratio, &own_proc_ratio, &rsrc, &r))
		rsrc = "default";
	/* sysctl_churn changes the default's numbers: only its source counts. */
	if (strcmp(v.rsrc, rsrc) || (r && !ratio_shows(&v, r))) {
		violation("owned task %d after %s \"%.*s\" (%s): status ratio %u:%u source %s, want %s %s (thread %s, process %s)",
			  o->tid, what, (int)c->len, c->buf,
			  err ? strerror(-err) : "accepted", v.ra, v.rp,
			  v.rsrc, r ? fmt_rreq(r, b[0], sizeof(b[0])) : "the sysctls'",
			  rsrc, fmt_rreq(&o->ratio, b[1], sizeof(b[1])),
			  fmt_rreq(&own_proc_ratio, b[2], sizeof(b[2])));
		return -1;
	}
	return 0;
}

/* The path of a file of the owned thread @which (0, 1) or process (2). */
static void owned_path(char *path, size_t len, const struct owned *o,
		       int which, const char *file)
{
	if (which < 2)
		snprintf(path, len, "/proc/%d/task/%d/%s", owned_pid,
			 o[which].tid, file);
	else
		snprintf(path, len, "/proc/%d/%s", owned_pid, file);
}

/* Whatever a read returns, written back, changes nothing. */
static void owner_roundtrip(uint64_t *s, struct owned *o, int which)
{
	static const char *const files[] = {
		"soft_affinity_list", "soft_affinity", "soft_affinity_ratio",
	};
	struct mask_case c;
	char path[96];
	ssize_t n;
	int err;

	memset(&c, 0, sizeof(c));
	owned_path(path, sizeof(path), o, which, files[rndn(s, 3)]);
	n = read_file(path, c.buf, sizeof(c.buf));
	if (n < 0) {
		violation("owned %s: unreadable", path);
		return;
	}
	c.len = (size_t)n;
	err = write_file(path, c.buf, c.len);
	count(C_checks_roundtrip);
	count(err ? C_owner_writes_rejected : C_owner_writes_ok);
	if (err)
		violation("owned %s: \"%.*s\" as read, written back: %s", path,
			  (int)strcspn(c.buf, "\n"), c.buf, strerror(-err));
	owner_verify(&o[0], "read and written back", &c, err);
	owner_verify(&o[1], "read and written back", &c, err);
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
	/*
	 * Wait for the second thread and its narrow hard mask: for as long
	 * as stress-ng's hotplug may keep CPU 1 offline (set_hard_exactly()).
	 */
	for (i = 0; i < 3000; i++) {
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
	if (i == 3000) {
		violation("owned process did not start in 30 s");
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
	/* A new process and thread inherit at both levels. */
	if (owner_verify(&o[0], "start", &(struct mask_case){ 0 }, 0) ||
	    owner_verify(&o[1], "start", &(struct mask_case){ 0 }, 0))
		return NULL;

	while (!stop) {
		struct mask_case c;
		int which = rndn(&s, 3), err;	/* 0, 1: a thread; 2: the process */
		pid_t t = which < 2 ? o[which].tid : 0;
		unsigned int op = rndn(&s, 16);
		bool list = rndn(&s, 2);
		char path[96];

		if (op < 2) {
			owner_roundtrip(&s, o, which);
			continue;
		}
		if (op < 6) {
			struct rreq want;
			int kind;

			memset(&c, 0, sizeof(c));
			kind = make_ratio(&s, c.buf, sizeof(c.buf), &want);
			c.len = strlen(c.buf);
			owned_path(path, sizeof(path), o, which,
				   "soft_affinity_ratio");
			err = write_file(path, c.buf, c.len);
			count(err ? C_owner_writes_rejected : C_owner_writes_ok);
			if (kind == RC_OK && err)
				violation("owned %s: valid \"%.*s\" refused: %s",
					  path, (int)c.len, c.buf, strerror(-err));
			if (kind != RC_OK && err && err != -EINVAL)
				violation("owned %s: \"%.*s\": %s, not EINVAL",
					  path, (int)c.len, c.buf, strerror(-err));
			if (kind == RC_BAD && !err)
				violation("owned %s: invalid \"%.*s\" accepted",
					  path, (int)c.len, c.buf);
			if (!err) {
				/* Taken: what the ABI does not fix, as stored. */
				if (kind != RC_OK && read_rreq(owned_pid, t, &want))
					violation("owned %s: \"%.*s\" taken, but the ratio does not read back",
						  path, (int)c.len, c.buf);
				if (which < 2)
					o[which].ratio = want;
				else
					own_proc_ratio = want;
			}
			owner_verify(&o[0], "ratio write", &c, err);
			owner_verify(&o[1], "ratio write", &c, err);
			continue;
		}

		make_case(&s, &c, list);
		owned_path(path, sizeof(path), o, which,
			   list ? "soft_affinity_list" : "soft_affinity");
		err = write_file(path, c.buf, c.len);
		count(err ? C_owner_writes_rejected : C_owner_writes_ok);
		if (err && err != -EINVAL)
			violation("owned %s \"%.*s\": unexpected %s", path,
				  (int)c.len, c.buf, strerror(-err));
		if (!err && c.must_fail)
			violation("owned %s: invalid \"%.*s\" accepted", path,
				  (int)c.len, c.buf);
		/* A clean mask or word is stored, within the hard mask or not. */
		if (c.known && err)
			violation("owned %s: valid \"%.*s\" refused: %s", path,
				  (int)c.len, c.buf, strerror(-err));

		if (!err) {
			struct mreq m = c.req;

			/* An accepted odd spelling: what the level reads now. */
			if (!c.known && read_mreq(owned_pid, t, list, &m))
				violation("owned %s: \"%.*s\" taken, but the request does not read back",
					  path, (int)c.len, c.buf);
			if (which < 2)
				o[which].req = m;
			else
				own_proc_req = m;
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
 * gives: its own requests inherit (nobody writes them), so its process
 * request decides unless that inherits (source "process"; "none": no
 * preference), then its cgroup's own preference unless that inherits, then
 * the parent's (source "cgroup"; "none" or nothing: source "none"); the
 * mask is that & its hard mask, or the hard mask; the ratio likewise
 * (source "process", "cgroup" or "default").  Each cgroup's
 * cpuset.cpus.preferred.effective is its resolved list within its
 * cpuset.cpus.effective, empty for "none" or nothing.  The hard mask is the
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
	struct mreq pref[3];		/* own cpuset.cpus.preferred */
	struct rreq ratio[3];		/* own cpuset.cpus.preferred.ratio */
	int where;			/* 1: P0, 2: P1 */
	struct mreq req;		/* process request */
	struct rreq pratio;		/* process ratio */
};

/* The cgroup level for a task in P0 or P1 (@k 1, 2), or the parent's (0). */
static const struct mreq *cg_mask_of(const struct cgmodel *m, int k)
{
	return m->pref[k].st != RS_INHERIT ? &m->pref[k] : &m->pref[0];
}

static const struct rreq *cg_ratio_of(const struct cgmodel *m, int k)
{
	return m->ratio[k].st != RS_INHERIT ? &m->ratio[k] : &m->ratio[0];
}

/* 1 if thread @tid matches the model, 0 if not (in *why), -1 if gone. */
static int cgown_match(const struct cgmodel *m, pid_t tid, char *why,
		       size_t len)
{
	const struct mreq *mr = m->req.st != RS_INHERIT ? &m->req
							 : cg_mask_of(m, m->where);
	const struct rreq *rr = m->pratio.st != RS_INHERIT
					? &m->pratio
					: cg_ratio_of(m, m->where);
	const char *wsrc, *wrsrc;
	struct mreq tm, pm;
	struct rreq tr, pr;
	struct view a, b;
	uint64_t want;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	int r;

	r = read_status(cgown_pid, tid, &a);
	if (!r)
		r = read_mreq(cgown_pid, tid, true, &tm);
	if (!r)
		r = read_rreq(cgown_pid, tid, &tr);
	if (!r)
		r = read_mreq(cgown_pid, 0, true, &pm);
	if (!r)
		r = read_rreq(cgown_pid, 0, &pr);
	if (!r)
		r = read_status(cgown_pid, tid, &b);
	if (r == -2) {
		snprintf(why, len, "status or a soft_affinity file is garbled");
		return 0;
	}
	if (r)
		return -1;
	if (!view_eq(&a, &b)) {
		snprintf(why, len, "hard or preferred mask changed while read");
		return 0;
	}
	/* Nobody writes its threads' own requests; its process's, as written. */
	if (tm.st != RS_INHERIT || tr.st != RS_INHERIT ||
	    !mreq_eq(&pm, &m->req) || !rreq_eq(&pr, &m->pratio)) {
		snprintf(why, len,
			 "requests read thread %s ratio %s, process %s ratio %s; want inherit, inherit, %s, %s",
			 fmt_mreq(&tm, b1, sizeof(b1)), fmt_rreq(&tr, b2, sizeof(b2)),
			 fmt_mreq(&pm, b3, sizeof(b3)), fmt_rreq(&pr, b4, sizeof(b4)),
			 fmt_mreq(&m->req, b5, sizeof(b5)),
			 fmt_rreq(&m->pratio, b6, sizeof(b6)));
		return 0;
	}
	if (mr->st == RS_SET) {
		wsrc = mr == &m->req ? "process" : "cgroup";
		want = effective(mr->mask, a.hard);
	} else {
		wsrc = "none";
		want = a.hard;
	}
	if (rr->st == RS_SET)
		wrsrc = rr == &m->pratio ? "process" : "cgroup";
	else
		wrsrc = "default";
	if (a.pref != want || strcmp(a.src, wsrc) || strcmp(a.rsrc, wrsrc) ||
	    !ratio_shows(&a, rr)) {
		snprintf(why, len,
			 "preferred %llx source %s ratio %u:%u source %s; want %llx %s, ratio %s %s (hard %llx, in P%d)",
			 (unsigned long long)a.pref, a.src, a.ra, a.rp, a.rsrc,
			 (unsigned long long)want, wsrc,
			 rr->st == RS_SET ? fmt_rreq(rr, b1, sizeof(b1)) : "the sysctls'",
			 wrsrc, (unsigned long long)a.hard, m->where - 1);
		return 0;
	}
	return 1;
}

/*
 * cgroup @k's cpuset.cpus.preferred.effective: the nearest request of it
 * and its ancestors that does not inherit (above the parent nothing is
 * written), a list within its cpuset.cpus.effective; empty for "none" or
 * nothing.  1 if it matches the model, 0 if not (in *why).
 */
static int cgeff_match(const struct cgmodel *m, int k, char *why, size_t len)
{
	const struct mreq *r = cg_mask_of(m, k);
	char path[256], e1[256], e2[256], buf[256];
	uint64_t cpus, got, want;

	snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", pcg[k]);
	if (read_file(path, e1, sizeof(e1)) < 0) {
		snprintf(why, len, "%s unreadable", path);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.effective",
		 pcg[k]);
	if (read_file(path, buf, sizeof(buf)) < 0) {
		snprintf(why, len, "%s unreadable", path);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", pcg[k]);
	if (read_file(path, e2, sizeof(e2)) < 0 || strcmp(e1, e2)) {
		snprintf(why, len, "cpuset.cpus.effective changed while read");
		return 0;
	}
	if (softaff_parse_cpulist64(e1, &cpus) ||
	    softaff_parse_cpulist64(buf, &got)) {
		snprintf(why, len, "reads \"%.*s\" with cpuset.cpus.effective \"%.*s\": garbled",
			 (int)strcspn(buf, "\n"), buf, (int)strcspn(e1, "\n"), e1);
		return 0;
	}
	want = r->st == RS_SET ? r->mask & cpus : 0;
	if (got != want) {
		snprintf(why, len, "reads %llx, want %llx (request %s, cpuset.cpus.effective %llx)",
			 (unsigned long long)got, (unsigned long long)want,
			 fmt_mreq(r, e2, sizeof(e2)), (unsigned long long)cpus);
		return 0;
	}
	return 1;
}

static void cgown_verify(const struct cgmodel *m, const char *after)
{
	pid_t tids[MAX_TIDS];
	int n = list_tids(cgown_pid, tids, MAX_TIDS), j, i, k;

	for (j = 0; j < n && !stop; j++) {
		char why[512];
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
	for (k = 0; k < 3 && !stop; k++) {
		char why[512];
		int r = 0;

		count(C_checks_cgeffective);
		for (i = 0; i < 10; i++) {
			r = cgeff_match(m, k, why, sizeof(why));
			if (r)
				break;
			sleep_us(10000);
		}
		if (r == 0)
			violation("%s/cpuset.cpus.preferred.effective after %s: %s",
				  pcg[k], after, why);
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

			cg_pref_edit(&s, pcg[k], &m.pref[k], &m.ratio[k]);
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
			/*
			 * Its process request: CPU 0 and more, every CPU
			 * (covering the hard mask: stored all the same),
			 * inherit (its cgroup's applies) or none.
			 */
			unsigned int kind = rndn(&s, 6);
			struct mreq req = { RS_SET, 0 };
			char path[64], val[160];
			int err;

			if (kind < 4) {
				req.mask = kind < 3 ? 1 | random_cpus(&s) : all_mask;
				fmt_list(req.mask, val, sizeof(val));
			} else if (kind == 4) {
				req.st = RS_INHERIT;
				snprintf(val, sizeof(val), "%s",
					 rndn(&s, 2) ? "inherit\n" : "\n");
			} else {
				req.st = RS_NONE;
				snprintf(val, sizeof(val), "none\n");
			}
			snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list",
				 cgown_pid);
			err = write_file(path, val, strlen(val));
			count(C_cgown_writes);
			if (err) {
				violation("cgroup-owned: %s \"%s\": %s", path, val,
					  strerror(-err));
				continue;
			}
			m.req = req;
			snprintf(what, sizeof(what), "process request \"%.*s\"",
				 (int)strcspn(val, "\n"), val);
		} else if (r < 92) {
			char path[64], val[64];
			struct rreq want;
			int err;

			if (make_ratio(&s, val, sizeof(val), &want) != RC_OK) {
				snprintf(val, sizeof(val), "inherit\n");
				want.st = RS_INHERIT;
			}
			snprintf(path, sizeof(path), "/proc/%d/soft_affinity_ratio",
				 cgown_pid);
			err = write_file(path, val, strlen(val));
			count(C_cgown_writes);
			if (err) {
				violation("cgroup-owned: %s \"%s\": %s", path, val,
					  strerror(-err));
				continue;
			}
			m.pratio = want;
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
	/* Its hard masks are all CPUs and 0-1, whatever is offline now. */
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
