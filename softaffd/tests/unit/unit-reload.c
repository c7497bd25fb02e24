// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reloads that change the rules (manager-reload.c): every managed
 * process matched again where it stands, the new preference written over
 * ours, only what matches nothing restored; and the full scan in
 * progress going on through reloads and SIGUSR1.
 */
#include "unit.h"

/* Every write through the seam, as "<full path> <data>" lines. */
static char wlog[1 << 16];
static size_t wlen;
static kfile_write_fn wnext;

static int rec_write(struct fd_plug *p, int dfd, const char *path,
		     const char *data, size_t len)
{
	char fdp[64], dir[PATH_MAX];
	ssize_t n;

	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", dfd);
	n = readlink(fdp, dir, sizeof(dir) - 1);
	dir[n < 0 ? 0 : n] = '\0';
	wlen += (size_t)snprintf(wlog + wlen, sizeof(wlog) - wlen,
				 "%s/%s %.*s", dir, path, (int)len, data);
	if (wlen >= sizeof(wlog))
		wlen = sizeof(wlog) - 1;
	return wnext(p, dfd, path, data, len);
}

static void wlog_start(void)
{
	if (kfile_write != rec_write) {
		wnext = kfile_write;
		kfile_write = rec_write;
	}
	wlen = 0;
	wlog[0] = '\0';
}

/* Writes to the files of process pid (either level); with what, those. */
static unsigned int writes_to(int pid, const char *what)
{
	char key[PATH_MAX];
	unsigned int n = 0;
	int len = snprintf(key, sizeof(key), "%s/%d/", proc, pid);

	for (const char *l = wlog; *l;) {
		const char *end = strchr(l, '\n');
		size_t ll = end ? (size_t)(end - l) + 1 : strlen(l);

		if (!strncmp(l, key, (size_t)len) &&
		    (!what || memmem(l, ll, what, strlen(what))))
			n++;
		l += ll;
	}
	return n;
}

/* Writes whose line has what in it (a path, a value). */
static unsigned int writes_with(const char *what)
{
	unsigned int n = 0;

	for (const char *l = strstr(wlog, what); l; l = strstr(l + 1, what))
		n++;
	return n;
}

/*
 * The mask that applies to single-threaded pid: its process level if it
 * asks for one (threads = "all" may be written there), else its thread's.
 */
static const char *pref(int pid)
{
	static char buf[256];
	char path[PATH_MAX];
	const char *s;

	snprintf(path, sizeof(path), "%s/%d/soft_affinity_list", proc, pid);
	s = get(path);
	if (s && strcmp(s, "\n")) {
		snprintf(buf, sizeof(buf), "%s", s);
		return buf;
	}
	s = soft_of(pid, pid);
	snprintf(buf, sizeof(buf), "%s", s ? s : "?");
	return buf;
}

void test_reload_atomic(void)
{
	struct config *c1, *c2, *c3;
	char err[512], path[PATH_MAX];
	uint64_t scans;

	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mkprocs(600, (const char *[]){"keep", "same", "move", "drop", "ratio",
				      "hand", NULL});
	mktask(605, 606, "hand", 1, 0, "0-3", "\n");
	mkprocs(607, (const char *[]){"new", "rest", NULL});
	c1 = mgr_setup(
		"rules = (\n"
		"{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; },\n"
		"{ name = \"a\"; comm = \"same\"; cpus = \"0\"; },\n"
		"{ name = \"mv\"; comm = \"move\"; cpus = \"0\"; },\n"
		"{ name = \"drop\"; comm = \"drop\"; cpus = \"0\"; },\n"
		"{ name = \"r\"; comm = \"ratio\"; cpus = \"2\"; softness = \"20:1\"; },\n"
		"{ name = \"h\"; comm = \"hand\"; cpus = \"0\"; }\n"
		");");
	if (!c1)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 6);
	CHECK_STR(pref(602), "0\n");
	CHECK_STR(get_at(proc, "/604/soft_affinity_ratio"), "20:1\n");
	/* A thread of 605 set by hand, and found so. */
	snprintf(path, sizeof(path), "%s/605/task/606/soft_affinity_list",
		 proc);
	put(path, "2-3\n");
	CHECK(mgr_scan(mgr) == 0 && mgr_hand_processes(mgr) == 1);

	/*
	 * New rules: keep is the same rule at another index; "same"
	 * falls under another rule with the same preference; "move" and
	 * "hand" get other CPUs, "ratio" another softness; nothing
	 * matches "drop" any more; "new" is matched now.
	 */
	c2 = load("rules = (\n"
		  "{ name = \"new\"; comm = \"new\"; cpus = \"3\"; },\n"
		  "{ name = \"b\"; comm = \"same\"; cpus = \"0\"; },\n"
		  "{ name = \"mv\"; comm = \"move\"; cpus = \"1\"; },\n"
		  "{ name = \"r\"; comm = \"ratio\"; cpus = \"2\"; softness = \"5:4\"; },\n"
		  "{ name = \"h\"; comm = \"hand\"; cpus = \"1\"; },\n"
		  "{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c2 != NULL);
	if (!c2)
		return;
	/* In the middle of a full scan, which goes on. */
	CHECK(mgr_scan_start(mgr, SCAN_FULL) == 0 &&
	      mgr_scan_step(mgr, 0) == 0);
	scans = mgr->cnt.scans;
	wlog_start();
	CHECK(mgr_reload(mgr, c2) == 0 && mgr->cfg == c2);
	CHECK(mgr_scan_busy_with(mgr, SCAN_FULL) && mgr->cnt.scans == scans);
	/* The same preference: not one write. */
	CHECK(writes_to(600, NULL) == 0 && writes_to(601, NULL) == 0);
	CHECK(mgr_lookup(mgr, 600) && mgr_lookup(mgr, 600)->rule == 5);
	CHECK(mgr_lookup(mgr, 601) && mgr_lookup(mgr, 601)->rule == 1);
	/* A new mask, written over ours: never inherit in between. */
	CHECK_STR(pref(602), "1\n");
	CHECK(writes_to(602, "soft_affinity_list 1\n") == 1);
	CHECK(writes_to(602, "inherit") == 0);
	CHECK(mgr_lookup(mgr, 602) && mgr_lookup(mgr, 602)->rule == 2);
	/* A new ratio alone: the ratio, and no mask. */
	CHECK_STR(get_at(proc, "/604/soft_affinity_ratio"), "5:4\n");
	CHECK(writes_to(604, NULL) == 1 &&
	      writes_to(604, "soft_affinity_ratio 5:4") == 1);
	CHECK_STR(pref(604), "2\n");
	/* Hand-set threads stay; the others take the new mask. */
	CHECK_STR(pref(605), "1\n");
	CHECK_STR(soft_of(605, 606), "2-3\n");
	CHECK(writes_to(605, "inherit") == 0 && mgr_hand_processes(mgr) == 1);
	/* Only what matches nothing is restored. */
	CHECK(mgr_lookup(mgr, 603) == NULL);
	CHECK_STR(pref(603), "\n");
	CHECK(writes_to(603, "inherit") >= 1);
	/* Counts under the new indexes. */
	CHECK(mgr_rule_processes(mgr, 0) == 0 &&
	      mgr_rule_processes(mgr, 1) == 1 &&
	      mgr_rule_processes(mgr, 2) == 1 &&
	      mgr_rule_processes(mgr, 3) == 1 &&
	      mgr_rule_processes(mgr, 4) == 1 &&
	      mgr_rule_processes(mgr, 5) == 1);
	CHECK(mgr_processes(mgr) == 5);
	/* What was not managed is the scan's: it goes on, and one more. */
	CHECK(mgr_lookup(mgr, 607) == NULL);
	CHECK(mgr_recheck(mgr) == 1);
	CHECK(mgr_scan_finish(mgr) == 0);
	CHECK(mgr_recheck(mgr) == 0 && mgr->cnt.scans == scans + 1);
	CHECK(mgr_scan_finish(mgr) == 0);
	CHECK(mgr_lookup(mgr, 607) && mgr_processes(mgr) == 6);
	CHECK_STR(pref(607), "3\n");
	CHECK_STR(pref(600), "0\n");
	CHECK_STR(pref(601), "0\n");
	CHECK_STR(soft_of(605, 606), "2-3\n");
	config_free(c1);

	/*
	 * Back and forth: alternating between two configurations, the
	 * processes both match are never restored.
	 */
	c3 = load("rules = (\n"
		  "{ name = \"keep\"; comm = \"keep\"; cpus = \"0\"; },\n"
		  "{ name = \"mv\"; comm = \"move\"; cpus = \"2\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c3 != NULL);
	if (!c3)
		return;
	wlog_start();
	for (int i = 0; i < 4; i++) {
		CHECK(mgr_reload(mgr, i % 2 ? c2 : c3) == 0);
		CHECK(mgr_lookup(mgr, 600) && mgr_lookup(mgr, 602));
		CHECK_STR(pref(602), i % 2 ? "1\n" : "2\n");
	}
	CHECK(writes_to(600, NULL) == 0);
	CHECK(writes_to(602, "inherit") == 0);
	CHECK(writes_to(602, "soft_affinity_list") >= 4);
	mgr_teardown(c2, c3);
}

/*
 * SIGUSR1 during a full scan (the first one, say): hand-set masks are
 * forgotten, the scan goes on and one more follows; a restart at every
 * signal would let none end.
 */
void test_readopt_keeps_scan(void)
{
	struct config *c;
	char path[PATH_MAX];
	uint64_t scans;
	int steps = 0;

	fake_fixture();
	for (int p = 700; p < 760; p++)
		mktask(p, p, "app", (unsigned)p, 0, "0-3", "\n");
	/* "main": adoption takes the main thread's mask, whoever set it. */
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0\"; threads = \"main\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 60);
	snprintf(path, sizeof(path), "%s/700/task/700/soft_affinity_list",
		 proc);
	put(path, "2-3\n");
	CHECK(mgr_scan(mgr) == 0 && mgr_hand_processes(mgr) == 1);

	CHECK(mgr_scan_start(mgr, SCAN_FULL) == 0 &&
	      mgr_scan_step(mgr, 0) == 0);
	scans = mgr->cnt.scans;
	/* A signal every step: the scan still ends. */
	while (mgr_scan_busy(mgr) && steps < 1000) {
		if (steps % 2 == 0) {
			mgr_forget_hand(mgr);
			CHECK(mgr_recheck(mgr) == 1);
		}
		mgr_scan_step(mgr, 0);
		steps++;
	}
	CHECK(!mgr_scan_busy(mgr) && steps < 100);
	CHECK(mgr->cnt.scans == scans);
	CHECK(mgr_hand_processes(mgr) == 0);
	/* The one more after it re-adopts what the first had passed. */
	CHECK(mgr_recheck(mgr) == 0 && mgr_scan_finish(mgr) == 0);
	CHECK_STR(pref(700), "0\n");
	CHECK(mgr_hand_processes(mgr) == 0 && mgr_processes(mgr) == 60);
	mgr_teardown(c, NULL);
}

#define CG "/fs/cgroup/system.slice/test.service/"

/*
 * A rule that acts on a cgroup, changed by a reload: the cgroup takes
 * the new preference at once, written over ours; a rule on the threads
 * instead: they take it, then the cgroup gets back what it had.
 */
void test_reload_cgroup(void)
{
	struct config *c1, *c2, *c3;
	char err[512];
	uint64_t restored;

	fake_fixture();
	mktask(900, 900, "svc", 10, 0, "0-3", "\n");
	put_sys(CG "cpuset.cpus.preferred", "\n");
	put_sys(CG "cpuset.cpus.preferred.ratio", "\n");
	put_sys(CG "cpu.stat", "usage_usec 0\n");
	c1 = mgr_setup("rules = ( { name = \"u1\"; unit = \"test.service\"; "
		       "nodes = [ 1 ]; softness = \"20:1\"; } );");
	if (!c1)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 1 && mgr->ncgs == 1);
	CHECK_STR(get_at(sys, CG "cpuset.cpus.preferred"), "2-3\n");
	CHECK(mgr_lookup(mgr, 900) && (mgr_lookup(mgr, 900)->flags & M_CGROUP));

	/* Another rule, other CPUs: written over ours, no restore first. */
	c2 = load("rules = (\n"
		  "{ name = \"x\"; comm = \"nothing\"; cpus = \"3\"; },\n"
		  "{ name = \"u2\"; unit = \"test.service\"; nodes = [ 0 ]; "
		  "softness = \"20:1\"; } );",
		  err, sizeof(err));
	CHECK(c2 != NULL);
	if (!c2)
		return;
	restored = mgr->cnt.restored;
	wlog_start();
	CHECK(mgr_reload(mgr, c2) == 0);
	CHECK_STR(get_at(sys, CG "cpuset.cpus.preferred"), "0-1\n");
	CHECK(writes_with("cpuset.cpus.preferred 0-1") == 1);
	CHECK(writes_with("cpuset.cpus.preferred inherit") == 0);
	CHECK(writes_with("cpuset.cpus.preferred \n") == 0);
	CHECK(writes_to(900, NULL) == 0 && mgr->cnt.restored == restored);
	CHECK(mgr->ncgs == 1 && mgr->cgs[0].rule == 1);
	CHECK(mgr_lookup(mgr, 900) && mgr_lookup(mgr, 900)->rule == 1 &&
	      (mgr_lookup(mgr, 900)->flags & M_CGROUP));
	CHECK(mgr_rule_processes(mgr, 1) == 1);
	config_free(c1);

	/* A rule on its threads now: they first, then the cgroup back. */
	c3 = load("rules = ( { name = \"t\"; comm = \"svc\"; cpus = \"1\"; } );",
		  err, sizeof(err));
	CHECK(c3 != NULL);
	if (!c3)
		return;
	wlog_start();
	CHECK(mgr_reload(mgr, c3) == 0);
	CHECK_STR(pref(900), "1\n");
	CHECK(mgr_lookup(mgr, 900) && !(mgr_lookup(mgr, 900)->flags & M_CGROUP));
	CHECK(mgr->ncgs == 0 && mgr->cnt.restored == restored + 1);
	CHECK_STR(get_at(sys, CG "cpuset.cpus.preferred"), "\n");
	{
		const char *t = strstr(wlog, "/900/");
		const char *g = strstr(wlog, "cpuset.cpus.preferred ");

		CHECK(t && g && t < g);
	}
	mgr_teardown(c2, c3);
}

/*
 * F5: a child forked from a managed process that matches no rule keeps
 * the parent's mask (fork copies the process level).  A reload that
 * changes the rules must not forget it: a stop after it still resets
 * the mask, under the rule that now carries those CPUs; and the mask of
 * a rule the reload removes is reset by the reload itself.
 */
void test_reload_keeps_inherited(void)
{
	struct config *c1, *c2, *c3;
	char err[512];

	fake_fixture();
	mktask(800, 800, "app", 80, 0, "0-3", "\n");
	mktask(900, 900, "db", 90, 0, "0-3", "\n");
	c1 = mgr_setup("rules = (\n"
		       "{ name = \"app\"; comm = \"app\"; cpus = \"0-1\"; },\n"
		       "{ name = \"db\"; comm = \"db\"; cpus = \"2\"; }\n"
		       ");");
	if (!c1)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_processes(mgr) == 2);
	CHECK_STR(psoft_of(800), "0-1\n");
	/*
	 * Children that match no rule but kept their parent's mask (fork
	 * copies the process level; their events were missed, the scan
	 * finds them by their ppid).
	 */
	fixture_ppid = 800;
	mktask(810, 810, "worker", 81, 0, "0-3", "\n");
	set_psoft(810, "0-1\n");
	fixture_ppid = 900;
	mktask(910, 910, "worker", 91, 0, "0-3", "\n");
	set_psoft(910, "2\n");
	fixture_ppid = 0;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(!mgr_lookup(mgr, 810) && !mgr_lookup(mgr, 910));
	CHECK_STR(psoft_of(810), "0-1\n");
	CHECK_STR(psoft_of(910), "2\n");

	/* A new rule ahead (indexes move); "db" is removed. */
	c2 = load("rules = (\n"
		  "{ name = \"new\"; comm = \"new\"; cpus = \"3\"; },\n"
		  "{ name = \"app\"; comm = \"app\"; cpus = \"0-1\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c2 != NULL);
	if (!c2)
		return;
	CHECK(mgr_reload(mgr, c2) == 0);
	/* The removed rule's mask goes with it; the kept one's stays. */
	CHECK_STR(psoft_of(910), "\n");
	CHECK_STR(psoft_of(810), "0-1\n");
	/* What matched nothing is evaluated again by the next scan. */
	CHECK(mgr_scan(mgr) == 0 && !mgr_lookup(mgr, 810));
	/* A second reload, then the stop: the child's mask is reset. */
	c3 = load("rules = (\n"
		  "{ name = \"app\"; comm = \"app\"; cpus = \"0-1\"; },\n"
		  "{ name = \"other\"; comm = \"other\"; cpus = \"2\"; }\n"
		  ");",
		  err, sizeof(err));
	CHECK(c3 != NULL);
	if (!c3)
		return;
	CHECK(mgr_reload(mgr, c3) == 0);
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(800), "\n");
	CHECK_STR(psoft_of(810), "\n");
	config_free(c1);
	config_free(c2);
	mgr_teardown(c3, NULL);
}

/*
 * F8: a grandchild booked at its fork event (from a parent that matched
 * no rule but carries a rule's mask) was never read: its start time is
 * not known.  After a lost exit event its pid may be a stranger's, whose
 * request equals the rule's CPUs by chance: a stop must leave it.
 */
void test_restore_inherited_identity(void)
{
	struct config *c = mgr_setup_app(800, 80);

	if (!c)
		return;
	fixture_ppid = 800;
	mktask(810, 810, "worker", 81, 0, "0-3", "\n");
	set_psoft(810, "0-1\n");
	fixture_ppid = 0;
	CHECK(mgr_scan(mgr) == 0 && !mgr_lookup(mgr, 810));
	/* 810 forks 820, booked unread; 820's exit event is lost. */
	mgr_on_fork(mgr, 810, 820, 820);
	mktask(820, 820, "stranger", 999, 0, "0-3", "\n");
	set_psoft(820, "0-1\n");
	mgr_restore_all(mgr);
	CHECK_STR(psoft_of(810), "\n");
	CHECK_STR(psoft_of(820), "0-1\n");
	mgr_teardown(c, NULL);
}
