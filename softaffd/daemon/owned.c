// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdlib.h>
#include <string.h>

#include "owned.h"
#include "util.h"

struct mthread *owned_find(const struct owned *o, int tid)
{
	unsigned int lo = 0, hi = o->nthreads;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (o->threads[mid].tid == tid)
			return &o->threads[mid];
		if (o->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void owned_remember(struct owned *o, int tid, bool hand)
{
	struct mthread *t = owned_find(o, tid), *n;
	unsigned int i;

	if (t) {
		if (t->hand != hand)
			o->nhand = hand ? o->nhand + 1 : o->nhand - 1;
		t->hand = hand;
		return;
	}
	if (o->nthreads == o->cap) {
		unsigned int nc = o->cap ? o->cap * 2 : 4;

		n = realloc(o->threads, nc * sizeof(*n));
		if (!n)
			return; /* then it counts as new next time: no harm */
		o->threads = n;
		o->cap = nc;
	}
	n = o->threads;
	for (i = o->nthreads; i > 0 && n[i - 1].tid > tid; i--)
		n[i] = n[i - 1];
	n[i].tid = tid;
	n[i].hand = hand;
	o->nthreads++;
	o->nhand += hand;
}

void owned_forget(struct owned *o, int tid)
{
	struct mthread *t = owned_find(o, tid);
	size_t i;

	if (!t)
		return;
	o->nhand -= t->hand;
	i = (size_t)(t - o->threads);
	memmove(t, t + 1, (o->nthreads - i - 1) * sizeof(*t));
	o->nthreads--;
}

void owned_clear(struct owned *o)
{
	free(o->threads);
	memset(o, 0, sizeof(*o));
}

void owned_keep_hand(struct owned *o)
{
	unsigned int k = 0;

	for (unsigned int t = 0; t < o->nthreads; t++)
		if (o->threads[t].hand)
			o->threads[k++] = o->threads[t];
	o->nthreads = k;
}

void owned_prune(struct owned *o, const int *tids, size_t n)
{
	unsigned int kept = 0, hand = 0;

	for (unsigned int i = 0; i < o->nthreads; i++) {
		int tid = o->threads[i].tid;

		if (!bsearch(&tid, tids, n, sizeof(*tids), cmp_int))
			continue;
		hand += o->threads[i].hand;
		o->threads[kept++] = o->threads[i];
	}
	o->nthreads = kept;
	o->nhand = hand;
}
