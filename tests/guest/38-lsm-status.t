#!/bin/bash
# 38-lsm-status.t: an LSM that denies a user the task_getscheduler hook, as
# SELinux or Smack deny an unprivileged domain, hides nothing of
# /proc/PID/status from that user (issue #24). status shows what applies
# (Cpus_preferred*) through an internal helper with no LSM hook, as
# Cpus_allowed has none; the soft_affinity* files read a level's request
# through the same check as sched_getaffinity(2), so the LSM denies those.
# The denying LSM is a BPF program (src/lsm_deny.c, the guest kernel's
# kernel/config/bpf-lsm.config) that denies uid 65534 (nobody) only.
source "${0%/*}/lib.sh"
cpus=$(nproc --all)
((cpus >= 2)) || skip_all "needs 2 CPUs, have $cpus"
deny=/opt/softaff/bin/lsm_deny

sleep 1000 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; }
trap cleanup EXIT
echo 1 >/proc/$pid/soft_affinity_list
echo 3:1 >/proc/$pid/soft_affinity_ratio

# as_nobody COMMAND: COMMAND's output as nobody, errors reduced to their text
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "$1" 2>&1 | sed -E 's/.*: //'; }
export -f as_nobody
# is GOT WANT DESCRIPTION
is() { [[ $1 == "$2" ]]; check $? "$3 (got '$1', want '$2')"; }

want_status=$(grep '^Cpus_' /proc/$pid/status)
is "$(grep -c '^Cpus_preferred' <<<"$want_status")" "5" "root sees the 5 Cpus_preferred* lines"
is "$(as_nobody "grep '^Cpus_' /proc/$pid/status")" "$want_status" \
	"without the LSM program nobody sees the same Cpus_* lines"

# Under the program: first that it denies (else the rest proves nothing),
# then what status shows.
# shellcheck disable=SC2016
out=$("$deny" 65534 bash -c '
	echo "chrt=$(as_nobody "chrt -p '"$pid"'" | head -1)"
	echo "getaffinity=$(as_nobody "python3 -c \"import os; print(os.sched_getaffinity('"$pid"'))\"" | tail -1)"
	echo "root_chrt=$(chrt -p '"$pid"' >/dev/null 2>&1 && echo ok)"
	echo "soft=$(as_nobody "cat /proc/'"$pid"'/soft_affinity_list")"
	echo "ratio=$(as_nobody "cat /proc/'"$pid"'/soft_affinity_ratio")"
	echo "root_soft=$(cat /proc/'"$pid"'/soft_affinity_list)"
	as_nobody "grep ^Cpus_ /proc/'"$pid"'/status" | sed "s/^/status:/"
	as_nobody "grep ^Cpus_ /proc/'"$pid"'/task/'"$pid"'/status" | sed "s/^/tstatus:/"
')
rc=$?
# 77: the kernel could not load or attach it (no BPF LSM or BTF)
((rc == 0))
check $? "the BPF LSM program is loaded and attached, and the checks under it ran (lsm_deny exit $rc)"
field() { sed -n "s/^$1=//p" <<<"$out"; }
is "$(field chrt)" "Operation not permitted" "the LSM denies nobody sched_getscheduler(2) on the process"
is "$(field getaffinity)" "[Errno 1] Operation not permitted" "... and sched_getaffinity(2), whose check the soft_affinity files share"
is "$(field root_chrt)" "ok" "... and not root"
is "$(field soft)" "Operation not permitted" "nobody reading soft_affinity_list: denied, as sched_getaffinity"
is "$(field ratio)" "Operation not permitted" "nobody reading soft_affinity_ratio: denied"
is "$(field root_soft)" "1" "root reads the request"
is "$(sed -n 's/^status://p' <<<"$out")" "$want_status" \
	"nobody still sees all Cpus_* lines of /proc/PID/status, the same as root's"
is "$(sed -n 's/^tstatus://p' <<<"$out")" "$want_status" "... and of task/TID/status"

is "$(as_nobody "cat /proc/$pid/soft_affinity_list")" "1" "the program gone, nobody reads the request again"

echo "1..$n"
