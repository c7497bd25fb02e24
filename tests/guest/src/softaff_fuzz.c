// SPDX-License-Identifier: GPL-2.0-only
/*
 * softaff_fuzz: random writes to the soft affinity procfs files and the
 * three sysctls, checking the errno, that a refused write changed nothing
 * and that an accepted one stored what the model of abi-v4 (issue #24)
 * says.
 *
 *   /proc/self/task/TID/soft_affinity{,_list}   one thread's request (of two)
 *   /proc/self/soft_affinity{,_list}            the process's request
 *   /proc/self/task/TID/soft_affinity_ratio     one thread's ratio
 *   /proc/self/soft_affinity_ratio              the process's ratio
 *   /proc/sys/kernel/sched_{preferred,allowed,soft_affinity_ratio}
 *
 * The model: each level (thread, process) is, for the mask and for the
 * ratio apart, in one of three states: inherit ("", "\n", "inherit"),
 * none ("none") or set (a mask, a list, "A:P").  A request file reads the
 * request at its level, exactly as written: "", "none" or the value.  What
 * applies to a thread (its status lines) is decided by the first level not
 * in inherit, thread before process (the cgroup of this process sets
 * nothing): a mask gives Cpus_preferred = mask & hard mask, or the hard
 * mask when they are disjoint (the second thread has a narrower hard mask,
 * so process requests outside it or covering it are stored and show as
 * its hard mask), with Cpus_preferred_source thread or process; none or no
 * level gives the hard mask and source none.  A ratio gives
 * Cpus_preferred_ratio A:P with Cpus_preferred_ratio_source thread or
 * process; none or no level gives the sysctls' ratio, source default.
 * kernel.sched_soft_affinity_ratio always reads sched_allowed:sched_preferred.
 *
 * Inputs: random bytes, random strings over the masks' alphabet, mutations
 * of valid values (the words included), lengths 0, PAGE_SIZE +- 1 and up
 * to 1 MiB, embedded NULs, with and without a newline, pwrite() at an
 * offset and a value split over two write()s.  Checks after every write:
 *
 *   refused  errno is EINVAL (the only one documented for root on a live
 *            task or a sysctl; ESPIPE for pwrite() on the soft_affinity
 *            files, which are seq_files) and nothing changed: no request
 *            file, status line or sysctl;
 *   accepted the whole count was consumed (procfs); a clean known input
 *            is stored as written (its level reads it back exactly); an
 *            odd spelling the kernel took is taken into the model as the
 *            level now reads it, which must be "", "none" or a valid value;
 *            a 0-byte write that is accepted leaves the level in inherit;
 *            a sysctl stays within 1..10000 and, if it changed, to the
 *            number the input starts with (base 0, as proc_dointvec: "065"
 *            is 53), never on a write at an offset; the ratio sysctl reads
 *            A:P, a known value exactly.
 *   always   every request file reads what the model holds and every
 *            thread's status what the model decides: the thread that was
 *            not written is unchanged, a ratio write leaves the masks
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
	F_PREF, F_ALLOWED, F_RATIO_SYSCTL, F_NR
};

static const char *const fnames[F_NR] = {
	"task/TID/soft_affinity", "task/TID/soft_affinity_list",
	"soft_affinity", "soft_affinity_list",
	"task/TID/soft_affinity_ratio", "soft_affinity_ratio",
	"sched_preferred", "sched_allowed", "sched_soft_affinity_ratio",
};

static const char *const sysctl_paths[3] = {
	"/proc/sys/kernel/sched_preferred", "/proc/sys/kernel/sched_allowed",
	"/proc/sys/kernel/sched_soft_affinity_ratio",
};

static bool is_ratio(int f)
{
	return f == F_TID_RATIO || f == F_PROC_RATIO;
}

static bool is_mask(int f)
{
	return f < F_TID_RATIO;
}

static bool is_list(int f)
{
	return f == F_TID_LIST || f == F_PROC_LIST;
}

static bool is_proc(int f)	/* a process-level file */
{
	return f == F_PROC || f == F_PROC_LIST || f == F_PROC_RATIO;
}

static bool is_sysctl(int f)
{
	return f >= F_PREF;
}

/* The model: each level's state, mask and ratio. */
enum { S_INHERIT, S_NONE, S_SET };

struct level {
	int mstate;
	uint64_t mask;
	int rstate;
	unsigned int a, p;
};

static struct level m_thr[2], m_proc;

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

/* A small file without its trailing newline; "" and -errno on failure. */
static int read_str(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	out[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0) {
		out[0] = '\0';
		return -errno;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* A request file of thread t (t >= 0) or of the process (t < 0). */
static int read_req(int t, const char *file, char *out, size_t len)
{
	char path[96];

	if (t >= 0)
		snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tids[t], file);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", file);
	return read_str(path, out, len);
}

/* A line of thread t's status, without the newline ("" if absent). */
static const char *status_of(int t, const char *key, char *out, size_t len)
{
	char path[96], line[512];
	size_t klen = strlen(key);
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tids[t]);
	f = fopen(path, "re");
	if (!f)
		return out;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(out, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		out[strcspn(out, "\n")] = '\0';
		break;
	}
	fclose(f);
	return out;
}

/* Thread t's effective preferred CPUs (Cpus_preferred_list); ~0 if unreadable. */
static uint64_t soft_of(int t)
{
	char s[256];
	uint64_t m = 0;

	status_of(t, "Cpus_preferred_list", s, sizeof(s));
	if (!*s || softaff_parse_cpulist64(s, &m))
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

static long sysctl_of(int f)
{
	char s[64];

	if (read_str(sysctl_paths[f - F_PREF], s, sizeof(s)))
		return -1;
	return strtol(s, NULL, 10);
}

static size_t fmt_list(uint64_t m, char *s)
{
	size_t o = 0;
	int i, j;

	s[0] = '\0';
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

/* A kernel hex mask ("f", "00000000,0000000f"); -1 if it is not one. */
static int parse_hex(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	int digits = 0;

	for (; *s; s++) {
		if (*s == ',')
			continue;
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return -1;
		if (m >> 60)
			return -1;
		m = (m << 4) | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' : *s - 'a' + 10);
		digits++;
	}
	if (!digits)
		return -1;
	*mask = m;
	return 0;
}

/* What a level's mask request files must read: "", "none" or the list. */
static void want_mreq(const struct level *l, char *out)
{
	if (l->mstate == S_INHERIT)
		out[0] = '\0';
	else if (l->mstate == S_NONE)
		strcpy(out, "none");
	else
		fmt_list(l->mask, out);
}

static void want_rreq(const struct level *l, char *out, size_t len)
{
	if (l->rstate == S_INHERIT)
		out[0] = '\0';
	else if (l->rstate == S_NONE)
		snprintf(out, len, "none");
	else
		snprintf(out, len, "%u:%u", l->a, l->p);
}

/* What thread t's status must show: Cpus_preferred_list, its source. */
static uint64_t want_mask(int t, uint64_t hard, const char **src)
{
	const struct level *l = m_thr[t].mstate != S_INHERIT ? &m_thr[t] : &m_proc;

	if (l->mstate != S_SET) {
		*src = "none";
		return hard;
	}
	*src = l == &m_proc ? "process" : "thread";
	return (l->mask & hard) ? l->mask & hard : hard;
}

/* ... and Cpus_preferred_ratio, Cpus_preferred_ratio_source as "A:P SOURCE". */
static void want_ratio(int t, char *out, size_t len)
{
	const struct level *l = m_thr[t].rstate != S_INHERIT ? &m_thr[t] : &m_proc;

	if (l->rstate == S_SET)
		snprintf(out, len, "%u:%u %s", l->a, l->p,
			 l == &m_proc ? "process" : "thread");
	else
		snprintf(out, len, "%ld:%ld default", sysctl_of(F_ALLOWED),
			 sysctl_of(F_PREF));
}

static void got_ratio(int t, char *out, size_t len)
{
	char r[64], s[64];

	status_of(t, "Cpus_preferred_ratio", r, sizeof(r));
	status_of(t, "Cpus_preferred_ratio_source", s, sizeof(s));
	snprintf(out, len, "%s %s", r, s);
}

/*
 * A mask request as read from the list file into a level: 0, or -1 if it
 * is none of "", "none", a non-empty list within the possible CPUs.
 */
static int parse_mreq(const char *s, struct level *l)
{
	uint64_t m;

	if (!*s) {
		l->mstate = S_INHERIT;
		return 0;
	}
	if (!strcmp(s, "none")) {
		l->mstate = S_NONE;
		return 0;
	}
	if (softaff_parse_cpulist64(s, &m) || !m || (m & ~all_mask))
		return -1;
	l->mstate = S_SET;
	l->mask = m;
	return 0;
}

/* "" / "none" / "A:P" with both in 1..10000; -1 otherwise. */
static int parse_rreq(const char *s, struct level *l)
{
	unsigned int a, p;
	char end;

	if (!*s) {
		l->rstate = S_INHERIT;
		return 0;
	}
	if (!strcmp(s, "none")) {
		l->rstate = S_NONE;
		return 0;
	}
	if (sscanf(s, "%u:%u%c", &a, &p, &end) != 2 || a < 1 || a > 10000 ||
	    p < 1 || p > 10000 || !isdigit((unsigned char)s[0]))
		return -1;
	l->rstate = S_SET;
	l->a = a;
	l->p = p;
	return 0;
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

/*
 * Everything a refused write must leave alone, as one string: both
 * threads' and the process's request files, both threads' Cpus_preferred*
 * status lines and the three sysctls.
 */
static void snapshot(char *out, size_t len)
{
	static const char *const files[] = {
		"soft_affinity", "soft_affinity_list", "soft_affinity_ratio",
	};
	static const char *const keys[] = {
		"Cpus_preferred", "Cpus_preferred_list", "Cpus_preferred_source",
		"Cpus_preferred_ratio", "Cpus_preferred_ratio_source",
	};
	char s[256];
	size_t o = 0;
	int t, i;

	out[0] = '\0';
	for (t = -1; t < 2; t++) {
		for (i = 0; i < 3; i++) {
			if (read_req(t, files[i], s, sizeof(s)))
				snprintf(s, sizeof(s), "(unreadable)");
			o += (size_t)snprintf(out + o, len - o, "%d/%s=\"%s\" ", t,
					      files[i], s);
			if (o >= len)
				return;
		}
		if (t < 0)
			continue;
		for (i = 0; i < 5; i++) {
			o += (size_t)snprintf(out + o, len - o, "%d/%s=%s ", t, keys[i],
					      status_of(t, keys[i], s, sizeof(s)));
			if (o >= len)
				return;
		}
	}
	for (i = 0; i < 3; i++) {
		if (read_str(sysctl_paths[i], s, sizeof(s)))
			snprintf(s, sizeof(s), "(unreadable)");
		o += (size_t)snprintf(out + o, len - o, "%s=%s ", fnames[F_PREF + i], s);
		if (o >= len)
			return;
	}
}

struct input {
	size_t len;
	bool known;		/* a clean value: a success must store it */
	bool must_fail;		/* can never be valid */
	int state;		/* known procfs value: S_INHERIT, S_NONE, S_SET */
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

/*
 * The kernel's isspace() (lib/ctype.c), which proc_dointvec uses to skip
 * leading blanks: the C locale's six plus 0xa0, Latin-1's no-break space.
 */
static bool kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* A valid value for file @f into buf; its length (0 only for the empty value). */
static size_t valid_value(int f, struct input *in)
{
	unsigned int r = rndn(20);

	in->state = S_SET;
	if (is_ratio(f) || is_mask(f)) {
		if (r < 2) {
			in->state = S_NONE;
			return (size_t)sprintf(buf, "none");
		}
		if (r < 4) {
			in->state = S_INHERIT;
			return (size_t)sprintf(buf, "inherit");
		}
		if (r < 5) {
			in->state = S_INHERIT;
			return 0;	/* "", inherit */
		}
	}
	if (is_ratio(f) || f == F_RATIO_SYSCTL) {
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
	if (is_list(f))
		return fmt_list(in->mask, buf);
	return (size_t)sprintf(buf, "%llx", (unsigned long long)in->mask);
}

/* Inputs that must be refused (the README's tables, abi-v4). */
static const char *const bad_ratio[] = {
	"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
	"-1:1", "5:4:3", "4294967297:1", "defaul", "defaultx", "default",
	"default\n", "nonex", "inherits", "none:1",
};
static const char *const bad_ratio_sysctl[] = {
	"0:1", "1:0", "10001:1", "1:10001", "5", "5:", ":5", ":", "a:b",
	"-1:1", "5:4:3", "4294967297:1", "default", "none", "inherit",
};
static const char *const bad_hex[] = {
	"0", "00", "0\n", "00000000\n", "default", "nonex", "inherits", "none,1",
	"zz",
};
static const char *const bad_list[] = {
	"default", "nonex", "inherits", "none,1", "1-0", "a", "0-", "-1",
};

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

static void make_input(int f, struct input *in)
{
	static const char alphabet[] = "0123456789abcdefABCDEF,-:/ \n\tNalx+nonehrit";
	unsigned int r = rndn(100);
	size_t i, len;

	memset(in, 0, sizeof(*in));
	if (r < 10 && f != F_PREF && f != F_ALLOWED) {	/* known bad */
		const char *b;

		if (is_ratio(f))
			b = bad_ratio[rndn(NELEM(bad_ratio))];
		else if (f == F_RATIO_SYSCTL)
			b = bad_ratio_sysctl[rndn(NELEM(bad_ratio_sysctl))];
		else if (is_list(f))
			b = bad_list[rndn(NELEM(bad_list))];
		else
			b = bad_hex[rndn(NELEM(bad_hex))];
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
		/* "" goes as an empty line: a 0-byte write is another case */
		if (!len || rndn(2))
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

/* Check every file against the model; after @f's write "@what". */
static void verify(int iter, int f, const char *what, const uint64_t *hard)
{
	char got[256], want[256], hex[256];
	bool resync = false;
	int t;

	for (t = -1; t < 2; t++) {
		struct level *l = t < 0 ? &m_proc : &m_thr[t];
		uint64_t hm = 0, lm = 0;

		/* the mask request: the list file exactly, the hex file the same CPUs */
		want_mreq(l, want);
		read_req(t, "soft_affinity_list", got, sizeof(got));
		read_req(t, "soft_affinity", hex, sizeof(hex));
		if (strcmp(got, want) ||
		    (l->mstate == S_SET ? parse_hex(hex, &hm) ||
					  softaff_parse_cpulist64(got, &lm) || hm != lm :
					  strcmp(hex, got))) {
			fail("%d: %s \"%s\": %s soft_affinity_list \"%s\", soft_affinity \"%s\", the model says \"%s\"",
			     iter, fnames[f], what, t < 0 ? "process" : t ? "thread 1" : "thread 0",
			     got, hex, want);
			resync = true;
		}
		want_rreq(l, want, sizeof(want));
		read_req(t, "soft_affinity_ratio", got, sizeof(got));
		if (strcmp(got, want)) {
			fail("%d: %s \"%s\": %s soft_affinity_ratio \"%s\", the model says \"%s\"",
			     iter, fnames[f], what, t < 0 ? "process" : t ? "thread 1" : "thread 0",
			     got, want);
			resync = true;
		}
	}
	for (t = 0; t < 2; t++) {
		const char *wsrc;
		uint64_t m = soft_of(t), w = want_mask(t, hard[t], &wsrc);
		char src[64];

		status_of(t, "Cpus_preferred_source", src, sizeof(src));
		if (!m || (m & ~hard[t]))
			fail("%d: %s \"%s\": thread %d Cpus_preferred %llx, hard %llx",
			     iter, fnames[f], what, t, (unsigned long long)m,
			     (unsigned long long)hard[t]);
		else if (m != w || strcmp(src, wsrc))
			fail("%d: %s \"%s\": thread %d Cpus_preferred %llx from %s, the model says %llx from %s",
			     iter, fnames[f], what, t, (unsigned long long)m, src,
			     (unsigned long long)w, wsrc);
		got_ratio(t, got, sizeof(got));
		want_ratio(t, want, sizeof(want));
		if (strcmp(got, want))
			fail("%d: %s \"%s\": thread %d ratio \"%s\", the model says \"%s\"",
			     iter, fnames[f], what, t, got, want);
	}
	{
		char rs[64], both[64];

		read_str(sysctl_paths[2], rs, sizeof(rs));
		snprintf(both, sizeof(both), "%ld:%ld", sysctl_of(F_ALLOWED),
			 sysctl_of(F_PREF));
		if (strcmp(rs, both))
			fail("%d: %s \"%s\": sched_soft_affinity_ratio \"%s\", sched_allowed:sched_preferred %s",
			     iter, fnames[f], what, rs, both);
	}
	if (resync) {
		/* Report one bug once: take what the kernel shows. */
		for (t = -1; t < 2; t++) {
			struct level *l = t < 0 ? &m_proc : &m_thr[t];

			read_req(t, "soft_affinity_list", got, sizeof(got));
			parse_mreq(got, l);
			read_req(t, "soft_affinity_ratio", got, sizeof(got));
			parse_rreq(got, l);
		}
	}
}

/*
 * An accepted write the model cannot predict (an odd spelling, a value
 * split over two writes): take what the level written now reads, which
 * must be "", "none" or a valid value.
 */
static void take_stored(int iter, int f, int target, const char *what)
{
	int t = is_proc(f) ? -1 : target;
	struct level *l = t < 0 ? &m_proc : &m_thr[t];
	char got[256];

	if (is_mask(f)) {
		read_req(t, "soft_affinity_list", got, sizeof(got));
		if (parse_mreq(got, l))
			fail("%d: %s \"%s\" accepted: the list reads \"%s\"", iter,
			     fnames[f], what, got);
		return;
	}
	read_req(t, "soft_affinity_ratio", got, sizeof(got));
	if (parse_rreq(got, l))
		fail("%d: %s \"%s\" accepted: ratio reads \"%s\"", iter,
		     fnames[f], what, got);
}

static void one(int iter)
{
	static char before[16384], after[16384];
	int f = (int)rndn(F_NR), target = (int)rndn(2), t, fd, err = 0;
	uint64_t hard[2];
	long vbefore = 0, vafter = 0;
	struct input in;
	char path[96], what[128];
	ssize_t n = 0, n1 = -1;
	bool procfs = !is_sysctl(f);

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
		snprintf(path, sizeof(path), "%s", sysctl_paths[f - F_PREF]);
	}
	for (t = 0; t < 2; t++)
		hard[t] = hard_of(t);
	snapshot(before, sizeof(before));
	if (f == F_PREF || f == F_ALLOWED)
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

	snapshot(after, sizeof(after));
	if (f == F_PREF || f == F_ALLOWED)
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
		if (strcmp(before, after) && !(in.how == 2 && n1 == 0))
			fail("%d: %s \"%s\" refused (%s) but changed:\n#   %s\n#   -> %s",
			     iter, fnames[f], what, strerror(err), before, after);
		/* Every clean value is stored (hard mask or not). */
		if (in.known && in.how == 0)
			fail("%d: %s: valid \"%s\" refused: %s", iter, fnames[f],
			     what, strerror(err));
		if (procfs && in.how == 2 && n1 >= 0)
			take_stored(iter, f, target, what);	/* an empty first part */
		verify(iter, f, what, hard);
		return;
	}
	accepted[f]++;
	if (in.must_fail)
		fail("%d: %s: invalid \"%s\" accepted", iter, fnames[f], what);
	if (procfs && in.how == 1 && !is_ratio(f))
		fail("%d: pwrite to %s accepted", iter, fnames[f]);
	if (procfs && in.len > (size_t)pagesz)
		fail("%d: %s: write of %zu bytes accepted", iter, fnames[f],
		     in.len);
	if (is_ratio(f) && in.len > 31)
		fail("%d: %s: write of %zu bytes accepted", iter, fnames[f],
		     in.len);

	if (f == F_PREF || f == F_ALLOWED) {
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
	if (f == F_RATIO_SYSCTL) {
		char rs[64];
		unsigned int a, p;
		char end;

		read_str(sysctl_paths[2], rs, sizeof(rs));
		if (sscanf(rs, "%u:%u%c", &a, &p, &end) != 2 || a < 1 ||
		    a > 10000 || p < 1 || p > 10000)
			fail("%d: %s \"%s\" accepted: reads \"%s\"", iter, fnames[f],
			     what, rs);
		else if (in.known && in.how == 0 &&
			 (a != (unsigned int)in.mask || p != (unsigned int)in.val))
			fail("%d: %s: \"%s\" accepted but reads \"%s\"", iter,
			     fnames[f], what, rs);
		verify(iter, f, what, hard);
		return;
	}

	if (in.how != 2 && (size_t)n != in.len)
		fail("%d: %s \"%s\": write returned %zd of %zu", iter, fnames[f],
		     what, n, in.len);
	if (in.known && in.how == 0) {
		/* The model takes it as it is. */
		struct level *l = is_proc(f) ? &m_proc : &m_thr[target];

		if (is_mask(f)) {
			l->mstate = in.state;
			l->mask = in.mask;
		} else {
			l->rstate = in.state;
			l->a = (unsigned int)in.mask;
			l->p = (unsigned int)in.val;
		}
	} else {
		take_stored(iter, f, target, what);
		if (in.len == 0) {
			/* an accepted 0-byte write is the empty value, inherit */
			const struct level *l = is_proc(f) ? &m_proc : &m_thr[target];

			if ((is_mask(f) ? l->mstate : l->rstate) != S_INHERIT)
				fail("%d: %s: a 0-byte write accepted, the level is not inherit",
				     iter, fnames[f]);
		}
	}
	verify(iter, f, what, hard);
}

int main(int argc, char **argv)
{
	unsigned long seed = (unsigned long)time(NULL) ^ (unsigned long)getpid();
	char saved[3][64];
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
	 * so that process-wide requests can miss or cover it for one thread. */
	if (ncpus >= 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		for (i = 0; i < ncpus / 2; i++)
			CPU_SET(i, &set);
		sched_setaffinity(tids[1], sizeof(set), &set);
	}
	for (f = 0; f < 3; f++)
		read_str(sysctl_paths[f], saved[f], sizeof(saved[f]));
	{
		/* A new process: inherit at both levels, mask and ratio. */
		uint64_t hard[2] = { hard_of(0), hard_of(1) };

		verify(-1, F_TID, "(the start)", hard);
	}

	for (i = 0; i < iters; i++)
		one(i);

	/* The two sysctls (the third is made of them). */
	for (f = 0; f < 2; f++) {
		int fd = open(sysctl_paths[f], O_WRONLY);

		if (fd >= 0) {
			if (write(fd, saved[f], strlen(saved[f])) < 0)
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
