#!/usr/bin/env bash
# Install test (issue 13): install the build into a temporary prefix, then
# use it as an outside project would.
#
#   install.sh <build dir> <source dir of tests/install>
#
#  1. cmake --install <build> --prefix T/stage (the build was configured
#     with another prefix: nothing may keep that one);
#  2. the systemd unit names T/stage/sbin/hoistd; systemd-analyze verify
#     accepts it (skipped, with a note, when systemd-analyze is missing);
#  3. libhoist exports the public API only: no hoist__* in nm -D;
#  4. the tree is moved to T/moved (relocatable: pkg-config and the CMake
#     package must follow), then outside/app.c is built with
#     `pkg-config --cflags --libs hoist` and with find_package(hoist);
#  5. both programs run as one rank (HOIST_RANK=0 HOIST_SIZE=1) against a
#     hoistd from the moved tree, which must stop with status 0;
#  6. the installed mpirun prologue/epilogue (libexec/hoist) start and stop
#     a hoistd of the same install with no hoist binary in PATH;
#  7. the installed hoistrun, with no daemon anywhere, starts the install's
#     sbin/hoistd as the job's private daemon;
#  8. OpenSHMEM: the moved tree's oshcc builds tests/openshmem/classic/ring.c
#     unmodified, its oshrun -np 2 runs it (private daemon, no LD_LIBRARY_PATH:
#     the rpath of oshcc and libhoist-shmem's $ORIGIN find the libraries), the
#     profiling tool tests/openshmem/pshmem/prof.c builds against the
#     installed pshmem.h and runs, and `pkg-config hoist-shmem` gives the same include and library.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
T=$(mktemp -d /tmp/hoist-install.XXXXXX)
dpid=
cleanup() {
	if [[ -n "$dpid" ]] && kill -0 "$dpid" 2>/dev/null; then kill -KILL "$dpid"; fi
	rm -rf "$T"
}
trap cleanup EXIT
fail() {
	echo "install test: FAIL: $*" >&2
	exit 1
}
step() { echo "---- $*"; }

step "cmake --install $build --prefix $T/stage"
cmake --install "$build" --prefix "$T/stage" >"$T/install.log" || {
	cat "$T/install.log"
	fail "cmake --install"
}
P=$T/stage
libdir=$(find "$P" -name 'libhoist.so' -printf '%h\n' | head -n1)
[[ -n "$libdir" ]] || fail "no libhoist.so installed"
pcdir=$libdir/pkgconfig
for f in "$P/sbin/hoistd" "$P/bin/hoistctl" "$P/bin/hoistrun" "$P/include/hoist.h" \
	"$pcdir/hoist.pc" "$libdir/cmake/hoist/hoistConfig.cmake" \
	"$libdir/cmake/hoist/hoistConfigVersion.cmake" "$P/lib/systemd/system/hoistd.service" \
	"$P/libexec/hoist/hoist-node.sh" "$P/libexec/hoist/mpirun-prologue.sh" \
	"$P/libexec/hoist/mpirun-epilogue.sh" "$P/libexec/hoist/slurm-prolog.sh" \
	"$P/libexec/hoist/slurm-epilog.sh" "$P/libexec/hoist/slurm-taskprolog.sh" \
	"$P/libexec/hoist/slurm-settings.sh" "$P/share/man/man8/hoistd.8" \
	"$P/share/man/man5/hoistd.conf.5" "$P/share/man/man1/hoistctl.1" \
	"$P/share/man/man1/hoistrun.1" "$P/share/man/man3/hoist.3" "$P/bin/oshcc" "$P/bin/oshrun" \
	"$P/include/shmem.h" "$P/include/shmemx.h" "$P/include/pshmem.h" "$pcdir/hoist-shmem.pc"; do
	[[ -e "$f" ]] || fail "not installed: ${f#"$T"/}"
done
[[ -e "$P/include/mpp/shmem.h" && -e "$P/include/mpp/shmemx.h" ]] ||
	fail "not installed: include/mpp/shmem.h, include/mpp/shmemx.h"
for f in "$P"/libexec/hoist/*.sh; do
	[[ -x "$f" ]] || fail "not executable: $f"
done

step "systemd unit"
unit=$P/lib/systemd/system/hoistd.service
grep -n '^ExecStart=' "$unit"
grep -qx "ExecStart=$P/sbin/hoistd" "$unit" || fail "the unit does not start $P/sbin/hoistd"
if command -v systemd-analyze >/dev/null 2>&1; then
	# verify also checks that ExecStart= exists and is executable
	out=$(systemd-analyze verify "$unit" 2>&1) || {
		echo "$out"
		fail "systemd-analyze verify $unit"
	}
	if grep -i "hoistd.service" <<<"$out"; then fail "systemd-analyze verify complains"; fi
	echo "systemd-analyze verify: ok"
else
	echo "NOTE: systemd-analyze not available; unit not verified (SKIPPED part)"
fi

step "exported symbols"
syms=$(nm -D --defined-only "$libdir/libhoist.so" | awk '{print $3}')
n_all=$(grep -c . <<<"$syms")
n_int=$(grep -c '^hoist__' <<<"$syms" || true)
echo "libhoist.so exports $n_all symbols, $n_int of them hoist__*"
((n_int == 0)) || {
	grep '^hoist__' <<<"$syms" | head
	fail "libhoist.so exports internal hoist__* symbols"
}
grep -q '^hoist_init@@' <<<"$syms" || fail "hoist_init is not exported"
if grep -v -e '^hoist_[a-z]' -e '^HOIST_' <<<"$syms"; then fail "non-hoist symbols exported"; fi

step "relocate: mv stage moved"
mv "$T/stage" "$T/moved"
P=$T/moved
libdir=${libdir/"$T/stage"/"$T/moved"}
pcdir=$libdir/pkgconfig

step "pkg-config"
export PKG_CONFIG_PATH=$pcdir
cflags=$(pkg-config --cflags hoist)
libs=$(pkg-config --libs hoist)
echo "cflags: $cflags"
echo "libs:   $libs"
inc=$(cd "$(pkg-config --variable=includedir hoist)" && pwd -P)
[[ "$inc" == "$(cd "$P/include" && pwd -P)" ]] || fail "pkg-config includedir is $inc, not $P/include"
pkg-config --print-requires-private hoist | grep -q libprotobuf-c || fail "Requires.private lacks libprotobuf-c"
# shellcheck disable=SC2086 # flags are lists of words
cc -std=c11 -Wall -Wextra -Werror $cflags -o "$T/app-pc" "$src/outside/app.c" $libs ||
	fail "building with pkg-config"

step "cmake find_package(hoist)"
cmake -S "$src/outside" -B "$T/outside-build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
	>"$T/outside.log" 2>&1 || {
	cat "$T/outside.log"
	fail "configuring the outside project"
}
cmake --build "$T/outside-build" >>"$T/outside.log" 2>&1 || {
	cat "$T/outside.log"
	fail "building the outside project"
}
grep -E '^hoist_DIR' "$T/outside-build/CMakeCache.txt"
grep -q "^hoist_DIR:PATH=$libdir/cmake/hoist" "$T/outside-build/CMakeCache.txt" ||
	fail "find_package(hoist) did not use the moved install"
# a version this package does not satisfy must be refused
mkdir -p "$T/badver"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES C)\nfind_package(hoist 9.0 REQUIRED)\n' \
	>"$T/badver/CMakeLists.txt"
if cmake -S "$T/badver" -B "$T/badver/b" -DCMAKE_PREFIX_PATH="$P" >/dev/null 2>&1; then
	fail "find_package(hoist 9.0) succeeded: no version check"
fi

step "run both against $P/sbin/hoistd"
rd=$T/rd
mkdir -m 0700 "$rd"
fifo=$T/ready
mkfifo "$fifo"
"$P/sbin/hoistd" --runtime-dir "$rd" --ready-fd 4 4>"$fifo" 2>"$T/hoistd.log" &
dpid=$!
exec 3<"$fifo"
read -r -u 3 ready || true
exec 3<&-
[[ "$ready" == READY ]] || {
	cat "$T/hoistd.log"
	fail "hoistd from the install did not become ready"
}
for app in "$T/app-pc" "$T/outside-build/app"; do
	out=$(HOIST_RANK=0 HOIST_SIZE=1 HOIST_JOB="inst-$$-${app##*/}" HOIST_RUNTIME_DIR=$rd \
		LD_LIBRARY_PATH=$libdir "$app") || fail "$app failed: $out"
	echo "$app: $out"
	lib=$(LD_LIBRARY_PATH=$libdir ldd "$app" | awk '/libhoist/ {print $3}')
	[[ "$lib" == "$libdir"/* ]] || fail "$app used $lib, not the installed library"
done
kill -TERM "$dpid"
rc=0
wait "$dpid" || rc=$?
dpid=
((rc == 0)) || {
	cat "$T/hoistd.log"
	fail "hoistd exited with status $rc"
}
echo "hoistd stopped with status 0"

step "installed mpirun prologue/epilogue, no hoist binary in PATH"
rd2=$T/rd2
env -i PATH=/usr/bin:/bin HOME="${HOME:-/tmp}" HOIST_RUNTIME_DIR="$rd2" \
	bash "$P/libexec/hoist/mpirun-prologue.sh" inst-job || fail "installed mpirun-prologue.sh"
pid=$(cat "$rd2/hoistd.pid")
exe=$(readlink "/proc/$pid/exe")
echo "prologue started $exe (pid $pid)"
[[ "$exe" == "$P/sbin/hoistd" ]] || fail "the prologue started $exe, not $P/sbin/hoistd"
out=$(HOIST_RANK=0 HOIST_SIZE=1 HOIST_JOB=inst-job HOIST_RUNTIME_DIR=$rd2 \
	LD_LIBRARY_PATH=$libdir "$T/app-pc") || fail "app against the prologue's daemon: $out"
env -i PATH=/usr/bin:/bin HOME="${HOME:-/tmp}" HOIST_RUNTIME_DIR="$rd2" \
	bash "$P/libexec/hoist/mpirun-epilogue.sh" inst-job || fail "installed mpirun-epilogue.sh"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the epilogue left hoistd $pid running"
step "installed hoistrun, no daemon anywhere, no hoist binary in PATH"
out=$(env -i PATH=/usr/bin:/bin HOIST_RUNTIME_DIR="$T/none" LD_LIBRARY_PATH="$libdir" \
	"$P/bin/hoistrun" -v -n 1 "$T/app-pc" 2>&1) || fail "installed hoistrun: $out"
echo "$out" | grep -E "private|exit status"
grep -q "started a private hoistd ($P/bin/../sbin/hoistd" <<<"$out" ||
	fail "installed hoistrun did not start $P/sbin/hoistd"
step "installed oshcc/oshrun: an unmodified OpenSHMEM program"
"$P/bin/oshcc" -o "$T/ring" "$src/../openshmem/classic/ring.c" || fail "installed oshcc"
out=$(env -i PATH=/usr/bin:/bin HOIST_RUNTIME_DIR="$T/none" "$P/bin/oshrun" -np 2 "$T/ring" 2>&1) ||
	fail "installed oshrun: $out"
echo "$out"
grep -qx "ring: token 3 after 2 PEs, count 2" <<<"$out" || fail "ring under the installed oshrun"
# the installed pshmem.h: a PMPI-style tool (shmem_X wrappers calling pshmem_X)
"$P/bin/oshcc" -Wall -Werror -o "$T/prof" "$src/../openshmem/pshmem/prof.c" || fail "installed oshcc, pshmem.h"
out=$(env -i PATH=/usr/bin:/bin HOIST_RUNTIME_DIR="$T/none" "$P/bin/oshrun" -np 2 "$T/prof" 2>&1) ||
	fail "installed oshrun prof: $out"
grep -q "^prof: ok, 2 PEs" <<<"$out" || fail "prof under the installed oshrun: $out"
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs hoist-shmem) || fail "pkg-config hoist-shmem"
[[ "$flags" == *"-I$P/"*"include"* && "$flags" == *"-lhoist-shmem"* ]] ||
	fail "pkg-config hoist-shmem: $flags"
echo "install test: PASS"
