// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidtable.h"

#define PIDTABLE_MIN_BUCKETS 256

static size_t bucket_of(const struct pidtable *t, int pid)
{
	/* Knuth's multiplicative hash; nbuckets is a power of two. */
	return ((unsigned int)pid * 2654435761u) & (t->nbuckets - 1);
}

int pidtable_init(struct pidtable *t)
{
	t->nbuckets = PIDTABLE_MIN_BUCKETS;
	t->count = 0;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

void pidtable_done(struct pidtable *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = t->count = 0;
}

struct pidnode *pidtable_lookup(const struct pidtable *t, int pid)
{
	struct pidnode *n;

	if (!t->buckets)
		return NULL;
	for (n = t->buckets[bucket_of(t, pid)]; n; n = n->next)
		if (n->pid == pid)
			return n;
	return NULL;
}

static void rehash(struct pidtable *t, size_t nb)
{
	struct pidnode **nbk = calloc(nb, sizeof(*nbk));
	struct pidnode **obk = t->buckets;
	size_t ob = t->nbuckets;

	if (!nbk)
		return; /* keep the old, longer chains */
	t->buckets = nbk;
	t->nbuckets = nb;
	for (size_t i = 0; i < ob; i++) {
		struct pidnode *n = obk[i], *next;

		for (; n; n = next) {
			size_t b = bucket_of(t, n->pid);

			next = n->next;
			n->next = nbk[b];
			nbk[b] = n;
		}
	}
	free(obk);
}

void pidtable_add(struct pidtable *t, struct pidnode *n)
{
	size_t b;

	if (t->count + 1 > t->nbuckets * 2)
		rehash(t, t->nbuckets * 2);
	b = bucket_of(t, n->pid);
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
}

void pidtable_del(struct pidtable *t, struct pidnode *n)
{
	struct pidnode **pp = &t->buckets[bucket_of(t, n->pid)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			return;
		}
	}
}

void pidtable_clear(struct pidtable *t)
{
	struct pidnode *n, *next;

	if (!t->buckets)
		return;
	pidtable_for_each (t, n, next)
		free(n);
	memset(t->buckets, 0, t->nbuckets * sizeof(*t->buckets));
	t->count = 0;
}

void pidtable_shrink(struct pidtable *t)
{
	size_t nb = t->nbuckets;

	while (nb > PIDTABLE_MIN_BUCKETS && t->count < nb / 8)
		nb /= 2;
	if (nb != t->nbuckets)
		rehash(t, nb);
}
