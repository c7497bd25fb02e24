#!/bin/bash
# 36-preference.t: the preference object of kernel issue #13 with the ABI of
# issue #24 (abi-v4), as a user and an administrator meet it:
#  1. precedence, fixed: a thread's own request, then its process's, then
#     its cgroup's (cpuset.cpus.preferred), whatever the order of the
#     writes; "none" at a level stops there, "inherit" (or an empty write)
#     asks the next; the request files read what was written at their
#     level, status (Cpus_preferred_list, Cpus_preferred_source) what
#     applies;
#  2. cgroups: a child without a value inherits the nearest ancestor's, its
#     own wins, "none" stops the inheritance; cpuset.cpus.preferred.effective
#     shows what applies (that value & cpuset.cpus.effective); a task moved
#     to another cgroup follows it, and so do its later threads; a
#     preference outside cpuset.cpus; bad values; the ratio
#     (cpuset.cpus.preferred.ratio, soft_affinity_ratio, the status lines
#     Cpus_preferred_ratio{,_source}, kernel.sched_soft_affinity_ratio) the
#     same way;
#  3. threads created during a loop of whole-process writes all end up with
#     the last mask and ratio written, from the process level, never an
#     older one (softaff_pref during);
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
# pref PID TID: what applies to a thread, "LIST SOURCE" (status)
pref() { echo "$(field "$1" "$2" Cpus_preferred_list) $(field "$1" "$2" Cpus_preferred_source)"; }
# rpref PID TID: the ratio that applies to a thread, "A:P SOURCE" (status)
rpref() { echo "$(field "$1" "$2" Cpus_preferred_ratio) $(field "$1" "$2" Cpus_preferred_ratio_source)"; }
# every PID LIST SOURCE DESC: each thread of PID shows LIST with SOURCE in status
every() {
	local pid=$1 want=$2 wsrc=$3 t got src bad="" cnt=0
	for t in /proc/$pid/task/*; do
		t=${t##*/}
		got=$(field "$pid" "$t" Cpus_preferred_list)
		[[ -n $got ]] || continue
		src=$(field "$pid" "$t" Cpus_preferred_source)
		cnt=$((cnt + 1))
		[[ $got == "$want" && $src == "$wsrc" ]] || bad+=" $t:$got:$src"
	done
	[[ -z $bad && $cnt -gt 0 ]]
	ok $? "$4 (every one of $cnt threads: $want, $wsrc${bad:+; wrong:$bad})"
}
# every_ratio PID "A:P SOURCE" DESC: each thread of PID shows that ratio in status
every_ratio() {
	local pid=$1 want=$2 t got bad="" cnt=0
	for t in /proc/$pid/task/*; do
		t=${t##*/}
		got=$(rpref "$pid" "$t")
		[[ $got != " " ]] || continue
		cnt=$((cnt + 1))
		[[ $got == "$want" ]] || bad+=" $t:'$got'"
	done
	[[ -z $bad && $cnt -gt 0 ]]
	ok $? "$3 (every one of $cnt threads: '$want'${bad:+; wrong:$bad})"
}
dflt() { echo "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred) default"; }
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
[[ -e $base/a/cpuset.cpus.preferred && -e $base/a/cpuset.cpus.preferred.ratio && -e $base/a/cpuset.cpus.preferred.effective ]]
ok $? "a cpuset cgroup has cpuset.cpus.preferred, .ratio and .effective"
[[ ! -e $cg/cpuset.cpus.preferred && ! -e $cg/cpuset.cpus.preferred.effective ]]
ok $? "the root cgroup has no cpuset.cpus.preferred{,.effective}"
is "$(cat $base/a/cpuset.cpus.preferred)" "" "cpuset.cpus.preferred is empty (inherit) by default"
is "$(cat $base/a/cpuset.cpus.preferred.ratio)" "" "cpuset.cpus.preferred.ratio is empty (inherit) by default"
is "$(cat $base/a/cpuset.cpus.preferred.effective)" "" "cpuset.cpus.preferred.effective is empty: nothing to inherit"

# A process with 3 parked threads; "spawn K" on its stdin starts K more.
coproc PK { exec softaff_pref park 3; }
pk=$PK_PID
pids+=("$pk")
read -r -u "${PK[0]}" -a T
spawn() { echo "spawn $1" >&"${PK[1]}"; read -r -u "${PK[0]}" -a NEW; }
((${#T[@]} == 3))
ok $? "a process with 3 parked threads (pid $pk, threads ${T[*]})"

# --- 1. precedence ------------------------------------------------------------------
echo "# [$SECONDS s] 1. precedence: thread, then process, then cgroup"
T0=/proc/$pk/task/${T[0]} T1=/proc/$pk/task/${T[1]}
echo "$pk" >$base/a/cgroup.procs
every "$pk" 0-3 none "no request anywhere: the hard mask, source none"
is "$(write 2-3 $base/a/cpuset.cpus.preferred)" "" "echo 2-3 > a/cpuset.cpus.preferred"
is "$(cat $base/a/cpuset.cpus.preferred)" "2-3" "it reads back 2-3"
every "$pk" 2-3 cgroup "a task without a request follows its cgroup"
is "$(write 1 $T0/soft_affinity_list)" "" "echo 1 > task/T0/soft_affinity_list"
is "$(cat $T0/soft_affinity_list) / $(pref $pk ${T[0]})" "1 / 1 thread" \
	"a thread's own request reads 1 and wins over the cgroup's"
is "$(pref $pk ${T[1]})" "2-3 cgroup" "... for that thread only"
is "$(cat /proc/$pk/soft_affinity_list)" "" "the process level still reads empty"
is "$(write 0 /proc/$pk/soft_affinity_list)" "" "echo 0 > /proc/PID/soft_affinity_list"
is "$(cat /proc/$pk/soft_affinity_list)" "0" "/proc/PID/soft_affinity_list reads the process request 0"
is "$(pref $pk ${T[0]})" "1 thread" "the thread's own request still wins over the process's, though written earlier"
is "$(pref $pk ${T[1]}) / $(pref $pk ${T[2]}) / $(pref $pk $pk)" "0 process / 0 process / 0 process" \
	"the other threads (and the leader): the process's, over the cgroup's"
is "$(cat $T1/soft_affinity_list) $(cat $T0/soft_affinity_list)" " 1" \
	"a process write leaves the thread-level requests as they were (empty, 1)"
write 3 $T1/soft_affinity_list >/dev/null
is "$(pref $pk ${T[1]}) / $(pref $pk ${T[2]})" "3 thread / 0 process" \
	"a thread write after the process write: that thread 3, the others keep 0"
spawn 1
is "$(pref $pk ${NEW[0]}) / '$(cat /proc/$pk/task/${NEW[0]}/soft_affinity_list)'" "0 process / ''" \
	"a thread created later: no request of its own, the process's"
is "$(write 0-3 /proc/$pk/soft_affinity_list)" "" "the process writes its whole hard mask 0-3"
is "$(cat /proc/$pk/soft_affinity_list) / $(pref $pk ${T[2]})" "0-3 / 0-3 process" \
	"it is stored (reads 0-3), not cleared: source process, the hard mask applies"
is "$(write none /proc/$pk/soft_affinity_list)" "" "echo none > /proc/PID/soft_affinity_list"
is "$(cat /proc/$pk/soft_affinity_list) / $(pref $pk ${T[2]}) / $(pref $pk ${T[0]})" "none / 0-3 none / 1 thread" \
	"process none: no preference for the threads without their own, though the cgroup has one; the thread's own still wins"
is "$(write inherit /proc/$pk/soft_affinity_list)" "" "echo inherit > /proc/PID/soft_affinity_list"
is "$(cat /proc/$pk/soft_affinity_list) / $(pref $pk ${T[2]})" " / 2-3 cgroup" \
	"process inherit: reads empty, the cgroup's again"
is "$(write none $T0/soft_affinity)" "" "echo none > task/T0/soft_affinity"
is "$(cat $T0/soft_affinity) $(cat $T0/soft_affinity_list) / $(pref $pk ${T[0]})" "none none / 0-3 none" \
	"thread none: no preference for it, though the cgroup has one"
is "$(write "" $T0/soft_affinity_list)" "" "echo > task/T0/soft_affinity_list"
is "'$(cat $T0/soft_affinity_list)' / $(pref $pk ${T[0]})" "'' / 2-3 cgroup" \
	"an empty write is inherit: reads empty, the cgroup's"
write inherit $T1/soft_affinity >/dev/null
every "$pk" 2-3 cgroup "every thread back to inherit: the cgroup's"
spawn 1
is "$(pref $pk ${NEW[0]})" "2-3 cgroup" "a thread created later, no request: the cgroup's"
is "$(write none $base/a/cpuset.cpus.preferred)" "" "echo none > a/cpuset.cpus.preferred"
is "$(cat $base/a/cpuset.cpus.preferred) / '$(cat $base/a/cpuset.cpus.preferred.effective)'" "none / ''" \
	"it reads none, effective empty"
every "$pk" 0-3 none "cgroup none: the hard mask, source none"
is "$(write "" $base/a/cpuset.cpus.preferred)" "" "an empty write: a/cpuset.cpus.preferred inherit"
is "$(cat $base/a/cpuset.cpus.preferred)" "" "it reads empty"
every "$pk" 0-3 none "no preference left: the hard mask, source none"

# --- 2. cgroup inheritance, migration, values -------------------------------------
echo "# [$SECONDS s] 2. cgroups: inheritance, migration, values"
write 2-3 $base/cpuset.cpus.preferred >/dev/null
is "$(cat $base/a/cpuset.cpus.preferred)" "" "the parent prefers 2-3; a has no value of its own"
is "$(cat $base/a/cpuset.cpus.preferred.effective) $(cat $base/cpuset.cpus.preferred.effective)" "2-3 2-3" \
	"cpuset.cpus.preferred.effective: a and the parent 2-3"
every "$pk" 2-3 cgroup "a task in a inherits its parent's 2-3"
write none $base/a/cpuset.cpus.preferred >/dev/null
is "'$(cat $base/a/cpuset.cpus.preferred.effective)' $(cat $base/cpuset.cpus.preferred.effective)" "'' 2-3" \
	"a none: its effective empty, the parent's still 2-3"
every "$pk" 0-3 none "a none stops the inheritance"
write inherit $base/a/cpuset.cpus.preferred >/dev/null
write 0 $base/b/cpuset.cpus.preferred >/dev/null
is "$(cat $base/b/cpuset.cpus.preferred.effective)" "0" "b's own 0: its effective 0"
echo "$pk" >$base/b/cgroup.procs
every "$pk" 0 cgroup "moved to b (own value 0): every thread follows b"
spawn 2
every "$pk" 0 cgroup "... threads created after the move too"
echo "$pk" >$base/m/leaf/cgroup.procs
is "$(cat $base/m/leaf/cpuset.cpus.preferred.effective)" "2-3" "m/leaf (no value, nor m): effective the grandparent's 2-3"
every "$pk" 2-3 cgroup "moved to m/leaf (neither has a value): the grandparent's 2-3"
write 1 $base/m/cpuset.cpus.preferred >/dev/null
is "$(cat $base/m/leaf/cpuset.cpus.preferred.effective)" "1" "m prefers 1: m/leaf's effective 1"
every "$pk" 1 cgroup "m prefers 1: the nearest ancestor's value wins"
write none $base/m/leaf/cpuset.cpus.preferred >/dev/null
is "'$(cat $base/m/leaf/cpuset.cpus.preferred.effective)'" "''" "m/leaf none: its effective empty"
every "$pk" 0-3 none "m/leaf none: no preference, though m and the grandparent have one"
write "" $base/m/leaf/cpuset.cpus.preferred >/dev/null
write 0-1 /proc/$pk/soft_affinity_list >/dev/null
every "$pk" 0-1 process "the process's own request wins over every cgroup's"
echo "$pk" >$base/b/cgroup.procs
every "$pk" 0-1 process "... and moves with it to b"
write inherit /proc/$pk/soft_affinity_list >/dev/null
every "$pk" 0 cgroup "its request back to inherit: b's 0"

# A preference outside cpuset.cpus: stored, the intersection or the hard mask.
write 0-1 $base/b/cpuset.cpus >/dev/null
is "$(write 2-3 $base/b/cpuset.cpus.preferred)" "" "b: cpuset.cpus 0-1, cpuset.cpus.preferred 2-3 accepted"
is "$(cat $base/b/cpuset.cpus.preferred) / '$(cat $base/b/cpuset.cpus.preferred.effective)'" "2-3 / ''" \
	"it reads 2-3; effective 2-3 & 0-1, empty"
every "$pk" 0-1 cgroup "disjoint from the hard mask 0-1: the hard mask, source cgroup"
write 1-2 $base/b/cpuset.cpus.preferred >/dev/null
is "$(cat $base/b/cpuset.cpus.preferred.effective)" "1" "preferred 1-2 under cpuset.cpus 0-1: effective 1"
every "$pk" 1 cgroup "preferred 1-2 under cpuset.cpus 0-1: 1"
write 0-3 $base/b/cpuset.cpus >/dev/null
is "$(cat $base/b/cpuset.cpus.preferred.effective)" "1-2" "cpuset.cpus 0-3 again: effective 1-2"
every "$pk" 1-2 cgroup "cpuset.cpus 0-3 again: 1-2"
is "$(cat $base/b/cpuset.cpus.preferred)" "1-2" "the value was kept through the cpuset.cpus change"

# Bad values: EINVAL, nothing changes.
for v in zz 4 99 0- 1-0 a-b -1 "0,,x" default inherits nonex "none,1"; do
	is "$(write "$v" $base/b/cpuset.cpus.preferred)" "Invalid argument" "cpuset.cpus.preferred '$v': Invalid argument"
done
is "$(cat $base/b/cpuset.cpus.preferred)" "1-2" "b's value unchanged after the bad writes"
every "$pk" 1-2 cgroup "the tasks unchanged too"
v=$(cat $base/b/cpuset.cpus.preferred)
is "$(write "$v" $base/b/cpuset.cpus.preferred)" "" "what cat printed writes back"
is "$(cat $base/b/cpuset.cpus.preferred) $(cat $base/b/cpuset.cpus.preferred.effective)" "1-2 1-2" "... and changes nothing"

# Ratios: procfs and cgroup, inheritance, fixed precedence, apart from masks.
is "$(cat /proc/$pk/soft_affinity_ratio)|$(cat $T0/soft_affinity_ratio)" "|" \
	"soft_affinity_ratio reads empty (inherit) at the process and thread levels"
every_ratio "$pk" "$(dflt)" "no ratio anywhere: the sysctls' ratio, source default"
is "$(write 7:3 $base/cpuset.cpus.preferred.ratio)" "" "the parent's cpuset.cpus.preferred.ratio 7:3"
is "$(cat $base/b/cpuset.cpus.preferred.ratio)" "" "b has no ratio of its own: reads empty"
every_ratio "$pk" "7:3 cgroup" "a task in b inherits the parent's ratio"
write 9:2 $base/b/cpuset.cpus.preferred.ratio >/dev/null
every_ratio "$pk" "9:2 cgroup" "b's own ratio 9:2 wins"
write none $base/b/cpuset.cpus.preferred.ratio >/dev/null
is "$(cat $base/b/cpuset.cpus.preferred.ratio)" "none" "b's ratio none reads none"
every_ratio "$pk" "$(dflt)" "b none: the sysctls' ratio, not the parent's 7:3"
write 9:2 $base/b/cpuset.cpus.preferred.ratio >/dev/null
is "$(write 6:1 $T0/soft_affinity_ratio)" "" "echo 6:1 > task/T0/soft_affinity_ratio"
is "$(write 5:4 /proc/$pk/soft_affinity_ratio)" "" "then echo 5:4 > /proc/PID/soft_affinity_ratio"
is "$(cat /proc/$pk/soft_affinity_ratio) $(cat $T0/soft_affinity_ratio)" "5:4 6:1" "each level reads what was written there"
is "$(rpref $pk ${T[0]}) / $(rpref $pk ${T[1]}) / $(rpref $pk $pk)" "6:1 thread / 5:4 process / 5:4 process" \
	"the thread's ratio wins for that thread though the process's was written later; the others the process's over the cgroup's"
write 2:1 $T1/soft_affinity_ratio >/dev/null
write 0-1 /proc/$pk/soft_affinity_list >/dev/null
is "$(rpref $pk ${T[1]}) $(pref $pk ${T[1]}) $(cat $T1/soft_affinity_list)|" "2:1 thread 0-1 process |" \
	"a process mask write leaves a thread's own ratio alone (and vice versa)"
write none $T1/soft_affinity_ratio >/dev/null
is "$(rpref $pk ${T[1]})" "$(dflt)" "thread ratio none: the sysctls', not the process's 5:4"
write inherit /proc/$pk/soft_affinity_list >/dev/null
is "$(write default /proc/$pk/soft_affinity_ratio)" "Invalid argument" "the old word 'default' to the process ratio: Invalid argument"
is "$(cat /proc/$pk/soft_affinity_ratio)" "5:4" "... and it stays 5:4"
is "$(write inherit /proc/$pk/soft_affinity_ratio)" "" "echo inherit > /proc/PID/soft_affinity_ratio"
is "$(rpref $pk ${T[2]}) / $(rpref $pk ${T[0]})" "9:2 cgroup / 6:1 thread" \
	"process inherit: back to b's, the thread's own still wins"
write "" $T0/soft_affinity_ratio >/dev/null
write inherit $T1/soft_affinity_ratio >/dev/null
every_ratio "$pk" "9:2 cgroup" "the threads' ratios back to inherit: every thread b's ratio"
every "$pk" 1-2 cgroup "ratio writes left the masks alone"
for v in 0:1 10001:1 5 5: a:b 1:0 -1:1 4294967297:1 defaults default inherits nonex; do
	is "$(write "$v" $base/b/cpuset.cpus.preferred.ratio)" "Invalid argument" "cpuset.cpus.preferred.ratio '$v': Invalid argument"
	is "$(write "$v" /proc/$pk/soft_affinity_ratio)" "Invalid argument" "soft_affinity_ratio '$v': Invalid argument"
done
v="$(printf '%032d' 1):1"
is "$(write "$v" /proc/$pk/soft_affinity_ratio)" "Invalid argument" "soft_affinity_ratio: ${#v} bytes + newline (more than 31): Invalid argument"
is "$(cat $base/b/cpuset.cpus.preferred.ratio)|$(cat /proc/$pk/soft_affinity_ratio)" "9:2|" "b's and the process's ratio unchanged after the bad writes"
every_ratio "$pk" "9:2 cgroup" "the tasks' ratio unchanged"
v=$(cat $base/b/cpuset.cpus.preferred.ratio)
is "$(write "$v" $base/b/cpuset.cpus.preferred.ratio)$(cat $base/b/cpuset.cpus.preferred.ratio)" "9:2" "b's ratio, written back as read, changes nothing"
is "$(write "" $base/b/cpuset.cpus.preferred.ratio)" "" "an empty write to b's ratio"
every_ratio "$pk" "7:3 cgroup" "b's ratio inherit: the parent's again"
write inherit $base/cpuset.cpus.preferred.ratio >/dev/null
is "$(cat $base/cpuset.cpus.preferred.ratio)" "" "'inherit' to the parent's ratio: reads empty"
every_ratio "$pk" "$(dflt)" "no cgroup ratio left: the sysctls'"
sysctl -q -w kernel.sched_allowed=40
every_ratio "$pk" "40:1 default" "the default follows kernel.sched_allowed"
is "$(sysctl -n kernel.sched_soft_affinity_ratio)" "40:1" "kernel.sched_soft_affinity_ratio reads 40:1"
sysctl -q -w kernel.sched_soft_affinity_ratio=30:2
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "30:2" \
	"sysctl -w kernel.sched_soft_affinity_ratio=30:2 sets both"
every_ratio "$pk" "30:2 default" "... and the default follows it"
sysctl -q -w kernel.sched_soft_affinity_ratio=100:1
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
is "$(kv bad_mask "$out") $(kv bad_ratio "$out") $(kv bad_source "$out") $(kv bad_request "$out")" "0 0 0 0" \
	"every thread shows the last mask and ratio written, source process, no request of its own; the process files read them (wrong mask, ratio, source, request)"

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
	is "$(field $hp $hp Cpus_preferred_list)" "$(eff 3 "$hard")" "CPU 3 offline: a task preferring 3 shows request & hard ($hard), or the hard mask"
	is "$(cat /proc/$hp/soft_affinity_list)" "3" "... its request still reads 3"
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_allowed_list:/ {print \$2}' /proc/$pk/status) == 0-2 ]]"
	every "$pk" 2 cgroup "CPU 3 offline: a task in b (cpuset now 0-2) prefers 2"
	is "$(cat $base/b/cpuset.cpus.preferred)" "2-3" "b's cpuset.cpus.preferred keeps 3"
	is "$(write 1-2 /proc/$hp/soft_affinity_list)" "" "a new request while 3 is offline"
	is "$(cat /proc/$hp/soft_affinity_list)" "1-2" "... it reads 1-2"
	is "$(write 3 /proc/$hp/soft_affinity_list)" "" "a request of the offline CPU only is taken"
	is "$(cat /proc/$hp/soft_affinity_list) $(pref $hp $hp)" "3 $hard process" "... it reads 3, the hard mask applies meanwhile"
	echo 1 >$on3
	wait_for 5 bash -c "[[ \$(awk '/^Cpus_preferred_list:/ {print \$2}' /proc/$hp/status) == 3 ]]"
	is "$(pref $hp $hp)" "3 process" "CPU 3 online: the request 3 is in effect"
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
is "$(cat /proc/$tgt/soft_affinity_list)|$(cat /proc/$tgt/soft_affinity_ratio)|$(cat /proc/$tgt/task/$tgt/soft_affinity_list)" \
	"0-1||" "root's task kept its 0-1 and no ratio, no thread-level request"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "exec 3>/proc/$tgt/soft_affinity_list; echo 1 >&3" 2>&1 | sed -E 's/.*: //')" \
	"Operation not permitted" "setpriv nobody, opened and written there: Operation not permitted"

# --- 6. a systemd service with a preferred node (README) ---------------------------
echo "# [$SECONDS s] 6. a systemd service with a preferred node, without softaffd"
mkdir -p /run/systemd/system/$unit.d
cat >/run/systemd/system/$unit <<EOF
[Unit]
Description=softaff 36-preference.t demo: two processes, threads started after 1 s
[Service]
ExecStart=/bin/sh -c '/opt/softaff/bin/softaff_pref later 1 1 & exec /opt/softaff/bin/softaff_pref later 1 1'
EOF
# One thread per process, 5 ms on and 5 ms off: a CPU's worth of work for
# the two preferred CPUs, so the rule has no reason to spill it.  With two
# threads each node 0 is saturated, and 100:1 rightly spills a wakeup to
# an idle CPU of node 1 whenever both preferred CPUs are busy (126 of 160
# samples stayed home in one run).  Without the preference the threads
# would spread over all four CPUs.
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
