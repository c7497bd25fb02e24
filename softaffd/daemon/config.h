/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_CONFIG_H
#define SOFTAFF_CONFIG_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpuset.h"
#include "ratio.h"
#include "topology.h"

#define CONFIG_MAX_RULES	  256
#define CONFIG_MAX_PATTERN	  256 /* bytes in comm/exe/cmdline/cgroup/name */
#define CONFIG_MAX_NODES_PER_RULE 64
/* A rule name: one word that status, --explain and the JSON print as is */
#define RULE_NAME_MAX		  64
#define RULE_NAME_CHARS                                                        \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:@-"
/* ~25 ms worst case per 4 KiB command line at this size (glibc 2.36). */
#define REGEX_MAX_COST		  512
/* Drop-in files read after the main one, all files together. */
#define CONFIG_MAX_DROPINS	  64

/* Which process attributes a rule (or the whole config) needs to read. */
enum {
	NEED_COMM = 1 << 0,
	NEED_EXE = 1 << 1,
	NEED_CMDLINE = 1 << 2,
	NEED_UID = 1 << 3,
	NEED_CGROUP = 1 << 4,
};

enum threads_mode { THREADS_ALL, THREADS_MAIN };

enum ratio_mode { RATIO_OFF, RATIO_FIXED, RATIO_ADAPTIVE };

struct rule {
	char *name;
	const char *file; /* where it was written: config->files[] */
	int line;
	char *comm;    /* fnmatch pattern against comm (exact if no wildcard) */
	char *exe;     /* fnmatch pattern against /proc/PID/exe */
	char *cmdline; /* ERE source against NUL->space cmdline */
	regex_t cmdline_re;
	bool has_re;
	unsigned int re_cost; /* estimated automaton states, 1..REGEX_MAX_COST */
	bool has_uid;
	uid_t uid;
	char *user;   /* as written, for the dump */
	char *cgroup; /* cgroup v2 path prefix, component-wise */
	char *unit;   /* fnmatch pattern against the systemd unit */
	int nodes[CONFIG_MAX_NODES_PER_RULE];
	unsigned int nnodes;
	char *cpus_text;	/* as written when cpus= was used */
	struct cpuset cpus;	/* resolved target */
	struct cpuset node_idx; /* topology indexes the target touches */
	enum threads_mode threads;
	struct softness softness;
	unsigned int needs;
};

struct config {
	char *path;
	unsigned int interval_ms;
	unsigned int rescan_ms;
	bool restore_on_exit;
	enum ratio_mode mode;
	struct ratio fixed;
	struct ratio softest, hardest;
	unsigned int saturated_pct, idle_pct, hold;
	unsigned int min_change_ms;
	struct rule *rules;
	unsigned int nrules;
	unsigned int needs;
	/* The main file, then the drop-ins read, in order. */
	char *files[1 + CONFIG_MAX_DROPINS];
	unsigned int nfiles;
};

/*
 * Load and validate path, then its drop-ins: the *.conf files of the
 * directory named like path without ".conf" plus ".d" (/etc/softaffd.conf:
 * /etc/softaffd.d/), in byte order; they add rules after the main file's.
 * On error returns -EINVAL (or -errno) and puts "file:line: message" into
 * err.  Nothing is partially returned.
 */
int config_load(const char *path, const struct topology *topo,
		struct config **ret, char *err, size_t errlen);
/*
 * config_load() with CONFIG_* flags.  CONFIG_NO_NSS: a user name is not
 * resolved (its rule gets uid -1), so loading never talks to another
 * process (NSS may ask sssd, LDAP or systemd): for softaffd --privileges
 * in a systemd generator, which runs before those services and must not
 * wait for them.  Such a config is only good for what its rules need,
 * not for matching.
 */
enum { CONFIG_NO_NSS = 1 << 0 };
int config_load_flags(const char *path, const struct topology *topo,
		      unsigned int flags, struct config **ret, char *err,
		      size_t errlen);
/* Same from memory (fuzzing); name is used in messages, @include refused. */
int config_load_string(const char *text, const char *name,
		       const struct topology *topo, struct config **ret,
		       char *err, size_t errlen);
void config_free(struct config *c);
void config_dump(const struct config *c, FILE *f);
/*
 * A rule that matches on cgroup and unit alone, for all threads, acts on
 * the cgroup (cpuset.cpus.preferred{,.ratio}, and a cpu.pressure trigger
 * when adaptive) instead of on each process: the manager's cgroup mode,
 * and what needs the cgroup tree writable in the unit.
 */
static inline bool rule_acts_on_cgroup(const struct rule *r)
{
	return r->needs == NEED_CGROUP && r->threads == THREADS_ALL;
}
/* True if both rules select the same processes and target the same CPUs. */
bool rule_equal(const struct rule *a, const struct rule *b);
/* The same rules in the same order: every process gets the same rule. */
bool config_rules_equal(const struct config *a, const struct config *b);
/*
 * Pure: the rule map of a reload.  ret[i] (old->nrules entries) is the
 * index in cfg of old's rule i, the same rule (name and every key, see
 * rule_equal), or -1: changed or gone.  What a rule keeps over a reload
 * (its softness, its cgroups) follows this map, computed once.
 */
void config_rule_map(const struct config *old, const struct config *cfg,
		     int *ret);
const char *ratio_mode_name(enum ratio_mode m);
/* The drop-in directory of a main config path into ret; 0 or -ENAMETOOLONG. */
int config_dropin_dir(const char *path, char *ret, size_t size);

#endif
