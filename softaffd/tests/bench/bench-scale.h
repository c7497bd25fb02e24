/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_TESTS_BENCH_SCALE_H
#define SOFTAFF_TESTS_BENCH_SCALE_H

/*
 * bench_scale's parts (tests/bench-scale.c runs them): what an idle and
 * a loaded daemon spend (bench-scale-idle.c), events
 * (bench-scale-events.c) and rename storms (bench-scale-storm.c), all
 * on the fake root of tests/mkfakescale.py, timed by the harness's own
 * thread CPU time.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "dirtyq.h"
#include "log.h"
#include "manager.h"
#include "sampler.h"
#include "topology.h"
#include "util.h"

/*
 * The manager before and after issue #26's split, which made struct mgr
 * private (manager-internal.h, mgr_new): the harness builds against
 * both, so that before and after figures come from the same code.  It
 * looks inside only for the dirty queue.
 */
#if __has_include("manager-internal.h")
#include "manager-internal.h"
#define MGR_PRIVATE 1
#else
#define MGR_PRIVATE 0
#endif

/*
 * The daemon's own figures (daemon-internal.h): the dirty queue gets
 * EVAL_BUDGET_MS of every BUDGET_WINDOW_MS, at most SLICE_MS at a time;
 * the connector's events CONN_BUDGET_MS, EVENTS_PER_DISPATCH at a time;
 * the attributes re-read every ATTRS_EVERY-th rescan.  A rescan every
 * rescan_ms, config.c's default: keep RESCAN_MS in step with it.
 */
#include "daemon-internal.h"
#define RESCAN_MS 10000

/* bench-scale.c: the fake root, the manager, what they share. */
extern char dir[PATH_MAX / 8];
extern struct roots roots;
extern struct config *cfg;
extern struct mgr *mgr;
extern struct sampler smp;

uint64_t mono_ns(void);
uint64_t cpu_ns(void);
void sleep_until_ns(uint64_t t);
void die(const char *what) __attribute__((noreturn));
void *xcalloc(size_t n, size_t size);

/*
 * What the last sample() gave of rule r: sampled now, its last figures
 * (the daemon keeps them per rule, struct rule_softness).
 */
struct bench_rule {
	bool sampled_now;
	struct rule_figures last;
};
const struct bench_rule *rule_state(unsigned int r);
/* The manager's sample at now, as the daemon takes it. */
void sample(uint64_t now);
const struct mgr_counters *counters(void);
/* How many processes the manager manages (by its public listing). */
size_t managed_count(void);
/*
 * Evaluate what the dirty queue holds, untimed: the rest of the thread
 * walks an earlier phase capped is not the next phase's cost.
 */
void drain_queue(void);

/* The fake root's manifests (tests/mkfakescale.py). */
struct proc_ent {
	int pid, threads, rule;
	char kind; /* m(anaged), o(ther), k(thread) */
	char comm[32];
};

struct spare_ent {
	char kind[16], id[32];
	int pid, parent, rule;
};

extern struct proc_ent *procs;
extern size_t nprocs;
extern struct spare_ent *spares;
extern size_t nspares;

/* A fork or exec brings a spare into /proc (in), its exit takes it out. */
void spare_move(const struct spare_ent *e, bool in);

/* The q-quantile (0..1) of n values, sorted in place. */
uint64_t quantile(uint64_t *v, size_t n, double q);
/* One kind of event: CPU per event over the batch, the wall's spread. */
void report_events(const char *key, uint64_t cpu, uint64_t *wall, size_t n);

/* bench-scale-idle.c */
void bench_idle(void);
/* bench-scale-events.c */
void bench_events(size_t events);
/* bench-scale-status.c */
void bench_status(struct topology *topo);
/* bench-scale-storm.c */
void bench_storm(const char *key, unsigned int rate, unsigned int secs,
		 bool flip);

#endif
