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
 * One line of the calling thread's status ("Cpus_preferred_source" ->
 * "thread"), without the newline; -1 if there is no such line.
 */
static inline int softaff_status_self(const char *key, char *out, size_t len)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	int ret = -1;
	FILE *f;

	softaff_thread_path(path, sizeof(path), "status");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(out, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		out[strcspn(out, "\n")] = '\0';
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * Is the calling thread's preference its own request, its thread's or its
 * process's (Cpus_preferred_source "thread" or "process"), rather than its
 * cgroup's or none?
 */
static inline bool softaff_own_request_self(void)
{
	char src[32];

	if (softaff_status_self("Cpus_preferred_source", src, sizeof(src)))
		return false;
	return !strcmp(src, "thread") || !strcmp(src, "process");
}

/*
 * Write the calling thread's preference (its thread-level request); -1
 * with errno set if the write failed, or with errno EDOM if the request is
 * not in effect: the kernel stores a request exactly as written, but one
 * that covers the thread's whole hard mask, or misses it, leaves the
 * preferred CPUs equal to the hard mask, and a helper that means to
 * measure soft affinity must not run without one.
 */
static inline int softaff_set_soft_self(const char *list)
{
	char path[64], src[32] = "", pref[256] = "", allowed[256] = "";
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
	if (softaff_status_self("Cpus_preferred_source", src, sizeof(src)) ||
	    strcmp(src, "thread")) {
		fprintf(stderr, "preference %s not in force: Cpus_preferred_source is not \"thread\"\n",
			list);
		errno = EDOM;
		return -1;
	}
	if (softaff_status_self("Cpus_preferred_list", pref, sizeof(pref)) ||
	    softaff_status_self("Cpus_allowed_list", allowed, sizeof(allowed)) ||
	    !strcmp(pref, allowed)) {
		fprintf(stderr, "preference %s not in effect: the thread's hard mask %s lies inside it or outside it\n",
			list, allowed);
		errno = EDOM;
		return -1;
	}
	return 0;
}

#endif
