#!/usr/bin/env bash
# it_stats.sh <it_stats_job>: run under harness.sh.
# Runs a small 2-PE job that does 10 puts and 10 gets per PE; checks
#  - during the job (rank 0 saved them): `hoistctl stats --json` is valid
#    JSON listing both clients of the job (job key, ranks 0 and 1, pids,
#    uid) with nonzero put/get counters; the table shows the same;
#  - after the job: the daemon-wide counters keep the job's puts/gets and
#    bytes, attaches/detaches are counted, no client is left; the table
#    and `--settings` output contain the expected keys; `hoistctl ping`.
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
ctl() { "$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" "$@"; }
fail=0
FAIL() { echo "[it_stats] FAIL: $*" >&2; fail=1; }

out=$(mktemp -d "$HOIST_RUNTIME_DIR/stats.XXXXXX")
job=statsjob-$$
IT_OUT=$out "$HOIST_HOISTRUN" -n 2 --job "$job" --timeout 40 "$prog" || FAIL "the job failed (status $?)"

# ---- during the job ---------------------------------------------------------
if [ -s "$out/mid.json" ]; then
	python3 -m json.tool "$out/mid.json" >/dev/null || FAIL "mid-job stats --json is not valid JSON: $(cat "$out/mid.json")"
	python3 - "$out/mid.json" "$job" "$(id -u)" <<'EOF' || FAIL "mid-job JSON content (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
job, uid = sys.argv[2], int(sys.argv[3])
bad = []
for k in ("version", "uptime_ms", "daemon", "clients"):
    if k not in doc:
        bad.append("top-level key %r missing" % k)
d = doc.get("daemon", {})
for k in ("puts", "gets", "put_bytes", "get_bytes", "rejected", "attaches", "clients", "jobs"):
    if k not in d:
        bad.append("daemon counter %r missing" % k)
mine = [c for c in doc.get("clients", []) if c.get("job") == job]
if sorted(c.get("rank") for c in mine) != [0, 1]:
    bad.append("expected ranks [0, 1] of job %s among clients, got %r" % (job, [c.get("rank") for c in mine]))
for c in mine:
    cnt = c.get("counters", {})
    if not isinstance(c.get("pid"), int) or c["pid"] <= 0:
        bad.append("client rank %s: bad pid %r" % (c.get("rank"), c.get("pid")))
    if c.get("uid") != uid:
        bad.append("client rank %s: uid %r, expected %d" % (c.get("rank"), c.get("uid"), uid))
    # 10 puts and 10 gets each (staged ones may be split, so >=)
    for k, lo in (("puts", 10), ("gets", 10), ("put_bytes", 5 * 1000 + 5 * 8), ("get_bytes", 5 * 1000 + 5 * 8)):
        if not isinstance(cnt.get(k), int) or cnt[k] < lo:
            bad.append("client rank %s: counter %s = %r, expected >= %d" % (c.get("rank"), k, cnt.get(k), lo))
    if cnt.get("rejected", 0) != 0:
        bad.append("client rank %s: rejected = %r, expected 0" % (c.get("rank"), cnt.get("rejected")))
if d.get("clients", 0) < 2:
    bad.append("daemon counter clients = %r, expected >= 2" % d.get("clients"))
for b in bad:
    print("  " + b, file=sys.stderr)
if bad:
    print(json.dumps(doc, indent=1), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
else
	FAIL "rank 0 did not save the mid-job stats ($out/mid.json)"
fi
if [ -s "$out/mid.txt" ]; then
	for w in "$job" puts gets rejected; do
		grep -q -- "$w" "$out/mid.txt" || FAIL "mid-job stats table lacks '$w': $(cat "$out/mid.txt")"
	done
else
	FAIL "rank 0 did not save the mid-job stats table ($out/mid.txt)"
fi

# ---- after the job ------------------------------------------------------------
ctl ping >/dev/null || FAIL "hoistctl ping failed"
after=
for _ in $(seq 1 50); do # the clients' detach may still be in flight
	after=$(ctl stats --json) || { FAIL "hoistctl stats --json failed"; break; }
	n=$(printf '%s' "$after" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["clients"]))' 2>/dev/null)
	[ "$n" = 0 ] && break
	sleep 0.1
done
printf '%s' "$after" | python3 -m json.tool >/dev/null || FAIL "stats --json after the job is not valid JSON: $after"
printf '%s' "$after" | python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = []
dm = d["daemon"]
for k, lo in (("puts", 20), ("gets", 20), ("put_bytes", 2 * (5 * 1000 + 5 * 8)), ("get_bytes", 2 * (5 * 1000 + 5 * 8)),
              ("attaches", 2), ("detaches", 2), ("jobs_started", 1)):
    if not isinstance(dm.get(k), int) or dm[k] < lo:
        bad.append("daemon counter %s = %r, expected >= %d" % (k, dm.get(k), lo))
for k, want in (("clients", 0), ("jobs", 0), ("rejected", 0), ("client_deaths", 0)):
    if dm.get(k) != want:
        bad.append("daemon counter %s = %r, expected %d" % (k, dm.get(k), want))
if d["clients"]:
    bad.append("clients still listed after the job: %r" % d["clients"])
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
' || FAIL "stats after the job: $after"

table=$(ctl stats) || FAIL "hoistctl stats (table) failed"
for w in puts gets put_bytes attaches uptime; do
	case $w in
	uptime) printf '%s' "$table" | grep -q " up " || FAIL "table lacks the uptime line: $table" ;;
	*) printf '%s\n' "$table" | grep -Eq "^ *$w +[1-9][0-9]*$" || FAIL "table lacks a nonzero '$w' row: $table" ;;
	esac
done

settings=$(ctl stats --json --settings) || FAIL "hoistctl stats --json --settings failed"
printf '%s' "$settings" | python3 -c '
import json, sys
s = json.load(sys.stdin).get("settings", {})
want = ["runtime_dir", "log_level", "spin_us", "sq_entries", "cq_entries", "staging_bytes",
        "max_heap_bytes", "batch", "job_timeout_ms", "max_clients"]
missing = [k for k in want if k not in s]
if missing:
    print("  settings missing: %r (have %r)" % (missing, sorted(s)), file=sys.stderr)
sys.exit(1 if missing else 0)
' || FAIL "stats --settings"

rm -rf "$out"
[ "$fail" = 0 ] && echo "[it_stats] PASS" >&2
exit "$fail"
