/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SYSCTL_H
#define SOFTAFF_SYSCTL_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "util.h"

#define SYSCTL_ORIG_FILE "ratio.orig"

/*
 * The actuator of <proc>/sys/kernel/sched_allowed and sched_preferred.
 *
 * The value found at the first start is what a stop restores.  Before
 * the first write of the ratio it is saved in <run>/ratio.orig, so that
 * a daemon restarted after a crash or kill -9 takes the saved value, not
 * what its predecessor left in the kernel; a daemon that never writes
 * (ratio mode "off") saves nothing and so never takes an admin's later
 * change for a predecessor's.  A ratio changed by anyone else is respected like a
 * mask set by hand: changes pause until sysctl_resume() (SIGUSR1, a
 * reload), and a stop leaves it.
 */
struct sysctl_ratio {
	const struct roots *roots;
	bool dry_run, persist;
	bool saved;	     /* <run>/ratio.orig is there (ours or a predecessor's) */
	bool have;	     /* both files readable */
	struct ratio orig;   /* restored on stop */
	struct ratio cur;    /* what we set last (or found) */
	bool owned;	     /* cur is ours to restore (set by us) */
	bool paused;	     /* someone else changed it */
	uint64_t changes;
};

/*
 * Read the current value and the saved original.  persist: save the
 * original (not for --once or --dry-run).  0 or -errno (no sysctls).
 */
int sysctl_init(struct sysctl_ratio *s, const struct roots *roots,
		bool dry_run, bool persist);
/* Read both values.  0 or -errno. */
int sysctl_read_ratio(const struct roots *roots, struct ratio *ret);
/*
 * Notice a change made by someone else; then pause (logged once).
 * True if paused.
 */
bool sysctl_check(struct sysctl_ratio *s);
/*
 * Move the kernel to next, logging reason.  0 (set, or nothing to do),
 * -EBUSY while paused, -ENOENT without sysctls, or -errno.
 */
int sysctl_set(struct sysctl_ratio *s, struct ratio next, const char *reason);
/* End a pause: the value found now becomes ours to change. */
void sysctl_resume(struct sysctl_ratio *s);
/* Stop: restore the original unless someone else changed the ratio. */
void sysctl_restore(struct sysctl_ratio *s);
/* A clean exit: forget the saved original (restored or not). */
void sysctl_done(struct sysctl_ratio *s);

#endif
