/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_TOPOLOGY_H
#define SOFTAFF_TOPOLOGY_H

#include "cpuset.h"

/* NUMA nodes as listed under <sys>/devices/system/node, sorted by id. */
struct topology {
	unsigned int nnodes;
	int ids[CPUSET_MAX];
	struct cpuset node_cpus[CPUSET_MAX]; /* online CPUs of each node */
	struct cpuset all; /* union of node_cpus */
	/*
	 * Present CPUs of each node, online or not: a rule may name CPUs that
	 * are offline right now (a restart during CPU hotplug must not turn a
	 * good configuration into an error).
	 */
	struct cpuset node_present[CPUSET_MAX];
	struct cpuset present; /* union of node_present */
};

/*
 * Load the topology from <sys>/devices/system/node/nodeN/cpulist (online
 * CPUs) and the nodeN/cpuM links (present CPUs, offline ones too).  A
 * machine (or fixture) without that directory is treated as one node 0
 * holding the CPUs of <sys>/devices/system/cpu/online (and .../present).
 * 0 or -errno.
 */
int topology_load(const char *sys_root, struct topology *ret);
/* Index of node id, or -1. */
int topology_node_index(const struct topology *t, int node_id);
/* Set of node indexes whose CPUs intersect cpus. */
void topology_nodes_of(const struct topology *t, const struct cpuset *cpus,
		       struct cpuset *ret_nodes);

#endif
