#!/usr/bin/env bash
# The test watchdog (it_common.h): progress keeps it quiet past its period;
# no progress fires it after one to two periods; HOIST_TEST_SCALE stretches
# the period; hoistrun --timeout and harness.sh's IT_TIMEOUT scale the same way.
#   watchdog.sh <it_watchdog> <hoistd> <hoistrun> <hoistctl>
set -u
prog=$1
hoistrun=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail=0
FAIL() { echo "[watchdog.sh] FAIL: $*" >&2; fail=1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
unset HOIST_TEST_SCALE

# 1. 4 s of steps with a 1 s period: not killed
"$prog" progress 4 || FAIL "a program making progress for 4 s was killed by a 1 s watchdog (status $?)"

# 2. no progress: killed after 1-2 s with the message
t0=$(date +%s.%N)
out=$("$prog" hang 8 2>&1)
st=$?
el=$(elapsed "$t0")
[ "$st" = 1 ] || FAIL "a stuck program exited $st, expected 1 from the watchdog: $out"
case $out in *"no progress for 1 s"*"stuck on purpose"*) ;; *) FAIL "watchdog message missing: $out" ;; esac
awk -v e="$el" 'BEGIN { exit !(e >= 0.9 && e < 4) }' || FAIL "watchdog of 1 s fired after $el s"

# 3. HOIST_TEST_SCALE=3: the same period lasts 3 s
t0=$(date +%s.%N)
out=$(HOIST_TEST_SCALE=3 "$prog" hang 12 2>&1)
st=$?
el=$(elapsed "$t0")
[ "$st" = 1 ] || FAIL "scaled: a stuck program exited $st, expected 1: $out"
case $out in *"no progress for 3 s"*) ;; *) FAIL "scaled: message missing or period not 3 s: $out" ;; esac
awk -v e="$el" 'BEGIN { exit !(e >= 2.9 && e < 8) }' || FAIL "scaled watchdog (1 s x 3) fired after $el s"
# 4. hoistrun --timeout 1 on a 2 s rank: 124 unscaled, 0 with HOIST_TEST_SCALE=3
"$hoistrun" -n 1 --timeout 1 sleep 2 2>/dev/null
st=$?
[ "$st" = 124 ] || FAIL "hoistrun --timeout 1 on a 2 s rank exited $st, expected 124"
HOIST_TEST_SCALE=3 "$hoistrun" -n 1 --timeout 1 sleep 2 || FAIL "HOIST_TEST_SCALE=3 hoistrun --timeout 1 killed a 2 s rank"

# 5. harness.sh IT_TIMEOUT=1 on a 2 s command: fails unscaled, passes scaled
IT_TIMEOUT=1 "$here/harness.sh" "$2" "$3" "$4" -- sleep 2 2>/dev/null && FAIL "harness IT_TIMEOUT=1 let a 2 s command pass"
HOIST_TEST_SCALE=3 IT_TIMEOUT=1 "$here/harness.sh" "$2" "$3" "$4" -- sleep 2 ||
	FAIL "HOIST_TEST_SCALE=3 harness IT_TIMEOUT=1 failed a 2 s command"
[ "$fail" = 0 ] && echo "[watchdog.sh] PASS"
exit "$fail"
