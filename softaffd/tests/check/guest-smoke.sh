#!/bin/sh
# softaffd against the real kernel ABI, for the patched guest (root).
# Not part of "make check": the host kernel has no soft affinity.
# Usage: guest-smoke.sh [SOFTAFFD]   (default: softaffd in PATH)
# Prints TAP.  Uses its own config, run dir and comm ("sa-smoke"), ratio
# mode "off", so it does not fight a softaffd.service that may be running.

D=${1:-softaffd}
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		sh -c "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

if [ ! -e /proc/self/soft_affinity ]; then
	echo "1..0 # SKIP kernel without soft affinity"
	exit 0
fi
W=$(mktemp -d)
trap 'kill $SPID $DPID 2> /dev/null; rm -rf "$W"' EXIT
node0=$(cat /sys/devices/system/node/node0/cpulist 2> /dev/null || echo 0)
cp /bin/sleep "$W/sa-smoke"
cat > "$W/s.conf" <<CONF
rescan_ms = 600000;
interval_ms = 200;
ratio = { mode = "off"; };
rules = ( { name = "smoke"; comm = "sa-smoke"; nodes = [ 0 ]; } );
CONF

"$D" -c "$W/s.conf" --run-dir "$W/run" -v 2> "$W/log" &
DPID=$!
check "softaffd starts and publishes status" wait_for "[ -f '$W/run/status' ]"
check "softaffd listens to the proc connector" \
	grep -q 'listening to the proc connector' "$W/log"

"$W/sa-smoke" 30 &
SPID=$!
hard=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$SPID/status)
check "new process gets node 0 ($node0) as soft affinity via the connector" \
	wait_for "[ \"\$(cat /proc/$SPID/task/$SPID/soft_affinity_list)\" = '$node0' ]"
check "its status says the thread level decides" \
	grep -q '^Cpus_preferred_source:[[:space:]]*thread$' /proc/$SPID/task/$SPID/status
check "status lists the pid" \
	sh -c "'$D' --status --run-dir '$W/run' | grep -q '^rule smoke .* pids $SPID\$'"

# Someone else changes it: softaffd must not undo that on exit.
"$W/sa-smoke" 30 &
S2=$!
wait_for "[ \"\$(cat /proc/$S2/task/$S2/soft_affinity_list)\" = '$node0' ]"
echo none > /proc/$S2/task/$S2/soft_affinity_list
last=$(echo "$hard" | tr ',' '\n' | tail -n 1 | sed 's/.*-//')
echo "$last" > /proc/$S2/task/$S2/soft_affinity_list

kill -TERM $DPID
wait $DPID
check "softaffd exits 0 on SIGTERM" test $? = 0
check "restore_on_exit gives back inherit (an empty request)" \
	sh -c "[ -z \"\$(cat /proc/$SPID/task/$SPID/soft_affinity_list)\" ]"
check "a mask someone else set is left alone ($last)" \
	sh -c "[ \"\$(cat /proc/$S2/task/$S2/soft_affinity_list)\" = '$last' ]"
kill $S2 2> /dev/null

# EPERM/EINVAL paths: an RT task is skipped, not an error.
if command -v chrt > /dev/null; then
	chrt -f 10 "$W/sa-smoke" 30 &
	RT=$!
	"$D" -c "$W/s.conf" --run-dir "$W/run" --once 2> "$W/log2"
	check "--once skips an RT task without writing" \
		sh -c "[ -z \"\$(cat /proc/$RT/task/$RT/soft_affinity_list)\" ] &&
		       ! grep -q 'warning' '$W/log2'"
	kill $RT
fi
sed 's/^/# /' "$W/log"
echo "1..$n"
[ $failed = 0 ]
