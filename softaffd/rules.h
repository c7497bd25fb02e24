/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_RULES_H
#define SOFTAFF_RULES_H

#include "config.h"

/*
 * What is known about one process.  A NULL string (or !has_uid) means the
 * attribute could not be read; a rule that needs it then does not match.
 */
struct proc_attrs {
	const char *comm;
	const char *exe;
	const char *cmdline; /* NUL separators already turned into spaces */
	const char *cgroup;  /* cgroup v2 path */
	bool has_uid;
	uid_t uid;
};

bool rule_matches(const struct rule *r, const struct proc_attrs *a);
/* Index of the first matching rule, or -1.  Pure. */
int rules_match(const struct config *c, const struct proc_attrs *a);
/* "/a/b" is a prefix of "/a/b" and "/a/b/c", not of "/a/bc". */
bool cgroup_has_prefix(const char *path, const char *prefix);

#endif
