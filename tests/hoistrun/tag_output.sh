#!/usr/bin/env bash
# hoistrun --tag-output (issue 13): every line of every rank's stdout and
# stderr arrives whole, on the same stream, prefixed with [rank], and
# nothing is lost when the ranks exit right after writing (nor what a rank's
# child writes shortly after the rank exited).
#
#   tag_output.sh <hoistrun>
set -euo pipefail
HOISTRUN=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d /tmp/hoist-tag.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=4
# no hoist program here; a throwaway runtime dir makes hoistrun start (and
# stop) its own daemon, which the job does not need but does not mind
HOIST_RUNTIME_DIR=$T/none "$HOISTRUN" --tag-output -n $n -- bash "$here/tag_rank.sh" >"$T/out" 2>"$T/err"
python3 - "$T/out" "$T/err" "$n" <<'PY'
import re, sys
out, err, n = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])
bad = []
want_out = {r: [f"rank {r} line {i} ab" for i in range(1, 41)] +
               [f"rank {r} bulk {i}" for i in range(1, 20001)] + [f"rank {r} last"] for r in range(n)}
want_err = {r: [f"rank {r} err {i} xy" for i in range(1, 41)] + [f"rank {r} late"] for r in range(n)}
for name, text, want in (("stdout", out, want_out), ("stderr", err, want_err)):
    got = {r: [] for r in range(n)}
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        m = re.fullmatch(r"\[(\d+)\] (.*)", line)
        if not m or int(m.group(1)) not in got:
            bad.append(f"{name}: unlabelled line {line[:80]!r}")
            continue
        r = int(m.group(1))
        if not m.group(2).startswith(f"rank {r} "):
            bad.append(f"{name}: [{r}] carries another rank's text: {line[:80]!r}")
        got[r].append(m.group(2))
    if not text.endswith("\n"):
        bad.append(f"{name}: does not end with a newline")
    for r in range(n):
        if got[r] != want[r]:
            have = set(got[r])
            miss = [l for l in want[r] if l not in have]
            bad.append(f"{name}: rank {r}: {len(got[r])} lines, want {len(want[r])}; "
                       f"first missing/garbled: {miss[:2]}")
    print(f"{name}: {sum(len(v) for v in got.values())} lines from {n} ranks")
if bad:
    print("\n".join(bad[:20]))
    sys.exit(1)
print("PASS")
PY
