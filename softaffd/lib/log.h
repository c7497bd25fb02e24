/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_LOG_H
#define SOFTAFF_LOG_H

#include <stdbool.h>
#include <stdint.h>
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

/*
 * A limiter for one stream of messages that an unprivileged user can
 * trigger at will (a rule's lines about single processes, rulelog.h):
 * at most LOG_RL_BURST per LOG_RL_WINDOW_MS; the first message after a
 * window in which some were dropped says how many, at prio, the
 * stream's priority.
 */
#define LOG_RL_BURST	 10
#define LOG_RL_WINDOW_MS 10000
struct log_ratelimit {
	uint64_t start_ms;
	unsigned int n, suppressed;
};
/* May a message of stream what be logged now? */
bool log_ratelimit(struct log_ratelimit *rl, uint64_t now_ms, int prio,
		   const char *what);
/* Report what was suppressed in a window that has ended. */
void log_ratelimit_flush(struct log_ratelimit *rl, uint64_t now_ms, int prio,
			 const char *what);

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
