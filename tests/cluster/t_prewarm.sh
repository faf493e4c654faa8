#!/bin/sh
# nodes: 3
# prewarm=1: right after registering, a node READs the MetaServer's table
# and connects to every node in it, so that even its first qconnect to a
# node is pooled.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)

case "$KRC_NODE" in
0)
	check "MetaServer loads" 'krc_load meta_host=1'
	barrier meta_up
	barrier n2_up
	;;
2)
	barrier meta_up
	check "member loads" "krc_load meta_server=$META"
	barrier n2_up
	;;
1)
	barrier meta_up
	barrier n2_up
	check "member loads with prewarm" "krc_load meta_server=$META prewarm=1"
	check "pre-warmed connections to both other nodes" \
		'wait_for 20 "peer_block $META | grep -q \"conn .*ready\" && peer_block $(node_ip 2) | grep -q \"conn .*ready\""'
	krctl peers
	out=$(krctl connect "$(node_ip 2)")
	echo "$out"
	check "first qconnect to node2 is pooled" 'echo "$out" | grep -q "path=pooled"'
	check "no qconnect needed a handshake" 'eq "$(counter qconnect_handshake)" 0'
	# The line comes when the scan of the whole table is over, which may
	# be after its connections are ready.
	check "pre-warming found both nodes" \
		'wait_for 60 "dmesg | grep -q \"pre-warming connections to 2 nodes\""'
	dmesg | grep "pre-warming"
	;;
esac
barrier done
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
