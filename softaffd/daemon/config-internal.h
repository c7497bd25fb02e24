/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CONFIG_INTERNAL_H
#define SOFTAFF_CONFIG_INTERNAL_H

/*
 * What the configuration's files share; only they include this.
 *
 *   config.c        the files: trust checks, @include, drop-ins, loading
 *   config-parse.c  the settings (ratio group, intervals) and the values
 *   config-rules.c  the rules: each one's keys, the list, comparing them
 *   config-dump.c   -t: the configuration as a libconfig file again
 */

#include <libconfig.h>

#include "config.h"

/* Where a parse is, for its messages: "file:line: message" into err. */
struct ctx {
	const char *name;
	const char *incdir; /* where @include files are looked up, or NULL */
	const struct topology *topo;
	char *err;
	size_t errlen;
	unsigned int flags; /* CONFIG_* of config_load_flags() */
};

/* config-values.c */
/* The message at file:line (NULL: x->name) into x->err; returns -EINVAL. */
int conf_fail_at(struct ctx *x, const char *file, int line, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
/* The same at setting s. */
#define fail(x, s, ...)                                  \
	conf_fail_at((x), config_setting_source_file(s), \
		     (int)config_setting_source_line(s), __VA_ARGS__)
bool conf_is_int(const config_setting_t *s);
int conf_get_uint(struct ctx *x, const config_setting_t *s, long long lo,
		  long long hi, unsigned int *ret);
/* A string of at most CONFIG_MAX_PATTERN bytes. */
int conf_get_string(struct ctx *x, const config_setting_t *s,
		    const char **ret);
/* A ratio "allowed:preferred" within the kernel's limits. */
int conf_get_ratio(struct ctx *x, const config_setting_t *s,
		   struct ratio *ret);
int conf_get_softness(struct ctx *x, const config_setting_t *s,
		      struct softness *ret);
/* Every key of group is one of keys (NULL-terminated); where: for messages. */
int conf_check_keys(struct ctx *x, const config_setting_t *group,
		    const char *const *keys, const char *where);
/* libconfig's complaint about cf (read by config_read_*) as ours. */
int conf_read_error(config_t *cf, const char *name, char *err, size_t errlen);

/* config-parse.c */
/* A new config from the main file's cf, which this destroys. */
int conf_load_main(config_t *cf, const char *name,
		   const struct topology *topo, unsigned int flags,
		   struct config **ret, char *err, size_t errlen);

/* config-rules.c */
/* The rules of list s, appended to c's; x->name is their file. */
int conf_parse_rules(struct ctx *x, const config_setting_t *s,
		     struct config *c);

#endif
