// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libconfig text -> struct config.  Every check that can fail reports
 * "file:line: message"; the caller gets either a complete, validated
 * config or nothing.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include "config.h"
#include "util.h"

struct ctx {
	const char *name;
	const char *incdir; /* where @include files are looked up, or NULL */
	const struct topology *topo;
	char *err;
	size_t errlen;
	unsigned int flags; /* CONFIG_* of config_load_flags() */
};

static int fail_at(struct ctx *x, const char *file, int line, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct ctx *x, const char *file, int line, const char *fmt,
		   ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!file)
		file = x->name;
	/* Name an included file as it was opened, not as it was written. */
	if (strcmp(file, x->name) && file[0] != '/' && x->incdir)
		snprintf(x->err, x->errlen, "%s/%s:%d: %s", x->incdir, file,
			 line, msg);
	else
		snprintf(x->err, x->errlen, "%s:%d: %s", file, line, msg);
	return -EINVAL;
}

#define fail(x, s, ...)                             \
	fail_at((x), config_setting_source_file(s), \
		(int)config_setting_source_line(s), __VA_ARGS__)

static bool is_int(const config_setting_t *s)
{
	int t = config_setting_type(s);

	return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
}

static int get_uint(struct ctx *x, const config_setting_t *s, long long lo,
		    long long hi, unsigned int *ret)
{
	long long v;

	if (!is_int(s))
		return fail(x, s, "'%s' must be an integer",
			    config_setting_name(s));
	v = config_setting_get_int64(s);
	if (v < lo || v > hi)
		return fail(x, s, "'%s' = %lld is out of range %lld..%lld",
			    config_setting_name(s), v, lo, hi);
	*ret = (unsigned int)v;
	return 0;
}

static int get_string(struct ctx *x, const config_setting_t *s,
		      const char **ret)
{
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(x, s, "'%s' must be a string",
			    config_setting_name(s));
	v = config_setting_get_string(s);
	if (strlen(v) > CONFIG_MAX_PATTERN)
		return fail(x, s, "'%s' is longer than %d bytes",
			    config_setting_name(s), CONFIG_MAX_PATTERN);
	*ret = v;
	return 0;
}

/*
 * Pure: "5:4" -> {5, 4}.  -EINVAL if it does not look like A:P, -ERANGE
 * if a side is outside RATIO_MIN..RATIO_MAX, -EDOM if allowed < preferred.
 */
static int parse_ratio_text(const char *v, struct ratio *ret)
{
	unsigned long a, p;
	char *end;

	errno = 0;
	if (v[0] < '0' || v[0] > '9')
		return -EINVAL;
	a = strtoul(v, &end, 10);
	if (*end != ':')
		return -EINVAL;
	v = end + 1;
	if (*v < '0' || *v > '9')
		return -EINVAL;
	p = strtoul(v, &end, 10);
	if (*end || errno)
		return -EINVAL;
	if (a < RATIO_MIN || a > RATIO_MAX || p < RATIO_MIN || p > RATIO_MAX)
		return -ERANGE;
	if (a < p)
		return -EDOM;
	ret->allowed = (unsigned int)a;
	ret->preferred = (unsigned int)p;
	return 0;
}

static int ratio_fail(struct ctx *x, const config_setting_t *s, int r,
		      const char *shape)
{
	if (r == -ERANGE)
		return fail(x, s, "'%s': both sides must be in %d..%d",
			    config_setting_name(s), RATIO_MIN, RATIO_MAX);
	if (r == -EDOM)
		return fail(x, s, "'%s': allowed must not be below preferred",
			    config_setting_name(s));
	return fail(x, s, "'%s' must %s", config_setting_name(s), shape);
}

static int get_ratio(struct ctx *x, const config_setting_t *s,
		     struct ratio *ret)
{
	const char *v;
	int r;

	r = get_string(x, s, &v);
	if (r < 0)
		return r;
	r = parse_ratio_text(v, ret);
	return r < 0 ? ratio_fail(x, s, r,
				  "look like \"ALLOWED:PREFERRED\", e.g. "
				  "\"100:1\"")
		     : 0;
}

static int get_softness(struct ctx *x, const config_setting_t *s,
			struct softness *ret)
{
	const char *v;
	int r;

	r = get_string(x, s, &v);
	if (r < 0)
		return r;
	if (!strcmp(v, "adaptive")) {
		ret->kind = SOFT_ADAPTIVE;
		return 0;
	}
	if (!strcmp(v, "strict")) {
		ret->kind = SOFT_STRICT;
		ret->fixed = (struct ratio){RATIO_STRICT_ALLOWED, 1};
		return 0;
	}
	r = parse_ratio_text(v, &ret->fixed);
	if (r < 0)
		return ratio_fail(x, s, r,
				  "be \"adaptive\", \"strict\" or "
				  "\"ALLOWED:PREFERRED\", e.g. \"20:1\"");
	ret->kind = SOFT_FIXED;
	return 0;
}

static bool key_in(const char *name, const char *const *keys)
{
	for (; *keys; keys++)
		if (!strcmp(name, *keys))
			return true;
	return false;
}

static int check_keys(struct ctx *x, const config_setting_t *group,
		      const char *const *keys, const char *where)
{
	for (int i = 0; i < config_setting_length(group); i++) {
		config_setting_t *s = config_setting_get_elem(group, i);
		const char *n = config_setting_name(s);

		if (n && !key_in(n, keys))
			return fail(x, s, "unknown key '%s'%s", n, where);
	}
	return 0;
}

static int ratio_cmp(const struct ratio *a, const struct ratio *b)
{
	unsigned long long l = (unsigned long long)a->allowed * b->preferred;
	unsigned long long r = (unsigned long long)b->allowed * a->preferred;

	return (l > r) - (l < r);
}

static int parse_ratio_group(struct ctx *x, const config_setting_t *g,
			     struct config *c)
{
	static const char *const fixed_keys[] = {"mode", "allowed", "preferred",
						 NULL};
	static const char *const adaptive_keys[] = {
		"mode", "softest", "hardest",	    "saturated",
		"idle", "hold",	   "min_change_ms", NULL};
	static const char *const off_keys[] = {"mode", NULL};
	config_setting_t *s;
	const char *mode = "adaptive";
	int r;

	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(x, g, "'ratio' must be a group { ... }");
	s = config_setting_get_member(g, "mode");
	if (s) {
		r = get_string(x, s, &mode);
		if (r < 0)
			return r;
	}
	if (!strcmp(mode, "fixed")) {
		c->mode = RATIO_FIXED;
		r = check_keys(x, g, fixed_keys, " in fixed ratio");
		if (r < 0)
			return r;
		s = config_setting_get_member(g, "allowed");
		if (s && (r = get_uint(x, s, RATIO_MIN, RATIO_MAX,
				       &c->fixed.allowed)) < 0)
			return r;
		s = config_setting_get_member(g, "preferred");
		if (s && (r = get_uint(x, s, RATIO_MIN, RATIO_MAX,
				       &c->fixed.preferred)) < 0)
			return r;
		if (c->fixed.allowed < c->fixed.preferred)
			return fail(x, g,
				    "allowed (%u) must not be below "
				    "preferred (%u)",
				    c->fixed.allowed, c->fixed.preferred);
		return 0;
	}
	if (!strcmp(mode, "off")) {
		c->mode = RATIO_OFF;
		return check_keys(x, g, off_keys, " in ratio with mode off");
	}
	if (strcmp(mode, "adaptive"))
		return fail(x, s,
			    "'mode' must be \"adaptive\", \"fixed\" or "
			    "\"off\"");
	c->mode = RATIO_ADAPTIVE;
	r = check_keys(x, g, adaptive_keys, " in adaptive ratio");
	if (r < 0)
		return r;
	if ((s = config_setting_get_member(g, "softest")) &&
	    (r = get_ratio(x, s, &c->softest)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "hardest")) &&
	    (r = get_ratio(x, s, &c->hardest)) < 0)
		return r;
	if (ratio_cmp(&c->softest, &c->hardest) > 0)
		return fail(x, g,
			    "softest ratio %u:%u is harder than hardest "
			    "%u:%u",
			    c->softest.allowed, c->softest.preferred,
			    c->hardest.allowed, c->hardest.preferred);
	if ((s = config_setting_get_member(g, "saturated")) &&
	    (r = get_uint(x, s, 1, 100, &c->saturated_pct)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "idle")) &&
	    (r = get_uint(x, s, 0, 99, &c->idle_pct)) < 0)
		return r;
	if (c->idle_pct >= c->saturated_pct)
		return fail(x, g, "'idle' (%u) must be below 'saturated' (%u)",
			    c->idle_pct, c->saturated_pct);
	if ((s = config_setting_get_member(g, "hold")) &&
	    (r = get_uint(x, s, 1, 1000, &c->hold)) < 0)
		return r;
	if ((s = config_setting_get_member(g, "min_change_ms")) &&
	    (r = get_uint(x, s, 0, 3600000, &c->min_change_ms)) < 0)
		return r;
	return 0;
}

static int parse_pattern(struct ctx *x, const config_setting_t *s, char **ret)
{
	const char *v;
	int r;

	r = get_string(x, s, &v);
	if (r < 0)
		return r;
	if (!*v)
		return fail(x, s, "'%s' must not be empty",
			    config_setting_name(s));
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

/*
 * Estimated size of the automaton glibc builds for an ERE.  regcomp()
 * copies the operand of "+" and of "{m,n}" (a+ becomes aa*), so stacked
 * or nested repetitions grow geometrically: "o+++...+" with 100 pluses
 * allocated gigabytes in fuzzing.  The estimate charges an atom 1 and
 * multiplies by each repetition; alternatives simply add up.  Returns
 * the estimate (saturating at limit + 1), or -EINVAL for a back-reference,
 * which can make matching exponential.
 */
#define REGEX_MAX_DEPTH 32

static long regex_cost(const char *re)
{
	long sum[REGEX_MAX_DEPTH + 1] = {0}, last[REGEX_MAX_DEPTH + 1] = {0};
	long limit = REGEX_MAX_COST;
	int depth = 0;

	for (const char *p = re; *p; p++) {
		long k = 1;

		switch (*p) {
		case '\\':
			if (p[1] >= '1' && p[1] <= '9')
				return -EINVAL;
			if (p[1])
				p++;
			sum[depth] += 1;
			last[depth] = 1;
			break;
		case '[':
			/* A bracket expression is one atom; "]" first is literal. */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']') {
				if (*p == '[' && (p[1] == ':' || p[1] == '.' ||
						  p[1] == '=')) {
					char close = p[1];

					p += 2;
					while (*p && !(*p == close && p[1] == ']'))
						p++;
					if (*p)
						p++;
				}
				if (*p)
					p++;
			}
			if (!*p)
				return limit + 1; /* regcomp will reject it */
			sum[depth] += 1;
			last[depth] = 1;
			break;
		case '(':
			if (depth == REGEX_MAX_DEPTH)
				return limit + 1;
			depth++;
			sum[depth] = last[depth] = 0;
			break;
		case ')':
			if (!depth)
				return limit + 1;
			depth--;
			last[depth] = sum[depth + 1] + 1;
			sum[depth] += last[depth];
			break;
		case '+':
			k = 2;
			break;
		case '{': {
			char *end;
			long m = strtol(p + 1, &end, 10), n = m;

			/* Anything above the limit fails anyway: clamp first. */
			if (m > limit)
				m = limit;
			if (*end == ',')
				n = end[1] == '}' ? m + 1 :
						    strtol(end + 1, &end, 10);
			if (n > limit)
				n = limit;
			while (*end && *end != '}')
				end++;
			if (!*end || m < 0 || n < 0)
				return limit + 1;
			k = (m > n ? m : n) + 1;
			p = end;
			break;
		}
		case '*':
		case '?':
		case '|':
			break;
		default:
			sum[depth] += 1;
			last[depth] = 1;
			break;
		}
		if (k > 1) {
			if (k > limit + 1 || last[depth] * k > limit + 1)
				return limit + 1;
			sum[depth] += last[depth] * (k - 1);
			last[depth] *= k;
		}
		if (sum[depth] > limit)
			return limit + 1;
	}
	return sum[0];
}

static int parse_user(struct ctx *x, const config_setting_t *s,
		      struct rule *rule)
{
	char buf[32];
	const char *v;
	uint64_t id;
	int r;

	if (is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < 0 || n >= (long long)UINT32_MAX)
			return fail(x, s, "'user' = %lld is not a valid uid",
				    n);
		rule->uid = (uid_t)n;
		snprintf(buf, sizeof(buf), "%lld", n);
		v = buf;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		r = get_string(x, s, &v);
		if (r < 0)
			return r;
		if (parse_u64(v, &id) == 0 && id < UINT32_MAX) {
			rule->uid = (uid_t)id;
		} else if (x->flags & CONFIG_NO_NSS) {
			/* Only for what the rules need, not for matching. */
			rule->uid = (uid_t)-1;
		} else {
			/*
			 * Resolve now, once: the running daemon then never
			 * calls into NSS, and a typo is a config error.
			 */
			struct passwd pw, *res = NULL;
			char pwbuf[4096];

			if (getpwnam_r(v, &pw, pwbuf, sizeof(pwbuf), &res) ||
			    !res)
				return fail(x, s, "unknown user '%s'", v);
			rule->uid = pw.pw_uid;
		}
	} else {
		return fail(x, s, "'user' must be a user name or a uid");
	}
	rule->has_uid = true;
	rule->user = strdup(v);
	return rule->user ? 0 : -ENOMEM;
}

static int parse_nodes(struct ctx *x, const config_setting_t *s,
		       struct rule *rule)
{
	int t = config_setting_type(s);
	int n = config_setting_length(s);

	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return fail(x, s, "'nodes' must be an array like [0, 1]");
	if (n == 0)
		return fail(x, s, "empty target: 'nodes' lists no node");
	if (n > CONFIG_MAX_NODES_PER_RULE)
		return fail(x, s, "'nodes' lists more than %d nodes",
			    CONFIG_MAX_NODES_PER_RULE);
	cpuset_zero(&rule->cpus);
	for (int i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, i);
		long long id;
		int idx;

		if (!is_int(e))
			return fail(x, e, "'nodes' must contain integers");
		id = config_setting_get_int64(e);
		idx = id < 0 || id >= CPUSET_MAX
			      ? -1
			      : topology_node_index(x->topo, (int)id);
		if (idx < 0)
			return fail(x, e, "node %lld does not exist", id);
		for (unsigned int j = 0; j < rule->nnodes; j++)
			if (rule->nodes[j] == id)
				return fail(x, e, "node %lld listed twice", id);
		rule->nodes[rule->nnodes++] = (int)id;
		/* Offline CPUs too: they are the node's when they return. */
		cpuset_or(&rule->cpus, &rule->cpus,
			  &x->topo->node_present[idx]);
	}
	if (cpuset_empty(&rule->cpus))
		return fail(x, s, "empty target: the nodes have no CPUs");
	return 0;
}

static int parse_cpus(struct ctx *x, const config_setting_t *s,
		      struct rule *rule)
{
	const char *v;
	int r;

	r = get_string(x, s, &v);
	if (r < 0)
		return r;
	r = cpuset_parse_list(v, &rule->cpus);
	if (r == -ERANGE)
		return fail(x, s, "'cpus' = \"%s\": CPU number above %d", v,
			    CPUSET_MAX - 1);
	if (r < 0)
		return fail(x, s,
			    "'cpus' = \"%s\" is not a CPU list like "
			    "\"0-3,8\"",
			    v);
	if (cpuset_empty(&rule->cpus))
		return fail(x, s, "empty target: 'cpus' is empty");
	/* Present, not online: a restart during CPU hotplug stays valid. */
	if (!cpuset_empty(&x->topo->present) &&
	    !cpuset_intersects(&rule->cpus, &x->topo->present))
		return fail(x, s, "empty target: none of CPUs \"%s\" exists",
			    v);
	rule->cpus_text = strdup(v);
	return rule->cpus_text ? 0 : -ENOMEM;
}

static int parse_rule(struct ctx *x, const config_setting_t *g,
		      unsigned int index, struct rule *rule)
{
	static const char *const keys[] = {
		"name",	  "comm",    "exe",	 "cmdline", "user",
		"cgroup", "unit",    "nodes",	 "cpus",    "threads",
		"softness", NULL};
	config_setting_t *s, *nodes, *cpus;
	char buf[32];
	int r;

	rule->line = (int)config_setting_source_line(g);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(x, g, "each rule must be a group { ... }");
	r = check_keys(x, g, keys, " in rule");
	if (r < 0)
		return r;

	if ((s = config_setting_get_member(g, "name"))) {
		r = parse_pattern(x, s, &rule->name);
		if (r < 0)
			return r;
		/*
		 * One word of a safe alphabet: names are printed unquoted in
		 * the status file, --explain and the JSON, and are what
		 * scripts grep for.
		 */
		if (!*rule->name || strlen(rule->name) > RULE_NAME_MAX ||
		    rule->name[strspn(rule->name, RULE_NAME_CHARS)])
			return fail(x, s,
				    "rule name \"%s\": use 1 to %d letters, "
				    "digits and . _ : @ -",
				    rule->name, RULE_NAME_MAX);
	} else {
		snprintf(buf, sizeof(buf), "rule-%u", index + 1);
		rule->name = strdup(buf);
		if (!rule->name)
			return -ENOMEM;
	}
	if ((s = config_setting_get_member(g, "comm"))) {
		r = parse_pattern(x, s, &rule->comm);
		if (r < 0)
			return r;
		/* TASK_COMM_LEN is 16: the kernel keeps 15 characters. */
		if (strlen(rule->comm) > 15 && !strpbrk(rule->comm, "*?[\\"))
			return fail(x, s,
				    "'comm' \"%s\" is longer than 15 "
				    "characters and can never match; the "
				    "kernel truncates comm (use \"%.15s*\")",
				    rule->comm, rule->comm);
		rule->needs |= NEED_COMM;
	}
	if ((s = config_setting_get_member(g, "exe"))) {
		r = parse_pattern(x, s, &rule->exe);
		if (r < 0)
			return r;
		rule->needs |= NEED_EXE;
	}
	if ((s = config_setting_get_member(g, "cmdline"))) {
		char msg[128];

		r = parse_pattern(x, s, &rule->cmdline);
		if (r < 0)
			return r;
		long cost = regex_cost(rule->cmdline);
		if (cost == -EINVAL)
			return fail(x, s, "bad regex in 'cmdline': "
				    "back-references are not supported");
		if (cost > REGEX_MAX_COST)
			return fail(x, s, "regex in 'cmdline' is too complex: "
				    "its repetitions expand to more than %d "
				    "states", REGEX_MAX_COST);
		r = regcomp(&rule->cmdline_re, rule->cmdline,
			    REG_EXTENDED | REG_NOSUB);
		if (r) {
			regerror(r, &rule->cmdline_re, msg, sizeof(msg));
			return fail(x, s, "bad regex in 'cmdline': %s", msg);
		}
		rule->has_re = true;
		rule->re_cost = (unsigned int)(cost > 0 ? cost : 1);
		rule->needs |= NEED_CMDLINE;
	}
	if ((s = config_setting_get_member(g, "user"))) {
		r = parse_user(x, s, rule);
		if (r < 0)
			return r;
		rule->needs |= NEED_UID;
	}
	if ((s = config_setting_get_member(g, "cgroup"))) {
		r = parse_pattern(x, s, &rule->cgroup);
		if (r < 0)
			return r;
		if (rule->cgroup[0] != '/')
			return fail(x, s,
				    "'cgroup' must be an absolute path "
				    "like \"/system.slice\"");
		rule->needs |= NEED_CGROUP;
	}
	if ((s = config_setting_get_member(g, "unit"))) {
		r = parse_pattern(x, s, &rule->unit);
		if (r < 0)
			return r;
		/* A unit name is one cgroup path component. */
		if (strchr(rule->unit, '/'))
			return fail(x, s,
				    "'unit' is a unit name like "
				    "\"postgresql@*.service\", not a path");
		rule->needs |= NEED_CGROUP;
	}
	if (!rule->needs)
		return fail(x, g,
			    "rule '%s' has no match key (comm, exe, "
			    "cmdline, user, cgroup or unit)",
			    rule->name);

	nodes = config_setting_get_member(g, "nodes");
	cpus = config_setting_get_member(g, "cpus");
	if (nodes && cpus)
		return fail(x, cpus, "rule '%s' has both 'nodes' and 'cpus'",
			    rule->name);
	if (!nodes && !cpus)
		return fail(x, g,
			    "empty target: rule '%s' has neither "
			    "'nodes' nor 'cpus'",
			    rule->name);
	r = nodes ? parse_nodes(x, nodes, rule) : parse_cpus(x, cpus, rule);
	if (r < 0)
		return r;
	topology_nodes_of(x->topo, &rule->cpus, &rule->node_idx);

	rule->threads = THREADS_ALL;
	if ((s = config_setting_get_member(g, "threads"))) {
		const char *v;

		r = get_string(x, s, &v);
		if (r < 0)
			return r;
		if (!strcmp(v, "main"))
			rule->threads = THREADS_MAIN;
		else if (strcmp(v, "all"))
			return fail(x, s,
				    "'threads' must be \"all\" or "
				    "\"main\"");
	}
	rule->softness.kind = SOFT_ADAPTIVE;
	if ((s = config_setting_get_member(g, "softness"))) {
		r = get_softness(x, s, &rule->softness);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The rules of list s, appended to c's; x->name is their file. */
static int parse_rules(struct ctx *x, const config_setting_t *s,
		       struct config *c)
{
	const char *file = c->files[c->nfiles - 1];
	unsigned int n, first = c->nrules;
	struct rule *grown;

	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(x, s, "'rules' must be a list ( { ... }, ... )");
	n = (unsigned int)config_setting_length(s);
	if (first + n > CONFIG_MAX_RULES)
		return fail(x,
			    config_setting_get_elem(s, CONFIG_MAX_RULES - first),
			    "too many rules (at most %d)", CONFIG_MAX_RULES);
	grown = realloc(c->rules, (first + n ? first + n : 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->rules = grown;
	memset(c->rules + first, 0, n * sizeof(*grown));
	for (unsigned int i = first; i < first + n; i++) {
		config_setting_t *g = config_setting_get_elem(s, i - first);
		struct rule *rule = &c->rules[i];
		int r;

		c->nrules = i + 1;
		rule->file = file;
		r = parse_rule(x, g, i, rule);
		if (r < 0)
			return r;
		for (unsigned int j = 0; j < i; j++) {
			const struct rule *o = &c->rules[j];

			if (strcmp(o->name, rule->name))
				continue;
			if (o->file == file)
				return fail(x, g,
					    "duplicate rule name '%s' "
					    "(first at line %d)",
					    rule->name, o->line);
			return fail(x, g,
				    "duplicate rule name '%s' (first at "
				    "%s:%d)",
				    rule->name, o->file, o->line);
		}
		c->needs |= rule->needs;
	}
	return 0;
}

static int parse_root(struct ctx *x, config_t *cf, struct config *c)
{
	static const char *const keys[] = {"interval_ms",     "rescan_ms",
					   "restore_on_exit", "ratio",
					   "rules",	      NULL};
	config_setting_t *root = config_root_setting(cf), *s;
	int r;

	r = check_keys(x, root, keys, "");
	if (r < 0)
		return r;
	if ((s = config_setting_get_member(root, "interval_ms")) &&
	    (r = get_uint(x, s, 100, 60000, &c->interval_ms)) < 0)
		return r;
	if ((s = config_setting_get_member(root, "rescan_ms")) &&
	    (r = get_uint(x, s, 500, 3600000, &c->rescan_ms)) < 0)
		return r;
	if ((s = config_setting_get_member(root, "restore_on_exit"))) {
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return fail(x, s,
				    "'restore_on_exit' must be true or "
				    "false");
		c->restore_on_exit = config_setting_get_bool(s);
	}
	if ((s = config_setting_get_member(root, "ratio")) &&
	    (r = parse_ratio_group(x, s, c)) < 0)
		return r;

	s = config_setting_get_member(root, "rules");
	return s ? parse_rules(x, s, c) : 0;
}

static void config_defaults(struct config *c)
{
	c->interval_ms = 1000;
	c->rescan_ms = 10000;
	c->restore_on_exit = true;
	/*
	 * The sysctls are every soft-affine task's default, so a daemon
	 * that moves them couples all rules and all users: softness is per
	 * rule now, and the global ratio only moves when asked to.
	 */
	c->mode = RATIO_OFF;
	/* The kernel default, and what the RFC measured as "hard". */
	c->fixed = (struct ratio){100, 1};
	c->hardest = (struct ratio){100, 1};
	/* The RFC's "softer" setting that fixed single-instance hackbench. */
	c->softest = (struct ratio){5, 4};
	c->saturated_pct = 85;
	c->idle_pct = 50;
	c->hold = 3;
	c->min_change_ms = 5000;
}

/* libconfig's complaint about cf (read by config_read_*) as ours. */
static int read_error(config_t *cf, const char *name, char *err, size_t errlen)
{
	struct ctx x = {name, config_get_include_dir(cf), NULL, err, errlen,
			0};

	if (config_error_type(cf) == CONFIG_ERR_FILE_IO) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot read: %s", name,
			 e ? strerror(e) : "I/O error");
		return -ENOENT;
	}
	return fail_at(&x, config_error_file(cf), config_error_line(cf), "%s",
		       config_error_text(cf));
}

/* A new config from the main file's cf, which this destroys. */
static int load_main(config_t *cf, const char *name,
		     const struct topology *topo, unsigned int flags,
		     struct config **ret, char *err, size_t errlen)
{
	struct ctx x = {name, config_get_include_dir(cf), topo, err, errlen,
			flags};
	struct config *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		config_destroy(cf);
		return -ENOMEM;
	}
	config_defaults(c);
	c->path = strdup(name);
	c->files[0] = strdup(name);
	c->nfiles = 1;
	r = c->path && c->files[0] ? parse_root(&x, cf, c) : -ENOMEM;
	config_destroy(cf);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* The largest configuration file read, included ones each. */
#define CONFIG_MAX_FILE (1 << 20)
/* libconfig's own limit on nested @include. */
#define CONFIG_MAX_INCLUDE_DEPTH 10

/*
 * Whoever can write the configuration decides which processes run where,
 * and what the daemon reads: it must be a regular file (the drop-in
 * directory a directory), owned by root
 * (or by the user running softaffd, so that tests and -t work for
 * anyone), and not writable by group or others.  0, or -EPERM with the
 * reason in err.
 */
static int check_file(const char *path, const struct stat *st, bool dir,
		      char *err, size_t errlen)
{
	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: not a %s; refusing it", path,
			 dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s: owned by uid %u, not root; refusing it", path,
			 (unsigned int)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "%s: writable by group or others (mode %04o); "
			 "refusing it (chmod go-w %s)",
			 path, (unsigned int)(st->st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/*
 * Open and check path, read it whole into *ret (malloc'd, NUL
 * terminated).  O_NONBLOCK: a FIFO must be refused, not waited on.
 * 0 or -errno with err set.
 */
static int read_checked(const char *path, char **ret, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = errno;
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(r));
		return -r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(-r));
		close(fd);
		return r;
	}
	r = check_file(path, &st, false, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (st.st_size > CONFIG_MAX_FILE) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 CONFIG_MAX_FILE);
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, buf, (size_t)st.st_size);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(-r));
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}

/*
 * Check every file text @includes (libconfig 1.5 opens them itself, so
 * this looks first): '@include "name"' at the start of a line, as
 * libconfig's scanner has it, relative to incdir.  A file that does not
 * exist is left to libconfig's own message.
 */
static int check_includes(const char *text, const char *incdir, int depth,
			  char *err, size_t errlen)
{
	const char *p = text;

	while (p && *p) {
		char name[PATH_MAX / 2], path[PATH_MAX];
		const char *q = p, *end;
		char *inc;
		int r;

		p = strchr(p, '\n');
		if (p)
			p++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "@include", 8))
			continue;
		q += 8;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '"' || !(end = strchr(q, '"')) ||
		    (size_t)(end - q) >= sizeof(name))
			continue;
		memcpy(name, q, (size_t)(end - q));
		name[end - q] = '\0';
		if (name[0] == '/' || !incdir ||
		    strlen(incdir) >= sizeof(path) - sizeof(name))
			snprintf(path, sizeof(path), "%s", name);
		else
			snprintf(path, sizeof(path), "%.*s/%s",
				 (int)(sizeof(path) - sizeof(name) - 1), incdir,
				 name);
		if (depth >= CONFIG_MAX_INCLUDE_DEPTH)
			return 0; /* libconfig says so itself */
		r = read_checked(path, &inc, err, errlen);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		r = check_includes(inc, incdir, depth + 1, err, errlen);
		free(inc);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Read path (checked, and the files it @includes) into cf, which this
 * initialises; on error cf is destroyed and err says why.
 */
static int read_file_cf(const char *path, config_t *cf, char *err,
			size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *incdir = NULL;
	char *text;
	int r;

	/* @include "x.conf" is relative to the including file's directory. */
	if (slash && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		incdir = slash == path ? "/" : dir;
	}
	r = read_checked(path, &text, err, errlen);
	if (r < 0)
		return r;
	r = check_includes(text, incdir, 1, err, errlen);
	if (r < 0) {
		free(text);
		return r;
	}
	config_init(cf);
	if (incdir)
		config_set_include_dir(cf, incdir);
	r = config_read_string(cf, text);
	free(text);
	if (!r) {
		r = read_error(cf, path, err, errlen);
		config_destroy(cf);
		return r;
	}
	return 0;
}

int config_dropin_dir(const char *path, char *ret, size_t size)
{
	size_t n = strlen(path);

	if (n > 5 && !strcmp(path + n - 5, ".conf"))
		n -= 5;
	if ((size_t)snprintf(ret, size, "%.*s.d", (int)n, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dropin_name(const char *n)
{
	size_t len = strlen(n);

	/* Hidden files are editors' and package managers' scratch. */
	return n[0] != '.' && len > 5 && !strcmp(n + len - 5, ".conf");
}

/*
 * The *.conf names in dir, sorted bytewise (not by locale: the order
 * must not depend on LANG), into *ret; count or -errno with err set.
 * The directory is held to the same trust as the files: root's (or the
 * caller's), and not writable by group or others, or anyone could add
 * a rule.  A missing directory is no drop-ins.
 */
static int list_dropins(const char *dir, char ***ret, char *err, size_t errlen)
{
	char **names = NULL;
	struct dirent *de;
	struct stat st;
	int fd, n = 0, r = 0;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", dir,
			 strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	r = check_file(dir, &st, true, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char **grown;

		if (!is_dropin_name(de->d_name))
			continue;
		if (n == CONFIG_MAX_DROPINS) {
			snprintf(err, errlen, "%s: more than %d drop-ins", dir,
				 CONFIG_MAX_DROPINS);
			r = -E2BIG;
			break;
		}
		grown = realloc(names, (size_t)(n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			r = -ENOMEM;
			break;
		}
		names = grown;
		n++;
	}
	closedir(d);
	if (r < 0) {
		while (n--)
			free(names[n]);
		free(names);
		return r;
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	*ret = names;
	return n;
}

/* One drop-in: it may only add rules. */
static int load_dropin(const char *path, const struct topology *topo,
		       unsigned int flags, struct config *c, char *err,
		       size_t errlen)
{
	static const char *const keys[] = {"rules", NULL};
	config_t cf;
	config_setting_t *s;
	int r;

	c->files[c->nfiles] = strdup(path);
	if (!c->files[c->nfiles])
		return -ENOMEM;
	c->nfiles++;
	r = read_file_cf(path, &cf, err, errlen);
	if (r < 0)
		return r;
	struct ctx x = {path, config_get_include_dir(&cf), topo, err, errlen,
			flags};
	r = check_keys(&x, config_root_setting(&cf), keys,
		       " in a drop-in (it may only add 'rules')");
	if (r == 0 && (s = config_lookup(&cf, "rules")))
		r = parse_rules(&x, s, c);
	config_destroy(&cf);
	return r;
}

static int load_dropins(const char *path, const struct topology *topo,
			unsigned int flags, struct config *c, char *err,
			size_t errlen)
{
	char dir[PATH_MAX], file[PATH_MAX];
	char **names = NULL;
	int n, r = 0;

	if (config_dropin_dir(path, dir, sizeof(dir)) < 0)
		return 0;
	n = list_dropins(dir, &names, err, errlen);
	if (n < 0)
		return n;
	for (int i = 0; i < n && r == 0; i++) {
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir,
				     names[i]) >= sizeof(file)) {
			snprintf(err, errlen, "%s/%s: name too long", dir,
				 names[i]);
			r = -ENAMETOOLONG;
			break;
		}
		r = load_dropin(file, topo, flags, c, err, errlen);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int config_load(const char *path, const struct topology *topo,
		struct config **ret, char *err, size_t errlen)
{
	return config_load_flags(path, topo, 0, ret, err, errlen);
}

int config_load_flags(const char *path, const struct topology *topo,
		      unsigned int flags, struct config **ret, char *err,
		      size_t errlen)
{
	struct config *c;
	config_t cf;
	int r;

	r = read_file_cf(path, &cf, err, errlen);
	if (r < 0)
		return r;
	r = load_main(&cf, path, topo, flags, &c, err, errlen);
	if (r < 0)
		return r;
	r = load_dropins(path, topo, flags, c, err, errlen);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int config_load_string(const char *text, const char *name,
		       const struct topology *topo, struct config **ret,
		       char *err, size_t errlen)
{
	config_t cf;
	int r;

	if (strstr(text, "@include")) {
		snprintf(err, errlen, "%s:0: @include not allowed here", name);
		return -EINVAL;
	}
	config_init(&cf);
	if (!config_read_string(&cf, text)) {
		r = read_error(&cf, name, err, errlen);
		config_destroy(&cf);
		return r;
	}
	return load_main(&cf, name, topo, 0, ret, err, errlen);
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < c->nrules; i++) {
		struct rule *r = &c->rules[i];

		free(r->name);
		free(r->comm);
		free(r->exe);
		free(r->cmdline);
		if (r->has_re)
			regfree(&r->cmdline_re);
		free(r->user);
		free(r->cgroup);
		free(r->unit);
		free(r->cpus_text);
	}
	for (unsigned int i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->rules);
	free(c->path);
	free(c);
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool rule_equal(const struct rule *a, const struct rule *b)
{
	return str_eq(a->name, b->name) && str_eq(a->comm, b->comm) &&
	       str_eq(a->exe, b->exe) && str_eq(a->cmdline, b->cmdline) &&
	       a->has_uid == b->has_uid && (!a->has_uid || a->uid == b->uid) &&
	       str_eq(a->cgroup, b->cgroup) && str_eq(a->unit, b->unit) &&
	       a->softness.kind == b->softness.kind &&
	       (a->softness.kind == SOFT_ADAPTIVE ||
		!memcmp(&a->softness.fixed, &b->softness.fixed,
			sizeof(a->softness.fixed))) &&
	       cpuset_equal(&a->cpus, &b->cpus) && a->threads == b->threads;
}

bool config_rules_equal(const struct config *a, const struct config *b)
{
	if (a->nrules != b->nrules)
		return false;
	/* In order: the first rule that matches wins. */
	for (unsigned int i = 0; i < a->nrules; i++)
		if (!rule_equal(&a->rules[i], &b->rules[i]))
			return false;
	return true;
}

const char *ratio_mode_name(enum ratio_mode m)
{
	switch (m) {
	case RATIO_OFF:
		return "off";
	case RATIO_FIXED:
		return "fixed";
	default:
		return "adaptive";
	}
}

/* Print a string as a libconfig literal. */
static void dump_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\t\t%s = \"", key);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fprintf(f, "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*v);
		else
			fputc(*v, f);
	}
	fprintf(f, "\";\n");
}

void config_dump(const struct config *c, FILE *f)
{
	char cpus[CPUSET_LIST_BUFSZ];

	fprintf(f, "interval_ms = %u;\n", c->interval_ms);
	fprintf(f, "rescan_ms = %u;\n", c->rescan_ms);
	fprintf(f, "restore_on_exit = %s;\n",
		c->restore_on_exit ? "true" : "false");
	fprintf(f, "ratio = {\n\tmode = \"%s\";\n", ratio_mode_name(c->mode));
	if (c->mode == RATIO_FIXED) {
		fprintf(f, "\tallowed = %u;\n\tpreferred = %u;\n",
			c->fixed.allowed, c->fixed.preferred);
	} else if (c->mode == RATIO_ADAPTIVE) {
		fprintf(f, "\tsoftest = \"%u:%u\";\n", c->softest.allowed,
			c->softest.preferred);
		fprintf(f, "\thardest = \"%u:%u\";\n", c->hardest.allowed,
			c->hardest.preferred);
		fprintf(f, "\tsaturated = %u;\n\tidle = %u;\n",
			c->saturated_pct, c->idle_pct);
		fprintf(f, "\thold = %u;\n\tmin_change_ms = %u;\n", c->hold,
			c->min_change_ms);
	}
	fprintf(f, "};\n");
	fprintf(f, "rules = (");
	for (unsigned int i = 0; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];

		fprintf(f, "%s\n\t{\n", i ? "," : "");
		dump_str(f, "name", r->name);
		if (r->comm)
			dump_str(f, "comm", r->comm);
		if (r->exe)
			dump_str(f, "exe", r->exe);
		if (r->cmdline)
			dump_str(f, "cmdline", r->cmdline);
		if (r->has_uid) {
			uint64_t id;

			if (parse_u64(r->user, &id) == 0)
				fprintf(f, "\t\tuser = %u;\n",
					(unsigned int)r->uid);
			else
				fprintf(f, "\t\tuser = \"%s\"; # uid %u\n",
					r->user, (unsigned int)r->uid);
		}
		if (r->cgroup)
			dump_str(f, "cgroup", r->cgroup);
		if (r->unit)
			dump_str(f, "unit", r->unit);
		cpuset_format_list(&r->cpus, cpus, sizeof(cpus));
		if (r->cpus_text) {
			fprintf(f, "\t\tcpus = \"%s\";\n", cpus);
		} else {
			fprintf(f, "\t\tnodes = [");
			for (unsigned int j = 0; j < r->nnodes; j++)
				fprintf(f, "%s%d", j ? ", " : " ", r->nodes[j]);
			fprintf(f, " ]; # cpus %s\n", cpus);
		}
		fprintf(f, "\t\tthreads = \"%s\";\n",
			r->threads == THREADS_ALL ? "all" : "main");
		if (r->softness.kind == SOFT_ADAPTIVE)
			fprintf(f, "\t\tsoftness = \"adaptive\";\n");
		else if (r->softness.kind == SOFT_STRICT)
			fprintf(f, "\t\tsoftness = \"strict\";\n");
		else
			fprintf(f, "\t\tsoftness = \"%u:%u\";\n",
				r->softness.fixed.allowed,
				r->softness.fixed.preferred);
		fprintf(f, "\t}");
	}
	fprintf(f, "%s);\n", c->nrules ? "\n" : "");
}
