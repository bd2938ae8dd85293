#!/usr/bin/env bash
# uid_squat.sh <it_uid>: run under `cluster.sh 2` (as root).
# Job-key squatting across nodes: uid 65534 takes key J on the first daemon
# before root's job J starts there and on the second daemon; both jobs must
# run, apart (it_uid does the work, with rank r on daemon r). The cluster's
# directories are private (0700): open them to other users for the test.
set -u
prog=$1
: "${HOIST_DIR_0:?run me under cluster.sh}" "${HOIST_DIR_1:?}" "${CLUSTER_BASE:?}"
if [ "$(id -u)" != 0 ]; then
	echo "[uid_squat.sh] skipped: needs root" >&2
	exit 77
fi
chmod 0711 "$CLUSTER_BASE" && chmod 0755 "$HOIST_DIR_0" "$HOIST_DIR_1" || exit 1
exec "$prog"
