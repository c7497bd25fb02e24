#!/bin/bash
# 32-abi-shell.t: the soft affinity ABI as an administrator uses it, with
# echo, cat, taskset, chrt, setpriv and sysctl against a running process:
# the README's examples, what is refused and what is stored (issue #13: a
# mask outside the hard mask and a SCHED_FIFO task are accepted), the
# ratio files and Cpus_preferred_source. The exact errno checks are in
# 30-abi.t (softaff_abi), cgroups and precedence in 36-preference.t.
n=0 fails=0
ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	[[ $1 == "$2" ]]
	ok $? "$3 (got '$1', want '$2')"
}
# write VALUE FILE: prints the error message of a failed write, if any
write() { (echo "$1" >"$2") 2>&1 | sed -E 's/.*: //'; }

cpus=$(nproc --all)
if ((cpus != 4)); then
	echo "ok 1 # SKIP the masks here assume exactly 4 CPUs, have $cpus"
	echo "1..1"
	exit 0
fi

sleep 1000 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
sleep 0.2

is "$(cat /proc/$pid/soft_affinity)" "$(awk '/^Cpus_allowed:/ {print $2}' /proc/$pid/status)" \
	"default soft_affinity equals Cpus_allowed"
is "$(write 3 /proc/$pid/soft_affinity)" "" "echo 3 > /proc/PID/soft_affinity"
is "$(cat /proc/$pid/soft_affinity)" "3" "cat shows 3"
is "$(cat /proc/$pid/soft_affinity_list)" "0-1" "soft_affinity_list shows 0-1"
is "$(awk '/^Cpus_preferred:/ {print $2}' /proc/$pid/status)" "3" "Cpus_preferred: 3"
is "$(awk '/^Cpus_preferred_list:/ {print $2}' /proc/$pid/status)" "0-1" "Cpus_preferred_list: 0-1"
is "$(cat /proc/$pid/task/$pid/soft_affinity)" "3" "task/TID file agrees"
is "$(awk '/^Cpus_preferred_source:/ {print $2}' /proc/$pid/status)" "task" "Cpus_preferred_source: task"

is "$(write 2-3 /proc/$pid/soft_affinity_list)" "" "echo 2-3 > soft_affinity_list"
is "$(cat /proc/$pid/soft_affinity)" "c" "hex shows c"
v=$(cat /proc/$pid/soft_affinity)
is "$(write "$v" /proc/$pid/soft_affinity)" "" "what cat printed writes back"

is "$(write 0 /proc/$pid/soft_affinity)" "Invalid argument" "echo 0: Invalid argument"
is "$(write xyz /proc/$pid/soft_affinity_list)" "Invalid argument" "garbage list: Invalid argument"
is "$(cat /proc/$pid/soft_affinity)" "c" "mask unchanged after the errors"

# taskset: shrink, disjoint, expand again
write 3 /proc/$pid/soft_affinity >/dev/null
taskset -p 0xe $pid >/dev/null
is "$(cat /proc/$pid/soft_affinity)" "2" "taskset 0xe: preferred 2"
taskset -p 0xc $pid >/dev/null
is "$(cat /proc/$pid/soft_affinity)" "c" "taskset 0xc (disjoint): preferred = hard"
taskset -p 0xf $pid >/dev/null
is "$(cat /proc/$pid/soft_affinity)" "3" "taskset 0xf: the request 3 comes back"
is "$(write 10 /proc/$pid/soft_affinity)" "Invalid argument" "CPU 4 (>= nr_cpu_ids): Invalid argument"
taskset -p 0x3 $pid >/dev/null
is "$(write 4 /proc/$pid/soft_affinity)" "" "CPU 2 outside taskset 0x3: accepted, stored"
is "$(cat /proc/$pid/soft_affinity)" "3" "... the hard mask 3 is in effect meanwhile"
taskset -p 0xf $pid >/dev/null
is "$(cat /proc/$pid/soft_affinity)" "4" "taskset 0xf: the stored request 4 is in effect"
write 3 /proc/$pid/soft_affinity >/dev/null

# chrt: stored while FIFO, in effect once SCHED_OTHER again
chrt -f -p 1 $pid
is "$(cat /proc/$pid/soft_affinity)" "3" "mask kept when switched to SCHED_FIFO"
is "$(write 1 /proc/$pid/soft_affinity)" "" "SCHED_FIFO task: accepted"
is "$(cat /proc/$pid/soft_affinity)" "1" "... and stored"
chrt -o -p 0 $pid
is "$(cat /proc/$pid/soft_affinity)" "1" "SCHED_OTHER again: the request made while FIFO"

# An unprivileged user against root's process, and on its own
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "echo 2 > /proc/$pid/soft_affinity" 2>&1 | sed -E 's/.*: //')" \
	"Operation not permitted" "nobody against root's process: Operation not permitted"
is "$(cat /proc/$pid/soft_affinity)" "1" "root's mask unchanged"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c 'echo 2 > /proc/$$/soft_affinity && cat /proc/$$/soft_affinity' 2>&1)" \
	"2" "nobody on its own process"

# Whole hard mask turns it off
all=$(awk '/^Cpus_allowed:/ {print $2}' /proc/$pid/status)
is "$(write "$all" /proc/$pid/soft_affinity)" "" "writing Cpus_allowed ($all) turns it off"
is "$(cat /proc/$pid/soft_affinity)" "$all" "preferred = allowed"
is "$(awk '/^Cpus_preferred_source:/ {print $2}' /proc/$pid/status)" "none" "Cpus_preferred_source: none"

# The ratio, per process
dflt="$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred) default"
is "$(cat /proc/$pid/soft_affinity_ratio)" "$dflt" "soft_affinity_ratio follows the sysctls"
is "$(write 5:4 /proc/$pid/soft_affinity_ratio)" "" "echo 5:4 > soft_affinity_ratio"
is "$(cat /proc/$pid/soft_affinity_ratio)" "5:4 task" "reads 5:4 task"
is "$(cat /proc/$pid/task/$pid/soft_affinity_ratio)" "5:4 task" "task/TID/soft_affinity_ratio agrees"
is "$(write 0:1 /proc/$pid/soft_affinity_ratio)" "Invalid argument" "0:1: Invalid argument"
is "$(write 5 /proc/$pid/soft_affinity_ratio)" "Invalid argument" "5: Invalid argument"
is "$(cat /proc/$pid/soft_affinity_ratio)" "5:4 task" "ratio unchanged after the errors"
is "$(write default /proc/$pid/soft_affinity_ratio)" "" "echo default > soft_affinity_ratio"
is "$(cat /proc/$pid/soft_affinity_ratio)" "$dflt" "back to the sysctls' ratio"

# sysctls
is "$(sysctl -n kernel.sched_preferred)" "1" "kernel.sched_preferred defaults to 1"
is "$(sysctl -n kernel.sched_allowed)" "100" "kernel.sched_allowed defaults to 100"
sysctl -q -w kernel.sched_allowed=0 2>/dev/null
ok $((! $?)) "sysctl -w kernel.sched_allowed=0 fails"
sysctl -q -w kernel.sched_preferred=10001 2>/dev/null
ok $((! $?)) "sysctl -w kernel.sched_preferred=10001 fails"
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "100:1" "values unchanged"
sysctl -q -w kernel.sched_allowed=5 kernel.sched_preferred=4
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "5:4" "5:4 accepted"
sysctl -q -w kernel.sched_allowed=100 kernel.sched_preferred=1

echo "1..$n"
((fails == 0))
