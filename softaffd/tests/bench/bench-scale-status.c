// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the status costs when nothing changes (issue 38, review F6):
 * STATUS_PROCS managed processes under STATUS_RULES rules, published
 * once per sample interval by the daemon's own daemon_publish(), as the
 * sample timer does.  The processes are put in the manager's table
 * directly (no /proc of that size is needed to list them); the rest of
 * the daemon context is what daemon_publish() reads.  Prints the CPU
 * per publish, which at one a second is the CPU per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-scale.h"

#define STATUS_PROCS 50000
#define STATUS_RULES 20
#define STATUS_ROUNDS 50

void bench_status(struct topology *topo)
{
	struct daemon_opts o = {.roots = roots};
	struct daemon d = {0};
	struct sbuf text = {0};
	struct config *c;
	char err[512];
	uint64_t c0, v[STATUS_ROUNDS];
	unsigned int ncpus = cpuset_count(&topo->all);

	sbuf_printf(&text, "rules = (\n");
	for (unsigned int r = 0; r < STATUS_RULES; r++)
		sbuf_printf(&text, "%s{ name = \"st%u\"; comm = \"st%u\"; "
				   "cpus = \"%u\"; }\n",
			    r ? "," : "", r, r, r % ncpus);
	sbuf_printf(&text, ");\n");
	if (text.oom || config_load_string(text.buf, "status.conf", topo, &c,
					   err, sizeof(err)) < 0)
		die(err);
	sbuf_free(&text);
	snprintf(o.roots.run, sizeof(o.roots.run), "%s/run-status", dir);
	d.o = &o;
	d.cfg = c;
	d.topo = topo;
	d.conn_fd = -1;
	d.node_util = xcalloc(topo->nnodes, sizeof(*d.node_util));
	/* The daemon owns each rule's softness, which the status reports. */
	d.soft = softness_rules_new(NULL, NULL, c);
	if (!d.soft)
		die("out of memory");
	d.mgr = mgr_new(&roots, c, AFF_MODE_WRITE, NULL);
	if (!d.mgr)
		die("mgr_new failed");
	for (int i = 0; i < STATUS_PROCS; i++)
		if (!mgr_insert(d.mgr, 4000000 + i, 1 + (uint64_t)i, "st",
				(unsigned int)i % STATUS_RULES))
			die("out of memory");
	if (sysctl_init(&d.ratio, &o.roots, true, false) < 0)
		d.ratio.have = false;
	/* The first publish writes the files. */
	daemon_publish(&d);
	for (int i = 0; i < STATUS_ROUNDS; i++) {
		c0 = cpu_ns();
		daemon_publish(&d);
		v[i] = cpu_ns() - c0;
	}
	printf("status_procs %d\nstatus_rules %d\n", STATUS_PROCS,
	       STATUS_RULES);
	printf("status_cpu_ms %.4f\n",
	       (double)quantile(v, STATUS_ROUNDS, 0.5) / 1e6);
	/* One change (a process more): the cost of a publish that writes. */
	mgr_insert(d.mgr, 4000000 + STATUS_PROCS, 1, "st", 0);
	c0 = cpu_ns();
	daemon_publish(&d);
	printf("status_changed_cpu_ms %.3f\n", (double)(cpu_ns() - c0) / 1e6);
	mgr_free(d.mgr);
	config_free(c);
	free(d.node_util);
	free(d.soft);
	sbuf_free(&d.last_status);
	sbuf_free(&d.last_json);
	daemon_status_done(&d);
}
