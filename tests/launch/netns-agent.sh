#!/usr/bin/env bash
# netns-agent.sh HOST COMMAND...: what ssh is to mpirun, for "hosts" that are
# network namespaces on this machine (mpirun --mca plm_rsh_agent netns-agent.sh).
# $HOIST_AGENT_MAP names a file of lines "HOST NAMESPACE RUNTIME_DIR NODENAME":
# the command runs inside NAMESPACE, in a UTS namespace of its own whose host
# name is NODENAME (Open MPI names its session directories and tells nodes
# apart by host name; real hosts have their own), with HOIST_RUNTIME_DIR set
# to that host's hoistd (real hosts would each have the default directory).
# Like ssh, the words of COMMAND are joined and run by a shell.
set -euo pipefail
host=${1:?usage: netns-agent.sh HOST COMMAND...}
shift
map=${HOIST_AGENT_MAP:?HOIST_AGENT_MAP is not set}
line=$(awk -v h="$host" '$1 == h { print $2, $3, $4; exit }' "$map")
if [[ -z "$line" ]]; then
	echo "netns-agent.sh: unknown host '$host' (not in $map)" >&2
	exit 255
fi
read -r ns dir name <<<"$line"
# shellcheck disable=SC2016 # expanded by the inner shell
exec ip netns exec "$ns" unshare --uts -- env HOIST_RUNTIME_DIR="$dir" AGENT_NODENAME="$name" \
	/bin/sh -c 'hostname "$AGENT_NODENAME" && unset AGENT_NODENAME && exec /bin/sh -c "$1"' \
	netns-agent "$*"
