// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgpref.h"
#include "container.h"
#include "explain.h"
#include "procfs.h"
#include "rules.h"
#include "status.h"
#include "util.h"

/* The value of "Key:" in /proc/PID/status, or "?". */
static void status_field(int pfd, const char *key, char *ret, size_t size)
{
	char buf[8192], *p, *end;
	size_t k = strlen(key);

	snprintf(ret, size, "?");
	if (read_file_at(pfd, "status", buf, sizeof(buf)) < 0)
		return;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, k) || p[k] != ':')
			continue;
		p += k + 1;
		p += strspn(p, " \t");
		end = strchr(p, '\n');
		snprintf(ret, size, "%.*s", end ? (int)(end - p) : (int)strlen(p),
			 p);
		return;
	}
}

/*
 * A level's own request, "CPUs LIST ratio A:P" (an empty line shown as
 * "inherit"); dir is "" for the process, "task/TID/" for a thread.
 */
static void print_request(FILE *out, int pfd, const char *dir)
{
	static const char *const files[] = {"soft_affinity_list",
					    "soft_affinity_ratio"};
	char path[64], buf[CPUSET_LIST_BUFSZ];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, files[i]);
		if (read_file_at(pfd, path, buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "?");
		buf[strcspn(buf, "\n")] = '\0';
		fprintf(out, "%s %s", i ? " ratio" : "CPUs",
			req_state_of(buf) == REQ_INHERIT ? "inherit" : buf);
	}
}

/* The cgroup level: its own request, and what its tasks get. */
static void print_cgroup(FILE *out, const char *sys, const char *cg)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ], ratio[32];
	struct cpureq eff;
	struct pref_req q;

	if (cgpref_read(NULL, sys, cg, &q) < 0) {
		fprintf(out,
			"its cgroup %s has no cpuset.cpus.preferred (no "
			"cpuset controller there)\n",
			cg);
		return;
	}
	cpureq_format(&q.cpus, true, buf, sizeof(buf));
	fprintf(out, "its cgroup %s: CPUs %s ratio %s, ", cg, buf,
		ratio_req_format(&q.ratio, ratio, sizeof(ratio)));
	if (cgroup_file_path(path, sizeof(path), sys, cg,
			     "cpuset.cpus.preferred.effective") < 0 ||
	    read_file(path, buf, sizeof(buf)) < 0 ||
	    cpureq_parse_list(buf, &eff) < 0) {
		snprintf(buf, sizeof(buf), "?");
	} else {
		/* An empty line: no level up to the root asks for CPUs. */
		if (eff.state == REQ_INHERIT)
			eff.state = REQ_NONE;
		cpureq_format(&eff, true, buf, sizeof(buf));
	}
	fprintf(out,
		"its tasks without their own get CPUs %s "
		"(cpuset.cpus.preferred.effective)\n",
		buf);
}

/*
 * What the daemon's status says of a pid.  Each "rule NAME ... pids"
 * line lists the rule's pids in ascending order, at most
 * STATUS_MAX_PIDS of them, then " ..." when there are more: a pid not
 * listed but above a cut list's last may still be managed under it.
 */
struct listed {
	char rule[CONFIG_MAX_PATTERN + 1]; /* "": not listed */
	char cut[CONFIG_MAX_PATTERN + 1];  /* "": no cut list can hold it */
	unsigned int cut_shown, cut_total, ncut;
};

/* One "rule NAME cpus LIST processes N pids P1 P2 ... [...]" line. */
static void listed_line(const char *line, int pid, struct listed *ret)
{
	char name[CONFIG_MAX_PATTERN + 1];
	const char *p, *q;
	unsigned int total, shown = 0;
	long last = -1;
	bool cut = false;

	if (strncmp(line, "rule ", 5) ||
	    sscanf(line, "rule %256s", name) != 1 ||
	    !(q = strstr(line, " processes ")) ||
	    sscanf(q, " processes %u", &total) != 1 ||
	    !(p = strstr(q, " pids")))
		return;
	for (p += 5; *p == ' ';) {
		char *end;
		long v;

		if (!strncmp(p, " ...", 4)) {
			cut = true;
			break;
		}
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p)
			break;
		if (v == pid) {
			snprintf(ret->rule, sizeof(ret->rule), "%s", name);
			return;
		}
		last = v;
		shown++;
		p = end;
	}
	/* Sorted: a pid below the last listed one is not in the rest. */
	if (cut && pid > last && ret->ncut++ == 0) {
		snprintf(ret->cut, sizeof(ret->cut), "%s", name);
		ret->cut_shown = shown;
		ret->cut_total = total;
	}
}

/*
 * Where the daemon's status file lists pid.  Lines are read whole
 * (getline): 1000 seven-digit pids and a long rule name pass 8 KiB.
 * False if there is no status file.
 */
static bool daemon_listed(const char *run, int pid, struct listed *ret)
{
	char path[PATH_MAX], *line = NULL;
	size_t size = 0;
	FILE *f;

	*ret = (struct listed){0};
	snprintf(path, sizeof(path), "%s/%s", run, STATUS_FILE);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!ret->rule[0] && getline(&line, &size, f) > 0)
		listed_line(line, pid, ret);
	free(line);
	fclose(f);
	return true;
}

/* The last line: whether the running daemon manages pid, and under what. */
static void print_daemon(FILE *out, const char *run, int pid)
{
	struct listed l;

	if (!daemon_listed(run, pid, &l))
		fprintf(out, "the running softaffd does not list it%s\n",
			access(run, F_OK) ? " (no daemon status)" : "");
	else if (l.rule[0])
		fprintf(out, "the running softaffd manages it under rule '%s'\n",
			l.rule);
	else if (l.cut[0])
		fprintf(out,
			"the running softaffd lists only the lowest %u of rule "
			"'%s''s %u pids, all below %d: it may manage it under "
			"rule '%s'%s\n",
			l.cut_shown, l.cut, l.cut_total, pid, l.cut,
			l.ncut > 1 ? " or another whose list is cut" : "");
	else
		fprintf(out, "the running softaffd does not list it\n");
}

int explain_pid(const struct config *c, const struct roots *roots, int pid,
		FILE *out)
{
	static char exe[PATH_MAX], cmdline[4096], cgroup[4096];
	char why[512], unit[256], v[256], mask[256], ratio[64];
	char rsrc[32];
	struct container_cache cc = {0};
	struct container_mark mk;
	struct proc_attrs a = {0};
	struct pstat st;
	int pfd, first = -1;
	bool ctr;

	pfd = procfs_open_pid(roots->proc, pid);
	if (pfd < 0 || procfs_read_stat(NULL, pfd, 0, &st) < 0) {
		fprintf(stderr, "softaffd: cannot read process %d: %s\n", pid,
			strerror(pfd < 0 ? -pfd : ESRCH));
		if (pfd >= 0)
			close(pfd);
		return 1;
	}
	a.comm = st.comm;
	if (procfs_read_exe(pfd, exe, sizeof(exe)) == 0)
		a.exe = exe;
	if (procfs_read_cmdline(NULL, pfd, cmdline, sizeof(cmdline)) == 0)
		a.cmdline = cmdline;
	if (procfs_read_cgroup(NULL, pfd, cgroup, sizeof(cgroup)) == 0)
		a.cgroup = cgroup;
	if (procfs_read_status(NULL, pfd, 0, NULL, &a.uid) == 0)
		a.has_uid = true;
	if (!a.cgroup || rules_unit_of(a.cgroup, unit, sizeof(unit)) < 0)
		snprintf(unit, sizeof(unit), "(none)");
	fprintf(out, "pid %d (%s): uid %d, exe %s, cgroup %s, unit %s\n", pid,
		st.comm, a.has_uid ? (int)a.uid : -1,
		a.exe ? a.exe : "(unreadable: needs CAP_SYS_PTRACE)",
		a.cgroup ? a.cgroup : "?", unit);
	if (st.flags & PF_KTHREAD_BIT)
		fprintf(out, "a kernel thread: never managed\n");
	for (unsigned int i = 0; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];
		bool yes = rules_explain(r, &a, why, sizeof(why));

		if (yes && first < 0)
			first = (int)i;
		fprintf(out, "rule '%s' (%s:%d): %s: %s\n", r->name, r->file,
			r->line,
			!yes		 ? "no"
			: first == (int)i ? "MATCHES"
					  : "would match, but an earlier rule wins",
			why);
	}
	ctr = a.cgroup && container_find(&cc, roots->sys, a.cgroup,
					  monotonic_ns(), 0, &mk);
	container_cache_free(&cc);
	if (first < 0) {
		fprintf(out, "no rule matches\n");
	} else if (!ctr) {
		const struct rule *r = &c->rules[first];
		char cpus[CPUSET_LIST_BUFSZ];

		cpuset_format_list(&r->cpus, cpus, sizeof(cpus));
		fprintf(out,
			"rule '%s' wants CPUs %s, softness %s, applied via %s\n",
			r->name, cpus,
			r->softness.kind == SOFT_ADAPTIVE ? "adaptive"
			: r->softness.kind == SOFT_STRICT ? "strict (10000:1)"
							  : "fixed",
			r->needs == NEED_CGROUP && r->threads == THREADS_ALL
				? "its cgroup (cpuset.cpus.preferred)"
				: "its threads (task/TID/soft_affinity_list) "
				  "and the process (soft_affinity_ratio)");
	}
	if (ctr)
		fprintf(out,
			"its preference is set by the container's annotations "
			"(container %s, cgroup %.*s): softaffd leaves it "
			"alone%s%s%s\n",
			mk.id, (int)mk.cglen, a.cgroup,
			first < 0 ? "" : "; otherwise rule '",
			first < 0 ? "" : c->rules[first].name,
			first < 0 ? "" : "' would apply");
	/* What applies (its first thread's, as status shows) ... */
	status_field(pfd, "Cpus_preferred_list", mask, sizeof(mask));
	status_field(pfd, "Cpus_preferred_source", v, sizeof(v));
	status_field(pfd, "Cpus_preferred_ratio", ratio, sizeof(ratio));
	status_field(pfd, "Cpus_preferred_ratio_source", rsrc, sizeof(rsrc));
	fprintf(out,
		"applied now: preferred CPUs %s (source %s), ratio %s "
		"(source %s)\n",
		mask, v, ratio, rsrc);
	/* ... and what the levels softaffd writes ask for. */
	fprintf(out, "requested: process ");
	print_request(out, pfd, "");
	snprintf(v, sizeof(v), "task/%d/", pid);
	fprintf(out, "; thread %d ", pid);
	print_request(out, pfd, v);
	fprintf(out, " (the first level that does not inherit decides: "
		     "thread, process, cgroup)\n");
	if (a.cgroup)
		print_cgroup(out, roots->sys, a.cgroup);
	print_daemon(out, roots->run, pid);
	close(pfd);
	return 0;
}
