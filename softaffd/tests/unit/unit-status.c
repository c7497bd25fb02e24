// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status as a pure function of a snapshot, written on change.
 */
#include "unit.h"

void test_status_format(void)
{
	char err[512], line[256], path[PATH_MAX], run[PATH_MAX];
	struct config *c = load(
		"ratio = { mode = \"adaptive\"; };\n"
		"rules = ( { name = \"a\"; comm = \"a\"; cpus = \"0\"; },\n"
		"          { name = \"b\"; comm = \"b\"; nodes = [1]; } );\n",
		err, sizeof(err));
	int pids[] = {0, 5, 0, 0, 7, 1, 1, 9, 0};
	struct status_rule rules[] = {{2, NULL}, {1, NULL}};
	double util[2] = {0.5, 0.25};
	struct mgr_counters cnt = {.written = 3};
	struct status_snapshot s = {
		.pid = 42, .cfg = c, .have_ratio = true, .ratio = {50, 1},
		.connector = true, .topo = &topo, .node_util = util,
		.rules = rules, .pids = pids, .npids = 3,
		.processes = 3, .hand_processes = 1, .cnt = &cnt,
	};
	struct sbuf b = {0}, last = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	status_format(&s, &b);
	CHECK(b.buf && !strncmp(b.buf, "pid 42\n", 7));
	CHECK(b.buf && strstr(b.buf, "\nratio 50:1\n"));
	CHECK(b.buf && strstr(b.buf, "\nnode 1 cpus 2-3 util 25.0%\n"));
	CHECK(b.buf && strstr(b.buf, "\nrule a cpus 0 processes 2 pids 5 7\n"
				     "rule b cpus 2-3 processes 1 pids 9\n"
				     "hand-managed rule a processes 1 pids 7\n"));
	CHECK(b.buf && strstr(b.buf, " written=3 "));
	CHECK(b.buf && !strstr(b.buf, "softness "));
	{
		struct rule_figures figs[2] = {
			{.runtime_ns = 3000000000ULL, .delay_ns = 1000000000ULL,
			 .outside_ns = 750000000ULL, .spills = 4, .returns = 2,
			 .interval_ns = 1000000000ULL,
			 .locality_ns = 1000000000ULL, .threads = 4,
			 .exact = true, .valid = true},
			{0},
		};
		struct status_softness rs[2] = {
			{.ratio = {20, 1},
			 .why = "soften: tasks wait 50% while 2.0 CPUs idle outside",
			 .last = &figs[0]},
			{.ratio = {100, 1}, .cg_mode = true, .why = "",
			 .last = &figs[1]},
		};
		struct sbuf b2 = {0};

		rules[0].soft = &rs[0];
		rules[1].soft = &rs[1];
		status_format(&s, &b2);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness a 20:1 adaptive via process "
				       "threads 4 wait 25.0% (schedstat) outside "
				       "25.0% spills/min 240 returns/min 120: soften: "
				       "tasks wait 50% while 2.0 CPUs idle "
				       "outside\n"));
		struct sbuf j = {0};

		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "{\"name\":\"a\",\"cpus\":\"0\",\"processes\":2,"
				      "\"pids\":[5,7],\"softness\":\"adaptive\","
				      "\"ratio\":\"20:1\",\"via\":\"process\","
				      "\"why\":\"soften: tasks wait 50% while 2.0 "
				      "CPUs idle outside\",\"threads\":4,"
				      "\"wait_pct\":25.0,\"wait_source\":"
				      "\"schedstat\",\"outside_pct\":25.0,"
				      "\"outside_estimated\":false,"
				      "\"spills_per_min\":240,"
				      "\"returns_per_min\":120}"));
		CHECK(j.buf && !strncmp(j.buf, "{\"pid\":42,", 10));
		CHECK(j.buf && strstr(j.buf, "\"threads\":null"));
		sbuf_free(&j);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness b 100:1 adaptive via cgroup "
				       "threads - wait - outside - spills/min - "
				       "returns/min -: not sampled yet\n"));
		sbuf_free(&b2);
		/*
		 * A cgroup rule's wait from cpu.pressure, as the law sees
		 * it: its stall of a second (per CPU) against one CPU's
		 * second, not the 3 s of CPU time.  Schedstats off: the
		 * share outside is an estimate, spills and returns are
		 * not known (not 0).
		 */
		figs[1] = figs[0];
		figs[1].source = WAIT_CGROUP;
		figs[1].wait_base_ns = 1000000000ULL;
		figs[1].exact = false;
		memset(&b2, 0, sizeof(b2));
		status_format(&s, &b2);
		CHECK(b2.buf && strstr(b2.buf,
				       "\nsoftness b 100:1 adaptive via cgroup "
				       "threads 4 wait 50.0% (cpu.pressure) "
				       "outside ~25.0% spills/min n/a returns/min "
				       "n/a (needs kernel.sched_schedstats=1): "));
		sbuf_free(&b2);
		memset(&j, 0, sizeof(j));
		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "\"wait_source\":\"cpu.pressure\","
				      "\"outside_pct\":25.0,"
				      "\"outside_estimated\":true,"
				      "\"spills_per_min\":null,"
				      "\"returns_per_min\":null,\"spills_note\":"
				      "\"n/a (needs kernel.sched_schedstats=1)\"}"));
		sbuf_free(&j);
		rules[0].soft = rules[1].soft = NULL;
	}
	{
		/* Containers where a rule left a process alone. */
		const struct container_left k[] = {
			{1, "abc", "/machine.slice/libpod-abc.scope"},
			{0, "d", "/m/caf\xc3 x"},
		};
		struct sbuf t = {0}, j = {0};

		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf, "],\"containers\":[]}\n"));
		sbuf_free(&j);
		memset(&j, 0, sizeof(j));
		s.containers = k;
		s.ncontainers = 2;
		status_format(&s, &t);
		CHECK(t.buf && strstr(t.buf,
				      "\ncontainer rule b id abc cgroup "
				      "/machine.slice/libpod-abc.scope: set by "
				      "the container's annotations\n"
				      "container rule a id d cgroup "
				      "/m/caf\\xc3 x: set by the container's "
				      "annotations\ncounters "));
		status_format_json(&s, &j);
		CHECK(j.buf && strstr(j.buf,
				      "],\"containers\":[{\"rule\":\"b\","
				      "\"id\":\"abc\",\"cgroup\":"
				      "\"/machine.slice/libpod-abc.scope\","
				      "\"preference\":\"set by the container's "
				      "annotations\"},{\"rule\":\"a\",\"id\":"
				      "\"d\",\"cgroup\":\"/m/caf\\\\xc3 x\","
				      "\"preference\":\"set by the container's "
				      "annotations\"}]}\n"));
		sbuf_free(&t);
		sbuf_free(&j);
		s.containers = NULL;
		s.ncontainers = 0;
	}
	status_line(&s, line, sizeof(line));
	CHECK_STR(line, "STATUS=3 processes (1 hand-managed) under 2 rules, "
			"ratio 50:1 (adaptive)");
	s.ratio_note = "paused: changed by hand";
	status_line(&s, line, sizeof(line));
	CHECK(strstr(line, "ratio 50:1 (adaptive, paused: changed by hand)"));

	/* Written only when the text changes. */
	snprintf(run, sizeof(run), "%s/run-status", tmp);
	snprintf(path, sizeof(path), "%s/status", run);
	CHECK(status_write(run, &b, &last) == 1);
	CHECK(get(path) && strstr(get(path), "\nupdated "));
	CHECK(status_write(run, &b, &last) == 0);
	sbuf_printf(&b, "x\n");
	CHECK(status_write(run, &b, &last) == 1);
	sbuf_free(&b);
	sbuf_free(&last);
	config_free(c);
}

/* softaffd --explain pid against the status file in run, its last line. */
static void explain_last(const struct config *c, const char *run, int pid,
			 char *ret, size_t size)
{
	struct roots r;
	char *buf = NULL, *nl;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*ret = '\0';
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s", run);
	if (!f)
		return;
	CHECK(explain_pid(c, &r, pid, f) == 0);
	fclose(f);
	if (buf && len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	nl = buf ? strrchr(buf, '\n') : NULL;
	snprintf(ret, size, "%s", nl ? nl + 1 : "");
	free(buf);
}

/*
 * F12: the status lists a rule's lowest 1000 pids on one line, which
 * with seven-digit pids and a long CPU list passes 8 KiB.  --explain
 * read 8 KiB lines and said "does not list it" of a pid past them or
 * past the 1000.
 */
void test_explain_listed(void)
{
	enum { N = 1200, BASE = 1000000 };
	char err[512], run[PATH_MAX], last[512], cpus[256];
	struct config *c;
	struct sbuf b = {0}, prev = {0};
	struct status_rule rules[1] = {{N, NULL}};
	double util[2] = {0, 0};
	struct mgr_counters cnt = {0};
	int *pids = calloc(N * 3, sizeof(*pids));
	size_t off = 0;
	int n;

	/* CPUs 0,2,...,126: a list of 200 bytes (a value's limit is 256). */
	for (int cpu = 0; cpu < 128; cpu += 2)
		off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d",
					cpu ? "," : "", cpu);
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "rules = ( { name = \"a\"; comm = \"a\"; cpus = "
			 "\"%s\"; } );",
			 cpus);
		c = load(text, err, sizeof(err));
	}
	CHECK(c && pids);
	if (!c || !pids) {
		printf("# %s\n", err);
		free(pids);
		config_free(c);
		return;
	}
	for (int i = 0; i < N; i++) {
		pids[i * 3] = 0;
		pids[i * 3 + 1] = BASE + i;
	}
	{
		struct status_snapshot s = {
			.pid = 42, .cfg = c, .topo = &topo, .node_util = util,
			.rules = rules, .pids = pids, .npids = N,
			.processes = N, .cnt = &cnt,
		};

		status_format(&s, &b);
	}
	fixture_reset();
	snprintf(run, sizeof(run), "%s/run-explain", tmp);
	CHECK(status_write(run, &b, &prev) == 1);
	for (n = 0; n < 4; n++) {
		static const int who[] = {BASE + 5, BASE + 998, BASE + 1100,
					  BASE - 1};

		mktask(who[n], who[n], "a", 10, 0, "0-3", "\n");
	}
	/* Listed early, and past 8 KiB of its line. */
	explain_last(c, run, BASE + 5, last, sizeof(last));
	CHECK_STR(last, "the running softaffd manages it under rule 'a'");
	explain_last(c, run, BASE + 998, last, sizeof(last));
	CHECK_STR(last, "the running softaffd manages it under rule 'a'");
	/* Past the 1000 listed: it may be managed, not "not listed". */
	explain_last(c, run, BASE + 1100, last, sizeof(last));
	CHECK_STR(last, "the running softaffd lists only the lowest 1000 of "
			"rule 'a''s 1200 pids, all below 1001100: it may "
			"manage it under rule 'a'");
	/* Below the last listed and not there: surely not managed. */
	explain_last(c, run, BASE - 1, last, sizeof(last));
	CHECK_STR(last, "the running softaffd does not list it");
	sbuf_free(&b);
	sbuf_free(&prev);
	free(pids);
	config_free(c);
}
