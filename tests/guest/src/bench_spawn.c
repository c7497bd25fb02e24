// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_spawn N [PROGRAM]: N times fork, exec PROGRAM (/bin/true) and wait;
 * prints "SPAWN n=N usecs_per_op=U".  The overhead benchmark's third
 * workload beside pipe and hackbench: fork (the child inherits the
 * parent's preference), exec (a fork/exec balance) and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *prog = argc > 2 ? argv[2] : "/bin/true";
	struct timespec a, b;
	char *end;
	long n, i;
	int status;

	n = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	if (argc < 2 || argc > 3 || *end || n < 1) {
		fprintf(stderr, "usage: bench_spawn N [PROGRAM]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("bench_spawn: fork");
			return 1;
		}
		if (!pid) {
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "bench_spawn: %s failed\n", prog);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("SPAWN n=%ld usecs_per_op=%.3f\n", n,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
	return 0;
}
