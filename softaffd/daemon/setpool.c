// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The interned CPU sets (setpool.h): a hash table of refcounted copies,
 * grown by powers of two as pidtable.c is.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "setpool.h"

struct setpool_entry {
	struct setpool_entry *next;
	uint64_t hash;
	unsigned long refs;
	struct cpuset set;
};

#define SETPOOL_MIN_BUCKETS 16

static struct setpool_entry *entry_of(const struct cpuset *s)
{
	return (struct setpool_entry *)((const char *)s -
					offsetof(struct setpool_entry, set));
}

/*
 * Zero words add nothing (the sets met are mostly low CPUs of a
 * 128-word set); a word's position is mixed in, so that the same word
 * elsewhere hashes elsewhere.
 */
static uint64_t hash_set(const struct cpuset *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < CPUSET_WORDS; i++)
		if (s->w[i]) {
			h ^= s->w[i] + (uint64_t)i * 0x9e3779b97f4a7c15ULL;
			h *= 0x100000001b3ULL;
			h ^= h >> 29;
		}
	return h;
}

static int grow(struct setpool *p)
{
	size_t n = p->nbuckets ? p->nbuckets * 2 : SETPOOL_MIN_BUCKETS;
	struct setpool_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < p->nbuckets; i++) {
		struct setpool_entry *e = p->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(p->buckets);
	p->buckets = b;
	p->nbuckets = n;
	return 0;
}

const struct cpuset *setpool_get(struct setpool *p, const struct cpuset *s)
{
	uint64_t h = hash_set(s);
	struct setpool_entry *e;

	if (p->nbuckets)
		for (e = p->buckets[h & (p->nbuckets - 1)]; e; e = e->next)
			if (e->hash == h && cpuset_equal(&e->set, s)) {
				e->refs++;
				return &e->set;
			}
	if (p->count >= p->nbuckets && grow(p) < 0 && !p->nbuckets)
		return NULL;
	e = malloc(sizeof(*e));
	if (!e)
		return NULL;
	e->hash = h;
	e->refs = 1;
	e->set = *s;
	e->next = p->buckets[h & (p->nbuckets - 1)];
	p->buckets[h & (p->nbuckets - 1)] = e;
	p->count++;
	return &e->set;
}

const struct cpuset *setpool_ref(const struct cpuset *s)
{
	if (s)
		entry_of(s)->refs++;
	return s;
}

void setpool_put(struct setpool *p, const struct cpuset *s)
{
	struct setpool_entry *e, **pp;

	if (!s || --entry_of(s)->refs)
		return;
	e = entry_of(s);
	for (pp = &p->buckets[e->hash & (p->nbuckets - 1)]; *pp;
	     pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			p->count--;
			free(e);
			return;
		}
}

void setpool_done(struct setpool *p)
{
	for (size_t i = 0; i < p->nbuckets; i++) {
		struct setpool_entry *e = p->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(p->buckets);
	memset(p, 0, sizeof(*p));
}

int setpool_assign(struct setpool *p, const struct cpuset **ret,
		   const struct cpuset *s)
{
	const struct cpuset *n = NULL;

	if (*ret && s && (*ret == s || cpuset_equal(*ret, s)))
		return 0;
	if (s) {
		n = setpool_get(p, s);
		if (!n)
			return -ENOMEM;
	}
	setpool_put(p, *ret);
	*ret = n;
	return 0;
}

int setpool_req_set(struct setpool *p, struct cpureq_ref *ret,
		    const struct cpureq *r)
{
	const struct cpuset *cpus = ret->cpus;
	int e;

	e = setpool_assign(p, &cpus, r->state == REQ_SET ? &r->cpus : NULL);
	if (e < 0)
		return e;
	ret->state = r->state;
	ret->cpus = cpus;
	return 0;
}

struct cpureq cpureq_of_ref(const struct cpureq_ref *r)
{
	struct cpureq q = {.state = r->state};

	if (r->state == REQ_SET && r->cpus)
		q.cpus = *r->cpus;
	else
		cpuset_zero(&q.cpus);
	return q;
}

bool cpureq_is_ref(const struct cpureq *r, const struct cpureq_ref *ref)
{
	if (r->state != ref->state)
		return false;
	return r->state != REQ_SET ||
	       (ref->cpus && cpuset_equal(&r->cpus, ref->cpus));
}

int setpool_pref_set(struct setpool *p, struct pref_ref *ret,
		     const struct pref_req *r)
{
	int e = setpool_req_set(p, &ret->cpus, &r->cpus);

	if (e < 0)
		return e;
	ret->ratio = r->ratio;
	return 0;
}

struct pref_req pref_of_ref(const struct pref_ref *r)
{
	return (struct pref_req){cpureq_of_ref(&r->cpus), r->ratio};
}

bool pref_is_ref(const struct pref_req *r, const struct pref_ref *ref)
{
	return cpureq_is_ref(&r->cpus, &ref->cpus) &&
	       ratio_req_equal(&r->ratio, &ref->ratio);
}
