// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libconfig values with their checks, for the rules (config-rules.c)
 * and the top level (config-parse.c): numbers, strings, softness, the
 * keys a group may have, and the "file:line: message" of a failure.
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

int conf_get_ratio(struct ctx *x, const config_setting_t *s,
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
