#!/usr/bin/env bash
# bench/run-rxe-mixed.sh - a mixed workload of packed and unpacked puts to
# one node over the verbs transport, two builds side by side, in ONE QEMU VM
# boot (tests/rxe/run-in-vm.sh, RXE_VM_NDEV=2: rxe0 and rxe1 on the two
# ends of a veth wire). Issue 15 asks it of the old rule "an unpacked
# operation waits until the node answered every earlier pack" (hoist before
# the packs merge, e.g. c28b9f1) against the conflict stage that holds only
# overlapping operations.
#
#   bash bench/run-rxe-mixed.sh --old DIR --new DIR [--reps N] [--scale F] [--rounds R]
#
# DIR: a build (bench/hoist-pack-bench, daemon/hoistd, launcher/hoistrun,
# daemon/hoistctl); this script builds nothing. The old side needs the
# --test mixed of this checkout's bench/pack_bench.c (copy it into the old
# source before building: the client API is the same). In the guest, each
# of R rounds (default 3) runs both sides, old first in odd rounds and new
# first in even ones: two fresh hoistd --transport=verbs --spin-us=0, one
# per rxe IP (tests/multinode/cluster.sh with CLUSTER_IPS), then
#   HOIST_SPIN_US=300 hoistrun -n 2 --runtime-dirs D0,D1 hoist-pack-bench --test mixed
# (rank 0 puts to rank 1 on the other daemon: a strided put of 16 8-byte
# elements, packed, then a 16 KiB put, unpacked, each pair to its own
# slot, then quiet; operations per second; see bench/pack_bench.c). A
# side's value per round is the median of its reps; the table shows the
# median over rounds and their min-max per side and new/old. Everything
# runs 20-50x slower under TCG emulation: the ratio counts.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
old= new= reps=5 scale=0.02 rounds=3
orig=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--old) old=$(cd "$2" && pwd -P); shift 2 ;;
	--new) new=$(cd "$2" && pwd -P); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--measure) measure=$2; shift 2 ;; # internal: under cluster.sh, one side
	-h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-rxe-mixed.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$old" ] && [ -n "$new" ] || { echo "run-rxe-mixed.sh: --old DIR and --new DIR are required (--help)" >&2; exit 2; }
args=(--old "$old" --new "$new" --reps "$reps" --scale "$scale" --rounds "$rounds")

if [ "${RXE_VM:-0}" != 1 ]; then
	for b in "$old" "$new"; do
		for f in bench/hoist-pack-bench daemon/hoistd launcher/hoistrun daemon/hoistctl; do
			[ -x "$b/$f" ] || { echo "run-rxe-mixed.sh: $b/$f missing: build first" >&2; exit 2; }
		done
	done
	export RXE_VM_NDEV=2 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1800}
	echo "reproduce: bash bench/run-rxe-mixed.sh ${orig[*]}"
	exec "$repo/tests/rxe/run-in-vm.sh" "$repo/bench/run-rxe-mixed.sh" "${args[@]}"
fi

# ---- under cluster.sh: one side's measurement ---------------------------------
if [ -n "${measure:-}" ]; then
	b=$([ "$measure" = old ] && echo "$old" || echo "$new")
	HOIST_SPIN_US=${HOIST_SPIN_US:-300} "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" \
		--job "rxe-mixed-$measure-$$" --timeout 600 \
		"$b/bench/hoist-pack-bench" --test mixed --reps "$reps" --scale "$scale" |
		sed "s/^row\t/row\t$measure\t/" >>"$MIX_OUT/rows.tsv"
	# the workload really crossed verbs, packed and unpacked
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['transport_verbs'] == 1" "d['rdma_writes'] > 0" "d['rdma_sends'] > 0" ||
		{ echo "run-rxe-mixed.sh: $measure: daemon 0 did not use verbs" >&2; exit 1; }
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
keys = ("rdma_writes", "rdma_sends", "rdma_doorbells", "rdma_order_waits", "rdma_bounced")
print("'"$measure"' daemon 0:", " ".join("%s=%s" % (k, d.get(k)) for k in keys))' >&2
	exit 0
fi

# ---- in the guest: rounds, both sides, one cluster each ------------------------
read -r -a ips <<<"$RXE_IPS"
MIX_OUT=$(mktemp -d /tmp/rxe-mixed.XXXXXX)
export MIX_OUT CLUSTER_IPS="${ips[0]} ${ips[1]}" CLUSTER_READY_SEC=60 CLUSTER_TIMEOUT=800
: >"$MIX_OUT/rows.tsv"
for ((r = 1; r <= rounds; r++)); do
	order="old new"
	[ $((r % 2)) = 0 ] && order="new old"
	for side in $order; do
		b=$([ "$side" = old ] && echo "$old" || echo "$new")
		echo "round $r/$rounds: $side ($b)" >&2
		echo "round $r $side" >>"$MIX_OUT/rows.tsv"
		HOIST_HOISTD=$b/daemon/hoistd HOIST_HOISTRUN=$b/launcher/hoistrun HOIST_HOISTCTL=$b/daemon/hoistctl \
			"$repo/tests/multinode/cluster.sh" 2 --daemon-arg=--transport=verbs \
			--daemon-arg=--spin-us="${HOIST_BENCH_SPIN_US:-0}" -- \
			"$repo/bench/run-rxe-mixed.sh" "${args[@]}" --measure "$side"
	done
done
python3 - "$MIX_OUT/rows.tsv" <<'PY'
import statistics, sys
per = {}  # (row, side) -> [median of each round]
rnd = None
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0].startswith("round "):
        continue
    if len(f) >= 5 and f[0] == "row":
        side, name, unit = f[1], f[2], f[3]
        vals = [float(x) for x in f[4:]]
        per.setdefault((name, unit), {}).setdefault(side, []).append(statistics.median(vals))
print("%-58s %-6s %12s %25s %12s %25s %7s" % ("row", "unit", "old median", "old min-max", "new median",
                                              "new min-max", "new/old"))
for (name, unit), sides in per.items():
    o, n = sides.get("old", []), sides.get("new", [])
    om, nm = (statistics.median(o) if o else float("nan")), (statistics.median(n) if n else float("nan"))
    rng = lambda xs: "%.4g-%.4g" % (min(xs), max(xs)) if xs else "-"
    print("%-58s %-6s %12.4g %25s %12.4g %25s %7.2f" % (name, unit, om, rng(o), nm, rng(n),
                                                        nm / om if om else float("nan")))
    print("  rounds: old %s, new %s" % (["%.4g" % x for x in o], ["%.4g" % x for x in n]))
PY
rm -rf "$MIX_OUT"
