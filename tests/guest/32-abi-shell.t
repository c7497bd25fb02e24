#!/bin/bash
# 32-abi-shell.t: the soft affinity ABI v4 (issue #24) as an administrator
# uses it, with echo, cat, taskset, chrt, setpriv and sysctl against running
# processes: the request files read what was written at their level ("",
# "none" or the value), status shows what applies (Cpus_preferred*, with
# the source thread, process, cgroup or none, and the ratio); the README's
# examples; what is refused and what is stored (a mask outside or covering
# the hard mask, a SCHED_FIFO task); the words inherit/none; the thread
# level against the process level; the leader-pinned write of issue #24
# (taskset -p -c 1 on the leader, then echo 0-1 > /proc/PID/soft_affinity_list:
# stored, every thread gets it); round trips of every file (cat, echo back:
# nothing moves); the ratio files; the sysctls, kernel.sched_soft_affinity_ratio
# included. The exact errno checks and all 27 combinations of the levels
# are in 30-abi.t (softaff_abi), cgroups in 36-preference.t.
export PATH=/opt/softaff/bin:$PATH
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
# st PID KEY [TID]: a field of PID's status (of task TID's if given)
st() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1${3:+/task/$3}/status" 2>/dev/null; }
# pref PID [TID]: "Cpus_preferred_list Cpus_preferred_source"
pref() { echo "$(st "$1" Cpus_preferred_list "$2") $(st "$1" Cpus_preferred_source "$2")"; }
# rpref PID [TID]: "Cpus_preferred_ratio Cpus_preferred_ratio_source"
rpref() { echo "$(st "$1" Cpus_preferred_ratio "$2") $(st "$1" Cpus_preferred_ratio_source "$2")"; }
dflt() { echo "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)"; }

cpus=$(nproc --all)
if ((cpus != 4)); then
	echo "ok 1 # SKIP the masks here assume exactly 4 CPUs, have $cpus"
	echo "1..1"
	exit 0
fi

sleep 1000 &
pid=$!
pk=
cgs=/sys/fs/cgroup/softaff-abi-shell
root_had_cpuset=1
cleanup() {
	kill "$pid" ${pk:+"$pk"} 2>/dev/null
	wait 2>/dev/null
	rmdir $cgs 2>/dev/null
	((root_had_cpuset)) || echo -cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	sysctl -q -w kernel.sched_allowed=100 kernel.sched_preferred=1 2>/dev/null
}
trap cleanup EXIT
sleep 0.2

# --- defaults: no request anywhere ---------------------------------------------
is "$(cat /proc/$pid/soft_affinity)|$(cat /proc/$pid/soft_affinity_list)|$(cat /proc/$pid/soft_affinity_ratio)" "||" \
	"a new process: soft_affinity, _list and _ratio read empty (inherit)"
is "$(cat /proc/$pid/task/$pid/soft_affinity)|$(cat /proc/$pid/task/$pid/soft_affinity_ratio)" "|" \
	"... and so do its thread's"
is "$(st $pid Cpus_preferred)" "$(st $pid Cpus_allowed)" "status: Cpus_preferred equals Cpus_allowed"
is "$(pref $pid)" "$(st $pid Cpus_allowed_list) none" "Cpus_preferred_list equals Cpus_allowed_list, Cpus_preferred_source none"
is "$(rpref $pid)" "$(dflt) default" "Cpus_preferred_ratio is the sysctls', Cpus_preferred_ratio_source default"

# --- the README's examples: the process level -----------------------------------
is "$(write 3 /proc/$pid/soft_affinity)" "" "echo 3 > /proc/PID/soft_affinity"
is "$(cat /proc/$pid/soft_affinity)" "3" "cat shows 3"
is "$(cat /proc/$pid/soft_affinity_list)" "0-1" "soft_affinity_list shows 0-1"
is "$(st $pid Cpus_preferred)" "3" "Cpus_preferred: 3"
is "$(pref $pid)" "0-1 process" "Cpus_preferred_list: 0-1, Cpus_preferred_source: process"
is "$(cat /proc/$pid/task/$pid/soft_affinity)" "" "task/TID/soft_affinity (the thread level) still reads empty"

is "$(write 2-3 /proc/$pid/soft_affinity_list)" "" "echo 2-3 > soft_affinity_list"
is "$(cat /proc/$pid/soft_affinity)" "c" "hex shows c"
v=$(cat /proc/$pid/soft_affinity)
is "$(write "$v" /proc/$pid/soft_affinity)" "" "what cat printed writes back"
is "$(cat /proc/$pid/soft_affinity_list)" "2-3" "... and changes nothing"

is "$(write 0 /proc/$pid/soft_affinity)" "Invalid argument" "echo 0: Invalid argument"
is "$(write xyz /proc/$pid/soft_affinity_list)" "Invalid argument" "garbage list: Invalid argument"
is "$(write default /proc/$pid/soft_affinity_list)" "Invalid argument" "the old word default: Invalid argument"
is "$(cat /proc/$pid/soft_affinity)" "c" "request unchanged after the errors"

# --- taskset: the request stays as written, status follows the hard mask ----------
write 3 /proc/$pid/soft_affinity >/dev/null
taskset -p 0xe $pid >/dev/null
is "$(st $pid Cpus_preferred) $(cat /proc/$pid/soft_affinity)" "2 3" "taskset 0xe: preferred 2, the request still 3"
taskset -p 0xc $pid >/dev/null
is "$(st $pid Cpus_preferred) $(st $pid Cpus_preferred_source)" "c process" "taskset 0xc (disjoint): preferred = hard, source still process"
taskset -p 0xf $pid >/dev/null
is "$(st $pid Cpus_preferred)" "3" "taskset 0xf: the request 3 applies again"
is "$(write 10 /proc/$pid/soft_affinity)" "Invalid argument" "CPU 4 (>= nr_cpu_ids): Invalid argument"
taskset -p 0x3 $pid >/dev/null
is "$(write 4 /proc/$pid/soft_affinity)" "" "CPU 2 outside taskset 0x3: accepted"
is "$(cat /proc/$pid/soft_affinity) $(st $pid Cpus_preferred)" "4 3" "... stored as written (4), the hard mask 3 applies meanwhile"
taskset -p 0xf $pid >/dev/null
is "$(st $pid Cpus_preferred)" "4" "taskset 0xf: the stored request 4 applies"
taskset -p 0x3 $pid >/dev/null
is "$(write 3 /proc/$pid/soft_affinity)" "" "under taskset 0x3, echo 3 (covers the hard mask): accepted"
is "$(cat /proc/$pid/soft_affinity) $(pref $pid)" "3 0-1 process" "... stored, not cleared: reads 3, source process"
taskset -p 0xf $pid >/dev/null
is "$(st $pid Cpus_preferred)" "3" "taskset 0xf: the request 3 written under 0x3 applies"

# --- chrt: stored while FIFO, in effect once SCHED_OTHER again ------------------------
chrt -f -p 1 $pid
is "$(cat /proc/$pid/soft_affinity)" "3" "request kept when switched to SCHED_FIFO"
is "$(write 1 /proc/$pid/soft_affinity)" "" "SCHED_FIFO task: accepted"
is "$(cat /proc/$pid/soft_affinity)" "1" "... and stored"
chrt -o -p 0 $pid
is "$(st $pid Cpus_preferred)" "1" "SCHED_OTHER again: the request made while FIFO applies"

# --- an unprivileged user against root's process, and on its own ---------------------
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "echo 2 > /proc/$pid/soft_affinity" 2>&1 | sed -E 's/.*: //')" \
	"Operation not permitted" "nobody against root's process: Operation not permitted"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "echo none > /proc/$pid/soft_affinity_list" 2>&1 | sed -E 's/.*: //')" \
	"Operation not permitted" "nobody writing none to root's process: Operation not permitted"
is "$(cat /proc/$pid/soft_affinity)" "1" "root's request unchanged"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "grep -c '^Cpus_preferred' /proc/$pid/status")" "5" \
	"nobody reading root's status sees the 5 Cpus_preferred* lines"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c 'echo 2 > /proc/$$/soft_affinity && cat /proc/$$/soft_affinity' 2>&1)" \
	"2" "nobody on its own process"

# --- the words: none, inherit, an empty write -----------------------------------------
all=$(st $pid Cpus_allowed)
is "$(write none /proc/$pid/soft_affinity)" "" "echo none > soft_affinity"
is "$(cat /proc/$pid/soft_affinity) $(cat /proc/$pid/soft_affinity_list)" "none none" "both files read none"
is "$(st $pid Cpus_preferred) $(st $pid Cpus_preferred_source)" "$all none" "status: Cpus_preferred = Cpus_allowed, source none"
is "$(write inherit /proc/$pid/soft_affinity_list)" "" "echo inherit > soft_affinity_list"
is "$(cat /proc/$pid/soft_affinity)|$(st $pid Cpus_preferred_source)" "|none" "reads empty, source none"
write 3 /proc/$pid/soft_affinity >/dev/null
is "$(write "" /proc/$pid/soft_affinity)" "" "echo > soft_affinity (an empty line)"
is "$(cat /proc/$pid/soft_affinity)|$(st $pid Cpus_preferred)" "|$all" "an empty line is inherit: reads empty, preferred = allowed"
is "$(write "$all" /proc/$pid/soft_affinity)" "" "writing Cpus_allowed ($all)"
is "$(cat /proc/$pid/soft_affinity) $(st $pid Cpus_preferred_source)" "$all process" \
	"it is stored, not cleared: reads $all, source process"

# --- the thread level against the process level (fixed precedence) ------------------
is "$(write 1 /proc/$pid/task/$pid/soft_affinity_list)" "" "echo 1 > task/TID/soft_affinity_list"
is "$(cat /proc/$pid/task/$pid/soft_affinity_list) $(cat /proc/$pid/soft_affinity)" "1 $all" \
	"the thread level reads 1, the process level still $all"
is "$(pref $pid)" "1 thread" "the thread's request applies, source thread"
write 2-3 /proc/$pid/soft_affinity_list >/dev/null
is "$(pref $pid)" "1 thread" "a process write made later does not override it"
write none /proc/$pid/task/$pid/soft_affinity >/dev/null
is "$(pref $pid)" "0-3 none" "thread none: no preference, though the process prefers 2-3"
write inherit /proc/$pid/task/$pid/soft_affinity >/dev/null
is "$(pref $pid)" "2-3 process" "thread inherit: the process's 2-3"
write "" /proc/$pid/soft_affinity_list >/dev/null
is "$(pref $pid)" "0-3 none" "process inherit too: none"

# --- the ratio --------------------------------------------------------------------
is "$(cat /proc/$pid/soft_affinity_ratio)" "" "soft_affinity_ratio reads empty"
is "$(rpref $pid)" "$(dflt) default" "status: the sysctls' ratio, source default"
is "$(write 5:4 /proc/$pid/soft_affinity_ratio)" "" "echo 5:4 > soft_affinity_ratio"
is "$(cat /proc/$pid/soft_affinity_ratio)" "5:4" "reads 5:4"
is "$(cat /proc/$pid/task/$pid/soft_affinity_ratio)|$(rpref $pid)" "|5:4 process" \
	"the thread level still reads empty; status 5:4 process"
is "$(write 0:1 /proc/$pid/soft_affinity_ratio)" "Invalid argument" "0:1: Invalid argument"
is "$(write 5 /proc/$pid/soft_affinity_ratio)" "Invalid argument" "5: Invalid argument"
is "$(write default /proc/$pid/soft_affinity_ratio)" "Invalid argument" "default (gone): Invalid argument"
is "$(cat /proc/$pid/soft_affinity_ratio)" "5:4" "ratio unchanged after the errors"
is "$(write 7:2 /proc/$pid/task/$pid/soft_affinity_ratio)" "" "echo 7:2 > task/TID/soft_affinity_ratio"
is "$(rpref $pid)" "7:2 thread" "the thread's ratio wins"
write none /proc/$pid/task/$pid/soft_affinity_ratio >/dev/null
is "$(cat /proc/$pid/task/$pid/soft_affinity_ratio) $(rpref $pid)" "none $(dflt) default" \
	"thread ratio none: the sysctls', not the process's 5:4"
write inherit /proc/$pid/task/$pid/soft_affinity_ratio >/dev/null
is "$(rpref $pid)" "5:4 process" "thread ratio inherit: the process's"
is "$(write none /proc/$pid/soft_affinity_ratio)" "" "echo none > soft_affinity_ratio"
is "$(cat /proc/$pid/soft_affinity_ratio) $(rpref $pid)" "none $(dflt) default" "reads none; the sysctls' ratio"
is "$(write inherit /proc/$pid/soft_affinity_ratio)" "" "echo inherit > soft_affinity_ratio"
is "$(cat /proc/$pid/soft_affinity_ratio)|$(rpref $pid)" "|$(dflt) default" "reads empty again"
is "$(st $pid Cpus_preferred_source)" "none" "ratio writes left the mask alone"

# --- issue #24: the leader pinned, then a process-wide write covering its hard mask --
coproc PK { exec softaff_pref park 3; }
pk=$PK_PID
read -r -u "${PK[0]}" -a T
((${#T[@]} == 3))
ok $? "a process with 3 parked threads (pid $pk, threads ${T[*]})"
taskset -p -c 1 $pk >/dev/null
is "$(st $pk Cpus_allowed_list) $(st $pk Cpus_allowed_list ${T[0]})" "1 0-3" \
	"taskset -p -c 1 \$PID pins the leader only"
is "$(write 0-1 /proc/$pk/soft_affinity_list)" "" "echo 0-1 > /proc/\$PID/soft_affinity_list"
is "$(cat /proc/$pk/soft_affinity_list)" "0-1" "it is stored as written (before: silently dropped)"
bad=""
for t in "${T[@]}"; do
	[[ $(pref $pk $t) == "0-1 process" ]] || bad+=" $t:$(pref $pk $t)"
done
[[ -z $bad ]]
ok $? "every other thread prefers 0-1, source process${bad:+ (wrong:$bad)}"
is "$(pref $pk)" "1 process" "the leader: its hard mask 1 (the request covers it), source process"
taskset -p -c 0-3 $pk >/dev/null
is "$(pref $pk)" "0-1 process" "taskset the leader back to 0-3: it prefers 0-1 too"

# --- round trips: every file, read and written back, changes nothing ----------------
files=("/proc/$pk/soft_affinity" "/proc/$pk/soft_affinity_list" "/proc/$pk/soft_affinity_ratio")
for t in $pk "${T[@]}"; do
	files+=("/proc/$pk/task/$t/soft_affinity" "/proc/$pk/task/$t/soft_affinity_list" "/proc/$pk/task/$t/soft_affinity_ratio")
done
snap() {
	local f
	for f in "${files[@]}" "$@"; do printf '%s=%s;' "$f" "$(cat "$f" 2>&1)"; done
	grep -H '^Cpus_preferred' /proc/$pk/task/*/status
}
# roundtrip LABEL [CGROUP-FILES...]: each file's content written back as is
roundtrip() {
	local label=$1 f v before after bad=""
	shift
	before=$(snap "$@")
	for f in "${files[@]}" "$@"; do
		[[ $f == *.effective ]] && continue
		v=$(cat "$f")
		err=$(write "$v" "$f")
		after=$(snap "$@")
		if [[ -n $err || $after != "$before" ]]; then
			bad+=" $f('$v':${err:-changed})"
			before=$after
		fi
	done
	[[ -z $bad ]]
	ok $? "round trip, $label: every file, cat and echoed back, changes nothing${bad:+ (failed:$bad)}"
}
roundtrip "process 0-1, threads inherit"
write none /proc/$pk/task/${T[0]}/soft_affinity >/dev/null
write 2 /proc/$pk/task/${T[1]}/soft_affinity_list >/dev/null
write 5:4 /proc/$pk/soft_affinity_ratio >/dev/null
write none /proc/$pk/task/${T[2]}/soft_affinity_ratio >/dev/null
write 3:1 /proc/$pk/task/${T[1]}/soft_affinity_ratio >/dev/null
is "$(pref $pk ${T[0]}) / $(pref $pk ${T[1]}) / $(pref $pk ${T[2]})" "0-3 none / 2 thread / 0-1 process" \
	"thread none, thread 2, thread inherit under process 0-1"
is "$(rpref $pk ${T[0]}) / $(rpref $pk ${T[1]}) / $(rpref $pk ${T[2]})" "5:4 process / 3:1 thread / $(dflt) default" \
	"ratios: inherit, 3:1, none under process 5:4"
roundtrip "every state at the thread level"
write none /proc/$pk/soft_affinity >/dev/null
write none /proc/$pk/soft_affinity_ratio >/dev/null
roundtrip "process none"
write f /proc/$pk/soft_affinity >/dev/null
roundtrip "process covering the hard mask"

# cgroup files, when cpuset is there
if grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control || root_had_cpuset=0
	echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control && mkdir -p $cgs && echo $pk >$cgs/cgroup.procs
	ok $? "the parked process in $cgs"
	cgf=("$cgs/cpuset.cpus.preferred" "$cgs/cpuset.cpus.preferred.ratio" "$cgs/cpuset.cpus.preferred.effective")
	write inherit /proc/$pk/soft_affinity >/dev/null
	write inherit /proc/$pk/soft_affinity_ratio >/dev/null
	is "$(cat $cgs/cpuset.cpus.preferred)|$(cat $cgs/cpuset.cpus.preferred.ratio)|$(cat $cgs/cpuset.cpus.preferred.effective)" "||" \
		"a new cgroup: cpuset.cpus.preferred, .ratio, .effective read empty"
	roundtrip "cgroup inherit" "${cgf[@]}"
	write 2-3 $cgs/cpuset.cpus.preferred >/dev/null
	write 9:2 $cgs/cpuset.cpus.preferred.ratio >/dev/null
	is "$(cat $cgs/cpuset.cpus.preferred.effective) / $(pref $pk ${T[2]}) / $(rpref $pk ${T[2]})" "2-3 / 2-3 cgroup / $(dflt) default" \
		"cgroup 2-3 and 9:2: a thread without its own shows 2-3 from cgroup; its ratio none wins"
	is "$(pref $pk ${T[1]}) / $(rpref $pk ${T[1]})" "2 thread / 3:1 thread" "the thread with its own requests keeps them"
	roundtrip "cgroup 2-3, 9:2" "${cgf[@]}"
	write none $cgs/cpuset.cpus.preferred >/dev/null
	write none $cgs/cpuset.cpus.preferred.ratio >/dev/null
	is "$(cat $cgs/cpuset.cpus.preferred)|$(cat $cgs/cpuset.cpus.preferred.effective)|$(pref $pk ${T[2]})" "none||0-3 none" \
		"cgroup none: reads none, effective empty, the thread has no preference"
	roundtrip "cgroup none" "${cgf[@]}"
	is "$(write default $cgs/cpuset.cpus.preferred.ratio)" "Invalid argument" "cpuset.cpus.preferred.ratio: default (gone): Invalid argument"
	echo $pk >/sys/fs/cgroup/cgroup.procs
else
	ok 0 "cgroup round trips # SKIP no cpuset controller"
fi

# --- sysctls -----------------------------------------------------------------------
is "$(sysctl -n kernel.sched_preferred)" "1" "kernel.sched_preferred defaults to 1"
is "$(sysctl -n kernel.sched_allowed)" "100" "kernel.sched_allowed defaults to 100"
is "$(sysctl -n kernel.sched_soft_affinity_ratio)" "100:1" "kernel.sched_soft_affinity_ratio reads 100:1"
sysctl -q -w kernel.sched_allowed=0 2>/dev/null
ok $((! $?)) "sysctl -w kernel.sched_allowed=0 fails"
sysctl -q -w kernel.sched_preferred=10001 2>/dev/null
ok $((! $?)) "sysctl -w kernel.sched_preferred=10001 fails"
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "100:1" "values unchanged"
sysctl -q -w kernel.sched_allowed=5 kernel.sched_preferred=4
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "5:4" "5:4 accepted"
is "$(sysctl -n kernel.sched_soft_affinity_ratio)" "5:4" "kernel.sched_soft_affinity_ratio follows: 5:4"
sysctl -q -w kernel.sched_soft_affinity_ratio=7:3
is "$(sysctl -n kernel.sched_allowed) $(sysctl -n kernel.sched_preferred) $(sysctl -n kernel.sched_soft_affinity_ratio)" "7 3 7:3" \
	"sysctl -w kernel.sched_soft_affinity_ratio=7:3 sets both"
is "$(rpref $pid)" "7:3 default" "a task without a ratio of its own follows"
for v in 0:1 1:0 10001:1 5 a:b 5:4:3 default none; do
	is "$(write "$v" /proc/sys/kernel/sched_soft_affinity_ratio)" "Invalid argument" "sched_soft_affinity_ratio '$v': Invalid argument"
done
is "$(sysctl -n kernel.sched_soft_affinity_ratio) $(sysctl -n kernel.sched_allowed) $(sysctl -n kernel.sched_preferred)" "7:3 7 3" \
	"nothing changed after the bad writes"
v=$(sysctl -n kernel.sched_soft_affinity_ratio)
is "$(write "$v" /proc/sys/kernel/sched_soft_affinity_ratio)$(sysctl -n kernel.sched_soft_affinity_ratio)" "7:3" \
	"what it reads writes back"
sysctl -q -w kernel.sched_soft_affinity_ratio=100:1
is "$(sysctl -n kernel.sched_allowed):$(sysctl -n kernel.sched_preferred)" "100:1" "back to 100:1"

echo "1..$n"
((fails == 0))
