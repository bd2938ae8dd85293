#!/usr/bin/env bash
# frames.sh MODE ACTION <mn_tamper> <it_putget>: run under
#   cluster.sh 2 --via 0:1 --daemon-arg=--frame-integrity=MODE
# (MODE off | mac | encrypt). Daemon 0 reaches daemon 1 through a proxy
# (mn_tamper_proxy.py) that does ACTION once to the daemon 0 -> 1 stream of
# the first connection after the handshake: flip:N (one bit of byte N) or
# dup:K (record K sent twice: a replay; mac/encrypt only).
#
# A 2-PE job (mn_tamper: rank 0 on daemon 0 puts 8 x 1 MiB into rank 1's
# heap on daemon 1, rank 1 scans its heap afterwards) runs through it.
# Checks:
#   - the proxy did tamper (else the test proves nothing);
#   - mac / encrypt: daemon 1 refused: integrity_failures of node 0 > 0 in
#     `hoistctl stats --json`, "frame integrity check failed" in its log;
#     rank 1's heap holds no corrupt byte (only zeros and correct data);
#   - off: the tamper lands - rank 1 finds the corrupt byte in its heap and
#     daemon 1 counts no integrity failure (the test can fail; this is it
#     failing on purpose);
#   - both daemons keep serving: a new 2-PE job across them (through the
#     proxy, which passes everything now) puts and gets correct data
#     (it_putget), retried while the dropped connection's peer loss lasts.
set -u
mode=$1 action=$2 tamper=$3 putget=$4
: "${HOIST_DIRS:?run me under cluster.sh}" "${CLUSTER_VIA_PORT:?run me under cluster.sh --via 0:1}"
tag="[frames.sh $mode $action]"
fail=0
FAIL() { echo "$tag FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
field() { sed -n "s/.*\<$2=\([-0-9]*\).*/\1/p" "$1"; }

plog=$CLUSTER_BASE/proxy.log
: >"$plog"
python3 "$MN_SRC_DIR/mn_tamper_proxy.py" "$CLUSTER_VIA_PORT" "$CLUSTER_VIA_TARGET" "$action" "$plog" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null' EXIT
for _ in $(seq 1 100); do
	grep -q listening "$plog" && break
	sleep 0.1
done
grep -q listening "$plog" || { FAIL "the proxy did not start"; exit 1; }

out=$CLUSTER_BASE/tamper
mkdir -p "$out"
MN_TAMPER_OUT=$out "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "tamper-$$" --timeout 120 \
	"$tamper" || FAIL "mn_tamper exited with status $? (an unexpected error, above)"
cat "$plog" >&2
grep -q "^tampered:" "$plog" || FAIL "the proxy never tampered with the stream"
[ -s "$out/rank1" ] || FAIL "rank 1 wrote no result"
corrupt=$(field "$out/rank1" corrupt)
landed=$(field "$out/rank1" landed)
ifail=$(stats "$HOIST_DIR_1" | python3 "$MN_SRC_DIR/mn_stats.py" peer 0 integrity_failures)
echo "$tag rank 0: $(cat "$out/rank0" 2>/dev/null); rank 1: $(cat "$out/rank1" 2>/dev/null);" \
	"daemon 1 integrity_failures of node 0: $ifail" >&2

if [ "$mode" = off ]; then
	[ "${corrupt:-0}" -gt 0 ] ||
		FAIL "frame_integrity=off: the tampered byte did not land in rank 1's heap (corrupt=$corrupt): the test could not tell"
	[ "$ifail" = 0 ] || FAIL "frame_integrity=off counted integrity failures ($ifail)"
else
	[ "${corrupt:-1}" = 0 ] || FAIL "corrupt data in rank 1's heap (corrupt=$corrupt)"
	[ "${ifail:-0}" -gt 0 ] 2>/dev/null || FAIL "daemon 1 counted no integrity failure of node 0 ($ifail)"
	grep -q "frame integrity check failed" "$HOIST_DIR_1/hoistd.log" ||
		FAIL "daemon 1 did not log 'frame integrity check failed'"
	echo "$tag landed before the refusal: $landed correct bytes" >&2
fi

# a dropped connection makes both daemons declare the other lost; a lost
# peer is retried after 1 s (RETRY_NS), and a job announced before that
# would wait for its other rank until job_timeout_ms
[ "$mode" = off ] || sleep 2
ok=0
for attempt in 1 2 3; do
	if "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "after-$$-$attempt" --timeout 60 "$putget"; then
		ok=1
		break
	fi
	sleep 2 # a lost peer is retried after 1 s
done
[ $ok = 1 ] || FAIL "a job across both daemons failed after the tampering"
grep -q "^conn" "$plog" || FAIL "no connection went through the proxy"
[ "$fail" = 0 ] && echo "$tag PASS" >&2
exit "$fail"
