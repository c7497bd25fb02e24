// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fixture: a temporary /proc and /sys, tasks in it, a write seam
 * that fails on demand, the two-node topology, a manager over them.
 */
#include "unit.h"

char tmp[PATH_MAX];
char proc[PATH_MAX];
char sys[PATH_MAX];

void mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

void put(const char *path, const char *content)
{
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	f = fopen(path, "w");
	if (!f) {
		printf("# cannot write %s\n", path);
		exit(1);
	}
	fputs(content, f);
	fclose(f);
}

const char *get(const char *path)
{
	static char buf[4096];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	return buf;
}

int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s;
	(void)f;
	(void)w;
	return remove(p);
}

void fixture_reset(void)
{
	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	mkdirs(proc);
	mkdirs(sys);
}

/* A stat line with the fields the daemon reads; the rest are zero. */
/* The ppid the next mktask() writes (0: 1). */
int fixture_ppid;

void stat_line(char *buf, size_t size, int pid, const char *comm,
	       unsigned long flags, unsigned long long start,
	       unsigned int policy)
{
	size_t off = (size_t)snprintf(buf, size, "%d (%s) S", pid, comm);

	for (int f = 4; f <= 52; f++) {
		unsigned long long v = 0;

		if (f == 4)
			v = fixture_ppid ? (unsigned long long)fixture_ppid : 1;
		else if (f == 9)
			v = flags;
		else if (f == 22)
			v = start;
		else if (f == 41)
			v = policy;
		off += (size_t)snprintf(buf + off, size - off, " %llu", v);
	}
	snprintf(buf + off, size - off, "\n");
}

/*
 * What a fresh task's status shows of soft affinity (ABI v4): no level
 * asks for anything, the sysctls' ratio applies.
 */
#define STATUS_PREFERRED                                              \
	"Cpus_preferred:\tf\nCpus_preferred_list:\t0-3\n"             \
	"Cpus_preferred_source:\tnone\nCpus_preferred_ratio:\t100:1\n" \
	"Cpus_preferred_ratio_source:\tdefault\n"

/*
 * Add a task; the leader (tid == pid) also gets the process files.
 * soft is the thread's own request, task/TID/soft_affinity_list, as
 * the kernel reads it: "\n" (inherit, as threads start), "none\n" or
 * a list; NULL: no such file (a kernel without soft affinity).
 */
void mktask(int pid, int tid, const char *comm, unsigned long long start,
	    unsigned int policy, const char *hard, const char *soft)
{
	char path[PATH_MAX], buf[1024];

	stat_line(buf, sizeof(buf), tid, comm, 0, start, policy);
	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc, pid, tid);
	put(path, buf);
	snprintf(buf, sizeof(buf),
		 "Name:\t%s\nUid:\t1000\t1000\t1000\t1000\n"
		 "Cpus_allowed:\tf\nCpus_allowed_list:\t%s\n" STATUS_PREFERRED,
		 comm, hard);
	snprintf(path, sizeof(path), "%s/%d/task/%d/status", proc, pid, tid);
	put(path, buf);
	if (soft) {
		snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list",
			 proc, pid, tid);
		put(path, soft);
		snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_ratio",
			 proc, pid, tid);
		put(path, "\n");
	}
	/* The process level inherits, mask and ratio, as processes start. */
	if (soft && pid == tid) {
		snprintf(path, sizeof(path), "%s/%d/soft_affinity_list", proc,
			 pid);
		put(path, "\n");
		snprintf(path, sizeof(path), "%s/%d/soft_affinity_ratio", proc,
			 pid);
		put(path, "\n");
	}
	if (pid == tid) {
		stat_line(buf, sizeof(buf), pid, comm, 0, start, policy);
		snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
		put(path, buf);
		snprintf(path, sizeof(path), "%s/%d/status", proc, pid);
		snprintf(buf, sizeof(buf),
			 "Name:\t%s\nUid:\t1000\t1000\t1000\t1000\n"
			 "Cpus_allowed_list:\t%s\n" STATUS_PREFERRED,
			 comm, hard);
		put(path, buf);
		snprintf(path, sizeof(path), "%s/%d/cmdline", proc, pid);
		put(path, comm);
		snprintf(path, sizeof(path), "%s/%d/cgroup", proc, pid);
		put(path, "0::/system.slice/test.service\n");
	}
}

void mkprocs(int pid, const char *const *comms)
{
	for (; *comms; comms++, pid++)
		mktask(pid, pid, *comms, 1, 0, "0-3", "\n");
}

const char *soft_of(int pid, int tid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/task/%d/soft_affinity_list", proc,
		 pid, tid);
	return get(path);
}

const char *psoft_of(int pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/soft_affinity_list", proc, pid);
	return get(path);
}

void set_psoft(int pid, const char *req)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/soft_affinity_list", proc, pid);
	put(path, req);
}

/* ---- write seam ---- */

int fake_err;	/* next writes fail with this */
int fake_writes; /* attempted writes */
const char *fake_fail_on; /* writes to paths with this fail EINVAL */

/* The plug of the last write, and the fds waiting on it then. */
struct fd_plug *fake_plug;
unsigned int fake_plug_waiting;

static int fake_write(struct fd_plug *p, int dfd, const char *path,
		      const char *data, size_t len)
{
	FILE *f;
	int fd;

	fake_writes++;
	fake_plug = p;
	fake_plug_waiting = p ? p->n : 0;
	if (fake_err)
		return fake_err;
	if (fake_fail_on && strstr(path, fake_fail_on))
		return -EINVAL;
	/* As the kernel keeps and reads it: inherit is an empty line. */
	if (len == 8 && !memcmp(data, "inherit\n", 8))
		data = "\n", len = 1;
	/* procfs ignores the offset; a plain file must be truncated. */
	fd = openat(dfd, path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r+");
	if (!f) {
		close(fd);
		return -errno;
	}
	if (ftruncate(fileno(f), 0) < 0 || fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return 0;
}

/* An empty fixture tree, writes through the fake seam that succeeds. */
void fake_fixture(void)
{
	fixture_reset();
	kfile_write = fake_write;
	fake_err = 0;
	fake_writes = 0;
	fake_fail_on = NULL;
}

struct topology topo;

struct config *load(const char *text, char *err, size_t errlen)
{
	struct config *c = NULL;

	if (config_load_string(text, "t.conf", &topo, &c, err, errlen) < 0)
		return NULL;
	return c;
}

/* Write a file of the fake /sys root, e.g. "/devices/system/cpu/online". */
void put_sys(const char *rel, const char *content)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", sys, rel);
	put(path, content);
}

void two_node_topo(void)
{
	topology_done(&topo);
	if (topology_alloc(&topo, 2) < 0)
		abort();
	topo.ids[0] = 0;
	topo.ids[1] = 1;
	cpuset_parse_list("0-1", &topo.node_cpus[0]);
	cpuset_parse_list("2-3", &topo.node_cpus[1]);
	cpuset_parse_list("0-3", &topo.all);
	topo.node_present[0] = topo.node_cpus[0];
	topo.node_present[1] = topo.node_cpus[1];
	topo.present = topo.all;
}

struct mgr *mgr;

struct config *mgr_setup_dry(const char *text, bool dry_run)
{
	struct roots r;
	char err[512];
	struct config *c;

	c = load(text, err, sizeof(err));
	if (!c) {
		printf("# %s\n", err);
		return NULL;
	}
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s/run", tmp);
	mgr = mgr_new(&r, c, dry_run ? AFF_MODE_DRY_RUN : AFF_MODE_WRITE,
		      NULL);
	memset(tsoft, 0, sizeof(tsoft));
	tsoft_cfg = c;
	return c;
}

int mgr_scan(struct mgr *m)
{
	int r = mgr_scan_start(m, SCAN_FULL);

	return r < 0 ? r : mgr_scan_finish(m);
}

void mgr_eval_pid(struct mgr *m, int pid)
{
	mgr_eval_now(m, pid, D_EVAL, 0, WALK_ALL);
}

size_t mgr_readopt(struct mgr *m)
{
	size_t had = mgr_forget_hand(m);

	mgr_scan_start(m, SCAN_FULL);
	return had;
}

struct tsoft tsoft[CONFIG_MAX_RULES];
const struct config *tsoft_cfg;

void tsample(uint64_t now, bool exact)
{
	static struct rule_sampled out[CONFIG_MAX_RULES];

	for (unsigned int r = 0; r < tsoft_cfg->nrules; r++)
		mgr_rule_plan(mgr, r,
			      rulectl_plan(&tsoft_cfg->rules[r], &tsoft[r].ctl,
					   tsoft[r].asleep));
	mgr_sample(mgr, now, exact, out);
	for (unsigned int r = 0; r < tsoft_cfg->nrules; r++) {
		tsoft[r].woken = out[r].woken;
		if (out[r].woken)
			tsoft[r].asleep = false;
		tsoft[r].sampled_now = out[r].sampled;
		if (out[r].sampled)
			tsoft[r].last = out[r].fig;
	}
}

struct config *mgr_setup(const char *text)
{
	return mgr_setup_dry(text, false);
}

struct config *mgr_setup_app(int pid, unsigned long long start)
{
	struct config *c;

	fake_fixture();
	mktask(pid, pid, "app", start, 0, "0-3", "\n");
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; } );");
	if (c)
		CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1);
	return c;
}

void mgr_teardown(struct config *c1, struct config *c2)
{
	mgr_free(mgr);
	mgr = NULL;
	config_free(c1);
	config_free(c2);
	kfile_write = write_file_plug;
}

/* The status text of the manager's state, as the daemon formats it. */
void mgr_status(const struct mgr *m, struct sbuf *b)
{
	double *util = calloc(topo.nnodes + 1, sizeof(*util));
	struct status_rule rules[CONFIG_MAX_RULES] = {{0}};
	struct status_snapshot s = {
		.cfg = m->cfg,
		.topo = &topo,
		.node_util = util,
		.rules = rules,
		.processes = mgr_processes(m),
		.hand_processes = mgr_hand_processes(m),
		.cnt = mgr_counters(m),
	};
	int *pids = NULL;
	int n = mgr_status_pids(m, &pids);

	for (unsigned int r = 0; r < m->cfg->nrules; r++)
		rules[r].processes = mgr_rule_processes(m, r);

	s.pids = pids;
	s.npids = n > 0 ? (unsigned int)n : 0;
	status_format(&s, b);
	free(pids);
	free(util);
}

void put_proc(const char *rel, const char *content)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", proc, rel);
	put(path, content);
}

/* A thread's schedstat, and a sched that counted one spill. */
void put_sched(int pid, int tid, const char *schedstat,
	       const char *outside_ms)
{
	char rel[128], buf[512];

	snprintf(rel, sizeof(rel), "/%d/task/%d/schedstat", pid, tid);
	put_proc(rel, schedstat);
	snprintf(buf, sizeof(buf),
		 "x (%d, #threads: 1)\n---\n"
		 "nr_migrations_soft_spill                     :                    1\n"
		 "soft_outside_runtime                         :          %s\n",
		 tid, outside_ms);
	snprintf(rel, sizeof(rel), "/%d/task/%d/sched", pid, tid);
	put_proc(rel, buf);
}

/* A PSI file (cpu.pressure, /proc/pressure/cpu) whose "some" total is some_us. */
const char *psi_text(uint64_t some_us)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		 (unsigned long long)some_us);
	return buf;
}

const char *get_at(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	return get(path);
}

const char *ratio_of(int pid)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "/%d/soft_affinity_ratio", pid);
	return get_at(proc, rel);
}

bool xattr_ok(const char *dir)
{
	int r = lsetxattr(dir, "user.softaffd-unit", "1", 1, 0);

	if (r == 0)
		lremovexattr(dir, "user.softaffd-unit");
	return r == 0;
}
