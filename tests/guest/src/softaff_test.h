/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the guest test helpers (one C file each, built by
 * vm/stage-payload): CPU lists, the clock, and this thread's soft affinity.
 */
#ifndef SOFTAFF_TEST_H
#define SOFTAFF_TEST_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* "0-2,5" -> set; -1 if a part is not a number or a range. */
static inline int softaff_parse_cpulist(const char *s, cpu_set_t *set)
{
	char *copy = strdup(s), *tok, *save = NULL;

	CPU_ZERO(set);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int a, b;

		if (sscanf(tok, "%d-%d", &a, &b) != 2) {
			if (sscanf(tok, "%d", &a) != 1) {
				free(copy);
				return -1;
			}
			b = a;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			if (a >= 0)
				CPU_SET(a, set);
	}
	free(copy);
	return 0;
}

/*
 * "0-2,5\n" ("" = empty) -> a mask of CPUs 0..63; -1 if malformed or a CPU
 * is >= 64.  Strict, for checking what the kernel prints.
 */
static inline int softaff_parse_cpulist64(const char *s, uint64_t *ret)
{
	uint64_t m = 0;

	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1)
				return -1;
			s = end;
		}
		if (a > b || b >= 64)
			return -1;
		for (; a <= b; a++)
			m |= 1ULL << a;
		if (*s == ',')
			s++;
	}
	*ret = m;
	return 0;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double softaff_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /proc/self/task/TID/FILE of the calling thread */
static inline void softaff_thread_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "/proc/self/task/%ld/%s", (long)syscall(SYS_gettid), file);
}

/*
 * Is the calling thread's preference its own request?  A write that covers
 * the thread's whole hard mask clears the request instead of storing it,
 * silently, so a helper that means to measure soft affinity checks.
 */
static inline bool softaff_own_request_self(void)
{
	char path[64], line[128];
	bool own = false;
	FILE *f;

	softaff_thread_path(path, sizeof(path), "status");
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "Cpus_preferred_source:\ttask\n"))
			own = true;
	fclose(f);
	return own;
}

/*
 * Write the calling thread's preference; -1 with errno set if the write
 * failed, or with errno EDOM if the kernel kept no request (the thread's
 * hard mask lay inside @list).
 */
static inline int softaff_set_soft_self(const char *list)
{
	char path[64];
	FILE *f;

	softaff_thread_path(path, sizeof(path), "soft_affinity_list");
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (fprintf(f, "%s\n", list) < 0) {
		fclose(f);
		return -1;
	}
	if (fclose(f))
		return -1;
	if (!softaff_own_request_self()) {
		fprintf(stderr, "preference %s not stored: the thread's hard mask lies inside it\n",
			list);
		errno = EDOM;
		return -1;
	}
	return 0;
}

#endif
