// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration: rules and their matching, errors with file:line,
 * values and defaults, file trust, drop-ins.
 */
#include "unit.h"

void test_rules(void)
{
	char err[512];
	struct config *c = load(
		"rules = (\n"
		" { name = \"exact\"; comm = \"nginx\"; cpus = \"0\"; },\n"
		" { name = \"glob\"; comm = \"db-*\"; user = 1000; nodes = [1]; },\n"
		" { name = \"exe\"; exe = \"/usr/*/java\"; cpus = \"1\"; },\n"
		" { name = \"re\"; cmdline = \"^python3? .*serve\"; cpus = \"2\"; },\n"
		" { name = \"cg\"; cgroup = \"/system.slice/a.service/\"; cpus = \"3\"; },\n"
		" { name = \"all\"; comm = \"*\"; user = \"root\"; cpus = \"0-3\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {0};

	CHECK(c != NULL);
	if (!c) {
		printf("# %s\n", err);
		return;
	}
	a.comm = "nginx";
	CHECK(rules_match(c, &a) == 0);
	a.comm = "nginx2";
	CHECK(rules_match(c, &a) == -1);
	a.comm = "db-main";
	CHECK(rules_match(c, &a) == -1); /* needs uid too */
	a.has_uid = true;
	a.uid = 1000;
	CHECK(rules_match(c, &a) == 1);
	a.uid = 1001;
	CHECK(rules_match(c, &a) == -1);
	a.comm = "x";
	a.exe = "/usr/lib/jvm/bin/java";
	CHECK(rules_match(c, &a) == 2);
	a.exe = "/usr/bin/javac";
	CHECK(rules_match(c, &a) == -1);
	a.cmdline = "python3 -m http.server";
	CHECK(rules_match(c, &a) == 3);
	a.cmdline = "/usr/bin/python3 serve";
	CHECK(rules_match(c, &a) == -1);
	a.cgroup = "/system.slice/a.service";
	CHECK(rules_match(c, &a) == 4);
	a.cgroup = "/system.slice/a.service/sub";
	CHECK(rules_match(c, &a) == 4);
	a.cgroup = "/system.slice/a.servicex";
	CHECK(rules_match(c, &a) == -1);
	a.uid = 0;
	CHECK(rules_match(c, &a) == 5); /* first match wins over later */
	a.comm = "nginx";
	CHECK(rules_match(c, &a) == 0);
	/* Unreadable attributes never match. */
	memset(&a, 0, sizeof(a));
	CHECK(rules_match(c, &a) == -1);
	CHECK(cgroup_has_prefix("/a", "/"));
	CHECK(!cgroup_has_prefix("/ab", "/a"));
	config_free(c);
}

void test_unit_key(void)
{
	static const struct {
		const char *cgroup, *unit; /* NULL: in no unit */
	} cases[] = {
		{"/system.slice/postgresql@14-main.service",
		 "postgresql@14-main.service"},
		{"/system.slice/x.service/worker/a", "x.service"},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/"
		 "v.scope",
		 "user@1000.service"},
		{"/user.slice/user-1000.slice/session-2.scope",
		 "session-2.scope"},
		{"/init.scope", "init.scope"},
		{"/a.slice/b-c.slice/run-u7.service", "run-u7.service"},
		{"/system.slice", NULL},
		{"/", NULL},
		{"", NULL},
		/* Not a unit under the slices: made by hand, no unit. */
		{"/system.slice/mygroup/x.service", NULL},
		{"/.service", NULL},
	};
	char unit[64], err[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r = rules_unit_of(cases[i].cgroup, unit, sizeof(unit));

		if (cases[i].unit) {
			CHECK(r == 0);
			CHECK_STR(r == 0 ? unit : NULL, cases[i].unit);
		} else {
			CHECK(r == -ENOENT);
		}
	}
	CHECK(rules_unit_of("/s.slice/a-very-long-name-that-does-not-fit-"
			    "in-64-bytes-at-all-really.service",
			    unit, sizeof(unit)) == -ENAMETOOLONG);

	struct config *c = load(
		"rules = (\n"
		" { name = \"pg\"; unit = \"postgresql@*.service\"; cpus = \"0\"; },\n"
		" { name = \"both\"; cgroup = \"/system.slice\"; unit = \"x.service\";"
		" cpus = \"1\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	a.cgroup = "/system.slice/postgresql@14-main.service";
	CHECK(rules_match(c, &a) == 0);
	/* The comm a process gives itself does not matter. */
	a.comm = "postgres";
	CHECK(rules_match(c, &a) == 0);
	a.cgroup = "/system.slice/postgresql.service";
	CHECK(rules_match(c, &a) == -1);
	a.cgroup = "/system.slice/x.service/sub";
	CHECK(rules_match(c, &a) == 1);
	/* Both keys must match: the unit, but under another slice. */
	a.cgroup = "/user.slice/x.service";
	CHECK(rules_match(c, &a) == -1);
	CHECK((c->rules[0].needs & ~NEED_CGROUP) == 0);
	/* The cgroup a cgroup-and-unit rule writes: the deeper one. */
	CHECK(rules_cgroup_target(&c->rules[0],
				  "/system.slice/postgresql@1.service/sub",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/postgresql@1.service");
	CHECK(rules_cgroup_target(&c->rules[1], "/system.slice/x.service/a",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/x.service");
	free(c->rules[1].cgroup);
	c->rules[1].cgroup = strdup("/system.slice/x.service/a/");
	CHECK(rules_cgroup_target(&c->rules[1], "/system.slice/x.service/a/b",
				  unit, sizeof(unit)) == 0);
	CHECK_STR(unit, "/system.slice/x.service/a");
	CHECK(rules_cgroup_target(&c->rules[0], "/system.slice", unit,
				  sizeof(unit)) == -ENOENT);
	/* --explain's reasons. */
	a.cgroup = "/user.slice/x.service";
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "unit x.service does not match \"postgresql@*.service\"");
	CHECK(!rules_explain(&c->rules[1], &a, err, sizeof(err)));
	CHECK_STR(err, "cgroup /user.slice/x.service is not under "
		       "/system.slice/x.service/a/");
	a.cgroup = "/system.slice/postgresql@2.service";
	CHECK(rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "every key matches");
	config_free(c);
	c = load("rules = ( { name = \"c\"; comm = \"db*\"; user = 7; cpus = \"0\"; } );",
		 err, sizeof(err));
	if (!c)
		return;
	a.comm = "postgres";
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "comm \"postgres\" does not match \"db*\"");
	a.comm = "db1";
	a.has_uid = true;
	a.uid = 0;
	CHECK(!rules_explain(&c->rules[0], &a, err, sizeof(err)));
	CHECK_STR(err, "uid 0 is not 7 (user 7)");
	config_free(c);
}

void test_config_errors(void)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{"interval_ms = 1000;\nfoo = 1;\n",
		 "t.conf:2: unknown key 'foo'"},
		{"interval_ms = \"1s\";\n",
		 "t.conf:1: 'interval_ms' must be an integer"},
		{"rules = ( { comm = \"x\"; nodes = [ 5 ]; } );\n",
		 "t.conf:1: node 5 does not exist"},
		{"rules = ( { comm = \"x\";\n nodes = [ ]; } );\n",
		 "t.conf:2: empty target: 'nodes' lists no node"},
		{"rules = ( { comm = \"x\"; } );\n",
		 "t.conf:1: empty target: rule 'rule-1' has neither 'nodes' "
		 "nor 'cpus'"},
		{"rules = ( { comm = \"x\"; cpus = \"\"; } );\n",
		 "t.conf:1: empty target: 'cpus' is empty"},
		{"rules = (\n{ cmdline = \"(\"; cpus = \"0\"; } );\n",
		 NULL /* regerror text varies */},
		{"rules = (\n{ name = \"a\"; comm = \"x\"; cpus = \"0\"; },\n"
		 "{ name = \"a\"; comm = \"y\"; cpus = \"0\"; } );\n",
		 "t.conf:3: duplicate rule name 'a' (first at line 2)"},
		{"rules = ( { comm = ; } );\n",
		 NULL /* libconfig syntax error */},
		{"ratio = { mode = \"fixed\"; softest = \"5:4\"; };\n",
		 "t.conf:1: unknown key 'softest' in fixed ratio"},
		{"ratio = { softest = \"100:1\"; hardest = \"5:4\"; };\n",
		 "t.conf:1: softest ratio 100:1 is harder than hardest 5:4"},
		{"ratio = { hardest = \"1:2\"; };\n",
		 "t.conf:1: 'hardest': allowed must not be below preferred"},
		{"ratio = { mode = \"fixed\"; allowed = 0; };\n",
		 "t.conf:1: 'allowed' = 0 is out of range 1..10000"},
		{"rules = ( { user = \"no-such-user-xyz\"; cpus = \"0\"; } );\n",
		 "t.conf:1: unknown user 'no-such-user-xyz'"},
		{"rules = ( { cpus = \"0\"; } );\n",
		 "t.conf:1: rule 'rule-1' has no match key (comm, exe, "
		 "cmdline, user, cgroup or unit)"},
		{"rules = ( { comm = \"x\"; cpus = \"9-12\"; } );\n",
		 "t.conf:1: empty target: none of CPUs \"9-12\" exists"},
		/* L11: ids up to 8191 are CPU numbers, absent here. */
		{"rules = ( { comm = \"x\"; cpus = \"8191\"; } );\n",
		 "t.conf:1: empty target: none of CPUs \"8191\" exists"},
		{"rules = ( { comm = \"x\"; cpus = \"0,8192\"; } );\n",
		 "t.conf:1: 'cpus' = \"0,8192\": CPU number above 8191"},
		{"rules = ( { cmdline = \"a+++++++++++++++\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		{"rules = ( { cmdline = \"((a{1,99}){1,99})\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		/* Found by fuzz_config: a huge bound overflowed the estimate. */
		{"rules = ( { cmdline = \"a{99999999999999999999,}\"; cpus = \"0\"; } );\n",
		 "t.conf:1: regex in 'cmdline' is too complex: its "
		 "repetitions expand to more than 512 states"},
		{"rules = ( { cmdline = \"(a)\\\\1\"; cpus = \"0\"; } );\n",
		 "t.conf:1: bad regex in 'cmdline': back-references are not "
		 "supported"},
		{"rules = ( { comm = \"x\"; cpus = \"0\"; nodes = [0]; } );\n",
		 "t.conf:1: rule 'rule-1' has both 'nodes' and 'cpus'"},
	};
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct config *c = load(cases[i].text, err, sizeof(err));

		CHECK(c == NULL);
		if (c)
			printf("# case %zu loaded\n", i);
		config_free(c);
		if (cases[i].err)
			CHECK_STR(err, cases[i].err);
		else
			CHECK(!strncmp(err, "t.conf:", 7));
	}

	/* Limits: pattern length and rule count. */
	{
		char text[1024], pat[CONFIG_MAX_PATTERN + 2];
		struct config *c;

		memset(pat, 'a', sizeof(pat) - 1);
		pat[sizeof(pat) - 1] = '\0';
		snprintf(text, sizeof(text),
			 "rules = ( { comm = \"%s\"; cpus = \"0\"; } );", pat);
		c = load(text, err, sizeof(err));
		CHECK(!c);
		CHECK_STR(err, "t.conf:1: 'comm' is longer than 256 bytes");
		config_free(c);
	}
	{
		struct sbuf b = {0};
		struct config *c;

		sbuf_printf(&b, "rules = (\n");
		for (int i = 0; i <= CONFIG_MAX_RULES; i++)
			sbuf_printf(&b, "%s{ comm = \"c%d\"; cpus = \"0\"; }\n",
				    i ? "," : "", i);
		sbuf_printf(&b, ");\n");
		c = load(b.buf, err, sizeof(err));
		CHECK(!c);
		CHECK_STR(err, "t.conf:258: too many rules (at most 256)");
		config_free(c);
		sbuf_free(&b);
	}
}

void test_config_ok(void)
{
	char err[512];
	struct config *c = load(
		"interval_ms = 500; restore_on_exit = false;\n"
		"ratio = { mode = \"fixed\"; allowed = 20; preferred = 3; };\n"
		"rules = ( { name = \"n\"; comm = \"x\"; nodes = [ 1, 0 ]; "
		"threads = \"main\"; } );\n",
		err, sizeof(err));
	struct cpuset all;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->interval_ms == 500 && !c->restore_on_exit);
	CHECK(c->mode == RATIO_FIXED && c->fixed.allowed == 20 &&
	      c->fixed.preferred == 3);
	cpuset_parse_list("0-3", &all);
	CHECK(cpuset_equal(&c->rules[0].cpus, &all));
	CHECK(c->rules[0].threads == THREADS_MAIN);
	CHECK(cpuset_count(&c->rules[0].node_idx) == 2);
	config_free(c);

	/* Defaults. */
	c = load("", err, sizeof(err));
	CHECK(c && c->mode == RATIO_OFF && c->restore_on_exit &&
	      c->nrules == 0 && c->hardest.allowed == 100 &&
	      c->softest.allowed == 5 && c->softest.preferred == 4);
	config_free(c);
}

void test_rules_lazy(void)
{
	char err[512], cmd[4096];
	struct config *c = load(
		"rules = (\n"
		" { name = \"a\"; comm = \"a*\"; cmdline = \"x\"; cpus = \"0\"; },\n"
		" { name = \"u\"; user = 7; cmdline = \"y\"; cpus = \"1\"; }\n"
		");\n",
		err, sizeof(err));
	struct proc_attrs a = {.loaded = NEED_COMM, .comm = "b",
			       .regex_budget = RULES_REGEX_BUDGET};
	unsigned int at = 0, need = 0;
	struct sbuf b = {0};

	CHECK(c != NULL);
	if (!c)
		return;
	/* comm rules out rule a without its command line; u needs the uid. */
	CHECK(rules_match_from(c, &a, 0, &at, &need) == RULES_NEED &&
	      at == 1 && need == NEED_UID);
	a.loaded |= NEED_UID;
	a.has_uid = true;
	a.uid = 8;
	/* ... and uid 8 rules out u: the command line is never asked for. */
	CHECK(rules_match_from(c, &a, at, &at, &need) == RULES_NONE);
	a.uid = 7;
	CHECK(rules_match_from(c, &a, 1, &at, &need) == RULES_NEED &&
	      need == NEED_CMDLINE);
	config_free(c);

	/* The total regex work per process is bounded: 256 worst rules. */
	sbuf_printf(&b, "rules = (\n");
	for (int i = 0; i < CONFIG_MAX_RULES; i++)
		sbuf_printf(&b, "%s{ name = \"r%d\"; cmdline = "
			    "\".{1,250}x{1,250}\"; cpus = \"0\"; }\n",
			    i ? "," : "", i);
	sbuf_printf(&b, ");\n");
	c = load(b.buf, err, sizeof(err));
	sbuf_free(&b);
	CHECK(c != NULL);
	if (!c)
		return;
	memset(cmd, 'a', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	a = (struct proc_attrs){.loaded = NEED_COMM | NEED_CMDLINE,
				.comm = "a", .cmdline = cmd,
				.regex_budget = RULES_REGEX_BUDGET};
	uint64_t t0 = now_ms();
	CHECK(rules_match_from(c, &a, 0, &at, &need) == RULES_NONE);
	printf("# 256 worst-case regexes on 4 KiB: %llu ms, %u skipped\n",
	       (unsigned long long)(now_ms() - t0), a.regex_skipped);
	CHECK(a.regex_skipped >= CONFIG_MAX_RULES - 2);
	/* A short command line fits them all. */
	a = (struct proc_attrs){.loaded = NEED_COMM | NEED_CMDLINE,
				.comm = "a", .cmdline = "ax",
				.regex_budget = RULES_REGEX_BUDGET};
	CHECK(rules_match_from(c, &a, 0, &at, &need) == 0 &&
	      !a.regex_skipped);
	config_free(c);
}

void test_config_files(void)
{
	char path[PATH_MAX], inc[PATH_MAX], err[512];
	struct config *c = NULL;

	fixture_reset();
	snprintf(path, sizeof(path), "%s/f.conf", tmp);
	put(path, "rules = ( { comm = \"x\"; cpus = \"0\"; } );\n");
	chmod(path, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	config_free(c);
	c = NULL;
	/* Writable by group or others: refused, naming the file. */
	chmod(path, 0664);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "f.conf: writable by group or others (mode 0664)"));
	chmod(path, 0602);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	/* An included file too. */
	chmod(path, 0644);
	snprintf(inc, sizeof(inc), "%s/inc.conf", tmp);
	put(inc, "rules = ( { comm = \"x\"; cpus = \"0\"; } );\n");
	chmod(inc, 0666);
	put(path, "@include \"inc.conf\"\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "inc.conf: writable by group or others"));
	chmod(inc, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	config_free(c);
	c = NULL;
	/*
	 * ... and the directory it is in: libconfig opens it again after
	 * the check, so whoever may write there could swap it between.
	 */
	{
		char dir[PATH_MAX], f2[PATH_MAX + 16], inc2[PATH_MAX + 16];

		snprintf(dir, sizeof(dir), "%s/incd", tmp);
		mkdirs(dir);
		snprintf(f2, sizeof(f2), "%s/f.conf", dir);
		snprintf(inc2, sizeof(inc2), "%s/inc.conf", dir);
		put(inc2, "rules = ( { comm = \"x\"; cpus = \"0\"; } );\n");
		put(f2, "@include \"inc.conf\"\n");
		chmod(inc2, 0644);
		chmod(f2, 0644);
		chmod(dir, 0755);
		CHECK(config_load(f2, &topo, &c, err, sizeof(err)) == 0);
		config_free(c);
		c = NULL;
		chmod(dir, 0777);
		CHECK(config_load(f2, &topo, &c, err, sizeof(err)) == -EPERM);
		CHECK(strstr(err, "incd: writable by group or others"));
		chmod(dir, 0755);
	}
	/* A FIFO is refused at once, not read (which would block). */
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "f.conf: not a regular file"));
	unlink(path);
	/* Owned by someone else (only root can make such a file here). */
	if (geteuid() == 0) {
		put(path, "rules = ( );\n");
		chmod(path, 0644);
		CHECK(chown(path, 65534, 65534) == 0);
		CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
		CHECK(strstr(err, "f.conf: owned by uid 65534, not root"));
	}
	CHECK(caps_needed(c ? c : &(struct config){0}) == CAPS_NICE);
	{
		struct config *e = load("rules = ( { exe = \"/bin/x\"; cpus = "
					"\"0\"; } );", err, sizeof(err));
		char names[64];

		CHECK(e && caps_needed(e) == (CAPS_NICE | CAPS_PTRACE));
		CHECK_STR(caps_names(CAPS_NICE | CAPS_PTRACE, names,
				     sizeof(names)),
			  "CAP_SYS_NICE CAP_SYS_PTRACE");
		config_free(e);
	}
}

void test_config_dropins(void)
{
	char path[PATH_MAX], dir[PATH_MAX], f[PATH_MAX], err[512];
	struct config *c = NULL;

	fixture_reset();
	snprintf(path, sizeof(path), "%s/d.conf", tmp);
	CHECK(config_dropin_dir(path, dir, sizeof(dir)) == 0);
	snprintf(f, sizeof(f), "%s/d.d", tmp);
	CHECK_STR(dir, f);
	CHECK(config_dropin_dir("/etc/x", f, sizeof(f)) == 0);
	CHECK_STR(f, "/etc/x.d");
	CHECK(config_dropin_dir("/etc/softaffd.conf", f, 8) == -ENAMETOOLONG);
	put(path, "rules = ( { name = \"m\"; comm = \"m\"; cpus = \"0\"; } );\n");
	chmod(path, 0644);
	/* No directory: no drop-ins. */
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	CHECK(c && c->nrules == 1 && c->nfiles == 1);
	config_free(c);
	c = NULL;
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(f, sizeof(f), "%s/b.conf", dir);
	put(f, "rules = ( { name = \"b\"; comm = \"b\"; cpus = \"1\"; } );\n");
	chmod(f, 0644);
	snprintf(f, sizeof(f), "%s/a.conf", dir);
	put(f, "rules = ( { name = \"a\"; comm = \"a\"; cpus = \"1\"; } );\n");
	chmod(f, 0644);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == 0);
	CHECK(c && c->nrules == 3 && c->nfiles == 3);
	if (c && c->nrules == 3) {
		CHECK_STR(c->rules[1].name, "a");
		CHECK_STR(c->rules[1].file, f);
		CHECK_STR(c->rules[2].name, "b");
	}
	config_free(c);
	c = NULL;
	/* A drop-in others can write is refused like the main file. */
	chmod(f, 0664);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "a.conf: writable by group or others"));
	chmod(f, 0644);
	/* So is a directory where others could add one. */
	chmod(dir, 0777);
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "d.d: writable by group or others (mode 0777)"));
	chmod(dir, 0755);
	/* The same name in two files names both places. */
	put(f, "rules = ( { name = \"b\"; comm = \"a\"; cpus = \"1\"; } );\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "b.conf:1: duplicate rule name 'b' (first at "));
	CHECK(strstr(err, "a.conf:1)"));
	CHECK(c == NULL);
	unlink(f);
	snprintf(f, sizeof(f), "%s/b.conf", dir);
	unlink(f);
	rmdir(dir);
	/* A file where the directory should be is an error, not ignored. */
	put(dir, "x\n");
	CHECK(config_load(path, &topo, &c, err, sizeof(err)) < 0);
	unlink(dir);
}
