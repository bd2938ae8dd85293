#!/usr/bin/env bash
# check-man.sh DIR hoistd hoistctl hoistrun: the generated pages format
# without a groff warning and say what the programs say: every setting of
# hoistd --help is in hoistd.conf(5) with its default, every option of
# hoistctl and hoistrun --help in their pages, every function of hoist.h
# in hoist(3); hoistd's environment is HOISTD_NAME (HOIST_NAME deprecated).
set -u
dir=$1 hoistd=$2 hoistctl=$3 hoistrun=$4
fail=0
FAIL() { echo "[check-man] FAIL: $*" >&2; fail=1; }
command -v groff >/dev/null || { echo "[check-man] skipped: groff not installed" >&2; exit 77; }
render() { groff -man -Tutf8 -P -cbou "$1" 2>/dev/null; }
for p in hoistd.8 hoistd.conf.5 hoistctl.1 hoistrun.1 hoist.3; do
	[ -s "$dir/$p" ] || { FAIL "$p missing or empty"; continue; }
	w=$(groff -man -Tutf8 -ww -z "$dir/$p" 2>&1)
	[ -z "$w" ] || FAIL "$p: groff warnings: $w"
done
conf=$(render "$dir/hoistd.conf.5")
while read -r name def; do
	grep -Eq "^ *$name( |\$)" <<<"$conf" || FAIL "hoistd.conf(5) lacks setting $name"
	grep -qF "Default: $def." <<<"$conf" || FAIL "hoistd.conf(5) lacks the default '$def' (of $name)"
done < <("$hoistd" --help | sed -n 's/^ *--\([a-z0-9-]*\) .*(default: \(.*\))$/\1 \2/p' | tr - _)
# the daemon's environment is HOISTD_NAME; HOIST_NAME is named only as deprecated
for pair in "hoistd --help:$("$hoistd" --help)" "hoistd(8):$(render "$dir/hoistd.8")" "hoistd.conf(5):$conf"; do
	what=${pair%%:*} text=${pair#*:}
	grep -q "HOISTD_NAME" <<<"$text" || FAIL "$what does not name the environment HOISTD_NAME"
	grep -q "deprecated" <<<"$text" || FAIL "$what does not say HOIST_NAME is deprecated"
done
n=$("$hoistd" --help | grep -c "(default: ")
[ "$n" -gt 20 ] || FAIL "hoistd --help lists only $n settings"
for pair in "hoistctl.1:$hoistctl" "hoistrun.1:$hoistrun"; do
	p=${pair%%:*} bin=${pair#*:}
	text=$(render "$dir/$p")
	for opt in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -qF -- "$opt" <<<"$text" || FAIL "$p lacks $opt"
	done
done
api=$(render "$dir/hoist.3")
src=$(dirname "$0")/../client/include/hoist.h
for fn in $(grep -o 'hoist_[a-z_]*(' "$src" | tr -d '(' | sort -u); do
	grep -q "$fn" <<<"$api" || FAIL "hoist(3) lacks $fn"
done
[ "$fail" = 0 ] && echo "[check-man] PASS: 5 pages, $n settings" >&2
exit "$fail"
