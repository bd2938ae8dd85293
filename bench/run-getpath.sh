#!/usr/bin/env bash
# bench/run-getpath.sh - the 8 B get through the daemon (HOIST_DIRECT=0),
# one PE active, of two builds interleaved rep by rep (issue 16, the ring
# protocol: bench/README.md "The ring protocol change").
#
#   bash bench/run-getpath.sh --base DIR [--build DIR] [--reps N] [--pin]
#
# Each of N reps (default 7) runs, for the base build (e.g. main's) and
# this one, in turn and alternating which goes first: a private hoistd of
# that build and `hoistrun -n 2 hoist-oversub-bench --test get --reps 1`
# (bench/oversub_bench.c: the 1-line ping-pong floor, then rank 0's 8 B
# gets while rank 1 waits in a barrier: their mean over ~30 ms, "get1",
# and the median of 4001 timed one by one, "get1med"). With --pin each
# build runs once more per rep with its hoistd on CPU 1 and the PEs on
# CPU 0 (taskset): the PE and the progress thread on two CPUs of their
# own, so the scheduler's placement (the ~1.4 us shared-CPU mode) is out
# of the numbers; the floor is not measured there (it needs two CPUs).
# Printed per build: median [min-max] over the reps of the floor, get1,
# get1med and get1med / floor of the same rep (the issue's goal <= 2.2x),
# and with --pin the pinned get1med; the load average before and after;
# the reproducing command.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
base=
reps=7
pin=0
orig_args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--base) base=$(cd "$2" && pwd); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--pin) pin=1; shift ;;
	-h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-getpath.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$base" ] || { echo "run-getpath.sh: --base DIR (the other build) is required" >&2; exit 2; }
case "$reps" in '' | *[!0-9]* | 0) echo "run-getpath.sh: --reps must be a positive integer" >&2; exit 2 ;; esac
[ "$reps" -ge 7 ] || echo "run-getpath.sh: note: fewer than 7 reps" >&2
for b in "$base" "$build"; do
	for f in bench/hoist-oversub-bench daemon/hoistd launcher/hoistrun; do
		[ -x "$b/$f" ] || { echo "run-getpath.sh: $b/$f is missing (build it first)" >&2; exit 1; }
	done
done
if [ "$pin" = 1 ] && [ "$(nproc)" -lt 2 ]; then
	echo "run-getpath.sh: --pin needs 2 CPUs" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoist-getpath.XXXXXX")
dpid=
cleanup() {
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# one_run BUILD OUT PIN: a fresh hoistd of BUILD, one rep of the get test
one_run() {
	local b=$1 out=$2 p=$3 dcpu=() pcpu=()
	if [ "$p" = 1 ]; then
		dcpu=(taskset -c 1)
		pcpu=(taskset -c 0)
	fi
	local rt="$tmp/rt"
	rm -rf "$rt"
	mkdir "$rt"
	mkfifo "$rt/ready"
	"${dcpu[@]}" "$b/daemon/hoistd" --runtime-dir "$rt" --log-level warn --ready-fd 3 \
		3>"$rt/ready" </dev/null 2>"$rt/hoistd.log" &
	dpid=$!
	read -r -t 10 _ <"$rt/ready" || { echo "run-getpath.sh: hoistd did not start" >&2; cat "$rt/hoistd.log" >&2; exit 1; }
	HOIST_DIRECT=0 HOIST_RUNTIME_DIR=$rt "${pcpu[@]}" "$b/launcher/hoistrun" -n 2 --timeout 300 \
		"$b/bench/hoist-oversub-bench" --test get --reps 1 >>"$out"
	kill -TERM "$dpid"
	wait "$dpid" || { echo "run-getpath.sh: hoistd of $b exited with an error" >&2; exit 1; }
	dpid=
}

load() { cut -d' ' -f1-4 /proc/loadavg; }
echo "# run-getpath on $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), reps=$reps pin=$pin, $(date -u +%FT%TZ)"
echo "# base: $base"
echo "# this: $build"
before=$(load)
for r in $(seq 0 $((reps - 1))); do
	if [ $((r % 2)) = 0 ]; then order="base this"; else order="this base"; fi
	for side in $order; do
		b=$build
		[ "$side" = base ] && b=$base
		echo "rep $r" >>"$tmp/$side.out"
		one_run "$b" "$tmp/$side.out" 0
		if [ "$pin" = 1 ]; then
			echo "rep $r" >>"$tmp/$side.pin"
			one_run "$b" "$tmp/$side.pin" 1
		fi
	done
done
after=$(load)

python3 - "$tmp" "$pin" "$before" "$after" <<'PY'
import sys, os, statistics as st
tmp, pin, before, after = sys.argv[1:]
def parse(path):
    reps, cur = [], None
    if not os.path.exists(path):
        return reps
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "rep":
            cur = {}
            reps.append(cur)
        elif p[0] == "floor":
            cur["floor"] = float(p[2])
        elif p[0] == "get1":
            cur["get1"] = float(p[2])
        elif p[0] == "get1med":
            cur["get1med"] = float(p[2])
    return reps
def mr(v):
    v = sorted(v)
    return "%7.1f [%.1f-%.1f]" % (st.median(v), v[0], v[-1]) if v else "%7s" % "-"
print("load before %s, after %s" % (before, after))
print("%-5s | %-22s | %-24s | %-24s | %-18s | %s" % ("build", "floor ns (1 line rt)", "get1 ns (mean, 30 ms)",
      "get1med ns (median of 4001)", "get1med / floor", "pinned get1med ns" if pin == "1" else ""))
res = {}
for side in ("base", "this"):
    reps = parse(os.path.join(tmp, side + ".out"))
    pinned = parse(os.path.join(tmp, side + ".pin"))
    fl = [r["floor"] for r in reps if "floor" in r]
    g1 = [r["get1"] for r in reps if "get1" in r]
    gm = [r["get1med"] for r in reps if "get1med" in r]
    ra = [r["get1med"] / r["floor"] for r in reps if "get1med" in r and r.get("floor")]
    pm = [r["get1med"] for r in pinned if "get1med" in r]
    res[side] = (gm, pm)
    print("%-5s | %s | %s | %s | %s | %s" % (side, mr(fl), mr(g1), mr(gm), mr(ra), mr(pm) if pin == "1" else ""))
if res["base"][0] and res["this"][0]:
    print("this / base, get1med medians: %.2f" % (st.median(res["this"][0]) / st.median(res["base"][0])))
if pin == "1" and res["base"][1] and res["this"][1]:
    print("this / base, pinned get1med medians: %.2f" % (st.median(res["this"][1]) / st.median(res["base"][1])))
PY
printf 'reproduce: bash bench/run-getpath.sh'
printf ' %q' "${orig_args[@]}"
echo