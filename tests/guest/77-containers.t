#!/bin/bash
# 77-containers.t: soft affinity from a container's annotations.  podman
# (crun as the runtime) runs containers from a root filesystem made here
# of the guest's own binaries (no registry); the hooks.d file of the
# softaffd package makes crun call softaff-oci-hook at createRuntime for
# containers with an io.softaff.* annotation.  Checks:
#  - io.softaff.nodes=1: every thread of the container prefers node 1's
#    CPUs through its cgroup, runs there while node 1 has room, and
#    softaffd, whose demo rule would put the program on node 0, leaves it
#    alone and says why (--explain, --status);
#  - no annotation: no preference;
#  - a bad value, an unknown key naming a cgroup, a path as a value: the
#    container does not start and podman shows the hook's message;
#  - a kernel without the files (the sysctls hidden in a mount namespace of
#    podman's own): the container runs.
# Needs 2 NUMA nodes.
set -u
source "${0%/*}/lib.sh"
fails=0
# lib.sh's nok, counting failures for the exit status; its check calls this one.
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }

[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
command -v podman >/dev/null || skip_all "podman is not installed"
hook=/usr/libexec/softaffd/softaff-oci-hook
[[ -x $hook ]] || skip_all "$hook is not installed"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
((nodes >= 2)) || skip_all "needs 2 NUMA nodes, have $nodes"
N1=$(cat /sys/devices/system/node/node1/cpulist)
n1=$(expand "$N1" | wc -l)

# A root filesystem of the guest's own binaries and the libraries they
# need.  The spinner is named like softaffd's demo rule for node 0.
rootfs=/tmp/softaff-77-rootfs
work=/tmp/softaff-77
rm -rf "$rootfs" "$work"
mkdir -p "$rootfs"/{bin,proc,sys,dev,tmp,etc} "$work"
for b in /bin/sh /bin/cat /bin/grep /bin/sleep /bin/true; do
	cp -L "$b" "$rootfs/bin/"
done
cp /opt/softaff/bin/bench_spin "$rootfs/bin/softaff-demo0-spin"
for b in "$rootfs"/bin/*; do
	ldd "$b" | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$rootfs${lib%/*}"
		cp -Ln "$lib" "$rootfs$lib"
	done
done

# Storage of the test's own (the guest's ext4 has no overlayfs; vfs is
# enough for --rootfs), gone with it.
pm() { podman --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }
cleanup() {
	pm rm -f -t 0 softaff-77 >/dev/null 2>&1
	rm -rf "$rootfs" "$work"
}
trap cleanup EXIT

# run OPTION... -- COMMAND...: podman run of a container named softaff-77
# from the root filesystem (podman takes no option after --rootfs DIR);
# sets rc, out and err.
run() {
	local opts=()
	while [[ $1 != -- ]]; do opts+=("$1"); shift; done
	shift
	pm run --name softaff-77 --network none "${opts[@]}" --rootfs "$rootfs" "$@" \
		>"$work/out" 2>"$work/err"
	rc=$?
	out=$(cat "$work/out")
	err=$(cat "$work/err")
}
status() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }

# --- io.softaff.nodes=1 -------------------------------------------------
run -d --annotation io.softaff.nodes=1 --annotation io.softaff.softness=100:1 \
	-- /bin/softaff-demo0-spin "$n1" 600
check "$rc" "a container with io.softaff.nodes=1 starts${err:+ (podman: ${err:0:300})}"
pid=$(pm inspect -f '{{.State.Pid}}' softaff-77 2>/dev/null)
id=$(pm inspect -f '{{.Id}}' softaff-77 2>/dev/null)
echo "# container ${id:0:12}, init pid ${pid:-?}, node 1: $N1"
if [[ -n $pid && -d /proc/$pid ]]; then
	for _ in $(seq 50); do
		(($(ls "/proc/$pid/task" | wc -l) > n1)) && break
		sleep 0.1
	done
	cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	echo "# cgroup $cg: cpuset.cpus.preferred=$(cat "/sys/fs/cgroup$cg/cpuset.cpus.preferred" 2>&1)" \
		"ratio=$(cat "/sys/fs/cgroup$cg/cpuset.cpus.preferred.ratio" 2>&1)"
	tids=$(ls "/proc/$pid/task")
	bad=0
	for t in $tids; do
		got="$(status "$pid/task/$t" Cpus_preferred_list) $(status "$pid/task/$t" Cpus_preferred_source)"
		[[ $got == "$N1 cgroup" ]] || { bad=1; echo "# thread $t: $got"; }
	done
	check "$bad" "all $(wc -w <<<"$tids") threads prefer node 1 ($N1) through their cgroup"
	# The ratio in force (status) and its source; the process has no ratio
	# of its own (its soft_affinity_ratio, the process's request, inherits).
	ratio="$(status "$pid" Cpus_preferred_ratio) $(status "$pid" Cpus_preferred_ratio_source) [$(cat "/proc/$pid/soft_affinity_ratio")]"
	check "$([[ $ratio == "100:1 cgroup []" ]]; echo $?)" "the softness comes from the annotation, through the cgroup (got '$ratio')"

	# Where the spinners run: one sample every 100 ms for 4 s.
	in=0 all=0
	for _ in $(seq 40); do
		for t in $tids; do
			[[ $(awk '{ print $3 }' "/proc/$pid/task/$t/stat" 2>/dev/null) == R ]] || continue
			cpu=$(awk '{ print $39 }' "/proc/$pid/task/$t/stat" 2>/dev/null)
			all=$((all + 1))
			expand "$N1" | grep -qx "$cpu" && in=$((in + 1))
		done
		sleep 0.1
	done
	share=$((all ? 100 * in / all : 0))
	# Node 1 has a CPU for each spinner, node 0 is idle: the spill rule
	# keeps them home but for the balancer's rare escape (40-wakeup: >= 90%).
	check "$((share < 90))" "the $n1 spinners run on node 1 while it has room: $share% of $all running samples (want >= 90%)"

	if systemctl -q is-active softaffd; then
		explain=$(softaffd --explain "$pid" 2>&1)
		grep -q "container's annotations" <<<"$explain"
		check $? "softaffd --explain says the container's annotations set it"
		echo "$explain" | sed 's/^/#   /'
		systemctl reload softaffd
		sleep 2
		grep -q "${id:0:12}" <(softaffd --status 2>&1)
		check $? "softaffd --status lists the container"
		src=$(status "$pid" Cpus_preferred_source)
		check "$([[ $src == cgroup ]]; echo $?)" "softaffd wrote no preference of its own over it (source '$src')"
	else
		nok "softaffd is not running"
	fi
else
	nok "the container's init process is there"
fi
pm rm -f -t 0 softaff-77 >/dev/null 2>&1

# --- no annotation ------------------------------------------------------
run --rm -- /bin/grep Cpus_preferred_source /proc/self/status
check "$([[ $rc == 0 && $out == *none ]]; echo $?)" "without the annotation: no preference (rc $rc, '$out')"

# --- refused: the container does not start -----------------------------
# crun drops a hook's stderr unless run.oci.hooks.stderr names a file; the
# hook also logs to the journal, where an admin finds it either way.
refused() { # DESCRIPTION EXPECTED-MESSAGE ANNOTATION...
	local what=$1 msg=$2 args=() since
	shift 2
	for a in "$@"; do args+=(--annotation "$a"); done
	since=$(date '+%Y-%m-%d %H:%M:%S')
	rm -f "$work/hook.err"
	run --rm "${args[@]}" --annotation "run.oci.hooks.stderr=$work/hook.err" -- /bin/true
	local said journal
	said=$(cat "$work/hook.err" 2>/dev/null)
	journal=$(journalctl -q -o cat -t softaff-oci-hook --since "$since" 2>/dev/null)
	if [[ $rc != 0 && $err == *softaff-oci-hook* && $said == *"$msg"* &&
		$journal == *"${msg#softaff-oci-hook: }"* ]]; then
		ok "$what: the container does not start; the hook says '$said', in the journal too"
	else
		nok "$what: rc $rc, podman: ${err:0:300}; hook: '$said'; journal: '$journal'"
	fi
	pm rm -f -t 0 softaff-77 >/dev/null 2>&1
}
refused "a node that does not exist" "softaff-oci-hook: io.softaff.nodes" io.softaff.nodes=7
refused "a bad softness" "softaff-oci-hook: io.softaff.softness" io.softaff.nodes=1 io.softaff.softness=0:1
refused "an annotation naming a cgroup" "softaff-oci-hook: io.softaff.cgroup" io.softaff.cgroup=/system.slice
refused "a path as a value" "softaff-oci-hook: io.softaff.cpus" io.softaff.cpus=../../system.slice/cpuset.cpus.preferred

# --- a kernel without the files -----------------------------------------
# The hook tells a kernel without soft affinity by its sysctls; podman runs
# in a mount namespace where /proc/sys/kernel is a copy without them.
mkdir -p "$work/kernel"
for f in /proc/sys/kernel/*; do
	[[ -f $f && -r $f && ${f##*/} != sched_allowed && ${f##*/} != sched_preferred &&
		${f##*/} != sched_soft_affinity_ratio ]] || continue
	cat "$f" >"$work/kernel/${f##*/}" 2>/dev/null
done
since=$(date '+%Y-%m-%d %H:%M:%S')
unshare -m sh -c "mount --bind '$work/kernel' /proc/sys/kernel && exec podman --root '$work/storage' --runroot '$work/run' --storage-driver vfs run --name softaff-77 --rm --network none --annotation io.softaff.nodes=1 --rootfs '$rootfs' /bin/grep Cpus_preferred_source /proc/self/status" \
	>"$work/out" 2>"$work/err"
rc=$?
out=$(cat "$work/out")
check "$([[ $rc == 0 && $out == *none ]]; echo $?)" "a kernel without soft affinity: the container runs without a preference (rc $rc, '$out')"
warn=$(journalctl -q -o cat -t softaff-oci-hook --since "$since" 2>/dev/null | grep warning)
check "$([[ $warn == *"this kernel has no soft affinity"* ]]; echo $?)" "the hook warned, in the journal: '$warn'"

echo "1..$n"
((fails == 0))
