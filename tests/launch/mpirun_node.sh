#!/usr/bin/env bash
# mpirun_node.sh PROG...: Open MPI's mpirun on this node between
# deploy/mpirun-prologue.sh and deploy/mpirun-epilogue.sh, as the README
# says to use them:
#   export HOIST_JOB=...; mpirun-prologue.sh "$HOIST_JOB"
#   mpirun -np 4 -x HOIST_JOB ... PROG; mpirun-epilogue.sh "$HOIST_JOB"
# (HOIST_RUNTIME_DIR is a directory of this test, passed to the ranks with -x,
# so that no other daemon on this machine is touched.)
# Each PROG runs with HOIST_JOB, and once more without it (job key from Open
# MPI). Checks: the prologue started a hoistd; every mpirun exits 0; the
# daemon saw each job's 4 ranks; the epilogue stopped it.
# Exit 77 when mpirun (openmpi-bin, scripts/deps.sh --bench) is missing.
# Binaries: $HOIST_HOISTD, $HOIST_HOISTCTL.
set -u
: "${HOIST_HOISTD:=hoistd}" "${HOIST_HOISTCTL:=hoistctl}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deploy=$(cd "$here/../../deploy" && pwd)
log() { echo "[mpirun_node.sh] $*" >&2; }
fail=0
FAIL() { log "FAIL: $*"; fail=1; }

if ! command -v mpirun >/dev/null 2>&1; then
	log "SKIP: mpirun is missing (openmpi-bin, see scripts/deps.sh)"
	exit 77
fi
BASE=$(mktemp -d /tmp/hoist-mpirun-node.XXXXXX) || exit 1
show_log=0
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p
	p=$(cat "$BASE/run/hoistd.pid" 2>/dev/null) &&
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = hoistd ] && kill -KILL "$p" 2>/dev/null
	if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
		echo "----- hoistd log (last 40 lines) -----" >&2
		tail -n 40 "$BASE/run/hoistd.log" >&2 2>/dev/null
	fi
	rm -rf "$BASE"
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

export HOIST_RUNTIME_DIR=$BASE/run HOISTD=$HOIST_HOISTD HOISTCTL=$HOIST_HOISTCTL
export HOIST_JOB=mpirun-node-$$
if ! bash "$deploy/mpirun-prologue.sh" "$HOIST_JOB"; then
	FAIL "mpirun-prologue.sh failed"
	show_log=1
	exit 1
fi
pid=$(cat "$BASE/run/hoistd.pid" 2>/dev/null)
[ "$(cat "/proc/${pid:-0}/comm" 2>/dev/null)" = hoistd ] || FAIL "the prologue did not start a hoistd"

# shellcheck disable=SC2054 # the commas are Open MPI's lists
mpi=(mpirun -np 4 --allow-run-as-root --oversubscribe --mca btl self,vader,tcp -x HOIST_RUNTIME_DIR)
jobs=0
for prog in "$@"; do
	name=$(basename "$prog")
	for how in "-x HOIST_JOB" "no HOIST_JOB"; do
		if [ "$how" = "-x HOIST_JOB" ]; then
			cmd=("${mpi[@]}" -x HOIST_JOB "$prog")
		else
			cmd=(env -u HOIST_JOB "${mpi[@]}" "$prog")
		fi
		log "run: ${cmd[*]}"
		out=$(timeout -k 10 150 "${cmd[@]}" 2>&1)
		st=$?
		printf '%s\n' "$out" | sed "s/^/[$name] /" >&2
		jobs=$((jobs + 1))
		[ "$st" -eq 0 ] || { FAIL "mpirun $name ($how) exited with status $st"; show_log=1; }
	done
done
n=$(grep -c 'all 4 ranks attached (4 here)' "$BASE/run/hoistd.log")
[ "$n" -eq "$jobs" ] || FAIL "the daemon saw $n of $jobs jobs with 4 ranks attached"
n=$(grep -c "job $HOIST_JOB: all 4 ranks attached" "$BASE/run/hoistd.log")
[ "$n" -eq "$#" ] || FAIL "$n of $# jobs ran under HOIST_JOB=$HOIST_JOB"

bash "$deploy/mpirun-epilogue.sh" "$HOIST_JOB" || FAIL "mpirun-epilogue.sh failed"
if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = hoistd ] &&
	[ "$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; then
	FAIL "hoistd (pid $pid) still runs after the epilogue"
fi
[ "$fail" = 0 ] && log "PASS" || show_log=1
exit "$fail"
