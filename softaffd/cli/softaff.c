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
#include <unistd.h>

#include "procfs.h"
#include "softaff.h"
#include "topology.h"

#ifndef SOFTAFFD_VERSION
#define SOFTAFFD_VERSION "0.1"
#endif

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

	t = calloc(1, sizeof(*t));
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
		topology_free(t);
		return EX_FAIL;
	}
	r = pref_nodes_cpus(t, o->node_arg, &o->cpus.cpus, &node);
	o->cpus.state = REQ_SET;
	topology_free(t);
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
		    ratio_req_parse(o->ratio_arg, &o->ratio) < 0)
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
