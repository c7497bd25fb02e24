# Sourced by the host test scripts (run-check.sh, softaff-check.sh,
# oci-hook-check.sh, privileges-check.sh): TAP lines numbered in order,
# and the steps each of them runs alike.  The caller sets HERE and B, and
# prints "1..$n" at the end, exiting non-zero if $failed (tap_end).

n=0
failed=0
# The programs under test are ASan + UBSan builds: any report fails.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check DESC CMD...: one TAP line for a command's exit status.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# result STATUS DESC: one TAP line for the status of what ran just before.
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }

# tap_end LOG: the last lines of a script: one TAP line for sanitizer
# reports in LOG (the stderr of its runs), the plan, and the exit status.
tap_end() {
	check "sanitizer-clean runs" sh -c "! grep -q 'Sanitizer\|runtime error' '$1'"
	grep -i 'sanitizer\|runtime error' "$1" | head -20 | sed 's/^/# /'
	echo "1..$n"
	[ $failed = 0 ]
}

# tap_unit BINARY NAME LOG: a unit test binary (tests/test.h), its
# "ok - ..." lines numbered here, the rest as comments, and one line for
# its exit status.
tap_unit() {
	"$1" > "$3" 2>&1
	unit_rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done < "$3"
	check "$2: exit status $unit_rc" test "$unit_rc" = 0
}

# tap_fuzz TARGET SECONDS DIR: the libFuzzer target $B/TARGET for SECONDS
# on its committed seeds (fuzz/corpus/TARGET) and what it finds (kept in
# DIR, where a crash's input goes too); one TAP line.
tap_fuzz() {
	mkdir -p "$3/corpus-$1"
	LSAN_OPTIONS=suppressions=$HERE/tests/fuzz/lsan.supp \
	"$HERE/$B/$1" -max_total_time="$2" -max_len=4096 -print_final_stats=1 \
		-artifact_prefix="$3/" \
		"$3/corpus-$1" "$HERE/tests/fuzz/corpus/$1" > "$3/fuzz-$1.log" 2>&1
	fuzz_rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$3/fuzz-$1.log")
	if [ $fuzz_rc = 0 ]; then
		ok "fuzz: $1 ran $2s, ${execs:-?} execs, no crash"
	else
		tail -n 30 "$3/fuzz-$1.log" | sed 's/^/# /'
		not_ok "fuzz: $1 (exit $fuzz_rc)"
	fi
}
