# bench/lib.sh - what the bench/run-*.sh scripts share; sourced, not run:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-NAME.sh
#
# Sets repo (the checkout this file is in) and bench_name (run-NAME.sh, for
# messages), and defines:
#   bench_posint OPT VALUE  exit 2 unless VALUE is a positive integer
#   bench_need_build BUILD FILE...
#                           exit 1 unless every FILE (below BUILD) is
#                           executable, saying how to build them (their
#                           names are their cmake targets)
#   bench_build_missing BUILD FILE...
#                           configure (RelWithDebInfo, BUILD_TESTING off) and
#                           build BUILD for the FILEs (below BUILD; their
#                           names are their cmake targets) if one is missing
#   bench_exec_in_cluster BUILD K CLUSTER-ARG... -- CMD...
#                           run CMD under tests/multinode/cluster.sh K with
#                           BUILD's hoistd, hoistrun and hoistctl
#                           (CLUSTER_TIMEOUT 3000 s unless set); does not
#                           return
#   bench_tmpdir            tmp: a fresh directory, removed at exit
#                           (INT/TERM exit 130)
#   bench_hoistd_start HOISTD DIR [ARG...]
#                           a private hoistd: HOISTD --runtime-dir DIR ARG...
#                           in the background (its log DIR/hoistd.log, its
#                           pid in dpid), waited for until it says READY
#                           (15 s); exit 1 showing its log if it does not
#   bench_hoistd_stop       SIGTERM to that hoistd and its exit status (0
#                           if none runs); for the script's EXIT trap too
#   want CFG                true if CFG is in the comma list $only
#   bench_take_rows CFG RC OUT
#                           a run of configuration CFG ended with status RC:
#                           exit 1 showing its stderr ($tmp/err) unless RC
#                           is 0, else append the "row" lines of its output
#                           OUT to $tmp/vals as "CFG NAME VALUE"
#   bench_load              the 1, 5 and 15 minute load averages
#   bench_cpu_model         the CPU's model name
#   bench_cpus              "N CPUs (model name)"
#   bench_daemon_sums "KEYS" DIR...
#                           "k=v ..." for every daemon counter k of KEYS,
#                           summed over the hoistd of each runtime directory
#                           DIR ($HOIST_HOISTCTL stats --json; a counter a
#                           daemon lacks, an older build's, counts 0); fails
#                           if a daemon's stats cannot be read
#   bench_machine BUILD     one line "machine: line round trip N ns (...);
#                           wake-up ..." from BUILD's hoist-machine-probe:
#                           which of its modes this machine is in (see
#                           bench/README.md, "The machine's mode")
#   bench_osh_versions      the oshrun (and ucx) version line of the tables
#                           that have Open MPI columns
#   bench_command ARGS...   "bash bench/run-NAME.sh ARGS" as typed (for
#                           a table's or JSON document's reproduce field)
#   bench_reproduce         the table's last line, "reproduce: bash
#                           bench/run-NAME.sh ARGS", ARGS quoted for the shell
#                           (call it with the script's original arguments)
# Their Python parts take median [min-max] cells from bench/benchvals.py
# (PYTHONPATH="$repo/bench").

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_name=$1

bench_posint() {
	case "$2" in '' | *[!0-9]* | 0) echo "$bench_name: $1 must be a positive integer" >&2; exit 2 ;; esac
}

# the first of the files that is not executable (status 1 if none)
bench_missing() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || { echo "$f"; return 0; }
	done
	return 1
}

bench_need_build() {
	local build=$1 f
	shift
	f=$(bench_missing "$@") || return 0
	echo "$bench_name: $f is missing; build first:" >&2
	echo "  cmake -S $repo -B $build && cmake --build $build --target ${*##*/}" >&2
	exit 1
}

bench_build_missing() {
	local build=$1
	shift
	bench_missing "${@/#/$build/}" >/dev/null || return 0
	echo "$bench_name: building in $build" >&2
	cmake -S "$repo" -B "$build" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
	cmake --build "$build" -j"$(nproc)" --target "${@##*/}" >&2
}

bench_machine() {
	local probe=$1/bench/hoist-machine-probe
	if [ -x "$probe" ]; then
		"$probe" 2>&1 || true
	else
		echo "machine: $probe not built"
	fi
}

bench_exec_in_cluster() {
	local build=$1
	shift
	export HOIST_HOISTD="$build/daemon/hoistd" HOIST_HOISTRUN="$build/launcher/hoistrun"
	export HOIST_HOISTCTL="$build/daemon/hoistctl"
	export CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-3000}
	exec bash "$repo/tests/multinode/cluster.sh" "$@"
}

bench_tmpdir() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoist-${bench_name%.sh}.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM
}

bench_hoistd_start() {
	local hoistd=$1 dir=$2 ready=
	shift 2
	# READY arrives on fd 3, a FIFO: the read sees EOF instead of hanging
	# if hoistd dies before it is ready
	mkfifo "$dir/ready"
	"$hoistd" --runtime-dir "$dir" --ready-fd 3 "$@" 3>"$dir/ready" 2>"$dir/hoistd.log" </dev/null &
	dpid=$!
	read -r -t 15 ready <"$dir/ready" || true
	if [ "$ready" != READY ]; then
		echo "$bench_name: hoistd did not become ready; its log:" >&2
		cat "$dir/hoistd.log" >&2
		exit 1
	fi
}

bench_hoistd_stop() {
	local rc=0
	[ -n "${dpid:-}" ] || return 0
	kill -TERM "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || rc=$?
	dpid=
	return "$rc"
}

want() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }

bench_take_rows() {
	if [ "$2" != 0 ]; then
		echo "$bench_name: $1 failed with status $2:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	awk -v c="$1" '$1 == "row" { print c, $2, $4 }' "$3" >>"$tmp/vals"
}

bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

bench_cpu_model() { sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1; }

bench_cpus() { echo "$(nproc) CPUs ($(bench_cpu_model))"; }

bench_daemon_sums() {
	local keys=$1 d
	shift
	for d in "$@"; do
		"$HOIST_HOISTCTL" --runtime-dir "$d" stats --json || return 1
	done | python3 -c '
import json, sys
keys, want = sys.argv[1].split(), int(sys.argv[2])
text, docs, dec, i = sys.stdin.read(), [], json.JSONDecoder(), 0
while text[i:].strip():
    doc, i = dec.raw_decode(text, len(text) - len(text[i:].lstrip()))
    docs.append(doc)
if len(docs) != want:
    sys.exit("bench_daemon_sums: stats of %d of %d daemons" % (len(docs), want))
print(" ".join("%s=%d" % (k, sum(int(d["daemon"].get(k, 0)) for d in docs)) for k in keys))
' "$keys" "$#"
}

bench_osh_versions() {
	echo "oshrun: $(oshrun --version 2>/dev/null | head -n 1 || echo none); ucx: $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -n 1)"
}

bench_command() { echo "bash bench/$bench_name${*:+ $*}"; }

bench_reproduce() {
	printf 'reproduce: bash bench/%s' "$bench_name"
	[ $# = 0 ] || printf ' %q' "$@"
	echo
}
