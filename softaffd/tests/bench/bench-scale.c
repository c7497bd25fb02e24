// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_scale: what the manager costs at server scale (issue #26's host
 * benchmark), on a fake root made by tests/mkfakescale.py --spare N.
 *
 *   bench_scale DIR [--storm-rate N] [--storm-seconds S]
 *                   [--storm-mode keep|flip|both] [--no-storm] [--events N]
 *                   [--status-only]
 *
 * This file has main() and what the parts share (bench-scale.h).
 *
 * The daemon keeps its proc connector shut on a fake /proc (the
 * kernel's events name the host's PIDs), so event costs cannot be
 * measured on the binary: this links the daemon's modules and calls
 * the manager's entry points as the daemon's loop does, timing them.  It prints
 * "key value" lines on stdout for tests/bench-scale.sh, which makes the
 * table; the manager's own log lines go to stderr, as the daemon's do.
 *
 * Costs are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over a batch
 * of events divided by their number: on a loaded host that leaves out
 * the time the harness waited for a CPU, which wall time would count.
 * Per-event wall times (CLOCK_MONOTONIC) give the spread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-scale.h"

/* Short enough that DIR/proc fits struct roots' fields. */
char dir[PATH_MAX / 8];
struct roots roots;
struct config *cfg;
struct mgr *mgr;
struct sampler smp; /* large: not on the stack */
static struct topology topo;

/* ---- clocks ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void sleep_until_ns(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL),
			      .tv_nsec = (long)(t % 1000000000ULL)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

void die(const char *what)
{
	fprintf(stderr, "bench_scale: %s\n", what);
	exit(1);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

/* ---- the manager's insides, in one place to adapt if they move ---- */

static struct bench_rule bench_rules[CONFIG_MAX_RULES];

const struct bench_rule *rule_state(unsigned int r)
{
	return &bench_rules[r];
}

void sample(uint64_t now)
{
	static struct rule_sampled out[CONFIG_MAX_RULES];

	mgr_sample(mgr, now, true, out);
	for (unsigned int r = 0; r < cfg->nrules; r++) {
		bench_rules[r].sampled_now = out[r].sampled;
		if (out[r].sampled)
			bench_rules[r].last = out[r].fig;
	}
}

const struct mgr_counters *counters(void)
{
#if MGR_PRIVATE
	return mgr_counters(mgr);
#else
	return &mgr->cnt;
#endif
}

static void manager_new(void)
{
#if MGR_PRIVATE
	mgr = mgr_new(&roots, cfg, AFF_MODE_WRITE, NULL);
	if (!mgr)
		die("mgr_new failed");
#else
	static struct mgr m;

	if (mgr_init(&m, &roots, cfg, &topo, false) < 0)
		die("mgr_init failed");
	mgr = &m;
#endif
}

static void manager_free(void)
{
#if MGR_PRIVATE
	mgr_free(mgr);
#else
	mgr_done(mgr);
#endif
	mgr = NULL;
}

size_t managed_count(void)
{
	int *pids = NULL;
	int n = mgr_status_pids(mgr, &pids);

	free(pids);
	return n > 0 ? (size_t)n : 0;
}

void drain_queue(void)
{
	mgr_flush(mgr, UINT64_MAX);
}

/* ---- the fake root's manifests ---- */

struct proc_ent *procs;
size_t nprocs;
struct spare_ent *spares;
size_t nspares;

static void read_manifests(void)
{
	char path[PATH_MAX], line[256], kind[16];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest", dir);
	f = fopen(path, "r");
	if (!f)
		die("no DIR/manifest: make DIR with tests/mkfakescale.py");
	while (fgets(line, sizeof(line), f)) {
		struct proc_ent e = {0};

		if (sscanf(line, "%d %d %15s %d %31s", &e.pid, &e.threads, kind,
			   &e.rule, e.comm) != 5)
			continue;
		e.kind = kind[0];
		if (nprocs == cap) {
			cap = cap ? cap * 2 : 1024;
			procs = realloc(procs, cap * sizeof(*procs));
			if (!procs)
				die("out of memory");
		}
		procs[nprocs++] = e;
	}
	fclose(f);
	cap = 0;
	snprintf(path, sizeof(path), "%s/spare/manifest", dir);
	f = fopen(path, "r");
	if (!f)
		die("no DIR/spare/manifest: make DIR with --spare N");
	while (fgets(line, sizeof(line), f)) {
		struct spare_ent e = {0};

		if (sscanf(line, "%15s %31s %d %d %d", e.kind, e.id, &e.pid,
			   &e.parent, &e.rule) != 5)
			continue;
		if (nspares == cap) {
			cap = cap ? cap * 2 : 1024;
			spares = realloc(spares, cap * sizeof(*spares));
			if (!spares)
				die("out of memory");
		}
		spares[nspares++] = e;
	}
	fclose(f);
}

/*
 * Where a spare process or thread lives while it exists: /proc/PID, or
 * /proc/PARENT/task/TID for a thread.
 */
static void live_path(const struct spare_ent *e, char *buf, size_t size)
{
	if (!strncmp(e->kind, "thread", 6))
		snprintf(buf, size, "%s/%d/task/%d", roots.proc, e->parent,
			 e->pid);
	else
		snprintf(buf, size, "%s/%d", roots.proc, e->pid);
}

void spare_move(const struct spare_ent *e, bool in)
{
	char aside[PATH_MAX], live[PATH_MAX];

	snprintf(aside, sizeof(aside), "%s/spare/%s/%s", dir, e->kind, e->id);
	live_path(e, live, sizeof(live));
	if (rename(in ? aside : live, in ? live : aside) < 0) {
		fprintf(stderr, "bench_scale: rename %s: %s\n",
			in ? aside : live, strerror(errno));
		exit(1);
	}
}

/* ---- figures ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t quantile(uint64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

void report_events(const char *key, uint64_t cpu, uint64_t *wall,
			  size_t n)
{
	if (!n) {
		printf("%s_n 0\n", key);
		return;
	}
	printf("%s_n %zu\n", key, n);
	printf("%s_cpu_us %.3f\n", key, (double)cpu / 1e3 / (double)n);
	printf("%s_p50_us %.3f\n", key, (double)quantile(wall, n, 0.5) / 1e3);
	printf("%s_p99_us %.3f\n", key, (double)quantile(wall, n, 0.99) / 1e3);
	printf("%s_max_us %.3f\n", key, (double)wall[n - 1] / 1e3);
}

/* ---- main ---- */

static void print_counters(const char *when)
{
	const struct mgr_counters *c = counters();

	printf("counters_%s evals=%llu cached=%llu written=%llu "
	       "unchanged=%llu ratio_written=%llu restored=%llu errors=%llu\n",
	       when, (unsigned long long)c->evals,
	       (unsigned long long)c->cached, (unsigned long long)c->written,
	       (unsigned long long)c->unchanged,
	       (unsigned long long)c->ratio_written,
	       (unsigned long long)c->restored, (unsigned long long)c->errors);
}

static void print_hwm(void)
{
	char buf[4096];
	const char *v;

	if (read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return;
	v = procfs_status_field(buf, "VmHWM");
	if (v)
		printf("harness_vmhwm_kib %ld\n", strtol(v, NULL, 10));
}

int main(int argc, char **argv)
{
	unsigned int rate = 10000, secs = 10;
	size_t events = 2000;
	bool keep = true, flip = false, status_only = false;
	char path[PATH_MAX], err[512];
	uint64_t c0, w0;

	if (argc < 2) {
		fprintf(stderr,
			"usage: bench_scale DIR [--storm-rate N] "
			"[--storm-seconds S] [--storm-mode keep|flip|both] "
			"[--no-storm] [--events N]\n");
		return 2;
	}
	if (strlen(argv[1]) >= sizeof(dir))
		die("DIR: too long a path");
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--storm-rate"))
			rate = (unsigned int)strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--storm-seconds"))
			secs = (unsigned int)strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--storm-mode")) {
			keep = !strcmp(v, "keep") || !strcmp(v, "both");
			flip = !strcmp(v, "flip") || !strcmp(v, "both");
			if (!keep && !flip)
				die("--storm-mode: keep, flip or both");
			i++;
		} else if (!strcmp(argv[i], "--events"))
			events = strtoul(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--no-storm"))
			keep = flip = false;
		else if (!strcmp(argv[i], "--status-only"))
			status_only = true;
		else
			die("unknown option");
	}
	if (!rate || !secs)
		die("--storm-rate and --storm-seconds must be > 0");

	/*
	 * As systemd starts the daemon: nothing open but stdio.  An fd
	 * inherited from the shell would sit among the ones an evaluation
	 * opens and split their batched close in two.
	 */
	close_range(3, ~0U, 0);
	/* As main.c starts the daemon: its log level, its roots. */
	log_init(LOG_INFO);
	snprintf(roots.proc, sizeof(roots.proc), "%s/proc", dir);
	snprintf(roots.sys, sizeof(roots.sys), "%s/sys", dir);
	snprintf(roots.run, sizeof(roots.run), "%s/run", dir);
	if (topology_load(roots.sys, &topo) < 0)
		die("cannot read DIR/sys");
	snprintf(path, sizeof(path), "%s/softaffd.conf", dir);
	if (config_load(path, &topo, &cfg, err, sizeof(err)) < 0)
		die(err);
	if (status_only) {
		bench_status(&topo);
		return 0;
	}
	read_manifests();
	manager_new();
	printf("cpus %u\nnodes %u\nrules %u\nprocesses %zu\n",
	       cpuset_count(&topo.all), topo.nnodes, cfg->nrules, nprocs);
	{
		unsigned long threads = 0;

		for (size_t i = 0; i < nprocs; i++)
			threads += (unsigned long)procs[i].threads;
		printf("threads %lu\n", threads);
	}

	/* The first scan: every process read, every managed thread set. */
	c0 = cpu_ns();
	w0 = mono_ns();
	if (mgr_scan_start(mgr, SCAN_FULL) < 0 || mgr_scan_finish(mgr) < 0)
		die("first scan failed");
	printf("first_scan_cpu_ms %.3f\nfirst_scan_wall_ms %.3f\n",
	       (double)(cpu_ns() - c0) / 1e6, (double)(mono_ns() - w0) / 1e6);
	printf("managed %zu\n", managed_count());
	print_counters("first_scan");
	fflush(stdout);

	bench_idle();
	fflush(stdout);

	bench_events(events);
	printf("managed_after_events %zu\n", managed_count());
	fflush(stdout);

	bench_status(&topo);
	fflush(stdout);

	if (keep) {
		bench_storm("storm", rate, secs, false);
		printf("managed_after_storm %zu\n", managed_count());
	}
	if (flip) {
		bench_storm("storm_flip", rate, secs, true);
		printf("managed_after_storm_flip %zu\n", managed_count());
	}
	print_counters("end");
	print_hwm();
	mgr_restore_all(mgr);
	manager_free();
	config_free(cfg);
	sampler_done(&smp);
	topology_done(&topo);
	return 0;
}
