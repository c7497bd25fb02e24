#!/bin/bash
# 31-kunit.t: re-emit the results of the sched_soft_affinity KUnit suite,
# which runs at boot (CONFIG_SCHED_SOFT_AFFINITY_KUNIT_TEST=y), as TAP: one
# line per test case, then one for the suite. Fails if the suite is absent.
suite=sched_soft_affinity

log=$(dmesg 2>/dev/null)
[[ -n $log ]] || log=$(journalctl -k -b --no-pager -o cat 2>/dev/null)

# Drop printk timestamps, keep the suite's block: from "# Subtest: NAME"
# to the suite's own "ok N NAME" line.
block=$(sed -E 's/^\[ *[0-9]+\.[0-9]+\] ?//' <<<"$log" | awk -v s="$suite" '
	$0 ~ "^ *# Subtest: " s "$" { on = 1 }
	on { print }
	on && $0 ~ "^(ok|not ok) [0-9]+ " s "( |$)" { exit }')

n=0
if [[ -z $block ]]; then
	echo "not ok 1 - KUnit suite $suite ran at boot (not found in the kernel log)"
	echo "1..1"
	exit 1
fi

status=0
while IFS= read -r line; do
	if [[ $line =~ ^\ {4}(ok|not\ ok)\ [0-9]+\ ([^ #]+)(\ #\ SKIP\ ?(.*))?$ ]]; then
		n=$((n + 1))
		res=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
		if [[ -n ${BASH_REMATCH[3]} ]]; then
			echo "ok $n - kunit $suite.$name # SKIP ${BASH_REMATCH[4]:-skipped}"
		else
			echo "$res $n - kunit $suite.$name"
			[[ $res == ok ]] || status=1
		fi
	elif [[ $line =~ Subtest:|KTAP\ version|^\ *1\.\.[0-9]+$|^(ok|not\ ok)\  ]]; then
		:
	elif [[ $line =~ ^\ *(#\ ?)?(.+)$ ]]; then
		echo "# ${BASH_REMATCH[2]}"
	fi
done <<<"$block"

last=$(tail -1 <<<"$block")
n=$((n + 1))
if [[ $last =~ ^ok\ [0-9]+\ $suite ]]; then
	echo "ok $n - kunit suite $suite passed"
else
	echo "not ok $n - kunit suite $suite passed (last line: ${last:-none})"
	status=1
fi
echo "1..$n"
exit $status
