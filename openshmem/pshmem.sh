#!/bin/sh
# pshmem.sh OUT OBJECT... - the linker options that define pshmem_X as an
# alias of every global function shmem_X the objects define (OpenSHMEM's
# profiling interface), one per line, for the compiler driver's @OUT.
out=$1
shift
nm --defined-only -g "$@" | awk '$2 == "T" && $3 ~ /^shmem_/ { print "-Wl,--defsym=p" $3 "=" $3 }' |
	sort -u >"$out.tmp" && mv "$out.tmp" "$out"
