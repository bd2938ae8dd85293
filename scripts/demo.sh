#!/usr/bin/env bash
# The main command: install what is missing, build, start a private hoistd,
# run a 4-PE demo job through it, show the daemon's counters, stop it.
#
#   bash scripts/demo.sh
#
# Environment:
#   BUILD_DIR        build directory (default: build)
#   HOIST_DEMO_NP    number of PEs (default: 4)
#   HOIST_DEMO_WORDS words per array moved by the demo (default: the demo's 1024)
#   HOIST_SKIP_DEPS  1: do not run scripts/deps.sh
#   HOIST_SKIP_BUILD 1: use the existing build as it is
# The daemon runs in a fresh temporary runtime directory, so it never
# touches a hoistd that may already run on this machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build_dir=${BUILD_DIR:-build}
np=${HOIST_DEMO_NP:-4}
ready_timeout=20 # seconds for hoistd to listen
job_timeout=120  # seconds for the whole demo job

say() { printf '\n== %s\n' "$*"; }
die() {
	printf 'demo.sh: %s\n' "$*" >&2
	exit 1
}

if [[ "${HOIST_SKIP_DEPS:-0}" != 1 ]]; then
	say "dependencies"
	bash scripts/deps.sh
fi
if [[ "${HOIST_SKIP_BUILD:-0}" != 1 ]]; then
	say "build ($build_dir)"
	bash scripts/build.sh "$build_dir"
fi

hoistd=$build_dir/daemon/hoistd
hoistctl=$build_dir/daemon/hoistctl
hoistrun=$build_dir/launcher/hoistrun
demo=$build_dir/client/hoist-demo
for bin in "$hoistd" "$hoistctl" "$hoistrun" "$demo"; do
	[[ -x "$bin" ]] || die "$bin was not built"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoist-demo.XXXXXX")
rundir=$tmp/run
log=$tmp/hoistd.log
daemon_pid=

show_log() {
	if [[ -s "$log" ]]; then
		printf '\n-- hoistd log (%s) --\n' "$1"
		sed 's/^/  /' "$log"
	fi
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$daemon_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$daemon_pid" 2>/dev/null; then
			echo "demo.sh: hoistd did not stop on SIGTERM, killing it" >&2
			kill -KILL "$daemon_pid" 2>/dev/null || true
		fi
		wait "$daemon_pid" 2>/dev/null || true
	fi
	if ((rc != 0)); then
		show_log "last lines" | tail -n 40 >&2
		echo "demo.sh: FAILED (exit $rc)" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "start hoistd (runtime dir $rundir)"
# hoistd writes "READY" to --ready-fd once both sockets listen. The FIFO is
# opened read-write here so that neither side blocks in open(); the daemon
# gets only the write end (fd 4), not our fd 3.
mkfifo "$tmp/ready"
exec 3<>"$tmp/ready"
"$hoistd" --runtime-dir "$rundir" --ready-fd 4 4>"$tmp/ready" 3<&- 2>"$log" &
daemon_pid=$!
ready=
for ((waited = 0; waited < ready_timeout; waited++)); do
	if read -r -t 1 -u 3 ready; then
		break
	fi
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		rc=0
		wait "$daemon_pid" || rc=$?
		daemon_pid=
		exec 3<&-
		die "hoistd exited (status $rc) before it was ready"
	fi
done
exec 3<&-
[[ "$ready" == READY ]] || die "hoistd did not report READY within ${ready_timeout}s"
echo "hoistd pid $daemon_pid is ready"

say "run: hoistrun -n $np --runtime-dir $rundir $demo"
demo_args=()
if [[ -n "${HOIST_DEMO_WORDS:-}" ]]; then
	demo_args+=("$HOIST_DEMO_WORDS")
fi
rc=0
"$hoistrun" -n "$np" --runtime-dir "$rundir" --timeout "$job_timeout" -- \
	"$demo" "${demo_args[@]}" || rc=$?
((rc == 0)) || die "the demo job failed (hoistrun exit $rc)"

say "hoistctl --runtime-dir $rundir stats"
"$hoistctl" --runtime-dir "$rundir" stats || die "hoistctl stats failed"

say "stop hoistd (SIGTERM)"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=
((rc == 0)) || die "hoistd exited with status $rc after SIGTERM (expected 0)"
echo "hoistd exited with status 0"
show_log "complete"

say "run across nodes: hoistrun -n $np --nodes 2 $demo"
# two more daemons on loopback stand for two nodes (own runtime directory
# and port each, a fresh cluster key); hoistrun stops them afterwards and
# fails if either did not exit cleanly
rc=0
"$hoistrun" -n "$np" --nodes 2 --hoistd "$hoistd" --timeout "$job_timeout" -- \
	"$demo" "${demo_args[@]}" || rc=$?
((rc == 0)) || die "the two-node demo job failed (hoistrun exit $rc)"

say "automatic overlap: kernels blocking (HOIST_AUTO=0) vs auto (HOIST_AUTO=1) vs manual nbi, 2 daemons x 2 PEs"
# a short run of bench/run-kernels.sh (3 repetitions; bench/README.md has the
# full one): same binaries, checksums must agree across the three variants
rc=0
bash bench/run-kernels.sh --reps "${HOIST_DEMO_REPS:-3}" --no-fig5 --build "$build_dir" || rc=$?
((rc == 0)) || die "the kernels run failed (exit $rc)"

say "demo passed: $np PEs through one hoistd, $np PEs over two hoistd nodes, and the overlap kernels"
