// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>

#include "dirtyq.h"

int dirtyq_init(struct dirtyq *q)
{
	q->head = q->tail = NULL;
	return pidtable_init(&q->table);
}

void dirtyq_done(struct dirtyq *q)
{
	dirtyq_clear(q);
	pidtable_done(&q->table);
}

struct dirty *dirtyq_find(const struct dirtyq *q, int pid)
{
	return (struct dirty *)pidtable_lookup(&q->table, pid);
}

static void unlink_entry(struct dirtyq *q, struct dirty *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		q->head = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		q->tail = d->prev;
	pidtable_del(&q->table, &d->node);
	/* A drained storm leaves a big table behind: give it back. */
	if (!q->table.count)
		pidtable_shrink(&q->table);
}

int dirtyq_mark(struct dirtyq *q, int pid, unsigned int why,
		unsigned int inherit)
{
	struct dirty *d = dirtyq_find(q, pid);

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return -ENOMEM;
		d->node.pid = pid;
		pidtable_add(&q->table, &d->node);
		d->prev = q->tail;
		if (q->tail)
			q->tail->next = d;
		else
			q->head = d;
		q->tail = d;
	}
	d->why |= why;
	if (inherit)
		d->inherit = inherit;
	return 0;
}

bool dirtyq_pop(struct dirtyq *q, struct dirty *ret)
{
	struct dirty *d = q->head;

	if (!d)
		return false;
	unlink_entry(q, d);
	*ret = *d;
	ret->node.next = NULL;
	ret->prev = ret->next = NULL;
	free(d);
	return true;
}

void dirtyq_remove(struct dirtyq *q, int pid)
{
	struct dirty *d = dirtyq_find(q, pid);

	if (d) {
		unlink_entry(q, d);
		free(d);
	}
}

void dirtyq_clear(struct dirtyq *q)
{
	pidtable_clear(&q->table); /* frees the entries: node comes first */
	pidtable_shrink(&q->table);
	q->head = q->tail = NULL;
}
