#!/usr/bin/env bash
# bench/run-oversub.sh - the daemon path with more runnable threads than
# CPUs (issue 16): 8 B get through the daemon (HOIST_DIRECT=0) next to the
# 1-line ping-pong floor, and 8 B put injection rounds, in the scenarios
#   2pe       2 PEs + the daemon's progress thread
#   4pe       4 PEs (every one getting from its neighbour) + the daemon
#   2pe+hog   2 PEs + the daemon + one busy-looping process
#   4pe+hog   4 PEs + the daemon + one busy-looping process
# on one private hoistd.
#
#   bash bench/run-oversub.sh [--reps N] [--rounds R] [--build DIR]
#        [--scenarios 2pe,4pe,2pe+hog,4pe+hog]
#
# get: hoistrun -n P hoist-oversub-bench --test get --reps N [--hog PID]:
# in every rep the floor (rank 0, pinned ping-pong, the hog stopped while it
# runs), then the gets of every PE at once, then rank 0's gets alone (the
# other PEs wait in a barrier), interleaved. Printed per scenario: median
# [min-max] over the reps of the floor, of rank 0's ns per get alone and
# its get/floor (the issue's goal <= 2.2x: 1 PE + the progress thread),
# the median of 4001 such gets timed one by one and its ratio to the floor,
# of rank 0's ns per get with every PE getting, of the mean over all ranks,
# and that get/floor.
# inject: hoistrun -n 2 hoist-oversub-bench --test inject --reps R, in the
# 2pe and 2pe+hog scenarios: min / median / max Mops/s over R rounds (>= 20)
# and how many rounds fell below 20 Mops/s (goal: none), through the daemon
# (every put a descriptor in the ring) and again with --direct (rank 0's
# own stores into rank 1's mapped heap: what run-shmem.sh's nbi row times).
# The load average is printed before and after every scenario, the
# progress thread's and the clients' wait counters (hoistctl stats) after.
# Settings pass through the environment (HOIST_SPIN_US, HOISTD_SPIN_US, ...).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-oversub.sh
build="$repo/build"
reps=7
rounds=22
scenarios="2pe,4pe,2pe+hog,4pe+hog"
orig_args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--scenarios) scenarios=$2; shift 2 ;;
	-h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-oversub.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ "$reps" -ge 7 ] || echo "run-oversub.sh: note: fewer than 7 reps" >&2
[ "$rounds" -ge 20 ] || echo "run-oversub.sh: note: fewer than 20 injection rounds" >&2

bench="$build/bench/hoist-oversub-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
hoistctl="$build/daemon/hoistctl"
if [ ! -x "$bench" ] || [ ! -x "$hoistd" ] || [ ! -x "$hoistrun" ] || [ ! -x "$hoistctl" ]; then
	echo "run-oversub.sh: building in $build" >&2
	cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
	cmake --build "$build" -j2 --target hoist-oversub-bench hoistd hoistrun hoistctl >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoist-oversub.XXXXXX")
dpid=
hog=
cleanup() {
	[ -n "$hog" ] && kill -CONT "$hog" 2>/dev/null && kill -TERM "$hog" 2>/dev/null
	bench_hoistd_stop || true
	rm -rf "$tmp"
}
trap cleanup EXIT

bench_hoistd_start "$hoistd" "$tmp" --log-level warn

load() { cut -d' ' -f1-4 /proc/loadavg; }

# the progress thread's sleeps and yields, the clients' wait counters
# (summed over the job's client rows), as "name=value ..."
counters() {
	"$hoistctl" --runtime-dir "$tmp" stats 2>/dev/null | python3 -c '
import sys, re
want = ("sleeps", "doorbells", "prog_yields", "prog_long_yields", "wait_yields", "wait_long_yields", "wait_sleeps")
tot = {}
for line in sys.stdin:
    for k, v in re.findall(r"^\s+([a-z_]+)\s+([0-9]+)\s*$", line):
        if k in want:
            tot[k] = tot.get(k, 0) + int(v)
print(" ".join("%s=%d" % (k, tot[k]) for k in want if k in tot))
' || true
}

echo "# hoist-oversub-bench on $(bench_cpus), reps=$reps rounds=$rounds, $(date -u +%FT%TZ)"
echo "# settings: HOIST_SPIN_US=${HOIST_SPIN_US:-default} HOISTD_SPIN_US=${HOISTD_SPIN_US:-default} HOIST_YIELD_LONG_US=${HOIST_YIELD_LONG_US:-default} HOISTD_YIELD_LONG_US=${HOISTD_YIELD_LONG_US:-default}"

IFS=, read -r -a list <<<"$scenarios"
for sc in "${list[@]}"; do
	case "$sc" in
	2pe) np=2; withhog=0 ;;
	4pe) np=4; withhog=0 ;;
	2pe+hog) np=2; withhog=1 ;;
	4pe+hog) np=4; withhog=1 ;;
	*) echo "run-oversub.sh: unknown scenario '$sc'" >&2; exit 2 ;;
	esac
	machine_before=$(bench_machine "$build") # without the hog
	hogarg=()
	if [ "$withhog" = 1 ]; then
		bash -c 'while :; do :; done' &
		hog=$!
		hogarg=(--hog "$hog")
	fi
	before=$(load); c0=$(counters)
	HOIST_RUNTIME_DIR=$tmp "$hoistrun" -n "$np" --timeout 600 "$bench" --test get --reps "$reps" \
		"${hogarg[@]}" >"$tmp/get.$sc"
	inj=0
	if [ "$np" = 2 ]; then
		HOIST_RUNTIME_DIR=$tmp "$hoistrun" -n 2 --timeout 600 "$bench" --test inject --reps "$rounds" \
			>"$tmp/inj.$sc"
		# the same puts as the library's direct stores (run-shmem.sh's nbi row)
		HOIST_RUNTIME_DIR=$tmp "$hoistrun" -n 2 --timeout 600 "$bench" --test inject --direct \
			--reps "$rounds" >"$tmp/injd.$sc"
		inj=1
	fi
	after=$(load); c1=$(counters)
	if [ -n "$hog" ]; then
		kill -TERM "$hog"; wait "$hog" 2>/dev/null || true; hog=
	fi
	machine_after=$(bench_machine "$build")
	python3 - "$sc" "$np" "$tmp/get.$sc" "$inj" "$tmp/inj.$sc" "$before" "$after" "$c0" "$c1" \
		"$tmp/injd.$sc" <<'PY'
import sys, statistics as st
sc, np, getf, inj, injf, before, after, c0, c1, injdf = sys.argv[1:]
floor, get0, allr, one, onemed = {}, {}, {}, {}, {}
notes = []
for line in open(getf):
    p = line.split()
    if p[0] == "floor":
        floor[int(p[1])] = float(p[2])
    elif p[0] == "get":
        rank, rep, ns = int(p[1]), int(p[2]), float(p[3])
        allr.setdefault(rep, []).append(ns)
        if rank == 0:
            get0[rep] = ns
    elif p[0] == "get1med":
        onemed[int(p[1])] = float(p[2])
    elif p[0] == "get1":
        one[int(p[1])] = float(p[2])
    elif p[0] == "note":
        notes.append(line.strip())
def mr(v):
    v = sorted(v)
    return "%8.1f [%.1f-%.1f]" % (st.median(v), v[0], v[-1]) if v else "%8s" % "-"
means = [st.mean(v) for _, v in sorted(allr.items())]
ratios = [get0[r] / floor[r] for r in get0 if r in floor and floor[r] > 0]
r1 = [one[r] / floor[r] for r in one if r in floor and floor[r] > 0]
r1m = [onemed[r] / floor[r] for r in onemed if r in floor and floor[r] > 0]
print("## %s  (load before %s, after %s)" % (sc, before, after))
print("   floor (1-line ping-pong, ns rt)    %s" % mr(list(floor.values())))
print("   get 8 B daemon, 1 PE active (ns)   %s" % mr(list(one.values())))
print("   1 PE get / floor (goal <= 2.2x)    %s" % (mr(r1) if r1 else "-"))
print("   1 PE, median single get (ns)       %s" % mr(list(onemed.values())))
print("   1 PE median single get / floor     %s" % (mr(r1m) if r1m else "-"))
print("   get 8 B daemon, all PEs, rank 0    %s" % mr(list(get0.values())))
print("   get 8 B daemon, mean of %s ranks   %s" % (np, mr(means)))
print("   all PEs get / floor (rank 0)       %s" % (mr(ratios) if ratios else "-"))
for n in notes:
    print("   " + n)
if inj == "1":
    for f, what in ((injf, "through the daemon"), (injdf, "direct stores     ")):
        v = sorted(float(l.split()[2]) for l in open(f) if l.startswith("inject "))
        if v:
            low = sum(1 for x in v if x < 20.0)
            print("   put injection 8 B %s (Mops/s), %d rounds: min %.1f median %.1f max %.1f; rounds < 20: %d" %
                  (what, len(v), v[0], st.median(v), v[-1], low))
def parse(s):
    return dict(kv.split("=") for kv in s.split()) if s.strip() else {}
a, b = parse(c0), parse(c1)
if b:
    print("   counters: " + " ".join("%s+%d" % (k, int(b[k]) - int(a.get(k, 0))) for k in b))
PY
	echo "   before: $machine_before"
	echo "   after:  $machine_after"
done
bench_hoistd_stop || { echo "run-oversub.sh: hoistd exited with an error" >&2; exit 1; }
bench_reproduce "${orig_args[@]}"
