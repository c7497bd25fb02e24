// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_fuzz: random writes to the soft affinity procfs files and the
 * two sysctls, checking the errno, that a refused write changed nothing and
 * that an accepted one stored what the model of issue #13 says.
 *
 *   /proc/self/task/TID/soft_affinity{,_list}   one thread's request (of two)
 *   /proc/self/soft_affinity{,_list}            the process's request
 *   /proc/self/task/TID/soft_affinity_ratio     one thread's ratio
 *   /proc/self/soft_affinity_ratio              the process's ratio
 *   /proc/sys/kernel/sched_{preferred,allowed}
 *
 * The model: a thread's own request and its process's are kept apart; the
 * one written last is in force (masks and ratios each on their own).  A
 * thread reads request & hard mask, or its hard mask when there is no
 * request or they are disjoint (the second thread has a narrower hard
 * mask, so process requests outside it are stored and show as its hard
 * mask).  A ratio reads "A:P task", or "A:P default" with the sysctls'
 * values when no request is in force.
 *
 * Inputs: random bytes, random strings over the masks' alphabet, mutations
 * of valid values, lengths 0, PAGE_SIZE +- 1 and up to 1 MiB, embedded
 * NULs, with and without a newline, pwrite() at an offset and a value split
 * over two write()s.  Checks after every write:
 *
 *   refused  errno is EINVAL (the only one documented for root on a live
 *            task or a sysctl; ESPIPE for pwrite() on the soft_affinity
 *            files, which are seq_files) and every mask / value is as
 *            before;
 *   accepted the whole count was consumed (procfs), the mask is not empty
 *            and lies within the hard mask, every thread reads what the
 *            model gives (a clean known input: its value; an odd spelling
 *            the kernel took: what the leader or the written thread now
 *            reads, which the other thread must then agree with); a ratio
 *            is "A:P task" with both in 1..10000; a sysctl stays within
 *            1..10000 and, if it changed,
 *            to the number the input starts with (base 0, as
 *            proc_dointvec: "065" is 53), never on a write at an offset.
 *   always   every thread reads what the model gives: the thread that
 *            was not written is unchanged, a ratio write leaves the masks
 *            alone and a mask write the ratios.
 *
 * Runs as root in the guest; softaffd must not be running (it writes the
 * sysctls).  usage: softaff_fuzz [-n ITERATIONS] [-s SEED]; prints TAP.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "softaff_test.h"

#define MAX_LEN		(1 << 20)

enum {
	F_TID, F_TID_LIST, F_PROC, F_PROC_LIST, F_TID_RATIO, F_PROC_RATIO,
	F_PREF, F_ALLOWED, F_NR
};

static const char *const fnames[F_NR] = {
	"task/TID/soft_affinity", "task/TID/soft_affinity_list",
	"soft_affinity", "soft_affinity_list",
	"task/TID/soft_affinity_ratio", "soft_affinity_ratio",
	"sched_preferred", "sched_allowed",
};

static bool is_ratio(int f)
{
	return f == F_TID_RATIO || f == F_PROC_RATIO;
}

static bool is_mask(int f)
{
	return f < F_TID_RATIO;
}

static bool is_proc(int f)	/* a process-level file */
{
	return f == F_PROC || f == F_PROC_LIST || f == F_PROC_RATIO;
}

/*
 * The model.  A request: a mask (0 = none) or a ratio (a = 0: none), and
 * when it was written.  Thread t's request is in force if written after
 * the process's.
 */
struct req {
	uint64_t mask;
	unsigned long seq;
};

struct rreq {
	unsigned int a, p;
	unsigned long seq;
};

static struct req m_thr[2], m_proc;
static struct rreq r_thr[2], r_proc;
static unsigned long seq_now;

static uint64_t seed_state;
static int ncpus;
static uint64_t all_mask;
static pid_t tids[2];
static unsigned long tried[F_NR], refused[F_NR], accepted[F_NR];
static int failures, reported;
static char *buf;
static long pagesz;

static uint64_t rnd(void)	/* xorshift64* */
{
	seed_state ^= seed_state >> 12;
	seed_state ^= seed_state << 25;
	seed_state ^= seed_state >> 27;
	return seed_state * 2685821657736338717ULL;
}

static unsigned int rndn(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static int read_str(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

static uint64_t soft_of(int t)
{
	char path[96], s[128];
	uint64_t m = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/soft_affinity_list",
		 tids[t]);
	if (read_str(path, s, sizeof(s)) || softaff_parse_cpulist64(s, &m))
		return ~0ULL;
	return m;
}

static uint64_t hard_of(int t)
{
	cpu_set_t set;
	uint64_t m = 0;
	int i;

	if (sched_getaffinity(tids[t], sizeof(set), &set))
		return 0;
	for (i = 0; i < 64; i++)
		if (CPU_ISSET(i, &set))
			m |= 1ULL << i;
	return m;
}

/* Thread t's soft_affinity_ratio, without the newline ("" if unreadable). */
static const char *ratio_of(int t, char *out, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/self/task/%d/soft_affinity_ratio",
		 tids[t]);
	if (read_str(path, out, len))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static long sysctl_of(int f);

/* What the model says thread t reads. */
static uint64_t want_mask(int t, uint64_t hard)
{
	uint64_t req = m_thr[t].seq > m_proc.seq ? m_thr[t].mask : m_proc.mask;

	return (req & hard) ? req & hard : hard;
}

static void want_ratio(int t, char *out, size_t len)
{
	const struct rreq *r = r_thr[t].seq > r_proc.seq ? &r_thr[t] : &r_proc;

	if (r->a)
		snprintf(out, len, "%u:%u task", r->a, r->p);
	else
		snprintf(out, len, "%ld:%ld default", sysctl_of(F_ALLOWED),
			 sysctl_of(F_PREF));
}

/* "A:P task" -> a, p (1..10000 each); "...default" -> a = 0; -1 if neither. */
static int parse_ratio_read(const char *s, unsigned int *a, unsigned int *p)
{
	char src[16];

	if (sscanf(s, "%u:%u %15s", a, p, src) != 3 || *a < 1 || *a > 10000 ||
	    *p < 1 || *p > 10000)
		return -1;
	if (!strcmp(src, "default")) {
		*a = *p = 0;
		return 0;
	}
	return strcmp(src, "task") ? -1 : 0;
}

static long sysctl_of(int f)
{
	char s[64];

	if (read_str(f == F_PREF ? "/proc/sys/kernel/sched_preferred" :
				   "/proc/sys/kernel/sched_allowed", s, sizeof(s)))
		return -1;
	return strtol(s, NULL, 10);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	if (++reported > 20)
		return;
	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Printable rendering of the first bytes of an input, for messages. */
static const char *show(const char *s, size_t len)
{
	static char out[128];
	size_t i, o = 0;

	/* Room left for one \\xNN and the "...(LEN)" tail: o stays < 128. */
	for (i = 0; i < len && o < sizeof(out) - 32; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isprint(c) && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
	}
	if (i < len)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "...(%zu)", len);
	if (o >= sizeof(out))
		o = sizeof(out) - 1;
	out[o] = '\0';
	return out;
}

struct input {
	size_t len;
	bool known;		/* a clean value: a success must give .mask/.val */
	bool must_fail;		/* can never be valid */
	uint64_t mask;
	long val;
	int how;		/* 0 write, 1 pwrite at an offset, 2 two writes */
	off_t off;
};

static uint64_t random_cpus(void)
{
	uint64_t m;

	do
		m = rnd() & all_mask;
	while (!m);
	return m;
}

static size_t fmt_list(uint64_t m, char *s)
{
	size_t o = 0;
	int i, j;

	for (i = 0; i < 64; i = j + 1) {
		j = i;
		if (!(m & (1ULL << i)))
			continue;
		while (j + 1 < 64 && (m & (1ULL << (j + 1))))
			j++;
		o += (size_t)sprintf(s + o, o ? ",%d" : "%d", i);
		if (j > i)
			o += (size_t)sprintf(s + o, "-%d", j);
	}
	return o;
}

/*
 * The kernel's isspace() (lib/ctype.c), which proc_dointvec uses to skip
 * leading blanks: the C locale's six plus 0xa0, Latin-1's no-break space.
 */
static bool kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* A valid value for file @f into buf; its length. */
static size_t valid_value(int f, struct input *in)
{
	if (is_ratio(f)) {
		if (!rndn(8)) {
			in->val = 0;	/* "default" */
			return (size_t)sprintf(buf, "default");
		}
		in->mask = 1 + rndn(10000);	/* allowed */
		in->val = 1 + rndn(10000);	/* preferred */
		return (size_t)sprintf(buf, "%llu:%ld",
				       (unsigned long long)in->mask, in->val);
	}
	if (f == F_PREF || f == F_ALLOWED) {
		in->val = 1 + rndn(10000);
		return (size_t)sprintf(buf, "%ld", in->val);
	}
	in->mask = random_cpus();
	if (f == F_TID_LIST || f == F_PROC_LIST)
		return fmt_list(in->mask, buf);
	return (size_t)sprintf(buf, "%llx", (unsigned long long)in->mask);
}

/* Ratio inputs that must be refused (the README's table). */
static const char *const bad_ratio[] = {
	"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
	"\n", "-1:1", "5:4:3", "4294967297:1", "defaul", "defaultx",
};

static void make_input(int f, struct input *in)
{
	static const char alphabet[] = "0123456789abcdefABCDEF,-:/ \n\tNalx+";
	unsigned int r = rndn(100);
	size_t i, len;

	memset(in, 0, sizeof(*in));
	if (is_ratio(f) && r < 10) {	/* known bad */
		const char *b = bad_ratio[rndn(sizeof(bad_ratio) / sizeof(*bad_ratio))];

		len = strlen(b);
		memcpy(buf, b, len);
		in->must_fail = true;
		in->len = len;
		return;
	}
	if (r < 15) {		/* random bytes */
		len = rndn(64);
		for (i = 0; i < len; i++)
			buf[i] = (char)rnd();
	} else if (r < 35) {	/* random strings of the right alphabet */
		len = rndn(40);
		for (i = 0; i < len; i++)
			buf[i] = alphabet[rndn(sizeof(alphabet) - 1)];
	} else if (r < 55) {	/* mutations of a valid value */
		unsigned int k, nmut = 1 + rndn(3);

		len = valid_value(f, in);
		for (k = 0; k < nmut; k++) {
			unsigned int pos = rndn((unsigned int)len + 1);

			switch (rndn(3)) {
			case 0:	/* replace */
				if (pos < len)
					buf[pos] = rndn(2) ? alphabet[rndn(sizeof(alphabet) - 1)] : (char)rnd();
				break;
			case 1:	/* insert */
				memmove(buf + pos + 1, buf + pos, len - pos);
				buf[pos] = rndn(2) ? alphabet[rndn(sizeof(alphabet) - 1)] : (char)rnd();
				len++;
				break;
			default: /* delete */
				if (pos < len) {
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
				}
			}
		}
	} else if (r < 75) {	/* valid, clean: must be taken as is */
		len = valid_value(f, in);
		in->known = true;
		if (rndn(2))
			buf[len++] = '\n';
	} else if (r < 83) {	/* valid, then a NUL and garbage */
		size_t extra = rndn(8);

		len = valid_value(f, in);
		buf[len++] = '\0';
		for (i = 0; i < extra; i++)
			buf[len++] = (char)rnd();
	} else if (r < 90) {	/* sizes around a page and beyond */
		static const long sizes[] = { -1, 0, 1, 16, 4096 * 16, MAX_LEN };
		long sz = sizes[rndn(6)];
		char fill = "0, 1f"[rndn(5)];

		len = (size_t)(sz < 16 ? pagesz + sz : sz);
		if (len > MAX_LEN)
			len = MAX_LEN;
		memset(buf, fill, len);
		if (rndn(2))
			memcpy(buf + len - 2, "1\n", 2);
	} else if (r < 95) {	/* empty */
		len = 0;
	} else {		/* valid, written at an offset or in two parts */
		len = valid_value(f, in);
		buf[len++] = '\n';
		in->how = 1 + rndn(2);
		in->off = 1 + rndn(64);
	}
	in->len = len;
}

/* Check every thread against the model; after @f's write "@what". */
static void verify(int iter, int f, const char *what, const uint64_t *hard)
{
	char got[64], want[64];
	int t;

	for (t = 0; t < 2; t++) {
		uint64_t m = soft_of(t), w = want_mask(t, hard[t]);

		if (!m || (m & ~hard[t]))
			fail("%d: %s \"%s\": thread %d mask %llx, hard %llx", iter,
			     fnames[f], what, t, (unsigned long long)m,
			     (unsigned long long)hard[t]);
		else if (m != w)
			fail("%d: %s \"%s\": thread %d mask %llx, the model says %llx",
			     iter, fnames[f], what, t, (unsigned long long)m,
			     (unsigned long long)w);
		ratio_of(t, got, sizeof(got));
		want_ratio(t, want, sizeof(want));
		if (strcmp(got, want))
			fail("%d: %s \"%s\": thread %d ratio \"%s\", the model says \"%s\"",
			     iter, fnames[f], what, t, got, want);
		if (m != w || strcmp(got, want)) {
			/* Resynchronise: report one bug once. */
			unsigned int a, p;

			m_thr[t].mask = m;
			m_thr[t].seq = ++seq_now;
			if (parse_ratio_read(got, &a, &p) == 0) {
				r_thr[t].a = a;
				r_thr[t].p = p;
				r_thr[t].seq = seq_now;
			}
		}
	}
}

/*
 * An accepted write the model cannot predict (an odd spelling, a value
 * split over two writes): take what the kernel now shows at the level
 * written.  For a process mask, the leader (hard mask: every CPU) shows
 * the request itself.
 */
static void take_stored(int iter, int f, int target, const char *what)
{
	int t = is_proc(f) ? 0 : target;
	char got[64];
	unsigned int a, p;

	if (is_mask(f)) {
		struct req *r = is_proc(f) ? &m_proc : &m_thr[t];

		r->mask = soft_of(t);
		r->seq = ++seq_now;
		return;
	}
	if (parse_ratio_read(ratio_of(t, got, sizeof(got)), &a, &p)) {
		fail("%d: %s \"%s\" accepted: ratio reads \"%s\"", iter,
		     fnames[f], what, got);
		return;
	}
	{
		struct rreq *r = is_proc(f) ? &r_proc : &r_thr[t];

		r->a = a;
		r->p = p;
		r->seq = ++seq_now;
	}
}

static void one(int iter)
{
	int f = (int)rndn(F_NR), target = (int)rndn(2), t, fd, err = 0;
	uint64_t before[2], after[2], hard[2];
	long vbefore = 0, vafter = 0;
	char rbefore[2][64], rafter[2][64];
	struct input in;
	char path[96], what[128];
	ssize_t n = 0, n1 = -1;
	bool procfs = f < F_PREF;

	make_input(f, &in);
	switch (f) {
	case F_TID:
	case F_TID_LIST:
	case F_TID_RATIO:
		snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tids[target],
			 f == F_TID ? "soft_affinity" :
			 f == F_TID_LIST ? "soft_affinity_list" :
					   "soft_affinity_ratio");
		break;
	case F_PROC:
	case F_PROC_LIST:
	case F_PROC_RATIO:
		snprintf(path, sizeof(path), "/proc/self/%s", fnames[f]);
		break;
	default:
		snprintf(path, sizeof(path), "/proc/sys/kernel/%s", fnames[f]);
	}
	for (t = 0; t < 2; t++) {
		before[t] = soft_of(t);
		hard[t] = hard_of(t);
		ratio_of(t, rbefore[t], sizeof(rbefore[t]));
	}
	if (f >= F_PREF)
		vbefore = sysctl_of(f);
	snprintf(what, sizeof(what), "%s", show(buf, in.len));

	tried[f]++;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fail("%d: open %s: %s", iter, path, strerror(errno));
		return;
	}
	if (in.how == 1) {
		n = pwrite(fd, buf, in.len, in.off);
	} else if (in.how == 2) {
		size_t half = in.len / 2;

		/* The second part goes to offset @half (or 0 if the first
		 * was refused): sysctls ignore it, soft_affinity parses it
		 * on its own. */
		n1 = write(fd, buf, half);
		n = write(fd, buf + half, in.len - half);
		if (n1 > 0 || n >= 0) {
			/* Something may have been taken: invariants only. */
			n = n1 > 0 && n >= 0 ? n1 + n : n1 > 0 ? n1 : n;
		}
	} else {
		n = write(fd, buf, in.len);
	}
	if (n < 0)
		err = errno;
	close(fd);

	for (t = 0; t < 2; t++) {
		after[t] = soft_of(t);
		ratio_of(t, rafter[t], sizeof(rafter[t]));
	}
	if (f >= F_PREF)
		vafter = sysctl_of(f);

	if (in.how == 2 && n1 > 0 && err) {
		/* First part taken, second refused: not a refusal. */
		err = 0;
		n = n1;
	}
	if (err) {
		refused[f]++;
		/* seq_file procfs files cannot be pwrite()n: ESPIPE. */
		if (procfs && in.how == 1) {
			if (err != ESPIPE && !(is_ratio(f) && err == EINVAL))
				fail("%d: pwrite to %s: %s, not ESPIPE", iter,
				     fnames[f], strerror(err));
		} else if (err != EINVAL)
			fail("%d: %s \"%s\": %s, not EINVAL", iter, fnames[f],
			     what, strerror(err));
		if (after[0] != before[0] || after[1] != before[1] ||
		    vafter != vbefore || strcmp(rbefore[0], rafter[0]) ||
		    strcmp(rbefore[1], rafter[1]))
			fail("%d: %s \"%s\" refused (%s) but changed %llx,%llx/%s,%s/%ld -> %llx,%llx/%s,%s/%ld",
			     iter, fnames[f], what, strerror(err),
			     (unsigned long long)before[0],
			     (unsigned long long)before[1], rbefore[0],
			     rbefore[1], vbefore,
			     (unsigned long long)after[0],
			     (unsigned long long)after[1], rafter[0], rafter[1],
			     vafter);
		/* Since #13 every clean value is stored (hard mask or not). */
		if (in.known && in.how == 0)
			fail("%d: %s: valid \"%s\" refused: %s", iter, fnames[f],
			     what, strerror(err));
		if (in.how == 2 && n1 < 0 && n < 0)
			return;	/* both parts refused: nothing to model */
		verify(iter, f, what, hard);
		return;
	}
	accepted[f]++;
	if (in.must_fail)
		fail("%d: %s: invalid \"%s\" accepted", iter, fnames[f], what);
	if (procfs && in.how == 1 && !is_ratio(f))
		fail("%d: pwrite to %s accepted", iter, fnames[f]);
	if (procfs && (in.len == 0 || in.len > (size_t)pagesz))
		fail("%d: %s: write of %zu bytes accepted", iter, fnames[f],
		     in.len);
	if (is_ratio(f) && in.len > 31)
		fail("%d: %s: write of %zu bytes accepted", iter, fnames[f],
		     in.len);

	if (f >= F_PREF) {
		const char *p = buf, *end = buf + in.len;
		long lead = -1;

		if (vafter < 1 || vafter > 10000)
			fail("%d: %s = %ld after \"%s\"", iter, fnames[f], vafter,
			     what);
		/* proc_dointvec: blanks, then the number. */
		if (in.how == 2)	/* the second part is ignored */
			end = buf + in.len / 2;
		if (in.how == 1)	/* all of it is ignored */
			end = buf;
		while (p < end && kernel_isspace((unsigned char)*p))
			p++;
		/* Base 0, as proc_get_long(): 0x hex, leading 0 octal. */
		if (p < end && isdigit((unsigned char)*p)) {
			char num[32];
			size_t k = 0;

			while (p + k < end && k < sizeof(num) - 1 &&
			       isxdigit((unsigned char)p[k]) | (p[k] == 'x') |
			       (p[k] == 'X'))
				k++;
			memcpy(num, p, k);
			num[k] = '\0';
			lead = strtol(num, NULL, 0);
		}
		if (vafter != vbefore && vafter != lead)
			fail("%d: %s: \"%s\" (returned %zd) set %ld", iter,
			     fnames[f], what, n, vafter);
		if (in.known && in.how == 0 && vafter != in.val)
			fail("%d: %s: \"%s\" accepted but value is %ld", iter,
			     fnames[f], what, vafter);
		/* Masks unchanged; "default" ratios follow the new value. */
		verify(iter, f, what, hard);
		return;
	}

	if (in.how != 2 && (size_t)n != in.len)
		fail("%d: %s \"%s\": write returned %zd of %zu", iter, fnames[f],
		     what, n, in.len);
	if (in.known && in.how == 0) {
		/* The model takes it as it is. */
		int lvl = is_proc(f) ? -1 : target;

		++seq_now;
		if (is_mask(f)) {
			struct req *r = lvl < 0 ? &m_proc : &m_thr[lvl];

			r->mask = in.mask;
			r->seq = seq_now;
		} else {
			struct rreq *r = lvl < 0 ? &r_proc : &r_thr[lvl];

			r->a = (unsigned int)in.mask;
			r->p = (unsigned int)in.val;
			r->seq = seq_now;
		}
	} else {
		take_stored(iter, f, target, what);
	}
	verify(iter, f, what, hard);
}

int main(int argc, char **argv)
{
	unsigned long seed = (unsigned long)time(NULL) ^ (unsigned long)getpid();
	long saved[2];
	int iters = 3000, opt, i, f;
	pthread_t th;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n': iters = atoi(optarg); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: softaff_fuzz [-n ITERATIONS] [-s SEED]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed_state = seed ? seed : 1;
	printf("# seed %lu (softaff_fuzz -s %lu -n %d repeats this run)\n", seed,
	       seed, iters);
	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus < 1 || ncpus > 63) {
		printf("1..0 # SKIP needs 1..63 CPUs\n");
		return 0;
	}
	if (access("/proc/self/soft_affinity", F_OK)) {
		printf("1..0 # SKIP kernel without soft affinity\n");
		return 0;
	}
	all_mask = (1ULL << ncpus) - 1;
	pagesz = sysconf(_SC_PAGESIZE);
	buf = malloc(MAX_LEN + 64);
	tids[0] = (pid_t)syscall(SYS_gettid);
	pthread_create(&th, NULL, sleeper, NULL);
	while (!tids[1])
		usleep(1000);
	/* The second thread gets a narrower hard mask where there is room,
	 * so that process-wide writes can fail for one thread only. */
	if (ncpus >= 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		for (i = 0; i < ncpus / 2; i++)
			CPU_SET(i, &set);
		sched_setaffinity(tids[1], sizeof(set), &set);
	}
	saved[0] = sysctl_of(F_PREF);
	saved[1] = sysctl_of(F_ALLOWED);
	{
		/* A new process: no request at either level. */
		uint64_t hard[2] = { hard_of(0), hard_of(1) };

		verify(-1, F_TID, "(the start)", hard);
	}

	for (i = 0; i < iters; i++)
		one(i);

	for (f = 0; f < 2; f++) {
		char s[32];
		int fd = open(f ? "/proc/sys/kernel/sched_allowed" :
				  "/proc/sys/kernel/sched_preferred", O_WRONLY);

		if (fd >= 0) {
			snprintf(s, sizeof(s), "%ld\n", saved[f]);
			if (write(fd, s, strlen(s)) < 0)
				perror("restore sysctl");
			close(fd);
		}
	}
	for (f = 0; f < F_NR; f++)
		printf("ok %d - %s: %lu writes, %lu accepted, %lu refused\n",
		       f + 1, fnames[f], tried[f], accepted[f], refused[f]);
	printf("%s %d - %d iterations: every refusal was EINVAL (ESPIPE for pwrite) and changed nothing, every success stored what the model says (%d failures, seed %lu)\n",
	       failures ? "not ok" : "ok", F_NR + 1, iters, failures, seed);
	printf("1..%d\n", F_NR + 1);
	return failures ? 1 : 0;
}
