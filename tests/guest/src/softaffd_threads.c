// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd_threads NFIRST NLATER: a process for softaffd to cover.
 *
 * Starts with NFIRST threads (the main thread included), prints "ready"
 * and waits for SIGUSR1.  Then a spawner thread resets its own soft
 * affinity (task/TID/soft_affinity_list) to "inherit", checks that it
 * reads back as inherit (an empty line), and creates NLATER more threads,
 * which inherit that thread request from it, and exits.  So the later
 * threads start with no request of their own whatever softaffd did to the
 * first ones, and only softaffd's handling of new threads can give them
 * the rule's mask.  Prints "later LIST SOURCE", what applied to the
 * spawner after the reset (Cpus_preferred_list and Cpus_preferred_source
 * of its status: the hard mask and "none" when neither the process nor
 * the cgroup has a preference), and then sleeps until killed.  Copy it to
 * a name a rule matches.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int nlater;

static int read_line(const char *path, const char *key, char *buf, size_t size)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (key && strncmp(line, key, strlen(key)))
			continue;
		const char *v = line + (key ? strlen(key) : 0);
		size_t len = strcspn(v, "\n");

		if (len >= size)
			len = size - 1;
		memcpy(buf, v, len);
		buf[len] = '\0';
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static void *spawner(void *arg)
{
	char path[128], now[256] = "", eff[256], src[64];
	long tid = syscall(SYS_gettid);
	pthread_t t;
	FILE *f;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/soft_affinity_list",
		 tid);
	f = fopen(path, "we");
	if (!f || fprintf(f, "inherit\n") < 0 || fclose(f) != 0) {
		perror(path);
		return (void *)1;
	}
	if (read_line(path, NULL, now, sizeof(now)) < 0 || *now) {
		fprintf(stderr, "spawner reset to inherit but reads '%s'\n", now);
		return (void *)1;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	if (read_line(path, "Cpus_preferred_list:\t", eff, sizeof(eff)) < 0 ||
	    read_line(path, "Cpus_preferred_source:\t", src, sizeof(src)) < 0) {
		fprintf(stderr, "%s: no Cpus_preferred_list/_source\n", path);
		return (void *)1;
	}
	for (int i = 0; i < nlater; i++)
		if (pthread_create(&t, NULL, idle_thread, NULL)) {
			perror("pthread_create");
			return (void *)1;
		}
	printf("later %s %s\n", eff, src);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t set;
	pthread_t t;
	void *ret;
	int sig;

	if (argc != 3) {
		fprintf(stderr, "usage: %s NFIRST NLATER\n", argv[0]);
		return 2;
	}
	nlater = atoi(argv[2]);
	/* Blocked in every thread: sigwait() in main gets it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 1; i < atoi(argv[1]); i++)
		if (pthread_create(&t, NULL, idle_thread, NULL)) {
			perror("pthread_create");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	if (pthread_create(&t, NULL, spawner, NULL) || pthread_join(t, &ret) ||
	    ret)
		return 1;
	for (;;)
		pause();
}
