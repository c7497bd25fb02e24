/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_AFFINITY_H
#define SOFTAFF_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

/* What happened to one thread; the caller decides what to log. */
enum aff_result {
	AFF_WRITTEN,   /* soft affinity set (or would be, in dry-run) */
	AFF_UNCHANGED, /* already what we want: no write */
	AFF_EMPTY,     /* target and hard mask do not intersect */
	AFF_RT,	       /* RT/DL thread: the kernel refuses soft affinity */
	AFF_GONE,      /* ESRCH/ENOENT: thread exited meanwhile */
	AFF_EPERM,     /* not allowed: stop managing the process */
	AFF_EINVAL,    /* kernel rejected the mask */
	AFF_ERROR,     /* anything else; errno in *ret_err */
	AFF_FOREIGN,   /* restore: someone else changed it, left alone */
	_AFF_MAX,
};

const char *aff_result_name(enum aff_result r);

/*
 * The one place that writes soft_affinity.  Tests replace it to simulate
 * EPERM/EINVAL/ESRCH on plain fixture files.  Returns 0 or -errno.
 */
typedef int (*aff_write_fn)(const char *path, const char *data, size_t len);
extern aff_write_fn aff_write;

/* Sort -errno from a read or write into a result class. */
enum aff_result aff_classify(int err);

/* Read <proc>/PID/task/TID/soft_affinity_list.  0 or -errno. */
int aff_read_soft(const char *proc, int pid, int tid, struct cpuset *ret);

/*
 * Make thread TID prefer target & hard.  Reads first and skips a write
 * that would change nothing.  *ret_err gets the -errno behind a failure.
 */
enum aff_result aff_apply_thread(const char *proc, int pid, int tid,
				 const struct cpuset *target, bool dry_run,
				 int *ret_err);

/*
 * Undo aff_apply_thread: if the thread's soft affinity is still exactly
 * target & hard, write the hard mask (soft affinity off).  A value that
 * someone else set after us is AFF_FOREIGN and left alone.
 */
enum aff_result aff_restore_thread(const char *proc, int pid, int tid,
				   const struct cpuset *target, bool dry_run,
				   int *ret_err);

/*
 * Dry runs on a kernel without the feature: treat a missing
 * soft_affinity_list as "soft affinity off" (equal to the hard mask) so
 * that discovery and matching can still be exercised.
 */
extern bool aff_missing_is_off;

/* Does <proc>/self/soft_affinity exist?  0 or -errno. */
int aff_probe(const char *proc);

#endif
