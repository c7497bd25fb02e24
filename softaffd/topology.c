// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "util.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int topology_load(const char *sys_root, struct topology *t)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ];
	struct dirent *de;
	unsigned int n = 0;
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
