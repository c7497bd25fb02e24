/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SAMPLER_H
#define SOFTAFF_SAMPLER_H

#include <stdint.h>

#include "cpuset.h"
#include "topology.h"

struct cpu_times {
	uint64_t busy, total;
};

/* Per-CPU utilization from successive <proc>/stat snapshots. */
struct sampler {
	struct cpu_times prev[CPUSET_MAX];
	struct cpuset prev_present;
	double util[CPUSET_MAX]; /* 0..1 over the last interval */
	struct cpuset valid;	 /* CPUs with a fresh util value */
	struct cpu_times now[CPUSET_MAX]; /* scratch of sampler_feed() */
	char *buf; /* scratch of sampler_update(), allocated on first use */
};

/* Pure: parse /proc/stat "cpuN ..." lines.  0 or -EINVAL. */
int sampler_parse(const char *buf, struct cpu_times *times,
		  struct cpuset *present);
/* Feed one /proc/stat text; the first call only primes. 0 or -EINVAL. */
int sampler_feed(struct sampler *s, const char *buf);
/* Read <proc>/stat and feed it.  0 or -errno. */
int sampler_update(struct sampler *s, const char *proc);
void sampler_done(struct sampler *s);
/*
 * Utilization of each topology node (mean of its CPUs with a value);
 * a node without a fresh value keeps what ret held, so a missed tick is
 * not mistaken for an idle node.  ret has t->nnodes entries.
 */
void sampler_node_util(const struct sampler *s, const struct topology *t,
		       double *ret);

#endif
