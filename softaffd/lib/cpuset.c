// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPU sets and the two text forms the kernel uses for them:
 *
 *   list:  "0-3,8"                     (Cpus_allowed_list, *_list files)
 *   mask:  "00000000,0000010f"         (Cpus_allowed, soft_affinity)
 *
 * and a level's request, which is one of them or a word (cpuset.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"

bool cpuset_empty(const struct cpuset *s)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

bool cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

bool cpuset_intersects(const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

unsigned int cpuset_count(const struct cpuset *s)
{
	unsigned int n = 0;

	for (int i = 0; i < CPUSET_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

void cpuset_and(struct cpuset *ret, const struct cpuset *a,
		const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		ret->w[i] = a->w[i] & b->w[i];
}

void cpuset_or(struct cpuset *ret, const struct cpuset *a,
	       const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		ret->w[i] = a->w[i] | b->w[i];
}

int cpuset_next(const struct cpuset *s, int from)
{
	if (from < 0)
		from = 0;
	while (from < CPUSET_MAX) {
		uint64_t w = s->w[from / 64] >> (from % 64);

		if (w)
			return from + __builtin_ctzll(w);
		from = (from / 64 + 1) * 64;
	}
	return -1;
}

static bool is_trailing_space(const char *p)
{
	for (; *p; p++)
		if (*p != '\n' && *p != ' ' && *p != '\t')
			return false;
	return true;
}

/* Parse a decimal CPU number; it must fit below CPUSET_MAX. */
static int parse_cpu(const char **pp, unsigned int *ret)
{
	const char *p = *pp;
	unsigned long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v >= CPUSET_MAX)
			return -ERANGE;
	}
	*pp = p;
	*ret = (unsigned int)v;
	return 0;
}

int cpuset_parse_list(const char *str, struct cpuset *ret)
{
	struct cpuset s;
	const char *p = str;
	int r;

	cpuset_zero(&s);
	if (is_trailing_space(p))
		goto done;
	for (;;) {
		unsigned int lo, hi;

		r = parse_cpu(&p, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			p++;
			r = parse_cpu(&p, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned int c = lo; c <= hi; c++)
			cpuset_set(&s, c);
		if (*p == ',') {
			p++;
			continue;
		}
		if (is_trailing_space(p))
			break;
		return -EINVAL;
	}
done:
	*ret = s;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int cpuset_parse_mask(const char *str, struct cpuset *ret)
{
	/* Groups are 32 bits, most significant first; parse then reverse. */
	uint32_t groups[CPUSET_MAX / 32];
	size_t ngroups = 0, len;
	const char *p = str, *end;
	struct cpuset s;

	len = strlen(str);
	while (len && (str[len - 1] == '\n' || str[len - 1] == ' '))
		len--;
	end = str + len;
	if (p == end)
		return -EINVAL;

	/* Count groups first so that zero high groups beyond our limit pass. */
	cpuset_zero(&s);
	while (p < end) {
		uint32_t v = 0;
		int digits = 0;

		for (; p < end && *p != ','; p++) {
			int h = hexval(*p);

			if (h < 0 || ++digits > 8)
				return -EINVAL;
			v = (v << 4) | (uint32_t)h;
		}
		if (!digits)
			return -EINVAL;
		if (ngroups == sizeof(groups) / sizeof(groups[0])) {
			/* Shift out a high group: it must be zero. */
			if (groups[0])
				return -ERANGE;
			memmove(groups, groups + 1,
				sizeof(groups) - sizeof(groups[0]));
			ngroups--;
		}
		groups[ngroups++] = v;
		if (p < end) {
			p++; /* ',' */
			if (p == end)
				return -EINVAL;
		}
	}
	for (size_t i = 0; i < ngroups; i++) {
		size_t bit = (ngroups - 1 - i) * 32;

		s.w[bit / 64] |= (uint64_t)groups[i] << (bit % 64);
	}
	*ret = s;
	return 0;
}

int cpuset_format_list(const struct cpuset *s, char *buf, size_t size)
{
	size_t off = 0;
	int c;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	for_each_cpu (c, s) {
		int hi = c, n;

		while (hi + 1 < CPUSET_MAX && cpuset_test(s, hi + 1))
			hi++;
		if (hi == c)
			n = snprintf(buf + off, size - off, "%s%d",
				     off ? "," : "", c);
		else
			n = snprintf(buf + off, size - off, "%s%d-%d",
				     off ? "," : "", c, hi);
		if (n < 0 || (size_t)n >= size - off)
			return -ENOSPC;
		off += (size_t)n;
		c = hi;
	}
	return (int)off;
}

int cpuset_format_mask(const struct cpuset *s, char *buf, size_t size)
{
	int top = -1, c, ngroups;
	size_t off = 0;

	for_each_cpu (c, s)
		top = c;
	ngroups = top < 0 ? 1 : top / 32 + 1;
	for (int g = ngroups - 1; g >= 0; g--) {
		uint32_t v = (uint32_t)(s->w[g / 2] >> ((g % 2) * 32));
		int n;

		if (g == ngroups - 1)
			n = snprintf(buf + off, size - off, "%x", v);
		else
			n = snprintf(buf + off, size - off, ",%08x", v);
		if (n < 0 || (size_t)n >= size - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

/* Does text, blanks around it ignored, say word? */
static bool says_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	text += strspn(text, " \t\n");
	return !strncmp(text, word, n) && is_trailing_space(text + n);
}

enum req_state req_state_of(const char *text)
{
	if (is_trailing_space(text) || says_word(text, "inherit"))
		return REQ_INHERIT;
	return says_word(text, "none") ? REQ_NONE : REQ_SET;
}

const char *req_word(enum req_state s)
{
	return s == REQ_INHERIT ? "inherit" : s == REQ_NONE ? "none" : NULL;
}

int cpureq_parse_list(const char *text, struct cpureq *ret)
{
	struct cpureq r = {.state = req_state_of(text)};

	if (r.state == REQ_SET) {
		int e = cpuset_parse_list(text, &r.cpus);

		if (e < 0)
			return e;
	}
	*ret = r;
	return 0;
}

bool cpureq_equal(const struct cpureq *a, const struct cpureq *b)
{
	return a->state == b->state &&
	       (a->state != REQ_SET || cpuset_equal(&a->cpus, &b->cpus));
}

int cpureq_format(const struct cpureq *r, bool list, char *buf, size_t size)
{
	int n;

	if (r->state == REQ_SET)
		return list ? cpuset_format_list(&r->cpus, buf, size)
			    : cpuset_format_mask(&r->cpus, buf, size);
	n = snprintf(buf, size, "%s", req_word(r->state));
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}
