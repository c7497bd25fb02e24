/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_EXPLAIN_H
#define SOFTAFF_EXPLAIN_H

#include <stdio.h>

#include "config.h"
#include "util.h"

/*
 * softaffd --explain PID: which rule matches the process and why (each
 * rule before it says why not), what is applied to it now (its soft
 * affinity, ratio and their source), whether its container's
 * annotations set its preference instead, and whether the running
 * daemon manages it.  "no rule matches" and every rule's reason
 * otherwise.
 * Exit code: 0, or 1 if the process cannot be read.
 */
int explain_pid(const struct config *c, const struct roots *roots, int pid,
		FILE *out);

#endif
