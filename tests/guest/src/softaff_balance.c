// SPDX-License-Identifier: GPL-2.0
/*
 * softaff_balance: CPU-bound workloads for the load balancer tests of soft
 * affinity (tests/guest/45-balance.t).  Workers never sleep; each publishes
 * sched_getcpu() continuously, so the sampler sees where it runs now.
 *
 *   softaff_balance return  -S LIST [-w N] [-n TRIALS] [-T TIMEOUT_MS]
 *	Per trial: hard-pinned hogs load every CPU of LIST, N workers with soft
 *	affinity LIST start and spill outside it; once all N run outside, the
 *	hogs stop and the time until all N run in LIST again is measured.
 *   softaff_balance spill   -S LIST [-w N] [-t SECONDS]
 *	N workers with soft affinity LIST start hard-pinned to LIST, then
 *	their hard affinity widens to every CPU: since they never sleep, only
 *	the load balancer can spread them.  Reports the share of samples
 *	outside LIST and each CPU's busy share (from /proc/stat).
 *   softaff_balance respect -S LIST [-w N] [-t SECONDS] [-c CHURN_PER_S]
 *	N workers with soft affinity LIST while short-lived threads without
 *	any affinity are created and exit continuously; reports the workers'
 *	share of samples in LIST.
 *   softaff_balance bounce  -S LIST -x LIST [-w N] [-t SECONDS] [-N]
 *	N workers with soft affinity -S (none with -N) start hard-pinned to
 *	it and are then free to run anywhere, beside one hog hard-pinned to
 *	each CPU of -x; after a second of settling, counts for SECONDS the
 *	work (loop iterations) of everyone, the measure of throughput, and
 *	prints the workers' TIDs for the tracepoint's records.
 *   softaff_balance conserve -S LIST -x LIST [-w N] [-n TRIALS] [-T TIMEOUT_MS]
 *	Work conservation.  Per trial: one hog hard-pinned to each CPU of -x
 *	and N workers with soft affinity -S hard-pinned to -S, for 500 ms; then
 *	at once the hogs stop and the workers are free to run anywhere, and for
 *	each CPU of -x the time until some worker runs on it (how long it stays
 *	idle although -S is overloaded) is measured, TIMEOUT_MS if none came.
 *	The sampling thread runs on the first CPU of -S, never on -x.
 *
 * Every mode ends with the workers' summed schedstats from
 * /proc/thread-self/sched (kernel.sched_schedstats=1) as key=value pairs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "softaff_test.h"

#define MAX_CPUS 256
#define MAX_WORKERS 32
#define MAX_TRIALS 200

static const char *const stat_names[] = {
	"nr_migrations_soft_spill", "nr_migrations_soft_return",
	"nr_wakeups_soft_spill", "nr_wakeups_soft_return",
	"soft_outside_runtime",
	"se.sum_exec_runtime",
};
#define NSTATS (sizeof(stat_names) / sizeof(stat_names[0]))

struct worker {
	pthread_t thread;
	atomic_int cpu;
	atomic_bool stop;
	atomic_bool pinned;	/* hard-pinned to the preferred set for now */
	atomic_long work;	/* loop iterations, for the bounce mode */
	pid_t tid;
	atomic_int epoch;	/* the stats_epoch its baseline was read in */
	double base[NSTATS];	/* counters when the measured window opened */
	double stats[NSTATS];
};

static const char *soft_list;
static cpu_set_t soft_set;
static int nworkers = 2, seconds = 4, ntrials = 20, timeout_ms = 2000;
static int churn_per_s = 500;
static const char *hog_list;
static bool no_soft;
static struct worker workers[MAX_WORKERS];
static cpu_set_t all_cpus;
static atomic_bool unpin;
static double stat_sum[NSTATS];
/*
 * Bumped when the measured window opens, so that counters cover the same
 * time as the samples and not the settling before it (a spill while the
 * churn starts is not a spill inside the window).
 */
static atomic_int stats_epoch;

static void die(const char *what)
{
	fprintf(stderr, "softaff_balance: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now_ms(void)
{
	return softaff_now() * 1e3;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };

	nanosleep(&ts, NULL);
}

/* "name   :   value" lines; values in ms may have a fraction. */
static void read_schedstats(double *out)
{
	char line[256], name[128];
	double value;
	FILE *f = fopen("/proc/thread-self/sched", "r");
	size_t i;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s : %lf", name, &value) != 2)
			continue;
		for (i = 0; i < NSTATS; i++)
			if (!strcmp(name, stat_names[i]))
				out[i] = value;
	}
	fclose(f);
}

static void set_soft_self(void)
{
	if (softaff_set_soft_self(soft_list))
		die("soft_affinity_list");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	volatile unsigned long spin;
	int epoch;

	w->tid = (pid_t)syscall(SYS_gettid);
	/*
	 * Every CPU first, not the sampler's mask the worker inherits (the
	 * conserve sampler runs on one preferred CPU): a request that covers
	 * the hard mask is stored (ABI v4) but not in effect, and
	 * softaff_set_soft_self() wants it in effect.  Pinned to the
	 * preferred CPUs afterwards, the worker keeps its preference as a
	 * request until it is unpinned.
	 */
	if (sched_setaffinity(0, sizeof(all_cpus), &all_cpus))
		die("sched_setaffinity (all CPUs)");
	if (!no_soft)
		set_soft_self();
	if (atomic_load(&w->pinned) && sched_setaffinity(0, sizeof(soft_set), &soft_set))
		die("sched_setaffinity (pin)");
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		if (atomic_load_explicit(&w->pinned, memory_order_relaxed) && atomic_load(&unpin)) {
			if (sched_setaffinity(0, sizeof(all_cpus), &all_cpus))
				die("sched_setaffinity (unpin)");
			atomic_store(&w->pinned, false);
		}
		epoch = atomic_load_explicit(&stats_epoch, memory_order_relaxed);
		if (epoch != atomic_load_explicit(&w->epoch, memory_order_relaxed)) {
			read_schedstats(w->base);
			atomic_store(&w->epoch, epoch);
		}
		atomic_store_explicit(&w->cpu, sched_getcpu(), memory_order_relaxed);
		for (spin = 0; spin < 2000; spin++)
			;
		atomic_fetch_add_explicit(&w->work, 1, memory_order_relaxed);
	}
	read_schedstats(w->stats);
	return NULL;
}

static void start_workers(int n, bool pinned)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		atomic_store(&workers[i].cpu, -1);
		atomic_store(&workers[i].pinned, pinned);
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			die("pthread_create");
	}
}

static void stop_workers(int n)
{
	size_t k;
	int i;

	for (i = 0; i < n; i++)
		atomic_store(&workers[i].stop, true);
	for (i = 0; i < n; i++) {
		pthread_join(workers[i].thread, NULL);
		for (k = 0; k < NSTATS; k++)
			stat_sum[k] += workers[i].stats[k] - workers[i].base[k];
	}
}

/* Rebase every worker's counters to now; returns once all have done so. */
static void open_window(int n)
{
	int epoch = atomic_fetch_add(&stats_epoch, 1) + 1, i;

	for (i = 0; i < n; i++)
		while (atomic_load(&workers[i].epoch) != epoch)
			sleep_ms(1);
}

/* How many workers run in the preferred set right now (-1: not started). */
static int workers_home(int n)
{
	int i, home = 0;

	for (i = 0; i < n; i++) {
		int cpu = atomic_load(&workers[i].cpu);

		if (cpu < 0)
			return -1;
		home += CPU_ISSET(cpu, &soft_set);
	}
	return home;
}

static atomic_bool hogs_stop;

static void *hog_main(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity (hog)");
	while (!atomic_load_explicit(&hogs_stop, memory_order_relaxed))
		;
	return NULL;
}

static void print_stats(void)
{
	size_t k;

	for (k = 0; k < NSTATS; k++)
		printf("%s=%.3f ", stat_names[k], stat_sum[k]);
	printf("\n");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Latencies of trials that did not return count as +timeout.  The sampling
 * thread stays off the preferred CPUs: there, waking every millisecond, it
 * made a preferred CPU look busy, and a worker alone on an idle CPU outside
 * rightly does not go home to a busy one (seen as a trial in ~60 that took
 * the whole second of a spill hold, or timed out).
 */
static int mode_return(void)
{
	double lat[MAX_TRIALS], t0;
	pthread_t hogs[MAX_CPUS];
	int trial, spilled = 0, returned = 0, nhogs, cpu, i;
	cpu_set_t self;

	CPU_ZERO(&self);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &all_cpus) && !CPU_ISSET(cpu, &soft_set))
			CPU_SET(cpu, &self);
	if (!CPU_COUNT(&self)) {
		fprintf(stderr, "softaff_balance: return needs a CPU outside -S\n");
		return 2;
	}
	if (sched_setaffinity(0, sizeof(self), &self))
		die("sched_setaffinity (sampler)");

	for (trial = 0; trial < ntrials; trial++) {
		atomic_store(&hogs_stop, false);
		nhogs = 0;
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if (CPU_ISSET(cpu, &soft_set) &&
			    !pthread_create(&hogs[nhogs], NULL, hog_main, (void *)(long)cpu))
				nhogs++;
		sleep_ms(300);		/* the hogs' utilization builds up */
		start_workers(nworkers, false);

		/* Wait until every worker runs outside, then let it settle. */
		t0 = now_ms();
		while (workers_home(nworkers) != 0 && now_ms() - t0 < 3000)
			sleep_ms(2);
		sleep_ms(200);
		if (workers_home(nworkers) != 0) {
			printf("trial=%d spilled=no\n", trial);
			atomic_store(&hogs_stop, true);
			for (i = 0; i < nhogs; i++)
				pthread_join(hogs[i], NULL);
			stop_workers(nworkers);
			continue;
		}
		spilled++;

		atomic_store(&hogs_stop, true);
		t0 = now_ms();
		for (i = 0; i < nhogs; i++)
			pthread_join(hogs[i], NULL);
		while (workers_home(nworkers) != nworkers && now_ms() - t0 < timeout_ms)
			sleep_ms(1);
		lat[spilled - 1] = now_ms() - t0;
		if (workers_home(nworkers) == nworkers) {
			returned++;
			printf("trial=%d latency_ms=%.1f\n", trial, lat[spilled - 1]);
		} else {
			lat[spilled - 1] = timeout_ms;
			printf("trial=%d latency_ms=timeout\n", trial);
		}
		stop_workers(nworkers);
		sleep_ms(100);
	}
	qsort(lat, spilled, sizeof(lat[0]), cmp_double);
	printf("trials=%d spilled=%d returned=%d", ntrials, spilled, returned);
	if (spilled)
		printf(" median_ms=%.1f p95_ms=%.1f max_ms=%.1f",
		       lat[(spilled - 1) / 2], lat[(spilled * 95 + 99) / 100 - 1],
		       lat[spilled - 1]);
	printf("\n");
	print_stats();
	return spilled ? 0 : 1;
}

/* Per-CPU busy jiffies from /proc/stat (user+nice+system+irq+softirq). */
static int read_busy(long long *busy, long long *total)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (!f)
		die("/proc/stat");
	while (fgets(line, sizeof(line), f)) {
		long long v[8] = { 0 };
		int cpu;

		if (sscanf(line, "cpu%d %lld %lld %lld %lld %lld %lld %lld %lld", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8)
			continue;
		if (cpu < 0 || cpu >= MAX_CPUS)
			continue;
		busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6];
		total[cpu] = busy[cpu] + v[3] + v[4] + v[7];
		if (cpu + 1 > n)
			n = cpu + 1;
	}
	fclose(f);
	return n;
}

static atomic_bool churn_stop;
static atomic_long churn_threads;

static void *churn_thread(void *arg)
{
	double end = now_ms() + 3;

	(void)arg;
	while (now_ms() < end)
		;
	return NULL;
}

/* Short-lived threads without affinity: 3 ms of CPU each, churn_per_s/s. */
static void *churn_main(void *arg)
{
	pthread_attr_t attr;
	pthread_t t;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!atomic_load(&churn_stop)) {
		if (!pthread_create(&t, &attr, churn_thread, NULL))
			atomic_fetch_add(&churn_threads, 1);
		sleep_ms(1000.0 / churn_per_s);
	}
	return NULL;
}

/* Sample the workers' CPUs every 5 ms for `seconds`. */
static int sample(long *in, long *out)
{
	double end = now_ms() + seconds * 1000.0;
	int i;

	*in = *out = 0;
	while (now_ms() < end) {
		for (i = 0; i < nworkers; i++) {
			int cpu = atomic_load(&workers[i].cpu);

			if (cpu < 0)
				continue;
			if (CPU_ISSET(cpu, &soft_set))
				(*in)++;
			else
				(*out)++;
		}
		sleep_ms(5);
	}
	return 0;
}

static int mode_spill(void)
{
	long long busy0[MAX_CPUS] = { 0 }, total0[MAX_CPUS] = { 0 };
	long long busy1[MAX_CPUS] = { 0 }, total1[MAX_CPUS] = { 0 };
	long in, out;
	int ncpu, cpu;

	start_workers(nworkers, true);
	sleep_ms(1000);
	atomic_store(&unpin, true);
	sleep_ms(1000);
	read_busy(busy0, total0);
	sample(&in, &out);
	ncpu = read_busy(busy1, total1);
	stop_workers(nworkers);
	printf("samples=%ld outside=%ld outside_share=%.1f\n", in + out, out,
	       in + out ? 100.0 * out / (in + out) : 0.0);
	for (cpu = 0; cpu < ncpu; cpu++) {
		long long t = total1[cpu] - total0[cpu];

		printf("busy%d=%.1f ", cpu, t ? 100.0 * (busy1[cpu] - busy0[cpu]) / t : 0.0);
	}
	printf("\n");
	print_stats();
	return in + out ? 0 : 1;
}

/* A hog hard-pinned to one CPU that counts its work as the workers do. */
struct counting_hog {
	pthread_t thread;
	int cpu;
	atomic_long work;
};

static void *counting_hog_main(void *arg)
{
	struct counting_hog *h = arg;
	volatile unsigned long spin;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity (hog)");
	while (!atomic_load_explicit(&hogs_stop, memory_order_relaxed)) {
		for (spin = 0; spin < 2000; spin++)
			;
		atomic_fetch_add_explicit(&h->work, 1, memory_order_relaxed);
	}
	return NULL;
}

static long sum_work(struct counting_hog *hogs, int nhogs, long *hog_work)
{
	long total = 0;
	int i;

	*hog_work = 0;
	for (i = 0; i < nhogs; i++)
		*hog_work += atomic_load(&hogs[i].work);
	for (i = 0; i < nworkers; i++)
		total += atomic_load(&workers[i].work);
	return total + *hog_work;
}

static int mode_bounce(void)
{
	static struct counting_hog hogs[MAX_CPUS];
	long total0, total1, hog0, hog1;
	cpu_set_t hog_set;
	int cpu, nhogs = 0, i;

	if (!hog_list || softaff_parse_cpulist(hog_list, &hog_set)) {
		fprintf(stderr, "softaff_balance: bounce needs -x CPULIST\n");
		return 2;
	}
	atomic_store(&hogs_stop, false);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &hog_set))
			continue;
		hogs[nhogs].cpu = cpu;
		if (pthread_create(&hogs[nhogs].thread, NULL, counting_hog_main, &hogs[nhogs]))
			die("pthread_create (hog)");
		nhogs++;
	}
	start_workers(nworkers, true);
	sleep_ms(200);
	atomic_store(&unpin, true);
	sleep_ms(1000);
	total0 = sum_work(hogs, nhogs, &hog0);
	sleep_ms(seconds * 1000.0);
	total1 = sum_work(hogs, nhogs, &hog1);
	atomic_store(&hogs_stop, true);
	for (i = 0; i < nhogs; i++)
		pthread_join(hogs[i].thread, NULL);
	stop_workers(nworkers);
	printf("work_total=%ld work_hogs=%ld work_workers=%ld seconds=%d\n", total1 - total0,
	       hog1 - hog0, (total1 - total0) - (hog1 - hog0), seconds);
	printf("tids=");
	for (i = 0; i < nworkers; i++)
		printf("%s%d", i ? "," : "", (int)workers[i].tid);
	printf("\n");
	print_stats();
	return total1 > total0 ? 0 : 1;
}

/* Does some worker run on @cpu now? */
static bool worker_on(int cpu)
{
	int i;

	for (i = 0; i < nworkers; i++)
		if (atomic_load_explicit(&workers[i].cpu, memory_order_relaxed) == cpu)
			return true;
	return false;
}

static int mode_conserve(void)
{
	static double idle_ms[MAX_TRIALS * MAX_CPUS];
	double gap[MAX_CPUS], t0, t;
	pthread_t hogs[MAX_CPUS];
	int hog_cpu[MAX_CPUS], nhogs = 0, nidle = 0, timeouts = 0, trial, cpu, i, left;
	cpu_set_t hog_set, self;

	if (!hog_list || softaff_parse_cpulist(hog_list, &hog_set) || !CPU_COUNT(&hog_set)) {
		fprintf(stderr, "softaff_balance: conserve needs -x CPULIST\n");
		return 2;
	}
	/* Sample from a preferred CPU: never wake up on a CPU being measured. */
	CPU_ZERO(&self);
	for (cpu = 0; cpu < MAX_CPUS && !CPU_ISSET(cpu, &soft_set); cpu++)
		;
	CPU_SET(cpu, &self);
	if (sched_setaffinity(0, sizeof(self), &self))
		die("sched_setaffinity (sampler)");

	for (trial = 0; trial < ntrials; trial++) {
		atomic_store(&hogs_stop, false);
		atomic_store(&unpin, false);
		nhogs = 0;
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if (CPU_ISSET(cpu, &hog_set) &&
			    !pthread_create(&hogs[nhogs], NULL, hog_main, (void *)(long)cpu))
				hog_cpu[nhogs++] = cpu;
		start_workers(nworkers, true);
		/* Unpinning below needs every worker's TID: wait until each ran. */
		t0 = now_ms();
		while (workers_home(nworkers) < 0) {
			if (now_ms() - t0 > 5000) {
				errno = ETIMEDOUT;
				die("a worker did not start within 5 s");
			}
			sleep_ms(1);
		}
		sleep_ms(500);

		for (i = 0; i < nhogs; i++)
			gap[i] = -1;
		/*
		 * Unpin from here: a worker waiting in its queue would only
		 * unpin itself once it runs, which is what is being measured.
		 */
		atomic_store(&hogs_stop, true);
		for (i = 0; i < nworkers; i++)
			if (sched_setaffinity(workers[i].tid, sizeof(all_cpus), &all_cpus))
				die("sched_setaffinity (unpin a worker)");
		t0 = now_ms();
		for (i = 0; i < nhogs; i++)
			pthread_join(hogs[i], NULL);
		do {
			t = now_ms() - t0;
			left = 0;
			for (i = 0; i < nhogs; i++) {
				if (gap[i] < 0 && worker_on(hog_cpu[i]))
					gap[i] = t;
				left += gap[i] < 0;
			}
			sleep_ms(0.5);
		} while (left && t < timeout_ms);

		printf("trial=%d", trial);
		for (i = 0; i < nhogs; i++) {
			if (gap[i] < 0) {
				gap[i] = timeout_ms;
				timeouts++;
			}
			printf(" idle%d_ms=%.1f", hog_cpu[i], gap[i]);
			idle_ms[nidle++] = gap[i];
		}
		printf("\n");
		stop_workers(nworkers);
		sleep_ms(100);
	}
	if (!nidle)
		return 1;
	qsort(idle_ms, nidle, sizeof(idle_ms[0]), cmp_double);
	printf("trials=%d cpus=%d idle_periods=%d timeouts=%d median_ms=%.1f p95_ms=%.1f max_ms=%.1f\n",
	       ntrials, nhogs, nidle, timeouts, idle_ms[(nidle - 1) / 2],
	       idle_ms[(nidle * 95 + 99) / 100 - 1], idle_ms[nidle - 1]);
	print_stats();
	return 0;
}

static int mode_respect(void)
{
	pthread_t churner;
	long in, out;

	start_workers(nworkers, false);
	if (pthread_create(&churner, NULL, churn_main, NULL))
		die("pthread_create (churn)");
	sleep_ms(1000);
	open_window(nworkers);
	sample(&in, &out);
	atomic_store(&churn_stop, true);
	pthread_join(churner, NULL);
	stop_workers(nworkers);
	printf("samples=%ld in_set=%ld share=%.1f churn_threads=%ld\n", in + out, in,
	       in + out ? 100.0 * in / (in + out) : 0.0, (long)atomic_load(&churn_threads));
	print_stats();
	return in + out ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *mode;
	int opt;

	if (argc < 2) {
		fprintf(stderr, "usage: softaff_balance return|spill|respect|bounce|conserve -S LIST [options]\n");
		return 2;
	}
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "S:w:t:n:T:c:x:N")) != -1) {
		switch (opt) {
		case 'S': soft_list = optarg; break;
		case 'w': nworkers = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 'n': ntrials = atoi(optarg); break;
		case 'T': timeout_ms = atoi(optarg); break;
		case 'c': churn_per_s = atoi(optarg); break;
		case 'x': hog_list = optarg; break;
		case 'N': no_soft = true; break;
		default:
			fprintf(stderr, "softaff_balance: see the comment at the top of softaff_balance.c\n");
			return 2;
		}
	}
	if (!soft_list || softaff_parse_cpulist(soft_list, &soft_set) || !CPU_COUNT(&soft_set)) {
		fprintf(stderr, "softaff_balance: -S needs a valid CPU list\n");
		return 2;
	}
	if (nworkers < 1 || nworkers > MAX_WORKERS || seconds < 1 || ntrials < 1 ||
	    ntrials > MAX_TRIALS || timeout_ms < 1 || churn_per_s < 1) {
		fprintf(stderr, "softaff_balance: bad -w/-t/-n/-T/-c\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus))
		die("sched_getaffinity");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "return"))
		return mode_return();
	if (!strcmp(mode, "spill"))
		return mode_spill();
	if (!strcmp(mode, "respect"))
		return mode_respect();
	if (!strcmp(mode, "bounce"))
		return mode_bounce();
	if (!strcmp(mode, "conserve"))
		return mode_conserve();
	fprintf(stderr, "softaff_balance: unknown mode %s\n", mode);
	return 2;
}
