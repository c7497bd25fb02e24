/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_AFFINITY_H
#define SOFTAFF_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "cpuset.h"
#include "pref.h"
#include "util.h"

/* What happened to one thread; the caller decides what to log. */
enum aff_result {
	AFF_WRITTEN,   /* soft affinity set (or would be, in dry-run) */
	AFF_UNCHANGED, /* already what we want: no write */
	AFF_EMPTY,     /* target and hard mask do not intersect */
	AFF_RT,	       /* unused: RT/DL threads take requests (L2) */
	AFF_GONE,      /* ESRCH/ENOENT: thread exited meanwhile */
	AFF_EPERM,     /* not allowed: stop managing the process */
	AFF_EINVAL,    /* kernel rejected the mask */
	AFF_ERROR,     /* anything else; errno in *ret_err */
	AFF_FOREIGN,   /* someone else set this mask: left alone */
	_AFF_MAX,
};

const char *aff_result_name(enum aff_result r);

/* Sort -errno from a read or write into a result class. */
enum aff_result aff_classify(int err);

/*
 * Read the thread's own request, task/TID/soft_affinity_list, under a
 * process directory fd (procfs_open_pid()); tid 0: the process's,
 * soft_affinity_list.  0 or -errno.  Here and below, the fds of the
 * files read and written go to plug p (util.h; NULL: closed at once).
 */
int aff_read_soft(struct fd_plug *p, int pfd, int tid, struct cpureq *ret);
/* Write req there (tid 0: the process level), as it reads back. */
enum aff_result aff_write_soft(struct fd_plug *p, int pfd, int tid,
			       const struct cpureq *req, int *ret_err);

/*
 * How the writes go about a thread, passed down from whoever owns the
 * mode (the manager): a property of one run, not a state of this file.
 */
enum aff_mode {
	AFF_MODE_WRITE,	  /* read, decide, write */
	AFF_MODE_DRY_RUN, /* read and decide; write nothing */
	/*
	 * A dry run on a kernel without the feature: a missing
	 * soft_affinity_list reads as a thread that inherits, so that
	 * discovery and matching can still be exercised.
	 */
	AFF_MODE_DRY_RUN_NO_KERNEL,
};

static inline bool aff_mode_dry(enum aff_mode mode)
{
	return mode != AFF_MODE_WRITE;
}

/* aff_read_soft, a missing file read as mode says. */
int aff_read_soft_mode(struct fd_plug *p, int pfd, int tid,
		       enum aff_mode mode, struct cpureq *ret);

/*
 * How much of a thread's own request softaffd may overwrite.  softaffd
 * writes the rule's CPUs as they are: the kernel keeps a request as
 * written and applies its part within the hard mask, so the request
 * file says exactly whether it is still ours.  A request that someone
 * else set on a thread we had already taken is theirs: softaffd leaves
 * that thread alone (AFF_FOREIGN).
 */
enum aff_claim {
	AFF_ADOPT, /* first pass over a new or re-executed process: any */
	AFF_NEW,   /* a thread not met before: only if it inherits */
	AFF_OURS,  /* a thread we set: only if it still has our request */
};

/*
 * Pure: what to do with a thread whose hard mask is hard and whose own
 * request is req; AFF_WRITTEN means "write target".
 */
enum aff_result aff_decide(const struct cpuset *hard, const struct cpureq *req,
			   const struct cpuset *target, enum aff_claim claim);
/*
 * Pure, for restoring: AFF_WRITTEN means "write inherit" because the
 * request is still target, the value we set; a request someone else
 * set is AFF_FOREIGN, one that inherits already AFF_UNCHANGED.
 */
enum aff_result aff_decide_restore(const struct cpureq *req,
				   const struct cpuset *target);

/*
 * What threads = "all" does with the process level (soft_affinity_list
 * of /proc/PID), whose request is cur, for a rule whose CPUs are
 * target.  An adoption (first pass, exec, SIGUSR1) takes whatever is
 * there; later, a request other than ours (proc_ours: what we wrote,
 * NULL: not known) is someone else's.
 */
enum aff_proc_action {
	AFF_PROC_KEEP,	   /* ours, the rule's CPUs: nothing to write */
	AFF_PROC_RETARGET, /* ours, the rule's CPUs changed: write */
	AFF_PROC_HAND,	   /* set by someone else since: leave it */
	AFF_PROC_EMPTY,	   /* adopt: hard mask excludes the target */
	AFF_PROC_TAKE,	   /* adopt: has the rule's CPUs (fork) */
	AFF_PROC_ADOPT,	   /* adopt: write, keep cur for restore */
};
/*
 * Pure.  hard: the main thread's hard mask, read for an adoption only
 * (NULL otherwise).
 */
enum aff_proc_action aff_decide_process(bool adopt, const struct cpureq *cur,
					const struct cpuset *hard,
					const struct cpuset *target,
					const struct cpuset *proc_ours);

/*
 * Read the thread's hard mask and request, decide as above and write.
 * Writes that change nothing are skipped.  *ret_err gets the -errno
 * behind a failure.
 */
enum aff_result aff_apply_thread(struct fd_plug *p, int pfd, int tid,
				 const struct cpuset *target,
				 enum aff_claim claim, enum aff_mode mode,
				 int *ret_err);
enum aff_result aff_restore_thread(struct fd_plug *p, int pfd, int tid,
				   const struct cpuset *target,
				   enum aff_mode mode, int *ret_err);

/*
 * The process's own ratio request, /proc/PID/soft_affinity_ratio: an
 * empty line (inherit), "none" or "A:P".  0 or -errno (-EBADMSG).
 */
int aff_read_ratio(struct fd_plug *p, int pfd, struct ratio_req *ret);
/*
 * Pure: what to do with a process whose ratio request is cur when we
 * want want (NULL: restore) and last set ours ({0, 0}: never).  A
 * request other than ours, after we set one, is someone else's
 * (AFF_FOREIGN); a first write takes over whatever was there.
 */
enum aff_result aff_decide_ratio(const struct ratio_req *cur,
				 const struct ratio *ours,
				 const struct ratio *want);
/*
 * Read, decide and write the process's ratio: want, or NULL to restore
 * (write "inherit" if it is still ours).  known: its request, known
 * without reading the file (NULL: read it).  *ret_err as above.
 */
enum aff_result aff_apply_ratio(struct fd_plug *p, int pfd,
				const struct ratio_req *known,
				const struct ratio *ours,
				const struct ratio *want, bool dry_run,
				int *ret_err);

/* Does <proc>/self/soft_affinity exist?  0 or -errno. */
int aff_probe(const char *proc);

#endif
