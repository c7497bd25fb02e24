// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>

#include "config.h"
#include "rulelog.h"

/* Completes "rule 'NAME': warnings (...): N messages suppressed". */
static const char *const warn_what[RULE_WARN_KINDS] = {
	[RULE_WARN_EMPTY] = "hard affinity excludes its CPUs",
	[RULE_WARN_EPERM] = "not permitted",
	[RULE_WARN_ERROR] = "write errors",
	[RULE_WARN_CGROUP] = "cgroups changed by someone else",
};

#define WHAT_SIZE (RULE_NAME_MAX + 80)

static void info_what(char *what, const char *rule)
{
	snprintf(what, WHAT_SIZE, "rule '%s'", rule);
}

static void warn_what_of(char *what, const char *rule, enum rule_warn kind)
{
	snprintf(what, WHAT_SIZE, "rule '%s': warnings (%s)", rule,
		 warn_what[kind]);
}

int rule_log_info(struct rule_log *l, const char *rule, uint64_t now_ms)
{
	char what[WHAT_SIZE];

	info_what(what, rule);
	return log_ratelimit(&l->info, now_ms, LOG_INFO, what) ? LOG_INFO
							       : LOG_DEBUG;
}

int rule_log_warn(struct rule_log *l, const char *rule, enum rule_warn kind,
		  uint64_t now_ms)
{
	char what[WHAT_SIZE];

	warn_what_of(what, rule, kind);
	return log_ratelimit(&l->warn[kind], now_ms, LOG_WARNING, what)
		       ? LOG_WARNING
		       : LOG_DEBUG;
}

void rule_log_flush(struct rule_log *l, const char *rule, uint64_t now_ms)
{
	char what[WHAT_SIZE];

	if (l->info.suppressed) {
		info_what(what, rule);
		log_ratelimit_flush(&l->info, now_ms, LOG_INFO, what);
	}
	for (unsigned int k = 0; k < RULE_WARN_KINDS; k++) {
		if (!l->warn[k].suppressed)
			continue;
		warn_what_of(what, rule, (enum rule_warn)k);
		log_ratelimit_flush(&l->warn[k], now_ms, LOG_WARNING, what);
	}
}
