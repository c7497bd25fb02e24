// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the daemon spends between events: rescans of every kind and the
 * sample intervals, idle (the fake /proc/pressure/cpu stands still:
 * nobody waits for a CPU) and loaded (it moves: the budget bounds the
 * sample), and from them its CPU per second in connector mode.
 */
#include <stdio.h>

#include "bench-scale.h"

/* The sample intervals timed of each kind. */
#define SAMPLES 5

static const char *scan_name(enum mgr_scan_kind k)
{
	switch (k) {
	case SCAN_FULL:
		return "full";
	case SCAN_NEW:
		return "new";
	case SCAN_NEW_ATTRS:
		return "new_attrs";
	case SCAN_ATTRS:
		return "attrs";
	case SCAN_LIGHT:
		return "light";
	case SCAN_KINDS:
		break;
	}
	return "?";
}

/* CPU ms of one scan of kind (the median of reps). */
static double time_scan(enum mgr_scan_kind kind, int reps)
{
	uint64_t v[8], w[8];

	for (int i = 0; i < reps; i++) {
		uint64_t c0 = cpu_ns(), w0 = mono_ns();

		if (mgr_scan_start(mgr, kind) < 0 || mgr_scan_finish(mgr) < 0)
			die("scan failed");
		v[i] = cpu_ns() - c0;
		w[i] = mono_ns() - w0;
	}
	printf("scan_%s_cpu_ms %.3f\n", scan_name(kind),
	       (double)quantile(v, (size_t)reps, 0.5) / 1e6);
	printf("scan_%s_wall_ms %.3f\n", scan_name(kind),
	       (double)quantile(w, (size_t)reps, 0.5) / 1e6);
	return (double)quantile(v, (size_t)reps, 0.5) / 1e6;
}

/* The system's CPU pressure as the kernel shows it, "some" at some_us. */
static void put_pressure(uint64_t some_us)
{
	char path[PATH_MAX], buf[256];
	int n;

	snprintf(path, sizeof(path), "%s/pressure/cpu", roots.proc);
	n = snprintf(buf, sizeof(buf),
		     "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		     (unsigned long long)some_us);
	if (write_file(path, buf, (size_t)n) < 0)
		die("cannot write DIR/proc/pressure/cpu");
}

/*
 * The threads the last sample read: counted by the manager since its
 * samples have a budget, else (a manager from before) those of the
 * rules sampled.
 */
static uint64_t threads_read(uint64_t counted_before)
{
#ifdef MGR_SAMPLE_BUDGET
	return counters()->sampled_threads - counted_before;
#else
	uint64_t n = 0;

	(void)counted_before;
	for (unsigned int r = 0; r < cfg->nrules; r++)
		if (rule_state(r)->sampled_now)
			n += rule_state(r)->last.threads;
	return n;
#endif
}

static uint64_t threads_counted(void)
{
#ifdef MGR_SAMPLE_BUDGET
	return counters()->sampled_threads;
#else
	return 0;
#endif
}

/*
 * SAMPLES sample intervals as on_sample() spends them (less the control
 * law and the status file): /proc/stat and /proc/schedstat, then the
 * rules' threads, "now" a second on each time as the sample timer has
 * it, and the pressure grown by stall_us each second.  Prints KEY's
 * median CPU ms and the threads read per interval (the most of any).
 */
static double time_samples(const char *key, uint64_t *now, uint64_t *some,
			   uint64_t stall_us)
{
	uint64_t v[SAMPLES], most = 0;

	for (int i = 0; i < SAMPLES; i++) {
		uint64_t c0, reads = threads_counted();

		*now += 1000;
		*some += stall_us;
		put_pressure(*some);
		c0 = cpu_ns();
		sampler_update(&smp, roots.proc, true);
		sample(*now);
		v[i] = cpu_ns() - c0;
		reads = threads_read(reads);
		if (reads > most)
			most = reads;
	}
	printf("%s_cpu_ms %.3f\n%s_threads_read %llu\n", key,
	       (double)quantile(v, SAMPLES, 0.5) / 1e6, key,
	       (unsigned long long)most);
	return (double)quantile(v, SAMPLES, 0.5) / 1e6;
}

void bench_idle(void)
{
	uint64_t now = now_ms(), some = 1000000;
	double idle, loaded, light, attrs, new_, new_attrs, rescans, walk, gap;
	bool need_attrs = cfg->needs & (NEED_CGROUP | NEED_CMDLINE);
	/* Without the connector, the NEW_ATTRS walks among the NEW ones. */
	double every = need_attrs ? ATTRS_EVERY : 1e9;

	/* A full scan again with nothing new: a reload's or readopt's. */
	time_scan(SCAN_FULL, 1);
	light = time_scan(SCAN_LIGHT, 3);
	attrs = time_scan(SCAN_ATTRS, 3);
	new_ = time_scan(SCAN_NEW, 3);
	new_attrs = time_scan(SCAN_NEW_ATTRS, 1);
	drain_queue();

	/* The first interval takes the baselines, the pressure's too. */
	put_pressure(some);
	sampler_update(&smp, roots.proc, true);
	sample(now);
	/* Idle: nobody waits, the pressure stands still. */
	idle = time_samples("sample_idle", &now, &some, 0);
	/*
	 * Loaded: tasks wait half of each second, which every rule's
	 * threads are sampled for, within the budget.  The rules stay at
	 * their hardest (the fake's counters stand still too).
	 */
	loaded = time_samples("sample_loaded", &now, &some, 500000);
	{
		unsigned int threads = 0, processes = 0;

		for (unsigned int r = 0; r < cfg->nrules; r++) {
			threads += rule_state(r)->last.threads;
			processes += rule_state(r)->last.processes;
		}
		printf("sample_loaded_processes %u\nsample_loaded_threads %u\n",
		       processes, threads);
	}
	/*
	 * Per second, with the connector: a sample, and one walk
	 * (start_rescan()) every ATTRS_EVERY rescan periods or WALK_DUTY
	 * times its own time, whichever is longer: ATTRS if rules match on
	 * cgroups or command lines, else LIGHT.  Without it (on a fake
	 * root, the mode the daemon binary runs in here) a NEW walk every
	 * period, of which every ATTRS_EVERY-th is NEW_ATTRS.
	 */
	walk = need_attrs ? attrs : light;
	gap = walk_gap_ms(RESCAN_MS, (uint64_t)(walk * 1e6)) / 1000.0;
	rescans = walk / gap;
	printf("conn_walk_every_s %.1f\n", gap);
	printf("idle_conn_ms_per_s %.3f\n", idle + rescans);
	printf("loaded_conn_ms_per_s %.3f\n", loaded + rescans);
	printf("idle_rescan_ms_per_s %.3f\n",
	       idle + (new_ * (every - 1) + new_attrs) / every /
			      (RESCAN_MS / 1000.0));
}
