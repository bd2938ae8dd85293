#!/usr/bin/env bash
# env_settings.sh <hoistd> <hoistctl>: the daemon reads its settings from
# HOISTD_<SETTING>; HOIST_<SETTING> (libhoist's names: HOIST_SPIN_US and
# HOIST_RUNTIME_DIR mean something else to a client) still works when the
# HOISTD_ form is not set, with one deprecation line in the log per
# variable; with both, HOISTD_ wins; a flag wins over either (and an unused
# HOIST_ variable is not worth a line). Observed through `hoistctl stats
# --settings --json` (value and source) and the daemon's log.
set -u
hoistd=$1 hoistctl=$2
d=$(mktemp -d /tmp/hoist-env.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$d"' EXIT
fail=0
FAIL() { echo "[env_settings] FAIL: $*" >&2; fail=1; }
# every variable of the caller that could reach the daemon goes
clean=(env)
for v in $(env | sed -n 's/^\(HOISTD\?_[A-Z_]*\)=.*/\1/p'); do clean+=(-u "$v"); done

# start NAME RTDIR [env...] -- [flags...]: start hoistd, wait for READY in
# RTDIR (the directory it must have chosen); log in $d/NAME.log
start() {
	local name=$1 rt=$2 i
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	# a daemon that would not go to RTDIR must not start (as root it would
	# take /run/hoist, the node's daemon's place)
	if ! "${clean[@]}" "${envs[@]}" "$hoistd" "$@" --print-config 2>/dev/null |
		grep -Eq "^runtime_dir += $rt "; then
		FAIL "$name: the daemon would not use runtime_dir $rt: $("${clean[@]}" "${envs[@]}" "$hoistd" "$@" --print-config 2>&1 | grep runtime_dir)"
		return 1
	fi
	rm -f "$d/ready"
	"${clean[@]}" "${envs[@]}" "$hoistd" --ready-fd 3 "$@" 3>"$d/ready" 2>"$d/$name.log" </dev/null &
	pid=$!
	for i in $(seq 1 $((1000 * ${HOIST_TEST_SCALE:-1}))); do
		grep -q READY "$d/ready" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	if ! grep -q READY "$d/ready" 2>/dev/null || [ ! -S "$rt/stats.sock" ]; then
		FAIL "$name: hoistd not ready in $rt: $(cat "$d/$name.log")"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		pid=
		return 1
	fi
	"$hoistctl" --runtime-dir "$rt" stats --settings --json >"$d/$name.json" 2>"$d/$name.err" ||
		FAIL "$name: hoistctl stats: $(cat "$d/$name.err")"
	return 0
}
stop() {
	kill -TERM "$pid"
	wait "$pid" || FAIL "hoistd exited $? after SIGTERM"
	pid=
}
# want NAME SETTING VALUE SOURCE
want() {
	local got
	got=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["settings"][sys.argv[2]], r["settings_source"][sys.argv[2]])' "$d/$1.json" "$2" 2>&1)
	[ "$got" = "$3 $4" ] || FAIL "$1: $2 is '$got', want '$3 $4'"
}
# deprecations NAME N [VAR]: the log has N deprecation lines (naming VAR)
deprecations() {
	local n
	n=$(grep -c "is deprecated for the daemon" "$d/$1.log")
	[ "$n" = "$2" ] || FAIL "$1: $n deprecation lines in the log, want $2: $(cat "$d/$1.log")"
	if [ -n "${3:-}" ] && ! grep -Eq "warn: $3 is deprecated for the daemon, use HOISTD_${3#HOIST_}\$" "$d/$1.log"; then
		FAIL "$1: no line 'warn: $3 is deprecated for the daemon, use HOISTD_${3#HOIST_}': $(cat "$d/$1.log")"
	fi
}

echo "---- 1. HOISTD_ only: used, nothing deprecated" >&2
if start new "$d/rt1" HOISTD_RUNTIME_DIR="$d/rt1" HOISTD_SPIN_US=7 HOISTD_BATCH=5 --; then
	want new spin_us 7 env
	want new batch 5 env
	want new runtime_dir "$d/rt1" env
	deprecations new 0
	stop
fi

echo "---- 2. HOIST_ only: used, one deprecation line per variable" >&2
if start old "$d/rt2" HOIST_RUNTIME_DIR="$d/rt2" HOIST_SPIN_US=9 --; then
	want old spin_us 9 env
	want old runtime_dir "$d/rt2" env
	deprecations old 2 HOIST_SPIN_US
	deprecations old 2 HOIST_RUNTIME_DIR
	stop
fi

echo "---- 3. both: HOISTD_ wins (a client's HOIST_RUNTIME_DIR is not the daemon's)" >&2
if start both "$d/rt3" HOISTD_RUNTIME_DIR="$d/rt3" HOIST_RUNTIME_DIR="$d/client" \
	HOISTD_SPIN_US=7 HOIST_SPIN_US=9 --; then
	want both spin_us 7 env
	want both runtime_dir "$d/rt3" env
	deprecations both 0
	[ ! -e "$d/client" ] || FAIL "both: the daemon made the client's HOIST_RUNTIME_DIR $d/client"
	stop
fi

echo "---- 4. a flag wins over HOIST_: no line for the unused variable" >&2
if start flag "$d/rt4" HOIST_RUNTIME_DIR="$d/client" HOIST_SPIN_US=9 -- --runtime-dir "$d/rt4" --spin-us 11; then
	want flag spin_us 11 flag
	deprecations flag 0
	stop
fi

echo "---- 5. a bad value names the variable it came from" >&2
out=$("${clean[@]}" HOISTD_BATCH=lots "$hoistd" --print-config 2>&1) && FAIL "HOISTD_BATCH=lots accepted"
grep -q "environment variable HOISTD_BATCH: batch: 'lots' is not valid" <<<"$out" || FAIL "HOISTD_BATCH=lots: $out"
out=$("${clean[@]}" HOIST_BATCH=lots "$hoistd" --print-config 2>&1) && FAIL "HOIST_BATCH=lots accepted"
grep -q "environment variable HOIST_BATCH: batch: 'lots' is not valid" <<<"$out" || FAIL "HOIST_BATCH=lots: $out"
out=$("${clean[@]}" HOIST_BATCH=3 "$hoistd" --print-config 2>"$d/pc.err")
grep -Eq '^batch += 3 +# env;' <<<"$out" || FAIL "--print-config with HOIST_BATCH=3: $out"
grep -q "HOIST_BATCH is deprecated for the daemon, use HOISTD_BATCH" "$d/pc.err" ||
	FAIL "--print-config with HOIST_BATCH=3 does not say it is deprecated: $(cat "$d/pc.err")"

[ "$fail" = 0 ] && echo "[env_settings] PASS" >&2
exit "$fail"
