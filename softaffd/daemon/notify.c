// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "notify.h"

/* sd_notify(3) says > 0 for sent; callers only care about failures. */
int notify_send(const char *msg)
{
	int r = sd_notify(0, msg);

	return r < 0 ? r : 0;
}

int notify_sendf(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return notify_send(msg);
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	/* Also checks $WATCHDOG_PID: a child of the daemon must not ping. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
