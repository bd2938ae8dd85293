#!/usr/bin/env bash
# Slurm Epilog (slurm.conf: Epilog=<prefix>/libexec/hoist/slurm-epilog.sh),
# run by slurmd as root on every node of the job after it ended.
#   systemd mode: nothing to do; hoistd.service keeps serving the node (a
#                 finished job's clients are gone, hoistd frees their regions).
#   direct mode:  forget the job; stop the hoistd that slurm-prolog.sh started
#                 once no other job on this node needs it.
# Same settings file as the prolog (see slurm-prolog.sh, slurm-settings.sh).
# Never fails the epilog (a failing epilog drains the node); problems go to
# syslog and stderr.
set -euo pipefail

job=slurm-${SLURM_JOB_ID:-unknown}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

say() {
	if command -v logger >/dev/null 2>&1; then
		logger -t hoist-slurm-epilog -- "$job: $*" || true
	fi
	printf 'hoist slurm-epilog: %s: %s\n' "$job" "$*" >&2
}

# shellcheck source=deploy/slurm-settings.sh disable=SC1091
if ! source "$here/slurm-settings.sh"; then
	say "$here/slurm-settings.sh is missing; hoistd left as it is"
	exit 0
fi
conf=$(hoist_slurm_conf)
if ! hoist_slurm_load "$conf"; then
	say "cannot use $conf; hoistd left as it is"
	exit 0
fi
hoist_slurm_binaries
mode=${HOIST_SLURM_MODE:-auto}
export HOIST_RUNTIME_DIR=${HOIST_RUNTIME_DIR:-/run/hoist}
node=${HOIST_NODE_SCRIPT:-$here/hoist-node.sh}
[[ -f "$node" ]] || node=/usr/libexec/hoist/hoist-node.sh

if [[ "$mode" == auto ]]; then
	if [[ -d /run/systemd/system ]] && systemctl cat hoistd.service >/dev/null 2>&1; then
		mode=systemd
	else
		mode=direct
	fi
fi

if [[ "$mode" == direct ]]; then
	if ! bash "$node" stop "$job"; then
		say "could not stop hoistd for $job"
	fi
fi
exit 0
