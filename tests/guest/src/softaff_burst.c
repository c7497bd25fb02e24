// SPDX-License-Identifier: GPL-2.0
/*
 * softaff_burst: the workloads that show whether soft affinity decides
 * slowly, on averages (kernel issue #37).  Three modes:
 *
 *   softaff_burst server -S HOME -c CPU [-N] [-n THREADS] [-r REQ_PER_S]
 *                        [-u WORK_US] [-d DUTY_PCT] [-p PERIOD_MS] [-t SECONDS]
 *	A bursty server.  One hog per CPU of HOME, hard-pinned, runs DUTY_PCT
 *	of every PERIOD_MS (the bursts, in phase on all of them).  THREADS
 *	server threads with soft affinity HOME (none with -N, the control)
 *	serve requests that a client hard-pinned to CPU (outside HOME) posts
 *	at a fixed rate, round robin (open loop: a request that waits is not
 *	replaced by fewer later ones); each request spins WORK_US.  After a
 *	second of settling, for SECONDS: requests posted and served, the share
 *	served on HOME, the latency percentiles, and the server threads'
 *	cross-node migrations as the kernel counts them.
 *
 *   softaff_burst overload -S HOME [-N] [-n HOGS] [-T TRIALS] [-t SECONDS]
 *	A sustained overload.  Per trial, HOGS CPU-bound threads with soft
 *	affinity HOME start at once on HOME (the main thread, which creates
 *	them, is pinned there); the time until the CPUs outside HOME run
 *	HOGS - |HOME| of them (the excess absorbed) is measured, then for
 *	SECONDS the hogs' cross-node migrations.
 *
 *   softaff_burst fork -S HOME [-N] [-t SECONDS]
 *	A shell-style worker with soft affinity HOME: each round it forks a
 *	child that execs this program to spin 1 ms and exit, and waits for
 *	it, so fork, exec and wakeup all place it.  Rounds per second.
 *	(Run it beside SCHED_FIFO hogs on HOME, see 53-rt.t.)
 *
 * Cross-node migrations are sched:sched_migrate_task events of the
 * measured threads (by PID) whose CPUs are on different nodes, in a
 * tracefs instance of our own; events the ring buffer overwrote are
 * added back (an upper bound then).  Output: key=value lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "softaff_test.h"

#define MAX_CPUS 256
#define MAX_THREADS 64
#define MAX_REQ (1 << 16)	/* latencies kept per run */

static const char *home_list;
static cpu_set_t home;
static bool no_pref;
static int nthreads = 2, client_cpu = -1, seconds = 10, trials = 5;
static int rate = 1000, work_us = 300, duty = 60, period_ms = 100;
static atomic_bool stop, measuring;
static int node_of[MAX_CPUS];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void spin_us(double us)
{
	double end = softaff_now() + us / 1e6;

	while (softaff_now() < end)
		;
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* The thread's soft affinity HOME, or none for the control. */
static void prefer_home(void)
{
	if (!no_pref && softaff_set_soft_self(home_list))
		die("soft_affinity_list");
}

static void read_nodes(void)
{
	char path[64], buf[256];
	int n, cpu;

	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		node_of[cpu] = 0;
	for (n = 0; n < 64; n++) {
		cpu_set_t set;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && !softaff_parse_cpulist(buf, &set))
			for (cpu = 0; cpu < MAX_CPUS; cpu++)
				if (CPU_ISSET(cpu, &set))
					node_of[cpu] = n;
		fclose(f);
	}
}

/* --- cross-node migrations, from a tracefs instance ------------------- */

#define TRACE_INST "/sys/kernel/tracing/instances/sa-burst"

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t len = strlen(s);

	if (fd < 0)
		return -1;
	if (write(fd, s, len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Start counting the migrations of @tids; false without tracefs. */
static bool xnode_start(const pid_t *tids, int n)
{
	char filter[4096];
	size_t len = 0;
	int i;

	mkdir(TRACE_INST, 0755);	/* exists already: fine */
	for (i = 0; i < n && len < sizeof(filter) - 32; i++)
		len += snprintf(filter + len, sizeof(filter) - len, "%spid == %d",
				i ? " || " : "", tids[i]);
	if (write_file(TRACE_INST "/buffer_size_kb", "4096") ||
	    write_file(TRACE_INST "/events/sched/sched_migrate_task/filter", filter) ||
	    write_file(TRACE_INST "/trace", "") ||
	    write_file(TRACE_INST "/events/sched/sched_migrate_task/enable", "1"))
		return false;
	return true;
}

/* Cross-node migrations since xnode_start(), -1 without tracefs. */
static long xnode_stop(bool started)
{
	char line[512], path[128];
	long count = 0, lost = 0;
	int cpu;
	FILE *f;

	if (!started)
		return -1;
	write_file(TRACE_INST "/events/sched/sched_migrate_task/enable", "0");
	f = fopen(TRACE_INST "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *o = strstr(line, "orig_cpu="), *d = strstr(line, "dest_cpu=");
		int oc, dc;

		if (!o || !d || sscanf(o, "orig_cpu=%d", &oc) != 1 ||
		    sscanf(d, "dest_cpu=%d", &dc) != 1)
			continue;
		if (oc >= 0 && dc >= 0 && oc < MAX_CPUS && dc < MAX_CPUS &&
		    node_of[oc] != node_of[dc])
			count++;
	}
	fclose(f);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path), TRACE_INST "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			long v;

			if (sscanf(line, "overrun: %ld", &v) == 1)
				lost += v;
		}
		fclose(f);
	}
	return count + lost;
}

/* --- bursts ------------------------------------------------------------ */

struct hog {
	pthread_t thread;
	int cpu;
	double start;
};

/* Busy DUTY% of each PERIOD from a common start, asleep the rest. */
static void *burst_hog(void *arg)
{
	struct hog *h = arg;
	double period = period_ms / 1e3, on = period * duty / 100.0;
	long k;

	pin_self(h->cpu);
	prctl(PR_SET_NAME, "burst-hog");
	for (k = 0; !atomic_load(&stop); k++) {
		double t0 = h->start + k * period;
		struct timespec ts;
		double next = t0 + period;

		while (softaff_now() < t0 + on && !atomic_load(&stop))
			;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return NULL;
}

/* --- the server -------------------------------------------------------- */

struct server {
	pthread_t thread;
	pid_t tid;
	sem_t ready;		/* requests posted to this thread */
	double posted[1024];	/* posting times, a ring */
	atomic_long head;	/* posted */
	long tail;		/* served */
	atomic_bool started;
};

static struct server servers[MAX_THREADS];
static atomic_long served, served_home;
static double lat[MAX_REQ];
static atomic_long nlat;

static void *server_thread(void *arg)
{
	struct server *s = arg;

	prctl(PR_SET_NAME, "burst-srv");
	s->tid = (pid_t)syscall(SYS_gettid);
	prefer_home();
	atomic_store(&s->started, true);
	while (!atomic_load(&stop)) {
		struct timespec ts;
		double t, posted;
		int cpu;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (sem_timedwait(&s->ready, &ts))
			continue;
		posted = s->posted[s->tail++ % 1024];
		cpu = sched_getcpu();
		spin_us(work_us);
		t = softaff_now();
		if (atomic_load(&measuring) && posted > 0) {
			long i = atomic_fetch_add(&nlat, 1);

			atomic_fetch_add(&served, 1);
			if (cpu >= 0 && CPU_ISSET(cpu, &home))
				atomic_fetch_add(&served_home, 1);
			if (i < MAX_REQ)
				lat[i] = (t - posted) * 1e6;
		}
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int run_server(void)
{
	struct hog hogs[MAX_CPUS];
	int nhogs = 0, cpu, i;
	pid_t tids[MAX_THREADS];
	double t0, interval = 1.0 / rate, next, end;
	long posted = 0, k = 0, xnode, n;
	bool traced;

	if (client_cpu < 0 || CPU_ISSET(client_cpu, &home)) {
		fprintf(stderr, "server: -c CPU outside HOME needed\n");
		return 2;
	}
	t0 = softaff_now() + 0.05;
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &home))
			continue;
		hogs[nhogs].cpu = cpu;
		hogs[nhogs].start = t0;
		if (pthread_create(&hogs[nhogs].thread, NULL, burst_hog, &hogs[nhogs]))
			die("pthread_create");
		nhogs++;
	}
	for (i = 0; i < nthreads; i++) {
		sem_init(&servers[i].ready, 0, 0);
		if (pthread_create(&servers[i].thread, NULL, server_thread, &servers[i]))
			die("pthread_create");
	}
	for (i = 0; i < nthreads; i++) {
		while (!atomic_load(&servers[i].started))
			usleep(1000);
		tids[i] = servers[i].tid;
	}
	/* The client: open loop, hard-pinned outside HOME. */
	pin_self(client_cpu);
	next = softaff_now();
	end = next + 1 + seconds;
	traced = false;
	while ((t0 = softaff_now()) < end) {
		struct timespec ts;
		struct server *s;

		if (!atomic_load(&measuring) && t0 >= end - seconds) {
			atomic_store(&measuring, true);
			traced = xnode_start(tids, nthreads);
		}
		s = &servers[k++ % nthreads];
		s->posted[atomic_load(&s->head) % 1024] = atomic_load(&measuring) ? next : -1;
		atomic_fetch_add(&s->head, 1);
		sem_post(&s->ready);
		if (atomic_load(&measuring))
			posted++;
		next += interval;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	xnode = xnode_stop(traced);
	atomic_store(&measuring, false);
	atomic_store(&stop, true);
	for (i = 0; i < nthreads; i++)
		pthread_join(servers[i].thread, NULL);
	for (i = 0; i < nhogs; i++)
		pthread_join(hogs[i].thread, NULL);

	n = atomic_load(&nlat) < MAX_REQ ? atomic_load(&nlat) : MAX_REQ;
	qsort(lat, n, sizeof(lat[0]), cmp_double);
	printf("posted=%ld served=%ld served_home=%ld home_share=%.1f rate=%.1f\n",
	       posted, atomic_load(&served), atomic_load(&served_home),
	       atomic_load(&served) ? 100.0 * atomic_load(&served_home) / atomic_load(&served) : 0,
	       (double)atomic_load(&served) / seconds);
	printf("p50_us=%.0f p99_us=%.0f\n", n ? lat[n / 2] : -1, n ? lat[n * 99 / 100] : -1);
	printf("xnode=%ld xnode_per_thread_s=%.3f\n", xnode,
	       xnode < 0 ? -1.0 : (double)xnode / nthreads / seconds);
	return 0;
}

/* --- the overload ------------------------------------------------------ */

struct spinner {
	pthread_t thread;
	pid_t tid;
	atomic_int cpu;
	atomic_bool started;
};

static struct spinner spinners[MAX_THREADS];

static void *spinner_thread(void *arg)
{
	struct spinner *s = arg;
	cpu_set_t all;
	int i;

	prctl(PR_SET_NAME, "burst-hog");
	s->tid = (pid_t)syscall(SYS_gettid);
	CPU_ZERO(&all);
	for (i = 0; i < CPU_SETSIZE && i < MAX_CPUS; i++)
		CPU_SET(i, &all);
	/* The creator's pin to HOME is inherited: free it, then prefer HOME. */
	if (sched_setaffinity(0, sizeof(all), &all))
		die("sched_setaffinity");
	prefer_home();
	atomic_store(&s->started, true);
	while (!atomic_load(&stop))
		atomic_store(&s->cpu, sched_getcpu());
	return NULL;
}

static int outside_count(int n)
{
	int i, out = 0;

	for (i = 0; i < n; i++) {
		int cpu = atomic_load(&spinners[i].cpu);

		if (cpu >= 0 && !CPU_ISSET(cpu, &home))
			out++;
	}
	return out;
}

static int run_overload(void)
{
	int nhome = CPU_COUNT(&home), excess = nthreads - nhome, trial, i;
	cpu_set_t all;

	if (excess <= 0 || nthreads > MAX_THREADS) {
		fprintf(stderr, "overload: -n must exceed the CPUs of HOME\n");
		return 2;
	}
	CPU_ZERO(&all);
	for (i = 0; i < MAX_CPUS; i++)
		CPU_SET(i, &all);
	for (trial = 0; trial < trials; trial++) {
		double start, first = -1, full = -1, deadline;
		pid_t tids[MAX_THREADS];
		long xnode;
		bool traced;

		/* Creator on HOME: new threads start there, as a server's do. */
		if (sched_setaffinity(0, sizeof(home), &home))
			die("sched_setaffinity");
		atomic_store(&stop, false);
		start = softaff_now();
		for (i = 0; i < nthreads; i++) {
			atomic_store(&spinners[i].cpu, -1);
			atomic_store(&spinners[i].started, false);
			if (pthread_create(&spinners[i].thread, NULL, spinner_thread, &spinners[i]))
				die("pthread_create");
		}
		/* The sampler: every half millisecond, for up to 2 s. */
		deadline = start + 2;
		while (softaff_now() < deadline && full < 0) {
			int out = outside_count(nthreads);

			if (out > 0 && first < 0)
				first = softaff_now() - start;
			if (out >= excess)
				full = softaff_now() - start;
			usleep(500);
		}
		for (i = 0; i < nthreads; i++) {
			while (!atomic_load(&spinners[i].started))
				usleep(1000);
			tids[i] = spinners[i].tid;
		}
		traced = xnode_start(tids, nthreads);
		sleep(seconds);
		xnode = xnode_stop(traced);
		atomic_store(&stop, true);
		for (i = 0; i < nthreads; i++)
			pthread_join(spinners[i].thread, NULL);
		printf("trial=%d first_ms=%.1f absorbed_ms=%.1f xnode=%ld xnode_per_task_s=%.3f\n",
		       trial, first < 0 ? -1 : first * 1e3, full < 0 ? -1 : full * 1e3,
		       xnode, xnode < 0 ? -1.0 : (double)xnode / nthreads / seconds);
		fflush(stdout);
		/* Let the averages of the last trial fade. */
		if (sched_setaffinity(0, sizeof(all), &all))
			die("sched_setaffinity");
		sleep(1);
	}
	return 0;
}

/* --- the forking worker ------------------------------------------------ */

static int run_fork(void)
{
	const char *self = "/proc/self/exe";
	double end, start;
	long rounds = 0;

	prefer_home();
	start = softaff_now();
	end = start + seconds;
	while (softaff_now() < end) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (!pid) {
			execl(self, self, "child", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("child");
		rounds++;
	}
	printf("rounds=%ld rounds_per_s=%.1f\n", rounds, rounds / (softaff_now() - start));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int opt;

	if (!strcmp(mode, "child")) {
		spin_us(1000);
		return 0;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "S:Nn:c:r:u:d:p:t:T:")) != -1) {
		switch (opt) {
		case 'S': home_list = optarg; break;
		case 'N': no_pref = true; break;
		case 'n': nthreads = atoi(optarg); break;
		case 'c': client_cpu = atoi(optarg); break;
		case 'r': rate = atoi(optarg); break;
		case 'u': work_us = atoi(optarg); break;
		case 'd': duty = atoi(optarg); break;
		case 'p': period_ms = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 'T': trials = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!home_list || softaff_parse_cpulist(home_list, &home) || !CPU_COUNT(&home) ||
	    nthreads < 1 || nthreads > MAX_THREADS || rate < 1 || seconds < 1)
		goto usage;
	read_nodes();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "server"))
		return run_server();
	if (!strcmp(mode, "overload"))
		return run_overload();
	if (!strcmp(mode, "fork"))
		return run_fork();
usage:
	fprintf(stderr, "usage: softaff_burst server|overload|fork -S HOME [options] (see the source)\n");
	return 2;
}
