/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_SOFTAFF_H
#define SOFTAFF_SOFTAFF_H

/*
 * What softaff(1)'s files share:
 *
 *   softaff.c         arguments and what they ask for
 *   softaff-io.c      the files' helpers, messages, read back
 *   softaff-task.c    a process or thread (-p), or COMMAND
 *   softaff-cgroup.c  a cgroup (--cgroup)
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "pref.h"
#include "ratio.h"
#include "util.h"

/* Exit codes, as in softaff(1). */
enum {
	EX_OK = 0,
	EX_FAIL = 1,	   /* a file could not be read or the kernel refused */
	EX_USAGE = 2,	   /* bad option, mask, list, node or ratio */
	EX_NOKERNEL = 3,   /* the kernel has no soft affinity */
	EX_NOEXEC = 126,   /* COMMAND found but could not be run */
	EX_NOTFOUND = 127, /* COMMAND not found */
};

struct opts {
	struct roots roots;
	bool pid_mode, all, list, reset;
	const char *mask_arg, *node_arg, *ratio_arg, *cgroup_arg;
	int pid;
	char **cmd;
	/* What to write, from the arguments (--reset: cpus inherit). */
	bool have_cpus, have_ratio;
	struct cpureq cpus;
	struct ratio_req ratio;
};


/* "softaff: PATH: STRERROR (HINT)" on stderr; hint may be NULL. */
void file_error(const char *path, int err, const char *hint);
/* "softaff: MESSAGE" and where to find help on stderr; EX_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* dir/file into buf, which is large enough (aborts otherwise). */
void path_join(char *buf, size_t size, const char *dir, const char *file);
/* The preference file dir/file into buf (ret_path: its path); 0 or -errno. */
int read_pref_file(const char *dir, const char *file, char *buf, size_t size,
		   char *ret_path, size_t path_size);
/* A level's own request from its two files under dir: mask, ratio. */
int read_req(const char *dir, const char *cpus_file, const char *ratio_file,
	     struct pref_req *ret, char *ret_path, size_t path_size);
/* The mask and the ratio o asks for into dir's two files; an exit code. */
int write_values(const struct opts *o, const char *dir, const char *mask_file,
		 const char *ratio_file);
/* The exit code once a write was taken: 0, whatever reading back said. */
int readback(int r);

/* softaff-task.c: -p PID, or COMMAND; exit codes. */
int run_pid(const struct opts *o);
int run_command(const struct opts *o);
/* softaff-cgroup.c: --cgroup PATH; an exit code. */
int run_cgroup(const struct opts *o);

#endif
