// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaff -p PID and softaff COMMAND: a process's or a thread's own
 * request, what applies to it and where from (its status), and the
 * writes to <proc>/PID/soft_affinity_list and soft_affinity_ratio.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "softaff.h"

/* What applies to a task: dir is <proc>/PID or <proc>/PID/task/TID. */
static int read_task(const char *dir, struct pref_task *ret, char *ret_path,
		     size_t path_size)
{
	char buf[8192];
	int r;

	r = read_pref_file(dir, "status", buf, sizeof(buf), ret_path,
			   path_size);
	return r < 0 ? r : pref_parse_status(buf, ret);
}

static int read_task_req(const char *dir, struct pref_req *ret, char *ret_path,
			 size_t path_size)
{
	return read_req(dir, "soft_affinity_list", "soft_affinity_ratio", ret,
			ret_path, path_size);
}

static const char *format_cpus(const struct cpuset *s, bool list, char *buf,
			       size_t size)
{
	struct cpureq r = {.state = REQ_SET, .cpus = *s};

	cpureq_format(&r, list, buf, size);
	return buf;
}

/* What applies to a task, and where it comes from (its status). */
static void print_task(const char *who, int id, const char *when,
		       const struct pref_task *t, bool list)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[32];

	printf("%s %d's %s preferred %s: %s (%s)\n", who, id, when,
	       list ? "list" : "mask",
	       format_cpus(&t->cpus, list, cpus, sizeof(cpus)), t->source);
	printf("%s %d's %s ratio: %s (%s)\n", who, id, when,
	       ratio_req_format(&t->ratio, ratio, sizeof(ratio)),
	       t->ratio_source);
}

/* What one level (process or thread) asks for, as its files read. */
static void print_req(int id, const char *when, const char *level,
		      const struct pref_req *q, bool list)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[32];

	cpureq_format(&q->cpus, list, cpus, sizeof(cpus));
	printf("pid %d's %s %s request: %s %s, ratio %s\n", id, when, level,
	       list ? "list" : "mask", cpus,
	       ratio_req_format(&q->ratio, ratio, sizeof(ratio)));
}

/* Report a failed read of a task's files; the exit code for it. */
static int read_failed(const char *path, int err, int pid)
{
	char hint[64];

	if (err == -ENOTSUP) {
		fprintf(stderr,
			"softaff: %s: no soft affinity fields: this kernel "
			"does not have the soft affinity series (ABI v4)\n",
			path);
		return EX_NOKERNEL;
	}
	if (err == -EINVAL) {
		fprintf(stderr, "softaff: %s: cannot parse it\n", path);
		return EX_FAIL;
	}
	snprintf(hint, sizeof(hint), "no process or thread %d", pid);
	file_error(path, -err, err == -ENOENT || err == -ESRCH ? hint : NULL);
	return EX_FAIL;
}

/* A task directory: <proc>/PID, its task/TID or <proc>/self. */
static int set_task(const struct opts *o, const char *dir)
{
	return write_values(o, dir, "soft_affinity_list",
			    "soft_affinity_ratio");
}

/* The sorted thread ids of process tgid into *ret (malloc'd); count. */
static int list_threads(const struct opts *o, int tgid, int **ret)
{
	size_t cap = 0;
	int pfd, n;

	*ret = NULL;
	pfd = procfs_open_pid(o->roots.proc, tgid);
	if (pfd < 0)
		return pfd;
	n = procfs_read_tids(pfd, ret, &cap);
	close(pfd);
	if (n > 0)
		qsort(*ret, (size_t)n, sizeof(**ret), cmp_int);
	return n;
}

/*
 * What applies to the task at dir (id), and what its own level asks
 * for.  A thread that exited meanwhile is no error when may_vanish.
 */
static int show_task(const struct opts *o, const char *dir, int id,
		     const char *level, const char *when, bool may_vanish)
{
	char path[PATH_MAX];
	struct pref_task t;
	struct pref_req q;
	int r;

	r = read_task(dir, &t, path, sizeof(path));
	if (r == 0)
		r = read_task_req(dir, &q, path, sizeof(path));
	if (may_vanish && (r == -ENOENT || r == -ESRCH))
		return EX_OK;
	if (r < 0)
		return read_failed(path, r, id);
	print_task("pid", id, when, &t, o->list);
	print_req(id, when, level, &q, o->list);
	return EX_OK;
}

/*
 * Show (when) the one task at dir, or with -a the process's request
 * and every thread of tgid.
 */
static int show_tasks(const struct opts *o, int tgid, const char *dir,
		      int id, const char *when)
{
	char path[PATH_MAX], tdir[PATH_MAX];
	struct pref_req q;
	int *tids, n, r;

	if (!o->all)
		return show_task(o, dir, id, id == tgid ? "process" : "thread",
				 when, false);
	r = read_task_req(dir, &q, path, sizeof(path));
	if (r < 0)
		return read_failed(path, r, tgid);
	print_req(tgid, when, "process", &q, o->list);
	n = list_threads(o, tgid, &tids);
	if (n < 0) {
		snprintf(path, sizeof(path), "%s/%d/task", o->roots.proc, tgid);
		return read_failed(path, n, tgid);
	}
	r = EX_OK;
	for (int i = 0; i < n && r == EX_OK; i++) {
		snprintf(tdir, sizeof(tdir), "%s/%d/task/%d", o->roots.proc,
			 tgid, tids[i]);
		r = show_task(o, tdir, tids[i], "thread", when, true);
	}
	free(tids);
	return r;
}

/*
 * -p: a process is written at the process level (all its threads,
 * later ones too); a PID that is another thread's id only that thread,
 * as taskset -p sets one thread.
 */
int run_pid(const struct opts *o)
{
	char dir[PATH_MAX], path[PATH_MAX];
	bool set = o->have_cpus || o->have_ratio;
	struct pref_task t;
	int tgid, r;

	snprintf(dir, sizeof(dir), "%s/%d", o->roots.proc, o->pid);
	r = read_task(dir, &t, path, sizeof(path));
	if (r < 0)
		return read_failed(path, r, o->pid);
	tgid = t.tgid;
	if (o->all)
		snprintf(dir, sizeof(dir), "%s/%d", o->roots.proc, tgid);
	else if (tgid != o->pid)
		snprintf(dir, sizeof(dir), "%s/%d/task/%d", o->roots.proc,
			 tgid, o->pid);
	r = show_tasks(o, tgid, dir, o->pid, "current");
	if (r != EX_OK || !set)
		return r;
	r = set_task(o, dir);
	if (r != EX_OK)
		return r;
	return readback(show_tasks(o, tgid, dir, o->pid, "new"));
}

/* COMMAND: set our own preference (process level), then become it. */
int run_command(const struct opts *o)
{
	char dir[PATH_MAX];
	int r;

	snprintf(dir, sizeof(dir), "%s/self", o->roots.proc);
	r = set_task(o, dir);
	if (r != EX_OK)
		return r;
	execvp(o->cmd[0], o->cmd);
	r = errno;
	fprintf(stderr, "softaff: failed to execute %s: %s\n", o->cmd[0],
		strerror(r));
	return r == ENOENT ? EX_NOTFOUND : EX_NOEXEC;
}

