#!/bin/sh
# /init of the rxe test VM's initramfs (static busybox sh), built by
# tests/rxe/setup.sh.  Adapted from /work/shared/tools/rxe-vm/run-in-rxe-vm.sh.
#
# Loads virtio/9p/overlay, mounts the per-run share (config + guest.sh), the
# host root (9p, read-only) with a tmpfs overlay on top, insmods the RDMA
# modules from the cached Debian kernel package (over 9p), mounts the host's
# cwd read-write at the same path, then switch_root's into the overlay and
# runs guest.sh with the host's /bin/sh.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod "/mods/$m" || echo "init: insmod $m failed"; done < /mods/order
O=trans=virtio,version=9p2000.L,msize=262144
halt() {
    echo "init: $*"
    echo "init: $*" > /share/init-error 2>/dev/null
    sync; poweroff -f; sleep 10
}
mount -t 9p -o $O rxerun /share || halt "cannot mount run share"
# shellcheck source=/dev/null
. /share/config
mount -t 9p -o $O,ro,cache=loose hostroot /lower || halt "cannot mount host root"
K=/lower$RXEVM_KMODS/$(uname -r)
FAILED=
for m in $RXEVM_INSMOD; do insmod "$K/$m" || FAILED="$FAILED ${m##*/}"; done
[ -n "$FAILED" ] && echo "RXEVM_INSMOD_FAILED='$FAILED'" >> /share/config
mount -t tmpfs -o mode=0755 tmpfs /ovl && mkdir /ovl/u /ovl/w
mount -t overlay -o lowerdir=/lower,upperdir=/ovl/u,workdir=/ovl/w overlay /newroot || halt "overlay mount failed"
R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=0755 tmpfs $R/run
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
if [ -n "$RXEVM_CWD_TAG" ]; then
    mkdir -p "$R$RXEVM_CWD"
    mount -t 9p -o "$O$RXEVM_CWD_OPTS" "$RXEVM_CWD_TAG" "$R$RXEVM_CWD" || halt "cannot mount cwd $RXEVM_CWD"
fi
mkdir -p $R/lib/modules "$R$RXEVM_RUNDIR"
mount --bind "$R$RXEVM_KMODS" $R/lib/modules || halt "cannot bind modules"
mount --move /share "$R$RXEVM_RUNDIR" || halt "cannot move run share"
exec switch_root $R /bin/sh "$RXEVM_RUNDIR/guest.sh"
