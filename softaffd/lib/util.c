// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void roots_default(struct roots *r)
{
	snprintf(r->proc, sizeof(r->proc), "/proc");
	snprintf(r->sys, sizeof(r->sys), "/sys");
	snprintf(r->run, sizeof(r->run), "/run/softaffd");
}

int cgroup_file_path(char *path, size_t size, const char *sys, const char *cg,
		     const char *file)
{
	if ((size_t)snprintf(path, size, "%s/fs/cgroup%s/%s", sys,
			     strcmp(cg, "/") ? cg : "", file) >= size)
		return -ENAMETOOLONG;
	return 0;
}

ssize_t read_file(const char *path, char *buf, size_t size)
{
	return read_file_at(AT_FDCWD, path, buf, size);
}

/* Close fds[0..n), sorted, a run of consecutive numbers a call. */
static void close_sorted(const int *fds, unsigned int n)
{
	unsigned int i = 0;

	while (i < n) {
		unsigned int j = i;

		while (j + 1 < n && fds[j + 1] == fds[j] + 1)
			j++;
		/*
		 * Every number of the run is ours, so close_range() closes
		 * nothing else.  A kernel or a seccomp filter without it:
		 * one by one.
		 */
		if (j == i || close_range((unsigned int)fds[i],
					  (unsigned int)fds[j], 0) < 0)
			for (unsigned int k = i; k <= j; k++)
				close(fds[k]);
		i = j + 1;
	}
}

static void plug_flush(struct fd_plug *p)
{
	qsort(p->fds, p->n, sizeof(p->fds[0]), cmp_int);
	close_sorted(p->fds, p->n);
	p->n = 0;
}

void fd_plug(struct fd_plug *p, bool writes)
{
	p->n = 0;
	p->writes = writes;
}

void fd_unplug(struct fd_plug *p)
{
	plug_flush(p);
}

void fd_close_later(struct fd_plug *p, int fd)
{
	if (fd < 0)
		return;
	if (!p) {
		close(fd);
		return;
	}
	if (p->n == FD_PLUG_MAX)
		plug_flush(p);
	p->fds[p->n++] = fd;
}

/* record: the file is one record (read_record_at()). */
static ssize_t read_file_flags(struct fd_plug *p, int dfd, const char *path,
			       int flags, bool record, char *buf, size_t size)
{
	size_t off = 0;
	int fd;

	if (!size)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO planted where a file is expected must not hang. */
	fd = openat(dfd, path,
		    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
	if (fd < 0)
		return -errno;
	while (off < size - 1) {
		size_t want = size - 1 - off;
		ssize_t n = read(fd, buf + off, want);

		if (n < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		if (record && (size_t)n < want)
			break;
	}
	fd_close_later(p, fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

ssize_t read_file_at(int dfd, const char *path, char *buf, size_t size)
{
	return read_file_flags(NULL, dfd, path, 0, false, buf, size);
}

ssize_t read_record_at(int dfd, const char *path, char *buf, size_t size)
{
	return read_file_flags(NULL, dfd, path, 0, true, buf, size);
}

ssize_t read_file_plug(struct fd_plug *p, int dfd, const char *path,
		       char *buf, size_t size)
{
	return read_file_flags(p, dfd, path, 0, false, buf, size);
}

ssize_t read_record_plug(struct fd_plug *p, int dfd, const char *path,
			 char *buf, size_t size)
{
	return read_file_flags(p, dfd, path, 0, true, buf, size);
}

ssize_t read_file_nofollow_at(int dfd, const char *name, char *buf,
			      size_t size)
{
	return read_file_flags(NULL, dfd, name, O_NOFOLLOW, false, buf,
			       size);
}

int write_file(const char *path, const char *data, size_t len)
{
	return write_file_at(AT_FDCWD, path, data, len);
}

static int write_file_flags(struct fd_plug *p, int dfd, const char *path,
			    int flags, const char *data, size_t len)
{
	ssize_t n;
	int fd, r = 0;

	/* O_TRUNC as a shell redirect does: procfs ignores it, files need it. */
	fd = openat(dfd, path,
		    O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | flags);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (p && p->writes) {
		fd_close_later(p, fd);
		return r;
	}
	if (close(fd) < 0 && !r && errno != EINTR)
		r = -errno;
	return r;
}

int write_file_at(int dfd, const char *path, const char *data, size_t len)
{
	return write_file_flags(NULL, dfd, path, 0, data, len);
}

int write_file_plug(struct fd_plug *p, int dfd, const char *path,
		    const char *data, size_t len)
{
	return write_file_flags(p, dfd, path, 0, data, len);
}

kfile_write_fn kfile_write = write_file_plug;

int write_file_nofollow_at(int dfd, const char *name, const char *data,
			   size_t len)
{
	/*
	 * O_NONBLOCK: opening a FIFO planted there fails (ENXIO) instead
	 * of waiting for a reader; regular and kernfs files ignore it.
	 */
	return write_file_flags(NULL, dfd, name, O_NOFOLLOW | O_NONBLOCK, data,
				len);
}

int open_dir_beneath(int dfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* glibc 2.36 has no openat2() wrapper. */
	fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	return 0;
}

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t now_ms(void)
{
	return monotonic_ns() / 1000000;
}

uint64_t budget_left(struct budget *b, uint64_t now)
{
	uint64_t limit_ns = (uint64_t)b->limit_ms * 1000000;

	if (now - b->start_ms >= b->window_ms) {
		b->start_ms = now;
		b->used_ns = 0;
	}
	return b->used_ns >= limit_ns ? 0 : (limit_ns - b->used_ns) / 1000000;
}

void budget_charge_since(struct budget *b, uint64_t start_ns)
{
	b->used_ns += monotonic_ns() - start_ns;
}

uint64_t budget_renews(const struct budget *b)
{
	return b->start_ms + b->window_ms;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t avail = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->buf ? b->buf + b->len : NULL, avail, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < avail) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = b->cap ? b->cap * 2 : 256;
		while (ncap < b->len + (size_t)n + 1)
			ncap *= 2;
		char *nb = realloc(b->buf, ncap);
		if (!nb) {
			b->oom = true;
			return;
		}
		b->buf = nb;
		b->cap = ncap;
	}
}

void sbuf_free(struct sbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}
