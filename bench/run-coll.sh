#!/usr/bin/env bash
# bench/run-coll.sh - collective latency of hoist (daemons as nodes) next to
# Open MPI's with the same process count, measured in the same invocation.
#
#   bash bench/run-coll.sh [--build DIR] [--reps N] [--scale F]
#                          [--configs N:K,N:K,...] [-- hoistd-flags...]
#
# For each configuration N:K (default 4:2,8:4; N processes, K hoist nodes)
# it runs one after the other, each as a fresh job:
#   hoist K   hoistrun -n N --nodes K hoist-coll-bench   (K daemons over TCP)
#   hoist 1   hoistrun -n N --nodes 1 hoist-coll-bench   (one daemon: all local)
#   mpi       mpirun -np N --mca btl self,vader,tcp hoist-coll-mpi  (shared memory)
#   mpi tcp   mpirun -np N --mca btl self,tcp hoist-coll-mpi  (every rank over TCP)
# The same source (bench/coll_bench.c) is built against libhoist and MPI:
# barrier, broadcast / allreduce (double sum) / alltoall (per pair) of 8 B
# and 64 KiB, microseconds per call on rank 0, median of --reps reps (each
# rep a loop of back-to-back calls after a barrier; results are checked).
# Ratios: hoist K / mpi (the requested reference) and hoist K / mpi tcp
# (MPI also crossing TCP), hoist 1 / mpi; below 1.0 hoist is faster.
# Builds nothing: DIR (default build/) must hold bench/hoist-coll-bench,
# bench/hoist-coll-mpi, launcher/hoistrun and daemon/hoistd.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
reps=7
scale=0.5
configs=4:2,8:4
daemon_flags=()
orig_args=("$@")

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-coll.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done

hb="$build/bench/hoist-coll-bench"
mb="$build/bench/hoist-coll-mpi"
hoistrun="$build/launcher/hoistrun"
hoistd="$build/daemon/hoistd"
for f in "$hb" "$mb" "$hoistrun" "$hoistd"; do
	if [ ! -x "$f" ]; then
		echo "run-coll.sh: $f is missing; build first:" >&2
		echo "  cmake -S $repo -B $build && cmake --build $build --target hoist-coll-bench hoist-coll-mpi hoistd hoistrun" >&2
		exit 1
	fi
done
command -v mpirun >/dev/null || { echo "run-coll.sh: mpirun missing (scripts/deps.sh installs openmpi-bin)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/hoist-coll-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
hargs=(--reps "$reps" --scale "$scale" --tsv)
dargs=()
for f in "${daemon_flags[@]+"${daemon_flags[@]}"}"; do dargs+=(--hoistd-arg "$f"); done

# median of the rep values of every row: "name<TAB>median"
medians() {
	awk -F'\t' '$1 == "row" {
		n = 0
		for (i = 4; i <= NF; i++) v[n++] = $i + 0
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		m = (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
		printf "%s\t%.2f\n", $2, m
	}' "$1"
}

mpi_common=(--oversubscribe --allow-run-as-root --bind-to none)
IFS=, read -r -a cfgs <<<"$configs"
for cfg in "${cfgs[@]}"; do
	n=${cfg%%:*}
	k=${cfg##*:}
	echo "== $n processes: hoist over $k daemons (nodes) and over 1, Open MPI shared memory and TCP ==" >&2
	"$hoistrun" -n "$n" --nodes "$k" --timeout 300 "${dargs[@]+"${dargs[@]}"}" "$hb" "${hargs[@]}" >"$tmp/hk.tsv"
	"$hoistrun" -n "$n" --nodes 1 --timeout 300 "${dargs[@]+"${dargs[@]}"}" "$hb" "${hargs[@]}" >"$tmp/h1.tsv"
	mpirun -np "$n" "${mpi_common[@]}" --mca btl self,vader,tcp "$mb" "${hargs[@]}" >"$tmp/mv.tsv" 2>"$tmp/mv.err" ||
		{ cat "$tmp/mv.err" >&2; exit 1; }
	mpirun -np "$n" "${mpi_common[@]}" --mca btl self,tcp "$mb" "${hargs[@]}" >"$tmp/mt.tsv" 2>"$tmp/mt.err" ||
		{ cat "$tmp/mt.err" >&2; exit 1; }
	for f in hk h1 mv mt; do medians "$tmp/$f.tsv" >"$tmp/$f.med"; done
	echo
	printf '%d processes (hoist: %d nodes)   median us per call\n' "$n" "$k"
	printf '%-18s %10s %10s %10s %10s | %11s %11s %11s\n' row "hoist ${k}n" "hoist 1n" mpi "mpi tcp" \
		"hoist/mpi" "hoist/mpitcp" "hoist1/mpi"
	paste "$tmp/hk.med" "$tmp/h1.med" "$tmp/mv.med" "$tmp/mt.med" |
		awk -F'\t' '{
			r1 = $6 > 0 ? $2 / $6 : 0; r2 = $8 > 0 ? $2 / $8 : 0; r3 = $6 > 0 ? $4 / $6 : 0
			printf "%-18s %10.2f %10.2f %10.2f %10.2f | %10.2fx %10.2fx %10.2fx\n", $1, $2, $4, $6, $8, r1, r2, r3
		}'
done
echo
echo "reproduce: bash bench/run-coll.sh ${orig_args[*]}"
