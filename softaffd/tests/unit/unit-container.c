// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Containers: the marks softaff-oci-hook puts on their cgroups, and the
 * manager leaving their processes alone.
 */
#include "unit.h"

static char xattr_skip[PATH_MAX + 96];

/*
 * The fixture's file system must take user xattrs (tmpfs before Linux
 * 6.6 does not; run-check.sh offers its build directory then, see
 * main()).  Otherwise the test says SKIP, and why.
 */
static bool need_xattrs(void)
{
	if (xattr_ok(sys))
		return true;
	snprintf(xattr_skip, sizeof(xattr_skip),
		 "the file system of %s refuses user xattrs (%s)", tmp,
		 strerror(errno));
	t_skip = xattr_skip;
	return false;
}

static void mk_cg(const char *cg)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, cg);
	mkdirs(path);
}

/* What softaff-oci-hook does to a container's cgroup. */
static void mark_cg(const char *cg, const char *id)
{
	char path[PATH_MAX];

	mk_cg(cg);
	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, cg);
	CHECK(lsetxattr(path, CGMARK_XATTR, id, strlen(id), 0) == 0);
}

/* Put the process pid (made by mktask) into cgroup cg. */
static void move_to(int pid, const char *cg)
{
	char rel[64], buf[PATH_MAX];

	snprintf(rel, sizeof(rel), "/%d/cgroup", pid);
	snprintf(buf, sizeof(buf), "0::%s\n", cg);
	put_proc(rel, buf);
}

void test_container_cache(void)
{
	const char *abc = "/machine.slice/libpod-abc.scope";
	const char *inner = "/machine.slice/libpod-abc.scope/inner";
	const uint64_t S = 1000000000ULL, T0 = 1000 * S;
	struct container_cache cc = {0};
	struct container_left *left;
	struct container_mark mk;
	char cg[64], path[PATH_MAX];
	int n;

	fixture_reset();
	if (!need_xattrs())
		return;
	mark_cg(abc, "abc");
	mk_cg(inner);
	mk_cg("/system.slice/x.service");
	/* The nearest marked cgroup; one read per level, then remembered. */
	CHECK(container_find(&cc, sys, inner, T0, 0, &mk));
	CHECK_STR(mk.id, "abc");
	CHECK(mk.cglen == strlen(abc) && cc.reads == 2);
	for (int i = 0; i < 100; i++)
		CHECK(container_find(&cc, sys, inner, T0 + (uint64_t)i, 0,
				     &mk));
	CHECK(container_find(&cc, sys, abc, T0, 0, &mk) && cc.reads == 2);
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0, 0, &mk));
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0, 0, &mk));
	/* x.service and system.slice; the root is never read. */
	CHECK(cc.reads == 4);
	CHECK(!container_find(&cc, sys, "/", T0, 0, &mk) && cc.reads == 4);

	/*
	 * Marked after it was read: the old answer holds for the TTL, but
	 * not for a caller that wants one read after T0 (an exec since).
	 */
	mark_cg("/system.slice/x.service", "late");
	CHECK(!container_find(&cc, sys, "/system.slice/x.service", T0 + S, 0,
			      &mk));
	CHECK(container_find(&cc, sys, "/system.slice/x.service", T0 + S,
			     T0 + 1, &mk));
	CHECK_STR(mk.id, "late");
	CHECK(cc.reads == 5);
	CHECK(container_find(&cc, sys, "/system.slice/x.service", T0 + S, 0,
			     &mk) && cc.reads == 5);
	CHECK(container_find(&cc, sys, abc,
			     T0 + CONTAINER_TTL_MS * 1000000ULL, 0, &mk));
	CHECK(cc.reads == 6);

	/* For --status: once per container and rule. */
	CHECK(container_note_left(&cc, inner, strlen(abc), 3));
	CHECK(!container_note_left(&cc, abc, strlen(abc), 3));
	CHECK(container_note_left(&cc, abc, strlen(abc), 0));
	CHECK(!container_note_left(&cc, "/system.slice", 13, 1));
	n = container_list_left(&cc, &left);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(left[0].rule == 0 && left[1].rule == 3);
		CHECK_STR(left[1].id, "abc");
		CHECK_STR(left[1].cgroup, abc);
	}
	free(left);

	/*
	 * The sweep drops stale answers; a container with rules noted is
	 * read again, and stays while its cgroup does.
	 */
	container_sweep(&cc, sys, T0 + 30 * S);
	CHECK(cc.n == 1 && cc.reads == 7);
	CHECK(container_list_left(&cc, &left) == 2);
	free(left);
	snprintf(path, sizeof(path), "%s/fs/cgroup%s", sys, abc);
	CHECK(nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0);
	container_sweep(&cc, sys, T0 + 60 * S);
	CHECK(cc.n == 0 && container_list_left(&cc, &left) == 0);
	free(left);

	/* An id is shown escaped. */
	mark_cg("/h.scope", "a b\n\x1b[2J");
	CHECK(container_find(&cc, sys, "/h.scope", T0, 0, &mk));
	CHECK_STR(mk.id, "a b\\x0a\\x1b[2J");

	/* Bounded: past the limit answers are read, not kept ... */
	for (int i = 0; i < CONTAINER_CACHE_MAX + 100; i++) {
		snprintf(cg, sizeof(cg), "/n/c%d", i);
		CHECK(!container_find(&cc, sys, cg, T0 + 100 * S, 0, &mk));
	}
	CHECK(cc.n == CONTAINER_CACHE_MAX);
	/* ... and stale ones make room. */
	CHECK(!container_find(&cc, sys, "/n/late", T0 + 200 * S, 0, &mk));
	CHECK(cc.n == 2);
	container_cache_free(&cc);
}

/* softaffd --explain pid, as text. */
static char *explain_text(const struct config *c, int pid)
{
	struct roots r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.sys, sizeof(r.sys), "%s", sys);
	snprintf(r.run, sizeof(r.run), "%s/run", tmp);
	if (!f)
		return NULL;
	CHECK(explain_pid(c, &r, pid, f) == 0);
	fclose(f);
	return buf;
}

#define APP_RULE                                                          \
	"rules = ( { name = \"app\"; comm = \"app\"; cpus = \"0\"; "   \
	"softness = \"20:1\"; } );"

void test_manager_container(void)
{
	const char *abc = "/machine.slice/libpod-abc.scope";
	const char *pref = "/fs/cgroup/machine.slice/libpod-abc.scope/"
			   "cpuset.cpus.preferred";
	const char *def = "/fs/cgroup/machine.slice/libpod-def.scope/"
			  "cpuset.cpus.preferred";
	struct container_left *left;
	unsigned long reads;
	char rel[PATH_MAX], *ex;
	struct config *c;
	int n;

	fake_fixture();
	if (!need_xattrs())
		return;
	/* 20 processes of a container that a comm rule matches; one outside. */
	put_proc("/self/soft_affinity_ratio", "\n");
	mark_cg(abc, "abc");
	for (int pid = 500; pid < 520; pid++) {
		mktask(pid, pid, "app", 10, 0, "0-3", "\n");
		move_to(pid, abc);
		snprintf(rel, sizeof(rel), "/%d/soft_affinity_ratio", pid);
		put_proc(rel, "\n");
	}
	mktask(600, 600, "app", 11, 0, "0-3", "\n");
	put_proc("/600/soft_affinity_ratio", "\n");
	c = mgr_setup(APP_RULE);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0);
	CHECK_STR(psoft_of(600), "0\n");
	CHECK_STR(get_at(proc, "/600/soft_affinity_ratio"), "20:1\n");
	/* Inside: neither mask nor ratio, and not managed. */
	CHECK_STR(soft_of(500, 500), "\n");
	CHECK_STR(soft_of(519, 519), "\n");
	CHECK_STR(get_at(proc, "/500/soft_affinity_ratio"), "\n");
	CHECK(mgr_processes(mgr) == 1 && !mgr_lookup(mgr, 500));
	/* One read of the mark for its 20 processes, two for test.service. */
	CHECK(mgr->ctr.reads == 3);
	n = container_list_left(&mgr->ctr, &left);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(left[0].rule == 0);
		CHECK_STR(left[0].id, "abc");
		CHECK_STR(left[0].cgroup, abc);
	}
	free(left);
	/* Twenty execs in one turn: the mark is read again once. */
	reads = mgr->ctr.reads;
	for (int pid = 500; pid < 520; pid++)
		mgr_on_exec(mgr, pid);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(mgr->ctr.reads == reads + 1 && mgr_processes(mgr) == 1);
	/* Rescans and a stop write nothing inside. */
	fake_writes = 0;
	CHECK(mgr_scan(mgr) == 0 && fake_writes == 0);
	/* --explain: what applies (status), what each level asks for. */
	ex = explain_text(c, 600);
	CHECK(ex && strstr(ex, "\napplied now: preferred CPUs 0-3 (source "
			       "none), ratio 100:1 (source default)\n"
			       "requested: process CPUs 0 ratio 20:1; "
			       "thread 600 CPUs inherit ratio inherit (the first ") &&
	      strstr(ex, "\nits cgroup /system.slice/test.service has no "
			 "cpuset.cpus.preferred"));
	free(ex);
	mgr_restore_all(mgr);
	CHECK_STR(soft_of(510, 510), "\n");
	CHECK_STR(get_at(proc, "/510/soft_affinity_ratio"), "\n");
	CHECK_STR(psoft_of(600), "\n");
	/* --explain says so, with the rule it would otherwise get. */
	ex = explain_text(c, 500);
	CHECK(ex && strstr(ex, "\nits preference is set by the container's "
			       "annotations (container abc, cgroup "
			       "/machine.slice/libpod-abc.scope): softaffd "
			       "leaves it alone; otherwise rule 'app' would "
			       "apply\n"));
	CHECK(ex && !strstr(ex, "rule 'app' wants CPUs"));
	free(ex);
	ex = explain_text(c, 600);
	CHECK(ex && strstr(ex, "\nrule 'app' wants CPUs 0,") &&
	      !strstr(ex, "container"));
	free(ex);
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);

	/*
	 * Met before the hook marked its cgroup (a runtime's init process):
	 * its exec finds the mark, and what we set goes back.
	 */
	fake_fixture();
	put_proc("/self/soft_affinity_ratio", "\n");
	mk_cg("/machine.slice/libpod-new.scope");
	mktask(800, 800, "app", 10, 0, "0-3", "\n");
	move_to(800, "/machine.slice/libpod-new.scope");
	put_proc("/800/soft_affinity_ratio", "\n");
	c = mgr_setup(APP_RULE);
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr_lookup(mgr, 800));
	CHECK_STR(psoft_of(800), "0\n");
	mark_cg("/machine.slice/libpod-new.scope", "new");
	mgr_on_exec(mgr, 800);
	mgr_flush(mgr, UINT64_MAX);
	CHECK(!mgr_lookup(mgr, 800));
	CHECK_STR(psoft_of(800), "\n");
	CHECK_STR(get_at(proc, "/800/soft_affinity_ratio"), "\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);

	/* A unit rule: the container's cgroup is not written, another is. */
	fake_fixture();
	mark_cg(abc, "abc");
	mktask(700, 700, "svc", 10, 0, "0-3", "\n");
	move_to(700, "/machine.slice/libpod-abc.scope/inner");
	mktask(710, 710, "svc", 11, 0, "0-3", "\n");
	move_to(710, "/machine.slice/libpod-def.scope");
	put_sys(pref, "\n");
	put_sys("/fs/cgroup/machine.slice/libpod-abc.scope/"
		"cpuset.cpus.preferred.ratio", "\n");
	put_sys(def, "\n");
	put_sys("/fs/cgroup/machine.slice/libpod-def.scope/"
		"cpuset.cpus.preferred.ratio", "\n");
	c = mgr_setup("rules = ( { name = \"u\"; unit = \"libpod-*.scope\"; "
		      "nodes = [ 1 ]; softness = \"20:1\"; } );");
	if (!c)
		return;
	CHECK(mgr_scan(mgr) == 0 && mgr->ncgs == 1);
	CHECK_STR(get_at(sys, pref), "\n");
	CHECK_STR(soft_of(700, 700), "\n");
	CHECK_STR(get_at(sys, def), "2-3\n");
	/* --explain shows the cgroup level: its request, what it gives. */
	put_sys("/fs/cgroup/machine.slice/libpod-def.scope/"
		"cpuset.cpus.preferred.effective", "2-3\n");
	ex = explain_text(c, 710);
	CHECK(ex && strstr(ex, "\nits cgroup /machine.slice/libpod-def.scope: "
			       "CPUs 2-3 ratio 20:1, its tasks without their "
			       "own get CPUs 2-3 (cpuset.cpus.preferred."
			       "effective)\n"));
	free(ex);
	/*
	 * The hook marks libpod-def.scope too, with the same value: once
	 * the answer is stale (here: forgotten), neither a stop nor a new
	 * softness writes it.
	 */
	mark_cg("/machine.slice/libpod-def.scope", "def");
	container_cache_free(&mgr->ctr);
	fake_writes = 0;
	mgr_restore_all(mgr);
	CHECK(fake_writes == 0);
	CHECK(mgr_set_rule_ratio(mgr, 0, (struct ratio){5, 4}) == 0);
	CHECK(fake_writes == 0);
	CHECK_STR(get_at(sys, def), "2-3\n");
	CHECK_STR(get_at(sys, pref), "\n");
	mgr_free(mgr);
	mgr = NULL;
	config_free(c);
}
