#!/usr/bin/env bash
# Configure and build hoist.
#
#   bash scripts/build.sh [BUILD_DIR] [extra cmake args...]
#
# BUILD_DIR defaults to "build" (relative to the repository root). Extra
# arguments go to the configure step, e.g.
#   bash scripts/build.sh build-asan -DHOIST_SANITIZE=ON
# Set JOBS to change the build parallelism (default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build_dir=${1:-build}
if (($# > 0)); then
	shift
fi

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build_dir" -j"${JOBS:-2}"
