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
#include "topology.h"

/* The kernel's range for either side of a ratio (sched_allowed too). */
#define PREF_RATIO_MIN 1
#define PREF_RATIO_MAX 10000

/* allowed == 0 stands for "default": no ratio of this level's own. */
struct pref_ratio {
	unsigned int allowed, preferred;
};

/* The preference in force for a task, as /proc shows it. */
struct pref_task {
	struct cpuset cpus; /* Cpus_preferred_list: the effective mask */
	char source[16];    /* Cpus_preferred_source: task, cgroup, none */
	int tgid;	    /* Tgid: the thread group of the task */
	struct pref_ratio ratio;
	char ratio_source[16]; /* task, cgroup or default */
};

/*
 * "A:P" (decimal, each 1..10000) or "default", blanks around it ignored,
 * as the kernel takes them.  0 or -EINVAL.
 */
int pref_parse_ratio(const char *s, struct pref_ratio *ret);

/*
 * <proc>/PID[/task/TID]/status: Cpus_preferred_list,
 * Cpus_preferred_source and Tgid into ret.  0, -ENOTSUP when the lines
 * are missing (a kernel without soft affinity), -EINVAL if garbled.
 */
int pref_parse_status(const char *buf, struct pref_task *ret);

/*
 * <proc>/PID/soft_affinity_ratio, "5:4 task\n", into ret's ratio and
 * ratio_source.  0 or -EINVAL.
 */
int pref_parse_ratio_file(const char *buf, struct pref_task *ret);

/*
 * A cgroup's own cpuset.cpus.preferred: "0-1\n", or "\n" for none
 * (ret_has false).  0 or -EINVAL.  Its .ratio file ("20:1\n" or
 * "default\n") is pref_parse_ratio()'s.
 */
int pref_parse_cgroup_cpus(const char *buf, struct cpuset *ret,
			   bool *ret_has);

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

/* "5:4" or "default" into buf (at least 24 bytes). */
const char *pref_format_ratio(const struct pref_ratio *r, char *buf,
			      size_t size);

#endif
