#!/bin/bash
# tests/rxe/setup.sh -- prepare everything the Soft-RoCE (rdma_rxe) test VM
# needs, from Debian packages only:
#
#   1. installs the missing host packages with apt-get (apt-get update runs
#      only when something is missing; needs root or password-less sudo);
#   2. fetches Debian's own guest kernel package (apt-get download, not
#      installed on the host), unpacks it into the cache and runs depmod;
#   3. extracts the ELF vmlinux from vmlinuz (QEMU boots it via PVH: saves
#      ~5 s of in-guest XZ decompression under TCG);
#   4. builds the initramfs: static busybox + virtio/9p/overlay modules +
#      tests/rxe/initramfs-init.sh as /init.
#
# Everything lands in $RXE_VM_CACHE and is reused by later runs.
#
#   usage: setup.sh [--quiet]
#   stdout: KVER=... KERNEL=... INITRD=... KMODS=... (shell-readable lines)
#   exit:   0 ready; 77 a prerequisite cannot be obtained (not root, apt or
#           the Debian mirror unavailable, ...); 1 other setup failure.
#
# Adapted for hoist from the shared recipe /work/shared/tools/rxe-vm/
# (run-in-rxe-vm.sh, NOTES.md); see tests/rxe/README.md.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CACHE=${RXE_VM_CACHE:-${XDG_CACHE_HOME:-/var/tmp}/hoist-rxe}
QUIET=0
SUDO='' # not root: use sudo for apt-get when it works without a password
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
[ "${1:-}" = --quiet ] && QUIET=1

log() { [ "$QUIET" = 1 ] || echo "rxe-setup: $*" >&2; }
skip() { echo "rxe-setup: SKIP: $*" >&2; exit 77; }
fail() { echo "rxe-setup: ERROR: $*" >&2; exit 1; }

# Host packages (all from Debian):
#   qemu-system-x86   the VM (TCG)
#   busybox-static    initramfs userland
#   cpio kmod python3 initramfs archive, depmod/modprobe --show-depends, vmlinux extraction
#   iproute2          ip + rdma (creates the rxe devices in the guest)
#   ibverbs-providers librxe (userspace rxe driver), pulls libibverbs1
#   libibverbs-dev librdmacm-dev pkg-config   to build verbs_smoke / hoist verbs code
#   ibverbs-utils rdmacm-utils                ibv_devinfo, rping, ... for debugging in the VM
# The guest runs on the host's root fs, so these also serve the guest.
PKGS="qemu-system-x86 busybox-static cpio kmod python3 iproute2 ibverbs-providers
      libibverbs-dev librdmacm-dev pkg-config ibverbs-utils rdmacm-utils"

is_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

APT_UPDATED=0
apt_update() {
    [ "$APT_UPDATED" = 1 ] && return 0
    log "apt-get update"
    $SUDO apt-get update -qq >&2 || return 1
    APT_UPDATED=1
}

install_packages() {
    command -v dpkg-query >/dev/null || skip "not a Debian system (no dpkg-query)"
    local p missing=()
    for p in $PKGS; do is_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ -n "$SUDO" ] || [ "$(id -u)" = 0 ] || skip "missing Debian packages: ${missing[*]} (run tests/rxe/setup.sh as root)"
    command -v apt-get >/dev/null || skip "missing packages ${missing[*]} and no apt-get"
    log "installing: ${missing[*]}"
    apt_update || skip "apt-get update failed (no Debian mirror?)"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
        || skip "apt-get install ${missing[*]} failed"
}

# Guest kernel: the package linux-image-amd64 depends on (or $RXE_VM_KPKG).
resolve_kpkg() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

fetch_kernel() {
    if [ -s "$CACHE/kpkg/KVER" ] && { [ -z "${RXE_VM_KPKG:-}" ] ||
            [ "$(cat "$CACHE/kpkg/PKG" 2>/dev/null)" = "$RXE_VM_KPKG" ]; }; then
        return 0
    fi
    local pkg=${RXE_VM_KPKG:-}
    if [ -z "$pkg" ]; then
        pkg=$(resolve_kpkg)
        if [ -z "$pkg" ]; then
            { [ -n "$SUDO" ] || [ "$(id -u)" = 0 ]; } && apt_update
            pkg=$(resolve_kpkg)
        fi
    fi
    [ -n "$pkg" ] || skip "cannot resolve the Debian kernel package (apt-cache depends linux-image-amd64)"
    log "fetching guest kernel $pkg (apt-get download, ~70 MB; unpacked ~400 MB in $CACHE)"
    rm -rf "$CACHE/kpkg" "$CACHE/kpkg.new" "$CACHE/dl"
    mkdir -p "$CACHE/dl" || fail "mkdir $CACHE/dl"
    (cd "$CACHE/dl" && apt-get -o APT::Sandbox::User=root download -qq "$pkg" >&2) || skip "apt-get download $pkg failed"
    local debs=("$CACHE"/dl/*.deb) deb
    deb=${debs[0]}
    [ -f "$deb" ] || fail "no .deb after apt-get download $pkg"
    dpkg -x "$deb" "$CACHE/kpkg.new" || fail "dpkg -x $deb"
    rm -rf "$CACHE/dl" "$CACHE/kpkg.new/usr/share/doc"
    local kdirs=("$CACHE"/kpkg.new/lib/modules/*) kver
    kver=${kdirs[0]##*/}
    [ -f "$CACHE/kpkg.new/boot/vmlinuz-$kver" ] || fail "unexpected layout in $deb"
    depmod -b "$CACHE/kpkg.new" "$kver" || fail "depmod"
    echo "$pkg" > "$CACHE/kpkg.new/PKG"
    echo "$kver" > "$CACHE/kpkg.new/KVER"
    mv "$CACHE/kpkg.new" "$CACHE/kpkg" || fail "mv kpkg"
    rm -f "$CACHE"/vmlinux-* "$CACHE"/initrd-*.cpio
}

# vmlinuz -> ELF vmlinux (the first XZ stream that decompresses to an ELF).
extract_vmlinux() {
    local kver=$1 out="$CACHE/vmlinux-$1"
    [ -s "$out" ] && return 0
    log "extracting vmlinux"
    if python3 - "$CACHE/kpkg/boot/vmlinuz-$kver" "$out.tmp" <<'PY'
import lzma, sys
d = open(sys.argv[1], 'rb').read()
i = d.find(b'\xfd7zXZ\x00')
while i != -1:
    try:
        out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(d[i:])
        if out[:4] == b'\x7fELF':
            open(sys.argv[2], 'wb').write(out)
            sys.exit(0)
    except lzma.LZMAError:
        pass
    i = d.find(b'\xfd7zXZ\x00', i + 1)
sys.exit(1)
PY
    then mv "$out.tmp" "$out"
    else rm -f "$out.tmp"; log "vmlinux extraction failed; booting vmlinuz (slower)"
    fi
}

build_initrd() {
    local kver=$1 init="$HERE/initramfs-init.sh" sum st m
    [ -r "$init" ] || fail "missing $init"
    sum=$( { echo "$kver"; cat "$init"; } | md5sum | cut -c1-12)
    INITRD="$CACHE/initrd-$kver-$sum.cpio"
    [ -s "$INITRD" ] && return 0
    log "building initramfs"
    [ -x /bin/busybox ] || fail "no /bin/busybox"
    st=$(mktemp -d "$CACHE/initrd-build.XXXXXX") || fail mktemp
    mkdir -p "$st"/bin "$st"/proc "$st"/sys "$st"/dev "$st"/newroot "$st"/share "$st"/lower "$st"/ovl "$st"/mods
    cp /bin/busybox "$st/bin/busybox" || fail "cp busybox"
    for m in $(/bin/busybox --list); do [ "$m" = busybox ] || ln -s busybox "$st/bin/$m"; done
    for m in $(for x in virtio_pci 9pnet_virtio 9p overlay; do
                   modprobe --show-depends -d "$CACHE/kpkg" -S "$kver" "$x" || echo "MISSING $x"
               done | awk '$1 == "MISSING" {print "/nonexistent/" $2} $1 == "insmod" {print $2}' | awk '!s[$0]++'); do
        cp "$m" "$st/mods/" || fail "initramfs module $m"
        basename "$m" >> "$st/mods/order"
    done
    cp "$init" "$st/init" || fail "cp init"
    chmod 755 "$st/init"
    (cd "$st" && find . | cpio -o -H newc --quiet > "$INITRD.tmp") || fail "cpio"
    mv "$INITRD.tmp" "$INITRD" || fail "mv $INITRD"
    rm -rf "$st"
    for m in "$CACHE"/initrd-*.cpio; do [ "$m" = "$INITRD" ] || rm -f "$m"; done
}

mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 9>"$CACHE/.setup.lock" || fail "cannot open $CACHE/.setup.lock"
flock 9 || fail "cannot lock $CACHE/.setup.lock"
install_packages
fetch_kernel
KVER=$(cat "$CACHE/kpkg/KVER")
extract_vmlinux "$KVER"
build_initrd "$KVER"
KERNEL="$CACHE/vmlinux-$KVER"
[ -s "$KERNEL" ] || KERNEL="$CACHE/kpkg/boot/vmlinuz-$KVER"
printf 'KVER=%q\nKERNEL=%q\nINITRD=%q\nKPKG_DIR=%q\n' "$KVER" "$KERNEL" "$INITRD" "$CACHE/kpkg"
