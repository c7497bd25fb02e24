// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "sysctl.h"

static int read_one(const struct roots *roots, const char *name,
		    unsigned int *ret)
{
	char path[PATH_MAX], buf[32];
	uint64_t v;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/sys/kernel/%s", roots->proc, name);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_u64(buf, &v) < 0 || v < RATIO_MIN || v > RATIO_MAX)
		return -EBADMSG;
	*ret = (unsigned int)v;
	return 0;
}

static int write_one(const struct roots *roots, const char *name,
		     unsigned int v)
{
	char path[PATH_MAX], buf[32];
	int n;

	snprintf(path, sizeof(path), "%s/sys/kernel/%s", roots->proc, name);
	n = snprintf(buf, sizeof(buf), "%u\n", v);
	return write_file(path, buf, (size_t)n);
}

int sysctl_read_ratio(const struct roots *roots, struct ratio *ret)
{
	struct ratio r;
	int e = read_one(roots, "sched_allowed", &r.allowed);

	if (!e)
		e = read_one(roots, "sched_preferred", &r.preferred);
	if (!e)
		*ret = r;
	return e;
}

static void orig_path(const struct sysctl_ratio *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", s->roots->run, SYSCTL_ORIG_FILE);
}

/* "100:1\n" (orig_save's line) -> ratio.  0 or -errno. */
static int orig_load(const struct sysctl_ratio *s, struct ratio *ret)
{
	char path[PATH_MAX], buf[64], *nl;
	struct ratio_req req;
	ssize_t n;

	orig_path(s, path, sizeof(path));
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* A line cut short was never finished: not a ratio. */
	nl = strchr(buf, '\n');
	if (!nl)
		return -EBADMSG;
	nl[1] = '\0';
	if (ratio_req_parse(buf, &req) < 0 || req.state != REQ_SET)
		return -EBADMSG;
	*ret = req.value;
	return 0;
}

static int orig_save(const struct sysctl_ratio *s)
{
	char path[PATH_MAX], buf[RATIO_BUFSZ + 1];

	if (mkdir(s->roots->run, 0755) < 0 && errno != EEXIST)
		return -errno;
	orig_path(s, path, sizeof(path));
	return write_file_atomic(path, buf,
				 ratio_req_line(&(struct ratio_req){REQ_SET, s->orig},
						buf, sizeof(buf)));
}

static void orig_remove(const struct sysctl_ratio *s)
{
	char path[PATH_MAX];

	orig_path(s, path, sizeof(path));
	unlink(path);
}

int sysctl_init(struct sysctl_ratio *s, const struct roots *roots,
		bool dry_run, bool persist)
{
	struct ratio saved;
	int r;

	memset(s, 0, sizeof(*s));
	s->roots = roots;
	s->dry_run = dry_run;
	s->persist = persist && !dry_run;
	r = sysctl_read_ratio(roots, &s->cur);
	if (r < 0)
		return r;
	s->have = true;
	s->orig = s->cur;
	if (!s->persist)
		return 0;
	/*
	 * The file is written at the first write of the ratio, never
	 * before (sysctl_set): one that is there means a predecessor
	 * changed the ratio and died without restoring it, so the value
	 * now may be its own.  None means no predecessor wrote: the value
	 * now is the admin's or the kernel's, whatever it is, and ours
	 * only once we write.
	 */
	r = orig_load(s, &saved);
	if (r == 0) {
		s->saved = true;
		s->orig = saved;
		s->owned = !ratio_equal(saved, s->cur);
		if (s->owned)
			log_info("sched ratio %u:%u was left by an earlier "
				 "softaffd; the one found before it, %u:%u, "
				 "is restored on stop",
				 s->cur.allowed, s->cur.preferred,
				 saved.allowed, saved.preferred);
	}
	return 0;
}

bool sysctl_check(struct sysctl_ratio *s)
{
	struct ratio now;

	if (!s->have || s->paused || s->dry_run)
		return s->paused;
	if (sysctl_read_ratio(s->roots, &now) < 0 || ratio_equal(now, s->cur))
		return false;
	log_notice("sched_allowed:sched_preferred changed from %u:%u to "
		   "%u:%u by someone else; softaffd leaves the ratio alone "
		   "until SIGUSR1 (systemctl kill -s USR1 softaffd) or a "
		   "reload",
		   s->cur.allowed, s->cur.preferred, now.allowed,
		   now.preferred);
	s->cur = now;
	s->paused = true;
	s->owned = false;
	return true;
}

void sysctl_resume(struct sysctl_ratio *s)
{
	struct ratio now;

	if (!s->have || !s->paused)
		return;
	if (sysctl_read_ratio(s->roots, &now) == 0)
		s->cur = now;
	s->paused = false;
	log_info("sched ratio changes resumed from %u:%u", s->cur.allowed,
		 s->cur.preferred);
}

/*
 * Both sides at once through kernel.sched_soft_affinity_ratio, so that no
 * other ratio is ever in force between the old and the new one; kernels
 * without it get the two files in the order that passes through the
 * softer or the harder of the two, never further.
 */
static int write_ratio(struct sysctl_ratio *s, struct ratio next)
{
	struct ratio cur = s->cur;
	bool allowed_first = ctl_write_allowed_first(cur, next);
	char path[PATH_MAX], buf[RATIO_BUFSZ + 1];
	int r = 0;

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_soft_affinity_ratio",
		 s->roots->proc);
	r = write_file(path, buf,
		       ratio_req_line(&(struct ratio_req){REQ_SET, next}, buf,
				      sizeof(buf)));
	/*
	 * Missing (an older kernel) or read-only (a unit file that binds
	 * only the two older files writable): the two files, in order.
	 */
	if (r != -ENOENT && r != -EROFS && r != -EACCES)
		return r;
	r = 0;

	if (allowed_first && cur.allowed != next.allowed)
		r = write_one(s->roots, "sched_allowed", next.allowed);
	if (!r && cur.preferred != next.preferred)
		r = write_one(s->roots, "sched_preferred", next.preferred);
	if (!r && !allowed_first && cur.allowed != next.allowed)
		r = write_one(s->roots, "sched_allowed", next.allowed);
	return r;
}

int sysctl_set(struct sysctl_ratio *s, struct ratio next, const char *reason)
{
	int r;

	if (!s->have)
		return -ENOENT;
	if (sysctl_check(s))
		return -EBUSY;
	if (ratio_equal(s->cur, next))
		return 0;
	log_notice("%ssched_allowed:sched_preferred %u:%u -> %u:%u (%s)",
		   s->dry_run ? "dry-run: would set " : "", s->cur.allowed,
		   s->cur.preferred, next.allowed, next.preferred, reason);
	s->changes++;
	if (s->dry_run) {
		s->cur = next;
		return 0;
	}
	/* What to restore after a crash, before the first value of ours. */
	if (s->persist && !s->saved) {
		r = orig_save(s);
		if (r < 0)
			log_warn("cannot save the sched ratio to %s/%s (%s): a "
				 "restart after a crash cannot restore it",
				 s->roots->run, SYSCTL_ORIG_FILE, strerror(-r));
		s->saved = r >= 0;
	}
	r = write_ratio(s, next);
	if (r < 0) {
		log_err("cannot set sched_allowed/sched_preferred: %s",
			strerror(-r));
		/* Re-read so the next attempt starts from the truth. */
		sysctl_read_ratio(s->roots, &s->cur);
		return r;
	}
	s->cur = next;
	s->owned = true;
	return 0;
}

void sysctl_restore(struct sysctl_ratio *s)
{
	if (!s->have || s->dry_run)
		return;
	if (!sysctl_check(s) && s->owned && !ratio_equal(s->cur, s->orig))
		sysctl_set(s, s->orig, "restoring value found at start");
	else if (s->paused)
		log_info("sched ratio changed by someone else, left at %u:%u",
			 s->cur.allowed, s->cur.preferred);
}

void sysctl_done(struct sysctl_ratio *s)
{
	if (s->persist)
		orig_remove(s);
}
