#!/usr/bin/env bash
# stats_output.sh <it_stats_job>: run under harness.sh (HOIST_DIRECT=0).
# Issue 13: what hoistctl prints must survive any job key and be usable by
# machines and terminals.
#  1. A 2-PE job whose key holds bytes that are not UTF-8, a quote, a
#     backslash, a control character and a newline, longer than the old
#     24-column cut: `stats --json` parses with python3's json (the bad
#     bytes as U+FFFD); the table shows the key whole (escaped as \xNN,
#     no raw control or invalid bytes) and no other line wider than 100 columns;
#     `metrics` parses with prometheus_client (it_metrics.py: families,
#     types, HELP, labels job/rank/uid/phase, values of the job) and the
#     job label is the key with the same replacements; hoistd's log
#     shows the key on one line (control characters as '?').
#  2. The same job over two tcp daemons on loopback (hoistrun --nodes 2):
#     transport "tcp", tcp counters there, no verbs counters; peer metrics.
# Exit 77 (after every other check passed) without python3-prometheus-client.
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
fail=0
skip=0
FAIL() { echo "[stats_output] FAIL: $*" >&2; fail=1; }
out=$(mktemp -d "$HOIST_RUNTIME_DIR/out.XXXXXX")

# prometheus_client is Debian's python3-prometheus-client: the system
# python's, which a python3 first in PATH (pyenv, venv) may not see
pym=python3
if ! python3 -c 'import prometheus_client' 2>/dev/null && [ -x /usr/bin/python3 ] &&
	/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; then
	pym=/usr/bin/python3
fi

# ---- 1. an awkward job key -------------------------------------------------
tail=$$-a-job-key-longer-than-twenty-four-columns
job=$'k\xff\xfe"q\\b\x01\nnl-'$tail
IT_OUT=$out "$HOIST_HOISTRUN" -n 2 --job "$job" --timeout 40 "$prog" || FAIL "the job failed (status $?)"
python3 - "$out/mid.json" "$tail" <<'PY' || FAIL "stats --json with an awkward job key (above)"
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    doc = json.loads(raw.decode("utf-8"))
except Exception as e:
    print("  not valid JSON / UTF-8: %s: %r" % (e, raw[:300]), file=sys.stderr)
    sys.exit(1)
want = 'k\ufffd\ufffd"q\\b\x01\nnl-' + sys.argv[2]
ranks = sorted(c["rank"] for c in doc["clients"] if c["job"] == want)
if ranks != [0, 1]:
    print("  job %r: ranks %r; jobs seen %r" % (want, ranks, [c["job"] for c in doc["clients"]]), file=sys.stderr)
    sys.exit(1)
PY
python3 - "$out/mid.txt" "$tail" <<'PY' || FAIL "the table with an awkward job key (above)"
import sys
raw = open(sys.argv[1], "rb").read()
bad = []
try:
    text = raw.decode("utf-8")
except UnicodeDecodeError as e:
    bad.append("table is not UTF-8: %s" % e)
    text = raw.decode("utf-8", "replace")
shown = 'job "k\\xff\\xfe"q\\\\b\\x01\\x0anl-' + sys.argv[2] + '"'
if text.count(shown) != 2:
    bad.append("the key is not shown whole and escaped twice (%s), %d times" % (shown, text.count(shown)))
if any(ord(ch) < 0x20 and ch != "\n" for ch in text):
    bad.append("raw control characters in the table")
wide = [l for l in text.splitlines() if len(l) > 100 and sys.argv[2] not in l]  # the key is long itself
if wide:
    bad.append("%d lines wider than 100 columns, e.g. %r" % (len(wide), wide[0]))
for w in ("puts=", "gets=", "daemon counters", "daemon gauges", "phase 0x"):
    if w not in text:
        bad.append("no %r in the table" % w)
for b in bad:
    print("  " + b, file=sys.stderr)
if bad:
    print(text, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# the daemon's log names the job on one line: the newline cannot forge one
if grep -a -q "^nl-$tail" "$HOIST_RUNTIME_DIR/hoistd.log"; then
	FAIL "a newline in the job key started a line of hoistd's log: $(grep -a -n "nl-$tail" "$HOIST_RUNTIME_DIR/hoistd.log")"
fi
"$pym" "$IT_SRC_DIR/it_metrics.py" "$out/mid.prom" $'k\ufffd\ufffd"q\\b\ufffd\nnl-'"$tail"
rc=$?
case $rc in
0) ;;
77) skip=1 ;;
*) FAIL "metrics of the awkward job (above); file: $out/mid.prom" ;;
esac

# ---- 2. two tcp daemons ---------------------------------------------------------
out2=$(mktemp -d "$HOIST_RUNTIME_DIR/out.XXXXXX")
job2=tcpjob-$$
IT_OUT=$out2 "$HOIST_HOISTRUN" --nodes 2 -n 2 --job "$job2" --timeout 50 "$prog" ||
	FAIL "the job on two tcp daemons failed (status $?)"
python3 - "$out2/mid.json" <<'PY' || FAIL "stats of a tcp daemon (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
d = doc["daemon"]
bad = []
if doc.get("transport") != "tcp":
    bad.append("transport %r, expected tcp" % doc.get("transport"))
if "tcp_requests" not in d:
    bad.append("no tcp_requests on a tcp daemon")
verbs = [k for k in d if k.startswith("rdma_") or k in ("pinned_refused", "pinned_deferred", "pinned_grace_cut")]
if verbs:
    bad.append("verbs counters on a tcp daemon: %r" % verbs)
# the node's pinned-memory budget is reported for every transport
for k in ("pinned_limit", "pinned_bytes", "pinned_available"):
    if k not in d:
        bad.append("no %s on a tcp daemon" % k)
if d.get("transport_verbs") != 0:
    bad.append("transport_verbs = %r" % d.get("transport_verbs"))
if not doc.get("peers"):
    bad.append("no peers")
if "spin_us" in d:
    bad.append("spin_us (a setting) among the counters")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
"$pym" "$IT_SRC_DIR/it_metrics.py" "$out2/mid.prom" "$job2" tcp
rc=$?
case $rc in
0) ;;
77) skip=1 ;;
*) FAIL "metrics of a tcp daemon (above); file: $out2/mid.prom" ;;
esac

[ "$fail" = 0 ] && rm -rf "$out" "$out2"
if [ "$fail" = 0 ] && [ "$skip" = 1 ]; then
	echo "[stats_output] SKIP: JSON and table passed; python3-prometheus-client is missing, metrics not parsed" >&2
	exit 77
fi
[ "$fail" = 0 ] && echo "[stats_output] PASS" >&2
exit "$fail"
