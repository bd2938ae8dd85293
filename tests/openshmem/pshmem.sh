#!/usr/bin/env bash
# The profiling interface: pshmem/prof.c (a PMPI-style tool: it defines
# shmem_X, counts the calls and calls pshmem_X) built by the build tree's
# oshcc with -Werror and run by its oshrun on one and on two daemons; the
# generated pshmem.h compiles as C++ too; and every pshmem_X it declares is
# defined by libhoist-shmem (each declared name is one the library exports).
#   pshmem.sh <oshcc> <oshrun> <source dir> <libhoist-shmem.so> <pshmem.h>
set -euo pipefail
OSHCC=$1 OSHRUN=$2 SRC=$3 LIB=$4 HDR=$5
T=$(mktemp -d /tmp/hoist-pshmem.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[[ "$("$OSHCC" -show -c x.c)" == *"-I$(dirname "$HDR")"* ]] || fail "oshcc does not find pshmem.h"
"$OSHCC" -O2 -std=c11 -Wall -Wextra -Werror -o "$T/prof" "$SRC/pshmem/prof.c" || fail "oshcc prof.c"
"$OSHRUN" -n 2 "$T/prof" >"$T/out1" || fail "oshrun -n 2 prof"
cat "$T/out1"
grep -q "^prof: ok, 2 PEs, calls init 1 putmem 1 " "$T/out1" || fail "prof on one daemon"
"$OSHRUN" -n 4 --nodes 2 "$T/prof" >"$T/out2" || fail "oshrun -n 4 --nodes 2 prof"
cat "$T/out2"
grep -q "^prof: ok, 4 PEs," "$T/out2" || fail "prof across daemons"

# C++: the header is usable there (the complex types are left out, as in shmem.h)
if command -v c++ >/dev/null; then
	printf '#include <pshmem.h>\nint (*f)(void) = pshmem_n_pes;\nint main() { return f == 0; }\n' >"$T/x.cc"
	OSHCC_CC=c++ "$OSHCC" -Wall -Werror -c -o "$T/x.o" "$T/x.cc" || fail "pshmem.h in C++"
fi

# declared names vs the library's exports
grep -o '\bpshmem_[A-Za-z0-9_]*(' "$HDR" | tr -d '(' | sort -u >"$T/declared"
nm -D --defined-only "$LIB" | awk '{ print $3 }' | grep '^pshmem_' | sort -u >"$T/defined"
nd=$(wc -l <"$T/declared")
[ "$nd" -gt 1000 ] || fail "pshmem.h declares only $nd names"
missing=$(comm -23 "$T/declared" "$T/defined")
[ -z "$missing" ] || fail "declared in pshmem.h, not in the library: $(echo $missing | head -c 400)"
echo "pshmem.h: $nd pshmem_* declared, all defined by $(basename "$LIB")"
echo "pshmem: ok"
