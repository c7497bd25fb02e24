/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_DIRTYQ_H
#define SOFTAFF_DIRTYQ_H

#include <stdbool.h>
#include <stddef.h>

#include "pidtable.h"

/*
 * The processes events marked for evaluation, drained oldest first.
 *
 * First in, first out, because the drain has a budget: under an event
 * storm that outpaces it, a drain that started over from the same place
 * each time (the table's bucket order) would meet the storm's pids again
 * and again and never reach some others.  In a queue, a pid drained goes
 * to the back when it is marked again, so one that was waiting when a
 * drain of k per turn began is reached within ceil(waiting / k) turns,
 * however fast new marks come.
 *
 * A pid is in the queue once: marking it again while it waits only adds
 * to why it waits and keeps its place (the table finds it), so a storm
 * of events about one process costs one entry and one evaluation.
 * Every operation is O(1).
 */
struct dirty {
	struct pidnode node;	   /* in the table; first member */
	struct dirty *prev, *next; /* in the queue, towards the back */
	unsigned int why;	   /* the manager's D_* bits, or-ed */
	unsigned int inherit;	   /* the manager's; the last non-zero wins */
};

struct dirtyq {
	struct pidtable table;	   /* struct dirty, by pid */
	struct dirty *head, *tail; /* oldest, newest */
};

int dirtyq_init(struct dirtyq *q);
/* Empty the queue and free the table. */
void dirtyq_done(struct dirtyq *q);
/*
 * Queue pid at the back, or add why to its entry where it already
 * waits.  0, or -ENOMEM (nothing queued: the caller does it now).
 */
int dirtyq_mark(struct dirtyq *q, int pid, unsigned int why,
		unsigned int inherit);
/* Take the oldest entry out into *ret; false if the queue is empty. */
bool dirtyq_pop(struct dirtyq *q, struct dirty *ret);
/* Take pid out wherever it waits (it exited); no-op if not queued. */
void dirtyq_remove(struct dirtyq *q, int pid);
void dirtyq_clear(struct dirtyq *q);
struct dirty *dirtyq_find(const struct dirtyq *q, int pid);

static inline size_t dirtyq_count(const struct dirtyq *q)
{
	return q->table.count;
}

#endif
