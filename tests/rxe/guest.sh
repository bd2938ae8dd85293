#!/bin/sh
# guest.sh -- PID 1 of the rxe test VM after switch_root (host's /bin/sh).
# run-in-vm.sh copies it into the per-run share; initramfs-init.sh execs it.
# Adapted from /work/shared/tools/rxe-vm/run-in-rxe-vm.sh (see NOTES.md there).
#
# Creates the veth netdevs and rxe devices, waits until they are usable,
# runs the command (from $RD/cmd) in the host's cwd, writes its exit code to
# $RD/rc and powers the VM off.  Every exec costs 0.1-0.2 s under TCG, so
# this uses shell builtins where it can and batch calls of ip/rdma.
RD=${0%/*}
# shellcheck source=/dev/null
. "$RD/config"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ts() { read -r up _ < /proc/uptime; echo "t_$1=$up"; }
finish() {
    ts end
    [ "$RXEVM_DMESG" = 1 ] && dmesg > "$RD/dmesg.log"
    # Block without exec'ing anything while the kernel powers off: an exec
    # can fail once the 9p root is going away, and PID 1 exiting panics.
    mkfifo /run/rxe-halt 2>/dev/null
    exec 3<> /run/rxe-halt
    sync
    echo o > /proc/sysrq-trigger
    while :; do read -r _ <&3; done
}
setup_fail() {
    echo "guest setup failed: $*"
    echo 125 > "$RD/rc.tmp" && mv "$RD/rc.tmp" "$RD/rc"
    finish
}
exec >> "$RD/setup.log" 2>&1
ts guest_start
echo rxe-vm > /proc/sys/kernel/hostname
echo "127.0.1.1 rxe-vm" >> /etc/hosts
N=$RXEVM_NDEV
NET=$RXEVM_NET
MTU=$RXEVM_MTU
DEVS='' IPS='' NETDEVS=''
if [ "$N" -gt 0 ]; then
    for m in $RXEVM_INSMOD_FAILED; do setup_fail "insmod $m failed in the initramfs"; done
    echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
    if [ "$N" -ge 2 ]; then
        # Several rxe devices in one netns (rxe in 6.1 is init_net only):
        # traffic between their local IPs must really cross the veth wire,
        # because rxe drops what arrives via lo.  accept_local for the local
        # source addresses, arp_ignore/announce so each veth answers for its IP.
        for k in all default; do
            echo 1 > /proc/sys/net/ipv4/conf/$k/accept_local
            echo 0 > /proc/sys/net/ipv4/conf/$k/rp_filter
            echo 1 > /proc/sys/net/ipv4/conf/$k/arp_ignore
            echo 2 > /proc/sys/net/ipv4/conf/$k/arp_announce
        done
    fi
    # A 1 MiB RDMA READ is 1024 packets at RoCE MTU 1024: the default per-CPU
    # backlog (1000) drops on veth -> ~2 s rxe retransmit stalls.
    echo 10000 > /proc/sys/net/core/netdev_max_backlog
    B4=$RD/ip4.batch B6=$RD/ip6.batch BR=$RD/rdma.batch
    : > "$B4"; : > "$B6"; : > "$BR"
    echo "link set lo up" >> "$B4"
    if [ "$N" -ge 3 ]; then
        { echo "link add rxebr0 type bridge"; echo "link set rxebr0 mtu $MTU up"; } >> "$B4"
    fi
    # fixed MACs 02:00:00:00:00:<i+1> => IPv6 link-local fe80::ff:fe00:<i+1>
    i=0
    while [ $i -lt "$N" ]; do
        nd=rxeveth$i ip=$NET.$((i + 1)) mac=02:00:00:00:00:$(printf %02x $((i + 1)))
        if [ "$N" -eq 1 ]; then
            # one device: rxe loopback; the peer end carries no rxe
            { echo "link add $nd address $mac mtu $MTU type veth peer name ${nd}p mtu $MTU"
              echo "link set ${nd}p up"; } >> "$B4"
        elif [ "$N" -eq 2 ]; then
            # two devices: the two ends of one veth pair (the "wire")
            [ $i -eq 0 ] && echo "link add rxeveth0 address 02:00:00:00:00:01 mtu $MTU type veth peer name rxeveth1 address 02:00:00:00:00:02 mtu $MTU" >> "$B4"
        else
            { echo "link add $nd address $mac mtu $MTU type veth peer name ${nd}p mtu $MTU"
              echo "link set ${nd}p master rxebr0"
              echo "link set ${nd}p up"; } >> "$B4"
        fi
        { echo "addr add $ip/24 dev $nd"; echo "link set $nd up"; } >> "$B4"
        echo "link add rxe$i type rxe netdev $nd" >> "$BR"
        DEVS="$DEVS rxe$i" IPS="$IPS $ip" NETDEVS="$NETDEVS $nd"
        i=$((i + 1))
    done
    if [ "$N" -ge 2 ]; then
        # The routing fix: per-oif routing tables so traffic between the local
        # IPs leaves through the sender's veth, the "local" table rule moved
        # behind them, and permanent neighbour entries (IPv4 + IPv6
        # link-local) -- with an unresolved neighbour rdma_cm address
        # resolution waits for its full timeout.
        i=0
        while [ $i -lt "$N" ]; do
            nd=rxeveth$i ip=$NET.$((i + 1)) ll=fe80::ff:fe00:$(printf %x $((i + 1)))
            { echo "rule add pref $((100 + 2 * i)) oif $nd to $ip lookup local"
              echo "rule add pref $((101 + 2 * i)) oif $nd lookup $((200 + i))"
              echo "route add $NET.0/24 dev $nd table $((200 + i))"; } >> "$B4"
            { echo "rule add pref 99 oif $nd to $ll lookup local"
              echo "rule add pref $((101 + 2 * i)) oif $nd lookup $((200 + i))"
              echo "route add fe80::/64 dev $nd table $((200 + i))"; } >> "$B6"
            j=0
            while [ $j -lt "$N" ]; do
                if [ $j -ne $i ]; then
                    m=02:00:00:00:00:$(printf %02x $((j + 1)))
                    echo "neigh replace $NET.$((j + 1)) lladdr $m dev $nd nud permanent" >> "$B4"
                    echo "neigh replace fe80::ff:fe00:$(printf %x $((j + 1))) lladdr $m dev $nd nud permanent" >> "$B6"
                fi
                j=$((j + 1))
            done
            i=$((i + 1))
        done
        { echo "rule add pref 1000 lookup local"; echo "rule del pref 0"; } >> "$B4"
        { echo "rule add pref 1000 lookup local"; echo "rule del pref 0"; } >> "$B6"
    fi
    ip -batch "$B4" || setup_fail "ip -batch $B4"
    if [ "$N" -ge 2 ]; then ip -6 -batch "$B6" || setup_fail "ip -6 -batch $B6"; fi
    ts net_ready
    rdma -b "$BR" || setup_fail "rdma -b $BR"
    ts rdma_added
    # wait until every rxe port is ACTIVE and has its IPv4-mapped GID
    for d in $DEVS; do
        n=0
        while :; do
            st=''
            read -r st < "/sys/class/infiniband/$d/ports/1/state"
            ok=0
            case "$st" in *ACTIVE*)
                for g in /sys/class/infiniband/"$d"/ports/1/gids/*; do
                    v=''
                    read -r v < "$g" 2>/dev/null
                    case "$v" in 0000:0000:0000:0000:0000:ffff:*) ok=1; break ;; esac
                done ;;
            esac
            [ $ok = 1 ] && break
            n=$((n + 1))
            [ $n -gt 400 ] && setup_fail "$d: port not ACTIVE or no IPv4 GID after 20 s"
            sleep 0.05
        done
    done
    # index of rxe0's IPv4-mapped GID (RoCE v2), normally 1
    GIDX=''
    for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
        v=''
        read -r v < "$g" 2>/dev/null
        case "$v" in 0000:0000:0000:0000:0000:ffff:*) GIDX=${g##*/}; break ;; esac
    done
    # shellcheck disable=SC2086
    { set -- $NETDEVS; RXE_NETDEV=$1; set -- $IPS; RXE_IP=$1; }
    export RXE_NETDEV RXE_IP RXE_DEV=rxe0 RXE_DEVS="${DEVS# }" RXE_IPS="${IPS# }" \
        RXE_NETDEVS="${NETDEVS# }" RXE_GID_INDEX="$GIDX"
    ts rxe_ready
    echo "RXE_DEVS=$RXE_DEVS RXE_IPS=$RXE_IPS RXE_NETDEVS=$RXE_NETDEVS RXE_GID_INDEX=$RXE_GID_INDEX"
fi
export RXE_VM=1 RXE_VM_RUNDIR="$RD" HOME="${RXEVM_HOME:-/root}" TERM=dumb LANG=C.UTF-8
# shellcheck disable=SC3045 # dash has ulimit -l/-c
{ ulimit -l unlimited; ulimit -c 0; } 2>/dev/null
ts cmd_start
# shellcheck source=/dev/null
(cd "$RXEVM_CWD" || exit 125; . "$RD/env"; . "$RD/cmd") > "$RD/out" 2>&1 < /dev/null
rc=$?
ts cmd_end
echo "rc=$rc"
echo $rc > "$RD/rc.tmp" && mv "$RD/rc.tmp" "$RD/rc"
finish
