#!/usr/bin/env bash
# it_stats.sh <it_stats_job>: run under harness.sh.
# Runs a small 2-PE job that does 10 puts and 10 gets per PE; checks
#  - during the job (rank 0 saved them): `hoistctl stats --json` is valid
#    JSON listing both clients of the job (job key, ranks 0 and 1, pids,
#    uid) with nonzero put/get counters; the table shows the same;
#  - after the job: the daemon-wide counters keep the job's puts/gets and
#    bytes, attaches/detaches are counted, no client is left; the table
#    and `--settings` output contain the expected keys; `hoistctl ping`;
#  - phase ids match across ranks: both ranks list the same ids (barrier
#    call sites), resolved to it_stats_job.c:LINE for the job's own
#    barriers (issue 13: they were code addresses, different per rank);
#  - `stats --interval 1 --count 2 --json`: two snapshots, the second with
#    per-second rates of the counters only (stats_requests > 0);
#  - `--version` of hoistctl, hoistd and hoistrun; settings only with
#    --settings, apart from the counters.
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
	for w in "$job" puts= gets= "daemon counters" "daemon gauges"; do
		grep -q -- "$w" "$out/mid.txt" || FAIL "mid-job stats table lacks '$w': $(cat "$out/mid.txt")"
	done
else
	FAIL "rank 0 did not save the mid-job stats table ($out/mid.txt)"
fi

# ---- phase ids: the same on every rank ---------------------------------------
if [ -s "$out/mid.json" ]; then
	python3 - "$out/mid.json" "$job" <<'EOF' || FAIL "phase ids across ranks (above)"
import json, re, sys
doc = json.load(open(sys.argv[1]))
mine = {c["rank"]: c for c in doc["clients"] if c["job"] == sys.argv[2]}
bad = []
ids = {r: sorted(p["id"] for p in c.get("phases", [])) for r, c in mine.items()}
if sorted(ids) != [0, 1] or not ids[0]:
    bad.append("no phases of both ranks: %r" % ids)
else:
    # a phase is listed once it ended: the snapshot may catch one rank a
    # phase further than the other, so one list contains the other
    a, b = set(ids[0]), set(ids[1])
    if len(a & b) < 2 or not (a <= b or b <= a):
        bad.append("phase ids differ between ranks: rank 0 %r, rank 1 %r" % (ids[0], ids[1]))
sites = sorted({p["site"] for c in mine.values() for p in c.get("phases", [])})
if not any(re.fullmatch(r"it_stats_job\.c:\d+", s) for s in sites):
    bad.append("no phase resolved to it_stats_job.c:LINE: %r" % sites)
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
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

printf '%s\n' "$table" | grep -q runtime_dir && FAIL "settings in the table without --settings: $table"
ctl stats --settings | grep -q "^settings" || FAIL "no separate settings section with --settings"

# ---- --interval: snapshots with rates ------------------------------------------
ctl stats --interval 1 --count 2 --json >"$out/interval.json" || FAIL "stats --interval 1 --count 2 --json failed"
python3 - "$out/interval.json" <<'EOF' || FAIL "stats --interval (above): $(cat "$out/interval.json")"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = []
if len(docs) != 2:
    bad.append("%d snapshots, expected 2" % len(docs))
else:
    if "rates" in docs[0]:
        bad.append("rates in the first snapshot")
    r = docs[1].get("rates", {})
    gauges = set(docs[1].get("gauges", []))
    if not r.get("stats_requests", 0) > 0:
        bad.append("rate of stats_requests = %r, expected > 0" % r.get("stats_requests"))
    if gauges & set(r):
        bad.append("rates of gauges: %r" % sorted(gauges & set(r)))
    if not docs[1].get("interval_s", 0) > 0:
        bad.append("interval_s = %r" % docs[1].get("interval_s"))
    if any(v < 0 for v in r.values()):
        bad.append("negative rates")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
n=$(ctl stats --interval 1 --count 2 | grep -c "^rates over the last") || true
[ "$n" = 1 ] || FAIL "the table with --interval: $n 'rates over the last' lines, expected 1"

# ---- --version ------------------------------------------------------------------
for b in "$HOIST_HOISTCTL" "$HOIST_HOISTD" "$HOIST_HOISTRUN"; do
	v=$("$b" --version 2>&1) || FAIL "$b --version failed: $v"
	printf '%s' "$v" | grep -Eq "^(hoistctl|hoistd|hoistrun) [0-9]+\.[0-9]+\.[0-9]+" || FAIL "$b --version says '$v'"
done

rm -rf "$out"
[ "$fail" = 0 ] && echo "[it_stats] PASS" >&2
exit "$fail"
