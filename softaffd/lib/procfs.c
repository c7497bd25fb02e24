// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "ratio.h"
#include "util.h"

/*
 * /proc/PID/stat:
 *   1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 ... 8342 ... 0 0 ...
 *   pid  comm            st ppid        ...  flags(9)  starttime(22) processor(39) policy(41)
 *
 * comm may hold spaces, parentheses and even newlines, so it runs from
 * the first '(' to the *last* ')'; everything after is space separated.
 */
int procfs_parse_stat(const char *buf, struct pstat *ret)
{
	const char *open, *close, *p;
	struct pstat s = {0};
	unsigned long long v;
	size_t n;
	char *end;
	int field;

	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (end == buf || errno || v == 0 || v > INT32_MAX || *end != ' ' ||
	    end + 1 != open)
		return -EINVAL;
	s.pid = (int)v;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(s.comm))
		n = sizeof(s.comm) - 1;
	memcpy(s.comm, open + 1, n);
	s.comm[n] = '\0';

	p = close + 1;
	if (*p != ' ' || !p[1])
		return -EINVAL;
	p++;
	s.state = *p;
	p++;
	for (field = 4; *p; field++) {
		if (*p != ' ')
			return -EINVAL;
		p++;
		if (*p == '-') /* tty_pgrp and the like can be -1 */
			p++;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
		switch (field) {
		case 4:
			s.ppid = (int)v;
			break;
		case 9:
			s.flags = (unsigned long)v;
			break;
		case 22:
			s.starttime = v;
			break;
		case 39:
			s.processor = (int)v;
			break;
		case 41:
			s.policy = (unsigned int)v;
			break;
		}
		if (*p == '\n')
			break;
	}
	/* starttime is what tells a reused pid apart: require it. */
	if (field < 22)
		return -EINVAL;
	*ret = s;
	return 0;
}

/* Value of "Key:\t..." at the start of a line, or NULL. */
const char *procfs_status_field(const char *buf, const char *key)
{
	size_t n = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ':') {
			p += n + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int procfs_value_line(const char *v, char *buf, size_t size)
{
	size_t n = strcspn(v, "\n");

	if (n >= size)
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

/* Cpus_allowed_list's value (up to its line's end) as a set. */
static int parse_hard(const char *v, struct cpuset *ret)
{
	char line[CPUSET_LIST_BUFSZ];

	if (!v || procfs_value_line(v, line, sizeof(line)) < 0)
		return -EINVAL;
	return cpuset_parse_list(line, ret) < 0 ? -EINVAL : 0;
}

/* Uid's value: the real one, the first of four. */
static int parse_uid(const char *v, uid_t *ret)
{
	unsigned long long u;
	char *end;

	if (!v || *v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	u = strtoull(v, &end, 10);
	if (errno || u >= UINT32_MAX ||
	    (*end != '\t' && *end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	*ret = (uid_t)u;
	return 0;
}

/*
 * .../status (excerpt):
 *   Uid:	1000	1000	1000	1000
 *   Cpus_allowed:	f
 *   Cpus_allowed_list:	0-3
 */
int procfs_parse_status(const char *buf, struct cpuset *ret_hard,
			uid_t *ret_uid)
{
	if (ret_hard &&
	    parse_hard(procfs_status_field(buf, "Cpus_allowed_list"),
		       ret_hard) < 0)
		return -EINVAL;
	if (ret_uid && parse_uid(procfs_status_field(buf, "Uid"), ret_uid) < 0)
		return -EINVAL;
	return 0;
}

/*
 * /proc/PID/cgroup:
 *   0::/user.slice/user-1000.slice/session-2.scope
 * (v1 hierarchies add lines like "4:cpu,cpuacct:/..." which we ignore.)
 */
int procfs_parse_cgroup(const char *buf, char *ret, size_t size)
{
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, "0::", 3)) {
			size_t n = strcspn(p + 3, "\n");

			if (n == 0 || n >= size)
				return -EINVAL;
			memcpy(ret, p + 3, n);
			ret[n] = '\0';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -EINVAL;
}

/*
 * /proc/PID/cmdline:
 *   /usr/bin/python3\0-m\0http.server\0       ->  "/usr/bin/python3 -m
 * http.server"
 */
void procfs_flatten_cmdline(char *buf, size_t len)
{
	while (len && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
}

int procfs_open_pid(const char *proc, int pid)
{
	return procfs_open_pid_at(-1, proc, pid);
}

/*
 * O_PATH: the fd is only ever the base of the *at() calls below (and
 * pins the process all the same); nothing reads the directory itself,
 * so it need not be opened for reading.
 */
int procfs_open_pid_at(int procfd, const char *proc, int pid)
{
	char path[PATH_MAX];
	int fd;

	if (procfd >= 0) {
		/* One name to look up rather than the whole path. */
		snprintf(path, sizeof(path), "%d", pid);
		fd = openat(procfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		snprintf(path, sizeof(path), "%s/%d", proc, pid);
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/* "stat" or "task/TID/stat" relative to the process directory. */
static void task_path(char *path, size_t size, int tid, const char *file)
{
	if (tid > 0)
		snprintf(path, size, "task/%d/%s", tid, file);
	else
		snprintf(path, size, "%s", file);
}

int procfs_read_stat(struct fd_plug *p, int pfd, int tid, struct pstat *ret)
{
	char path[64], buf[1024];
	ssize_t n;

	task_path(path, sizeof(path), tid, "stat");
	n = read_record_plug(p, pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* An empty read means the task is already a zombie being reaped. */
	if (n == 0)
		return -ESRCH;
	return procfs_parse_stat(buf, ret);
}

/* Big enough for a long Groups: line before Cpus_allowed_list. */
#define STATUS_BUFSZ 16384

int procfs_read_status(struct fd_plug *p, int pfd, int tid,
		       struct cpuset *ret_hard, uid_t *ret_uid)
{
	char path[64], buf[STATUS_BUFSZ];
	ssize_t n;

	task_path(path, sizeof(path), tid, "status");
	n = read_record_plug(p, pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return procfs_parse_status(buf, ret_hard, ret_uid);
}

/* A Cpus_preferred_source or _ratio_source value. */
static enum pref_source parse_pref_source(const char *v, bool ratio)
{
	static const struct {
		const char *word;
		enum pref_source src;
	} words[] = {
		{"thread", PREF_SRC_THREAD},
		{"process", PREF_SRC_PROCESS},
		{"cgroup", PREF_SRC_CGROUP},
	};
	size_t n;

	if (!v)
		return PREF_SRC_UNKNOWN;
	n = strcspn(v, "\n");
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i].word) == n && !strncmp(v, words[i].word, n))
			return words[i].src;
	if ((ratio && n == 7 && !strncmp(v, "default", n)) ||
	    (!ratio && n == 4 && !strncmp(v, "none", n)))
		return PREF_SRC_NONE;
	return PREF_SRC_UNKNOWN;
}

/* Cpus_preferred_ratio: "ALLOWED:PREFERRED", as the ratio files read. */
static bool parse_ratio_in_force(const char *v, unsigned int *ret_allowed,
				 unsigned int *ret_preferred)
{
	char line[32];
	struct ratio_req r;

	if (!v || procfs_value_line(v, line, sizeof(line)) < 0 ||
	    ratio_req_parse(line, &r) < 0 || r.state != REQ_SET)
		return false;
	*ret_allowed = r.value.allowed;
	*ret_preferred = r.value.preferred;
	return true;
}

/* A status key: the name before the colon, and its length. */
struct status_key {
	const char *name;
	size_t len;
};
#define STATUS_KEY(s) {s, sizeof(s) - 1}

/*
 * The values of keys[0..n) into vals (NULL: not there), as
 * procfs_status_field() finds each, in one pass over buf: status has
 * some sixty lines, and a pass per key was the most of its parse.
 */
static void status_fields(const char *buf, const struct status_key *keys,
			  const char **vals, size_t n)
{
	size_t left = n;

	for (size_t i = 0; i < n; i++)
		vals[i] = NULL;
	for (const char *p = buf; p && *p && left;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		size_t klen = colon ? (size_t)(colon - p) : 0;

		for (size_t i = 0; colon && i < n; i++) {
			const char *v = colon + 1;

			if (vals[i] || keys[i].len != klen ||
			    memcmp(p, keys[i].name, klen))
				continue;
			while (*v == '\t' || *v == ' ')
				v++;
			vals[i] = v;
			left--;
			break;
		}
		p = nl ? nl + 1 : NULL;
	}
}

int procfs_parse_pstatus(const char *buf, struct pstatus *ret)
{
	enum { HARD, UID, STATE, THREADS, SRC, RATIO, RATIO_SRC, NKEYS };
	static const struct status_key keys[NKEYS] = {
		[HARD] = STATUS_KEY("Cpus_allowed_list"),
		[UID] = STATUS_KEY("Uid"),
		[STATE] = STATUS_KEY("State"),
		[THREADS] = STATUS_KEY("Threads"),
		[SRC] = STATUS_KEY("Cpus_preferred_source"),
		[RATIO] = STATUS_KEY("Cpus_preferred_ratio"),
		[RATIO_SRC] = STATUS_KEY("Cpus_preferred_ratio_source"),
	};
	const char *v[NKEYS];
	unsigned long n;
	char *end;

	status_fields(buf, keys, v, NKEYS);
	if (parse_hard(v[HARD], &ret->hard) < 0 ||
	    parse_uid(v[UID], &ret->uid) < 0)
		return -EINVAL;
	/* Unknown (0) rather than an error: only a shortcut depends on them. */
	ret->state = v[STATE] && *v[STATE] != '\n' ? *v[STATE] : 0;
	ret->threads = 0;
	if (v[THREADS] && *v[THREADS] >= '0' && *v[THREADS] <= '9') {
		errno = 0;
		n = strtoul(v[THREADS], &end, 10);
		if (!errno && n <= UINT_MAX && (*end == '\n' || !*end))
			ret->threads = (unsigned int)n;
	}
	ret->mask_src = parse_pref_source(v[SRC], false);
	ret->ratio_src = parse_pref_source(v[RATIO_SRC], true);
	ret->ratio_allowed = ret->ratio_preferred = 0;
	/* The ratio shown is what the source says only if both parse. */
	if (!parse_ratio_in_force(v[RATIO], &ret->ratio_allowed,
				  &ret->ratio_preferred))
		ret->ratio_src = PREF_SRC_UNKNOWN;
	return 0;
}

int procfs_read_pstatus(struct fd_plug *p, int pfd, struct pstatus *ret)
{
	char buf[STATUS_BUFSZ];
	ssize_t n;

	n = read_record_plug(p, pfd, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return procfs_parse_pstatus(buf, ret);
}

int procfs_read_exe(int pfd, char *ret, size_t size)
{
	static const char deleted[] = " (deleted)";
	ssize_t n;

	n = readlinkat(pfd, "exe", ret, size - 1);
	if (n < 0)
		return -errno;
	ret[n] = '\0';
	if ((size_t)n > sizeof(deleted) - 1 &&
	    !strcmp(ret + n - (sizeof(deleted) - 1), deleted))
		ret[n - (sizeof(deleted) - 1)] = '\0';
	return 0;
}

int procfs_read_cmdline(struct fd_plug *p, int pfd, char *ret, size_t size)
{
	return procfs_read_cmdline_at(p, pfd, "cmdline", ret, size);
}

int procfs_read_cmdline_at(struct fd_plug *p, int dfd, const char *path,
			   char *ret, size_t size)
{
	ssize_t n = read_record_plug(p, dfd, path, ret, size);

	if (n < 0)
		return (int)n;
	procfs_flatten_cmdline(ret, (size_t)n);
	return 0;
}

int procfs_read_cgroup(struct fd_plug *p, int pfd, char *ret, size_t size)
{
	return procfs_read_cgroup_at(p, pfd, "cgroup", ret, size);
}

int procfs_read_cgroup_at(struct fd_plug *p, int dfd, const char *path,
			  char *ret, size_t size)
{
	char buf[4096];
	ssize_t n;

	n = read_record_plug(p, dfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procfs_parse_cgroup(buf, ret, size);
}

int procfs_read_tids(int pfd, int **buf, size_t *cap)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int fd;

	fd = openat(pfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		uint64_t tid;

		if (parse_u64(de->d_name, &tid) < 0 || tid > INT32_MAX)
			continue;
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			int *nb = realloc(*buf, nc * sizeof(*nb));

			if (!nb)
				break; /* the rest waits for the next pass */
			*buf = nb;
			*cap = nc;
		}
		(*buf)[n++] = (int)tid;
	}
	closedir(d);
	return (int)n;
}

const char *procfs_escape(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 5 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}
