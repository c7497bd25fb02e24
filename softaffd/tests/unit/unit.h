/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_TESTS_UNIT_H
#define SOFTAFF_TESTS_UNIT_H

/*
 * The unit tests' shared fixture (unit-fixture.c) and their list; one
 * file per area of the code, one binary (unit.c runs them).  Everything
 * runs against fixture /proc and /sys trees in a temporary directory;
 * writes to soft_affinity go through an injected function that can
 * fail on demand.
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "affinity.h"
#include "cgstat.h"
#include "config.h"
#include "container.h"
#include "control.h"
#include "cpuset.h"
#include "explain.h"
#include "log.h"
#include "manager-internal.h"
#include "notify.h"
#include "procconn.h"
#include "procfs.h"
#include "rulectl.h"
#include "rulelog.h"
#include "rules.h"
#include "sampler.h"
#include "caps.h"
#include "owned.h"
#include "setpool.h"
#include "status.h"
#include "sysctl.h"
#include "topology.h"
#include "util.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "test.h"

/* unit-fixture.c */
extern char tmp[PATH_MAX];
extern char proc[PATH_MAX];
extern char sys[PATH_MAX];
void mkdirs(const char *path);
void put(const char *path, const char *content);
const char *get(const char *path);
int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w);
void fixture_reset(void);
extern int fixture_ppid;
void stat_line(char *buf, size_t size, int pid, const char *comm,
	       unsigned long flags, unsigned long long start,
	       unsigned int policy);
void mktask(int pid, int tid, const char *comm, unsigned long long start,
	    unsigned int policy, const char *hard, const char *soft);
/*
 * Single-threaded processes pid, pid + 1, ... named comms[0], comms[1],
 * ... (up to a NULL), as they start: hard mask 0-3, no request.
 */
void mkprocs(int pid, const char *const *comms);
const char *soft_of(int pid, int tid);
/* The process level, /proc/PID/soft_affinity_list; and setting it. */
const char *psoft_of(int pid);
void set_psoft(int pid, const char *req);
extern int fake_err;
extern int fake_writes;
/* The plug the last write through the seam was handed; its fds then. */
extern struct fd_plug *fake_plug;
extern unsigned int fake_plug_waiting;
extern const char *fake_fail_on;
void fake_fixture(void);
extern struct topology topo;
struct config *load(const char *text, char *err, size_t errlen);
void put_sys(const char *rel, const char *content);
void two_node_topo(void);
extern struct mgr *mgr;
struct config *mgr_setup_dry(const char *text, bool dry_run);
struct config *mgr_setup(const char *text);
/* One rule "app" (comm app, CPUs 0-1), one process of it at pid, scanned. */
struct config *mgr_setup_app(int pid, unsigned long long start);
/*
 * The end of a manager test: the manager freed, the configurations it
 * ran on (NULL: none), the real write seam back.
 */
void mgr_teardown(struct config *c1, struct config *c2);
void mgr_status(const struct mgr *m, struct sbuf *b);
/*
 * Entry points only the tests use, over the manager's own (F15): a full
 * walk of <proc> in one go; one process evaluated now, as a comm or uid
 * event would have it; mgr_forget_hand and a full scan started (the
 * daemon: mgr_forget_hand, then mgr_recheck).
 */
int mgr_scan(struct mgr *m);
void mgr_eval_pid(struct mgr *m, int pid);
size_t mgr_readopt(struct mgr *m);
/*
 * The daemon's side of a sample, for the manager's tests: a rule's
 * softness kept here (as daemon-softness.c keeps struct rule_softness),
 * its plan handed down (rulectl_plan), mgr_sample, and what it gave
 * back kept: woken clears asleep, the figures are the rule's last.
 * mgr_setup starts them over.
 */
struct tsoft {
	struct rulectl_state ctl;
	bool asleep, sampled_now, woken;
	struct rule_figures last;
};
extern struct tsoft tsoft[CONFIG_MAX_RULES];
extern const struct config *tsoft_cfg;
void tsample(uint64_t now, bool exact);
void put_proc(const char *rel, const char *content);
void put_sched(int pid, int tid, const char *schedstat,
	       const char *outside_ms);
/* The text of a PSI file whose "some" total is some_us (static). */
const char *psi_text(uint64_t some_us);
const char *get_at(const char *root, const char *rel);
/* The fake /proc/PID/soft_affinity_ratio of @pid. */
const char *ratio_of(int pid);
bool xattr_ok(const char *dir);

/* unit-exec.c */
void test_fd_plug(void);
void test_status_prefs(void);
void test_exec_status_hints(void);
void test_exec_status_stale(void);
/* unit-affinity.c */
void test_softness_actuator(void);
void test_affinity(void);
void test_aff_mode(void);
void test_aff_decide(void);
void test_ratio_decide(void);
/* unit-config.c */
void test_rules(void);
void test_unit_key(void);
void test_config_errors(void);
void test_config_ok(void);
void test_rules_lazy(void);
void test_config_files(void);
void test_config_dropins(void);
/* unit-container.c */
void test_container_cache(void);
void test_manager_container(void);
/* unit-control.c */
void test_sampler(void);
void test_control(void);
void test_write_order(void);
void test_sysctl(void);
void test_rulectl(void);
void test_rulectl_room(void);
void test_rule_room(void);
void test_rulectl_resume(void);
void test_resume_rung(void);
void test_softness_plan(void);
/* unit-manager-threads.c */
void test_manager_hand(void);
void test_manager_slices(void);
void test_manager_attrs(void);
void test_manager_dirty(void);
void test_threads_main(void);
void test_process_level(void);
void test_walk_slices(void);
/* unit-manager.c */
void test_manager_scan(void);
void test_manager_errors(void);
void test_manager_warn_limit(void);
void test_manager_reload(void);
void test_manager_many(void);
void test_manager_fork_booked(void);
void test_manager_exec_one_thread(void);
/* unit-reload.c */
void test_reload_atomic(void);
void test_readopt_keeps_scan(void);
void test_reload_cgroup(void);
void test_reload_keeps_inherited(void);
void test_restore_inherited_identity(void);
/* unit-parsers.c */
void test_cpuset_list(void);
void test_cpuset_mask(void);
void test_cpuset_wide(void);
void test_stat_parser(void);
void test_status_parser(void);
void test_topology(void);
void test_procconn_parse(void);
void test_util(void);
void test_notify(void);
void test_cgstat(void);
/* unit-queues.c */
void test_ratelimit(void);
void test_budget(void);
void test_walk_gap(void);
void test_owned(void);
void test_setpool(void);
void test_dirtyq(void);
void test_dirtyq_no_starvation(void);
void test_threads_main_leave_capped(void);
/* unit-figures.c */
void test_sample_psi_gate(void);
void test_sample_no_psi(void);
void test_sample_budget(void);
/* unit-softness.c */
void test_mgr_sample(void);
void test_mgr_sample_bounded(void);
void test_mgr_sample_cgroup(void);
void test_cgroup_wait_size(void);
void test_mgr_cgroup_recreated(void);
/* unit-status.c */
void test_status_format(void);
void test_explain_listed(void);

#endif
