#!/bin/sh
# commflip-cost.sh BINARY [SECONDS]: what a comm-flip storm by an
# unprivileged user costs the softaffd BINARY.  Runs it as a dry run on
# the real /proc (no soft affinity needed) with one rule on comm
# "flip-a" while commflip.py, as nobody, renames itself between "flip-a"
# and "flip-b" for SECONDS (default 10).  Needs root (setpriv, the proc
# connector).  Prints one line:
#   flips N; daemon CPU C ms in S s; log lines L
# and the daemon's last log lines as comments.  Used by run-check.sh; by
# hand it compares two builds, e.g. main's and this one.
BIN=$1
SECS=${2:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/commflip-XXXXXX")
trap 'rm -rf "$W"' EXIT
cat > "$W/c.conf" <<CONF
rescan_ms = 10000;
ratio = { mode = "off"; };
rules = ( { name = "flip"; comm = "flip-a"; cpus = "0"; } );
CONF
chmod 644 "$W/c.conf"
"$BIN" -c "$W/c.conf" --run-dir "$W/run" --dry-run > /dev/null 2> "$W/log" &
D=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'started' "$W/log"; do
	sleep 0.1
	i=$((i + 1))
done
ticks() { awk '{ print $14 + $15 }' "/proc/$D/stat"; }
t0=$(ticks)
l0=$(wc -l < "$W/log")
flips=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
	/usr/bin/python3 "$HERE/commflip.py" flip-a flip-b "$SECS")
t1=$(ticks)
l1=$(wc -l < "$W/log")
cp "$W/run/status" "$W/status" 2> /dev/null
kill -TERM $D
wait $D
echo "flips ${flips%% *}; daemon CPU $(((t1 - t0) * 1000 / $(getconf CLK_TCK))) ms in $SECS s; log lines $((l1 - l0))"
grep -q 'listening to the proc connector' "$W/log" ||
	echo "# no proc connector: nothing to measure"
tail -n 3 "$W/log" | sed 's/^/# /'
grep '^counters' "$W/status" 2> /dev/null | sed 's/^/# /'
