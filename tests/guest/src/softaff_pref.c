// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_pref: the C half of tests/guest/36-preference.t (the preference
 * object of kernel issue #13, the ABI of issue #24).  Each mode does one
 * job and prints
 * "key=value" lines (or thread ids) for the script to judge:
 *
 *   park N          N threads that sleep; then reads commands on stdin:
 *                   "spawn K" starts K more (prints their TIDs), "quit".
 *                   Prints the TIDs of the first N on its first line.
 *   later DELAY N   (a service's program) sleeps DELAY seconds, then starts
 *                   N threads that each run 5 ms and sleep 5 ms, forever.
 *   during ROUNDS   a child whose threads keep creating long-lived threads
 *                   while this process writes its whole-process mask and
 *                   ratio ROUNDS times, the last write last; then the
 *                   process files must read the last values, and every
 *                   thread must have no request of its own (its files read
 *                   "") and show the last values in its status, with
 *                   source process.
 *   fcred PID       file->f_cred: fds of PID's (root-owned) soft affinity
 *                   files opened by `nobody`, written by root (passed over
 *                   a unix socket, or kept across regaining root), and the
 *                   reverse.
 *   storm N ITER    a `nobody` process with N threads, whole-process writes
 *                   to it in a loop (by a `nobody` writer), and this
 *                   process's fork+exit latency, ITER samples without and
 *                   ITER during the writes, in alternating blocks; then
 *                   every thread must show the last mask written in its
 *                   status (Cpus_preferred_list, source process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <pwd.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "softaff_test.h"

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int write_fd(int fd, const char *s)
{
	ssize_t n = write(fd, s, strlen(s));

	return n < 0 ? -errno : (size_t)n == strlen(s) ? 0 : -EIO;
}

static int read_path(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The value of KEY: in a status text, without the newline ("" if absent). */
static void status_value(const char *st, const char *key, char *out, size_t len)
{
	char k[64];
	const char *p;
	size_t n;

	snprintf(k, sizeof(k), "\n%s:", key);
	out[0] = '\0';
	p = strstr(st, k);
	if (!p)
		return;
	p += strlen(k);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* /proc/PID/task/TID/status into st; -errno. */
static int read_status(pid_t pid, const char *tid, char *st, size_t len)
{
	char path[128];
	int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, st, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	st[n] = '\0';
	return 0;
}

static const char *errname(int err)
{
	static char b[32];

	switch (-err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	}
	snprintf(b, sizeof(b), "%d", err);
	return b;
}

static void nobody_ids(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam("nobody");

	*uid = pw ? pw->pw_uid : 65534;
	*gid = pw ? pw->pw_gid : 65534;
}

static int drop_to_nobody(void)
{
	uid_t uid;
	gid_t gid;

	nobody_ids(&uid, &gid);
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* --- park ----------------------------------------------------------------- */

static void *park_fn(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, gettid_(), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static void spawn_print(int n)
{
	pthread_attr_t attr;
	pid_t *tids = calloc((size_t)n, sizeof(*tids));
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, park_fn, &tids[i]))
			break;
	}
	n = i;
	for (i = 0; i < n; i++) {
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
		printf("%s%d", i ? " " : "", tids[i]);
	}
	printf("\n");
	fflush(stdout);
	/* tids[] stays: the threads hold pointers into it */
}

static int mode_park(int n)
{
	char line[64];

	spawn_print(n);
	while (fgets(line, sizeof(line), stdin)) {
		int k;

		if (sscanf(line, "spawn %d", &k) == 1 && k > 0)
			spawn_print(k);
		else if (!strncmp(line, "quit", 4))
			break;
	}
	return 0;
}

/* --- later: a service's program ----------------------------------------- */

static void *duty_fn(void *arg)
{
	(void)arg;
	for (;;) {
		double end = softaff_now() + 0.005;

		while (softaff_now() < end)
			;
		sleep_us(5000);
	}
	return NULL;
}

static int mode_later(double delay, int n)
{
	int i;

	sleep_us((long)(delay * 1e6));
	for (i = 0; i < n; i++) {
		pthread_t t;

		pthread_create(&t, NULL, duty_fn, NULL);
	}
	for (;;)
		pause();
	return 0;
}

/* --- during: threads created during whole-process writes -------------------- */

#define DURING_MAX_THREADS 3000

struct during_shm {
	volatile int stop;		/* parent: stop creating */
	volatile int created;		/* child: threads created so far */
	volatile int done;		/* child: all creators have stopped */
};

static struct during_shm *dshm;

static void *during_park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *during_creator(void *arg)
{
	pthread_attr_t attr;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 32 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!dshm->stop &&
	       __atomic_load_n(&dshm->created, __ATOMIC_RELAXED) < DURING_MAX_THREADS) {
		pthread_t t;

		if (pthread_create(&t, &attr, during_park, NULL) == 0)
			__atomic_add_fetch(&dshm->created, 1, __ATOMIC_RELAXED);
		else
			usleep(1000);
	}
	return NULL;
}

static int mode_during(int rounds)
{
	static const char *const masks[] = { "0-1", "2-3", "1-2", "0,3" };
	static const char *const ratios[] = { "2:1", "3:1", "4:1", "5:1" };
	const char *final_mask = "1,3", *final_ratio = "7:3";
	char path[96], buf[128], rpath[96];
	int fd, rfd, i, werr = 0, checked = 0, bad = 0, rbad = 0, srcbad = 0, c0;
	int reqbad = 0;
	uint64_t want = 0xa;
	pid_t pid;
	DIR *d;
	struct dirent *de;

	dshm = mmap(NULL, sizeof(*dshm), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (dshm == MAP_FAILED)
		return 1;
	pid = fork();
	if (pid == 0) {
		pthread_t c[3];

		for (i = 0; i < 3; i++)
			pthread_create(&c[i], NULL, during_creator, NULL);
		for (i = 0; i < 3; i++)
			pthread_join(c[i], NULL);
		dshm->done = 1;
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", pid);
	snprintf(rpath, sizeof(rpath), "/proc/%d/soft_affinity_ratio", pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	rfd = open(rpath, O_WRONLY | O_CLOEXEC);
	/* Let the creators get going. */
	while (dshm->created < 20)
		usleep(1000);
	c0 = dshm->created;
	for (i = 0; i < rounds; i++) {
		/* One open file, many writes: each write is parsed on its own. */
		if (write_fd(fd, masks[i % 4]) || write_fd(rfd, ratios[i % 4]))
			werr++;
		if (i % 16 == 15)
			usleep(500);	/* let some threads start between writes */
	}
	if (write_fd(fd, final_mask) || write_fd(rfd, final_ratio))
		werr++;
	/*
	 * Threads whose clone() raced with the final write must have the
	 * final values; stop the creators only now.
	 */
	printf("created_during=%d\n", dshm->created - c0);
	dshm->stop = 1;
	while (!dshm->done)
		usleep(1000);
	close(fd);
	close(rfd);

	/* The process files read what was written last. */
	snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", pid);
	if (read_path(path, buf, sizeof(buf)) || strcmp(buf, final_mask)) {
		printf("# /proc/PID/soft_affinity_list \"%s\", want \"%s\"\n", buf,
		       final_mask);
		reqbad++;
	}
	if (read_path(rpath, buf, sizeof(buf)) || strcmp(buf, final_ratio)) {
		printf("# /proc/PID/soft_affinity_ratio \"%s\", want \"%s\"\n", buf,
		       final_ratio);
		reqbad++;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char p2[512], st[4096], v[128], src[64];
		uint64_t m;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (read_status(pid, de->d_name, st, sizeof(st)))
			continue;
		checked++;
		status_value(st, "Cpus_preferred_list", v, sizeof(v));
		if (softaff_parse_cpulist64(v, &m) || m != want) {
			if (bad++ < 3)
				printf("# thread %s: Cpus_preferred_list \"%s\", want %s\n",
				       de->d_name, v, final_mask);
		}
		status_value(st, "Cpus_preferred_source", src, sizeof(src));
		if (strcmp(src, "process")) {
			if (srcbad++ < 3)
				printf("# thread %s: Cpus_preferred_source \"%s\", want process\n",
				       de->d_name, src);
		}
		status_value(st, "Cpus_preferred_ratio", v, sizeof(v));
		status_value(st, "Cpus_preferred_ratio_source", src, sizeof(src));
		if (strcmp(v, final_ratio) || strcmp(src, "process")) {
			if (rbad++ < 3)
				printf("# thread %s: ratio \"%s %s\", want \"%s process\"\n",
				       de->d_name, v, src, final_ratio);
		}
		/* No request of its own: the thread-level files read "". */
		snprintf(p2, sizeof(p2), "/proc/%d/task/%s/soft_affinity_list",
			 pid, de->d_name);
		if (read_path(p2, buf, sizeof(buf)) == 0 && *buf) {
			if (reqbad++ < 3)
				printf("# thread %s: soft_affinity_list \"%s\", want \"\"\n",
				       de->d_name, buf);
		}
		snprintf(p2, sizeof(p2), "/proc/%d/task/%s/soft_affinity_ratio",
			 pid, de->d_name);
		if (read_path(p2, buf, sizeof(buf)) == 0 && *buf) {
			if (reqbad++ < 3)
				printf("# thread %s: soft_affinity_ratio \"%s\", want \"\"\n",
				       de->d_name, buf);
		}
	}
	if (d)
		closedir(d);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("created=%d\nchecked=%d\nwrite_errors=%d\nbad_mask=%d\nbad_ratio=%d\nbad_source=%d\nbad_request=%d\n",
	       dshm->created, checked, werr, bad, rbad, srcbad, reqbad);
	return 0;
}

/* --- fcred ------------------------------------------------------------------ */

static int send_fd(int sock, int fd)
{
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * A child as `nobody` opens @path (a %d in it: the child's own pid) and
 * passes the fd over a unix socket; we (root) write @val through it.
 */
static int opened_by_nobody_written_by_root(const char *fmt, pid_t target,
					    const char *val)
{
	int sv[2], fd, err, status;
	pid_t pid;
	char go;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1000;
	pid = fork();
	if (pid == 0) {
		char path[128];
		int f;

		close(sv[0]);
		if (drop_to_nobody())
			_exit(2);
		snprintf(path, sizeof(path), fmt, target ? target : getpid());
		f = open(path, O_WRONLY);
		if (f < 0 || send_fd(sv[1], f))
			_exit(3);
		/* Stay alive (our own files) until the parent has written. */
		if (read(sv[1], &go, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	if (fd < 0) {
		close(sv[0]);
		waitpid(pid, &status, 0);
		return -1001;
	}
	err = write_fd(fd, val);
	close(fd);
	if (write(sv[0], "g", 1) < 0)
		err = -1002;
	close(sv[0]);
	waitpid(pid, &status, 0);
	return err;
}

/* The parent's side of a writer child: the errno it sent through @pfd. */
static int child_errno(int pfd[2], pid_t pid)
{
	int err, status;

	close(pfd[1]);
	if (read(pfd[0], &err, sizeof(err)) != sizeof(err))
		err = -1004;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return err;
}

/*
 * A process opens @path while its effective uid is nobody (its saved uid
 * still root), regains root, and writes: as an fd inherited across a
 * setuid exec would be.
 */
static int opened_as_nobody_then_root(const char *path, const char *val)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1000;
	pid = fork();
	if (pid == 0) {
		uid_t uid;
		gid_t gid;
		int f, e;

		close(pfd[0]);
		nobody_ids(&uid, &gid);
		if (setgroups(0, NULL) || setresgid(gid, gid, 0) ||
		    setresuid(uid, uid, 0))
			_exit(2);
		f = open(path, O_WRONLY);
		if (f < 0)
			_exit(3);
		if (setresuid(0, 0, 0) || setresgid(0, 0, 0) || geteuid() != 0)
			_exit(4);
		e = write_fd(f, val);
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(5);
		_exit(0);
	}
	return child_errno(pfd, pid);
}

/* Root opens @path and passes the fd to a child that becomes nobody and writes. */
static int opened_by_root_written_by_nobody(const char *path, const char *val)
{
	int pfd[2], fd = open(path, O_WRONLY);
	pid_t pid;

	if (fd < 0)
		return -errno;
	if (pipe(pfd))
		return -1000;
	pid = fork();
	if (pid == 0) {
		int e;

		close(pfd[0]);
		if (drop_to_nobody())
			_exit(2);
		e = write_fd(fd, val);
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(5);
		_exit(0);
	}
	close(fd);
	return child_errno(pfd, pid);
}

static int mode_fcred(pid_t target)
{
	char path[96];
	int e;

	e = opened_by_nobody_written_by_root("/proc/%d/soft_affinity", target, "1");
	printf("nobody_open_root_write_mask=%s\n", errname(e));
	e = opened_by_nobody_written_by_root("/proc/%d/soft_affinity_list", target, "0");
	printf("nobody_open_root_write_list=%s\n", errname(e));
	e = opened_by_nobody_written_by_root("/proc/%d/soft_affinity_ratio", target, "5:4");
	printf("nobody_open_root_write_ratio=%s\n", errname(e));
	snprintf(path, sizeof(path), "/proc/%%d/task/%d/soft_affinity", target);
	e = opened_by_nobody_written_by_root(path, target, "1");
	printf("nobody_open_root_write_task=%s\n", errname(e));
	snprintf(path, sizeof(path), "/proc/%d/soft_affinity", target);
	e = opened_as_nobody_then_root(path, "1");
	printf("nobody_open_regained_root_write=%s\n", errname(e));
	/* The opener is the owner: allowed, whoever writes. */
	e = opened_by_nobody_written_by_root("/proc/%d/soft_affinity_list", 0, "1");
	printf("nobody_open_own_root_write=%s\n", errname(e));
	/* The opener is root (CAP_SYS_NICE): allowed, whoever writes. */
	snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", target);
	e = opened_by_root_written_by_nobody(path, "2-3");
	printf("root_open_nobody_write=%s\n", errname(e));
	return 0;
}

/* --- storm ------------------------------------------------------------------ */

struct storm_shm {
	volatile int created;		/* storm process: threads running */
	volatile int create_failed;	/* errno of the first failed create */
	volatile int writing;		/* parent: 1 = write now */
	volatile int quit;
	volatile long writes, write_errors;
	volatile int last;		/* index of the last mask written */
	volatile int futex;
};

static struct storm_shm *shm;

static void *storm_thread(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&shm->created, 1, __ATOMIC_RELAXED);
	for (;;)
		syscall(SYS_futex, &shm->futex, FUTEX_WAIT, 0, NULL, NULL, 0);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static double fork_exit_once(void)
{
	double t = softaff_now();
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return -1;
	waitpid(pid, NULL, 0);
	return softaff_now() - t;
}

static int mode_storm(int nthreads, int iters)
{
	static const char *const masks[] = { "0-1", "2-3" };
	const int blocks = 8;		/* per condition, alternating */
	double *before = calloc((size_t)iters, sizeof(double));
	double *during = calloc((size_t)iters, sizeof(double));
	int nb = 0, nd = 0, b, i, checked = 0, bad = 0;
	pid_t storm, writer;
	double t0, create_s, write_time = 0;
	long writes0;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED || !before || !during)
		return 1;
	t0 = softaff_now();
	storm = fork();
	if (storm == 0) {
		pthread_attr_t attr;

		setrlimit(RLIMIT_NPROC, &rl);
		if (drop_to_nobody())
			_exit(2);
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN > 16384 ?
					  PTHREAD_STACK_MIN : 16384);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		for (i = 0; i < nthreads; i++) {
			pthread_t t;
			int e = pthread_create(&t, &attr, storm_thread, NULL);

			if (e) {
				shm->create_failed = e;
				break;
			}
		}
		while (!shm->quit)
			sleep_us(10000);
		_exit(0);
	}
	if (storm < 0) {
		printf("fork_error=%s\n", strerror(errno));
		return 1;
	}
	while (shm->created < nthreads && !shm->create_failed &&
	       softaff_now() - t0 < 600)
		sleep_us(20000);
	/* the created count can lag the failure by the threads still starting */
	sleep_us(200000);
	create_s = softaff_now() - t0;
	printf("threads=%d\ncreated=%d\ncreate_seconds=%.1f\ncreate_error=%s\n",
	       nthreads, shm->created, create_s,
	       shm->create_failed ? strerror(shm->create_failed) : "none");
	fflush(stdout);

	writer = fork();
	if (writer == 0) {
		char path[64];
		int fd;

		if (drop_to_nobody())
			_exit(2);
		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", storm);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(3);
		while (!shm->quit) {
			if (!shm->writing) {
				sleep_us(1000);
				continue;
			}
			if (write_fd(fd, masks[shm->writes & 1]))
				shm->write_errors++;
			else
				shm->last = (int)(shm->writes & 1);
			shm->writes++;
		}
		_exit(0);
	}
	if (writer < 0) {
		printf("fork_error=%s\n", strerror(errno));
		shm->quit = 1;
		kill(storm, SIGKILL);
		waitpid(storm, NULL, 0);
		return 1;
	}

	for (b = 0; b < 2 * blocks; b++) {
		bool w = b & 1;
		int k, n = iters / blocks;

		shm->writing = w;
		if (w) {
			/* wait for the writer to be at it */
			double end = softaff_now() + 30;

			writes0 = shm->writes;
			while (shm->writes < writes0 + 2 && softaff_now() < end)
				sleep_us(500);
			if (shm->writes < writes0 + 2) {
				printf("writer_stuck=1\n");
				break;
			}
		} else {
			sleep_us(20000);	/* let the last write settle */
		}
		{
			double ts = softaff_now();
			long w0 = shm->writes;

			for (k = 0; k < n; k++) {
				double l = fork_exit_once();

				if (w)
					during[nd++] = l;
				else
					before[nb++] = l;
			}
			if (w) {
				write_time += softaff_now() - ts;
				(void)w0;
			}
		}
	}
	shm->writing = 0;
	sleep_us(20000);
	printf("writes=%ld\nwrite_errors=%ld\nwrites_per_s=%.0f\n", shm->writes,
	       shm->write_errors, write_time > 0 ? shm->writes / write_time : 0);

	/*
	 * Every thread of the storm process shows the last mask written, from
	 * the process level, and the process file reads it.
	 */
	{
		char path[64], buf[64], st[4096], v[128], src[64];
		uint64_t want = shm->last ? 0xc : 0x3, m;
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/soft_affinity_list", storm);
		if (read_path(path, buf, sizeof(buf)) || strcmp(buf, masks[shm->last]))
			bad++;
		snprintf(path, sizeof(path), "/proc/%d/task", storm);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			if (read_status(storm, de->d_name, st, sizeof(st)))
				continue;
			checked++;
			status_value(st, "Cpus_preferred_list", v, sizeof(v));
			status_value(st, "Cpus_preferred_source", src, sizeof(src));
			if (softaff_parse_cpulist64(v, &m) || m != want ||
			    strcmp(src, "process"))
				bad++;
		}
		if (d)
			closedir(d);
		printf("final_checked=%d\nfinal_bad=%d\nfinal_mask=%s\n", checked,
		       bad, masks[shm->last]);
	}
	shm->quit = 1;
	kill(storm, SIGKILL);
	waitpid(writer, NULL, 0);
	waitpid(storm, NULL, 0);

	if (!nb || !nd) {
		printf("samples_before=%d\nsamples_during=%d\n", nb, nd);
		return 1;
	}
	qsort(before, (size_t)nb, sizeof(double), cmp_double);
	qsort(during, (size_t)nd, sizeof(double), cmp_double);
	printf("samples_before=%d\nsamples_during=%d\n", nb, nd);
	printf("before_p50_us=%.0f\nbefore_p99_us=%.0f\nbefore_max_us=%.0f\n",
	       pct(before, nb, 0.5) * 1e6, pct(before, nb, 0.99) * 1e6,
	       before[nb - 1] * 1e6);
	printf("during_p50_us=%.0f\nduring_p99_us=%.0f\nduring_max_us=%.0f\n",
	       pct(during, nd, 0.5) * 1e6, pct(during, nd, 0.99) * 1e6,
	       during[nd - 1] * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "park"))
		return mode_park(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "later"))
		return mode_later(atof(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "during"))
		return mode_during(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "fcred"))
		return mode_fcred(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "storm"))
		return mode_storm(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr,
		"usage: softaff_pref park N | later DELAY N | during ROUNDS | fcred PID | storm N ITER\n");
	return 2;
}
