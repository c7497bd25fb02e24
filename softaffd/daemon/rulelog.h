/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_RULELOG_H
#define SOFTAFF_RULELOG_H

#include <stdint.h>

#include "log.h"

/*
 * What a rule may log about single processes.  Anyone can start
 * processes that a rule matches, by the thousand, and make each earn a
 * line: a match, a mask set by hand, a hard affinity that excludes the
 * rule's CPUs.  So the info lines and each kind of warning have a rate
 * limit of their own per rule (log_ratelimit, LOG_RL_BURST per
 * LOG_RL_WINDOW_MS): a flood of one kind does not silence the others.
 * Past the limit a line goes to the debug log; the first line after the
 * window, or rule_log_flush, says how many were suppressed.
 */
enum rule_warn {
	RULE_WARN_EMPTY,  /* hard affinity excludes all of the rule's CPUs */
	RULE_WARN_EPERM,  /* not permitted: the process is left alone */
	RULE_WARN_ERROR,  /* another error writing a request */
	RULE_WARN_CGROUP, /* a cgroup's preference changed by someone else */
	RULE_WARN_KINDS,
};

struct rule_log {
	struct log_ratelimit info; /* matches, leaves, masks set by hand */
	struct log_ratelimit warn[RULE_WARN_KINDS];
};

/* LOG_INFO for a line about one process of rule, LOG_DEBUG past the limit. */
int rule_log_info(struct rule_log *l, const char *rule, uint64_t now_ms);
/* LOG_WARNING for a warning of kind, LOG_DEBUG past the limit. */
int rule_log_warn(struct rule_log *l, const char *rule, enum rule_warn kind,
		  uint64_t now_ms);
/* Say how many were suppressed in windows that have ended. */
void rule_log_flush(struct rule_log *l, const char *rule, uint64_t now_ms);

#endif
