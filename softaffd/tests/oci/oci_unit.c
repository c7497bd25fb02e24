// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of softaff-oci-hook's pure part (ocistate.c), under ASan +
 * UBSan.  The hook itself is tested end to end by oci-hook-check.sh.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ocistate.h"

#define TEST_MAIN
#include "test.h"

/* Node 0: CPUs 0-1; node 1: CPU 2 online, 3 offline; node 2: memory. */
static struct topology topo;

static void topo_init(void)
{
	if (topology_alloc(&topo, 3) < 0)
		abort();
	for (int i = 0; i < 3; i++)
		topo.ids[i] = i;
	cpuset_set(&topo.node_cpus[0], 0);
	cpuset_set(&topo.node_cpus[0], 1);
	cpuset_set(&topo.node_cpus[1], 2);
	topo.node_present[0] = topo.node_cpus[0];
	topo.node_present[1] = topo.node_cpus[1];
	cpuset_set(&topo.node_present[1], 3);
	cpuset_or(&topo.all, &topo.node_cpus[0], &topo.node_cpus[1]);
	cpuset_or(&topo.present, &topo.node_present[0], &topo.node_present[1]);
}

static int parse(const char *json, struct oci_state *st, char *err, size_t size)
{
	err[0] = '\0';
	return oci_state_parse(json, strlen(json), st, err, size);
}

static void test_state(void)
{
	struct oci_state st;
	char err[512];

	CHECK(parse("{\"ociVersion\": \"1.0.2\", \"id\": \"c1\", "
		    "\"status\": \"creating\", \"pid\": 4242, "
		    "\"bundle\": \"/run/b\", \"annotations\": {"
		    "\"io.softaff.nodes\": \"1\", \"other\": \"x\", "
		    "\"io.softaff.softness\": \"20:1\", "
		    "\"io.softaffx\": \"y\"}}\n",
		    &st, err, sizeof(err)) == 0);
	CHECK_STR(st.id, "c1");
	CHECK(st.pid == 4242);
	CHECK_STR(st.bundle, "/run/b");
	/* Only the prefix's, in the state's order. */
	CHECK(st.nannotations == 2);
	if (st.nannotations == 2) {
		CHECK_STR(st.annotations[0].key, "io.softaff.nodes");
		CHECK_STR(st.annotations[0].value, "1");
		CHECK_STR(st.annotations[1].key, "io.softaff.softness");
	}
	oci_state_free(&st);
	oci_state_free(&st); /* a freed state is a zeroed one */
	CHECK(parse("{\"id\": \"c\", \"pid\": 1}", &st, err, sizeof(err)) == 0);
	CHECK(st.nannotations == 0 && !st.bundle);
	oci_state_free(&st);
	CHECK(parse("{\"id\": \"c\", \"pid\": 1, \"annotations\": null}", &st,
		    err, sizeof(err)) == 0);
	oci_state_free(&st);
}

static void test_state_bad(void)
{
	static const struct {
		const char *json, *err;
	} bad[] = {
		{"", "not valid JSON"},
		{"{", "not valid JSON"},
		{"{\"id\": \"c\", \"pid\": 1}x", "not valid JSON"},
		{"{\"id\": \"c\", \"pid\": 1}{}", "not valid JSON"},
		{"{\"id\": \"c\", \"pid\": 1,}", "not valid JSON"},
		{"{\"id\": \"\xff\", \"pid\": 1}", "not valid JSON"},
		{"[1]", "not a JSON object but array"},
		{"7", "not a JSON object but int"},
		{"null", "not a JSON object but null"},
		{"\"x\"", "not a JSON object but string"},
		{"{\"pid\": 1}", "no \"id\""},
		{"{\"id\": 5, \"pid\": 1}", "\"id\" is not a string (int)"},
		{"{\"id\": \"\", \"pid\": 1}", "\"id\" is empty"},
		{"{\"id\": \"a\\u0000b\", \"pid\": 1}",
		 "holds a NUL character"},
		{"{\"id\": \"c\"}", "no \"pid\""},
		{"{\"id\": \"c\", \"pid\": \"42\"}",
		 "\"pid\" is not an integer (string)"},
		{"{\"id\": \"c\", \"pid\": 4.2}",
		 "\"pid\" is not an integer (double)"},
		{"{\"id\": \"c\", \"pid\": null}",
		 "\"pid\" is not an integer (null)"},
		{"{\"id\": \"c\", \"pid\": 0}",
		 "\"pid\" 0 is not a process id"},
		{"{\"id\": \"c\", \"pid\": -1}", "\"pid\" -1 is not a process"},
		{"{\"id\": \"c\", \"pid\": 2147483648}", "is not a process id"},
		{"{\"id\": \"c\", \"pid\": 99999999999999999999999}",
		 "is not a process id"},
		{"{\"id\": \"c\", \"pid\": 1, \"bundle\": 1}",
		 "\"bundle\" is not a string"},
		{"{\"id\": \"c\", \"pid\": 1, \"annotations\": []}",
		 "\"annotations\" is not an object (array)"},
		{"{\"id\": \"c\", \"pid\": 1, \"annotations\": {\"a\": 1}}",
		 "annotation \"a\" is not a string (int)"},
		{"{\"id\": \"c\", \"pid\": 1, \"annotations\": "
		 "{\"io.softaff.nodes\": null}}",
		 "annotation \"io.softaff.nodes\" is not a string (null)"},
		/* C would see "1" here, the runtime "1" and more. */
		{"{\"id\": \"c\", \"pid\": 1, \"annotations\": "
		 "{\"io.softaff.nodes\": \"1\\u0000/x\"}}",
		 "holds a NUL character"},
	};
	struct oci_state st;
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i].json, &st, err, sizeof(err));

		if (r != -EINVAL || !strstr(err, bad[i].err))
			printf("# '%s': %d '%s'\n", bad[i].json, r, err);
		CHECK(r == -EINVAL);
		CHECK(strstr(err, bad[i].err) != NULL);
		CHECK(strncmp(err, "container state: ", 17) == 0);
		CHECK(!strchr(err, '\n'));
		CHECK(!st.id && !st.annotations && !st.nannotations);
	}
	/* A NUL byte in the input, and one byte too many. */
	CHECK(oci_state_parse("{}\0{}", 5, &st, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "holds a NUL byte") != NULL);
	CHECK(oci_state_parse("{}", OCI_STATE_MAX + 1, &st, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(strstr(err, "longer than 1048576 bytes") != NULL);
}

/* Decode annotations given as "key", "value", ..., NULL. */
static int decode(struct oci_request *req, char *err, size_t size, ...)
{
	/* The request points into them: they outlive the call. */
	static struct oci_annotation a[8];
	struct oci_state st = {.id = "c", .pid = 1, .annotations = a};
	const char *k;
	va_list ap;

	va_start(ap, size);
	while ((k = va_arg(ap, const char *)) && st.nannotations < 8) {
		a[st.nannotations].key = (char *)k;
		a[st.nannotations++].value = va_arg(ap, char *);
	}
	va_end(ap);
	err[0] = '\0';
	memset(req, 0x5a, sizeof(*req)); /* untouched on failure */
	return oci_request_decode(&st, &topo, req, err, size);
}

static void test_decode(void)
{
	struct oci_request req;
	char err[512], list[64];

	CHECK(decode(&req, err, sizeof(err), NULL) == 0);
	CHECK(!req.has_cpus && !req.has_ratio);
	/* A node's present CPUs, offline ones too (the kernel keeps them). */
	CHECK(decode(&req, err, sizeof(err), "io.softaff.nodes", "1",
		     "io.softaff.softness", "20:1", NULL) == 0);
	cpuset_format_list(&req.cpus, list, sizeof(list));
	CHECK(req.has_cpus);
	CHECK_STR(list, "2-3");
	CHECK(req.has_ratio && req.ratio.value.allowed == 20 &&
	      req.ratio.value.preferred == 1);
	CHECK(req.cpus_from && req.ratio_from);
	if (req.cpus_from && req.ratio_from) {
		CHECK_STR(req.cpus_from->key, "io.softaff.nodes");
		CHECK_STR(req.cpus_from->value, "1");
		CHECK_STR(req.ratio_from->key, "io.softaff.softness");
	}
	CHECK(decode(&req, err, sizeof(err), "io.softaff.nodes", "0-1", NULL) ==
	      0);
	cpuset_format_list(&req.cpus, list, sizeof(list));
	CHECK_STR(list, "0-3");
	CHECK(!req.has_ratio);
	CHECK(decode(&req, err, sizeof(err), "io.softaff.cpus", "0,3", NULL) ==
	      0);
	cpuset_format_list(&req.cpus, list, sizeof(list));
	CHECK_STR(list, "0,3");
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "strict",
		     NULL) == 0);
	CHECK(!req.has_cpus && req.has_ratio);
	CHECK(req.ratio.value.allowed == 10000 && req.ratio.value.preferred == 1);
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "inherit",
		     NULL) == 0);
	CHECK(req.has_ratio && req.ratio.state == REQ_INHERIT);
	/* The older word for inherit, as annotations may still say it. */
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "default",
		     NULL) == 0);
	CHECK(req.has_ratio && req.ratio.state == REQ_INHERIT);
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "none",
		     NULL) == 0);
	CHECK(req.has_ratio && req.ratio.state == REQ_NONE);
	/* As the kernel takes it: allowed below preferred too. */
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "1:10000",
		     NULL) == 0);
}

static void test_decode_bad(void)
{
	static const char *const bad[][3] = {
		{"io.softaff.nodes", "7",
		 "io.softaff.nodes=\"7\": node 7 does not exist (nodes: 0-2)"},
		{"io.softaff.nodes", "x",
		 "io.softaff.nodes=\"x\": not a NUMA node list (e.g. 1 or "
		 "0-1)"},
		{"io.softaff.nodes", "../../etc",
		 "io.softaff.nodes=\"../../etc\": not a NUMA node list"},
		{"io.softaff.nodes", "2",
		 "io.softaff.nodes=\"2\": these nodes have no CPUs"},
		{"io.softaff.nodes", "", "io.softaff.nodes=\"\": empty value"},
		{"io.softaff.cpus", "9",
		 "io.softaff.cpus=\"9\": CPU 9 is not present (present: 0-3)"},
		{"io.softaff.cpus", "8192",
		 "io.softaff.cpus=\"8192\": names a CPU beyond 8191"},
		{"io.softaff.cpus", "3-1",
		 "io.softaff.cpus=\"3-1\": not a CPU list (e.g. 2-3 or 0,4)"},
		{"io.softaff.cpus", " ", "io.softaff.cpus=\" \": names no CPU"},
		{"io.softaff.cpus", "/sys/fs/cgroup",
		 "io.softaff.cpus=\"/sys/fs/cgroup\": not a CPU list"},
		{"io.softaff.softness", "0:1",
		 "io.softaff.softness=\"0:1\": want ALLOWED:PREFERRED (each "
		 "1..10000, e.g. 20:1), strict, inherit or none"},
		{"io.softaff.softness", "10001:1", "want ALLOWED:PREFERRED"},
		{"io.softaff.softness", "1:", "want ALLOWED:PREFERRED"},
		{"io.softaff.softness", "Strict", "want ALLOWED:PREFERRED"},
		{"io.softaff.softness", "adaptive",
		 "adaptive softness needs a softaffd rule"},
		{"io.softaff.cgroup", "/x",
		 "io.softaff.cgroup=\"/x\": unknown annotation (known: "
		 "io.softaff.nodes, io.softaff.cpus, io.softaff.softness)"},
		{"io.softaff.node", "1",
		 "io.softaff.node=\"1\": unknown annotation"},
		{"io.softaff.", "1", "io.softaff.=\"1\": unknown annotation"},
		{"io.softaff.nodes", "1\n2",
		 "io.softaff.nodes=\"1\\x0a2\": not a NUMA node list"},
	};
	struct oci_request req, untouched;
	char err[512];

	memset(&untouched, 0x5a, sizeof(untouched));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = decode(&req, err, sizeof(err), bad[i][0], bad[i][1],
			       NULL);

		if (r != -EINVAL || !strstr(err, bad[i][2]))
			printf("# %s=%s: %d '%s'\n", bad[i][0], bad[i][1], r,
			       err);
		CHECK(r == -EINVAL);
		CHECK(strstr(err, bad[i][2]) != NULL);
		CHECK(!memcmp(&req, &untouched, sizeof(req)));
	}
	CHECK(decode(&req, err, sizeof(err), "io.softaff.nodes", "1",
		     "io.softaff.cpus", "2", NULL) == -EINVAL);
	CHECK_STR(err, "io.softaff.nodes and io.softaff.cpus exclude each "
		       "other: give one of them");
	CHECK(decode(&req, err, sizeof(err), "io.softaff.cpus", "2",
		     "io.softaff.nodes", "1", NULL) == -EINVAL);
	/* A good annotation does not hide a bad one after it. */
	CHECK(decode(&req, err, sizeof(err), "io.softaff.softness", "5:4",
		     "io.softaff.bogus", "1", NULL) == -EINVAL);
	CHECK(strstr(err, "io.softaff.bogus") != NULL);
}

static void test_quote(void)
{
	char buf[16], mid[32], big[300], in[400];

	CHECK_STR(oci_quote("a\nb\\", mid, sizeof(mid)), "a\\x0ab\\x5c");
	/* (16 - 5) / 4 = 2 bytes fit with "..." after them. */
	CHECK_STR(oci_quote("abcdef", buf, sizeof(buf)), "ab...");
	CHECK_STR(oci_quote("ab", buf, sizeof(buf)), "ab");
	CHECK_STR(oci_quote("\n\n\n", buf, sizeof(buf)), "\\x0a\\x0a...");
	memset(in, 'x', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	oci_quote(in, big, sizeof(big));
	CHECK(strlen(big) < sizeof(big));
	CHECK(strlen(big) > 60 && !strcmp(big + strlen(big) - 3, "..."));
	CHECK_STR(oci_quote("abc", buf, 4), "");
}

int main(void)
{
	topo_init();
	RUN(test_state, "oci: state JSON -> id, pid, bundle, io.softaff.*");
	RUN(test_state_bad, "oci: bad states refused with their reason");
	RUN(test_decode, "oci: nodes, cpus, softness (strict, inherit, none)");
	RUN(test_decode_bad, "oci: bad annotations named, request untouched");
	RUN(test_quote, "oci: values escaped and bounded in messages");
	return t_failed_checks ? 1 : 0;
}
