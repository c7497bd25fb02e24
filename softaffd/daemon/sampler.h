/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SAMPLER_H
#define SOFTAFF_SAMPLER_H

#include <stdint.h>

#include "cpuset.h"
#include "topology.h"

struct cpu_times {
	uint64_t busy, total;
};

/*
 * Per-CPU utilization from successive <proc>/stat snapshots.  The
 * per-CPU arrays hold ncpus entries: as many as the highest CPU id the
 * files list, grown when a line names a higher one (hotplug), not
 * CPUSET_MAX, which is 8192 for the sake of the rare machine that has
 * such ids.  A zeroed struct is an empty sampler.
 */
struct sampler {
	unsigned int ncpus;
	struct cpu_times *prev;
	struct cpuset prev_present;
	double *util;		 /* 0..1 over the last interval */
	struct cpuset valid;	 /* CPUs with a fresh util value */
	struct cpu_times *now; /* scratch of sampler_feed() */
	char *buf; /* scratch of sampler_update(), allocated on first use */
	/*
	 * Tasks waiting for each CPU, on average over the last interval
	 * (run_delay of <proc>/schedstat over wall time): a CPU that idles
	 * part of the interval while tasks queue on it is contended, not
	 * spare.  Only CPUs in wait_valid have a value.
	 */
	double *wait;
	struct cpuset wait_valid;
	uint64_t *prev_delay;
	struct cpuset prev_delay_present;
	uint64_t prev_delay_ns; /* when prev_delay was read */
	uint64_t *now_delay; /* scratch of sampler_feed_delay() */
	char *delay_buf; /* scratch of sampler_update() */
};

/* Room for CPUs 0..ncpus-1 in every per-CPU array.  0 or -ENOMEM. */
int sampler_reserve(struct sampler *s, unsigned int ncpus);
/*
 * Feed one /proc/stat text ("cpuN ..." lines); the first call only
 * primes.  0, -EINVAL or -ENOMEM.
 */
int sampler_feed(struct sampler *s, const char *buf);
/*
 * Feed one /proc/schedstat text (version 15: run_delay in ns is the 8th
 * value of a cpuN line) read at now_ns; the first call primes.
 */
int sampler_feed_delay(struct sampler *s, const char *buf, uint64_t now_ns);
/*
 * Read <proc>/stat and feed it, then, if delays, <proc>/schedstat.  0
 * or -errno of the first; without the second (not asked for, or no
 * CONFIG_SCHEDSTATS) wait_valid is empty and the waiting is unknown.
 * /proc/schedstat is some 4 MiB on a large host: only adaptive rules
 * use what it says, so a configuration without them never reads it.
 */
int sampler_update(struct sampler *s, const char *proc, bool delays);
void sampler_done(struct sampler *s);
/*
 * Utilization of each topology node (mean of its CPUs with a value);
 * a node without a fresh value keeps what ret held, so a missed tick is
 * not mistaken for an idle node.  ret has t->nnodes entries.
 */
void sampler_node_util(const struct sampler *s, const struct topology *t,
		       double *ret);

#endif
