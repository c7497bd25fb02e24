#!/bin/bash
# The splat scanner must catch every kind of kernel splat and nothing else:
# a scanner that never fires would let a broken kernel pass make test.
top=$(cd "$(dirname "$0")/../.." && pwd)
fx=$top/tests/host/fixtures
n=0
t() { n=$((n + 1)); if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi; }

t "clean log passes" "$top/vm/scan-splats $fx/console-clean.log 2>/dev/null"
out=$("$top/vm/scan-splats" "$fx/console-splats.log" 2>&1)
rc=$?
t "splat log fails" "((rc == 1))"
for what in "WARNING: CPU: 1" "Call Trace:" "NULL pointer" "blocked for more than" "soft lockup" \
	"circular locking" "UBSAN" "KASAN" "Kernel panic"; do
	t "reports: $what" "grep -qF -- '$what' <<<\"\$out\""
done
t "counts 9 splat lines" "grep -q '9 kernel splat line' <<<\"\$out\""
crlf=$(mktemp)
sed 's/$/\r/' "$fx/console-splats.log" >"$crlf"
t "CRLF console logs are scanned too" "! $top/vm/scan-splats $crlf 2>/dev/null"
rm -f "$crlf"
echo "1..$n"
