#!/usr/bin/env bash
# mpirun prologue: before an mpirun job, make sure a hoistd answers for this
# user on this node; start a per-user one if none does.
#
#   mpirun-prologue.sh [JOB]       JOB defaults to $HOIST_JOB, else "mpirun"
#
# Runs as the user who runs the job. The daemon's runtime directory is
# $HOIST_RUNTIME_DIR, else the per-user default ($XDG_RUNTIME_DIR/hoist or
# /tmp/hoist-<uid>), which is also where libhoist looks by default.
# Typical use on one node:
#   export HOIST_JOB=myjob-$$
#   deploy/mpirun-prologue.sh "$HOIST_JOB"
#   mpirun -np 4 -x HOIST_JOB ./app
#   deploy/mpirun-epilogue.sh "$HOIST_JOB"
# The epilogue stops the daemon only if this prologue started it.
# See deploy/hoist-node.sh for the environment it honours (HOISTD, HOISTCTL, ...).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node=${HOIST_NODE_SCRIPT:-$here/hoist-node.sh}
[[ -f "$node" ]] || node=/usr/libexec/hoist/hoist-node.sh

exec bash "$node" start "${1:-${HOIST_JOB:-mpirun}}"
