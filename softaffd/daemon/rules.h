/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_RULES_H
#define SOFTAFF_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/*
 * Total regex work allowed for one evaluation of one process, in the
 * units of the config's cost model: automaton states (rule->re_cost)
 * times bytes of command line.  One rule at the per-rule limit on a
 * 4 KiB command line costs about 2M units, ~25 ms (glibc 2.36); this
 * allows two of them, so 256 such rules cost no more than two.
 */
#define RULES_REGEX_BUDGET (2ULL * REGEX_MAX_COST * 4096 + 2 * 4096)

/*
 * What is known about one process.  Each attribute is either loaded
 * (its NEED_* bit in loaded) or not read yet; a loaded NULL string (or
 * !has_uid) could not be read, and a rule that needs it does not match.
 */
struct proc_attrs {
	unsigned int loaded; /* NEED_* bits */
	const char *comm;
	const char *exe;
	const char *cmdline; /* NUL separators already turned into spaces */
	const char *cgroup;  /* cgroup v2 path */
	bool has_uid;
	uid_t uid;
	/* Regex work left for this evaluation, and rules it had to skip. */
	uint64_t regex_budget;
	unsigned int regex_skipped;
};

/* No rule matches. */
#define RULES_NONE (-1)
/* Load the attribute *ret_need and call again from rule *ret_at. */
#define RULES_NEED (-2)

/*
 * Pure: the first rule from index from on that matches a, RULES_NONE,
 * or RULES_NEED when deciding needs an attribute not loaded yet.  Keys
 * are tried cheapest first (comm, uid, cgroup, exe, cmdline), so a
 * process's attributes are read lazily, in rule order, and its command
 * line (whose read takes the target's mmap lock) only when a rule gets
 * that far.  Regexes are charged to a->regex_budget; one that does not
 * fit counts as no match (a->regex_skipped).
 */
int rules_match_from(const struct config *c, struct proc_attrs *a,
		     unsigned int from, unsigned int *ret_at,
		     unsigned int *ret_need);
/* Same with every attribute loaded and a fresh budget: index or -1. */
int rules_match(const struct config *c, const struct proc_attrs *a);
/*
 * Pure, for --explain: does r match a (every attribute loaded), and if
 * not, which key fails and how, in why.
 */
bool rules_explain(const struct rule *r, const struct proc_attrs *a, char *why,
		   size_t size);
/* "/a/b" is a prefix of "/a/b" and "/a/b/c", not of "/a/bc". */
bool cgroup_has_prefix(const char *path, const char *prefix);
/*
 * Pure: the systemd unit a cgroup v2 path belongs to ("/system.slice/
 * pg@14.service/x" -> "pg@14.service") into ret; -ENOENT when it is in
 * no unit (a bare slice, the root), -ENAMETOOLONG.
 */
int rules_unit_of(const char *cgroup, char *ret, size_t size);
/* The same, but the unit's cgroup: "/system.slice/pg@14.service". */
int rules_unit_cgroup(const char *cgroup, char *ret, size_t size);
/*
 * Pure: the cgroup a rule that matches on cgroup and unit only acts on,
 * for a process in cgroup: its unit's cgroup, or the rule's cgroup
 * prefix, whichever is deeper.  0, -ENOENT, -ENAMETOOLONG.
 */
int rules_cgroup_target(const struct rule *r, const char *cgroup, char *ret,
			size_t size);

#endif
