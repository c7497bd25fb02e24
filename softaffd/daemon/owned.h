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
 * nhand counts the hand-set threads; whether the process counts as
 * hand-managed is the manager's to say (managed_hand(): its process
 * level may be hand-set too), which it notes around each change.
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
void owned_remember(struct owned *o, int tid, bool hand);
void owned_forget(struct owned *o, int tid);
void owned_clear(struct owned *o);
/* Forget the threads we set, keep the hand-set ones. */
void owned_keep_hand(struct owned *o);
/* Forget the threads that are not in tids (sorted): they have exited. */
void owned_prune(struct owned *o, const int *tids, size_t n);

#endif
