#!/bin/sh
# Least privilege that follows the configuration (issue #26), on the
# host: "softaffd --privileges" and systemd/softaffd-generator against
# configurations that need nothing, the cgroup tree, the ratio sysctls,
# CAP_SYS_PTRACE, all of them, or are broken, with the drop-in checked
# exactly; the shipped unit grants none of it; -t and the start log say
# when an exe rule keeps CAP_SYS_PTRACE; the daemon warns when the unit
# lacks what its rules need.  systemd-analyze, where there is one,
# checks each unit + drop-in and prints their exposure (not a test).
# Prints TAP (run-check.sh's style); exits non-zero if anything failed.
#
# Env: B (build dir).

B=${B:-build}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
TOP=$HERE/..
SAN=$HERE/$B/softaffd-san
SYS=$TOP/tests/conf/sys
. "$HERE/tests/tap.sh"

W=$(mktemp -d "${TMPDIR:-/tmp}/privileges-check-XXXXXX")
trap 'rm -rf "$W"' EXIT
: > "$W/all-err"

# The generator as "make install" makes it, running the sanitizer build
# on a configuration of ours.  gen NAME: writes into $W/gen-NAME.
mkdir -p "$W/sbin"
ln -s "$SAN" "$W/sbin/softaffd"
gen() {
	sed -e "s|@SBINDIR@|$W/sbin|" \
		-e "s|^conf=/etc/softaffd.conf\$|conf=$W/$1.conf|" \
		"$TOP/systemd/softaffd-generator" > "$W/generator"
	rm -rf "$W/gen-$1"
	mkdir -p "$W/gen-$1"
	sh "$W/generator" "$W/gen-$1" "$W/gen-$1.early" "$W/gen-$1.late"
}
DROPIN=softaffd.service.d/50-privileges.conf

# conf NAME TEXT: $W/NAME.conf, which softaffd accepts (not writable by
# group or others).
conf() {
	printf '%s\n' "$2" > "$W/$1.conf"
	chmod 644 "$W/$1.conf"
}
# priv NAME: softaffd --privileges on it: stdout in NAME.out, stderr in
# NAME.err, status in $rc.
priv() {
	"$SAN" --privileges -c "$W/$1.conf" --sys-root "$SYS" \
		> "$W/$1.out" 2> "$W/$1.err"
	rc=$?
	cat "$W/$1.err" >> "$W/all-err"
}
# expect NAME: $W/NAME.want (the drop-in) from stdin, with the header.
expect() {
	{
		printf '# What %s needs beyond softaffd.service, from\n' \
			"$W/$1.conf"
		printf '# "softaffd --privileges" (softaffd(8), PRIVILEGES).\n'
		printf '[Service]\n'
		cat
	} > "$W/$1.want"
}
# same NAME DESC: --privileges and the generator's drop-in are NAME.want.
same() {
	priv "$1"
	if [ $rc = 0 ] && diff -u "$W/$1.want" "$W/$1.out" > "$W/diff"; then
		ok "--privileges: $2"
	else
		sed 's/^/# /' "$W/diff" "$W/$1.err"
		not_ok "--privileges: $2 (rc $rc)"
	fi
	gen "$1"
	check "generator: $2, in $DROPIN and nothing else" sh -c "
		diff -u '$W/$1.want' '$W/gen-$1/$DROPIN' &&
		[ \"\$(cd '$W/gen-$1' && find . | sort | tr '\n' ' ')\" = \
'. ./softaffd.service.d ./$DROPIN ' ] &&
		[ ! -e '$W/gen-$1.early' ] && [ ! -e '$W/gen-$1.late' ]"
}
CG='# cpuset.cpus.preferred{,.ratio} and, for adaptive softness, a PSI trigger in cpu.pressure
ProtectControlGroups=no
ReadWritePaths=-/sys/fs/cgroup'
SYSCTL='ReadWritePaths=-/proc/sys/kernel/sched_soft_affinity_ratio
ReadWritePaths=-/proc/sys/kernel/sched_allowed -/proc/sys/kernel/sched_preferred'
PTRACE='# needs CAP_SYS_PTRACE, root-equivalent for a root process (unit rules need none)
CapabilityBoundingSet=CAP_SYS_PTRACE'

# ---- the shipped unit and configuration ----
U=$TOP/systemd/softaffd.service
check "unit: no write access to the cgroup tree or the sysctls" \
	sh -c "! grep -q '^ReadWritePaths=' '$U' &&
	       grep -qx 'ProtectControlGroups=yes' '$U' &&
	       grep -qx 'ProtectKernelTunables=yes' '$U'"
check "unit: CAP_SYS_PTRACE not in the bounding set" \
	sh -c "grep -q '^CapabilityBoundingSet=' '$U' &&
	       ! grep '^CapabilityBoundingSet=' '$U' | grep -q PTRACE"
cp "$TOP/conf/softaffd.conf" "$W/default.conf"
chmod 644 "$W/default.conf"
priv default
check "--privileges: the shipped configuration needs nothing (rc $rc)" \
	sh -c "[ $rc = 0 ] && [ ! -s '$W/default.out' ] &&
	       grep -qx '$W/default.conf: needs nothing beyond softaffd.service' '$W/default.err'"
gen default
check "generator: no drop-in for the shipped configuration" \
	sh -c "[ -z \"\$(ls -A '$W/gen-default')\" ]"

# ---- what each kind of rule needs ----
conf cg 'rules = (
	{ name = "db-a"; unit = "postgresql@*.service"; cpus = "0"; }
);'
expect cg <<EOF
# rule 'db-a' ($W/cg.conf:2) acts on its cgroups:
$CG
EOF
same cg "a unit rule: the cgroup tree writable"

# Rules that also match on something else, or set the main thread only,
# write threads, not cgroups.
conf threads 'rules = (
	{ name = "t1"; unit = "a.service"; comm = "a"; cpus = "0"; },
	{ name = "t2"; cgroup = "/system.slice"; threads = "main"; cpus = "0"; }
);'
priv threads
check "--privileges: cgroup rules that act on threads need nothing (rc $rc)" \
	sh -c "[ $rc = 0 ] && [ ! -s '$W/threads.out' ]"

conf fixed 'ratio = { mode = "fixed"; allowed = 50; preferred = 1; };'
expect fixed <<EOF
# ratio mode "fixed" writes the machine-wide default ratio
$SYSCTL
EOF
same fixed "ratio mode fixed: the sysctls writable"

conf adaptive 'ratio = { mode = "adaptive"; };
rules = ( { name = "c"; comm = "c"; cpus = "0"; } );'
expect adaptive <<EOF
# ratio mode "adaptive" writes the machine-wide default ratio
$SYSCTL
EOF
same adaptive "ratio mode adaptive: the sysctls writable"

# The user is not resolved: a generator runs before NSS services.
conf exe 'rules = (
	{ name = "j"; exe = "/usr/lib/jvm/*/bin/java"; user = "no-such-user-softaffd"; cpus = "0"; }
);'
expect exe <<EOF
# rule 'j' ($W/exe.conf:2) matches on exe: other users' /proc/PID/exe
$PTRACE
EOF
same exe "an exe rule (of a user NSS does not know yet): CAP_SYS_PTRACE"

# All of it, the rules from a drop-in directory.
conf all 'ratio = { mode = "adaptive"; };'
mkdir -p "$W/all.d"
printf '%s\n' 'rules = (' \
	'	{ name = "x"; exe = "/usr/bin/x"; cpus = "0"; },' \
	'	{ name = "u"; unit = "u.service"; cpus = "0"; },' \
	'	{ name = "y"; exe = "/usr/bin/y"; cpus = "0"; }' \
	');' > "$W/all.d/10-r.conf"
chmod 755 "$W/all.d"
chmod 644 "$W/all.d/10-r.conf"
expect all <<EOF
# rule 'u' ($W/all.d/10-r.conf:3) acts on its cgroups:
$CG
# ratio mode "adaptive" writes the machine-wide default ratio
$SYSCTL
# rule 'x' ($W/all.d/10-r.conf:2) matches on exe: other users' /proc/PID/exe
$PTRACE
EOF
same all "all three, from a drop-in file"

# ---- a broken configuration, no binary, no arguments ----
conf broken 'rules = ( { name = "x"; unit = "x.service"; cpus = "0" );'
priv broken
check "--privileges: a broken configuration prints nothing, exit 1 (rc $rc)" \
	sh -c "[ $rc = 1 ] && [ ! -s '$W/broken.out' ] &&
	       grep -q '^$W/broken.conf:1: syntax error' '$W/broken.err'"
gen broken
result $? "generator: a broken configuration, exit 0"
check "generator: ... and no drop-in" \
	sh -c "[ -z \"\$(ls -A '$W/gen-broken')\" ]"
chmod 666 "$W/cg.conf"
gen cg
result $? "generator: a group-writable configuration, exit 0"
check "generator: ... and no drop-in" sh -c "[ -z \"\$(ls -A '$W/gen-cg')\" ]"
chmod 644 "$W/cg.conf"
rm "$W/sbin/softaffd"
gen cg
result $? "generator: no softaffd installed, exit 0"
check "generator: ... and no drop-in" sh -c "[ -z \"\$(ls -A '$W/gen-cg')\" ]"
ln -s "$SAN" "$W/sbin/softaffd"
sh "$W/generator"
result $? "generator: no output directory given, exit 0"

# ---- -t: the exe rule's CAP_SYS_PTRACE, what the unit must grant ----
conf exe 'rules = (
	{ name = "j"; exe = "/usr/lib/jvm/*/bin/java"; cpus = "0"; },
	{ name = "k"; exe = "/usr/bin/k"; cpus = "0"; }
);'
"$SAN" -t -c "$W/exe.conf" --sys-root "$SYS" > /dev/null 2> "$W/t.err"
rc=$?
cat "$W/t.err" >> "$W/all-err"
check "-t: one line says the exe rule keeps CAP_SYS_PTRACE, root-equivalent, and points to unit rules (rc $rc)" \
	grep -qx "$W/exe.conf:2: rule 'j' (one of 2) matches on exe, so softaffd keeps CAP_SYS_PTRACE, which makes a root process root-equivalent (it may read and change any process); a unit rule (unit = \"NAME.service\") matches services without it" "$W/t.err"
check "-t: and what that needs of the unit" \
	grep -qx "$W/exe.conf: needs more than softaffd.service grants by default: CAP_SYS_PTRACE; softaffd-generator adds that on \"systemctl daemon-reload\", then restart softaffd (softaffd --privileges prints it)" "$W/t.err"
"$SAN" -t -c "$W/all.conf" --sys-root "$SYS" > /dev/null 2> "$W/t.err"
check "-t: all three needs in one line" \
	grep -q "^$W/all.conf: needs more than softaffd.service grants by default: the cgroup tree writable, the ratio sysctls writable, CAP_SYS_PTRACE; " "$W/t.err"
"$SAN" -t -c "$W/default.conf" --sys-root "$SYS" > /dev/null 2> "$W/t.err"
check "-t: nothing of the kind for the shipped configuration" \
	sh -c "[ \"\$(cat '$W/t.err')\" = '$W/default.conf: configuration OK' ]"

# A comm or cmdline rule alone is steerable by anyone: -t says so.
conf steer 'rules = (
	{ name = "pg"; comm = "postgres"; cpus = "0"; },
	{ name = "u"; comm = "x"; user = "root"; cpus = "0"; },
	{ name = "f"; cmdline = "y"; cpus = "0"; softness = "strict"; }
);'
"$SAN" -t -c "$W/steer.conf" --sys-root "$SYS" > /dev/null 2> "$W/t.err"
check "-t: an adaptive comm rule alone is steerable; with user or fixed, not" \
	sh -c "grep -qx \"$W/steer.conf:2: rule 'pg' matches on comm alone, which any user can give a process: its adaptive softness follows a sample of the processes it matches, so many such processes of one user can steer it; add user, exe, cgroup or unit, or a fixed softness\" '$W/t.err' &&
		[ \$(grep -c 'can steer it' '$W/t.err') = 1 ]"

# ---- the daemon: the start log, and what the unit withholds ----
# --once on a minimal fixture (ratio fixed, a unit rule, an exe rule).
F=$W/fx
mkdir -p "$F/proc/self" "$F/proc/sys/kernel" "$F/sys/fs/cgroup" "$F/run"
cp -R "$SYS/devices" "$F/sys/"
: > "$F/proc/self/soft_affinity"
# once LOG [WRAPPER...]: the daemon's --once on it, its log in LOG.
once() {
	log=$1
	shift
	echo 100 > "$F/proc/sys/kernel/sched_allowed"
	echo 1 > "$F/proc/sys/kernel/sched_preferred"
	timeout 30 "$@" "$SAN" --once -c "$W/all2.conf" --proc-root "$F/proc" \
		--sys-root "$F/sys" --run-dir "$F/run" > /dev/null 2> "$log"
	cat "$log" >> "$W/all-err"
}
conf all2 'ratio = { mode = "fixed"; allowed = 50; preferred = 1; };
rules = (
	{ name = "db"; unit = "x.service"; cpus = "0"; },
	{ name = "j"; exe = "/usr/bin/j"; cpus = "0"; }
);'
if [ "$(id -u)" = 0 ]; then
	once "$W/log"
	check "start log: the exe rule keeps CAP_SYS_PTRACE, in one line" \
		grep -q "^softaffd: $W/all2.conf:4: rule 'j' matches on exe, so softaffd keeps CAP_SYS_PTRACE, which makes a root process root-equivalent" "$W/log"
	check "start log: no warning when nothing is withheld" \
		sh -c "! grep -q 'warning' '$W/log'"
	if command -v setpriv > /dev/null &&
		setpriv --bounding-set=-sys_ptrace true 2> /dev/null; then
		once "$W/log" setpriv --bounding-set=-sys_ptrace
		check "start log: as root without CAP_SYS_PTRACE, a warning says how to get it" \
			grep -q "^softaffd: warning: rule 'j' matches on exe, but softaffd has no CAP_SYS_PTRACE to read other users' /proc/PID/exe: run \"systemctl daemon-reload\" (softaffd-generator then grants it, see softaffd --privileges) and restart softaffd" "$W/log"
	else
		ok "start log: without CAP_SYS_PTRACE # SKIP no setpriv"
	fi
	# A read-only cgroup tree and /proc/sys, as ProtectKernelTunables=
	# and ProtectControlGroups= leave them, in a mount namespace.
	ro="for d in '$F/sys/fs/cgroup' '$F/proc/sys'; do
		mount --bind \"\$d\" \"\$d\" &&
		mount -o remount,bind,ro \"\$d\" || exit 9; done; exec \"\$@\""
	if unshare -m sh -c "$ro" sh true 2> /dev/null; then
		once "$W/log" unshare -m sh -c "$ro" sh
		check "start log: a read-only cgroup tree, with the rule and the way out" \
			grep -q "^softaffd: warning: rule 'db' acts on its cgroups, but $F/sys/fs/cgroup is read-only: run \"systemctl daemon-reload\"" "$W/log"
		check "start log: read-only sysctls, with the ratio mode" \
			grep -q "^softaffd: warning: ratio mode \"fixed\" writes kernel.sched_allowed and sched_preferred, but $F/proc/sys/kernel/sched_allowed is read-only: run " "$W/log"
	else
		for t in "a read-only cgroup tree" "read-only sysctls"; do
			ok "start log: $t # SKIP no mount namespace"
		done
	fi
else
	for t in "the exe rule keeps CAP_SYS_PTRACE" "no warning" \
		"without CAP_SYS_PTRACE" "a read-only cgroup tree" \
		"read-only sysctls"; do
		ok "start log: $t # SKIP needs root"
	done
fi

# ---- systemd-analyze: each unit + drop-in loads; their exposure ----
if command -v systemd-analyze > /dev/null &&
	systemd-analyze --help 2> /dev/null | grep -q -- '--offline='; then
	for c in default cg fixed exe all; do
		mkdir -p "$W/unit-$c"
		sed "s|@SBINDIR@|$HERE/$B|" "$U" > "$W/unit-$c/softaffd.service"
		[ -d "$W/gen-$c/softaffd.service.d" ] || gen "$c"
		[ -d "$W/gen-$c/softaffd.service.d" ] &&
			cp -R "$W/gen-$c/softaffd.service.d" "$W/unit-$c/"
		systemd-analyze verify --man=no \
			"$W/unit-$c/softaffd.service" > "$W/verify" 2>&1
		result $? "systemd-analyze verify: the unit with the drop-in for $c"
		sed 's/^/# /' "$W/verify"
		score=$(systemd-analyze security --offline=true --no-pager \
			"$W/unit-$c/softaffd.service" 2> /dev/null |
			sed -n 's/.*Overall exposure level for softaffd.service: *//p')
		echo "# exposure with the drop-in for $c: ${score:-?}"
	done
else
	ok "systemd-analyze verify # SKIP no systemd-analyze --offline"
fi

tap_end "$W/all-err"
