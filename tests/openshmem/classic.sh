#!/usr/bin/env bash
# Unmodified OpenSHMEM programs built with oshcc and run with oshrun (the
# build tree's): classic/hello.c, classic/ring.c and classic/legacy_mpp.c
# (mpp/shmem.h, start_pes, no shmem_finalize); also oshcc -show and
# both --help texts.
#   classic.sh <oshcc> <oshrun> <source dir of classic/>
set -euo pipefail
OSHCC=$1 OSHRUN=$2 SRC=$3
T=$(mktemp -d /tmp/hoist-osh.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

"$OSHCC" --help >"$T/cc.help" || fail "oshcc --help exits nonzero"
grep -q "^Usage: oshcc" "$T/cc.help" || fail "oshcc --help"
"$OSHRUN" --help >"$T/run.help" || fail "oshrun --help exits nonzero"
grep -q "^Usage: oshrun" "$T/run.help" || fail "oshrun --help"
grep -q -- "--nodes K" "$T/run.help" || fail "oshrun --help does not show hoistrun's options"
show=$("$OSHCC" -show -o x x.c)
echo "oshcc -show: $show"
[[ "$show" == *"-lhoist-shmem"* && "$show" == *"-Wl,-rpath,"* && "$show" == *"-I"* ]] ||
	fail "oshcc -show lacks -I, rpath or -lhoist-shmem"
[[ "$("$OSHCC" -show -c x.c)" != *"-lhoist-shmem"* ]] || fail "oshcc -c adds link flags"

for p in hello ring legacy_mpp; do
	"$OSHCC" -O2 -Wall -Werror -o "$T/$p" "$SRC/classic/$p.c" || fail "oshcc $p.c"
done
"$OSHRUN" -np 3 "$T/hello" >"$T/hello.out" || fail "oshrun -np 3 hello"
cat "$T/hello.out"
for pe in 0 1 2; do
	grep -q "^hello from PE $pe of 3 (hoist.*OpenSHMEM 1.5)$" "$T/hello.out" || fail "no hello from PE $pe"
done
"$OSHRUN" -n 4 "$T/ring" >"$T/ring.out" || fail "oshrun -n 4 ring"
cat "$T/ring.out"
# token: 1 + (2) + (3) + (4) = 10
grep -qx "ring: token 10 after 4 PEs, count 4" "$T/ring.out" || fail "ring result"
"$OSHRUN" -n 4 --nodes 2 "$T/ring" >"$T/ring2.out" || fail "oshrun --nodes 2 ring"
grep -qx "ring: token 10 after 4 PEs, count 4" "$T/ring2.out" || fail "ring result across daemons"
# mpp/shmem.h (the SGI/Cray header name), start_pes and no finalize:
# 1 + 2 + 3 = 6 on each PE
"$OSHRUN" -np 3 "$T/legacy_mpp" >"$T/legacy.out" || fail "oshrun -np 3 legacy_mpp"
cat "$T/legacy.out"
for pe in 0 1 2; do
	grep -qx "legacy: PE $pe of 3 total 6" "$T/legacy.out" || fail "legacy_mpp on PE $pe"
done
echo "classic programs: ok"
