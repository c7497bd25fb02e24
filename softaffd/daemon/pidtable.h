/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_PIDTABLE_H
#define SOFTAFF_PIDTABLE_H

#include <stddef.h>

/* Chain link of a pid hash table; first member of what a table holds. */
struct pidnode {
	struct pidnode *next;
	int pid;
};

/* A hash table of pids that grows and shrinks by powers of two. */
struct pidtable {
	struct pidnode **buckets;
	size_t nbuckets, count;
};

int pidtable_init(struct pidtable *t);
/* Frees the buckets, not the nodes. */
void pidtable_done(struct pidtable *t);
struct pidnode *pidtable_lookup(const struct pidtable *t, int pid);
void pidtable_add(struct pidtable *t, struct pidnode *n);
void pidtable_del(struct pidtable *t, struct pidnode *n);
/* Empty the table, calling free() on every node. */
void pidtable_clear(struct pidtable *t);
/* Give back buckets after many deletions; not while walking the table. */
void pidtable_shrink(struct pidtable *t);

/* Safe against deleting n (not others) from inside the walk. */
#define pidtable_for_each(t, n, next)                 \
	for (size_t _i = 0; _i < (t)->nbuckets; _i++) \
		for (n = (t)->buckets[_i]; n && ((next = n->next), 1); n = next)

#endif
