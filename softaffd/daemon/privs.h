/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_PRIVS_H
#define SOFTAFF_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "util.h"

/*
 * What a configuration needs from softaffd.service beyond the unit's
 * defaults, which grant none of these (the shipped configuration, a
 * template without rules, needs none):
 *   PRIV_CGROUP  the cgroup tree writable: a rule that acts on its
 *                cgroups (rule_acts_on_cgroup()) writes their
 *                cpuset.cpus.preferred{,.ratio}, an adaptive one also a
 *                PSI trigger into their cpu.pressure;
 *   PRIV_SYSCTL  kernel.sched_soft_affinity_ratio, sched_allowed and
 *                sched_preferred writable: ratio mode "fixed" or
 *                "adaptive";
 *   PRIV_PTRACE  CAP_SYS_PTRACE in the bounding set: an exe rule reads
 *                other users' /proc/PID/exe (caps.h).
 * "softaffd --privileges" prints them as a drop-in for the unit, which
 * softaffd-generator installs at boot and on "systemctl daemon-reload".
 */
enum { PRIV_CGROUP = 1 << 0, PRIV_SYSCTL = 1 << 1, PRIV_PTRACE = 1 << 2 };

/* Pure: the PRIV_* cfg needs. */
unsigned int privs_needed(const struct config *cfg);
/* The first rule that needs PRIV_CGROUP or PRIV_PTRACE, or NULL. */
const struct rule *privs_rule(const struct config *cfg, unsigned int priv);
/* The drop-in that grants what cfg needs, on f; nothing if it needs none. */
void privs_dropin(const struct config *cfg, FILE *f);
/*
 * One line (no newline) into buf when an exe rule makes softaffd keep
 * CAP_SYS_PTRACE, root-equivalent for a root process, pointing to unit
 * rules; false (and "") when no rule matches on exe.
 */
bool privs_ptrace_notice(const struct config *cfg, char *buf, size_t size);
/*
 * What cfg needs and this process lacks, each logged as one warning that
 * says how to get it: the cgroup tree or the sysctls mounted read-only
 * (EROFS: the unit's sandbox; not checked for a dry run, which writes
 * nothing) and, as root, CAP_SYS_PTRACE not in caps (CAPS_* kept: the
 * unit's bounding set withheld it).  Returns the PRIV_* missing.
 */
unsigned int privs_check(const struct config *cfg, const struct roots *roots,
			 unsigned int caps, bool dry_run);

#endif
