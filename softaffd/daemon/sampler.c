// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "util.h"

/*
 * The "cpuN v0 v1 ..." lines of /proc/stat and /proc/schedstat, both a
 * CPU per line with its counters: calls found(cpu, v, n, arg) for each,
 * with up to 8 values (missing ones 0).  0, a negative return of
 * found(), or -EINVAL for a malformed cpu line or no cpu line at all.
 */
static int for_each_cpu_line(const char *buf, struct cpuset *present,
			     int (*found)(unsigned int cpu,
					  const unsigned long long *v, int n,
					  void *arg),
			     void *arg)
{
	const char *p = buf;

	cpuset_zero(present);
	while (p && *p) {
		if (!strncmp(p, "cpu", 3) && p[3] >= '0' && p[3] <= '9') {
			unsigned long long v[8] = {0}, cpu;
			char *end;
			int n, r;

			errno = 0;
			cpu = strtoull(p + 3, &end, 10);
			/* A CPU beyond CPUSET_MAX could not be a target. */
			if (errno || cpu >= CPUSET_MAX || *end != ' ')
				return -EINVAL;
			p = end;
			for (n = 0; n < 8; n++) {
				while (*p == ' ')
					p++;
				if (*p < '0' || *p > '9')
					break;
				v[n] = strtoull(p, &end, 10);
				p = end;
			}
			r = found((unsigned int)cpu, v, n, arg);
			if (r < 0)
				return r;
			cpuset_set(present, (unsigned int)cpu);
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return cpuset_empty(present) ? -EINVAL : 0;
}

/*
 * /proc/stat:
 *   cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0
 *   cpu0 1393280 32966 572056 13343292 6130 0 17875 0 0 0
 *        user    nice  system  idle     iowait irq softirq steal guest gnice
 *
 * busy = user + nice + system + irq + softirq + steal; idle and iowait
 * are capacity nobody used.  guest time is already inside user.
 */
/*
 * The per-CPU arrays, one block carved in six, copied into a larger one
 * when a CPU id does not fit: on a machine whose CPU ids are dense, once.
 */
int sampler_reserve(struct sampler *s, unsigned int ncpus)
{
	size_t per = 2 * sizeof(struct cpu_times) + 2 * sizeof(double) +
		     2 * sizeof(uint64_t);
	struct sampler old = *s;
	char *blk;

	if (ncpus <= s->ncpus)
		return 0;
	blk = calloc(ncpus, per);
	if (!blk)
		return -ENOMEM;
	s->prev = (struct cpu_times *)blk;
	s->now = s->prev + ncpus;
	s->util = (double *)(s->now + ncpus);
	s->wait = s->util + ncpus;
	s->prev_delay = (uint64_t *)(s->wait + ncpus);
	s->now_delay = s->prev_delay + ncpus;
	s->ncpus = ncpus;
	if (!old.ncpus)
		return 0;
	memcpy(s->prev, old.prev, old.ncpus * sizeof(*s->prev));
	memcpy(s->now, old.now, old.ncpus * sizeof(*s->now));
	memcpy(s->util, old.util, old.ncpus * sizeof(*s->util));
	memcpy(s->wait, old.wait, old.ncpus * sizeof(*s->wait));
	memcpy(s->prev_delay, old.prev_delay,
	       old.ncpus * sizeof(*s->prev_delay));
	memcpy(s->now_delay, old.now_delay, old.ncpus * sizeof(*s->now_delay));
	free(old.prev);
	return 0;
}

/* Room for cpu: the arrays grow by 64 CPUs, a cpuset word, at a time. */
static int reserve_cpu(struct sampler *s, unsigned int cpu)
{
	return cpu < s->ncpus ? 0 : sampler_reserve(s, (cpu / 64 + 1) * 64);
}

static int found_times(unsigned int cpu, const unsigned long long *v, int n,
		       void *arg)
{
	struct sampler *s = arg;
	struct cpu_times *times;

	/* Kernels since 2.6.11 print at least 8 fields. */
	if (n < 4)
		return -EINVAL;
	if (reserve_cpu(s, cpu) < 0)
		return -ENOMEM;
	times = s->now;
	times[cpu].total = 0;
	for (int i = 0; i < 8; i++)
		times[cpu].total += v[i];
	times[cpu].busy = times[cpu].total - v[3] - v[4];
	return 0;
}

int sampler_feed(struct sampler *s, const char *buf)
{
	struct cpu_times *now = s->now;
	struct cpuset present;
	int c, r;

	r = for_each_cpu_line(buf, &present, found_times, s);
	if (r < 0)
		return r;
	now = s->now; /* moved if a CPU id did not fit */
	cpuset_zero(&s->valid);
	for_each_cpu (c, &present) {
		const struct cpu_times *o = &s->prev[c];

		if (!cpuset_test(&s->prev_present, (unsigned int)c))
			continue;
		/* Counters going backwards mean hotplug: skip a round. */
		if (now[c].total <= o->total || now[c].busy < o->busy)
			continue;
		uint64_t dt = now[c].total - o->total;
		uint64_t db = now[c].busy - o->busy;
		s->util[c] = db >= dt ? 1.0 : (double)db / (double)dt;
		cpuset_set(&s->valid, (unsigned int)c);
	}
	for_each_cpu (c, &present)
		s->prev[c] = now[c];
	s->prev_present = present;
	return 0;
}

/*
 * /proc/schedstat, version 15:
 *   cpu0 0 0 3045 1120 1630 837 8800532 1503221 1925
 *        yld 0 schedule goidle ttwu ttwu_local run_ns run_delay_ns slices
 *   domain0 ... (skipped)
 */
static int found_delay(unsigned int cpu, const unsigned long long *v, int n,
		       void *arg)
{
	struct sampler *s = arg;

	if (n < 8)
		return -EINVAL;
	if (reserve_cpu(s, cpu) < 0)
		return -ENOMEM;
	s->now_delay[cpu] = v[7];
	return 0;
}

int sampler_feed_delay(struct sampler *s, const char *buf, uint64_t now_ns)
{
	uint64_t dt = now_ns - s->prev_delay_ns;
	struct cpuset present;
	int c, r;

	cpuset_zero(&s->wait_valid);
	r = for_each_cpu_line(buf, &present, found_delay, s);
	if (r < 0) {
		cpuset_zero(&s->prev_delay_present);
		return r;
	}
	for_each_cpu (c, &present) {
		if (!cpuset_test(&s->prev_delay_present, (unsigned int)c) ||
		    now_ns <= s->prev_delay_ns ||
		    s->now_delay[c] < s->prev_delay[c])
			continue;
		s->wait[c] = (double)(s->now_delay[c] - s->prev_delay[c]) /
			     (double)dt;
		cpuset_set(&s->wait_valid, (unsigned int)c);
	}
	for_each_cpu (c, &present)
		s->prev_delay[c] = s->now_delay[c];
	s->prev_delay_present = present;
	s->prev_delay_ns = now_ns;
	return 0;
}

/* ~100 bytes per CPU line */
#define SAMPLER_BUF (1 << 18)
/* A cpu line and a line per sched domain, ~250 bytes each, per CPU. */
#define DELAY_BUF (1 << 22)

int sampler_update(struct sampler *s, const char *proc, bool delays)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	if (!s->buf)
		s->buf = malloc(SAMPLER_BUF);
	if (delays && !s->delay_buf)
		s->delay_buf = malloc(DELAY_BUF);
	if (!s->buf || (delays && !s->delay_buf))
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/stat", proc);
	n = read_file(path, s->buf, SAMPLER_BUF);
	if (n < 0)
		return (int)n;
	r = sampler_feed(s, s->buf);
	if (r < 0)
		return r;
	n = -ENOENT;
	if (delays) {
		snprintf(path, sizeof(path), "%s/schedstat", proc);
		n = read_file(path, s->delay_buf, DELAY_BUF);
	}
	if (n < 0) {
		cpuset_zero(&s->wait_valid);
		cpuset_zero(&s->prev_delay_present);
		return 0;
	}
	sampler_feed_delay(s, s->delay_buf, monotonic_ns());
	return 0;
}

void sampler_done(struct sampler *s)
{
	free(s->prev); /* the per-CPU block */
	s->prev = s->now = NULL;
	s->util = s->wait = NULL;
	s->prev_delay = s->now_delay = NULL;
	s->ncpus = 0;
	free(s->buf);
	s->buf = NULL;
	free(s->delay_buf);
	s->delay_buf = NULL;
}

void sampler_node_util(const struct sampler *s, const struct topology *t,
		       double *ret)
{
	for (unsigned int i = 0; i < t->nnodes; i++) {
		double sum = 0;
		int c, n = 0;

		for_each_cpu (c, &t->node_cpus[i]) {
			if (!cpuset_test(&s->valid, (unsigned int)c))
				continue;
			sum += s->util[c];
			n++;
		}
		if (n)
			ret[i] = sum / n;
	}
}
