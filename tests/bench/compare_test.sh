#!/usr/bin/env bash
# compare_test.sh: bench/compare.py turns rounds of old and new results into
# the verdicts it promises (synthetic inputs: no benchmark runs here).
set -eu
py=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
row() { printf '{"name":"%s","unit":"%s","median":%s,"min":0,"max":0}' "$1" "$2" "$3"; }
for r in 1 2 3; do
	o=$((100 + r)) # old: 101..103
	printf '{"runs":[{"pes":2,"rows":[%s,%s,%s,%s]}]}\n' "$(row lat ns $o)" "$(row lat2 ns $o)" \
		"$(row bw GB/s $o)" "$(row bw2 GB/s $o)" >"$d/run.old.$r.json"
	printf '{"runs":[{"pes":2,"rows":[%s,%s,%s,%s]}]}\n' "$(row lat ns $((o + 50)))" "$(row lat2 ns 102)" \
		"$(row bw GB/s $((o + 50)))" "$(row bw2 GB/s $((o - 50)))" >"$d/run.new.$r.json"
	mkdir -p "$d/kernels.old.$r" "$d/kernels.new.$r"
	echo "rep=1 kernel=halo variant=auto pes=4 iters=9 us_per_iter=10.0 errors=0" >"$d/kernels.old.$r/runs.txt"
	echo "rep=1 kernel=halo variant=auto pes=4 iters=9 us_per_iter=5.0 errors=0" >"$d/kernels.new.$r/runs.txt"
done
out=$(python3 "$py" "$d")
echo "$out"
fail=0
want() { # want ROW VERDICT
	if ! echo "$out" | grep -E "^\S+ +$1 " | grep -q " $2\$"; then
		echo "[compare_test] FAIL: row '$1' should say $2" >&2
		fail=1
	fi
}
want "2 PEs: lat" WORSE     # time up by half
want "2 PEs: lat2" same     # inside old's spread
want "2 PEs: bw" better     # bandwidth up
want "2 PEs: bw2" WORSE     # bandwidth down
want "kernel halo auto" better
echo "$out" | grep -q "^5 rows, 3 rounds per side, 2 outside" || { echo "[compare_test] FAIL: summary line" >&2; fail=1; }
[ "$fail" = 0 ] && echo "[compare_test] PASS" >&2
exit "$fail"
