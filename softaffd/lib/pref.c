// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pref.h"
#include "procfs.h"
#include "util.h"

bool pref_req_equal(const struct pref_req *a, const struct pref_req *b)
{
	return cpureq_equal(&a->cpus, &b->cpus) &&
	       ratio_req_equal(&a->ratio, &b->ratio);
}

int pref_parse_req(const char *cpus, const char *ratio, struct pref_req *ret)
{
	struct pref_req r;
	int e = cpureq_parse_list(cpus, &r.cpus);

	if (e < 0)
		return e;
	if (ratio_req_parse(ratio, &r.ratio) < 0)
		return -EINVAL;
	*ret = r;
	return 0;
}

/* One word of a status value ("thread\n") into buf. */
static int copy_word(const char *v, char *buf, size_t size)
{
	size_t n = strcspn(v, " \t\n");

	if (!n || n >= size)
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

/*
 * <proc>/PID/status (excerpt, patched kernel, ABI v4):
 *   Tgid:	1234
 *   Cpus_preferred:	3
 *   Cpus_preferred_list:	0-1
 *   Cpus_preferred_source:	process
 *   Cpus_preferred_ratio:	5:4
 *   Cpus_preferred_ratio_source:	process
 */
int pref_parse_status(const char *buf, struct pref_task *ret)
{
	char line[CPUSET_LIST_BUFSZ];
	const char *list, *src, *ratio, *rsrc, *tgid;
	uint64_t id;

	list = procfs_status_field(buf, "Cpus_preferred_list");
	src = procfs_status_field(buf, "Cpus_preferred_source");
	ratio = procfs_status_field(buf, "Cpus_preferred_ratio");
	rsrc = procfs_status_field(buf, "Cpus_preferred_ratio_source");
	if (!list || !src || !ratio || !rsrc)
		return -ENOTSUP;
	if (procfs_value_line(list, line, sizeof(line)) < 0 ||
	    cpuset_parse_list(line, &ret->cpus) < 0 ||
	    copy_word(src, ret->source, sizeof(ret->source)) < 0 ||
	    procfs_value_line(ratio, line, sizeof(line)) < 0 ||
	    ratio_req_parse(line, &ret->ratio) < 0 ||
	    ret->ratio.state != REQ_SET ||
	    copy_word(rsrc, ret->ratio_source, sizeof(ret->ratio_source)) < 0)
		return -EINVAL;
	tgid = procfs_status_field(buf, "Tgid");
	if (!tgid || copy_word(tgid, line, sizeof(line)) < 0 ||
	    parse_u64(line, &id) < 0 || id > INT32_MAX)
		return -EINVAL;
	ret->tgid = (int)id;
	return 0;
}

int pref_nodes_cpus(const struct topology *t, const char *nodes,
		    struct cpuset *ret, int *ret_node)
{
	struct cpuset ids, cpus;
	int id;

	if (cpuset_parse_list(nodes, &ids) < 0 || cpuset_empty(&ids))
		return -EINVAL;
	cpuset_zero(&cpus);
	for_each_cpu (id, &ids) {
		int i = topology_node_index(t, id);

		if (i < 0) {
			*ret_node = id;
			return -ENOENT;
		}
		cpuset_or(&cpus, &cpus, &t->node_present[i]);
	}
	*ret = cpus;
	return 0;
}

/* Does any component of path equal ".."? */
static bool has_dotdot(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
		p += strspn(p, "/");
	}
	return false;
}

int pref_cgroup_dir(const char *sys, const char *arg, char *ret_dir,
		    size_t dir_size, char *ret_name, size_t name_size)
{
	char mount[PATH_MAX];
	size_t mlen;
	const char *rel = arg;
	int n;

	if (!*arg || has_dotdot(arg))
		return -EINVAL;
	mlen = (size_t)snprintf(mount, sizeof(mount), "%s/fs/cgroup", sys);
	if (mlen >= sizeof(mount))
		return -ENAMETOOLONG;
	if (!strncmp(arg, mount, mlen) && (!arg[mlen] || arg[mlen] == '/'))
		rel = arg + mlen;
	rel += strspn(rel, "/");
	n = snprintf(ret_dir, dir_size, "%s%s%s", mount, *rel ? "/" : "", rel);
	if (n < 0 || (size_t)n >= dir_size)
		return -ENAMETOOLONG;
	/* Trailing slashes are no part of the name. */
	while (n > 1 && ret_dir[n - 1] == '/')
		ret_dir[--n] = '\0';
	n = snprintf(ret_name, name_size, "/%s", rel);
	if (n < 0 || (size_t)n >= name_size)
		return -ENAMETOOLONG;
	while (n > 1 && ret_name[n - 1] == '/')
		ret_name[--n] = '\0';
	return 0;
}
