// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_probe -m NODE0_CPULIST [-t THREADS] [-M MIB] [-s SECONDS]: the NUMA
 * probe of make bench.
 *
 * The memory (MIB, 64) is allocated and first touched from the CPUs of
 * -m (node 0), so that it lies there; then the process's hard affinity is
 * widened to every CPU and THREADS (2) threads float: each in turn works
 * through its slice of the memory for about a millisecond and sleeps for
 * a millisecond, which gives the scheduler a placement choice at every
 * wake-up.  Where the threads run is sampled from outside (bench_sample);
 * at the end it prints
 *   PROBE threads=T secs=S pages=N node0=N0 node1=N1 ... hinting=H work=W
 * the pages on each node (/proc/self/numa_maps) after NUMA balancing had
 * SECONDS to move them towards the threads, and H, how many of them NUMA
 * balancing had marked for a hinting fault then (move_pages(2) says
 * -ENOENT for those, see numa_maps_pages()).
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "softaff_test.h"

#define MAX_THREADS 64
#define MAX_NODES 64

static char *mem;
static size_t slice;
static atomic_bool stop;
static atomic_ullong work_done;

static void *probe(void *arg)
{
	char *mine = mem + (size_t)(long)arg * slice;
	struct timespec nap = {0, 1000000};
	unsigned long long done = 0;
	size_t off = 0;
	double until;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		until = softaff_now() + 0.001;
		while (softaff_now() < until) {
			mine[off]++;
			off = (off + 64) % slice;
			done++;
		}
		nanosleep(&nap, NULL);
	}
	atomic_fetch_add(&work_done, done);
	return NULL;
}

/*
 * Pages of the mapping at START per node, from /proc/self/numa_maps, which
 * counts every present page.  move_pages(2) cannot be used for this: in
 * Debian's 6.1 (upstream 474098edac26, backported) it reports -ENOENT for
 * a page that NUMA balancing has just marked for a hinting fault
 * (PROT_NONE), which here is a quarter of them or more at any moment;
 * upstream fixed it in 6.5 (d74943a2f3cd).  Returns -1 if the mapping is
 * not found.
 */
static int numa_maps_pages(const void *start, unsigned long *per_node)
{
	char line[4096], *tok, *save;
	unsigned long addr, pages;
	FILE *f = fopen("/proc/self/numa_maps", "r");
	int node, found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx", &addr) != 1 || addr != (unsigned long)start)
			continue;
		found = 0;
		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (sscanf(tok, "N%d=%lu", &node, &pages) == 2 && node >= 0 && node < MAX_NODES)
				per_node[node] += pages;
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	long threads = 2, mib = 64, secs = 20, page = sysconf(_SC_PAGESIZE), i;
	const char *node0 = NULL;
	pthread_t tid[MAX_THREADS];
	unsigned long per_node[MAX_NODES] = {0}, marked = 0;
	cpu_set_t set, start;
	size_t size, npages, n;
	void **pages;
	int *status, opt;
	double t0;

	while ((opt = getopt(argc, argv, "m:t:M:s:")) != -1) {
		switch (opt) {
		case 'm': node0 = optarg; break;
		case 't': threads = strtol(optarg, NULL, 10); break;
		case 'M': mib = strtol(optarg, NULL, 10); break;
		case 's': secs = strtol(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (!node0 || softaff_parse_cpulist(node0, &set) || threads < 1 ||
	    threads > MAX_THREADS || mib < 1 || secs < 1)
		goto usage;
	if (sched_getaffinity(0, sizeof(start), &start) ||
	    sched_setaffinity(0, sizeof(set), &set)) {
		perror("bench_probe: sched_setaffinity (node 0)");
		return 2;
	}
	size = (size_t)mib << 20;
	slice = size / threads;
	/*
	 * A guard page on each side, so that the memory is a mapping of its
	 * own in numa_maps, not merged with a neighbour.
	 */
	mem = mmap(NULL, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || mprotect(mem + page, size, PROT_READ | PROT_WRITE)) {
		perror("bench_probe: mmap");
		return 2;
	}
	mem += page;
	memset(mem, 1, size); /* first touch on node 0 */
	if (sched_setaffinity(0, sizeof(start), &start)) {
		perror("bench_probe: sched_setaffinity (back)");
		return 2;
	}
	t0 = softaff_now();
	for (i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, probe, (void *)i)) {
			fprintf(stderr, "bench_probe: pthread_create failed\n");
			return 2;
		}
	sleep((unsigned int)secs);
	atomic_store(&stop, true);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);

	npages = size / page;
	pages = calloc(npages, sizeof(*pages));
	status = calloc(npages, sizeof(*status));
	if (!pages || !status)
		return 2;
	for (n = 0; n < npages; n++)
		pages[n] = mem + n * page;
	if (syscall(SYS_move_pages, 0, npages, pages, NULL, status, 0)) {
		perror("bench_probe: move_pages");
		return 2;
	}
	for (n = 0; n < npages; n++)
		if (status[n] == -ENOENT)
			marked++;
	if (numa_maps_pages(mem, per_node)) {
		fprintf(stderr, "bench_probe: the memory is not in /proc/self/numa_maps\n");
		return 2;
	}
	printf("PROBE threads=%ld secs=%.3f pages=%zu", threads,
	       softaff_now() - t0, npages);
	for (i = 0; i < MAX_NODES; i++)
		if (per_node[i] || i < 2)
			printf(" node%ld=%lu", i, per_node[i]);
	/* what move_pages(2) could not see (see numa_maps_pages()) */
	printf(" hinting=%lu", marked);
	printf(" work=%llu\n", (unsigned long long)atomic_load(&work_done));
	return 0;
usage:
	fprintf(stderr, "usage: bench_probe -m NODE0_CPULIST [-t THREADS] [-M MIB] [-s SECONDS]\n");
	return 2;
}
