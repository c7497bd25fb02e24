#!/bin/sh
# bench-scale.sh: softaffd at server scale, issue #26's host benchmark.
# Not part of "make check": it takes minutes and ~1.5 GiB of /dev/shm.
#
#   make bench-scale        (or: B=build sh tests/bench-scale.sh, from
#                            softaffd/ after building build/softaffd and
#                            build/bench_scale)
#
# Makes a fake /proc and /sys (tests/mkfakescale.py: 256 CPUs on 8
# nodes, 10,000 processes, 100,000 threads, 50 rules), then
#   1. runs the daemon binary on it for IDLE_SECS after its first scan:
#      idle CPU (schedstat, ns on a CPU) and peak RSS (VmHWM).  The
#      daemon keeps the proc connector shut on a fake /proc, so this is
#      its rescan-only mode; the fake /proc/pressure/cpu stands still
#      (nobody waits for a CPU);
#   2. runs build/bench_scale, which calls the manager's entry points as
#      the daemon's loop does: the first scan, rescans and samples (the
#      connector mode's CPU per second, estimated, idle and with the
#      fake pressure moving: loaded), exec and fork events, and a storm
#      of STORM_RATE renames a second for STORM_SECS (twice: renames
#      that keep each process's rule, and renames that flip it);
# and prints a Markdown table with the targets and PASS/MISS.
#
# Environment: B (build dir), IDLE_SECS (60), STORM_SECS (10),
# STORM_RATE (10000), EVENTS (2000 of each kind), PROCS (10000),
# THREADS (100000), RULES (50), CPUS (256), NODES (8), BENCH_DIR
# (/dev/shm: where the fake root goes; removed at the end), KEEP=1
# keeps it and the logs, ROOT_ARGS more options for mkfakescale.py
# (e.g. "--managed 100 --big 2 --big-threads 200" for a quick try).  Run it under "nice -n 19" on a shared host:
# the figures are CPU time, which a loaded host inflates less than wall
# time, but cache and frequency effects remain.
set -u
B=${B:-build}
IDLE_SECS=${IDLE_SECS:-60}
STORM_SECS=${STORM_SECS:-10}
STORM_RATE=${STORM_RATE:-10000}
EVENTS=${EVENTS:-2000}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
case $B in /*) ;; *) B=$HERE/$B ;; esac
for f in "$B/softaffd" "$B/bench_scale"; do
	[ -x "$f" ] || { echo "bench-scale: no $f (make bench-scale)" >&2; exit 1; }
done
W=$(mktemp -d "${BENCH_DIR:-/dev/shm}/softaffd-scale-XXXXXX") || exit 1
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2> /dev/null
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-scale: kept $W" >&2
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
R=$W/results # "key value" lines, the table's input (kept as B/bench-scale.txt)

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "host_load_start $(load)" > "$R"

echo "# making the fake root in $W" >&2
t0=$(date +%s%N)
python3 "$HERE/tests/bench/mkfakescale.py" "$W" --procs "${PROCS:-10000}" \
	--threads "${THREADS:-100000}" --rules "${RULES:-50}" \
	--cpus "${CPUS:-256}" --nodes "${NODES:-8}" --spare "$EVENTS" \
	${ROOT_ARGS:-} >&2 ||
	exit 1
echo "make_root_s $(( ($(date +%s%N) - t0) / 1000000000 ))" >> "$R"

# ---- 1. the daemon binary: first scan, idle, RSS ----
echo "# daemon: first scan, then ${IDLE_SECS} s idle" >&2
mkdir -p "$W/run"
t0=$(date +%s%N)
"$B/softaffd" -c "$W/softaffd.conf" --sys-root "$W/sys" \
	--proc-root "$W/proc" --run-dir "$W/run" 2> "$W/daemon.log" &
DPID=$!
# The status file is first written when the first scan is over (ready).
i=0
until [ -f "$W/run/status" ] || [ $i -ge 6000 ] || ! kill -0 $DPID 2> /dev/null; do
	sleep 0.1
	i=$((i + 1))
done
if ! [ -f "$W/run/status" ]; then
	echo "bench-scale: the daemon did not get ready" >&2
	tail -n 20 "$W/daemon.log" >&2
	exit 1
fi
echo "daemon_ready_ms $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$R"
sleep 2 # past the first sample, which takes the baselines
# schedstat: ns on a CPU (utime/stime ticks are too coarse), then ns
# waiting for one: a daemon with more work than a loaded host gives it
# CPU for shows its idle cost capped, and a long wait says so.
c0=$(cut -d' ' -f1 /proc/$DPID/schedstat)
q0=$(cut -d' ' -f2 /proc/$DPID/schedstat)
n0=$(date +%s%N)
sleep "$IDLE_SECS"
c1=$(cut -d' ' -f1 /proc/$DPID/schedstat)
q1=$(cut -d' ' -f2 /proc/$DPID/schedstat)
n1=$(date +%s%N)
{
	echo "daemon_idle_cpu_ms $(( (c1 - c0) / 1000000 ))"
	echo "daemon_idle_wall_ms $(( (n1 - n0) / 1000000 ))"
	echo "daemon_idle_runq_ms $(( (q1 - q0) / 1000000 ))"
	echo "daemon_idle_pct $(awk "BEGIN { printf \"%.4f\", ($c1 - $c0) / ($n1 - $n0) * 100 }")"
	echo "daemon_vmhwm_kib $(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$DPID/status)"
	echo "daemon_vmrss_kib $(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$DPID/status)"
	echo "daemon_managed $(sed -n 's/^processes \([0-9]*\).*/\1/p' "$W/run/status")"
	echo "daemon_log_lines $(grep -c . "$W/daemon.log")"
} >> "$R"
kill -TERM $DPID
wait $DPID
DPID=

# ---- 2. the harness: events and the storm ----
echo "# harness: scans, samples, events, storms" >&2
if ! "$B/bench_scale" "$W" --events "$EVENTS" --storm-rate "$STORM_RATE" \
	--storm-seconds "$STORM_SECS" --storm-mode both \
	>> "$R" 2> "$W/harness.log"; then
	echo "bench-scale: bench_scale failed" >&2
	tail -n 20 "$W/harness.log" >&2
	exit 1
fi
grep '^bench_scale:' "$W/harness.log" >&2
echo "host_load_end $(load)" >> "$R"
# The figures outlive the fake root: B/bench-scale.txt.
cp "$R" "$B/bench-scale.txt"

# ---- the table ----
awk -v slice=20 -v budget=200 '
{ v[$1] = $2; line[$1] = $0 }
function pf(ok) { return ok ? "PASS" : "MISS" }
function row(what, target, result, verdict) {
	printf "| %s | %s | %s | %s |\n", what, target, result, verdict
}
function ev(key, what, target_us) {
	gsub(/THREADS/, sprintf("%.0f", v[key "_parent_threads"]), what)
	row(what, "<= " target_us " us",
	    sprintf("%.1f us (wall p50 %.1f, p99 %.1f)", v[key "_cpu_us"],
		    v[key "_p50_us"], v[key "_p99_us"]),
	    pf(v[key "_cpu_us"] <= target_us))
}
# The queue also holds the rest of capped thread walks: work of the
# daemon, of no rename; a rename that joins the waiting walk entry of
# its process is reached ahead of its turn.
function walks(k) {
	return sprintf("; besides, %d thread-walk continuations (%.0f ms wall)%s",
		       v[k "_walk_slices"], v[k "_walk_wall_ms"],
		       v[k "_joined"] ? sprintf(", %d renames joined a waiting walk entry", v[k "_joined"]) : "")
}
function storm(k, what) {
	row(what ": daemon work per second (dirty queue)",
	    "<= " budget " ms/s (a window may overrun by one " slice " ms slice)",
	    sprintf("%.0f ms/s CPU (%.0f ms/s wall); busiest window %.0f ms CPU (%.0f ms wall); %d evaluations, %.0f us CPU each, the longest %.1f ms wall%s",
		    v[k "_eval_cpu_ms_per_s"], v[k "_eval_wall_ms_per_s"],
		    v[k "_eval_cpu_ms_max_window"], v[k "_eval_wall_ms_max_window"],
		    v[k "_evals"], v[k "_eval_cpu_us"], v[k "_eval_max_ms"],
		    walks(k)),
	    pf(v[k "_eval_cpu_ms_per_s"] <= budget &&
	       v[k "_eval_cpu_ms_max_window"] <= budget + slice))
	row(what ": marking the events (connector side, without reading netlink)",
	    "<= 100 ms/s (the connector budget)",
	    sprintf("%.1f ms/s CPU", v[k "_mark_cpu_ms_per_s"]),
	    pf(v[k "_mark_cpu_ms_per_s"] <= 100))
	row(what ": wait from mark to evaluation",
	    "softaffd(8): <= 1 s while the work ahead fits a second'"'"'s " budget " ms, else <= ceil(work ahead / " budget " ms) s; checked in budget windows, with 5% for the slices'"'"' whole-ms deadlines",
	    sprintf("max %.2f s, p99 %.2f s, p50 %.2f s (up to %d waiting); %d over in windows, %d never reached. In seconds %d over, closest: %.2f s against %.0f s (%.0f ms of work ahead); windows opened %.0f ms late on average (max %d ms), the least work in a full window %.0f ms; events read up to %.0f ms late",
		    v[k "_wait_max_ms"] / 1000, v[k "_wait_p99_ms"] / 1000,
		    v[k "_wait_p50_ms"] / 1000, v[k "_waiting_max"],
		    v[k "_over_promise"], v[k "_starved"], v[k "_over_promise_s"],
		    v[k "_worst_wait_s"], v[k "_worst_bound_s"], v[k "_worst_work_ms"],
		    v[k "_window_late_mean_ms"], v[k "_window_late_max_ms"],
		    v[k "_least_work_full_window_ms"], v[k "_lag_max_ms"]),
	    pf(v[k "_over_promise"] == 0 && v[k "_starved"] == 0))
}
END {
	printf "softaffd at scale: %d CPUs on %d nodes, %d processes, %d threads, %d rules (%d managed processes).\n",
	       v["cpus"], v["nodes"], v["processes"], v["threads"], v["rules"], v["managed"]
	printf "Host load average (1/5/15 min) at start %s, at end %s.\n\n",
	       substr(line["host_load_start"], 17), substr(line["host_load_end"], 15)
	# Waiting for a CPU a tenth of the time: it got less than it asked.
	capped = ""
	if (v["daemon_idle_runq_ms"] > v["daemon_idle_wall_ms"] / 10)
		capped = ": capped by the host, see the connector row"
	print "| Measure | Target | Result | |"
	print "|---|---|---|---|"
	row("Idle CPU, daemon binary (rescan-only mode: no connector on a fake /proc)",
	    "<= 0.1% of one CPU",
	    sprintf("%.3f%% (%d ms in %d ms; %d ms more waiting for a CPU%s)",
		    v["daemon_idle_pct"], v["daemon_idle_cpu_ms"],
		    v["daemon_idle_wall_ms"], v["daemon_idle_runq_ms"], capped),
	    pf(v["daemon_idle_pct"] <= 0.1))
	row("Idle CPU, connector mode (estimate: a sample a second, /proc/pressure/cpu still, an ATTRS walk every 6 rescan periods or 2000 times its own time)",
	    "<= 0.1% of one CPU",
	    sprintf("%.3f%% (%.2f ms/s; a walk every %.0f s)",
		    v["idle_conn_ms_per_s"] / 10, v["idle_conn_ms_per_s"],
		    v["conn_walk_every_s"]),
	    pf(v["idle_conn_ms_per_s"] / 10 <= 0.1))
	row("CPU under load, connector mode (estimate: the same, /proc/pressure/cpu moving: the budget bounds the sample)",
	    "-",
	    sprintf("%.2f%% (%.1f ms/s)", v["loaded_conn_ms_per_s"] / 10,
		    v["loaded_conn_ms_per_s"]), "")
	row("RSS, daemon binary (VmHWM)", "<= 16 MiB",
	    sprintf("%.1f MiB (VmRSS %.1f MiB)", v["daemon_vmhwm_kib"] / 1024,
		    v["daemon_vmrss_kib"] / 1024),
	    pf(v["daemon_vmhwm_kib"] <= 16384))
	ev("exec_managed", "exec event: the new program matches a rule", 50)
	ev("exec_other", "exec event: it matches none (all rules tried)", 50)
	ev("fork_other", "fork event: child of an unmanaged process", 5)
	ev("thread_other", "fork event: new thread of an unmanaged process", 5)
	ev("fork_managed", "fork event: child of a managed process (booked under its parent'"'"'s rule)", 5)
	ev("thread_small", "fork event: new thread of a managed process (~THREADS threads)", 5)
	ev("thread_big", "fork event: new thread of a managed process (~THREADS threads)", 5)
	row("exit event (unmanaged process)", "-",
	    sprintf("%.2f us", v["exit_other_cpu_us"]), "")
	storm("storm", sprintf("%d renames/s for %d s, rule kept", v["storm_events"] / v["storm_storm_seconds"], v["storm_storm_seconds"]))
	storm("storm_flip", sprintf("%d renames/s for %d s, comm rules flip", v["storm_flip_events"] / v["storm_flip_storm_seconds"], v["storm_flip_storm_seconds"]))
	row("First full scan (harness: mgr_scan, writes every managed thread)", "-",
	    sprintf("%.0f ms CPU, %.0f ms wall", v["first_scan_cpu_ms"], v["first_scan_wall_ms"]), "")
	row("Daemon start to ready (first scan in slices)", "-",
	    sprintf("%d ms wall", v["daemon_ready_ms"]), "")
	row("Rescans (CPU): FULL again / LIGHT / ATTRS / NEW / NEW_ATTRS", "-",
	    sprintf("%.0f / %.1f / %.0f / %.0f / %.0f ms", v["scan_full_cpu_ms"],
		    v["scan_light_cpu_ms"], v["scan_attrs_cpu_ms"],
		    v["scan_new_cpu_ms"], v["scan_new_attrs_cpu_ms"]), "")
	row(sprintf("Status each sample interval when nothing changes (%d managed processes, %d rules)", v["status_procs"], v["status_rules"]),
	    "<= 1 ms CPU per second",
	    sprintf("%.3f ms CPU a publish (one a second); %.1f ms when a process comes", v["status_cpu_ms"], v["status_changed_cpu_ms"]),
	    pf(v["status_cpu_ms"] <= 1))
	row("One sample interval (CPU), idle / loaded", "-",
	    sprintf("%.3f ms, %d threads read / %.1f ms, %d threads read (%d processes, %d threads in the figures)",
		    v["sample_idle_cpu_ms"], v["sample_idle_threads_read"],
		    v["sample_loaded_cpu_ms"], v["sample_loaded_threads_read"],
		    v["sample_loaded_processes"], v["sample_loaded_threads"]), "")
}' "$R"
