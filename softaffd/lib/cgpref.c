// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgpref.h"
#include "util.h"

static int read_cg_file(struct fd_plug *p, const char *sys, const char *cg,
			const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	r = cgroup_file_path(path, sizeof(path), sys, cg, file);
	if (r < 0)
		return r;
	n = read_file_plug(p, AT_FDCWD, path, buf, size);
	return n < 0 ? (int)n : 0;
}

/*
 * cpuset.cpus.preferred:        "0-1,4", "none" or an empty line
 * cpuset.cpus.preferred.ratio:  "20:1", "none" or an empty line
 */
int cgpref_read(struct fd_plug *p, const char *sys, const char *cg,
		struct pref_req *ret)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[64];
	int r;

	r = read_cg_file(p, sys, cg, "cpuset.cpus.preferred", cpus,
			 sizeof(cpus));
	if (r == 0)
		r = read_cg_file(p, sys, cg, "cpuset.cpus.preferred.ratio",
				 ratio, sizeof(ratio));
	if (r < 0)
		return r;
	return pref_parse_req(cpus, ratio, ret) < 0 ? -EBADMSG : 0;
}

/* text and a newline into the cgroup's file. */
static int write_cg_file(struct fd_plug *p, const char *sys, const char *cg,
			 const char *file, char *text, int n)
{
	char path[PATH_MAX];
	int r;

	if (n < 0)
		return n;
	r = cgroup_file_path(path, sizeof(path), sys, cg, file);
	if (r < 0)
		return r;
	text[n++] = '\n';
	return kfile_write(p, AT_FDCWD, path, text, (size_t)n);
}

int cgpref_write_mask(struct fd_plug *p, const char *sys, const char *cg,
		      const struct cpureq *mask)
{
	char buf[CPUSET_LIST_BUFSZ + 1];

	return write_cg_file(p, sys, cg, "cpuset.cpus.preferred", buf,
			     cpureq_format(mask, true, buf, sizeof(buf) - 1));
}

int cgpref_write_ratio(struct fd_plug *p, const char *sys, const char *cg,
		       const struct ratio_req *ratio)
{
	char buf[RATIO_BUFSZ + 1];

	ratio_req_format(ratio, buf, sizeof(buf) - 1);
	return write_cg_file(p, sys, cg, "cpuset.cpus.preferred.ratio", buf,
			     (int)strlen(buf));
}
