// SPDX-License-Identifier: GPL-2.0
/*
 * softaff_wake: the wakeup workload of the scheduler behaviour tests.
 *
 * Starts N worker threads that loop "sleep briefly, then run briefly" and
 * record sched_getcpu() right after every wakeup, which is where the
 * scheduler's placement decision shows.  Optionally pins CPU hogs first.
 *
 *   softaff_wake -w WORKERS -t SECONDS [-r RUN_US] [-s SLEEP_US]
 *                [-S CPULIST | -H CPULIST] [-g CPU]... [-R CPU]...
 *                [-P CPULIST]
 *
 *   -S LIST  soft affinity of every worker (task/TID/soft_affinity_list)
 *   -H LIST  hard affinity of every worker (sched_setaffinity), the control
 *   -g CPU   a never-sleeping hog hard-pinned to CPU (repeatable)
 *   -R CPU   the same, SCHED_FIFO priority 1 (repeatable)
 *   -W CPU   a busy waker hard-pinned to CPU wakes the workers instead of
 *            their timers: it posts each worker's semaphore in turn, then
 *            spins SLEEP_US, and never sleeps
 *   -s 0     workers never sleep: CPU-bound, a sample every RUN_US
 *   -P LIST  the set to report the share of samples in (default: -S or -H)
 *
 * Output, one line each:  samples=N in_set=N share=PCT
 *                         cpu0=N cpu1=N ...
 *                         nr_wakeups=N nr_wakeups_soft_spill=N ... (schedstats
 *                         of the workers, over the whole run incl. settling)
 *                         cpu_share=PCT (the workers' CPU time over the
 *                         measured window, as a share of WORKERS CPUs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
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
#define MAX_THREADS 64

static int run_us = 1000, sleep_us = 200, seconds = 4, nworkers = 2;
static const char *soft_list, *hard_list;
static atomic_bool stop;
static int waker_cpu = -1;
static sem_t wake_sem[MAX_THREADS];
static atomic_bool waiting[MAX_THREADS];
static atomic_long counts[MAX_CPUS];

/* Per-task schedstats summed over the workers (kernel.sched_schedstats=1). */
static const char *const stat_names[] = {
	"nr_wakeups", "nr_wakeups_soft_spill", "nr_wakeups_soft_return",
};
#define NSTATS (sizeof(stat_names) / sizeof(stat_names[0]))
static atomic_long stats[NSTATS];

/*
 * /proc/thread-self/sched lines look like
 * "nr_wakeups_soft_spill                        :                   12".
 */
static void add_schedstats(void)
{
	char line[256], name[128];
	long value;
	FILE *f = fopen("/proc/thread-self/sched", "r");
	size_t i;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s : %ld", name, &value) != 2)
			continue;
		for (i = 0; i < NSTATS; i++)
			if (!strcmp(name, stat_names[i]))
				atomic_fetch_add(&stats[i], value);
	}
	fclose(f);
}

static void spin_for(double secs)
{
	double end = softaff_now() + secs;

	while (softaff_now() < end)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "softaff_wake: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void set_soft(const char *list)
{
	if (softaff_set_soft_self(list))
		die("soft_affinity_list");
}

static void *worker(void *arg)
{
	struct timespec nap = { 0, sleep_us * 1000L };
	long id = (long)arg;
	cpu_set_t set;

	if (hard_list) {
		softaff_parse_cpulist(hard_list, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	if (soft_list)
		set_soft(soft_list);
	while (!atomic_load(&stop)) {
		int cpu;

		if (waker_cpu >= 0) {
			atomic_store(&waiting[id], true);
			sem_wait(&wake_sem[id]);
		} else if (sleep_us) {
			nanosleep(&nap, NULL);
		}
		cpu = sched_getcpu();
		if (cpu >= 0 && cpu < MAX_CPUS)
			atomic_fetch_add(&counts[cpu], 1);
		spin_for(run_us / 1e6);
	}
	add_schedstats();
	return NULL;
}

static void pin_self(int cpu, const char *who)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die(who);
}

/*
 * The busy waker: wakes each worker that waits, in turn, and never sleeps.
 * Only a waiting worker is posted, so that every sample follows a wakeup.
 */
static void *waker(void *arg)
{
	int i;

	(void)arg;
	pin_self(waker_cpu, "sched_setaffinity (waker)");
	while (!atomic_load(&stop)) {
		for (i = 0; i < nworkers; i++)
			if (atomic_exchange(&waiting[i], false))
				sem_post(&wake_sem[i]);
		spin_for(sleep_us / 1e6);
	}
	for (i = 0; i < nworkers; i++)
		sem_post(&wake_sem[i]);
	return NULL;
}

/* @arg: the CPU, plus MAX_CPUS for a SCHED_FIFO hog */
static void *hog(void *arg)
{
	struct sched_param fifo = { .sched_priority = 1 };
	long cpu = (long)arg;

	pin_self(cpu % MAX_CPUS, "sched_setaffinity (hog)");
	if (cpu >= MAX_CPUS && sched_setscheduler(0, SCHED_FIFO, &fifo))
		die("sched_setscheduler (RT hog)");
	while (!atomic_load(&stop))
		;
	return NULL;
}

/* The CPU time of the nworkers threads at @t, in seconds. */
static double workers_cpu_secs(const pthread_t *t)
{
	struct timespec ts;
	double sum = 0;
	clockid_t clock;
	int i;

	for (i = 0; i < nworkers; i++) {
		if (pthread_getcpuclockid(t[i], &clock) ||
		    clock_gettime(clock, &ts))
			die("worker CPU clock");
		sum += ts.tv_sec + ts.tv_nsec / 1e9;
	}
	return sum;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	const char *report_list = NULL;
	int hogs[MAX_CPUS], nhogs = 0, nthreads = 0, first_worker, opt, i;
	long samples = 0, in_set = 0;
	double cpu_secs, wall;
	cpu_set_t report;

	while ((opt = getopt(argc, argv, "w:t:r:s:S:H:g:R:W:P:")) != -1) {
		switch (opt) {
		case 'w': nworkers = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 'r': run_us = atoi(optarg); break;
		case 's': sleep_us = atoi(optarg); break;
		case 'S': soft_list = optarg; break;
		case 'H': hard_list = optarg; break;
		case 'g': if (nhogs < MAX_CPUS) hogs[nhogs++] = atoi(optarg); break;
		case 'R': if (nhogs < MAX_CPUS) hogs[nhogs++] = MAX_CPUS + atoi(optarg); break;
		case 'W': waker_cpu = atoi(optarg); break;
		case 'P': report_list = optarg; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of softaff_wake.c\n");
			return 2;
		}
	}
	if (nworkers < 1 || nworkers + nhogs + 1 > MAX_THREADS || seconds < 1 ||
	    waker_cpu >= MAX_CPUS) {
		fprintf(stderr, "softaff_wake: bad -w/-t/-g\n");
		return 2;
	}
	if (!report_list)
		report_list = soft_list ? soft_list : hard_list;
	if (!report_list || softaff_parse_cpulist(report_list, &report)) {
		fprintf(stderr, "softaff_wake: need -S, -H or -P with a valid CPU list\n");
		return 2;
	}

	for (i = 0; i < nhogs; i++)
		pthread_create(&threads[nthreads++], NULL, hog, (void *)(long)hogs[i]);
	/* Let the hogs' utilization build up before measuring. */
	if (nhogs)
		sleep(1);
	first_worker = nthreads;
	for (i = 0; i < nworkers; i++) {
		sem_init(&wake_sem[i], 0, 0);
		pthread_create(&threads[nthreads++], NULL, worker, (void *)(long)i);
	}
	if (waker_cpu >= 0)
		pthread_create(&threads[nthreads++], NULL, waker, NULL);
	/* Settle, then measure only the steady state. */
	sleep(1);
	for (i = 0; i < MAX_CPUS; i++)
		atomic_store(&counts[i], 0);
	cpu_secs = -workers_cpu_secs(&threads[first_worker]);
	wall = -softaff_now();
	sleep(seconds);
	cpu_secs += workers_cpu_secs(&threads[first_worker]);
	wall += softaff_now();
	atomic_store(&stop, true);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);

	for (i = 0; i < MAX_CPUS; i++) {
		samples += counts[i];
		if (CPU_ISSET(i, &report))
			in_set += counts[i];
	}
	printf("samples=%ld in_set=%ld share=%.1f\n", samples, in_set,
	       samples ? 100.0 * in_set / samples : 0.0);
	for (i = 0; i < MAX_CPUS; i++)
		if (counts[i])
			printf("cpu%d=%ld ", i, (long)counts[i]);
	printf("\n");
	for (i = 0; i < (int)NSTATS; i++)
		printf("%s=%ld ", stat_names[i], (long)stats[i]);
	printf("\ncpu_share=%.1f\n", 100.0 * cpu_secs / (wall * nworkers));
	return samples ? 0 : 1;
}
