# shellcheck shell=bash
# Helpers shared by the in-guest tests: source "${0%/*}/lib.sh".
#
#   ok/nok/check  TAP lines, numbered in $n; check STATUS DESCRIPTION
#   skip_all      the whole test does not apply here
#   ge/le A B     numeric comparisons of decimals (awk)
#   kv KEY FILE   the value of the first KEY=value in FILE
#   expand LIST   a CPU list (0-2,5) as one CPU per line
#   pick_preferred  sets P (node 0, or the first half of the CPUs on a
#                 1-node guest), np (its size) and outside (the other CPUs)
#   sched_setup   stops softaffd and saves the soft affinity sysctls and
#                 schedstats; restored, and softaffd restarted, on exit
#                 together with the test's own cleanup function, if any
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { if (($1 == 0)); then ok "$2"; else nok "$2"; fi; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
kv() { grep -o "\b$1=[^ ]*" "$2" | head -1 | cut -d= -f2; }
expand() { tr ',' '\n' <<<"$1" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done; }

pick_preferred() {
	local ncpu nodes
	ncpu=$(nproc)
	nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
	if ((nodes >= 2)); then
		P=$(cat /sys/devices/system/node/node0/cpulist)
	else
		P="0-$((ncpu / 2 - 1))"
	fi
	np=$(expand "$P" | wc -l)
	outside=$(comm -23 <(seq 0 $((ncpu - 1)) | sort) <(expand "$P" | sort) | sort -n | paste -sd,)
}

sysdir=/proc/sys/kernel
sched_setup() {
	daemon_was_active=0
	if systemctl -q is-active softaffd 2>/dev/null; then
		systemctl stop softaffd && daemon_was_active=1
	fi
	saved_allowed=$(cat $sysdir/sched_allowed)
	saved_preferred=$(cat $sysdir/sched_preferred)
	saved_schedstats=$(cat $sysdir/sched_schedstats)
	trap sched_restore EXIT
}
sched_restore() {
	declare -F cleanup >/dev/null && cleanup
	echo "$saved_allowed" >$sysdir/sched_allowed
	echo "$saved_preferred" >$sysdir/sched_preferred
	echo "$saved_schedstats" >$sysdir/sched_schedstats
	((daemon_was_active)) && systemctl start softaffd
	return 0
}
ratio() { echo "$1" >$sysdir/sched_allowed && echo "$2" >$sysdir/sched_preferred; }
