// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a rule's tasks may go, for its room outside (L5): the
 * cpuset.cpus.effective of the cgroups its processes were in when last
 * evaluated, read again at each step of its softness.  That is the
 * confinement an administrator sets (a unit's AllowedCPUs=, a
 * container's cpuset), and a CPU outside it is no room: a unit confined
 * to node 0 would soften towards an idle node 1 it cannot reach and,
 * still waiting, never harden.
 *
 * A task's own sched_setaffinity mask does not narrow the room.  It
 * changes without an event, so a mask kept from the adoption goes stale
 * (the first attempt, d9b46dc, kept it); and a task pinned home by its
 * owner (taskset, as 71-softaffd-softness's hogs are) waits as an
 * unpinned one would.  The law answers that as before L5: the kernel
 * applies a ratio within the hard mask, so softening moves none of
 * them until the pin goes, and the rule hardens again once others take
 * the room outside.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "manager-internal.h"

void mgr_room_note(struct mgr_room *room, const char *cg)
{
	/* Unreadable: the process is gone, nothing to count. */
	if (!cg || room->unknown)
		return;
	for (unsigned int i = 0; i < room->n; i++)
		if (!strcmp(room->cg[i].path, cg))
			return;
	if (room->n == MGR_ROOM_CGROUPS || strlen(cg) >= MGR_ROOM_PATH) {
		room->unknown = true;
		return;
	}
	snprintf(room->cg[room->n].path, MGR_ROOM_PATH, "%s", cg);
	room->cg[room->n++].cut = 0;
}

void mgr_room_merge(struct mgr_room *to, const struct mgr_room *from)
{
	if (from->unknown)
		to->unknown = true;
	for (unsigned int i = 0; i < from->n; i++)
		mgr_room_note(to, from->cg[i].path);
}

/*
 * cpuset.cpus.effective of the cgroup that is the first len bytes of cg
 * (0: the root).  0, or -errno (-ENOENT: no such file at that level).
 */
static int read_effective(const char *sys, const char *cg, size_t len,
			  struct cpuset *ret)
{
	char dir[MGR_ROOM_PATH], path[PATH_MAX], buf[CPUSET_LIST_BUFSZ];
	ssize_t n;
	int r;

	snprintf(dir, sizeof(dir), "%.*s", (int)len, cg);
	r = cgroup_file_path(path, sizeof(path), sys, len ? dir : "/",
			     "cpuset.cpus.effective");
	if (r < 0)
		return r;
	n = read_record_at(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (cpuset_parse_list(buf, ret) < 0 || cpuset_empty(ret))
		return -EBADMSG;
	return 0;
}

static bool cgroup_exists(const char *sys, const char *cg)
{
	char path[PATH_MAX];

	return cgroup_file_path(path, sizeof(path), sys, cg, "") == 0 &&
	       access(path, F_OK) == 0;
}

/*
 * The effective CPUs of entry i: the cpuset controller is enabled down
 * to some level of its path (a unit with AllowedCPUs=, its slices), and
 * the nearest level up that has the file says what holds below it.  The
 * level found is kept, one read a step.  -ESRCH: the cgroup is gone.
 */
static int room_cpus(const char *sys, struct mgr_room *room, unsigned int i,
		     struct cpuset *ret)
{
	const char *cg = room->cg[i].path;
	size_t leaf = strcmp(cg, "/") ? strlen(cg) : 0, len = leaf;
	int r;

	if (room->cg[i].cut) {
		len = room->cg[i].cut - 1;
		/* Read above it, the file would outlive the cgroup. */
		if (len < leaf && !cgroup_exists(sys, cg))
			return -ESRCH;
		r = read_effective(sys, cg, len, ret);
		if (r != -ENOENT)
			return r;
		len = leaf; /* moved: found again from the bottom */
	}
	for (;;) {
		r = read_effective(sys, cg, len, ret);
		if (r == 0)
			room->cg[i].cut = (unsigned int)len + 1;
		if (r != -ENOENT || !len)
			return r;
		if (len == leaf && !cgroup_exists(sys, cg))
			return -ESRCH;
		do
			len--;
		while (len && cg[len] != '/');
	}
}

/* Was entry i's level read already, by an entry before it? */
static bool room_seen(const struct mgr_room *room, unsigned int i)
{
	unsigned int cut = room->cg[i].cut;

	for (unsigned int j = 0; cut && j < i; j++)
		if (room->cg[j].cut == cut &&
		    !strncmp(room->cg[j].path, room->cg[i].path, cut - 1))
			return true;
	return false;
}

bool mgr_rule_allowed(struct mgr *m, unsigned int r, struct cpuset *ret)
{
	struct mgr_room *room = &m->rules[r].room;
	bool known = !room->unknown;

	cpuset_zero(ret);
	for (unsigned int i = 0; known && i < room->n;) {
		struct cpuset eff;
		int k;

		if (room_seen(room, i)) {
			i++;
			continue;
		}
		k = room_cpus(m->roots.sys, room, i, &eff);
		if (k == -ESRCH) {
			/* A stopped unit: its slot for the next. */
			room->cg[i] = room->cg[--room->n];
			continue;
		}
		/* No cpuset controller anywhere (or no cgroup2): unknown. */
		if (k < 0)
			known = false;
		else
			cpuset_or(ret, ret, &eff);
		i++;
	}
	return known && !cpuset_empty(ret);
}
