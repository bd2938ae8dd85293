#!/usr/bin/env bash
# Slurm Prolog (slurm.conf: Prolog=<prefix>/libexec/hoist/slurm-prolog.sh),
# run by slurmd as root on every node of the job before it starts. Makes sure
# the node's hoistd answers in the runtime directory (default /run/hoist).
#
# slurmd runs prologs with an environment of its own (PATH=/usr/sbin:/usr/bin:..,
# the SLURM_* variables, nothing of slurmd's environment), so the settings
# come from a file, the first of:
#   $HOIST_SLURM_CONF                 (only when run by hand)
#   hoist-slurm.conf next to this script (a copy of the scripts kept with
#                                     its own settings, e.g. by a test)
#   /etc/hoist/slurm.conf
# in shell-variable form: NAME=value lines, '#' comments, no other shell
# syntax (the file is parsed, not run; it must be owned by root and not
# writable by others). Names (all optional):
#   HOIST_SLURM_MODE    auto (default): systemd when hoistd.service is installed
#                       and systemd runs, else direct
#                       systemd: systemctl start hoistd.service (a no-op when
#                       it runs); the epilog leaves the service running
#                       direct: start hoistd as root in HOIST_RUNTIME_DIR
#                       through hoist-node.sh when none answers; the epilog
#                       stops it after the last job that needed it
#   HOIST_SLURM_STRICT  1 (default): no hoistd -> the prolog fails (exit 1,
#                       message on stderr, in syslog and in slurmd's log);
#                       Slurm does not start the job and drains the node.
#                       0: log the problem and let the job start anyway; its
#                       hoist_init() then fails with -ENOENT
#   HOIST_RUNTIME_DIR   the daemon's runtime directory (default /run/hoist);
#                       slurm-taskprolog.sh gives it to the tasks
#   HOISTD, HOISTCTL    the binaries (default: <prefix>/sbin/hoistd and
#                       <prefix>/bin/hoistctl for the prefix this script is
#                       installed in, <prefix>/libexec/hoist/, else PATH)
#   HOISTD_ARGS         extra hoistd arguments (default none: hoistd reads
#                       /etc/hoist/hoistd.conf), HOIST_START_TIMEOUT,
#                       HOIST_STOP_TIMEOUT, HOIST_NODE_SCRIPT: see hoist-node.sh
set -euo pipefail

job=slurm-${SLURM_JOB_ID:-unknown}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

say() {
	if command -v logger >/dev/null 2>&1; then
		logger -t hoist-slurm-prolog -- "$job: $*" || true
	fi
	printf 'hoist slurm-prolog: %s: %s\n' "$job" "$*" >&2
}

# shellcheck source=deploy/slurm-settings.sh disable=SC1091
if ! source "$here/slurm-settings.sh"; then
	say "$here/slurm-settings.sh is missing; no hoistd for this job"
	exit 1
fi

conf=$(hoist_slurm_conf)
if ! hoist_slurm_load "$conf"; then
	say "cannot use $conf; no hoistd for this job"
	exit 1 # a broken settings file is never ignored
fi
hoist_slurm_binaries
mode=${HOIST_SLURM_MODE:-auto}
strict=${HOIST_SLURM_STRICT:-1}
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

rc=0
case "$mode" in
systemd)
	# Type=notify: start returns once hoistd has sent READY=1.
	systemctl start hoistd.service || rc=$?
	;;
direct)
	if [[ -n "${HOISTD:-}" && ! -x "$HOISTD" ]]; then
		say "HOISTD=$HOISTD is not an executable file"
		rc=1
	else
		bash "$node" start "$job" || rc=$?
	fi
	;;
*)
	say "unknown HOIST_SLURM_MODE '$mode' in $conf (auto | systemd | direct)"
	rc=2
	;;
esac

if ((rc != 0)); then
	if [[ "$strict" == 0 ]]; then
		say "no hoistd for this job (mode $mode, status $rc, settings $conf); starting it anyway (HOIST_SLURM_STRICT=0)"
		exit 0
	fi
	say "no hoistd for this job (mode $mode, status $rc, settings $conf); failing the prolog"
	exit 1
fi
exit 0
