#!/usr/bin/env bash
# Slurm TaskProlog (slurm.conf: TaskProlog=<prefix>/libexec/hoist/slurm-taskprolog.sh),
# run as the job's user before each task; "export NAME=value" lines on stdout
# become the task's environment. Points libhoist at the node daemon: the
# HOIST_RUNTIME_DIR of the settings file the prolog reads (see
# slurm-prolog.sh), default /run/hoist, unless the user chose another one.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
say() { printf 'hoist slurm-taskprolog: %s\n' "$*" >&2; }
if [[ -z "${HOIST_RUNTIME_DIR:-}" ]]; then
	# (the settings file must be readable by the jobs' users)
	# shellcheck source=deploy/slurm-settings.sh disable=SC1091
	if source "$here/slurm-settings.sh" 2>/dev/null; then
		hoist_slurm_load "$(hoist_slurm_conf)" || true
	fi
	echo "export HOIST_RUNTIME_DIR=${HOIST_RUNTIME_DIR:-/run/hoist}"
fi
