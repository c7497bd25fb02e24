// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A thread's scheduler accounting from /proc (procfs.h): what the
 * softness controller samples, apart from the readers of a process's
 * identity and attributes in procfs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"
#include "util.h"

/*
 * task/TID/schedstat: time on a CPU and time waiting for one (ns), and
 * the number of timeslices:
 *   1234567 89012 34
 */
int procfs_parse_schedstat(const char *buf, struct task_sched *ret)
{
	unsigned long long run, delay;

	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return -EINVAL;
	ret->runtime_ns = run;
	ret->delay_ns = delay;
	return 0;
}

/* "12.345678" (ms, as the kernel's PN_SCHEDSTAT prints it) -> ns. */
static uint64_t ms_to_ns(const char *v)
{
	unsigned long long ms = 0, frac = 0;
	int digits = 0;
	const char *dot;

	ms = strtoull(v, NULL, 10);
	dot = strchr(v, '.');
	if (dot)
		for (dot++; *dot >= '0' && *dot <= '9' && digits < 6;
		     dot++, digits++)
			frac = frac * 10 + (unsigned long long)(*dot - '0');
	while (digits++ < 6)
		frac *= 10;
	return ms * 1000000ULL + frac;
}

/*
 * task/TID/sched (schedstats counters are 0 unless
 * kernel.sched_schedstats=1):
 *   nr_migrations_soft_spill                     :                    3
 *   nr_migrations_soft_return                    :                    2
 *   soft_outside_runtime                         :          1234.567890
 *   nr_wakeups_soft_spill                        :                   10
 *   nr_wakeups_soft_return                       :                    9
 * Older kernels print some names with a "stats." or "se.statistics."
 * prefix: the part after the last dot is the name.
 */
int procfs_parse_sched(const char *buf, struct task_sched *ret)
{
	uint64_t spills = 0, returns = 0;
	bool any = false;

	for (const char *l = buf, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		const char *colon = strchr(l, ':'), *name;
		char key[64];
		size_t n;

		nl = strchr(l, '\n');
		if (!colon || (nl && colon > nl))
			continue;
		while (*l == ' ')
			l++;
		n = (size_t)(colon - l);
		while (n && l[n - 1] == ' ')
			n--;
		if (n == 0 || n >= sizeof(key))
			continue;
		memcpy(key, l, n);
		key[n] = '\0';
		name = strrchr(key, '.');
		name = name ? name + 1 : key;
		if (!strcmp(name, "soft_outside_runtime")) {
			ret->outside_ns = ms_to_ns(colon + 1 + strspn(colon + 1, " "));
			any = true;
		} else if (!strcmp(name, "nr_wakeups_soft_spill") ||
			   !strcmp(name, "nr_migrations_soft_spill")) {
			spills += strtoull(colon + 1, NULL, 10);
			any = true;
		} else if (!strcmp(name, "nr_wakeups_soft_return") ||
			   !strcmp(name, "nr_migrations_soft_return")) {
			returns += strtoull(colon + 1, NULL, 10);
			any = true;
		}
	}
	if (!any)
		return -EINVAL;
	ret->spills = spills;
	ret->returns = returns;
	return 0;
}

int procfs_read_task_sched(int pfd, int tid, bool detail,
			   struct task_sched *ret)
{
	char path[64], buf[8192];
	ssize_t n;
	int r;

	snprintf(path, sizeof(path), "task/%d/schedstat", tid);
	n = read_record_at(pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	r = procfs_parse_schedstat(buf, ret);
	if (r < 0 || !detail)
		return r;
	/* A kernel without the soft counters: waiting alone still tells. */
	ret->outside_ns = ret->spills = ret->returns = 0;
	snprintf(path, sizeof(path), "task/%d/sched", tid);
	n = read_record_at(pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	procfs_parse_sched(buf, ret);
	return 0;
}
