// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd_lat N EXE WANT BOUND_MS: exec-to-applied latency of softaffd.
 *
 * N times: fork a child that stamps CLOCK_MONOTONIC into shared memory
 * just before execve(EXE, "600"), then poll its
 * /proc/PID/soft_affinity_list, the process's own request, which is
 * where softaffd writes (threads = "all"), until it reads WANT (or give up after
 * 5 * BOUND_MS), and kill it.  Prints one diagnostic line per late or
 * missed start and a summary line:
 *   RESULT n=N applied=A late=L p50_us=.. p99_us=.. max_us=..
 * "late" counts starts applied after BOUND_MS or never.  Exit 0 unless
 * the measurement itself could not run (2): our own process's request
 * already is WANT, so a child, which starts with a copy of it, would read
 * WANT without any daemon.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int read_list(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char path[128], buf[256];
	long long *lat, bound_us;
	volatile long long *stamp;
	int n, applied = 0, late = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s N EXE WANT BOUND_MS\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	bound_us = atoll(argv[4]) * 1000;
	if (n <= 0 || bound_us <= 0)
		return 2;
	/* Our process's own request: fork copies it to the child. */
	snprintf(path, sizeof(path), "/proc/self/soft_affinity_list");
	if (read_list(path, buf, sizeof(buf)) < 0) {
		perror(path);
		return 2;
	}
	if (!strcmp(buf, argv[3])) {
		fprintf(stderr, "our own soft affinity request already is %s\n",
			buf);
		return 2;
	}
	lat = calloc((size_t)n, sizeof(*lat));
	stamp = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!lat || stamp == MAP_FAILED)
		return 2;

	for (int i = 0; i < n; i++) {
		long long t_seen = -1, deadline;
		pid_t pid;

		*stamp = 0;
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			*stamp = now_us();
			execl(argv[2], argv[2], "600", (char *)NULL);
			_exit(127);
		}
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", pid);
		deadline = now_us() + 5 * bound_us;
		for (;;) {
			long long t = now_us();

			if (*stamp && read_list(path, buf, sizeof(buf)) == 0 &&
			    !strcmp(buf, argv[3])) {
				t_seen = t;
				break;
			}
			if (t > deadline)
				break;
			usleep(500);
		}
		if (t_seen >= 0) {
			lat[applied++] = t_seen - *stamp;
			if (t_seen - *stamp > bound_us) {
				late++;
				printf("# start %d (pid %d): applied after %lld us\n",
				       i, pid, t_seen - *stamp);
			}
		} else {
			late++;
			printf("# start %d (pid %d): not applied after %lld ms "
			       "(soft_affinity_list '%s')\n",
			       i, pid, 5 * bound_us / 1000, buf);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	qsort(lat, (size_t)applied, sizeof(*lat), cmp_ll);
	printf("RESULT n=%d applied=%d late=%d p50_us=%lld p99_us=%lld "
	       "max_us=%lld\n",
	       n, applied, late, applied ? lat[(applied - 1) * 50 / 100] : -1,
	       applied ? lat[(applied - 1) * 99 / 100] : -1,
	       applied ? lat[applied - 1] : -1);
	return 0;
}
