// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules: each one's match keys, target and softness, checked as
 * they are read; the list of them, whose names must differ; and when
 * two rules are the same rule (a reload keeps what such a rule had).
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "util.h"

static int parse_pattern(struct ctx *x, const config_setting_t *s, char **ret)
{
	const char *v;
	int r;

	r = conf_get_string(x, s, &v);
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

	if (conf_is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < 0 || n >= (long long)UINT32_MAX)
			return fail(x, s, "'user' = %lld is not a valid uid",
				    n);
		rule->uid = (uid_t)n;
		snprintf(buf, sizeof(buf), "%lld", n);
		v = buf;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		r = conf_get_string(x, s, &v);
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

		if (!conf_is_int(e))
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

	r = conf_get_string(x, s, &v);
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
	r = conf_check_keys(x, g, keys, " in rule");
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

		r = conf_get_string(x, s, &v);
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
		r = conf_get_softness(x, s, &rule->softness);
		if (r < 0)
			return r;
	}
	return 0;
}

int conf_parse_rules(struct ctx *x, const config_setting_t *s,
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

