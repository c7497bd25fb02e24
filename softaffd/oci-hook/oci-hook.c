// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaff-oci-hook: an OCI runtime hook (stage createRuntime) that gives
 * a container the soft CPU affinity its io.softaff.* annotations ask
 * for, by writing its own cgroup's cpuset.cpus.preferred{,.ratio} before
 * the container runs its first instruction.  See softaff-oci-hook(8).
 *
 * Gather, decide, act: the state comes from standard input, the
 * annotations become a request in pure code (ocistate.c), and only then
 * is the container's cgroup reached, from its init process, and written
 * all or nothing.  A non-zero exit makes the runtime refuse to start the
 * container, so every failure is one line on stderr saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cgmark.h"
#include "cpuset.h"
#include "ocistate.h"
#include "pref.h"
#include "procfs.h"
#include "topology.h"
#include "util.h"

#ifndef SOFTAFFD_VERSION
#define SOFTAFFD_VERSION "0.1"
#endif

#define PROG "softaff-oci-hook"
/*
 * The mark softaffd looks for (lib/cgmark.h): a cgroup whose preference
 * this hook set, valued with the container id.
 */
#define MARK_XATTR CGMARK_XATTR
#define CPUS_FILE  "cpuset.cpus.preferred"
#define RATIO_FILE "cpuset.cpus.preferred.ratio"

/* Exit codes, as in softaff-oci-hook(8). */
enum {
	EX_OK = 0,    /* done, or nothing to do, or a kernel without it */
	EX_FAIL = 1,  /* the runtime then refuses to start the container */
	EX_USAGE = 2, /* bad command line */
};

/* The container and, once found, its cgroup. */
struct hook {
	struct roots roots;
	char id[4 * 64 + 8];   /* the container id, escaped for messages */
	char cg[PATH_MAX / 2]; /* its cgroup, as /proc/PID/cgroup says */
	char dir[PATH_MAX];    /* <sys>/fs/cgroup<cg>, for messages */
	int dfd;	       /* that directory, reached beneath the mount */
};

/* What the cgroup held before the hook, to put back on a failure. */
struct saved {
	char cpus[CPUSET_LIST_BUFSZ];
	char ratio[64];
	struct cgmark_saved mark; /* the old mark, and whether it can be */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " < STATE\n"
		"OCI runtime hook (createRuntime stage): reads the container "
		"state on\nstandard input and writes the soft CPU affinity "
		"that its annotations\nio.softaff.nodes, io.softaff.cpus "
		"and io.softaff.softness ask for into\nthe container's "
		"cgroup.  Runtimes run it from hooks.d (softaff.json).\n\n"
		"  -h, --help           this text\n"
		"  -V, --version        print the version\n\n"
		"Exit status: 0 done or nothing to do, 1 the container must "
		"not start\n(the message says why), 2 bad arguments.  See "
		"softaff-oci-hook(8).\n");
}

/*
 * One line on stderr, "softaff-oci-hook: " first, and the same to syslog:
 * runc shows a failed hook's stderr in its error, but crun drops it unless
 * the run.oci.hooks.stderr annotation names a file, so the journal is
 * where an admin finds why a container did not start.  It returns status,
 * so that "return say(EX_FAIL, ...)" reads as what the caller decided.
 */
static int say(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int say(int status, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": %s\n", line);
	syslog(status == EX_OK ? LOG_WARNING : LOG_ERR, "%s", line);
	return status;
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr,
		PROG ": %s '%s'\nTry '" PROG " --help' for more "
		     "information.\n",
		what, arg);
	return EX_USAGE;
}

static int parse_args(int argc, char **argv, struct roots *roots)
{
	enum { OPT_PROC = 256, OPT_SYS };
	static const struct option lo[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		/* For the tests: fixture trees instead of /proc and /sys. */
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{NULL, 0, NULL, 0},
	};
	int c;

	roots_default(roots);
	opterr = 0; /* our own message, not one naming argv[0]'s path */
	while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (c) {
		case OPT_PROC:
			snprintf(roots->proc, sizeof(roots->proc), "%s",
				 optarg);
			break;
		case OPT_SYS:
			snprintf(roots->sys, sizeof(roots->sys), "%s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(EX_OK);
		case 'V':
			printf(PROG " %s\n", SOFTAFFD_VERSION);
			exit(EX_OK);
		default:
			return usage_error("unknown option or missing "
					   "argument:",
					   argv[optind - 1]);
		}
	}
	/* The state comes on stdin; an argument is a misconfigured hook. */
	if (optind < argc)
		return usage_error("takes no arguments, got", argv[optind]);
	return EX_OK;
}

/* All of standard input (at most OCI_STATE_MAX bytes), NUL terminated. */
static int read_state(char **ret, size_t *ret_len)
{
	size_t len = 0, cap = OCI_STATE_MAX + 2;
	char *buf = malloc(cap);

	if (!buf)
		return say(EX_FAIL, "out of memory");
	/* One byte more than allowed tells an oversized state apart. */
	while (len < OCI_STATE_MAX + 1) {
		ssize_t n =
			read(STDIN_FILENO, buf + len, OCI_STATE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return say(EX_FAIL,
				   "reading the container state from "
				   "standard input: %s",
				   strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return EX_OK;
}

/* The request of the state's annotations, checked against the machine. */
static int decode(const struct hook *h, const struct oci_state *st,
		  struct oci_request *ret)
{
	char err[1024];
	struct topology *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return say(EX_FAIL, "out of memory");
	r = topology_load(h->roots.sys, t);
	if (r < 0) {
		topology_free(t);
		return say(EX_FAIL,
			   "container %s: %s/devices/system/node: %s (cannot "
			   "read the NUMA topology)",
			   h->id, h->roots.sys, strerror(-r));
	}
	r = oci_request_decode(st, t, ret, err, sizeof(err));
	topology_free(t);
	return r < 0 ? say(EX_FAIL, "%s", err) : EX_OK;
}

/*
 * A kernel with soft affinity has the sysctl: 1 yes, 0 no (a stock
 * kernel), or -errno if that cannot be told.
 */
static int kernel_has_soft_affinity(const struct roots *roots)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_preferred",
		 roots->proc);
	if (access(path, F_OK) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/* The cgroup v2 path of the container's init process into h->cg. */
static int find_cgroup(struct hook *h, int pid)
{
	int pfd, r;

	pfd = procfs_open_pid(h->roots.proc, pid);
	if (pfd < 0)
		return say(EX_FAIL, "container %s: init process %d: %s/%d: %s",
			   h->id, pid, h->roots.proc, pid, strerror(-pfd));
	r = procfs_read_cgroup(NULL, pfd, h->cg, sizeof(h->cg));
	close(pfd);
	if (r == -EINVAL)
		return say(EX_FAIL,
			   "container %s: %s/%d/cgroup has no cgroup v2 "
			   "(\"0::\") line",
			   h->id, h->roots.proc, pid);
	if (r < 0)
		return say(EX_FAIL, "container %s: %s/%d/cgroup: %s", h->id,
			   h->roots.proc, pid, strerror(-r));
	/* The root's files are the machine's, and it has no cpuset ones. */
	if (h->cg[0] != '/' || !h->cg[strspn(h->cg, "/")])
		return say(EX_FAIL,
			   "container %s: init process %d is in cgroup "
			   "\"%s\", not below the root: no cgroup of its own "
			   "to write",
			   h->id, pid, h->cg);
	snprintf(h->dir, sizeof(h->dir), "%s/fs/cgroup%s", h->roots.sys, h->cg);
	return EX_OK;
}

/*
 * Open the container's cgroup directory beneath the cgroup mount: never
 * through a symlink, a magic link or "..", whatever the path says, so
 * that the hook writes inside that one directory only.
 */
static int open_cgroup(struct hook *h)
{
	char mount[PATH_MAX];
	int mfd, fd;

	snprintf(mount, sizeof(mount), "%s/fs/cgroup", h->roots.sys);
	mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return say(EX_FAIL, "container %s: %s: %s", h->id, mount,
			   strerror(errno));
	/* A cgroup v1 or hybrid host mounts a tmpfs there. */
	if (faccessat(mfd, "cgroup.controllers", F_OK, AT_SYMLINK_NOFOLLOW)) {
		close(mfd);
		return say(EX_FAIL,
			   "container %s: %s is not a cgroup v2 mount (no "
			   "cgroup.controllers): soft affinity for "
			   "containers needs the unified hierarchy",
			   h->id, mount);
	}
	fd = open_dir_beneath(mfd, h->cg + strspn(h->cg, "/"));
	close(mfd);
	if (fd >= 0) {
		h->dfd = fd;
		return EX_OK;
	}
	switch (-fd) {
	case EXDEV:
		return say(EX_FAIL,
			   "container %s: cgroup %s is outside %s (another "
			   "cgroup namespace?)",
			   h->id, h->cg, mount);
	case ELOOP:
		return say(EX_FAIL,
			   "container %s: %s: a symlink on the way; refusing "
			   "to follow it",
			   h->id, h->dir);
	case ENOSYS:
		return say(EX_FAIL,
			   "container %s: openat2() is not available (Linux "
			   "5.6 or later)",
			   h->id);
	default:
		return say(EX_FAIL, "container %s: %s: %s", h->id, h->dir,
			   strerror(-fd));
	}
}

/* Why the cgroup has no preference file: the kernel, or no cpuset. */
static int file_missing(const struct hook *h, const char *file)
{
	if (faccessat(h->dfd, "cpuset.cpus", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return say(EX_FAIL,
			   "container %s: %s has cpuset.cpus but no %s: "
			   "this kernel's soft affinity has no cgroup files",
			   h->id, h->dir, file);
	return say(EX_FAIL,
		   "container %s: cgroup %s has no %s: the cpuset "
		   "controller is not enabled for it; enable it for the "
		   "container's cgroup (e.g. podman --cgroup-manager="
		   "cgroupfs, a --cpuset-cpus setting, or cpuset delegated "
		   "in the parent's cgroup.subtree_control)",
		   h->id, h->dir, file);
}

/* One preference file's current text into buf; it must parse. */
static int save_file(const struct hook *h, const char *file, char *buf,
		     size_t size)
{
	struct ratio_req ratio;
	struct cpureq cpus;
	ssize_t n;
	int r;

	n = read_file_nofollow_at(h->dfd, file, buf, size);
	if (n == -ENOENT)
		return file_missing(h, file);
	if (n < 0)
		return say(EX_FAIL, "container %s: reading %s/%s: %s", h->id,
			   h->dir, file, strerror((int)-n));
	if ((size_t)n == size - 1)
		r = -EINVAL; /* longer than any value the kernel shows */
	else if (!strcmp(file, CPUS_FILE))
		r = cpureq_parse_list(buf, &cpus);
	else
		r = ratio_req_parse(buf, &ratio);
	/* What cannot be read back could not be put back. */
	if (r < 0)
		return say(EX_FAIL,
			   "container %s: %s/%s: cannot parse its current "
			   "value, so nothing is written",
			   h->id, h->dir, file);
	return EX_OK;
}

/* The mark's current value, if any and if the file system has them. */
static int save_mark(const struct hook *h, struct saved *s)
{
	int r = cgmark_save(h->dfd, &s->mark);

	if (r == -ENOMEM)
		return say(EX_FAIL, "out of memory");
	if (r < 0)
		return say(EX_FAIL,
			   "container %s: %s: reading its " MARK_XATTR
			   " attribute: %s",
			   h->id, h->dir, strerror(-r));
	return EX_OK;
}

static int save(const struct hook *h, struct saved *s)
{
	int r;

	r = save_file(h, CPUS_FILE, s->cpus, sizeof(s->cpus));
	if (r == EX_OK)
		r = save_file(h, RATIO_FILE, s->ratio, sizeof(s->ratio));
	if (r == EX_OK)
		r = save_mark(h, s);
	return r;
}

/* Mark the cgroup as set by the hook: 1 marked, 0 cannot be, -errno. */
static int mark(const struct hook *h, const struct oci_state *st,
		const struct saved *s)
{
	int err = ENOTSUP;

	if (s->mark.xattrs) {
		err = -cgmark_set(h->dfd, st->id);
		if (!err)
			return 1;
	}
	if (err != ENOTSUP)
		return -err;
	say(EX_OK,
	    "warning: container %s: %s: cannot set the " MARK_XATTR
	    " attribute "
	    "(%s): softaffd cannot tell that this hook set its preference",
	    h->id, h->dir, strerror(err));
	return 0;
}

/* Undo the mark: the old value back, or none as before. */
static int unmark(const struct hook *h, const struct saved *s)
{
	return cgmark_restore(h->dfd, &s->mark);
}

/* Put back what an earlier step wrote; say so if that fails too. */
static void restore(const struct hook *h, const struct saved *s, bool marked,
		    bool ratio_written)
{
	int r;

	if (ratio_written) {
		r = write_file_nofollow_at(h->dfd, RATIO_FILE, s->ratio,
					   strlen(s->ratio));
		if (r < 0)
			say(EX_FAIL, "container %s: restoring %s/%s: %s", h->id,
			    h->dir, RATIO_FILE, strerror(-r));
	}
	if (marked && (r = unmark(h, s)) < 0)
		fprintf(stderr,
			PROG ": container %s: restoring the " MARK_XATTR
			     " attribute of %s: %s\n",
			h->id, h->dir, strerror(-r));
}

/* Why a write failed, in an admin's words (NULL: errno says it all). */
static const char *write_hint(int err)
{
	switch (err) {
	case EINVAL:
		return "the kernel refused the value";
	case EPERM:
	case EACCES:
		return "the hook must run as root, as runtimes run hooks";
	case ELOOP:
		return "a symlink, refused";
	default:
		return NULL;
	}
}

/* Write one file for the annotation that asked; a message on failure. */
static int write_pref(const struct hook *h, const struct oci_annotation *from,
		      const char *file, const char *text)
{
	char k[256], v[256];
	const char *hint;
	int r;

	r = write_file_nofollow_at(h->dfd, file, text, strlen(text));
	if (r == 0)
		return 0;
	hint = write_hint(-r);
	say(EX_FAIL, "%s=\"%s\": writing %.*s to %s/%s: %s%s%s%s",
	    oci_quote(from->key, k, sizeof(k)),
	    oci_quote(from->value, v, sizeof(v)), (int)strcspn(text, "\n"),
	    text, h->dir, file, strerror(-r), hint ? " (" : "",
	    hint ? hint : "", hint ? ")" : "");
	return r;
}

/*
 * Mark, then the ratio, then the CPUs: softaffd never sees a value
 * without the mark, and the preference takes effect (the CPUs) with its
 * softness already in place.  A failed step undoes the earlier ones.
 */
static int apply(const struct hook *h, const struct oci_state *st,
		 const struct oci_request *req, const struct saved *s)
{
	char ratio[RATIO_BUFSZ + 1], cpus[CPUSET_LIST_BUFSZ + 1];
	bool ratio_written = false;
	int marked;

	ratio_req_line(&req->ratio, ratio, sizeof(ratio));
	cpuset_format_list(&req->cpus, cpus, sizeof(cpus) - 1);
	strcat(cpus, "\n");
	marked = mark(h, st, s);
	if (marked < 0)
		return say(EX_FAIL,
			   "container %s: %s: setting the " MARK_XATTR
			   " attribute: %s",
			   h->id, h->dir, strerror(-marked));
	if (req->has_ratio) {
		if (write_pref(h, req->ratio_from, RATIO_FILE, ratio) < 0)
			goto undo;
		ratio_written = true;
	}
	if (req->has_cpus && write_pref(h, req->cpus_from, CPUS_FILE, cpus) < 0)
		goto undo;
	return EX_OK;
undo:
	restore(h, s, marked, ratio_written);
	return EX_FAIL;
}

/* Everything after a state with io.softaff.* annotations was read. */
static int run(struct hook *h, const struct oci_state *st)
{
	struct oci_request req;
	struct saved saved = {0};
	int r;

	/* Bad annotations fail on every kernel: the same container must
	 * not start on one machine and fail on another. */
	r = decode(h, st, &req);
	if (r != EX_OK)
		return r;
	r = kernel_has_soft_affinity(&h->roots);
	if (r == 0) {
		say(EX_OK,
		    "warning: this kernel has no soft affinity; container %s "
		    "starts without its preference",
		    h->id);
		return EX_OK;
	}
	if (r < 0)
		return say(EX_FAIL,
			   "container %s: %s/sys/kernel/sched_preferred: %s",
			   h->id, h->roots.proc, strerror(-r));
	r = find_cgroup(h, st->pid);
	if (r == EX_OK)
		r = open_cgroup(h);
	if (r != EX_OK)
		return r;
	r = save(h, &saved);
	if (r == EX_OK)
		r = apply(h, st, &req, &saved);
	free(saved.mark.mark);
	close(h->dfd);
	return r;
}

int main(int argc, char **argv)
{
	struct hook h = {.dfd = -1};
	struct oci_state st;
	char err[1024], *text = NULL;
	size_t len = 0;
	int r;

	/* Messages name the container; a PID that lives for milliseconds
	 * would tell an admin nothing. */
	openlog(PROG, 0, LOG_DAEMON);
	r = parse_args(argc, argv, &h.roots);
	if (r != EX_OK)
		return r;
	r = read_state(&text, &len);
	if (r != EX_OK)
		return r;
	r = oci_state_parse(text, len, &st, err, sizeof(err));
	free(text);
	if (r == -ENOMEM)
		return say(EX_FAIL, "out of memory");
	if (r < 0)
		return say(EX_FAIL, "%s", err);
	oci_quote(st.id, h.id, sizeof(h.id));
	/* hooks.d runs the hook only with io.softaff.* annotations; but
	 * a hook configured by hand may run for every container. */
	if (st.nannotations)
		r = run(&h, &st);
	oci_state_free(&st);
	return r;
}
