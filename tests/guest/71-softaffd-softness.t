#!/bin/bash
# 71-softaffd-softness.t: softaffd's per-rule softness (issue #16) as the
# systemd service in the guest:
#  1. fixed, strict and adaptive softness through each process's own
#     /proc/PID/soft_affinity_ratio (the process level: what applies to
#     its threads is Cpus_preferred_ratio in status, source "process"),
#     the sysctls left alone, and put back to inherit on stop;
#  2. drop-ins in /etc/softaffd.d: read after the main file, checked by
#     softaffd -t, a duplicate rule name refused naming both file:line;
#  3. the unit key on a transient service (systemd-run): with AllowedCPUs=
#     the rule is one write to the unit's cgroup (cpuset.cpus.preferred and
#     .ratio; the tasks show Cpus_preferred_source: cgroup), restored on
#     stop; in a slice without the cpuset controller it falls back to the
#     process level (source process) and says so in the journal;
#  4. the control law: a communicating pair (perf bench sched pipe, two
#     processes ping-ponging over pipes) preferring node 0 stays hard;
#     four CPU-bound processes under one rule, hard-pinned to node 0 while
#     node 1 idles (but for 3 busy loops queued on its first CPU: idle
#     room is counted per CPU), get softened to 5:4 quickly, and hardened
#     again once others keep node 1 busy;
#  5. an adaptive unit rule takes its tasks' wait from the unit's
#     cgroup: cpu.pressure and cpu.stat where the kernel has PSI (the
#     guest's has, kernel/config/guest.config), else its threads'
#     schedstat, which the journal says once; either way four CPU-bound
#     processes of the unit on node 0's CPUs soften the cgroup's
#     cpuset.cpus.preferred.ratio, and --status names the source.  With
#     kernel.sched_schedstats off, --status shows spills and returns as
#     n/a, not 0;
#  6. a unit restarted (systemctl restart: its cgroup removed and made
#     again at the same path, with a new id) gets the preference again,
#     not taken for someone else's value, and softaffd a new cpu.pressure
#     trigger on it (one fd to the path in /proc/PID/fd).
# Statistical bounds (part 4), with their reasons:
#  - the pair: its tasks sleep on each other; what they wait is wakeup
#    latency (8% measured under TCG, 10-20% in earlier runs) with about
#    1.2 of node 0's 2 CPUs idle, and the law softens only a full home;
#    the check is that the rule is at
#    100:1 in at least 80% of 20 one-second samples, and that the journal
#    has no softening of it.  It fails if the controller took the pair's
#    100% node utilization (or any noise) for contention.
#  - the hogs: 4 runnable tasks on 2 preferred CPUs wait about half their
#    time (50%, the threshold is 10%) with 2 idle CPUs next door, so the
#    law softens at the first full sample, 3 rungs a sample; the bound is
#    20 s (the first sample is a baseline, TCG can stall the guest for
#    seconds), and 10 s more to 5:4.  It fails if the rule stays at
#    100:1.  Then 2 busy loops on node 1 leave the rule no room outside:
#    one rung harder after 5 such samples; the bound is 30 s.
#  - part 5's hogs, read from their cgroup: a task waits on each of the
#    2 CPUs all the time, PSI's "some" is the whole interval (it counts
#    per CPU), and the wait is some / (some + min(usage, interval)) =
#    50%, as from the threads (33% with some / (some + usage), which
#    could not soften a unit on 9 CPUs or more); the same 20 s bound.
# Needs two NUMA nodes.  The guest's demo drop-ins wait in a temporary
# directory meanwhile; everything is put back at the end.
set -u
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
is() { # is GOT WANT DESCRIPTION
	if [[ $1 == "$2" ]]; then ok "$3 (got '$1')"; else nok "$3 (got '$1', want '$2')"; fi
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { sed 's/^/# /'; }

[[ -e /proc/self/soft_affinity_ratio ]] || skip_all "kernel without per-process soft affinity ratio"
command -v softaffd >/dev/null && [[ -n $(systemctl show -p FragmentPath --value softaffd 2>/dev/null) ]] ||
	skip_all "softaffd is not installed"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
((nodes >= 2)) || skip_all "needs 2 NUMA nodes, have $nodes"

CONF=/etc/softaffd.conf
DROPINS=/etc/softaffd.d
N0=$(cat /sys/devices/system/node/node0/cpulist)
N1=$(cat /sys/devices/system/node/node1/cpulist)
W=$(mktemp -d /tmp/softaffd-71.XXXXXX)
cp "$CONF" "$W/installed.conf"
if [[ -d $DROPINS ]]; then mv "$DROPINS" "$W/dropins"; else mkdir "$W/dropins"; fi
cp /bin/sleep /tmp/sa71-fixed
cp /bin/sleep /tmp/sa71-strict
cp /bin/sleep /tmp/sa71-adapt
cp /bin/sleep /tmp/sa71-drop
cp /usr/bin/yes /tmp/sa71-hog
echo "# node0=$N0 node1=$N1 softaffd $(softaffd --version)"

pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null
	systemctl stop sa71-svc.service sa71-plain.service sa71-hogs.service sa71-rs.service 2>/dev/null
	if [[ -e /run/systemd/system/sa71-rs.service ]]; then
		rm -f /run/systemd/system/sa71-rs.service
		systemctl daemon-reload
	fi
	cp "$W/installed.conf" "$CONF"
	rm -rf "$DROPINS"
	mv "$W/dropins" "$DROPINS"
	# softaffd-generator: the unit's privileges for the installed rules
	systemctl daemon-reload
	systemctl restart softaffd
	rm -rf "$W" /tmp/sa71-fixed /tmp/sa71-strict /tmp/sa71-adapt /tmp/sa71-drop /tmp/sa71-hog
}
trap cleanup EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
wait_until() { # SECONDS CMD...
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		(($(now_ms) > end)) && return 1
		sleep 0.2
	done
}
spawn() { "$@" >/dev/null 2>&1 & last=$!; pids+=("$last"); }
mainpid() { systemctl show -p MainPID --value softaffd; }
active() { [[ $(systemctl is-active softaffd) == active ]]; }
# ABI v4: the soft_affinity* files read the request at their level,
# exactly as written ("" inherit, "none", or the value); what applies is in
# status.  softaffd writes a rule's ratio and its CPUs at the process
# level (/proc/PID/soft_affinity_ratio and soft_affinity_list, which all
# threads share), see softaffd/manager-apply.c and affinity.c.
# status_of PID[/task/TID] FIELD
status_of() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null; }
# ratio_of PID: "[PROCESS REQUEST] RATIO SOURCE", the process's own ratio
# request and the ratio in force for its first thread, e.g. "[20:1] 20:1
# process", "[] 100:1 default"
ratio_of() {
	echo "[$(cat "/proc/$1/soft_affinity_ratio" 2>/dev/null || echo "?")] $(status_of "$1" Cpus_preferred_ratio) $(status_of "$1" Cpus_preferred_ratio_source)"
}
has_ratio() { [[ $(ratio_of "$1") == "$2" ]]; }
# soft PID: the process's own request, where softaffd writes CPUs
soft() { cat "/proc/$1/soft_affinity_list" 2>/dev/null || echo "?"; }
# eff PID: the CPUs that apply to its first thread (Cpus_preferred_list)
eff() { status_of "$1" Cpus_preferred_list; }
sysratio() { echo "$(cat /proc/sys/kernel/sched_allowed):$(cat /proc/sys/kernel/sched_preferred)"; }
jmark() { jstart=$(journalctl -u softaffd -o cat --no-pager -q | wc -l); }
jnew() { journalctl -u softaffd -o cat --no-pager -q | tail -n +$((jstart + 1)); }
jhas() { jnew | grep -qE -- "$1"; }
# softness NAME: the rule's "softness ..." line of softaffd --status
softness() { softaffd --status 2>/dev/null | grep -E "^softness $1 "; }
# the rule's ratio in force, from --status
rule_ratio() { softness "$1" | awk '{ print $3 }'; }

# ---- 1. softness through the process's own ratio --------------------------
echo "# [$SECONDS s] 1. procfs"
cat >"$CONF" <<EOF
rules = (
	{ name = "fixed"; comm = "sa71-fixed"; nodes = [ 0 ]; softness = "20:1"; },
	{ name = "strict"; comm = "sa71-strict"; nodes = [ 0 ]; softness = "strict"; },
	{ name = "adapt"; comm = "sa71-adapt"; nodes = [ 0 ]; }
);
EOF
sys0=$(sysratio)
systemctl restart softaffd
spawn /tmp/sa71-fixed 600
pf=$last
spawn /tmp/sa71-strict 600
ps_=$last
spawn /tmp/sa71-adapt 600
pa=$last
check "softness = \"20:1\": the process's own ratio 20:1, in force" wait_until 5 has_ratio "$pf" "[20:1] 20:1 process"
check "softness = \"strict\": 10000:1" wait_until 5 has_ratio "$ps_" "[10000:1] 10000:1 process"
check "softness adaptive (the default): starts hard, 100:1, as the process's own" wait_until 5 has_ratio "$pa" "[100:1] 100:1 process"
is "$(soft "$pf") $(eff "$pf")" "$N0 $N0" "the preferred CPUs are set as before (its process's request, in effect)"
tid=$(ls "/proc/$pf/task" | head -1)
is "[$(cat "/proc/$pf/task/$tid/soft_affinity_ratio" 2>/dev/null || echo "?")] $(status_of "$pf/task/$tid" Cpus_preferred_ratio) $(status_of "$pf/task/$tid" Cpus_preferred_ratio_source)" \
	"[] 20:1 process" "its thread, with no ratio of its own (inherit), follows the process's ratio"
is "$(sysratio)" "$sys0" "the global sysctls are left alone"
listed() { softaffd --status 2>/dev/null | grep -q "^rule $1 .* pids.* $2\b"; }
wait_until 5 eval 'listed fixed $pf && listed strict $ps_ && listed adapt $pa'
st=$(softaffd --status 2>&1)
grep -E '^softness' <<<"$st" | diag
check "--status: a softness line per rule, with the ratio, kind and why" \
	eval 'grep -q "^softness fixed 20:1 fixed via process .*: fixed in the rule" <<<"$st" &&
	      grep -q "^softness strict 10000:1 strict via process" <<<"$st" &&
	      grep -q "^softness adapt 100:1 adaptive via process" <<<"$st"'
# --status --json: the same figures, as JSON
js=$(softaffd --status --json 2>&1)
echo "$js" | cut -c1-400 | diag
if command -v python3 >/dev/null; then
	check "--status --json parses as JSON, with the rules' softness" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = {x["name"]: x for x in d["rules"]}
assert r["fixed"]["ratio"] == "20:1" and r["fixed"]["softness"] == "fixed"
assert r["strict"]["ratio"] == "10000:1" and r["adapt"]["softness"] == "adaptive"
assert int(sys.argv[2]) in r["fixed"]["pids"]
' "$js" "$pf"
else
	check "--status --json: one object with the rules' softness and pids" \
		eval 'grep -q "^{\"pid\":$(mainpid)," <<<"$js" &&
		      grep -qE "\{\"name\":\"fixed\",\"cpus\":\"$N0\",\"processes\":1,\"pids\":\[$pf\],\"softness\":\"fixed\",\"ratio\":\"20:1\"" <<<"$js" &&
		      grep -q "\"name\":\"adapt\".*\"softness\":\"adaptive\",\"ratio\":\"100:1\"" <<<"$js"'
fi
# --explain PID
ex=$(softaffd --explain "$ps_" 2>&1)
echo "$ex" | diag
check "--explain: the rule before says why not, the matching one says so" \
	eval 'grep -q "^rule .fixed. (/etc/softaffd.conf:2): no: comm \"sa71-strict\" does not match \"sa71-fixed\"" <<<"$ex" &&
	      grep -q "^rule .strict. (/etc/softaffd.conf:3): MATCHES" <<<"$ex"'
check "--explain: what is applied, and that the daemon manages it" \
	eval 'grep -q "^applied now: preferred CPUs $N0 (source process), ratio 10000:1 (source process)" <<<"$ex" &&
	      grep -q "manages it under rule .strict." <<<"$ex"'
ex=$(softaffd --explain $$ 2>&1)
check "--explain of a process no rule matches: 'no rule matches', a reason per rule" \
	eval 'grep -qx "no rule matches" <<<"$ex" && [[ $(grep -c "^rule .*: no: comm" <<<"$ex") == 3 ]]'
echo 7:1 >"/proc/$pa/soft_affinity_ratio"
systemctl stop softaffd
is "$(ratio_of "$pf")" "[] $sys0 default" "stop: the fixed rule's process is back to inherit, the default ratio in force"
is "$(ratio_of "$ps_")" "[] $sys0 default" "stop: the strict one too"
is "$(ratio_of "$pa")" "[7:1] 7:1 process" "stop: a ratio set by hand after softaffd is left alone"
kill "$pf" "$ps_" "$pa"

# ---- 2. drop-ins ------------------------------------------------------------
echo "# [$SECONDS s] 2. drop-ins"
mkdir -p "$DROPINS"
cat >"$DROPINS/10-drop.conf" <<EOF
rules = ( { name = "drop"; comm = "sa71-drop"; cpus = "$N1"; softness = "5:4"; } );
EOF
out=$(softaffd -t 2>&1)
rc=$?
check "softaffd -t reads the drop-in (rc $rc)" eval '((rc == 0)) && grep -q "configuration OK, with $DROPINS/10-drop.conf" <<<"$out"'
systemctl start softaffd
spawn /tmp/sa71-drop 600
pd=$last
check "the drop-in's rule applies: CPUs $N1, ratio 5:4" wait_until 5 eval 'has_ratio $pd "[5:4] 5:4 process" && [[ $(soft $pd) == $N1 ]]'
cat >"$DROPINS/20-dup.conf" <<EOF
# the same name as in 10-drop.conf
rules = (
	{ name = "drop"; comm = "other"; cpus = "$N0"; }
);
EOF
out=$(softaffd -t 2>&1)
rc=$?
echo "$out" | diag
check "a duplicate name in another drop-in: -t fails naming both places" \
	eval '((rc != 0)) && grep -q "^$DROPINS/20-dup.conf:3: duplicate rule name .drop. (first at $DROPINS/10-drop.conf:1)" <<<"$out"'
jmark
mp=$(mainpid)
systemctl reload softaffd
check "reload with the duplicate: refused in the journal, old rules kept" \
	wait_until 5 eval 'jhas "20-dup.conf:3: duplicate rule name" && [[ $(mainpid) == $mp ]] && active'
rm -f "$DROPINS/20-dup.conf"
kill "$pd"
systemctl stop softaffd
rm -rf "$DROPINS"

# ---- 3. the unit key, through the cgroup ------------------------------------
echo "# [$SECONDS s] 3. unit key and cgroups"
cat >"$CONF" <<EOF
rules = (
	{ name = "svc"; unit = "sa71-*.service"; nodes = [ 1 ]; softness = "5:4"; }
);
EOF
# The unit grants write access to the cgroup tree only where a rule needs
# it: softaffd-generator's drop-in, written on daemon-reload.
systemctl daemon-reload
check "daemon-reload: softaffd-generator's drop-in makes the cgroup tree writable for the unit rule" \
	grep -qx 'ReadWritePaths=-/sys/fs/cgroup' /run/systemd/generator/softaffd.service.d/50-privileges.conf
# Without the cpuset controller first: a slice of its own, which no unit
# with AllowedCPUs= shares.
systemd-run -q --unit=sa71-plain --slice=sa71nocpuset.slice /bin/sleep 600
pp=$(systemctl show -p MainPID --value sa71-plain)
cgp=/sys/fs/cgroup/sa71nocpuset.slice/sa71-plain.service
echo "# sa71-plain: pid $pp, cgroup files: $(ls $cgp | grep -c cpuset) cpuset files"
jmark
systemctl start softaffd
if [[ ! -e $cgp/cpuset.cpus.preferred ]]; then
	check "no cpuset controller for the unit: falls back to the process level ($N1)" wait_until 5 eval '[[ $(soft $pp) == $N1 ]]'
	check "... and says so once in the journal" wait_until 5 jhas "rule 'svc': cannot set the preference of cgroup .*sa71-plain.service .*setting each process's own preference instead"
	is "$(status_of "$pp" Cpus_preferred_source)" "process" "... so the source is the process"
else
	nok "sa71nocpuset.slice has the cpuset controller: cannot test the fallback"
fi
systemctl stop softaffd
systemctl stop sa71-plain
# AllowedCPUs= enables the cpuset controller down to the unit.
systemd-run -q --unit=sa71-svc -p AllowedCPUs=0-$(($(nproc --all) - 1)) /bin/sleep 600
svc=$(systemctl show -p MainPID --value sa71-svc)
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/$svc/cgroup)
echo "# sa71-svc: pid $svc in $cg"
before_mask=$(cat "$cg/cpuset.cpus.preferred" 2>&1)
before_ratio=$(cat "$cg/cpuset.cpus.preferred.ratio" 2>&1)
echo "# $cg before softaffd: cpuset.cpus.preferred [$before_mask], .ratio [$before_ratio]"
systemctl start softaffd
check "unit rule: the unit's cgroup prefers $N1" wait_until 5 eval '[[ $(cat $cg/cpuset.cpus.preferred) == $N1 ]]'
is "$(cat "$cg/cpuset.cpus.preferred.ratio")" "5:4" "unit rule: the cgroup's ratio is the rule's softness"
is "$(status_of "$svc" Cpus_preferred_source)" "cgroup" "the service's task follows its cgroup, not a write of its own"
is "[$(soft "$svc")] $(eff "$svc")" "[] $N1" "... and prefers $N1 (no request of its own)"
is "$(ratio_of "$svc")" "[] 5:4 cgroup" "... at 5:4 from the cgroup (no ratio of its process's own)"
st=$(softaffd --status 2>&1)
check "--status: the unit rule acts via its cgroup" grep -q "^softness svc 5:4 fixed via cgroup" <<<"$st"
# a process of the unit that renames itself still matches (unit, not comm)
systemd-run -q --unit=sa71-svc2 -p AllowedCPUs=0-$(($(nproc --all) - 1)) /bin/bash -c 'exec -a renamed /bin/sleep 600'
svc2=$(systemctl show -p MainPID --value sa71-svc2)
check "a second instance of the unit glob: its cgroup too" wait_until 5 eval '[[ $(eff $svc2) == $N1 && $(status_of $svc2 Cpus_preferred_source) == cgroup ]]'
systemctl stop softaffd
is "[$(cat "$cg/cpuset.cpus.preferred")] [$(cat "$cg/cpuset.cpus.preferred.ratio")]" "[$before_mask] [$before_ratio]" \
	"stop: the cgroup gets back what it had"
systemctl stop sa71-svc sa71-svc2

# ---- 4. the control law ------------------------------------------------------
echo "# [$SECONDS s] 4. control law"
cat >"$CONF" <<EOF
interval_ms = 1000;
rules = (
	{ name = "pair"; comm = "sched-pipe"; nodes = [ 0 ]; },
	{ name = "hog"; comm = "sa71-hog"; nodes = [ 0 ]; }
);
EOF
jmark
systemctl start softaffd
if command -v perf >/dev/null; then
	# perf bench sched pipe names both its processes "sched-pipe" (prctl),
	# whatever the name it was started under; setsid: a process group of
	# its own, killed as one.
	spawn setsid perf bench sched pipe -l 100000000
	pair=$last
	listed() { softaffd --status 2>/dev/null | grep -qE "^rule $1 .* pids( [0-9]+){$2}"; }
	if wait_until 10 listed pair 2; then
		ok "the pair's two processes are managed by rule 'pair'"
	else
		nok "the pair's two processes are not both managed by rule 'pair'"
		ps -eo pid,pgid,comm,args | grep -E "sa71-pair|perf" | grep -v grep | diag
		softaffd --status 2>&1 | grep -E "^rule pair" | diag
	fi
	hard=0 samples=0 seq=""
	for i in $(seq 20); do
		sleep 1
		r=$(rule_ratio pair)
		samples=$((samples + 1))
		[[ $r == 100:1 ]] && hard=$((hard + 1))
		[[ $r != "${seq##* }" ]] && seq+=" $r"
	done
	softness pair | diag
	echo "# pair: ratio sequence:$seq; at 100:1 in $hard of $samples samples"
	check "a ping-ponging pair on its node stays hard: 100:1 in >= 80% of samples ($hard/$samples)" eval '((hard * 5 >= samples * 4))'
	if jhas "rule .pair.: softness 100:1 -> "; then
		nok "... and the journal has no softening of it"
		jnew | grep -E "rule .pair." | diag
	else
		ok "... and the journal has no softening of it"
	fi
	kill -- -"$pair"
	wait "$pair" 2>/dev/null
else
	nok "perf is not installed in the guest"
fi
# Hard-pinned to node 0: with node 1 wholly idle the scheduler spreads
# CPU-bound tasks even at 100:1, and this part is about the controller's
# decision, which must not depend on that.
# Node 1's first CPU runs 3 busy loops pinned to it, which queue there;
# its other CPUs idle.  Spare room is counted per CPU, so the queue on one
# CPU must not hide the idle one beside it.  This script's own polling
# (softaffd --status several times a second, 0.6 of a CPU under TCG) runs
# on the queued CPU too, or it would be what keeps the idle one busy.
q1=${N1%%[-,]*}
taskset -p -c "$q1" $$ >/dev/null
for i in 1 2 3; do spawn taskset -c "$q1" /usr/bin/yes; done
queued=("${pids[@]: -3}")
for i in 1 2 3 4; do spawn taskset -c "$N0" /tmp/sa71-hog; done
hogs=("${pids[@]: -4}")
t0=$(now_ms)
softer() { local r; r=$(rule_ratio hog); [[ -n $r && $r != 100:1 ]]; }
if wait_until 20 softer; then
	ok "4 CPU-bound processes on node 0's $N0, 3 queued on CPU $q1, node 1's other CPUs idle: softened to $(rule_ratio hog) after $((($(now_ms) - t0) / 1000)) s"
else
	nok "4 CPU-bound processes on node 0, 3 queued on CPU $q1, node 1's other CPUs idle: still $(rule_ratio hog) after 20 s"
fi
softness hog | diag
check "journal: the softening says why (the tasks wait, CPUs idle outside)" wait_until 3 jhas "rule 'hog': softness 100:1 -> [0-9]+:[0-9]+ \(soften: tasks wait"
check "softening is quick: the softest, 5:4, within 10 s more" wait_until 10 eval '[[ $(rule_ratio hog) == 5:4 ]]'
check "the hogs' processes have the rule's ratio as their own" eval 'has_ratio ${hogs[0]} "[5:4] 5:4 process"'
# Others take the CPUs outside: 2 busy loops pinned to node 1, no rule.
kill "${queued[@]}" 2>/dev/null
taskset -p -c "0-$(($(nproc) - 1))" $$ >/dev/null
for i in 1 2; do spawn taskset -c "$N1" /usr/bin/yes; done
t0=$(now_ms)
harder() { [[ $(rule_ratio hog) != 5:4 ]]; }
if wait_until 30 harder; then
	ok "node 1 taken by others: the hog rule hardens, to $(rule_ratio hog) after $((($(now_ms) - t0) / 1000)) s"
else
	nok "node 1 taken by others: still $(rule_ratio hog) after 30 s"
fi
softness hog | diag
check "journal: hardening says why (no room outside)" wait_until 3 jhas "rule 'hog': softness 5:4 -> [0-9]+:[0-9]+ \(no room outside"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
pids=()
systemctl stop softaffd

# ---- 5. a unit rule's wait from its cgroup ---------------------------------
echo "# [$SECONDS s] 5. unit rule: the wait from the cgroup's cpu.pressure"
cat >"$CONF" <<EOF
interval_ms = 1000;
rules = (
	{ name = "cghog"; unit = "sa71-hogs.service"; nodes = [ 0 ]; }
);
EOF
systemctl daemon-reload # the cgroup tree writable (softaffd-generator)
# As in part 4, hard-pinned to node 0, in a unit whose AllowedCPUs= (all
# CPUs) enables the cpuset controller, so the rule acts on its cgroup.
systemd-run -q --unit=sa71-hogs -p AllowedCPUs=0-$(($(nproc --all) - 1)) \
	/bin/bash -c "for i in 1 2 3 4; do taskset -c $N0 /tmp/sa71-hog >/dev/null & done; wait"
hpid=$(systemctl show -p MainPID --value sa71-hogs)
hcg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$hpid/cgroup")
echo "# sa71-hogs: pid $hpid in $hcg; cpu.pressure: $(cat "$hcg/cpu.pressure" 2>&1 | head -1)"
jmark
systemctl start softaffd
check "unit rule: the hogs' cgroup prefers $N0" wait_until 10 eval '[[ $(cat $hcg/cpuset.cpus.preferred 2>/dev/null) == $N0 ]]'
cgratio() { cat "$hcg/cpuset.cpus.preferred.ratio" 2>/dev/null; }
# An A:P other than 100:1 ("" is inherit, not a ratio of its own).
cgsofter() { local r; r=$(cgratio); [[ $r =~ ^[0-9]+:[0-9]+$ && $r != 100:1 ]]; }
if [[ -e $hcg/cpu.pressure ]]; then src=cpu.pressure; else src=schedstat; fi
t0=$(now_ms)
if wait_until 20 cgsofter; then
	ok "4 CPU-bound processes of the unit on $N0: the cgroup's ratio softened to $(cgratio) after $((($(now_ms) - t0) / 1000)) s (wait from $src)"
else
	nok "4 CPU-bound processes of the unit on $N0: the cgroup's ratio is still $(cgratio) after 20 s"
fi
softness cghog | diag
check "--status: the rule acts via its cgroup and its wait comes from $src" \
	eval 'softness cghog | grep -qE "via cgroup threads [0-9]+ wait [0-9.]+% \($src\)"'
if [[ $src == schedstat ]]; then
	check "no cpu.pressure (kernel without PSI): the journal says the wait comes from the threads, once" \
		eval '[[ $(jnew | grep -c "rule .cghog.: cannot read .*cpu.pressure .*comes from its threads. schedstat") == 1 ]]'
else
	check "the journal does not fall back to the threads' schedstat" eval '! jhas "rule .cghog.: cannot read .*cpu.pressure"'
fi
if [[ $(cat /proc/sys/kernel/sched_schedstats) == 0 ]]; then
	check "schedstats off: spills and returns are n/a (needs kernel.sched_schedstats=1), not 0" \
		eval 'softness cghog | grep -qF "spills/min n/a returns/min n/a (needs kernel.sched_schedstats=1)"'
	check "... and the share outside is marked as an estimate" eval 'softness cghog | grep -qE "outside ~[0-9.]+%"'
fi
systemctl stop softaffd
systemctl stop sa71-hogs

# ---- 6. a restarted unit: a new cgroup at the same path ------------------
echo "# [$SECONDS s] 6. unit restarted: a new cgroup, a new trigger"
cat >"$CONF" <<EOF
rules = (
	{ name = "rs"; unit = "sa71-rs.service"; nodes = [ 0 ]; }
);
EOF
# A unit file rather than systemd-run: a transient unit may be gone
# between the stop and the start of a restart.
cat >/run/systemd/system/sa71-rs.service <<EOF
[Service]
ExecStart=/bin/sleep 600
AllowedCPUs=0-$(($(nproc --all) - 1))
EOF
systemctl daemon-reload
systemctl start sa71-rs
rpid=$(systemctl show -p MainPID --value sa71-rs)
rcg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$rpid/cgroup")
systemctl start softaffd
sd=$(mainpid)
# trigs: how many of softaffd's fds are open on the unit's cpu.pressure
trigs() {
	local f n=0
	for f in /proc/$sd/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) == "$rcg/cpu.pressure" ]] && n=$((n + 1))
	done
	echo "$n"
}
rprefers() { [[ $(cat "$rcg/cpuset.cpus.preferred" 2>/dev/null) == "$N0" ]]; }
check "unit rule: $rcg prefers $N0" wait_until 10 rprefers
psi=0
[[ -e $rcg/cpu.pressure ]] && psi=1
if ((psi)); then
	check "softaffd holds a cpu.pressure trigger on it" wait_until 5 eval '[[ $(trigs) == 1 ]]'
fi
id0=$(stat -c %i "$rcg")
jmark
systemctl restart sa71-rs
id1=$(stat -c %i "$rcg" 2>/dev/null)
echo "# sa71-rs restarted: cgroup $rcg id $id0 -> $id1"
if wait_until 10 rprefers; then
	ok "restart: the new cgroup at the same path prefers $N0 again"
else
	nok "restart: the new cgroup at the same path prefers '$(cat "$rcg/cpuset.cpus.preferred" 2>&1)', not $N0"
	jnew | diag
fi
check "... and the journal does not take its own value for someone else's" \
	eval '! jhas "cgroup .*sa71-rs.service: cpuset.cpus.preferred or its ratio was changed by someone else"'
if ((psi)); then
	if wait_until 10 eval '[[ $(trigs) == 1 ]]'; then
		ok "... and softaffd holds a new cpu.pressure trigger on it ($(trigs) fd)"
	else
		nok "... softaffd holds $(trigs) fds on $rcg/cpu.pressure, want 1"
		ls -l "/proc/$sd/fd" | diag
		jnew | diag
	fi
	check "... the old one closed: no fd on a deleted cpu.pressure" \
		eval '! ls -l /proc/$sd/fd | grep -q "cpu.pressure (deleted)"'
fi
systemctl stop softaffd
systemctl stop sa71-rs

echo "# [$SECONDS s] done"
echo "1..$n"
((fails == 0))
