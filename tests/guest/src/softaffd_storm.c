// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd_storm NSHORT NLONG SHORT_EXE LONG_EXE: a process storm.
 *
 * Spawns NSHORT short-lived processes (SHORT_EXE, no arguments, e.g.
 * /bin/true) and, spread evenly among them, NLONG long-lived ones
 * (LONG_EXE 600, e.g. a copy of sleep with a name a rule matches), as fast
 * as posix_spawn() goes, reaping the short ones as they exit.  Prints the
 * PID of every long-lived process on stdout, one per line, then
 * "# spawned S short + L long in T ms" and exits once every short one
 * was reaped; the long ones are left running (the caller kills them).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	int nshort, nlong, every, spawned_short = 0, spawned_long = 0, live = 0;
	posix_spawn_file_actions_t fa;
	pid_t *longs;
	long long t0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s NSHORT NLONG SHORT_EXE LONG_EXE\n",
			argv[0]);
		return 2;
	}
	nshort = atoi(argv[1]);
	nlong = atoi(argv[2]);
	if (nshort < 0 || nlong < 0)
		return 2;
	longs = calloc((size_t)nlong + 1, sizeof(*longs));
	if (!longs)
		return 2;
	/* Nobody keeps our stdout open: callers read it to its end. */
	if (posix_spawn_file_actions_init(&fa) ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0))
		return 2;
	every = nlong ? (nshort / nlong > 0 ? nshort / nlong : 1) : 0;
	t0 = now_ms();
	for (int i = 0; i < nshort || spawned_long < nlong; i++) {
		char *sargv[] = {argv[3], NULL};
		char *largv[] = {argv[4], "600", NULL};
		pid_t pid;
		int r;

		if (every && i % every == 0 && spawned_long < nlong) {
			r = posix_spawn(&pid, argv[4], &fa, NULL, largv, environ);
			if (r) {
				fprintf(stderr, "spawn %s: %d\n", argv[4], r);
				return 1;
			}
			longs[spawned_long++] = pid;
		}
		if (i < nshort) {
			r = posix_spawn(&pid, argv[3], &fa, NULL, sargv, environ);
			if (r == EAGAIN) {
				/* Too many at once: reap one and retry. */
				if (wait(NULL) > 0)
					live--;
				i--;
				continue;
			}
			if (r) {
				fprintf(stderr, "spawn %s: %d\n", argv[3], r);
				return 1;
			}
			spawned_short++;
			live++;
		}
		/* Reap what has exited, without waiting. */
		while (live > 0 && waitpid(-1, NULL, WNOHANG) > 0)
			live--;
	}
	for (int i = 0; i < spawned_long; i++)
		printf("%d\n", longs[i]);
	fflush(stdout);
	while (live > 0 && wait(NULL) > 0)
		live--;
	printf("# spawned %d short + %d long in %lld ms\n", spawned_short,
	       spawned_long, now_ms() - t0);
	return 0;
}
