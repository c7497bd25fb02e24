// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SIGHUP: re-read the topology and the configuration, check that the
 * capabilities kept at start still suffice, and switch the manager,
 * the controllers and the timers over; or keep everything as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "daemon-internal.h"
#include "notify.h"
#include "privs.h"

/*
 * Can ncfg run with the capabilities kept?  A capability dropped
 * earlier cannot come back, and one that root lacked from the start was
 * withheld by the unit's bounding set (softaffd-generator adds
 * CAP_SYS_PTRACE for exe rules): say so, and which rule needs it.  Not
 * for what the old configuration needed already: its start said so,
 * and other changes must still reload.
 */
static bool caps_allow(struct daemon *d, const struct config *ncfg)
{
	unsigned int added = caps_needed(ncfg) & ~caps_needed(d->cfg) &
			     ~d->caps;
	unsigned int lost = added & d->caps_start;
	unsigned int withheld = geteuid() == 0 ? added & ~d->caps_start : 0;
	char names[64];
	const char *rule = "?";

	if (!lost && !withheld)
		return true;
	for (unsigned int i = 0; i < ncfg->nrules; i++)
		if (ncfg->rules[i].needs & NEED_EXE) {
			rule = ncfg->rules[i].name;
			break;
		}
	log_err("%s: rule '%s' matches on 'exe' and needs %s, which %s",
		d->o->config, rule,
		caps_names(lost ? lost : withheld, names, sizeof(names)),
		lost ? "softaffd dropped at start because no rule needed it "
		       "then; restart softaffd (systemctl restart softaffd) to "
		       "use it"
		     : "softaffd.service grants only when a rule needs it at "
		       "\"systemctl daemon-reload\" (softaffd-generator); run "
		       "that, then restart softaffd to use it");
	return false;
}

/* Drop what cfg does not need (again on a reload). */
void daemon_caps_update(struct daemon *d)
{
	unsigned int want = caps_needed(d->cfg) & d->caps;
	char names[64], note[1024];
	int r;

	r = caps_drop(want);
	if (r < 0) {
		log_warn("cannot drop capabilities: %s", strerror(-r));
		return;
	}
	if (want != d->caps || !d->caps_logged) {
		log_info("capabilities kept: %s",
			 caps_names(want, names, sizeof(names)));
		if (want & CAPS_PTRACE &&
		    privs_ptrace_notice(d->cfg, note, sizeof(note)))
			log_notice("%s", note);
	}
	d->caps = want;
	d->caps_logged = true;
}

/*
 * SIGHUP: re-read the topology (CPUs may have come or gone) and the
 * configuration; switch only if both are good.
 */
void daemon_reload(struct daemon *d)
{
	struct topology *ntopo = calloc(1, sizeof(*ntopo));
	const struct topology *topo = d->topo;
	struct config *ncfg = NULL;
	struct rule_softness *nsoft;
	double *nutil = NULL;
	char err[1024];
	bool same;
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
			topology_free(ntopo);
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
	if (!caps_allow(d, ncfg)) {
		log_err("reload failed; still running the old configuration");
		config_free(ncfg);
		goto out;
	}
	nsoft = softness_rules_new(d->cfg, d->soft, ncfg);
	r = nsoft ? mgr_reload(d->mgr, ncfg) : -ENOMEM;
	if (r == -ENOMEM) {
		log_err("reload: out of memory; keeping the old configuration");
		free(nsoft);
		config_free(ncfg);
		goto out;
	}
	same = r == 1;
	free(d->soft);
	d->soft = nsoft;
	config_free(d->cfg);
	d->cfg = ncfg;
	if (ntopo) {
		/* Nothing keeps pointers into the old topology past here. */
		if (ntopo->nnodes != d->topo->nnodes ||
		    memcmp(ntopo->node_cpus, d->topo->node_cpus,
			   ntopo->nnodes * sizeof(ntopo->node_cpus[0])))
			log_info("NUMA topology changed: %u nodes",
				 ntopo->nnodes);
		topology_free(d->topo);
		free(d->node_util);
		d->topo = ntopo;
		d->node_util = nutil;
		ntopo = NULL;
		nutil = NULL;
	}
	daemon_caps_update(d);
	privs_check(d->cfg, &d->o->roots, d->caps, d->o->dry_run);
	sysctl_resume(&d->ratio);
	softness_setup(d);
	softness_apply_config(d);
	daemon_arm_timers(d);
	/* Managed processes have their new rules already (mgr_reload). */
	log_info("configuration reloaded: %u rules, %s; %s", d->cfg->nrules,
		 same ? "none changed" : "managed processes matched again",
		 daemon_recheck(d));
out:
	topology_free(ntopo);
	free(nutil);
	daemon_publish(d);
	/* Before the first scan is over, READY=1 is still to come. */
	if (d->ready)
		notify_send("READY=1");
}
