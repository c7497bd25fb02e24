// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: softaff-oci-hook's input.  The bytes are the
 * container state a runtime writes on the hook's standard input; what
 * parses is decoded against a fixed two-node machine, and every answer
 * must be one the hook could act on or report in one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocistate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Node 0: CPUs 0-1, node 1: CPUs 2-3 (3 offline), node 4: memory only. */
static void topo_init(struct topology *t)
{
	if (topology_alloc(t, 3) < 0)
		abort();
	t->ids[0] = 0;
	t->ids[1] = 1;
	t->ids[2] = 4;
	cpuset_set(&t->node_present[0], 0);
	cpuset_set(&t->node_present[0], 1);
	cpuset_set(&t->node_present[1], 2);
	cpuset_set(&t->node_present[1], 3);
	cpuset_or(&t->present, &t->node_present[0], &t->node_present[1]);
	t->node_cpus[0] = t->node_present[0];
	cpuset_set(&t->node_cpus[1], 2);
	cpuset_or(&t->all, &t->node_cpus[0], &t->node_cpus[1]);
}

static void check_request(const struct oci_request *req,
			  const struct topology *t)
{
	struct cpuset outside;

	if (req->has_cpus) {
		cpuset_or(&outside, &req->cpus, &t->present);
		if (cpuset_empty(&req->cpus) ||
		    !cpuset_equal(&outside, &t->present) || !req->cpus_from ||
		    strncmp(req->cpus_from->key, OCI_ANNOTATION_PREFIX,
			    strlen(OCI_ANNOTATION_PREFIX)))
			abort();
	}
	if (req->has_ratio && req->ratio.state == REQ_SET &&
	    (req->ratio.value.allowed < RATIO_MIN ||
	     req->ratio.value.allowed > RATIO_MAX ||
	     req->ratio.value.preferred < RATIO_MIN ||
	     req->ratio.value.preferred > RATIO_MAX))
		abort();
	if (req->has_ratio && req->ratio.state != REQ_SET &&
	    (req->ratio.value.allowed || req->ratio.value.preferred))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct topology topo;
	struct oci_request req;
	struct oci_state st;
	char err[1024];
	char *text;

	if (!topo.nnodes)
		topo_init(&topo);
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (oci_state_parse(text, size, &st, err, sizeof(err)) < 0) {
		/* Refused: a one-line reason, and nothing kept. */
		if (!err[0] || strchr(err, '\n') || st.id || st.annotations)
			abort();
		free(text);
		return 0;
	}
	if (!st.id || !st.id[0] || st.pid <= 0)
		abort();
	for (size_t i = 0; i < st.nannotations; i++)
		if (strncmp(st.annotations[i].key, OCI_ANNOTATION_PREFIX,
			    strlen(OCI_ANNOTATION_PREFIX)))
			abort();
	err[0] = '\0';
	if (oci_request_decode(&st, &topo, &req, err, sizeof(err)) == 0)
		check_request(&req, &topo);
	else if (!err[0] || strchr(err, '\n'))
		abort();
	oci_state_free(&st);
	free(text);
	return 0;
}
