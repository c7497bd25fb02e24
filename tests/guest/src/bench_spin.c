// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_spin THREADS SECONDS: the frontier's workload (make bench).
 *
 * THREADS CPU-bound threads spin for SECONDS of wall time, each counting
 * fixed blocks of work.  At the end it prints one line:
 *   SPIN threads=T secs=S cpu_s=C work=W
 * cpu_s is the CPU time all threads got (CLOCK_PROCESS_CPUTIME_ID, which
 * keeps what exited threads used), work the blocks done.  CPU time is the
 * capacity measure: under TCG a vCPU's speed depends on what the host
 * runs beside it, while the time a task is given on some CPU does not.
 * The work count is printed beside it to show that the two agree.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 256
#define BLOCK 4096 /* iterations per unit of work */

static atomic_bool stop;
static atomic_ullong work_done;

static void *spin(void *arg)
{
	unsigned long long mine = 0;
	volatile unsigned long sink = 0;
	unsigned long i;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (i = 0; i < BLOCK; i++)
			sink += i;
		mine++;
	}
	atomic_fetch_add(&work_done, mine);
	return NULL;
}

static double seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	struct timespec wall;
	double t0, secs;
	char *end;
	long n, i;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_spin THREADS SECONDS\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "bench_spin: THREADS must be 1-%d\n", MAX_THREADS);
		return 2;
	}
	secs = strtod(argv[2], &end);
	if (*end || !(secs > 0)) {
		fprintf(stderr, "bench_spin: SECONDS must be a positive number\n");
		return 2;
	}
	t0 = seconds(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, spin, NULL)) {
			fprintf(stderr, "bench_spin: pthread_create failed\n");
			return 1;
		}
	wall.tv_sec = (time_t)secs;
	wall.tv_nsec = (long)((secs - (double)wall.tv_sec) * 1e9);
	nanosleep(&wall, NULL);
	atomic_store(&stop, true);
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	printf("SPIN threads=%ld secs=%.3f cpu_s=%.3f work=%llu\n", n,
	       seconds(CLOCK_MONOTONIC) - t0, seconds(CLOCK_PROCESS_CPUTIME_ID),
	       (unsigned long long)atomic_load(&work_done));
	return 0;
}
