#!/bin/sh
# Idle cost of the daemon on a fake /proc: CPU share over a window and
# peak RSS (VmHWM).  Not part of "make check" (it takes a minute).
#
#   tests/idle-cost.sh [SECONDS] [BINARY]     (from softaffd/, after make)
#
# The fake /proc holds 1000 processes: 200 matching ones with 4 threads
# each and 800 others, under the shipped rescan and sample periods.
SECS=${1:-60}
BIN=${2:-build/softaffd}
HERE=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/softaffd-idle-XXXXXX")
trap 'kill $DPID 2> /dev/null; rm -rf "$W"' EXIT
P=$W/proc
mkdir -p "$P/self" "$P/sys/kernel"
echo f > "$P/self/soft_affinity"
echo 100 > "$P/sys/kernel/sched_allowed"
echo 1 > "$P/sys/kernel/sched_preferred"
printf 'cpu0 10 0 0 10 0 0 0 0 0 0\ncpu1 10 0 0 10 0 0 0 0 0 0\ncpu2 10 0 0 10 0 0 0 0 0 0\ncpu3 10 0 0 10 0 0 0 0 0 0\n' > "$P/stat"
python3 "$HERE/tests/mkfakeproc.py" "$P" 10000 200 softaff-demo0 4 || exit 1
python3 "$HERE/tests/mkfakeproc.py" "$P" 20000 800 other 1 || exit 1
cat > "$W/c.conf" << CONF
interval_ms = 1000;
rescan_ms = 10000;
ratio = { mode = "adaptive"; };
rules = (
	{ name = "d0"; comm = "softaff-demo0*"; nodes = [0]; },
	{ name = "web"; cmdline = "^nginx: worker"; nodes = [1]; },
	{ name = "db"; cgroup = "/system.slice/db.service"; nodes = [1]; }
);
CONF
${WRAP:-} "$BIN" -c "$W/c.conf" --sys-root "$HERE/../tests/conf/sys" --proc-root "$P" \
	--run-dir "$W/run" 2> "$W/log" &
DPID=$!
i=0
until [ -f "$W/run/status" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2 # past the first apply
# schedstat: nanoseconds on a CPU; utime/stime ticks are too coarse.
t0=$(cut -d' ' -f1 /proc/$DPID/schedstat)
e0=$(sed -n 's/^counters.* events=\([0-9]*\).*/\1/p' "$W/run/status")
n0=$(date +%s%N)
sleep "$SECS"
t1=$(cut -d' ' -f1 /proc/$DPID/schedstat)
n1=$(date +%s%N)
e1=$(sed -n 's/^counters.* events=\([0-9]*\).*/\1/p' "$W/run/status")
hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' /proc/$DPID/status)
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' /proc/$DPID/status)
us=$(( (t1 - t0) / 1000 ))
wall=$(( (n1 - n0) / 1000000 ))
echo "processes $(grep -c . "$W/run/status" > /dev/null; sed -n 's/^processes //p' "$W/run/status") managed of 1000"
echo "cpu ${us} us in ${wall} ms = $(awk "BEGIN { printf \"%.4f\", $us / 10 / $wall }")% of one CPU; $((e1 - e0)) connector events meanwhile"
echo "VmHWM $hwm VmRSS $rss"
grep -m1 -E "connector" "$W/log"
grep -c . "$W/log" | sed "s/^/log lines: /"
