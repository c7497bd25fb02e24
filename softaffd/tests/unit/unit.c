// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The unit tests' binary: each RUN is one TAP line (run-check.sh numbers
 * them); the tests are in unit-*.c by area, their fixture in
 * unit-fixture.c.
 */
#define TEST_MAIN
#include "unit.h"

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/softaffd-unit-XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	/*
	 * The container tests need user xattrs, which tmpfs has only since
	 * Linux 6.6: run-check.sh offers a directory on the build tree's
	 * file system for when TMPDIR's refuses them.
	 */
	t = getenv("UNIT_XATTR_DIR");
	if (t && !xattr_ok(tmp)) {
		rmdir(tmp);
		snprintf(tmp, sizeof(tmp), "%s/softaffd-unit-XXXXXX", t);
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
	}
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	log_init(getenv("UNIT_VERBOSE") ? LOG_DEBUG : -1);
	log_set_journal(0);
	two_node_topo();

	RUN(test_cpuset_list, "cpulist parse/format");
	RUN(test_cpuset_mask, "hex mask parse/format");
	RUN(test_cpuset_wide, "CPU ids up to 8191 (L11)");
	RUN(test_stat_parser, "/proc/PID/stat parser, hostile comm");
	RUN(test_status_parser, "status, cgroup, cmdline parsers");
	RUN(test_topology, "node topology from a fake sys root");
	RUN(test_rules, "rule matching: comm, exe, cmdline, user, cgroup");
	RUN(test_unit_key, "unit key: the unit of a cgroup path, matching");
	RUN(test_config_errors, "config errors carry file:line");
	RUN(test_config_ok, "config values and defaults");
	RUN(test_affinity, "apply/skip/error classification, restore");
	RUN(test_aff_mode,
	    "a dry run without the feature: the manager's mode, not a global (F11)");
	RUN(test_manager_scan, "scan, events, pid reuse, exit");
	RUN(test_manager_errors, "EPERM/EINVAL/ESRCH warn-once policy");
	RUN(test_manager_warn_limit, "per-process warnings: a limit per rule");
	RUN(test_manager_reload,
	    "reload: a changed rule written over, a removed one restored; "
	    "same rules: go on");
	RUN(test_reload_atomic,
	    "changed rules: only new preferences written, only unmatched "
	    "restored, the scan goes on");
	RUN(test_readopt_keeps_scan, "SIGUSR1 during a full scan: it goes on");
	RUN(test_reload_cgroup,
	    "changed cgroup rule: written over; to threads: cgroup restored after");
	RUN(test_reload_keeps_inherited,
	    "reload: forked children that carry a rule's mask are kept (F5)");
	RUN(test_restore_inherited_identity,
	    "stop: a child booked at its fork and never read is left (F8)");
	RUN(test_manager_many, "2000 processes, table grows and shrinks");
	RUN(test_manager_fork_booked,
	    "fork of a managed process: booked at the event, read later");
	RUN(test_manager_exec_one_thread,
	    "exec: a status of one thread spares the listing of task/");
	RUN(test_fd_plug, "closes put off to a plug's end, writes if it says");
	RUN(test_status_prefs, "status in one pass: the preference sources");
	RUN(test_exec_status_hints,
	    "exec: the ratio and the leader's mask as status tells them");
	RUN(test_exec_status_stale,
	    "what status told is past once we write the level");
	RUN(test_aff_decide, "claims: adopt, new thread, ours; the process level; restore");
	RUN(test_manager_hand, "hand-set masks: kept, listed, exec, re-adopt");
	RUN(test_manager_slices, "scans in slices; LIGHT, ATTRS, NEW kinds");
	RUN(test_manager_attrs, "attribute rescans: only what decided, only if changed");
	RUN(test_sampler, "per-CPU and per-node utilization");
	RUN(test_control, "controller: soften, harden, no oscillation");
	RUN(test_write_order, "sysctl write order never invalid");
	RUN(test_procconn_parse, "proc connector: decoding, whose PIDs");
	RUN(test_util, "helpers, atomic status write");
	RUN(test_notify, "sd_notify protocol, watchdog period");
	RUN(test_rules_lazy, "lazy attributes in rule order, regex budget");
	RUN(test_ratelimit, "log rate limit; a rule's, per kind of warning");
	RUN(test_owned, "thread ownership bookkeeping");
	RUN(test_setpool, "interned CPU sets");
	RUN(test_budget, "a share of each second for events and evaluations");
	RUN(test_walk_gap, "connector-mode walks: every 6 periods or 2000x their time");
	RUN(test_dirtyq, "dirty queue: first in first out, dedupe, removal");
	RUN(test_dirtyq_no_starvation,
	    "dirty queue: a storm starves no one (ceil(n/k) turns)");
	RUN(test_manager_dirty, "dirty queue, match cache, inherited masks");
	RUN(test_threads_main, "threads = main: other threads get no mask");
	RUN(test_threads_main_leave_capped,
	    "threads = main leaving its rule: threads reset a cap at a time (F7)");
	RUN(test_process_level,
	    "threads = all: one process-level write, restored as it was");
	RUN(test_walk_slices, "a 1000-thread walk in capped slices");
	RUN(test_sysctl, "ratio actuator: saved original, sysctl -w pauses");
	RUN(test_status_format, "status as a pure function, written on change");
	RUN(test_explain_listed,
	    "--explain: a pid past 8 KiB or the 1000 listed is not unlisted (F12)");
	RUN(test_config_files, "config file type, owner and mode; caps");
	RUN(test_config_dropins, "drop-ins: order, trust, duplicates");
	RUN(test_rulectl, "per-rule control law as tables");
	RUN(test_softness_plan,
	    "a rule's softness is the daemon's; the manager gets its plan (F3)");
	RUN(test_rulectl_room, "rule room: only the CPUs its tasks may use (L5)");
	RUN(test_rule_room,
	    "rule room: its cgroups' cpuset.cpus.effective, not its tasks' pins (L5)");
	RUN(test_rulectl_resume,
	    "a restart's rung: the ratio most processes had, on the ladder (L7)");
	RUN(test_resume_rung,
	    "a restart resumes adaptive rules where they were, not hardest (L7)");
	RUN(test_mgr_sample, "gather: per-thread schedstat deltas per rule");
	RUN(test_mgr_sample_bounded,
	    "gather: a bounded sample that rotates, scaled to the rule");
	RUN(test_sample_psi_gate,
	    "gather: no thread read while /proc/pressure/cpu is calm");
	RUN(test_sample_no_psi, "gather: without /proc/pressure/cpu, as before");
	RUN(test_sample_budget,
	    "gather: one budget for all rules, every process met");
	RUN(test_cgstat, "cpu.pressure and cpu.stat parsers, deltas");
	RUN(test_mgr_sample_cgroup,
	    "gather: a cgroup rule's wait from cpu.pressure, fallback");
	RUN(test_cgroup_wait_size,
	    "a unit's wait from cpu.pressure: soften at 1, 16 and 64 CPUs");
	RUN(test_mgr_cgroup_recreated,
	    "a cgroup made again at its path: new preference and trigger");
	RUN(test_ratio_decide, "per-process ratio: decide table, parsers");
	RUN(test_softness_actuator, "softness: procfs ratio, cgroup, fallback");
	RUN(test_container_cache,
	    "containers: marks read once per cgroup level, bounded, swept");
	RUN(test_manager_container,
	    "containers: a marked cgroup's processes and cgroup left alone");

	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return t_failed_checks ? 1 : 0;
}
