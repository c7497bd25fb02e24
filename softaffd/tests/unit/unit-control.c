// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control laws and their actuator: the sampler, the global
 * controller, the sysctl writes, the per-rule law.
 */
#include "unit.h"

void test_sampler(void)
{
	struct sampler *s = calloc(1, sizeof(*s));
	double util[2];

	CHECK(sampler_feed(s, "cpu  0 0 0 0 0 0 0 0 0 0\n"
			      "cpu0 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu1 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu2 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu3 100 0 0 100 0 0 0 0 0 0\n"
			      "intr 1 2 3\n") == 0);
	CHECK(cpuset_empty(&s->valid));
	CHECK(sampler_feed(s, "cpu0 190 0 0 110 0 0 0 0 0 0\n"
			      "cpu1 170 0 10 120 0 0 0 0 0 0\n"
			      "cpu2 110 0 0 180 10 0 0 0 0 0\n"
			      "cpu3 100 0 0 200 0 0 0 0 0 0\n") == 0);
	CHECK(s->util[0] > 0.899 && s->util[0] < 0.901);
	CHECK(s->util[1] > 0.799 && s->util[1] < 0.801);
	CHECK(s->util[2] > 0.099 && s->util[2] < 0.101);
	CHECK(s->util[3] == 0.0);
	two_node_topo();
	sampler_node_util(s, &topo, util);
	CHECK(util[0] > 0.849 && util[0] < 0.851);
	CHECK(util[1] > 0.049 && util[1] < 0.051);
	/* Counters going backwards (hotplug): no value this round. */
	CHECK(sampler_feed(s, "cpu0 10 0 0 10 0 0 0 0 0 0\n") == 0);
	CHECK(cpuset_empty(&s->valid));
	CHECK(sampler_feed(s, "garbage\n") == -EINVAL);
	CHECK(sampler_feed(s, "cpu0 1 2\n") == -EINVAL);

	/* Tasks queued per CPU: run_delay over wall time (ns). */
	CHECK(sampler_feed_delay(s, "version 15\ntimestamp 4295\n"
				    "cpu0 0 0 10 2 8 4 1000 500000000 9\n"
				    "domain0 3 1 2 3 4 5 6 7 8 9 10\n"
				    "cpu1 0 0 10 2 8 4 1000 0 9\n",
				 1000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "version 15\n"
				    "cpu0 0 0 10 2 8 4 1000 2500000000 9\n"
				    "cpu1 0 0 10 2 8 4 1000 100000000 9\n",
				 2000000000) == 0);
	CHECK(cpuset_test(&s->wait_valid, 0) && cpuset_test(&s->wait_valid, 1));
	CHECK(s->wait[0] > 1.999 && s->wait[0] < 2.001);
	CHECK(s->wait[1] > 0.099 && s->wait[1] < 0.101);
	/* Backwards (hotplug), then a line cut short: nothing known. */
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000 5 9\n",
				 3000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000\n",
				 4000000000) == -EINVAL);
	CHECK(cpuset_empty(&s->wait_valid));
	CHECK(sampler_feed_delay(s, "cpu0 0 0 10 2 8 4 1000 9 9\n",
				 5000000000) == 0);
	CHECK(cpuset_empty(&s->wait_valid));
	sampler_done(s);

	/*
	 * L11: CPU ids past 1024 (a hole below them, as hotplug leaves);
	 * the arrays grow to the highest id listed, not to CPUSET_MAX.
	 */
	CHECK(sampler_feed(s, "cpu0 100 0 0 100 0 0 0 0 0 0\n"
			      "cpu8191 100 0 0 100 0 0 0 0 0 0\n") == 0);
	CHECK(s->ncpus == 8192);
	CHECK(sampler_feed(s, "cpu0 150 0 0 150 0 0 0 0 0 0\n"
			      "cpu4095 10 0 0 10 0 0 0 0 0 0\n"
			      "cpu8191 200 0 0 100 0 0 0 0 0 0\n") == 0);
	CHECK(cpuset_count(&s->valid) == 2 && cpuset_test(&s->valid, 8191));
	CHECK(s->util[0] > 0.499 && s->util[0] < 0.501 && s->util[8191] == 1.0);
	CHECK(sampler_feed(s, "cpu8192 1 0 0 1 0 0 0 0 0 0\n") == -EINVAL);
	sampler_done(s);
	CHECK(sampler_feed(s, "cpu0 1 0 0 1 0 0 0 0 0 0\n") == 0 &&
	      s->ncpus == 64);
	sampler_done(s);
	free(s);
}

/* Drive the controller with one utilization pair per sample. */
struct run {
	unsigned int soften, harden, flips;
	struct ratio last;
};

static struct run drive(const struct ctl_params *p, struct ctl_state *s,
			double u0, double u1, int samples, uint64_t *now)
{
	struct cpuset g;
	double util[2] = {u0, u1};
	struct ctl_input in = {util, 2, &g, 1, 0};
	struct run r = {0, 0, 0, {0, 0}};
	enum ctl_action prev = CTL_HOLD;
	char reason[160];

	cpuset_zero(&g);
	cpuset_set(&g, 0); /* managed work prefers node 0 */
	for (int i = 0; i < samples; i++) {
		enum ctl_action a;

		*now += 1000;
		in.now_ms = *now;
		a = ctl_step(p, s, &in, reason, sizeof(reason));
		if (a == CTL_SOFTEN)
			r.soften++;
		if (a == CTL_HARDEN)
			r.harden++;
		if (a != CTL_HOLD && prev != CTL_HOLD && a != prev)
			r.flips++;
		if (a != CTL_HOLD)
			prev = a;
	}
	r.last = ctl_ratio(s);
	return r;
}

void test_control(void)
{
	struct ctl_params p = {{5, 4}, {100, 1}, 85, 50, 3, 5000};
	struct ctl_state s;
	struct run r;
	uint64_t now = 0;

	ctl_init(&s, &p);
	CHECK(s.ladder[0].allowed == 100 && s.ladder[0].preferred == 1);
	CHECK(s.ladder[s.nrungs - 1].allowed == 5 &&
	      s.ladder[s.nrungs - 1].preferred == 4);
	for (unsigned int i = 1; i < s.nrungs; i++)
		CHECK((unsigned long long)s.ladder[i].allowed *
			      s.ladder[i - 1].preferred <
		      (unsigned long long)s.ladder[i - 1].allowed *
			      s.ladder[i].preferred);

	/* Imbalance: node 0 full, node 1 idle -> soften, rate limited. */
	r = drive(&p, &s, 0.95, 0.10, 3, &now);
	CHECK(r.soften == 1); /* only after hold = 3 samples */
	r = drive(&p, &s, 0.95, 0.10, 4, &now);
	CHECK(r.soften == 0); /* min_change_ms = 5 s not yet over */
	r = drive(&p, &s, 0.95, 0.10, 2, &now);
	CHECK(r.soften == 1); /* 5 s after the first step */
	r = drive(&p, &s, 0.95, 0.10, 200, &now);
	CHECK(r.last.allowed == 5 && r.last.preferred == 4);
	CHECK(r.flips == 0);
	/* Stays at the bound. */
	r = drive(&p, &s, 0.95, 0.10, 20, &now);
	CHECK(r.soften == 0 && r.last.allowed == 5);

	/* Deadband: moderately loaded, nothing moves. */
	r = drive(&p, &s, 0.70, 0.60, 100, &now);
	CHECK(r.soften == 0 && r.harden == 0);

	/* Balance with every node busy -> harden back to 100:1. */
	r = drive(&p, &s, 0.95, 0.92, 200, &now);
	CHECK(r.harden >= 1 && r.soften == 0);
	CHECK(r.last.allowed == 100 && r.last.preferred == 1);

	/* Light load that fits at home also hardens. */
	ctl_init(&s, &p);
	drive(&p, &s, 0.95, 0.10, 40, &now);
	CHECK(s.rung > 0);
	r = drive(&p, &s, 0.20, 0.10, 200, &now);
	CHECK(r.last.allowed == 100);

	/* Noise around the thresholds: no oscillation. */
	ctl_init(&s, &p);
	{
		unsigned int flips = 0, changes = 0;
		uint64_t seed = 12345;

		for (int i = 0; i < 2000; i++) {
			seed = seed * 6364136223846793005ULL + 1;
			double n = (double)(seed >> 40) / (double)(1 << 24);
			/* Alternate between "just saturated" and "just not". */
			double u0 = (i / 2) % 2 ? 0.86 + 0.05 * n : 0.80;
			double u1 = 0.45 + 0.1 * n;

			r = drive(&p, &s, u0, u1, 1, &now);
			changes += r.soften + r.harden;
			flips += r.flips;
		}
		CHECK(changes == 0); /* never 3 samples in a row */
		CHECK(flips == 0);
	}
	/* A square wave slower than hold: at most one step per 5 s. */
	ctl_init(&s, &p);
	{
		unsigned int changes = 0;

		for (int i = 0; i < 100; i++) {
			r = drive(&p, &s, 0.95, i % 2 ? 0.10 : 0.95, 4, &now);
			changes += r.soften + r.harden;
		}
		CHECK(changes <= 400 * 1000 / 5000);
	}
	/* Two instances, one per node, both busy: harden, never soften. */
	{
		struct cpuset g[2];
		double util[2] = {0.95, 0.95};
		struct ctl_input in = {util, 2, g, 2, 0};
		char reason[160];
		unsigned int soft = 0;

		cpuset_zero(&g[0]);
		cpuset_zero(&g[1]);
		cpuset_set(&g[0], 0);
		cpuset_set(&g[1], 1);
		ctl_init(&s, &p);
		s.rung = s.nrungs - 1;
		for (int i = 0; i < 100; i++) {
			now += 1000;
			in.now_ms = now;
			if (ctl_step(&p, &s, &in, reason, sizeof(reason)) ==
			    CTL_SOFTEN)
				soft++;
		}
		CHECK(soft == 0 && s.rung == 0);
		/* Instance A busy, B idle: A may spill into node 1. */
		util[1] = 0.05;
		for (int i = 0; i < 100; i++) {
			now += 1000;
			in.now_ms = now;
			ctl_step(&p, &s, &in, reason, sizeof(reason));
		}
		CHECK(s.rung == s.nrungs - 1);
	}
	/* No managed work: hold. */
	{
		double util[2] = {1, 0};
		struct ctl_input in = {util, 2, NULL, 0, 0};
		char reason[160];

		CHECK(ctl_step(&p, &s, &in, reason, sizeof(reason)) ==
		      CTL_HOLD);
		CHECK_STR(reason, "no managed work");
	}
	/* softest == hardest: a single rung. */
	{
		struct ctl_params q = p;

		q.softest = q.hardest;
		ctl_init(&s, &q);
		CHECK(s.nrungs == 1);
	}
}

void test_write_order(void)
{
	/* Every transition between valid ratios keeps a valid midpoint. */
	static const unsigned int v[] = {1, 2, 3, 4, 5, 10, 100, 10000};
	bool ok = true;

	for (size_t a = 0; a < ARRAY_SIZE(v); a++)
		for (size_t b = 0; b <= a; b++)
			for (size_t c = 0; c < ARRAY_SIZE(v); c++)
				for (size_t d = 0; d <= c; d++) {
					struct ratio cur = {v[a], v[b]};
					struct ratio nx = {v[c], v[d]};
					struct ratio mid;

					if (ctl_write_allowed_first(cur, nx))
						mid = (struct ratio){
							nx.allowed,
							cur.preferred};
					else
						mid = (struct ratio){
							cur.allowed,
							nx.preferred};
					if (mid.allowed < mid.preferred)
						ok = false;
				}
	CHECK(ok);
}

static void put_ratio(const char *a, const char *p)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_allowed", proc);
	put(path, a);
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_preferred", proc);
	put(path, p);
}

static const char *ratio_now(void)
{
	static char out[64];
	struct roots r;
	struct ratio v;

	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	if (sysctl_read_ratio(&r, &v) < 0)
		return "?";
	snprintf(out, sizeof(out), "%u:%u", v.allowed, v.preferred);
	return out;
}

void test_sysctl(void)
{
	struct sysctl_ratio s;
	struct roots r;
	char path[PATH_MAX];

	fixture_reset();
	snprintf(r.proc, sizeof(r.proc), "%s", proc);
	snprintf(r.run, sizeof(r.run), "%s/run-sysctl", tmp);
	snprintf(path, sizeof(path), "%s/%s", r.run, SYSCTL_ORIG_FILE);
	CHECK(sysctl_init(&s, &r, false, true) == -ENOENT && !s.have);
	put_ratio("100\n", "1\n");

	/* The original is saved at the first write, which is ours to restore. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(get(path) == NULL);
	CHECK(sysctl_set(&s, (struct ratio){50, 1}, "test") == 0);
	CHECK_STR(get(path), "100:1\n");
	CHECK_STR(ratio_now(), "50:1");
	/* kill -9 here: the next daemon restores 100:1, not 50:1. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(s.orig.allowed == 100 && s.cur.allowed == 50 && s.owned);
	CHECK(sysctl_set(&s, (struct ratio){5, 4}, "test") == 0);
	CHECK_STR(ratio_now(), "5:4");
	sysctl_restore(&s);
	CHECK_STR(ratio_now(), "100:1");
	sysctl_done(&s);
	CHECK(get(path) == NULL);

	/* sysctl -w by an admin: paused, left alone on stop. */
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(sysctl_set(&s, (struct ratio){50, 1}, "test") == 0);
	CHECK(!sysctl_check(&s));
	put_ratio("7\n", "1\n");
	CHECK(sysctl_check(&s) && s.paused);
	CHECK(sysctl_set(&s, (struct ratio){20, 1}, "test") == -EBUSY);
	CHECK_STR(ratio_now(), "7:1");
	/* SIGUSR1 or reload: changes resume from the admin's value. */
	sysctl_resume(&s);
	CHECK(!s.paused && s.cur.allowed == 7);
	CHECK(sysctl_set(&s, (struct ratio){20, 1}, "test") == 0);
	CHECK_STR(ratio_now(), "20:1");
	put_ratio("9\n", "1\n");
	sysctl_restore(&s);
	CHECK_STR(ratio_now(), "9:1");
	sysctl_done(&s);

	/*
	 * F1: ratio mode "off" never writes, so it saves nothing: after a
	 * kill -9 and an admin's sysctl -w, the next daemon does not take
	 * the admin's value for its predecessor's, and a stop leaves it.
	 */
	put_ratio("100\n", "1\n");
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(get(path) == NULL);
	put_ratio("7\n", "1\n");
	CHECK(sysctl_init(&s, &r, false, true) == 0);
	CHECK(!s.owned && s.orig.allowed == 7);
	sysctl_restore(&s);
	CHECK_STR(ratio_now(), "7:1");
	sysctl_done(&s);
	put_ratio("9\n", "1\n");

	/* Dry run and --once save nothing; a dry run writes nothing. */
	CHECK(sysctl_init(&s, &r, true, true) == 0);
	CHECK(get(path) == NULL);
	CHECK(sysctl_set(&s, (struct ratio){3, 1}, "test") == 0);
	CHECK_STR(ratio_now(), "9:1");
	CHECK(sysctl_init(&s, &r, false, false) == 0 && get(path) == NULL);
}

void test_rulectl(void)
{
	/* Samples of one second on a 2 x 2 machine: 2 CPUs outside. */
	const uint64_t S = 1000000000ULL, MS = 1000000ULL;
	static const struct {
		const char *what;
		unsigned int rung; /* before */
		uint64_t run_ms, delay_ms, outside_ms;
		double outside_busy;
		unsigned int outside_cpus;
		enum rulectl_action act;
		unsigned int rung_after;
		double home_idle; /* of 2 preferred CPUs; 0: home full */
		bool wait_known;
		double outside_spare; /* per CPU its idle less its queue */
	} cases[] = {
		{"a ping-pong pair on its node: no waiting, stays hard",
		 0, 900, 5, 0, 0.0, 2, RULECTL_HOLD, 0, 0.0, false, 0},
		{"a pair waiting on wakeups (15%) with its home half idle: hard",
		 0, 900, 160, 0, 0.0, 2, RULECTL_HOLD, 0, 1.0, false, 0},
		{"... the same with its home full: its own wakeups, it asks "
		 "for no CPU more than home has: hard",
		 0, 900, 160, 0, 0.0, 2, RULECTL_HOLD, 0, 0.2, false, 0},
		{"... a TCG pair that runs 1.55 CPUs and waits 14%, home full",
		 0, 1550, 250, 0, 0.0, 2, RULECTL_HOLD, 0, 0.0, false, 0},
		{"a pair whose home others fill: it queues behind them, soften",
		 0, 900, 900, 0, 0.0, 2, RULECTL_SOFTEN, 3, 0.0, false, 0},
		{"a lone busy instance, 4 threads on 2 CPUs, node 1 idle",
		 0, 2000, 2000, 0, 0.05, 2, RULECTL_SOFTEN, 3, 0.0, false, 0},
		{"... softened again: jumps, never past the softest",
		 6, 2000, 1500, 300, 0.3, 2, RULECTL_SOFTEN, 8, 0.0, false, 0},
		{"... at the softest, still waiting: holds",
		 8, 3000, 600, 1000, 1.0, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"... spread: no waiting, but it runs outside: holds",
		 8, 3900, 40, 1900, 1.9, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"waiting, but nothing idle outside: no softening",
		 0, 2000, 2000, 0, 1.9, 2, RULECTL_HOLD, 0, 0.0, false, 0},
		{"softened, a second instance takes the outside: harder",
		 8, 1800, 400, 200, 2.0, 2, RULECTL_HOLD, 8, 0.0, false, 0},
		{"softened, idle and unused: calm, one rung per hold",
		 5, 900, 5, 10, 0.1, 2, RULECTL_HOLD, 5, 0.0, false, 0},
		{"too little work to judge: holds (a calm sample)",
		 5, 5, 1, 0, 0.0, 2, RULECTL_HOLD, 5, 0.0, false, 0},
		{"no CPU outside at all (one node, or memory-only others)",
		 0, 2000, 2000, 0, 0.0, 0, RULECTL_HOLD, 0, 0.0, false, 0},
		{"two busy instances: node 1 idles at times, but its tasks queue",
		 0, 2000, 2000, 0, 1.2, 2, RULECTL_HOLD, 0, 0.0, true, 0.0},
		{"... the same without /proc/schedstat: idle time is all it sees",
		 0, 2000, 2000, 0, 1.2, 2, RULECTL_SOFTEN, 3, 0.0, false, 0.0},
		{"... node 1 as idle and nobody queues there: soften",
		 0, 2000, 2000, 0, 0.05, 2, RULECTL_SOFTEN, 3, 0.0, true, 1.85},
		{"... a pair waits on wakeups outside (0.4 tasks): soften",
		 0, 2000, 2000, 0, 1.0, 2, RULECTL_SOFTEN, 3, 0.0, true, 0.6},
		{"three tasks pinned to one CPU outside, the other idle: soften",
		 0, 2000, 2000, 0, 1.0, 2, RULECTL_SOFTEN, 3, 0.0, true, 1.0},
		{"a lone instance spread over both nodes queues there itself: "
		 "holds (whose queue it is is not known)",
		 8, 3000, 1000, 1500, 1.6, 2, RULECTL_HOLD, 8, 0.0, true, 0.0},
	};
	struct rulectl_params p;
	struct rulectl_state st;
	struct config *c;
	char err[512], why[160];

	c = load("", err, sizeof(err));
	if (!c)
		return;
	rulectl_params_default(c, &p);
	CHECK(p.nrungs >= 4);
	CHECK(p.ladder[0].allowed == 100 && p.ladder[0].preferred == 1);
	CHECK(p.ladder[p.nrungs - 1].allowed == 5 &&
	      p.ladder[p.nrungs - 1].preferred == 4);
	CHECK(p.nrungs == 9);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rulectl_sample in = {
			.runtime_ns = cases[i].run_ms * MS,
			.delay_ns = cases[i].delay_ms * MS,
			.outside_ns = cases[i].outside_ms * MS,
			.interval_ns = S,
			.outside_cpus = cases[i].outside_cpus,
			.outside_busy = cases[i].outside_busy,
			.home_cpus = 2,
			.home_busy = 2.0 - cases[i].home_idle,
			.wait_known = cases[i].wait_known,
			.outside_spare = cases[i].outside_spare,
		};
		enum rulectl_action a;

		st = (struct rulectl_state){cases[i].rung, 0};
		a = rulectl_step(&p, &st, &in, why, sizeof(why));
		if (a != cases[i].act || st.rung != cases[i].rung_after)
			printf("# %s: action %d rung %u (%s)\n", cases[i].what,
			       a, st.rung, why);
		CHECK(a == cases[i].act);
		CHECK(st.rung == cases[i].rung_after);
	}

	/* Hardening is slow: harden_hold calm samples per rung. */
	struct rulectl_sample calm = {900 * MS, 5 * MS, 0, S, 2, 0.2, false, 0, 2, 2.0, 0, false};
	struct rulectl_sample busy = {1800 * MS, 400 * MS, 200 * MS, S, 2, 2.0, false, 0, 2, 2.0, 0, false};
	unsigned int samples = 0;

	st = (struct rulectl_state){p.nrungs - 1, 0};
	while (st.rung > 0 && samples < 1000) {
		rulectl_step(&p, &st, &calm, why, sizeof(why));
		samples++;
	}
	CHECK(samples == (p.nrungs - 1) * p.harden_hold);
	CHECK(strstr(why, "no need"));
	/* One sample that asks for softer starts the count over. */
	st = (struct rulectl_state){4, 0};
	for (unsigned int k = 0; k + 1 < p.harden_hold; k++)
		rulectl_step(&p, &st, &busy, why, sizeof(why));
	CHECK(st.rung == 4 && strstr(why, "no room outside"));
	rulectl_step(&p, &st, &(struct rulectl_sample){900 * MS, 50 * MS, 300 * MS, S, 2, 1.0, false, 0, 2, 2.0, 0, false},
		     why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 4 && strstr(why, "hold: tasks wait 5%"));
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, &busy, why, sizeof(why));
	CHECK(st.rung == 3);
	/* Softening is quick: 100:1 to 5:4 in three samples. */
	struct rulectl_sample queue = {2000 * MS, 2000 * MS, 0, S, 2, 0.0, false, 0, 2, 2.0, 0, false};

	st = (struct rulectl_state){0, 0};
	for (int k = 0; k < 3; k++)
		rulectl_step(&p, &st, &queue, why, sizeof(why));
	CHECK(st.rung == p.nrungs - 1);
	CHECK(rulectl_wait(&queue) == 0.5);
	/*
	 * Idle samples are calm: a rule that works one sample in three
	 * (unused softness, or idle) hardens a rung per harden_hold
	 * samples, as one always idle does.  They used to start the count
	 * over, so such a rule stayed soft.
	 */
	struct rulectl_sample idle = {5 * MS, 1 * MS, 0, S, 2, 0.0, false, 2.0, 2, 2.0, 0, false};

	st = (struct rulectl_state){4, 0};
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, k % 3 ? &idle : &calm, why, sizeof(why));
	CHECK(st.rung == 3 && st.calm == 0);
	for (unsigned int k = 0; k < p.harden_hold; k++)
		rulectl_step(&p, &st, &idle, why, sizeof(why));
	CHECK(st.rung == 2 && strstr(why, "idle: too little work"));
	/* Still a sample that asks for softer starts the count over. */
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	rulectl_step(&p, &st, &queue, why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 5);
	/* Nothing measured yet (no interval) is not calm. */
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	idle.interval_ns = 0;
	rulectl_step(&p, &st, &idle, why, sizeof(why));
	CHECK(st.calm == 0 && st.rung == 5);
	CHECK(rulectl_outside(&busy) > 0.11 && rulectl_outside(&busy) < 0.12);
	config_free(c);
}

/*
 * L5: the room of a rule counts only the CPUs its tasks may be placed on
 * (its cgroups' cpuset.cpus.effective, which AllowedCPUs= narrows): a
 * rule confined to node 0 has no room on an idle node 1, so it does not
 * soften towards it.
 */
void test_rulectl_room(void)
{
	struct cpuset all, valid, wait_valid, pref, allowed;
	double busy[CPUSET_MAX] = {0}, wait[CPUSET_MAX] = {0};
	struct rulectl_cpus c = {&all, busy, wait, &valid, &wait_valid};
	struct rulectl_sample in;

	cpuset_parse_list("0-3", &all);
	cpuset_parse_list("0-3", &valid);
	cpuset_parse_list("0-3", &wait_valid);
	cpuset_parse_list("0", &pref);
	busy[0] = busy[1] = 1.0; /* node 0 (CPUs 0-1) busy, node 1 idle */
	wait[1] = 0.5;
	/* Hard masks unknown: every CPU. */
	rulectl_room(&c, &pref, NULL, &in);
	CHECK(in.home_cpus == 1 && in.outside_cpus == 3 && in.wait_known);
	CHECK(in.outside_busy == 1.0 && in.outside_spare == 2.0);
	/* Confined to node 0: one busy CPU outside, no spare. */
	cpuset_parse_list("0-1", &allowed);
	rulectl_room(&c, &pref, &allowed, &in);
	CHECK(in.home_cpus == 1 && in.outside_cpus == 1);
	CHECK(in.outside_busy == 1.0 && in.outside_spare == 0);
	/* An empty set is unknown too. */
	cpuset_zero(&allowed);
	rulectl_room(&c, &pref, &allowed, &in);
	CHECK(in.outside_cpus == 3);
	/* No /proc/schedstat: waiting unknown, idle counts whole. */
	cpuset_zero(&wait_valid);
	rulectl_room(&c, &pref, NULL, &in);
	CHECK(!in.wait_known && in.outside_spare == 2.0);
}
