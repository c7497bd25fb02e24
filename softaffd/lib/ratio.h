/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_RATIO_H
#define SOFTAFF_RATIO_H

/*
 * The ratio allowed:preferred, in every spelling softaffd, softaff(1)
 * and the OCI hook take or print: one parser, one formatter, one
 * comparison.  Pure: nothing here reads a file.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

/* The kernel's range for either side (sched_allowed and the files). */
#define RATIO_MIN		1
#define RATIO_MAX		10000
/* softness = "strict": the hardest ratio the kernel takes. */
#define RATIO_STRICT_ALLOWED	RATIO_MAX
#define RATIO_STRICT		((struct ratio){RATIO_STRICT_ALLOWED, 1})
/* Room for any ratio or request word ratio_format() writes, and a NUL. */
#define RATIO_BUFSZ		24

struct ratio {
	unsigned int allowed, preferred;
};

/* A level's own ratio request, as its file reads: value when REQ_SET. */
struct ratio_req {
	enum req_state state;
	struct ratio value;
};

/*
 * How soft a rule's preference is: ADAPTIVE (the controller moves the
 * rule's own ratio), STRICT (10000:1) or FIXED (ratio as written).
 */
enum soft_kind { SOFT_ADAPTIVE, SOFT_STRICT, SOFT_FIXED };

struct softness {
	enum soft_kind kind;
	struct ratio fixed; /* STRICT and FIXED */
};

/*
 * "5:4" -> {5, 4}, nothing around it.  -EINVAL if it does not look like
 * A:P, -ERANGE if a side is outside RATIO_MIN..RATIO_MAX, -EDOM if
 * allowed < preferred (which the kernel takes, a configuration not).
 */
int ratio_parse(const char *s, struct ratio *ret);
/* "A:P" into buf (RATIO_BUFSZ will do); returns buf. */
const char *ratio_format(struct ratio r, char *buf, size_t size);
/* a and b as fractions: < 0 when a is the softer, 0 when as hard. */
int ratio_cmp(struct ratio a, struct ratio b);
bool ratio_equal(struct ratio a, struct ratio b);

/*
 * A ratio request: "A:P" (each 1..10000), "inherit" or an empty line,
 * "none", blanks around it ignored, as the kernel takes them; and
 * "default", the word older kernels had for inherit, which softaff(1)
 * and the hook still take from their users.  0 or -EINVAL.
 */
int ratio_req_parse(const char *s, struct ratio_req *ret);
/* "5:4", "inherit" or "none" into buf (RATIO_BUFSZ will do). */
const char *ratio_req_format(const struct ratio_req *r, char *buf,
			     size_t size);
/*
 * The same as the line a kernel file takes ("5:4\n"), into buf of
 * RATIO_BUFSZ + 1 bytes or more; its length.
 */
size_t ratio_req_line(const struct ratio_req *r, char *buf, size_t size);
bool ratio_req_equal(const struct ratio_req *a, const struct ratio_req *b);
/* Is the request r set to exactly want? */
bool ratio_req_is(const struct ratio_req *r, struct ratio want);

/*
 * The softness words of softaffd.conf(5) and the hook's annotation:
 * "adaptive" and "strict" into *ret; false for anything else (a ratio).
 */
bool softness_word(const char *s, enum soft_kind *ret);
/* "adaptive", "strict" or "fixed". */
const char *softness_name(enum soft_kind k);

#endif
