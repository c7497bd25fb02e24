/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CONTAINER_H
#define SOFTAFF_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgmark.h"
#include "config.h"

/*
 * Containers whose soft affinity their annotations set.  softaff-oci-hook
 * writes the container's own cgroup's cpuset.cpus.preferred{,.ratio}
 * and marks that cgroup with the extended attribute CGMARK_XATTR,
 * whose value is the container id.  A process in a marked cgroup, or
 * below one, belongs to that container, and softaffd leaves it alone.
 *
 * Many processes share a cgroup path, so the answer for each cgroup
 * level (one getxattr) is remembered: for CONTAINER_TTL_MS, or less
 * when the caller asks for an answer read after some moment (an exec:
 * the hook marks the cgroup after the runtime's init process entered
 * it, before the container's first exec).
 */
#define CONTAINER_TTL_MS 10000
/*
 * Cgroup levels remembered at most (a few per container): past that an
 * answer is read each time rather than kept, so memory stays bounded
 * on a host with very many containers, and only the cost grows.
 */
#define CONTAINER_CACHE_MAX 4096
/* A container id, escaped (lib/cgmark.h). */
#define CONTAINER_ID_BUFSZ CGMARK_ID_BUFSZ

struct container_level;

/* The answers per cgroup level, sorted by path. */
struct container_cache {
	struct container_level **v;
	size_t n, cap;
	unsigned long reads; /* getxattr calls so far (the cost, for tests) */
};

/* What container_find() found. */
struct container_mark {
	char id[CONTAINER_ID_BUFSZ];
	size_t cglen; /* the marked cgroup: the first cglen bytes of cg */
};

/* A container in which rule would have matched a process, for --status. */
struct container_left {
	unsigned int rule;
	const char *id, *cgroup;
};

/*
 * Is cg or an ancestor of it below the root marked?  The nearest marked
 * one into ret.  Each level's answer is read at most once per
 * CONTAINER_TTL_MS, and again if it was read before since_ns (0: any
 * age within the TTL); now_ns is monotonic_ns().
 */
bool container_find(struct container_cache *c, const char *sys, const char *cg,
		    uint64_t now_ns, uint64_t since_ns,
		    struct container_mark *ret);
/*
 * Remember that rule would have matched a process of the container
 * whose cgroup is the first cglen bytes of cg (as found just before).
 * True the first time for this container and rule.
 */
bool container_note_left(struct container_cache *c, const char *cg,
			 size_t cglen, unsigned int rule);
/* Forget every rule noted (a reload renumbers them). */
void container_forget_left(struct container_cache *c);
/*
 * Drop answers older than CONTAINER_TTL_MS; a container with rules
 * noted is read again instead, and dropped once its cgroup is gone.
 */
void container_sweep(struct container_cache *c, const char *sys,
		     uint64_t now_ns);
/*
 * The noted (container, rule) pairs, by cgroup path then rule, into
 * *ret (valid until the cache next changes; free() it).  Count or
 * -ENOMEM.
 */
int container_list_left(const struct container_cache *c,
			struct container_left **ret);
void container_cache_free(struct container_cache *c);

#endif
