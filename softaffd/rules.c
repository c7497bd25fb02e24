// SPDX-License-Identifier: GPL-2.0-or-later
#include <fnmatch.h>
#include <string.h>

#include "rules.h"
#include "util.h"

bool cgroup_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n == 1 && prefix[0] == '/')
		return path[0] == '/';
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

enum { NO = 0, YES = 1, NEED = 2 };

/* Is key (a NEED_* bit) of r satisfied?  NEED if not loaded yet. */
static int key_ok(const struct rule *r, struct proc_attrs *a,
		  unsigned int key)
{
	if (!(r->needs & key))
		return YES;
	if (!(a->loaded & key))
		return NEED;
	switch (key) {
	case NEED_COMM:
		return a->comm && !fnmatch(r->comm, a->comm, 0);
	case NEED_UID:
		return a->has_uid && a->uid == r->uid;
	case NEED_CGROUP:
		return a->cgroup && cgroup_has_prefix(a->cgroup, r->cgroup);
	case NEED_EXE:
		/* No FNM_PATHNAME: "*" in an exe pattern may span directories. */
		return a->exe && !fnmatch(r->exe, a->exe, 0);
	case NEED_CMDLINE: {
		uint64_t work;

		if (!a->cmdline)
			return NO;
		work = (uint64_t)r->re_cost * (strlen(a->cmdline) + 1);
		if (work > a->regex_budget) {
			a->regex_skipped++;
			return NO;
		}
		a->regex_budget -= work;
		return !regexec(&r->cmdline_re, a->cmdline, 0, NULL, 0);
	}
	}
	return NO;
}

/* Cheapest first; the regex, the expensive test, last. */
static const unsigned int key_order[] = {NEED_COMM, NEED_UID, NEED_CGROUP,
					 NEED_EXE, NEED_CMDLINE};

int rules_match_from(const struct config *c, struct proc_attrs *a,
		     unsigned int from, unsigned int *ret_at,
		     unsigned int *ret_need)
{
	for (unsigned int i = from; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];
		int res = YES;

		for (unsigned int k = 0; k < ARRAY_SIZE(key_order) && res == YES;
		     k++)
			res = key_ok(r, a, key_order[k]);
		if (res == YES)
			return (int)i;
		if (res == NEED) {
			for (unsigned int k = 0; k < ARRAY_SIZE(key_order); k++)
				if ((r->needs & key_order[k]) &&
				    !(a->loaded & key_order[k])) {
					*ret_need = key_order[k];
					break;
				}
			*ret_at = i;
			return RULES_NEED;
		}
	}
	return RULES_NONE;
}

int rules_match(const struct config *c, const struct proc_attrs *a)
{
	struct proc_attrs all = *a;
	unsigned int at, need;

	all.loaded = NEED_COMM | NEED_EXE | NEED_CMDLINE | NEED_UID |
		     NEED_CGROUP;
	all.regex_budget = RULES_REGEX_BUDGET;
	return rules_match_from(c, &all, 0, &at, &need);
}
