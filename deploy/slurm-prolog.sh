#!/usr/bin/env bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/hoist/slurm-prolog.sh), run by
# slurmd as root on every node of the job before it starts. Makes sure the
# node's hoistd answers in /run/hoist.
#
# HOIST_SLURM_MODE (set in slurmd's environment, or edit the default below):
#   auto     systemd when hoistd.service is installed and systemd runs, else direct
#   systemd  systemctl start hoistd.service (a no-op when it runs); the epilog
#            leaves the service running
#   direct   start hoistd as root in /run/hoist through hoist-node.sh when none
#            answers; the epilog stops it after the last job that needed it
# HOIST_SLURM_STRICT=1: fail the prolog (Slurm then drains the node and requeues
#   the job) when no hoistd can be started. Default 0: log the problem and let
#   the job run; its hoist_init() will fail with -ENOENT.
#
# Jobs run as their users, whose libhoist looks in a per-user directory by
# default: give tasks HOIST_RUNTIME_DIR=/run/hoist (see slurm-taskprolog.sh).
set -euo pipefail

mode=${HOIST_SLURM_MODE:-auto}
strict=${HOIST_SLURM_STRICT:-0}
job=slurm-${SLURM_JOB_ID:-unknown}
export HOIST_RUNTIME_DIR=${HOIST_RUNTIME_DIR:-/run/hoist}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node=${HOIST_NODE_SCRIPT:-$here/hoist-node.sh}
[[ -f "$node" ]] || node=/usr/libexec/hoist/hoist-node.sh

say() {
	if command -v logger >/dev/null 2>&1; then
		logger -t hoist-slurm-prolog -- "$job: $*" || true
	fi
	printf 'hoist slurm-prolog: %s: %s\n' "$job" "$*" >&2
}

if [[ "$mode" == auto ]]; then
	if [[ -d /run/systemd/system ]] && systemctl cat hoistd.service >/dev/null 2>&1; then
		mode=systemd
	else
		mode=direct
	fi
fi

rc=0
case "$mode" in
systemd)
	# Type=notify: start returns once hoistd has sent READY=1.
	systemctl start hoistd.service || rc=$?
	;;
direct)
	bash "$node" start "$job" || rc=$?
	;;
*)
	say "unknown HOIST_SLURM_MODE '$mode' (auto | systemd | direct)"
	rc=2
	;;
esac

if ((rc != 0)); then
	say "no hoistd for this job (mode $mode, status $rc)"
	if [[ "$strict" == 1 ]]; then
		exit 1
	fi
fi
exit 0
