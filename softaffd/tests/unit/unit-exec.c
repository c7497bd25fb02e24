// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event path's economies: closes put off to the end of a snapshot
 * (util.h's fd plug), status read in one pass, and what that status
 * says of the requests, which spares reading their files
 * (manager-eval.c's snap_learn()).
 */
#include <dirent.h>

#include "unit.h"

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int open_null(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* How many fds this process has open. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

void test_fd_plug(void)
{
	struct fd_plug p, inner;
	int a, b, c, x, y, w, fds[FD_PLUG_MAX + 1], before;
	char path[PATH_MAX], buf[64];

	/* No plug: closed at once. */
	a = open_null();
	fd_close_later(NULL, a);
	CHECK(!fd_open(a));

	/* Closed when the plug goes, in any order given. */
	a = open_null(), b = open_null(), c = open_null();
	fd_plug(&p, false);
	fd_close_later(&p, c);
	fd_close_later(&p, a);
	fd_close_later(&p, b);
	CHECK(fd_open(a) && fd_open(b) && fd_open(c));
	fd_unplug(&p);
	CHECK(!fd_open(a) && !fd_open(b) && !fd_open(c));

	/* A gap between them is someone else's: left open. */
	x = open_null(), w = open_null(), y = open_null();
	close(w);
	fd_plug(&p, false);
	fd_close_later(&p, x);
	fd_close_later(&p, y);
	w = open_null(); /* takes the gap */
	fd_unplug(&p);
	CHECK(!fd_open(x) && !fd_open(y) && fd_open(w));
	close(w);

	/* Full: the ones waiting are closed there and then. */
	fd_plug(&p, false);
	for (int i = 0; i <= FD_PLUG_MAX; i++)
		fds[i] = open_null();
	for (int i = 0; i <= FD_PLUG_MAX; i++)
		fd_close_later(&p, fds[i]);
	CHECK(!fd_open(fds[0]) && !fd_open(fds[FD_PLUG_MAX - 1]) &&
	      fd_open(fds[FD_PLUG_MAX]));
	fd_unplug(&p);
	CHECK(!fd_open(fds[FD_PLUG_MAX]));

	/*
	 * F10: two plugs are two, each closing what it was handed (a plug
	 * in a process-wide variable let the first one take the second's).
	 */
	fd_plug(&p, false);
	fd_plug(&inner, false);
	a = open_null(), b = open_null();
	fd_close_later(&inner, a);
	fd_close_later(&p, b);
	fd_unplug(&inner);
	CHECK(!fd_open(a) && fd_open(b));
	fd_unplug(&p);
	CHECK(!fd_open(b));

	/* The readers leave theirs if handed one; writes if it says so. */
	fixture_reset();
	snprintf(path, sizeof(path), "%s/f", tmp);
	put(path, "x\n");
	before = count_fds();
	fd_plug(&p, false);
	CHECK(read_record_at(AT_FDCWD, path, buf, sizeof(buf)) == 2);
	CHECK(count_fds() == before);
	CHECK(read_record_plug(&p, AT_FDCWD, path, buf, sizeof(buf)) == 2);
	CHECK(count_fds() == before + 1);
	CHECK(write_file_plug(&p, AT_FDCWD, path, "y\n", 2) == 0);
	CHECK(count_fds() == before + 1);
	fd_unplug(&p);
	CHECK(count_fds() == before);
	fd_plug(&p, true);
	CHECK(write_file_at(AT_FDCWD, path, "w\n", 2) == 0);
	CHECK(count_fds() == before);
	CHECK(write_file_plug(&p, AT_FDCWD, path, "z\n", 2) == 0);
	CHECK(count_fds() == before + 1);
	fd_unplug(&p);
	CHECK(count_fds() == before);
	CHECK_STR(get(path), "z\n");
}

void test_status_prefs(void)
{
	static const char *const src[] = {"thread", "process", "cgroup",
					  "none", "default", "x", ""};
	struct pstatus ps;
	char buf[512];
	const char *v;

	/* A kernel without soft affinity: nothing known. */
	CHECK(procfs_parse_pstatus("Uid:\t7\nCpus_allowed_list:\t2\n", &ps) ==
	      0);
	CHECK(ps.mask_src == PREF_SRC_UNKNOWN &&
	      ps.ratio_src == PREF_SRC_UNKNOWN);
	/* The words of each line ("none" is the mask's, "default" the ratio's). */
	for (size_t i = 0; i < ARRAY_SIZE(src); i++) {
		static const enum pref_source mask[] = {
			PREF_SRC_THREAD, PREF_SRC_PROCESS, PREF_SRC_CGROUP,
			PREF_SRC_NONE,	 PREF_SRC_UNKNOWN, PREF_SRC_UNKNOWN,
			PREF_SRC_UNKNOWN};
		static const enum pref_source ratio[] = {
			PREF_SRC_THREAD,  PREF_SRC_PROCESS, PREF_SRC_CGROUP,
			PREF_SRC_UNKNOWN, PREF_SRC_NONE,    PREF_SRC_UNKNOWN,
			PREF_SRC_UNKNOWN};

		snprintf(buf, sizeof(buf),
			 "Uid:\t7\nCpus_allowed_list:\t2\n"
			 "Cpus_preferred_source:\t%s\n"
			 "Cpus_preferred_ratio:\t5:4\n"
			 "Cpus_preferred_ratio_source:\t%s\n",
			 src[i], src[i]);
		CHECK(procfs_parse_pstatus(buf, &ps) == 0);
		CHECK(ps.mask_src == mask[i] && ps.ratio_src == ratio[i]);
	}
	CHECK(ps.ratio_allowed == 5 && ps.ratio_preferred == 4);
	/* A ratio that does not parse: its source is not believed. */
	CHECK(procfs_parse_pstatus("Uid:\t7\nCpus_allowed_list:\t2\n"
				   "Cpus_preferred_ratio:\t5:x\n"
				   "Cpus_preferred_ratio_source:\tprocess\n",
				   &ps) == 0 &&
	      ps.ratio_src == PREF_SRC_UNKNOWN);
	CHECK(procfs_parse_pstatus("Uid:\t7\nCpus_allowed_list:\t2\n"
				   "Cpus_preferred_ratio_source:\tprocess\n",
				   &ps) == 0 &&
	      ps.ratio_src == PREF_SRC_UNKNOWN);
	/* One pass finds what procfs_status_field() does: first, whole keys. */
	v = "Name:\tCpus_allowed_list: 9\nUid:\t5\t5\t5\t5\n"
	    "Cpus_preferred_ratio_source:\tcgroup\nThreads:\t3\n"
	    "Cpus_allowed_list:\t1\nCpus_allowed_list:\t2\n"
	    "Cpus_preferred_ratio:\t7:1\nState:\tR (running)";
	CHECK(procfs_parse_pstatus(v, &ps) == 0);
	CHECK(cpuset_test(&ps.hard, 1) && cpuset_count(&ps.hard) == 1);
	CHECK(ps.uid == 5 && ps.threads == 3 && ps.state == 'R');
	CHECK(ps.ratio_src == PREF_SRC_CGROUP && ps.ratio_allowed == 7);
}

/* The leader's status, as the kernel shows it, with these sources. */
static void put_status(int pid, const char *mask_src, const char *ratio,
		       const char *ratio_src)
{
	char rel[64], buf[512];

	snprintf(buf, sizeof(buf),
		 "Name:\tapp\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\n"
		 "Threads:\t1\nCpus_allowed_list:\t0-3\n"
		 "Cpus_preferred_source:\t%s\nCpus_preferred_ratio:\t%s\n"
		 "Cpus_preferred_ratio_source:\t%s\n",
		 mask_src, ratio, ratio_src);
	snprintf(rel, sizeof(rel), "/%d/status", pid);
	put_proc(rel, buf);
}

/*
 * One exec of pid 900 (comm app, its files as given, leader's own mask
 * lead) under a rule of cpus 0-1 and ratio 20:1.  The files say one
 * thing, the status another, as a kernel never would: which of the two
 * the daemon went by shows.
 */
static struct config *exec_one(const char *ratio_file, const char *lead)
{
	struct config *c;

	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(900, 900, "app", 90, 0, "0-3", lead);
	put_proc("/900/soft_affinity_ratio", ratio_file);
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "cpus = \"0-1\"; softness = \"20:1\"; } );");
	return c;
}

static void exec_now(void)
{
	mgr_on_exec(mgr, 900);
	CHECK(mgr_flush(mgr, UINT64_MAX));
	CHECK(mgr_lookup(mgr, 900) &&
	      (mgr_lookup(mgr, 900)->flags & M_ADOPTED));
	CHECK_STR(psoft_of(900), "0-1\n");
}

void test_exec_status_hints(void)
{
	struct config *c;
	uint64_t rw;

	/* "process" 20:1: the process's own is the rule's: no read, no write. */
	if (!(c = exec_one("\n", "\n")))
		return;
	CHECK(mgr->proc_fd >= 0);
	put_status(900, "none", "20:1", "process");
	exec_now();
	CHECK_STR(ratio_of(900), "\n");
	CHECK(mgr_counters(mgr)->ratio_written == 0);
	mgr_teardown(c, NULL);

	/*
	 * An exec's reads leave their fds to the snapshot's plug, handed
	 * down to the writes (F10): the process level's write finds the
	 * stat, cgroup and status of this evaluation waiting, and closed
	 * with the snapshot, not one by one.
	 */
	if (!(c = exec_one("\n", "\n")))
		return;
	put_status(900, "none", "100:1", "default");
	fake_plug = NULL;
	exec_now();
	CHECK(fake_plug == &mgr->snap->plug && fake_plug_waiting >= 3);
	CHECK(mgr->snap->pfd < 0 && mgr->snap->plug.n == 0);
	mgr_teardown(c, NULL);

	/* "process" with another ratio, "cgroup", "default": written unread. */
	for (int i = 0; i < 3; i++) {
		static const char *const why[][2] = {
			{"5:4", "process"}, {"100:1", "cgroup"}, {"100:1", "default"}};

		if (!(c = exec_one("20:1\n", "\n")))
			return;
		put_status(900, "none", why[i][0], why[i][1]);
		exec_now();
		CHECK(mgr_counters(mgr)->ratio_written == 1);
		CHECK(mgr_lookup(mgr, 900) &&
		      ratio_equal(mgr_lookup(mgr, 900)->ratio_ours,
				  (struct ratio){20, 1}));
		mgr_teardown(c, NULL);
	}

	/* "thread" hides the process's: read, and it is the rule's already. */
	if (!(c = exec_one("20:1\n", "\n")))
		return;
	put_status(900, "none", "3:1", "thread");
	exec_now();
	CHECK(mgr_counters(mgr)->ratio_written == 0);
	mgr_teardown(c, NULL);

	/*
	 * "default" once the ratio is ours: read.  A user rule reads the
	 * status at every full scan.  Still ours (the main thread's own
	 * "none" hides it from status): not taken for cleared by hand.
	 * Set by hand since: found and left alone.
	 */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(900, 900, "app", 90, 0, "0-3", "\n");
	c = mgr_setup("rules = ( { name = \"app\"; comm = \"app\"; "
		      "user = 1000; cpus = \"0-1\"; softness = \"20:1\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && !strcmp(ratio_of(900), "20:1\n"));
	rw = mgr_counters(mgr)->ratio_written;
	CHECK(mgr_scan(mgr) == 0);
	CHECK(mgr_lookup(mgr, 900) &&
	      !(mgr_lookup(mgr, 900)->flags & M_RATIO_FOREIGN));
	put_proc("/900/soft_affinity_ratio", "7:1\n");
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(ratio_of(900), "7:1\n");
	CHECK(mgr_counters(mgr)->ratio_written == rw);
	CHECK(mgr_lookup(mgr, 900) &&
	      (mgr_lookup(mgr, 900)->flags & M_RATIO_FOREIGN));
	mgr_teardown(c, NULL);

	/*
	 * The leader's own mask: "process" or "cgroup" decides, so it has
	 * none, and its file is not read (it says 3 here: hand-set if read).
	 */
	for (int i = 0; i < 3; i++) {
		static const char *const src[] = {"process", "cgroup", "none"};

		if (!(c = exec_one("\n", "3\n")))
			return;
		put_status(900, src[i], "100:1", "default");
		exec_now();
		CHECK(mgr_hand_processes(mgr) == (i == 2));
		mgr_teardown(c, NULL);
	}

	/* Without <proc> opened: by the whole path, as before. */
	if (!(c = exec_one("\n", "\n")))
		return;
	close(mgr->proc_fd);
	mgr->proc_fd = -1;
	exec_now();
	CHECK_STR(ratio_of(900), "20:1\n");
	mgr_teardown(c, NULL);
}

/*
 * What the status said is past once we write: a rename that moves the
 * process to another rule of the same ratio restores the ratio (the
 * status, read for the user key, said it was the old rule's) and the
 * new rule must then write it again, not believe the status.
 */
void test_exec_status_stale(void)
{
	struct pstatus ps;
	struct config *c;

	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mktask(910, 910, "app", 91, 0, "0-3", "\n");
	c = mgr_setup("rules = (\n"
		      " { name = \"web\"; comm = \"web\"; user = 1000; "
		      "cpus = \"2-3\"; softness = \"20:1\"; },\n"
		      " { name = \"app\"; comm = \"app\"; cpus = \"0-1\"; "
		      "softness = \"20:1\"; }\n);");
	if (!c)
		return;
	mgr_eval_pid(mgr, 910);
	CHECK_STR(psoft_of(910), "0-1\n");
	CHECK_STR(ratio_of(910), "20:1\n");
	/* Renamed web; its status as the kernel now shows it. */
	mktask(910, 910, "web", 91, 0, "0-3", "\n");
	set_psoft(910, "0-1\n");
	put_proc("/910/soft_affinity_ratio", "20:1\n");
	put_status(910, "process", "20:1", "process");
	mgr_on_change(mgr, 910);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr_lookup(mgr, 910) && mgr_lookup(mgr, 910)->rule == 0);
	CHECK_STR(psoft_of(910), "2-3\n");
	CHECK_STR(ratio_of(910), "20:1\n");

	/* A thread's own request written: the main thread's is unknown. */
	CHECK(mgr_snap_open(mgr, 910) == 0);
	CHECK(mgr_read_pstatus(mgr->snap, mgr->snap->pfd, &ps) == 0);
	CHECK(mgr->snap->leader_inherits &&
	      mgr->snap->ratio_hint == SNAP_RATIO_KNOWN);
	/*
	 * The snapshot is passed down, never found by its fd: a write
	 * through the same fd without it leaves its hints alone, and a
	 * status read without it reads the file (#38: procsnap).
	 */
	mgr_reset_thread(mgr, 910, mgr_proc_fd(mgr->snap->pfd), 910, &ps.hard);
	CHECK(mgr->snap->leader_inherits);
	put_status(910, "thread", "20:1", "process");
	{
		struct pstatus ps2;

		CHECK(mgr_read_pstatus(NULL, mgr->snap->pfd, &ps2) == 0 &&
		      ps2.mask_src != ps.mask_src);
		CHECK(mgr_read_pstatus(mgr->snap, mgr->snap->pfd, &ps2) == 0 &&
		      ps2.mask_src == ps.mask_src);
	}
	mgr_reset_thread(mgr, 910, mgr_proc_snap(mgr->snap), 910, &ps.hard);
	CHECK(!mgr->snap->leader_inherits);
	/* The next snapshot knows nothing until it reads the status. */
	CHECK(mgr_snap_open(mgr, 910) == 0);
	CHECK(!mgr->snap->leader_inherits &&
	      mgr->snap->ratio_hint == SNAP_RATIO_READ);
	mgr_snap_close(mgr->snap);
	mgr_teardown(c, NULL);
}
