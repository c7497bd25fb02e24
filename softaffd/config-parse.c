// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libconfig settings -> struct config: the values with their checks,
 * the ratio group, the top level.  Every check that can fail reports
 * "file:line: message"; the caller gets either a complete, validated
 * config or nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "util.h"

int conf_fail_at(struct ctx *x, const char *file, int line, const char *fmt,
		   ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!file)
		file = x->name;
	/* Name an included file as it was opened, not as it was written. */
	if (strcmp(file, x->name) && file[0] != '/' && x->incdir)
		snprintf(x->err, x->errlen, "%s/%s:%d: %s", x->incdir, file,
			 line, msg);
	else
		snprintf(x->err, x->errlen, "%s:%d: %s", file, line, msg);
	return -EINVAL;
}

bool conf_is_int(const config_setting_t *s)
{
	int t = config_setting_type(s);

	return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
}

int conf_get_uint(struct ctx *x, const config_setting_t *s, long long lo,
		    long long hi, unsigned int *ret)
{
	long long v;

	if (!conf_is_int(s))
		return fail(x, s, "'%s' must be an integer",
			    config_setting_name(s));
	v = config_setting_get_int64(s);
	if (v < lo || v > hi)
		return fail(x, s, "'%s' = %lld is out of range %lld..%lld",
			    config_setting_name(s), v, lo, hi);
	*ret = (unsigned int)v;
	return 0;
}

int conf_get_string(struct ctx *x, const config_setting_t *s,
		      const char **ret)
{
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(x, s, "'%s' must be a string",
			    config_setting_name(s));
	v = config_setting_get_string(s);
	if (strlen(v) > CONFIG_MAX_PATTERN)
		return fail(x, s, "'%s' is longer than %d bytes",
			    config_setting_name(s), CONFIG_MAX_PATTERN);
	*ret = v;
	return 0;
}

static int ratio_fail(struct ctx *x, const config_setting_t *s, int r,
		      const char *shape)
{
	if (r == -ERANGE)
		return fail(x, s, "'%s': both sides must be in %d..%d",
			    config_setting_name(s), RATIO_MIN, RATIO_MAX);
	if (r == -EDOM)
		return fail(x, s, "'%s': allowed must not be below preferred",
			    config_setting_name(s));
	return fail(x, s, "'%s' must %s", config_setting_name(s), shape);
}

static int get_ratio(struct ctx *x, const config_setting_t *s,
		     struct ratio *ret)
{
	const char *v;
	int r;

	r = conf_get_string(x, s, &v);
	if (r < 0)
		return r;
	r = ratio_parse(v, ret);
	return r < 0 ? ratio_fail(x, s, r,
				  "look like \"ALLOWED:PREFERRED\", e.g. "
				  "\"100:1\"")
		     : 0;
}

int conf_get_softness(struct ctx *x, const config_setting_t *s,
			struct softness *ret)
{
	const char *v;
	int r;

	r = conf_get_string(x, s, &v);
	if (r < 0)
		return r;
	if (softness_word(v, &ret->kind)) {
		if (ret->kind == SOFT_STRICT)
			ret->fixed = RATIO_STRICT;
		return 0;
	}
	r = ratio_parse(v, &ret->fixed);
	if (r < 0)
		return ratio_fail(x, s, r,
				  "be \"adaptive\", \"strict\" or "
				  "\"ALLOWED:PREFERRED\", e.g. \"20:1\"");
	ret->kind = SOFT_FIXED;
	return 0;
}

static bool key_in(const char *name, const char *const *keys)
{
	for (; *keys; keys++)
		if (!strcmp(name, *keys))
			return true;
	return false;
}

int conf_check_keys(struct ctx *x, const config_setting_t *group,
		      const char *const *keys, const char *where)
{
	for (int i = 0; i < config_setting_length(group); i++) {
		config_setting_t *s = config_setting_get_elem(group, i);
		const char *n = config_setting_name(s);

		if (n && !key_in(n, keys))
			return fail(x, s, "unknown key '%s'%s", n, where);
	}
	return 0;
}

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
	    (r = get_ratio(x, s, &c->softest)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "hardest")) &&
	    (r = get_ratio(x, s, &c->hardest)) < 0)
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

int conf_read_error(config_t *cf, const char *name, char *err, size_t errlen)
{
	struct ctx x = {name, config_get_include_dir(cf), NULL, err, errlen,
			0};

	if (config_error_type(cf) == CONFIG_ERR_FILE_IO) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot read: %s", name,
			 e ? strerror(e) : "I/O error");
		return -ENOENT;
	}
	return conf_fail_at(&x, config_error_file(cf), config_error_line(cf), "%s",
		       config_error_text(cf));
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

