/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CGMARK_H
#define SOFTAFF_CGMARK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The container mark: softaff-oci-hook sets the extended attribute
 * CGMARK_XATTR on the container's own cgroup when it writes its
 * preference, with the container id as its value; softaffd reads it and
 * leaves the processes of a marked cgroup (or one below it) alone.  The
 * name and both sides live here, so that neither program includes the
 * other's model.
 */
#define CGMARK_XATTR "user.softaff.oci"
/* A container id, escaped as procfs_escape() does (runc's: 64 hex). */
#define CGMARK_ID_MAX	256
#define CGMARK_ID_BUFSZ (4 * CGMARK_ID_MAX + 1)

/*
 * The mark of one cgroup (a path as in /proc/PID/cgroup) under
 * <sys>/fs/cgroup: 1 and its id into id (escaped), or 0: none (no
 * attribute, no such cgroup, or a file system without user xattrs).
 */
int cgmark_read(const char *sys, const char *cg, char *id, size_t size);

/* What a cgroup's mark was before the hook set it, to put it back. */
struct cgmark_saved {
	bool xattrs; /* the file system has user xattrs */
	char *mark;  /* the old value, NULL: none */
	size_t len;
};

/* Save the mark of the cgroup at dfd.  0 or -errno (ret->mark: free()). */
int cgmark_save(int dfd, struct cgmark_saved *ret);
/* Mark the cgroup at dfd with id.  0 or -errno. */
int cgmark_set(int dfd, const char *id);
/* Put back what cgmark_save() found: the old value, or none.  0 or -errno. */
int cgmark_restore(int dfd, const struct cgmark_saved *s);

#endif
