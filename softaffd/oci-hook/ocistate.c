// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The OCI container state (runtime-spec "State"), as a runtime writes it
 * on a hook's standard input:
 *
 *   {"ociVersion": "1.0.2", "id": "4f1c...", "status": "creating",
 *    "pid": 4242, "bundle": "/run/containers/.../userdata",
 *    "annotations": {"io.softaff.nodes": "1", "other": "x"}}
 *
 * Parsed with json-c; only id, pid, bundle and the io.softaff.*
 * annotations are kept.  Anything the hook does not understand under
 * its prefix is an error, never ignored: a typo must not start a
 * container without the preference its owner asked for.
 */
#include <errno.h>
#include <json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocistate.h"
#include "procfs.h"

#define KEY_NODES    OCI_ANNOTATION_PREFIX "nodes"
#define KEY_CPUS     OCI_ANNOTATION_PREFIX "cpus"
#define KEY_SOFTNESS OCI_ANNOTATION_PREFIX "softness"
/* Enough of a value or key to recognise it in a message. */
#define QUOTE_BUFSZ 256

static int fail(char *err, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *oci_quote(const char *in, char *buf, size_t size)
{
	char head[QUOTE_BUFSZ];
	size_t n;

	if (size < 8) {
		if (size)
			buf[0] = '\0';
		return buf;
	}
	/*
	 * A byte escapes to at most 4 characters: this many always fit
	 * with "..." after them, so procfs_escape() never cuts one short.
	 */
	n = (size - 5) / 4;
	if (n > sizeof(head) - 1)
		n = sizeof(head) - 1;
	n = strnlen(in, n);
	memcpy(head, in, n);
	head[n] = '\0';
	procfs_escape(head, buf, size);
	if (in[n])
		strcat(buf, "...");
	return buf;
}

/*
 * A JSON string as a C string: json-c keeps "\u0000" inside its strings,
 * which C would silently cut there.  NULL if s is no such string.
 */
static const char *c_string(struct json_object *s)
{
	const char *v;

	if (!json_object_is_type(s, json_type_string))
		return NULL;
	v = json_object_get_string(s);
	if (strlen(v) != (size_t)json_object_get_string_len(s))
		return NULL;
	return v;
}

static const char *type_name(struct json_object *o)
{
	return json_type_to_name(json_object_get_type(o));
}

static int parse_id(struct json_object *root, struct oci_state *ret, char *err,
		    size_t size)
{
	struct json_object *o;
	const char *id;

	if (!json_object_object_get_ex(root, "id", &o))
		return fail(err, size, "container state: no \"id\"");
	id = c_string(o);
	if (!id)
		return fail(err, size,
			    "container state: \"id\" is not a string (%s) or "
			    "holds a NUL character",
			    type_name(o));
	if (!*id || strlen(id) > OCI_ID_MAX)
		return fail(err, size,
			    "container state: \"id\" is empty or longer than "
			    "%d bytes",
			    OCI_ID_MAX);
	ret->id = strdup(id);
	return ret->id ? 0 : -ENOMEM;
}

static int parse_pid(struct json_object *root, struct oci_state *ret, char *err,
		     size_t size)
{
	struct json_object *o;
	int64_t pid;

	if (!json_object_object_get_ex(root, "pid", &o))
		return fail(err, size,
			    "container state: no \"pid\" (is the hook "
			    "configured for a stage without a process?)");
	if (!json_object_is_type(o, json_type_int))
		return fail(err, size,
			    "container state: \"pid\" is not an integer (%s)",
			    type_name(o));
	/* json-c saturates what does not fit in 64 bits: still too big. */
	pid = json_object_get_int64(o);
	if (pid <= 0 || pid > INT32_MAX)
		return fail(err, size,
			    "container state: \"pid\" %lld is not a process "
			    "id",
			    (long long)pid);
	ret->pid = (int)pid;
	return 0;
}

static int parse_bundle(struct json_object *root, struct oci_state *ret,
			char *err, size_t size)
{
	struct json_object *o;
	const char *b;

	if (!json_object_object_get_ex(root, "bundle", &o) || !o)
		return 0;
	b = c_string(o);
	if (!b)
		return fail(err, size,
			    "container state: \"bundle\" is not a string");
	ret->bundle = strdup(b);
	return ret->bundle ? 0 : -ENOMEM;
}

static int add_annotation(struct oci_state *s, const char *key,
			  const char *value)
{
	struct oci_annotation *a;

	a = realloc(s->annotations, (s->nannotations + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	s->annotations = a;
	a = &s->annotations[s->nannotations];
	a->key = strdup(key);
	a->value = strdup(value);
	if (!a->key || !a->value) {
		free(a->key);
		free(a->value);
		return -ENOMEM;
	}
	s->nannotations++;
	return 0;
}

/*
 * The spec makes annotations a map of strings to strings: anything else
 * is a broken runtime, whichever key it is under.  null is no map.
 */
static int parse_annotations(struct json_object *root, struct oci_state *ret,
			     char *err, size_t size)
{
	const size_t plen = strlen(OCI_ANNOTATION_PREFIX);
	struct json_object *map;
	char q[QUOTE_BUFSZ];
	int r;

	if (!json_object_object_get_ex(root, "annotations", &map) || !map)
		return 0;
	if (!json_object_is_type(map, json_type_object))
		return fail(err, size,
			    "container state: \"annotations\" is not an "
			    "object (%s)",
			    type_name(map));
	json_object_object_foreach(map, key, val)
	{
		const char *v = c_string(val);

		if (!v)
			return fail(err, size,
				    "container state: annotation \"%s\" is "
				    "not a string (%s) or holds a NUL "
				    "character",
				    oci_quote(key, q, sizeof(q)),
				    type_name(val));
		if (strncmp(key, OCI_ANNOTATION_PREFIX, plen))
			continue;
		r = add_annotation(ret, key, v);
		if (r < 0)
			return r;
	}
	return 0;
}

int oci_state_parse(const char *text, size_t len, struct oci_state *ret,
		    char *err, size_t size)
{
	struct json_object *root = NULL;
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (len > OCI_STATE_MAX)
		return fail(err, size, "container state: longer than %d bytes",
			    OCI_STATE_MAX);
	if (strlen(text) != len)
		return fail(err, size, "container state: holds a NUL byte");
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	/*
	 * Strict: no trailing text after the object, nor a second one; and
	 * UTF-8 only, as JSON is.  The terminating NUL is passed too: it
	 * tells json-c that the input ends there.
	 */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		r = fail(err, size, "container state: not valid JSON (%s)",
			 json_tokener_error_desc(jerr));
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		r = fail(err, size, "container state: not a JSON object but %s",
			 root ? type_name(root) : "null");
		goto out;
	}
	r = parse_id(root, ret, err, size);
	if (!r)
		r = parse_pid(root, ret, err, size);
	if (!r)
		r = parse_bundle(root, ret, err, size);
	if (!r)
		r = parse_annotations(root, ret, err, size);
out:
	json_object_put(root);
	if (r < 0)
		oci_state_free(ret);
	return r;
}

void oci_state_free(struct oci_state *s)
{
	for (size_t i = 0; i < s->nannotations; i++) {
		free(s->annotations[i].key);
		free(s->annotations[i].value);
	}
	free(s->annotations);
	free(s->id);
	free(s->bundle);
	memset(s, 0, sizeof(*s));
}

/* 'KEY="VALUE": ' then the reason: the start of every decode error. */
static int bad_value(char *err, size_t size, const struct oci_annotation *a,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad_value(char *err, size_t size, const struct oci_annotation *a,
		     const char *fmt, ...)
{
	char k[QUOTE_BUFSZ], v[QUOTE_BUFSZ];
	va_list ap;
	int n;

	n = snprintf(err, size, "%s=\"%s\": ", oci_quote(a->key, k, sizeof(k)),
		     oci_quote(a->value, v, sizeof(v)));
	if (n >= 0 && (size_t)n < size) {
		va_start(ap, fmt);
		vsnprintf(err + n, size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int decode_nodes(const struct oci_annotation *a,
			const struct topology *t, struct cpuset *ret, char *err,
			size_t size)
{
	char list[CPUSET_LIST_BUFSZ];
	struct cpuset ids;
	int r, node = -1;

	r = pref_nodes_cpus(t, a->value, ret, &node);
	if (r == -ENOENT) {
		cpuset_zero(&ids);
		for (unsigned int i = 0; i < t->nnodes; i++)
			cpuset_set(&ids, (unsigned int)t->ids[i]);
		cpuset_format_list(&ids, list, sizeof(list));
		return bad_value(err, size, a,
				 "node %d does not exist (nodes: %s)", node,
				 list);
	}
	if (r < 0)
		return bad_value(err, size, a,
				 "not a NUMA node list (e.g. 1 or 0-1)");
	/* A memory-only node: an empty list would clear the preference. */
	if (cpuset_empty(ret))
		return bad_value(err, size, a, "these nodes have no CPUs");
	return 0;
}

static int decode_cpus(const struct oci_annotation *a, const struct topology *t,
		       struct cpuset *ret, char *err, size_t size)
{
	char list[CPUSET_LIST_BUFSZ];
	int r, cpu;

	r = cpuset_parse_list(a->value, ret);
	if (r == -ERANGE)
		return bad_value(err, size, a, "names a CPU beyond %d",
				 CPUSET_MAX - 1);
	if (r < 0)
		return bad_value(err, size, a,
				 "not a CPU list (e.g. 2-3 or 0,4)");
	if (cpuset_empty(ret))
		return bad_value(err, size, a, "names no CPU");
	for_each_cpu (cpu, ret) {
		if (!cpuset_test(&t->present, (unsigned int)cpu)) {
			cpuset_format_list(&t->present, list, sizeof(list));
			return bad_value(err, size, a,
					 "CPU %d is not present (present: "
					 "%s)",
					 cpu, list);
		}
	}
	return 0;
}

/*
 * The fixed softness words of softaffd.conf(5), and the kernel's own
 * "inherit" (or "default", its older name) and "none".  "adaptive"
 * needs softaffd to tune it: refused by name.
 */
static int decode_softness(const struct oci_annotation *a,
			   struct ratio_req *ret, char *err, size_t size)
{
	enum soft_kind kind;

	if (softness_word(a->value, &kind)) {
		if (kind == SOFT_ADAPTIVE)
			return bad_value(err, size, a,
					 "adaptive softness needs a softaffd "
					 "rule; the hook takes "
					 "ALLOWED:PREFERRED, strict, inherit "
					 "or none");
		*ret = (struct ratio_req){REQ_SET, RATIO_STRICT};
		return 0;
	}
	if (ratio_req_parse(a->value, ret) < 0)
		return bad_value(err, size, a,
				 "want ALLOWED:PREFERRED (each %d..%d, e.g. "
				 "20:1), strict, inherit or none",
				 RATIO_MIN, RATIO_MAX);
	return 0;
}

static int decode_one(const struct oci_annotation *a, const struct topology *t,
		      struct oci_request *ret, char *err, size_t size)
{
	bool softness = !strcmp(a->key, KEY_SOFTNESS);
	int r;

	if (!*a->value)
		return bad_value(err, size, a, "empty value");
	if (!strcmp(a->key, KEY_NODES))
		r = decode_nodes(a, t, &ret->cpus, err, size);
	else if (!strcmp(a->key, KEY_CPUS))
		r = decode_cpus(a, t, &ret->cpus, err, size);
	else if (softness)
		r = decode_softness(a, &ret->ratio, err, size);
	else
		return bad_value(err, size, a,
				 "unknown annotation (known: " KEY_NODES
				 ", " KEY_CPUS ", " KEY_SOFTNESS ")");
	if (r < 0)
		return r;
	if (softness)
		ret->ratio_from = a;
	else
		ret->cpus_from = a;
	ret->has_ratio = ret->ratio_from != NULL;
	ret->has_cpus = ret->cpus_from != NULL;
	return 0;
}

int oci_request_decode(const struct oci_state *s, const struct topology *t,
		       struct oci_request *ret, char *err, size_t size)
{
	struct oci_request req = {0};
	int r;

	for (size_t i = 0; i < s->nannotations; i++) {
		const struct oci_annotation *a = &s->annotations[i];

		/* The first of them was taken: this is the second. */
		if (req.cpus_from &&
		    (!strcmp(a->key, KEY_NODES) || !strcmp(a->key, KEY_CPUS)))
			return fail(err, size,
				    KEY_NODES " and " KEY_CPUS
					      " exclude each other: give one "
					      "of them");
		r = decode_one(a, t, &req, err, size);
		if (r < 0)
			return r;
	}
	*ret = req;
	return 0;
}
