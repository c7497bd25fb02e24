// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
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

/*
 * systemd names a unit's cgroup after the unit and nests it in its slices
 * (a.slice/a-b.slice/x.service), so the unit is the first component
 * below the slices, as systemd's own cg_path_get_unit() has it.  A
 * delegated service's subgroups (x.service/worker) still belong to x;
 * a user's units are inside user@UID.service, which is what matches.
 */
static const char *const unit_suffixes[] = {".service", ".scope", ".socket",
					    ".mount", ".swap"};

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(s + n - k, suffix, k);
}

/* Where the unit's component starts in cgroup, and its length. */
static int unit_span(const char *cgroup, size_t *ret_at, size_t *ret_len)
{
	const char *p = cgroup;

	while (*p == '/')
		p++;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (!has_suffix(p, n, ".slice")) {
			for (size_t i = 0; i < ARRAY_SIZE(unit_suffixes); i++) {
				if (!has_suffix(p, n, unit_suffixes[i]))
					continue;
				*ret_at = (size_t)(p - cgroup);
				*ret_len = n;
				return 0;
			}
			return -ENOENT;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return -ENOENT;
}

static int copy_out(const char *from, size_t n, char *ret, size_t size)
{
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(ret, from, n);
	ret[n] = '\0';
	return 0;
}

int rules_unit_of(const char *cgroup, char *ret, size_t size)
{
	size_t at, n;
	int r = unit_span(cgroup, &at, &n);

	return r < 0 ? r : copy_out(cgroup + at, n, ret, size);
}

int rules_unit_cgroup(const char *cgroup, char *ret, size_t size)
{
	size_t at, n;
	int r = unit_span(cgroup, &at, &n);

	return r < 0 ? r : copy_out(cgroup, at + n, ret, size);
}

int rules_cgroup_target(const struct rule *r, const char *cgroup, char *ret,
			size_t size)
{
	size_t n = r->cgroup ? strlen(r->cgroup) : 0;
	int err = -ENOENT;

	if (r->unit)
		err = rules_unit_cgroup(cgroup, ret, size);
	while (n > 1 && r->cgroup[n - 1] == '/')
		n--;
	/* Both keys match the process: the deeper cgroup is the narrower. */
	if (r->cgroup && (err < 0 || n > strlen(ret)))
		err = copy_out(r->cgroup, n, ret, size);
	return err;
}

static bool unit_ok(const struct rule *r, const char *cgroup)
{
	char unit[256];

	return rules_unit_of(cgroup, unit, sizeof(unit)) == 0 &&
	       !fnmatch(r->unit, unit, 0);
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
		return a->cgroup &&
		       (!r->cgroup || cgroup_has_prefix(a->cgroup, r->cgroup)) &&
		       (!r->unit || unit_ok(r, a->cgroup));
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

bool rules_explain(const struct rule *r, const struct proc_attrs *a, char *why,
		   size_t size)
{
	struct proc_attrs all = *a;
	char unit[256] = "";

	all.loaded = NEED_COMM | NEED_EXE | NEED_CMDLINE | NEED_UID |
		     NEED_CGROUP;
	all.regex_budget = RULES_REGEX_BUDGET;
	for (unsigned int k = 0; k < ARRAY_SIZE(key_order); k++) {
		unsigned int key = key_order[k];

		if (!(r->needs & key) || key_ok(r, &all, key) == YES)
			continue;
		switch (key) {
		case NEED_COMM:
			snprintf(why, size, "comm \"%s\" does not match \"%s\"",
				 a->comm ? a->comm : "?", r->comm);
			break;
		case NEED_UID:
			snprintf(why, size, "uid %d is not %u (user %s)",
				 a->has_uid ? (int)a->uid : -1,
				 (unsigned int)r->uid, r->user);
			break;
		case NEED_CGROUP:
			if (a->cgroup && rules_unit_of(a->cgroup, unit,
						       sizeof(unit)) < 0)
				snprintf(unit, sizeof(unit), "(none)");
			if (r->cgroup && (!a->cgroup ||
					  !cgroup_has_prefix(a->cgroup,
							     r->cgroup)))
				snprintf(why, size,
					 "cgroup %s is not under %s",
					 a->cgroup ? a->cgroup : "?",
					 r->cgroup);
			else
				snprintf(why, size,
					 "unit %s does not match \"%s\"",
					 a->cgroup ? unit : "?", r->unit);
			break;
		case NEED_EXE:
			snprintf(why, size, "exe %s does not match \"%s\"",
				 a->exe ? a->exe : "(unreadable)", r->exe);
			break;
		default:
			snprintf(why, size,
				 "command line does not match /%s/",
				 r->cmdline);
			break;
		}
		return false;
	}
	snprintf(why, size, "every key matches");
	return true;
}
