#!/bin/sh
# Idle cost of the daemon on a fake /proc: CPU share over a window and
# peak RSS (VmHWM).  Not part of "make check" (it takes a minute).
#
#   tests/idle-cost.sh [SECONDS] [BINARY]     (from softaffd/, after make)
#
# The fake /proc holds 1000 processes: 200 matching ones with 4 threads
# each and 800 others, under the shipped rescan and sample periods
# (RESCAN_MS, INTERVAL_MS override them).  The daemon keeps the proc
# connector shut for a proc root that is not procfs (its events name the
# host's PIDs), so this is the rescan-only mode, whose every rescan reads
# every process; the connector's cost is commflip-cost.sh's and the
# guest bench's (tests/bench).  WRAP runs the daemon under a wrapper.
SECS=${1:-60}
BIN=${2:-build/softaffd}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/softaffd-idle-XXXXXX")
# The status file is rewritten when it changes: on tmpfs, as /run is.
RUN=$(mktemp -d /dev/shm/softaffd-idle-XXXXXX 2> /dev/null || echo "$W/run")
trap 'kill $DPID 2> /dev/null; rm -rf "$W" "$RUN"' EXIT
P=$W/proc
mkdir -p "$P/self" "$P/sys/kernel"
echo f > "$P/self/soft_affinity"
echo 100 > "$P/sys/kernel/sched_allowed"
echo 1 > "$P/sys/kernel/sched_preferred"
printf 'cpu0 10 0 0 10 0 0 0 0 0 0\ncpu1 10 0 0 10 0 0 0 0 0 0\ncpu2 10 0 0 10 0 0 0 0 0 0\ncpu3 10 0 0 10 0 0 0 0 0 0\n' > "$P/stat"
# PIDs above PID_MAX_LIMIT (4194304): no host process has one of them.
python3 "$HERE/tests/check/mkfakeproc.py" "$P" 5000000 200 softaff-demo0 4 || exit 1
python3 "$HERE/tests/check/mkfakeproc.py" "$P" 6000000 800 other 1 || exit 1
# RULES=comm: rules on comm only, like the shipped file; otherwise also
# rules on cmdline and cgroup, which change without an event and so are
# re-read by every sixth rescan.
MORE=',
	{ name = "web"; cmdline = "^nginx: worker"; nodes = [1]; },
	{ name = "db"; cgroup = "/system.slice/db.service"; nodes = [1]; }'
[ "${RULES:-}" = comm ] && MORE=
cat > "$W/c.conf" << CONF
interval_ms = ${INTERVAL_MS:-1000};
rescan_ms = ${RESCAN_MS:-10000};
ratio = { mode = "adaptive"; };
rules = (
	{ name = "d0"; comm = "softaff-demo0*"; nodes = [0]; }$MORE
);
CONF
${WRAP:-} "$BIN" -c "$W/c.conf" --sys-root "$HERE/../tests/conf/sys" --proc-root "$P" \
	--run-dir "$RUN" 2> "$W/log" &
DPID=$!
i=0
until [ -f "$RUN/status" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2 # past the first apply
# schedstat: nanoseconds on a CPU; utime/stime ticks are too coarse.
t0=$(cut -d' ' -f1 /proc/$DPID/schedstat)
e0=$(sed -n 's/^counters.* events=\([0-9]*\).*/\1/p' "$RUN/status")
n0=$(date +%s%N)
sleep "$SECS"
t1=$(cut -d' ' -f1 /proc/$DPID/schedstat)
n1=$(date +%s%N)
e1=$(sed -n 's/^counters.* events=\([0-9]*\).*/\1/p' "$RUN/status")
hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' /proc/$DPID/status)
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' /proc/$DPID/status)
us=$(( (t1 - t0) / 1000 ))
wall=$(( (n1 - n0) / 1000000 ))
echo "processes $(sed -n 's/^processes //p' "$RUN/status") managed of 1000"
echo "cpu ${us} us in ${wall} ms = $(awk "BEGIN { printf \"%.4f\", $us / 10 / $wall }")% of one CPU; $((e1 - e0)) connector events meanwhile"
echo "VmHWM $hwm VmRSS $rss"
grep -m1 -E "connector" "$W/log"
grep -c . "$W/log" | sed "s/^/log lines: /"
