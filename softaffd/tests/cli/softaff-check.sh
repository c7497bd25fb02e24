#!/bin/sh
# softaff(1) on the host: its unit tests, then the command (ASan + UBSan
# build) against fake /proc and /sys trees given with the hidden options
# --proc-root and --sys-root.  The fake files are plain files: a write
# replaces their text and reads show what the fixture says, so these
# tests check what softaff writes where, what it prints and its exit
# codes; tests/guest/75-softaff.t checks it against the real kernel.
# Prints TAP (run-check.sh's style); exits non-zero if anything failed.
#
# Env: B (build dir).

B=${B:-build}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
SA=$HERE/$B/softaff-san
. "$HERE/tests/tap.sh"

W=$(mktemp -d "${TMPDIR:-/tmp}/softaff-check-XXXXXX")
trap 'rm -rf "$W"' EXIT
P=$W/proc
S=$W/sys

# ---- unit tests (ASan + UBSan) ----
tap_unit "$HERE/$B/softaff-unit" "softaff unit" "$W/unit.out"

# ---- fixtures ----
# task DIR TGID LIST SOURCE RATIO RSOURCE REQ RREQ: a task's status, what
# applies to it (ABI v4: LIST from SOURCE, RATIO from RSOURCE), and the
# request files of its level as the kernel reads them (REQ, RREQ: "" for
# inherit, none, or the value as written).
task() {
	mkdir -p "$1"
	printf 'Name:\tdemo\nTgid:\t%s\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3\nCpus_preferred:\t-\nCpus_preferred_list:\t%s\nCpus_preferred_source:\t%s\nCpus_preferred_ratio:\t%s\nCpus_preferred_ratio_source:\t%s\n' \
		"$2" "$3" "$4" "$5" "$6" > "$1/status"
	echo "$7" > "$1/soft_affinity_list"
	echo "$8" > "$1/soft_affinity_ratio"
}
task "$P/100" 100 0-1 process 5:4 process 0-1 5:4
task "$P/100/task/100" 100 0-1 process 5:4 process "" ""
task "$P/100/task/101" 100 2 thread 5:4 process 2 ""
task "$P/100/task/99" 100 0-3 none 100:1 thread none 100:1
# /proc/TID of a thread exists too (not listed), with the thread's values.
task "$P/101" 100 2 thread 5:4 process 2 ""
task "$P/self" 7 0-3 none 100:1 default "" ""
echo f > "$P/self/soft_affinity"
for nd in 0 1; do
	mkdir -p "$S/devices/system/node/node$nd"
done
echo 0-1 > "$S/devices/system/node/node0/cpulist"
echo 2-3 > "$S/devices/system/node/node1/cpulist"
CG=$S/fs/cgroup
mkdir -p "$CG/app" "$CG/nocpuset" "$CG/oldkernel"
echo 0-3 > "$CG/app/cpuset.cpus"
echo 0-1 > "$CG/app/cpuset.cpus.preferred"
echo > "$CG/app/cpuset.cpus.preferred.ratio"
echo 0-1 > "$CG/app/cpuset.cpus.preferred.effective"
echo 0-3 > "$CG/oldkernel/cpuset.cpus"

# sa ARGS...: softaff on the fixtures; output in $W/out, errors in
# $W/err, exit status in $rc.  Sanitizer reports go to san.log.
sa() {
	"$SA" --proc-root "$P" --sys-root "$S" "$@" > "$W/out" 2> "$W/err"
	rc=$?
	cat "$W/err" >> "$W/all-err"
}
# has FILE TEXT: FILE holds exactly TEXT (one line).
has() { [ "$(cat "$1")" = "$2" ]; }
# says LINE: the output has that line.
says() { grep -qxF -- "$1" "$W/out"; }
# errs TEXT: stderr contains TEXT.
errs() { grep -qF -- "$1" "$W/err"; }
# rc_is N: the last exit status; prints the output when it is not.
rc_is() {
	[ "$rc" = "$1" ] && return 0
	echo "# exit $rc, wanted $1"
	sed 's/^/# out: /' "$W/out"
	sed 's/^/# err: /' "$W/err"
	return 1
}
: > "$W/all-err"

# ---- showing ----
sa -p 100
rc_is 0 && says "pid 100's current preferred mask: 3 (process)" &&
	says "pid 100's current ratio: 5:4 (process)" &&
	says "pid 100's current process request: mask 3, ratio 5:4"
result $? "show: -p PID prints what applies (status, sources) and the process's request"
sa -pc 100
rc_is 0 && says "pid 100's current preferred list: 0-1 (process)" &&
	says "pid 100's current process request: list 0-1, ratio 5:4"
result $? "show: -pc PID prints lists"
sa -p -a -c 100
rc_is 0 && [ "$(sed -n 's/^pid \([0-9]*\).s current preferred.*/\1/p' "$W/out" | tr '\n' ' ')" = "99 100 101 " ] &&
	says "pid 100's current process request: list 0-1, ratio 5:4" &&
	says "pid 101's current preferred list: 2 (thread)" &&
	says "pid 101's current thread request: list 2, ratio inherit" &&
	says "pid 99's current ratio: 100:1 (thread)" &&
	says "pid 99's current thread request: list none, ratio 100:1"
result $? "show: -a prints the process's request, then every thread in order with its own"
sa -p 101
rc_is 0 && says "pid 101's current preferred mask: 4 (thread)" &&
	says "pid 101's current thread request: mask 4, ratio inherit"
result $? "show: -p TID of a thread reads that thread (task/TID)"

# ---- setting a process, a thread ----
sa -p -c 2-3 100
rc_is 0 && has "$P/100/soft_affinity_list" 2-3 &&
	has "$P/100/task/101/soft_affinity_list" 2 &&
	says "pid 100's current preferred list: 0-1 (process)" &&
	grep -q "^pid 100's new preferred list: " "$W/out"
result $? "set: -p -c LIST PID writes the process file, prints current and new"
sa -p 0x5 100
rc_is 0 && has "$P/100/soft_affinity_list" 0,2
result $? "set: a hex mask (0x allowed) is written as the list 0,2"
sa -p 3 101
rc_is 0 && has "$P/100/task/101/soft_affinity_list" 0-1 &&
	has "$P/100/soft_affinity_list" 0,2
result $? "set: -p MASK TID writes only that thread (task/TID), as taskset does"
sa -p -a -c 1 101
rc_is 0 && has "$P/100/soft_affinity_list" 1 &&
	[ "$(grep -c "new preferred" "$W/out")" = 3 ]
result $? "set: -a writes the whole process (of a TID too), shows every thread"
sa -p --node 1 100
rc_is 0 && has "$P/100/soft_affinity_list" 2-3
result $? "set: --node 1 writes node 1's CPUs"
sa -p -N 0,1 100
rc_is 0 && has "$P/100/soft_affinity_list" 0-3
result $? "set: -N 0,1 writes both nodes' CPUs"
sa -p --ratio 20:1 100
rc_is 0 && has "$P/100/soft_affinity_ratio" 20:1 && has "$P/100/soft_affinity_list" 0-3
result $? "set: --ratio A:P writes only the ratio"
# Back to a request the kernel could show ("inherit" reads as "").
kratio() { echo 5:4 > "$P/100/soft_affinity_ratio"; }
for w in inherit none; do
	kratio
	sa -p --ratio $w 100
	rc_is 0 && has "$P/100/soft_affinity_ratio" $w
	result $? "set: --ratio $w"
done
kratio
sa -p --ratio default 100
rc_is 0 && has "$P/100/soft_affinity_ratio" inherit
result $? "set: --ratio default, the older word, writes inherit"
kratio
sa -p --reset 100
rc_is 0 && has "$P/100/soft_affinity_list" inherit &&
	has "$P/100/soft_affinity_ratio" 5:4
result $? "set: --reset writes inherit to the mask only"
sa -p none 100
rc_is 0 && has "$P/100/soft_affinity_list" none &&
	says "pid 100's current process request: mask inherit, ratio 5:4"
result $? "set: MASK none opts the process out"
sa -p -c inherit 100
rc_is 0 && has "$P/100/soft_affinity_list" inherit &&
	says "pid 100's current process request: list none, ratio 5:4"
result $? "set: LIST inherit clears it"
sa -p -c --ratio 5:4 0 100
rc_is 0 && has "$P/100/soft_affinity_list" 0 && has "$P/100/soft_affinity_ratio" 5:4
result $? "set: a list and a ratio in one call"
kratio

# ---- bad arguments: exit 2, nothing written ----
echo untouched > "$P/100/soft_affinity_list"
echo untouched > "$P/100/soft_affinity_ratio"
bad=0
for args in "-p zz 100" "-p 0 100" "-p -c 3-1 100" "-p -c 0-3x 100" \
	"-p --ratio 0:1 100" "-p --ratio 5 100" "-p --ratio 10001:1 100" \
	"-p -c 1 --ratio x 100" "-p --node 7 100" "-p --node x 100" \
	"-p 1 abc" "-p 3 100 7" "-p" "-p --node 0 3 100" "-p --node 0 --reset 100" \
	"-a 3 true" "-p -g app 100" "3" "--ratio 5:4 3" "-g app 1 2" "--bogus" \
	"-p -c 8192 100" "-p -c 1 2 3 4"; do
	# shellcheck disable=SC2086
	sa $args
	if [ "$rc" != 2 ] || ! grep -q '^softaff: ' "$W/err"; then
		echo "# softaff $args: exit $rc: $(cat "$W/err" | head -1)"
		bad=$((bad + 1))
	fi
done
[ $bad = 0 ] && has "$P/100/soft_affinity_list" untouched &&
	has "$P/100/soft_affinity_ratio" untouched
result $? "usage: 23 bad calls exit 2 with a message and write nothing"
kratio
sa -p --node 7 100
errs "node 7 does not exist"
result $? "usage: an unknown node is named"
sa -p --ratio 5:0 100
errs "bad ratio '5:0': want ALLOWED:PREFERRED, each 1..10000, inherit or none"
result $? "usage: a bad ratio says what a good one looks like"
sa -p zz 100
errs "'zz' is not a hex CPU mask (e.g. f; -c for a list)"
result $? "usage: a bad mask points at -c"

# ---- failures: the file and the errno in words ----
sa -p 4242
rc_is 1 && errs "softaff: $P/4242/status: No such file or directory (no process or thread 4242)"
result $? "fail: no such process: exit 1, names the file and the errno"
rm "$P/100/soft_affinity_list"
mkdir "$P/100/soft_affinity_list"
sa -p 100
rc_is 1 && errs "softaff: $P/100/soft_affinity_list: Is a directory"
result $? "fail: a request that cannot be read: exit 1, names the file and the errno"
rmdir "$P/100/soft_affinity_list"
# /dev/full: reads as an empty line (inherit), refuses writes (ENOSPC).
if [ -c /dev/full ]; then
	ln -s /dev/full "$P/100/soft_affinity_list"
	kratio
	sa -p -c --ratio 7:1 1 100
	rc_is 1 && errs "softaff: writing '1' to $P/100/soft_affinity_list: No space left on device" &&
		has "$P/100/soft_affinity_ratio" 5:4
	result $? "fail: a refused write names value, file and errno; the ratio is not written after it"
	rm "$P/100/soft_affinity_list"
else
	ok "fail: a refused write names value, file and errno # SKIP no /dev/full"
fi
echo 0-1 > "$P/100/soft_affinity_list"
mv "$P/self/soft_affinity" "$P/self/soft_affinity.x"
sa -p 100
rc_is 3 && errs "$P/self/soft_affinity: No such file or directory (this kernel does not have the soft affinity series)"
result $? "fail: a kernel without soft affinity: exit 3, said by the missing file"
mv "$P/self/soft_affinity.x" "$P/self/soft_affinity"
mkdir -p "$P/200"
printf 'Name:\tx\nTgid:\t200\nCpus_allowed_list:\t0-3\n' > "$P/200/status"
sa -p 200
rc_is 3 && errs "$P/200/status: no soft affinity fields"
result $? "fail: a status file without Cpus_preferred_*: exit 3"

# ---- running a command ----
sa -c 1 -- cat "$P/self/soft_affinity_list"
rc_is 0 && says 1
result $? "command: -c LIST -- COMMAND writes /proc/self first, then execs"
sa 6 cat "$P/self/soft_affinity_list"
rc_is 0 && says 1-2
result $? "command: MASK COMMAND without --"
sa --node 1 --ratio 5:4 cat "$P/self/soft_affinity_list" "$P/self/soft_affinity_ratio"
rc_is 0 && [ "$(cat "$W/out" | tr '\n' ' ')" = "2-3 5:4 " ]
result $? "command: --node N --ratio A:P COMMAND"
sa --ratio 20:1 -- sh -c 'echo "$0 $1"' a -x
rc_is 0 && says "a -x" && has "$P/self/soft_affinity_ratio" 20:1
result $? "command: --ratio -- COMMAND ARGS, COMMAND's options are its own"
sa -c 1 -- /nonexistent/cmd
rc_is 127 && errs "failed to execute /nonexistent/cmd: No such file or directory"
result $? "command: not found: exit 127"
sa -c 1 -- "$P"
rc_is 126 && errs "Permission denied"
result $? "command: not executable: exit 126"

# ---- cgroups ----
sa -g app
rc_is 0 && says "cgroup /app's current preferred mask: 3" &&
	says "cgroup /app's current ratio: inherit" &&
	says "cgroup /app's current effective mask: 3"
result $? "cgroup: shows its request (mask, ratio) and what its tasks get"
sa --cgroup "$CG/app/" -c 2-3 --ratio 20:1
cat "$W/out" "$W/err" > "$W/cg-set"
rc_is 0 && has "$CG/app/cpuset.cpus.preferred" 2-3 &&
	has "$CG/app/cpuset.cpus.preferred.ratio" 20:1 &&
	says "cgroup /app's current preferred list: 0-1"
result $? "cgroup: the mount's full path; -c LIST and --ratio written (options after MASK too)"
sa -g app --node 0
rc_is 0 && has "$CG/app/cpuset.cpus.preferred" 0-1
result $? "cgroup: --node"
sa -g /app -c none --ratio none
rc_is 0 && has "$CG/app/cpuset.cpus.preferred" none &&
	has "$CG/app/cpuset.cpus.preferred.ratio" none &&
	says "cgroup /app's new preferred list: none"
result $? "cgroup: none opts out, mask and ratio"
sa -g /app --reset --ratio inherit
rc_is 0 && has "$CG/app/cpuset.cpus.preferred" inherit &&
	has "$CG/app/cpuset.cpus.preferred.ratio" inherit
result $? "cgroup: --reset and --ratio inherit write inherit"
echo > "$CG/app/cpuset.cpus.preferred"
echo > "$CG/app/cpuset.cpus.preferred.effective"
sa -g app
rc_is 0 && says "cgroup /app's current preferred mask: inherit (the nearest ancestor's applies)" &&
	says "cgroup /app's current effective mask: none"
result $? "cgroup: no value of its own is said so; an empty effective one is none"
sa -g nosuch
rc_is 1 && errs "$CG/nosuch: No such file or directory (no such cgroup)"
result $? "cgroup: no such cgroup: exit 1"
sa -g nocpuset
rc_is 1 && errs "the cpuset controller is not enabled for cgroup /nocpuset"
result $? "cgroup: without cpuset files: exit 1, says how to enable it"
sa -g oldkernel
rc_is 3 && errs "cpuset.cpus.preferred is missing: this kernel does not have the soft affinity series"
result $? "cgroup: cpuset without cpuset.cpus.preferred: exit 3"
sa -g /
rc_is 1 && errs "the root cgroup has no preference files"
result $? "cgroup: the root cgroup is refused"
sa -g app/../..
rc_is 2
result $? "cgroup: '..' is refused (exit 2)"

# ---- help, version, man page, completion ----
sa --help
rc_is 0 && grep -q "Exit status: 0 done" "$W/out"
result $? "--help: exit 0, lists the exit codes"
sa -V
rc_is 0 && grep -qx "softaff [0-9.]*" "$W/out"
result $? "--version"
# Every option of --help is in the man page and the completion.
sa --help
missing=""
for opt in $(grep -o -- '--[a-z][a-z-]*' "$W/out" | sort -u); do
	grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$HERE/cli/softaff.1" || missing="$missing man:$opt"
	grep -qF -- "$opt" "$HERE/cli/softaff.bash-completion" || missing="$missing completion:$opt"
done
[ -z "$missing" ] || echo "# missing:$missing"
check "docs: every option of --help is in softaff.1 and the completion" test -z "$missing"
if command -v groff > /dev/null; then
	LC_ALL=C groff -man -Tutf8 -ww -z "$HERE/cli/softaff.1" > "$W/groff" 2>&1
	sed 's/^/# /' "$W/groff"
	check "docs: softaff.1 formats without a groff warning" test ! -s "$W/groff"
else
	ok "docs: softaff.1 formats # SKIP no groff"
fi
if command -v bash > /dev/null; then
	# complete WORDS...: what the completion offers for the last word.
	complete_words() {
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"; _softaff; printf "%s\n" "${COMPREPLY[@]}"' \
			x "$HERE/cli/softaff.bash-completion" "$@"
	}
	opts=$(complete_words softaff --r | tr '\n' ' ')
	ratio=$(complete_words softaff --ratio "" | tr '\n' ' ')
	[ "$opts" = "--ratio --reset " ] && [ "$ratio" = "inherit none " ]
	result $? "completion: options ('$opts') and the ratio's values ('$ratio')"
else
	ok "completion # SKIP no bash"
fi

tap_end "$W/all-err"
