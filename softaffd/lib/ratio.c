// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ratio.h"

/* One side of "A:P" at *s: digits only; *s moves past them. */
static int parse_side(const char **s, unsigned long *ret)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoul(*s, &end, 10);
	if (errno)
		return -EINVAL;
	*s = end;
	return 0;
}

/* "A:P" with each side in range, in either order.  0 or -errno. */
static int parse_pair(const char *s, struct ratio *ret)
{
	unsigned long a, p;

	if (parse_side(&s, &a) < 0 || *s++ != ':' || parse_side(&s, &p) < 0 ||
	    *s)
		return -EINVAL;
	if (a < RATIO_MIN || a > RATIO_MAX || p < RATIO_MIN || p > RATIO_MAX)
		return -ERANGE;
	*ret = (struct ratio){(unsigned int)a, (unsigned int)p};
	return 0;
}

int ratio_parse(const char *s, struct ratio *ret)
{
	struct ratio r;
	int e = parse_pair(s, &r);

	if (e < 0)
		return e;
	if (r.allowed < r.preferred)
		return -EDOM;
	*ret = r;
	return 0;
}

const char *ratio_format(struct ratio r, char *buf, size_t size)
{
	snprintf(buf, size, "%u:%u", r.allowed, r.preferred);
	return buf;
}

int ratio_cmp(struct ratio a, struct ratio b)
{
	unsigned long long l = (unsigned long long)a.allowed * b.preferred;
	unsigned long long r = (unsigned long long)b.allowed * a.preferred;

	return (l > r) - (l < r);
}

bool ratio_equal(struct ratio a, struct ratio b)
{
	return a.allowed == b.allowed && a.preferred == b.preferred;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Copy s without surrounding blanks into buf; false if it does not fit. */
static bool trim_copy(const char *s, char *buf, size_t size)
{
	size_t n;

	while (is_blank(*s))
		s++;
	n = strlen(s);
	while (n && is_blank(s[n - 1]))
		n--;
	if (n >= size)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

int ratio_req_parse(const char *s, struct ratio_req *ret)
{
	struct ratio_req r = {.state = req_state_of(s)};
	char buf[32];

	if (!trim_copy(s, buf, sizeof(buf)))
		return -EINVAL;
	if (!strcmp(buf, "default"))
		r.state = REQ_INHERIT;
	/* The kernel takes allowed below preferred: so does a request. */
	if (r.state == REQ_SET && parse_pair(buf, &r.value) < 0)
		return -EINVAL;
	*ret = r;
	return 0;
}

const char *ratio_req_format(const struct ratio_req *r, char *buf,
			     size_t size)
{
	if (r->state != REQ_SET)
		snprintf(buf, size, "%s", req_word(r->state));
	else
		ratio_format(r->value, buf, size);
	return buf;
}

size_t ratio_req_line(const struct ratio_req *r, char *buf, size_t size)
{
	size_t n = strlen(ratio_req_format(r, buf, size - 1));

	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

bool ratio_req_equal(const struct ratio_req *a, const struct ratio_req *b)
{
	return a->state == b->state &&
	       (a->state != REQ_SET || ratio_equal(a->value, b->value));
}

bool ratio_req_is(const struct ratio_req *r, struct ratio want)
{
	return r->state == REQ_SET && ratio_equal(r->value, want);
}

bool softness_word(const char *s, enum soft_kind *ret)
{
	if (!strcmp(s, "adaptive"))
		*ret = SOFT_ADAPTIVE;
	else if (!strcmp(s, "strict"))
		*ret = SOFT_STRICT;
	else
		return false;
	return true;
}

const char *softness_name(enum soft_kind k)
{
	return k == SOFT_ADAPTIVE ? "adaptive"
	       : k == SOFT_STRICT ? "strict"
				  : "fixed";
}
