// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaff --cgroup PATH: a cgroup's own request
 * (cpuset.cpus.preferred and its .ratio), what its tasks without one
 * get (.effective), and the writes to the two files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "softaff.h"

/* 0 if path is a directory, else -errno (-ENOTDIR for a file). */
static int check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Why a cgroup has no cpuset.cpus.preferred; the exit code. */
static int cgroup_missing(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (!strcmp(name, "/")) {
		fprintf(stderr,
			"softaff: the root cgroup has no preference files; "
			"name a cgroup below it\n");
		return EX_FAIL;
	}
	path_join(path, sizeof(path), dir, "cpuset.cpus");
	if (access(path, F_OK) == 0) {
		fprintf(stderr,
			"softaff: %s/cpuset.cpus.preferred is missing: this "
			"kernel does not have the soft affinity series\n",
			dir);
		return EX_NOKERNEL;
	}
	fprintf(stderr,
		"softaff: %s: no cpuset files: the cpuset controller is not "
		"enabled for cgroup %s (echo +cpuset > its parent's "
		"cgroup.subtree_control)\n",
		dir, name);
	return EX_FAIL;
}

/*
 * A cgroup's own request, and what its tasks without one of their own
 * get (cpuset.cpus.preferred.effective: the nearest request that does
 * not inherit, within cpuset.cpus.effective).
 */
static int show_cgroup(const char *dir, const char *name, const char *when,
		       bool list)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ], cpus[CPUSET_LIST_BUFSZ];
	struct cpureq eff;
	struct pref_req q;
	int r;

	r = read_req(dir, "cpuset.cpus.preferred",
		     "cpuset.cpus.preferred.ratio", &q, path, sizeof(path));
	if (r == 0) {
		r = read_pref_file(dir, "cpuset.cpus.preferred.effective", buf,
				   sizeof(buf), path, sizeof(path));
		if (r == 0 && cpureq_parse_list(buf, &eff) < 0)
			r = -EINVAL;
	}
	if (r == -EINVAL) {
		fprintf(stderr, "softaff: %s: cannot parse it\n", path);
		return EX_FAIL;
	}
	if (r < 0) {
		file_error(path, -r, NULL);
		return EX_FAIL;
	}
	cpureq_format(&q.cpus, list, cpus, sizeof(cpus));
	printf("cgroup %s's %s preferred %s: %s%s\n", name, when,
	       list ? "list" : "mask", cpus,
	       q.cpus.state == REQ_INHERIT ? " (the nearest ancestor's applies)"
					   : "");
	printf("cgroup %s's %s ratio: %s\n", name, when,
	       ratio_req_format(&q.ratio, buf, sizeof(buf)));
	/* An empty line: no level has a mask for its tasks. */
	if (eff.state == REQ_INHERIT)
		eff.state = REQ_NONE;
	cpureq_format(&eff, list, cpus, sizeof(cpus));
	printf("cgroup %s's %s effective %s: %s\n", name, when,
	       list ? "list" : "mask", cpus);
	return EX_OK;
}

int run_cgroup(const struct opts *o)
{
	char dir[PATH_MAX], name[PATH_MAX], path[PATH_MAX];
	int r;

	/* Room left in dir for the longest file name below. */
	r = pref_cgroup_dir(o->roots.sys, o->cgroup_arg, dir, sizeof(dir) - 64,
			    name, sizeof(name));
	if (r < 0)
		return usage_error("bad cgroup path '%s' (no '..'; relative "
				   "to the cgroup v2 mount)",
				   o->cgroup_arg);
	r = check_dir(dir);
	if (r < 0) {
		file_error(dir, -r, "no such cgroup");
		return EX_FAIL;
	}
	path_join(path, sizeof(path), dir, "cpuset.cpus.preferred");
	if (access(path, F_OK) < 0)
		return cgroup_missing(dir, name);
	r = show_cgroup(dir, name, "current", o->list);
	if (r != EX_OK || !(o->have_cpus || o->have_ratio))
		return r;
	r = write_values(o, dir, "cpuset.cpus.preferred",
			 "cpuset.cpus.preferred.ratio");
	if (r != EX_OK)
		return r;
	return readback(show_cgroup(dir, name, "new", o->list));
}

