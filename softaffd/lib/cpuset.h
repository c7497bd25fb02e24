/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CPUSET_H
#define SOFTAFF_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 8192 bits: the NR_CPUS of distribution kernels (Debian's and Fedora's
 * amd64 builds set MAXSMP), whose CPU ids can pass 1024 on large hosts.
 * A mask with a set bit beyond that is rejected with -ERANGE rather than
 * truncated, so we never write a narrower mask than the kernel reported.
 * The same type doubles as a set of node indexes.
 *
 * A set is 1 KiB: fine as a value in a decision or a rule, too big to
 * keep per process or per CPU.  Per-process records hold references to
 * interned sets (daemon/setpool.h), per-CPU and per-node arrays are
 * sized by the CPUs and nodes there are (sampler, topology).
 */
#define CPUSET_MAX   8192
#define CPUSET_WORDS (CPUSET_MAX / 64)

struct cpuset {
	uint64_t w[CPUSET_WORDS];
};

static inline void cpuset_zero(struct cpuset *s)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		s->w[i] = 0;
}

static inline void cpuset_set(struct cpuset *s, unsigned int cpu)
{
	if (cpu < CPUSET_MAX)
		s->w[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

static inline bool cpuset_test(const struct cpuset *s, unsigned int cpu)
{
	return cpu < CPUSET_MAX && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

bool cpuset_empty(const struct cpuset *s);
bool cpuset_equal(const struct cpuset *a, const struct cpuset *b);
bool cpuset_intersects(const struct cpuset *a, const struct cpuset *b);
unsigned int cpuset_count(const struct cpuset *s);
void cpuset_and(struct cpuset *ret, const struct cpuset *a,
		const struct cpuset *b);
void cpuset_or(struct cpuset *ret, const struct cpuset *a,
	       const struct cpuset *b);
/* next set bit >= from, or -1 */
int cpuset_next(const struct cpuset *s, int from);

#define for_each_cpu(c, s)                        \
	for ((c) = cpuset_next((s), 0); (c) >= 0; \
	     (c) = cpuset_next((s), (c) + 1))

/* "0-3,8\n" -> set; empty string is the empty set. 0 or -EINVAL/-ERANGE. */
int cpuset_parse_list(const char *str, struct cpuset *ret);
/* "00000000,0000000f\n" -> set. 0 or -EINVAL/-ERANGE. */
int cpuset_parse_mask(const char *str, struct cpuset *ret);
/* Both return the length written, or -ENOSPC when buf is too small. */
int cpuset_format_list(const struct cpuset *s, char *buf, size_t size);
int cpuset_format_mask(const struct cpuset *s, char *buf, size_t size);

/* Longest list/mask text the formatters can produce, plus NUL. */
#define CPUSET_LIST_BUFSZ (CPUSET_MAX * 5 + 1)

/*
 * What one level (thread, process, cgroup) asks for, its mask and its
 * ratio alike: nothing, so the next level decides (inherit: read as an
 * empty line, written as one or as "inherit"), no preference and no
 * asking further ("none"), or a value, read back exactly as written.
 */
enum req_state { REQ_INHERIT, REQ_NONE, REQ_SET };

/* The state text names, blanks around it ignored; REQ_SET: a value. */
enum req_state req_state_of(const char *text);
/* "inherit" or "none"; NULL for REQ_SET. */
const char *req_word(enum req_state s);

/* A level's mask request. */
struct cpureq {
	enum req_state state;
	struct cpuset cpus; /* REQ_SET only */
};

/* "", "inherit", "none" or a CPU list.  0 or -EINVAL/-ERANGE. */
int cpureq_parse_list(const char *text, struct cpureq *ret);
bool cpureq_equal(const struct cpureq *a, const struct cpureq *b);
/* Its word, or the list (mask: !list); length or -ENOSPC. */
int cpureq_format(const struct cpureq *r, bool list, char *buf, size_t size);

#endif
