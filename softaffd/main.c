// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd: apply scheduler soft affinity to processes by rule, and tune
 * sched_allowed:sched_preferred to the load.
 *
 * main() only wires things together: arguments, config, the manager, and
 * one epoll loop over a signalfd, three timerfds and the proc connector.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "config.h"
#include "control.h"
#include "log.h"
#include "manager.h"
#include "notify.h"
#include "procconn.h"
#include "sampler.h"
#include "status.h"
#include "topology.h"
#include "util.h"

#ifndef SOFTAFFD_VERSION
#define SOFTAFFD_VERSION "0.1"
#endif
#define DEFAULT_CONFIG "/etc/softaffd.conf"
/*
 * Exit codes: 1 = bad configuration or kernel without the feature (the
 * unit does not restart on it), 2 = usage, 3 = --status finds no daemon,
 * 70 = the event loop failed (restart may help).
 */
#define EXIT_RUNTIME 70
/*
 * Work done per loop turn (connector events, a slice of a scan) before
 * signals and timers are served again.  Small against any watchdog, and
 * a time, not a count: in a CPU-starved guest one event can take long.
 */
#define SLICE_MS 20
/*
 * With a working connector, every this many periodic rescans re-reads
 * the attributes that change without an event (cgroup, command line)
 * if a rule matches on them; the others only look for pids nobody told
 * us about.
 */
#define ATTRS_EVERY 6

struct opts {
	const char *config;
	bool test, dry_run, once, status, verbose;
	struct roots roots;
};

struct daemon {
	struct opts *o;
	struct config *cfg;
	struct topology *topo;
	struct mgr mgr;
	struct sampler *sampler;
	struct ctl_params ctl_params;
	struct ctl_state ctl;
	double *node_util;
	int conn_fd;
	bool have_sysctl;
	struct ratio sysctl_orig, sysctl_cur;
	bool sysctl_changed;
	bool rescan_pending, rescan_due, events_lost, stop;
	unsigned int light_scans;
	uint64_t watchdog_usec, wd_period_ms, wd_last_ms;
	char last_status[256];
	int epfd, sigfd, sample_fd, rescan_fd, wd_fd;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: softaffd [OPTIONS]\n"
		"Apply scheduler soft affinity to processes by rule.\n\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"  -t, --test          check the configuration, print it "
		"normalized, exit\n"
		"  -n, --dry-run       log every action, write nothing\n"
		"  -1, --once          scan and apply once, then exit\n"
		"  -s, --status        print what the running daemon "
		"publishes\n"
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
	enum { OPT_PROC = 256, OPT_SYS, OPT_RUN };
	static const struct option lo[] = {
		{"config", required_argument, NULL, 'c'},
		{"test", no_argument, NULL, 't'},
		{"dry-run", no_argument, NULL, 'n'},
		{"once", no_argument, NULL, '1'},
		{"status", no_argument, NULL, 's'},
		{"verbose", no_argument, NULL, 'v'},
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{"run-dir", required_argument, NULL, OPT_RUN},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	int c;

	o->config = DEFAULT_CONFIG;
	roots_default(&o->roots);
	while ((c = getopt_long(argc, argv, "c:tn1svhV", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 't':
			o->test = true;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case '1':
			o->once = true;
			break;
		case 's':
			o->status = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_PROC:
		case OPT_SYS:
		case OPT_RUN: {
			char *dst = c == OPT_PROC  ? o->roots.proc
				    : c == OPT_SYS ? o->roots.sys
						   : o->roots.run;

			if (strlen(optarg) >= sizeof(o->roots.proc)) {
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

/* ---- sched_allowed / sched_preferred ---- */

static int sysctl_path(const struct daemon *d, const char *name, char *buf,
		       size_t size)
{
	return snprintf(buf, size, "%s/sys/kernel/%s", d->o->roots.proc, name);
}

static int sysctl_read(const struct daemon *d, const char *name,
		       unsigned int *ret)
{
	char path[PATH_MAX], buf[32];
	uint64_t v;
	ssize_t n;

	sysctl_path(d, name, path, sizeof(path));
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_u64(buf, &v) < 0 || v > RATIO_MAX)
		return -EBADMSG;
	*ret = (unsigned int)v;
	return 0;
}

static int sysctl_write(const struct daemon *d, const char *name,
			unsigned int v)
{
	char path[PATH_MAX], buf[32];
	int n;

	sysctl_path(d, name, path, sizeof(path));
	n = snprintf(buf, sizeof(buf), "%u\n", v);
	return write_file(path, buf, (size_t)n);
}

/* Move the kernel to next; logs with reason.  0 or -errno. */
static int ratio_set(struct daemon *d, struct ratio next, const char *reason)
{
	struct ratio cur = d->sysctl_cur;
	bool allowed_first;
	int r = 0;

	if (!d->have_sysctl)
		return -ENOENT;
	/* Someone may have changed them: order the writes from the truth. */
	if (!d->o->dry_run &&
	    sysctl_read(d, "sched_allowed", &cur.allowed) == 0 &&
	    sysctl_read(d, "sched_preferred", &cur.preferred) == 0)
		d->sysctl_cur = cur;
	else
		cur = d->sysctl_cur;
	if (cur.allowed == next.allowed && cur.preferred == next.preferred)
		return 0;
	log_notice("%ssched_allowed:sched_preferred %u:%u -> %u:%u (%s)",
		   d->o->dry_run ? "dry-run: would set " : "", cur.allowed,
		   cur.preferred, next.allowed, next.preferred, reason);
	d->mgr.cnt.ratio_changes++;
	if (d->o->dry_run) {
		d->sysctl_cur = next;
		return 0;
	}
	allowed_first = ctl_write_allowed_first(cur, next);
	if (allowed_first && cur.allowed != next.allowed)
		r = sysctl_write(d, "sched_allowed", next.allowed);
	if (!r && cur.preferred != next.preferred)
		r = sysctl_write(d, "sched_preferred", next.preferred);
	if (!r && !allowed_first && cur.allowed != next.allowed)
		r = sysctl_write(d, "sched_allowed", next.allowed);
	if (r < 0) {
		log_err("cannot set sched_allowed/sched_preferred: %s",
			strerror(-r));
		/* Re-read so the next attempt starts from the truth. */
		sysctl_read(d, "sched_allowed", &d->sysctl_cur.allowed);
		sysctl_read(d, "sched_preferred", &d->sysctl_cur.preferred);
		return r;
	}
	d->sysctl_cur = next;
	d->sysctl_changed = true;
	return 0;
}

static void sysctl_init(struct daemon *d)
{
	int r = sysctl_read(d, "sched_allowed", &d->sysctl_orig.allowed);

	if (!r)
		r = sysctl_read(d, "sched_preferred",
				&d->sysctl_orig.preferred);
	d->have_sysctl = r == 0;
	d->sysctl_cur = d->sysctl_orig;
	if (!d->have_sysctl && d->cfg->mode != RATIO_OFF)
		log_warn("cannot read %s/sys/kernel/sched_{allowed,preferred} "
			 "(%s): ratio %s mode disabled",
			 d->o->roots.proc, strerror(-r),
			 ratio_mode_name(d->cfg->mode));
}

/* Hand the ratio back on exit, unless someone else changed it since. */
static void sysctl_restore(struct daemon *d)
{
	struct ratio now;

	if (!d->sysctl_changed || d->o->dry_run)
		return;
	if (sysctl_read(d, "sched_allowed", &now.allowed) < 0 ||
	    sysctl_read(d, "sched_preferred", &now.preferred) < 0)
		return;
	if (now.allowed != d->sysctl_cur.allowed ||
	    now.preferred != d->sysctl_cur.preferred) {
		log_info("sched ratio changed by someone else, left at %u:%u",
			 now.allowed, now.preferred);
		return;
	}
	ratio_set(d, d->sysctl_orig, "restoring value found at start");
}

/* Start the controller; keep the current rung if the ratio is on it. */
static void ctl_setup(struct daemon *d)
{
	struct ratio cur = d->sysctl_cur;

	ctl_params_from_config(d->cfg, &d->ctl_params);
	ctl_init(&d->ctl, &d->ctl_params);
	for (unsigned int i = 0; i < d->ctl.nrungs; i++)
		if (d->ctl.ladder[i].allowed == cur.allowed &&
		    d->ctl.ladder[i].preferred == cur.preferred)
			d->ctl.rung = i;
}

static void ratio_apply_config(struct daemon *d)
{
	if (!d->have_sysctl)
		return;
	if (d->cfg->mode == RATIO_FIXED)
		ratio_set(d, d->cfg->fixed, "fixed ratio from configuration");
	else if (d->cfg->mode == RATIO_ADAPTIVE)
		ratio_set(d, ctl_ratio(&d->ctl), "adaptive start");
}

/* ---- status ---- */

/*
 * STATUS= for systemd, sent only when it changes: every message wakes
 * PID 1, and an idle daemon should not do that once a second.
 */
static void notify_status(struct daemon *d, const char *ratio)
{
	char s[sizeof(d->last_status)], hand[64] = "";

	if (d->mgr.nhand_procs)
		snprintf(hand, sizeof(hand), " (%zu hand-managed)",
			 d->mgr.nhand_procs);
	snprintf(s, sizeof(s),
		 "STATUS=%zu processes%s under %u rules, %.64s%s%s",
		 d->mgr.count, hand, d->cfg->nrules, ratio,
		 d->conn_fd >= 0 ? "" : ", rescan only",
		 d->o->dry_run ? ", dry run" : "");
	if (!strcmp(s, d->last_status))
		return;
	snprintf(d->last_status, sizeof(d->last_status), "%s", s);
	notify_send(s);
}

/* ---- watchdog ---- */

/* Ping if a ping period (a quarter of the watchdog's) has passed, or force. */
static void watchdog_kick(struct daemon *d, bool force)
{
	uint64_t now;

	if (!d->wd_period_ms)
		return;
	now = now_ms();
	if (!force && now - d->wd_last_ms < d->wd_period_ms)
		return;
	d->wd_last_ms = now;
	notify_send("WATCHDOG=1");
}

/* The manager's hook inside long batches (scans, reload, restore). */
static void on_tick(void *ud)
{
	watchdog_kick(ud, false);
}

static void publish(struct daemon *d)
{
	const struct mgr_counters *c = &d->mgr.cnt;
	char cpus[CPUSET_LIST_BUFSZ];
	struct sbuf b = {0};
	int r;

	time_t t = time(NULL);
	struct tm tm;
	char when[64];

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	sbuf_printf(&b, "pid %d\nupdated %s\nconfig %s\nmode %s%s\n",
		    (int)getpid(), when, d->cfg->path,
		    ratio_mode_name(d->cfg->mode),
		    d->o->dry_run ? " (dry-run)" : "");
	if (d->have_sysctl)
		sbuf_printf(&b, "ratio %u:%u\n", d->sysctl_cur.allowed,
			    d->sysctl_cur.preferred);
	else
		sbuf_printf(&b, "ratio unavailable\n");
	sbuf_printf(&b, "connector %s\nprocesses %zu\n",
		    d->conn_fd >= 0 ? "yes" : "no (periodic rescan only)",
		    d->mgr.count);
	for (unsigned int i = 0; i < d->topo->nnodes; i++) {
		cpuset_format_list(&d->topo->node_cpus[i], cpus, sizeof(cpus));
		sbuf_printf(&b, "node %d cpus %s util %.1f%%\n",
			    d->topo->ids[i], cpus, d->node_util[i] * 100);
	}
	mgr_status(&d->mgr, &b);
	sbuf_printf(&b,
		    "counters scans=%llu events=%llu events_lost=%llu "
		    "written=%llu unchanged=%llu gone=%llu eperm=%llu "
		    "einval=%llu empty=%llu rt=%llu errors=%llu "
		    "restored=%llu foreign=%llu ratio_changes=%llu "
		    "hand=%llu\n",
		    (unsigned long long)c->scans, (unsigned long long)c->events,
		    (unsigned long long)c->events_lost,
		    (unsigned long long)c->written,
		    (unsigned long long)c->unchanged,
		    (unsigned long long)c->gone, (unsigned long long)c->eperm,
		    (unsigned long long)c->einval, (unsigned long long)c->empty,
		    (unsigned long long)c->rt, (unsigned long long)c->errors,
		    (unsigned long long)c->restored,
		    (unsigned long long)c->foreign,
		    (unsigned long long)c->ratio_changes,
		    (unsigned long long)c->hand);
	r = status_write(d->o->roots.run, &b);
	if (r < 0) {
		static bool warned;

		if (!warned)
			log_warn("cannot write %s/%s: %s", d->o->roots.run,
				 STATUS_FILE, strerror(-r));
		warned = true;
	}
	sbuf_free(&b);
	if (d->have_sysctl)
		snprintf(cpus, sizeof(cpus), "ratio %u:%u (%s)",
			 d->sysctl_cur.allowed, d->sysctl_cur.preferred,
			 ratio_mode_name(d->cfg->mode));
	else
		snprintf(cpus, sizeof(cpus), "ratio unavailable");
	notify_status(d, cpus);
}

/* ---- event handlers ---- */

static void on_event(const struct pc_event *e, void *ud)
{
	struct daemon *d = ud;

	d->mgr.cnt.events++;
	switch (e->kind) {
	case PC_FORK:
		mgr_on_fork(&d->mgr, e->parent_tgid, e->pid, e->tgid);
		break;
	case PC_EXEC:
		mgr_on_exec(&d->mgr, e->tgid);
		break;
	case PC_COMM:
	case PC_UID:
		/* comm of a non-leader thread changes only that thread's comm. */
		if (e->kind == PC_COMM && e->pid != e->tgid)
			break;
		mgr_eval_pid(&d->mgr, e->tgid);
		break;
	case PC_EXIT:
		mgr_on_exit(&d->mgr, e->pid, e->tgid);
		break;
	default:
		break;
	}
}

static void on_conn(struct daemon *d)
{
	uint64_t end = now_ms() + SLICE_MS;

	/* Bounded, so a fork storm cannot starve signals and timers. */
	for (int i = 0; i < 256 && now_ms() < end; i++) {
		int r = procconn_read(d->conn_fd, on_event, d);

		if (r == -EAGAIN)
			return;
		if (r == -ENOBUFS) {
			d->mgr.cnt.events_lost++;
			log_info("proc connector overflowed, rescanning");
			d->rescan_pending = true;
			d->events_lost = true;
			continue;
		}
		if (r < 0) {
			log_warn("proc connector: %s; using periodic rescan "
				 "only",
				 strerror(-r));
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->conn_fd, NULL);
			procconn_close(d->conn_fd);
			d->conn_fd = -1;
			return;
		}
	}
}

static void on_sample(struct daemon *d)
{
	struct cpuset groups[CONFIG_MAX_RULES];
	struct ctl_input in;
	enum ctl_action a;
	char reason[160];
	int r;

	r = sampler_update(d->sampler, d->o->roots.proc);
	if (r < 0) {
		static bool warned;

		if (!warned)
			log_warn("cannot sample %s/stat: %s", d->o->roots.proc,
				 strerror(-r));
		warned = true;
		return;
	}
	sampler_node_util(d->sampler, d->topo, d->node_util);
	if (d->cfg->mode != RATIO_ADAPTIVE || !d->have_sysctl)
		return;
	in.node_util = d->node_util;
	in.nnodes = d->topo->nnodes;
	in.groups = groups;
	in.ngroups = mgr_active_groups(&d->mgr, groups, CONFIG_MAX_RULES);
	in.now_ms = now_ms();
	a = ctl_step(&d->ctl_params, &d->ctl, &in, reason, sizeof(reason));
	if (a != CTL_HOLD) {
		char why[200];

		snprintf(why, sizeof(why), "%s: %s",
			 a == CTL_SOFTEN ? "soften" : "harden", reason);
		ratio_set(d, ctl_ratio(&d->ctl), why);
	}
}

static int timer_arm(int fd, uint64_t ms)
{
	struct itimerspec its = {
		.it_interval = {(time_t)(ms / 1000),
				(long)(ms % 1000) * 1000000},
		.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000},
	};

	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void timer_ack(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0)
		return; /* EAGAIN: spurious wakeup */
}

static void arm_timers(struct daemon *d)
{
	timer_arm(d->sample_fd, d->cfg->interval_ms);
	timer_arm(d->rescan_fd, d->cfg->rescan_ms);
}

/*
 * SIGHUP: re-read the topology (CPUs may have come or gone) and the
 * configuration; switch only if both are good.
 */
static void reload(struct daemon *d)
{
	struct topology *ntopo = calloc(1, sizeof(*ntopo));
	const struct topology *topo = d->topo;
	struct config *ncfg = NULL;
	double *nutil = NULL;
	char err[1024];
	int r;

	/* MONOTONIC_USEC: newer systemd wants it next to RELOADING=1. */
	notify_sendf("RELOADING=1\nMONOTONIC_USEC=%llu\n"
		     "STATUS=reloading configuration",
		     (unsigned long long)now_ms() * 1000);
	log_info("reloading %s", d->o->config);
	if (ntopo) {
		r = topology_load(d->o->roots.sys, ntopo);
		if (r == 0)
			nutil = calloc(ntopo->nnodes, sizeof(*nutil));
		if (r < 0 || !nutil) {
			log_warn("cannot re-read the NUMA topology (%s); using "
				 "the one read at start",
				 strerror(r < 0 ? -r : ENOMEM));
			free(ntopo);
			ntopo = NULL;
		} else {
			topo = ntopo;
		}
	}
	r = config_load(d->o->config, topo, &ncfg, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		log_err("reload failed; still running the old configuration");
		goto out;
	}
	r = mgr_reload(&d->mgr, ncfg);
	if (r == -ENOMEM) {
		log_err("reload: out of memory; keeping the old configuration");
		config_free(ncfg);
		goto out;
	}
	config_free(d->cfg);
	d->cfg = ncfg;
	if (ntopo) {
		/* Nothing keeps pointers into the old topology past here. */
		if (ntopo->nnodes != d->topo->nnodes ||
		    memcmp(ntopo->node_cpus, d->topo->node_cpus,
			   ntopo->nnodes * sizeof(ntopo->node_cpus[0])))
			log_info("NUMA topology changed: %u nodes",
				 ntopo->nnodes);
		free(d->topo);
		free(d->node_util);
		d->topo = ntopo;
		d->node_util = nutil;
		d->mgr.topo = ntopo;
		ntopo = NULL;
		nutil = NULL;
	}
	ctl_setup(d);
	ratio_apply_config(d);
	arm_timers(d);
	log_info("configuration reloaded: %u rules", d->cfg->nrules);
out:
	free(ntopo);
	free(nutil);
	publish(d);
	notify_send("READY=1");
}

static int add_fd(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(d);
		} else if (si.ssi_signo == SIGUSR1) {
			size_t n = mgr_readopt(&d->mgr);

			log_info("re-adopting every managed process (%zu with "
				 "masks set by hand)",
				 n);
		} else {
			d->stop = true;
		}
	}
}

/*
 * Periodic rescans trust a working connector (see ATTRS_EVERY); lost
 * events or no connector at all need the full walk.
 */
static void start_rescan(struct daemon *d)
{
	enum mgr_scan_kind kind = SCAN_NEW;
	int r;

	if (d->conn_fd >= 0 && !d->events_lost) {
		bool attrs = d->cfg->needs & (NEED_CGROUP | NEED_CMDLINE);

		kind = SCAN_LIGHT;
		if (attrs && ++d->light_scans % ATTRS_EVERY == 0)
			kind = SCAN_ATTRS;
	}
	d->rescan_pending = d->rescan_due = d->events_lost = false;
	r = mgr_scan_start(&d->mgr, kind);
	if (r < 0)
		log_warn("cannot scan %s: %s", d->o->roots.proc, strerror(-r));
}

static int run_loop(struct daemon *d)
{
	while (!d->stop) {
		struct epoll_event evs[8];
		bool busy = mgr_scan_busy(&d->mgr);
		int n = epoll_wait(d->epfd, evs, 8, busy ? 0 : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll_wait: %s", strerror(errno));
			return EXIT_RUNTIME;
		}
		/* Signals first, whatever else is ready. */
		for (int i = 0; i < n; i++)
			if (evs[i].data.fd == d->sigfd)
				on_signal(d);
		if (d->stop)
			break;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == d->conn_fd) {
				on_conn(d);
			} else if (fd == d->sample_fd) {
				timer_ack(fd);
				on_sample(d);
				publish(d);
			} else if (fd == d->rescan_fd) {
				timer_ack(fd);
				d->rescan_pending = true;
				d->rescan_due = true;
			} else if (fd == d->wd_fd) {
				timer_ack(fd);
				watchdog_kick(d, true);
			}
		}
		if (mgr_scan_busy(&d->mgr)) {
			if (mgr_scan_step(&d->mgr, now_ms() + SLICE_MS) > 0)
				log_debug("scan done: %zu processes managed",
					  d->mgr.count);
		} else if (d->rescan_pending &&
			   (d->rescan_due ||
			    now_ms() - d->mgr.last_scan_ms >= 1000)) {
			/*
			 * An overflowing connector asks for a rescan on
			 * every read: at most one a second after the last.
			 */
			start_rescan(d);
		}
	}
	return 0;
}

static void daemon_sigmask(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGUSR1);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
}

static int setup_loop(struct daemon *d)
{
	sigset_t mask;

	daemon_sigmask(&mask);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->sample_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->rescan_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->epfd < 0 || d->sigfd < 0 || d->sample_fd < 0 || d->rescan_fd < 0)
		return -errno;
	if (add_fd(d->epfd, d->sigfd) || add_fd(d->epfd, d->sample_fd) ||
	    add_fd(d->epfd, d->rescan_fd))
		return -errno;
	if (d->conn_fd >= 0 && add_fd(d->epfd, d->conn_fd))
		return -errno;
	arm_timers(d);
	if (d->wd_period_ms) {
		d->wd_fd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->wd_fd < 0 || add_fd(d->epfd, d->wd_fd))
			return -errno;
		timer_arm(d->wd_fd, d->wd_period_ms);
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct daemon d = {.o = &o,
			   .conn_fd = -1,
			   .epfd = -1,
			   .sigfd = -1,
			   .sample_fd = -1,
			   .rescan_fd = -1,
			   .wd_fd = -1};
	char err[1024];
	int r, ret = 1;

	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	if (o.status)
		return status_show(o.roots.run);
	log_init(o.verbose ? LOG_DEBUG : LOG_INFO);
	if (!o.test) {
		sigset_t mask;

		/*
		 * Blocked from the start: a SIGTERM during the first scan
		 * then waits for the loop and its clean, restoring exit.
		 */
		daemon_sigmask(&mask);
		sigprocmask(SIG_BLOCK, &mask, NULL);
	}

	d.topo = calloc(1, sizeof(*d.topo));
	d.sampler = calloc(1, sizeof(*d.sampler));
	if (!d.topo || !d.sampler) {
		log_err("out of memory");
		goto out;
	}
	r = topology_load(o.roots.sys, d.topo);
	if (r < 0) {
		log_err("cannot read NUMA topology under %s/devices/system: %s",
			o.roots.sys, strerror(-r));
		goto out;
	}
	d.node_util = calloc(d.topo->nnodes, sizeof(*d.node_util));
	if (!d.node_util)
		goto out;
	r = config_load(o.config, d.topo, &d.cfg, err, sizeof(err));
	if (r < 0) {
		if (o.test)
			fprintf(stderr, "%s\n", err);
		else
			log_err("%s", err);
		goto out;
	}
	if (o.test) {
		config_dump(d.cfg, stdout);
		fprintf(stderr, "%s: configuration OK\n", o.config);
		ret = 0;
		goto out;
	}

	r = aff_probe(o.roots.proc);
	if (r < 0) {
		if (!o.dry_run) {
			log_err("this kernel has no scheduler soft affinity: "
				"%s/self/soft_affinity is missing (%s); boot a "
				"kernel with the soft affinity patches",
				o.roots.proc, strerror(-r));
			goto out;
		}
		log_warn("%s/self/soft_affinity is missing: dry run treats "
			 "every task as having soft affinity off",
			 o.roots.proc);
		aff_missing_is_off = true;
	}

	r = mgr_init(&d.mgr, &o.roots, d.cfg, d.topo, o.dry_run);
	if (r < 0) {
		log_err("out of memory");
		goto out;
	}
	sysctl_init(&d);
	ctl_setup(&d);
	/*
	 * Ping every quarter of the watchdog period: systemd suggests half,
	 * but a CPU-starved guest can stall the loop for seconds, and a
	 * ping costs nothing.  From a timer in the loop, and from inside
	 * long batches such as the first scan of a /proc with many
	 * thousand processes.
	 */
	d.watchdog_usec = o.once ? 0 : notify_watchdog_usec();
	if (d.watchdog_usec) {
		d.wd_period_ms = d.watchdog_usec / 4000 ? d.watchdog_usec / 4000
							: 1;
		d.wd_last_ms = now_ms();
	}
	d.mgr.tick = on_tick;
	d.mgr.tick_userdata = &d;

	if (!o.once) {
		d.conn_fd = procconn_open();
		if (d.conn_fd < 0)
			log_warn("proc connector unavailable (%s%s): new "
				 "processes are found by the periodic rescan "
				 "only, every %u ms",
				 strerror(-d.conn_fd),
				 d.conn_fd == -EPERM ? ", needs CAP_NET_ADMIN"
				 : d.conn_fd == -EPROTONOSUPPORT
					 ? ", kernel without CONFIG_PROC_EVENTS"
					 : "",
				 d.cfg->rescan_ms);
		else
			log_info("listening to the proc connector");
	}
	/* Subscribe before the scan so nothing slips between the two. */
	r = mgr_scan(&d.mgr);
	if (r < 0) {
		log_err("cannot scan %s: %s", o.roots.proc, strerror(-r));
		goto out_mgr;
	}
	/* --once leaves the adaptive ratio alone: nobody would adapt it. */
	if (!o.once || d.cfg->mode == RATIO_FIXED)
		ratio_apply_config(&d);
	sampler_update(d.sampler, o.roots.proc); /* prime the deltas */
	log_info("started: %u rules, %zu processes managed, ratio %s",
		 d.cfg->nrules, d.mgr.count, ratio_mode_name(d.cfg->mode));
	if (o.once) {
		ret = 0;
		goto out_mgr;
	}

	r = setup_loop(&d);
	if (r < 0) {
		log_err("cannot set up the event loop: %s", strerror(-r));
		goto out_mgr;
	}
	publish(&d);
	notify_send("READY=1");
	ret = run_loop(&d);

	notify_send("STOPPING=1\nSTATUS=stopping");
	log_info("stopping");
	if (d.cfg->restore_on_exit) {
		mgr_restore_all(&d.mgr);
		sysctl_restore(&d);
	}
	status_remove(o.roots.run);
out_mgr:
	procconn_close(d.conn_fd);
	mgr_done(&d.mgr);
out:
	close_fd(&d.wd_fd);
	close_fd(&d.rescan_fd);
	close_fd(&d.sample_fd);
	close_fd(&d.sigfd);
	close_fd(&d.epfd);
	config_free(d.cfg);
	free(d.node_util);
	free(d.sampler);
	free(d.topo);
	return ret;
}
