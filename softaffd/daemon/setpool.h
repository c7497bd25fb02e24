/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SETPOOL_H
#define SOFTAFF_SETPOOL_H

#include <stddef.h>

#include "cpuset.h"
#include "pref.h"

/*
 * Interned, refcounted CPU sets: one copy of each distinct set, shared
 * by every record that holds it.  A struct cpuset is 1 KiB (CPUSET_MAX
 * is 8192), while the sets a daemon keeps per process are a handful (the
 * rules' targets, the requests found before adoption): 50,000 managed
 * processes each holding two sets by value would cost 100 MiB, holding
 * two pointers costs 800 KiB.  Pure bookkeeping: no /proc.
 */
struct setpool_entry;

struct setpool {
	struct setpool_entry **buckets;
	size_t nbuckets, count;
};

/*
 * The pool's copy of s, with one more reference; NULL: out of memory.
 * What it returns is read-only and lives until its last setpool_put().
 */
const struct cpuset *setpool_get(struct setpool *p, const struct cpuset *s);
/* One more reference to a set setpool_get() returned; NULL passes. */
const struct cpuset *setpool_ref(const struct cpuset *s);
/* One reference less; the set is freed with the last.  NULL passes. */
void setpool_put(struct setpool *p, const struct cpuset *s);
/* Frees every set, referenced or not, and the buckets. */
void setpool_done(struct setpool *p);

/* A level's mask request (struct cpureq) with its CPUs interned. */
struct cpureq_ref {
	enum req_state state;
	const struct cpuset *cpus; /* REQ_SET only, else NULL */
};

/* Intern r into *ret, whose old value is put.  0 or -ENOMEM (unchanged). */
int setpool_req_set(struct setpool *p, struct cpureq_ref *ret,
		    const struct cpureq *r);
/* *ret now refers to set s (NULL: none), the old one put. 0 or -ENOMEM. */
int setpool_assign(struct setpool *p, const struct cpuset **ret,
		   const struct cpuset *s);
/* The request a ref stands for, by value (for writes and logs). */
struct cpureq cpureq_of_ref(const struct cpureq_ref *r);
/* Is r the request ref stands for? */
bool cpureq_is_ref(const struct cpureq *r, const struct cpureq_ref *ref);

/* A level's mask and ratio request (struct pref_req), its CPUs interned. */
struct pref_ref {
	struct cpureq_ref cpus;
	struct ratio_req ratio;
};

/* As setpool_req_set(), for both parts.  0 or -ENOMEM (unchanged). */
int setpool_pref_set(struct setpool *p, struct pref_ref *ret,
		     const struct pref_req *r);
struct pref_req pref_of_ref(const struct pref_ref *r);
bool pref_is_ref(const struct pref_req *r, const struct pref_ref *ref);

#endif
