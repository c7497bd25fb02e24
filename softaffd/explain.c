// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "explain.h"
#include "procfs.h"
#include "rules.h"
#include "status.h"

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

/* The rule under which the daemon's status file lists pid, or "". */
static void daemon_rule(const char *run, int pid, char *ret, size_t size)
{
	char path[PATH_MAX], line[8192];
	FILE *f;

	*ret = '\0';
	snprintf(path, sizeof(path), "%s/%s", run, STATUS_FILE);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char name[CONFIG_MAX_PATTERN + 1], *pids;
		char key[32];

		if (strncmp(line, "rule ", 5) ||
		    sscanf(line, "rule %256s", name) != 1 ||
		    !(pids = strstr(line, " pids ")))
			continue;
		snprintf(key, sizeof(key), " %d", pid);
		for (char *p = pids + 5; (p = strstr(p, key)); p++)
			if (p[strlen(key)] == ' ' || p[strlen(key)] == '\n') {
				snprintf(ret, size, "%s", name);
				break;
			}
		if (*ret)
			break;
	}
	fclose(f);
}

int explain_pid(const struct config *c, const struct roots *roots, int pid,
		FILE *out)
{
	static char exe[PATH_MAX], cmdline[4096], cgroup[4096];
	char why[512], unit[256], v[256], mask[256], ratio[64], rule[300];
	struct container_cache cc = {0};
	struct container_mark mk;
	struct proc_attrs a = {0};
	struct pstat st;
	int pfd, first = -1;
	bool ctr;

	pfd = procfs_open_pid(roots->proc, pid);
	if (pfd < 0 || procfs_read_stat(pfd, 0, &st) < 0) {
		fprintf(stderr, "softaffd: cannot read process %d: %s\n", pid,
			strerror(pfd < 0 ? -pfd : ESRCH));
		if (pfd >= 0)
			close(pfd);
		return 1;
	}
	a.comm = st.comm;
	if (procfs_read_exe(pfd, exe, sizeof(exe)) == 0)
		a.exe = exe;
	if (procfs_read_cmdline(pfd, cmdline, sizeof(cmdline)) == 0)
		a.cmdline = cmdline;
	if (procfs_read_cgroup(pfd, cgroup, sizeof(cgroup)) == 0)
		a.cgroup = cgroup;
	if (procfs_read_status(pfd, 0, NULL, &a.uid) == 0)
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
				: "the process (soft_affinity, "
				  "soft_affinity_ratio)");
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
	status_field(pfd, "Cpus_preferred_list", mask, sizeof(mask));
	status_field(pfd, "Cpus_preferred_source", v, sizeof(v));
	if (read_file_at(pfd, "soft_affinity_ratio", ratio, sizeof(ratio)) < 0)
		snprintf(ratio, sizeof(ratio), "?");
	ratio[strcspn(ratio, "\n")] = '\0';
	fprintf(out, "applied now: preferred CPUs %s (source %s), ratio %s\n",
		mask, v, ratio);
	daemon_rule(roots->run, pid, rule, sizeof(rule));
	if (*rule)
		fprintf(out, "the running softaffd manages it under rule '%s'\n",
			rule);
	else
		fprintf(out, "the running softaffd does not list it%s\n",
			access(roots->run, F_OK) ? " (no daemon status)" : "");
	close(pfd);
	return 0;
}
