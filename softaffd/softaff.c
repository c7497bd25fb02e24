// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaff: show or set the soft CPU affinity of a process, a thread or a
 * cgroup, or run a command with one; modelled on taskset(1) (hex masks,
 * -c for lists, -p, -a) and numactl(8) (nodes).
 *
 * It is a thin client of the kernel's files (/proc/PID/soft_affinity*,
 * Cpus_preferred* in status, cpuset.cpus.preferred*): every value it
 * shows was read from the kernel after the write, never echoed back.
 * What applies comes from status (and cpuset.cpus.preferred.effective),
 * what a level asks for from that level's own files, which read as
 * written: a list or mask, "none", or an empty line for "inherit".
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "pref.h"
#include "procfs.h"
#include "topology.h"
#include "util.h"

#ifndef SOFTAFFD_VERSION
#define SOFTAFFD_VERSION "0.1"
#endif

/* Exit codes, as in softaff(1). */
enum {
	EX_OK = 0,
	EX_FAIL = 1,	   /* a file could not be read or the kernel refused */
	EX_USAGE = 2,	   /* bad option, mask, list, node or ratio */
	EX_NOKERNEL = 3,   /* the kernel has no soft affinity */
	EX_NOEXEC = 126,   /* COMMAND found but could not be run */
	EX_NOTFOUND = 127, /* COMMAND not found */
};

struct opts {
	struct roots roots;
	bool pid_mode, all, list, reset;
	const char *mask_arg, *node_arg, *ratio_arg, *cgroup_arg;
	int pid;
	char **cmd;
	/* What to write, from the arguments (--reset: cpus inherit). */
	bool have_cpus, have_ratio;
	struct cpureq cpus;
	struct pref_ratio ratio;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: softaff [options] MASK COMMAND [ARG...]\n"
		"       softaff [options] --node NODES|-- COMMAND [ARG...]\n"
		"       softaff -p [options] [MASK] PID\n"
		"       softaff --cgroup PATH [options] [MASK]\n"
		"Show or set the soft CPU affinity (preferred CPUs and ratio)\n"
		"of a process, a thread or a cgroup, or run a command with "
		"one.\nMASK may also be \"inherit\" (clear this level: the "
		"next one applies)\nor \"none\" (opt out: no preferred CPUs, "
		"whatever the next level says).\n\n"
		"  -p, --pid            act on the process PID (a thread if "
		"PID is not a\n"
		"                       process's first thread)\n"
		"  -a, --all-tasks      with -p: show every thread\n"
		"  -c, --cpu-list       MASK is a CPU list (0-3,8), and lists "
		"are shown\n"
		"  -N, --node NODES     prefer the CPUs of these NUMA nodes "
		"(0, 0-1)\n"
		"  -r, --ratio A:P      the ratio allowed:preferred, "
		"\"inherit\" or \"none\"\n"
		"  -g, --cgroup PATH    act on a cgroup v2 directory\n"
		"      --reset          clear the preferred CPUs at this "
		"level (inherit)\n"
		"  -h, --help           this text\n"
		"  -V, --version        print the version\n\n"
		"Exit status: 0 done, 1 a file could not be read or the "
		"kernel refused,\n"
		"2 bad arguments, 3 no soft affinity in this kernel, "
		"126/127 COMMAND\n"
		"could not be run / was not found.  See softaff(1).\n");
}

/* "softaff: PATH: STRERROR (HINT)" on stderr. */
static void file_error(const char *path, int err, const char *hint)
{
	fprintf(stderr, "softaff: %s: %s%s%s%s\n", path, strerror(err),
		hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "softaff: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'softaff --help' for more information.\n");
	return EX_USAGE;
}

/* Why a write to a preference file failed, in an admin's words. */
static const char *write_hint(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return "needs CAP_SYS_NICE or the same user as the process";
	case EINVAL:
		return "the kernel refused the value: a CPU beyond the "
		       "possible ones, or a kernel thread bound to its CPUs";
	case ESRCH:
		return "the process or thread exited";
	default:
		return NULL;
	}
}

static void path_join(char *buf, size_t size, const char *dir,
		      const char *file)
{
	int n = snprintf(buf, size, "%s/%s", dir, file);

	/* Paths come from PATH_MAX/4 roots and short names; never cut. */
	if (n < 0 || (size_t)n >= size)
		abort();
}

/*
 * Read a preference file (soft affinity files of a kernel without the
 * series do not exist: EX_NOKERNEL, said once by the caller).
 */
static int read_pref_file(const char *dir, const char *file, char *buf,
			  size_t size, char *ret_path, size_t path_size)
{
	ssize_t n;

	path_join(ret_path, path_size, dir, file);
	n = read_file(ret_path, buf, size);
	return n < 0 ? (int)n : 0;
}

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

/* A level's own request from its two files under dir: mask, ratio. */
static int read_req(const char *dir, const char *cpus_file,
		    const char *ratio_file, struct pref_req *ret,
		    char *ret_path, size_t path_size)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[64];
	int r;

	r = read_pref_file(dir, cpus_file, cpus, sizeof(cpus), ret_path,
			   path_size);
	if (r == 0)
		r = read_pref_file(dir, ratio_file, ratio, sizeof(ratio),
				   ret_path, path_size);
	if (r < 0)
		return r;
	return pref_parse_req(cpus, ratio, ret) < 0 ? -EINVAL : 0;
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
	       pref_format_ratio(&t->ratio, ratio, sizeof(ratio)),
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
	       pref_format_ratio(&q->ratio, ratio, sizeof(ratio)));
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

static int write_pref(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	int r;

	path_join(path, sizeof(path), dir, file);
	r = write_file(path, value, strlen(value));
	if (r < 0) {
		/* The value without its newline, for the message. */
		fprintf(stderr, "softaff: writing '%.*s' to %s: %s",
			(int)strcspn(value, "\n"), value, path, strerror(-r));
		if (write_hint(-r))
			fprintf(stderr, " (%s)", write_hint(-r));
		fputc('\n', stderr);
		return EX_FAIL;
	}
	return EX_OK;
}

/*
 * The writes of a set: the mask and then the ratio, each only if asked
 * for ("inherit" for --reset).  A refused mask stops before the ratio,
 * so that nothing is half done by a bad call.
 */
static int write_values(const struct opts *o, const char *dir,
			const char *mask_file, const char *ratio_file)
{
	char buf[CPUSET_LIST_BUFSZ + 1];
	int r;

	if (o->have_cpus) {
		cpureq_format(&o->cpus, true, buf, sizeof(buf) - 1);
		strcat(buf, "\n");
		r = write_pref(dir, mask_file, buf);
		if (r != EX_OK)
			return r;
	}
	if (o->have_ratio) {
		pref_format_ratio(&o->ratio, buf, sizeof(buf) - 1);
		strcat(buf, "\n");
		return write_pref(dir, ratio_file, buf);
	}
	return EX_OK;
}

/* A task directory: <proc>/PID, its task/TID or <proc>/self. */
static int set_task(const struct opts *o, const char *dir)
{
	return write_values(o, dir, "soft_affinity_list",
			    "soft_affinity_ratio");
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
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
 * After a write that was taken, reading the new value back may still fail
 * (the process exited meanwhile): the message says so, and the exit
 * status stays 0, because what was asked for was done.
 */
static int readback(int r)
{
	if (r != EX_OK)
		fprintf(stderr, "softaff: the new value was written, but "
				"reading it back failed (above)\n");
	return EX_OK;
}

/*
 * -p: a process is written at the process level (all its threads,
 * later ones too); a PID that is another thread's id only that thread,
 * as taskset -p sets one thread.
 */
static int run_pid(const struct opts *o)
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
static int run_command(const struct opts *o)
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

/* 0 if path is a directory, else -errno (-ENOTDIR for a file). */
static int check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Why a cgroup has no cpuset.cpus.preferred; the exit code. */
static int cgroup_missing(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (!strcmp(name, "/")) {
		fprintf(stderr,
			"softaff: the root cgroup has no preference files; "
			"name a cgroup below it\n");
		return EX_FAIL;
	}
	path_join(path, sizeof(path), dir, "cpuset.cpus");
	if (access(path, F_OK) == 0) {
		fprintf(stderr,
			"softaff: %s/cpuset.cpus.preferred is missing: this "
			"kernel does not have the soft affinity series\n",
			dir);
		return EX_NOKERNEL;
	}
	fprintf(stderr,
		"softaff: %s: no cpuset files: the cpuset controller is not "
		"enabled for cgroup %s (echo +cpuset > its parent's "
		"cgroup.subtree_control)\n",
		dir, name);
	return EX_FAIL;
}

/*
 * A cgroup's own request, and what its tasks without one of their own
 * get (cpuset.cpus.preferred.effective: the nearest request that does
 * not inherit, within cpuset.cpus.effective).
 */
static int show_cgroup(const char *dir, const char *name, const char *when,
		       bool list)
{
	char path[PATH_MAX], buf[CPUSET_LIST_BUFSZ], cpus[CPUSET_LIST_BUFSZ];
	struct cpureq eff;
	struct pref_req q;
	int r;

	r = read_req(dir, "cpuset.cpus.preferred",
		     "cpuset.cpus.preferred.ratio", &q, path, sizeof(path));
	if (r == 0) {
		r = read_pref_file(dir, "cpuset.cpus.preferred.effective", buf,
				   sizeof(buf), path, sizeof(path));
		if (r == 0 && cpureq_parse_list(buf, &eff) < 0)
			r = -EINVAL;
	}
	if (r == -EINVAL) {
		fprintf(stderr, "softaff: %s: cannot parse it\n", path);
		return EX_FAIL;
	}
	if (r < 0) {
		file_error(path, -r, NULL);
		return EX_FAIL;
	}
	cpureq_format(&q.cpus, list, cpus, sizeof(cpus));
	printf("cgroup %s's %s preferred %s: %s%s\n", name, when,
	       list ? "list" : "mask", cpus,
	       q.cpus.state == REQ_INHERIT ? " (the nearest ancestor's applies)"
					   : "");
	printf("cgroup %s's %s ratio: %s\n", name, when,
	       pref_format_ratio(&q.ratio, buf, sizeof(buf)));
	/* An empty line: no level has a mask for its tasks. */
	if (eff.state == REQ_INHERIT)
		eff.state = REQ_NONE;
	cpureq_format(&eff, list, cpus, sizeof(cpus));
	printf("cgroup %s's %s effective %s: %s\n", name, when,
	       list ? "list" : "mask", cpus);
	return EX_OK;
}

static int run_cgroup(const struct opts *o)
{
	char dir[PATH_MAX], name[PATH_MAX], path[PATH_MAX];
	int r;

	/* Room left in dir for the longest file name below. */
	r = pref_cgroup_dir(o->roots.sys, o->cgroup_arg, dir, sizeof(dir) - 64,
			    name, sizeof(name));
	if (r < 0)
		return usage_error("bad cgroup path '%s' (no '..'; relative "
				   "to the cgroup v2 mount)",
				   o->cgroup_arg);
	r = check_dir(dir);
	if (r < 0) {
		file_error(dir, -r, "no such cgroup");
		return EX_FAIL;
	}
	path_join(path, sizeof(path), dir, "cpuset.cpus.preferred");
	if (access(path, F_OK) < 0)
		return cgroup_missing(dir, name);
	r = show_cgroup(dir, name, "current", o->list);
	if (r != EX_OK || !(o->have_cpus || o->have_ratio))
		return r;
	r = write_values(o, dir, "cpuset.cpus.preferred",
			 "cpuset.cpus.preferred.ratio");
	if (r != EX_OK)
		return r;
	return readback(show_cgroup(dir, name, "new", o->list));
}

/*
 * MASK (hex, "0x" allowed as taskset takes it) or LIST with -c, or the
 * word "inherit" or "none".
 */
static int parse_cpus_arg(struct opts *o)
{
	struct cpuset *cpus = &o->cpus.cpus;
	const char *s = o->mask_arg;
	int r;

	o->have_cpus = true;
	o->cpus.state = REQ_SET;
	if (!strcmp(s, "inherit") || !strcmp(s, "none")) {
		o->cpus.state = req_state_of(s);
		return EX_OK;
	}
	if (o->list) {
		r = cpuset_parse_list(s, cpus);
	} else {
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			s += 2;
		r = cpuset_parse_mask(s, cpus);
	}
	if (r == -ERANGE)
		return usage_error("'%s' names a CPU beyond 1023",
				   o->mask_arg);
	if (r < 0)
		return usage_error(o->list ? "'%s' is not a CPU list (e.g. "
					     "0-3,8)"
					   : "'%s' is not a hex CPU mask (e.g. "
					     "f; -c for a list)",
				   o->mask_arg);
	if (cpuset_empty(cpus))
		return usage_error("'%s' names no CPU (\"none\" to opt out)",
				   o->mask_arg);
	return EX_OK;
}

static int parse_node_arg(struct opts *o)
{
	struct topology *t;
	int r, node = -1;

	t = malloc(sizeof(*t));
	if (!t) {
		fprintf(stderr, "softaff: out of memory\n");
		return EX_FAIL;
	}
	r = topology_load(o->roots.sys, t);
	if (r < 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/devices/system/node",
			 o->roots.sys);
		file_error(path, -r, "cannot read the NUMA topology");
		free(t);
		return EX_FAIL;
	}
	r = pref_nodes_cpus(t, o->node_arg, &o->cpus.cpus, &node);
	o->cpus.state = REQ_SET;
	free(t);
	if (r == -ENOENT) {
		return usage_error("node %d does not exist", node);
	}
	if (r < 0)
		return usage_error("'%s' is not a node list (e.g. 0 or 0-1)",
				   o->node_arg);
	o->have_cpus = true;
	return EX_OK;
}

/* The positional arguments: [MASK] PID, [MASK], or [MASK] COMMAND. */
static int parse_positional(struct opts *o, int argc, char **argv,
			    bool dashdash)
{
	bool want_mask = !o->node_arg && !o->reset;
	uint64_t pid;

	if (o->pid_mode) {
		if (argc < 1 || argc > 2)
			return usage_error("-p needs [MASK] PID");
		if (argc == 2) {
			if (!want_mask)
				return usage_error("give a MASK or "
						   "--node/--reset, not both");
			o->mask_arg = argv[0];
		}
		if (parse_u64(argv[argc - 1], &pid) < 0 || pid == 0 ||
		    pid > INT32_MAX)
			return usage_error("'%s' is not a process id",
					   argv[argc - 1]);
		o->pid = (int)pid;
		return EX_OK;
	}
	if (o->cgroup_arg) {
		if (argc > 1)
			return usage_error("--cgroup takes at most one "
						 "MASK");
		if (argc == 1 && !want_mask)
			return usage_error("give a MASK or "
						 "--node/--reset, not both");
		o->mask_arg = argc ? argv[0] : NULL;
		return EX_OK;
	}
	/* COMMAND: "--" right after the options means no MASK. */
	if (want_mask && !dashdash) {
		if (argc < 1)
			return usage_error("no MASK and no COMMAND");
		o->mask_arg = argv[0];
		argv++, argc--;
		if (argc && !strcmp(argv[0], "--"))
			argv++, argc--;
	}
	if (argc < 1)
		return usage_error("no COMMAND to run");
	if (!o->mask_arg && !o->node_arg && !o->reset && !o->ratio_arg)
		return usage_error("nothing to set: give a MASK, "
					 "--node, --ratio or --reset");
	o->cmd = argv;
	return EX_OK;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_RESET = 256, OPT_PROC, OPT_SYS };
	static const struct option lo[] = {
		{"pid", no_argument, NULL, 'p'},
		{"all-tasks", no_argument, NULL, 'a'},
		{"cpu-list", no_argument, NULL, 'c'},
		{"node", required_argument, NULL, 'N'},
		{"ratio", required_argument, NULL, 'r'},
		{"cgroup", required_argument, NULL, 'g'},
		{"reset", no_argument, NULL, OPT_RESET},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		/* For the tests: fixture trees instead of /proc and /sys. */
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{NULL, 0, NULL, 0},
	};
	char *pos[3];
	size_t npos = 0;
	bool dashdash;
	int c, r;

	roots_default(&o->roots);
	/* "+": stop at the first non-option, COMMAND's options are its own. */
	opterr = 0; /* our own message, not one naming argv[0]'s path */
	for (;;) {
		c = getopt_long(argc, argv, "+pacN:r:g:hV", lo, NULL);
		/*
		 * Without a COMMAND (-p, --cgroup) options may also follow
		 * MASK and PID, as with taskset -p; the "+" above is for
		 * COMMAND's options, which are its own.
		 */
		if (c == -1 && (o->pid_mode || o->cgroup_arg) &&
		    optind < argc && strcmp(argv[optind - 1], "--")) {
			if (npos == ARRAY_SIZE(pos))
				return usage_error("too many arguments: '%s'",
						   argv[optind]);
			pos[npos++] = argv[optind++];
			continue;
		}
		if (c == -1)
			break;
		switch (c) {
		case 'p': o->pid_mode = true; break;
		case 'a': o->all = true; break;
		case 'c': o->list = true; break;
		case 'N': o->node_arg = optarg; break;
		case 'r': o->ratio_arg = optarg; break;
		case 'g': o->cgroup_arg = optarg; break;
		case OPT_RESET: o->reset = true; break;
		case OPT_PROC:
			snprintf(o->roots.proc, sizeof(o->roots.proc), "%s",
				 optarg);
			break;
		case OPT_SYS:
			snprintf(o->roots.sys, sizeof(o->roots.sys), "%s",
				 optarg);
			break;
		case 'h': usage(stdout); exit(EX_OK);
		case 'V': printf("softaff %s\n", SOFTAFFD_VERSION); exit(EX_OK);
		default:
			return usage_error("unknown option or missing "
					   "argument: '%s'",
					   argv[optind - 1]);
		}
	}
	dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
	if (o->pid_mode && o->cgroup_arg)
		return usage_error("-p and --cgroup exclude each other");
	if (o->all && !o->pid_mode)
		return usage_error("-a needs -p");
	if (o->node_arg && o->reset)
		return usage_error("--node and --reset exclude each "
					 "other");
	if (o->pid_mode || o->cgroup_arg) {
		/* What follows a "--" is positional too. */
		while (optind < argc && npos < ARRAY_SIZE(pos))
			pos[npos++] = argv[optind++];
		if (optind < argc)
			return usage_error("too many arguments: '%s'",
					   argv[optind]);
		r = parse_positional(o, (int)npos, pos, dashdash);
	} else {
		r = parse_positional(o, argc - optind, argv + optind,
				     dashdash);
	}
	if (r != EX_OK)
		return r;
	if (o->mask_arg && (r = parse_cpus_arg(o)) != EX_OK)
		return r;
	if (o->node_arg && (r = parse_node_arg(o)) != EX_OK)
		return r;
	if (o->reset) {
		o->cpus.state = REQ_INHERIT;
		o->have_cpus = true;
	}
	if (o->ratio_arg) {
		if (!*o->ratio_arg ||
		    pref_parse_ratio(o->ratio_arg, &o->ratio) < 0)
			return usage_error("bad ratio '%s': want "
					   "ALLOWED:PREFERRED, each 1..10000, "
					   "inherit or none",
					   o->ratio_arg);
		o->have_ratio = true;
	}
	return EX_OK;
}

/* A kernel without the series: say so once, by the file that is missing. */
static int check_kernel(const struct opts *o)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/self/soft_affinity", o->roots.proc);
	if (access(path, F_OK) == 0)
		return EX_OK;
	if (errno != ENOENT) {
		file_error(path, errno, NULL);
		return EX_FAIL;
	}
	file_error(path, ENOENT, "this kernel does not have the soft "
				 "affinity series");
	return EX_NOKERNEL;
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	int r;

	r = parse_args(argc, argv, &o);
	if (r != EX_OK)
		return r;
	if (o.cgroup_arg) {
		r = run_cgroup(&o);
	} else {
		r = check_kernel(&o);
		if (r != EX_OK)
			return r;
		r = o.pid_mode ? run_pid(&o) : run_command(&o);
	}
	if (fflush(stdout) != 0 && r == EX_OK) {
		fprintf(stderr, "softaff: standard output: %s\n",
			strerror(errno));
		r = EX_FAIL;
	}
	return r;
}
