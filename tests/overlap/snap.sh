# snap.sh: sourced by the overlap tests that run under `cluster.sh 2`.
# snap PREFIX sets PREFIX_<key>=<value> for every key in $keys, each summed
# over both daemons' `hoistctl stats --json` (the daemon section).
snap() {
	local out
	out=$(for d in "$HOIST_DIR_0" "$HOIST_DIR_1"; do "$HOIST_HOISTCTL" --runtime-dir "$d" stats --json; done |
		python3 -c "
import json, sys
dec, s, tot = json.JSONDecoder(), sys.stdin.read(), {}
i = 0
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    o, i = dec.raw_decode(s, i)
    for k in '$keys'.split(): tot[k] = tot.get(k, 0) + o['daemon'][k]
print(' '.join('$1_%s=%d' % kv for kv in tot.items()))") || return 1
	eval "$out"
}
