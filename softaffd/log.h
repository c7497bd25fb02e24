/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_LOG_H
#define SOFTAFF_LOG_H

#include <syslog.h>

/*
 * Log lines go to stderr.  Under systemd (JOURNAL_STREAM set) each line
 * carries a "<N>" priority prefix that journald turns into PRIORITY=;
 * otherwise it is plain text prefixed with the program name.
 */
void log_init(int max_prio);
/* Messages per priority, also those filtered out; tests check these. */
extern unsigned long log_counts[8];
void log_set_journal(int on);
void log_msg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
