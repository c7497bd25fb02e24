/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SCANNER_H
#define SOFTAFF_SCANNER_H

#include <stdbool.h>

/*
 * A walk over the pids of <proc> that can stop at any entry and go on
 * later, so that a scan of a large /proc runs a slice per loop turn.
 */
struct scanner {
	void *dir; /* DIR *, NULL when no walk is in progress */
};

/* Start a walk, abandoning one in progress.  0 or -errno. */
int scanner_start(struct scanner *s, const char *proc);
/* The next pid: 1, or 0 when the walk is over (then it is closed). */
int scanner_next(struct scanner *s, int *ret_pid);
bool scanner_busy(const struct scanner *s);
/* The descriptor of <proc> during a walk, for reads relative to it. */
int scanner_dirfd(const struct scanner *s);
void scanner_abort(struct scanner *s);

#endif
