#!/usr/bin/env bash
# bench/run-scale.sh - scale by counting: one job over N daemons on this
# machine (one PE per daemon), N = 2, 4, 8, 16, 32, 64; every daemon's
# counters read before the job and after each of its steps; per daemon the
# messages and bytes sent and received for job start (membership), the
# symmetric allocations, one barrier, one allreduce (8 B) and one alltoall
# (8 B per pair of PEs), the tcp connections held and the resident memory
# (VmRSS) grown since before the job; each fitted to a*log2 N, a*N and
# a*N^2 and projected to 1,000 and 10,000 nodes (bench/scale_fit.py).
#
#   bash bench/run-scale.sh [--build DIR] [--sizes 2,4,8,16,32,64]
#                           [--raw FILE] [--json] [-- hoistd-flags...]
#
# Builds nothing: DIR (default build/ of the repository) must hold
# bench/hoist-scale-steps, launcher/hoistrun, daemon/hoistd and
# daemon/hoistctl. The daemons are started by tests/multinode/cluster.sh
# (own runtime dir and loopback port each, one cluster key) and stopped
# after each N. Counts, not times: the counters are tcp_msgs_out/_in,
# tcp_bytes_out/_in (every frame between daemons, handshakes included,
# heartbeat pings not; bytes are header + extension + payload) and
# tcp_conns; memory is /proc/PID/status VmRSS. --raw FILE keeps the raw
# rows (N, step, daemon, counters); --json prints the fit as JSON instead
# of the table (the command and load average then go to stderr). Flags
# after "--" go to every hoistd.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# ---- inner: under cluster.sh, one N --------------------------------------------
if [ "${1:-}" = --inner ]; then
	raw=$2 steps=$3 n=$4
	gate=$(mktemp -d "${TMPDIR:-/tmp}/hoist-scale-gate.XXXXXX")
	snapdir=$gate/snap
	mkdir "$snapdir"
	IFS=, read -r -a dirs <<<"$HOIST_DIRS"
	IFS=, read -r -a pids <<<"$HOISTD_PIDS"
	# read_all: every daemon's counters and VmRSS into $snapdir
	read_all() {
		local i
		for i in "${!dirs[@]}"; do
			"$HOIST_HOISTCTL" --runtime-dir "${dirs[$i]}" --timeout 60000 stats --json --all \
				>"$snapdir/$i.json"
			awk '/^VmRSS:/ {print $2}' "/proc/${pids[$i]}/status" >"$snapdir/$i.rss"
		done
	}
	# in_flight: prints "SENT RECEIVED" (frames, all daemons together)
	in_flight() {
		python3 - "$snapdir" "${#dirs[@]}" <<'PY'
import json, sys
d, k = sys.argv[1], int(sys.argv[2])
c = [json.load(open("%s/%d.json" % (d, i)))["daemon"] for i in range(k)]
print(sum(x["tcp_msgs_out"] for x in c), sum(x["tcp_msgs_in"] for x in c))
PY
	}
	# snap LABEL: one raw row per daemon, read once no frame is on its way.
	# A step ends when its PEs are done, but one-way frames (the W_PE_GONE
	# of hoist_finalize) may still be on the wire then: read again until
	# the daemons together have received what they sent. The watchdog
	# fires on lack of progress (200 reads in a row, 20 s, with the
	# received count unchanged), and then the rows are written as read:
	# the checker sees the difference.
	snap() {
		local sent got last= still=0
		while :; do
			read_all
			read -r sent got < <(in_flight)
			[ "$sent" = "$got" ] && break
			if [ "$got" = "$last" ]; then
				still=$((still + 1))
				[ "$still" -ge 200 ] && break
			else
				still=0 last=$got
			fi
			sleep 0.1
		done
		python3 - "$snapdir" "$n" "$1" "${#dirs[@]}" >>"$raw" <<'PY'
import json, sys
d, n, label, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
names = ("tcp_msgs_out", "tcp_bytes_out", "tcp_msgs_in", "tcp_bytes_in", "tcp_conns",
         "addr_cache_inserts", "addr_cache_evictions", "addr_cache_invalidations")
for i in range(k):
    c = json.load(open("%s/%d.json" % (d, i)))["daemon"]
    rss = open("%s/%d.rss" % (d, i)).read().strip()
    print("\t".join([n, label, str(i)] + [str(c[x]) for x in names] + [rss]))
PY
	}
	snap idle
	"$HOIST_HOISTRUN" -n "$n" --runtime-dirs "$HOIST_DIRS" --timeout 3000 \
		"$steps" "$gate" &
	job=$!
	for s in 0 1 2 3 4 5; do
		ndone() { find "$gate" -maxdepth 1 -name "done-$s-*" | wc -l; }
		while [ "$(ndone)" -lt "$n" ]; do
			# the PEs exit right after step 5: count again once it is gone
			if ! kill -0 "$job" 2>/dev/null && [ "$(ndone)" -lt "$n" ]; then
				wait "$job" || true
				echo "run-scale.sh: the job over $n daemons ended before step $s" >&2
				rm -rf "$gate"
				exit 1
			fi
			sleep 0.05
		done
		snap "$s"
		[ "$s" -lt 5 ] && touch "$gate/go-$((s + 1))"
	done
	rc=0
	wait "$job" || rc=$?
	rm -rf "$gate"
	[ "$rc" = 0 ] || echo "run-scale.sh: hoistrun over $n daemons failed ($rc)" >&2
	exit "$rc"
fi

# ---- outer ------------------------------------------------------------------------
build="$repo/build"
sizes=2,4,8,16,32,64
raw_keep=
json=0
daemon_flags=()
orig_args=("$@")
usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--raw) raw_keep=$2; shift 2 ;;
	--json) json=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-scale.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
steps="$build/bench/hoist-scale-steps"
export HOIST_HOISTD="$build/daemon/hoistd" HOIST_HOISTRUN="$build/launcher/hoistrun"
export HOIST_HOISTCTL="$build/daemon/hoistctl"
for f in "$steps" "$HOIST_HOISTD" "$HOIST_HOISTRUN" "$HOIST_HOISTCTL"; do
	if [ ! -x "$f" ]; then
		echo "run-scale.sh: $f is missing; build first:" >&2
		echo "  cmake -S $repo -B $build && cmake --build $build --target hoist-scale-steps hoistd hoistrun hoistctl" >&2
		exit 1
	fi
done
cargs=()
for f in "${daemon_flags[@]}"; do cargs+=("--daemon-arg=$f"); done

raw=$(mktemp "${TMPDIR:-/tmp}/hoist-run-scale.XXXXXX")
trap 'rm -f "$raw"' EXIT
IFS=, read -r -a ns <<<"$sizes"
for n in "${ns[@]}"; do
	echo "run-scale.sh: $n daemons" >&2
	# no timing is measured: generous limits for 64 daemons on 2 CPUs
	if ! CLUSTER_TIMEOUT=3000 CLUSTER_READY_SEC=60 bash "$repo/tests/multinode/cluster.sh" "$n" \
		"${cargs[@]}" -- bash "$repo/bench/run-scale.sh" --inner "$raw" "$steps" "$n"; then
		echo "run-scale.sh: the run over $n daemons failed" >&2
		exit 1
	fi
done
[ -n "$raw_keep" ] && cp "$raw" "$raw_keep"
fit_args=()
[ "$json" = 1 ] && fit_args+=(--json)
python3 "$repo/bench/scale_fit.py" "${fit_args[@]}" "$raw"
# with --json stdout is the one document: the rest goes to stderr
tail_fd=1
[ "$json" = 1 ] && tail_fd=2
{
	[ "$json" = 1 ] || echo
	echo "command: bash bench/run-scale.sh${orig_args[*]:+ ${orig_args[*]}}"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
} >&"$tail_fd"
