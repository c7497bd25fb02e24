#!/bin/bash
# The guest itself: our kernel, the NUMA topology vm/run asked for, and a
# systemd that came up with no failed units.
nodes=${SOFTAFF_NODES:-2}
cpn=${SOFTAFF_CPUS_PER_NODE:-2}
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local desc=$1; shift; if "$@"; then ok "$desc"; else nok "$desc"; fi; }
kver=$(uname -r)

check "kernel is ours: uname -r ($(uname -r)) ends in -softaff" test "${kver%-softaff}" != "$kver"

want_online=$( ((nodes == 1)) && echo 0 || echo "0-$((nodes - 1))")
got_online=$(cat /sys/devices/system/node/online 2>/dev/null)
check "NUMA nodes online: want $want_online, got ${got_online:-none}" test "$got_online" = "$want_online"

for ((i = 0; i < nodes; i++)); do
	first=$((i * cpn)) last=$((i * cpn + cpn - 1))
	want=$( ((first == last)) && echo $first || echo "$first-$last")
	got=$(cat /sys/devices/system/node/node$i/cpulist 2>/dev/null)
	check "node $i cpulist: want $want, got ${got:-none}" test "$got" = "$want"
	mem=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node$i/meminfo 2>/dev/null)
	check "node $i has memory (${mem:-0} kB)" test "${mem:-0}" -gt 0
done
check "CPUs online: $(nproc) = $((nodes * cpn))" test "$(nproc)" -eq $((nodes * cpn))

state=$(systemctl is-system-running 2>&1)
if [[ $state == running ]]; then
	ok "systemctl is-system-running: running"
else
	nok "systemctl is-system-running: $state"
	systemctl --failed --no-legend --plain 2>&1 | sed 's/^/# failed: /'
	systemctl list-jobs --no-legend 2>&1 | sed 's/^/# job: /'
fi
failed=$(systemctl list-units --failed --no-legend --plain | wc -l)
check "no failed units ($failed)" test "$failed" -eq 0

check "cgroup v2 with the cpuset controller" grep -qw cpuset /sys/fs/cgroup/cgroup.controllers
check "CPU hotplug: cpu1 has an online switch" test -w /sys/devices/system/cpu/cpu1/online
check "schedstats present (/proc/schedstat)" test -r /proc/schedstat
check "SCHED_DEBUG present (/proc/self/sched)" test -r /proc/self/sched
echo "1..$n"
