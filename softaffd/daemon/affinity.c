// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "procfs.h"
#include "util.h"

const char *aff_result_name(enum aff_result r)
{
	static const char *const names[_AFF_MAX] = {
		[AFF_WRITTEN] = "written", [AFF_UNCHANGED] = "unchanged",
		[AFF_EMPTY] = "empty",	   [AFF_RT] = "rt",
		[AFF_GONE] = "gone",	   [AFF_EPERM] = "eperm",
		[AFF_EINVAL] = "einval",   [AFF_ERROR] = "error",
		[AFF_FOREIGN] = "foreign",
	};

	return r < _AFF_MAX ? names[r] : "?";
}

enum aff_result aff_classify(int err)
{
	switch (err) {
	case -ESRCH:
	case -ENOENT:
		return AFF_GONE;
	case -EPERM:
	case -EACCES:
		return AFF_EPERM;
	case -EINVAL:
		return AFF_EINVAL;
	default:
		return AFF_ERROR;
	}
}

/* tid 0: the process level, /proc/PID/soft_affinity_list. */
static void soft_path(char *path, size_t size, int tid)
{
	if (tid)
		snprintf(path, size, "task/%d/soft_affinity_list", tid);
	else
		snprintf(path, size, "soft_affinity_list");
}

int aff_read_soft(struct fd_plug *p, int pfd, int tid, struct cpureq *ret)
{
	char path[64], buf[CPUSET_LIST_BUFSZ];
	ssize_t n;

	soft_path(path, sizeof(path), tid);
	n = read_record_plug(p, pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return cpureq_parse_list(buf, ret) < 0 ? -EBADMSG : 0;
}

/* Write the request (a word or a list) to the thread's own file. */
static enum aff_result write_req(struct fd_plug *p, int pfd, int tid,
				 const struct cpureq *req, int *ret_err)
{
	char path[64], buf[CPUSET_LIST_BUFSZ + 1];
	int n, r;

	soft_path(path, sizeof(path), tid);
	n = cpureq_format(req, true, buf, sizeof(buf) - 1);
	if (n < 0) {
		*ret_err = n;
		return AFF_ERROR;
	}
	buf[n++] = '\n';
	r = kfile_write(p, pfd, path, buf, (size_t)n);
	*ret_err = r;
	return r < 0 ? aff_classify(r) : AFF_WRITTEN;
}

int aff_read_soft_mode(struct fd_plug *p, int pfd, int tid,
		       enum aff_mode mode, struct cpureq *ret)
{
	int r = aff_read_soft(p, pfd, tid, ret);

	if (r == -ENOENT && mode == AFF_MODE_DRY_RUN_NO_KERNEL) {
		*ret = (struct cpureq){.state = REQ_INHERIT};
		r = 0;
	}
	return r;
}

/* Read a thread's hard mask and request; AFF_WRITTEN means "go on". */
static enum aff_result read_masks(struct fd_plug *p, int pfd, int tid,
				  enum aff_mode mode,
				  struct cpuset *hard, struct cpureq *req,
				  int *ret_err)
{
	int r;

	/*
	 * Whatever its policy: a SCHED_FIFO, SCHED_RR or SCHED_DEADLINE
	 * thread's request is kept by the kernel and applied once the thread
	 * is back in a fair class (L2), so its stat need not be read.
	 */
	r = procfs_read_status(p, pfd, tid, hard, NULL);
	if (r < 0)
		goto err;
	r = aff_read_soft_mode(p, pfd, tid, mode, req);
	if (r < 0)
		goto err;
	return AFF_WRITTEN;
err:
	*ret_err = r;
	return aff_classify(r);
}

enum aff_result aff_write_soft(struct fd_plug *p, int pfd, int tid,
			       const struct cpureq *req, int *ret_err)
{
	return write_req(p, pfd, tid, req, ret_err);
}

/* target NULL: nothing known, which no request is. */
static bool req_is(const struct cpureq *req, const struct cpuset *target)
{
	return target && req->state == REQ_SET &&
	       cpuset_equal(&req->cpus, target);
}

enum aff_result aff_decide(const struct cpuset *hard, const struct cpureq *req,
			   const struct cpuset *target, enum aff_claim claim)
{
	if (!cpuset_intersects(target, hard))
		return AFF_EMPTY;
	if (req_is(req, target))
		return AFF_UNCHANGED;
	/*
	 * Inherit on a thread we have not met is where every thread
	 * starts, not a choice; on one we set, someone undid ours.
	 */
	if (claim == AFF_OURS ||
	    (claim == AFF_NEW && req->state != REQ_INHERIT))
		return AFF_FOREIGN;
	return AFF_WRITTEN;
}

enum aff_result aff_decide_restore(const struct cpureq *req,
				   const struct cpuset *target)
{
	if (req->state == REQ_INHERIT)
		return AFF_UNCHANGED;
	return req_is(req, target) ? AFF_WRITTEN : AFF_FOREIGN;
}

enum aff_proc_action aff_decide_process(bool adopt, const struct cpureq *cur,
					const struct cpuset *hard,
					const struct cpuset *target,
					const struct cpuset *proc_ours)
{
	bool ours = req_is(cur, target);

	if (!adopt) {
		if (ours)
			return AFF_PROC_KEEP;
		return req_is(cur, proc_ours) ? AFF_PROC_RETARGET
					      : AFF_PROC_HAND;
	}
	/* A whole process pinned away: nothing of target would apply. */
	if (!hard || !cpuset_intersects(target, hard))
		return AFF_PROC_EMPTY;
	return ours ? AFF_PROC_TAKE : AFF_PROC_ADOPT;
}

/* Read, decide (restore or apply with claim), write what was decided. */
static enum aff_result aff_thread(struct fd_plug *p, int pfd, int tid,
				  const struct cpuset *target, bool restore,
				  enum aff_claim claim, enum aff_mode mode,
				  int *ret_err)
{
	struct cpureq req, want = {.state = REQ_INHERIT};
	struct cpuset hard;
	enum aff_result res;

	*ret_err = 0;
	if (restore) {
		/*
		 * Only the request matters: the hard mask and policy do not.
		 * A missing file stays an error whatever the mode: there is
		 * nothing of ours to take back.
		 */
		int r = aff_read_soft(p, pfd, tid, &req);

		if (r < 0) {
			*ret_err = r;
			return aff_classify(r);
		}
		res = aff_decide_restore(&req, target);
	} else {
		res = read_masks(p, pfd, tid, mode, &hard, &req, ret_err);
		if (res != AFF_WRITTEN)
			return res;
		res = aff_decide(&hard, &req, target, claim);
		want = (struct cpureq){.state = REQ_SET, .cpus = *target};
	}
	if (res != AFF_WRITTEN || aff_mode_dry(mode))
		return res;
	return write_req(p, pfd, tid, &want, ret_err);
}

enum aff_result aff_apply_thread(struct fd_plug *p, int pfd, int tid,
				 const struct cpuset *target,
				 enum aff_claim claim, enum aff_mode mode,
				 int *ret_err)
{
	return aff_thread(p, pfd, tid, target, false, claim, mode, ret_err);
}

enum aff_result aff_restore_thread(struct fd_plug *p, int pfd, int tid,
				   const struct cpuset *target,
				   enum aff_mode mode, int *ret_err)
{
	return aff_thread(p, pfd, tid, target, true, AFF_OURS, mode, ret_err);
}

/* /proc/PID/soft_affinity_ratio: "\n", "none\n" or "5:4\n". */
int aff_read_ratio(struct fd_plug *p, int pfd, struct ratio_req *ret)
{
	char buf[64];
	ssize_t n;

	n = read_record_plug(p, pfd, "soft_affinity_ratio", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return ratio_req_parse(buf, ret) < 0 ? -EBADMSG : 0;
}

enum aff_result aff_decide_ratio(const struct ratio_req *cur,
				 const struct ratio *ours,
				 const struct ratio *want)
{
	bool set_before = ours->allowed != 0;

	if (!want) {
		if (cur->state == REQ_INHERIT)
			return AFF_UNCHANGED;
		return set_before && ratio_req_is(cur, *ours) ? AFF_WRITTEN
							      : AFF_FOREIGN;
	}
	if (ratio_req_is(cur, *want))
		return AFF_UNCHANGED;
	if (set_before && !ratio_req_is(cur, *ours))
		return AFF_FOREIGN;
	return AFF_WRITTEN;
}

enum aff_result aff_apply_ratio(struct fd_plug *p, int pfd,
				const struct ratio_req *known,
				const struct ratio *ours,
				const struct ratio *want, bool dry_run,
				int *ret_err)
{
	struct ratio_req cur, req = {REQ_INHERIT, {0, 0}};
	enum aff_result res;
	char buf[RATIO_BUFSZ + 1];
	size_t n;
	int r;

	*ret_err = 0;
	if (known) {
		cur = *known;
	} else {
		r = aff_read_ratio(p, pfd, &cur);
		if (r < 0) {
			*ret_err = r;
			return aff_classify(r);
		}
	}
	res = aff_decide_ratio(&cur, ours, want);
	if (res != AFF_WRITTEN || dry_run)
		return res;
	if (want)
		req = (struct ratio_req){REQ_SET, *want};
	n = ratio_req_line(&req, buf, sizeof(buf));
	r = kfile_write(p, pfd, "soft_affinity_ratio", buf, n);
	*ret_err = r;
	return r < 0 ? aff_classify(r) : AFF_WRITTEN;
}

int aff_probe(const char *proc)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/self/soft_affinity", proc);
	return access(path, F_OK) < 0 ? -errno : 0;
}
