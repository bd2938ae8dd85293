#!/usr/bin/env bash
# mpirun epilogue: after an mpirun job, stop the per-user hoistd that
# mpirun-prologue.sh started for it, unless another job still uses it.
# A daemon the prologue did not start (already running before) is left alone.
#
#   mpirun-epilogue.sh [JOB]       JOB as given to the prologue
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node=${HOIST_NODE_SCRIPT:-$here/hoist-node.sh}
[[ -f "$node" ]] || node=/usr/libexec/hoist/hoist-node.sh

exec bash "$node" stop "${1:-${HOIST_JOB:-mpirun}}"
