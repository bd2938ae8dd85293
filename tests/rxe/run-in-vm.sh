#!/bin/bash
# tests/rxe/run-in-vm.sh -- run a command inside a throw-away QEMU VM that has
# Soft-RoCE (rdma_rxe) devices ready; stream its output, return its exit code.
#
#   usage: tests/rxe/run-in-vm.sh [--] CMD [ARGS...]
#     e.g. RXE_VM_NDEV=2 tests/rxe/run-in-vm.sh ./my-multi-daemon-test.sh
#
# Adapted for hoist from the shared recipe /work/shared/tools/rxe-vm/
# (run-in-rxe-vm.sh + NOTES.md, which document the pitfalls this works around).
#
# How it works
#   * tests/rxe/setup.sh (run first, cached) installs the Debian packages and
#     prepares Debian's own kernel (ELF vmlinux, booted via PVH) + initramfs.
#   * QEMU with TCG (software emulation): /dev/kvm on this host is nested PVM
#     and cannot run a stock kernel.  RXE_VM_ACCEL=kvm for real VT-x/AMD-V.
#   * The guest's root is the host's / over virtio-9p, read-only, with a tmpfs
#     overlay (guest writes elsewhere are discarded); the host's current
#     directory is mounted read-write at the same path, and the command runs
#     there as root.  So host-built binaries and the host's rdma-core libs
#     are used as they are (build with <= x86-64-v3: no -march=native).
#   * guest.sh creates RXE_VM_NDEV rxe devices rxe0.. on veths rxeveth0..
#     (IPs $RXE_VM_NET.1, .2, ...).  NDEV=2: the two ends of one veth pair,
#     with policy routing + permanent neighbours so that traffic between the
#     two local IPs crosses the wire.  An rdma_cm client must bind its source
#     IP (rdma_resolve_addr(src, dst)) to use the second device.
#   * stdout+stderr of the command come back merged (streamed, <= 0.2 s
#     delay); stdin is /dev/null; no TTY.
#
# Environment inside the guest (for scripts that start several processes):
#   RXE_DEVS="rxe0 rxe1"  RXE_IPS="10.77.0.1 10.77.0.2"  RXE_NETDEVS=..
#   RXE_DEV/RXE_IP/RXE_NETDEV (first device)  RXE_GID_INDEX (IPv4-mapped
#   RoCE v2 GID, normally 1)  RXE_VM=1  RXE_VM_RUNDIR.  Passed in from the
#   host: PATH, LD_LIBRARY_PATH, the names listed in RXE_VM_ENV and every
#   variable starting with one of RXE_VM_ENV_PREFIXES
#   [HOIST_ HOISTD_ CLUSTER_ IT_ MN_ RXE_SMOKE_].
#
# Knobs (all optional)
#   RXE_VM_NDEV     rxe devices (0 = no RDMA)                     [1]
#   RXE_VM_NET      first 3 octets of the rxe /24                 [10.77.0]
#   RXE_VM_MTU      netdev MTU (1500 -> RoCE MTU 1024; 9000 -> 4096) [1500]
#   RXE_VM_MEM      guest MiB                                     [1024]
#   RXE_VM_SMP      guest vCPUs                                   [nproc, max 4]
#   RXE_VM_TIMEOUT  seconds until the VM is killed (exit 124): a backstop [900]
#   RXE_VM_STALL    seconds without a byte of guest output (console, setup
#                   log, command output) until the VM is killed (exit 124):
#                   the watchdog that fires on lack of progress, not on
#                   total time, so a slow (loaded) host only takes longer [600]
#   RXE_VM_ACCEL    tcg | kvm (the other one is the fallback)     [tcg]
#   RXE_VM_TB_MB    TCG translation cache MiB                     [128]
#   RXE_VM_MODULES  extra guest kernel modules to load
#   RXE_VM_CACHE    cache dir             [${XDG_CACHE_HOME:-/var/tmp}/hoist-rxe]
#   RXE_VM_KPKG     guest kernel package  [what linux-image-amd64 depends on]
#   RXE_VM_CWD_RO=1 mount the cwd read-only in the guest
#   RXE_VM_ENV      extra host variable names to pass in
#   RXE_VM_KEEP=1   keep the run dir (console.log, setup.log, dmesg.log)
#   RXE_VM_VERBOSE=1  print guest logs and timings to stderr
#
# Exit status: the command's; 125 VM/setup failure (reason on stderr);
# 124 timeout; 77 the VM cannot be run here (no qemu/TCG/KVM, packages or
# kernel cannot be installed) -- "skip" for ctest.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
export RXE_VM_CACHE=${RXE_VM_CACHE:-${XDG_CACHE_HOME:-/var/tmp}/hoist-rxe}
CACHE=$RXE_VM_CACHE
MEM=${RXE_VM_MEM:-1024}
NPROC=$(nproc 2>/dev/null || echo 2)
SMP=${RXE_VM_SMP:-$((NPROC > 4 ? 4 : NPROC))}
TIMEOUT=${RXE_VM_TIMEOUT:-900}
STALL=${RXE_VM_STALL:-600}
ACCEL=${RXE_VM_ACCEL:-tcg}
NDEV=${RXE_VM_NDEV:-1}
NET=${RXE_VM_NET:-10.77.0}
MTU=${RXE_VM_MTU:-1500}
CWD_RO=${RXE_VM_CWD_RO:-0}
KEEP=${RXE_VM_KEEP:-0}
VERBOSE=${RXE_VM_VERBOSE:-0}

die() { echo "run-in-vm: $*" >&2; exit 125; }
skip() { echo "run-in-vm: SKIP: $*" >&2; exit 77; }
vlog() { [ "$VERBOSE" = 1 ] && echo "run-in-vm: $*" >&2; return 0; }
now() { date +%s.%N; }
T0=$(now)

[ "${1:-}" = "--" ] && shift
if [ $# -lt 1 ]; then
    awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2
    exit 2
fi
case "$NDEV" in '' | *[!0-9]*) die "RXE_VM_NDEV must be a number" ;; esac

# ------------------------------------------------------------- setup ---
KVER='' KERNEL='' INITRD='' KPKG_DIR=''
setup_args=(--quiet)
[ "$VERBOSE" = 1 ] && setup_args=()
setup_out=$(bash "$HERE/setup.sh" "${setup_args[@]}")
src=$?
case $src in
    0) ;;
    77) skip "prerequisites unavailable (see above)" ;;
    *) die "tests/rxe/setup.sh failed (rc=$src)" ;;
esac
eval "$setup_out"
if [ -z "$KERNEL" ] || [ -z "$INITRD" ] || [ -z "$KPKG_DIR" ]; then die "setup.sh gave no kernel/initrd"; fi
MODDIR="$KPKG_DIR/lib/modules/$KVER"

# ------------------------------------------------------ accelerator ---
QEMU=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found"
accels=$("$QEMU" -accel help 2>/dev/null)
have_accel() {
    case $1 in
        tcg) grep -qx tcg <<< "$accels" ;;
        kvm) grep -qx kvm <<< "$accels" && [ -r /dev/kvm ] && [ -w /dev/kvm ] ;;
        *) return 1 ;;
    esac
}
case "$ACCEL" in
    tcg) order="tcg kvm" ;;
    kvm) order="kvm tcg" ;;
    *) die "RXE_VM_ACCEL must be tcg or kvm" ;;
esac
USE=''
for a in $order; do have_accel "$a" && { USE=$a; break; }; done
[ -n "$USE" ] || skip "neither TCG nor KVM is available to $QEMU"
[ "$USE" = "$ACCEL" ] || echo "run-in-vm: $ACCEL unavailable, using $USE" >&2
# shellcheck disable=SC2054 # the commas belong to the option values
case "$USE" in
    kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
    *) ACCEL_ARGS=(-accel "tcg,thread=multi,tb-size=${RXE_VM_TB_MB:-128}" -cpu max,la57=off) ;;
esac

# --------------------------------------------------------- run dir ---
# POSIX-sh single quoting (config/env/cmd are read by busybox sh and dash)
sq() { local q="'\\''"; printf "'%s'" "${1//\'/$q}"; }
CWD=$(pwd -P)
mkdir -p "$CACHE/runs" || die "mkdir $CACHE/runs"
RUNDIR=$(mktemp -d "$CACHE/runs/run.XXXXXX") || die "mktemp"
: > "$RUNDIR/out"

mods="rdma_rxe ib_uverbs rdma_ucm ib_umad veth"
[ "$NDEV" -ge 3 ] && mods="$mods bridge"
[ "$NDEV" = 0 ] && mods=''
mods="$mods ${RXE_VM_MODULES:-}"
insmod_list=$(for m in $mods; do
        modprobe --show-depends -d "$KPKG_DIR" -S "$KVER" "$m" 2>/dev/null || echo "insmod MISSING-$m"
    done | awk '$1 == "insmod" {print $2}' | awk '!s[$0]++' | sed "s|^$MODDIR/||" | tr '\n' ' ')
case "$insmod_list" in
    *MISSING-*) die "guest kernel modules not found:$(echo " $insmod_list" | grep -o ' MISSING-[^ ]*' | sed 's/MISSING-//' | tr -d '\n')" ;;
esac

{   # read by the initramfs (busybox sh) and guest.sh (dash)
    echo "RXEVM_RUNDIR=$(sq "$RUNDIR")"
    echo "RXEVM_CWD=$(sq "$CWD")"
    echo "RXEVM_KMODS=$(sq "$KPKG_DIR/lib/modules")"
    echo "RXEVM_NDEV=$(sq "$NDEV")"
    echo "RXEVM_NET=$(sq "$NET")"
    echo "RXEVM_MTU=$(sq "$MTU")"
    echo "RXEVM_DMESG=$([ "$KEEP" = 1 ] || [ "$VERBOSE" = 1 ] && echo 1 || echo 0)"
    echo "RXEVM_INSMOD=$(sq "$insmod_list")"
    echo "RXEVM_INSMOD_FAILED=''"
    echo "RXEVM_HOME=$(sq "${HOME:-/root}")"
    if [ "$CWD" = / ]; then
        echo "RXEVM_CWD_TAG=''"
    elif [ "$CWD_RO" = 1 ]; then
        echo "RXEVM_CWD_TAG=rxecwd"; echo "RXEVM_CWD_OPTS=,ro"
    else
        echo "RXEVM_CWD_TAG=rxecwd"; echo "RXEVM_CWD_OPTS=,cache=mmap"
    fi
} > "$RUNDIR/config"
{   # environment for the command
    for v in PATH LD_LIBRARY_PATH ${RXE_VM_ENV:-}; do
        [ -n "${!v+x}" ] && echo "export $v=$(sq "${!v}")"
    done
    for v in $(compgen -e); do
        for p in ${RXE_VM_ENV_PREFIXES-HOIST_ HOISTD_ CLUSTER_ IT_ MN_ RXE_SMOKE_}; do
            case "$v" in "$p"*) echo "export $v=$(sq "${!v}")"; break ;; esac
        done
    done
} > "$RUNDIR/env"
{ printf 'set --'; for a in "$@"; do printf ' %s' "$(sq "$a")"; done; printf '\nexec "$@"\n'; } > "$RUNDIR/cmd"
cp "$HERE/guest.sh" "$RUNDIR/guest.sh" || die "cp guest.sh"

Q=("$QEMU" "${ACCEL_ARGS[@]}" -m "$MEM" -smp "$SMP"
   -nodefaults -no-user-config -display none -no-reboot
   -serial "file:${RUNDIR//,/,,}/console.log"
   -kernel "$KERNEL" -initrd "$INITRD"
   -append "console=ttyS0 quiet loglevel=5 panic=-1 oops=panic mitigations=off cryptomgr.notests"
   -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
   -virtfs "local,path=${RUNDIR//,/,,},mount_tag=rxerun,security_model=none,multidevs=remap")
if [ "$CWD" != / ]; then
    ro=''; [ "$CWD_RO" = 1 ] && ro=",readonly=on"
    Q+=(-virtfs "local,path=${CWD//,/,,},mount_tag=rxecwd,security_model=none,multidevs=remap$ro")
fi

QPID='' TAILPID=''
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
    [ -n "$QPID" ] && kill "$QPID" 2>/dev/null
    [ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null
    if [ "$KEEP" = 1 ]; then echo "run-in-vm: run dir kept: $RUNDIR" >&2; else rm -rf "$RUNDIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------- boot ---
vlog "booting: ${Q[*]}"
T1=$(now)
timeout "$TIMEOUT" "${Q[@]}" < /dev/null > "$RUNDIR/qemu.log" 2>&1 &
QPID=$!
tail -c +1 -s 0.2 -f --pid=$QPID "$RUNDIR/out" &
TAILPID=$!
# Progress watchdog: the guest's output must keep growing.
stalled=0
last_size=-1
last_change=$(date +%s)
while kill -0 "$QPID" 2>/dev/null; do
    size=0
    for f in "$RUNDIR/out" "$RUNDIR/console.log" "$RUNDIR/setup.log"; do
        s=$(stat -c %s "$f" 2>/dev/null || echo 0)
        size=$((size + s))
    done
    t=$(date +%s)
    if [ "$size" != "$last_size" ]; then
        last_size=$size
        last_change=$t
    elif [ $((t - last_change)) -ge "$STALL" ]; then
        echo "run-in-vm: no output from the guest for ${STALL}s (RXE_VM_STALL): stopping it" >&2
        stalled=1
        kill -TERM "$QPID" 2>/dev/null
        break
    fi
    sleep 1
done
wait $QPID
qrc=$?
[ "$stalled" = 1 ] && qrc=124
QPID=''
wait $TAILPID 2>/dev/null
TAILPID=''
T2=$(now)

if [ "$VERBOSE" = 1 ]; then
    {   echo "---- guest console ----"; cat "$RUNDIR/console.log"
        echo "---- guest setup log ----"; cat "$RUNDIR/setup.log" 2>/dev/null
        echo "---- guest dmesg (rdma/rxe lines) ----"
        grep -iE "rxe|rdma|infiniband|warn|error|fail" "$RUNDIR/dmesg.log" 2>/dev/null | tail -30
        awk -v t0="$T0" -v t1="$T1" -v t2="$T2" 'BEGIN {
            printf "run-in-vm: host setup %.2fs, qemu wall %.2fs, total %.2fs\n", t1 - t0, t2 - t1, t2 - t0 }'
    } >&2
fi
if grep -qE "WARNING:|BUG:|Oops|general protection|Kernel panic" "$RUNDIR/console.log" 2>/dev/null; then
    echo "run-in-vm: the guest kernel logged warnings/errors:" >&2
    grep -E "WARNING:|BUG:|Oops|general protection|Kernel panic|RIP:" "$RUNDIR/console.log" | head -20 >&2
fi
if [ -f "$RUNDIR/rc" ]; then
    rc=$(cat "$RUNDIR/rc")
    if [ "$rc" = 125 ] && grep -q "guest setup failed" "$RUNDIR/setup.log" 2>/dev/null; then
        echo "run-in-vm: guest setup failed:" >&2
        tail -20 "$RUNDIR/setup.log" >&2
    fi
    exit "$rc"
fi
if [ $qrc -eq 124 ]; then
    if [ "$stalled" = 1 ]; then
        echo "run-in-vm: the guest stalled (no output for ${STALL}s)" >&2
    else
        echo "run-in-vm: timed out after ${TIMEOUT}s (RXE_VM_TIMEOUT)" >&2
    fi
    rc=124
else
    echo "run-in-vm: VM ended without a result (qemu rc=$qrc)" >&2
    rc=125
fi
{   cat "$RUNDIR/qemu.log"
    cat "$RUNDIR/init-error" 2>/dev/null
    tail -30 "$RUNDIR/setup.log" 2>/dev/null
    echo "---- guest console (tail) ----"
    tail -40 "$RUNDIR/console.log"
} >&2
exit $rc
