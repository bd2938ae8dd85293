#!/usr/bin/env bash
# job_collide.sh <mn_jobs>: run under `cluster.sh 2`.
# Two jobs whose keys have the same 64-bit FNV-1a hash (the job id on the
# wire before ids became keyed hashes of uid and key) run at the same time,
# 4 PEs each over the same 2 daemons. Each checks that only its own salted
# data reaches its heap; both must pass. With colliding wire ids, a put of
# one job landed in the other's heap and its own target got nothing.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
k1=jf048c0605a57f7a3
k2=je38a16c1c13e79cc
# the premise: the two keys really collide under FNV-1a 64
python3 - "$k1" "$k2" <<'PY' || { echo "[job_collide.sh] FAIL: the keys do not collide under FNV-1a" >&2; exit 1; }
import sys
def fnv(s):
    h = 0xcbf29ce484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
    return h
sys.exit(0 if fnv(sys.argv[1]) == fnv(sys.argv[2]) else 1)
PY
"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "$k1" --timeout 120 "$prog" 300 &
p1=$!
"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "$k2" --timeout 120 "$prog" 300 &
p2=$!
fail=0
wait "$p1" || { echo "[job_collide.sh] FAIL: job $k1 failed (status $?)" >&2; fail=1; }
wait "$p2" || { echo "[job_collide.sh] FAIL: job $k2 failed (status $?)" >&2; fail=1; }
[ "$fail" = 0 ] && echo "[job_collide.sh] PASS: two jobs with one FNV-1a hash stayed apart" >&2
exit "$fail"
