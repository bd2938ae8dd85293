#!/usr/bin/env bash
# Install the Debian 12 packages hoist needs to build and test, but only those
# that are missing. Runs apt-get update only when something must be installed.
# Works as root, or through sudo when that is available.
#
#   bash scripts/deps.sh            install what is missing
#   bash scripts/deps.sh --check    only report; exit 1 if something is missing
#   bash scripts/deps.sh --bench    also what the benchmarks compare against
#                                   (Open MPI, UCX, perftest) and plot with
#                                   (gnuplot-nox: bench/plot.py); --check --bench
set -euo pipefail

PACKAGES=(
	build-essential cmake pkg-config
	libibverbs-dev librdmacm-dev
	libevent-dev libprotobuf-c-dev protobuf-c-compiler
	check libsodium-dev
	clang libclang-rt-14-dev
	iproute2 python3
	# tests/integration/it_metrics.py: hoistctl metrics through a real
	# Prometheus text parser (it_stats_output skips without it)
	python3-prometheus-client
	# tests/launch: the launchers for real (mpirun on one node and across
	# network namespaces; a private slurmctld + slurmd + munged). The Slurm
	# daemons' units need /etc/slurm/slurm.conf, which the tests never
	# write: installing them starts nothing.
	openmpi-bin slurmctld slurmd slurm-client munge
)
# The references the benchmarks in bench/ measure side by side, and gnuplot
# (no X11) for the SVG plots the bench/ scripts write next to their tables.
BENCH_PACKAGES=(libopenmpi-dev ucx-utils perftest gnuplot-nox)

check_only=0
for arg in "$@"; do
	case "$arg" in
	--check) check_only=1 ;;
	--bench) PACKAGES+=("${BENCH_PACKAGES[@]}") ;;
	-h | --help)
		sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "deps.sh: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: dpkg-query not found; this script knows Debian/Ubuntu only." >&2
	echo "deps.sh: install by hand: ${PACKAGES[*]}" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	if [[ "$status" != installed ]]; then
		missing+=("$p")
	fi
done

if ((${#missing[@]} == 0)); then
	echo "deps.sh: all ${#PACKAGES[@]} packages are installed"
	exit 0
fi

echo "deps.sh: missing: ${missing[*]}"
if ((check_only)); then
	exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1; then
	as_root=(sudo)
else
	echo "deps.sh: not root and no sudo; ask an administrator to install: ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "deps.sh: installed ${missing[*]}"
