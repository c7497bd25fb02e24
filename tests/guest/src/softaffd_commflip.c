// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd_commflip NAME_A NAME_B SECONDS: the hostile load an
 * unprivileged user can make for softaffd.  Flips the process's comm
 * between NAME_A and NAME_B with prctl(PR_SET_NAME) as fast as it can
 * for SECONDS (each flip is a proc connector event, and with a rule on
 * NAME_A each one makes the process match and stop matching), then
 * prints "flips N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long n = 0;
	double end;

	if (argc != 4) {
		fprintf(stderr, "usage: %s NAME_A NAME_B SECONDS\n", argv[0]);
		return 2;
	}
	end = now() + atof(argv[3]);
	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			prctl(PR_SET_NAME, argv[1], 0, 0, 0);
			prctl(PR_SET_NAME, argv[2], 0, 0, 0);
		}
		n += 2000;
	}
	printf("flips %llu\n", n);
	return 0;
}
