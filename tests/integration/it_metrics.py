#!/usr/bin/env python3
"""Check `hoistctl metrics` with a real Prometheus text parser.

  it_metrics.py FILE JOB [tcp]

FILE was saved while the 2 ranks of JOB were attached (it_stats_job). JOB
is given as the label value the metrics must carry (bytes that are not
UTF-8 and control characters other than newline as U+FFFD). With "tcp":
the daemon is one of two on loopback (peers, tcp counters).
Exit 77 if python3-prometheus-client is not installed.
"""
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("it_metrics.py: SKIP: python3-prometheus-client is not installed "
          "(scripts/deps.sh installs it); the metrics were not parsed", file=sys.stderr)
    sys.exit(77)

path, job = sys.argv[1], sys.argv[2]
tcp = len(sys.argv) > 3 and sys.argv[3] == "tcp"
text = open(path, encoding="utf-8").read()  # must be UTF-8 at all
fams = {}
for f in text_string_to_metric_families(text):
    if f.name in fams:
        print("family %s appears twice (its samples must be together)" % f.name, file=sys.stderr)
        sys.exit(1)
    fams[f.name] = f
bad = []


def fam(name, typ):
    f = fams.get(name)
    if f is None:
        bad.append("family %s missing" % name)
        return None
    if f.type != typ:
        bad.append("family %s has type %s, expected %s" % (name, f.type, typ))
    return f


for f in fams.values():
    if f.type not in ("counter", "gauge"):
        bad.append("%s: type %s" % (f.name, f.type))
    if not f.documentation:
        bad.append("%s: no HELP text" % f.name)
    if not f.name.startswith("hoist_"):
        bad.append("%s: no hoist_ prefix" % f.name)
    for s in f.samples:
        if f.type == "counter" and not s.name.endswith("_total"):
            bad.append("counter sample %s does not end in _total" % s.name)
        if f.type == "gauge" and s.name.endswith("_total"):
            bad.append("gauge sample %s ends in _total" % s.name)

here = 1 if tcp else 2  # ranks on this daemon (tcp: one per daemon)
f = fam("hoist_puts", "counter")
if f and not (f.samples and f.samples[0].name == "hoist_puts_total" and f.samples[0].value >= 10 * here):
    bad.append("hoist_puts_total: %r, expected >= %d" % (f.samples, 10 * here))
f = fam("hoist_clients", "gauge")
if f and f.samples[0].value < here:
    bad.append("hoist_clients = %r, expected >= %d" % (f.samples[0].value, here))
fam("hoist_client_pf_history", "gauge")
fam("hoist_uptime_seconds", "gauge")
f = fam("hoist_info", "gauge")
want_tr = "tcp" if tcp else "self"  # one node: no network transport
if f and f.samples[0].labels.get("transport") != want_tr:
    bad.append("hoist_info transport %r, expected %r" % (f.samples[0].labels, want_tr))
f = fam("hoist_transport_verbs", "gauge")
for name in ("hoist_spin_us", "hoist_spin_us_total", "hoist_rdma_writes", "hoist_pinned_refused"):
    if name in fams:
        bad.append("%s present (a setting, or verbs on a %s daemon)" % (name, want_tr))
# the node's pinned-memory budget, whatever the transport
fam("hoist_pinned_limit", "gauge")
fam("hoist_pinned_bytes", "gauge")
if tcp:
    fam("hoist_tcp_requests", "counter")
    f = fam("hoist_peer_rtt_us", "gauge")
    f = fam("hoist_peer_ops_out", "counter")
    if f and not any(s.labels.get("peer") for s in f.samples):
        bad.append("hoist_peer_ops_out has no peer label: %r" % f.samples)
    fam("hoist_peer_state", "gauge")
elif "hoist_tcp_requests" in fams:
    bad.append("hoist_tcp_requests on a daemon without tcp")

f = fam("hoist_client_puts", "counter")
if f:
    mine = [s for s in f.samples if s.labels.get("job") == job]
    if not tcp and sorted(s.labels["rank"] for s in mine) != ["0", "1"]:
        bad.append("hoist_client_puts_total of job %r: ranks %r (labels seen: %r)"
                   % (job, [s.labels.get("rank") for s in mine], [s.labels for s in f.samples]))
    if tcp and len(mine) != 1:
        bad.append("hoist_client_puts_total of job %r: %d samples, expected 1 (one rank per daemon)" % (job, len(mine)))
    for s in mine:
        if set(s.labels) != {"job", "rank", "uid"}:
            bad.append("hoist_client_puts_total labels %r" % s.labels)
        if s.value < 10:
            bad.append("hoist_client_puts_total%r = %r, expected >= 10" % (s.labels, s.value))
f = fam("hoist_phase_runs", "counter")
if f:
    mine = [s for s in f.samples if s.labels.get("job") == job]
    if not mine:
        bad.append("no hoist_phase_runs_total of job %r" % job)
    for s in mine:
        if not s.labels.get("phase") or not s.labels.get("phase_id", "").startswith("0x"):
            bad.append("phase labels %r" % s.labels)
for b in bad:
    print("  " + b, file=sys.stderr)
print("it_metrics.py: %d families parsed, %d problems" % (len(fams), len(bad)), file=sys.stderr)
sys.exit(1 if bad else 0)
