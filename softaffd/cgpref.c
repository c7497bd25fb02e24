// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "affinity.h"
#include "cgpref.h"
#include "util.h"

/*
 * cpuset.cpus.preferred:
 *   0-1,4
 * or an empty line: no value of the cgroup's own.
 */
int cgpref_parse_mask(const char *buf, bool *ret_has, struct cpuset *ret)
{
	size_t n = strcspn(buf, "\n");

	cpuset_zero(ret);
	*ret_has = n > 0;
	if (!n)
		return 0;
	return cpuset_parse_list(buf, ret) < 0 ? -EBADMSG : 0;
}

/*
 * cpuset.cpus.preferred.ratio:
 *   20:1
 * or "default".
 */
int cgpref_parse_ratio(const char *buf, struct ratio *ret)
{
	unsigned int a, p;
	char end;

	if (!strncmp(buf, "default", 7)) {
		*ret = (struct ratio){0, 0};
		return 0;
	}
	if (sscanf(buf, "%u:%u%c", &a, &p, &end) < 2 || !a || !p)
		return -EBADMSG;
	*ret = (struct ratio){a, p};
	return 0;
}

static int read_cg_file(const char *sys, const char *cg, const char *file,
			char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, file);
	if (r < 0)
		return r;
	n = read_file(path, buf, size);
	return n < 0 ? (int)n : 0;
}

int cgpref_read(const char *sys, const char *cg, struct cgpref *ret)
{
	char buf[CPUSET_LIST_BUFSZ];
	int r;

	r = read_cg_file(sys, cg, "cpuset.cpus.preferred", buf, sizeof(buf));
	if (r == 0)
		r = cgpref_parse_mask(buf, &ret->has_mask, &ret->mask);
	if (r == 0)
		r = read_cg_file(sys, cg, "cpuset.cpus.preferred.ratio", buf,
				 sizeof(buf));
	return r < 0 ? r : cgpref_parse_ratio(buf, &ret->ratio);
}

int cgpref_write_mask(const char *sys, const char *cg,
		      const struct cpuset *mask)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ + 1];
	int n = 0, r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, "cpuset.cpus.preferred");
	if (r < 0)
		return r;
	if (mask) {
		n = cpuset_format_list(mask, buf, sizeof(buf) - 1);
		if (n < 0)
			return n;
	}
	/* A lone newline clears (a 0-byte write would change nothing). */
	buf[n++] = '\n';
	return aff_write(AT_FDCWD, path, buf, (size_t)n);
}

int cgpref_write_ratio(const char *sys, const char *cg,
		       const struct ratio *ratio)
{
	char path[PATH_MAX], buf[32];
	int n, r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, "cpuset.cpus.preferred.ratio");
	if (r < 0)
		return r;
	if (ratio)
		n = snprintf(buf, sizeof(buf), "%u:%u\n", ratio->allowed,
			     ratio->preferred);
	else
		n = snprintf(buf, sizeof(buf), "default\n");
	return aff_write(AT_FDCWD, path, buf, (size_t)n);
}
