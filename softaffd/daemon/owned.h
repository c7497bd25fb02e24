/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_OWNED_H
#define SOFTAFF_OWNED_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Which threads of one managed process softaffd has met, and whose mask
 * they carry.  A thread is "ours" while it has the mask we set; one that
 * someone else changed is hand-set and left alone until the process
 * execs or the admin asks for re-adoption.  Pure bookkeeping: no /proc.
 *
 * The functions that can change whether the process has any hand-set
 * thread return +1 (it now has), -1 (it no longer has) or 0, so that
 * the caller can keep a count of such processes.
 */
struct mthread {
	int tid;
	bool hand; /* someone else set its mask: left alone */
};

struct owned {
	struct mthread *threads; /* sorted by tid */
	unsigned int nthreads, cap, nhand;
};

struct mthread *owned_find(const struct owned *o, int tid);
/* Remember tid as ours or hand-set.  A failed allocation forgets it. */
int owned_remember(struct owned *o, int tid, bool hand);
int owned_forget(struct owned *o, int tid);
int owned_clear(struct owned *o);
/* Forget the threads we set, keep the hand-set ones. */
void owned_keep_hand(struct owned *o);
/* Forget the threads that are not in tids (sorted): they have exited. */
int owned_prune(struct owned *o, const int *tids, size_t n);

#endif
