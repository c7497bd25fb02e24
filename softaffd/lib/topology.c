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

int topology_load(const char *sys_root, struct topology *t)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ];
	struct dirent *de;
	unsigned int n = 0;
	struct cpuset s;
	ssize_t len;
	DIR *d;
	int r;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/devices/system/node", sys_root);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			uint64_t id;

			if (strncmp(de->d_name, "node", 4) ||
			    parse_u64(de->d_name + 4, &id) < 0 ||
			    id >= CPUSET_MAX)
				continue;
			if (n == CPUSET_MAX)
				break;
			t->ids[n++] = (int)id;
		}
		closedir(d);
		qsort(t->ids, n, sizeof(t->ids[0]), cmp_int);
	}
	if (!n) {
		/* No NUMA directory: one node holding every online CPU. */
		snprintf(path, sizeof(path), "%s/devices/system/cpu/online",
			 sys_root);
		len = read_file(path, buf, sizeof(buf));
		if (len < 0)
			return (int)len;
		r = cpuset_parse_list(buf, &t->node_cpus[0]);
		if (r < 0)
			return r;
		t->ids[0] = 0;
		t->nnodes = 1;
		t->all = t->node_cpus[0];
		t->node_present[0] = t->node_cpus[0];
		snprintf(path, sizeof(path), "%s/devices/system/cpu/present",
			 sys_root);
		len = read_file(path, buf, sizeof(buf));
		if (len >= 0 && cpuset_parse_list(buf, &s) == 0)
			cpuset_or(&t->node_present[0], &t->node_present[0], &s);
		t->present = t->node_present[0];
		return 0;
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
			 "%s/devices/system/node/node%d/cpulist", sys_root,
			 t->ids[i]);
		len = read_file(path, buf, sizeof(buf));
		if (len < 0)
			return (int)len;
		r = cpuset_parse_list(buf, &t->node_cpus[i]);
		if (r < 0)
			return r;
		cpuset_or(&t->all, &t->all, &t->node_cpus[i]);
		node_present_cpus(sys_root, t->ids[i], &t->node_present[i]);
		cpuset_or(&t->node_present[i], &t->node_present[i],
			  &t->node_cpus[i]);
		cpuset_or(&t->present, &t->present, &t->node_present[i]);
	}
	t->nnodes = n;
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
