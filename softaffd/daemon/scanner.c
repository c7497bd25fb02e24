// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <stdint.h>

#include "scanner.h"
#include "util.h"

int scanner_start(struct scanner *s, const char *proc)
{
	scanner_abort(s);
	s->dir = opendir(proc);
	return s->dir ? 0 : -errno;
}

int scanner_next(struct scanner *s, int *ret_pid)
{
	struct dirent *de;

	if (!s->dir)
		return 0;
	while ((de = readdir(s->dir))) {
		uint64_t pid;

		if (parse_u64(de->d_name, &pid) < 0 || !pid || pid > INT32_MAX)
			continue;
		*ret_pid = (int)pid;
		return 1;
	}
	scanner_abort(s);
	return 0;
}

bool scanner_busy(const struct scanner *s)
{
	return s->dir != NULL;
}

int scanner_dirfd(const struct scanner *s)
{
	return s->dir ? dirfd(s->dir) : -EBADF;
}

void scanner_abort(struct scanner *s)
{
	if (s->dir)
		closedir(s->dir);
	s->dir = NULL;
}
