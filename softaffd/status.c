// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"

int status_write(const char *run_dir, const struct sbuf *text)
{
	char path[PATH_MAX];

	if (text->oom)
		return -ENOMEM;
	/* systemd's RuntimeDirectory= normally made it; tests may not. */
	if (mkdir(run_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", run_dir, STATUS_FILE);
	return write_file_atomic(path, text->buf ? text->buf : "", text->len);
}

void status_remove(const char *run_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", run_dir, STATUS_FILE);
	unlink(path);
}

int status_show(const char *run_dir)
{
	char path[PATH_MAX], buf[8192];
	bool first = true;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run_dir, STATUS_FILE);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr,
			"softaffd: no status at %s (%s): is the daemon "
			"running?\n",
			path, strerror(errno));
		return 3; /* LSB "program is not running" */
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		int pid;

		/* The first chunk starts with "pid N": is N still alive? */
		if (first && sscanf(buf, "pid %d", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) < 0 && errno == ESRCH)
			fprintf(stderr, "softaffd: warning: pid %d is not "
				"running, this status is stale\n", pid);
		first = false;
		fwrite(buf, 1, n, stdout);
	}
	fclose(f);
	return 0;
}
