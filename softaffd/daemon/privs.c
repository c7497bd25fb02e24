// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Least privilege that follows the configuration: what the rules need
 * from the systemd unit, as a drop-in (softaffd --privileges, for
 * softaffd-generator), and whether the running daemon has it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "caps.h"
#include "log.h"
#include "privs.h"

/* Said wherever the unit lacks what the configuration needs. */
#define PRIVS_HINT                                                             \
	"run \"systemctl daemon-reload\" (softaffd-generator then grants it, " \
	"see softaffd --privileges) and restart softaffd"

const struct rule *privs_rule(const struct config *cfg, unsigned int priv)
{
	for (unsigned int i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];

		if ((priv == PRIV_CGROUP && rule_acts_on_cgroup(r)) ||
		    (priv == PRIV_PTRACE && r->needs & NEED_EXE))
			return r;
	}
	return NULL;
}

unsigned int privs_needed(const struct config *cfg)
{
	unsigned int need = 0;

	if (privs_rule(cfg, PRIV_CGROUP))
		need |= PRIV_CGROUP;
	/* "off" never writes them (ratio.orig is saved at a first write). */
	if (cfg->mode != RATIO_OFF)
		need |= PRIV_SYSCTL;
	if (caps_needed(cfg) & CAPS_PTRACE)
		need |= PRIV_PTRACE;
	return need;
}

/*
 * A path in a comment of the drop-in: a newline in it would end the
 * comment and make the rest a directive.  Only root can name such
 * files here, but the drop-in should not depend on that.
 */
static void put_safe(const char *s, FILE *f)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void put_rule(const char *what, const struct rule *r, FILE *f)
{
	fprintf(f, "# rule '%s' (", r->name);
	put_safe(r->file, f);
	fprintf(f, ":%d) %s\n", r->line, what);
}

void privs_dropin(const struct config *cfg, FILE *f)
{
	unsigned int need = privs_needed(cfg);

	if (!need)
		return;
	fputs("# What ", f);
	put_safe(cfg->path, f);
	fputs(" needs beyond softaffd.service, from\n"
	      "# \"softaffd --privileges\" (softaffd(8), PRIVILEGES).\n"
	      "[Service]\n",
	      f);
	/*
	 * ProtectKernelTunables= leaves /sys read-only, and the unit's
	 * ProtectControlGroups= the cgroup tree: the drop-in turns the
	 * second off, and its read-write mount of the tree, the more
	 * specific one, wins over the first (as before issue #26).
	 */
	if (need & PRIV_CGROUP) {
		put_rule("acts on its cgroups:", privs_rule(cfg, PRIV_CGROUP),
			 f);
		fputs("# cpuset.cpus.preferred{,.ratio} and, for adaptive "
		      "softness, a PSI trigger in cpu.pressure\n"
		      "ProtectControlGroups=no\n"
		      "ReadWritePaths=-/sys/fs/cgroup\n",
		      f);
	}
	/*
	 * Both sides at once where the kernel has the first file, the two
	 * others one after the other where not (sysctl.c); "-": a kernel
	 * without them must not keep the unit from starting.
	 */
	if (need & PRIV_SYSCTL)
		fprintf(f,
			"# ratio mode \"%s\" writes the machine-wide default "
			"ratio\n"
			"ReadWritePaths=-/proc/sys/kernel/"
			"sched_soft_affinity_ratio\n"
			"ReadWritePaths=-/proc/sys/kernel/sched_allowed "
			"-/proc/sys/kernel/sched_preferred\n",
			ratio_mode_name(cfg->mode));
	if (need & PRIV_PTRACE) {
		put_rule("matches on exe: other users' /proc/PID/exe",
			 privs_rule(cfg, PRIV_PTRACE), f);
		fputs("# needs CAP_SYS_PTRACE, root-equivalent for a root "
		      "process (unit rules need none)\n"
		      "CapabilityBoundingSet=CAP_SYS_PTRACE\n",
		      f);
	}
}

bool privs_ptrace_notice(const struct config *cfg, char *buf, size_t size)
{
	const struct rule *r = privs_rule(cfg, PRIV_PTRACE);
	unsigned int n = 0;
	char more[32] = "";

	buf[0] = '\0';
	if (!r)
		return false;
	for (unsigned int i = 0; i < cfg->nrules; i++)
		n += !!(cfg->rules[i].needs & NEED_EXE);
	if (n > 1)
		snprintf(more, sizeof(more), " (one of %u)", n);
	snprintf(buf, size,
		 "%s:%d: rule '%s'%s matches on exe, so softaffd keeps "
		 "CAP_SYS_PTRACE, which makes a root process root-equivalent "
		 "(it may read and change any process); a unit rule "
		 "(unit = \"NAME.service\") matches services without it",
		 r->file, r->line, r->name, more);
	return true;
}

/* EROFS: a read-only mount, the sandbox's; EACCES etc. are not ours. */
static bool read_only(const char *path)
{
	return access(path, W_OK) < 0 && errno == EROFS;
}

unsigned int privs_check(const struct config *cfg, const struct roots *roots,
			 unsigned int caps, bool dry_run)
{
	unsigned int need = privs_needed(cfg), missing = 0;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fs/cgroup", roots->sys);
	if (need & PRIV_CGROUP && !dry_run && read_only(path)) {
		log_warn("rule '%s' acts on its cgroups, but %s is read-only: "
			 "%s",
			 privs_rule(cfg, PRIV_CGROUP)->name, path, PRIVS_HINT);
		missing |= PRIV_CGROUP;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_allowed",
		 roots->proc);
	if (need & PRIV_SYSCTL && !dry_run && read_only(path)) {
		log_warn("ratio mode \"%s\" writes kernel.sched_allowed and "
			 "sched_preferred, but %s is read-only: %s",
			 ratio_mode_name(cfg->mode), path, PRIVS_HINT);
		missing |= PRIV_SYSCTL;
	}
	/* Not as another user: it reads only its own processes' anyway. */
	if (need & PRIV_PTRACE && !(caps & CAPS_PTRACE) && geteuid() == 0) {
		log_warn("rule '%s' matches on exe, but softaffd has no "
			 "CAP_SYS_PTRACE to read other users' /proc/PID/exe: "
			 "%s",
			 privs_rule(cfg, PRIV_PTRACE)->name, PRIVS_HINT);
		missing |= PRIV_PTRACE;
	}
	return missing;
}
