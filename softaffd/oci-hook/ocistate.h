/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_OCISTATE_H
#define SOFTAFF_OCISTATE_H

/*
 * Pure helpers of softaff-oci-hook(8): the OCI container state that a
 * runtime hands a hook on standard input, and the io.softaff.*
 * annotations in it turned into the preference to write.  Nothing here
 * reads a file: oci-hook.c does the I/O, so the unit tests and the
 * fuzzer need no fixture tree.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "pref.h"
#include "topology.h"

/*
 * A state is a few hundred bytes plus the annotations; a runtime that
 * sends more than this is broken, and the cap bounds what we hold.
 */
#define OCI_STATE_MAX (1024 * 1024)
/*
 * Runtimes use 64 hex digits; the id goes into messages and an extended
 * attribute, so a bound keeps both small.
 */
#define OCI_ID_MAX	      1024
#define OCI_ANNOTATION_PREFIX "io.softaff."

/* One io.softaff.* annotation, copied out of the JSON. */
struct oci_annotation {
	char *key, *value;
};

struct oci_state {
	char *id;
	int pid;      /* the container's init process, in our pid namespace */
	char *bundle; /* NULL when the runtime gave none */
	/* The io.softaff.* annotations in the order of the state; others
	 * are none of the hook's business and are not kept. */
	struct oci_annotation *annotations;
	size_t nannotations;
};

/* What the annotations ask for; *_from is the annotation that asked,
 * for messages (it points into the oci_state). */
struct oci_request {
	bool has_cpus;
	struct cpuset cpus;
	const struct oci_annotation *cpus_from;
	bool has_ratio;
	struct ratio_req ratio; /* or inherit, none */
	const struct oci_annotation *ratio_from;
};

/*
 * Parse the state JSON (len bytes, text[len] must be NUL) into ret.
 * 0, or -EINVAL with a one-line reason in err (which never holds the
 * input unescaped); ret is then empty.  -ENOMEM without a reason.
 */
int oci_state_parse(const char *text, size_t len, struct oci_state *ret,
		    char *err, size_t err_size);
/* Frees what oci_state_parse() allocated; a zeroed state is fine. */
void oci_state_free(struct oci_state *s);

/*
 * The request of s's io.softaff.* annotations: io.softaff.nodes (the
 * present CPUs of those NUMA nodes of t) or io.softaff.cpus (present
 * CPUs of t), and io.softaff.softness ("A:P", "strict", "inherit" (or
 * "default") or "none").
 * No annotation gives an empty request.  0, or -EINVAL with
 * 'KEY="VALUE": what is wrong' in err.
 */
int oci_request_decode(const struct oci_state *s, const struct topology *t,
		       struct oci_request *ret, char *err, size_t err_size);

/* Printable, bounded copy of an untrusted string for a message. */
const char *oci_quote(const char *in, char *buf, size_t size);

#endif
