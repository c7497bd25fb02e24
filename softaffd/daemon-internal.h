/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_DAEMON_INTERNAL_H
#define SOFTAFF_DAEMON_INTERNAL_H

/* What the daemon's files (daemon*.c, daemon.h lists them) share. */

#include "daemon.h"

/* daemon.c */
/* (Re)arm the sample and rescan timers from the configuration. */
void daemon_arm_timers(struct daemon *d);

/* daemon-reload.c */
/* SIGHUP: switch to a re-read topology and configuration if both are good. */
void daemon_reload(struct daemon *d);
/* Drop the capabilities the configuration does not need (again on a reload). */
void daemon_caps_update(struct daemon *d);
/*
 * A full scan that checks every managed thread (masks set by hand since
 * are found so), unless one is in progress: then one more right after
 * it.  Returns what the log line says.
 */
const char *daemon_recheck(struct daemon *d);

/* daemon-softness.c */
/* Start the global controller; keep the current rung if the ratio is on it. */
void softness_setup(struct daemon *d);
/* Put the configured global ratio in force (fixed, or adaptive's start). */
void softness_apply_config(struct daemon *d);
/* The sample timer: gather, let the control laws decide, apply. */
void softness_sample(struct daemon *d);
/* Turn kernel.sched_schedstats on for adaptive rules if we may; put it back. */
void softness_schedstats_on(struct daemon *d);
void softness_schedstats_restore(struct daemon *d);

/* daemon-status.c */
/* Write the status files and send STATUS= when it changed. */
void daemon_publish(struct daemon *d);

#endif
