// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "procfs.h"
#include "util.h"

aff_write_fn aff_write = write_file_at;
bool aff_missing_is_off;

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

static void soft_path(char *path, size_t size, int tid)
{
	snprintf(path, size, "task/%d/soft_affinity_list", tid);
}

int aff_read_soft(int pfd, int tid, struct cpuset *ret)
{
	char path[64], buf[CPUSET_LIST_BUFSZ];
	ssize_t n;

	soft_path(path, sizeof(path), tid);
	n = read_file_at(pfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return cpuset_parse_list(buf, ret) < 0 ? -EBADMSG : 0;
}

static enum aff_result write_mask(int pfd, int tid, const struct cpuset *mask,
				  int *ret_err)
{
	char path[64], buf[CPUSET_LIST_BUFSZ + 1];
	int n, r;

	soft_path(path, sizeof(path), tid);
	n = cpuset_format_list(mask, buf, sizeof(buf) - 1);
	if (n < 0) {
		*ret_err = n;
		return AFF_ERROR;
	}
	buf[n++] = '\n';
	r = aff_write(pfd, path, buf, (size_t)n);
	*ret_err = r;
	return r < 0 ? aff_classify(r) : AFF_WRITTEN;
}

/* Read hard and soft masks of one thread; AFF_WRITTEN means "go on". */
static enum aff_result read_masks(int pfd, int tid, struct cpuset *hard,
				  struct cpuset *soft, int *ret_err)
{
	struct pstat st;
	int r;

	r = procfs_read_stat(pfd, tid, &st);
	if (r < 0)
		goto err;
	if (policy_is_rt(st.policy))
		return AFF_RT;
	r = procfs_read_status(pfd, tid, hard, NULL);
	if (r < 0)
		goto err;
	r = aff_read_soft(pfd, tid, soft);
	if (r == -ENOENT && aff_missing_is_off) {
		*soft = *hard;
		r = 0;
	}
	if (r < 0)
		goto err;
	return AFF_WRITTEN;
err:
	*ret_err = r;
	return aff_classify(r);
}

enum aff_result aff_decide(const struct cpuset *hard, const struct cpuset *soft,
			   const struct cpuset *target, enum aff_claim claim,
			   struct cpuset *ret_want)
{
	cpuset_and(ret_want, target, hard);
	if (cpuset_empty(ret_want))
		return AFF_EMPTY;
	if (cpuset_equal(ret_want, soft))
		return AFF_UNCHANGED;
	/*
	 * Soft affinity off (soft == hard) on a thread we have not met is
	 * the inherited default, not a choice; on one we set it is.
	 */
	if (claim == AFF_OURS ||
	    (claim == AFF_NEW && !cpuset_equal(soft, hard)))
		return AFF_FOREIGN;
	return AFF_WRITTEN;
}

enum aff_result aff_decide_restore(const struct cpuset *hard,
				   const struct cpuset *soft,
				   const struct cpuset *target)
{
	struct cpuset ours;

	if (cpuset_equal(soft, hard))
		return AFF_UNCHANGED;
	cpuset_and(&ours, target, hard);
	return cpuset_equal(soft, &ours) ? AFF_WRITTEN : AFF_FOREIGN;
}

/* Read, decide (restore or apply with claim), write what was decided. */
static enum aff_result aff_thread(int pfd, int tid,
				  const struct cpuset *target, bool restore,
				  enum aff_claim claim, bool dry_run,
				  int *ret_err)
{
	struct cpuset hard, soft, want;
	enum aff_result res;

	*ret_err = 0;
	res = read_masks(pfd, tid, &hard, &soft, ret_err);
	if (res != AFF_WRITTEN)
		return res;
	if (restore) {
		res = aff_decide_restore(&hard, &soft, target);
		want = hard;
	} else {
		res = aff_decide(&hard, &soft, target, claim, &want);
	}
	if (res != AFF_WRITTEN || dry_run)
		return res;
	return write_mask(pfd, tid, &want, ret_err);
}

enum aff_result aff_apply_thread(int pfd, int tid, const struct cpuset *target,
				 enum aff_claim claim, bool dry_run,
				 int *ret_err)
{
	return aff_thread(pfd, tid, target, false, claim, dry_run, ret_err);
}

enum aff_result aff_restore_thread(int pfd, int tid,
				   const struct cpuset *target, bool dry_run,
				   int *ret_err)
{
	return aff_thread(pfd, tid, target, true, AFF_OURS, dry_run, ret_err);
}

/*
 * /proc/PID/soft_affinity_ratio:
 *   100:1 default
 *   5:4 task
 */
int aff_parse_ratio(const char *buf, struct ratio *ret, bool *ret_own)
{
	char src[16];
	unsigned int a, p;
	int n = 0;

	if (sscanf(buf, "%u:%u %15s%n", &a, &p, src, &n) != 3 || !a || !p)
		return -EBADMSG;
	ret->allowed = a;
	ret->preferred = p;
	*ret_own = !strcmp(src, "task");
	return 0;
}

int aff_read_ratio(int pfd, struct ratio *ret, bool *ret_own)
{
	char buf[64];
	ssize_t n;

	n = read_file_at(pfd, "soft_affinity_ratio", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return aff_parse_ratio(buf, ret, ret_own);
}

static bool ratio_eq(const struct ratio *a, const struct ratio *b)
{
	return a->allowed == b->allowed && a->preferred == b->preferred;
}

enum aff_result aff_decide_ratio(const struct ratio *cur, bool own,
				 const struct ratio *ours,
				 const struct ratio *want)
{
	bool set_before = ours->allowed != 0;

	if (!want) {
		if (!own)
			return AFF_UNCHANGED;
		return set_before && ratio_eq(cur, ours) ? AFF_WRITTEN
							 : AFF_FOREIGN;
	}
	if (own && ratio_eq(cur, want))
		return AFF_UNCHANGED;
	if (set_before && !(own && ratio_eq(cur, ours)))
		return AFF_FOREIGN;
	return AFF_WRITTEN;
}

enum aff_result aff_apply_ratio(int pfd, const struct ratio *ours,
				const struct ratio *want, bool dry_run,
				int *ret_err)
{
	struct ratio cur;
	enum aff_result res;
	char buf[32];
	bool own;
	int n, r;

	*ret_err = 0;
	r = aff_read_ratio(pfd, &cur, &own);
	if (r < 0) {
		*ret_err = r;
		return aff_classify(r);
	}
	res = aff_decide_ratio(&cur, own, ours, want);
	if (res != AFF_WRITTEN || dry_run)
		return res;
	if (want)
		n = snprintf(buf, sizeof(buf), "%u:%u\n", want->allowed,
			     want->preferred);
	else
		n = snprintf(buf, sizeof(buf), "default\n");
	r = aff_write(pfd, "soft_affinity_ratio", buf, (size_t)n);
	*ret_err = r;
	return r < 0 ? aff_classify(r) : AFF_WRITTEN;
}

int aff_probe(const char *proc)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/self/soft_affinity", proc);
	return access(path, F_OK) < 0 ? -errno : 0;
}
