#!/usr/bin/env bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/hoist/slurm-epilog.sh), run by
# slurmd as root on every node of the job after it ended.
#   systemd mode: nothing to do; hoistd.service keeps serving the node (a
#                 finished job's clients are gone, hoistd frees their regions).
#   direct mode:  forget the job; stop the hoistd that slurm-prolog.sh started
#                 once no other job on this node needs it.
# Same HOIST_SLURM_MODE as the prolog. Never fails the epilog (a failing epilog
# drains the node); problems go to syslog and stderr.
set -euo pipefail

mode=${HOIST_SLURM_MODE:-auto}
job=slurm-${SLURM_JOB_ID:-unknown}
export HOIST_RUNTIME_DIR=${HOIST_RUNTIME_DIR:-/run/hoist}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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
		msg="could not stop hoistd for $job"
		if command -v logger >/dev/null 2>&1; then
			logger -t hoist-slurm-epilog -- "$msg" || true
		fi
		echo "hoist slurm-epilog: $msg" >&2
	fi
fi
exit 0
