#!/usr/bin/env bash
# bench/compare.sh - old against new, side by side in one run: builds two
# revisions and runs the same benchmarks on both, interleaved, then prints
# one table (bench/compare.py) with the reproducing command.
#
#   bash bench/compare.sh --old REV [--new REV] [--rounds R] [--reps N]
#                         [--scale F] [--scripts "run nodes kernels"] [--keep DIR]
#
# --old/--new: any git revision (--new default: the working tree as it is,
# built in build-compare/ of this checkout). Each revision is checked out
# with `git worktree add --detach` under the --keep directory (default: a
# temporary one) and built there with its own scripts/build.sh (tests off).
# Each of R rounds (default 3) runs every script once per side, old first
# in odd rounds and new first in even ones, so drift on a shared machine
# hits both alike; each side uses its own bench scripts and build:
#   run      bench/run.sh --json --reps N          (one node, 2 and 4 PEs)
#   nodes    bench/run-nodes.sh --json --reps N    (2 daemons on loopback)
#   kernels  bench/run-kernels.sh --reps N --no-fig5 --keep ...
# A row's value per round is that round's median; the table shows the
# median over rounds and their min-max per side, new/old, and "same" when
# new lies within old's min-max, else "better" or "WORSE". --scale goes to
# run.sh and run-nodes.sh (their iteration counts; default: theirs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old= new= rounds=3 reps=5 scripts="run nodes kernels" keep= scale=()
orig_args=("$@")
usage() { sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--old) old=$2; shift 2 ;;
	--new) new=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scripts) scripts=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--scale) scale=(--scale "$2"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "compare.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
[ -n "$old" ] || { echo "compare.sh: --old REV is required (--help)" >&2; exit 2; }
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	work=$(cd "$keep" && pwd)
else
	work=$(mktemp -d /tmp/hoist-compare.XXXXXX)
fi
trees=()
cleanup() {
	for t in "${trees[@]}"; do git -C "$repo" worktree remove --force "$t" >/dev/null 2>&1 || true; done
	[ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# checkout SIDE REV: prints the source tree of REV (the working tree if empty)
checkout() {
	if [ -z "$2" ]; then
		echo "$repo"
		return
	fi
	local t="$work/src-$1"
	rm -rf "$t"
	git -C "$repo" worktree add -q --detach "$t" "$2" >&2
	echo "$t"
}
build() { # build SRC DIR
	echo "compare.sh: building $1 in $2" >&2
	JOBS=${JOBS:-2} bash "$1/scripts/build.sh" "$2" -DBUILD_TESTING=OFF >/dev/null
}
src_old=$(checkout old "$old")
[ -z "$old" ] || trees+=("$src_old") # (checkout runs in a subshell)
src_new=$(checkout new "$new")
[ -z "$new" ] || trees+=("$src_new")
bld_old="$work/build-old"
if [ -z "$new" ]; then bld_new="$repo/build-compare"; else bld_new="$work/build-new"; fi
build "$src_old" "$bld_old"
build "$src_new" "$bld_new"
rev_old=$(git -C "$src_old" rev-parse --short HEAD)
rev_new=$(git -C "$src_new" rev-parse --short HEAD)$([ -z "$new" ] && ! git -C "$repo" diff --quiet HEAD && echo "+dirty" || true)

run_one() { # run_one SIDE ROUND SCRIPT
	local side=$1 r=$2 s=$3 src bld
	if [ "$side" = old ]; then src=$src_old bld=$bld_old; else src=$src_new bld=$bld_new; fi
	echo "compare.sh: round $r $side $s" >&2
	case $s in
	run) bash "$src/bench/run.sh" --build "$bld" --reps "$reps" "${scale[@]}" --json >"$work/run.$side.$r.json" ;;
	nodes) bash "$src/bench/run-nodes.sh" --build "$bld" --reps "$reps" "${scale[@]}" --json --no-plot \
		>"$work/nodes.$side.$r.json" ;;
	kernels) bash "$src/bench/run-kernels.sh" --build "$bld" --reps "$reps" --no-fig5 --no-plot \
		--keep "$work/kernels.$side.$r" >/dev/null ;;
	*) echo "compare.sh: unknown script $s" >&2; return 2 ;;
	esac
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then sides="old new"; else sides="new old"; fi
	for s in $scripts; do
		for side in $sides; do
			run_one "$side" "$r" "$s" || echo "compare.sh: round $r $side $s failed" >&2
		done
	done
done
echo "# old $rev_old against new $rev_new, $rounds rounds x $reps reps, $(nproc) CPUs," \
	"load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$repo/bench/compare.py" "$work"
printf 'reproduce: bash bench/compare.sh'; printf ' %q' "${orig_args[@]}"; echo
