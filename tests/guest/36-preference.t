#!/bin/bash
# 36-preference.t: the preference object of kernel issue #13, as a user
# and an administrator meet it:
#  1. precedence: a thread's own request, its process's (the one written
#     last is in force) and its cgroup's (cpuset.cpus.preferred, used when
#     the task has no request), with Cpus_preferred_source;
#  2. cgroups: a child without a value inherits the nearest ancestor's, its
#     own wins; a task moved to another cgroup follows it, and so do its
#     later threads; a preference outside cpuset.cpus; bad values; the
#     ratio (cpuset.cpus.preferred.ratio, soft_affinity_ratio) the same way;
#  3. threads created during a loop of whole-process writes all end up with
#     the last mask and ratio written, never an older one (softaff_pref during);
#  4. hotplug: offlining a preferred CPU keeps the request, onlining brings
#     it back; a request of offline CPUs only is taken;
#  5. file->f_cred: an fd opened by `nobody` on root's files stays
#     unprivileged in root's hands (over a unix socket, or kept while
#     regaining root); nobody's fd on its own process works in root's hands;
#     root's fd in nobody's hands does not either (the security hook's
#     capability check judges the writer, as for sched_setaffinity);
#  6. the README's systemd recipe: a service whose cgroup gets
#     cpuset.cpus.preferred from ExecStartPre=; its processes and their later
#     threads show Cpus_preferred_source: cgroup and run on node 0;
#  7. the thread storm: a `nobody` process with 20,000 threads (STORM_THREADS)
#     gets whole-process writes in a loop (alternating 0-1 and 2-3, written by
#     `nobody`) while this test measures its own fork+exit latency, 2000
#     samples without writes and 2000 during (STORM_ITER), in 8 alternating
#     blocks each so that host load drifts hit both alike.
# Bounds and why. The storm: p99 during the writes <= 4 x p99 without + 2 ms.
# A whole-process write is an O(1) pointer swap since #13: it takes no lock
# that fork() or exit() needs, so the latency should not move. What may move
# it honestly is CPU: the writer burns one of the 4 vCPUs, and the 4 vCPUs
# run on 2 shared host cores under TCG, so the measuring process can lose
# up to half of its CPU (2x), and TCG and host-scheduler noise on a p99 of
# 2000 samples is another factor ~2 (run to run, same kernel); 2 ms absorbs
# one host scheduling tick on a sub-millisecond p99. The old series walked
# every thread twice under tasklist_lock per write (tens of milliseconds with
# 20,000 threads under TCG), which fork() and exit() wait for: that is what
# this bound catches. Placement (6): the service's two threads run 5 ms in
# 10 ms, one CPU's worth on the two preferred CPUs of an otherwise idle
# guest; at the default 100:1 they should stay on node 0; >= 80% of 40
# samples of their CPU leaves room for wakeups that find both preferred CPUs
# busy for a moment (45-balance.t measures placement precisely).
# Needs 4 CPUs (2 nodes x 2: the masks below), cgroup v2 with cpuset.
n=0 fails=0
ok() { # ok STATUS DESCRIPTION
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	[[ $1 == "$2" ]]
	ok $? "$3 (got '$1', want '$2')"
}
diag() { sed 's/^/# /'; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# write VALUE FILE: prints the error message of a failed write, if any
write() { (printf '%s\n' "$1" >"$2") 2>&1 | sed -E 's/.*: //'; }

export PATH=/opt/softaff/bin:$PATH
[[ -e /proc/self/soft_affinity_ratio ]] || skip_all "kernel without soft_affinity_ratio (issue #13)"
(($(nproc --all) == 4)) || skip_all "the masks here assume exactly 4 CPUs, have $(nproc --all)"
cg=/sys/fs/cgroup
grep -qw cpuset $cg/cgroup.controllers 2>/dev/null || skip_all "cgroup v2 without the cpuset controller"

# --- cpulists in bash ---------------------------------------------------------
list2mask() {
	local IFS=, m=0 p a b i
	for p in $1; do
		if [[ $p == *-* ]]; then a=${p%-*} b=${p#*-}; else a=$p b=$p; fi
		for ((i = a; i <= b; i++)); do ((m |= 1 << i)); done
	done
	echo $m
}
mask2list() {
	local m=$1 i out="" start=-1
	for ((i = 0; i <= 64; i++)); do
		if ((i < 64 && (m >> i) & 1)); then
			((start < 0)) && start=$i
		elif ((start >= 0)); then
			if ((i - 1 == start)); then out+=",$start"; else out+=",$start-$((i - 1))"; fi
			start=-1
		fi
	done
	echo "${out#,}"
}
# eff REQUEST HARD: what a task with that request shows (cpulists)
eff() {
	local r h m
	r=$(list2mask "$1") h=$(list2mask "$2")
	m=$((r & h))
	((m)) || m=$h
	mask2list $m
}
field() { awk -v k="$3:" '$1 == k { print $2 }' /proc/$1/task/$2/status 2>/dev/null; }
# every PID LIST SOURCE DESC: each thread of PID shows LIST with SOURCE
every() {
	local pid=$1 want=$2 wsrc=$3 t got src bad="" cnt=0
	for t in /proc/$pid/task/*; do
		t=${t##*/}
		got=$(cat /proc/$pid/task/$t/soft_affinity_list 2>/dev/null) || continue
		src=$(field "$pid" "$t" Cpus_preferred_source)
		cnt=$((cnt + 1))
		[[ $got == "$want" && $src == "$wsrc" ]] || bad+=" $t:$got:$src"
	done
	[[ -z $bad && $cnt -gt 0 ]]
	ok $? "$4 (every one of $cnt threads: $want, $wsrc${bad:+; wrong:$bad})"
}
# every_ratio PID RATIO DESC
every_ratio() {
	local pid=$1 want=$2 t got bad="" cnt=0
	for t in /proc/$pid/task/*; do
		t=${t##*/}
		got=$(cat /proc/$pid/task/$t/soft_affinity_ratio 2>/dev/null) || continue
		cnt=$((cnt + 1))
		[[ $got == "$want" ]] || bad+=" $t:'$got'"
	done
	[[ -z $bad && $cnt -gt 0 ]]
	ok $? "$3 (every one of $cnt threads: '$want'${bad:+; wrong:$bad})"
}
# wait_for SECONDS CMD...: until CMD succeeds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS >= end)) && return 1
		sleep 0.1
	done
}
kv() { sed -n "s/^$1=//p" <<<"$2" | head -1; }

# --- set up --------------------------------------------------------------------
base=$cg/softaff-pref
unit=softaff-pref-demo.service
root_had_cpuset=1
grep -qw cpuset $cg/cgroup.subtree_control || root_had_cpuset=0
saved_sysctls=$(sysctl -n kernel.sched_allowed kernel.sched_preferred kernel.threads-max kernel.pid_max vm.max_map_count | tr '\n' ' ')
pids=()
cleanup() {
	local p d f
	{
		for p in "${pids[@]}"; do kill -9 "$p"; done
		wait
	} 2>/dev/null
	systemctl stop $unit 2>/dev/null
	rm -rf /run/systemd/system/$unit /run/systemd/system/$unit.d
	systemctl daemon-reload 2>/dev/null
	for f in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[[ $(cat "$f") == 1 ]] || echo 1 >"$f" 2>/dev/null
	done
	for d in $base/m/leaf $base/m $base/a $base/b $base/big $base; do
		[[ -d $d ]] && rmdir "$d" 2>/dev/null
	done
	((root_had_cpuset)) || echo -cpuset >$cg/cgroup.subtree_control 2>/dev/null
	read -r a p tm pm mc <<<"$saved_sysctls"
	sysctl -q -w kernel.sched_allowed="$a" kernel.sched_preferred="$p" \
		kernel.threads-max="$tm" kernel.pid_max="$pm" vm.max_map_count="$mc" 2>/dev/null
}
trap cleanup EXIT
sysctl -q -w kernel.sched_allowed=100 kernel.sched_preferred=1
echo +cpuset >$cg/cgroup.subtree_control &&
	mkdir -p $base && echo +cpuset >$base/cgroup.subtree_control &&
	mkdir -p $base/a $base/b $base/m && echo +cpuset >$base/m/cgroup.subtree_control &&
	mkdir -p $base/m/leaf $base/big
ok $? "cgroups $base/{a,b,m/leaf} with the cpuset controller"
[[ -e $base/a/cpuset.cpus.preferred && -e $base/a/cpuset.cpus.preferred.ratio ]]
ok $? "a cpuset cgroup has cpuset.cpus.preferred and cpuset.cpus.preferred.ratio"
[[ ! -e $cg/cpuset.cpus.preferred ]]
ok $? "the root cgroup has no cpuset.cpus.preferred"
is "$(cat $base/a/cpuset.cpus.preferred)" "" "cpuset.cpus.preferred is empty by default"
is "$(cat $base/a/cpuset.cpus.preferred.ratio)" "default" "cpuset.cpus.preferred.ratio reads default by default"

# A process with 3 parked threads; "spawn K" on its stdin starts K more.
coproc PK { exec softaff_pref park 3; }
pk=$PK_PID
pids+=("$pk")
read -r -u "${PK[0]}" -a T
spawn() { echo "spawn $1" >&"${PK[1]}"; read -r -u "${PK[0]}" -a NEW; }
((${#T[@]} == 3))
ok $? "a process with 3 parked threads (pid $pk, threads ${T[*]})"

# --- 1. precedence ------------------------------------------------------------------
echo "# [$SECONDS s] 1. precedence: thread, process, cgroup"
echo "$pk" >$base/a/cgroup.procs
every "$pk" 0-3 none "no request anywhere: the hard mask, source none"
is "$(write 2-3 $base/a/cpuset.cpus.preferred)" "" "echo 2-3 > a/cpuset.cpus.preferred"
is "$(cat $base/a/cpuset.cpus.preferred)" "2-3" "it reads back 2-3"
every "$pk" 2-3 cgroup "a task without a request follows its cgroup"
write 1 /proc/$pk/task/${T[0]}/soft_affinity_list >/dev/null
is "$(cat /proc/$pk/task/${T[0]}/soft_affinity_list) $(field $pk ${T[0]} Cpus_preferred_source)" "1 task" \
	"a thread's own request wins over the cgroup's"
is "$(cat /proc/$pk/task/${T[1]}/soft_affinity_list) $(field $pk ${T[1]} Cpus_preferred_source)" "2-3 cgroup" \
	"... for that thread only"
is "$(write 0 /proc/$pk/soft_affinity_list)" "" "echo 0 > /proc/PID/soft_affinity_list"
every "$pk" 0 task "the process request, written last, overrides the thread's own"
write 3 /proc/$pk/task/${T[1]}/soft_affinity_list >/dev/null
is "$(cat /proc/$pk/task/${T[1]}/soft_affinity_list) $(cat /proc/$pk/task/${T[2]}/soft_affinity_list)" "3 0" \
	"a thread write after the process write: that thread 3, the others keep 0"
spawn 1
is "$(cat /proc/$pk/task/${NEW[0]}/soft_affinity_list) $(field $pk ${NEW[0]} Cpus_preferred_source)" "0 task" \
	"a thread created later gets the process request"
write 0-3 /proc/$pk/soft_affinity_list >/dev/null
every "$pk" 2-3 cgroup "the process writes its whole hard mask: every thread, the one with its own too, follows the cgroup again"
write 1 /proc/$pk/task/${T[0]}/soft_affinity_list >/dev/null
write 0-3 /proc/$pk/task/${T[0]}/soft_affinity_list >/dev/null
is "$(cat /proc/$pk/task/${T[0]}/soft_affinity_list) $(field $pk ${T[0]} Cpus_preferred_source)" "2-3 cgroup" \
	"a thread writing its whole hard mask clears its own request: back to the cgroup's"
spawn 1
is "$(cat /proc/$pk/task/${NEW[0]}/soft_affinity_list) $(field $pk ${NEW[0]} Cpus_preferred_source)" "2-3 cgroup" \
	"a thread created later, no request: the cgroup's"
is "$(write "" $base/a/cpuset.cpus.preferred)" "" "an empty write clears a/cpuset.cpus.preferred"
every "$pk" 0-3 none "no preference left: the hard mask, source none"

# --- 2. cgroup inheritance, migration, values -------------------------------------
echo "# [$SECONDS s] 2. cgroups: inheritance, migration, values"
write 2-3 $base/cpuset.cpus.preferred >/dev/null
is "$(cat $base/a/cpuset.cpus.preferred)" "" "the parent prefers 2-3; a has no value of its own"
every "$pk" 2-3 cgroup "a task in a inherits its parent's 2-3"
write 0 $base/b/cpuset.cpus.preferred >/dev/null
echo "$pk" >$base/b/cgroup.procs
every "$pk" 0 cgroup "moved to b (own value 0): every thread follows b"
spawn 2
every "$pk" 0 cgroup "... threads created after the move too"
echo "$pk" >$base/m/leaf/cgroup.procs
every "$pk" 2-3 cgroup "moved to m/leaf (neither has a value): the grandparent's 2-3"
write 1 $base/m/cpuset.cpus.preferred >/dev/null
every "$pk" 1 cgroup "m prefers 1: the nearest ancestor's value wins"
write 0-1 /proc/$pk/soft_affinity_list >/dev/null
every "$pk" 0-1 task "the process's own request wins over every cgroup's"
echo "$pk" >$base/b/cgroup.procs
every "$pk" 0-1 task "... and moves with it to b"
write 0-3 /proc/$pk/soft_affinity_list >/dev/null
every "$pk" 0 cgroup "its request cleared: b's 0"

# A preference outside cpuset.cpus: stored, the intersection or the hard mask.
write 0-1 $base/b/cpuset.cpus >/dev/null
is "$(write 2-3 $base/b/cpuset.cpus.preferred)" "" "b: cpuset.cpus 0-1, cpuset.cpus.preferred 2-3 accepted"
every "$pk" 0-1 cgroup "disjoint from the hard mask 0-1: the hard mask"
write 1-2 $base/b/cpuset.cpus.preferred >/dev/null
every "$pk" 1 cgroup "preferred 1-2 under cpuset.cpus 0-1: 1"
write 0-3 $base/b/cpuset.cpus >/dev/null
every "$pk" 1-2 cgroup "cpuset.cpus 0-3 again: 1-2"
is "$(cat $base/b/cpuset.cpus.preferred)" "1-2" "the value was kept through the cpuset.cpus change"

# Bad values: EINVAL, nothing changes.
for v in zz 4 99 0- 1-0 a-b -1 "0,,x"; do
	is "$(write "$v" $base/b/cpuset.cpus.preferred)" "Invalid argument" "cpuset.cpus.preferred '$v': Invalid argument"
done
is "$(cat $base/b/cpuset.cpus.preferred)" "1-2" "b's value unchanged after the bad writes"
every "$pk" 1-2 cgroup "the tasks unchanged too"

# Ratios: procfs and cgroup, inheritance, precedence, independent of masks.
dflt() { echo "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred) default"; }
every_ratio "$pk" "$(dflt)" "no ratio anywhere: the sysctls' ratio, source default"
is "$(write 7:3 $base/cpuset.cpus.preferred.ratio)" "" "the parent's cpuset.cpus.preferred.ratio 7:3"
is "$(cat $base/b/cpuset.cpus.preferred.ratio)" "default" "b has no ratio of its own"
every_ratio "$pk" "7:3 cgroup" "a task in b inherits the parent's ratio"
write 9:2 $base/b/cpuset.cpus.preferred.ratio >/dev/null
every_ratio "$pk" "9:2 cgroup" "b's own ratio 9:2 wins"
is "$(write 5:4 /proc/$pk/soft_affinity_ratio)" "" "echo 5:4 > /proc/PID/soft_affinity_ratio"
every_ratio "$pk" "5:4 task" "the process ratio wins over the cgroup's"
write 6:1 /proc/$pk/task/${T[0]}/soft_affinity_ratio >/dev/null
is "$(cat /proc/$pk/task/${T[0]}/soft_affinity_ratio) / $(cat /proc/$pk/task/${T[1]}/soft_affinity_ratio)" "6:1 task / 5:4 task" \
	"a thread's ratio, written last, wins for that thread"
write 3:1 /proc/$pk/soft_affinity_ratio >/dev/null
every_ratio "$pk" "3:1 task" "a process ratio written later overrides it"
write 2:1 /proc/$pk/task/${T[1]}/soft_affinity_ratio >/dev/null
write 0-1 /proc/$pk/soft_affinity_list >/dev/null
is "$(cat /proc/$pk/task/${T[1]}/soft_affinity_ratio) $(cat /proc/$pk/task/${T[1]}/soft_affinity_list)" "2:1 task 0-1" \
	"a process mask write leaves a thread's own ratio alone (and vice versa)"
write 0-3 /proc/$pk/soft_affinity_list >/dev/null
write default /proc/$pk/soft_affinity_ratio >/dev/null
every_ratio "$pk" "9:2 cgroup" "'default' to the process: every thread back to b's ratio"
every "$pk" 1-2 cgroup "ratio writes left the masks alone"
for v in 0:1 10001:1 5 5: a:b 1:0 -1:1 4294967297:1 defaults; do
	is "$(write "$v" $base/b/cpuset.cpus.preferred.ratio)" "Invalid argument" "cpuset.cpus.preferred.ratio '$v': Invalid argument"
	is "$(write "$v" /proc/$pk/soft_affinity_ratio)" "Invalid argument" "soft_affinity_ratio '$v': Invalid argument"
done
v="$(printf '%032d' 1):1"
is "$(write "$v" /proc/$pk/soft_affinity_ratio)" "Invalid argument" "soft_affinity_ratio: ${#v} bytes + newline (more than 31): Invalid argument"
is "$(cat $base/b/cpuset.cpus.preferred.ratio)" "9:2" "b's ratio unchanged after the bad writes"
every_ratio "$pk" "9:2 cgroup" "the tasks' ratio unchanged"
write default $base/b/cpuset.cpus.preferred.ratio >/dev/null
every_ratio "$pk" "7:3 cgroup" "b's ratio back to default: the parent's again"
write default $base/cpuset.cpus.preferred.ratio >/dev/null
every_ratio "$pk" "$(dflt)" "no cgroup ratio left: the sysctls'"
sysctl -q -w kernel.sched_allowed=40
every_ratio "$pk" "40:1 default" "the default follows kernel.sched_allowed"
sysctl -q -w kernel.sched_allowed=100
write "" $base/cpuset.cpus.preferred >/dev/null
write "" $base/m/cpuset.cpus.preferred >/dev/null
write "" $base/b/cpuset.cpus.preferred >/dev/null

# --- 3. threads created during whole-process writes -----------------------------
echo "# [$SECONDS s] 3. threads created during a loop of whole-process writes"
# In a cgroup of ours: the job's unit has a pids limit (TasksMax) below
# the thread counts here.
inbig() { echo $BASHPID >$base/big/cgroup.procs && exec "$@"; }
out=$(inbig softaff_pref during 3000)
echo "$out" | grep -v '=' | diag
echo "# $(kv created_during "$out") threads created during 3000 writes of mask and ratio, $(kv created "$out") in all, $(kv checked "$out") checked"
(($(kv created_during "$out") > 20 && $(kv checked "$out") > $(kv created_during "$out")))
ok $? "threads were created while the writes went on"
is "$(kv write_errors "$out")" 0 "every write was accepted"
is "$(kv bad_mask "$out") $(kv bad_ratio "$out") $(kv bad_source "$out")" "0 0 0" \
	"every thread has the last mask and ratio written, source task (wrong mask, ratio, source)"

# --- 4. hotplug ----------------------------------------------------------------------
echo "# [$SECONDS s] 4. CPU hotplug"
on3=/sys/devices/system/cpu/cpu3/online
if [[ -w $on3 ]]; then
	sleep 1000 &
	hp=$!
	disown $hp # no "Killed" from bash when the cleanup kills it
	pids+=("$hp")
	write 3 /proc/$hp/soft_affinity_list >/dev/null
	write 2-3 $base/b/cpuset.cpus.preferred >/dev/null
	echo 0 >$on3
	hard=$(field $hp $hp Cpus_allowed_list)
	is "$(cat /proc/$hp/soft_affinity_list)" "$(eff 3 "$hard")" "CPU 3 offline: a task preferring 3 shows request & hard ($hard), or the hard mask"
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_allowed_list:/ {print \$2}' /proc/$pk/status) == 0-2 ]]"
	every "$pk" 2 cgroup "CPU 3 offline: a task in b (cpuset now 0-2) prefers 2"
	is "$(cat $base/b/cpuset.cpus.preferred)" "2-3" "b's cpuset.cpus.preferred keeps 3"
	is "$(write 1-2 /proc/$hp/soft_affinity_list)" "" "a new request while 3 is offline"
	is "$(write 3 /proc/$hp/soft_affinity_list)" "" "a request of the offline CPU only is taken"
	echo 1 >$on3
	wait_for 5 bash -c "[[ \$(cat /proc/$hp/soft_affinity_list) == 3 ]]"
	is "$(cat /proc/$hp/soft_affinity_list)" "3" "CPU 3 online: the request 3 is in effect"
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_allowed_list:/ {print \$2}' /proc/$pk/status) == 0-3 ]]"
	every "$pk" 2-3 cgroup "CPU 3 online: the task in b prefers 2-3 again"
	on2=/sys/devices/system/cpu/cpu2/online
	echo 0 >$on2 && echo 0 >$on3
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_allowed_list:/ {print \$2}' /proc/$pk/status) == 0-1 ]]"
	every "$pk" 0-1 cgroup "CPUs 2 and 3 offline: b's preference is disjoint, the hard mask 0-1"
	echo 1 >$on2 && echo 1 >$on3
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_allowed_list:/ {print \$2}' /proc/$pk/status) == 0-3 ]]"
	every "$pk" 2-3 cgroup "both back: 2-3"
	write "" $base/b/cpuset.cpus.preferred >/dev/null
else
	ok 0 "CPU hotplug # SKIP cpu3 cannot be offlined"
fi

# --- 5. file->f_cred ---------------------------------------------------------------
echo "# [$SECONDS s] 5. permission checks judge the opener"
sleep 1000 &
tgt=$!
disown $tgt
pids+=("$tgt")
write 0-1 /proc/$tgt/soft_affinity_list >/dev/null
out=$(softaff_pref fcred $tgt)
is "$(kv nobody_open_root_write_mask "$out")" EPERM "soft_affinity opened by nobody, written by root (fd over a unix socket): EPERM"
is "$(kv nobody_open_root_write_list "$out")" EPERM "... soft_affinity_list: EPERM"
is "$(kv nobody_open_root_write_ratio "$out")" EPERM "... soft_affinity_ratio: EPERM"
is "$(kv nobody_open_root_write_task "$out")" EPERM "... task/TID/soft_affinity: EPERM"
is "$(kv nobody_open_regained_root_write "$out")" EPERM "opened while euid nobody, written after regaining root (as across a setuid exec): EPERM"
is "$(kv nobody_open_own_root_write "$out")" 0 "nobody's own file, written by root: accepted"
# The writer is judged too: the security hook (commoncap's CAP_SYS_NICE
# check in task_setscheduler) looks at current, as for sched_setaffinity.
is "$(kv root_open_nobody_write "$out")" EPERM "root's fd written by nobody: EPERM too (the opener and the writer must both be allowed)"
is "$(cat /proc/$tgt/soft_affinity_list) $(cat /proc/$tgt/soft_affinity_ratio)" \
	"0-1 $(dflt)" "root's task kept its 0-1 and no ratio"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "exec 3>/proc/$tgt/soft_affinity_list; echo 1 >&3" 2>&1 | sed -E 's/.*: //')" \
	"Operation not permitted" "setpriv nobody, opened and written there: Operation not permitted"

# --- 6. a systemd service with a preferred node (README) ---------------------------
echo "# [$SECONDS s] 6. a systemd service with a preferred node, without softaffd"
mkdir -p /run/systemd/system/$unit.d
cat >/run/systemd/system/$unit <<EOF
[Unit]
Description=softaff 36-preference.t demo: two processes, threads started after 1 s
[Service]
ExecStart=/bin/sh -c '/opt/softaff/bin/softaff_pref later 1 2 & exec /opt/softaff/bin/softaff_pref later 1 2'
EOF
# The drop-in as the README gives it (node 0 = CPUs 0-1 here).
cat >/run/systemd/system/$unit.d/preferred-node.conf <<'EOF'
[Service]
AllowedCPUs=0-3
ExecStartPre=+/bin/sh -c 'echo 0-1 > /sys/fs/cgroup$$(sed -n "s/^0:://p" /proc/self/cgroup)/cpuset.cpus.preferred'
EOF
systemctl daemon-reload
systemctl start $unit
rc=$?
ok $rc "systemctl start $unit (exit $rc)"
((rc)) && systemctl status $unit --no-pager -n 10 2>&1 | diag
ucg=$cg$(systemctl show -p ControlGroup --value $unit)
is "$(cat "$ucg/cpuset.cpus.preferred" 2>&1)" "0-1" "the unit's cgroup ($ucg) prefers 0-1"
sleep 2 # the threads start after 1 s
procs=$(cat "$ucg/cgroup.procs" 2>/dev/null)
is "$(wc -w <<<"$procs")" 2 "the service has its two processes"
for p in $procs; do
	every "$p" 0-1 cgroup "service process $p and the threads it started later"
done
systemctl daemon-reload
is "$(cat "$ucg/cpuset.cpus.preferred" 2>&1)" "0-1" "... still after systemctl daemon-reload"
on0=0 samples=0
for i in $(seq 40); do
	for p in $procs; do
		for t in /proc/$p/task/*; do
			[[ ${t##*/} == "$p" ]] && continue
			c=$(awk '{ sub(/.*\) /, ""); print $37 }' $t/stat 2>/dev/null) || continue
			[[ -n $c ]] || continue
			samples=$((samples + 1))
			((c <= 1)) && on0=$((on0 + 1))
		done
	done
	sleep 0.05
done
echo "# service threads: $on0 of $samples samples on node 0 (CPUs 0-1)"
((samples > 0 && on0 * 100 >= samples * 80))
ok $? "the service's threads run on node 0 ($on0 of $samples samples, bound 80%)"
systemctl stop $unit

# --- 7. the thread storm ----------------------------------------------------------------
echo "# [$SECONDS s] 7. thread storm: whole-process writes to a process with many threads"
nthr=${STORM_THREADS:-20000} iters=${STORM_ITER:-2000}
need_kb=$((nthr * 48 + 262144))
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if ((avail_kb < need_kb)); then
	ok 0 "thread storm # SKIP $nthr threads need about $((need_kb / 1024)) MiB, $((avail_kb / 1024)) MiB available"
else
	sysctl -q -w kernel.threads-max=$((nthr * 2 + 10000)) kernel.pid_max=$((nthr * 2 + 65536)) \
		vm.max_map_count=$((nthr * 4 + 65536))
	start=$SECONDS
	out=$(inbig softaff_pref storm "$nthr" "$iters")
	echo "$out" | grep -v '=' | diag
	echo "# storm: $(kv created "$out") threads in $(kv create_seconds "$out") s ($(kv create_error "$out")); $(kv writes "$out") writes, $(kv writes_per_s "$out")/s while measuring; $((SECONDS - start)) s in all"
	echo "# fork+exit latency without writes: p50 $(kv before_p50_us "$out") us, p99 $(kv before_p99_us "$out") us, max $(kv before_max_us "$out") us ($(kv samples_before "$out") samples)"
	echo "# fork+exit latency during writes:  p50 $(kv during_p50_us "$out") us, p99 $(kv during_p99_us "$out") us, max $(kv during_max_us "$out") us ($(kv samples_during "$out") samples)"
	is "$(kv created "$out")" "$nthr" "a nobody process with $nthr threads"
	(($(kv writes "$out") > 0)) && [[ $(kv write_errors "$out") == 0 ]]
	ok $? "nobody's whole-process writes to it were accepted ($(kv writes "$out") writes, $(kv write_errors "$out") errors)"
	[[ $(kv final_bad "$out") == 0 && $(kv final_checked "$out") -ge $nthr ]]
	ok $? "afterwards every thread has the last mask written ($(kv final_mask "$out"); $(kv final_bad "$out") of $(kv final_checked "$out") wrong)"
	b99=$(kv before_p99_us "$out") d99=$(kv during_p99_us "$out")
	bound=$((${b99:-0} * 4 + 2000))
	((${d99:-999999999} <= bound))
	ok $? "fork+exit p99 during the writes ${d99} us <= 4 x ${b99} us + 2 ms = $bound us"
fi

echo "1..$n"
((fails == 0))
