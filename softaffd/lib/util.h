/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_UTIL_H
#define SOFTAFF_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Where /proc, /sys and the run directory live; tests point them at fixtures. */
struct roots {
	char proc[PATH_MAX / 4];
	char sys[PATH_MAX / 4];
	char run[PATH_MAX / 4];
};

void roots_default(struct roots *r);

/*
 * "<sys>/fs/cgroup<cg>/<file>" for a cgroup path cg as in /proc/PID/cgroup
 * ("/" is the root).  0, or -ENAMETOOLONG.
 */
int cgroup_file_path(char *path, size_t size, const char *sys, const char *cg,
		     const char *file);

/*
 * Read a whole small file into buf (NUL terminated, truncated to size - 1).
 * Returns the length or -errno.  Never logs.
 */
ssize_t read_file(const char *path, char *buf, size_t size);
/* The same relative to a directory fd (AT_FDCWD for none). */
ssize_t read_file_at(int dfd, const char *path, char *buf, size_t size);
/*
 * The same for a file the kernel shows as one record, as every per-task
 * file of procfs the manager reads is (stat, status, cgroup, cmdline,
 * schedstat, sched, the soft affinity files: one seq_file show, or a
 * copy of the whole): a read that returns less than it asked for had
 * all of it, so the read that would only see the end of the file is
 * saved, a system call per file on the event path.  Not for files of
 * many records (/proc/schedstat), whose reads stop at a page.
 */
ssize_t read_record_at(int dfd, const char *path, char *buf, size_t size);

/*
 * Closes put off, as the block layer plugs I/O: a read of a /proc file
 * is an open, a read and a close, and on a host where a system call
 * costs a microsecond the close is a third of it.  A reader or writer
 * handed a plug leaves the fd it is done with to it, and fd_unplug()
 * closes them all, a close_range(2) per run of consecutive numbers (fds
 * are handed out lowest first, so mostly one).  Nothing depends on when
 * a read-only fd is closed.  A write's fd is left to it only if the
 * plug says writes: close(2) may report a write's error on some file
 * systems, not on procfs or cgroupfs, whose writes fail in write(2) or
 * not at all.  The plug is always an argument (NULL: close at once),
 * never a state of the library, so a call site shows whether its fds
 * wait.  When FD_PLUG_MAX are waiting they are closed there and then.
 */
#define FD_PLUG_MAX 32
struct fd_plug {
	int fds[FD_PLUG_MAX];
	unsigned int n;
	bool writes; /* writers leave theirs too */
};
void fd_plug(struct fd_plug *p, bool writes);
void fd_unplug(struct fd_plug *p);
/* Close fd when plug p goes (now if p is NULL). */
void fd_close_later(struct fd_plug *p, int fd);
/* read_file_at, read_record_at, the fd left to plug p (NULL: closed). */
ssize_t read_file_plug(struct fd_plug *p, int dfd, const char *path,
		       char *buf, size_t size);
ssize_t read_record_plug(struct fd_plug *p, int dfd, const char *path,
			 char *buf, size_t size);

/*
 * The one place that writes a kernel preference file: a process's or
 * thread's soft_affinity{_list,_ratio} (path relative to its directory
 * fd) or a cgroup's cpuset.cpus.preferred{,.ratio} (dfd AT_FDCWD), its
 * fd left to plug p if p takes writes.  The tests' seam: they replace
 * it to simulate EPERM/EINVAL/ESRCH on plain fixture files.
 * write_file_plug() unless replaced; 0 or -errno.
 */
typedef int (*kfile_write_fn)(struct fd_plug *p, int dfd, const char *path,
			      const char *data, size_t len);
extern kfile_write_fn kfile_write;

/* Write data with a single write(2), as procfs expects.  0 or -errno. */
int write_file(const char *path, const char *data, size_t len);
int write_file_at(int dfd, const char *path, const char *data, size_t len);
/* The same, its fd left to plug p if p takes writes (p may be NULL). */
int write_file_plug(struct fd_plug *p, int dfd, const char *path,
		    const char *data, size_t len);
/*
 * The same for a file name in directory dfd that must not be a symlink
 * (O_NOFOLLOW, -ELOOP): for a program that may write only inside one
 * directory it reached safely.  The write does not wait on a FIFO.
 */
ssize_t read_file_nofollow_at(int dfd, const char *name, char *buf,
			      size_t size);
int write_file_nofollow_at(int dfd, const char *name, const char *data,
			   size_t len);
/*
 * Open directory path below directory dfd, never leaving it: no "..",
 * absolute path or symlink on the way out (-EXDEV), no symlink at all
 * (-ELOOP).  The fd (O_RDONLY, close-on-exec), or -errno.
 */
int open_dir_beneath(int dfd, const char *path);
/* Write to path.tmp then rename over path. 0 or -errno. */
int write_file_atomic(const char *path, const char *data, size_t len);

/* Parse an unsigned decimal that must fill the whole string. 0 or -EINVAL. */
int parse_u64(const char *s, uint64_t *ret);
/* qsort() and bsearch() order of ints. */
int cmp_int(const void *a, const void *b);

uint64_t now_ms(void);
uint64_t monotonic_ns(void);

/*
 * A share of time: at most limit_ms of work per window_ms.  The work is
 * measured in wall-clock time around it, which a starved machine only
 * overstates (then less work is done, never more), and charged to the
 * nanosecond: slices of a few ms charged in whole ms would be charged
 * up to a ms short each.
 */
struct budget {
	unsigned int limit_ms, window_ms;
	uint64_t start_ms, used_ns;
};
/* Whole milliseconds of work left in the current window (a new one if due). */
uint64_t budget_left(struct budget *b, uint64_t now);
/* Charge the work since start_ns (a monotonic_ns() value). */
void budget_charge_since(struct budget *b, uint64_t start_ns);
/* When the current window ends (and with it the wait for more). */
uint64_t budget_renews(const struct budget *b);

/* Growable string buffer for status and dumps. */
struct sbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};
void sbuf_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_free(struct sbuf *b);

#endif
