// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Publish: a snapshot of the daemon and its manager, turned into the
 * status files (status.c, status-json.c) and systemd's STATUS= line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-internal.h"
#include "notify.h"
#include "status.h"

/*
 * The managed pids, sorted, as the status lists them: sorted again only
 * when the manager says the list changed (mgr_status_gen).  True if it
 * did (or cannot tell: out of memory).
 */
static bool status_pids(struct daemon *d)
{
	uint64_t gen = mgr_status_gen(d->mgr);
	int *pids = NULL, n;

	if (d->status_pids && gen == d->status_gen)
		return false;
	n = mgr_status_pids(d->mgr, &pids);
	free(d->status_pids);
	d->status_pids = n >= 0 ? pids : NULL;
	d->status_npids = n > 0 ? (unsigned int)n : 0;
	d->status_gen = gen;
	return true;
}

void daemon_status_done(struct daemon *d)
{
	free(d->status_pids);
	d->status_pids = NULL;
	sbuf_free(&d->last_head);
}

/*
 * Each sample interval, with 50,000 managed processes and 20 rules: the
 * status without its pid lists is a few dozen lines, made in
 * microseconds; when that and the pid list are what they were, the
 * files would come out the same, and are not made again.
 */
void daemon_publish(struct daemon *d)
{
	struct status_rule rules[CONFIG_MAX_RULES];
	struct status_softness soft[CONFIG_MAX_RULES];
	struct status_snapshot s = {
		.pid = (int)getpid(),
		.cfg = d->cfg,
		.dry_run = d->o->dry_run,
		.have_ratio = d->ratio.have,
		.ratio = d->ratio.cur,
		.ratio_note = d->ratio.paused ? "paused: changed by hand"
					      : NULL,
		.ratio_changes = d->ratio.changes,
		.connector = d->conn_fd >= 0,
		.topo = d->topo,
		.node_util = d->node_util,
		.rules = rules,
		.processes = mgr_processes(d->mgr),
		.hand_processes = mgr_hand_processes(d->mgr),
		.cnt = mgr_counters(d->mgr),
		.omit_pids = true,
	};
	struct sbuf b = {0}, head = {0};
	char line[sizeof(d->last_notify)];
	struct container_left *ctrs = NULL;
	bool changed;
	int n, r = 0;

	for (unsigned int i = 0; i < d->cfg->nrules; i++) {
		soft[i] = (struct status_softness){
			.ratio = mgr_rule_ratio(d->mgr, i),
			.cg_mode = mgr_rule_cg_mode(d->mgr, i),
			.why = d->soft[i].why,
			.last = &d->soft[i].last};
		rules[i] = (struct status_rule){mgr_rule_processes(d->mgr, i),
						&soft[i]};
	}
	n = mgr_containers_left(d->mgr, &ctrs);
	s.containers = ctrs;
	s.ncontainers = n > 0 ? (unsigned int)n : 0;
	changed = status_pids(d);
	status_format(&s, &head);
	if (head.oom || d->last_head.oom || !d->last_head.buf ||
	    head.len != d->last_head.len ||
	    memcmp(head.buf, d->last_head.buf, head.len))
		changed = true;
	if (changed) {
		sbuf_free(&d->last_head);
		d->last_head = head;
		head = (struct sbuf){0};
		s.omit_pids = false;
		s.pids = d->status_pids;
		s.npids = d->status_npids;
		status_format(&s, &b);
		r = status_write(d->o->roots.run, &b, &d->last_status);
		if (r >= 0) {
			struct sbuf j = {0};

			status_format_json(&s, &j);
			r = status_write_json(d->o->roots.run, &j,
					      &d->last_json);
			sbuf_free(&j);
		}
		/* Not written: try again next time. */
		if (r < 0)
			sbuf_free(&d->last_head);
	}
	if (r < 0 && !d->warned_status) {
		log_warn("cannot write %s/%s: %s", d->o->roots.run,
			 STATUS_FILE, strerror(-r));
		d->warned_status = true;
	}
	sbuf_free(&head);
	sbuf_free(&b);
	free(ctrs);
	/*
	 * STATUS= for systemd, sent only when it changes: every message
	 * wakes PID 1, and an idle daemon should not do that once a second.
	 */
	status_line(&s, line, sizeof(line));
	if (strcmp(line, d->last_notify)) {
		snprintf(d->last_notify, sizeof(d->last_notify), "%s", line);
		notify_send(line);
	}
}
