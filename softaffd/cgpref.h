/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CGPREF_H
#define SOFTAFF_CGPREF_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "cpuset.h"

/*
 * A cgroup's own soft affinity: cpuset.cpus.preferred (empty: none of
 * its own) and cpuset.cpus.preferred.ratio ("default": none of its own,
 * {0, 0} here).  The files exist only where the cpuset controller is
 * enabled, i.e. in the parent's cgroup.subtree_control.
 */
struct cgpref {
	bool has_mask;
	struct cpuset mask;
	struct ratio ratio;
};

/* Pure parsers of the two files' contents: 0 or -EBADMSG. */
int cgpref_parse_mask(const char *buf, bool *ret_has, struct cpuset *ret);
int cgpref_parse_ratio(const char *buf, struct ratio *ret);

/*
 * cg is a cgroup v2 path ("/system.slice/x.service") under
 * <sys>/fs/cgroup.  -ENOENT when the cgroup or its cpuset files are
 * missing (no cpuset controller there, or a kernel without the files).
 */
int cgpref_read(const char *sys, const char *cg, struct cgpref *ret);
/*
 * Write one file through aff_write (the tests' seam): the mask (NULL
 * clears it, an empty line) or the ratio (NULL: "default").  The kernel
 * takes a value whole or not at all.  0 or -errno.
 */
int cgpref_write_mask(const char *sys, const char *cg,
		      const struct cpuset *mask);
int cgpref_write_ratio(const char *sys, const char *cg,
		       const struct ratio *ratio);

#endif
