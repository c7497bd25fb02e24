/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_NOTIFY_H
#define SOFTAFF_NOTIFY_H

#include <stdint.h>

/*
 * The systemd notification protocol (sd_notify(3)), which is one
 * datagram of "KEY=value" lines to the AF_UNIX socket named by
 * $NOTIFY_SOCKET ("/path" or "@abstract"), through libsystemd.  A thin
 * layer so that callers see 0 or -errno and tests can stub nothing.
 */

/* Send msg.  0 if sent or not running under systemd, else -errno. */
int notify_send(const char *msg);
int notify_sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * sd_watchdog_enabled(3): the watchdog period in microseconds from
 * $WATCHDOG_USEC, or 0 if there is none or $WATCHDOG_PID names another
 * process.
 */
uint64_t notify_watchdog_usec(void);

#endif
