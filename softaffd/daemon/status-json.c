// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd --status --json: the status as one JSON object, built with
 * json-c.  Keys come out in the order they are added; numbers that are
 * figures keep the text's precision (one decimal for percentages, none
 * for rates), so the two views never disagree.
 */
#include <stdio.h>

#include <json-c/json.h>

#include "status.h"

/*
 * json-c answers NULL only when out of memory.  The builder remembers
 * that, and then nothing is written rather than an object with holes.
 */
struct builder {
	bool oom;
};

static void add(struct builder *j, struct json_object *o, const char *key,
		struct json_object *v)
{
	if (!v || !o || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		j->oom = true;
	}
}

/* A null on purpose: a figure not known. */
static void add_null(struct builder *j, struct json_object *o,
		     const char *key)
{
	if (!o || json_object_object_add(o, key, NULL) < 0)
		j->oom = true;
}

static void add_str(struct builder *j, struct json_object *o,
		    const char *key, const char *v)
{
	add(j, o, key, json_object_new_string(v));
}

static void add_int(struct builder *j, struct json_object *o,
		    const char *key, int64_t v)
{
	add(j, o, key, json_object_new_int64(v));
}

/* v with decimals digits after the point: the text's precision. */
static void add_fixed(struct builder *j, struct json_object *o,
		      const char *key, int decimals, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	add(j, o, key, json_object_new_double_s(v, buf));
}

static void push(struct builder *j, struct json_object *a,
		 struct json_object *v)
{
	if (!v || !a || json_object_array_add(a, v) < 0) {
		json_object_put(v);
		j->oom = true;
	}
}

/* What a rule's softness did: its figures, or nulls without any. */
static void add_softness(struct builder *j, struct json_object *o,
			 const struct status_softness *rs)
{
	const struct rule_figures *f = rs->last;
	char ratio[RATIO_BUFSZ];

	add_str(j, o, "ratio", ratio_format(rs->ratio, ratio, sizeof(ratio)));
	add_str(j, o, "via", rs->cg_mode ? "cgroup" : "process");
	add_str(j, o, "why", rs->why[0] ? rs->why : "not sampled yet");
	if (!status_has_figures(f)) {
		add_null(j, o, "threads");
		add_null(j, o, "wait_pct");
		add_null(j, o, "outside_pct");
		add_null(j, o, "spills_per_min");
		add_null(j, o, "returns_per_min");
		return;
	}
	add_int(j, o, "threads", f->threads);
	add_fixed(j, o, "wait_pct", 1, status_wait_pct(f));
	add_str(j, o, "wait_source", status_wait_source(f));
	add_fixed(j, o, "outside_pct", 1, status_outside_pct(f));
	add(j, o, "outside_estimated", json_object_new_boolean(!f->exact));
	if (f->exact && f->locality_ns) {
		add_fixed(j, o, "spills_per_min", 0,
			  status_per_min(f, f->spills));
		add_fixed(j, o, "returns_per_min", 0,
			  status_per_min(f, f->returns));
	} else {
		add_null(j, o, "spills_per_min");
		add_null(j, o, "returns_per_min");
	}
	if (!f->exact)
		add_str(j, o, "spills_note",
			"n/a (" STATUS_NEEDS_SCHEDSTATS ")");
}

static struct json_object *rule_json(struct builder *j,
				     const struct status_snapshot *s,
				     unsigned int r)
{
	const struct rule *ru = &s->cfg->rules[r];
	struct json_object *o = json_object_new_object();
	struct json_object *pids = json_object_new_array();
	char cpus[CPUSET_LIST_BUFSZ];
	unsigned int lo, hi;

	cpuset_format_list(&ru->cpus, cpus, sizeof(cpus));
	add_str(j, o, "name", ru->name);
	add_str(j, o, "cpus", cpus);
	add_int(j, o, "processes", s->rules[r].processes);
	status_rule_span(s, r, &lo, &hi);
	for (unsigned int i = lo; i < hi && i - lo < STATUS_MAX_PIDS; i++)
		push(j, pids, json_object_new_int(s->pids[i * 3 + 1]));
	add(j, o, "pids", pids);
	add_str(j, o, "softness", softness_name(ru->softness.kind));
	if (s->rules[r].soft)
		add_softness(j, o, s->rules[r].soft);
	return o;
}

static struct json_object *containers_json(struct builder *j,
					   const struct status_snapshot *s)
{
	struct json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < s->ncontainers; i++) {
		const struct container_left *k = &s->containers[i];
		struct json_object *o;
		char cg[4 * PATH_MAX];

		if (k->rule >= s->cfg->nrules)
			continue;
		o = json_object_new_object();
		add_str(j, o, "rule", s->cfg->rules[k->rule].name);
		add_str(j, o, "id", k->id);
		add_str(j, o, "cgroup",
			procfs_escape(k->cgroup, cg, sizeof(cg)));
		add_str(j, o, "preference", STATUS_CONTAINER_SAYS);
		push(j, a, o);
	}
	return a;
}

void status_format_json(const struct status_snapshot *s, struct sbuf *b)
{
	struct json_object *root = json_object_new_object();
	struct json_object *rules = json_object_new_array();
	struct builder j = {false};
	const char *text = NULL;

	add_int(&j, root, "pid", s->pid);
	add_str(&j, root, "config", s->cfg->path);
	add(&j, root, "dry_run", json_object_new_boolean(s->dry_run));
	add_int(&j, root, "processes", (int64_t)s->processes);
	for (unsigned int r = 0; r < s->cfg->nrules; r++)
		push(&j, rules, rule_json(&j, s, r));
	add(&j, root, "rules", rules);
	add(&j, root, "containers", containers_json(&j, s));
	/* "/" as is: paths are much of what it holds. */
	if (!j.oom)
		text = json_object_to_json_string_ext(
			root, JSON_C_TO_STRING_PLAIN |
				      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text)
		sbuf_printf(b, "%s\n", text);
	else
		b->oom = true;
	json_object_put(root);
}
