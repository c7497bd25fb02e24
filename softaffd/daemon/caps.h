/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CAPS_H
#define SOFTAFF_CAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * Least privilege.  What the daemon needs after start-up:
 *   CAP_SYS_NICE    the kernel's check for setting another user's task's
 *                   soft affinity (as for sched_setaffinity);
 *   CAP_SYS_PTRACE  readlink(/proc/PID/exe) of another user's process,
 *                   only if a rule matches on exe.
 * CAP_NET_ADMIN is needed only to subscribe to the proc connector, done
 * before the first drop.  Everything else goes, from the effective,
 * permitted and inheritable sets, so nothing dropped comes back.
 */
enum { CAPS_NICE = 1 << 0, CAPS_PTRACE = 1 << 1 };

/* Pure: the CAPS_* a configuration needs. */
unsigned int caps_needed(const struct config *cfg);
/*
 * Keep only the capabilities in want (those of them we have), drop the
 * rest.  0 or -errno.
 */
int caps_drop(unsigned int want);
/* Which of CAPS_* are still permitted (a reload may need them). */
unsigned int caps_permitted(void);
/* "CAP_SYS_PTRACE" etc. for a CAPS_* bit set, into buf. */
const char *caps_names(unsigned int caps, char *buf, size_t size);

#endif
