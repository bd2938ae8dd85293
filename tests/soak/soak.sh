#!/usr/bin/env bash
# The soak: K daemons (tests/multinode/cluster.sh), N PEs of tests/soak/soak.c
# for a while, every value checked; meanwhile each daemon's resident memory
# (VmRSS) and open descriptors (/proc/PID/fd) are sampled, and growth after
# the warm-up fails the soak.
#
#   soak.sh [--seconds S | --hours H] [--nodes K] [--pes N] [--sample SEC] SOAK_BINARY
#
# Defaults: S = $SOAK_SECONDS or 150, K = 3, N = 6 (two per daemon), a
# sample every 5 s ($SOAK_SAMPLE). Binaries as for cluster.sh
# (HOIST_HOISTD, HOIST_HOISTRUN, HOIST_HOISTCTL).
#
# Growth check, per daemon: the baseline is the largest sample of the
# warm-up (the first 20% of the run, at least 20 s: rings, staging, caches
# and packs reach their working size), the final value the smallest of the
# last three samples (a transient peak is not growth). It fails when
#   final RSS - baseline RSS > max(SOAK_RSS_TOL_KB (default 8192), baseline / 10)
#   final fds - baseline fds > SOAK_FD_TOL (default 2)
# so a leak of one descriptor per round or of ~50 KiB per round shows within
# the default 150 s, while allocator noise does not. The samples go to
# $SOAK_OUT (default: a file in the cluster directory, printed at the end).
# Exit status: the soak program's (1 on any mismatch), or 1 on growth.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${SOAK_SECONDS:-150}
nodes=3
pes=6
sample=${SOAK_SAMPLE:-5}
while [ $# -gt 1 ]; do
	case $1 in
	--seconds) secs=$2; shift 2 ;;
	--hours) secs=$(awk -v h="$2" 'BEGIN { printf "%d", h * 3600 }'); shift 2 ;;
	--nodes) nodes=$2; shift 2 ;;
	--pes) pes=$2; shift 2 ;;
	--sample) sample=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--seconds S | --hours H] [--nodes K] [--pes N] [--sample SEC] SOAK_BINARY" >&2; exit 2; }
prog=$1

if [ -z "${HOIST_DIRS:-}" ]; then
	# outside the cluster: start one and come back in (limits generous: the
	# program's own watchdog catches a hang)
	export SOAK_SECONDS=$secs SOAK_SAMPLE=$sample SOAK_PES=$pes
	CLUSTER_TIMEOUT=$((secs + 300)) exec "$here/../multinode/cluster.sh" "$nodes" -- "$0" "$prog"
fi
pes=${SOAK_PES:-$pes}

log() { echo "[soak.sh] $*" >&2; }
IFS=, read -r -a pids <<<"$HOISTD_PIDS"
out=${SOAK_OUT:-$CLUSTER_BASE/soak-samples.txt}
: >"$out"
"$HOIST_HOISTRUN" -n "$pes" --runtime-dirs "$HOIST_DIRS" --job "soak-$$" --timeout $((secs + 240)) \
	"$prog" "$secs" &
job=$!
t0=$(date +%s)
# sample: time node rss_kb fds
while kill -0 "$job" 2>/dev/null; do
	now=$(($(date +%s) - t0))
	for i in "${!pids[@]}"; do
		p=${pids[$i]}
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		fds=$(find "/proc/$p/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		[ -n "$rss" ] && echo "$now $i $rss $fds" >>"$out"
	done
	sleep "$sample"
done
wait "$job"
status=$?
[ "$status" = 0 ] || log "FAIL: the soak program failed (status $status)"

warm=$((secs / 5))
[ "$warm" -lt 20 ] && warm=20
bad=0
for i in "${!pids[@]}"; do
	res=$(awk -v node="$i" -v warm="$warm" -v rtol="${SOAK_RSS_TOL_KB:-8192}" -v ftol="${SOAK_FD_TOL:-2}" '
		$2 == node { t[n] = $1; r[n] = $3; f[n] = $4; n++ }
		END {
			if (n < 4) { print "SKIP only " n " samples"; exit }
			br = 0; bf = 0; k = 0
			for (j = 0; j < n; j++) if (t[j] <= warm) { if (r[j] > br) br = r[j]; if (f[j] > bf) bf = f[j]; k = j }
			if (k >= n - 3) { print "SKIP the run ended in its warm-up (" n " samples)"; exit }
			fr = r[n - 1]; ff = f[n - 1]
			for (j = n - 3; j < n; j++) { if (r[j] < fr) fr = r[j]; if (f[j] < ff) ff = f[j] }
			lim = br / 10; if (lim < rtol) lim = rtol
			st = (fr - br > lim || ff - bf > ftol) ? "FAIL" : "ok"
			printf "%s node %d: RSS %d -> %d KiB (%+d, limit %d), fds %d -> %d (%+d, limit %d), %d samples\n",
				st, node, br, fr, fr - br, lim, bf, ff, ff - bf, ftol, n
		}' "$out")
	case $res in
	FAIL*) log "$res"; bad=1 ;;
	*) log "$res" ;;
	esac
done
if [ "$status" != 0 ] || [ "$bad" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
	log "samples (seconds node rss_kib fds):"
	cat "$out" >&2
fi
[ "$status" = 0 ] || exit "$status"
[ "$bad" = 0 ] || { log "FAIL: a daemon grew after the warm-up"; exit 1; }
log "PASS: $pes PEs over ${#pids[@]} daemons for $secs s, no growth beyond the tolerance"
exit 0
