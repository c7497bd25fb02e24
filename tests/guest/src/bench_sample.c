// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_sample INTERVAL_MS NAME0 [NAME1 ...]: where the benchmark
 * instances run, by sampling.
 *
 * Instance i is every process whose comm is NAMEi (a benchmark started
 * through a symlink of that name, and its forked children), or, for
 * @NAMEi, every process in a cgroup named NAMEi (the last component of
 * its cgroup v2 path, such as a systemd scope "sa-bench0-3.scope"): a
 * benchmark that renames itself, as perf bench does ("sched-pipe"),
 * keeps its cgroup.  Every
 * INTERVAL_MS the sampler reads /proc/PID/stat of each such process (and
 * /proc/PID/task/TID/stat of each thread when it has more than one):
 * utime+stime and the CPU it last ran on (field 39).  The CPU time a
 * thread used since the previous sample is charged to the NUMA node of
 * that CPU, and a change of node between two samples counts as one
 * cross-node move (a lower bound: moves there and back between two
 * samples are not seen).  Processes that were already there at the
 * first sample and did not match are not read again, so the cost per
 * sample is one stat read per benchmark thread plus a readdir of /proc.
 *
 * On SIGTERM or SIGINT it samples once more and prints one line per
 * instance:
 *   SAMPLE inst=I ticks=T node0=T0 node1=T1 ... xnode=M threads=N samples=S
 * ticks are USER_HZ clock ticks (1/100 s on x86).  With
 * BENCH_SAMPLE_READY=FILE in the environment it creates FILE after the
 * first sample: processes that are not yet the benchmark at that sample
 * are never read, so start the benchmark only after that.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_INST 8
#define MAX_NODES 64
#define MAX_CPUS 1024

enum { P_UNKNOWN, P_OLD, P_MATCH, P_NEW };

struct tstate {
	unsigned long long start;	/* starttime, to tell a reused TID */
	unsigned long long ticks;	/* utime + stime at the last sample */
	int node;			/* node at the last sample, -1 none */
	int inst;
};

static volatile sig_atomic_t stop;
static int nnames;
static int ncgroup_names; /* how many of them are @NAME */
static char *names[MAX_INST];
static int cpu_node[MAX_CPUS];
static int nnodes;
static unsigned char *pstate;	/* per PID */
static struct tstate *tst;	/* per TID */
static long pid_max;
static unsigned long long node_ticks[MAX_INST][MAX_NODES];
static unsigned long long xnode[MAX_INST];
static unsigned long threads[MAX_INST];
static unsigned long samples;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static long read_long_file(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* node N's cpulist, "0-1,4" */
static void read_topology(void)
{
	char path[96], buf[512];

	for (int c = 0; c < MAX_CPUS; c++)
		cpu_node[c] = 0;
	for (int n = 0; n < MAX_NODES; n++) {
		FILE *f;
		char *p;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		nnodes = n + 1;
		p = buf;
		while (*p && *p != '\n') {
			char *end;
			long a = strtol(p, &end, 10), b = a;

			if (end == p)
				break;
			p = end;
			if (*p == '-') {
				b = strtol(p + 1, &end, 10);
				p = end;
			}
			for (long c = a; c <= b && c < MAX_CPUS; c++)
				if (c >= 0)
					cpu_node[c] = n;
			if (*p == ',')
				p++;
		}
	}
	if (nnodes == 0)
		nnodes = 1;
}

struct stat_fields {
	char comm[32];
	unsigned long long ticks, start;
	long nthreads;
	int cpu;
};

/* A small file's contents, NUL terminated; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static int read_stat(const char *path, struct stat_fields *s)
{
	char buf[1024], *p, *q;
	int field;

	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strchr(buf, '(');
	q = strrchr(buf, ')');
	if (!p || !q || q < p)
		return -1;
	snprintf(s->comm, sizeof(s->comm), "%.*s", (int)(q - p - 1), p + 1);
	s->ticks = s->start = 0;
	s->nthreads = 1;
	s->cpu = -1;
	/* q + 2 is field 3 (state) */
	p = q + 2;
	for (field = 3; *p && field <= 39; field++) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);

		switch (field) {
		case 14:
		case 15:
			s->ticks += v;
			break;
		case 20:
			s->nthreads = (long)v;
			break;
		case 22:
			s->start = v;
			break;
		case 39:
			s->cpu = (int)v;
			break;
		}
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	return s->cpu >= 0 ? 0 : -1;
}

static int match(const char *comm)
{
	for (int i = 0; i < nnames; i++)
		if (names[i][0] != '@' && !strcmp(comm, names[i]))
			return i;
	return -1;
}

/*
 * /proc/PID/cgroup, the cgroup v2 line:
 *   0::/system.slice/sa-bench0-3.scope
 * Its last component against the @NAMEs.
 */
static int match_cgroup(long pid)
{
	char path[64], buf[4096], *line, *last;
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	line = strstr(buf, "0::");
	if (!line || (line != buf && line[-1] != '\n'))
		return -1;
	line += 3;
	line[strcspn(line, "\n")] = '\0';
	last = strrchr(line, '/');
	last = last ? last + 1 : line;
	for (i = 0; i < nnames; i++)
		if (names[i][0] == '@' && !strcmp(last, names[i] + 1))
			return i;
	return -1;
}

static void account(long tid, int inst, const struct stat_fields *s)
{
	struct tstate *t;
	int node = (s->cpu >= 0 && s->cpu < MAX_CPUS) ? cpu_node[s->cpu] : 0;

	if (tid <= 0 || tid >= pid_max)
		return;
	t = &tst[tid];
	if (t->node < 0 || t->start != s->start || t->inst != inst) {
		/* first sight: what it ran before it was seen counts where it is */
		t->start = s->start;
		t->ticks = 0;
		t->node = -1;
		t->inst = inst;
		threads[inst]++;
	}
	if (s->ticks > t->ticks)
		node_ticks[inst][node] += s->ticks - t->ticks;
	if (t->node >= 0 && t->node != node)
		xnode[inst]++;
	t->ticks = s->ticks;
	t->node = node;
}

static void sample(int first)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[96];

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat_fields s;
		long pid;
		int inst;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, NULL, 10);
		if (pid <= 0 || pid >= pid_max || pstate[pid] == P_OLD)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_stat(path, &s) < 0)
			continue;
		inst = match(s.comm);
		if (inst < 0 && ncgroup_names)
			inst = match_cgroup(pid);
		if (inst < 0) {
			pstate[pid] = first ? P_OLD : P_NEW;
			continue;
		}
		pstate[pid] = P_MATCH;
		if (s.nthreads <= 1) {
			account(pid, inst, &s);
			continue;
		}
		DIR *td;
		struct dirent *te;

		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		td = opendir(path);
		if (!td)
			continue;
		while ((te = readdir(td))) {
			struct stat_fields ts;
			long tid;

			if (!isdigit((unsigned char)te->d_name[0]))
				continue;
			tid = strtol(te->d_name, NULL, 10);
			snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", pid, tid);
			if (read_stat(path, &ts) == 0)
				account(tid, inst, &ts);
		}
		closedir(td);
	}
	closedir(d);
	samples++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long interval_ms;
	struct timespec ts;

	if (argc < 3 || argc - 2 > MAX_INST) {
		fprintf(stderr, "usage: %s INTERVAL_MS NAME0|@CGROUP0 [NAME1 ...] (at most %d)\n",
			argv[0], MAX_INST);
		return 2;
	}
	interval_ms = strtol(argv[1], NULL, 10);
	if (interval_ms <= 0)
		return 2;
	nnames = argc - 2;
	for (int i = 0; i < nnames; i++) {
		names[i] = argv[i + 2];
		ncgroup_names += names[i][0] == '@';
	}
	pid_max = read_long_file("/proc/sys/kernel/pid_max", 32768) + 1;
	pstate = calloc((size_t)pid_max, 1);
	tst = calloc((size_t)pid_max, sizeof(*tst));
	if (!pstate || !tst) {
		perror("calloc");
		return 2;
	}
	for (long i = 0; i < pid_max; i++)
		tst[i].node = -1;
	read_topology();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	sample(1);
	if (getenv("BENCH_SAMPLE_READY")) {
		/* the caller starts the benchmark only after the first sample */
		int fd = open(getenv("BENCH_SAMPLE_READY"),
			      O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0)
			close(fd);
	}
	ts.tv_sec = interval_ms / 1000;
	ts.tv_nsec = (interval_ms % 1000) * 1000000L;
	while (!stop) {
		nanosleep(&ts, NULL);
		sample(0);
	}
	for (int i = 0; i < nnames; i++) {
		unsigned long long total = 0;

		for (int n = 0; n < nnodes; n++)
			total += node_ticks[i][n];
		printf("SAMPLE inst=%d ticks=%llu", i, total);
		for (int n = 0; n < nnodes; n++)
			printf(" node%d=%llu", n, node_ticks[i][n]);
		printf(" xnode=%llu threads=%lu samples=%lu\n", xnode[i], threads[i], samples);
	}
	return 0;
}
