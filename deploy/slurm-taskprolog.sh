#!/usr/bin/env bash
# Slurm TaskProlog (slurm.conf: TaskProlog=/etc/slurm/hoist/slurm-taskprolog.sh),
# run as the job's user before each task; "export NAME=value" lines on stdout
# become the task's environment. Points libhoist at the node daemon in
# /run/hoist unless the user chose another one.
if [[ -z "${HOIST_RUNTIME_DIR:-}" ]]; then
	echo "export HOIST_RUNTIME_DIR=/run/hoist"
fi
