// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status: the text of /run/softaffd/status and the one line of
 * STATUS= for systemd (the JSON is status-json.c), both pure functions
 * of a snapshot the daemon gathers; written only when they change, and
 * shown by softaffd --status.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "status.h"

double status_per_min(const struct rule_figures *f, uint64_t n)
{
	return (double)n * (60e9 / (double)f->locality_ns);
}

const char *status_wait_source(const struct rule_figures *f)
{
	return f->source == WAIT_CGROUP	  ? "cpu.pressure"
	       : f->source == WAIT_SYSTEM ? "/proc/pressure/cpu"
					  : "schedstat";
}

double status_wait_pct(const struct rule_figures *f)
{
	struct rulectl_sample in = rule_sample(f);

	return 100.0 * rulectl_wait(&in);
}

double status_outside_pct(const struct rule_figures *f)
{
	return f->runtime_ns
		       ? 100.0 * (double)f->outside_ns / (double)f->runtime_ns
		       : 0;
}

bool status_has_figures(const struct rule_figures *f)
{
	return f->valid && f->interval_ns && f->threads;
}

void status_rule_span(const struct status_snapshot *s, unsigned int r,
		      unsigned int *ret_lo, unsigned int *ret_hi)
{
	unsigned int lo = 0, hi = s->npids;

	/* The first triple of a rule >= r, then of a rule > r. */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if ((unsigned int)s->pids[mid * 3] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ret_lo = lo;
	hi = s->npids;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if ((unsigned int)s->pids[mid * 3] <= r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ret_hi = lo;
}

/* " P1 P2 ..." of rule r's processes (only hand-managed ones if hand). */
static void format_pids(const struct status_snapshot *s, struct sbuf *b,
			unsigned int r, bool hand, unsigned int total)
{
	unsigned int n = 0, lo, hi;

	if (s->omit_pids) {
		sbuf_printf(b, "\n");
		return;
	}
	status_rule_span(s, r, &lo, &hi);
	for (unsigned int i = lo; i < hi; i++) {
		const int *p = &s->pids[i * 3];

		if (hand && !p[2])
			continue;
		if (n++ < STATUS_MAX_PIDS)
			sbuf_printf(b, " %d", p[1]);
	}
	if (total > n || n > STATUS_MAX_PIDS)
		sbuf_printf(b, " ...");
	sbuf_printf(b, "\n");
}

static unsigned int count_hand(const struct status_snapshot *s, unsigned int r)
{
	unsigned int n = 0, lo, hi;

	status_rule_span(s, r, &lo, &hi);
	for (unsigned int i = lo; i < hi; i++)
		n += s->pids[i * 3 + 2] != 0;
	return n;
}

void status_format(const struct status_snapshot *s, struct sbuf *b)
{
	const struct mgr_counters *c = s->cnt;
	const struct config *cfg = s->cfg;
	char cpus[CPUSET_LIST_BUFSZ], ratio[RATIO_BUFSZ];

	sbuf_printf(b, "pid %d\nconfig %s\nmode %s%s\n", s->pid, cfg->path,
		    ratio_mode_name(cfg->mode), s->dry_run ? " (dry-run)" : "");
	if (s->have_ratio)
		sbuf_printf(b, "ratio %s%s%s\n",
			    ratio_format(s->ratio, ratio, sizeof(ratio)),
			    s->ratio_note ? " " : "",
			    s->ratio_note ? s->ratio_note : "");
	else
		sbuf_printf(b, "ratio unavailable\n");
	sbuf_printf(b, "connector %s\nprocesses %zu\n",
		    s->connector ? "yes" : "no (periodic rescan only)",
		    s->processes);
	for (unsigned int i = 0; i < s->topo->nnodes; i++) {
		cpuset_format_list(&s->topo->node_cpus[i], cpus, sizeof(cpus));
		sbuf_printf(b, "node %d cpus %s util %.1f%%\n",
			    s->topo->ids[i], cpus, s->node_util[i] * 100);
	}
	for (unsigned int r = 0; r < cfg->nrules; r++) {
		cpuset_format_list(&cfg->rules[r].cpus, cpus, sizeof(cpus));
		sbuf_printf(b, "rule %s cpus %s processes %u pids",
			    cfg->rules[r].name, cpus, s->rules[r].processes);
		format_pids(s, b, r, false, s->rules[r].processes);
	}
	/*
	 * Per rule, whether its softness works: the ratio in force and why,
	 * then over the last sample interval the wait fraction (time
	 * runnable but not running), the share of CPU time outside the
	 * preferred CPUs, and spills and returns per minute.  Own lines,
	 * so "rule NAME ... pids" parsers see nothing new.
	 */
	for (unsigned int r = 0; r < cfg->nrules; r++) {
		const struct status_softness *rs = s->rules[r].soft;
		const struct rule_figures *f;

		if (!rs)
			continue;
		f = rs->last;
		sbuf_printf(b, "softness %s %s %s via %s", cfg->rules[r].name,
			    ratio_format(rs->ratio, ratio, sizeof(ratio)),
			    softness_name(cfg->rules[r].softness.kind),
			    rs->cg_mode ? "cgroup" : "process");
		if (status_has_figures(f)) {
			sbuf_printf(b, " threads %u wait %.1f%% (%s) outside %s%.1f%%",
				    f->threads, status_wait_pct(f),
				    status_wait_source(f), f->exact ? "" : "~",
				    status_outside_pct(f));
			if (f->exact && f->locality_ns)
				sbuf_printf(b, " spills/min %.0f returns/min %.0f",
					    status_per_min(f, f->spills),
					    status_per_min(f, f->returns));
			else if (f->exact)
				sbuf_printf(b, " spills/min - returns/min -");
			else
				sbuf_printf(b, " spills/min n/a returns/min n/a "
					       "(" STATUS_NEEDS_SCHEDSTATS ")");
		} else {
			sbuf_printf(b, " threads - wait - outside - "
				       "spills/min - returns/min -");
		}
		sbuf_printf(b, ": %s\n", rs->why[0] ? rs->why : "not sampled yet");
	}
	/* Own lines, so "rule NAME ... pids" parsers see nothing new. */
	for (unsigned int r = 0; s->hand_processes && !s->omit_pids &&
				 r < cfg->nrules; r++) {
		unsigned int nh = count_hand(s, r);

		if (!nh)
			continue;
		sbuf_printf(b, "hand-managed rule %s processes %u pids",
			    cfg->rules[r].name, nh);
		format_pids(s, b, r, true, nh);
	}
	for (unsigned int i = 0; i < s->ncontainers; i++) {
		const struct container_left *k = &s->containers[i];
		char cg[4 * PATH_MAX];

		if (k->rule < cfg->nrules)
			sbuf_printf(b, "container rule %s id %s cgroup %s: "
				       STATUS_CONTAINER_SAYS "\n",
				    cfg->rules[k->rule].name, k->id,
				    procfs_escape(k->cgroup, cg, sizeof(cg)));
	}
	sbuf_printf(b,
		    "counters scans=%llu events=%llu events_lost=%llu "
		    "written=%llu unchanged=%llu gone=%llu eperm=%llu "
		    "einval=%llu empty=%llu rt=%llu errors=%llu "
		    "restored=%llu foreign=%llu ratio_changes=%llu "
		    "hand=%llu evals=%llu cached=%llu regex_skipped=%llu\n",
		    (unsigned long long)c->scans, (unsigned long long)c->events,
		    (unsigned long long)c->events_lost,
		    (unsigned long long)c->written,
		    (unsigned long long)c->unchanged,
		    (unsigned long long)c->gone, (unsigned long long)c->eperm,
		    (unsigned long long)c->einval, (unsigned long long)c->empty,
		    (unsigned long long)c->rt, (unsigned long long)c->errors,
		    (unsigned long long)c->restored,
		    (unsigned long long)c->foreign,
		    (unsigned long long)s->ratio_changes,
		    (unsigned long long)c->hand, (unsigned long long)c->evals,
		    (unsigned long long)c->cached,
		    (unsigned long long)c->regex_skipped);
}

void status_line(const struct status_snapshot *s, char *buf, size_t size)
{
	char hand[64] = "", ratio[96], text[RATIO_BUFSZ];

	if (s->hand_processes)
		snprintf(hand, sizeof(hand), " (%zu hand-managed)",
			 s->hand_processes);
	if (s->have_ratio)
		snprintf(ratio, sizeof(ratio), "ratio %s (%s%s%s)",
			 ratio_format(s->ratio, text, sizeof(text)),
			 ratio_mode_name(s->cfg->mode),
			 s->ratio_note ? ", " : "",
			 s->ratio_note ? s->ratio_note : "");
	else
		snprintf(ratio, sizeof(ratio), "ratio unavailable");
	snprintf(buf, size, "STATUS=%zu processes%s under %u rules, %s%s%s",
		 s->processes, hand, s->cfg->nrules, ratio,
		 s->connector ? "" : ", rescan only",
		 s->dry_run ? ", dry run" : "");
}

static int write_if_changed(const char *run_dir, const char *name,
			    bool stamp, const struct sbuf *text,
			    struct sbuf *last);

int status_write(const char *run_dir, const struct sbuf *text,
		 struct sbuf *last)
{
	return write_if_changed(run_dir, STATUS_FILE, true, text, last);
}

int status_write_json(const char *run_dir, const struct sbuf *text,
		      struct sbuf *last)
{
	return write_if_changed(run_dir, STATUS_JSON_FILE, false, text, last);
}

static int write_if_changed(const char *run_dir, const char *name,
			    bool stamp, const struct sbuf *text,
			    struct sbuf *last)
{
	char path[PATH_MAX], when[64];
	struct sbuf out = {0};
	time_t t = time(NULL);
	struct tm tm;
	int r;

	if (text->oom)
		return -ENOMEM;
	if (last->buf && last->len == text->len &&
	    !memcmp(last->buf, text->buf, text->len))
		return 0;
	/* systemd's RuntimeDirectory= normally made it; tests may not. */
	if (mkdir(run_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	sbuf_printf(&out, "%.*s", (int)text->len, text->buf ? text->buf : "");
	if (stamp)
		sbuf_printf(&out, "updated %s\n", when);
	if (out.oom) {
		sbuf_free(&out);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	r = write_file_atomic(path, out.buf, out.len);
	sbuf_free(&out);
	if (r < 0)
		return r;
	last->len = 0;
	last->oom = false;
	sbuf_printf(last, "%.*s", (int)text->len, text->buf ? text->buf : "");
	return 1;
}

void status_remove(const char *run_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", run_dir, STATUS_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", run_dir, STATUS_JSON_FILE);
	unlink(path);
}

static int show_file(const char *run_dir, const char *name);

int status_show(const char *run_dir)
{
	return show_file(run_dir, STATUS_FILE);
}

int status_show_json(const char *run_dir)
{
	return show_file(run_dir, STATUS_JSON_FILE);
}

static int show_file(const char *run_dir, const char *name)
{
	char path[PATH_MAX], buf[8192];
	bool first = true;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr,
			"softaffd: no status at %s (%s): is the daemon "
			"running?\n",
			path, strerror(errno));
		return 3; /* LSB "program is not running" */
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		int pid;

		/* The first chunk starts with "pid N": is N still alive? */
		if (first &&
		    (sscanf(buf, "pid %d", &pid) == 1 ||
		     sscanf(buf, "{\"pid\":%d", &pid) == 1) &&
		    pid > 0 &&
		    kill(pid, 0) < 0 && errno == ESRCH)
			fprintf(stderr, "softaffd: warning: pid %d is not "
				"running, this status is stale\n", pid);
		first = false;
		fwrite(buf, 1, n, stdout);
	}
	fclose(f);
	return 0;
}
