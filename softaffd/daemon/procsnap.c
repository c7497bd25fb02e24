// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The gather step for one process: its snapshot (struct snap), read
 * through one fd on <proc>/PID (stat at once; status, exe, cmdline and
 * cgroup as the rules or an adoption ask), and the digest of the
 * attributes a rescan compares.  Below the writes: they read the
 * status through it, never the other way round.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "manager-internal.h"

/* The directory and every file read through it, closed together. */
void mgr_snap_close(struct snap *s)
{
	if (s->pfd < 0)
		return;
	fd_close_later(&s->plug, s->pfd);
	s->pfd = -1;
	fd_unplug(&s->plug);
}

/* Open <proc>/PID and read its stat.  0 or -errno (gone). */
int mgr_snap_open(struct mgr *m, int pid)
{
	struct snap *s = m->snap;
	int r;

	mgr_snap_close(s);
	s->pid = pid;
	s->pfd = procfs_open_pid_at(m->proc_fd, m->roots.proc, pid);
	if (s->pfd < 0)
		return s->pfd;
	/*
	 * What is written while it is open is procfs (through pfd) and
	 * cgroupfs files (a cgroup rule's): their errors are write(2)'s.
	 */
	fd_plug(&s->plug, true);
	r = procfs_read_stat(&s->plug, s->pfd, 0, &s->st);
	if (r < 0) {
		mgr_snap_close(s);
		return r;
	}
	memset(&s->a, 0, sizeof(s->a));
	s->have_status = false;
	s->ratio_hint = SNAP_RATIO_READ;
	s->leader_inherits = false;
	s->a.loaded = NEED_COMM;
	s->a.comm = s->st.comm;
	s->a.regex_budget = RULES_REGEX_BUDGET;
	return 0;
}

/*
 * What the main thread's status tells of the requests without reading
 * their files (the sources: the first level that does not inherit
 * decides, thread, process, cgroup).  The mask: "process" or "cgroup"
 * decides, so the main thread's own inherits.  The ratio: "process"
 * decides, so the process's own is the ratio shown; "cgroup" decides,
 * so the process's own inherits; "default" (none decides), so the
 * process's own is inherit or "none", unless the main thread's own
 * ratio is "none" and hides it.  "thread": the process's is hidden.
 */
static void snap_learn(struct snap *s)
{
	const struct pstatus *ps = &s->status;

	s->leader_inherits = ps->mask_src == PREF_SRC_PROCESS ||
			     ps->mask_src == PREF_SRC_CGROUP;
	switch (ps->ratio_src) {
	case PREF_SRC_PROCESS:
		s->ratio_hint = SNAP_RATIO_KNOWN;
		s->ratio = (struct ratio_req){
			REQ_SET, {ps->ratio_allowed, ps->ratio_preferred}};
		break;
	case PREF_SRC_CGROUP:
		s->ratio_hint = SNAP_RATIO_KNOWN;
		s->ratio = (struct ratio_req){REQ_INHERIT, {0, 0}};
		break;
	case PREF_SRC_NONE:
		s->ratio_hint = SNAP_RATIO_UNSET;
		break;
	default:
		s->ratio_hint = SNAP_RATIO_READ;
		break;
	}
}

int mgr_read_pstatus(struct snap *s, int pfd, struct pstatus *ret)
{
	int r;

	if (!s || pfd < 0 || pfd != s->pfd)
		return procfs_read_pstatus(NULL, pfd, ret);
	if (!s->have_status) {
		r = procfs_read_pstatus(&s->plug, pfd, &s->status);
		if (r < 0)
			return r;
		s->have_status = true;
		snap_learn(s);
	}
	*ret = s->status;
	return 0;
}

void procsnap_wrote_thread(struct snap *s)
{
	if (s)
		s->leader_inherits = false;
}

/* Read one more attribute (a NEED_* bit); unreadable stays NULL. */
void mgr_snap_load(struct mgr *m, unsigned int need)
{
	struct snap *s = m->snap;
	struct proc_attrs *a = &s->a;
	struct pstatus ps;

	a->loaded |= need;
	switch (need) {
	case NEED_EXE:
		if (procfs_read_exe(s->pfd, s->exe, sizeof(s->exe)) == 0)
			a->exe = s->exe;
		break;
	case NEED_CMDLINE:
		if (procfs_read_cmdline(&s->plug, s->pfd, s->cmdline,
					sizeof(s->cmdline)) == 0)
			a->cmdline = s->cmdline;
		break;
	case NEED_CGROUP:
		if (procfs_read_cgroup(&s->plug, s->pfd, s->cgroup,
				       sizeof(s->cgroup)) == 0)
			a->cgroup = s->cgroup;
		break;
	case NEED_UID:
		/* The whole status: an adoption takes the hard mask from it. */
		if (mgr_read_pstatus(s, s->pfd, &ps) == 0) {
			a->uid = ps.uid;
			a->has_uid = true;
		}
		break;
	}
}

/* FNV-1a, an attribute at a time: 1 and its bytes, or 0: unreadable. */
static uint64_t digest_add(uint64_t sum, const char *v)
{
	sum = (sum ^ (v ? 1 : 0)) * 0x100000001b3ULL;
	for (; v && *v; v++)
		sum = (sum ^ (unsigned char)*v) * 0x100000001b3ULL;
	return sum;
}

static struct attr_digest digest(unsigned int read, const char *cmdline,
				 const char *cgroup)
{
	struct attr_digest d = {.sum = 0xcbf29ce484222325ULL,
				.read = read & (NEED_CMDLINE | NEED_CGROUP)};

	if (d.read & NEED_CMDLINE)
		d.sum = digest_add(d.sum, cmdline);
	if (d.read & NEED_CGROUP)
		d.sum = digest_add(d.sum, cgroup);
	return d;
}

struct attr_digest mgr_snap_digest(const struct snap *s)
{
	return digest(s->a.loaded, s->a.cmdline, s->a.cgroup);
}

int mgr_read_digest(int procfd, int pid, unsigned int read,
		    struct snap *scratch, struct attr_digest *ret)
{
	const char *cmdline = NULL, *cgroup = NULL;
	char path[32];
	int r;

	if (read & NEED_CMDLINE) {
		snprintf(path, sizeof(path), "%d/cmdline", pid);
		r = procfs_read_cmdline_at(NULL, procfd, path, scratch->cmdline,
					   sizeof(scratch->cmdline));
		if (r < 0)
			return r;
		cmdline = scratch->cmdline;
	}
	if (read & NEED_CGROUP) {
		snprintf(path, sizeof(path), "%d/cgroup", pid);
		r = procfs_read_cgroup_at(NULL, procfd, path, scratch->cgroup,
					  sizeof(scratch->cgroup));
		if (r < 0)
			return r;
		cgroup = scratch->cgroup;
	}
	*ret = digest(read, cmdline, cgroup);
	return 0;
}
