/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CGSTAT_H
#define SOFTAFF_CGSTAT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * How much a cgroup's tasks ran and waited, from two cgroup v2 files:
 * cpu.stat (usage_usec, a core file of every cgroup) and cpu.pressure
 * ("some" total=, wall time during which at least one of its tasks was
 * runnable but not running).  cpu.pressure exists where the kernel has
 * CONFIG_PSI, PSI is not off (psi=0 on the command line, or
 * CONFIG_PSI_DEFAULT_DISABLED without psi=1) and the cgroup's own
 * cgroup.pressure is not 0; it does not need the cpu controller.
 */
struct cgstat {
	uint64_t usage_us; /* cpu.stat usage_usec */
	uint64_t some_us;  /* cpu.pressure some total= */
};

/* Pure parsers: 0 or -EBADMSG. */
int cgstat_parse_pressure(const char *buf, uint64_t *ret_some_us);
int cgstat_parse_cpu_stat(const char *buf, uint64_t *ret_usage_us);
/*
 * Both files of the cgroup at path cg under <sys>/fs/cgroup.  -ENOENT
 * when the cgroup has no cpu.pressure (see above), -ESRCH when the
 * cgroup itself is gone.
 */
int cgstat_read(const char *sys, const char *cg, struct cgstat *ret);
/*
 * What a cgroup's tasks did between two reads interval_ns apart, in ns.
 * PSI's "some" is not the wall time in which any task of the cgroup
 * waits: the kernel takes each CPU's own "some" time and averages them,
 * weighted by how long the cgroup's tasks kept each CPU non-idle
 * (kernel/sched/psi.c, "Multiple CPUs": 257 busy tasks on 256 CPUs read
 * 0.4%, not 100%).  So wait is the stall of one CPU of the cgroup, and
 * base, what it compares with, the run time of one: the interval for a
 * cgroup that keeps a CPU's worth busy or more, else what it ran.  Then
 * wait / (wait + base) is its tasks' own wait fraction, whatever the
 * number of CPUs: 2N tasks on N CPUs give 1/2, N + 1 give 1/(N + 1).  A
 * cgroup that keeps several CPUs only partly busy reads lower than its
 * tasks do (one CPU's run time is less than the interval there).
 */
struct cgdelta {
	uint64_t run_ns;  /* usage_usec: CPU time, over all CPUs */
	uint64_t wait_ns; /* some total= */
	uint64_t base_ns; /* min(run_ns, interval_ns) */
};

/*
 * Pure: the delta between two reads (see above).  False when a counter
 * went back (the cgroup was removed and made again under the same
 * name): then now is only a new baseline.
 */
bool cgstat_delta(const struct cgstat *prev, const struct cgstat *now,
		  uint64_t interval_ns, struct cgdelta *ret);

/*
 * The identity of the cgroup at path cg: its directory's inode number,
 * which on cgroup v2 is the cgroup id (kernfs allocates it cyclically,
 * so a cgroup removed and made again under the same name, as by
 * "systemctl restart", gets a new one).  0 or -ESRCH: no such cgroup.
 */
int cgstat_id(const char *sys, const char *cg, uint64_t *ret_id);

/*
 * A PSI trigger on the cgroup's cpu.pressure: the fd reports EPOLLPRI
 * when "some" stall time grows by threshold_us within any window_us.
 * The fd or -errno: -ENOENT no cpu.pressure, -EINVAL a window the
 * kernel refuses (without CAP_SYS_RESOURCE only multiples of 2 s),
 * -EOPNOTSUPP PSI off at boot, -EACCES/-EPERM not allowed.
 */
int cgstat_trigger_open(const char *sys, const char *cg,
			unsigned int threshold_us, unsigned int window_us);

#endif
