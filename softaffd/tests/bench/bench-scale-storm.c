// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rename storms through a copy of the daemon's loop: what the dirty
 * queue costs per second, what marking costs the connector, and how
 * long each process waits from its event to its evaluation, against
 * the promise softaffd(8) makes.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-scale.h"

/*
 * A storm of comm changes at rate per second for secs seconds, round
 * robin over every process but the kernel threads, run through a model
 * of the daemon's loop: a connector dispatch reads up to
 * EVENTS_PER_DISPATCH events (here: marked with mgr_on_change), then the
 * dirty queue gets a slice as on_dirty() (daemon-work.c) gives it,
 * within EVAL_BUDGET_MS per BUDGET_WINDOW_MS (struct budget, util.c).
 * The loop dispatches connector events before the dirty queue, so this
 * alternation is an approximation, and the connector's dispatch rate
 * limit is not modelled.  The harness sleeps when the daemon would
 * wait for an event.  After the storm the queue drains under the same
 * budget.
 *
 * The slice is served one evaluation at a time (mgr_flush with a
 * deadline already past evaluates exactly one, the queue's head, which
 * the harness looks at first), so the time each process is reached is
 * known: its wait is from the event that first marked it while it was
 * not waiting (later marks keep its place) to its evaluation.  So is
 * the work done meanwhile: the wall time of the evaluations between its
 * mark and its own, its own included, which in a FIFO queue is
 * evaluating the processes marked before it.  The queue also holds the
 * rest of thread walks that an evaluation capped (manager-threads.c,
 * the big processes'): those are the daemon's work, counted as such
 * ("walk slices"), and no rename's evaluation.  A rename of a process
 * whose walk entry waits joins that entry, and is reached ahead of the
 * renames marked before it ("joined").
 *
 * keep: each rename keeps the process's rule (a managed one stays
 * managed: a comm rule's glob still matches); flip: a process managed
 * by a comm rule flips between matching and not, so every other
 * evaluation restores all its threads and the next adopts them again.
 */
struct stormer {
	int pid;
	bool alt;	       /* the renamed stat is in place */
	bool pending;	       /* marked, not evaluated yet */
	uint64_t mark_ns;      /* when first marked */
	uint64_t work_at_mark; /* the storm's evaluation time by then */
	size_t win_at_mark;    /* the budget window it was marked in */
	size_t ahead;	       /* processes waiting when it was marked */
	size_t at;	       /* where in the ring that mark is */
	char *stat[2];	       /* stat text: its own, renamed */
	size_t len[2];
};

struct wait_rec {
	uint64_t wait_ns, work_ns; /* mark to evaluation; work meanwhile */
	size_t windows;		   /* budget windows opened meanwhile */
};

struct window {
	uint64_t start_ms, cpu_ns, wall_ns, used_ms;
	size_t evals;
};

static struct stormer *st;
static size_t nst;

/* Renames waiting in the dirty queue, not the rest of a thread walk. */
static size_t queue_len(void)
{
	size_t n = 0;

	for (struct dirty *d = mgr->dirty.head; d; d = d->next)
		n += (d->why & ~(unsigned int)D_THREADS) != 0;
	return n;
}

static char *read_whole(const char *path, size_t *len)
{
	char buf[4096];
	ssize_t n = read_file(path, buf, sizeof(buf));
	char *s;

	if (n < 0)
		die("cannot read a stat file");
	s = xcalloc((size_t)n + 1, 1);
	memcpy(s, buf, (size_t)n);
	*len = (size_t)n;
	return s;
}

static void write_stat(struct stormer *s, bool alt)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", roots.proc, s->pid);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 ||
	    write(fd, s->stat[alt], s->len[alt]) != (ssize_t)s->len[alt])
		die("cannot rewrite a stat file");
	close(fd);
	s->alt = alt;
}

static void storm_setup(bool flip)
{
	char path[PATH_MAX];

	st = xcalloc(nprocs, sizeof(*st));
	for (size_t k = 0; k < nprocs; k++) {
		struct proc_ent *p = &procs[k];
		struct stormer *s;
		char *open_, *close_;

		if (p->kind == 'k')
			continue;
		if (nst && p->pid <= st[nst - 1].pid)
			die("the manifest is not in pid order");
		s = &st[nst++];
		s->pid = p->pid;
		snprintf(path, sizeof(path), "%s/%d/stat", roots.proc, p->pid);
		s->stat[0] = read_whole(path, &s->len[0]);
		s->stat[1] = xcalloc(s->len[0] + 1, 1);
		memcpy(s->stat[1], s->stat[0], s->len[0] + 1);
		s->len[1] = s->len[0];
		/* comm is between the first '(' and the last ')'. */
		open_ = strchr(s->stat[1], '(');
		close_ = strrchr(s->stat[1], ')');
		if (!open_ || close_ <= open_ + 1)
			die("a stat file without a comm");
		if (flip && p->kind == 'm' && !strncmp(p->comm, "svc", 3))
			open_[1] = 'x'; /* "svc07-w3" -> "xvc07-w3": no rule */
		else /* the last letter: every glob that matched still does */
			close_[-1] = close_[-1] == '~' ? 'x' : '~';
	}
}

/* The stormer of pid, or nst: st is in pid order, as the manifest. */
static size_t stormer_of(int pid)
{
	size_t lo = 0, hi = nst;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nst && st[lo].pid == pid ? lo : nst;
}

static void storm_teardown(void)
{
	/* Names back as they were, and the manager told, untimed. */
	for (size_t i = 0; i < nst; i++) {
		if (st[i].alt) {
			write_stat(&st[i], false);
			mgr_on_change(mgr, st[i].pid);
		}
		free(st[i].stat[0]);
		free(st[i].stat[1]);
	}
	drain_queue();
	free(st);
	st = NULL;
	nst = 0;
}

/* Windows of the budget, as budget_left() opens them. */
static struct window *wins;
static size_t nwins, capwins;

/*
 * The window an event now belongs to: the last one opened, or the next
 * if that one is over (budget_left() opens it on its next call).
 */
static size_t window_now(void)
{
	if (!nwins)
		return 0;
	return now_ms() - wins[nwins - 1].start_ms >= BUDGET_WINDOW_MS
		       ? nwins
		       : nwins - 1;
}

static uint64_t budget_left_tracked(struct budget *b, uint64_t now)
{
	uint64_t start = b->start_ms, left = budget_left(b, now);

	if (b->start_ms != start || !nwins) {
		if (nwins == capwins) {
			capwins = capwins ? capwins * 2 : 64;
			wins = realloc(wins, capwins * sizeof(*wins));
			if (!wins)
				die("out of memory");
		}
		wins[nwins++] = (struct window){.start_ms = b->start_ms};
	}
	return left;
}

/* What a storm did, for its report. */
struct storm {
	uint64_t t0, t_end, k, lag_max;
	uint64_t mark_cpu, eval_cpu, eval_wall, evals;
	uint64_t eval_max; /* the longest one: how far a slice overruns */
	uint64_t walk_wall; /* of the walk slices */
	size_t ahead_max, starved, mismatch, joined, walk_slices;
	struct wait_rec *waits;
	size_t nwait;
};

/*
 * One slice of the dirty queue as on_dirty() gives it, up to end (a
 * now_ms() value), an evaluation at a time; *work is the wall time of
 * all evaluations so far.  The processes in ring[*head..tail) are in
 * the order they were marked.
 */
static void storm_slice(struct storm *x, uint64_t end, uint64_t *work,
			const size_t *ring, size_t *head, size_t tail,
			size_t *pending, struct budget *eb, uint64_t start_ns)
{
	uint64_t c0 = cpu_ns(), w0 = mono_ns(), t_prev = w0, c1, w1;
	size_t n = 0;

	do {
		const struct dirty *d = mgr->dirty.head;
		bool rename = d->why & ~(unsigned int)D_THREADS;
		size_t i = stormer_of(d->node.pid);
		uint64_t t;

		mgr_flush(mgr, 0); /* exactly one: d */
		t = mono_ns();
		*work += t - t_prev;
		if (t - t_prev > x->eval_max)
			x->eval_max = t - t_prev;
		if (!rename) {
			x->walk_slices++;
			x->walk_wall += t - t_prev;
			t_prev = t;
			continue;
		}
		t_prev = t;
		if (i == nst || !st[i].pending)
			die("an evaluation of nothing");
		/*
		 * The oldest mark still waiting is its turn.  Marks of
		 * processes done ahead of their turn are stale, the
		 * process done or marked again further on.
		 */
		while (*head < tail && (!st[ring[*head]].pending ||
					st[ring[*head]].at != *head))
			(*head)++;
		if (*head < tail && ring[*head] == i)
			(*head)++;
		else
			x->joined++;
		st[i].pending = false;
		(*pending)--;
		x->waits[x->nwait++] = (struct wait_rec){
			t - st[i].mark_ns, *work - st[i].work_at_mark,
			nwins - 1 - st[i].win_at_mark};
		n++;
	} while (now_ms() < end && dirtyq_count(&mgr->dirty));
	c1 = cpu_ns();
	w1 = mono_ns();
	budget_charge_since(eb, start_ns);
	wins[nwins - 1].cpu_ns += c1 - c0;
	wins[nwins - 1].wall_ns += w1 - w0;
	wins[nwins - 1].evals += n;
	wins[nwins - 1].used_ms = eb->used_ns / 1000000;
	x->eval_cpu += c1 - c0;
	x->eval_wall += w1 - w0;
	x->evals += n;
}

/* The storm itself: events at rate for secs, then the queue drained. */
static void storm_run(struct storm *x, unsigned int rate, unsigned int secs)
{
	struct budget eb = {EVAL_BUDGET_MS, BUDGET_WINDOW_MS, 0, 0};
	uint64_t total = (uint64_t)rate * secs;
	uint64_t period = 1000000000ULL / rate;
	uint64_t work = 0; /* wall time of all evaluations so far */
	uint64_t drain_cap_ns = 600ULL * 1000000000ULL;
	/*
	 * The processes in the order they were marked, to tell those
	 * reached ahead of their turn.  A process is pushed each time it
	 * is marked while not waiting: at most once per event, so no
	 * wrap-around.
	 */
	size_t *ring, head = 0, tail = 0, pending = 0;

	ring = xcalloc((size_t)total + 1, sizeof(*ring));
	x->waits = xcalloc((size_t)total + nst, sizeof(*x->waits));
	nwins = 0;
	x->t0 = mono_ns();
	for (;;) {
		uint64_t now = mono_ns(), start, start_ns, left;

		/* The connector: events due by now, a turn's worth. */
		if (x->k < total && x->t0 + x->k * period <= now) {
			uint64_t due = (now - x->t0) / period + 1, n, c0;

			if (due > total)
				due = total;
			n = due - x->k;
			if (n > EVENTS_PER_DISPATCH)
				n = EVENTS_PER_DISPATCH;
			/* The kernel renamed them before the events came. */
			for (uint64_t j = 0; j < n; j++) {
				struct stormer *s = &st[(x->k + j) % nst];

				write_stat(s, !s->alt);
			}
			if (now - (x->t0 + x->k * period) > x->lag_max)
				x->lag_max = now - (x->t0 + x->k * period);
			c0 = cpu_ns();
			for (uint64_t j = 0; j < n; j++) {
				size_t i = (size_t)((x->k + j) % nst);
				struct stormer *s = &st[i];

				if (!s->pending) {
					s->pending = true;
					s->mark_ns = now;
					s->work_at_mark = work;
					s->win_at_mark = window_now();
					s->ahead = pending++;
					if (s->ahead > x->ahead_max)
						x->ahead_max = s->ahead;
					s->at = tail;
					ring[tail++] = i;
				}
				mgr_on_change(mgr, s->pid);
			}
			x->mark_cpu += cpu_ns() - c0;
			x->k += n;
		}
		/* The dirty queue: on_dirty(). */
		start_ns = monotonic_ns();
		start = start_ns / 1000000;
		left = budget_left_tracked(&eb, start);
		if (left > SLICE_MS)
			left = SLICE_MS;
		if (left && dirtyq_count(&mgr->dirty))
			storm_slice(x, start + left, &work, ring, &head, tail,
				    &pending, &eb, start_ns);
		/* Sanity: the harness's idea of the queue is the queue's. */
		if (queue_len() != pending)
			x->mismatch++;
		if (x->k >= total && !dirtyq_count(&mgr->dirty))
			break;
		now = mono_ns();
		if (now - x->t0 > secs * 1000000000ULL + drain_cap_ns) {
			x->starved = pending;
			break;
		}
		/* loop_arm(): wait for the next event or budget. */
		{
			uint64_t next = x->k < total ? x->t0 + x->k * period
						     : UINT64_MAX;

			if (dirtyq_count(&mgr->dirty)) {
				if (budget_left_tracked(&eb, now_ms()))
					next = now;
				else if (budget_renews(&eb) * 1000000ULL < next)
					next = budget_renews(&eb) * 1000000ULL;
			}
			if (next > now && next != UINT64_MAX)
				sleep_until_ns(next);
		}
	}
	x->t_end = mono_ns();
	free(ring);
}

/*
 * A storm's figures, as "KEY_name value" lines.  The promise
 * (softaffd(8)): late by up to a second while the processes marked
 * before it fit in a second's budget, else by as many seconds as
 * evaluating them takes.  With W the evaluation time from its mark to
 * its evaluation, a FIFO queue drained at its full budget B in every
 * window reaches it in the window it was marked in or within max(1,
 * ceil(W / B)) windows after: that is the check, in windows, which a
 * host that is slow to run the daemon does not change.  In seconds it
 * is the same number, if each window opens on time; how late they
 * opened is reported (windows that follow one that used its budget: a
 * backlog was there, so the next should open as soon as its second
 * began).
 *
 * B is 200 ms less 5%: the budget is charged to the nanosecond, but a
 * slice's deadline and what budget_left() grants are whole milliseconds
 * of now_ms(), so a slice of at most SLICE_MS can end up to a
 * millisecond before it was due; the least work a full window did is
 * reported.
 */
static void storm_report(const char *key, unsigned int secs,
			 const struct storm *x)
{
	uint64_t *w = xcalloc(x->nwait, sizeof(*w));
	uint64_t max_cpu = 0, max_wall = 0, late_max = 0, late_sum = 0;
	uint64_t least_work = UINT64_MAX;
	double b_ns = EVAL_BUDGET_MS * 1e6 * (1 - 1.0 / SLICE_MS);
	size_t nfull = 0, over = 0, over_s = 0, nlate = 0;
	double worst = 0, worst_bound = 0, worst_work = 0;
	double secs_run = (double)(x->t_end - x->t0) / 1e9;
	/*
	 * The queue's work per second, over whole budget windows: the
	 * storm's end cuts the last one short, though its budget was a
	 * whole second's.
	 */
	uint64_t win_end = nwins ? (wins[nwins - 1].start_ms +
				    BUDGET_WINDOW_MS) * 1000000
			       : x->t_end;
	double secs_windows =
		(double)((win_end > x->t_end ? win_end : x->t_end) - x->t0) /
		1e9;
	bool have_worst = false;

	for (size_t i = 0; i < nwins; i++) {
		nfull += wins[i].used_ms >= EVAL_BUDGET_MS;
		if (wins[i].used_ms >= EVAL_BUDGET_MS &&
		    wins[i].wall_ns < least_work)
			least_work = wins[i].wall_ns;
		if (i && wins[i - 1].used_ms >= EVAL_BUDGET_MS) {
			uint64_t late = wins[i].start_ms -
					wins[i - 1].start_ms -
					BUDGET_WINDOW_MS;

			late_sum += late;
			nlate++;
			if (late > late_max)
				late_max = late;
		}
		if (wins[i].cpu_ns > max_cpu)
			max_cpu = wins[i].cpu_ns;
		if (wins[i].wall_ns > max_wall)
			max_wall = wins[i].wall_ns;
	}
	for (size_t i = 0; i < x->nwait; i++) {
		double wait = (double)x->waits[i].wait_ns / 1e9;
		double windows = ceil((double)x->waits[i].work_ns / b_ns);
		double bound = (windows < 1 ? 1 : windows) *
			       BUDGET_WINDOW_MS / 1e3;

		if ((double)x->waits[i].windows > bound)
			over++;
		if (wait > bound)
			over_s++;
		if (!have_worst || wait - bound > worst - worst_bound) {
			worst = wait;
			worst_bound = bound;
			worst_work = (double)x->waits[i].work_ns / 1e6;
			have_worst = true;
		}
		w[i] = x->waits[i].wait_ns;
	}
	printf("%s_events %llu\n%s_processes %zu\n", key,
	       (unsigned long long)x->k, key, nst);
	printf("%s_seconds %.3f\n%s_storm_seconds %u\n", key, secs_run,
	       key, secs);
	printf("%s_lag_max_ms %.3f\n", key, (double)x->lag_max / 1e6);
	printf("%s_evals %llu\n", key, (unsigned long long)x->evals);
	printf("%s_eval_cpu_ms_per_s %.3f\n", key,
	       (double)x->eval_cpu / 1e6 / secs_windows);
	printf("%s_eval_wall_ms_per_s %.3f\n", key,
	       (double)x->eval_wall / 1e6 / secs_windows);
	printf("%s_eval_cpu_ms_max_window %.3f\n", key,
	       (double)max_cpu / 1e6);
	printf("%s_eval_wall_ms_max_window %.3f\n", key,
	       (double)max_wall / 1e6);
	printf("%s_eval_max_ms %.3f\n", key, (double)x->eval_max / 1e6);
	/*
	 * Per rename: the slices' CPU less the walk slices' share,
	 * in wall time (one clock read per evaluation, not two).
	 */
	printf("%s_eval_cpu_us %.3f\n", key,
	       x->evals ? (double)x->eval_cpu *
				  (1 - (double)x->walk_wall /
					       (double)x->eval_wall) /
				  1e3 / (double)x->evals
			: 0);
	printf("%s_walk_slices %zu\n%s_walk_wall_ms %.1f\n", key,
	       x->walk_slices, key, (double)x->walk_wall / 1e6);
	printf("%s_mark_cpu_ms_per_s %.3f\n", key,
	       (double)x->mark_cpu / 1e6 / secs_run);
	printf("%s_windows %zu\n%s_full_windows %zu\n", key, nwins, key,
	       nfull);
	printf("%s_waiting_max %zu\n", key, x->ahead_max + 1);
	printf("%s_wait_p50_ms %.1f\n", key,
	       (double)quantile(w, x->nwait, 0.5) / 1e6);
	printf("%s_wait_p99_ms %.1f\n", key,
	       (double)quantile(w, x->nwait, 0.99) / 1e6);
	printf("%s_wait_max_ms %.1f\n", key,
	       x->nwait ? (double)w[x->nwait - 1] / 1e6 : 0);
	printf("%s_worst_wait_s %.3f\n%s_worst_bound_s %.2f\n", key,
	       worst, key, worst_bound);
	printf("%s_worst_work_ms %.1f\n", key, worst_work);
	printf("%s_over_promise %zu\n%s_over_promise_s %zu\n", key,
	       over, key, over_s);
	printf("%s_starved %zu\n", key, x->starved);
	printf("%s_least_work_full_window_ms %.1f\n", key,
	       nfull ? (double)least_work / 1e6 : 0);
	printf("%s_window_late_mean_ms %.1f\n%s_window_late_max_ms %llu\n",
	       key, nlate ? (double)late_sum / (double)nlate : 0, key,
	       (unsigned long long)late_max);
	printf("%s_queue_mismatch %zu\n%s_joined %zu\n", key,
	       x->mismatch, key, x->joined);
	free(w);
}

void bench_storm(const char *key, unsigned int rate, unsigned int secs,
		 bool flip)
{
	struct storm x = {0};

	storm_setup(flip);
	drain_queue();
	storm_run(&x, rate, secs);
	storm_report(key, secs, &x);
	free(x.waits);
	storm_teardown();
}
