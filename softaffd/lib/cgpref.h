/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CGPREF_H
#define SOFTAFF_CGPREF_H

#include "pref.h"
#include "util.h"

/*
 * A cgroup's own request: cpuset.cpus.preferred and its .ratio, each
 * an empty line (inherit: the nearest ancestor's applies, as in a new
 * cgroup), "none" or a value.  The files exist only where the cpuset
 * controller is enabled, i.e. in the parent's cgroup.subtree_control.
 *
 * cg is a cgroup v2 path ("/system.slice/x.service") under
 * <sys>/fs/cgroup.  -ENOENT when the cgroup or its cpuset files are
 * missing (no cpuset controller there, or a kernel without the files),
 * -EBADMSG when they do not parse.  The fds go to plug p (util.h; NULL:
 * closed at once).
 */
int cgpref_read(struct fd_plug *p, const char *sys, const char *cg,
		struct pref_req *ret);
/*
 * Write one file through kfile_write (the tests' seam): the mask or the
 * ratio, "inherit" for REQ_INHERIT.  The kernel takes a value whole or
 * not at all.  0 or -errno.
 */
int cgpref_write_mask(struct fd_plug *p, const char *sys, const char *cg,
		      const struct cpureq *mask);
int cgpref_write_ratio(struct fd_plug *p, const char *sys, const char *cg,
		       const struct ratio_req *ratio);

#endif
