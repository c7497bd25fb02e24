// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration files: the main one and what it @includes, held to
 * the trust of who may write them, then its drop-ins, which may only add
 * rules: config_load*().  config-parse.c and config-rules.c make the
 * struct of them; config.c is the struct.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-internal.h"
#include "util.h"

/* The largest configuration file read, included ones each. */
#define CONFIG_MAX_FILE (1 << 20)
/* libconfig's own limit on nested @include. */
#define CONFIG_MAX_INCLUDE_DEPTH 10

/*
 * Whoever can write the configuration decides which processes run where,
 * and what the daemon reads: it must be a regular file (the drop-in
 * directory a directory), owned by root
 * (or by the user running softaffd, so that tests and -t work for
 * anyone), and not writable by group or others.  0, or -EPERM with the
 * reason in err.
 */
static int check_file(const char *path, const struct stat *st, bool dir,
		      char *err, size_t errlen)
{
	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: not a %s; refusing it", path,
			 dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s: owned by uid %u, not root; refusing it", path,
			 (unsigned int)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "%s: writable by group or others (mode %04o); "
			 "refusing it (chmod go-w %s)",
			 path, (unsigned int)(st->st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/*
 * Open and check path, read it whole into *ret (malloc'd, NUL
 * terminated).  O_NONBLOCK: a FIFO must be refused, not waited on.
 * 0 or -errno with err set.
 */
static int read_checked(const char *path, char **ret, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = errno;
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(r));
		return -r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(-r));
		close(fd);
		return r;
	}
	r = check_file(path, &st, false, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (st.st_size > CONFIG_MAX_FILE) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 CONFIG_MAX_FILE);
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, buf, (size_t)st.st_size);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(-r));
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}

/*
 * The directory of an @included file, held to the file's own trust: the
 * check below reads the file, then libconfig opens it again by name
 * (1.5 has no hook to hand it the checked text), and whoever may write
 * the directory could put another file there in between.  0 or -EPERM
 * with err set.
 */
static int check_include_dir(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", dir,
			 strerror(errno));
		return -EPERM;
	}
	return check_file(dir, &st, true, err, errlen);
}

/*
 * Check every file text @includes (libconfig 1.5 opens them itself, so
 * this looks first): '@include "name"' at the start of a line, as
 * libconfig's scanner has it, relative to incdir.  A file that does not
 * exist is left to libconfig's own message.
 */
static int check_includes(const char *text, const char *incdir, int depth,
			  char *err, size_t errlen)
{
	const char *p = text;

	while (p && *p) {
		char name[PATH_MAX / 2], path[PATH_MAX];
		const char *q = p, *end;
		char *inc;
		int r;

		p = strchr(p, '\n');
		if (p)
			p++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "@include", 8))
			continue;
		q += 8;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '"' || !(end = strchr(q, '"')) ||
		    (size_t)(end - q) >= sizeof(name))
			continue;
		memcpy(name, q, (size_t)(end - q));
		name[end - q] = '\0';
		if (name[0] == '/' || !incdir ||
		    strlen(incdir) >= sizeof(path) - sizeof(name))
			snprintf(path, sizeof(path), "%s", name);
		else
			snprintf(path, sizeof(path), "%.*s/%s",
				 (int)(sizeof(path) - sizeof(name) - 1), incdir,
				 name);
		if (depth >= CONFIG_MAX_INCLUDE_DEPTH)
			return 0; /* libconfig says so itself */
		r = read_checked(path, &inc, err, errlen);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		r = check_include_dir(path, err, errlen);
		if (r == 0)
			r = check_includes(inc, incdir, depth + 1, err, errlen);
		free(inc);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Read path (checked, and the files it @includes) into cf, which this
 * initialises; on error cf is destroyed and err says why.
 */
static int read_file_cf(const char *path, config_t *cf, char *err,
			size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *incdir = NULL;
	char *text;
	int r;

	/* @include "x.conf" is relative to the including file's directory. */
	if (slash && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		incdir = slash == path ? "/" : dir;
	}
	r = read_checked(path, &text, err, errlen);
	if (r < 0)
		return r;
	r = check_includes(text, incdir, 1, err, errlen);
	if (r < 0) {
		free(text);
		return r;
	}
	config_init(cf);
	if (incdir)
		config_set_include_dir(cf, incdir);
	r = config_read_string(cf, text);
	free(text);
	if (!r) {
		r = conf_read_error(cf, path, err, errlen);
		config_destroy(cf);
		return r;
	}
	return 0;
}

int config_dropin_dir(const char *path, char *ret, size_t size)
{
	size_t n = strlen(path);

	if (n > 5 && !strcmp(path + n - 5, ".conf"))
		n -= 5;
	if ((size_t)snprintf(ret, size, "%.*s.d", (int)n, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dropin_name(const char *n)
{
	size_t len = strlen(n);

	/* Hidden files are editors' and package managers' scratch. */
	return n[0] != '.' && len > 5 && !strcmp(n + len - 5, ".conf");
}

/*
 * The *.conf names in dir, sorted bytewise (not by locale: the order
 * must not depend on LANG), into *ret; count or -errno with err set.
 * The directory is held to the same trust as the files: root's (or the
 * caller's), and not writable by group or others, or anyone could add
 * a rule.  A missing directory is no drop-ins.
 */
static int list_dropins(const char *dir, char ***ret, char *err, size_t errlen)
{
	char **names = NULL;
	struct dirent *de;
	struct stat st;
	int fd, n = 0, r = 0;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", dir,
			 strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	r = check_file(dir, &st, true, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char **grown;

		if (!is_dropin_name(de->d_name))
			continue;
		if (n == CONFIG_MAX_DROPINS) {
			snprintf(err, errlen, "%s: more than %d drop-ins", dir,
				 CONFIG_MAX_DROPINS);
			r = -E2BIG;
			break;
		}
		grown = realloc(names, (size_t)(n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			r = -ENOMEM;
			break;
		}
		names = grown;
		n++;
	}
	closedir(d);
	if (r < 0) {
		while (n--)
			free(names[n]);
		free(names);
		return r;
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	*ret = names;
	return n;
}

/* One drop-in: it may only add rules. */
static int load_dropin(const char *path, const struct topology *topo,
		       unsigned int flags, struct config *c, char *err,
		       size_t errlen)
{
	static const char *const keys[] = {"rules", NULL};
	config_t cf;
	config_setting_t *s;
	int r;

	c->files[c->nfiles] = strdup(path);
	if (!c->files[c->nfiles])
		return -ENOMEM;
	c->nfiles++;
	r = read_file_cf(path, &cf, err, errlen);
	if (r < 0)
		return r;
	struct ctx x = {path, config_get_include_dir(&cf), topo, err, errlen,
			flags};
	r = conf_check_keys(&x, config_root_setting(&cf), keys,
		       " in a drop-in (it may only add 'rules')");
	if (r == 0 && (s = config_lookup(&cf, "rules")))
		r = conf_parse_rules(&x, s, c);
	config_destroy(&cf);
	return r;
}

static int load_dropins(const char *path, const struct topology *topo,
			unsigned int flags, struct config *c, char *err,
			size_t errlen)
{
	char dir[PATH_MAX], file[PATH_MAX];
	char **names = NULL;
	int n, r = 0;

	if (config_dropin_dir(path, dir, sizeof(dir)) < 0)
		return 0;
	n = list_dropins(dir, &names, err, errlen);
	if (n < 0)
		return n;
	for (int i = 0; i < n && r == 0; i++) {
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir,
				     names[i]) >= sizeof(file)) {
			snprintf(err, errlen, "%s/%s: name too long", dir,
				 names[i]);
			r = -ENAMETOOLONG;
			break;
		}
		r = load_dropin(file, topo, flags, c, err, errlen);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int config_load(const char *path, const struct topology *topo,
		struct config **ret, char *err, size_t errlen)
{
	return config_load_flags(path, topo, 0, ret, err, errlen);
}

int config_load_flags(const char *path, const struct topology *topo,
		      unsigned int flags, struct config **ret, char *err,
		      size_t errlen)
{
	struct config *c;
	config_t cf;
	int r;

	r = read_file_cf(path, &cf, err, errlen);
	if (r < 0)
		return r;
	r = conf_load_main(&cf, path, topo, flags, &c, err, errlen);
	if (r < 0)
		return r;
	r = load_dropins(path, topo, flags, c, err, errlen);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int config_load_string(const char *text, const char *name,
		       const struct topology *topo, struct config **ret,
		       char *err, size_t errlen)
{
	config_t cf;
	int r;

	if (strstr(text, "@include")) {
		snprintf(err, errlen, "%s:0: @include not allowed here", name);
		return -EINVAL;
	}
	config_init(&cf);
	if (!config_read_string(&cf, text)) {
		r = conf_read_error(&cf, name, err, errlen);
		config_destroy(&cf);
		return r;
	}
	return conf_load_main(&cf, name, topo, 0, ret, err, errlen);
}

