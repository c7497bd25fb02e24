// SPDX-License-Identifier: GPL-2.0-or-later
#include <fnmatch.h>
#include <string.h>

#include "rules.h"

bool cgroup_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n == 1 && prefix[0] == '/')
		return path[0] == '/';
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

bool rule_matches(const struct rule *r, const struct proc_attrs *a)
{
	if (r->comm && (!a->comm || fnmatch(r->comm, a->comm, 0)))
		return false;
	/* No FNM_PATHNAME: "*" in an exe pattern may span directories. */
	if (r->exe && (!a->exe || fnmatch(r->exe, a->exe, 0)))
		return false;
	if (r->has_uid && (!a->has_uid || a->uid != r->uid))
		return false;
	if (r->cgroup &&
	    (!a->cgroup || !cgroup_has_prefix(a->cgroup, r->cgroup)))
		return false;
	/* The regex is the expensive test, so it goes last. */
	if (r->has_re &&
	    (!a->cmdline || regexec(&r->cmdline_re, a->cmdline, 0, NULL, 0)))
		return false;
	return true;
}

int rules_match(const struct config *c, const struct proc_attrs *a)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		if (rule_matches(&c->rules[i], a))
			return (int)i;
	return -1;
}
