#!/bin/bash
# No bouncing between the load balancer and going home (kernel issue #15).
# An overloaded preferred node: 3 CPU-bound workers per CPU of P, soft
# affinity P at the default 100:1, and one CPU-bound hog hard-pinned to
# each CPU outside P (softaff_balance bounce), for SECONDS (30) of guest
# time.  The 100:1 rule keeps the workers home (3 runnable tasks against 1
# is far from 100 times busier), but the balancer spills one once
# balancing has failed often enough; the going-home tick used to send it
# straight back, through the stopper, and the balancer out again.
#
#   round trips   a spill event (balance_spill or wakeup_spill) followed by
#                 a return event (go_home, balance_return, wakeup_return) of
#                 the same worker, from the sched_soft_affinity tracepoint.
#                 Bound from the issue: at most one per worker per second
#                 (the kernel holds a spilled task out for a second, so
#                 reaching the bound needs a spill right after every
#                 return).  Measured before the fix: see the cover letter.
#   throughput    the work (loop iterations) of all workers and hogs with
#                 soft affinity, against the same workload without it
#                 (-N), each SECONDS long, alternated twice so drift in the
#                 host's speed hits both: the soft total is at least 95%
#                 of the unaffined one (the bound of the issue).  Every CPU
#                 is busy in both cases, so only migrations and the spill
#                 hold can cost throughput.
# P is node 0, or the first half of the CPUs on a 1-node guest.
set -u
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
kv() { grep -o "\b$1=[^ ]*" "$2" | head -1 | cut -d= -f2; }

SECONDS_RUN=${SECONDS_RUN:-30}

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
ncpu=$(nproc)
((ncpu >= 2)) || skip_all "needs 2 CPUs"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if ((nodes >= 2)); then
	P=$(cat /sys/devices/system/node/node0/cpulist)
else
	P="0-$((ncpu / 2 - 1))"
fi
expand() { tr ',' '\n' <<<"$1" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done; }
np=$(expand "$P" | wc -l)
outside=$(comm -23 <(seq 0 $((ncpu - 1)) | sort) <(expand "$P" | sort) | sort -n | paste -sd,)
[[ -n $outside ]] || skip_all "no CPU outside P=$P"
workers=$((3 * np))
echo "# P=$P ($np CPUs), outside=$outside; $workers workers soft P, one hog per outside CPU, ${SECONDS_RUN} s"

tracing=/sys/kernel/tracing
[[ -e $tracing/events ]] || mount -t tracefs nodev $tracing 2>/dev/null
event=$tracing/events/sched/sched_soft_affinity
[[ -e $event/enable ]] || skip_all "no $event"

sysdir=/proc/sys/kernel
daemon_was_active=0
if systemctl -q is-active softaffd 2>/dev/null; then
	systemctl stop softaffd && daemon_was_active=1
fi
old_allowed=$(cat $sysdir/sched_allowed) old_preferred=$(cat $sysdir/sched_preferred)
old_schedstats=$(cat $sysdir/sched_schedstats)
tmp=$(mktemp -d)
restore() {
	echo 0 >$event/enable
	echo "$old_allowed" >$sysdir/sched_allowed
	echo "$old_preferred" >$sysdir/sched_preferred
	echo "$old_schedstats" >$sysdir/sched_schedstats
	rm -rf "$tmp"
	((daemon_was_active)) && systemctl start softaffd
}
trap restore EXIT
echo 100 >$sysdir/sched_allowed && echo 1 >$sysdir/sched_preferred
echo 1 >$sysdir/sched_schedstats

run() { # run OUTFILE [-N]
	local f=$1
	shift
	softaff_balance bounce -S "$P" -x "$outside" -w "$workers" -t "$SECONDS_RUN" "$@" >"$f" 2>&1 ||
		echo "# softaff_balance bounce $* failed: $(tail -1 "$f")"
	echo "# bounce $*: $(tr '\n' ' ' <"$f")"
}

# 1. Round trips, from the tracepoint, in the first soft run.
echo 0 >$event/enable
: >$tracing/trace
echo 1 >$event/enable
run "$tmp/soft1"
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
		printf "workers=%d spills=%d round_trips=%d max_per_worker=%d max_per_s=%.2f\n",
			n, spills, total, max, max / secs
	}' "$tmp/trace" >"$tmp/rt"
echo "# trace: $(cat "$tmp/rt") ($(wc -l <"$tmp/trace") lines)"
max_per_s=$(kv max_per_s "$tmp/rt")
spills=$(kv spills "$tmp/rt")
if [[ -n $max_per_s ]] && ! ge "$max_per_s" 1.0001; then
	ok "round trips: at most $max_per_s per worker per second (<= 1), $(kv round_trips "$tmp/rt") in all, $spills spills"
else
	nok "round trips: ${max_per_s:-?} per worker per second, want <= 1"
fi

# 2. Throughput: soft, none, soft, none.
run "$tmp/none1" -N
run "$tmp/soft2"
run "$tmp/none2" -N
soft=$(($(kv work_total "$tmp/soft1") + $(kv work_total "$tmp/soft2")))
none=$(($(kv work_total "$tmp/none1") + $(kv work_total "$tmp/none2")))
pct=$(awk -v s="$soft" -v u="$none" 'BEGIN { printf "%.1f", u ? 100 * s / u : 0 }')
if ge "$pct" 95; then
	ok "throughput with soft affinity: $pct% of the unaffined workload's (>= 95%)"
else
	nok "throughput with soft affinity: $pct% of the unaffined workload's, want >= 95%"
fi
echo "1..$n"
