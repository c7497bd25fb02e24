/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_PREF_H
#define SOFTAFF_PREF_H

/*
 * Pure helpers of softaff(1): the text of the kernel's preference files
 * in and out.  Nothing here reads a file; softaff.c does that and hands
 * the buffers over, so the unit tests need no fixture tree.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "ratio.h"
#include "topology.h"

/* One level's own request, as its files read: mask and ratio. */
struct pref_req {
	struct cpureq cpus;
	struct ratio_req ratio;
};

/* What applies to a task, as its status shows it. */
struct pref_task {
	struct cpuset cpus; /* Cpus_preferred_list: the effective mask */
	char source[16];    /* Cpus_preferred_source: thread, process, */
			    /* cgroup or none */
	int tgid;	    /* Tgid: the thread group of the task */
	struct ratio_req ratio; /* Cpus_preferred_ratio, always REQ_SET */
	char ratio_source[16];	 /* thread, process, cgroup or default */
};

bool pref_req_equal(const struct pref_req *a, const struct pref_req *b);
/*
 * A level's request from the texts of its two files (*_list or
 * cpuset.cpus.preferred, and the ratio's).  0 or -EINVAL (or -ERANGE).
 */
int pref_parse_req(const char *cpus, const char *ratio, struct pref_req *ret);

/*
 * <proc>/PID[/task/TID]/status: Cpus_preferred_list,
 * Cpus_preferred_source, Cpus_preferred_ratio{,_source} and Tgid into
 * ret.  0, -ENOTSUP when the lines are missing (a kernel without soft
 * affinity, or before ABI v4), -EINVAL if garbled.
 */
int pref_parse_status(const char *buf, struct pref_task *ret);

/*
 * A node list ("0", "0-1,3") -> the present CPUs of those nodes, offline
 * ones included: the kernel keeps a request for offline CPUs and uses it
 * when they come back.  0, -EINVAL (unparsable or empty list) or -ENOENT
 * with *ret_node set to the first node that does not exist.
 */
int pref_nodes_cpus(const struct topology *t, const char *nodes,
		    struct cpuset *ret, int *ret_node);

/*
 * The cgroup directory for a PATH argument: relative to the cgroup v2
 * mount <sys>/fs/cgroup ("app", "/app"), or that mount's full path
 * given ("/sys/fs/cgroup/app" with sys "/sys").  Refuses ".." so that a
 * path cannot leave the hierarchy.  Writes the directory and the name
 * relative to the mount ("/app", "/" for the root) for messages.
 * 0, -EINVAL or -ENAMETOOLONG.
 */
int pref_cgroup_dir(const char *sys, const char *arg, char *ret_dir,
		    size_t dir_size, char *ret_name, size_t name_size);

#endif
