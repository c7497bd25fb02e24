// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which cgroups softaff-oci-hook marked as a container's, read through
 * <sys>/fs/cgroup and remembered per cgroup level (container.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "container.h"
#include "procfs.h"
#include "util.h"

#define TTL_NS ((uint64_t)CONTAINER_TTL_MS * 1000000)

/* One cgroup's answer, and the rules that left a process alone there. */
struct container_level {
	char *path;
	bool marked;
	char *id; /* escaped; NULL if not marked (or no memory for it) */
	uint64_t read_ns;
	bool any_left;
	uint32_t left[CONFIG_MAX_RULES / 32];
};

static void level_free(struct container_level *l)
{
	free(l->path);
	free(l->id);
	free(l);
}

static bool level_left(const struct container_level *l, unsigned int rule)
{
	return l->left[rule / 32] & (1u << (rule % 32));
}

static bool level_fresh(const struct container_level *l, uint64_t now,
			uint64_t since)
{
	return l->read_ns >= since && now < l->read_ns + TTL_NS;
}

/* The index of path in c, or where it would go (*found false). */
static size_t level_index(const struct container_cache *c, const char *path,
			  bool *found)
{
	size_t lo = 0, hi = c->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c->v[mid]->path, path);

		if (!d) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Read l's mark again, its id into id; unmarked, it keeps no rules. */
static bool level_read(struct container_cache *c, struct container_level *l,
		       const char *sys, uint64_t now, char *id)
{
	c->reads++;
	l->marked = cgmark_read(sys, l->path, id, CONTAINER_ID_BUFSZ);
	free(l->id);
	l->id = l->marked ? strdup(id) : NULL;
	l->read_ns = now;
	if (!l->marked) {
		memset(l->left, 0, sizeof(l->left));
		l->any_left = false;
	}
	return l->marked;
}

/*
 * Keep the levels read within the TTL and those with rules noted; with
 * reread, the latter are read again, and dropped when no longer marked.
 */
static void prune(struct container_cache *c, const char *sys, uint64_t now,
		  bool reread)
{
	char id[CONTAINER_ID_BUFSZ];
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct container_level *l = c->v[i];
		bool keep = level_fresh(l, now, 0) || l->any_left;

		if (keep && !level_fresh(l, now, 0) && reread)
			keep = level_read(c, l, sys, now, id);
		if (keep)
			c->v[k++] = l;
		else
			level_free(l);
	}
	c->n = k;
}

/* A new level at index at, or NULL (full, or no memory): then not kept. */
static struct container_level *level_add(struct container_cache *c,
					 const char *sys, const char *path,
					 uint64_t now, size_t at)
{
	struct container_level *l;

	if (c->n == CONTAINER_CACHE_MAX) {
		prune(c, sys, now, false);
		if (c->n == CONTAINER_CACHE_MAX)
			return NULL;
		at = level_index(c, path, &(bool){false});
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct container_level **v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(path))) {
		free(l);
		return NULL;
	}
	memmove(&c->v[at + 1], &c->v[at], (c->n - at) * sizeof(*c->v));
	c->v[at] = l;
	c->n++;
	return l;
}

/* One level's mark, its id into id: remembered, or read now. */
static bool level_get(struct container_cache *c, const char *sys,
		      const char *path, uint64_t now, uint64_t since, char *id)
{
	bool found;
	size_t at = level_index(c, path, &found);
	struct container_level *l = found ? c->v[at] : NULL;

	if (l && level_fresh(l, now, since)) {
		snprintf(id, CONTAINER_ID_BUFSZ, "%s", l->id ? l->id : "?");
		return l->marked;
	}
	if (!l)
		l = level_add(c, sys, path, now, at);
	if (l)
		return level_read(c, l, sys, now, id);
	c->reads++;
	return cgmark_read(sys, path, id, CONTAINER_ID_BUFSZ);
}

bool container_find(struct container_cache *c, const char *sys, const char *cg,
		    uint64_t now_ns, uint64_t since_ns,
		    struct container_mark *ret)
{
	char path[PATH_MAX];
	size_t n = strlen(cg);

	if (n >= sizeof(path))
		return false;
	memcpy(path, cg, n + 1);
	/* Nearest first: a container's processes are mostly in its own. */
	for (;;) {
		while (n > 1 && path[n - 1] == '/')
			n--;
		if (n <= 1)
			return false; /* the root is nobody's container */
		path[n] = '\0';
		if (level_get(c, sys, path, now_ns, since_ns, ret->id)) {
			ret->cglen = n;
			return true;
		}
		while (n > 0 && path[n - 1] != '/')
			n--;
	}
}

bool container_note_left(struct container_cache *c, const char *cg,
			 size_t cglen, unsigned int rule)
{
	char path[PATH_MAX];
	struct container_level *l;
	bool found, first;
	size_t at;

	if (cglen >= sizeof(path) || rule >= CONFIG_MAX_RULES)
		return false;
	memcpy(path, cg, cglen);
	path[cglen] = '\0';
	at = level_index(c, path, &found);
	if (!found || !c->v[at]->marked)
		return false; /* not kept (the cache is full) */
	l = c->v[at];
	first = !level_left(l, rule);
	l->left[rule / 32] |= 1u << (rule % 32);
	l->any_left = true;
	return first;
}

void container_forget_left(struct container_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		memset(c->v[i]->left, 0, sizeof(c->v[i]->left));
		c->v[i]->any_left = false;
	}
}

void container_sweep(struct container_cache *c, const char *sys,
		     uint64_t now_ns)
{
	prune(c, sys, now_ns, true);
	if (!c->n) {
		free(c->v);
		c->v = NULL;
		c->cap = 0;
	}
}

int container_list_left(const struct container_cache *c,
			struct container_left **ret)
{
	struct container_left *v;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < c->n; i++)
		for (unsigned int r = 0;
		     c->v[i]->any_left && r < CONFIG_MAX_RULES; r++)
			n += level_left(c->v[i], r);
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		const struct container_level *l = c->v[i];

		for (unsigned int r = 0; l->any_left && r < CONFIG_MAX_RULES;
		     r++)
			if (level_left(l, r))
				v[k++] = (struct container_left){
					r, l->id ? l->id : "?", l->path};
	}
	*ret = v;
	return (int)k;
}

void container_cache_free(struct container_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		level_free(c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
}
