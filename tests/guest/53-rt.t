#!/bin/bash
# Soft affinity sees RT load (kernel issue #25): a preferred CPU saturated by
# a SCHED_FIFO task is busy, not empty.  R is one CPU of node 0 (of the
# first half on a 1-node guest); a SCHED_FIFO hog is hard-pinned to it, and
# RT throttling (sched_rt_runtime_us, 95% by default) leaves CFS 5% of it.
# One worker prefers R alone (softaff_wake -S R -R R), every other CPU idle.
#
#   default 100:1  the worker's CPU time (cpu_share: CPU seconds per second
#                  of the measured window) is at least 80% of what the same
#                  worker gets without a preference, in the same boot, for
#                  a CPU-bound worker (-s 0: only the balancer and the tick
#                  place it) and a waking one (sleep 200 us, run 1 ms: the
#                  wakeup path places it).  PAIRS (2) soft/control pairs
#                  each, summed.  Before the placement rule counted RT
#                  pressure, the waking worker queued behind the hog at
#                  every ratio (the rule saw no CFS load on R) and the
#                  CPU-bound one went back and forth between the balancer,
#                  which spilled it, and the going-home tick, which took R
#                  for the least loaded preferred CPU.
#   strict 10000:1 the table's promise is that the task never leaves a
#                  preferred CPU it may run on, so >= 99% of the CPU-bound
#                  worker's samples are on R (the 1% is for samples taken
#                  before the tick first brought it there; the worker sets
#                  its preference itself after it starts), and it gets
#                  about what RT throttling leaves (printed, not bounded).
set -u
. "${0%/*}/lib.sh"

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
(($(nproc) >= 2)) || skip_all "needs 2 CPUs"
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
((rt_runtime > 0)) || skip_all "RT throttling is off (sched_rt_runtime_us=$rt_runtime): a FIFO hog would starve its CPU"
PAIRS=${PAIRS:-2} SECONDS_PER_RUN=${SECONDS_PER_RUN:-4}

pick_preferred
R=$(expand "$P" | tail -1)
echo "# R=$R (of P=$P), outside=$outside, sched_rt_runtime_us=$rt_runtime"
sched_setup

# run ARGS...: softaff_wake with the FIFO hog on R; prints "share cpu_share".
run() {
	local out
	out=$(softaff_wake -w 1 -t "$SECONDS_PER_RUN" -R "$R" -P "$R" "$@") ||
		{ echo "# softaff_wake $* failed" >&2; echo "-1 -1"; return; }
	echo "# softaff_wake $*: $(tr '\n' ' ' <<<"$out")" >&2
	echo "$(kv share <(echo "$out")) $(kv cpu_share <(echo "$out"))"
}

ratio 100 1
for kind in cpu-bound waking; do
	args=()
	[[ $kind == cpu-bound ]] && args=(-s 0)
	soft=0 none=0
	for ((i = 0; i < PAIRS; i++)); do
		read -r _ s < <(run "${args[@]}" -S "$R")
		read -r _ c < <(run "${args[@]}")
		soft=$(awk -v a="$soft" -v b="$s" 'BEGIN { print a + b }')
		none=$(awk -v a="$none" -v b="$c" 'BEGIN { print a + b }')
	done
	pct=$(awk -v a="$soft" -v b="$none" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
	if ge "$pct" 80; then
		ok "$kind worker preferring the FIFO-busy CPU $R at 100:1 gets $pct% of its CPU time without a preference (>= 80%)"
	else
		nok "$kind worker preferring the FIFO-busy CPU $R at 100:1 gets $pct% of its CPU time without a preference, want >= 80%"
	fi
done

# Every preferred CPU saturated by a SCHED_FIFO hog (kernel issue #37): P
# has almost no capacity for CFS.  A spinner (softaff_wake -s 0: the
# balancer and the tick place it) and a shell-style worker that forks a
# child that execs and spins 1 ms each round (softaff_burst fork: fork,
# exec and wakeup all place it) each get at least 80% of what they get
# without the preference, 2 x PAIRS soft/control pairs each, summed.
fifo_pids=()
fifo_start() {
	local cpu
	for cpu in $(expand "$P"); do
		taskset -c "$cpu" chrt -f 1 sh -c 'while :; do :; done' &
		fifo_pids+=($!)
	done
	sleep 0.5
}
fifo_stop() {
	((${#fifo_pids[@]})) && kill "${fifo_pids[@]}" 2>/dev/null
	((${#fifo_pids[@]})) && wait "${fifo_pids[@]}" 2>/dev/null
	fifo_pids=()
}
cleanup() { fifo_stop; }
rounds() { # [-N]
	local out
	out=$(softaff_burst fork -S "$P" -t "$SECONDS_PER_RUN" "$@") ||
		{ echo "# softaff_burst fork $* failed" >&2; echo -1; return; }
	echo "# softaff_burst fork $*: $out" >&2
	kv rounds_per_s <(echo "$out")
}
ratio 100 1
fifo_start
spin_soft=0 spin_none=0 fork_soft=0 fork_none=0
spin() { # [-S P | -P P]: the spinner's cpu_share
	softaff_wake -w 1 -s 0 -t "$SECONDS_PER_RUN" "$@" | tee /dev/stderr |
		grep -o 'cpu_share=[0-9.]*' | cut -d= -f2
}
add() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { print a + b }'; }
# Soft first in even pairs, the control first in odd ones: TCG's speed
# drifts within a boot, and a fixed order would charge the drift to one.
for ((i = 0; i < 2 * PAIRS; i++)); do
	if ((i % 2)); then
		spin_none=$(add "$spin_none" "$(spin -P "$P")") spin_soft=$(add "$spin_soft" "$(spin -S "$P")")
		fork_none=$(add "$fork_none" "$(rounds -N)") fork_soft=$(add "$fork_soft" "$(rounds)")
	else
		spin_soft=$(add "$spin_soft" "$(spin -S "$P")") spin_none=$(add "$spin_none" "$(spin -P "$P")")
		fork_soft=$(add "$fork_soft" "$(rounds)") fork_none=$(add "$fork_none" "$(rounds -N)")
	fi
done
fifo_stop
for kind in spinner forker; do
	if [[ $kind == spinner ]]; then a=$spin_soft b=$spin_none; else a=$fork_soft b=$fork_none; fi
	pct=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
	if ge "$pct" 80; then
		ok "every CPU of P=$P FIFO-busy, 100:1: the $kind preferring P gets $pct% of what it gets without a preference (>= 80%)"
	else
		nok "every CPU of P=$P FIFO-busy, 100:1: the $kind preferring P gets $pct% of what it gets without a preference, want >= 80%"
	fi
done

ratio 10000 1
read -r share cpu < <(run -s 0 -S "$R")
if ge "$share" 99; then
	ok "strict 10000:1: the CPU-bound worker stays on the FIFO-busy CPU $R ($share% of samples, >= 99%; it got $cpu% of a CPU)"
else
	nok "strict 10000:1: the CPU-bound worker ran on $R in $share% of samples, want >= 99% (the table: strict never leaves)"
fi
echo "1..$n"
