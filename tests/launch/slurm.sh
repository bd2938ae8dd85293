#!/usr/bin/env bash
# slurm.sh PROG: Slurm for real on this node. The test generates a
# configuration in a temporary directory and starts munged, slurmctld and
# slurmd from it inside a network namespace of its own (loopback only: its
# ports touch nothing else on the machine). Prolog, TaskProlog and Epilog
# are the deploy scripts, installed as `cmake --install` lays them out
# (<prefix>/libexec/hoist/ next to <prefix>/sbin/hoistd, <prefix>/bin/hoistctl)
# with their settings in hoist-slurm.conf next to them (slurmd gives the
# scripts none of its environment; a site uses /etc/hoist/slurm.conf).
#
#   1. success: `srun -n 4 PROG` passes; the prolog found hoistd through the
#      install prefix, started it in the settings' runtime directory, the
#      task prolog pointed every task there, the daemon saw the job's 4 ranks
#      under the key slurm-<job>.<step>, and the epilog stopped it.
#   2. failure: with HOISTD naming a missing binary the prolog fails: srun
#      exits non-zero, no task ever ran, slurmd's log has the prolog's message.
#
# Exit 77 (with the reason) when not root, when the Slurm or munge packages
# are missing (scripts/deps.sh installs them), when network namespaces cannot
# be made, or when the Slurm daemons cannot start here (their logs follow).
set -u
prog=$1
: "${HOIST_HOISTD:=hoistd}" "${HOIST_HOISTCTL:=hoistctl}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deploy=$(cd "$here/../../deploy" && pwd)
log() { echo "[slurm.sh] $*" >&2; }
fail=0
FAIL() { log "FAIL: $*"; fail=1; }
SKIP() { log "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || SKIP "slurmd must run as root (it starts jobs as their users)"
for c in slurmctld slurmd srun sinfo scontrol munged ip nsenter; do
	command -v "$c" >/dev/null 2>&1 ||
		SKIP "'$c' is missing (Debian: slurmctld slurmd slurm-client munge iproute2; scripts/deps.sh)"
done

T=
NS=hoist-slurm-$$
show_log=0
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local f p
	if [ -n "$T" ]; then
		for f in slurmd.pid slurmctld.pid munge/munged.pid run/hoistd.pid; do
			p=$(cat "$T/$f" 2>/dev/null) || continue
			[[ "$p" =~ ^[0-9]+$ ]] && kill -TERM "$p" 2>/dev/null
		done
		sleep 0.5
		for f in slurmd.pid slurmctld.pid munge/munged.pid run/hoistd.pid; do
			p=$(cat "$T/$f" 2>/dev/null) || continue
			[[ "$p" =~ ^[0-9]+$ ]] && kill -KILL "$p" 2>/dev/null
		done
		if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
			for f in slurmctld.log slurmd.log munge/munged.log run/hoistd.log; do
				[ -s "$T/$f" ] || continue
				echo "----- $f (last 30 lines) -----" >&2
				tail -n 30 "$T/$f" >&2
			done
		fi
	fi
	ip netns del "$NS" 2>/dev/null
	[ -n "$T" ] && rm -rf "$T"
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

if ! err=$(ip netns add "$NS" 2>&1); then
	SKIP "cannot create a network namespace (ip netns add: $err)"
fi
# lo, and one more address: with loopback only, getaddrinfo(AI_ADDRCONFIG)
# finds nothing and the Slurm daemons cannot bind their ports (a veth pair
# with both ends in the namespace: the dummy driver is not always there)
if ! err=$(ip -n "$NS" link set lo up 2>&1 && ip -n "$NS" link add hs0 type veth peer name hs1 2>&1 &&
	ip -n "$NS" addr add 192.0.2.10/24 dev hs0 2>&1 && ip -n "$NS" link set hs0 up 2>&1 &&
	ip -n "$NS" link set hs1 up 2>&1); then
	SKIP "cannot set up the network namespace's interfaces: $err"
fi
# nsenter, not `ip netns exec`: that remounts /sys, and slurmd wants the
# host's /sys/fs/cgroup (it initialises its cgroup plugin even when no
# plugin it runs uses cgroups)
in_ns() { nsenter --net="/run/netns/$NS" -- "$@"; }

# world-searchable: slurmd, slurmstepd and the task prolog read from here
T=$(mktemp -d /tmp/hoist-slurm.XXXXXX) || exit 1
chmod 0755 "$T"
mkdir -p "$T/state" "$T/spool" "$T/munge" "$T/prefix/sbin" "$T/prefix/bin" "$T/prefix/libexec/hoist"
chmod 0755 "$T/munge" # the socket is for every user; the key is 0400

# ---- hoist "installed" under $T/prefix, settings next to the scripts -----------
for f in slurm-prolog.sh slurm-epilog.sh slurm-taskprolog.sh slurm-settings.sh hoist-node.sh; do
	install -m 0755 "$deploy/$f" "$T/prefix/libexec/hoist/$f"
done
ln -s "$(readlink -f "$HOIST_HOISTD")" "$T/prefix/sbin/hoistd"
ln -s "$(readlink -f "$HOIST_HOISTCTL")" "$T/prefix/bin/hoistctl"
settings=$T/prefix/libexec/hoist/hoist-slurm.conf
write_settings() {
	{
		echo "# hoist's Slurm settings (as /etc/hoist/slurm.conf would hold them)"
		echo "HOIST_SLURM_MODE=direct"
		echo "HOIST_RUNTIME_DIR=$T/run"
		printf '%s\n' "$@"
	} >"$settings"
	chmod 0644 "$settings"
}
write_settings

# ---- munge: a key and a daemon of this test's own --------------------------------
(umask 077 && head -c 1024 /dev/urandom >"$T/munge/munge.key")
msock=$T/munge/munge.socket
if ! in_ns munged --force --socket="$msock" --key-file="$T/munge/munge.key" \
	--pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
	--seed-file="$T/munge/munged.seed" 2>"$T/munge/munged.err"; then
	cat "$T/munge/munged.err" "$T/munge/munged.log" >&2 2>/dev/null
	SKIP "munged does not start here (above), so Slurm cannot authenticate"
fi

# ---- slurm.conf ----------------------------------------------------------------------
host=$(hostname -s)
cpus=$(nproc)
conf=$T/slurm.conf
cat >"$conf" <<CONF
ClusterName=hoisttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=debug
PlugStackConfig=$T/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
KillWait=5
Prolog=$T/prefix/libexec/hoist/slurm-prolog.sh
TaskProlog=$T/prefix/libexec/hoist/slurm-taskprolog.sh
Epilog=$T/prefix/libexec/hoist/slurm-epilog.sh
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=hoist Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
: >"$T/plugstack.conf"
export SLURM_CONF=$conf

in_ns slurmctld -f "$conf" -i 2>"$T/slurmctld.err" || {
	cat "$T/slurmctld.err" "$T/slurmctld.log" >&2 2>/dev/null
	SKIP "slurmctld does not start here (above)"
}
in_ns slurmd -f "$conf" 2>"$T/slurmd.err" || {
	cat "$T/slurmd.err" "$T/slurmd.log" >&2 2>/dev/null
	SKIP "slurmd does not start here (above)"
}
# the node registers: a watchdog on progress, not a time limit on the test
state=
alive() { [ -e "/proc/$(cat "$T/$1" 2>/dev/null)" ]; }
for _ in $(seq 1 120); do
	state=$(in_ns sinfo -h -n "$host" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	if ! alive slurmctld.pid || ! alive slurmd.pid; then break; fi
	sleep 0.5
done
if [ "$state" != idle ]; then
	show_log=1
	SKIP "the Slurm node did not become idle within 60 s (state '${state:-none}'; logs below)"
fi
log "slurmctld + slurmd up (node $host idle); $(slurmd -V)"

# every task notes who it is and where it looks for hoistd, then runs PROG
cat >"$T/task.sh" <<'TASK'
#!/bin/sh
echo "job $SLURM_JOB_ID step $SLURM_STEP_ID task $SLURM_PROCID dir ${HOIST_RUNTIME_DIR:-unset}" >>"$TASKLOG"
exec "$@"
TASK
chmod 0755 "$T/task.sh"
export TASKLOG=$T/tasks.log
: >"$TASKLOG"
chmod 0666 "$TASKLOG"

# ---- 1. success --------------------------------------------------------------------
log "run: srun -n 4 $(basename "$prog")"
# --immediate: no allocation within 60 s (the node drained) fails srun
out=$(in_ns timeout -k 10 200 srun -n 4 -O -t 5 --immediate=60 -J hoist-ok "$T/task.sh" "$prog" 2>&1)
st=$?
printf '%s\n' "$out" | sed 's/^/[srun ok] /' >&2
[ "$st" -eq 0 ] || { FAIL "srun -n 4 exited with status $st"; show_log=1; }
job=$(awk '{print $2; exit}' "$TASKLOG")
n=$(grep -c "dir $T/run\$" "$TASKLOG")
[ "$n" -eq 4 ] || FAIL "$n of 4 tasks had HOIST_RUNTIME_DIR=$T/run from the task prolog (tasks.log: $(cat "$TASKLOG"))"
grep -q "job slurm-$job.0: all 4 ranks attached (4 here)" "$T/run/hoistd.log" 2>/dev/null ||
	FAIL "the prolog's hoistd (in $T/run) did not see job slurm-$job.0 with 4 ranks"
# the epilog runs after the job: give it time, then the daemon must be gone
for _ in $(seq 1 120); do
	[ -e "$T/run/hoistd.pid" ] || break
	sleep 0.5
done
[ -e "$T/run/hoistd.pid" ] && FAIL "the epilog did not stop hoistd within 60 s of the job's end"
pgrep -f "^$T/prefix/sbin/hoistd|$(readlink -f "$HOIST_HOISTD") --runtime-dir $T/run" >/dev/null &&
	FAIL "a hoistd of this test still runs"

# ---- 2. failure: no hoistd for the prolog ---------------------------------------------
state=$(in_ns sinfo -h -n "$host" -o %T 2>/dev/null)
if [ "$state" != idle ]; then # a failed first part drained it: go on anyway
	log "node $host is '$state' after the first job; resuming it"
	in_ns scontrol update nodename="$host" state=resume
fi
write_settings "HOISTD=$T/prefix/sbin/no-such-hoistd"
: >"$TASKLOG"
log "run: srun -n 4 $(basename "$prog") with HOISTD=$T/prefix/sbin/no-such-hoistd"
out=$(in_ns timeout -k 10 200 srun -n 4 -O -t 5 --immediate=60 -J hoist-fail "$T/task.sh" "$prog" 2>&1)
st=$?
printf '%s\n' "$out" | sed 's/^/[srun fail] /' >&2
log "srun exited with status $st"
if [ "$st" -eq 0 ]; then
	FAIL "srun passed although the prolog could not start hoistd"
	show_log=1
elif [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
	FAIL "srun hung (killed by the backstop timeout) instead of failing"
	show_log=1
fi
[ -s "$TASKLOG" ] && FAIL "tasks ran although the prolog failed: $(cat "$TASKLOG")"
if ! grep -q "hoist slurm-prolog: slurm-[0-9]*: no hoistd for this job.*failing the prolog" "$T/slurmd.log"; then
	FAIL "slurmd's log lacks the prolog's message"
	show_log=1
fi
grep -E 'prolog|Prolog' "$T/slurmd.log" | tail -n 6 | sed 's/^/[slurmd.log] /' >&2
[ "$fail" = 0 ] && log "PASS" || show_log=1
exit "$fail"
