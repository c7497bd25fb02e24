#!/bin/bash
# 76-packages.t: the Debian packages of `make deb` in a fresh guest.
# softaffd_*.deb: dpkg -i; the service runs from the package (enabled
# and started by its maintainer scripts, the binary the package's);
# a rule in /etc/softaffd.conf is applied; it survives systemctl
# restart; softaff(1) from the package reads the result; dpkg --purge
# leaves nothing: every file the package had is gone, the unit is
# unknown to systemd, and the file system outside dpkg's own database
# lists exactly what it listed before the install.
# linux-image-*.deb: dpkg -i and dpkg --purge only (it is not booted).
# The packages come from build/deb via vm/stage-payload (/opt/softaff/deb).
# First the softaffd that vm/stage-payload installed with make install is
# removed, so that the package installs into a guest without softaffd.
set -u
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
is() { # is GOT WANT DESCRIPTION
	if [[ $1 == "$2" ]]; then ok "$3 (got '$1')"; else nok "$3 (got '$1', want '$2')"; fi
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { sed 's/^/# /'; }

D=/opt/softaff/deb
deb=$(ls $D/softaffd_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || skip_all "no softaffd package in $D (make deb)"
[[ -e /proc/self/soft_affinity ]] || skip_all "kernel without soft affinity"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
((nodes >= 2)) || skip_all "needs 2 NUMA nodes, have $nodes"
N1=$(cat /sys/devices/system/node/node1/cpulist)
W=$(mktemp -d /tmp/pkg-t.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$W" /tmp/sa76-demo' EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
wait_until() { # SECONDS CMD...
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		(($(now_ms) > end)) && return 1
		sleep 0.1
	done
}
# The file system as a sorted list of paths (and symlink targets),
# without what changes by itself: kernel file systems, logs, caches,
# temporary files, this harness, and dpkg's own database, whose entries
# for the package are checked on their own.
snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
		-o -path /tmp -o -path /var/tmp -o -path /var/log -o -path /var/cache \
		-o -path /opt/softaff -o -path /var/lib/dpkg -o -path /var/lib/systemd/timers \
		-o -path /var/lib/systemd/random-seed \) -prune -o -printf '%p %l\n' | sort
}
# every path the package lists but directories (/lib is a symlink to one);
# directories it leaves behind show in the snapshot
owned_files() { dpkg -L "$1" | while read -r f; do [[ -d $f ]] || echo "$f"; done; }

# --- a guest without softaffd -------------------------------------------------
# The make-install softaffd is put back at the end, for the tests after this one.
saved=$(mktemp)
tar -cpf "$saved" --ignore-failed-read /usr/sbin/softaffd /usr/bin/softaff \
	/usr/share/man/man8/softaffd.8 /usr/share/man/man5/softaffd.conf.5 \
	/usr/share/man/man1/softaff.1 /usr/lib/systemd/system/softaffd.service \
	/usr/lib/systemd/system-generators/softaffd-generator \
	/etc/softaffd.conf /usr/share/bash-completion/completions/softaff \
	/usr/share/softaffd /etc/softaffd.d /usr/libexec/softaffd \
	/usr/share/man/man8/softaff-oci-hook.8 \
	/usr/share/containers/oci/hooks.d/softaff.json 2>/dev/null
put_back() {
	tar -C / -xpf "$saved" --keep-directory-symlink 2>/dev/null
	rm -f "$saved"
	systemctl daemon-reload
	systemctl enable --now softaffd >/dev/null 2>&1
}
trap 'put_back; kill "${pids[@]}" 2>/dev/null; rm -rf "$W" /tmp/sa76-demo' EXIT
systemctl disable --now softaffd >/dev/null 2>&1
rm -f /usr/sbin/softaffd /usr/bin/softaff /usr/share/man/man8/softaffd.8 \
	/usr/share/man/man5/softaffd.conf.5 /usr/share/man/man1/softaff.1 \
	/usr/lib/systemd/system/softaffd.service /etc/softaffd.conf \
	/usr/lib/systemd/system-generators/softaffd-generator \
	/usr/share/bash-completion/completions/softaff \
	/etc/systemd/system/multi-user.target.wants/softaffd.service
rm -rf /usr/share/softaffd /etc/softaffd.d /usr/libexec/softaffd
rm -f /usr/share/man/man8/softaff-oci-hook.8 /usr/share/containers/oci/hooks.d/softaff.json
# The hooks.d directories are the package's when nothing else made them.
rmdir /usr/share/containers/oci/hooks.d /usr/share/containers/oci 2>/dev/null
systemctl daemon-reload
is "$(command -v softaffd softaff; systemctl list-unit-files --no-legend softaffd.service | wc -l)" 0 \
	"before: no softaffd, no softaff, no unit"
snapshot >"$W/before"
md5sum /etc/passwd /etc/group /etc/shadow >"$W/accounts"

# --- install -----------------------------------------------------------------
dpkg -i "$deb" >"$W/install.log" 2>&1
rc=$?
is "$rc" 0 "dpkg -i $(basename "$deb")"
((rc == 0)) || diag <"$W/install.log"
is "$(dpkg-query -W -f='${db:Status-Abbrev}' softaffd)" "ii " "dpkg says installed"
wait_until 20 test "$(systemctl is-active softaffd)" = active
is "$(systemctl is-active softaffd) $(systemctl is-enabled softaffd)" "active enabled" \
	"the package's maintainer scripts enabled and started the service"
main=$(systemctl show -p MainPID --value softaffd)
is "$(readlink /proc/$main/exe)" /usr/sbin/softaffd "the running daemon is /usr/sbin/softaffd"
is "$(dpkg -S /usr/sbin/softaffd /usr/bin/softaff /etc/softaffd.conf 2>/dev/null | cut -d: -f1 | sort -u)" softaffd \
	"softaffd, softaff and /etc/softaffd.conf belong to the package"
is "$(dpkg -S /usr/libexec/softaffd/softaff-oci-hook /usr/share/containers/oci/hooks.d/softaff.json 2>/dev/null | cut -d: -f1 | sort -u)" softaffd \
	"softaff-oci-hook and its hooks.d file belong to the package"
frag=$(systemctl show -p FragmentPath --value softaffd)
[[ $(realpath "$frag") == "$(realpath /lib/systemd/system/softaffd.service)" ]]
is "$?" 0 "systemd runs the package's unit ($frag)"
# On a kernel without the feature the unit is skipped, not failed, at every
# boot: its condition, which holds here.
is "$(systemctl show -p ConditionResult --value softaffd) $(grep -c '^ConditionPathExists=/proc/self/soft_affinity$' "$frag")" "yes 1" \
	"the unit runs only where /proc/self/soft_affinity exists (ConditionPathExists=), as here"
is "$(dpkg-query -W -f='${Conffiles}' softaffd | awk '{print $1}' | tr '\n' ' ')" "/etc/softaffd.conf " \
	"/etc/softaffd.conf is a conffile"
[[ -n $(man -w softaff 2>/dev/null || ls /usr/share/man/man1/softaff.1.gz 2>/dev/null) ]]
is "$?" 0 "softaff(1) is installed"
owned_files softaffd >"$W/files"

# --- a rule, reload, restart ---------------------------------------------------
cat >/etc/softaffd.conf <<'CONF'
ratio = { mode = "off"; };
rules = ( { name = "pkg"; comm = "sa76-demo"; nodes = [1]; } );
CONF
systemctl reload softaffd
cp /bin/sleep /tmp/sa76-demo
# softaffd writes each process's own request (ABI v4: /proc/PID/
# soft_affinity_list, which all its threads share, reads it back as
# written; task/TID/soft_affinity_list is a thread's, which it leaves
# alone).
req() { cat "/proc/$1/soft_affinity_list" 2>/dev/null || echo "?"; }
/tmp/sa76-demo 1000 &
d1=$!
pids+=("$d1")
wait_until 10 test "$(req $d1)" = "$N1"
is "$(req $d1)" "$N1" "a rule in /etc/softaffd.conf is applied after reload"
is "$(softaff -p -c "$d1" | head -1)" "pid $d1's current preferred list: $N1 (process)" \
	"softaff from the package shows it"
systemctl restart softaffd
wait_until 20 test "$(systemctl is-active softaffd)" = active
main2=$(systemctl show -p MainPID --value softaffd)
[[ $main2 != "$main" && $main2 != 0 ]]
is "$? $(systemctl is-active softaffd)" "0 active" "systemctl restart: a new daemon ($main -> $main2)"
/tmp/sa76-demo 1000 &
d2=$!
pids+=("$d2")
wait_until 10 test "$(req $d2)" = "$N1"
is "$(req $d2) $(req $d1)" "$N1 $N1" \
	"after the restart: a new process gets the rule, the old one keeps it"
kill "$d1" "$d2"

# --- purge ---------------------------------------------------------------------
dpkg --purge softaffd >"$W/purge.log" 2>&1
rc=$?
is "$rc" 0 "dpkg --purge softaffd"
((rc == 0)) || diag <"$W/purge.log"
is "$(systemctl is-active softaffd) $(systemctl list-unit-files --no-legend softaffd.service | wc -l)" "inactive 0" \
	"after purge: the service is stopped and systemd knows no such unit"
left=$(while read -r f; do [[ -e $f || -L $f ]] && echo "$f"; done <"$W/files")
is "$left" "" "after purge: none of the package's $(wc -l <"$W/files") files is left"
is "$(ls /var/lib/dpkg/info/softaffd.* /run/softaffd 2>/dev/null)" "" \
	"after purge: no maintainer scripts, no run directory"
snapshot >"$W/after"
diff "$W/before" "$W/after" >"$W/diff"
is "$(grep -c '^[<>]' "$W/diff")" 0 "after purge: the file system lists what it did before the install"
diag <"$W/diff" | head -20
md5sum -c --quiet "$W/accounts" >/dev/null 2>&1
is "$?" 0 "no user or group was added or left behind"

# --- the kernel package (installed and purged, not booted) -------------------
kdeb=$(ls $D/linux-image-*.deb 2>/dev/null | head -1)
if [[ -n $kdeb ]]; then
	snapshot >"$W/kbefore"
	kpkg=$(dpkg-deb -f "$kdeb" Package)
	dpkg -i "$kdeb" >"$W/kinstall.log" 2>&1
	rc=$?
	is "$rc" 0 "dpkg -i $(basename "$kdeb")"
	((rc == 0)) || diag <"$W/kinstall.log"
	krel=${kpkg#linux-image-}
	is "$(ls /boot/vmlinuz-"$krel" 2>/dev/null)" "/boot/vmlinuz-$krel" "the kernel is installed as /boot/vmlinuz-$krel"
	[[ $krel == *-softaff ]]
	is "$?" 0 "its release ($krel) says softaff"
	owned_files "$kpkg" >"$W/kfiles"
	dpkg --purge "$kpkg" >"$W/kpurge.log" 2>&1
	rc=$?
	is "$rc" 0 "dpkg --purge $kpkg"
	((rc == 0)) || diag <"$W/kpurge.log"
	left=$(while read -r f; do [[ -e $f || -L $f ]] && echo "$f"; done <"$W/kfiles")
	is "$left" "" "after purge: none of the kernel package's $(wc -l <"$W/kfiles") files is left"
	snapshot >"$W/kafter"
	diff "$W/kbefore" "$W/kafter" >"$W/kdiff"
	is "$(grep -c '^[<>]' "$W/kdiff")" 0 "after purge: the file system lists what it did before"
	diag <"$W/kdiff" | head -20
else
	ok "kernel package # SKIP no linux-image package in $D"
fi

echo "1..$n"
((fails == 0))
