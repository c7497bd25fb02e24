// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A cgroup's run and wait time, for the wait fraction of cgroup and unit
 * rules: two reads per cgroup instead of two per thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgstat.h"
#include "util.h"

/* The decimal after "name" at the start of a line of buf. */
static int find_u64(const char *buf, const char *name, uint64_t *ret)
{
	size_t len = strlen(name);

	for (const char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char num[24];
		size_t n;

		if (strncmp(l, name, len))
			continue;
		n = strspn(l + len, "0123456789");
		if (!n || n >= sizeof(num))
			return -EBADMSG;
		memcpy(num, l + len, n);
		num[n] = '\0';
		return parse_u64(num, ret) < 0 ? -EBADMSG : 0;
	}
	return -EBADMSG;
}

/*
 * cpu.pressure:
 *   some avg10=1.23 avg60=0.40 avg300=0.08 total=2291847
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 */
int cgstat_parse_pressure(const char *buf, uint64_t *ret_some_us)
{
	const char *t;

	if (strncmp(buf, "some ", 5))
		return -EBADMSG;
	t = strstr(buf, " total=");
	if (!t || t > buf + strcspn(buf, "\n"))
		return -EBADMSG;
	return find_u64(t + 1, "total=", ret_some_us);
}

/*
 * cpu.stat:
 *   usage_usec 81632
 *   user_usec 60000
 *   system_usec 21632
 *   ...
 */
int cgstat_parse_cpu_stat(const char *buf, uint64_t *ret_usage_us)
{
	return find_u64(buf, "usage_usec ", ret_usage_us);
}

int cgstat_read(const char *sys, const char *cg, struct cgstat *ret)
{
	char path[PATH_MAX], buf[1024];
	ssize_t n;
	int r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, "cpu.pressure");
	if (r < 0)
		return r;
	n = read_file(path, buf, sizeof(buf));
	if (n == -ENOENT) {
		struct stat st;

		/* No PSI there, or no cgroup at all: only the second is gone. */
		cgroup_file_path(path, sizeof(path), sys, cg, "");
		return stat(path, &st) < 0 ? -ESRCH : -ENOENT;
	}
	if (n < 0)
		return (int)n;
	r = cgstat_parse_pressure(buf, &ret->some_us);
	if (r < 0)
		return r;
	cgroup_file_path(path, sizeof(path), sys, cg, "cpu.stat");
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return cgstat_parse_cpu_stat(buf, &ret->usage_us);
}

bool cgstat_delta(const struct cgstat *prev, const struct cgstat *now,
		  uint64_t interval_ns, struct cgdelta *ret)
{
	if (now->usage_us < prev->usage_us || now->some_us < prev->some_us)
		return false;
	ret->run_ns = (now->usage_us - prev->usage_us) * 1000;
	ret->wait_ns = (now->some_us - prev->some_us) * 1000;
	ret->base_ns = ret->run_ns < interval_ns ? ret->run_ns : interval_ns;
	return true;
}

int cgstat_id(const char *sys, const char *cg, uint64_t *ret_id)
{
	char path[PATH_MAX];
	struct stat st;
	int r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, "");
	if (r < 0)
		return r;
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
	*ret_id = (uint64_t)st.st_ino;
	return 0;
}

int cgstat_trigger_open(const char *sys, const char *cg,
			unsigned int threshold_us, unsigned int window_us)
{
	char path[PATH_MAX], trig[64];
	int fd, r, len;

	r = cgroup_file_path(path, sizeof(path), sys, cg, "cpu.pressure");
	if (r < 0)
		return r;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The kernel parses the string and keeps the trigger with the fd. */
	len = snprintf(trig, sizeof(trig), "some %u %u", threshold_us,
		       window_us);
	if (write(fd, trig, (size_t)len + 1) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
