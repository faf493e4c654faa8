#!/bin/sh
# nodes: 3
# MetaServer on node0 (a member too), nodes 1 and 2 register at load.
# Lookups are one RDMA READ of the table; cached afterwards; an unknown
# node fails cleanly and leaves nothing behind; unload deregisters.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	publish_card
	barrier meta_up
	barrier members_up
	check "three cards in the table" 'krctl status | grep -q "hosted here: 3 cards"'
	out=$(krctl lookup "$(node_ip 1)")
	echo "$out"
	check "the host reads its own table (loopback READ)" \
		'[ "$(kv path "$out")" = lookup ] && eq "$(kv reads "$out")" 1'
	barrier lookups_done
	barrier node2_gone
	check "node2 deregistered at unload" \
		'wait_for 10 "krctl status | grep -q \"hosted here: 2 cards\""'
	check "members were accepted over rdma_cm" 'ge "$(counter meta_members_accepted)" 2'
else
	barrier meta_up
	check "member loads" "krc_load meta_server=$META"
	check "member registered" 'krctl status | grep -q "metaserver: registered at $META"'
	publish_card
	barrier members_up
	if [ "$KRC_NODE" = 1 ]; then
		two=$(node_ip 2)
		out=$(krctl lookup "$two")
		echo "$out"
		check "first lookup: one READ of the table" \
			'[ "$(kv path "$out")" = lookup ] && eq "$(kv reads "$out")" 1'
		for k in node_id addr gid mac ud_qpn ud_qkey incarnation; do
			check "looked-up $k is node2's own" \
				'[ "$(kv $k "$out")" = "$(kv $k "$(card_of 2)")" ]'
		done
		out=$(krctl lookup "$two")
		check "second lookup: from the cache, no READ" \
			'[ "$(kv path "$out")" = cached ] && eq "$(kv reads "$out")" 0'
		out=$(krctl lookup "$two" -f)
		check "forced lookup READs again" \
			'[ "$(kv path "$out")" = lookup ] && eq "$(kv reads "$out")" 1'
		out=$(krctl lookup "$META")
		check "the MetaServer node is a member too" \
			'[ "$(kv incarnation "$out")" = "$(kv incarnation "$(card_of 0)")" ]'
		err=$(krctl lookup 10.77.0.99 2>&1)
		rc=$?
		echo "$err"
		check "unknown node: fails with ENXIO and a clear message" \
			'[ $rc = 1 ] && echo "$err" | grep -q "^krctl: node 10.77.0.99 is not registered with the MetaServer (No such device or address)"'
		peers=$(krctl peers)
		prc=$?
		check "unknown node: no peer entry left" \
			'[ $prc = 0 ] && echo "$peers" | grep -q "^peer " && ! echo "$peers" | grep -q 10.77.0.99'
		check "unknown node: counted as a miss" 'ge "$(counter meta_misses)" 1'
		check "bad address: EINVAL" \
			'krctl lookup 10.77.0 2>&1 | grep -q "neither an IPv4 address nor a GID"'
		check "no torn reads" 'eq "$(counter meta_torn)" 0'
	fi
	barrier lookups_done
	if [ "$KRC_NODE" = 2 ]; then
		check "node2 unloads" krc_unload
		barrier node2_gone
	else
		barrier node2_gone
		check "node2 is gone from the table (ENXIO)" \
			'wait_for 10 "krctl lookup $(node_ip 2) -f 2>&1 | grep -q \"is not registered with the MetaServer (No such device or address)\""'
	fi
fi
barrier end
[ "$KRC_NODE" = 2 ] || check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
