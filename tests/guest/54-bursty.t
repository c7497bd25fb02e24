#!/bin/bash
# Soft affinity decides slowly, on averages (kernel issue #37): a bursty
# server that prefers its node stays there, and a sustained overload still
# spills, quickly and without ping-pong.  P is node 0; the rest is outside.
#
#   bursty server  softaff_burst server: a hog on each CPU of P runs 60 ms
#                  of every 100 ms (P is 60% busy on average, in bursts
#                  that fill it); THREADS server threads that prefer P serve
#                  RATE requests a second of WORK_US each (3% of P at the
#                  defaults: under TCG, where 4 vCPUs share 2 host cores
#                  and the hogs take both in a burst, a request waits for
#                  a vCPU far longer than on hardware, and 1000 a second
#                  piled up for seconds, overloading P), posted by a client
#                  hard-pinned outside P.  At
#                  100:1, in SECONDS: at most 0.5 cross-node migrations per
#                  server thread per second (the kernel's count, from
#                  sched:sched_migrate_task), at least 90% of the requests
#                  served on P, and at least 90% of the requests served
#                  without the preference in the same boot (the control).
#                  Before the rule decided on averages, every wakeup that
#                  found P's CPUs busy in a burst went outside and came back
#                  at the next idle instant: tens of crossings a second.
#   overload       softaff_burst overload: 2 x |P| CPU-bound threads that
#                  prefer P start on P at once (P 200% loaded).  The outside
#                  absorbs the excess (|P| of them run outside) within
#                  ABSORB_MS (100) in the median of TRIALS (7) trials, beyond
#                  what the same threads need without a preference in the
#                  same boot (the control: TCG's own delay), and in the
#                  5 s after, at most 1
#                  cross-node migration per thread per second in every
#                  trial.
#
# TCG has no caches and no NUMA distance: what carries over to hardware is
# where the threads run and how often they cross, not the latencies (which
# are printed).
set -u
. "${0%/*}/lib.sh"

THREADS=${THREADS:-2} RATE=${RATE:-200} WORK_US=${WORK_US:-300}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10} TRIALS=${TRIALS:-7} ABSORB_MS=${ABSORB_MS:-100}

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
((nodes >= 2)) || skip_all "needs 2 NUMA nodes"
[[ -d /sys/kernel/tracing/instances ]] || skip_all "no tracefs"
pick_preferred
client=$(expand "$outside" | head -1)
echo "# P=$P ($np CPUs), outside=$outside, client on $client"
sched_setup
ratio 100 1

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }

server() { # NAME [-N]
	local name=$1
	shift
	softaff_burst server -S "$P" -c "$client" -n "$THREADS" -r "$RATE" -u "$WORK_US" \
		-d 60 -p 100 -t "$SECONDS_PER_RUN" "$@" >"$tmp/$name" ||
		echo "# softaff_burst server $* failed" >&2
	echo "# $name: $(tr '\n' ' ' <"$tmp/$name")"
}
server soft
server none -N

x=$(kv xnode_per_thread_s "$tmp/soft")
if [[ -n $x ]] && ge "$x" 0 && le "$x" 0.5; then
	ok "bursty server at 100:1: $x cross-node migrations per server thread per second (<= 0.5; without a preference $(kv xnode_per_thread_s "$tmp/none"))"
else
	nok "bursty server at 100:1: ${x:-no} cross-node migrations per server thread per second, want <= 0.5"
fi
h=$(kv home_share "$tmp/soft")
if [[ -n $h ]] && ge "$h" 90; then
	ok "bursty server at 100:1: $h% of the requests served on P (>= 90%; without a preference $(kv home_share "$tmp/none")%)"
else
	nok "bursty server at 100:1: ${h:-no}% of the requests served on P, want >= 90%"
fi
s=$(kv served "$tmp/soft") c=$(kv served "$tmp/none")
if [[ -n $s && -n $c ]] && ((c > 0)) && ge "$(awk -v a="$s" -v b="$c" 'BEGIN { print 100 * a / b }')" 90; then
	ok "bursty server at 100:1: $s requests served against $c without a preference (>= 90%)"
else
	nok "bursty server at 100:1: ${s:-no} requests served against ${c:-no} without a preference, want >= 90%"
fi

overload() { # NAME SECONDS [-N]
	local name=$1 secs=$2
	shift 2
	softaff_burst overload -S "$P" -n $((2 * np)) -T "$TRIALS" -t "$secs" "$@" >"$tmp/$name" ||
		echo "# softaff_burst overload $* failed" >&2
	sed "s/^/# $name: /" "$tmp/$name"
}
median_absorbed() {
	grep -o 'absorbed_ms=[-0-9.]*' "$1" | cut -d= -f2 | sort -g |
		awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : -1) }'
}
overload over 5
overload over-none 1 -N
med=$(median_absorbed "$tmp/over") ctl=$(median_absorbed "$tmp/over-none")
# The control is what the guest itself needs to start the threads, widen
# their masks and sample them, and the plain balancer to spread them: TCG's
# floor (a vCPU the host does not run for a while looks busy), not the rule's.
bound=$(awk -v a="$ABSORB_MS" -v c="$ctl" 'BEGIN { print a + (c > 0 ? c : 0) }')
if ge "$med" 0 && le "$med" "$bound"; then
	ok "overload of P at 100:1: the outside absorbs the excess in $med ms (median of $TRIALS, <= $ABSORB_MS + the control's $ctl)"
else
	nok "overload of P at 100:1: the outside absorbs the excess in $med ms (median of $TRIALS), want <= $ABSORB_MS + the control's $ctl (-1: not within 2 s)"
fi
worst=$(grep -o 'xnode_per_task_s=[-0-9.]*' "$tmp/over" | cut -d= -f2 | sort -g | tail -1)
if [[ -n $worst ]] && ge "$worst" 0 && le "$worst" 1; then
	ok "overload of P at 100:1: at most $worst cross-node migrations per thread per second in any trial (<= 1)"
else
	nok "overload of P at 100:1: ${worst:-no} cross-node migrations per thread per second in a trial, want <= 1"
fi
echo "1..$n"
