// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration's model: struct config and struct rule, freed here,
 * compared here (when two rules are the same rule, which a reload keeps
 * the state of), and named here.  Below every config-*.c file: the
 * values (config-values.c), the rules (config-rules.c), the top level
 * (config-parse.c) and the files (config-load.c) build on it.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

void config_free(struct config *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < c->nrules; i++) {
		struct rule *r = &c->rules[i];

		free(r->name);
		free(r->comm);
		free(r->exe);
		free(r->cmdline);
		if (r->has_re)
			regfree(&r->cmdline_re);
		free(r->user);
		free(r->cgroup);
		free(r->unit);
		free(r->cpus_text);
	}
	for (unsigned int i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->rules);
	free(c->path);
	free(c);
}

const char *ratio_mode_name(enum ratio_mode m)
{
	switch (m) {
	case RATIO_OFF:
		return "off";
	case RATIO_FIXED:
		return "fixed";
	default:
		return "adaptive";
	}
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool rule_equal(const struct rule *a, const struct rule *b)
{
	return str_eq(a->name, b->name) && str_eq(a->comm, b->comm) &&
	       str_eq(a->exe, b->exe) && str_eq(a->cmdline, b->cmdline) &&
	       a->has_uid == b->has_uid && (!a->has_uid || a->uid == b->uid) &&
	       str_eq(a->cgroup, b->cgroup) && str_eq(a->unit, b->unit) &&
	       a->softness.kind == b->softness.kind &&
	       (a->softness.kind == SOFT_ADAPTIVE ||
		ratio_equal(a->softness.fixed, b->softness.fixed)) &&
	       cpuset_equal(&a->cpus, &b->cpus) && a->threads == b->threads;
}

void config_rule_map(const struct config *old, const struct config *cfg,
		     int *ret)
{
	for (unsigned int i = 0; i < old->nrules; i++) {
		ret[i] = -1;
		/* Names are unique within a configuration. */
		for (unsigned int j = 0; j < cfg->nrules; j++)
			if (rule_equal(&old->rules[i], &cfg->rules[j])) {
				ret[i] = (int)j;
				break;
			}
	}
}

bool config_rules_equal(const struct config *a, const struct config *b)
{
	if (a->nrules != b->nrules)
		return false;
	/* In order: the first rule that matches wins. */
	for (unsigned int i = 0; i < a->nrules; i++)
		if (!rule_equal(&a->rules[i], &b->rules[i]))
			return false;
	return true;
}
