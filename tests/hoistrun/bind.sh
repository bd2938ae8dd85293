#!/usr/bin/env bash
# hoistrun --bind-to core: rank i runs bound to the (i mod n)-th of the n
# CPUs hoistrun may use (read back from each rank's /proc/self/status),
# also inside a smaller set given by taskset; --bind-to none and no option
# leave every rank hoistrun's whole set; a wrong value is refused.
#
#   bind.sh <hoistrun> <hoistd>
set -euo pipefail
HOISTRUN=$1
export HOISTD=$2 # the private daemon hoistrun starts
T=$(mktemp -d /tmp/hoist-bind.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0

# the CPUs of a list such as 0-1,3 one per line
expand() {
	tr ',' '\n' <<<"$1" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done
}
# run N [hoistrun options...]: every rank prints "RANK LIST", sorted by rank
run() {
	local n=$1
	shift
	# no hoist program here: a throwaway runtime dir makes hoistrun start
	# (and stop) a daemon of its own, which the ranks do not use
	HOIST_RUNTIME_DIR=$T/none "$HOISTRUN" -n "$n" "$@" -- bash -c \
		'echo "$HOIST_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' |
		sort -n
}
check() { # what got want
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1"
		echo "  got:  $(tr '\n' ';' <<<"$2")"
		echo "  want: $(tr '\n' ';' <<<"$3")"
		fail=1
	else
		echo "ok: $1"
	fi
}

mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
mapfile -t cpus < <(expand "$mine")
n=$((${#cpus[@]} + 1)) # one rank more than CPUs: the first CPU twice
want=$(for ((i = 0; i < n; i++)); do echo "$i ${cpus[i % ${#cpus[@]}]}"; done)
check "--bind-to core, $n ranks on CPUs $mine" "$(run "$n" --bind-to core)" "$want"
want=$(for ((i = 0; i < n; i++)); do echo "$i $mine"; done)
check "no binding by default" "$(run "$n")" "$want"
check "--bind-to none" "$(run "$n" --bind-to none)" "$want"

# within a smaller set: the last CPU only
last=${cpus[${#cpus[@]} - 1]}
if command -v taskset >/dev/null; then
	want=$(for ((i = 0; i < 3; i++)); do echo "$i $last"; done)
	got=$(HOIST_RUNTIME_DIR=$T/none taskset -c "$last" "$HOISTRUN" -n 3 --bind-to core -- bash -c \
		'echo "$HOIST_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' | sort -n)
	check "--bind-to core under taskset -c $last" "$got" "$want"
fi

set +e
"$HOISTRUN" -n 1 --bind-to socket -- true 2>"$T/err"
rc=$?
set -e
if [ "$rc" != 2 ] || ! grep -q -- "--bind-to wants core or none, not 'socket'" "$T/err"; then
	echo "FAIL: --bind-to socket: exit $rc, want 2 with a message; stderr: $(cat "$T/err")"
	fail=1
else
	echo "ok: --bind-to socket refused"
fi
[ "$fail" = 0 ] && echo PASS
exit "$fail"
