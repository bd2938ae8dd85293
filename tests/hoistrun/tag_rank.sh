#!/usr/bin/env bash
# A rank for tag_output.sh: lines written in two pieces (another rank's
# output may come between the pieces), to stdout and stderr, then a burst
# written just before exiting, a last line without a newline, and a line
# that a child left behind writes to stderr after the rank has exited.
r=$HOIST_RANK
for i in $(seq 1 40); do
	printf 'rank %s line %d a' "$r" "$i"
	sleep 0.002
	printf 'b\n'
	printf 'rank %s err %d x' "$r" "$i" >&2
	printf 'y\n' >&2
done
seq 1 20000 | sed "s/^/rank $r bulk /"
(sleep 0.3; printf 'rank %s late\n' "$r" >&2) &
printf 'rank %s last' "$r"
exit 0
