#!/usr/bin/env bash
# bench/run-ptr.sh - same-node get: hoist_ptr + memcpy vs hoist_get (the
# library's direct path) vs hoist_get through the daemon vs Open MPI's
# OpenSHMEM shmem_getmem (and shmem_ptr + memcpy), 8 B / 4 KiB / 64 KiB,
# plus hoist_put direct vs through the daemon. One table of medians (ns per
# operation) with ratios, then the command that reproduces it.
#
#   bash bench/run-ptr.sh [--reps N] [--build DIR] [--no-shmem]
#
# Starts a private hoistd in a fresh runtime directory, runs
#   hoistrun -n 2 hoist-ptr-bench --reps N
# then builds bench/shmem_get.c with oshcc and runs
#   oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma -np 2 shmem-get --reps N
# (--mca osc ^rdma: with the osc/rdma component, Open MPI 4.1.4 + UCX 1.13
# crash in shmem_finalize, in a memory hook of an already unloaded
# component; the one-sided MPI component is not used by OpenSHMEM).
# If OpenSHMEM cannot run, the table says why instead of its columns.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-ptr.sh
build="$repo/build"
reps=7
shmem=1
orig_args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--no-shmem) shmem=0; shift ;;
	-h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-ptr.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done

bench="$build/bench/hoist-ptr-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
if [ ! -x "$bench" ] || [ ! -x "$hoistd" ] || [ ! -x "$hoistrun" ]; then
	echo "run-ptr.sh: building in $build" >&2
	cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
	cmake --build "$build" -j2 --target hoist-ptr-bench hoistd hoistrun >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoist-ptr-bench.XXXXXX")
dpid=
cleanup() {
	bench_hoistd_stop || true
	rm -rf "$tmp"
}
trap cleanup EXIT

bench_hoistd_start "$hoistd" "$tmp"
HOIST_RUNTIME_DIR=$tmp "$hoistrun" -n 2 --timeout 600 "$bench" --reps "$reps" >"$tmp/rows"
bench_hoistd_stop || { echo "run-ptr.sh: hoistd exited with an error" >&2; exit 1; }

shmem_note=
if [ "$shmem" = 1 ]; then
	if ! command -v oshcc >/dev/null || ! command -v oshrun >/dev/null; then
		shmem_note="OpenSHMEM not measured: oshcc/oshrun not found (Debian: openmpi-bin libopenmpi-dev)"
	elif ! oshcc -O2 "$repo/bench/shmem_get.c" -o "$tmp/shmem-get" 2>"$tmp/oshcc.err"; then
		shmem_note="OpenSHMEM not measured: oshcc failed: $(tail -n 3 "$tmp/oshcc.err" | tr '\n' ' ')"
	elif ! timeout 600 oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma -np 2 \
		"$tmp/shmem-get" --reps "$reps" >"$tmp/shmem" 2>"$tmp/shmem.err"; then
		shmem_note="OpenSHMEM not measured: oshrun failed: $(grep -v '^--' "$tmp/shmem.err" | head -n 5 | tr '\n' ' ')"
	else
		grep '^row ' "$tmp/shmem" >>"$tmp/rows" || true
		grep '^note ' "$tmp/shmem" | sed 's/^note /OpenSHMEM: /' >"$tmp/notes" || true
	fi
else
	shmem_note="OpenSHMEM not measured (--no-shmem)"
fi

python3 - "$tmp/rows" "$reps" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 6 and p[0] == "row":
        rows[(p[1], int(p[2]))] = (float(p[3]), float(p[4]), float(p[5]))
def cell(m, n):
    v = rows.get((m, n))
    return "%9.1f [%.0f-%.0f]" % v if v else "%9s" % "-"
def ratio(a, b, n):
    x, y = rows.get((a, n)), rows.get((b, n))
    return "%7.1fx" % (x[0] / y[0]) if x and y and y[0] > 0 else "%8s" % "-"
print("same-node get, PE 0 <- PE 1, one hoistd; ns per operation, median [min-max] of %s reps" % sys.argv[2])
hdr = ["size", "hoist_ptr+memcpy", "hoist_get direct", "hoist_get daemon", "shmem_getmem", "shmem_ptr+memcpy"]
print("%-7s | %-22s | %-22s | %-22s | %-22s | %-22s" % tuple(hdr))
for n in (8, 4096, 65536):
    print("%-7s | %-22s | %-22s | %-22s | %-22s | %-22s" % (
        {8: "8 B", 4096: "4 KiB", 65536: "64 KiB"}[n], cell("ptr", n), cell("get", n),
        cell("daemon", n), cell("shmem_getmem", n), cell("shmem_ptr", n)))
print()
print("ratios (median / median; > 1: the first is slower)")
print("%-7s | %-16s | %-16s | %-16s | %-16s" % ("size", "daemon/ptr", "daemon/direct", "shmem_getmem/ptr", "direct/ptr"))
for n in (8, 4096, 65536):
    print("%-7s | %-16s | %-16s | %-16s | %-16s" % (
        {8: "8 B", 4096: "4 KiB", 65536: "64 KiB"}[n], ratio("daemon", "ptr", n), ratio("daemon", "get", n),
        ratio("shmem_getmem", "ptr", n), ratio("get", "ptr", n)))
print()
print("same-node put, PE 0 -> PE 1 (loop + one quiet), ns per operation")
print("%-7s | %-22s | %-22s | %s" % ("size", "hoist_put direct", "hoist_put daemon", "daemon/direct"))
for n in (8, 4096, 65536):
    print("%-7s | %-22s | %-22s | %s" % ({8: "8 B", 4096: "4 KiB", 65536: "64 KiB"}[n],
        cell("put", n), cell("putd", n), ratio("putd", "put", n)))
PY
[ -s "$tmp/notes" ] 2>/dev/null && cat "$tmp/notes"
[ -n "$shmem_note" ] && echo "$shmem_note"
echo "cpu: $(bench_cpu_model), $(nproc) CPUs"
bench_reproduce "${orig_args[@]}"
