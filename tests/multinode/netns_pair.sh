# netns_pair.sh: sourced by the tests that stand for two hosts with two
# network namespaces joined by a veth pair, 192.0.2.1/24 on $VA in $NSA and
# 192.0.2.2/24 on $VB in $NSB (TEST-NET-1, only inside these namespaces):
# multinode/netns.sh and launch/mpirun_netns.sh. The caller sets NSA NSB
# VA VB and defines log and FAIL.
#   netns_pair_up    make the pair and wait (up to 5 s, if ping exists) until
#                    the link carries packets; exit 77 (SKIP, said why) where
#                    namespaces or the veth pair cannot be made
#   netns_pair_down  delete both namespaces and the veth pair (for the
#                    caller's EXIT trap; quiet if they do not exist)

netns_pair_up() {
	local err
	if ! err=$(ip netns add "$NSA" 2>&1); then
		log "SKIP: cannot create a network namespace (ip netns add: $err); needs root or CAP_NET_ADMIN"
		exit 77
	fi
	ip netns add "$NSB" || { FAIL "ip netns add $NSB"; exit 1; }
	if ! err=$(ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB" 2>&1 &&
		ip -n "$NSA" addr add 192.0.2.1/24 dev "$VA" 2>&1 &&
		ip -n "$NSB" addr add 192.0.2.2/24 dev "$VB" 2>&1 &&
		ip -n "$NSA" link set lo up 2>&1 && ip -n "$NSB" link set lo up 2>&1 &&
		ip -n "$NSA" link set "$VA" up 2>&1 && ip -n "$NSB" link set "$VB" up 2>&1); then
		log "SKIP: cannot set up the veth pair between the namespaces: $err"
		exit 77
	fi
	# the link must carry packets before the daemons start
	command -v ping >/dev/null 2>&1 && for _ in $(seq 1 50); do
		ip netns exec "$NSA" ping -c1 -W1 192.0.2.2 >/dev/null 2>&1 && break
		sleep 0.1
	done
	return 0
}

netns_pair_down() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	ip link del "$VA" 2>/dev/null
	return 0
}
