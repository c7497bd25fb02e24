// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Events one at a time, each with the flush that evaluates it, as the
 * daemon's loop handles a quiet connector: exec into a program a rule
 * matches or none does, forks of unmanaged and managed processes, new
 * threads, exits.  The spare processes and threads of the fake root are
 * moved into /proc just before their event, outside the timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-scale.h"

static struct spare_ent **spares_of(const char *kind, size_t max, size_t *n)
{
	struct spare_ent **v = xcalloc(nspares, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < nspares && *n < max; i++)
		if (!strcmp(spares[i].kind, kind))
			v[(*n)++] = &spares[i];
	return v;
}

/* A process of kind ('o': other) to be the parent of forks, i-th. */
static int proc_of_kind(char kind, size_t i)
{
	size_t seen = 0;

	for (size_t k = 0; k < nprocs; k++)
		if (procs[k].kind == kind && seen++ == i)
			return procs[k].pid;
	die("no process of the kind asked for");
	return -1;
}

/*
 * An exec: the process forked from an unmanaged parent (that event is
 * fork_other's cost, not timed here), then exec'd into what the spare
 * directory shows.  Timed: the event and the flush that evaluates it.
 */
static void bench_exec(const char *kind, const char *key, size_t max,
		       bool expect_managed)
{
	size_t n, hits, before = managed_count();
	struct spare_ent **v = spares_of(kind, max, &n);
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	int parent = proc_of_kind('o', 0);

	for (size_t i = 0; i < n; i++) {
		spare_move(v[i], true);
		mgr_on_fork(mgr, parent, v[i]->pid, v[i]->pid);
	}
	drain_queue();
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_exec(mgr, v[i]->pid);
		mgr_flush(mgr, UINT64_MAX);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	hits = managed_count() - before;
	for (size_t i = 0; i < n; i++) {
		mgr_on_exit(mgr, v[i]->pid, v[i]->pid);
		spare_move(v[i], false);
	}
	report_events(key, cpu, wall, n);
	printf("%s_managed %zu\n", key, hits);
	if (hits != (expect_managed ? n : 0))
		fprintf(stderr,
			"bench_scale: %s: %zu of %zu managed, "
			"expected %s\n",
			key, hits, n, expect_managed ? "all" : "none");
	free(wall);
	free(v);
}

/*
 * Forks of unmanaged processes and their exits: bookkeeping only, no
 * /proc entry is read, so none is made.  PIDs from a range nothing in
 * the fake root uses.
 */
static void bench_fork_other(size_t n)
{
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	uint64_t *wall_exit = xcalloc(n, sizeof(*wall_exit));
	int base = 9000000, parents[64];

	/* Looked up beforehand: the search is not the manager's cost. */
	for (size_t i = 0; i < 64; i++)
		parents[i] = proc_of_kind('o', i);
	drain_queue();
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		int parent = parents[i % 64];
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, parent, base + (int)i, base + (int)i);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("fork_other", cpu, wall, n);

	/* A new thread of an unmanaged process: a lookup. */
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		int parent = parents[i % 64];
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, parent, base + (int)(n + i), parent);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("thread_other", cpu, wall, n);

	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_exit(mgr, base + (int)i, base + (int)i);
		wall_exit[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	report_events("exit_other", cpu, wall_exit, n);
	free(wall);
	free(wall_exit);
}

/*
 * Forks of managed processes: a child (booked under its parent's rule
 * at the event) and a new thread (threads = "all": nothing to do, the
 * process level covers it).
 */
static void bench_fork_managed(const char *kind, const char *key, size_t max)
{
	size_t n;
	struct spare_ent **v = spares_of(kind, max, &n);
	uint64_t *wall = xcalloc(n, sizeof(*wall)), c0, cpu;
	bool thread = !strncmp(kind, "thread", 6);
	uint64_t written = counters()->written;

	for (size_t i = 0; i < n; i++)
		spare_move(v[i], true);
	drain_queue();
	c0 = cpu_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = mono_ns();

		mgr_on_fork(mgr, v[i]->parent, v[i]->pid,
			    thread ? v[i]->parent : v[i]->pid);
		mgr_flush(mgr, UINT64_MAX);
		wall[i] = mono_ns() - w0;
	}
	cpu = cpu_ns() - c0;
	written = counters()->written - written;
	for (size_t i = 0; i < n; i++) {
		mgr_on_exit(mgr, v[i]->pid, thread ? v[i]->parent : v[i]->pid);
		spare_move(v[i], false);
	}
	report_events(key, cpu, wall, n);
	if (thread) {
		/* How many threads the processes had: what task/ lists. */
		double sum = 0;

		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < nprocs; k++)
				if (procs[k].pid == v[i]->parent)
					sum += procs[k].threads;
		printf("%s_parent_threads %.1f\n", key,
		       n ? sum / (double)n : 0);
	}
	/* Each should have been given the rule's mask: one write each. */
	printf("%s_written %llu\n", key, (unsigned long long)written);
	free(wall);
	free(v);
}

void bench_events(size_t events)
{
	bench_exec("exec-managed", "exec_managed", events, true);
	bench_exec("exec-other", "exec_other", events, false);
	bench_fork_other(events * 5);
	bench_fork_managed("fork-managed", "fork_managed", events);
	bench_fork_managed("thread-small", "thread_small", events);
	bench_fork_managed("thread-big", "thread_big", events);
}
