/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_TOPOLOGY_H
#define SOFTAFF_TOPOLOGY_H

#include "cpuset.h"

/*
 * NUMA nodes as listed under <sys>/devices/system/node, sorted by id.
 * The per-node arrays hold nnodes entries, allocated for the nodes there
 * are: a struct cpuset is 1 KiB (CPUSET_MAX), so arrays sized for every
 * node id the kernel allows would cost megabytes a daemon never uses.
 */
struct topology {
	unsigned int nnodes;
	int *ids;
	struct cpuset *node_cpus; /* online CPUs of each node */
	struct cpuset all; /* union of node_cpus */
	/*
	 * Present CPUs of each node, online or not: a rule may name CPUs that
	 * are offline right now (a restart during CPU hotplug must not turn a
	 * good configuration into an error).
	 */
	struct cpuset *node_present;
	struct cpuset present; /* union of node_present */
};

/* Empty sets for nnodes nodes (ids 0), for the loader and fixtures. */
int topology_alloc(struct topology *t, unsigned int nnodes);
/* Frees the per-node arrays, not t; accepts a zeroed t. */
void topology_done(struct topology *t);
/* topology_done() and free(t) of a calloc'd t; NULL passes. */
void topology_free(struct topology *t);

/*
 * Load the topology from <sys>/devices/system/node/nodeN/cpulist (online
 * CPUs) and the nodeN/cpuM links (present CPUs, offline ones too).  A
 * machine (or fixture) without that directory is treated as one node 0
 * holding the CPUs of <sys>/devices/system/cpu/online (and .../present).
 * Node ids are kept below CPUSET_MAX (node index sets are cpusets).
 * 0 or -errno; ret is allocated (topology_done()) only on success.
 */
int topology_load(const char *sys_root, struct topology *ret);
/* Index of node id, or -1. */
int topology_node_index(const struct topology *t, int node_id);
/* Set of node indexes whose CPUs intersect cpus. */
void topology_nodes_of(const struct topology *t, const struct cpuset *cpus,
		       struct cpuset *ret_nodes);

#endif
