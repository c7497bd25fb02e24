// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd: apply scheduler soft affinity to processes by rule, and tune
 * sched_allowed:sched_preferred to the load.
 *
 * main() only wires things together: arguments, the topology and the
 * configuration, then the daemon (daemon.c) and its loop.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "explain.h"
#include "privs.h"
#include "status.h"
#include "topology.h"

#ifndef SOFTAFFD_VERSION
#define SOFTAFFD_VERSION "0.1"
#endif
#define DEFAULT_CONFIG "/etc/softaffd.conf"

struct opts {
	struct daemon_opts d;
	bool test, status, json, verbose, privileges;
	int explain; /* --explain PID */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: softaffd [OPTIONS]\n"
		"Apply scheduler soft affinity to processes by rule.\n\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"  -t, --test          check the configuration, print it "
		"normalized, exit\n"
		"      --privileges    print the systemd drop-in that grants "
		"what the\n"
		"                      configuration needs beyond "
		"softaffd.service\n"
		"  -n, --dry-run       log every action, write nothing\n"
		"  -1, --once          scan and apply once, then exit\n"
		"  -s, --status        print what the running daemon "
		"publishes\n"
		"      --json          with --status: the same as JSON\n"
		"      --explain PID   which rule matches PID and why, and "
		"what is applied\n"
		"  -v, --verbose       also log debug messages\n"
		"      --proc-root DIR use DIR instead of /proc (testing)\n"
		"      --sys-root DIR  use DIR instead of /sys (testing)\n"
		"      --run-dir DIR   use DIR instead of /run/softaffd\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n",
		DEFAULT_CONFIG);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		OPT_PROC = 256,
		OPT_SYS,
		OPT_RUN,
		OPT_JSON,
		OPT_EXPLAIN,
		OPT_PRIVILEGES,
	};
	static const struct option lo[] = {
		{"config", required_argument, NULL, 'c'},
		{"test", no_argument, NULL, 't'},
		{"dry-run", no_argument, NULL, 'n'},
		{"once", no_argument, NULL, '1'},
		{"status", no_argument, NULL, 's'},
		{"verbose", no_argument, NULL, 'v'},
		{"json", no_argument, NULL, OPT_JSON},
		{"explain", required_argument, NULL, OPT_EXPLAIN},
		{"privileges", no_argument, NULL, OPT_PRIVILEGES},
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{"run-dir", required_argument, NULL, OPT_RUN},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	struct roots *roots = &o->d.roots;
	int c;

	o->d.config = DEFAULT_CONFIG;
	roots_default(roots);
	while ((c = getopt_long(argc, argv, "c:tn1svhV", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->d.config = optarg;
			break;
		case 't':
			o->test = true;
			break;
		case 'n':
			o->d.dry_run = true;
			break;
		case '1':
			o->d.once = true;
			break;
		case 's':
			o->status = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_PRIVILEGES:
			o->privileges = true;
			break;
		case OPT_EXPLAIN: {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (*end || pid <= 0 || pid > INT32_MAX) {
				fprintf(stderr, "softaffd: --explain needs a "
						"process id, not '%s'\n",
					optarg);
				return 2;
			}
			o->explain = (int)pid;
			break;
		}
		case OPT_PROC:
		case OPT_SYS:
		case OPT_RUN: {
			char *dst = c == OPT_PROC  ? roots->proc
				    : c == OPT_SYS ? roots->sys
						   : roots->run;

			if (strlen(optarg) >= sizeof(roots->proc)) {
				fprintf(stderr, "softaffd: path too long\n");
				return 2;
			}
			strcpy(dst, optarg);
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("softaffd %s\n", SOFTAFFD_VERSION);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softaffd: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/*
 * --privileges: the drop-in that softaffd-generator installs.  Generators
 * run before NSS services (sssd, LDAP) and must not wait for them: user
 * names stay unresolved, they change nothing here.  A bad configuration
 * prints nothing on stdout, so the generator writes nothing; the daemon
 * reports the error when it starts.
 */
static int privileges(const char *path, const struct topology *topo)
{
	struct config *cfg;
	char err[1024];
	int r;

	r = config_load_flags(path, topo, CONFIG_NO_NSS, &cfg, err,
			      sizeof(err));
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!privs_needed(cfg))
		fprintf(stderr, "%s: needs nothing beyond softaffd.service\n",
			path);
	privs_dropin(cfg, stdout);
	config_free(cfg);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

/* -t: what the configuration asks of the unit, on stderr. */
static void test_notes(const struct config *cfg)
{
	static const struct {
		unsigned int priv;
		const char *what;
	} privs[] = {
		{PRIV_CGROUP, "the cgroup tree writable"},
		{PRIV_SYSCTL, "the ratio sysctls writable"},
		{PRIV_PTRACE, "CAP_SYS_PTRACE"},
	};
	unsigned int need = privs_needed(cfg), n = 0;
	char note[1024];

	if (privs_ptrace_notice(cfg, note, sizeof(note)))
		fprintf(stderr, "%s\n", note);
	/*
	 * Anyone can name a process after a comm or cmdline rule's target;
	 * the sample an adaptive rule's softness follows counts such
	 * processes with the real ones (softaffd(8), Control law).
	 */
	for (unsigned int i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];

		if (r->softness.kind != SOFT_ADAPTIVE ||
		    !(r->comm || r->cmdline) || r->exe || r->has_uid ||
		    r->cgroup || r->unit)
			continue;
		fprintf(stderr,
			"%s:%d: rule '%s' matches on %s alone, which any user "
			"can give a process: its adaptive softness follows a "
			"sample of the processes it matches, so many such "
			"processes of one user can steer it; add user, exe, "
			"cgroup or unit, or a fixed softness\n",
			r->file ? r->file : cfg->path, r->line, r->name,
			r->comm && r->cmdline ? "comm and cmdline"
			: r->comm	      ? "comm"
					      : "cmdline");
	}
	if (!need)
		return;
	fprintf(stderr,
		"%s: needs more than softaffd.service grants by default: ",
		cfg->path);
	for (size_t i = 0; i < sizeof(privs) / sizeof(privs[0]); i++)
		if (need & privs[i].priv)
			fprintf(stderr, "%s%s", n++ ? ", " : "", privs[i].what);
	fprintf(stderr, "; softaffd-generator adds that on \"systemctl "
			"daemon-reload\", then restart softaffd (softaffd "
			"--privileges prints it)\n");
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct topology *topo;
	struct config *cfg = NULL;
	struct daemon d;
	char err[1024];
	int r;

	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	if (o.status)
		return o.json ? status_show_json(o.d.roots.run)
			      : status_show(o.d.roots.run);
	log_init(o.verbose ? LOG_DEBUG : LOG_INFO);
	/*
	 * A SIGTERM from here on waits for the loop, which serves it within
	 * a slice and exits cleanly, restoring what it set.
	 */
	if (!o.test && !o.privileges)
		daemon_block_signals();

	topo = calloc(1, sizeof(*topo));
	if (!topo) {
		log_err("out of memory");
		return 1;
	}
	r = topology_load(o.d.roots.sys, topo);
	if (r < 0) {
		log_err("cannot read NUMA topology under %s/devices/system: %s",
			o.d.roots.sys, strerror(-r));
		topology_free(topo);
		return 1;
	}
	if (o.privileges) {
		r = privileges(o.d.config, topo);
		topology_free(topo);
		return r;
	}
	r = config_load(o.d.config, topo, &cfg, err, sizeof(err));
	if (r == 0 && o.explain) {
		r = explain_pid(cfg, &o.d.roots, o.explain, stdout);
		config_free(cfg);
		topology_free(topo);
		return r;
	}
	if (r < 0 || o.test || o.explain) {
		if (r < 0 && o.test)
			fprintf(stderr, "%s\n", err);
		else if (r < 0)
			log_err("%s", err);
		else
			config_dump(cfg, stdout);
		if (!r) {
			fprintf(stderr, "%s: configuration OK", o.d.config);
			for (unsigned int i = 1; i < cfg->nfiles; i++)
				fprintf(stderr, "%s%s", i == 1 ? ", with " : ", ",
					cfg->files[i]);
			fprintf(stderr, "\n");
			test_notes(cfg);
		}
		config_free(cfg);
		topology_free(topo);
		return r < 0 ? 1 : 0;
	}

	r = daemon_start(&d, &o.d, cfg, topo);
	if (!r)
		r = daemon_run(&d);
	daemon_stop(&d);
	return r;
}
