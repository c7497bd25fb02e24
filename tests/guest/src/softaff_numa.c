// SPDX-License-Identifier: GPL-2.0
/*
 * softaff_numa: the memory-follows workload of tests/guest/51-numa.t.
 *
 *   softaff_numa -S CPULIST [-m MIB] [-t SECONDS]
 *
 * A single-threaded process with soft affinity CPULIST.  It waits (up to
 * 10 s) until it runs outside CPULIST, which the test arranges by loading
 * those CPUs with hogs, then allocates MIB (256) and touches every page
 * there, so that first-touch places the memory on the other node.  It
 * prints "allocated cpu=N" and then, for SECONDS (60), keeps writing one
 * byte of every page, which gives NUMA balancing the hinting faults it
 * migrates pages on, and prints "cpu=N" once a second.
 * Exit status: 0, or 1 if it never ran outside CPULIST, 2 on a usage or
 * system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "softaff_test.h"

int main(int argc, char **argv)
{
	const char *soft_list = NULL;
	long mib = 256, seconds = 60, page = sysconf(_SC_PAGESIZE);
	double start, next;
	cpu_set_t soft;
	size_t size, off;
	char *mem;
	int opt;

	while ((opt = getopt(argc, argv, "S:m:t:")) != -1) {
		switch (opt) {
		case 'S': soft_list = optarg; break;
		case 'm': mib = atol(optarg); break;
		case 't': seconds = atol(optarg); break;
		default:
			fprintf(stderr, "usage: softaff_numa -S CPULIST [-m MIB] [-t SECONDS]\n");
			return 2;
		}
	}
	if (!soft_list || softaff_parse_cpulist(soft_list, &soft) || mib < 1 || seconds < 1) {
		fprintf(stderr, "softaff_numa: bad arguments\n");
		return 2;
	}
	if (softaff_set_soft_self(soft_list)) {
		fprintf(stderr, "softaff_numa: soft_affinity_list: %s\n", strerror(errno));
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Spin until the scheduler has put us outside the preferred CPUs. */
	start = softaff_now();
	while (CPU_ISSET(sched_getcpu(), &soft)) {
		if (softaff_now() - start > 10) {
			printf("never ran outside %s\n", soft_list);
			return 1;
		}
	}

	size = (size_t)mib << 20;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "softaff_numa: mmap: %s\n", strerror(errno));
		return 2;
	}
	for (off = 0; off < size; off += page)
		mem[off] = 1;
	printf("allocated cpu=%d pid=%d\n", sched_getcpu(), (int)getpid());

	start = softaff_now();
	next = start + 1;
	while (softaff_now() - start < seconds) {
		for (off = 0; off < size; off += page)
			mem[off]++;
		if (softaff_now() >= next) {
			printf("cpu=%d\n", sched_getcpu());
			next += 1;
		}
	}
	return 0;
}
