// SPDX-License-Identifier: GPL-2.0
/*
 * softaff_notify FILE TIMEOUT_MS -- COMMAND...: watch FILE for a "file
 * modified" event (inotify IN_MODIFY, which cgroup_file_notify() sends for
 * cgroup files such as cpuset.cpus.preferred.effective), run COMMAND with
 * sh -c, and print "event" if one arrives within TIMEOUT_MS of COMMAND's
 * end, else "none".  The watch is in place before COMMAND runs, so an
 * event cannot be missed by racing it.  Exit 0 either way; 2 on usage or
 * system errors.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd;
	int fd, timeout, r, events = 0;

	if (argc != 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: softaff_notify FILE TIMEOUT_MS -- COMMAND\n");
		return 2;
	}
	timeout = atoi(argv[2]);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_MODIFY) < 0) {
		fprintf(stderr, "softaff_notify: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	r = system(argv[4]);
	if (r != 0) {
		fprintf(stderr, "softaff_notify: command failed (%d): %s\n", r, argv[4]);
		return 2;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while ((r = poll(&pfd, 1, timeout)) > 0) {
		ssize_t len = read(fd, buf, sizeof(buf));

		if (len <= 0)
			break;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->mask & IN_MODIFY)
				events++;
			p += sizeof(*ev) + ev->len;
		}
		/* Drain what follows at once, then stop. */
		timeout = 50;
	}
	if (r < 0) {
		fprintf(stderr, "softaff_notify: poll: %s\n", strerror(errno));
		return 2;
	}
	puts(events ? "event" : "none");
	return 0;
}
