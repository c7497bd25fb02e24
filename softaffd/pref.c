// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pref.h"
#include "procfs.h"
#include "util.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Copy s without surrounding blanks into buf; false if it does not fit. */
static bool trim_copy(const char *s, char *buf, size_t size)
{
	size_t n;

	while (is_blank(*s))
		s++;
	n = strlen(s);
	while (n && is_blank(s[n - 1]))
		n--;
	if (n >= size)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

static int parse_side(const char *s, unsigned int *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v < PREF_RATIO_MIN || v > PREF_RATIO_MAX)
		return -EINVAL;
	*ret = (unsigned int)v;
	return 0;
}

int pref_parse_ratio(const char *s, struct pref_ratio *ret)
{
	struct pref_ratio r;
	char buf[32], *colon;

	if (!trim_copy(s, buf, sizeof(buf)))
		return -EINVAL;
	if (!strcmp(buf, "default")) {
		ret->allowed = ret->preferred = 0;
		return 0;
	}
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (parse_side(buf, &r.allowed) < 0 ||
	    parse_side(colon + 1, &r.preferred) < 0)
		return -EINVAL;
	*ret = r;
	return 0;
}

/* One word of a status value ("task\n") into buf. */
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
 * <proc>/PID/status (excerpt, patched kernel):
 *   Tgid:	1234
 *   Cpus_preferred:	3
 *   Cpus_preferred_list:	0-1
 *   Cpus_preferred_source:	task
 */
int pref_parse_status(const char *buf, struct pref_task *ret)
{
	char line[CPUSET_LIST_BUFSZ];
	const char *list, *src, *tgid;
	uint64_t id;
	size_t n;

	list = procfs_status_field(buf, "Cpus_preferred_list");
	src = procfs_status_field(buf, "Cpus_preferred_source");
	if (!list || !src)
		return -ENOTSUP;
	n = strcspn(list, "\n");
	if (n >= sizeof(line))
		return -EINVAL;
	memcpy(line, list, n);
	line[n] = '\0';
	if (cpuset_parse_list(line, &ret->cpus) < 0 ||
	    copy_word(src, ret->source, sizeof(ret->source)) < 0)
		return -EINVAL;
	tgid = procfs_status_field(buf, "Tgid");
	if (!tgid || copy_word(tgid, line, sizeof(line)) < 0 ||
	    parse_u64(line, &id) < 0 || id > INT32_MAX)
		return -EINVAL;
	ret->tgid = (int)id;
	return 0;
}

/* <proc>/PID/soft_affinity_ratio: "100:1 default\n" */
int pref_parse_ratio_file(const char *buf, struct pref_task *ret)
{
	char val[32];
	const char *sp;

	sp = strchr(buf, ' ');
	if (!sp || (size_t)(sp - buf) >= sizeof(val))
		return -EINVAL;
	memcpy(val, buf, (size_t)(sp - buf));
	val[sp - buf] = '\0';
	/* The kernel shows the value in force, never "default" here. */
	if (pref_parse_ratio(val, &ret->ratio) < 0 || !ret->ratio.allowed)
		return -EINVAL;
	return copy_word(sp + 1, ret->ratio_source, sizeof(ret->ratio_source));
}

int pref_parse_cgroup_cpus(const char *buf, struct cpuset *ret, bool *ret_has)
{
	struct cpuset s;

	if (cpuset_parse_list(buf, &s) < 0)
		return -EINVAL;
	*ret = s;
	*ret_has = !cpuset_empty(&s);
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

const char *pref_format_ratio(const struct pref_ratio *r, char *buf,
			      size_t size)
{
	if (!r->allowed)
		snprintf(buf, size, "default");
	else
		snprintf(buf, size, "%u:%u", r->allowed, r->preferred);
	return buf;
}
