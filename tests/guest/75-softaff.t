#!/bin/bash
# 75-softaff.t: softaff(1) against the real kernel: show and set a
# process, one thread and every thread (-a), nodes, the ratio, --reset,
# running a command, a cgroup, and what the kernel refuses (EPERM as
# nobody, EINVAL) with exit codes and messages.  Each check compares
# softaff's output with the kernel's own files, or the kernel's files
# after softaff wrote them.  The host tests (softaffd/tests/softaff-check.sh)
# cover argument parsing and messages on fake trees.  Needs 2 NUMA nodes.
# ABI v4: the soft_affinity* files read the request of their level exactly
# as written ("" inherit, "none", the value): /proc/PID/... the process's,
# task/TID/... the thread's; what applies is in status (Cpus_preferred_list,
# _source thread|process|cgroup|none, _ratio, _ratio_source
# thread|process|cgroup|default), and the thread's request comes before the
# process's, which comes before the cgroup's.
set -u
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
is() { # is GOT WANT DESCRIPTION
	if [[ $1 == "$2" ]]; then ok "$3 (got '$1')"; else nok "$3 (got '$1', want '$2')"; fi
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
command -v softaff >/dev/null || skip_all "softaff is not installed"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
((nodes >= 2)) || skip_all "needs 2 NUMA nodes, have $nodes"

N0=$(cat /sys/devices/system/node/node0/cpulist)
N1=$(cat /sys/devices/system/node/node1/cpulist)
HARD=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
SYSRATIO="$(cat /proc/sys/kernel/sched_allowed):$(cat /proc/sys/kernel/sched_preferred)"
CG=/sys/fs/cgroup/softaff-75
echo "# node0=$N0 node1=$N1 hard=$HARD ratio=$SYSRATIO $(softaff --version)"

pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT

status() { sed -n "s/^$2:[[:space:]]*//p" "$1/status"; }
# applies DIR: "LIST SOURCE RATIO RATIO_SOURCE" from DIR/status
applies() {
	echo "$(status "$1" Cpus_preferred_list) $(status "$1" Cpus_preferred_source) $(status "$1" Cpus_preferred_ratio) $(status "$1" Cpus_preferred_ratio_source)"
}
# run ARGS...: softaff; stdout in $out, stderr in $err, status in $rc.
run() {
	out=$(softaff "$@" 2>/tmp/softaff-75.err)
	rc=$?
	err=$(cat /tmp/softaff-75.err)
}

sleep 1000 &
p=$!
pids+=("$p")
softaffd_threads 3 0 >/tmp/softaff-75.thr &
t=$!
pids+=("$t")
for _ in $(seq 50); do grep -q ready /tmp/softaff-75.thr && break; sleep 0.1; done
mapfile -t tids < <(ls /proc/$t/task | sort -n)
echo "# sleep $p, threads $t: ${tids[*]}"

# --- show ---------------------------------------------------------------
run -p -c "$p"
is "$rc $out" "0 pid $p's current preferred list: $HARD (none)
pid $p's current ratio: $SYSRATIO (default)
pid $p's current process request: list inherit, ratio inherit" \
	"softaff -pc PID: nothing set: the hard mask, source none, the sysctls' ratio; the process's request inherits"
run -p "$p"
is "$(sed -n 1p <<<"$out")" "pid $p's current preferred mask: $(status /proc/$p Cpus_preferred) (none)" \
	"softaff -p PID: the hex mask is Cpus_preferred"

# --- set a process --------------------------------------------------------
run -p -c "$N0" "$p"
is "$rc $(cat /proc/$p/soft_affinity_list) $(status /proc/$p Cpus_preferred_list) $(status /proc/$p Cpus_preferred_source)" "0 $N0 $N0 process" \
	"softaff -p -c NODE0 PID: the kernel has it as the process's request, source process"
is "$(grep "new preferred" <<<"$out")" "pid $p's new preferred list: $N0 (process)" "... and prints the new value read back"
run -p --node 1 "$p"
is "$rc $(cat /proc/$p/soft_affinity_list)" "0 $N1" "softaff -p --node 1 PID"
run -p 1 "$p"
is "$rc $(cat /proc/$p/soft_affinity)" "0 1" "softaff -p 1 PID (hex)"
run -p --ratio 5:4 "$p"
is "$rc $(cat /proc/$p/soft_affinity_ratio) $(cat /proc/$p/soft_affinity) $(status /proc/$p Cpus_preferred_ratio) $(status /proc/$p Cpus_preferred_ratio_source)" \
	"0 5:4 1 5:4 process" "softaff -p --ratio 5:4: the ratio is set (the process's, in force), the mask stays"
is "$(grep "new ratio" <<<"$out")" "pid $p's new ratio: 5:4 (process)" "... and is printed with its source"
run -p --reset --ratio inherit "$p"
is "$rc [$(cat /proc/$p/soft_affinity_list)] [$(cat /proc/$p/soft_affinity_ratio)] $(applies /proc/$p)" \
	"0 [] [] $HARD none $SYSRATIO default" \
	"softaff -p --reset --ratio inherit: both back to inherit, nothing applies but the hard mask and the sysctls' ratio"

# --- threads ----------------------------------------------------------------
tid=${tids[1]}
run -p -c "$N1" "$tid"
is "$rc $(cat /proc/$t/task/$tid/soft_affinity_list) $(status /proc/$t/task/$tid Cpus_preferred_source) [$(cat /proc/$t/task/$t/soft_affinity_list)] $(status /proc/$t/task/$t Cpus_preferred_list) $(status /proc/$t/task/$t Cpus_preferred_source)" \
	"0 $N1 thread [] $HARD none" "softaff -p LIST TID: that thread's own request only, as taskset -p"
# -a writes the process level: it applies to every thread without a
# request of its own; the one with its own keeps it (thread > process).
run -p -a -c "$N0" "$t"
got=""
for x in "${tids[@]}"; do got+="$(status /proc/$t/task/$x Cpus_preferred_list)/$(status /proc/$t/task/$x Cpus_preferred_source) "; done
want=""
for x in "${tids[@]}"; do if [[ $x == "$tid" ]]; then want+="$N1/thread "; else want+="$N0/process "; fi; done
is "$rc $(cat /proc/$t/soft_affinity_list) $got" "0 $N0 $want" \
	"softaff -p -a LIST PID: the process's request, in force for every thread but the one with its own"
is "$(grep -c "new preferred list: $N0 (process)" <<<"$out") $(grep -c "new preferred list: $N1 (thread)" <<<"$out")" "$((${#tids[@]} - 1)) 1" \
	"... one new line per thread, with its source"
run -p --reset "$tid"
is "$rc [$(cat /proc/$t/task/$tid/soft_affinity_list)] $(status /proc/$t/task/$tid Cpus_preferred_list) $(status /proc/$t/task/$tid Cpus_preferred_source)" \
	"0 [] $N0 process" "softaff -p --reset TID: the thread's request back to inherit, the process's applies"
run -p -a "$t"
is "$(grep -c "current preferred" <<<"$out")" "${#tids[@]}" "softaff -p -a PID shows every thread"

# --- running a command -------------------------------------------------------
run --node 1 --ratio 20:1 -- sh -c 'grep -E "^Cpus_preferred_(list|source|ratio|ratio_source):" /proc/self/status; cat /proc/self/soft_affinity_ratio'
is "$rc $(tr '\t\n' '  ' <<<"$out")" "0 Cpus_preferred_list: $N1 Cpus_preferred_source: process Cpus_preferred_ratio: 20:1 Cpus_preferred_ratio_source: process 20:1 " \
	"softaff --node 1 --ratio 20:1 -- COMMAND: the command starts with both, as its process's"
run -c "$N0" sh -c 'sh -c "cat /proc/self/soft_affinity_list"'
is "$rc $out" "0 $N0" "softaff LIST COMMAND: its children inherit it"
run -c 0 /nonexistent
is "$rc" 127 "a command that does not exist: exit 127"

# --- refused ----------------------------------------------------------------
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups softaff -p -c 0 "$p" 2>&1)
	rc=$?
	is "$rc" 1 "as nobody on root's process: exit 1"
	[[ $out == *"writing '0' to /proc/$p/soft_affinity_list: Operation not permitted (needs CAP_SYS_NICE"* ]]
	is "$?" 0 "... the message names the value, the file and EPERM in words: ${out##*softaff: }"
else
	ok "EPERM # SKIP no setpriv"
	ok "EPERM message # SKIP no setpriv"
fi
run -p -c 1000 "$p"
is "$rc $(status /proc/$p Cpus_preferred_source)" "1 none" "CPU 1000 (>= nr_cpu_ids): exit 1, nothing set"
[[ $err == *"soft_affinity_list: Invalid argument"* ]]
is "$?" 0 "... Invalid argument, named"
run -p --node 9 "$p"
is "$rc" 2 "node 9 does not exist: exit 2 ($err)"
run -p 999999
is "$rc" 1 "no such process: exit 1"

# --- a cgroup -----------------------------------------------------------------
if grep -qw cpuset /sys/fs/cgroup/cgroup.controllers; then
	echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p "$CG"
	sleep 1000 &
	c=$!
	pids+=("$c")
	echo "$c" >"$CG/cgroup.procs"
	run -g softaff-75
	is "$rc [$(cat "$CG/cpuset.cpus.preferred")] [$(cat "$CG/cpuset.cpus.preferred.ratio")] [$(cat "$CG/cpuset.cpus.preferred.effective")]" \
		"0 [] [] []" "a new cgroup: both files inherit (empty), .effective empty (no ancestor has one)"
	is "$rc $out" "0 cgroup /softaff-75's current preferred mask: inherit (the nearest ancestor's applies)
cgroup /softaff-75's current ratio: inherit
cgroup /softaff-75's current effective mask: none" "softaff -g PATH: nothing set"
	run -g /softaff-75 -c "$N1" --ratio 20:1
	is "$rc $(cat "$CG/cpuset.cpus.preferred") $(cat "$CG/cpuset.cpus.preferred.ratio") $(cat "$CG/cpuset.cpus.preferred.effective")" "0 $N1 20:1 $N1" \
		"softaff -g PATH LIST --ratio: both files (and .effective shows the list)"
	run -p -c "$c"
	is "$out" "pid $c's current preferred list: $N1 (cgroup)
pid $c's current ratio: 20:1 (cgroup)
pid $c's current process request: list inherit, ratio inherit" "a task in it shows source cgroup for both (its process asks for nothing)"
	run -g "$CG" --reset --ratio inherit
	is "$rc [$(cat "$CG/cpuset.cpus.preferred")] [$(cat "$CG/cpuset.cpus.preferred.ratio")] $(status /proc/$c Cpus_preferred_source) $(status /proc/$c Cpus_preferred_ratio_source)" \
		"0 [] [] none default" "softaff -g /sys/fs/cgroup/PATH --reset --ratio inherit: cleared"
	run -g /
	is "$rc" 1 "the root cgroup: exit 1 ($err)"
	kill "$c"
else
	ok "cgroup # SKIP no cpuset controller"
fi

echo "1..$n"
((fails == 0))
