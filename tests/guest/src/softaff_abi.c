// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_abi: TAP tests for the soft affinity procfs, cgroup and sysctl
 * ABI, v4 (issue #24).
 *
 *   /proc/PID/task/TID/soft_affinity{,_list,_ratio}  the thread level
 *   /proc/PID/soft_affinity{,_list,_ratio}           the process level
 *   cpuset.cpus.preferred{,.ratio}                   the cgroup level
 *   cpuset.cpus.preferred.effective                  what applies in a cgroup
 *   /proc/PID/status, task/TID/status   Cpus_preferred{,_list,_source},
 *                                       Cpus_preferred_ratio{,_source}
 *   /proc/sys/kernel/sched_{preferred,allowed,soft_affinity_ratio}
 *
 * The model (abi-v4): each level is, for the mask and for the ratio apart,
 * in one of three states: inherit (written "", "\n" or "inherit", reads an
 * empty line), none (written and read "none") or set (a mask, a list or
 * "A:P", read back as written).  The first level not in inherit decides,
 * in the fixed order thread, process, cgroup (the nearest ancestor-or-self
 * not in inherit); none decides "no preference" (the mask) or the
 * sysctls' ratio.  The request files read the request at their level;
 * status shows what applies: Cpus_preferred is request & hard mask, or the
 * hard mask when no request is in effect (none, no level, a request that
 * misses or covers the hard mask), and the _source lines name the level
 * that decided (thread, process, cgroup, or none / default).  A request
 * outside the hard mask, covering it, of offline CPUs only, or to a
 * SCHED_FIFO/RR task is stored as written, never refused nor cleared.
 *
 * Runs as root in the guest (CPUs 0-3 at least).  Every error case checks
 * the errno and that nothing changed; every round trip writes back what a
 * read returned and checks that no request file, effective file or status
 * line moved.
 *
 * usage: softaff_abi [--print-self]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
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
#include <sys/inotify.h>
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

/* Read a small file exactly as it is (the newline kept); its length or -errno. */
static ssize_t read_raw(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
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
 * the guest has 4 CPUs.  Returns -1 on a parse error.
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

static const char *errname(int err)
{
	static char buf[4][32];
	static int slot;
	char *out;

	switch (-err) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ERANGE: return "ERANGE";
	case EOVERFLOW: return "EOVERFLOW";
	case ESPIPE: return "ESPIPE";
	case EIO: return "EIO";
	}
	out = buf[slot++ % 4];
	snprintf(out, 32, "%d", err);
	return out;
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

/* A rotating buffer for strings that end up in a message. */
static char *slot_buf(void)
{
	static char buf[64][256];
	static int slot;

	return buf[slot++ % 64];
}

/*
 * The request at a level as FILE (soft_affinity, soft_affinity_list,
 * soft_affinity_ratio) reads, without the newline: "" (inherit), "none" or
 * the value; "(ERRNO)" when the read fails.  tid > 0: the thread level;
 * else the process level.
 */
static const char *req_read(pid_t pid, pid_t tid, const char *file)
{
	char path[96], *out = slot_buf();
	int err;

	err = read_str(soft_path(path, sizeof(path), pid, tid, file), out, 256);
	if (err)
		snprintf(out, 256, "(%s)", errname(err));
	return out;
}

enum { R_INHERIT, R_NONE, R_SET };
static const char *const state_name[] = { "inherit", "none", "set" };

/*
 * Does the mask request at a level read as @state (and, when set, @mask),
 * in both soft_affinity and soft_affinity_list?
 */
static bool req_is(pid_t pid, pid_t tid, int state, uint64_t mask)
{
	const char *hex = req_read(pid, tid, "soft_affinity");
	const char *list = req_read(pid, tid, "soft_affinity_list");
	uint64_t h, l;

	if (state == R_INHERIT)
		return !*hex && !*list;
	if (state == R_NONE)
		return !strcmp(hex, "none") && !strcmp(list, "none");
	return !parse_hex(hex, &h) && !parse_list(list, &l) && h == mask &&
	       l == mask;
}

/* The mask request at a level, for messages: "hex|list". */
static const char *req_str(pid_t pid, pid_t tid)
{
	const char *hex = req_read(pid, tid, "soft_affinity");
	const char *list = req_read(pid, tid, "soft_affinity_list");
	char *out = slot_buf();

	/* three different slots of the ring */
	snprintf(out, 256, "\"%.100s\"|\"%.100s\"", hex, list);
	return out;
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

static int set_ratio(pid_t pid, pid_t tid, const char *s)
{
	char path[96];

	soft_path(path, sizeof(path), pid, tid, "soft_affinity_ratio");
	return write_str(path, s);
}

/*
 * A field of /proc/PID/task/TID/status (tid > 0) or of /proc/PID/status,
 * e.g. "Cpus_allowed".
 */
static int status_field(pid_t pid, pid_t tid, const char *field, char *out,
			size_t len)
{
	char path[96], line[512];
	size_t flen = strlen(field);
	FILE *f;
	int ret = -ENOENT;

	soft_path(path, sizeof(path), pid, tid, "status");
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

/* A status field in a rotating buffer; "?" if absent. */
static const char *status_str(pid_t pid, pid_t tid, const char *field)
{
	char *out = slot_buf();

	if (status_field(pid, tid, field, out, 256))
		snprintf(out, 256, "?");
	return out;
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

/* The effective preferred mask of a task (Cpus_preferred in its status). */
static uint64_t eff_of(pid_t pid, pid_t tid)
{
	return status_mask(pid, tid, "Cpus_preferred");
}

/* Cpus_preferred_source of a task: thread, process, cgroup, none ("?"). */
static const char *source_of(pid_t pid, pid_t tid)
{
	return status_str(pid, tid, "Cpus_preferred_source");
}

/* The ratio in force for a task and its source: "A:P SOURCE". */
static const char *ratio_of(pid_t pid, pid_t tid)
{
	char r[64], src[64], *out = slot_buf();

	if (status_field(pid, tid, "Cpus_preferred_ratio", r, sizeof(r)))
		snprintf(r, sizeof(r), "?");
	if (status_field(pid, tid, "Cpus_preferred_ratio_source", src, sizeof(src)))
		snprintf(src, sizeof(src), "?");
	snprintf(out, 256, "%s %s", r, src);
	return out;
}

/* The sysctls' ratio as "A:P"; with @src appended when given. */
static const char *sysctl_ratio(const char *src)
{
	char a[32], p[32], *out = slot_buf();

	if (read_str("/proc/sys/kernel/sched_allowed", a, sizeof(a)) ||
	    read_str("/proc/sys/kernel/sched_preferred", p, sizeof(p)))
		snprintf(out, 256, "?");
	else
		snprintf(out, 256, "%s:%s%s%s", a, p, src ? " " : "", src ? src : "");
	return out;
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
 * (0: none applies) under the hard mask @hard: their intersection, or the
 * hard mask when they are disjoint (a request covering the hard mask
 * gives the hard mask as its intersection).
 */
static uint64_t eff(uint64_t req, uint64_t hard)
{
	uint64_t m = req & hard;

	return m ? m : hard;
}

static int set_policy(pid_t tid, int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(tid, policy, &sp) ? -errno : 0;
}

/* printf into out at *o, never past len */
static void app(char *out, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*o >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *o, len - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
	if (*o > len - 1)
		*o = len - 1;
}

static const char *const cg_files[] = {
	"cpuset.cpus.preferred", "cpuset.cpus.preferred.ratio",
	"cpuset.cpus.preferred.effective",
};

/*
 * Everything that a round trip must leave alone, as one string: the
 * process's and each thread's request files, the cgroup's files (cg may
 * be NULL) and each thread's Cpus_preferred* status lines.
 */
static void snapshot(char *out, size_t len, pid_t pid, const pid_t *tids,
		     int n, const char *cg)
{
	static const char *const files[] = {
		"soft_affinity", "soft_affinity_list", "soft_affinity_ratio",
	};
	char path[160], buf[256], st[8192], *line, *save = NULL;
	size_t o = 0;
	int i, j;

	out[0] = '\0';
	for (j = -1; j < n; j++)
		for (i = 0; i < 3; i++)
			app(out, len, &o, "%d/%s=\"%s\" ", j < 0 ? 0 : tids[j],
			    files[i], req_read(pid, j < 0 ? 0 : tids[j], files[i]));
	for (i = 0; cg && i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", cg, cg_files[i]);
		if (read_str(path, buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "(unreadable)");
		app(out, len, &o, "%s=\"%s\" ", cg_files[i], buf);
	}
	for (j = 0; j < n; j++) {
		soft_path(path, sizeof(path), pid, tids[j], "status");
		if (read_raw(path, st, sizeof(st)) <= 0) {
			app(out, len, &o, "%d/status unreadable ", tids[j]);
			continue;
		}
		for (line = strtok_r(st, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			if (!strncmp(line, "Cpus_preferred", 14))
				app(out, len, &o, "%d/%s ", tids[j], line);
	}
}

/*
 * Round trip: every request file of the process, of each thread in @tids
 * and of cgroup @cg (may be NULL) is read and what it returned is written
 * back, byte for byte; after each write nothing may have changed (requests,
 * the cgroup's effective file, status lines).
 */
static void roundtrip(const char *label, pid_t pid, const pid_t *tids, int n,
		      const char *cg)
{
	static const char *const files[] = {
		"soft_affinity", "soft_affinity_list", "soft_affinity_ratio",
	};
	static char before[16384], after[16384];
	char path[160], raw[512], failed[1024] = "";
	size_t fo = 0;
	int i, j, nfiles = 0;

	snapshot(before, sizeof(before), pid, tids, n, cg);
	for (j = -1; j < n + 1; j++) {
		for (i = 0; i < 3; i++) {
			ssize_t len;
			int err;

			if (j < n) {
				soft_path(path, sizeof(path), pid,
					  j < 0 ? 0 : tids[j], files[i]);
			} else {
				if (!cg || i == 2)
					continue;	/* .effective is read-only */
				snprintf(path, sizeof(path), "%s/%s", cg,
					 cg_files[i]);
			}
			nfiles++;
			len = read_raw(path, raw, sizeof(raw));
			err = len < 0 ? (int)len : write_buf(path, raw, (size_t)len);
			snapshot(after, sizeof(after), pid, tids, n, cg);
			if (err || strcmp(before, after)) {
				app(failed, sizeof(failed), &fo, " %s (\"%.*s\": %s%s)",
				    path, (int)strcspn(raw, "\n"), raw, errname(err),
				    strcmp(before, after) ? ", changed" : "");
				if (strcmp(before, after))
					diag("round trip of %s changed:\n#  %s\n#  -> %s",
					     path, before, after);
				memcpy(before, after, sizeof(before));
			}
		}
	}
	ok(!*failed,
	   "round trip, %s: each of %d files, read and written back as read, changes nothing%s%s",
	   label, nfiles, *failed ? "; failed:" : "", failed);
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

/* This thread back to the start: SCHED_OTHER, every CPU, no request of its own. */
static void reset_self(void)
{
	set_policy(0, SCHED_OTHER, 0);
	set_hard(0, all_cpus);
	set_soft(self, gettid_(), "inherit\n");
	set_ratio(self, gettid_(), "inherit\n");
}

/* The process level back to inherit, mask and ratio. */
static void reset_proc(void)
{
	set_soft(self, 0, "inherit\n");
	set_ratio(self, 0, "inherit\n");
}

/* ------------------------------------------------------------------ */

static void test_files_and_defaults(void)
{
	static const char *const files[] = {
		"soft_affinity", "soft_affinity_list", "soft_affinity_ratio",
	};
	static const char *const lines[] = {
		"Cpus_preferred", "Cpus_preferred_list", "Cpus_preferred_source",
		"Cpus_preferred_ratio", "Cpus_preferred_ratio_source",
	};
	char buf[256], allowed[256], path[96], st[8192];
	pid_t tid = gettid_();
	ssize_t n;
	int i, lvl, err;

	for (lvl = 0; lvl < 2; lvl++) {
		for (i = 0; i < 3; i++) {
			soft_path(path, sizeof(path), self, lvl ? tid : 0, files[i]);
			n = read_raw(path, buf, sizeof(buf));
			ok(n == 1 && !strcmp(buf, "\n"),
			   "a new process: %s%s reads an empty line, inherit (%zd bytes, \"%.*s\")",
			   lvl ? "task/TID/" : "/proc/PID/", files[i], n,
			   (int)strcspn(buf, "\n"), buf);
		}
	}

	status_field(self, tid, "Cpus_allowed", allowed, sizeof(allowed));
	err = status_field(self, tid, "Cpus_preferred", buf, sizeof(buf));
	ok(!err && !strcmp(buf, allowed),
	   "status has Cpus_preferred \"%s\" equal to Cpus_allowed \"%s\"", buf,
	   allowed);
	status_field(self, tid, "Cpus_allowed_list", allowed, sizeof(allowed));
	err = status_field(self, tid, "Cpus_preferred_list", buf, sizeof(buf));
	ok(!err && !strcmp(buf, allowed),
	   "status has Cpus_preferred_list \"%s\" equal to Cpus_allowed_list",
	   buf);
	ok(!strcmp(source_of(self, tid), "none"),
	   "status has Cpus_preferred_source \"%s\", want \"none\"",
	   source_of(self, tid));
	ok(!strcmp(ratio_of(self, tid), sysctl_ratio("default")),
	   "status has Cpus_preferred_ratio and _source \"%s\", want the sysctls' \"%s\"",
	   ratio_of(self, tid), sysctl_ratio("default"));

	/* The five lines, one after the other, in this order. */
	for (lvl = 0; lvl < 2; lvl++) {
		char *p = NULL, *prev = NULL;
		bool in_order = true;

		soft_path(path, sizeof(path), self, lvl ? tid : 0, "status");
		n = read_raw(path, st, sizeof(st));
		for (i = 0; n > 0 && i < 5 && in_order; i++) {
			char key[64];

			snprintf(key, sizeof(key), "\n%s:", lines[i]);
			p = strstr(st, key);
			/* each the line after the one before */
			if (!p || (prev && (p < prev || memchr(prev + 1, '\n',
							      (size_t)(p - prev - 1)))))
				in_order = false;
			prev = p;
		}
		ok(n > 0 && in_order,
		   "%s/status: Cpus_preferred, _list, _source, _ratio, _ratio_source, one after the other (missing or out of order from %s)",
		   lvl ? "task/TID" : "/proc/PID", in_order ? "-" : lines[i - 1]);
	}

	for (i = 0; i < 3; i++) {
		struct stat sb;
		int serr;

		soft_path(path, sizeof(path), self, 0, files[i]);
		serr = stat(path, &sb);
		ok(!serr && (sb.st_mode & 0777) == 0666, "%s is mode 0666 (%o)",
		   files[i], serr ? 0 : sb.st_mode & 0777);
	}
}

/* The thread level: formats, words, round trips. */
static void test_roundtrip(void)
{
	pid_t tid = gettid_();
	char path[96], buf[256], buf2[256];
	uint64_t m;
	int err;

	soft_path(path, sizeof(path), self, tid, "soft_affinity");

	err = set_soft(self, tid, "3\n");
	read_str(path, buf, sizeof(buf));
	ok(!err && !parse_hex(buf, &m) && m == 0x3,
	   "write \"3\" reads back \"%s\" (%s)", buf, errname(err));
	ok(!strcmp(req_read(self, tid, "soft_affinity_list"), "0-1"),
	   "soft_affinity_list reads \"%s\", want \"0-1\"",
	   req_read(self, tid, "soft_affinity_list"));
	ok(eff_of(self, tid) == 0x3 &&
	   !strcmp(status_str(self, tid, "Cpus_preferred_list"), "0-1"),
	   "Cpus_preferred and Cpus_preferred_list in status follow (%llx)",
	   (unsigned long long)eff_of(self, tid));
	ok(!strcmp(source_of(self, tid), "thread"),
	   "Cpus_preferred_source: thread (%s)", source_of(self, tid));
	ok(req_is(self, 0, R_INHERIT, 0),
	   "the process level still reads empty (%s)", req_str(self, 0));

	/* What is read can be written back as-is. */
	err = write_str(path, buf);
	read_str(path, buf2, sizeof(buf2));
	ok(!err && !strcmp(buf, buf2), "hex read-back \"%s\" writes back (%s)",
	   buf2, errname(err));

	err = set_soft(self, tid, "5");		/* no newline */
	ok(!err && req_is(self, tid, R_SET, 0x5) && eff_of(self, tid) == 0x5,
	   "write \"5\" without newline (%s, %s)", errname(err), req_str(self, tid));

	err = set_soft_list(self, tid, "0,2-3\n");
	ok(!err && req_is(self, tid, R_SET, 0xd),
	   "list write \"0,2-3\" gives hex d (%s, %s)", req_str(self, tid),
	   errname(err));
	ok(!strcmp(req_read(self, tid, "soft_affinity_list"), "0,2-3"),
	   "list reads back \"%s\"", req_read(self, tid, "soft_affinity_list"));
	soft_path(path, sizeof(path), self, tid, "soft_affinity_list");
	err = write_str(path, req_read(self, tid, "soft_affinity_list"));
	ok(!err && req_is(self, tid, R_SET, 0xd), "list read-back writes back (%s)",
	   errname(err));

	err = set_soft_list(self, tid, "1");
	ok(!err && req_is(self, tid, R_SET, 0x2), "list \"1\" is CPU 1, not a mask (%s)",
	   req_str(self, tid));
	err = set_soft(self, tid, "1");
	ok(!err && req_is(self, tid, R_SET, 0x1), "hex \"1\" is CPU 0 (%s)",
	   req_str(self, tid));

	/* Leading zeros. */
	err = set_soft(self, tid, "00000006");
	ok(!err && req_is(self, tid, R_SET, 0x6), "hex with leading zeros (%s, %s)",
	   errname(err), req_str(self, tid));

	/* The whole hard mask: stored as written, the hard mask applies. */
	err = set_soft_mask(self, tid, all_cpus);
	ok(!err && req_is(self, tid, R_SET, all_cpus),
	   "writing the whole hard mask is stored: reads %s (%s)",
	   req_str(self, tid), errname(err));
	ok(eff_of(self, tid) == hard_of(0) && !strcmp(source_of(self, tid), "thread"),
	   "... Cpus_preferred is the hard mask (%llx), source still thread (%s)",
	   (unsigned long long)eff_of(self, tid), source_of(self, tid));

	/* The words. */
	err = set_soft(self, tid, "none\n");
	ok(!err && req_is(self, tid, R_NONE, 0),
	   "\"none\" to the hex file: both files read \"none\" (%s, %s)",
	   req_str(self, tid), errname(err));
	ok(eff_of(self, tid) == hard_of(0) && !strcmp(source_of(self, tid), "none"),
	   "... Cpus_preferred is the hard mask (%llx), source none (%s)",
	   (unsigned long long)eff_of(self, tid), source_of(self, tid));
	roundtrip("thread level none", self, &tid, 1, NULL);
	err = set_soft(self, tid, "inherit\n");
	ok(!err && req_is(self, tid, R_INHERIT, 0) &&
	   !strcmp(source_of(self, tid), "none"),
	   "\"inherit\" to the hex file: both read empty, source none (%s, %s, %s)",
	   req_str(self, tid), source_of(self, tid), errname(err));
	roundtrip("thread level inherit", self, &tid, 1, NULL);
	set_soft(self, tid, "3");
	err = set_soft(self, tid, "\n");
	ok(!err && req_is(self, tid, R_INHERIT, 0),
	   "an empty line (echo > soft_affinity) is inherit (%s, %s)",
	   req_str(self, tid), errname(err));
	set_soft(self, tid, "3");
	err = set_soft(self, tid, "inherit");
	ok(!err && req_is(self, tid, R_INHERIT, 0),
	   "\"inherit\" without newline (%s, %s)", req_str(self, tid), errname(err));
	err = set_soft(self, tid, "none");
	ok(!err && req_is(self, tid, R_NONE, 0),
	   "\"none\" without newline (%s, %s)", req_str(self, tid), errname(err));
	set_soft(self, tid, "3");
	err = set_soft_list(self, tid, "none\n");
	ok(!err && req_is(self, tid, R_NONE, 0),
	   "\"none\" to the list file (%s, %s)", req_str(self, tid), errname(err));
	err = set_soft_list(self, tid, "inherit\n");
	ok(!err && req_is(self, tid, R_INHERIT, 0),
	   "\"inherit\" to the list file (%s, %s)", req_str(self, tid), errname(err));
	set_soft_list(self, tid, "2-3");
	err = set_soft_list(self, tid, "\n");
	ok(!err && req_is(self, tid, R_INHERIT, 0),
	   "an empty line to the list file is inherit (%s, %s)", req_str(self, tid),
	   errname(err));

	/* A 0-byte write: the empty value (inherit), or refused and nothing changed. */
	set_soft(self, tid, "3");
	err = set_soft(self, tid, "");
	ok((err == 0 && req_is(self, tid, R_INHERIT, 0)) ||
	   (err == -EINVAL && req_is(self, tid, R_SET, 0x3)),
	   "a 0-byte write to the hex file: inherit, or EINVAL with 3 kept (%s, %s)",
	   errname(err), req_str(self, tid));
	set_soft(self, tid, "3");
	err = set_soft_list(self, tid, "");
	ok((err == 0 && req_is(self, tid, R_INHERIT, 0)) ||
	   (err == -EINVAL && req_is(self, tid, R_SET, 0x3)),
	   "a 0-byte write to the list file: inherit, or EINVAL with 3 kept (%s, %s)",
	   errname(err), req_str(self, tid));

	set_soft_list(self, tid, "1-2");
	roundtrip("thread level 1-2", self, &tid, 1, NULL);
	reset_self();
}

/* Snapshot of one thread and its process, for "nothing changed". */
static void snap_self(char *out, size_t len, pid_t tid)
{
	snapshot(out, len, self, &tid, 1, NULL);
}

static void check_einval_file(pid_t tid, const char *file, const char *what,
			      const char *buf, size_t len)
{
	static char before[8192], after[8192];
	char path[96];
	int err;

	snap_self(before, sizeof(before), tid);
	soft_path(path, sizeof(path), self, tid, file);
	err = write_buf(path, buf, len);
	snap_self(after, sizeof(after), tid);
	ok(err == -EINVAL && !strcmp(before, after),
	   "%s%s: %s, nothing changed%s (%s)", tid > 0 ? "task/TID/" : "/proc/PID/",
	   file, errname(err), strcmp(before, after) ? " NOT TRUE" : "", what);
}

static void check_einval(pid_t tid, const char *what, const char *buf,
			 size_t len, bool list)
{
	check_einval_file(tid, list ? "soft_affinity_list" : "soft_affinity",
			  what, buf, len);
}

static void test_errors(void)
{
	pid_t tid = gettid_();
	char buf[64], *big;
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);

	set_soft(self, tid, "6");	/* a request to keep */
	set_soft(self, 0, "none");	/* and one at the process level */

	check_einval(tid, "empty mask \"0\"", "0\n", 2, false);
	check_einval(tid, "empty mask \"00000000\"", "00000000\n", 9, false);
	check_einval(tid, "garbage \"zz\"", "zz\n", 3, false);
	check_einval(tid, "garbage list \"a-b\"", "a-b\n", 4, true);
	check_einval(tid, "list \"1-0\"", "1-0\n", 4, true);
	check_einval(tid, "hex with a list \"0-1\"", "0-1\n", 4, false);
	check_einval(tid, "the old word \"default\"", "default\n", 8, false);
	check_einval(tid, "the old word \"default\" to the list", "default\n", 8, true);
	check_einval(tid, "\"nonex\"", "nonex\n", 6, false);
	check_einval(tid, "\"none 1\"", "none 1\n", 7, true);
	check_einval(tid, "\"inherits\"", "inherits\n", 9, true);
	check_einval(tid, "\"none,1\"", "none,1\n", 7, true);

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

	/* The process files refuse the same way. */
	check_einval(0, "empty mask \"0\" to the process", "0\n", 2, false);
	check_einval(0, "\"default\" to the process list", "default\n", 8, true);

	reset_self();
	reset_proc();
}

/*
 * Stored since #13, and now also when it covers the hard mask: a request
 * outside the hard mask is kept as written; the thread falls back to its
 * hard mask and gets the request when the hard mask grows again.
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
	m = eff_of(self, tid);
	ok(!err && req_is(self, tid, R_SET, 0x4) && m == 0x3,
	   "hard 0-1, request CPU 2 (disjoint): stored (%s, %s), Cpus_preferred the hard mask (%llx)",
	   errname(err), req_str(self, tid), (unsigned long long)m);
	ok(!strcmp(source_of(self, tid), "thread"),
	   "... Cpus_preferred_source: thread, the level that decided (%s)",
	   source_of(self, tid));
	set_hard(0, all_cpus);
	m = eff_of(self, tid);
	ok(m == 0x4, "hard mask 0-3 again: the stored request 2 is in effect (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x3);
	err = set_soft(self, tid, "6\n");
	m = eff_of(self, tid);
	ok(!err && req_is(self, tid, R_SET, 0x6) && m == 0x2,
	   "hard 0-1, request 1-2 (partly outside): stored (%s, %s), Cpus_preferred 1 (%llx)",
	   errname(err), req_str(self, tid), (unsigned long long)m);
	err = set_soft_list(self, tid, "1-3\n");
	m = eff_of(self, tid);
	ok(!err && req_is(self, tid, R_SET, 0xe) && m == 0x2,
	   "list 1-3 under hard 0-1: stored (%s, %s), Cpus_preferred 1 (%llx)",
	   errname(err), req_str(self, tid), (unsigned long long)m);
	set_hard(0, 0xe);
	m = eff_of(self, tid);
	ok(m == 0xe && req_is(self, tid, R_SET, 0xe),
	   "hard 1-3: the request 1-3 covers it, Cpus_preferred 1-3 (%llx), the request still reads 1-3",
	   (unsigned long long)m);
	set_hard(0, all_cpus);
	m = eff_of(self, tid);
	ok(m == 0xe, "hard 0-3: request 1-3 in effect (%llx)",
	   (unsigned long long)m);

	/* A write that covers the hard mask is stored, not cleared (abi-v4). */
	set_hard(0, 0x3);
	err = set_soft(self, tid, "3\n");
	m = eff_of(self, tid);
	ok(!err && req_is(self, tid, R_SET, 0x3) && m == 0x3 &&
	   !strcmp(source_of(self, tid), "thread"),
	   "hard 0-1, request 0-1 (== hard): stored (%s, %s), Cpus_preferred the hard mask, source %s",
	   errname(err), req_str(self, tid), source_of(self, tid));
	err = set_soft(self, tid, "f\n");
	ok(!err && req_is(self, tid, R_SET, 0xf) && eff_of(self, tid) == 0x3,
	   "hard 0-1, request 0-3 (covers it): stored (%s, %s)", errname(err),
	   req_str(self, tid));
	set_soft(self, tid, "3\n");
	set_hard(0, all_cpus);
	m = eff_of(self, tid);
	ok(m == 0x3, "hard 0-3 again: the request 0-1 written under hard 0-1 is in effect (%llx)",
	   (unsigned long long)m);
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
		char allowed[256], path[64], before[512], after[512];
		int err;

		snprintf(before, sizeof(before), "%s %s", req_str(found, found),
			 status_str(found, found, "Cpus_preferred"));
		status_field(found, found, "Cpus_allowed", allowed,
			     sizeof(allowed));
		snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity",
			 found, found);
		err = write_str(path, allowed);
		snprintf(after, sizeof(after), "%s %s", req_str(found, found),
			 status_str(found, found, "Cpus_preferred"));
		ok(err == -EINVAL && !strcmp(before, after),
		   "PF_NO_SETAFFINITY kthread %d: %s, request and Cpus_preferred unchanged (%s)",
		   found, errname(err), after);
	}
}

static void test_policies(void)
{
	pid_t tid = gettid_();
	int err;

	set_soft(self, tid, "2");

	err = set_policy(0, SCHED_FIFO, 1);
	if (err) {
		skip("cannot switch to SCHED_FIFO", "SCHED_FIFO cases");
		return;
	}
	ok(req_is(self, tid, R_SET, 0x2), "request kept after switching to SCHED_FIFO (%s)",
	   req_str(self, tid));
	/* Stored while real-time, unused until fair-class again (#13). */
	err = set_soft(self, tid, "1\n");
	ok(!err && req_is(self, tid, R_SET, 0x1),
	   "write while SCHED_FIFO: accepted (%s), stored (%s)", errname(err),
	   req_str(self, tid));
	err = set_soft_list(self, tid, "3\n");
	ok(!err && req_is(self, tid, R_SET, 0x8),
	   "list write while SCHED_FIFO: accepted (%s), stored (%s)",
	   errname(err), req_str(self, tid));
	check_einval(tid, "empty mask while SCHED_FIFO", "0\n", 2, false);
	set_policy(0, SCHED_RR, 1);
	err = set_soft(self, tid, "2\n");
	ok(!err && req_is(self, tid, R_SET, 0x2),
	   "write while SCHED_RR: accepted (%s), stored (%s)", errname(err),
	   req_str(self, tid));
	set_policy(0, SCHED_OTHER, 0);
	ok(eff_of(self, tid) == 0x2 && !strcmp(source_of(self, tid), "thread"),
	   "the request made while SCHED_RR is in effect under SCHED_OTHER (%llx, %s)",
	   (unsigned long long)eff_of(self, tid), source_of(self, tid));
	err = set_soft(self, tid, "1");
	ok(!err && eff_of(self, tid) == 0x1, "writable under SCHED_OTHER");

	err = set_policy(0, SCHED_BATCH, 0);
	err = err ? err : set_soft(self, tid, "4");
	ok(!err && req_is(self, tid, R_SET, 0x4) && eff_of(self, tid) == 0x4,
	   "SCHED_BATCH accepts a mask (%s)", errname(err));
	err = set_policy(0, SCHED_IDLE, 0);
	err = err ? err : set_soft(self, tid, "8");
	ok(!err && req_is(self, tid, R_SET, 0x8) && eff_of(self, tid) == 0x8,
	   "SCHED_IDLE accepts a mask (%s)", errname(err));
	reset_self();
}

/* ESRCH: a file kept open after its thread exited. */
/* @text through @fd, opened on a thread that has exited since: ESRCH. */
static void write_exited(int fd, const char *text, const char *what)
{
	ssize_t n = -1;

	if (fd >= 0) {
		errno = 0;
		n = write(fd, text, strlen(text));
	}
	ok(fd >= 0 && n < 0 && errno == ESRCH, "%s: %s", what,
	   n < 0 ? errname(-errno) : "succeeded");
}

static void test_esrch(void)
{
	struct parked p[1];
	char path[96];
	int fd, fd2;

	if (park_start(p, 1)) {
		ok(false, "start a thread");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity", self,
		 p[0].tid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/soft_affinity_ratio", self,
		 p[0].tid);
	fd2 = open(path, O_WRONLY | O_CLOEXEC);
	park_stop(p, 1);
	/*
	 * pthread_join() returns when the kernel clears the tid in
	 * mm_release(), before the thread is reaped: wait for its directory
	 * to go away.
	 */
	snprintf(path, sizeof(path), "/proc/%d/task/%d", self, p[0].tid);
	for (int i = 0; i < 500 && access(path, F_OK) == 0; i++)
		usleep(10000);
	write_exited(fd, "1\n", "write to an exited thread through an open fd");
	write_exited(fd, "inherit\n",
		     "\"inherit\" to an exited thread through an open fd");
	write_exited(fd2, "5:4\n", "a ratio to an exited thread through an open fd");
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
}

/* ------------------------------------------------------------------ */
/* Permissions: run in a child that drops to nobody. */

static void test_perm(void)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	int pfd[2], status;
	char res[1024], root_before[512], self_before[512], ratio_before[64];
	ssize_t n;
	pid_t pid;

	snprintf(root_before, sizeof(root_before), "%s", req_str(1, 0));
	snprintf(self_before, sizeof(self_before), "%s", req_str(self, 0));
	snprintf(ratio_before, sizeof(ratio_before), "%s",
		 req_read(self, 0, "soft_affinity_ratio"));
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		char path[96], st[8192];
		int e1, e2, e3, e5, e6, e7, e8, e9, lines = 0;
		ssize_t k;

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
		/* Own task and process. */
		e5 = set_soft(getpid(), gettid_(), "2\n");
		e6 = set_soft(getpid(), 0, "3\n");
		e7 = set_ratio(getppid(), 0, "5:4\n");
		e8 = set_soft(getppid(), 0, "none\n");
		e9 = set_soft_list(getppid(), 0, "inherit\n");
		/* Reading root's status: the Cpus_preferred* lines are there. */
		k = read_raw("/proc/1/status", st, sizeof(st));
		for (char *p = st; k > 0 && (p = strstr(p, "\nCpus_preferred")); p++)
			lines++;
		/* Reading root's request is allowed: the last line. */
		dprintf(pfd[1], "%d %d %d %d %d %d %d %d %d\n%s\n%s\n", e1, e2, e3,
			e5, e6, e7, e8, e9, lines, req_str(getpid(), 0),
			req_str(1, 0));
		_exit(0);
	}
	close(pfd[1]);
	n = 0;
	for (;;) {
		ssize_t k = read(pfd[0], res + n, sizeof(res) - 1 - (size_t)n);

		if (k <= 0)
			break;
		n += k;
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (n <= 0) {
		ok(false, "unprivileged child reported results (status %d)",
		   status);
		return;
	}
	res[n] = '\0';
	{
		int e1, e2, e3, e5, e6, e7, e8, e9, lines;
		char *own, *root_read, *nl;

		own = strchr(res, '\n');
		root_read = own ? strchr(own + 1, '\n') : NULL;
		if (sscanf(res, "%d %d %d %d %d %d %d %d %d", &e1, &e2, &e3,
			   &e5, &e6, &e7, &e8, &e9, &lines) != 9 || !root_read) {
			ok(false, "unprivileged child output \"%s\"", res);
			return;
		}
		*own++ = '\0';
		*root_read++ = '\0';
		nl = strchr(root_read, '\n');
		if (nl)
			*nl = '\0';
		ok(e1 == -EPERM, "nobody writing pid 1: %s", errname(e1));
		ok(e2 == -EPERM, "nobody writing a root thread: %s",
		   errname(e2));
		ok(e3 == -EPERM, "nobody writing a root process list: %s",
		   errname(e3));
		ok(e8 == -EPERM, "nobody writing \"none\" to a root process: %s",
		   errname(e8));
		ok(e9 == -EPERM, "nobody writing \"inherit\" to a root process: %s",
		   errname(e9));
		ok(!strcmp(req_str(1, 0), root_before) &&
		   !strcmp(req_str(self, 0), self_before),
		   "root's requests unchanged (%s, %s)", req_str(1, 0),
		   req_str(self, 0));
		ok(!strcmp(root_read, root_before),
		   "nobody can read root's request (%s, root reads %s)", root_read,
		   root_before);
		ok(lines == 5,
		   "nobody reading /proc/1/status sees the 5 Cpus_preferred* lines (%d)",
		   lines);
		ok(e5 == 0, "nobody writing its own thread: %s", errname(e5));
		{
			char hex[64] = "", list[64] = "";
			uint64_t m = 0;

			sscanf(own, "\"%63[^\"]\"|\"%63[^\"]\"", hex, list);
			ok(e6 == 0 && !parse_hex(hex, &m) && m == 0x3 &&
			   !strcmp(list, "0-1"),
			   "nobody writing its own process: %s, reads %s", errname(e6),
			   own);
		}
		ok(e7 == -EPERM &&
		   !strcmp(req_read(self, 0, "soft_affinity_ratio"), ratio_before),
		   "nobody writing a root process's soft_affinity_ratio: %s (\"%s\")",
		   errname(e7), req_read(self, 0, "soft_affinity_ratio"));
	}
}

/* ------------------------------------------------------------------ */

#define NTHREADS 16

/* Every parked thread but @skip_tid prefers @m, from @src. */
static bool all_threads_are(struct parked *p, int n, uint64_t m,
			    const char *src, pid_t skip_tid)
{
	int i;

	for (i = 0; i < n; i++) {
		if (p[i].tid == skip_tid)
			continue;
		if (eff_of(self, p[i].tid) != m ||
		    strcmp(source_of(self, p[i].tid), src)) {
			diag("thread %d: Cpus_preferred %llx, source %s; want %llx, %s",
			     p[i].tid, (unsigned long long)eff_of(self, p[i].tid),
			     source_of(self, p[i].tid), (unsigned long long)m, src);
			return false;
		}
	}
	return true;
}

/* Fixed precedence: a thread's own request, then its process's. */
static void test_process_vs_thread(void)
{
	struct parked p[NTHREADS];
	pid_t me = gettid_(), p5;
	int err;

	if (park_start(p, NTHREADS)) {
		ok(false, "start %d threads", NTHREADS);
		return;
	}
	p5 = p[5].tid;

	err = set_soft(self, p5, "4\n");
	ok(!err && req_is(self, p5, R_SET, 0x4) && eff_of(self, p5) == 0x4 &&
	   !strcmp(source_of(self, p5), "thread"),
	   "task/TID write sets that thread: request %s, Cpus_preferred %llx, source %s",
	   req_str(self, p5), (unsigned long long)eff_of(self, p5),
	   source_of(self, p5));
	ok(all_threads_are(p, NTHREADS, all_cpus, "none", p5) &&
	   eff_of(self, me) == all_cpus && !strcmp(source_of(self, me), "none"),
	   "... and no other thread (source none)");
	ok(req_is(self, 0, R_INHERIT, 0) && req_is(self, p[0].tid, R_INHERIT, 0),
	   "/proc/PID and another thread's files still read empty (%s, %s)",
	   req_str(self, 0), req_str(self, p[0].tid));

	err = set_soft(self, 0, "3\n");
	ok(!err && req_is(self, 0, R_SET, 0x3),
	   "/proc/PID write: /proc/PID reads the process request %s (%s)",
	   req_str(self, 0), errname(err));
	ok(all_threads_are(p, NTHREADS, 0x3, "process", p5) &&
	   eff_of(self, me) == 0x3 && !strcmp(source_of(self, me), "process"),
	   "... every thread without its own request: 0-1, source process (%d threads)",
	   NTHREADS);
	ok(eff_of(self, p5) == 0x4 && !strcmp(source_of(self, p5), "thread"),
	   "the thread with its own request keeps it though the process was written later (%llx, %s)",
	   (unsigned long long)eff_of(self, p5), source_of(self, p5));
	ok(req_is(self, p[0].tid, R_INHERIT, 0) && req_is(self, me, R_INHERIT, 0) &&
	   req_is(self, p5, R_SET, 0x4),
	   "a process write leaves the thread-level files alone (%s, %s, %s)",
	   req_str(self, p[0].tid), req_str(self, me), req_str(self, p5));

	err = set_soft_list(self, 0, "2-3\n");
	ok(!err && all_threads_are(p, NTHREADS, 0xc, "process", p5) &&
	   eff_of(self, me) == 0xc && eff_of(self, p5) == 0x4,
	   "/proc/PID/soft_affinity_list 2-3: every thread but the one with its own (%s)",
	   errname(err));
	ok(!strcmp(req_read(self, 0, "soft_affinity_list"), "2-3"),
	   "/proc/PID/soft_affinity_list reads \"%s\" as written",
	   req_read(self, 0, "soft_affinity_list"));

	/* The leader's own request is not the process's. */
	set_soft(self, me, "1");
	ok(req_is(self, 0, R_SET, 0xc) && req_is(self, me, R_SET, 0x1),
	   "/proc/PID reads the process request (%s), not the leader's own (%s)",
	   req_str(self, 0), req_str(self, me));
	ok(eff_of(self, 0) == 0x1 && !strcmp(source_of(self, 0), "thread"),
	   "/proc/PID/status is the leader's: Cpus_preferred %llx, source %s",
	   (unsigned long long)eff_of(self, 0), source_of(self, 0));

	/* none at the thread level: no preference, whatever the process says. */
	err = set_soft(self, p[0].tid, "none\n");
	ok(!err && req_is(self, p[0].tid, R_NONE, 0) &&
	   eff_of(self, p[0].tid) == all_cpus &&
	   !strcmp(source_of(self, p[0].tid), "none"),
	   "a thread's \"none\" beats the process's 2-3: Cpus_preferred %llx, source %s",
	   (unsigned long long)eff_of(self, p[0].tid), source_of(self, p[0].tid));
	ok(eff_of(self, p[1].tid) == 0xc && req_is(self, 0, R_SET, 0xc),
	   "... for that thread only");
	err = set_soft_list(self, p[0].tid, "inherit\n");
	ok(!err && req_is(self, p[0].tid, R_INHERIT, 0) &&
	   eff_of(self, p[0].tid) == 0xc &&
	   !strcmp(source_of(self, p[0].tid), "process"),
	   "back to inherit: the process's 2-3 again (%llx, %s)",
	   (unsigned long long)eff_of(self, p[0].tid), source_of(self, p[0].tid));
	{
		pid_t tids[3] = { me, p[0].tid, p5 };

		roundtrip("process 2-3, leader 1, thread 4", self, tids, 3, NULL);
	}

	/* none at the process level. */
	err = set_soft(self, 0, "none\n");
	ok(!err && req_is(self, 0, R_NONE, 0) &&
	   all_threads_are(p, NTHREADS, all_cpus, "none", p5),
	   "process \"none\": /proc/PID reads none, every thread without its own: none (%s)",
	   errname(err));
	ok(eff_of(self, p5) == 0x4 && eff_of(self, me) == 0x1 &&
	   !strcmp(source_of(self, me), "thread"),
	   "... the threads with their own keep them (%llx, %llx)",
	   (unsigned long long)eff_of(self, p5), (unsigned long long)eff_of(self, me));
	{
		pid_t tids[2] = { me, p[0].tid };

		roundtrip("process none", self, tids, 2, NULL);
	}

	/* A process request that covers the hard mask is stored. */
	err = set_soft_mask(self, 0, all_cpus);
	ok(!err && req_is(self, 0, R_SET, all_cpus) &&
	   all_threads_are(p, NTHREADS, all_cpus, "process", p5),
	   "a process write of the whole hard mask is stored (%s), source process, Cpus_preferred the hard mask",
	   req_str(self, 0));

	err = set_soft(self, 0, "inherit\n");
	ok(!err && req_is(self, 0, R_INHERIT, 0) &&
	   all_threads_are(p, NTHREADS, all_cpus, "none", p5),
	   "process \"inherit\": /proc/PID reads empty, the threads without their own: none (%s)",
	   errname(err));
	set_soft(self, me, "inherit");
	set_soft(self, p5, "inherit");

	/* One thread's hard mask excludes the request: stored, it falls back. */
	set_hard(p[9].tid, 0xc);
	err = set_soft(self, 0, "1\n");
	ok(!err, "process write with one thread's hard mask disjoint: accepted (%s)",
	   errname(err));
	ok(all_threads_are(p, NTHREADS, 0x1, "process", p[9].tid) &&
	   eff_of(self, me) == 0x1 && eff_of(self, p[9].tid) == 0xc &&
	   !strcmp(source_of(self, p[9].tid), "process"),
	   "... every thread prefers 0, the disjoint one its hard mask (%llx, source %s)",
	   (unsigned long long)eff_of(self, p[9].tid), source_of(self, p[9].tid));
	set_hard(p[9].tid, all_cpus);
	ok(eff_of(self, p[9].tid) == 0x1,
	   "the disjoint thread gets the process request on re-expand (%llx)",
	   (unsigned long long)eff_of(self, p[9].tid));

	/* One SCHED_FIFO thread: stored for it too. */
	if (set_policy(p[12].tid, SCHED_FIFO, 1) == 0) {
		err = set_soft(self, 0, "4\n");
		ok(!err && all_threads_are(p, NTHREADS, 0x4, "process", 0) &&
		   eff_of(self, me) == 0x4,
		   "process write with one SCHED_FIFO thread: accepted (%s), every thread has it",
		   errname(err));
		set_policy(p[12].tid, SCHED_OTHER, 0);
		ok(eff_of(self, p[12].tid) == 0x4,
		   "the FIFO thread back to SCHED_OTHER keeps it");
	} else {
		skip("SCHED_FIFO not available", "process write, one FIFO thread");
	}

	park_stop(p, NTHREADS);
	reset_self();
	reset_proc();
}

/*
 * Issue #24: `taskset -p -c 1 $PID` pins the leader only; then
 * `echo 0-1 > /proc/$PID/soft_affinity_list` covered the leader's hard
 * mask and was silently dropped.  Now it is stored as written and every
 * thread gets it.
 */
static void *later_fn(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, gettid_(), __ATOMIC_RELEASE);
	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) > 0)
		usleep(1000);
	return NULL;
}

static void test_leader_pinned(void)
{
	struct parked p[4];
	pid_t me = gettid_(), later = 0;
	pthread_t lt;
	char path[96];
	int err;

	if (me != self) {
		skip("not the leader", "leader-pinned write");
		return;
	}
	if (park_start(p, 4)) {
		ok(false, "start 4 threads");
		return;
	}
	err = set_hard(0, 0x2);		/* taskset -p -c 1 $PID: the leader only */
	ok(!err && hard_of(me) == 0x2 && hard_of(p[0].tid) == all_cpus,
	   "taskset -p -c 1 on the leader: leader hard 1, the others all (%s)",
	   errname(err));
	snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", self);
	err = write_str(path, "0-1\n");
	ok(!err, "echo 0-1 > /proc/PID/soft_affinity_list: accepted (%s)",
	   errname(err));
	ok(!strcmp(req_read(self, 0, "soft_affinity_list"), "0-1") &&
	   req_is(self, 0, R_SET, 0x3),
	   "it is stored as written: /proc/PID/soft_affinity_list reads \"%s\" (%s)",
	   req_read(self, 0, "soft_affinity_list"), req_str(self, 0));
	ok(all_threads_are(p, 4, 0x3, "process", 0),
	   "every other thread: Cpus_preferred_list 0-1, source process");
	ok(eff_of(self, me) == 0x2 &&
	   !strcmp(status_str(self, 0, "Cpus_preferred_list"), "1") &&
	   !strcmp(source_of(self, 0), "process"),
	   "the leader (request covers its hard mask): /proc/PID/status Cpus_preferred_list %s, source %s",
	   status_str(self, 0, "Cpus_preferred_list"), source_of(self, 0));
	if (pthread_create(&lt, NULL, later_fn, &later) == 0) {
		while (!__atomic_load_n(&later, __ATOMIC_ACQUIRE))
			usleep(1000);
		/* It inherits the leader's hard mask, CPU 1, as clone does. */
		ok(hard_of(later) == 0x2 && eff_of(self, later) == 0x2 &&
		   !strcmp(source_of(self, later), "process"),
		   "a thread the pinned leader creates afterwards: hard %llx, prefers %llx, source %s (want 2, 2, process)",
		   (unsigned long long)hard_of(later),
		   (unsigned long long)eff_of(self, later), source_of(self, later));
		__atomic_store_n(&later, -1, __ATOMIC_RELEASE);
		pthread_join(lt, NULL);
	} else {
		ok(false, "start one more thread");
	}
	set_hard(0, all_cpus);
	ok(eff_of(self, me) == 0x3 && req_is(self, 0, R_SET, 0x3),
	   "taskset the leader back to 0-3: it prefers 0-1 too (%llx)",
	   (unsigned long long)eff_of(self, me));
	{
		pid_t tids[2] = { me, p[0].tid };

		roundtrip("leader-pinned 0-1", self, tids, 2, NULL);
	}
	park_stop(p, 4);
	reset_self();
	reset_proc();
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

	reset_self();
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
			char pref[64], src[32];
			uint64_t got;

			if (tid <= 0 ||
			    status_field(self, tid, "Cpus_preferred", pref, sizeof(pref)) ||
			    status_field(self, tid, "Cpus_preferred_source", src, sizeof(src)))
				continue;	/* exited meanwhile */
			checked++;
			if (parse_hex(pref, &got) || got != m ||
			    strcmp(src, "process")) {
				if (bad < 5)
					diag("round %d: thread %d has %s from %s, wrote %llx",
					     round, tid, pref, src,
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
	ok(errs == 0 && bad == 0 && spawned > 0 && checked > 60,
	   "no thread created during a process write escapes: every one shows the mask written, source process (%d bad, %d write errors)",
	   bad, errs);
	reset_self();
	reset_proc();
}

/* ------------------------------------------------------------------ */

/* fork copies the thread level and the process level; exec keeps both. */
static void test_fork_exec(void)
{
	int pfd[2], status;
	char buf[256];
	ssize_t n;
	pid_t pid;

	set_soft(self, gettid_(), "2\n");
	set_soft(self, 0, "c\n");
	set_ratio(self, gettid_(), "5:4\n");
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		dprintf(pfd[1], "%s %s %s %s\n",
			req_read(getpid(), gettid_(), "soft_affinity"),
			req_read(getpid(), 0, "soft_affinity"),
			source_of(getpid(), gettid_()),
			req_read(getpid(), gettid_(), "soft_affinity_ratio"));
		/* exec: the new image reads its own requests */
		dup2(pfd[1], 1);
		execl("/bin/cat", "cat", "/proc/thread-self/soft_affinity",
		      "/proc/self/soft_affinity", "/proc/thread-self/soft_affinity_ratio",
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	n = 0;
	for (;;) {
		ssize_t k = read(pfd[0], buf + n, sizeof(buf) - 1 - (size_t)n);

		if (k <= 0)
			break;
		n += k;
	}
	buf[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	{
		char t[32] = "", p[32] = "", src[32] = "", r[32] = "";
		char t2[32] = "", p2[32] = "", r2[32] = "";
		uint64_t a = 0, b = 0, c = 0, d = 0;

		sscanf(buf, "%31s %31s %31s %31s %31s %31s %31s", t, p, src, r, t2,
		       p2, r2);
		ok(!parse_hex(t, &a) && a == 0x2 && !parse_hex(p, &b) && b == 0xc &&
		   !strcmp(src, "thread") && !strcmp(r, "5:4"),
		   "fork: the child's thread level %s, process level %s, source %s, thread ratio %s",
		   t, p, src, r);
		ok(!parse_hex(t2, &c) && c == 0x2 && !parse_hex(p2, &d) && d == 0xc &&
		   !strcmp(r2, "5:4") && WIFEXITED(status) && !WEXITSTATUS(status),
		   "exec: both persist (%s, %s, %s)", t2, p2, r2);
	}
	reset_self();
	reset_proc();
}

static void test_hard_changes(void)
{
	pid_t tid = gettid_();
	uint64_t m;

	set_soft(self, tid, "3\n");	/* prefer 0-1 */

	set_hard(0, 0xe);		/* taskset 1-3: shrink */
	m = eff_of(self, tid);
	ok(m == 0x2, "hard 1-3: preferred becomes 1 (%llx)",
	   (unsigned long long)m);
	ok(req_is(self, tid, R_SET, 0x3), "the request still reads 0-1 (%s)",
	   req_str(self, tid));

	set_hard(0, 0xc);		/* disjoint */
	m = eff_of(self, tid);
	ok(m == 0xc, "hard 2-3 (disjoint): preferred is the hard mask (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x8);
	m = eff_of(self, tid);
	ok(m == 0x8, "hard 3: preferred is the hard mask (%llx)",
	   (unsigned long long)m);

	set_hard(0, all_cpus);		/* expand again */
	m = eff_of(self, tid);
	ok(m == 0x3, "hard mask expanded: the request 0-1 is back (%llx)",
	   (unsigned long long)m);

	set_hard(0, 0x7);
	set_soft(self, tid, "2");
	set_hard(0, 0x5);
	m = eff_of(self, tid);
	ok(m == 0x5, "request 1, hard 0,2: falls back to 0,2 (%llx)",
	   (unsigned long long)m);
	set_hard(0, 0x6);
	m = eff_of(self, tid);
	ok(m == 0x2, "hard 1-2: request 1 in effect again (%llx)",
	   (unsigned long long)m);

	/* A request equal to the hard mask is kept: it applies when that grows. */
	set_hard(0, 0x7);
	set_soft(self, tid, "7");
	ok(eff_of(self, tid) == 0x7 && !strcmp(source_of(self, tid), "thread"),
	   "written == hard 0-2: preferred the hard mask, source thread (%s)",
	   source_of(self, tid));
	set_hard(0, all_cpus);
	m = eff_of(self, tid);
	ok(m == 0x7 && req_is(self, tid, R_SET, 0x7),
	   "then hard all: preferred 0-2 (%llx), the request kept (%s)",
	   (unsigned long long)m, req_str(self, tid));
	reset_self();
}

static bool cpuset_enabled_here;

/* cpuset reacts to hotplug from a work item: give it a moment. */
static uint64_t wait_eff(pid_t pid, uint64_t want)
{
	uint64_t m = eff_of(pid, pid);
	int i;

	for (i = 0; i < 100 && m != want; i++) {
		usleep(20000);
		m = eff_of(pid, pid);
	}
	return m;
}

/* cpuset in the root's subtree_control; remembers whether we enabled it. */
static int enable_cpuset(void)
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
	return 0;
}

static void disable_cpuset(void)
{
	if (cpuset_enabled_here)
		write_str("/sys/fs/cgroup/cgroup.subtree_control", "-cpuset");
	cpuset_enabled_here = false;
}

static int setup_cpuset_cgroup(const char *cg)
{
	char buf[256];
	int err = enable_cpuset();

	if (err)
		return err;
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	snprintf(buf, sizeof(buf), "%s/cpuset.cpus", cg);
	return write_str(buf, "0-3");
}

/* A child that waits until the parent closes its end of a pipe. */
static pid_t start_waiter(int *ctl)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) < 0)	/* until the parent closes */
			_exit(1);
		_exit(0);
	}
	close(pfd[0]);
	*ctl = pfd[1];
	return pid;
}

static void test_cgroup(void)
{
	const char *cg = "/sys/fs/cgroup/softaff-abi";
	const char *online2 = "/sys/devices/system/cpu/cpu2/online";
	char path[128], buf[32];
	int ctl, err;
	pid_t pid;
	uint64_t m;

	err = setup_cpuset_cgroup(cg);
	if (err) {
		skip(errname(err), "cgroup v2 cpuset.cpus cases");
		return;
	}
	pid = start_waiter(&ctl);
	if (pid < 0)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", pid);
	err = write_str(path, buf);
	ok(!err, "child moved into a cpuset cgroup (%s)", errname(err));
	err = set_soft(pid, pid, "3\n");
	ok(!err && eff_of(pid, pid) == 0x3, "child prefers 0-1");

	snprintf(path, sizeof(path), "%s/cpuset.cpus", cg);
	write_str(path, "1-3");
	m = eff_of(pid, pid);
	ok(m == 0x2 && hard_of(pid) == 0xe,
	   "cpuset.cpus 1-3: preferred 1 (%llx)", (unsigned long long)m);
	write_str(path, "2-3");
	m = eff_of(pid, pid);
	ok(m == 0xc && hard_of(pid) == 0xc && req_is(pid, pid, R_SET, 0x3),
	   "cpuset.cpus 2-3: preferred falls back to 2-3 (%llx), the request reads %s",
	   (unsigned long long)m, req_str(pid, pid));
	write_str(path, "0-3");
	m = eff_of(pid, pid);
	ok(m == 0x3 && hard_of(pid) == 0xf,
	   "cpuset.cpus 0-3 again: preferred 0-1 restored (%llx)",
	   (unsigned long long)m);

	/*
	 * Hotplug under a cpuset: the cpuset takes the offline CPU out of
	 * the hard mask and puts it back, and the preference follows.
	 */
	if (!access(online2, W_OK) && !set_soft(pid, pid, "4\n")) {
		if (!write_str(online2, "0")) {
			m = wait_eff(pid, 0xb);
			ok(m == 0xb && status_mask(pid, pid, "Cpus_allowed") == 0xb &&
			   req_is(pid, pid, R_SET, 0x4),
			   "cpuset task, CPU 2 offline: hard and preferred 0-1,3 (%llx), request 2 kept",
			   (unsigned long long)m);
			write_str(online2, "1");
			m = wait_eff(pid, 0x4);
			ok(m == 0x4 && status_mask(pid, pid, "Cpus_allowed") == 0xf,
			   "cpuset task, CPU 2 online: preferred 2 restored (%llx)",
			   (unsigned long long)m);
		} else {
			skip("cannot offline CPU 2", "hotplug under a cpuset");
		}
	} else {
		skip("CPU 2 hotplug not available", "hotplug under a cpuset");
	}

	close(ctl);
	waitpid(pid, NULL, 0);
	rmdir(cg);
	disable_cpuset();
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
	m = eff_of(self, tid);
	h = status_mask(self, tid, "Cpus_allowed");
	ok(m == eff(0x4, h) && req_is(self, tid, R_SET, 0x4),
	   "CPU 2 offline: preferred %llx is request 2 & hard %llx, or the hard mask; the request reads %s",
	   (unsigned long long)m, (unsigned long long)h, req_str(self, tid));
	/* Accepted since #13: a request of offline CPUs only is stored. */
	set_soft(self, tid, "1\n");
	err = set_soft(self, tid, "4\n");
	h = status_mask(self, tid, "Cpus_allowed");
	m = eff_of(self, tid);
	ok(!err && m == eff(0x4, h) && req_is(self, tid, R_SET, 0x4),
	   "only the offline CPU 2: accepted (%s), stored (%s), Cpus_preferred %llx under hard %llx",
	   errname(err), req_str(self, tid), (unsigned long long)m,
	   (unsigned long long)h);
	err = write_str(online, "1");
	ok(!err, "CPU 2 back online (%s)", errname(err));
	m = wait_eff(tid, want);
	ok(m == want, "CPU 2 online: preferred %llx again (%llx)",
	   (unsigned long long)want, (unsigned long long)m);
	reset_self();
}

/* ------------------------------------------------------------------ */
/* soft_affinity_ratio: formats, words, precedence, exact errnos. */

static void check_ratio_einval(pid_t tid, const char *in, size_t len)
{
	static char before[8192], after[8192];
	char path[96];
	int err;

	snap_self(before, sizeof(before), tid);
	soft_path(path, sizeof(path), self, tid, "soft_affinity_ratio");
	err = write_buf(path, in, len);
	snap_self(after, sizeof(after), tid);
	ok(err == -EINVAL && !strcmp(before, after),
	   "%sratio \"%.*s\" (%zu bytes): %s, nothing changed%s (reads \"%s\")",
	   tid > 0 ? "task/TID/" : "/proc/PID/", (int)(len > 40 ? 40 : len), in,
	   len, errname(err), strcmp(before, after) ? " NOT TRUE" : "",
	   req_read(self, tid, "soft_affinity_ratio"));
}

static const char *ratio_req(pid_t pid, pid_t tid)
{
	return req_read(pid, tid, "soft_affinity_ratio");
}

static void test_ratio(void)
{
	static const char *const bad[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
		"5:4:3", "-1:1", "5 4", "5/4", "defaults", "Default", "0x5:1",
		"4294967301:1", "default", "default\n", "none:1", "nones",
		"inherits", "none 5:4",
	};
	char big[64], want[64];
	pid_t tid = gettid_();
	int err;
	size_t i;

	reset_self();
	reset_proc();
	ok(!strcmp(ratio_req(self, 0), "") && !strcmp(ratio_req(self, tid), ""),
	   "soft_affinity_ratio reads empty at both levels by default (\"%s\", \"%s\")",
	   ratio_req(self, 0), ratio_req(self, tid));
	ok(!strcmp(ratio_of(self, tid), sysctl_ratio("default")),
	   "status: Cpus_preferred_ratio and _source \"%s\", want \"%s\"",
	   ratio_of(self, tid), sysctl_ratio("default"));

	err = set_ratio(self, tid, "5:4\n");
	ok(!err && !strcmp(ratio_req(self, tid), "5:4"),
	   "write \"5:4\" reads \"%s\" (%s)", ratio_req(self, tid), errname(err));
	ok(!strcmp(ratio_of(self, tid), "5:4 thread") &&
	   !strcmp(ratio_req(self, 0), ""),
	   "... status \"%s\", the process level still empty (\"%s\")",
	   ratio_of(self, tid), ratio_req(self, 0));
	err = set_ratio(self, tid, "10000:10000");
	ok(!err && !strcmp(ratio_req(self, tid), "10000:10000") &&
	   !strcmp(ratio_of(self, tid), "10000:10000 thread"),
	   "\"10000:10000\" without newline reads \"%s\", status \"%s\" (%s)",
	   ratio_req(self, tid), ratio_of(self, tid), errname(err));
	err = set_ratio(self, tid, "1:1\n");
	ok(!err && !strcmp(ratio_req(self, tid), "1:1"), "\"1:1\" reads \"%s\" (%s)",
	   ratio_req(self, tid), errname(err));
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		check_ratio_einval(tid, bad[i], strlen(bad[i]));
	memset(big, ' ', sizeof(big));
	memcpy(big, "5:4", 3);
	big[32] = '\n';
	check_ratio_einval(tid, big, 33);	/* "5:4" and blanks, 33 bytes */
	check_ratio_einval(0, "default\n", 8);
	check_ratio_einval(0, "0:1\n", 4);
	ok(req_is(self, tid, R_INHERIT, 0) && eff_of(self, tid) == hard_of(0),
	   "ratio writes leave the mask alone (%s, %llx)", req_str(self, tid),
	   (unsigned long long)eff_of(self, tid));
	roundtrip("thread ratio 1:1", self, &tid, 1, NULL);

	/* none: the sysctls' ratio, whatever the process says. */
	set_ratio(self, 0, "7:2\n");
	ok(!strcmp(ratio_req(self, 0), "7:2") &&
	   !strcmp(ratio_of(self, tid), "1:1 thread"),
	   "process \"7:2\" written after the thread's 1:1: the thread's wins (\"%s\")",
	   ratio_of(self, tid));
	err = set_ratio(self, tid, "none\n");
	ok(!err && !strcmp(ratio_req(self, tid), "none") &&
	   !strcmp(ratio_of(self, tid), sysctl_ratio("default")),
	   "thread \"none\": reads \"%s\", status \"%s\" (the sysctls', not the process's 7:2)",
	   ratio_req(self, tid), ratio_of(self, tid));
	roundtrip("thread ratio none, process 7:2", self, &tid, 1, NULL);
	err = set_ratio(self, tid, "inherit\n");
	ok(!err && !strcmp(ratio_req(self, tid), "") &&
	   !strcmp(ratio_of(self, tid), "7:2 process"),
	   "thread \"inherit\": reads \"%s\", status \"%s\"", ratio_req(self, tid),
	   ratio_of(self, tid));
	err = set_ratio(self, tid, "3:1");
	err = err ? err : set_ratio(self, 0, "6:1\n");
	ok(!err && !strcmp(ratio_of(self, tid), "3:1 thread") &&
	   !strcmp(ratio_req(self, 0), "6:1"),
	   "thread 3:1, then process 6:1: the thread's still wins (\"%s\")",
	   ratio_of(self, tid));
	err = set_ratio(self, tid, "\n");
	ok(!err && !strcmp(ratio_req(self, tid), "") &&
	   !strcmp(ratio_of(self, tid), "6:1 process"),
	   "an empty line is inherit: \"%s\", status \"%s\"", ratio_req(self, tid),
	   ratio_of(self, tid));
	err = set_ratio(self, 0, "none");
	ok(!err && !strcmp(ratio_req(self, 0), "none") &&
	   !strcmp(ratio_of(self, tid), sysctl_ratio("default")),
	   "process \"none\" (no newline): reads \"%s\", status \"%s\"",
	   ratio_req(self, 0), ratio_of(self, tid));
	roundtrip("process ratio none", self, &tid, 1, NULL);
	set_ratio(self, 0, "6:1");
	err = set_ratio(self, 0, "inherit");
	ok(!err && !strcmp(ratio_req(self, 0), "") &&
	   !strcmp(ratio_of(self, tid), sysctl_ratio("default")),
	   "process \"inherit\": reads \"%s\", status \"%s\"", ratio_req(self, 0),
	   ratio_of(self, tid));
	set_ratio(self, tid, "3:1");
	err = set_ratio(self, tid, "");
	ok((err == 0 && !strcmp(ratio_req(self, tid), "")) ||
	   (err == -EINVAL && !strcmp(ratio_req(self, tid), "3:1")),
	   "a 0-byte ratio write: inherit, or EINVAL with 3:1 kept (%s, \"%s\")",
	   errname(err), ratio_req(self, tid));
	set_ratio(self, tid, "inherit");

	/* The default follows the sysctls. */
	{
		char a[32];

		read_str("/proc/sys/kernel/sched_allowed", a, sizeof(a));
		if (!write_str("/proc/sys/kernel/sched_allowed", "50")) {
			snprintf(want, sizeof(want), "%s", sysctl_ratio("default"));
			ok(!strncmp(want, "50:", 3) &&
			   !strcmp(ratio_of(self, tid), want),
			   "sched_allowed 50: status \"%s\", want \"%s\"",
			   ratio_of(self, tid), want);
			write_str("/proc/sys/kernel/sched_allowed", a);
		} else {
			ok(false, "write sched_allowed 50");
		}
	}

	/* Masks and ratios are resolved apart. */
	set_ratio(self, tid, "7:2");
	set_soft(self, tid, "3");
	ok(!strcmp(ratio_req(self, tid), "7:2") &&
	   !strcmp(ratio_of(self, tid), "7:2 thread") && eff_of(self, tid) == 0x3,
	   "a mask write leaves the ratio alone (\"%s\")", ratio_of(self, tid));
	set_soft(self, tid, "none");
	ok(!strcmp(ratio_req(self, tid), "7:2") &&
	   !strcmp(ratio_of(self, tid), "7:2 thread"),
	   "a mask \"none\" leaves the ratio alone (\"%s\")", ratio_of(self, tid));
	set_soft(self, tid, "2");
	set_ratio(self, tid, "none");
	ok(eff_of(self, tid) == 0x2 && !strcmp(source_of(self, tid), "thread"),
	   "a ratio \"none\" leaves the mask alone (%llx, %s)",
	   (unsigned long long)eff_of(self, tid), source_of(self, tid));
	reset_self();
	reset_proc();
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

/* kernel.sched_soft_affinity_ratio: "A:P", both sysctls at once. */
#define RATIO_SYSCTL "/proc/sys/kernel/sched_soft_affinity_ratio"

struct ratio_race {
	volatile int stop;
	int writes, errors;
};

static void *ratio_writer(void *arg)
{
	struct ratio_race *r = arg;
	int i;

	for (i = 0; i < 4000 && !r->stop; i++) {
		if (write_str(RATIO_SYSCTL, i & 1 ? "1:2\n" : "3:4\n"))
			r->errors++;
		r->writes++;
	}
	r->stop = 1;
	return NULL;
}

static void test_sysctl_ratio(void)
{
	static const char *const bad[] = {
		"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
		"5:4:3", "-1:1", "5/4", "0x5:1", "4294967301:1", "5:4x",
		"default", "none", "inherit",
	};
	static const char *const empty[] = { "", "\n" };
	char buf[64], before[128], after[128];
	pid_t tid = gettid_();
	size_t i;
	int err;

	err = read_str(RATIO_SYSCTL, buf, sizeof(buf));
	if (err) {
		ok(false, "%s is readable (%s)", RATIO_SYSCTL, errname(err));
		return;
	}
	ok(!strcmp(buf, "100:1") && !strcmp(buf, sysctl_ratio(NULL)),
	   "%s reads \"%s\": sched_allowed:sched_preferred, 100:1 by default",
	   RATIO_SYSCTL, buf);

	err = write_str(RATIO_SYSCTL, "5:4\n");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "5:4") && !strcmp(sysctl_ratio(NULL), "5:4"),
	   "write \"5:4\": reads \"%s\", sched_allowed:sched_preferred %s (%s)",
	   buf, sysctl_ratio(NULL), errname(err));
	ok(!strcmp(ratio_of(self, tid), "5:4 default"),
	   "... a task without a ratio of its own: status \"%s\"",
	   ratio_of(self, tid));
	err = write_str(RATIO_SYSCTL, "7:3");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "7:3") && !strcmp(sysctl_ratio(NULL), "7:3"),
	   "\"7:3\" without newline: reads \"%s\", the two %s (%s)", buf,
	   sysctl_ratio(NULL), errname(err));
	write_str("/proc/sys/kernel/sched_allowed", "9");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!strcmp(buf, "9:3"), "sched_allowed 9: the ratio sysctl reads \"%s\"",
	   buf);
	write_str("/proc/sys/kernel/sched_preferred", "2");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!strcmp(buf, "9:2"), "sched_preferred 2: the ratio sysctl reads \"%s\"",
	   buf);

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(before, sizeof(before), "%s %s", sysctl_ratio(NULL),
			 ratio_of(self, tid));
		err = write_str(RATIO_SYSCTL, bad[i]);
		read_str(RATIO_SYSCTL, buf, sizeof(buf));
		snprintf(after, sizeof(after), "%s %s", sysctl_ratio(NULL),
			 ratio_of(self, tid));
		ok(err == -EINVAL && !strcmp(buf, "9:2") && !strcmp(before, after),
		   "%s \"%s\": %s, nothing changed (reads \"%s\"; %s)", RATIO_SYSCTL,
		   bad[i], errname(err), buf, after);
	}
	for (i = 0; i < 2; i++) {
		err = write_str(RATIO_SYSCTL, empty[i]);
		read_str(RATIO_SYSCTL, buf, sizeof(buf));
		ok((err == 0 || err == -EINVAL) && !strcmp(buf, "9:2") &&
		   !strcmp(sysctl_ratio(NULL), "9:2"),
		   "%s, %s: changes nothing (%s, \"%s\")", RATIO_SYSCTL,
		   i ? "an empty line" : "a 0-byte write", errname(err), buf);
	}
	err = write_str(RATIO_SYSCTL, "10000:10000\n");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "10000:10000"), "accepts 10000:10000 (%s)", buf);
	err = write_str(RATIO_SYSCTL, "1:1\n");
	read_str(RATIO_SYSCTL, buf, sizeof(buf));
	ok(!err && !strcmp(buf, "1:1") && !strcmp(sysctl_ratio(NULL), "1:1"),
	   "accepts 1:1 (%s)", buf);

	/* Both at once: a reader never sees half of a write. */
	{
		struct ratio_race r = { 0, 0, 0 };
		int reads = 0, mixed = 0;
		pthread_t w;

		write_str(RATIO_SYSCTL, "1:2\n");
		if (pthread_create(&w, NULL, ratio_writer, &r)) {
			ok(false, "start a writer thread");
		} else {
			while (!r.stop) {
				if (read_str(RATIO_SYSCTL, buf, sizeof(buf)))
					continue;
				reads++;
				if (strcmp(buf, "1:2") && strcmp(buf, "3:4")) {
					if (mixed++ < 3)
						diag("read \"%s\" during writes of 1:2 and 3:4",
						     buf);
				}
			}
			pthread_join(w, NULL);
			ok(mixed == 0 && reads > 0 && r.errors == 0,
			   "%d reads during %d writes alternating 1:2 and 3:4: each one or the other (%d mixed, %d write errors)",
			   reads, r.writes, mixed, r.errors);
		}
	}

	err = write_str(RATIO_SYSCTL, "100:1\n");
	ok(!err && !strcmp(sysctl_ratio(NULL), "100:1"),
	   "back to 100:1: sched_allowed:sched_preferred %s", sysctl_ratio(NULL));
}

/* ------------------------------------------------------------------ */
/*
 * Three levels, three states each: a process with two threads in a
 * cgroup of its own.  Thread T1 has the thread-level writes; T2 and the
 * leader show what the process and cgroup levels give.
 */

struct family {
	pid_t pid;
	pid_t tid[3];		/* leader, T1, T2 */
	int ctl;
};

static int family_start(struct family *f)
{
	int up[2], down[2];
	ssize_t n;
	pid_t pid;

	if (pipe(up))
		return -1;
	if (pipe(down)) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		struct parked p[2];
		pid_t t[3];
		char c;

		close(up[0]);
		close(down[1]);
		if (park_start(p, 2))
			_exit(1);
		t[0] = getpid();
		t[1] = p[0].tid;
		t[2] = p[1].tid;
		if (write(up[1], t, sizeof(t)) != sizeof(t))
			_exit(1);
		if (read(down[0], &c, 1) < 0)	/* until the parent closes */
			_exit(1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	n = pid > 0 ? read(up[0], f->tid, sizeof(f->tid)) : -1;
	close(up[0]);
	f->pid = pid;
	f->ctl = down[1];
	if (n != sizeof(f->tid)) {
		close(f->ctl);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	return 0;
}

static void family_stop(struct family *f)
{
	close(f->ctl);
	waitpid(f->pid, NULL, 0);
}

static const char *const lvl_name[] = { "thread", "process", "cgroup" };

/*
 * What decides, of the levels from @first on, in states @st: the index
 * of the first level not in inherit, or -1.
 */
static int deciding(const int *st, int first)
{
	int l;

	for (l = first; l < 3; l++)
		if (st[l] != R_INHERIT)
			return l;
	return -1;
}

static const char *cg_read(const char *cg, const char *file)
{
	char path[160], *out = slot_buf();
	int err;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	err = read_str(path, out, 256);
	if (err)
		snprintf(out, 256, "(%s)", errname(err));
	return out;
}

static int cg_write(const char *cg, const char *file, const char *s)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_str(path, s);
}

/*
 * Write the states @st of thread @t1, process @pid and cgroup @leaf, in
 * that order, with the values @val for the set ones (the ratio files for
 * @ratio, else the list files); an inheriting level gets "inherit\n" or a
 * bare "\n" by @word. @want: what each level must read back. Return: a
 * bit per level whose write failed.
 */
static int write_levels(const int *st, const char *const *val,
			const char **want, bool word, bool ratio, pid_t pid,
			pid_t t1, const char *leaf)
{
	int l, err, werr = 0;

	for (l = 0; l < 3; l++) {
		char text[16];

		if (st[l] == R_INHERIT)
			snprintf(text, sizeof(text), "%s", word ? "inherit\n" : "\n");
		else if (st[l] == R_NONE)
			snprintf(text, sizeof(text), "none\n");
		else
			snprintf(text, sizeof(text), "%s\n", val[l]);
		want[l] = st[l] == R_INHERIT ? "" : st[l] == R_NONE ? "none" : val[l];
		if (l < 2)
			err = ratio ? set_ratio(pid, l ? 0 : t1, text) :
				      set_soft_list(pid, l ? 0 : t1, text);
		else
			err = cg_write(leaf, ratio ? "cpuset.cpus.preferred.ratio" :
						     "cpuset.cpus.preferred", text);
		if (err)
			werr |= 1 << l;
	}
	return werr;
}

static void check_cg_einval(const char *cg, const char *file, const char *in,
			    const struct family *f)
{
	static char before[16384], after[16384];
	int err;

	snapshot(before, sizeof(before), f->pid, f->tid, 3, cg);
	err = cg_write(cg, file, in);
	snapshot(after, sizeof(after), f->pid, f->tid, 3, cg);
	ok(err == -EINVAL && !strcmp(before, after),
	   "%s \"%.*s\": %s, nothing changed%s (reads \"%s\")", file,
	   (int)strcspn(in, "\n"), in, errname(err),
	   strcmp(before, after) ? " NOT TRUE" : "", cg_read(cg, file));
}

/* Wait up to 2 s for an inotify event on @ifd. */
static bool got_event(int ifd)
{
	struct pollfd pfd = { .fd = ifd, .events = POLLIN };
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool got = poll(&pfd, 1, 2000) > 0;

	while (read(ifd, buf, sizeof(buf)) > 0)
		;
	return got;
}

static void drain(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	usleep(100000);
	while (read(ifd, buf, sizeof(buf)) > 0)
		;
}

static void test_levels(void)
{
	const char *base = "/sys/fs/cgroup/softaff-abi-levels";
	const char *leaf = "/sys/fs/cgroup/softaff-abi-levels/leaf";
	static const char *const mval[] = { "0", "1", "2-3" };
	static const uint64_t mmask[] = { 0x1, 0x2, 0xc };
	static const char *const rval[] = { "2:1", "3:1", "4:1" };
	struct family f;
	char path[160], buf[64], label[128];
	pid_t t1, t2;
	int err, i, ifd;

	err = enable_cpuset();
	if (!err && mkdir(base, 0755) && errno != EEXIST)
		err = -errno;
	if (!err)
		err = cg_write(base, "cgroup.subtree_control", "+cpuset");
	if (!err && mkdir(leaf, 0755) && errno != EEXIST)
		err = -errno;
	if (err) {
		skip(errname(err), "cgroup levels: cpuset.cpus.preferred{,.ratio,.effective}");
		rmdir(leaf);
		rmdir(base);
		disable_cpuset();
		return;
	}
	ok(access("/sys/fs/cgroup/cpuset.cpus.preferred", F_OK) &&
	   access("/sys/fs/cgroup/cpuset.cpus.preferred.ratio", F_OK) &&
	   access("/sys/fs/cgroup/cpuset.cpus.preferred.effective", F_OK),
	   "the root cgroup has no cpuset.cpus.preferred{,.ratio,.effective}");
	ok(!strcmp(cg_read(leaf, "cpuset.cpus.preferred"), "") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.ratio"), "") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), ""),
	   "a new cgroup: cpuset.cpus.preferred \"%s\", .ratio \"%s\", .effective \"%s\" (all empty)",
	   cg_read(leaf, "cpuset.cpus.preferred"),
	   cg_read(leaf, "cpuset.cpus.preferred.ratio"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"));

	reset_self();
	reset_proc();
	if (family_start(&f)) {
		ok(false, "start a process with two threads");
		goto out;
	}
	t1 = f.tid[1];
	t2 = f.tid[2];
	snprintf(buf, sizeof(buf), "%d", f.pid);
	err = cg_write(leaf, "cgroup.procs", buf);
	ok(!err, "a process with two threads (%d: %d, %d) moved into %s (%s)",
	   f.pid, t1, t2, leaf, errname(err));
	if (err)
		goto out_family;

	/* The mask: 27 combinations, written thread first, cgroup last. */
	for (i = 0; i < 27; i++) {
		int st[3] = { i / 9, (i / 3) % 3, i % 3 }, d1, d2, werr = 0;
		uint64_t w1, w2;
		const char *s1, *s2, *want[3];
		bool good;

		werr = write_levels(st, mval, want, i & 1, false, f.pid, t1, leaf);
		d1 = deciding(st, 0);
		d2 = deciding(st, 1);
		w1 = d1 >= 0 && st[d1] == R_SET ? eff(mmask[d1], all_cpus) : all_cpus;
		w2 = d2 >= 0 && st[d2] == R_SET ? eff(mmask[d2], all_cpus) : all_cpus;
		s1 = d1 >= 0 && st[d1] == R_SET ? lvl_name[d1] : "none";
		s2 = d2 >= 0 && st[d2] == R_SET ? lvl_name[d2] : "none";
		good = !werr && eff_of(f.pid, t1) == w1 &&
		       !strcmp(source_of(f.pid, t1), s1) &&
		       eff_of(f.pid, t2) == w2 && !strcmp(source_of(f.pid, t2), s2) &&
		       eff_of(f.pid, 0) == w2 && !strcmp(source_of(f.pid, 0), s2) &&
		       !strcmp(req_read(f.pid, t1, "soft_affinity_list"), want[0]) &&
		       !strcmp(req_read(f.pid, t2, "soft_affinity_list"), "") &&
		       !strcmp(req_read(f.pid, 0, "soft_affinity_list"), want[1]) &&
		       !strcmp(cg_read(leaf, "cpuset.cpus.preferred"), want[2]);
		ok(good,
		   "mask thread=%s process=%s cgroup=%s: T1 %llx from %s (want %llx, %s), T2 and leader %llx from %s (want %llx, %s), requests \"%s\" \"%s\" \"%s\"%s",
		   state_name[st[0]], state_name[st[1]], state_name[st[2]],
		   (unsigned long long)eff_of(f.pid, t1), source_of(f.pid, t1),
		   (unsigned long long)w1, s1,
		   (unsigned long long)eff_of(f.pid, t2), source_of(f.pid, t2),
		   (unsigned long long)w2, s2,
		   req_read(f.pid, t1, "soft_affinity_list"),
		   req_read(f.pid, 0, "soft_affinity_list"),
		   cg_read(leaf, "cpuset.cpus.preferred"),
		   werr ? " (a write failed)" : "");
		snprintf(label, sizeof(label), "mask thread=%s process=%s cgroup=%s",
			 state_name[st[0]], state_name[st[1]], state_name[st[2]]);
		roundtrip(label, f.pid, f.tid, 3, leaf);
	}
	set_soft(f.pid, t1, "inherit\n");
	set_soft(f.pid, 0, "inherit\n");
	cg_write(leaf, "cpuset.cpus.preferred", "inherit\n");

	/* The ratio: the same 27, the sysctls' ratio when no level sets one. */
	for (i = 0; i < 27; i++) {
		int st[3] = { i / 9, (i / 3) % 3, i % 3 }, d1, d2, werr = 0;
		const char *want[3];
		char w1[64], w2[64];
		bool good;

		werr = write_levels(st, rval, want, i & 1, true, f.pid, t1, leaf);
		d1 = deciding(st, 0);
		d2 = deciding(st, 1);
		if (d1 >= 0 && st[d1] == R_SET)
			snprintf(w1, sizeof(w1), "%s %s", rval[d1], lvl_name[d1]);
		else
			snprintf(w1, sizeof(w1), "%s", sysctl_ratio("default"));
		if (d2 >= 0 && st[d2] == R_SET)
			snprintf(w2, sizeof(w2), "%s %s", rval[d2], lvl_name[d2]);
		else
			snprintf(w2, sizeof(w2), "%s", sysctl_ratio("default"));
		good = !werr && !strcmp(ratio_of(f.pid, t1), w1) &&
		       !strcmp(ratio_of(f.pid, t2), w2) &&
		       !strcmp(ratio_of(f.pid, 0), w2) &&
		       !strcmp(ratio_req(f.pid, t1), want[0]) &&
		       !strcmp(ratio_req(f.pid, t2), "") &&
		       !strcmp(ratio_req(f.pid, 0), want[1]) &&
		       !strcmp(cg_read(leaf, "cpuset.cpus.preferred.ratio"), want[2]) &&
		       eff_of(f.pid, t1) == all_cpus &&
		       !strcmp(source_of(f.pid, t1), "none");
		ok(good,
		   "ratio thread=%s process=%s cgroup=%s: T1 \"%s\" (want \"%s\"), T2 \"%s\", leader \"%s\" (want \"%s\"), requests \"%s\" \"%s\" \"%s\", the mask untouched%s",
		   state_name[st[0]], state_name[st[1]], state_name[st[2]],
		   ratio_of(f.pid, t1), w1, ratio_of(f.pid, t2), ratio_of(f.pid, 0),
		   w2, ratio_req(f.pid, t1), ratio_req(f.pid, 0),
		   cg_read(leaf, "cpuset.cpus.preferred.ratio"),
		   werr ? " (a write failed)" : "");
		snprintf(label, sizeof(label), "ratio thread=%s process=%s cgroup=%s",
			 state_name[st[0]], state_name[st[1]], state_name[st[2]]);
		roundtrip(label, f.pid, f.tid, 3, leaf);
	}
	set_ratio(f.pid, t1, "inherit\n");
	set_ratio(f.pid, 0, "inherit\n");
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "inherit\n");

	/* Bad cgroup values: EINVAL, nothing changes. */
	cg_write(leaf, "cpuset.cpus.preferred", "1-2\n");
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "9:2\n");
	check_cg_einval(leaf, "cpuset.cpus.preferred", "zz\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred", "1-0\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred", "default\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred", "nonex\n", &f);
	snprintf(buf, sizeof(buf), "%d\n", nr_cpu_ids);
	check_cg_einval(leaf, "cpuset.cpus.preferred", buf, &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred.ratio", "default\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred.ratio", "0:1\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred.ratio", "5\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred.ratio", "a:b\n", &f);
	check_cg_einval(leaf, "cpuset.cpus.preferred.ratio", "10001:1\n", &f);
	{
		char before[256];
		int fd;

		snprintf(before, sizeof(before), "%s",
			 cg_read(leaf, "cpuset.cpus.preferred.effective"));
		snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.effective", leaf);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		err = fd < 0 ? -errno : write(fd, "0\n", 2) < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		ok(err && !strcmp(before, cg_read(leaf, "cpuset.cpus.preferred.effective")),
		   "cpuset.cpus.preferred.effective is read-only (%s), unchanged (\"%s\")",
		   errname(err), cg_read(leaf, "cpuset.cpus.preferred.effective"));
	}
	cg_write(leaf, "cpuset.cpus.preferred", "\n");
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "\n");

	/* Inheritance from an ancestor and cpuset.cpus.preferred.effective. */
	err = cg_write(base, "cpuset.cpus.preferred", "0-1\n");
	ok(!err && !strcmp(cg_read(base, "cpuset.cpus.preferred"), "0-1") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred"), ""),
	   "the parent prefers 0-1, the child has no value (\"%s\", \"%s\")",
	   cg_read(base, "cpuset.cpus.preferred"),
	   cg_read(leaf, "cpuset.cpus.preferred"));
	ok(!strcmp(cg_read(base, "cpuset.cpus.preferred.effective"), "0-1") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "0-1"),
	   "cpuset.cpus.preferred.effective: parent \"%s\", child \"%s\" (both 0-1)",
	   cg_read(base, "cpuset.cpus.preferred.effective"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"));
	ok(eff_of(f.pid, t1) == 0x3 && !strcmp(source_of(f.pid, t1), "cgroup"),
	   "the child's tasks: %llx from %s", (unsigned long long)eff_of(f.pid, t1),
	   source_of(f.pid, t1));
	err = cg_write(leaf, "cpuset.cpus", "1-3\n");
	ok(!err && !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "1") &&
	   !strcmp(cg_read(base, "cpuset.cpus.preferred.effective"), "0-1"),
	   "child cpuset.cpus 1-3: the child's effective is the parent's 0-1 & 1-3 = \"%s\", the parent's \"%s\" (%s)",
	   cg_read(leaf, "cpuset.cpus.preferred.effective"),
	   cg_read(base, "cpuset.cpus.preferred.effective"), errname(err));
	ok(eff_of(f.pid, t1) == 0x2 && !strcmp(source_of(f.pid, t1), "cgroup") &&
	   !strcmp(status_str(f.pid, t1, "Cpus_preferred_list"),
		   cg_read(leaf, "cpuset.cpus.preferred.effective")),
	   "... and its tasks show what it says: Cpus_preferred_list %s from %s",
	   status_str(f.pid, t1, "Cpus_preferred_list"), source_of(f.pid, t1));
	roundtrip("parent 0-1, child inherit, cpuset.cpus 1-3", f.pid, f.tid, 3, leaf);
	err = cg_write(leaf, "cpuset.cpus.preferred", "none\n");
	ok(!err && !strcmp(cg_read(leaf, "cpuset.cpus.preferred"), "none") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "") &&
	   !strcmp(cg_read(base, "cpuset.cpus.preferred.effective"), "0-1"),
	   "child \"none\": reads \"%s\", effective \"%s\" (empty), the parent's still \"%s\"",
	   cg_read(leaf, "cpuset.cpus.preferred"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"),
	   cg_read(base, "cpuset.cpus.preferred.effective"));
	ok(eff_of(f.pid, t1) == 0xe && !strcmp(source_of(f.pid, t1), "none"),
	   "... its tasks: the hard mask %llx, source %s",
	   (unsigned long long)eff_of(f.pid, t1), source_of(f.pid, t1));
	roundtrip("parent 0-1, child none", f.pid, f.tid, 3, leaf);
	err = cg_write(leaf, "cpuset.cpus.preferred", "2-3\n");
	ok(!err && !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "2-3") &&
	   eff_of(f.pid, t1) == 0xc && !strcmp(source_of(f.pid, t1), "cgroup"),
	   "child 2-3: its own wins, effective \"%s\", tasks %llx",
	   cg_read(leaf, "cpuset.cpus.preferred.effective"),
	   (unsigned long long)eff_of(f.pid, t1));
	err = cg_write(leaf, "cpuset.cpus.preferred", "0\n");
	ok(!err && !strcmp(cg_read(leaf, "cpuset.cpus.preferred"), "0") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "") &&
	   eff_of(f.pid, t1) == 0xe && !strcmp(source_of(f.pid, t1), "cgroup"),
	   "child 0, outside its cpuset.cpus 1-3: stored (\"%s\"), effective \"%s\" (empty), tasks the hard mask %llx, source %s",
	   cg_read(leaf, "cpuset.cpus.preferred"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"),
	   (unsigned long long)eff_of(f.pid, t1), source_of(f.pid, t1));
	err = cg_write(leaf, "cpuset.cpus.preferred", "inherit\n");
	ok(!err && !strcmp(cg_read(leaf, "cpuset.cpus.preferred"), "") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "1"),
	   "child \"inherit\": reads \"%s\", effective the parent's again \"%s\"",
	   cg_read(leaf, "cpuset.cpus.preferred"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"));
	err = cg_write(base, "cpuset.cpus.preferred", "none\n");
	ok(!err && !strcmp(cg_read(base, "cpuset.cpus.preferred.effective"), "") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "") &&
	   !strcmp(source_of(f.pid, t1), "none"),
	   "parent \"none\": effective \"%s\" and \"%s\" (empty), tasks source %s",
	   cg_read(base, "cpuset.cpus.preferred.effective"),
	   cg_read(leaf, "cpuset.cpus.preferred.effective"), source_of(f.pid, t1));
	err = cg_write(base, "cpuset.cpus.preferred", "\n");
	ok(!err && !strcmp(cg_read(base, "cpuset.cpus.preferred"), "") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "") &&
	   !strcmp(source_of(f.pid, t1), "none"),
	   "parent inherit too: nothing anywhere (\"%s\", source %s)",
	   cg_read(leaf, "cpuset.cpus.preferred.effective"), source_of(f.pid, t1));

	/* A change of the effective file is a file-modified event. */
	snprintf(path, sizeof(path), "%s/cpuset.cpus.preferred.effective", leaf);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd >= 0 && inotify_add_watch(ifd, path, IN_MODIFY) >= 0) {
		drain(ifd);
		cg_write(base, "cpuset.cpus.preferred", "2-3\n");
		ok(got_event(ifd) &&
		   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "2-3"),
		   "the parent's write changes the child's effective to \"%s\": inotify IN_MODIFY on it",
		   cg_read(leaf, "cpuset.cpus.preferred.effective"));
		drain(ifd);
		cg_write(leaf, "cpuset.cpus", "1-2\n");
		ok(got_event(ifd) &&
		   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), "2"),
		   "the child's cpuset.cpus 1-2 changes its effective to \"%s\": IN_MODIFY",
		   cg_read(leaf, "cpuset.cpus.preferred.effective"));
		drain(ifd);
		cg_write(leaf, "cpuset.cpus.preferred", "none\n");
		ok(got_event(ifd) &&
		   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.effective"), ""),
		   "the child's own \"none\" empties it: IN_MODIFY");
	} else {
		ok(false, "inotify on %s (%s)", path, strerror(errno));
	}
	if (ifd >= 0)
		close(ifd);
	cg_write(leaf, "cpuset.cpus.preferred", "\n");
	cg_write(leaf, "cpuset.cpus", "0-3\n");
	cg_write(base, "cpuset.cpus.preferred", "\n");

	/* The ratio from an ancestor. */
	err = cg_write(base, "cpuset.cpus.preferred.ratio", "7:3\n");
	ok(!err && !strcmp(ratio_of(f.pid, t1), "7:3 cgroup") &&
	   !strcmp(cg_read(leaf, "cpuset.cpus.preferred.ratio"), ""),
	   "the parent's ratio 7:3, the child none of its own: tasks \"%s\"",
	   ratio_of(f.pid, t1));
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "none\n");
	ok(!strcmp(ratio_of(f.pid, t1), sysctl_ratio("default")),
	   "the child's \"none\": the sysctls' (\"%s\")", ratio_of(f.pid, t1));
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "9:2\n");
	ok(!strcmp(ratio_of(f.pid, t1), "9:2 cgroup"),
	   "the child's own 9:2 wins over the parent's (\"%s\")", ratio_of(f.pid, t1));
	roundtrip("parent ratio 7:3, child 9:2", f.pid, f.tid, 3, leaf);
	cg_write(leaf, "cpuset.cpus.preferred.ratio", "\n");
	cg_write(base, "cpuset.cpus.preferred.ratio", "\n");

out_family:
	family_stop(&f);
out:
	rmdir(leaf);
	rmdir(base);
	disable_cpuset();
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
	test_leader_pinned();
	test_threads_during_write();
	test_fork_exec();
	test_hard_changes();
	test_cgroup();
	test_hotplug();
	test_ratio();
	test_sysctl();
	test_sysctl_ratio();
	test_levels();

	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
