// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libconfig settings -> struct config: the ratio group, the top level
 * (the values and their checks are config-values.c).  Every check
 * that can fail reports "file:line: message"; the caller gets either a
 * complete, validated config or nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "util.h"

static int parse_ratio_group(struct ctx *x, const config_setting_t *g,
			     struct config *c)
{
	static const char *const fixed_keys[] = {"mode", "allowed", "preferred",
						 NULL};
	static const char *const adaptive_keys[] = {
		"mode", "softest", "hardest",	    "saturated",
		"idle", "hold",	   "min_change_ms", NULL};
	static const char *const off_keys[] = {"mode", NULL};
	char soft[RATIO_BUFSZ], hard[RATIO_BUFSZ];
	config_setting_t *s;
	const char *mode = "adaptive";
	int r;

	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(x, g, "'ratio' must be a group { ... }");
	s = config_setting_get_member(g, "mode");
	if (s) {
		r = conf_get_string(x, s, &mode);
		if (r < 0)
			return r;
	}
	if (!strcmp(mode, "fixed")) {
		c->mode = RATIO_FIXED;
		r = conf_check_keys(x, g, fixed_keys, " in fixed ratio");
		if (r < 0)
			return r;
		s = config_setting_get_member(g, "allowed");
		if (s && (r = conf_get_uint(x, s, RATIO_MIN, RATIO_MAX,
				       &c->fixed.allowed)) < 0)
			return r;
		s = config_setting_get_member(g, "preferred");
		if (s && (r = conf_get_uint(x, s, RATIO_MIN, RATIO_MAX,
				       &c->fixed.preferred)) < 0)
			return r;
		if (c->fixed.allowed < c->fixed.preferred)
			return fail(x, g,
				    "allowed (%u) must not be below "
				    "preferred (%u)",
				    c->fixed.allowed, c->fixed.preferred);
		return 0;
	}
	if (!strcmp(mode, "off")) {
		c->mode = RATIO_OFF;
		return conf_check_keys(x, g, off_keys, " in ratio with mode off");
	}
	if (strcmp(mode, "adaptive"))
		return fail(x, s,
			    "'mode' must be \"adaptive\", \"fixed\" or "
			    "\"off\"");
	c->mode = RATIO_ADAPTIVE;
	r = conf_check_keys(x, g, adaptive_keys, " in adaptive ratio");
	if (r < 0)
		return r;
	if ((s = config_setting_get_member(g, "softest")) &&
	    (r = conf_get_ratio(x, s, &c->softest)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "hardest")) &&
	    (r = conf_get_ratio(x, s, &c->hardest)) < 0)
		return r;
	if (ratio_cmp(c->softest, c->hardest) > 0)
		return fail(x, g, "softest ratio %s is harder than hardest %s",
			    ratio_format(c->softest, soft, sizeof(soft)),
			    ratio_format(c->hardest, hard, sizeof(hard)));
	if ((s = config_setting_get_member(g, "saturated")) &&
	    (r = conf_get_uint(x, s, 1, 100, &c->saturated_pct)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "idle")) &&
	    (r = conf_get_uint(x, s, 0, 99, &c->idle_pct)) < 0)
		return r;
	if (c->idle_pct >= c->saturated_pct)
		return fail(x, g, "'idle' (%u) must be below 'saturated' (%u)",
			    c->idle_pct, c->saturated_pct);
	if ((s = config_setting_get_member(g, "hold")) &&
	    (r = conf_get_uint(x, s, 1, 1000, &c->hold)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "min_change_ms")) &&
	    (r = conf_get_uint(x, s, 0, 3600000, &c->min_change_ms)) < 0)
		return r;
	return 0;
}

static int parse_root(struct ctx *x, config_t *cf, struct config *c)
{
	static const char *const keys[] = {"interval_ms",     "rescan_ms",
					   "restore_on_exit", "ratio",
					   "rules",	      NULL};
	config_setting_t *root = config_root_setting(cf), *s;
	int r;

	r = conf_check_keys(x, root, keys, "");
	if (r < 0)
		return r;
	if ((s = config_setting_get_member(root, "interval_ms")) &&
	    (r = conf_get_uint(x, s, 100, 60000, &c->interval_ms)) < 0)
		return r;
	if ((s = config_setting_get_member(root, "rescan_ms")) &&
	    (r = conf_get_uint(x, s, 500, 3600000, &c->rescan_ms)) < 0)
		return r;
	if ((s = config_setting_get_member(root, "restore_on_exit"))) {
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return fail(x, s,
				    "'restore_on_exit' must be true or "
				    "false");
		c->restore_on_exit = config_setting_get_bool(s);
	}
	if ((s = config_setting_get_member(root, "ratio")) &&
	    (r = parse_ratio_group(x, s, c)) < 0)
		return r;

	s = config_setting_get_member(root, "rules");
	return s ? conf_parse_rules(x, s, c) : 0;
}

static void config_defaults(struct config *c)
{
	c->interval_ms = 1000;
	c->rescan_ms = 10000;
	c->restore_on_exit = true;
	/*
	 * The sysctls are every soft-affine task's default, so a daemon
	 * that moves them couples all rules and all users: softness is per
	 * rule now, and the global ratio only moves when asked to.
	 */
	c->mode = RATIO_OFF;
	/* The kernel default, and what the RFC measured as "hard". */
	c->fixed = (struct ratio){100, 1};
	c->hardest = (struct ratio){100, 1};
	/* The RFC's "softer" setting that fixed single-instance hackbench. */
	c->softest = (struct ratio){5, 4};
	c->saturated_pct = 85;
	c->idle_pct = 50;
	c->hold = 3;
	c->min_change_ms = 5000;
}

int conf_load_main(config_t *cf, const char *name,
		     const struct topology *topo, unsigned int flags,
		     struct config **ret, char *err, size_t errlen)
{
	struct ctx x = {name, config_get_include_dir(cf), topo, err, errlen,
			flags};
	struct config *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		config_destroy(cf);
		return -ENOMEM;
	}
	config_defaults(c);
	c->path = strdup(name);
	c->files[0] = strdup(name);
	c->nfiles = 1;
	r = c->path && c->files[0] ? parse_root(&x, cf, c) : -ENOMEM;
	config_destroy(cf);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

