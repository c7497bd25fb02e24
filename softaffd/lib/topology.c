// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "util.h"

/*
 * nodeN/cpuM links exist for every present CPU of the node, online or not,
 * while nodeN/cpulist lists only the online ones.
 */
static void node_present_cpus(const char *sys_root, int node,
			      struct cpuset *ret)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	cpuset_zero(ret);
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d", sys_root,
		 node);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint64_t cpu;

		if (strncmp(de->d_name, "cpu", 3) ||
		    parse_u64(de->d_name + 3, &cpu) < 0 || cpu >= CPUSET_MAX)
			continue;
		cpuset_set(ret, (unsigned int)cpu);
	}
	closedir(d);
}

int topology_alloc(struct topology *t, unsigned int nnodes)
{
	memset(t, 0, sizeof(*t));
	t->ids = calloc(nnodes ? nnodes : 1, sizeof(*t->ids));
	t->node_cpus = calloc(nnodes ? nnodes : 1, sizeof(*t->node_cpus));
	t->node_present = calloc(nnodes ? nnodes : 1, sizeof(*t->node_present));
	if (!t->ids || !t->node_cpus || !t->node_present) {
		topology_done(t);
		return -ENOMEM;
	}
	t->nnodes = nnodes;
	return 0;
}

void topology_done(struct topology *t)
{
	free(t->ids);
	free(t->node_cpus);
	free(t->node_present);
	memset(t, 0, sizeof(*t));
}

void topology_free(struct topology *t)
{
	if (!t)
		return;
	topology_done(t);
	free(t);
}

/* The nodeN ids under <sys>/devices/system/node, sorted: count or -errno. */
static int node_ids(const char *sys_root, int **ret)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int n = 0, cap = 0;
	int *ids = NULL;
	DIR *d;

	*ret = NULL;
	snprintf(path, sizeof(path), "%s/devices/system/node", sys_root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		uint64_t id;

		if (strncmp(de->d_name, "node", 4) ||
		    parse_u64(de->d_name + 4, &id) < 0 || id >= CPUSET_MAX)
			continue;
		if (n == CPUSET_MAX)
			break;
		if (n == cap) {
			int *grown = realloc(ids, (cap ? cap * 2 : 8) *
							  sizeof(*ids));

			if (!grown) {
				free(ids);
				closedir(d);
				return -ENOMEM;
			}
			ids = grown;
			cap = cap ? cap * 2 : 8;
		}
		ids[n++] = (int)id;
	}
	closedir(d);
	if (n)
		qsort(ids, n, sizeof(ids[0]), cmp_int);
	*ret = ids;
	return (int)n;
}

/* No NUMA directory: one node holding every online CPU. */
static int load_flat(const char *sys_root, struct topology *t)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ];
	struct cpuset s;
	ssize_t len;
	int r;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sys_root);
	len = read_file(path, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	r = cpuset_parse_list(buf, &s);
	if (r < 0)
		return r;
	r = topology_alloc(t, 1);
	if (r < 0)
		return r;
	t->node_cpus[0] = s;
	t->all = s;
	t->node_present[0] = s;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/present", sys_root);
	len = read_file(path, buf, sizeof(buf));
	if (len >= 0 && cpuset_parse_list(buf, &s) == 0)
		cpuset_or(&t->node_present[0], &t->node_present[0], &s);
	t->present = t->node_present[0];
	return 0;
}

int topology_load(const char *sys_root, struct topology *t)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ];
	int *ids, n, r;
	ssize_t len;

	n = node_ids(sys_root, &ids);
	if (n <= 0)
		return n < 0 ? n : load_flat(sys_root, t);
	r = topology_alloc(t, (unsigned int)n);
	if (r < 0) {
		free(ids);
		return r;
	}
	memcpy(t->ids, ids, (size_t)n * sizeof(*ids));
	free(ids);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
			 "%s/devices/system/node/node%d/cpulist", sys_root,
			 t->ids[i]);
		len = read_file(path, buf, sizeof(buf));
		r = len < 0 ? (int)len
			    : cpuset_parse_list(buf, &t->node_cpus[i]);
		if (r < 0) {
			topology_done(t);
			return r;
		}
		cpuset_or(&t->all, &t->all, &t->node_cpus[i]);
		node_present_cpus(sys_root, t->ids[i], &t->node_present[i]);
		cpuset_or(&t->node_present[i], &t->node_present[i],
			  &t->node_cpus[i]);
		cpuset_or(&t->present, &t->present, &t->node_present[i]);
	}
	return 0;
}

int topology_node_index(const struct topology *t, int node_id)
{
	for (unsigned int i = 0; i < t->nnodes; i++)
		if (t->ids[i] == node_id)
			return (int)i;
	return -1;
}

void topology_nodes_of(const struct topology *t, const struct cpuset *cpus,
		       struct cpuset *ret)
{
	cpuset_zero(ret);
	for (unsigned int i = 0; i < t->nnodes; i++)
		if (cpuset_intersects(&t->node_cpus[i], cpus))
			cpuset_set(ret, i);
}
