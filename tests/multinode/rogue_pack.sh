#!/usr/bin/env bash
# rogue_pack.sh <it_pack>: run under `cluster.sh 2`.
#
# A peer holding the cluster key (mn_rogue_pack.py, claiming to be node 1)
# sends daemon 0 a well-formed pack (answered element by element), nine
# malformed ones on one connection (the pack rule, daemon/stages/pack.h: each
# refused whole, answered -EPROTO, the connection stays) and one frame
# larger than any pack (a framing error: the connection is dropped).
# Daemon 0 must count the nine (packs_refused of node 1) and keep serving:
# after the real node 1 is reachable again (the rogue's connections made
# daemon 0 declare node 1 lost for a moment), a 4-PE job over both daemons
# works.
set -u
pack=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[rogue_pack.sh] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
port0=${CLUSTER_NODES%%,*}
port0=${port0##*:}

python3 "$MN_SRC_DIR/mn_rogue_pack.py" 127.0.0.1 "$port0" 1 2 "$CLUSTER_KEY" ||
	FAIL "daemon 0 mishandled packs from a keyed rogue peer (above)"
stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" check \
	"p[1]['counters']['packs_refused'] >= 9" "p[1]['counters']['packs_in'] >= 1" ||
	FAIL "packs_refused / packs_in of node 1 on daemon 0 (above)"
sleep 2 # RETRY_NS: a lost peer is retried after 1 s
ok=0
for attempt in 1 2 3; do
	if "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "rogue-after-$$-$attempt" --timeout 60 "$pack"; then
		ok=1
		break
	fi
	sleep 2
done
[ $ok = 1 ] || FAIL "it_pack over both daemons failed after the rogue's packs"
exit $fail
