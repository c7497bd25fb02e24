#!/bin/bash
# No bouncing between the load balancer and going home (kernel issues #15
# and #25).  An overloaded preferred node: 3 CPU-bound workers per CPU of
# P, soft affinity P at the default 100:1, and one CPU-bound hog
# hard-pinned to each CPU outside P (softaff_balance bounce), for SECONDS
# (30) of guest time.  The 100:1 rule keeps the workers home (3 runnable
# tasks against 1 is far from 100 times busier).  Until the balancer obeyed
# the rule without an escape, it spilled a worker once balancing had
# failed often enough, and the going-home tick, obeying the rule, sent it
# back: 0.30-0.40 round trips per worker per second (one a second with the
# one-second hold before that).
#
#   round trips   a spill event (balance_spill or wakeup_spill) followed by
#                 a return event (go_home, balance_return, wakeup_return) of
#                 the same worker, from the sched_soft_affinity tracepoint,
#                 per worker per second: at most 0.05 (issue #25).  The
#                 rule allows none here; the margin is for a worker that
#                 a hog's start-up leaves a moment of idle to spill into.
#   work          PAIRS (4) pairs of PAIR_SECONDS (10) runs, with soft
#                 affinity and without it (-N), the order alternating from
#                 pair to pair.  Every CPU has work in both cases, so soft
#                 affinity can cost throughput only by leaving a CPU idle or
#                 by the kernel time its migrations take.
#     idle        the guest's idle share (/proc/stat) over the soft runs is
#                 at most 1 point above that over the unaffined runs
#                 (measured 0.8-3.9%, the two within 0.4 points).
#     throughput  the work done, in CPU time: the guest's user time (the
#                 workers' and hogs' loops; nothing else runs) as a share
#                 of all its CPU time, with soft affinity at least 95% of
#                 the unaffined share (the bound of the issue).  Loop
#                 iterations would be the direct measure, but a TCG vCPU's
#                 speed follows the host's scheduling: in one boot the
#                 unaffined 10 s runs did 2.24-3.47 M iterations and
#                 adjacent soft/unaffined pairs 88-140% of each other, so a
#                 bound of 95% on them fails or passes on noise.  A share
#                 of CPU time is a ratio inside the guest, which the host's
#                 speed does not move.  The iteration ratio is printed as
#                 context; what a migration costs in instruction time is
#                 measured by make bench (the spilling state under icount).
# P is node 0, or the first half of the CPUs on a 1-node guest.
set -u
. "${0%/*}/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-30} PAIRS=${PAIRS:-4} PAIR_SECONDS=${PAIR_SECONDS:-10}

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
(($(nproc) >= 2)) || skip_all "needs 2 CPUs"
pick_preferred
[[ -n $outside ]] || skip_all "no CPU outside P=$P"
workers=$((3 * np))
echo "# P=$P ($np CPUs), outside=$outside; $workers workers soft P, one hog per outside CPU, ${SECONDS_RUN} s"

tracing=/sys/kernel/tracing
[[ -e $tracing/events ]] || mount -t tracefs nodev $tracing 2>/dev/null
event=$tracing/events/sched/sched_soft_affinity
[[ -e $event/enable ]] || skip_all "no $event"

tmp=$(mktemp -d)
cleanup() {
	echo 0 >$event/enable
	rm -rf "$tmp"
}
sched_setup
ratio 100 1
echo 1 >$sysdir/sched_schedstats

run() { # run OUTFILE SECONDS [-N]
	local f=$1 secs=$2
	shift 2
	softaff_balance bounce -S "$P" -x "$outside" -w "$workers" -t "$secs" "$@" >"$f" 2>&1 ||
		nok "softaff_balance bounce $* failed: $(tail -1 "$f")"
	echo "# bounce $*: $(tr '\n' ' ' <"$f")"
}
# jiffies of all CPUs: user, idle (with iowait) and all
cpu_jiffies() { awk '/^cpu / { print $2 + $3, $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# 1. Round trips, from the tracepoint, in the first soft run.
echo 0 >$event/enable
: >$tracing/trace
echo 1 >$event/enable
run "$tmp/soft1" "$SECONDS_RUN"
echo 0 >$event/enable
cat $tracing/trace >"$tmp/trace"
tids=$(kv tids "$tmp/soft1")
# Per worker: a return that follows a spill completes a round trip.
awk -v tids="$tids" -v secs="$SECONDS_RUN" '
	BEGIN { n = split(tids, t, ","); for (i = 1; i <= n; i++) want[t[i]] = 1 }
	/sched_soft_affinity:/ {
		pid = ""; reason = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^pid=/) pid = substr($i, 5)
			if ($i ~ /^reason=/) reason = substr($i, 8)
		}
		if (!(pid in want)) next
		if (reason ~ /spill$/) { spills++; out[pid] = 1 }
		else if (out[pid]) { rt[pid]++; total++; out[pid] = 0 }
	}
	END {
		max = 0
		for (p in want) if (rt[p] > max) max = rt[p]
		printf "workers=%d spills=%d round_trips=%d max_per_worker=%d max_per_s=%.2f per_worker_s=%.3f\n",
			n, spills, total, max, max / secs, total / n / secs
	}' "$tmp/trace" >"$tmp/rt"
echo "# trace: $(cat "$tmp/rt") ($(wc -l <"$tmp/trace") lines)"
per_worker_s=$(kv per_worker_s "$tmp/rt")
spills=$(kv spills "$tmp/rt")
if [[ -n $per_worker_s ]] && le "$per_worker_s" 0.05; then
	ok "round trips: $per_worker_s per worker per second (<= 0.05; the busiest worker $(kv max_per_s "$tmp/rt")), $(kv round_trips "$tmp/rt") in all, $spills spills"
else
	nok "round trips: ${per_worker_s:-?} per worker per second, want <= 0.05"
fi

# 2. Work: PAIRS alternating pairs of soft and unaffined runs.
: >"$tmp/pairs"
for ((i = 1; i <= PAIRS; i++)); do
	order="soft none"
	((i % 2 == 0)) && order="none soft"
	for mode in $order; do
		flag=()
		[[ $mode == none ]] && flag=(-N)
		read -r u0 i0 a0 < <(cpu_jiffies)
		run "$tmp/$mode$i" "$PAIR_SECONDS" "${flag[@]}"
		read -r u1 i1 a1 < <(cpu_jiffies)
		echo "$mode $(kv work_total "$tmp/$mode$i") $((u1 - u0)) $((i1 - i0)) $((a1 - a0))" >>"$tmp/pairs"
	done
done
awk '
	{ work[$1] += $2; user[$1] += $3; idle[$1] += $4; all[$1] += $5 }
	END {
		us = user["soft"] / all["soft"]; un = user["none"] / all["none"]
		printf "user_soft_pct=%.2f user_none_pct=%.2f cputime_ratio_pct=%.1f ", 100 * us, 100 * un, 100 * us / un
		printf "idle_soft_pct=%.2f idle_none_pct=%.2f ", 100 * idle["soft"] / all["soft"], 100 * idle["none"] / all["none"]
		printf "iterations_ratio_pct=%.1f\n", 100 * work["soft"] / work["none"]
	}' "$tmp/pairs" >"$tmp/work"
echo "# work: $(cat "$tmp/work")"
idle_soft=$(kv idle_soft_pct "$tmp/work") idle_none=$(kv idle_none_pct "$tmp/work")
le "$idle_soft" "$(awk -v a="$idle_none" 'BEGIN { print a + 1 }')"
check $? "work conservation: CPUs idle $idle_soft% of the time with soft affinity, $idle_none% without (<= 1 point more)"
ratio=$(kv cputime_ratio_pct "$tmp/work")
ge "$ratio" 95
check $? "throughput with soft affinity: user time $(kv user_soft_pct "$tmp/work")% of all CPU time against $(kv user_none_pct "$tmp/work")% without, $ratio% (>= 95%; loop iterations, which follow the host's speed: $(kv iterations_ratio_pct "$tmp/work")%)"
echo "1..$n"
