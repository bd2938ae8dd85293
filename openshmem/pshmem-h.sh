#!/bin/sh
# pshmem-h.sh CC SHMEM_H OUT - writes pshmem.h, the OpenSHMEM profiling
# header: a declaration of pshmem_X for every function shmem_X that shmem.h
# declares, with shmem_X's signature. The declarations come from shmem.h
# itself, run through the C preprocessor (which expands its X-macro type
# tables), so the two headers cannot drift apart; the library defines every
# pshmem_X as an alias of shmem_X (pshmem.sh). The _Complex declarations
# are left out of C++, as in shmem.h.
cc=$1
in=$2
out=$3
# shellcheck disable=SC2086 # $cc may carry flags
$cc -E -P -std=c11 -x c "$in" >"$out.pp" || exit 1
{
	cat <<'HEAD'
/*
 * pshmem.h - the OpenSHMEM profiling interface of libhoist-shmem: every
 * shmem_* routine of shmem.h also as pshmem_* (the same code), so a tool
 * can define shmem_X itself and call pshmem_X, as MPI's PMPI_*.
 * GENERATED at build time from shmem.h by openshmem/pshmem-h.sh: do not
 * edit.
 */
#ifndef HOIST_PSHMEM_H
#define HOIST_PSHMEM_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

HEAD
	# one declaration per ';': the function declarations whose name
	# starts with shmem_ (a type such as shmem_ctx_t is never followed by
	# '('), renamed
	tr '\n' ' ' <"$out.pp" | awk 'BEGIN { RS = ";" }
	{
		gsub(/[ \t]+/, " ")
		sub(/^ /, "")
		if ($0 ~ /^(typedef|extern|struct|enum|union)[ ]/ || $0 ~ /[{}]/)
			next
		if (!match($0, /(^|[^A-Za-z0-9_])shmem_[A-Za-z0-9_]* ?\(/))
			next
		pre = substr($0, 1, RSTART - 1)
		m = substr($0, RSTART, RLENGTH)
		rest = substr($0, RSTART + RLENGTH)
		sub(/shmem_/, "pshmem_", m)
		d = pre m rest ";"
		if (d in seen)
			next
		seen[d] = 1
		if (d ~ /_Complex/)
			print "#ifndef __cplusplus\n" d "\n#endif"
		else
			print d
	}'
	cat <<'TAIL'

#ifdef __cplusplus
}
#endif

#endif /* HOIST_PSHMEM_H */
TAIL
} >"$out.tmp" || exit 1
rm -f "$out.pp"
mv "$out.tmp" "$out"
