#!/bin/bash
# 37-cgroup-effective.t: cpuset.cpus.preferred.effective (issue #24). A
# child cgroup shows what its tasks get: the nearest cgroup's value, from
# itself up, that does not inherit, within its cpuset.cpus.effective; and
# the file sends an inotify "modified" event when that changes, from a
# write to the cgroup or an ancestor or from CPU hotplug, and none when a
# sibling changes. softaff_notify puts the watch in place before the
# change, so a missing event is a failure, not a race.
source "${0%/*}/lib.sh"
cpus=$(nproc --all)
((cpus >= 4)) || skip_all "needs 4 CPUs, have $cpus"
[[ -w /sys/devices/system/cpu/cpu2/online ]] || skip_all "CPU 2 cannot go offline"

root=/sys/fs/cgroup
top=$root/sa37
cleanup() {
	echo 1 >/sys/devices/system/cpu/cpu2/online 2>/dev/null
	rmdir $top/child $top/sibling $top 2>/dev/null
}
trap cleanup EXIT
echo +cpuset >$root/cgroup.subtree_control
mkdir $top && echo +cpuset >$top/cgroup.subtree_control && mkdir $top/child $top/sibling || {
	echo "Bail out! cannot create $top with the cpuset controller"
	exit 1
}
eff=$top/child/cpuset.cpus.preferred.effective

# is GOT WANT DESCRIPTION
is() { [[ $1 == "$2" ]]; check $? "$3 (got '$1', want '$2')"; }
# notify WANT DESCRIPTION COMMAND: an event on $eff, or none, for COMMAND
notify() {
	local got
	got=$(/opt/softaff/bin/softaff_notify "$eff" 1000 -- "$3")
	is "$got" "$1" "$2"
}

is "$(cat $eff)" "" "a new child with nothing set up to the root: empty"
is "$(cat $top/child/cpuset.cpus.preferred)" "" "... its own value reads as inherit (an empty line)"

notify event "the parent writes 2-3: the child's file sends an event" \
	"echo 2-3 > $top/cpuset.cpus.preferred"
is "$(cat $eff)" "2-3" "the child inherits the parent's list"
is "$(cat $top/cpuset.cpus.preferred.effective)" "2-3" "the parent's own effective is its list"

notify event "the child's cpuset.cpus becomes 1-2: an event" \
	"echo 1-2 > $top/child/cpuset.cpus"
is "$(cat $eff)" "2" "the child's effective is the list within its cpuset.cpus.effective"

notify none "a sibling writes its own value: no event for the child" \
	"echo 0 > $top/sibling/cpuset.cpus.preferred"
is "$(cat $top/sibling/cpuset.cpus.preferred.effective)" "0" "... and the sibling's effective is its own"

notify event "the child writes none: an event" "echo none > $top/child/cpuset.cpus.preferred"
is "$(cat $eff)" "" "none: empty, the parent's list is not inherited"
is "$(cat $top/child/cpuset.cpus.preferred)" "none" "... and reads back as none"

notify event "the child writes inherit: an event" "echo inherit > $top/child/cpuset.cpus.preferred"
is "$(cat $eff)" "2" "inherit: the parent's list again"
is "$(cat $top/child/cpuset.cpus.preferred)" "" "... and reads back as an empty line"

notify event "CPU 2 goes offline: an event" "echo 0 > /sys/devices/system/cpu/cpu2/online"
is "$(cat $eff)" "" "the only inherited CPU is offline: empty"
is "$(cat $top/cpuset.cpus.preferred)" "2-3" "the parent's request is kept as written"
notify event "CPU 2 comes back: an event" "echo 1 > /sys/devices/system/cpu/cpu2/online"
is "$(cat $eff)" "2" "the preference is back"

err=$( (echo 1 >$eff) 2>&1)
check $((!$?)) "the effective file is read-only (${err##*: })"
is "$(cat $eff)" "2" "... and the failed write changed nothing"

sleep 1000 &
pid=$!
echo $pid >$top/child/cgroup.procs
is "$(sed -n 's/^Cpus_preferred_list:\t//p' /proc/$pid/status) $(sed -n 's/^Cpus_preferred_source:\t//p' /proc/$pid/status)" \
	"2 cgroup" "a task of the child prefers what the file says, from its cgroup"
kill $pid
wait $pid 2>/dev/null
echo $$ >$root/cgroup.procs 2>/dev/null
echo "1..$n"
