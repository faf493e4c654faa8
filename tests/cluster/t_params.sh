#!/bin/sh
# nodes: 2
# timeout: 420
# The module parameters that shape a node take effect:
#   ibdev=      node0: a device that does not exist is refused cleanly (the
#               module loads, says so, the control plane stays down and
#               /dev/krcore answers ENODEV); named before it exists, the
#               control plane starts on it when it appears (a second
#               Soft-RoCE device, rxe1 on a veth pair, 10.78.0.1), and the
#               card is that device's even though rxe0 comes first;
#   gid_index=  node1: the card's GID is the one at that index (an IPv6
#               RoCE v2 GID rather than the IPv4 one picked by default);
#               an empty index leaves the control plane down;
#   meta_slots= the MetaServer's table size (rounded up to a power of two),
#               seen by the host and by a member;
#   node_id=    node1's card, as read by the MetaServer node's lookup.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
V6=fd00:77::2
V6GID=fd00:0077:0000:0000:0000:0000:0000:0002

# The index of GID $1 (sysfs text) of type RoCE v2 on rxe0 port 1.
gid_index_of() {
	for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		i=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$1" ] || continue
		grep -q "RoCE v2" "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i" \
			2>/dev/null && { echo "$i"; return 0; }
	done
	return 1
}

if [ "$KRC_NODE" = 0 ]; then
	# ibdev: a name no device has.
	check "ibdev=nosuch0: the module still loads" 'krc_load ibdev=nosuch0'
	check "ibdev=nosuch0: the log says why the control plane is down" \
		'dmesg | grep -q "krcore: ibdev=nosuch0: no such RDMA device with an active RoCE port and address: /dev/krcore answers ENODEV until it appears"'
	check "ibdev=nosuch0: control plane down" \
		'krctl status | grep -A1 "^control plane:" | grep -qx "  down"'
	check "ibdev=nosuch0: no card (ENODEV)" \
		'krctl card 2>&1 | grep -q "No such device"'
	check "ibdev=nosuch0: qconnect fails with ENODEV" \
		'krctl connect "$(node_ip 1)" 2>&1 | grep -q "No such device"'
	check "ibdev=nosuch0: rxe0 is not used" \
		'! krctl status | grep -q "(primary)" && eq "$(counter qp_created)" 0'
	check "ibdev=nosuch0: unloads" krc_unload

	# ibdev: a device that appears after the load.
	check "ibdev=rxe1 loads before rxe1 exists" 'krc_load ibdev=rxe1'
	check "ibdev=rxe1: down while rxe1 does not exist" \
		'krctl status | grep -A1 "^control plane:" | grep -qx "  down"'
	modprobe veth
	ip link add veth0 type veth peer name veth1 &&
		ip link set veth1 up && ip addr add 10.78.0.1/24 dev veth0 &&
		ip link set veth0 up
	check "rxe1 created on veth0" 'rdma link add rxe1 type rxe netdev veth0'
	check "ibdev=rxe1: the control plane starts on rxe1 when it appears" \
		'wait_for 30 "krctl status | grep -q \"rxe1/1: ACTIVE.*(primary)\""'
	card=$(krctl card)
	echo "$card"
	check "ibdev=rxe1: the card's address is rxe1's (10.78.0.1)" \
		'[ "$(kv addr "$card")" = 10.78.0.1 ]'
	check "ibdev=rxe1: the card's MAC is veth0's" \
		'[ "$(kv mac "$card")" = "$(cat /sys/class/net/veth0/address)" ]'
	check "ibdev=rxe1: rxe0 is listed but not primary" \
		'krctl status | grep "rxe0/1:" | grep -qv "(primary)"'
	check "ibdev=rxe1: unloads" krc_unload
	rdma link delete rxe1
	ip link del veth0

	# meta_slots: at least 64, and rounded up to a power of two.
	check "meta_slots=0 loads" 'krc_load meta_host=1 meta_slots=0'
	check "meta_slots=0: a table of 64 slots" \
		'krctl status | grep -q "table 64 slots, hosted here: 1 cards"'
	check "meta_slots=0: unloads" krc_unload
	check "meta_slots=1000 loads" 'krc_load meta_host=1 meta_slots=1000'
	check "meta_slots=1000: the host's table has 1024 slots" \
		'krctl status | grep -q "table 1024 slots, hosted here: 1 cards"'
	check "meta_slots=1000: 1024 + 256 spill slots of 128 bytes and their member directory (32 bytes each) allocated" \
		'dmesg | grep -q "meta: hosting a table of 1024 slots (200 KiB in"'
	barrier meta_up
	barrier member_up
	check "node1 registered" \
		'wait_for 20 "krctl status | grep -q \"hosted here: 2 cards\""'
	out=$(krctl lookup "$(node_ip 1)")
	echo "$out"
	check "node_id=4242: the MetaServer's table holds node1 as node 4242" \
		'[ "$(kv path "$out")" = lookup ] && eq "$(kv node_id "$out")" 4242'
	check "node_id=4242: the member introduced itself as node 4242" \
		'dmesg | grep -q "krcore: meta: node 4242 connected"'
	barrier checked
	barrier member_gone
	check "MetaServer unloads" krc_unload
else
	# gid_index: the IPv6 RoCE v2 GID of a second address.
	check "IPv6 address added" "ip -6 addr add $V6/64 dev eth0 nodad"
	check "its RoCE v2 GID is in rxe0's table" \
		'wait_for 10 "gid_index_of $V6GID >/dev/null"'
	idx=$(gid_index_of $V6GID)
	log "IPv6 RoCE v2 GID at index $idx"
	check "gid_index=$idx loads" "krc_load gid_index=$idx"
	card=$(krctl card)
	echo "$card"
	check "gid_index=$idx: the card's GID is the IPv6 one" \
		'[ "$(kv gid "$card")" = "$V6GID" ] && [ "$(kv addr "$card")" = "$V6" ]'
	check "gid_index=$idx: the primary port uses that index" \
		'krctl status | grep -q "rxe0/1: ACTIVE.*gid\[$idx\] $V6 (primary)"'
	check "gid_index=$idx: control plane up" \
		'krctl status | grep -q "metaserver: none"'
	check "gid_index=$idx: unloads" krc_unload
	empty=""
	for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = 0000:0000:0000:0000:0000:0000:0000:0000 ] &&
			{ empty=${f##*/}; break; }
	done
	log "an empty GID entry: index $empty"
	check "gid_index of an empty entry: loads" "krc_load gid_index=$empty"
	check "gid_index of an empty entry: the log says why" \
		'dmesg | grep -q "krcore: no active RoCE port with an address: /dev/krcore answers ENODEV until one appears"'
	check "gid_index of an empty entry: control plane down" \
		'krctl status | grep -A1 "^control plane:" | grep -qx "  down"'
	check "gid_index of an empty entry: unloads" krc_unload
	ip -6 addr del $V6/64 dev eth0

	# node_id, and the table size as a member sees it.
	barrier meta_up
	check "member loads with node_id=4242" \
		"krc_load meta_server=$META node_id=4242"
	card=$(krctl card)
	check "node_id=4242: the card's node id" 'eq "$(kv node_id "$card")" 4242'
	check "meta_slots=1000: the member sees a table of 1024 slots" \
		'krctl status | grep -q "metaserver: registered at $META, table 1024 slots"'
	barrier member_up
	barrier checked
	check "member unloads" krc_unload
	barrier member_gone
fi
check "kernel log clean" dmesg_clean
finish
