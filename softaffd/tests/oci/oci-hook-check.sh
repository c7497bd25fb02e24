#!/bin/sh
# softaff-oci-hook(8) on the host: its unit tests, then the hook (ASan +
# UBSan build) fed container states on stdin, against fake /proc and
# /sys trees given with the hidden options --proc-root and --sys-root.
# The fake cgroup files are plain files: these tests check what the hook
# writes where, what it refuses, its messages, exit codes and rollback;
# the kernel's side of the files is tested in the guest.  Then the man
# page, the hooks.d file and a short fuzz run of the state parser.
# Prints TAP (run-check.sh's style); exits non-zero if anything failed.
#
# Env: B (build dir), FUZZ_SECONDS (fuzz_oci_state gets half).

B=${B:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
HOOK=$HERE/$B/softaff-oci-hook-san
. "$HERE/tests/tap.sh"

W=$(mktemp -d "${TMPDIR:-/tmp}/oci-hook-check-XXXXXX")
trap 'rm -rf "$W"' EXIT
P=$W/proc
S=$W/sys
CGROOT=$S/fs/cgroup
CGNAME=/machine.slice/libpod-c1.scope/container
CG=$CGROOT$CGNAME
: > "$W/all-err"

# ---- unit tests (ASan + UBSan) ----
tap_unit "$HERE/$B/oci-unit" "oci unit" "$W/unit.out"

# ---- fixtures ----
# Node 0: CPUs 0-1; node 1: CPU 2 online and CPU 3 present but offline
# (its nodeN/cpuM entry only).  Container c1's init is pid 4242.
fixture() {
	rm -rf "$P" "$S" "$W/outside"
	mkdir -p "$P/4242" "$P/sys/kernel" "$CG" "$W/outside" \
		"$S/devices/system/node/node0" \
		"$S/devices/system/node/node1/cpu2" \
		"$S/devices/system/node/node1/cpu3"
	echo 0-1 > "$S/devices/system/node/node0/cpulist"
	echo 2 > "$S/devices/system/node/node1/cpulist"
	echo 100 > "$P/sys/kernel/sched_preferred"
	printf '1:name=systemd:/x\n0::%s\n' "$CGNAME" > "$P/4242/cgroup"
	echo "cpuset cpu io memory pids" > "$CGROOT/cgroup.controllers"
	echo 0-3 > "$CG/cpuset.cpus"
	echo > "$CG/cpuset.cpus.preferred"
	echo > "$CG/cpuset.cpus.preferred.ratio"
	# A decoy a path-like value or cgroup path must never reach.
	echo keep > "$W/outside/cpuset.cpus.preferred"
	echo keep > "$W/outside/cpuset.cpus.preferred.ratio"
}
fixture

# Can the fixture's file system hold user.* attributes?  (ext4 and
# newer tmpfs can, Debian 12's 6.1 tmpfs cannot: then every run takes
# the "cannot mark" path and its warning.)
if command -v python3 > /dev/null; then
	PY=python3
	xattrs=$(python3 -c 'import os, sys
try:
    os.setxattr(sys.argv[1], "user.softaff.probe", b"1")
    os.removexattr(sys.argv[1], "user.softaff.probe")
    print("yes")
except OSError:
    print("no")' "$CG")
else
	PY=
	xattrs=unknown
fi
echo "# user xattrs on the fixture's file system: $xattrs"

# mark DIR: the user.softaff.oci attribute of DIR, "-" for none.
mark() {
	[ -n "$PY" ] || { echo "?"; return; }
	python3 -c 'import os, sys
try:
    print(os.getxattr(sys.argv[1], "user.softaff.oci").decode())
except OSError:
    print("-")' "$1"
}
set_mark() {
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.softaff.oci", sys.argv[2].encode())' "$1" "$2"
}

# state ID PID ANNOTATIONS: a container state as runc writes it.
state() {
	printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/run/b/%s","annotations":{%s}}\n' \
		"$1" "$2" "$1" "$3"
}
# hook STATE [ARGS...]: the hook on the fixtures; errors in $W/err,
# exit status in $rc.  Sanitizer reports go to all-err.
hook() {
	st=$1
	shift
	printf '%s' "$st" | "$HOOK" --proc-root "$P" --sys-root "$S" "$@" \
		> "$W/out" 2> "$W/err"
	rc=$?
	cat "$W/err" >> "$W/all-err"
}
# has FILE TEXT: FILE holds exactly TEXT and a newline.
has() { printf '%s\n' "$2" | cmp -s - "$1"; }
# errs TEXT: stderr contains TEXT.
errs() { grep -qF -- "$1" "$W/err"; }
# one_line PREFIX: stderr is one line starting with PREFIX.
one_line() {
	[ "$(wc -l < "$W/err")" = 1 ] && [ "$(head -c ${#1} "$W/err")" = "$1" ]
}
# rc_is N: the last exit status; prints stderr when it is not.
rc_is() {
	[ "$rc" = "$1" ] && return 0
	echo "# exit $rc, wanted $1"
	sed 's/^/# err: /' "$W/err"
	return 1
}
# snapshot / unchanged: every fixture file's bytes and the mark, before
# and after: a refused state changes nothing anywhere.
tree_sums() {
	(cd "$W" && find proc sys outside -type f -exec cksum {} + | sort)
	mark "$CG"
}
snapshot() { tree_sums > "$W/before"; }
unchanged() {
	tree_sums > "$W/after"
	cmp -s "$W/before" "$W/after" && return 0
	diff "$W/before" "$W/after" | sed 's/^/# /'
	return 1
}
# marked_by ID: the mark is ID, or the run warned that it cannot be.
marked_by() {
	case $xattrs in
	yes) [ "$(mark "$CG")" = "$1" ] ;;
	no) errs "cannot set the user.softaff.oci attribute" ;;
	*) true ;;
	esac
}
# quiet: nothing on stderr (where xattrs work: no warning either).
quiet() { [ "$xattrs" = no ] || [ ! -s "$W/err" ]; }
# refused DESC STATE MESSAGE: the hook fails with one line holding
# MESSAGE, and changes nothing anywhere.
refused() {
	snapshot
	hook "$2"
	rc_is 1 && one_line "softaff-oci-hook: " && errs "$3" && unchanged
	result $? "$1"
}

# ---- good annotations ----
hook "$(state c1 4242 '"io.softaff.nodes":"1","io.softaff.softness":"20:1","io.container.manager":"libpod"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred" 2-3 &&
	has "$CG/cpuset.cpus.preferred.ratio" 20:1 && marked_by c1 && quiet
result $? "good: nodes 1 -> its present CPUs 2-3 (offline 3 too), softness 20:1, cgroup marked c1"
[ ! -s "$W/out" ]
result $? "good: nothing on standard output"
fixture
echo 5:4 > "$CG/cpuset.cpus.preferred.ratio"
hook "$(state c1 4242 '"io.softaff.cpus":"0,3"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred" 0,3 &&
	has "$CG/cpuset.cpus.preferred.ratio" 5:4 && marked_by c1
result $? "good: cpus 0,3 written, the ratio left alone"
fixture
echo 1 > "$CG/cpuset.cpus.preferred"
hook "$(state c1 4242 '"io.softaff.softness":"strict"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred" 1 &&
	has "$CG/cpuset.cpus.preferred.ratio" 10000:1
result $? "good: softness strict is 10000:1, the CPUs left alone"
echo 5:4 > "$CG/cpuset.cpus.preferred.ratio"
hook "$(state c1 4242 '"io.softaff.softness":"inherit","io.softaff.nodes":"0-1"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred.ratio" inherit &&
	has "$CG/cpuset.cpus.preferred" 0-3
result $? "good: softness inherit, nodes 0-1 (and the same state again: the mark is replaced)"
hook "$(state c1 4242 '"io.softaff.softness":"none"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred.ratio" none
result $? "good: softness none (the cgroup opts out of its ancestors' ratio)"
echo 5:4 > "$CG/cpuset.cpus.preferred.ratio"
hook "$(state c1 4242 '"io.softaff.softness":"default"')"
rc_is 0 && has "$CG/cpuset.cpus.preferred.ratio" inherit
result $? "good: softness default, the older word, writes inherit"

# ---- nothing to do ----
fixture
snapshot
hook "$(state c1 4242 '"io.container.manager":"libpod","io.softaffx":"1"')"
rc_is 0 && unchanged && [ ! -s "$W/err" ]
result $? "none: no io.softaff.* annotation: exit 0, nothing written, nothing said"
hook '{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242}'
rc_is 0 && unchanged
result $? "none: no annotations at all"

# ---- bad annotations: exit 1, one line, nothing changed anywhere ----
# bad DESC ANNOTATIONS MESSAGE
bad() { refused "bad: $1" "$(state c1 4242 "$2")" "$3"; }
bad "unknown node" '"io.softaff.nodes":"7"' \
	'softaff-oci-hook: io.softaff.nodes="7": node 7 does not exist (nodes: 0-1)'
bad "CPU beyond the present ones" '"io.softaff.cpus":"2-4"' \
	'io.softaff.cpus="2-4": CPU 4 is not present (present: 0-3)'
bad "nodes and cpus together" '"io.softaff.nodes":"1","io.softaff.cpus":"2"' \
	'io.softaff.nodes and io.softaff.cpus exclude each other'
bad "ratio 0:1" '"io.softaff.softness":"0:1"' \
	'io.softaff.softness="0:1": want ALLOWED:PREFERRED (each 1..10000, e.g. 20:1), strict, inherit or none'
bad "ratio 10001:1" '"io.softaff.softness":"10001:1"' \
	'io.softaff.softness="10001:1": want ALLOWED:PREFERRED'
bad "ratio 1:" '"io.softaff.softness":"1:"' \
	'io.softaff.softness="1:": want ALLOWED:PREFERRED'
bad "adaptive softness" '"io.softaff.softness":"adaptive"' \
	'io.softaff.softness="adaptive": adaptive softness needs a softaffd rule'
bad "empty value" '"io.softaff.nodes":""' \
	'io.softaff.nodes="": empty value'
bad "unknown key with a path value" \
	'"io.softaff.cgroup":"/sys/fs/cgroup/machine.slice"' \
	'io.softaff.cgroup="/sys/fs/cgroup/machine.slice": unknown annotation (known: io.softaff.nodes, io.softaff.cpus, io.softaff.softness)'
bad "typo io.softaff.node" '"io.softaff.node":"1"' \
	'io.softaff.node="1": unknown annotation'
bad "a '..' path as nodes" '"io.softaff.nodes":"../../../outside"' \
	'io.softaff.nodes="../../../outside": not a NUMA node list'
bad "a path as cpus" '"io.softaff.cpus":"0/../../outside"' \
	'io.softaff.cpus="0/../../outside": not a CPU list'
bad "a good annotation with a bad one" \
	'"io.softaff.softness":"20:1","io.softaff.cpus":"x"' \
	'io.softaff.cpus="x": not a CPU list'
bad "a control character is escaped" '"io.softaff.nodes":"1\n2"' \
	'io.softaff.nodes="1\x0a2": not a NUMA node list'

# ---- bad states ----
# bad_state DESC STATE MESSAGE
bad_state() { refused "bad state: $1" "$2" "$3"; }
bad_state "malformed JSON" '{"id":"c1","pid":4242,' \
	'softaff-oci-hook: container state: not valid JSON'
bad_state "empty input" '' 'container state: not valid JSON'
bad_state "not an object" '["io.softaff.nodes","1"]' \
	'container state: not a JSON object but array'
bad_state "no pid" '{"id":"c1","annotations":{"io.softaff.nodes":"1"}}' \
	'container state: no "pid"'
bad_state "pid as a string" \
	'{"id":"c1","pid":"4242","annotations":{"io.softaff.nodes":"1"}}' \
	'container state: "pid" is not an integer (string)'
bad_state "pid 0" '{"id":"c1","pid":0,"annotations":{"io.softaff.nodes":"1"}}' \
	'"pid" 0 is not a process id'
bad_state "no id" '{"pid":4242,"annotations":{"io.softaff.nodes":"1"}}' \
	'container state: no "id"'
bad_state "an annotation that is not a string" \
	'{"id":"c1","pid":4242,"annotations":{"io.softaff.nodes":1}}' \
	'annotation "io.softaff.nodes" is not a string (int)'
bad_state "a NUL inside a value" \
	'{"id":"c1","pid":4242,"annotations":{"io.softaff.nodes":"1\u0000/x"}}' \
	'holds a NUL character'
# Over 1 MiB: refused as such, not cut and parsed.
big=$(head -c 1048576 /dev/zero | tr '\0' a)
bad_state "a state over 1 MiB" \
	"{\"id\":\"c1\",\"pid\":4242,\"annotations\":{\"x\":\"$big\"}}" \
	'container state: longer than 1048576 bytes'
unset big

# ---- the kernel and the cgroup ----
mv "$P/sys/kernel/sched_preferred" "$W/sched_preferred"
snapshot
hook "$(state c1 4242 '"io.softaff.nodes":"1"')"
rc_is 0 && one_line "softaff-oci-hook: warning: " &&
	errs "softaff-oci-hook: warning: this kernel has no soft affinity; container c1 starts without its preference" &&
	unchanged
result $? "stock kernel (no sched_preferred): a warning, exit 0, nothing written"
refused "stock kernel: a bad annotation still fails (the same everywhere)" \
	"$(state c1 4242 '"io.softaff.nodes":"9"')" 'node 9 does not exist'
mv "$W/sched_preferred" "$P/sys/kernel/sched_preferred"

rm "$CG/cpuset.cpus" "$CG/cpuset.cpus.preferred" "$CG/cpuset.cpus.preferred.ratio"
refused "no cpuset controller on a soft-affinity kernel: exit 1, names the cgroup and the fix" \
	"$(state c1 4242 '"io.softaff.nodes":"1"')" \
	"softaff-oci-hook: container c1: cgroup $CG has no cpuset.cpus.preferred: the cpuset controller is not enabled for it; enable it for the container's cgroup (e.g. podman --cgroup-manager=cgroupfs"
fixture

hook "$(state c1 999 '"io.softaff.nodes":"1"')"
rc_is 1 && errs "container c1: init process 999: $P/999: No such file or directory"
result $? "no such init process: exit 1"
echo "0::/" > "$P/4242/cgroup"
hook "$(state c1 4242 '"io.softaff.nodes":"1"')"
rc_is 1 && errs 'init process 4242 is in cgroup "/", not below the root'
result $? "init in the root cgroup: refused"
# Out of the runtime's cgroup namespace, or a forged path: beneath only.
NODE1=$(state c1 4242 '"io.softaff.nodes":"1"')
printf '0::/../../../outside\n' > "$P/4242/cgroup"
refused "a cgroup path with '..' out of the mount: refused (openat2 RESOLVE_BENEATH)" \
	"$NODE1" "cgroup /../../../outside is outside $CGROOT"
ln -s "$W/outside" "$CGROOT/machine.slice/link"
printf '0::/machine.slice/link\n' > "$P/4242/cgroup"
refused "a symlink in the cgroup path: refused (RESOLVE_NO_SYMLINKS)" \
	"$NODE1" "a symlink on the way; refusing to follow it"
fixture
rm "$CG/cpuset.cpus.preferred"
ln -s "$W/outside/cpuset.cpus.preferred" "$CG/cpuset.cpus.preferred"
refused "a symlink as cpuset.cpus.preferred: refused (O_NOFOLLOW), the target untouched" \
	"$NODE1" "$CG/cpuset.cpus.preferred: Too many levels of symbolic links"
fixture
rm "$CGROOT/cgroup.controllers"
hook "$(state c1 4242 '"io.softaff.nodes":"1"')"
rc_is 1 && errs "$CGROOT is not a cgroup v2 mount"
result $? "no cgroup v2 mount: exit 1"
fixture

# ---- all or nothing ----
# A FIFO where the CPUs file should be: it reads as empty (O_NONBLOCK),
# so the ratio is written first, and opening it for writing fails
# (ENXIO, no reader) instead of hanging: the ratio must be put back
# and the mark removed.  (chmod 0444 would not stop root.)
rm "$CG/cpuset.cpus.preferred"
mkfifo "$CG/cpuset.cpus.preferred"
echo 5:4 > "$CG/cpuset.cpus.preferred.ratio"
snapshot
hook "$(state c1 4242 '"io.softaff.nodes":"1","io.softaff.softness":"20:1"')"
rc_is 1 && one_line 'softaff-oci-hook: io.softaff.nodes="1": writing 2-3 to ' &&
	errs "$CG/cpuset.cpus.preferred: No such device or address" &&
	has "$CG/cpuset.cpus.preferred.ratio" 5:4 && unchanged
result $? "rollback: the CPUs write fails, the ratio written before is restored, the mark removed"
if [ "$xattrs" = yes ]; then
	set_mark "$CG" "older"
	snapshot
	hook "$(state c1 4242 '"io.softaff.nodes":"1","io.softaff.softness":"20:1"')"
	rc_is 1 && [ "$(mark "$CG")" = older ] && unchanged
	result $? "rollback: a mark that was there before is put back"
else
	ok "rollback: a mark that was there before is put back # SKIP no user xattrs here ($xattrs)"
fi
fixture

# The mark on a file system without user xattrs (ramfs; also tmpfs on
# 6.1): a warning, and the preference is still written.
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null &&
	unshare -m true 2> /dev/null; then
	st=$(state c1 4242 '"io.softaff.nodes":"1"')
	# shellcheck disable=SC2016
	printf '%s' "$st" | unshare -m sh -c '
		mount -t ramfs none "$1" || exit 99
		echo 0-3 > "$1/cpuset.cpus"
		echo > "$1/cpuset.cpus.preferred"
		echo > "$1/cpuset.cpus.preferred.ratio"
		"$2" --proc-root "$3" --sys-root "$4"
		echo "rc=$?" > "$5/ramfs-rc"
		cat "$1/cpuset.cpus.preferred" > "$5/ramfs-cpus"' \
		x "$CG" "$HOOK" "$P" "$S" "$W" > /dev/null 2> "$W/err"
	cat "$W/err" >> "$W/all-err"
	if [ -f "$W/ramfs-rc" ]; then
		rc=$(sed 's/rc=//' "$W/ramfs-rc")
		rc_is 0 && one_line "softaff-oci-hook: warning: container c1: $CG: cannot set the user.softaff.oci attribute (Operation not supported)" &&
			has "$W/ramfs-cpus" 2-3
		result $? "no user xattrs (ramfs): a warning, the preference written"
	else
		sed 's/^/# /' "$W/err"
		ok "no user xattrs: warning # SKIP cannot mount ramfs here"
	fi
else
	ok "no user xattrs: warning # SKIP needs root and unshare -m"
fi

# ---- command line ----
hook "$(state c1 4242 '"io.softaff.nodes":"1"')" --bogus
rc_is 2 && errs "unknown option or missing argument: '--bogus'"
result $? "usage: an unknown option: exit 2"
hook "$(state c1 4242 '"io.softaff.nodes":"1"')" extra
rc_is 2 && errs "takes no arguments, got 'extra'"
result $? "usage: an argument: exit 2"
hook "" --help
rc_is 0 && grep -q "^Exit status: 0 done" "$W/out"
result $? "--help: exit 0, says the exit codes"
hook "" --version
rc_is 0 && grep -qx "softaff-oci-hook [0-9.]*" "$W/out"
result $? "--version"

# ---- man page ----
MAN=$HERE/oci-hook/softaff-oci-hook.8
hook "" --help
missing=""
for opt in $(grep -o -- '--[a-z][a-z-]*' "$W/out" | sort -u); do
	grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$MAN" || missing="$missing $opt"
done
for word in createRuntime io.softaff.nodes io.softaff.cpus \
	io.softaff.softness user.softaff.oci allowed_annotations \
	"softaffd (8)" "softaff (1)"; do
	grep -qF -- "$word" "$MAN" || missing="$missing '$word'"
done
[ -z "$missing" ] || echo "# missing:$missing"
check "man: every option, annotation and the mark are in softaff-oci-hook.8" test -z "$missing"
if command -v man > /dev/null && command -v groff > /dev/null; then
	LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$MAN" > /dev/null 2> "$W/man"
	sed 's/^/# /' "$W/man"
	check "man: softaff-oci-hook.8 formats without a warning" test ! -s "$W/man"
else
	ok "man: formats # SKIP no man or groff"
fi

# ---- hooks.d file, as installed ----
I=$W/inst
make -s -C "$HERE" install DESTDIR="$I" PREFIX=/usr > "$W/inst.log" 2>&1
inst_rc=$?
J=$I/usr/share/containers/oci/hooks.d/softaff.json
[ $inst_rc = 0 ] && [ -x "$I/usr/libexec/softaffd/softaff-oci-hook" ] &&
	[ -f "$J" ] && [ -f "$I/usr/share/man/man8/softaff-oci-hook.8" ]
inst_ok=$?
[ $inst_ok = 0 ] || tail -5 "$W/inst.log" | sed 's/^/# /'
result $inst_ok "install: the hook in /usr/libexec/softaffd, its hooks.d file and man page"
if [ -n "$PY" ]; then
	python3 - "$J" > "$W/json" 2>&1 <<'PY'
import json, re, sys
h = json.load(open(sys.argv[1]))
assert h["version"] == "1.0.0", h["version"]
assert h["hook"]["path"] == "/usr/libexec/softaffd/softaff-oci-hook", h["hook"]
assert h["stages"] == ["createRuntime"], h["stages"]
ann = h["when"]["annotations"]
assert list(ann) == [r"^io\.softaff\."] and ann[r"^io\.softaff\."] == ".*", ann
# How podman matches: the key regex against each annotation's key.
k = re.compile(list(ann)[0])
assert k.search("io.softaff.nodes") and k.search("io.softaff.typo")
assert not k.search("io.softaffx") and not k.search("x.io.softaff.nodes")
PY
	py_rc=$?
	sed 's/^/# /' "$W/json"
	result $py_rc "hooks.d: version 1.0.0, createRuntime, the installed path, io.softaff.* only"
else
	ok "hooks.d: file content # SKIP no python3"
fi
make -s -C "$HERE" uninstall DESTDIR="$I" PREFIX=/usr >> "$W/inst.log" 2>&1
[ $inst_ok = 0 ] && [ -d "$I/usr" ] &&
	[ -z "$(cd "$I" && find . -path '*softaff-oci*' -o -name softaff.json)" ] &&
	[ ! -e "$I/usr/libexec/softaffd" ]
result $? "uninstall: the hook's files and its libexec directory are gone"

# ---- fuzz ----
# As long as each of run-check.sh's two targets gets.
per=$((FUZZ_SECONDS / 2))
[ $per -lt 1 ] && per=1
tap_fuzz fuzz_oci_state $per "$W"

tap_end "$W/all-err"
