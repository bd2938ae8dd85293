#!/usr/bin/env bash
# conf_example.sh <hoistd> <deploy/hoistd.conf.example>: the committed
# example is what `hoistd --config-example` generates from the settings
# table now (a setting added, renamed or given another default or help
# without regenerating the file fails here), and with every setting
# uncommented it is a valid configuration of the built-in defaults.
#   regenerate: cmake --build build --target conf-example
set -u
hoistd=$1 example=$2
t=$(mktemp -d /tmp/hoist-confex.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail=0
"$hoistd" --config-example >"$t/new" || { echo "[conf_example] FAIL: hoistd --config-example failed" >&2; exit 1; }
if ! diff -u "$example" "$t/new" >"$t/diff"; then
	cat "$t/diff" >&2
	echo "[conf_example] FAIL: $example is not what hoistd --config-example prints;" \
		"regenerate it: cmake --build build --target conf-example" >&2
	fail=1
fi
n=$("$hoistd" --help | grep -c "(default: ")
m=$(grep -c '^#[a-z_]* =' "$t/new")
[ "$n" = "$m" ] || { echo "[conf_example] FAIL: $m settings in the example, $n in hoistd --help" >&2; fail=1; }
sed 's/^#\([a-z_]* =.*\)$/\1/' "$t/new" >"$t/all.conf"
# shellcheck disable=SC2046 # one -u per variable of the daemon's
clean=(env $(env | sed -n 's/^\(HOISTD\?_[A-Z_]*\)=.*/-u \1/p'))
if ! "${clean[@]}" "$hoistd" --config "$t/all.conf" --print-config >"$t/eff" 2>"$t/err"; then
	echo "[conf_example] FAIL: the example with every setting uncommented: $(cat "$t/err")" >&2
	fail=1
else
	bad=$(grep -v '# file;' "$t/eff")
	[ -z "$bad" ] || { echo "[conf_example] FAIL: settings not from the file: $bad" >&2; fail=1; }
	"${clean[@]}" "$hoistd" --config /dev/null --print-config 2>/dev/null | sed 's/ *#.*//' >"$t/def"
	sed 's/ *#.*//' "$t/eff" | diff -u "$t/def" - >&2 || { echo "[conf_example] FAIL: the example's values are not the defaults" >&2; fail=1; }
fi
[ "$fail" = 0 ] && echo "[conf_example] PASS: $m settings" >&2
exit "$fail"
