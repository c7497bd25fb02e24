// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "cgmark.h"
#include "procfs.h"
#include "util.h"

int cgmark_read(const char *sys, const char *cg, char *id, size_t size)
{
	char path[PATH_MAX], raw[CGMARK_ID_MAX];
	ssize_t n;

	if (cgroup_file_path(path, sizeof(path), sys, cg, "") < 0)
		return 0;
	n = lgetxattr(path, CGMARK_XATTR, raw, sizeof(raw) - 1);
	if (n < 0 && errno == ERANGE) {
		snprintf(id, size, "(longer than %d bytes)", CGMARK_ID_MAX - 1);
		return 1;
	}
	/*
	 * ENODATA: not marked; ENOENT: the cgroup is gone; ENOTSUP: a file
	 * system without user xattrs, where no hook could mark it either.
	 */
	if (n < 0)
		return 0;
	raw[n] = '\0';
	procfs_escape(n ? raw : "?", id, size);
	return 1;
}

int cgmark_save(int dfd, struct cgmark_saved *ret)
{
	ssize_t n;

	*ret = (struct cgmark_saved){.xattrs = true};
	n = fgetxattr(dfd, CGMARK_XATTR, NULL, 0);
	if (n < 0 && (errno == ENOTSUP || errno == ENODATA)) {
		ret->xattrs = errno != ENOTSUP;
		return 0;
	}
	if (n >= 0) {
		ret->mark = malloc((size_t)n + 1);
		if (!ret->mark)
			return -ENOMEM;
		n = fgetxattr(dfd, CGMARK_XATTR, ret->mark, (size_t)n);
		ret->len = (size_t)(n < 0 ? 0 : n);
	}
	return n < 0 ? -errno : 0;
}

int cgmark_set(int dfd, const char *id)
{
	return fsetxattr(dfd, CGMARK_XATTR, id, strlen(id), 0) < 0 ? -errno : 0;
}

int cgmark_restore(int dfd, const struct cgmark_saved *s)
{
	int r;

	if (s->mark)
		r = fsetxattr(dfd, CGMARK_XATTR, s->mark, s->len, 0);
	else
		r = fremovexattr(dfd, CGMARK_XATTR);
	return r < 0 ? -errno : 0;
}
