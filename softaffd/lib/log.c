// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static int log_max = LOG_INFO;
unsigned long log_counts[8];
static int log_journal;

/*
 * JOURNAL_STREAM=dev:ino names the stream systemd connected to stderr;
 * only if stderr is still that stream do "<N>" prefixes reach journald
 * (a shell redirect in between would show them as garbage).
 */
static int stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_init(int max_prio)
{
	log_max = max_prio;
	log_journal = stderr_is_journal();
}

void log_set_journal(int on)
{
	log_journal = on;
}

static const char *const plain_prefix[] = {
	[LOG_EMERG] = "emergency: ",
	[LOG_ALERT] = "alert: ",
	[LOG_CRIT] = "critical: ",
	[LOG_ERR] = "error: ",
	[LOG_WARNING] = "warning: ",
	[LOG_NOTICE] = "",
	[LOG_INFO] = "",
	[LOG_DEBUG] = "debug: ",
};

/* journald's stream protocol: "<N>" with N the syslog priority. */
static const char *const journal_prefix[] = {
	[LOG_EMERG] = "<0>", [LOG_ALERT] = "<1>",   [LOG_CRIT] = "<2>",
	[LOG_ERR] = "<3>",   [LOG_WARNING] = "<4>", [LOG_NOTICE] = "<5>",
	[LOG_INFO] = "<6>",  [LOG_DEBUG] = "<7>",
};

void log_msg(int prio, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (prio < LOG_EMERG || prio > LOG_DEBUG)
		prio = LOG_ERR;
	log_counts[prio]++;
	if (prio > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_journal)
		fprintf(stderr, "%s%s\n", journal_prefix[prio], line);
	else
		fprintf(stderr, "softaffd: %s%s\n", plain_prefix[prio], line);
}

void log_ratelimit_flush(struct log_ratelimit *rl, uint64_t now_ms, int prio,
			 const char *what)
{
	if (!rl->start_ms)
		rl->start_ms = now_ms; /* the first window starts now */
	if (now_ms - rl->start_ms < LOG_RL_WINDOW_MS)
		return;
	if (rl->suppressed)
		log_msg(prio, "%s: %u messages suppressed", what,
			rl->suppressed);
	rl->start_ms = now_ms;
	rl->n = rl->suppressed = 0;
}

bool log_ratelimit(struct log_ratelimit *rl, uint64_t now_ms, int prio,
		   const char *what)
{
	log_ratelimit_flush(rl, now_ms, prio, what);
	if (rl->n < LOG_RL_BURST) {
		rl->n++;
		return true;
	}
	rl->suppressed++;
	return false;
}
