/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_AFFINITY_H
#define SOFTAFF_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
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
	AFF_FOREIGN,   /* someone else set this mask: left alone */
	_AFF_MAX,
};

const char *aff_result_name(enum aff_result r);

/*
 * The one place that writes soft_affinity (path relative to the process
 * directory fd).  Tests replace it to simulate EPERM/EINVAL/ESRCH on
 * plain fixture files.  Returns 0 or -errno.
 */
typedef int (*aff_write_fn)(int dfd, const char *path, const char *data,
			    size_t len);
extern aff_write_fn aff_write;

/* Sort -errno from a read or write into a result class. */
enum aff_result aff_classify(int err);

/*
 * Read task/TID/soft_affinity_list under a process directory fd
 * (procfs_open_pid()).  0 or -errno.
 */
int aff_read_soft(int pfd, int tid, struct cpuset *ret);

/*
 * How much of a thread's current soft affinity softaffd may overwrite.
 * A mask that someone else set on a thread we had already taken is
 * theirs: softaffd leaves that thread alone (AFF_FOREIGN).
 */
enum aff_claim {
	AFF_ADOPT, /* first pass over a new or re-executed process: any mask */
	AFF_NEW,   /* a thread not met before: only if soft affinity is off */
	AFF_OURS,  /* a thread we set: only if it still has our mask */
};

/*
 * Pure: what to do with a thread whose masks are hard and soft.  Puts
 * target & hard into *ret_want; AFF_WRITTEN means "write *ret_want".
 */
enum aff_result aff_decide(const struct cpuset *hard, const struct cpuset *soft,
			   const struct cpuset *target, enum aff_claim claim,
			   struct cpuset *ret_want);
/*
 * Pure, for restoring: AFF_WRITTEN means "write hard" (soft affinity
 * off) because soft is still target & hard, the value we set; a value
 * someone else set is AFF_FOREIGN, one already off AFF_UNCHANGED.
 */
enum aff_result aff_decide_restore(const struct cpuset *hard,
				   const struct cpuset *soft,
				   const struct cpuset *target);

/*
 * Read the thread's masks, decide as above and write.  Writes that
 * change nothing are skipped.  *ret_err gets the -errno behind a failure.
 */
enum aff_result aff_apply_thread(int pfd, int tid, const struct cpuset *target,
				 enum aff_claim claim, bool dry_run,
				 int *ret_err);
enum aff_result aff_restore_thread(int pfd, int tid,
				   const struct cpuset *target, bool dry_run,
				   int *ret_err);

/*
 * Dry runs on a kernel without the feature: treat a missing
 * soft_affinity_list as "soft affinity off" (equal to the hard mask) so
 * that discovery and matching can still be exercised.
 */
extern bool aff_missing_is_off;

/*
 * The per-process ratio, /proc/PID/soft_affinity_ratio: "A:P SOURCE",
 * SOURCE one of task, cgroup, default.  Pure parser: *ret_own says
 * whether the process has a ratio of its own (SOURCE task).  0 or
 * -EBADMSG.
 */
int aff_parse_ratio(const char *buf, struct ratio *ret, bool *ret_own);
int aff_read_ratio(int pfd, struct ratio *ret, bool *ret_own);
/*
 * Pure: what to do with a process whose ratio is cur (own: its own, not
 * inherited) when we want want and last set ours ({0, 0}: never).  An
 * own ratio other than ours, after we set one, is someone else's
 * (AFF_FOREIGN); a first write takes over whatever was there.
 */
enum aff_result aff_decide_ratio(const struct ratio *cur, bool own,
				 const struct ratio *ours,
				 const struct ratio *want);
/*
 * Read, decide and write the process's ratio: want, or NULL to restore
 * (write "default" if it is still ours).  *ret_err as above.
 */
enum aff_result aff_apply_ratio(int pfd, const struct ratio *ours,
				const struct ratio *want, bool dry_run,
				int *ret_err);

/* Does <proc>/self/soft_affinity exist?  0 or -errno. */
int aff_probe(const char *proc);

#endif
