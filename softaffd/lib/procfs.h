/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_PROCFS_H
#define SOFTAFF_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "util.h"

/* Parsed /proc/PID/stat (or task/TID/stat). */
struct pstat {
	int pid;
	char comm[64];
	char state;
	int ppid;
	unsigned long flags; /* field 9, PF_* */
	uint64_t starttime;  /* field 22, clock ticks since boot */
	int processor;	     /* field 39: the CPU it last ran on */
	unsigned int policy; /* field 41 */
};

#define PF_KTHREAD_BIT 0x00200000UL /* include/linux/sched.h PF_KTHREAD */

/*
 * The value of "Key:\tvalue" in a status file (blanks after the colon
 * skipped, up to the line's end), or NULL.  Also used by softaff(1).
 */
const char *procfs_status_field(const char *buf, const char *key);
/* A status value's first line into buf.  0 or -EINVAL (too long). */
int procfs_value_line(const char *v, char *buf, size_t size);
/* Pure parsers: 0 or -EINVAL.  buf is NUL terminated. */
int procfs_parse_stat(const char *buf, struct pstat *ret);
/* Cpus_allowed_list (hard mask) and real Uid from .../status. */
int procfs_parse_status(const char *buf, struct cpuset *ret_hard,
			uid_t *ret_uid);
/* The cgroup v2 ("0::") path from /proc/PID/cgroup into ret. */
int procfs_parse_cgroup(const char *buf, char *ret, size_t size);
/* In place: NUL separators -> spaces, trailing ones dropped. */
void procfs_flatten_cmdline(char *buf, size_t len);

/*
 * Readers relative to a process directory opened with procfs_open_pid():
 * while that fd is open, a reused pid cannot redirect them to another
 * process (the kernel answers ENOENT/ESRCH once the process is gone).
 * tid 0 means the process itself.  They return -errno and do not log.
 * The fds of their files go to plug p (util.h; NULL: closed at once).
 */
int procfs_open_pid(const char *proc, int pid);
/* The same through procfd, proc opened (O_PATH will do); -1: by path. */
int procfs_open_pid_at(int procfd, const char *proc, int pid);
int procfs_read_stat(struct fd_plug *p, int pfd, int tid, struct pstat *ret);
int procfs_read_status(struct fd_plug *p, int pfd, int tid,
		       struct cpuset *ret_hard, uid_t *ret_uid);

/*
 * The level of a thread's soft affinity that applies, as status names
 * it: Cpus_preferred_source (thread, process, cgroup or none) and
 * Cpus_preferred_ratio_source (the same, default for none).  The first
 * level that does not inherit decides, thread, then process, then
 * cgroup; none: that level says "none", or every level inherits.
 */
enum pref_source {
	PREF_SRC_UNKNOWN, /* not shown, or not a word we know */
	PREF_SRC_NONE,
	PREF_SRC_THREAD,
	PREF_SRC_PROCESS,
	PREF_SRC_CGROUP,
};

/* What the manager takes from a process's status, in one read. */
struct pstatus {
	struct cpuset hard;   /* Cpus_allowed_list: the main thread's */
	uid_t uid;	      /* the real one */
	unsigned int threads; /* Threads:, 0 if not shown */
	char state;	      /* State: of the main thread, 0 if not shown */
	/* Of the main thread; UNKNOWN on a kernel that does not show it. */
	enum pref_source mask_src, ratio_src;
	/* Cpus_preferred_ratio, the ratio in force; 0:0 if not shown. */
	unsigned int ratio_allowed, ratio_preferred;
};

/* Pure: 0 or -EINVAL (no Cpus_allowed_list or Uid line). */
int procfs_parse_pstatus(const char *buf, struct pstatus *ret);
int procfs_read_pstatus(struct fd_plug *p, int pfd, struct pstatus *ret);
int procfs_read_exe(int pfd, char *ret, size_t size);
int procfs_read_cmdline(struct fd_plug *p, int pfd, char *ret, size_t size);
int procfs_read_cgroup(struct fd_plug *p, int pfd, char *ret, size_t size);
/* The same two at a path relative to dfd ("PID/cmdline" from <proc>). */
int procfs_read_cmdline_at(struct fd_plug *p, int dfd, const char *path,
			   char *ret, size_t size);
int procfs_read_cgroup_at(struct fd_plug *p, int dfd, const char *path,
			  char *ret, size_t size);
/* The tids under task/ into *buf (grown as needed).  Count or -errno. */
int procfs_read_tids(int pfd, int **buf, size_t *cap);

/* One thread's scheduler accounting, for the softness controller. */
struct task_sched {
	uint64_t runtime_ns, delay_ns; /* task/TID/schedstat */
	uint64_t outside_ns;	       /* sched: soft_outside_runtime */
	uint64_t spills, returns;      /* sched: wakeups + migrations */
};

/* Pure parsers: 0 or -EINVAL; sched fields not found stay as they were. */
int procfs_parse_schedstat(const char *buf, struct task_sched *ret);
int procfs_parse_sched(const char *buf, struct task_sched *ret);
/* schedstat, and with detail also sched, of one thread.  0 or -errno. */
int procfs_read_task_sched(int pfd, int tid, bool detail,
			   struct task_sched *ret);

/* Printable copy of an untrusted name for log lines. */
const char *procfs_escape(const char *in, char *out, size_t size);

#endif
