#!/bin/bash
# Work conservation, as a number (kernel issue #15, item 7): how long a CPU
# outside the preferred set stays idle while the preferred set is
# overloaded.  softaff_balance conserve: 3 CPU-bound workers per CPU of P
# (soft affinity P) hard-pinned to P, and one hog hard-pinned to each CPU
# outside P; then at once the hogs stop and the workers' hard affinity
# widens to every CPU.  For each outside CPU, the time until a worker runs
# on it is its idle time.  TRIALS (40) trials each: at 100:1, at 5:4, and
# without soft affinity.
#
#   100:1   3 runnable tasks against a CPU that just turned idle: that
#           CPU still carries its hog's decaying average, which a rule
#           on averages alone would wait ~160 ms (five 32 ms half-lives)
#           to see fade.  The placement rule counts a CPU with nothing
#           to run as zero pressure, so it lets a worker go at the
#           balancer's first look (there is no escape to wait for).
#   5:4     the rule lets a worker go as soon as the balancer looks.
#   none    control: the same workers without soft affinity, in the same
#           boot, so that TCG's noise (a vCPU thread that the host does not
#           run for 100 ms looks like an idle CPU) is measured, not guessed.
# Bounds, both ratios: median <= MEDIAN_MS (40): the rule's ~160 ms wait,
# were the escape missing, fails it; p95 <= the larger of P95_MS (100) and
# twice the control's p95; no CPU idle for the whole TIMEOUT_MS (2000); and
# the workers had the preference: at least one balancer spill counted per
# trial (nr_migrations_soft_spill), which is how a worker reaches an
# outside CPU here.  Until this check existed, the helper wrote each
# worker's preference while the worker still had the sampler's one-CPU
# mask, which lies inside P, so the kernel (before ABI v4, which stores
# such a request) cleared it: every figure this test printed before was
# of workers without soft affinity.
# Measured with the preference in effect, 40 trials (80 idle periods) each,
# 2x2: none median 11.5 ms, p95 29.4 ms; 100:1 15.6 / 35.6 ms; 5:4 12.4 /
# 31.4 ms (with the escape of an earlier revision; with the one rule, see
# the kernel cover letter: 100:1 15.9 / 44.8 ms, 5:4 19.4 / 43.5 ms).
# 40 trials, not 15: the idle periods of one trial are correlated (a slow
# trial is slow on both outside CPUs), and in ~200 trials without the
# preference two took 160-280 ms, one of them on both CPUs, which alone set
# the p95 of 30 idle periods (263.6 ms in one CI run).  With 80 a p95 above
# the bound means more than 4 slow idle periods.
set -u
. "${0%/*}/lib.sh"

TRIALS=${TRIALS:-40} TIMEOUT_MS=${TIMEOUT_MS:-2000}
MEDIAN_MS=${MEDIAN_MS:-40} P95_MS=${P95_MS:-100}

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
(($(nproc) >= 2)) || skip_all "needs 2 CPUs"
pick_preferred
[[ -n $outside ]] || skip_all "no CPU outside P=$P"
workers=$((3 * np))
echo "# P=$P ($np CPUs), outside=$outside; $workers workers soft P, hogs on $outside stop"

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
sched_setup
echo 1 >$sysdir/sched_schedstats

# run NAME [softaff_balance options]: one series of trials, into $tmp/NAME
run() {
	local name=$1 f=$tmp/$1
	shift
	if ! softaff_balance conserve "$@" -S "$P" -x "$outside" -w "$workers" -n "$TRIALS" \
		-T "$TIMEOUT_MS" >"$f" 2>&1; then
		nok "$name: softaff_balance conserve failed: $(tail -1 "$f")"
		return 1
	fi
	sed "s|^|# $name: |" "$f"
}

run none -N
control_p95=$(kv p95_ms "$tmp/none")
p95_bound=$(awk -v a="$P95_MS" -v c="${control_p95:-0}" 'BEGIN { print (2 * c > a) ? 2 * c : a }')
echo "# control without soft affinity: median $(kv median_ms "$tmp/none") ms, p95 ${control_p95:-?} ms; p95 bound $p95_bound ms"

for r in 100:1 5:4; do
	ratio "${r%:*}" "${r#*:}"
	run "$r" || continue
	f=$tmp/$r
	median=$(kv median_ms "$f") p95=$(kv p95_ms "$f") timeouts=$(kv timeouts "$f")
	le "${median:-9999}" "$MEDIAN_MS"
	check $? "$r: an outside CPU stays idle for a median $median ms (<= $MEDIAN_MS) while P is overloaded"
	le "${p95:-9999}" "$p95_bound"
	check $? "$r: p95 $p95 ms (<= $p95_bound; control $control_p95)"
	check $((${timeouts:-1} != 0)) "$r: no outside CPU stayed idle for ${TIMEOUT_MS} ms (${timeouts:-?})"
	# The workers did have the preference: the balancer's moves out of P
	# were counted as soft affinity spills, at least one per trial.
	spills=$(kv nr_migrations_soft_spill "$f")
	ge "${spills:-0}" "$TRIALS"
	check $? "$r: the workers were soft-affine: ${spills:-?} balancer spills in $TRIALS trials (>= $TRIALS)"
done
echo "1..$n"
