// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaff(1)'s file helpers, under both subcommands (softaff-task.c,
 * softaff-cgroup.c): messages, the preference files read and written,
 * and what a write reads back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softaff.h"

/* "softaff: PATH: STRERROR (HINT)" on stderr. */
void file_error(const char *path, int err, const char *hint)
{
	fprintf(stderr, "softaff: %s: %s%s%s%s\n", path, strerror(err),
		hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "softaff: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'softaff --help' for more information.\n");
	return EX_USAGE;
}

/* Why a write to a preference file failed, in an admin's words. */
static const char *write_hint(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return "needs CAP_SYS_NICE or the same user as the process";
	case EINVAL:
		return "the kernel refused the value: a CPU beyond the "
		       "possible ones, or a kernel thread bound to its CPUs";
	case ESRCH:
		return "the process or thread exited";
	default:
		return NULL;
	}
}

void path_join(char *buf, size_t size, const char *dir,
		      const char *file)
{
	int n = snprintf(buf, size, "%s/%s", dir, file);

	/* Paths come from PATH_MAX/4 roots and short names; never cut. */
	if (n < 0 || (size_t)n >= size)
		abort();
}

/*
 * Read a preference file (soft affinity files of a kernel without the
 * series do not exist: EX_NOKERNEL, said once by the caller).
 */
int read_pref_file(const char *dir, const char *file, char *buf,
			  size_t size, char *ret_path, size_t path_size)
{
	ssize_t n;

	path_join(ret_path, path_size, dir, file);
	n = read_file(ret_path, buf, size);
	return n < 0 ? (int)n : 0;
}

/* A level's own request from its two files under dir: mask, ratio. */
int read_req(const char *dir, const char *cpus_file,
		    const char *ratio_file, struct pref_req *ret,
		    char *ret_path, size_t path_size)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[64];
	int r;

	r = read_pref_file(dir, cpus_file, cpus, sizeof(cpus), ret_path,
			   path_size);
	if (r == 0)
		r = read_pref_file(dir, ratio_file, ratio, sizeof(ratio),
				   ret_path, path_size);
	if (r < 0)
		return r;
	return pref_parse_req(cpus, ratio, ret) < 0 ? -EINVAL : 0;
}

static int write_pref(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	int r;

	path_join(path, sizeof(path), dir, file);
	r = write_file(path, value, strlen(value));
	if (r < 0) {
		/* The value without its newline, for the message. */
		fprintf(stderr, "softaff: writing '%.*s' to %s: %s",
			(int)strcspn(value, "\n"), value, path, strerror(-r));
		if (write_hint(-r))
			fprintf(stderr, " (%s)", write_hint(-r));
		fputc('\n', stderr);
		return EX_FAIL;
	}
	return EX_OK;
}

/*
 * The writes of a set: the mask and then the ratio, each only if asked
 * for ("inherit" for --reset).  A refused mask stops before the ratio,
 * so that nothing is half done by a bad call.
 */
int write_values(const struct opts *o, const char *dir,
			const char *mask_file, const char *ratio_file)
{
	char buf[CPUSET_LIST_BUFSZ + 1];
	int r;

	if (o->have_cpus) {
		cpureq_format(&o->cpus, true, buf, sizeof(buf) - 1);
		strcat(buf, "\n");
		r = write_pref(dir, mask_file, buf);
		if (r != EX_OK)
			return r;
	}
	if (o->have_ratio) {
		ratio_req_format(&o->ratio, buf, sizeof(buf) - 1);
		strcat(buf, "\n");
		return write_pref(dir, ratio_file, buf);
	}
	return EX_OK;
}

/*
 * After a write that was taken, reading the new value back may still fail
 * (the process exited meanwhile): the message says so, and the exit
 * status stays 0, because what was asked for was done.
 */
int readback(int r)
{
	if (r != EX_OK)
		fprintf(stderr, "softaff: the new value was written, but "
				"reading it back failed (above)\n");
	return EX_OK;
}
