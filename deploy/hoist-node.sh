#!/usr/bin/env bash
# hoist-node.sh: start or stop this node's hoistd around a job. Shared by the
# mpirun and Slurm prologue/epilogue scripts next to it; usable on its own.
#
#   hoist-node.sh start JOB   make sure a hoistd answers in the runtime dir;
#                             start one (and remember that we did) if none does
#   hoist-node.sh stop JOB    forget JOB; stop the hoistd if we started it and
#                             no other job started through this script uses it
#   hoist-node.sh status      print whether a hoistd answers; exit 0 if so, 4 if busy
#
# The runtime directory is $HOIST_RUNTIME_DIR, else what hoistd itself would
# use: /run/hoist as root, $XDG_RUNTIME_DIR/hoist, or /tmp/hoist-<uid>.
# A hoistd that this script did not start (systemd's, another user's tool)
# is used but never stopped.
#
# Environment:
#   HOISTD             hoistd binary (default: ../../sbin/hoistd from this script
#                      when installed, else hoistd in PATH, else /usr/sbin/hoistd)
#   HOISTCTL           hoistctl binary (default: ../../bin/hoistctl, PATH, /usr/bin/hoistctl)
#   HOISTD_ARGS        extra hoistd arguments, e.g. "--config /etc/hoist/job.conf"
#   HOIST_START_TIMEOUT seconds to wait for the new hoistd to be ready (default 20)
#   HOIST_STOP_TIMEOUT  seconds between SIGTERM and SIGKILL on stop (default 15)
#   HOIST_PING_TIMEOUT_MS how long 'hoistctl ping' waits for an answer (default 5000)
#
# A daemon is replaced only when nobody listens on its socket (hoistctl
# exit 3: no socket, connection refused). One that listens but does not
# answer in time (exit 4: busy, a long reply, stopped) is left alone and
# used: killing it would kill the jobs it serves.
#
# State kept in the runtime directory: hoistd.pid (only when we started the
# daemon), hoistd.log (its stderr), jobs/<JOB> (one file per job using it),
# .hoist-node.lock (serialises concurrent prologues/epilogues).
set -euo pipefail

me=hoist-node.sh

# Installed (cmake --install), this script lies in <prefix>/libexec/hoist and
# the binaries of the same install in <prefix>/sbin and <prefix>/bin: those
# come first, then PATH, then /usr.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
find_bin() { # NAME INSTALL_DIR FALLBACK
	if [[ -x "$here/../../$2/$1" ]]; then
		echo "$(cd "$here/../../$2" && pwd)/$1"
	else
		command -v "$1" 2>/dev/null || echo "$3"
	fi
}
hoistd=${HOISTD:-$(find_bin hoistd sbin /usr/sbin/hoistd)}
hoistctl=${HOISTCTL:-$(find_bin hoistctl bin /usr/bin/hoistctl)}
start_timeout=${HOIST_START_TIMEOUT:-20}
stop_timeout=${HOIST_STOP_TIMEOUT:-15}

log() { printf '%s: %s\n' "$me" "$*" >&2; }
die() {
	log "$*"
	exit 1
}

runtime_dir() {
	if [[ -n "${HOIST_RUNTIME_DIR:-}" ]]; then
		echo "$HOIST_RUNTIME_DIR"
	elif [[ $(id -u) -eq 0 ]]; then
		echo /run/hoist
	elif [[ -n "${XDG_RUNTIME_DIR:-}" ]]; then
		echo "$XDG_RUNTIME_DIR/hoist"
	else
		echo "/tmp/hoist-$(id -u)"
	fi
}

ping_timeout=${HOIST_PING_TIMEOUT_MS:-5000}

# 0: a hoistd answers; 3: nobody listens (no socket, refused); 4: one
# listens but did not answer in time; other: see hoistctl's message
ping_daemon() {
	local rc=0
	ping_err=$("$hoistctl" --runtime-dir "$dir" --timeout "$ping_timeout" ping 2>&1 >/dev/null) || rc=$?
	return "$rc"
}

# Is PID alive? A zombie is not (an exited daemon whose new parent does
# not reap it must not look alive).
is_alive() {
	local state
	state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[[ -n "$state" && "$state" != Z ]]
}

# Is PID a live hoistd?
is_our_hoistd() {
	local comm
	comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 1
	[[ "$comm" == hoistd ]] && is_alive "$1"
}

job_name() {
	local j=${1:-}
	[[ -n "$j" ]] || die "missing JOB argument"
	# a file name: keep it to a safe alphabet
	j=${j//[^A-Za-z0-9._-]/_}
	echo "$j"
}

lock() {
	exec 9>"$dir/.hoist-node.lock"
	if ! flock -w 60 9; then
		die "could not lock $dir/.hoist-node.lock within 60 s"
	fi
}

start_daemon() {
	local fifo ready="" pid rc
	[[ -x "$hoistd" ]] || die "hoistd not found (set HOISTD=/path/to/hoistd)"
	fifo=$(mktemp -u "$dir/.ready.XXXXXX")
	mkfifo -m 0600 "$fifo"
	exec 3<>"$fifo"
	# New session, no terminal, nothing inherited that a launcher waits on
	# (mpirun/ssh keep running while someone holds their stdout open).
	# shellcheck disable=SC2086 # HOISTD_ARGS is a list of words on purpose
	setsid "$hoistd" --runtime-dir "$dir" --ready-fd 4 ${HOISTD_ARGS:-} \
		</dev/null >>"$dir/hoistd.log" 2>&1 4>"$fifo" 3<&- 9>&- &
	pid=$!
	for ((i = 0; i < start_timeout; i++)); do
		if read -r -t 1 -u 3 ready; then
			break
		fi
		if ! is_alive "$pid"; then
			rc=0
			wait "$pid" 2>/dev/null || rc=$?
			exec 3<&-
			rm -f "$fifo"
			die "hoistd exited (status $rc) before it was ready; see $dir/hoistd.log"
		fi
	done
	exec 3<&-
	rm -f "$fifo"
	if [[ "$ready" != READY ]]; then
		kill -TERM "$pid" 2>/dev/null || true
		die "hoistd did not get ready within ${start_timeout}s; see $dir/hoistd.log"
	fi
	echo "$pid" >"$dir/hoistd.pid"
	log "started hoistd (pid $pid) in $dir"
}

stop_daemon() {
	local pid
	pid=$(cat "$dir/hoistd.pid" 2>/dev/null || true)
	rm -f "$dir/hoistd.pid"
	if [[ ! "$pid" =~ ^[0-9]+$ ]] || ! is_our_hoistd "$pid"; then
		log "hoistd we started is gone already"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < stop_timeout * 10; i++)); do
		is_our_hoistd "$pid" || {
			log "stopped hoistd (pid $pid)"
			return 0
		}
		sleep 0.1
	done
	log "hoistd (pid $pid) ignored SIGTERM for ${stop_timeout}s, killing it"
	kill -KILL "$pid" 2>/dev/null || true
}

cmd=${1:-}
dir=$(runtime_dir)

case "$cmd" in
start)
	job=$(job_name "${2:-}")
	# as hoistd makes it: 0755 as root (every user reaches the sockets), else 0700
	if [[ $(id -u) -eq 0 ]]; then
		(umask 022 && mkdir -p "$dir/jobs")
	else
		(umask 077 && mkdir -p "$dir/jobs")
	fi
	# /tmp/hoist-<uid> could have been made by someone else first
	if [[ -L "$dir" || ! -O "$dir" ]]; then
		die "$dir is a symlink or not owned by $(id -un); refusing to use it"
	fi
	lock
	prc=0
	ping_daemon || prc=$?
	case $prc in
	0) ;; # already served (by us for another job, by systemd, or by hand)
	3) # nobody listens: a daemon we started is gone or lost its socket
		if [[ -f "$dir/hoistd.pid" ]]; then
			log "stale $dir/hoistd.pid (nobody listens on its socket: $ping_err); replacing it"
			stop_daemon
		fi
		start_daemon
		ping_daemon || die "hoistd started but '$hoistctl ping' fails: $ping_err"
		;;
	4) # listening, slow: never kill it (its jobs would die with it)
		log "the hoistd in $dir listens but did not answer within ${ping_timeout} ms ($ping_err); using it"
		;;
	*)
		die "cannot use the hoistd in $dir: $ping_err"
		;;
	esac
	: >"$dir/jobs/$job"
	;;
stop)
	job=$(job_name "${2:-}")
	[[ -d "$dir" ]] || exit 0
	lock
	rm -f "$dir/jobs/$job"
	if compgen -G "$dir/jobs/*" >/dev/null; then
		exit 0 # other jobs still use it
	fi
	if [[ -f "$dir/hoistd.pid" ]]; then
		stop_daemon
	fi
	;;
status)
	prc=0
	ping_daemon || prc=$?
	case $prc in
	0) echo "hoistd answers in $dir" ;;
	4)
		echo "a hoistd listens in $dir but did not answer in time ($ping_err)"
		exit 4
		;;
	*)
		echo "no hoistd answers in $dir${ping_err:+ ($ping_err)}"
		exit 1
		;;
	esac
	;;
*)
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
